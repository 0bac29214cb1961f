"""``gavel plan``: draw a review plan, list plans, show one with its progress, export one; and
``gavel estimate``: the judge's scores corrected by a plan's reviews."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tui.cli.options import db_option, format_option, open_db, reviewer_name, reviewer_option
from tui.cli.output import emit, output_file, wide_console

if TYPE_CHECKING:
    import sqlite3

DESIGN_HELP = (
    "uniform: a simple random sample; stratified: one per stratum (--by), "
    "allocated by stratum size or Neyman; weighted: more draws where a verdict "
    "could move a score (--weight impact) or where the judge is often overruled "
    "(--weight uncertainty), with a uniform floor; active: batches drawn where the "
    "suspicion flags and the error rates learnt from the decisions so far say the "
    "judge errs (with a floor), the next batch drawn when one is decided (recall near "
    "the suspicion order's, estimates still valid); reports: whole reports by system "
    "(--budget counts reports), every verdict of each reviewed, the only design that "
    "estimates a level or a ratio within a report (UserPref, RACE) with a valid interval"
)


@click.group(
    help="Review plans: a random sample of subjects, drawn with recorded "
    "probabilities, whose decisions support corrected estimates "
    "(`gavel estimate`). Review a plan in the workstation's plan mode (L)."
)
def plan() -> None:
    pass


@plan.command(
    "new",
    help="Draw a plan over the undecided subjects of one benchmark run and "
    "store it (reproducible from its seed).",
)
@db_option
@reviewer_option
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    required=True,
    help="how many draws (subjects to review; reports for --design reports)",
)
@click.option(
    "--design",
    type=click.Choice(("uniform", "stratified", "weighted", "active", "reports")),
    default="uniform",
    show_default=True,
    help=DESIGN_HELP,
)
@click.option(
    "--by",
    "by",
    default="",
    metavar="KEYS",
    help="strata of a stratified plan: framework, dimension, system, comma-separated "
    "(default for --design stratified: framework,dimension,system)",
)
@click.option(
    "--allocation",
    type=click.Choice(("proportional", "neyman")),
    default="proportional",
    show_default=True,
    help="draws per stratum: by its size, or by size × the spread of the judge's "
    "errors seen so far (Neyman)",
)
@click.option(
    "--weight",
    "weight_by",
    type=click.Choice(("impact", "uncertainty")),
    default="impact",
    show_default=True,
    help="what a weighted plan weighs: how far a verdict can move its report's "
    "headline scores, or how often humans overrule the judge on such verdicts",
)
@click.option(
    "--floor",
    type=click.FloatRange(min=0.0, max=1.0, min_open=True),
    default=0.2,
    show_default=True,
    help="share of a weighted plan's probability spread uniformly (keeps every "
    "subject drawable, so estimates stay unbiased)",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="random seed (default: a fresh one, recorded with the plan)",
)
@click.option("--suite", default=None, help="benchmark run (default: the first imported)")
@click.option(
    "--framework",
    "framework_names",
    multiple=True,
    help="only the subjects of this framework (repeatable; default: all of the run's)",
)
@click.option("--name", default=None, help="the plan's name (default: p1, p2, …)")
def new(
    db: Path | None,
    reviewer: str | None,
    budget: int,
    design: str,
    by: str,
    allocation: str,
    weight_by: str,
    floor: float,
    seed: int | None,
    suite: str | None,
    framework_names: tuple[str, ...],
    name: str | None,
) -> int:
    from store.plans.design import PlanSpec, create_plan

    keys = tuple(k.strip() for k in by.split(",") if k.strip())
    if design == "stratified" and not keys:
        keys = ("framework", "dimension", "system")
    conn = open_db(db)
    made = create_plan(
        conn,
        PlanSpec(
            budget=budget,
            design=design,  # type: ignore[arg-type]
            by=keys,
            allocation=allocation,  # type: ignore[arg-type]
            weight_by=weight_by,  # type: ignore[arg-type]
            floor=floor,
            seed=seed,
            suite=suite,
            frameworks=framework_names,
            name=name,
        ),
        reviewer_name(reviewer),
    )
    print(made.summary())
    if made.note:
        print(f"note: {made.note}")
    _strata(made.strata, "table")
    print(
        f"review it: `gavel review` then L (plan mode); estimates: `gavel estimate --plan "
        f"{made.name}`"
    )
    return 0


def _strata(strata: object, fmt: str) -> None:
    from store.plans.design import Stratum

    assert isinstance(strata, tuple)
    rows = [
        {
            "stratum": s.label,
            "subjects": s.size,
            "draws": s.draws,
            "spread": None if s.spread is None else round(s.spread, 3),
        }
        for s in strata
        if isinstance(s, Stratum)
    ]
    emit(
        rows,
        ["stratum", "subjects", "draws", "spread"],
        fmt,
        numeric=("subjects", "draws", "spread"),
    )


@plan.command(
    "list", help="Every plan with its design, budget and progress. Exits 1 when there is none."
)
@db_option
@format_option()
def list_(db: Path | None, fmt: str) -> int:
    from store.plans.design import list_plans

    plans = list_plans(open_db(db))
    if not plans:
        print("no review plan yet: `gavel plan new --budget N`", file=sys.stderr)
        return 1
    emit(
        [
            {
                "plan": p.name,
                "suite": p.suite,
                "design": p.shown_design,
                "strata": ",".join(p.strata_by),
                "budget": p.budget,
                "frame": p.frame,
                "reviewed": p.progress.decided,
                "subjects": p.progress.subjects,
                "skipped": p.progress.skipped,
                "seed": p.seed,
                "created": p.created_at[:19],
                "by": p.created_by,
            }
            for p in plans
        ],
        [
            "plan",
            "suite",
            "design",
            "strata",
            "budget",
            "frame",
            "reviewed",
            "subjects",
            "skipped",
            "seed",
            "created",
            "by",
        ],
        fmt,
        numeric=("budget", "frame", "reviewed", "subjects", "skipped"),
    )
    return 0


@plan.command("show", help="One plan: how it was drawn, its strata and where review stands.")
@db_option
@click.argument("name", required=False, help="plan name (default: the newest)")
@format_option()
def show(db: Path | None, name: str | None, fmt: str) -> int:
    from reviewer.errors import InputError
    from store.plans.design import export_document, get_plan

    conn = open_db(db)
    try:
        chosen = get_plan(conn, name)
    except InputError as exc:  # the plan is named by the NAME argument here, not --plan
        raise InputError("NAME", exc.message) from None
    if fmt == "json":
        document = export_document(conn, chosen)
        document.pop("draws")
        document["progress"] = {
            "subjects": chosen.progress.subjects,
            "decided": chosen.progress.decided,
            "draws": chosen.progress.draws,
            "skipped": chosen.progress.skipped,
        }
        print(json.dumps(document, ensure_ascii=False, indent=2))
        return 0
    if fmt == "table":
        print(chosen.summary())
        print(
            f"progress: {chosen.progress.describe(chosen.name)}"
            + (f"; note: {chosen.note}" if chosen.note else "")
        )
        _accepted_line(conn, chosen.id)
    _strata(chosen.strata, fmt)
    return 0


@plan.command(
    "export",
    help="The plan's draws in order, each with its subject's portable "
    "target, stratum, probabilities and review state.",
)
@db_option
@click.argument("name", help="plan name")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="write to this file (default: standard output)",
)
@click.option(
    "--hide-accepted",
    is_flag=True,
    help="leave out the draws whose verdicts a trust rule accepted (`gavel trust`); "
    "the number hidden goes to standard error",
)
@format_option("json", "jsonl", "csv")
def export(db: Path | None, name: str, output: Path | None, hide_accepted: bool, fmt: str) -> int:
    from store.plans.design import EXPORT_COLUMNS, export_document, export_rows, get_plan
    from store.trust.standing import accepted_subjects

    conn = open_db(db)
    chosen = get_plan(conn, name)
    hidden = accepted_subjects(conn) if hide_accepted else set()
    with output_file(output) as out:
        if fmt == "json":
            document = export_document(conn, chosen)
            if hidden:
                document["draws"] = list(export_rows(conn, chosen, hidden))
            out.write(json.dumps(document, ensure_ascii=False, indent=2))
            out.write("\n")
        else:
            emit(list(export_rows(conn, chosen, hidden)), EXPORT_COLUMNS, fmt, out=out)
    if hide_accepted:
        _hidden_note(conn, chosen.id, hidden)
    return 0


def _accepted_line(conn: sqlite3.Connection, plan_id: int) -> None:
    """How many of the plan's frame a trust rule accepted, when one is in force."""
    from store.trust.standing import accepted_subjects, current_rule

    rule = current_rule(conn)
    if rule is None:
        return
    framed = {
        s
        for (s,) in conn.execute("SELECT subject_id FROM plan_frame WHERE plan_id = ?", (plan_id,))
    }
    accepted = accepted_subjects(conn) & framed
    print(
        f"accepted without review: {len(accepted):,} of the frame's verdicts by "
        f"{rule.describe()} (the queue hides them with T; export --hide-accepted)"
    )


def _hidden_note(conn: sqlite3.Connection, plan_id: int, hidden: set[int]) -> None:
    """How many of the plan's subjects a trust rule accepted (and were left out)."""
    drawn = {
        s for (s,) in conn.execute("SELECT subject_id FROM plan_draw WHERE plan_id = ?", (plan_id,))
    }
    print(f"hidden: {len(drawn & hidden):,} subjects accepted by the trust rule", file=sys.stderr)


@click.command(
    help="Every headline metric per system and overall: the judge's value, the "
    "value corrected by a review plan (PPI++) with its interval, the judge's "
    "bias, the human-only estimate, how many more reviews reach a target "
    "precision, and which adjacent ranks could swap (Holm-corrected). Decisions "
    "outside the plan are counted once, skipped plan subjects widen the interval; "
    "the JSON's 'decisions' counts both. Method: docs/estimates.md."
)
@db_option
@click.option(
    "--plan",
    "plan_name",
    default=None,
    help="the plan whose reviews correct the judge (default: the newest)",
)
@click.option(
    "--suite",
    default=None,
    help="benchmark run, when there is no plan (default: the first imported)",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="also estimate this metric (repeatable; headline metrics always are)",
)
@click.option(
    "--half-width",
    type=click.FloatRange(min=0.0, min_open=True),
    default=0.02,
    show_default=True,
    help="target half-width for 'more reviews needed'",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 0.999),
    default=0.95,
    show_default=True,
    help="confidence level of every interval",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=100),
    default=1000,
    show_default=True,
    help="bootstrap resamples of tasks for the rank comparisons",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="seed of the bootstrap (the same seed gives the same intervals)",
)
@click.option(
    "--anytime",
    is_flag=True,
    help="also show the anytime-valid interval (a confidence sequence: valid however "
    "often you look)",
)
@click.option("--no-ranks", is_flag=True, help="skip the rank comparisons")
@click.option(
    "--no-crossfit",
    is_flag=True,
    help="tune PPI++'s λ on the reviews it weighs, as ppi-python does (agrees with "
    "it exactly; slightly biased when disagreements are few)",
)
@format_option()
def estimate(
    db: Path | None,
    plan_name: str | None,
    suite: str | None,
    metrics: tuple[str, ...],
    half_width: float,
    confidence: float,
    resamples: int,
    seed: int,
    anytime: bool,
    no_ranks: bool,
    no_crossfit: bool,
    fmt: str,
) -> int:
    from store.plans.estimates import dumps
    from store.plans.estimates import estimate as run_estimate
    from store.scores.cache import ensure_scores
    from tui.render.estimates import CSV_COLUMNS, csv_rows, estimate_renderables

    conn = open_db(db)
    ensure_scores(conn)
    report = run_estimate(
        conn,
        plan_name,
        suite=suite,
        metrics=metrics,
        half_width=half_width,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        ranks=not no_ranks,
        crossfit=not no_crossfit,
    )
    if fmt == "json":
        print(dumps(report))
    elif fmt == "csv":
        emit(csv_rows(report), CSV_COLUMNS, "csv")
    else:
        console = wide_console()
        for renderable in estimate_renderables(report, anytime=anytime, ranks=not no_ranks):
            console.print(renderable)
    return 0
