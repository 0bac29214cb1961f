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

from store.exports.files import EXPORTS, write_parquet
from store.exports.gold import gold_summary

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
        "scale": ("subject", "the verdict scale's name"),
        "human_value": ("adjudicated", "the resolved human label (scale code)"),
        "human_value_number": ("adjudicated", "the label on the scale's numeric mapping"),
        "judge_value": ("judge-only", "the active judge run's verdict"),
        "judge_value_number": ("judge-only", "… on the numeric mapping"),
        "judge_agrees": ("adjudicated", "whether the active judge's verdict equals the label"),
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


def dataset_card(conn: sqlite3.Connection, rows: dict[str, int]) -> str:
    """The README.md: YAML front matter (configurations, data files) and the card's text."""
    summary = gold_summary(conn)
    suites = conn.execute(
        "SELECT ext_id, name, version, frameworks, content_hash FROM suite ORDER BY ext_id"
    ).fetchall()
    runs = conn.execute(
        """SELECT s.ext_id, r.ext_id, r.model, r.prompt_version, r.active > 0, count(j.id)
           FROM judge_run r JOIN suite s ON s.id = r.suite_id
           LEFT JOIN judgment j ON j.run_id = r.id
           GROUP BY r.id ORDER BY s.ext_id, r.ext_id"""
    ).fetchall()
    reviewers = conn.execute(
        "SELECT count(DISTINCT reviewer || '|' || coalesce(key, '')), count(*) FROM review_event"
    ).fetchone()
    frameworks = sorted({fw for row in suites for fw in json.loads(row[3])})
    present = [config for config in CONFIGS.values() if rows.get(config)]
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
    lines += [
        "tags:",
        "- llm-as-a-judge",
        "- deep-research",
        "- human-annotation",
        *(f"- {fw}" for fw in frameworks),
        "pretty_name: Gavel adjudicated judge verdicts",
        "---",
        "",
        "# Adjudicated LLM-judge verdicts (Gavel export)",
        "",
        "Human adjudication of an LLM judge's verdicts on deep-research reports, "
        "exported by Gavel. Every score appears in two "
        "variants — from the judge's verdicts alone and with human decisions applied — "
        "so the judge's bias is visible.",
        "",
        "## Configurations",
        "",
        "| configuration | rows | what one row is |",
        "|---|---:|---|",
    ]
    what = {
        "gold": "a subject the humans resolved (the gold labels)",
        "verdicts": "a judge verdict (every run) with its human and effective value",
        "scores": "a metric of a report or system, judge and adjudicated",
        "gt_expansions": "an accepted ground-truth expansion (new item, alias, evidence)",
    }
    for config in CONFIGS.values():
        n = rows.get(config, 0)
        count = f"{n:,}" if n else "0 (not included: nothing to export yet)"
        lines.append(f"| `{config}` | {count} | {what[config]} |")
    lines += [
        "",
        "```python",
        "from datasets import load_dataset",
        'gold = load_dataset("path/to/this/folder", "gold")["train"]',
        "# or, as plain Parquet:",
        'gold = load_dataset("parquet", data_dir="path/to/this/folder/gold")["train"]',
        "```",
        "",
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
    lines += [
        "## Provenance",
        "",
        f"- gold version: `{summary.version}` ({summary.resolved:,} resolved subjects; "
        f"{summary.conflicts:,} in conflict between reviewers, left out of `gold`)",
        f"- review log: {reviewers[1]:,} signed events by {reviewers[0]:,} reviewer "
        "identities (name and Ed25519 key)",
        "",
        "Benchmark runs:",
        "",
        "| suite | name | version | frameworks | content sha256 |",
        "|---|---|---|---|---|",
    ]
    for ext_id, name, version, fws, content_hash in suites:
        lines.append(
            f"| `{_cell(ext_id)}` | {_cell(name)} | {_cell(version)} | "
            f"{', '.join(json.loads(fws))} | `{_cell(content_hash)[:16]}` |"
        )
    lines += [
        "",
        "Judge runs:",
        "",
        "| suite | run | model | prompt | counts | verdicts |",
        "|---|---|---|---|---|---:|",
    ]
    for suite, run, model, prompt, active, n in runs:
        lines.append(
            f"| `{_cell(suite)}` | `{_cell(run)}` | {_cell(model)} | "
            f"{_cell(prompt)} | {'yes' if active else 'candidate'} | {n:,} |"
        )
    lines += ["", "Exported by Gavel; the same database always writes the same files.", ""]
    return "\n".join(lines)


def _cell(text: object) -> str:
    """Text from the inputs as a Markdown table cell: no pipes, no line breaks, no markup."""
    value = str(text)
    for ch in "|\r\n`<>":
        value = value.replace(ch, " ")
    return value
