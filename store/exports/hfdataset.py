"""A Hugging Face dataset folder of a database's results: every export as Parquet, one folder
per configuration, and a README.md dataset card that says what each column is — which
columns are the judge's alone, which are human, which are the adjudicated result — and where
the data came from (suites and their content hashes, judge runs and models, reviewers, the
gold version).

Why a folder rather than an upload: publishing is the maintainers' decision and needs their
credentials; a folder is what ``huggingface-cli upload`` (or ``git push`` to a dataset repo)
takes, what ``datasets.load_dataset(DIR, "gold")`` reads locally, and what DuckDB or pandas
read as plain Parquet. Like every export it is deterministic: the same database writes the
same bytes (no export time stamps), so a dataset's history diffs cleanly.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.exports.files import EXPORTS, write_parquet
from store.exports.gold import gold_summary
from store.sqlite.named import database

CONFIGS = {
    "gold": "gold",
    "verdicts": "verdicts",
    "scores": "scores",
    "gt-expansions": "gt_expansions",
}
"""Export kind -> configuration (folder) name; the first is the default configuration."""

DATA_FILE = "train-00000-of-00001.parquet"

Role = str
COLUMNS: dict[str, dict[str, tuple[Role, str]]] = {
    "gold": {
        "gold_version": (
            "provenance",
            "digest of every resolved label: same labels, same version, in any database",
        ),
        "target": ("subject", "portable subject id `s:<suite>/<report>/<kind>/<subject>`"),
        "suite": ("subject", "benchmark run (suite id)"),
        "task": ("subject", "task id"),
        "system": ("subject", "system (agent) whose report this is"),
        "report": ("subject", "report id"),
        "framework": (
            "subject",
            "scoring framework (cascade, race, fact, dr3, claims_f1, drbench)",
        ),
        "kind": ("subject", "verdict kind (ins, fac claim, consistency, …)"),
        "dimension": ("subject", "rubric dimension where there is one"),
        "subject": ("subject", "what the verdict is about within the report"),
        "subject_text": ("subject", "the criterion, claim or claim↔reference pair as text"),
        "rubric_levels": ("subject", "what each level of the rubric means (its explanation)"),
        "claim_sentence": ("subject", "the report's sentence holding the claim"),
        "scale": ("subject", "the verdict scale's name"),
        "human_value": ("adjudicated", "the resolved human label (scale code)"),
        "human_value_number": (
            "adjudicated",
            "the label on the scale's numeric mapping (empty for unknown)",
        ),
        "judge_value": ("judge-only", "the active judge run's verdict"),
        "judge_value_number": ("judge-only", "… on the numeric mapping (empty for unknown)"),
        "judge_agrees": ("adjudicated", "whether the active judge's verdict equals the label"),
        "judge_explanation": ("judge-only", "the explanation of the verdict in force"),
        "judge_evidence": ("judge-only", "the evidence it quoted"),
        "cited_url": ("judge-only", "the cited page that holds the quoted evidence"),
        "cited_passage": ("judge-only", "that page around the evidence"),
        "suspicion": (
            "judge-only",
            "suspicion flags on the verdict (rule, weight, reason): why a rule thinks "
            "the judge erred",
        ),
        "judges": (
            "judge-only",
            "every judge run's verdict on the subject (run, model, active, "
            "current, value, error, value_number)",
        ),
        "status": ("adjudicated", "single, unanimous or adjudicated"),
        "reviewers": ("human", "reviewers whose standing decision this is"),
        "adjudicated_by": ("human", "who adjudicated, if anyone"),
        "decisions": (
            "human",
            "each reviewer's standing decision with rationale, reason code, "
            "time, the judge run they saw, and event id",
        ),
        "reasons": ("human", "judge-error reason codes given"),
        "flagged": ("human", "flagged for discussion"),
        "flag_note": ("human", "the flag's note"),
    },
    "verdicts": {
        "target": ("subject", "portable subject id"),
        "judgment": ("provenance", "judgment row id in the exporting database"),
        "suite": ("subject", "benchmark run"),
        "task": ("subject", "task id"),
        "system": ("subject", "system id"),
        "report": ("subject", "report id"),
        "run": ("judge-only", "judge run"),
        "model": ("judge-only", "judge model"),
        "framework": ("subject", "scoring framework"),
        "kind": ("subject", "verdict kind"),
        "dimension": ("subject", "rubric dimension"),
        "subject": ("subject", "subject key"),
        "current": ("judge-only", "whether this run's verdict is the one that counts"),
        "judge_value": ("judge-only", "the judge's verdict"),
        "judge_error": ("judge-only", "why the judge call failed, if it did"),
        "effective_value": ("adjudicated", "the human decision if resolved, else the judge's"),
        "provenance": ("adjudicated", "judge-only, single, unanimous, adjudicated or conflict"),
        "decided_by": ("human", "who decided (resolved subjects)"),
        "rationale": ("human", "the deciding rationale"),
        "reason": ("human", "judge-error reason code"),
        "decided_at": ("human", "when (UTC)"),
        "decisions": ("human", "every reviewer's standing decision"),
        "suspicion": ("judge-only", "suspicion flags on the verdict (rule, weight, reason)"),
    },
    "scores": {
        "scope": ("subject", "report or system"),
        "suite": ("subject", "benchmark run"),
        "system": ("subject", "system"),
        "task": ("subject", "task (report scope)"),
        "report": ("subject", "report (report scope)"),
        "framework": ("subject", "scoring framework"),
        "metric": ("subject", "metric name"),
        "part": ("subject", "a component of a metric rather than a headline"),
        "judge": ("judge-only", "the score from the judge's verdicts alone"),
        "adjudicated": ("adjudicated", "the score with human decisions applied"),
        "delta": ("adjudicated", "adjudicated − judge"),
        "n_judge": ("judge-only", "items the judge score counts"),
        "n_adjudicated": ("adjudicated", "items the adjudicated score counts"),
    },
    "gt-expansions": {
        "gt_version": ("provenance", "base version plus a digest of the accepted items"),
        "suite": ("subject", "benchmark run"),
        "task": ("subject", "task id"),
        "framework": ("subject", "framework the item belongs to"),
        "kind": ("subject", "new_claim, new_rubric, alias or extra_evidence"),
        "effect": ("subject", "new_item (raises a denominator) or alias_or_evidence"),
        "target": ("subject", "the existing item an alias or evidence attaches to"),
        "item": ("human", "the item in the benchmark's own shape (JSON)"),
        "proposal": ("provenance", "proposal id"),
        "system": ("provenance", "source system"),
        "report": ("provenance", "source report"),
        "span": ("provenance", "character span"),
        "proposed_by": ("human", "proposer"),
        "proposed_at": ("human", "when"),
        "rationale": ("human", "why"),
        "accepted_by": ("adjudicated", "who accepted it"),
        "accepted_at": ("adjudicated", "when"),
        "acceptance_rationale": ("adjudicated", "why"),
        "duplicate_of": ("provenance", "the proposal it was flagged as a duplicate of"),
    },
}
"""Per export: column -> (role, what it holds). Roles: ``subject`` (what the row is about),
``judge-only`` (the LLM judge's output, no human input), ``human`` (reviewers' decisions and
notes), ``adjudicated`` (the resolved result: human where decided, else judge), ``provenance``."""

ROLE_TEXT = {
    "subject": "what the row is about",
    "judge-only": "the LLM judge's output alone, no human input",
    "human": "reviewers' decisions, notes and identities",
    "adjudicated": "the resolved result (human where decided, else the judge's)",
    "provenance": "where the row came from",
}


@dataclass(frozen=True, slots=True)
class DatasetWritten:
    folder: Path
    rows: dict[str, int]
    """Rows per configuration."""


def write_hub_dataset(conn: sqlite3.Connection, folder: Path) -> DatasetWritten:
    """Write the dataset folder: ``<config>/train-00000-of-00001.parquet`` per non-empty
    export and the README.md card."""
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, int] = {}
    for kind, config in CONFIGS.items():
        (folder / config).mkdir(exist_ok=True)
        path = folder / config / DATA_FILE
        rows[config] = write_parquet(conn, kind, path)
        if rows[config] == 0:
            # `datasets` cannot load an empty split: an empty export is left out (and the
            # card says so) rather than making the whole folder fail to load.
            path.unlink()
            (folder / config).rmdir()
    (folder / "README.md").write_text(dataset_card(conn, rows), encoding="utf-8")
    return DatasetWritten(folder, rows)


_WHAT = {
    "gold": "a subject the humans resolved (the gold labels)",
    "verdicts": "a judge verdict (every run) with its human and effective value",
    "scores": "a metric of a report or system, judge and adjudicated",
    "gt_expansions": "an accepted ground-truth expansion (new item, alias, evidence)",
}
"""Configuration -> what one of its rows is."""


def dataset_card(conn: sqlite3.Connection, rows: dict[str, int]) -> str:
    """The README.md: YAML front matter (configurations, data files) and the card's text."""
    db = database(conn)
    suites = list(
        db.table("suite").rows_where(
            select="ext_id, name, version, frameworks, content_hash", order_by="ext_id"
        )
    )
    frameworks = sorted({fw for suite in suites for fw in json.loads(suite["frameworks"])})
    lines = [
        *_front_matter([c for c in CONFIGS.values() if rows.get(c)], frameworks),
        "",
        "# Adjudicated LLM-judge verdicts (Gavel export)",
        "",
        "Human adjudication of an LLM judge's verdicts on deep-research reports, "
        "exported by Gavel. Every score appears in two "
        "variants — from the judge's verdicts alone and with human decisions applied — "
        "so the judge's bias is visible.",
        "",
        *_configurations(rows),
        *_columns(),
        *_provenance(conn, suites),
        "",
        "Exported by Gavel; the same database always writes the same files.",
        "",
    ]
    return "\n".join(lines)


def _front_matter(present: list[str], frameworks: list[str]) -> list[str]:
    """The YAML header: each configuration present and its files (the first the default),
    and the tags."""
    lines = ["---", "configs:"]
    for index, config in enumerate(present):
        lines += [
            f"- config_name: {config}",
            "  data_files:",
            "  - split: train",
            f"    path: {config}/*.parquet",
        ]
        if index == 0:
            lines.append("  default: true")
    return [
        *lines,
        "tags:",
        "- llm-as-a-judge",
        "- deep-research",
        "- human-annotation",
        *(f"- {fw}" for fw in frameworks),
        "pretty_name: Gavel adjudicated judge verdicts",
        "---",
    ]


def _configurations(rows: dict[str, int]) -> list[str]:
    """Each configuration's rows and what one row is, and how to load it."""
    lines = [
        "## Configurations",
        "",
        "| configuration | rows | what one row is |",
        "|---|---:|---|",
    ]
    for config in CONFIGS.values():
        n = rows.get(config, 0)
        count = f"{n:,}" if n else "0 (not included: nothing to export yet)"
        lines.append(f"| `{config}` | {count} | {_WHAT[config]} |")
    return [
        *lines,
        "",
        "```python",
        "from datasets import load_dataset",
        'gold = load_dataset("path/to/this/folder", "gold")["train"]',
        "# or, as plain Parquet:",
        'gold = load_dataset("parquet", data_dir="path/to/this/folder/gold")["train"]',
        "```",
        "",
    ]


def _columns() -> list[str]:
    """Every configuration's columns with their role and meaning."""
    lines = [
        "## Columns",
        "",
        "Roles: " + "; ".join(f"**{role}** — {text}" for role, text in ROLE_TEXT.items()) + ".",
        "",
    ]
    for kind, config in CONFIGS.items():
        lines += [f"### `{config}`", "", "| column | role | meaning |", "|---|---|---|"]
        notes = COLUMNS[kind]
        for column in EXPORTS[kind][2]:
            role, meaning = notes[column]
            lines.append(f"| `{column}` | {role} | {meaning} |")
        lines.append("")
    return lines


_RUNS_SQL = """
    SELECT s.ext_id AS suite, r.ext_id AS run, r.model, r.prompt_version, r.active > 0 AS counts,
           count(j.id) AS verdicts
    FROM judge_run r JOIN suite s ON s.id = r.suite_id
    LEFT JOIN judgment j ON j.run_id = r.id
    GROUP BY r.id ORDER BY s.ext_id, r.ext_id
"""


def _provenance(conn: sqlite3.Connection, suites: list[dict[str, Any]]) -> list[str]:
    """The gold version, the review log, the benchmark runs and the judge runs."""
    summary = gold_summary(conn)
    db = database(conn)
    log = next(
        db.query(
            "SELECT count(DISTINCT reviewer || '|' || coalesce(key, '')) AS identities, "
            "count(*) AS events FROM review_event"
        )
    )
    lines = [
        "## Provenance",
        "",
        f"- gold version: `{summary.version}` ({summary.resolved:,} resolved subjects; "
        f"{summary.conflicts:,} in conflict between reviewers, left out of `gold`)",
        f"- review log: {log['events']:,} signed events by {log['identities']:,} reviewer "
        "identities (name and Ed25519 key)",
        "",
        "Benchmark runs:",
        "",
        "| suite | name | version | frameworks | content sha256 |",
        "|---|---|---|---|---|",
    ]
    lines.extend(
        f"| `{_cell(suite['ext_id'])}` | {_cell(suite['name'])} | {_cell(suite['version'])} | "
        f"{', '.join(json.loads(suite['frameworks']))} | `{_cell(suite['content_hash'])[:16]}` |"
        for suite in suites
    )
    lines += [
        "",
        "Judge runs:",
        "",
        "| suite | run | model | prompt | counts | verdicts |",
        "|---|---|---|---|---|---:|",
    ]
    lines.extend(
        f"| `{_cell(run['suite'])}` | `{_cell(run['run'])}` | {_cell(run['model'])} | "
        f"{_cell(run['prompt_version'])} | {'yes' if run['counts'] else 'candidate'} | "
        f"{run['verdicts']:,} |"
        for run in db.query(_RUNS_SQL)
    )
    return lines


def _cell(text: object) -> str:
    """Text from the inputs as a Markdown table cell: no pipes, no line breaks, no markup."""
    value = str(text)
    for ch in "|\r\n`<>":
        value = value.replace(ch, " ")
    return value
