"""Pure computation on the second core, over data this process already holds.

A large import spends a quarter of its time on suspicion rules: pure Python over evidence read
from the import's own, uncommitted transaction. No other connection can read that evidence, and
pickling it to a worker process costs half of what the rules do (10 MB of small objects per
300 reports). A forked child inherits it instead: copy-on-write, nothing serialised on the way
in; only the small result (the flags) comes back through a pipe.

The child runs nothing but the given function, never touches the parent's SQLite connection
(it ends with ``os._exit`` through multiprocessing, so no finalizer closes it), and any failure
in it — an exception, a crash, a result that does not unpickle — reads as "no result": the
caller computes the same thing itself. Correctness never depends on the child.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkContext

R = TypeVar("R")
B = TypeVar("B")


def spare_core() -> bool:
    """Whether a forked child would run beside this process rather than take turns with it:
    fork exists here and this process may use two cores or more."""
    import multiprocessing  # here: a decision's command never forks, nor pays for this

    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2


def _run(fn: Callable[[], object], send: Connection, receive: Connection) -> None:
    """The child's whole life: silent whatever happens (a traceback on the parent's terminal
    would land on the workstation's screen), its one message the result or a refusal, and its
    end immediate (:func:`child_exit`)."""
    receive.close()     # else a parent killed mid-way leaves this child blocked on a full pipe
    try:
        try:
            payload: tuple[bool, object] = (True, fn())
        except BaseException:   # any failure is "no result" for the parent
            payload = (False, None)
        with contextlib.suppress(BaseException):    # a result that won't pickle: EOF says so
            send.send(payload)
    finally:
        send.close()
        child_exit()


def child_exit() -> None:
    """End a forked child now: multiprocessing's own exit would flush the standard streams,
    whose locks another thread of the parent may have held at the fork (the workstation's
    writer and `gavel judge`'s progress bar fork from a process with threads)."""
    os._exit(0)


def fork_context() -> ForkContext:
    """multiprocessing's fork start method, the standard streams flushed first (a child would
    otherwise inherit what is buffered, and could write it a second time)."""
    import multiprocessing  # here: a decision's command never forks, nor pays for this

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            stream.flush()
    return multiprocessing.get_context("fork")


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Fork inside this: the parent's objects are set aside from the garbage collector, so a
    collection in the child does not write to (and so copy) every page of the parent's heap."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


STOP_GRACE = 1.0
"""Seconds a child has to end after SIGTERM before it is killed."""


class Forked(Generic[R]):
    """``fn()`` computed in a forked child, started at construction."""

    def __init__(self, fn: Callable[[], R]) -> None:
        context = fork_context()
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_run, args=(fn, send, self._receive),
                                        daemon=True)
        try:
            with frozen_heap():
                self._process.start()
        except BaseException:
            if self._process.pid is not None:     # started, then interrupted: not left behind
                self._stop()
            self._receive.close()
            raise
        finally:
            send.close()        # the child holds its own end; EOF here means it is gone

    def done(self) -> bool:
        """Whether the result (or the child's end) has arrived: collecting it will not wait."""
        try:
            return self._receive.poll()
        except OSError:
            return True

    def cancel(self) -> None:
        """Stop the child if it still runs: its result is not wanted any more."""
        self._stop()
        self._receive.close()

    def _stop(self) -> None:
        """Terminate the child and reap it; one that outlives SIGTERM for a second is killed
        (the caller may be holding a database's write lock while it waits)."""
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(STOP_GRACE)
            if self._process.is_alive():
                self._process.kill()
        self._process.join()

    def result(self, timeout: float | None = None) -> R | None:
        """The child's result, waiting for it; None when the child failed in any way, or has
        not answered within ``timeout`` seconds (it is then stopped)."""
        if timeout is not None:
            try:
                ready = self._receive.poll(timeout)
            except OSError:
                ready = True
            if not ready:
                self.cancel()
                return None
        try:
            ok, value = self._receive.recv()
        except Exception:       # EOF, a broken pipe, a result that does not load
            ok, value = False, None
        finally:
            self._receive.close()
            self._process.join()
        return value if ok else None


def forked(fn: Callable[[], R]) -> Forked[R] | None:
    """``fn()`` started in a forked child, or None when no child could be started (the caller
    then computes it itself)."""
    try:
        return Forked(fn)
    except OSError:
        return None


AHEAD = 3
"""Batches read and waiting for a child before the reading process computes one itself."""


def computed(batches: Iterable[B], compute: Callable[[B], R], *, parallel: bool,
             meanwhile: Callable[[], None] | None = None) -> Iterator[tuple[B, R]]:
    """(batch, ``compute(batch)``) for every batch, in no particular order.

    Reading a batch (iterating ``batches``) happens here; in parallel a forked child computes
    every batch read before it started while this process reads on, and each time it finishes
    the next child takes what has been read since. This process also computes a batch itself
    whenever it has read everything, or is :data:`AHEAD` batches ahead of the child. A child
    that fails costs only time: its batches are computed here. ``compute`` must be pure: what
    it returns from a child is all that comes back.

    ``meanwhile`` is work of the caller's that neither reads nor changes what ``compute``
    reads: called once, as soon as everything is read while a child computes, so the two
    overlap; at the end otherwise.
    """
    waiting: list[B] = []
    child: tuple[list[B], Forked[list[R]]] | None = None

    def collected() -> Iterator[tuple[B, R]]:
        nonlocal child
        assert child is not None
        taken, running = child
        child = None
        results = running.result()
        if results is None or len(results) != len(taken):
            results = [compute(batch) for batch in taken]
        yield from zip(taken, results, strict=True)

    def start(chosen: list[B]) -> bool:
        nonlocal child
        running = forked(partial(_each, compute, chosen))
        if running is not None:
            child = (chosen, running)
        return running is not None

    try:
        for batch in batches:
            waiting.append(batch)
            if not parallel:
                done = waiting.pop()
                yield done, compute(done)
                continue
            if child is not None and child[1].done():
                yield from collected()
            if child is None:
                if start(waiting):
                    waiting = []
                else:
                    parallel = False
            elif len(waiting) >= AHEAD:
                done = waiting.pop()
                yield done, compute(done)
        if meanwhile is not None and child is not None:
            meanwhile()     # this core's turn for the caller's own work, the child computing
            meanwhile = None
        while waiting:
            if child is None and len(waiting) > 1 and parallel:
                half = len(waiting) // 2
                if start(waiting[:half]):
                    waiting = waiting[half:]
                    continue
            done = waiting.pop()
            yield done, compute(done)
            if child is not None and child[1].done():
                yield from collected()
        if child is not None:
            yield from collected()
        if meanwhile is not None:
            meanwhile()
    finally:
        if child is not None:   # the caller stopped early, or something failed here
            child[1].cancel()


def _each(compute: Callable[[B], R], batches: list[B]) -> list[R]:
    return [compute(batch) for batch in batches]
