"""``gavel bench``: every DESIGN.md §5 figure beside a baseline measured in the same run (the
harness is :mod:`tui.bench.run`; the workstation's figures run in their own processes)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command(
    help="Performance figures beside baselines measured in the same run: import, "
    "full and incremental recompute, a full estimate from a review plan (PPI++ "
    "and the rank bootstrap), memory, and the workstation's start-up, report "
    "switch and keypress → score; with --hub, the review hub's sync throughput "
    "and latency; with --serve N, N browser sessions of `gavel serve` at once."
)
@click.option(
    "--tasks", type=int, default=150, help="synthetic tasks (default 150, DailyReport's size)"
)
@click.option(
    "--systems",
    type=int,
    default=17,
    help="synthetic systems, each reporting on every task (default 17)",
)
@click.option("--quick", is_flag=True, help="a 1/10 run for a fast look")
@click.option(
    "--scale",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="multiply the task count: --scale 10 is the 10× run (1,500 tasks × 17 "
    "systems = 25,500 reports)",
)
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    default=None,
    help="keep the synthetic run and databases here, and reuse the run next time "
    "(default: a temporary folder, removed afterwards)",
)
@click.option("--skip-ui", is_flag=True, help="skip the TUI figures")
@click.option(
    "--hub",
    "hub",
    metavar="URL",
    default=None,
    help="also measure a review hub on this PostgreSQL database: push and pull "
    "throughput, a new database pulling --hub-events events, the round trip of "
    "one decision (works in a scratch schema it drops afterwards)",
)
@click.option(
    "--hub-events", type=int, default=100_000, help="events for the hub figures (default 100,000)"
)
@click.option(
    "--serve",
    "serve",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="also run N browser sessions of `gavel serve` deciding at once over real "
    "websockets: keypress → score on screen (p95), memory per session, nothing lost",
)
@click.option(
    "--serve-pause",
    type=click.FloatRange(min=0.05),
    default=0.3,
    show_default=True,
    metavar="SECONDS",
    help="seconds between one served session's timed keys (0.3: a fast reviewer; "
    "1 or more: the pace of reading each verdict)",
)
@click.option(
    "--peers",
    is_flag=True,
    help="also load the same run into Label Studio and Potato, each installed into a "
    "throwaway venv under the work folder (needs the package registry), and "
    "print Gavel's load, memory and decision figures beside theirs",
)
def bench(
    tasks: int,
    systems: int,
    quick: bool,
    scale: int,
    workdir: Path | None,
    skip_ui: bool,
    hub: str | None,
    hub_events: int,
    serve: int,
    serve_pause: float,
    peers: bool,
) -> int:
    from tui.bench.run import BenchOptions, PeerRunner, run_bench

    runner: PeerRunner | None = None
    if peers:
        from tui.bench.peers import after_bench

        runner = after_bench
    return run_bench(
        BenchOptions(
            tasks,
            systems,
            quick,
            workdir,
            skip_ui,
            hub,
            hub_events,
            scale=scale,
            serve=serve,
            serve_pause=serve_pause,
            peers=runner,
        )
    )
