"""DR3-Eval as released and as its evaluator writes it, read unchanged.

The benchmark's public files and the evaluator's outputs are spread over per-case folders; this
module reads them where they are and hands :mod:`.format` the same task and result records the
gathered JSONL form holds, so both forms go through one set of checks. The layout::

    RUN/
      run.json                                  optional manifest (judge model, context size)
      query.jsonl                               the tasks: {task | number | id, query, ...}
                                                (also accepted under datasets/)
      datasets/<case>/long_context_sampled_<size>.json   the sandbox: [{title, url, page_body}]
      datasets/<case>/useful_search.json(l)     the supportive pages' titles ({title, ...})
      datasets/<case>/noise_search.json(l)      optional: the noise pages' titles
      datasets/<case>/<any other file>          the user files (.md / .txt text is kept)
      insights/<case>/gold_insights_from_long_context.json   {"gold_insights": [...]}
      insights/<case>/gold_insights_from_source.json
      checklists/<case>/checklist.json          {"checklist": [{requirement, category}, ...]}
      results/<system>/<case>/final_report.md   the report
      results/<system>/<case>/combined_result.json        the evaluator's combined output
      results/<system>/<case>/eval_<metric>_<YYYYmmdd_HHMMSS>.json   one metric's output

A page's class is what the release says of it: supportive when ``useful_search`` names its
title, noise when ``noise_search`` does, else ``unlabelled`` (the released sandbox does not mark
distractors). Per metric, the newest ``eval_<metric>_<timestamp>.json`` counts, else the
metric in ``combined_result.json``. The evaluator's ``overall_quality`` is the depth score;
``information_recall`` keeps its insights under ``details.components.<origin>.details.
evaluation_result.covered_insights`` (``details.<origin>…`` also read). A metric that failed
(score -1 with an ``error``), a metric Gavel does not score, and every field this reading does
not use are listed in the import notes by file and field; malformed files are an InputError
naming the file, line and field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.errors import InputError
from reviewer.formats.jsonl import Where, loads, read_jsonl

KNOWN_METRICS = (
    "information_recall",
    "citation_coverage",
    "factual_accuracy",
    "format_compliance",
    "overall_quality",
)
_EVAL = re.compile(r"^eval_(?P<metric>[a-z_]+)_(?P<stamp>\d{8}_\d{6})\.json$")
_SAMPLED = re.compile(r"^long_context_sampled_(?P<size>[^.]+)\.json$")
DATA_NAMES = (
    "useful_search.json",
    "useful_search.jsonl",
    "noise_search.json",
    "noise_search.jsonl",
    "task.json",
    "task.md",
    "query.jsonl",
)
TASK_FIELDS = ("task", "number", "id", "query", "language", "domain", "subdomain", "context_size")
PAGE_FIELDS = ("title", "url", "page_body", "class", "keyword", "context_sizes")
INSIGHT_FIELDS = (
    "id",
    "score",
    "covered",
    "core_meaning",
    "core_points",
    "found_in_report",
    "missing_points",
    "explanation",
    "reasoning",
    "insight_text",
    "error",
)
"""What Gavel reads of a covered insight."""
TEXT_SUFFIXES = (".md", ".txt")
MAX_FILE_TEXT = 200_000


def is_release(root: Path) -> bool:
    """A folder in the released layout (rather than the gathered tasks.jsonl form)."""
    return (
        (root / "query.jsonl").is_file()
        or (root / "datasets" / "query.jsonl").is_file()
        or (root / "results").is_dir()
    ) and not (root / "tasks.jsonl").is_file()


def _load(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from exc
    # The checked parser: NaN, infinities, out-of-range integers, deep nesting and lone
    # surrogates (text SQLite cannot store) are each an InputError naming the field.
    return loads(text, path)


def _rows(path: Path) -> list[tuple[int | None, Any]]:
    """A JSON list file, or JSON Lines (either form of ``useful_search``)."""
    if path.suffix == ".jsonl":
        return [(n, row) for n, row in read_jsonl(path)]
    data = _load(path)
    if not isinstance(data, list):
        raise InputError(path, "expected a JSON list")
    return [(None, row) for row in data]


def _newest_evals(case: Path) -> dict[str, Path]:
    """Per metric, its newest ``eval_<metric>_<YYYYmmdd_HHMMSS>.json`` in the case folder."""
    newest: dict[str, tuple[str, Path]] = {}
    for path in case.iterdir():
        found = _EVAL.match(path.name)
        if found and (
            found.group("metric") not in newest
            or found.group("stamp") > newest[found.group("metric")][0]
        ):
            newest[found.group("metric")] = (found.group("stamp"), path)
    return {name: path for name, (_, path) in newest.items()}


def _covered_insights(inner: object) -> list[Any] | None:
    """``evaluation_result.covered_insights`` of one origin's details, when it is a list."""
    result = inner.get("evaluation_result") if isinstance(inner, dict) else None
    covered = result.get("covered_insights") if isinstance(result, dict) else None
    return covered if isinstance(covered, list) else None


def _insight(path: Path, fld: str, item: object) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise InputError(path, "must be an object", field=fld)
    return {k: item[k] for k in INSIGHT_FIELDS if k in item}


def _verifications(path: Path, at: str, details: dict[str, Any]) -> dict[str, Any]:
    """The evaluator's verification of each claim, by claim id (as text)."""
    verification = details.get("verification_result")
    checks = verification.get("verifications") if isinstance(verification, dict) else []
    if not isinstance(checks, list):
        raise InputError(path, "not a list", field=f"{at}verification_result.verifications")
    return {str(v.get("id")): v for v in checks if isinstance(v, dict)}


def _citation_results(path: Path, at: str, cid: object, check: object) -> list[dict[str, Any]]:
    """One claim's verdict per citation; a source the evaluator did not find marks them all."""
    if not isinstance(check, dict):
        return []
    results = []
    for j, res in enumerate(check.get("citation_results") or []):
        if not isinstance(res, dict):
            raise InputError(
                path,
                "must be an object",
                field=f"{at}verification_result.verifications.{cid}.citation_results.{j}",
            )
        results.append({k: res[k] for k in ("citation", "supported", "explanation") if k in res})
    if check.get("source_found") is False:
        for res in results:
            res.setdefault("source_found", False)
    return results


def _page_class(title: str, supportive: set[str], noise: set[str]) -> str:
    """What the release says of a page: useful_search names the supportive ones, noise_search
    the noise; the rest are unlabelled (the released sandbox does not mark distractors)."""
    if title in supportive:
        return "supportive"
    return "noise" if title in noise else "unlabelled"


@dataclass(slots=True)
class Release:
    root: Path
    context_size: str = ""
    notes: list[str] = field(default_factory=list)

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def note(self, path: Path, fld: str, message: str) -> None:
        self.notes.append(f"{self.rel(path)}: {fld}: {message}")

    def unmapped(
        self, path: Path, prefix: str, data: dict[str, Any], used: tuple[str, ...]
    ) -> None:
        for key in data:
            if key not in used:
                self.note(path, f"{prefix}{key}", "not mapped (kept out of the import)")

    # -- tasks ------------------------------------------------------------------------------

    def tasks(self) -> Iterator[tuple[Where, dict[str, Any]]]:
        path = self.root / "query.jsonl"
        if not path.is_file():
            path = self.root / "datasets" / "query.jsonl"
        if not path.is_file():
            raise InputError(
                self.root, "no query.jsonl (the released tasks), at the top or under datasets/"
            )
        for number, row in read_jsonl(path):
            where: Where = (str(path), number)
            case = row.get("task", row.get("number", row.get("id")))
            if case is None:
                raise InputError(
                    path, "missing: needs task, number or id", line=number, field="task"
                )
            case = str(case).strip()
            self.unmapped(path, f"line {number}: ", row, TASK_FIELDS)
            record: dict[str, Any] = {k: row[k] for k in TASK_FIELDS[3:] if k in row}
            record["task"] = case
            record.update(self.case_data(case))
            yield where, record

    def case_data(self, case: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        folder = self.root / "datasets" / case
        if folder.is_dir():
            out["sandbox"] = self.sandbox(folder)
            out["user_files"] = self.user_files(folder)
            if self.context_size:
                out["context_size"] = self.context_size
        insights = self.root / "insights" / case
        for name, key in (
            ("gold_insights_from_long_context.json", "gold_insights_from_long_context"),
            ("gold_insights_from_source.json", "gold_insights_from_source"),
        ):
            path = insights / name
            if path.is_file():
                out[key] = self.gold(path)
        path = self.root / "checklists" / case / "checklist.json"
        if path.is_file():
            out["checklist"] = self.checklist(path)
        return out

    def sandbox(self, folder: Path) -> list[dict[str, Any]]:
        path = self.sampled(folder)
        if path is None:
            return []
        supportive = self.titles(folder, "useful_search")
        noise = self.titles(folder, "noise_search")
        data = _load(path)
        if not isinstance(data, list):
            raise InputError(path, "expected a JSON list of pages {title, url, page_body}")
        pages = [self.page(path, i, page, supportive, noise) for i, page in enumerate(data)]
        unlabelled = sum(page["class"] == "unlabelled" for page in pages)
        if unlabelled:
            self.note(
                path,
                "class",
                f"{unlabelled} page(s) neither in useful_search nor in "
                "noise_search: imported as unlabelled (distractor or noise)",
            )
        return pages

    def sampled(self, folder: Path) -> Path | None:
        """The sandbox file of the run's context size (the only one, when the run names none)."""
        sampled = {
            m.group("size"): p for p in sorted(folder.iterdir()) if (m := _SAMPLED.match(p.name))
        }
        if not sampled:
            return None
        if self.context_size:
            path = sampled.get(self.context_size)
            if path is None:
                raise InputError(
                    folder,
                    f"no long_context_sampled_{self.context_size}.json "
                    f"(found: {', '.join(sorted(sampled))})",
                )
            return path
        if len(sampled) == 1:
            return next(iter(sampled.values()))
        raise InputError(
            folder,
            "several sandbox sizes ("
            + ", ".join(sorted(sampled))
            + "): name the one run in run.json's context_size",
        )

    def page(
        self, path: Path, i: int, page: object, supportive: set[str], noise: set[str]
    ) -> dict[str, Any]:
        """One sandbox page, with the class the release gives it."""
        if not isinstance(page, dict):
            raise InputError(path, "a page must be an object", field=str(i))
        for key in ("title", "url", "page_body"):
            if page.get(key) is not None and not isinstance(page[key], str):
                raise InputError(path, "must be a string", field=f"{i}.{key}")
        self.unmapped(path, f"{i}.", page, PAGE_FIELDS)
        title = str(page.get("title") or "")
        doc: dict[str, Any] = {
            "title": title,
            "url": str(page.get("url") or ""),
            "page_body": str(page.get("page_body") or ""),
            "class": page.get("class") or _page_class(title, supportive, noise),
        }
        if isinstance(page.get("keyword"), str):
            doc["keyword"] = page["keyword"]
        return doc

    def titles(self, folder: Path, stem: str) -> set[str]:
        for suffix in (".json", ".jsonl"):
            path = folder / f"{stem}{suffix}"
            if path.is_file():
                out: set[str] = set()
                for number, row in _rows(path):
                    items = row if isinstance(row, list) else [row]
                    for item in items:
                        if isinstance(item, dict) and isinstance(item.get("title"), str):
                            out.add(item["title"])
                        elif isinstance(item, str):
                            out.add(item)
                        else:
                            raise InputError(
                                path, "expected {title, ...} entries", line=number, field="title"
                            )
                return out
        return set()

    def user_files(self, folder: Path) -> list[dict[str, Any]]:
        files = []
        for path in sorted(folder.iterdir()):
            if (
                not path.is_file()
                or path.name.startswith(".")
                or path.name in DATA_NAMES
                or _SAMPLED.match(path.name)
                or path.name.startswith("long_context")
            ):
                continue
            entry: dict[str, Any] = {"filename": path.name}
            if path.suffix.lower() in TEXT_SUFFIXES:
                try:
                    entry["text"] = path.read_text(encoding="utf-8")[:MAX_FILE_TEXT]
                except (OSError, UnicodeDecodeError):
                    self.note(path, "text", "not readable as UTF-8; kept by name only")
            files.append(entry)
        return files

    def gold(self, path: Path) -> list[dict[str, Any]]:
        data = _load(path)
        items = data.get("gold_insights") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise InputError(path, 'expected {"gold_insights": [...]}', field="gold_insights")
        if isinstance(data, dict):
            self.unmapped(path, "", data, ("gold_insights",))
        out = []
        for i, item in enumerate(items):
            if isinstance(item, str):
                item = {"insight": item}
            if not isinstance(item, dict) or not isinstance(item.get("insight"), str):
                raise InputError(
                    path, "an insight needs its text", field=f"gold_insights.{i}.insight"
                )
            self.unmapped(path, f"gold_insights.{i}.", item, ("insight", "source"))
            out.append({"insight": item["insight"], "source": str(item.get("source") or "")})
        return out

    def checklist(self, path: Path) -> list[dict[str, Any]]:
        data = _load(path)
        items = data.get("checklist") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise InputError(path, 'expected {"checklist": [...]}', field="checklist")
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("requirement"), str):
                raise InputError(
                    path,
                    "a checklist row needs its requirement",
                    field=f"checklist.{i}.requirement",
                )
            self.unmapped(path, f"checklist.{i}.", item, ("id", "requirement", "category"))
            row = {"requirement": item["requirement"], "category": str(item.get("category") or "")}
            row["id"] = item.get("id", i + 1)  # the evaluator's item.get('id', i+1)
            out.append(row)
        return out

    # -- results ----------------------------------------------------------------------------

    def results(self) -> Iterator[tuple[Where, dict[str, Any]]]:
        base = self.root / "results"
        if not base.is_dir():
            return
        for system in sorted(p for p in base.iterdir() if p.is_dir()):
            for case in sorted(p for p in system.iterdir() if p.is_dir()):
                report = case / "final_report.md"
                if not report.is_file():
                    self.note(case, "final_report.md", "missing: case skipped")
                    continue
                yield (str(report), None), self.case_record(system.name, case, report)

    def no_reports(self) -> str:
        """Why a release gave no report: where the reports were looked for, and where any
        final_report.md under results/ is instead (an import of none is an error, not an
        empty suite)."""
        base = self.root / "results"
        looked = f"no report found: looked for {self.rel(base)}/<system>/<case>/final_report.md"
        if not base.is_dir():
            return f"{looked} (there is no results/ folder)"
        found = sorted(base.rglob("final_report.md"))
        if not found:
            return f"{looked} (there is none anywhere under {self.rel(base)}/)"
        example = self.rel(found[0])
        return (
            f"{looked}, but the {len(found)} under {self.rel(base)}/ lie elsewhere (e.g. "
            f"{example}): move each system's folder to {self.rel(base)}/<system>/ (one folder "
            "per system, a folder per case inside it)"
        )

    def case_record(self, system: str, case: Path, report: Path) -> dict[str, Any]:
        """One evaluated case: the report and what each metric the evaluator ran returned."""
        try:
            text = report.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(report, f"not UTF-8 text ({exc.reason})") from exc
        record: dict[str, Any] = {"task": case.name, "system": system, "final_report": text}
        for metric, (path, data) in self.metrics(case).items():
            mapped = self.metric(path, metric, data)
            if mapped is not None:
                record[mapped[0]] = mapped[1]
        return record

    def metrics(self, case: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
        """Per metric, the newest ``eval_<metric>_<timestamp>.json``, else the combined result."""
        out = self.combined(case)
        for name, path in _newest_evals(case).items():
            data = _load(path)
            if not isinstance(data, dict):
                raise InputError(path, "expected the metric's result object")
            out[name] = (path, data)
        return out

    @staticmethod
    def combined(case: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
        combined = case / "combined_result.json"
        if not combined.is_file():
            return {}
        data = _load(combined)
        metrics = data.get("metrics") if isinstance(data, dict) else None
        if not isinstance(metrics, dict):
            raise InputError(combined, 'expected {"metrics": {...}}', field="metrics")
        out: dict[str, tuple[Path, dict[str, Any]]] = {}
        for name, value in metrics.items():
            if not isinstance(value, dict):
                raise InputError(combined, "must be an object", field=f"metrics.{name}")
            out[name] = (combined, value)
        return out

    def metric(
        self, path: Path, name: str, data: dict[str, Any]
    ) -> tuple[str, dict[str, Any]] | None:
        prefix = "metrics." + name + "." if path.name == "combined_result.json" else ""
        details = data.get("details")
        if not isinstance(details, dict):
            raise InputError(path, "missing or not an object", field=f"{prefix}details")
        if name not in KNOWN_METRICS:
            self.note(path, f"{prefix}", f"metric {name!r} is not one Gavel scores; not imported")
            return None
        score = data.get("score")
        if (isinstance(score, int | float) and score < 0) or details.get("status") == "failed":
            self.note(
                path,
                f"{prefix}details.error",
                f"the metric failed in the evaluator ({details.get('error', 'score -1')})"
                "; not imported",
            )
            return None
        section, read = _METRIC_READERS[name]
        return section, read(self, path, f"{prefix}details.", details)

    def recall(self, path: Path, at: str, details: dict[str, Any]) -> dict[str, Any]:
        components = details.get("components")
        holder = components if isinstance(components, dict) else details
        where = "components." if isinstance(components, dict) else ""
        out: dict[str, Any] = {}
        for origin in ("long_context", "source_documents"):
            part = holder.get(origin)
            if not isinstance(part, dict) or part.get("available") is False:
                continue
            inner = part.get("details", {})
            covered = _covered_insights(inner)
            fld = f"{at}{where}{origin}.details.evaluation_result.covered_insights"
            if covered is None:
                if isinstance(inner, dict) and inner.get("message"):
                    continue  # "No gold insights provided for …": nothing evaluated
                raise InputError(path, "missing or not a list", field=fld)
            out[origin] = [_insight(path, f"{fld}.{i}", item) for i, item in enumerate(covered)]
        return out

    def coverage(self, path: Path, at: str, details: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"match_details": details.get("match_details", {})}
        if isinstance(details.get("extracted_citations"), list):
            out["extracted_citations"] = details["extracted_citations"]
        return out

    def accuracy(self, path: Path, at: str, details: dict[str, Any]) -> dict[str, Any]:
        extraction = details.get("extraction")
        claims = extraction.get("claims") if isinstance(extraction, dict) else None
        if not isinstance(claims, list):
            raise InputError(path, "missing or not a list", field=f"{at}extraction.claims")
        by_id = _verifications(path, at, details)
        out = []
        for i, claim in enumerate(claims):
            if not isinstance(claim, dict):
                raise InputError(path, "must be an object", field=f"{at}extraction.claims.{i}")
            cid = claim.get("id", i + 1)
            results = _citation_results(path, at, cid, by_id.pop(str(cid), None))
            out.append(
                {
                    "id": cid,
                    "claim_text": claim.get("claim_text", ""),
                    "citations": list(claim.get("citations") or []),
                    "source_type": str(claim.get("source_type") or ""),
                    "citation_results": results,
                }
            )
        for cid in by_id:
            self.note(
                path,
                f"{at}verification_result.verifications.{cid}",
                "names no extracted claim; not imported",
            )
        return {"claims": out}

    def format_compliance(self, path: Path, at: str, details: dict[str, Any]) -> dict[str, Any]:
        rows = details.get("checklist_evaluation")
        if not isinstance(rows, list):
            raise InputError(path, "missing or not a list", field=f"{at}checklist_evaluation")
        results = []
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise InputError(path, "must be an object", field=f"{at}checklist_evaluation.{i}")
            results.append(
                {
                    "id": row.get("id", i + 1),
                    "satisfied": row.get("satisfied"),
                    "status": str(row.get("status") or "ok"),
                    "explanation": str(row.get("explanation") or ""),
                }
            )
        return {"results": results}

    def depth(self, path: Path, at: str, details: dict[str, Any]) -> dict[str, Any]:
        raw = details.get("raw_evaluation")
        result = None
        if isinstance(raw, dict):
            metric = raw.get("metric_result")
            if isinstance(metric, dict) and isinstance(metric.get("depth_quality"), dict):
                result = metric["depth_quality"]
        if isinstance(result, dict) and isinstance(result.get("score"), int | float):
            # The evaluator stores the 1-10 score divided by 10.
            return {
                "score": round(float(result["score"]) * 10, 6),
                "justification": str(result.get("justification") or ""),
            }
        subs = details.get("sub_scores")
        if isinstance(subs, dict) and isinstance(subs.get("depth_quality"), int | float):
            return {"score": round(float(subs["depth_quality"]) / 10, 6)}
        raise InputError(
            path,
            "no depth score (raw_evaluation.metric_result.depth_quality or "
            "sub_scores.depth_quality)",
            field=f"{at}raw_evaluation",
        )


_MetricReader = Callable[[Release, Path, str, dict[str, Any]], dict[str, Any]]
_METRIC_READERS: dict[str, tuple[str, _MetricReader]] = {
    "information_recall": ("information_recall", Release.recall),
    "citation_coverage": ("citation_coverage", Release.coverage),
    "factual_accuracy": ("factual_accuracy", Release.accuracy),
    "format_compliance": ("format_compliance", Release.format_compliance),
    "overall_quality": ("depth_quality", Release.depth),
}
"""Per metric the evaluator writes: the result record's section, and how it is read (the
evaluator's ``overall_quality`` is the depth score)."""
