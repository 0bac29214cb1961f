"""LiveDRBench: the released dataset, predictions files and judge records, as one bundle.

Layout read (``gavel import PATH --format livedrbench``)::

    livedrbench.jsonl | .json | .csv   the dataset rows as released on Hugging Face:
                                       {category, key, question, ground_truths, misc, canary}
    *.parquet                          or the release's Parquet file(s) themselves (e.g.
                                       test-00000-of-00001.parquet; several shards in name
                                       order), read with pyarrow
    predictions/<system>.json          the evaluation script's predictions file:
                                       [{"key": ..., "preds": [...]}, ...]
    evaluations/<system>.jsonl         optional: the judge's per-task evaluation records

``ground_truths`` and ``misc`` are JSON text, either plain or encrypted as released (base64 of
the text XOR a SHA-256 key stream of ``canary``, the BrowseComp recipe), or already-decoded JSON
values. ``misc.eval_info`` holds ``primary_keys``, ``main_claims``, ``ignore_keys`` and
``evaluation_note``. Predictions follow each question's requested format, part for part.

The reference code keeps its judge's outputs in memory only, so the judge records are Gavel's
capture of the records that code builds (``evaluations`` in ``src/evals/*.py``), one line per
task: ``{"key": ..., "judge": "gpt-4o", "evaluations": [record, ...]}`` with records

- ``{"type": "dict", "part": p, "eval_output": {key: 0-3}}`` (a dictionary part);
- ``{"type": "list_of_dicts_match", "part": p, "pred_index": i, "extracted_gt": {...} | {} |
  null, "eval_output": {key: 0-3} | null}`` (NovelDS, Flights);
- ``{"type": "str_search", "part": p, "pred_index": i, "extracted_gt": "..." | null}``
  (Entities, PriorArt titles);
- ``{"type": "em", "part": p, "pred_index": i, "gt_index": j, "field": "material",
  "match": true | false}`` (SciFacts, one per prediction × entry × field).

``part`` defaults to 0 and ``pred_index`` to the record's position among its part's records;
``gt_index`` may pin a match. What becomes what (``.ground_truth`` for the metadata):

- a row → a task (id = ``key``), one criterion per ground-truth claim (``g1``, ``g2.3``: part 2,
  item 3), framework ``claims_f1``; a predictions entry → a report ``<system>:<key>`` whose text
  is the prediction as JSON, one claim per predicted item (``p1``, ``p2.3``) located on its line;
- every (predicted, ground-truth) pair of a list part → a ``cf1_match`` verdict (1 where the
  judge matched it); every graded key → a ``cf1_key`` verdict on ``<gt id>:<key>``.

Decisions where the files leave a choice, each noted in the suite description:

- A task missing from a predictions file gets an empty placeholder prediction (an unanswered
  task scores 0; the reference script would stop). A key the dataset does not have is an error.
- The judge's ``extracted_gt`` is resolved as the code removes it: the first remaining item
  equal to it, else the first whose primary-key values equal its; an item already taken is
  still paired (the one-to-one rule then sees the conflict); a dictionary in no ground truth
  leaves the prediction unmatched (the code would grade it against the invented dictionary).
- A prediction with no judge record gets ``cf1_match`` verdicts without a value (error "no
  judge record"), so a reviewer can still match it.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.errors import InputError
from reviewer.formats.jsonl import NotJSON, Where, loads, read_json, read_jsonl
from reviewer.frameworks.livedrbench.ground_truth import (
    FRAMEWORK_NAME,
    META_KEY,
    Item,
    Mode,
    domain_of,
    flatten,
    item_id,
    part_shape,
    render,
    scoring_mode,
    title_of,
    variants,
)
from reviewer.models import (
    Bundle,
    Claim,
    Criterion,
    JudgeRun,
    Judgment,
    Report,
    Suite,
    System,
    Task,
    id_problem,
    subject_of,
)

DATASET_NAMES = ("livedrbench.jsonl", "livedrbench.json", "livedrbench.csv")
ROW_FIELDS = ("category", "key", "question", "ground_truths", "misc", "canary")
RECORD_TYPES: dict[Mode, tuple[str, ...]] = {
    "dicts": ("dict", "list_of_dicts_match"),
    "strings": ("str_search",),
    "scifacts": ("em",),
}
MAX_NOTES = 200


def decrypt(ciphertext_b64: str, password: str) -> str:
    """The release's recipe: base64, XOR with SHA-256(password) repeated to length."""
    encrypted = base64.b64decode(ciphertext_b64, validate=True)
    digest = hashlib.sha256(password.encode()).digest()
    stream = digest * (len(encrypted) // len(digest)) + digest[: len(encrypted) % len(digest)]
    return bytes(a ^ b for a, b in zip(encrypted, stream, strict=True)).decode()


def encrypt(plaintext: str, password: str) -> str:
    """The inverse of :func:`decrypt` (for writing fixtures in the released form)."""
    data = plaintext.encode()
    digest = hashlib.sha256(password.encode()).digest()
    stream = digest * (len(data) // len(digest)) + digest[: len(data) % len(digest)]
    return base64.b64encode(bytes(a ^ b for a, b in zip(data, stream, strict=True))).decode()


def _err(where: Where, message: str, fld: str | None = None) -> InputError:
    return InputError(where[0], message, line=where[1], field=fld)


@dataclass(slots=True)
class _Row:
    key: str
    category: str
    mode: Mode
    question: str
    parts: list[Any]
    eval_info: dict[str, Any]
    misc: dict[str, Any]
    items: list[Item]
    ids: list[str]
    where: Where


@dataclass(slots=True)
class _Prediction:
    parts: list[Any]
    items: list[Item]
    ids: list[str]
    placeholder: bool = False


@dataclass(slots=True)
class _Reader:
    root: Path
    suite_id: str | None
    notes: list[str] = field(default_factory=list)
    rows: dict[str, _Row] = field(default_factory=dict)

    def rel(self, path: Path | str) -> str:
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return str(path)

    def note(self, where: Where, message: str) -> None:
        self.notes.append(f"{self.rel(where[0])}{f':{where[1]}' if where[1] else ''}: {message}")

    # -- dataset -----------------------------------------------------------------------

    def read(self) -> Bundle:
        if not self.root.is_dir():
            raise InputError(self.root, "not a folder (expected a LiveDRBench run folder)")
        self.read_dataset()
        tasks = [self.task(row) for row in self.rows.values()]
        systems: list[System] = []
        reports: list[Report] = []
        runs: list[JudgeRun] = []
        judgments: list[Judgment] = []
        pred_dir = self.root / "predictions"
        pred_files = sorted(p for p in pred_dir.glob("*.json")) if pred_dir.is_dir() else []
        for path in pred_files:
            system = self.system_id(path)
            systems.append(System(id=system, name=system))
            predictions = self.predictions(path)
            reports.extend(self.system_reports(path, system, predictions))
            eval_path = self.root / "evaluations" / f"{path.stem}.jsonl"
            if eval_path.is_file():
                run, verdicts = self.evaluations(eval_path, system, predictions)
                runs.append(run)
                judgments.extend(verdicts)
        self.check_evaluations_have_predictions(pred_dir)
        suite = Suite(
            id=self.suite_id or f"livedrbench-{self.root.name}",
            name=f"LiveDRBench ({self.root.name})",
            frameworks=[FRAMEWORK_NAME],
            source=str(self.root),
            description=self.description(),
        )
        return Bundle(
            suite=suite,
            tasks=tasks,
            systems=systems,
            reports=reports,
            runs=runs,
            judgments=judgments,
        )

    def read_dataset(self) -> None:
        """The rows of the one dataset file, or of the release's Parquet shards."""
        dataset, shards = self.dataset_files()
        if dataset is not None:
            for where, raw in self.dataset_rows(dataset):
                self.add_row(raw, where)
        for shard in shards:
            for where, raw in self.parquet_rows(shard):
                self.add_row(raw, where)
        if not self.rows:
            raise InputError(dataset or shards[0], "the dataset has no rows")

    def dataset_files(self) -> tuple[Path | None, list[Path]]:
        """(the dataset file, the Parquet shards): one or the other."""
        found = [self.root / n for n in DATASET_NAMES if (self.root / n).is_file()]
        shards = sorted(p for p in self.root.glob("*.parquet") if p.is_file())
        candidates = found + shards[:1]  # the shards are one dataset
        if not candidates:
            raise InputError(
                self.root,
                f"no dataset file (expected one of "
                f"{', '.join(DATASET_NAMES)}, or the release's .parquet file)",
            )
        if len(candidates) > 1:
            raise InputError(candidates[1], f"a second dataset file beside {found[0].name}")
        return (found[0] if found else None), shards

    def system_reports(
        self, path: Path, system: str, predictions: dict[str, _Prediction]
    ) -> list[Report]:
        """A report per task of the dataset; a task the file does not answer gets an empty
        placeholder (scored as an unanswered task)."""
        reports = []
        for key, row in self.rows.items():
            prediction = predictions.get(key)
            if prediction is None:
                prediction = self.placeholder(row)
                self.note(
                    (str(path), None),
                    f"no prediction for task {key}: scored as an empty answer",
                )
            reports.append(self.report(row, system, prediction))
        return reports

    def check_evaluations_have_predictions(self, pred_dir: Path) -> None:
        eval_dir = self.root / "evaluations"
        if not eval_dir.is_dir():
            return
        for path in sorted(eval_dir.glob("*.jsonl")):
            if not (pred_dir / f"{path.stem}.json").is_file():
                raise InputError(
                    path,
                    f"judge records for system {path.stem!r}, which has "
                    "no predictions/<system>.json",
                )

    def description(self) -> str:
        description = "LiveDRBench run imported from its released files."
        if not self.notes:
            return description
        shown = self.notes[:MAX_NOTES]
        more = len(self.notes) - len(shown)
        description += "\nImport notes:\n" + "\n".join(f"- {n}" for n in shown)
        if more:
            description += f"\n- … and {more} more"
        return description

    def dataset_rows(self, path: Path) -> list[tuple[Where, dict[str, Any]]]:
        if path.suffix == ".jsonl":
            return [((str(path), n), row) for n, row in read_jsonl(path)]
        if path.suffix == ".json":
            data = _load_json(path)
            if not isinstance(data, list):
                raise InputError(path, "expected a JSON list of dataset rows")
            out: list[tuple[Where, dict[str, Any]]] = []
            for i, row in enumerate(data):
                if not isinstance(row, dict):
                    raise InputError(path, "a dataset row must be an object", field=str(i))
                out.append(((str(path), None), {"_index": i, **row}))
            return out
        try:
            with path.open(newline="", encoding="utf-8") as handle:
                reader = csv.DictReader(handle)
                rows: list[tuple[Where, dict[str, Any]]] = [
                    ((str(path), reader.line_num), dict(r)) for r in reader
                ]
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 text ({exc.reason})") from exc
        except csv.Error as exc:
            raise InputError(path, f"not valid CSV: {exc}") from exc
        return rows

    def parquet_rows(self, path: Path) -> list[tuple[Where, dict[str, Any]]]:
        """The rows of a Parquet shard as released on Hugging Face, numbered from 1 (the
        "line" an error names). Columns the release adds beyond the six are noted, not used."""
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises its own error types for bad files
            raise InputError(
                path, f"not a readable Parquet file ({type(exc).__name__}: {str(exc)[:200]})"
            ) from exc
        self.check_columns(path, table.column_names)
        columns = [c for c in table.column_names if c in ROW_FIELDS]
        try:
            # Strings are decoded here, not when the file is read: damaged bytes show now.
            rows = table.select(columns).to_pylist()
        except Exception as exc:  # UnicodeDecodeError, or pyarrow's own errors
            raise InputError(
                path, f"damaged Parquet data ({type(exc).__name__}: {str(exc)[:200]})"
            ) from None
        return [((str(path), n), row) for n, row in enumerate(rows, 1)]

    def check_columns(self, path: Path, names: list[str]) -> None:
        extra = [c for c in names if c not in ROW_FIELDS]
        if extra:
            self.note(
                (str(path), None),
                f"column(s) {', '.join(extra)} not mapped (not part of the LiveDRBench rows)",
            )
        missing = [c for c in ("key", "category", "question", "ground_truths") if c not in names]
        if missing:
            raise InputError(path, "missing column", field=missing[0])

    def add_row(self, row: dict[str, Any], where: Where) -> None:
        prefix = f"{row.pop('_index')}." if "_index" in row else ""
        unknown = sorted(set(row) - set(ROW_FIELDS))
        if unknown:
            raise _err(
                where, "unknown field (not part of the LiveDRBench rows)", prefix + unknown[0]
            )
        key = _ident(row.get("key"), where, prefix + "key")
        if key in self.rows:
            raise _err(where, f"task key {key!r} repeats", prefix + "key")
        category = _text(row, "category", where, prefix)
        question = _text(row, "question", where, prefix)
        canary = row.get("canary") or None
        if canary is not None and not isinstance(canary, str):
            raise _err(where, "must be a string", prefix + "canary")
        parts = _decode(row.get("ground_truths"), canary, where, prefix + "ground_truths")
        if not isinstance(parts, list) or not parts:
            raise _err(where, "must be a non-empty list of answer parts", prefix + "ground_truths")
        misc, eval_info = _misc(row.get("misc"), canary, where, prefix)
        mode = scoring_mode(category)
        _check_parts(parts, mode, where, prefix + "ground_truths")
        items = flatten(parts)
        ids = [item_id("g", item) for item in items]
        self.rows[key] = _Row(
            key, category, mode, question, parts, eval_info, misc, items, ids, where
        )

    def task(self, row: _Row) -> Task:
        main = set(row.eval_info.get("main_claims", []))
        metadata = {
            META_KEY: {
                "key": row.key,
                "category": row.category,
                "ground_truths": row.parts,
                "eval_info": row.eval_info,
                "gt_ids": row.ids,
            }
        }
        extra = {k: v for k, v in row.misc.items() if k != "eval_info"}
        if extra:
            metadata[META_KEY]["misc"] = extra
        return Task(
            id=row.key,
            prompt=row.question,
            category=row.category,
            domain=domain_of(row.category),
            task_type=row.mode,
            metadata=metadata,
            criteria=[
                _criterion(item, gid, main) for item, gid in zip(row.items, row.ids, strict=True)
            ],
        )

    # -- predictions -------------------------------------------------------------------

    def system_id(self, path: Path) -> str:
        return _ident(path.stem, (str(path), None), "file name")

    def predictions(self, path: Path) -> dict[str, _Prediction]:
        data = _load_json(path)
        if not isinstance(data, list):
            raise InputError(path, "expected a JSON list of {key, preds} entries")
        out: dict[str, _Prediction] = {}
        for i, entry in enumerate(data):
            where: Where = (str(path), None)
            if not isinstance(entry, dict):
                raise _err(where, "an entry must be an object", str(i))
            unknown = sorted(set(entry) - {"key", "preds"})
            if unknown:
                raise _err(where, "unknown field (entries are {key, preds})", f"{i}.{unknown[0]}")
            key = _ident(entry.get("key"), where, f"{i}.key")
            row = self.rows.get(key)
            if row is None:
                raise _err(where, f"key {key!r} is not a task of the dataset", f"{i}.key")
            if key in out:
                raise _err(where, f"a second prediction for task {key}", f"{i}.key")
            preds = entry.get("preds")
            if not isinstance(preds, list):
                raise _err(where, "must be a list of answer parts", f"{i}.preds")
            if len(preds) != len(row.parts):
                raise _err(
                    where,
                    f"{len(preds)} answer parts, but task {key}'s ground truth "
                    f"has {len(row.parts)}",
                    f"{i}.preds",
                )
            _check_parts(preds, row.mode, where, f"{i}.preds", expected=row.parts)
            items = flatten(preds)
            out[key] = _Prediction(preds, items, [item_id("p", it) for it in items])
        return out

    @staticmethod
    def placeholder(row: _Row) -> _Prediction:
        parts: list[Any] = [{} if isinstance(p, dict) else [] for p in row.parts]
        return _Prediction(parts, [], [], placeholder=True)

    def report(self, row: _Row, system: str, prediction: _Prediction) -> Report:
        markdown, spans = _render_prediction(prediction.parts)
        if prediction.placeholder:
            spans = []  # an unanswered task: its empty {} parts are not claims
        claims = []
        for item, pid, span in zip(prediction.items, prediction.ids, spans, strict=True):
            claims.append(
                Claim(
                    id=pid,
                    fact=markdown[span[0] : span[1]],
                    extract=render(item.value) or "(empty)",
                    span=span,
                    citations=[],
                    metadata={"part": item.part, "index": item.index, "claim": item.value},
                )
            )
        metadata: dict[str, Any] = {META_KEY: {"preds": prediction.parts}}
        if prediction.placeholder:
            metadata["placeholder"] = True
        return Report(
            id=f"{system}:{row.key}",
            task=row.key,
            system=system,
            markdown=markdown,
            references=[],
            metadata=metadata,
            claims=claims,
        )

    # -- judge records -----------------------------------------------------------------

    def evaluations(
        self, path: Path, system: str, predictions: dict[str, _Prediction]
    ) -> tuple[JudgeRun, list[Judgment]]:
        run_id = f"{system}-judge"
        judges: list[str] = []
        judgments: list[Judgment] = []
        seen: set[str] = set()
        for number, line in read_jsonl(path):
            where: Where = (str(path), number)
            row, records = self.evaluation_line(line, where, seen, judges)
            prediction = predictions.get(row.key) or self.placeholder(row)
            judgments.extend(
                _Judge(self, row, prediction, run_id, f"{system}:{row.key}", where).judgments(
                    records
                )
            )
        run = JudgeRun(
            id=run_id,
            model=", ".join(judges) or "unknown",
            prompt_version="livedrbench-appB",
            params={"source": self.rel(path)},
            description=f"LiveDRBench judge records for {system} ({self.rel(path)})",
        )
        return run, judgments

    def evaluation_line(
        self, line: dict[str, Any], where: Where, seen: set[str], judges: list[str]
    ) -> tuple[_Row, list[Any]]:
        """One task's line of judge records: its row and records (the judge's name kept)."""
        unknown = sorted(set(line) - {"key", "judge", "evaluations"})
        if unknown:
            raise _err(where, "unknown field (lines are {key, judge, evaluations})", unknown[0])
        key = _ident(line.get("key"), where, "key")
        row = self.rows.get(key)
        if row is None:
            raise _err(where, f"key {key!r} is not a task of the dataset", "key")
        if key in seen:
            raise _err(where, f"a second line for task {key}", "key")
        seen.add(key)
        judge = line.get("judge")
        if judge is not None:
            if not isinstance(judge, str):
                raise _err(where, "must be a string", "judge")
            if judge not in judges:
                judges.append(judge)
        records = line.get("evaluations")
        if not isinstance(records, list):
            raise _err(where, "must be a list of evaluation records", "evaluations")
        return row, records


@dataclass(slots=True)
class _Judge:
    """Turns one task's evaluation records into verdicts on claim pairs and keys."""

    reader: _Reader
    row: _Row
    prediction: _Prediction
    run: str
    report: str
    where: Where
    matched: dict[int, int | None] = field(default_factory=dict)
    explained: dict[int, str] = field(default_factory=dict)
    out: list[Judgment] = field(default_factory=list)

    def judgments(self, records: list[Any]) -> list[Judgment]:
        position: dict[int, int] = {}
        remaining = {
            p: [i for i, it in enumerate(self.row.items) if it.part == p]
            for p in range(len(self.row.parts))
        }
        for r, record in enumerate(records):
            fld = f"evaluations.{r}"
            kind = self.record_type(record, fld)
            part = self.record_part(record, kind, fld)
            if kind == "dict":
                self.dict_record(record, part, fld)
                continue
            default = position.get(part, 0)
            position[part] = default + 1
            pred = self.pred_at(record, part, default, fld)
            if kind == "em":
                self.em_record(record, part, pred, fld)
            else:
                self.match_record(record, part, pred, remaining[part], fld)
            self.once(fld)
        self.match_verdicts()
        return self.out

    def record_type(self, record: object, fld: str) -> str:
        """The record's type, one the task's category is graded with."""
        if not isinstance(record, dict):
            raise _err(self.where, "an evaluation record must be an object", fld)
        allowed = RECORD_TYPES[self.row.mode]
        kind = record.get("type")
        if kind not in allowed:
            raise _err(
                self.where,
                f"type {kind!r} does not grade a {self.row.category} "
                f"task (expected {' or '.join(allowed)})",
                f"{fld}.type",
            )
        return str(kind)

    def record_part(self, record: dict[str, Any], kind: str, fld: str) -> int:
        """The answer part a record grades (a dict record grades a dictionary part)."""
        part = record.get("part", 0)
        if (
            not isinstance(part, int)
            or isinstance(part, bool)
            or not (0 <= part < len(self.row.parts))
        ):
            raise _err(self.where, f"no answer part {part!r}", f"{fld}.part")
        shape = part_shape(self.row.parts[part])
        if kind == "dict" and shape != "dict":
            raise _err(
                self.where,
                "a dict record for a part that is not a dictionary",
                f"{fld}.part",
            )
        return part

    def once(self, fld: str) -> None:
        """Refuse a record that grades again what an earlier one of the line graded (two
        records pinning one ground-truth entry): one verdict would silently replace the other.
        """
        seen: set[tuple[str, str]] = set()
        for judgment in self.out:
            identity = (judgment.kind, subject_of(judgment))
            if identity in seen:
                raise _err(
                    self.where, "grades what an earlier record of this line already graded", fld
                )
            seen.add(identity)

    def pred_at(self, record: dict[str, Any], part: int, default: int, fld: str) -> int:
        index = record.get("pred_index", default)
        items = [i for i, it in enumerate(self.prediction.items) if it.part == part]
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(items):
            raise _err(
                self.where,
                f"the prediction's part {part + 1} has no item {index!r}",
                f"{fld}.pred_index",
            )
        return items[index]

    def gt_at(self, record: dict[str, Any], part: int, fld: str) -> int | None:
        index = record.get("gt_index")
        if index is None:
            return None
        items = [i for i, it in enumerate(self.row.items) if it.part == part]
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(items):
            raise _err(
                self.where,
                f"the ground truth's part {part + 1} has no item {index!r}",
                f"{fld}.gt_index",
            )
        return items[index]

    def grade(self, value: object, fld: str) -> int:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or value not in (0, 1, 2, 3)
        ):
            raise _err(self.where, f"grade {value!r} is not 0, 1, 2 or 3", fld)
        return int(value)

    def key_verdicts(self, pred: int, gt: int, output: object, fld: str) -> None:
        if not isinstance(output, dict):
            raise _err(self.where, "must be an object of key grades", fld)
        gid, pid = self.row.ids[gt], self.prediction.ids[pred]
        gt_value = self.row.items[gt].value
        pred_value = self.prediction.items[pred].value
        for name, value in output.items():
            grade = self.grade(value, f"{fld}.{name}")
            gv = gt_value.get(name) if isinstance(gt_value, dict) else None
            pv = pred_value.get(name) if isinstance(pred_value, dict) else None
            self.out.append(
                Judgment(
                    run=self.run,
                    report=self.report,
                    kind="cf1_key",
                    claim=pid,
                    criterion=gid,
                    key=f"{gid}:{name}",
                    value=grade,
                    explanation=f"{name}: ground truth {_show(gv)}; predicted {_show(pv)}",
                )
            )

    def dict_record(self, record: dict[str, Any], part: int, fld: str) -> None:
        gt = next(i for i, it in enumerate(self.row.items) if it.part == part)
        pred = next((i for i, it in enumerate(self.prediction.items) if it.part == part), None)
        if pred is None:
            raise _err(self.where, "grades for a dictionary part the prediction leaves empty", fld)
        self.key_verdicts(pred, gt, record.get("eval_output"), f"{fld}.eval_output")

    def match_record(
        self, record: dict[str, Any], part: int, pred: int, remaining: list[int], fld: str
    ) -> None:
        if pred in self.matched:
            raise _err(self.where, "a second record for the same prediction", f"{fld}.pred_index")
        extracted = record.get("extracted_gt")
        gt = self.gt_at(record, part, fld)
        if gt is None and extracted not in (None, {}, ""):
            gt = self.find(extracted, part, remaining, fld)
        self.matched[pred] = gt
        if gt is None:
            self.explained[pred] = (
                "The judge found no ground-truth claim for this prediction."
                if extracted in (None, {}, "")
                else "The judge returned a claim that is not in the ground "
                "truth: " + _show(extracted)
            )
            return
        if gt in remaining:
            remaining.remove(gt)
        else:
            self.reader.note(
                self.where,
                f"{self.report}: the judge matched {self.row.ids[gt]} "
                "a second time (the one-to-one rule decides)",
            )
        self.explained[pred] = f"The judge matched this prediction to {self.row.ids[gt]}."
        if record["type"] == "list_of_dicts_match":
            output = record.get("eval_output")
            if output is None:
                raise _err(
                    self.where, "a matched prediction needs its key grades", f"{fld}.eval_output"
                )
            self.key_verdicts(pred, gt, output, f"{fld}.eval_output")

    def find(self, extracted: object, part: int, remaining: list[int], fld: str) -> int | None:
        """The ground-truth item the judge's ``extracted_gt`` names, among the part's
        remaining items first (an item already taken is still found)."""
        everything = [i for i, it in enumerate(self.row.items) if it.part == part]
        pool = remaining + [i for i in everything if i not in remaining]
        if self.row.mode == "strings":
            found = self.find_string(extracted, pool, fld)
        else:
            found = self.find_dict(extracted, pool, fld)
        if found is None:
            self.reader.note(
                self.where,
                f"{self.report}: the judge returned a claim that is not "
                "in the ground truth; the prediction is left unmatched",
            )
        return found

    def find_string(self, extracted: object, pool: list[int], fld: str) -> int | None:
        """The first item whose title equals the string, ignoring case."""
        if not isinstance(extracted, str):
            raise _err(self.where, "must be the matched string", f"{fld}.extracted_gt")
        wanted = extracted.casefold()
        return next(
            (i for i in pool if title_of(self.row.items[i].value).casefold() == wanted), None
        )

    def find_dict(self, extracted: object, pool: list[int], fld: str) -> int | None:
        """The first item equal to the dictionary, else the first with its primary-key values
        (the code's ``find_and_remove_dict``)."""
        if not isinstance(extracted, dict):
            raise _err(
                self.where, "must be the matched ground-truth dictionary", f"{fld}.extracted_gt"
            )
        found = next((i for i in pool if self.row.items[i].value == extracted), None)
        primary = self.row.eval_info.get("primary_keys", [])
        if found is None and primary:
            found = next(
                (i for i in pool if _same_keys(self.row.items[i].value, extracted, primary)),
                None,
            )
        return found

    def em_record(self, record: dict[str, Any], part: int, pred: int, fld: str) -> None:
        gt = self.gt_at(record, part, fld)
        if gt is None:
            raise _err(self.where, "an em record names its ground-truth entry", f"{fld}.gt_index")
        name = record.get("field")
        if not isinstance(name, str) or not name:
            raise _err(self.where, "must name the compared field", f"{fld}.field")
        match = record.get("match")
        if not isinstance(match, bool):
            raise _err(self.where, "must be true or false", f"{fld}.match")
        gid, pid = self.row.ids[gt], self.prediction.ids[pred]
        gv = self.row.items[gt].value
        pv = self.prediction.items[pred].value
        shown_gt = (
            " | ".join(str(v) for v in variants(gv.get(name))) if isinstance(gv, dict) else ""
        )
        self.out.append(
            Judgment(
                run=self.run,
                report=self.report,
                kind="cf1_key",
                claim=pid,
                criterion=gid,
                key=f"{gid}:{name}",
                value=match,
                explanation=f"{name}: ground truth {shown_gt or '—'}; predicted "
                f"{_show(pv.get(name) if isinstance(pv, dict) else None)}",
            )
        )

    def match_verdicts(self) -> None:
        if self.row.mode == "scifacts":
            return
        for pred, item in enumerate(self.prediction.items):
            if part_shape(self.prediction.parts[item.part]) == "dict":
                continue
            pid = self.prediction.ids[pred]
            judged = pred in self.matched
            chosen = self.matched.get(pred)
            for gt, gt_item in enumerate(self.row.items):
                if gt_item.part != item.part:
                    continue
                gid = self.row.ids[gt]
                if not judged:
                    self.out.append(
                        Judgment(
                            run=self.run,
                            report=self.report,
                            kind="cf1_match",
                            claim=pid,
                            criterion=gid,
                            key=gid,
                            value=None,
                            error="no judge record",
                        )
                    )
                    continue
                self.out.append(
                    Judgment(
                        run=self.run,
                        report=self.report,
                        kind="cf1_match",
                        claim=pid,
                        criterion=gid,
                        key=gid,
                        value=int(chosen == gt),
                        explanation=self.explained.get(pred, ""),
                    )
                )


# -- helpers -----------------------------------------------------------------------------------


def _ident(value: object, where: Where, fld: str) -> str:
    if isinstance(value, bool) or value is None:
        raise _err(where, "must be an integer or a string", fld)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    problem = id_problem(text) or ("contains ':'" if ":" in text else None)
    if problem:
        raise _err(where, f"{text[:60]!r} is not a usable id ({problem})", fld)
    return text


def _load_json(path: Path) -> Any:
    return read_json(path)


def _decode(value: object, canary: str | None, where: Where, fld: str) -> Any:
    """A released JSON field: a decoded value, plain JSON text, or encrypted JSON text."""
    if not isinstance(value, str):
        if value is None:
            raise _err(where, "missing", fld)
        return value
    try:
        return loads(value, where[0], where[1], fld)
    except NotJSON:
        pass
    if canary is None:
        raise _err(where, "neither JSON nor decryptable (the row has no canary)", fld)
    try:
        plain = decrypt(value, canary)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _err(where, "does not decrypt to JSON with the row's canary", fld) from exc
    try:
        return loads(plain, where[0], where[1], fld)
    except NotJSON as exc:
        raise _err(where, "does not decrypt to JSON with the row's canary", fld) from exc


def _check_parts(
    parts: list[Any], mode: Mode, where: Where, fld: str, expected: list[Any] | None = None
) -> None:
    """The reference script's type checks (``verify_types``), with the place named."""
    for p, part in enumerate(parts):
        place = f"{fld}.{p}"
        try:
            shape = part_shape(part)
        except ValueError as exc:
            raise _err(where, str(exc), place) from exc
        want = part_shape(expected[p]) if expected is not None else None
        if want is not None and (want == "dict") != (shape == "dict"):
            kind = "dictionary" if want == "dict" else "list"
            raise _err(where, f"part {p + 1} must be a {kind}, like the ground truth's", place)
        problem = _WRONG_FOR_MODE.get((mode, shape)) or _WRONG_FOR_EXPECTED.get((want, shape))
        if problem:
            raise _err(where, problem, place)


_WRONG_FOR_MODE: dict[tuple[str, str], str] = {
    ("strings", "dict"): "this category's answers are lists",
    ("scifacts", "dict"): "SciFacts's answers are lists",
    ("dicts", "strings"): "this category's answers are dictionaries, not strings",
    ("scifacts", "strings"): "this category's answers are dictionaries, not strings",
}
"""(scoring mode, part shape) pairs the category's grader cannot read."""
_WRONG_FOR_EXPECTED: dict[tuple[str | None, str], str] = {
    ("strings", "list"): "this category's answers are lists of strings",
    ("list", "strings"): "this category's answers are lists of dictionaries",
}
"""(ground truth's shape, prediction's shape) pairs of list parts that do not match."""


def _text(row: dict[str, Any], name: str, where: Where, prefix: str) -> str:
    value = row.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _err(where, "missing or not a string", prefix + name)
    return value


def _misc(
    raw: object, canary: str | None, where: Where, prefix: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A row's ``misc`` object (absent: empty) and its ``eval_info`` key lists."""
    misc = _decode(raw, canary, where, prefix + "misc") if raw not in (None, "") else {}
    if not isinstance(misc, dict):
        raise _err(where, "must be a JSON object", prefix + "misc")
    eval_info = misc.get("eval_info", {})
    if not isinstance(eval_info, dict):
        raise _err(where, "must be a JSON object", prefix + "misc.eval_info")
    for name in ("primary_keys", "main_claims", "ignore_keys"):
        value = eval_info.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _err(where, "must be a list of strings", f"{prefix}misc.eval_info.{name}")
    return misc, eval_info


def _criterion(item: Item, gid: str, main: set[str]) -> Criterion:
    """A ground-truth claim as a criterion, saying where it sits and which keys are main."""
    mains = [k for k in item.value if k in main] if isinstance(item.value, dict) else []
    where = f"answer part {item.part + 1}" + (
        f", item {item.index + 1}" if item.index is not None else " (one dictionary)"
    )
    explanation = f"LiveDRBench ground-truth claim, {where}."
    if mains:
        explanation += f" Main claim: {', '.join(mains)}."
    return Criterion(
        id=gid,
        framework=FRAMEWORK_NAME,
        dimension=_dimension(item),
        text=render(item.value) or "(empty)",
        explanation=explanation,
        metadata={"part": item.part, "index": item.index, "claim": item.value},
    )


def _dimension(item: Item) -> str:
    if item.index is None:
        return "identification"
    return "item" if isinstance(item.value, str) else "claim"


def _same_keys(value: object, other: dict[str, Any], keys: list[str]) -> bool:
    """The code's ``find_and_remove_dict`` test: equal values on every primary key."""
    return isinstance(value, dict) and all(value.get(k) == other.get(k) for k in keys)


def _show(value: object) -> str:
    if value is None:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False)


def _render_prediction(parts: list[Any]) -> tuple[str, list[tuple[int, int]]]:
    """The prediction as JSON text, one claim a line, and each claim's character span."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0

    def emit(text: str, claim: bool = False) -> None:
        nonlocal length
        if claim:
            start = length + len(text) - len(text.lstrip())
            spans.append((start, length + len(text.rstrip(",\n"))))
        out.append(text)
        length += len(text)

    def compact(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    if not parts:
        return "[]\n", []
    emit("[\n")
    for p, part in enumerate(parts):
        comma = "," if p < len(parts) - 1 else ""
        if isinstance(part, dict):
            emit(f"  {compact(part)}{comma}\n", claim=True)
        elif not part:
            emit(f"  []{comma}\n")
        else:
            emit("  [\n")
            for i, value in enumerate(part):
                emit(f"    {compact(value)}{',' if i < len(part) - 1 else ''}\n", claim=True)
            emit(f"  ]{comma}\n")
    emit("]\n")
    return "".join(out), spans


@dataclass(slots=True)
class _Notes:
    """Stands in for the reader where records come from a judge run, not from files."""

    notes: list[str] = field(default_factory=list)

    def note(self, where: Where, message: str) -> None:
        self.notes.append(message)


def judgments_from_records(
    task_metadata: dict[str, Any],
    report_metadata: dict[str, Any],
    run: str,
    report: str,
    records: list[dict[str, Any]],
) -> tuple[list[Judgment], list[str]]:
    """The verdicts a task's evaluation records give, exactly as an import of them would
    (Gavel's own judge writes records of the reference code's shape, then reads them here);
    and the notes the reading made (a judge match not in the ground truth, a repeat)."""
    where: Where = (f"judge run {run}", None)
    row = _row_of(task_metadata.get(META_KEY) or {}, where)
    pred_parts = list((report_metadata.get(META_KEY) or {}).get("preds") or [])
    pred_items = flatten(pred_parts)
    prediction = _Prediction(pred_parts, pred_items, [item_id("p", it) for it in pred_items])
    notes = _Notes()
    judge = _Judge(notes, row, prediction, run, report, where)  # type: ignore[arg-type]
    return judge.judgments(records), notes.notes


def _row_of(info: dict[str, Any], where: Where) -> _Row:
    """A dataset row as the task's stored metadata keeps it (ids as stored, else as imported)."""
    parts = list(info.get("ground_truths") or [])
    category = str(info.get("category", ""))
    mode = scoring_mode(category, info.get("mode"))
    items = flatten(parts)
    given = info.get("gt_ids")
    ids = (
        [str(i) for i in given]
        if isinstance(given, list) and len(given) == len(items)
        else [item_id("g", it) for it in items]
    )
    eval_info = info.get("eval_info") if isinstance(info.get("eval_info"), dict) else {}
    return _Row(
        str(info.get("key", "")),
        category,
        mode,
        "",
        parts,
        dict(eval_info or {}),
        {},
        items,
        ids,
        where,
    )


def read_livedrbench(path: Path, suite_id: str | None = None) -> Bundle:
    """Parse a LiveDRBench run folder (see the module doc); InputError names file/line/field."""
    return _Reader(Path(path), suite_id).read()


read = read_livedrbench
"""The format registry's entry point (``gavel import PATH --format livedrbench``)."""
