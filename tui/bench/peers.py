"""`gavel bench --peers`: the same review workload in the open-source tools a team would
otherwise use, measured in the same run as Gavel's own figures.

Each peer (Label Studio, Potato) is installed into a throwaway virtual environment under the
work folder (``peers/<name>/venv``, reused while it imports), never into Gavel's own
dependencies, and started as a server of its own with its data inside the work folder. Every
report of the synthetic run becomes one task: the report's markdown as plain text and the
judge's verdicts beside it, so the reviewer sees what Gavel shows. For each peer: the load
(server start and import until the first task can be read back), the server's peak memory
(the process tree's resident memory, sampled every 50 ms from /proc), one decision stored and
acknowledged (the median of a few HTTP POSTs, each on another task), and whether any of the
peer's aggregates reflects the decision. A peer that cannot be installed or started is
reported with the reason, and the run goes on.

Also runnable on its own, on a kept ``gavel bench --workdir`` folder::

    python -m tui.bench.peers --bundle DIR/bundle --workdir DIR

The tasks, the memory sampler and a peer's result are in :mod:`tui.bench.peer_data`, the
servers are driven in :mod:`tui.bench.peer_servers`.
"""

from __future__ import annotations

import argparse
import functools
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.status import Status
from rich.table import Table

from tui.bench.peer_data import PeerResult
from tui.bench.peer_servers import PEERS, measure_peer
from tui.bench.run import (
    _IMPORT_SCRIPT,
    Figure,
    _cli_figures,
    _measured_child,
    _ui_figures,
    _unlink_db,
)

# ---------------------------------------------------------------------------------------------
# Results and the table


@dataclass(frozen=True, slots=True)
class GavelSide:
    """Gavel's figures from the same run (:func:`tui.bench.run.run_bench`'s, or measured here)."""

    import_s: float
    """``gavel import`` wall time, a process of its own (read, check, store, FTS, scores)."""
    import_peak_mb: float
    decide_s: float
    """``gavel decide`` wall time, median of fresh processes: start-up, the stored decision
    (fsync) and the recomputed scores."""
    first_screen_s: float | None = None
    keypress_s: float | None = None
    reports: int = 0

    @property
    def load_s(self) -> float:
        return self.import_s + (self.first_screen_s or 0.0)

    @classmethod
    def from_figures(cls, figures: Sequence[Figure], reports: int) -> GavelSide | None:
        """From ``run_bench``'s figures; None without the import and decide figures."""

        def find(prefix: str) -> Figure | None:
            return next((f for f in figures if f.name.startswith(prefix)), None)

        imp = find("`gavel import` wall time")
        mem = find("`gavel import` peak memory")
        decide = find("gavel decide")
        if imp is None or mem is None or decide is None:
            return None
        screen = find("start-up to first interactive screen")
        key = find("keypress → stored decision")
        return cls(
            imp.value,
            mem.value,
            decide.median,
            screen.median if screen else None,
            key.median if key else None,
            reports,
        )


def ratio(gavel: float | None, peer: float | None) -> float | None:
    """Gavel's figure over the peer's (below 1: Gavel takes less); None when either is
    missing or the peer's is zero."""
    if gavel is None or peer is None or peer <= 0:
        return None
    return gavel / peer


def _secs(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.1f} s"


def _mb(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} MB"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}×"


def peer_rows(gavel: GavelSide, peers: Sequence[PeerResult]) -> list[list[str]]:
    """The comparison's cells: a header row, then one row a figure; per peer two columns,
    its value and Gavel's ratio to it."""
    header = ["", "Gavel"]
    for p in peers:
        header += [p.label, f"Gavel ÷ {p.name}"]
    load_name = f"load ({gavel.reports:,} reports)" if gavel.reports else "load"
    gavel_load = _secs(gavel.load_s) + (
        "" if gavel.first_screen_s is not None else " (import only)"
    )
    rows: list[list[str]] = [
        header,
        ["install (not counted in load)", "—"],
        [load_name, gavel_load],
        ["load, the peer's database already set up", _secs(gavel.load_s)],
        ["peak memory while loading", _mb(gavel.import_peak_mb)],
        ["one decision stored and acknowledged", _secs(gavel.decide_s)],
        ["aggregate reflects the decision", "yes (its system's scores, recomputed)"],
    ]
    for p in peers:
        for row, (value, r) in zip(rows[1:], _peer_cells(gavel, p), strict=True):
            row += [value, r]
    if gavel.keypress_s is not None:
        rows.append(
            ["the workstation: keypress → stored → score on screen", _secs(gavel.keypress_s)]
            + ["—", ""] * len(peers)
        )
    return rows


def _peer_cells(gavel: GavelSide, p: PeerResult) -> list[tuple[str, str]]:
    """One peer's column pair, figure by figure: its value and Gavel's ratio to it. A peer
    that failed to install says why in the install row; one that failed later, in the load
    row."""
    install = "cached" if p.install_s is None and p.error is None else _secs(p.install_s)
    if p.error is not None and p.version is None:
        install = p.error
    aggregate = "—"
    if p.aggregate is not None:
        aggregate = ("yes" if p.aggregate[0] else "no") + f" ({p.aggregate[1]})"
    load = _secs(p.load_s)
    if p.error is not None and p.version is not None:
        load = p.error
    return [
        (install, ""),
        (load, _ratio(ratio(gavel.load_s, p.load_s))),
        (_secs(p.warm_load_s), _ratio(ratio(gavel.load_s, p.warm_load_s))),
        (_mb(p.peak_mb), _ratio(ratio(gavel.import_peak_mb, p.peak_mb))),
        (_secs(p.decision_median), _ratio(ratio(gavel.decide_s, p.decision_median))),
        (aggregate, ""),
    ]


def print_peers(console: Console, gavel: GavelSide, peers: Sequence[PeerResult]) -> None:
    rows = peer_rows(gavel, peers)
    table = Table(
        title="The same review workload in Gavel and its peers (same run)", header_style="bold"
    )
    for i, name in enumerate(rows[0]):
        table.add_column(
            name,
            justify="left" if i == 0 else "right",
            overflow="fold",
            max_width=None if i == 0 else 40,
        )
    for row in rows[1:]:
        table.add_row(*row)
    console.print(table)
    notes = [
        f"Gavel: load is `gavel import` in a process of its own (with search index and "
        f"scores, {_secs(gavel.import_s)})"
        + (
            f" plus the workstation's start to its first screen ({_secs(gavel.first_screen_s)})"
            if gavel.first_screen_s is not None
            else ""
        )
        + "; memory its peak RSS "
        "(VmHWM); a decision is one whole `gavel decide` process (start-up, decision stored "
        "with fsync, scores recomputed), median of fresh processes",
        "peers: load is the server's start (fresh data folder) plus the import until the first "
        "task is read back; memory is the server's process tree (summed RSS, sampled every "
        "50 ms, so a peak between samples is missed); a decision is an HTTP POST to the "
        "running server until its answer, median of several, each on another task; "
        "install is not counted",
    ]
    for p in peers:
        notes += [f"{p.label}: {n}" for n in p.notes]
    for note in notes:
        console.print(f"[dim]{note}[/dim]")


# ---------------------------------------------------------------------------------------------
# Running


def run_peers(
    console: Console,
    bundle: Path,
    workdir: Path,
    gavel: GavelSide,
    only: Sequence[str] = (),
    base_python: str | None = None,
) -> list[PeerResult]:
    """Install, load and measure each peer in ``workdir/peers``, print the table beside
    ``gavel``'s figures, and return the results. Never raises for a peer that fails (its
    result carries the reason); Ctrl-C still stops the servers and propagates."""
    folder = workdir / "peers"
    folder.mkdir(parents=True, exist_ok=True)
    results = []
    for peer in PEERS:
        if only and peer.key not in only:
            continue
        with console.status(f"{peer.name}…") as status:
            say = functools.partial(_say, status, peer.name)
            results.append(
                measure_peer(
                    peer, bundle, folder / peer.key, say, base_python=base_python or sys.executable
                )
            )
    print_peers(console, gavel, results)
    return results


def after_bench(
    console: Console, bundle: Path, root: Path, figures: Sequence[Figure], reports: int
) -> None:
    """What ``gavel bench --peers`` runs after Gavel's own figures (``BenchOptions.peers``):
    the peers on the same synthetic run, beside those figures."""
    side = GavelSide.from_figures(figures, reports)
    if side is None:
        console.print("peers: skipped (no `gavel import` or `gavel decide` figure)")
        return
    run_peers(console, bundle, root, side)


def _say(status: Status, name: str, text: str) -> None:
    status.update(f"{name}: {text}")


def measure_gavel(bundle: Path, workdir: Path, ui: bool) -> GavelSide:
    """Gavel's side when run on its own: ``gavel import`` in a process of its own (wall time,
    peak RSS) and ``gavel decide`` (median of fresh processes), with the bench's functions."""
    root = workdir / "gavel"
    root.mkdir(parents=True, exist_ok=True)
    db = root / "peers-gavel.db"
    _unlink_db(db)
    elapsed, rss = _measured_child(_IMPORT_SCRIPT.format(bundle=str(bundle), db=str(db)), root)
    figures = [
        Figure("`gavel import` wall time", elapsed, "s", "", None, "", None),
        Figure("`gavel import` peak memory", rss, "MB", "", None, "", None),
    ]
    figures += _cli_figures(db, root, calls=["gavel decide ID VALUE"])
    if ui:
        figures += _ui_figures(db)
    with sqlite3.connect(db) as conn:
        reports = int(conn.execute("SELECT count(*) FROM report").fetchone()[0])
    side = GavelSide.from_figures(figures, reports)
    assert side is not None
    return side


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tui.bench.peers",
        description="Gavel beside Label Studio and Potato on the same synthetic run.",
    )
    parser.add_argument(
        "--bundle",
        type=Path,
        required=True,
        help="a synthetic run's bundle folder (gavel bench --workdir DIR leaves one in DIR/bundle)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where the peers' venvs (kept, reused) and data go (default: a "
        "temporary folder, removed afterwards)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="label-studio or potato (repeatable; default both)",
    )
    parser.add_argument(
        "--skip-ui", action="store_true", help="Gavel's load without the workstation's start-up"
    )
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 200)
    if args.workdir is None:
        with tempfile.TemporaryDirectory(prefix="gavel-peers-") as folder:
            return _main(console, args.bundle, Path(folder), args.only, not args.skip_ui)
    return _main(console, args.bundle, args.workdir, args.only, not args.skip_ui)


def _main(console: Console, bundle: Path, workdir: Path, only: Sequence[str], ui: bool) -> int:
    started = time.perf_counter()
    with console.status("Gavel: `gavel import` and `gavel decide`…"):
        gavel = measure_gavel(bundle.resolve(), workdir.resolve(), ui)
    run_peers(console, bundle.resolve(), workdir.resolve(), gavel, only)
    console.print(
        f"[dim]peer comparison took {time.perf_counter() - started:.0f} s; work "
        f"folder {workdir}[/dim]"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
