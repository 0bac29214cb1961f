"""DR3-Eval runs (``gavel import PATH --format dr3``): tasks, sandbox, gold artefacts, verdicts.

The released benchmark spreads a run over per-task folders (``long_context_sampled_*.json``,
``useful_search.json``, ``gold_insights_from_*.json``, ``checklist.json``) and per-case
evaluator outputs (``eval_<metric>.json``). This reader takes the same content gathered into one
folder of JSONL, keeping the released field names (``docs/frameworks/dr3.md`` has the layout)::

    run.json         optional manifest: id, name, judge_model, prompt_version, created_at,
                     context_size, description
    tasks.jsonl      one task a line: query, user files, the sandbox corpus with each page's
                     class, gold insights (user files / sandbox), checklist
    results.jsonl    one evaluated case (task × system) a line: the final report and what each
                     evaluator returned (information_recall, citation_coverage,
                     factual_accuracy, format_compliance, depth_quality; each optional)

What becomes what:

- A task's gold insights, required documents (every user file and every supportive page:
  D_req), checklist items and the depth rubric become criteria (``.scoring``
  dimensions). Sandbox pages and user files become sources whose ``metadata`` keeps the class
  (supportive / distractor / noise / user_file) so the reviewer sees it beside every citation.
- Each factual-accuracy claim becomes a claim; each distinct citation string of a report becomes
  a reference pointing at the source it resolves to, and each (claim, citation) verdict a
  ``dr3_support`` judgment on that pair.
- Citation coverage is the evaluator's ``match_details`` when the case has them; a required
  document they do not mention (or every one, when the section is absent) is decided by
  :func:`match_required`, this module's implementation of the evaluator's title-matching rule.
  Either way the match type and matched citation are kept.

Readings where the files leave a choice (documented in ``docs/frameworks/dr3.md``): an IR score
outside {0, 0.5, 1} is snapped as the evaluator does (≥ 0.75 → 1, ≥ 0.25 → 0.5); an insight,
checklist item or citation without a result becomes a verdict with no value and an ``error``
(the scoring options say how such items count); a depth score outside 1–10 is clipped as the
evaluator does. Everything else malformed is an :class:`InputError` naming file, line, field.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from reviewer.errors import InputError
from reviewer.formats.jsonl import M, Where, field_path, read_json, read_jsonl
from reviewer.frameworks.dr3_eval.release import Release, is_release
from reviewer.frameworks.dr3_eval.scoring import (
    CLASS_META,
    DIM_CHECK,
    DIM_DEPTH,
    DIM_FILE,
    DIM_PAGE,
    DIM_SC,
    DIM_UF,
    ORIGIN_META,
)
from reviewer.models import (
    Bundle,
    Claim,
    Criterion,
    JudgeRun,
    Judgment,
    Reference,
    Report,
    Source,
    Suite,
    System,
    Task,
    id_problem,
)

T = TypeVar("T")

JudgeFn = Callable[..., None]
"""Records one judgment of the report being read (keyword arguments as Judgment's)."""

JUDGE_RUN = "judge"
RULE_RUN = "cc-rule"
NO_FINAL_ANSWER = "No final answer"
MAX_UNMATCHED = 50
TITLE_FROM_BODY = 100
"""A page without a title is named by the first characters of its body (spec §1.3)."""

DEPTH_RUBRIC = (
    "Rubric J.0.4, harsh anchors: 1–2 superficial; 3–4 very basic; 5 basic or incomplete; "
    "6 covers the main points but shallow; 7 adequate with some depth; 8 good depth (rare); "
    "9 very rare; 10 almost never. Deduct 0.5–1 for minor issues, 2–3 for major ones."
)

MODALITIES = {
    "image": (".jpg", ".jpeg", ".png", ".gif", ".webp"),
    "video": (".mp4", ".webm", ".mov", ".avi"),
    "audio": (".mp3", ".wav", ".m4a", ".aac", ".ogg", ".flac", ".wma"),
    "table": (".csv", ".xlsx", ".xls", ".tsv"),
    "document": (".pdf", ".md", ".txt", ".doc", ".docx", ".ppt", ".pptx", ".html", ".htm"),
}


# -- the layout's records (released field names; unknown fields are errors) ------------------


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class UserFile(_Rec):
    filename: str = Field(min_length=1)
    modality: str = ""
    description: str = ""
    text: str = ""


class SandboxDoc(_Rec):
    title: str = ""
    url: str = ""
    page_body: str = ""
    doc_class: Literal["supportive", "distractor", "noise", "unlabelled"] = Field(
        "unlabelled", alias="class"
    )
    """The released sandbox pages carry no class: a page without one is ``unlabelled`` (not a
    required document; neither a known distractor nor noise)."""
    context_sizes: list[str] = Field(default_factory=list)
    keyword: str = ""


class GoldInsight(_Rec):
    insight: str = Field(min_length=1)
    source: str = ""


class ChecklistItem(_Rec):
    id: int | str | None = None
    """Released checklist rows have none: the evaluator numbers them 1, 2, … in order."""
    requirement: str = Field(min_length=1)
    category: str = ""


class TaskRecord(_Rec):
    task: str | int = Field(validation_alias=AliasChoices("task", "number", "id"))
    query: str = Field(min_length=1)
    language: str = "en"
    domain: str = ""
    subdomain: str = ""
    context_size: str = ""
    user_files: list[UserFile] = Field(default_factory=list)
    sandbox: list[SandboxDoc] = Field(default_factory=list)
    gold_insights_from_source: list[GoldInsight] = Field(default_factory=list)
    gold_insights_from_long_context: list[GoldInsight] = Field(default_factory=list)
    checklist: list[ChecklistItem] = Field(default_factory=list)


class CoveredInsight(_Rec):
    id: int = Field(ge=1)
    score: float | None = None
    covered: bool | None = None
    core_meaning: str | list[str] = ""
    core_points: list[str] = Field(default_factory=list)
    found_in_report: str = ""
    missing_points: list[str] = Field(default_factory=list)
    explanation: str = ""
    reasoning: str = ""
    insight_text: str = ""
    error: str | None = None


class InformationRecall(_Rec):
    long_context: list[CoveredInsight] | None = None
    source_documents: list[CoveredInsight] | None = None


class MatchDetail(_Rec):
    match_type: str
    matched_citation: str = ""


class CitationCoverage(_Rec):
    match_details: dict[str, MatchDetail] = Field(default_factory=dict)
    extracted_citations: list[str] | None = None


class CitationResult(_Rec):
    citation: str = Field(min_length=1)
    supported: bool | None = None
    explanation: str = ""
    source_found: bool | None = None
    source: str | None = None
    error: str | None = None


class FaClaim(_Rec):
    id: int | str
    claim_text: str = Field(min_length=1)
    citations: list[str] = Field(default_factory=list)
    source_type: str = ""
    citation_results: list[CitationResult] = Field(default_factory=list)


class FactualAccuracy(_Rec):
    claims: list[FaClaim] = Field(default_factory=list)


class ChecklistResult(_Rec):
    id: int | str
    satisfied: bool | None = None
    status: str = "ok"
    explanation: str = ""
    error: str | None = None


class FormatCompliance(_Rec):
    results: list[ChecklistResult] = Field(default_factory=list)


class DepthQuality(_Rec):
    score: float | None = None
    justification: str = ""
    raw: str = ""
    error: str | None = None


class ResultRecord(_Rec):
    task: str | int = Field(validation_alias=AliasChoices("task", "number", "id"))
    system: str = Field(min_length=1, pattern=r"^[^\s/][^/]*$")
    system_name: str = ""
    context_size: str = ""
    final_report: str
    information_recall: InformationRecall | None = None
    citation_coverage: CitationCoverage | None = None
    factual_accuracy: FactualAccuracy | None = None
    format_compliance: FormatCompliance | None = None
    depth_quality: DepthQuality | None = None


class Manifest(_Rec):
    id: str = ""
    name: str = ""
    judge_model: str = ""
    prompt_version: str = ""
    created_at: str = ""
    context_size: str = ""
    description: str = ""
    params: dict[str, Any] = Field(default_factory=dict)


# -- title matching: the evaluator's citation-coverage rule (spec §2.2) ----------------------

_QUOTES = str.maketrans(
    {
        "\u201c": '"',
        "\u201d": '"',
        "\u2018": "'",
        "\u2019": "'",
        "\u300c": '"',
        "\u300d": '"',
        "\u300e": '"',
        "\u300f": '"',
    }
)
_PUNCT = re.compile(
    r"[,\uff0c.\u3002!\uff01?\uff1f;\uff1b:\uff1a\-_\[\]\u3010\u3011()\uff08\uff09"
    r"{}\u300c\u300d\u300e\u300f\u201c\u201d'\"]+"
)
_ELLIPSIS = re.compile(r"\.{2,}|\u2026+|\u3002{2,}")
_STOPWORDS = frozenset(
    {
        "的",
        "了",
        "是",
        "在",
        "和",
        "与",
        "这",
        "那",
        "有",
        "为",
        "以",
        "及",
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "for",
        "on",
        "with",
        "and",
        "or",
        "is",
        "are",
        "video",
        "audio",
        "image",
        "doc",
        "document",
        "file",
        "mp4",
        "mp3",
        "pdf",
        "jpg",
        "png",
    }
)
_BRANDS = frozenset(
    {
        "bbc",
        "ted",
        "cnn",
        "nbc",
        "abc",
        "cbs",
        "fox",
        "npr",
        "pbs",
        "youtube",
        "vimeo",
        "bilibili",
        "netflix",
        "hbo",
        "disney",
        "national geographic",
        "discovery",
        "history channel",
        "mit",
        "harvard",
        "stanford",
        "oxford",
        "cambridge",
        "google",
        "microsoft",
        "apple",
        "amazon",
        "facebook",
        "meta",
        "openai",
        "anthropic",
        "deepmind",
    }
)
_SKIP_PREFIXES = ("注", "图", "表", "附录", "TODO", "NOTE", "WARNING", "TIP", "IMPORTANT")
_CHUNK_SUFFIX = re.compile(r",\s*chunk\s*\d+(\s*-\s*\d+)?\s*$", re.I)
_QUOTED = r"(?:\"([^\"]+)\"|'([^']+)'|\u201c([^\u201d]+)\u201d|\u2018([^\u2019]+)\u2019)"
"""A quoted title; quotes pair up, so the apostrophe in "Don't" does not end the title (the
evaluator's pattern stops there)."""


def _unquote(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g is not None)


def normalize_title(text: str) -> str:
    """Full-width to half-width, curly quotes to straight, whitespace collapsed, lower case."""
    chars = []
    for ch in text:
        code = ord(ch)
        if 0xFF01 <= code <= 0xFF5E:
            chars.append(chr(code - 0xFEE0))
        elif code == 0x3000:
            chars.append(" ")
        else:
            chars.append(ch)
    return " ".join("".join(chars).translate(_QUOTES).split()).lower()


def _clean(text: str) -> str:
    return " ".join(_PUNCT.sub(" ", _ELLIPSIS.sub("", text)).split())


def _tokens(text: str) -> list[str]:
    out = [w for w in re.findall(r"[a-z]+", text) if len(w) > 1 and w not in _STOPWORDS]
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        if len(run) >= 2:
            out.append(run)
        out.extend(c for c in run if c not in _STOPWORDS)
    return out


def _within_edit_ratio(a: str, b: str, ratio: float) -> bool:
    """Levenshtein similarity 1 - d / max(len) ≥ ratio, with a banded early exit."""
    if len(a) > len(b):
        a, b = b, a
    limit = int((1.0 - ratio) * len(b))
    if len(b) - len(a) > limit:
        return False
    previous = list(range(len(a) + 1))
    for i, cb in enumerate(b, 1):
        current = [i]
        for j, ca in enumerate(a, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit


def fuzzy_title_match(needle: str, haystack: str, threshold: float = 0.6) -> bool:
    """The evaluator's fuzzy title test: substring, punctuation-free substring, token overlap
    of ≥ ``threshold`` of the needle's tokens, a shared brand name, edit ratio ≥ 0.75."""
    n, h = normalize_title(needle), normalize_title(haystack)
    if not n or not h:
        return False
    if _either_contains(n, h):
        return True
    nc, hc = _clean(n), _clean(h)
    return (
        _either_contains(nc, hc)
        or _tokens_overlap(n, h, threshold)
        or _shared_brand(nc, hc)
        or (len(nc) >= 5 and len(hc) >= 5 and _within_edit_ratio(nc, hc, 0.75))
    )


def _either_contains(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a in b or b in a)


def _tokens_overlap(n: str, h: str, threshold: float) -> bool:
    """At least ``threshold`` of the needle's tokens (two or more) appear in the haystack."""
    needle_tokens = _tokens(n)
    if len(needle_tokens) < 2:
        return False
    hay_tokens = _tokens(h)
    found = sum(1 for t in needle_tokens if t in h or any(t in ht for ht in hay_tokens))
    return found / len(needle_tokens) >= threshold


def _shared_brand(nc: str, hc: str) -> bool:
    """Brand names as whole words (the evaluator tests substrings, so 'ted' matches 'united')."""
    n_words, h_words = f" {nc} ", f" {hc} "
    return any(f" {b} " in n_words and f" {b} " in h_words for b in _BRANDS)


def _group1(match: re.Match[str]) -> str:
    return match.group(1)


_CITATION_FORMS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"\[long_context:\s*" + _QUOTED), _unquote),
    (re.compile(r"\[([^\[\]]+\.(?:md|txt|pdf|docx?)),\s*第[\d\-]+页\]"), _group1),
    (re.compile(r"\[source:\s*" + _QUOTED), _unquote),
    (re.compile(r"\[Image:\s*([^\[\]]+)\]"), _group1),
)
"""The evaluator's citation patterns, in its order, each with how the cited name is read."""
_BRACKETED = re.compile(r"\[([^\[\]]{4,})\]")


def extract_citations(report: str) -> list[str]:
    """Citation strings of a report, in the evaluator's order of patterns, without repeats."""
    found: dict[str, None] = {}
    cited = [name(m) for pattern, name in _CITATION_FORMS for m in pattern.finditer(report)]
    bracketed = (m.group(1).strip() for m in _BRACKETED.finditer(report))
    cited += [body for body in bracketed if _plain_citation(body)]
    for text in cited:
        text = _CHUNK_SUFFIX.sub("", text).strip()
        if text:
            found.setdefault(text, None)
    return list(found)


def _plain_citation(body: str) -> bool:
    """A bracketed text that is a citation of its own: not a typed one, a number, a
    parenthesis, or a note, figure or table label."""
    return not (
        body.startswith(("long_context:", "source:", "Image:"))
        or re.fullmatch(r"[\d\s]+", body)
        or "(" in body
        or ")" in body
        or body.startswith(_SKIP_PREFIXES)
    )


def _core_identifiers(title: str) -> list[str]:
    ids = re.findall(r"[A-Z][A-Z0-9\-]+[A-Z0-9]", title)
    ids += re.findall(r"\d+[A-Z\-]+[A-Z]+|[A-Z]+\-\d+[A-Z]+", title)
    ids += re.findall(r"[\uff08(]([^\uff09)]+)[\uff09)]", title)
    return [i for i in dict.fromkeys(ids) if len(i) >= 3]


def _match_one(title: str, citation: str) -> str | None:
    required = normalize_title(title)
    cited = normalize_title(citation)
    main = normalize_title(title.split("-")[0]) if "-" in title else required
    if cited in (required, main):
        return "exact"
    if required in cited or cited in required:
        return "contains"
    if _either_contains(main, cited):
        return "contains_main"
    if any(i.lower() in cited for i in _core_identifiers(title)):
        return "core_identifier"
    if fuzzy_title_match(title, citation):
        return "fuzzy"
    return None


@dataclass(frozen=True, slots=True)
class Match:
    match_type: str
    """exact, contains, contains_main, core_identifier, fuzzy, text_contains,
    core_id_in_text, not_found or no_final_answer."""
    matched_citation: str

    @property
    def cited(self) -> bool:
        return self.match_type not in ("not_found", "no_final_answer")


def match_required(title: str, report: str, citations: Sequence[str] | None = None) -> Match:
    """Is a required document (title or filename) cited? The first citation that matches, in
    the rule's order; then the title or a core identifier anywhere in the report text."""
    if NO_FINAL_ANSWER in report:
        return Match("no_final_answer", "")
    for citation in extract_citations(report) if citations is None else citations:
        kind = _match_one(title, citation)
        if kind is not None:
            return Match(kind, citation)
    norm = normalize_title(title)
    if len(norm) >= 4 and norm in normalize_title(report):
        return Match("text_contains", title)
    lowered = report.lower()
    for ident in _core_identifiers(title):
        if len(ident) >= 4 and ident.lower() in lowered:
            return Match("core_id_in_text", ident)
    return Match("not_found", "")


# -- citation -> source (the FA evaluator's resolution, spec §3) -----------------------------


@dataclass(slots=True)
class _Src:
    url: str
    title: str
    origin: Literal["sandbox", "user_file"]
    doc_class: str
    sha256: str | None


@dataclass(slots=True)
class _TaskCtx:
    record: TaskRecord
    ext_id: str
    where: Where
    pages: list[_Src]
    files: list[_Src]
    required: list[tuple[str, str, str]] = field(default_factory=list)
    """(criterion id, dimension, title) of every required document."""
    checklist: dict[str, str] = field(default_factory=dict)
    """checklist item id (as text) -> criterion id."""


_TYPED = re.compile(
    r"^\s*(long_context|source|doc|文档|image|图片|video|视频|audio|音频)\s*:\s*(.+)$", re.I | re.S
)

_FILE_KINDS = frozenset({"image", "图片", "video", "视频", "audio", "音频", "doc", "文档"})
"""Citation kinds that name a user file."""
_DOC_KINDS = frozenset({"doc", "文档", ""})
"""Kinds whose citation, when no user file answers it, may still name a sandbox page."""


def resolve_citation(
    raw: str, pages: Sequence[_Src], files: Sequence[_Src]
) -> tuple[_Src | None, str]:
    """The source a citation names, and how it was found (or None, 'not_found').

    Sandbox titles are searched over the whole sampled corpus, distractors and noise included,
    as the evaluator does: a claim copied from a distractor resolves to that distractor.
    """
    body = raw.strip()
    if body[:1] in "[(" and body[-1:] in "])":
        body = body[1:-1].strip()
    rag = re.fullmatch(r"RAG-(\d+)", body)
    if rag:
        index = int(rag.group(1)) - 1
        return (pages[index], "rag_index") if 0 <= index < len(pages) else (None, "not_found")
    kind, name = _cited_name(body)
    return _user_file_for(kind, name, files) or _page_by_title(name, pages)


def _cited_name(body: str) -> tuple[str, str]:
    """(kind, name) of a citation: ``image: "x.png", page 3`` gives ('image', 'x.png')."""
    typed = _TYPED.match(body)
    kind = typed.group(1).lower() if typed else ""
    name = typed.group(2) if typed else body
    quoted = re.match(_QUOTED, name.strip())
    if quoted:
        name = _unquote(quoted)
    name = _CHUNK_SUFFIX.sub("", name)
    return kind, re.sub(r",\s*(page|第|section|slide).*$", "", name, flags=re.I).strip()


def _user_file_for(kind: str, name: str, files: Sequence[_Src]) -> tuple[_Src | None, str] | None:
    """The user file a file citation names; None when the citation is no file's or may still
    name a sandbox page."""
    if not (kind in _FILE_KINDS or (not kind and re.search(r"\.[A-Za-z0-9]{2,5}$", name))):
        return None
    src = next((s for s in files if fuzzy_title_match(name, s.title)), None)
    if src is not None:
        return src, "user_file"
    return None if kind in _DOC_KINDS else (None, "not_found")


def _page_by_title(name: str, pages: Sequence[_Src]) -> tuple[_Src | None, str]:
    """A sandbox page by its exact (normalised) title, else the first fuzzy match."""
    wanted = normalize_title(name)
    for src in pages:
        if normalize_title(src.title) == wanted:
            return src, "exact_title"
    for src in pages:
        if fuzzy_title_match(name, src.title):
            return src, "fuzzy_title"
    return None, "not_found"


def citation_notes(citations: Sequence[str], ctx: _TaskCtx) -> dict[str, Any]:
    """What a reviewer checking CC wants beside the verdicts: the report's citations that match
    no required document, and those naming a distractor or noise page (they neither add to nor
    subtract from CC)."""
    unmatched = [
        c for c in citations if not any(_match_one(title, c) for _, _, title in ctx.required)
    ]
    off_path: dict[str, str] = {}
    for citation in citations:
        src, _ = resolve_citation(citation, ctx.pages, ctx.files)
        if src is not None and src.doc_class in ("distractor", "noise"):
            off_path[citation] = src.doc_class
    notes: dict[str, Any] = {}
    if unmatched:
        notes["dr3_unmatched_citations"] = unmatched[:MAX_UNMATCHED]
    if off_path:
        notes["dr3_distractor_or_noise_citations"] = dict(list(off_path.items())[:MAX_UNMATCHED])
    return notes


# -- the reader ---------------------------------------------------------------------------


def _model(model: type[M], data: object, where: Where, prefix: str = "") -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        loc, message = field_path(exc)
        name = ".".join(p for p in (prefix, loc) if p)
        raise InputError(where[0], message, line=where[1] or None, field=name or None) from exc


def _err(where: Where, message: str, fld: str) -> InputError:
    return InputError(where[0], message, line=where[1] or None, field=fld)


def _ext_id(value: str | int, where: Where, fld: str) -> str:
    text = str(value).strip()
    problem = id_problem(text)
    if problem:
        raise _err(where, f"{text[:60]!r} is not a usable id ({problem})", fld)
    return text


def _modality(filename: str) -> str:
    lower = filename.lower()
    for name, extensions in MODALITIES.items():
        if lower.endswith(extensions):
            return name
    return "other"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _snap(score: float) -> float:
    """The evaluator's snapping of an off-scale insight score."""
    if score in (0.0, 0.5, 1.0):
        return score
    return 1.0 if score >= 0.75 else 0.5 if score >= 0.25 else 0.0


def _depth_from_xml(raw: str) -> tuple[float | None, str]:
    score = re.search(r"<score>\s*([-+]?\d+(?:\.\d+)?)\s*</score>", raw)
    why = re.search(r"<justification>(.*?)</justification>", raw, re.S)
    return (float(score.group(1)) if score else None, why.group(1).strip() if why else "")


# -- what a task becomes: its criteria --------------------------------------------------------


def _insight_criteria(record: TaskRecord, pages: Sequence[_Src]) -> list[Criterion]:
    """The gold insights, I_UF (from the user files) before I_SC (from the sandbox)."""
    criteria: list[Criterion] = []
    for origin, gold, dim, label in (
        ("uf", record.gold_insights_from_source, DIM_UF, "user file"),
        ("sc", record.gold_insights_from_long_context, DIM_SC, "sandbox page"),
    ):
        for n, insight in enumerate(gold, 1):
            source = insight.source.strip()
            criteria.append(
                Criterion(
                    id=f"{origin}-{n}",
                    framework="dr3",
                    dimension=dim,
                    text=insight.insight,
                    explanation=_insight_origin(origin, n, label, source, pages),
                    scale="dr3_coverage",
                    metadata={"origin": origin.upper(), "source": source},
                )
            )
    return criteria


def _insight_origin(origin: str, n: int, label: str, source: str, pages: Sequence[_Src]) -> str:
    """Where a gold insight comes from, with the class of the sandbox page it names."""
    explanation = f"Gold insight I_{origin.upper()} #{n}"
    if not source:
        return explanation
    explanation += f", from {label}: {source}"
    klass = next((p.doc_class for p in pages if p.title == source), None)
    return explanation + f" ({klass})" if klass else explanation


def _required_files(ctx: _TaskCtx) -> list[Criterion]:
    """One criterion per user file: every user file is part of D_req."""
    criteria: list[Criterion] = []
    for n, src in enumerate(ctx.files, 1):
        cid = f"file-{n}"
        ctx.required.append((cid, DIM_FILE, src.title))
        modality = _modality(src.title)
        criteria.append(
            Criterion(
                id=cid,
                framework="dr3",
                dimension=DIM_FILE,
                text=src.title,
                explanation=f"Required: user file ({modality})",
                scale="dr3_cited",
                metadata={"url": src.url, "class": "user_file", "modality": modality},
            )
        )
    return criteria


def _checklist_criteria(ctx: _TaskCtx) -> list[Criterion]:
    """One criterion per checklist item, numbered 1, 2, … where the release gives no id."""
    criteria: list[Criterion] = []
    for i, item in enumerate(ctx.record.checklist):
        key = str(item.id if item.id is not None else i + 1)
        if key in ctx.checklist:
            raise _err(ctx.where, f"checklist id {item.id!r} repeats", f"checklist.{i}.id")
        cid = _ext_id(f"if-{key}", ctx.where, f"checklist.{i}.id")
        ctx.checklist[key] = cid
        category = item.category
        criteria.append(
            Criterion(
                id=cid,
                framework="dr3",
                dimension=DIM_CHECK,
                text=item.requirement,
                explanation=f"category: {category}" if category else "",
                scale="binary",
                metadata={"category": category} if category else {},
            )
        )
    return criteria


def _depth_criterion() -> Criterion:
    return Criterion(
        id="dq",
        framework="dr3",
        dimension=DIM_DEPTH,
        text="Depth & Quality of Analysis",
        explanation=DEPTH_RUBRIC,
        scale="dr3_depth10",
    )


def _task_metadata(
    record: TaskRecord, pages: Sequence[_Src], files: Sequence[_Src]
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        key: value for key in ("subdomain", "context_size") if (value := getattr(record, key))
    }
    metadata["user_files"] = [f.title for f in files]
    classes = [p.doc_class for p in pages]
    metadata["sandbox_counts"] = {
        c: classes.count(c)
        for c in ("supportive", "distractor", "noise", "unlabelled")
        if c != "unlabelled" or c in classes
    }
    return metadata


_Ref = tuple[int, _Src | None, str]
"""A report's reference: (index, the document it resolves to, how it was resolved)."""


# -- what an evaluated case becomes: claims, references, verdicts -----------------------------


def _citation_results(fa: FaClaim, where: Where, prefix: str) -> dict[str, CitationResult]:
    """The run's verdict per citation of one claim: each one of the claim's, at most once."""
    results: dict[str, CitationResult] = {}
    for j, given in enumerate(fa.citation_results):
        if given.citation not in fa.citations:
            raise _err(
                where,
                f"{given.citation!r} is not one of the claim's citations",
                f"{prefix}.citation_results.{j}.citation",
            )
        if given.citation in results:
            raise _err(
                where,
                f"a second result for citation {given.citation!r}",
                f"{prefix}.citation_results.{j}.citation",
            )
        results[given.citation] = given
    return results


def _cited_source(
    raw: str,
    explicit: CitationResult | None,
    fa: FaClaim,
    ctx: _TaskCtx,
    where: Where,
    prefix: str,
) -> tuple[_Src | None, str]:
    """The document a citation names: the one the run gives, else the evaluator's resolution."""
    if explicit is None or explicit.source is None:
        return resolve_citation(raw, ctx.pages, ctx.files)
    src = _explicit_source(explicit.source, ctx)
    if src is None:
        j = fa.citation_results.index(explicit)
        raise _err(
            where,
            f"source {explicit.source!r} is neither a sandbox "
            "url or title nor a user file of the task",
            f"{prefix}.citation_results.{j}.source",
        )
    return src, "given by the run"


def _explicit_source(name: str, ctx: _TaskCtx) -> _Src | None:
    for src in ctx.pages:
        if name == src.url:
            return src
    for src in (*ctx.pages, *ctx.files):
        if name == src.title:
            return src
    return None


def _resolution(src: _Src | None, how: str) -> str:
    if src is None:
        return "resolved to no source: Source not found"
    return f"resolved to {src.title!r} ({src.doc_class}) by {how}"


def _support_verdict(
    claim_id: str,
    index: int,
    head: str,
    src: _Src | None,
    res: CitationResult | None,
    judge: JudgeFn,
) -> None:
    """One (claim, citation) verdict; a citation the evaluator left unverified has no value."""
    if res is None or res.supported is None:
        _unverified_support(claim_id, index, head, res, judge)
        return
    text = head + ("\nJudge: " + res.explanation if res.explanation else "")
    if res.source_found is False:
        text += "\n(the evaluator did not find the source)"
    judge(
        "dr3_support",
        "supported" if res.supported else "unsupported",
        claim=claim_id,
        ref=index,
        explanation=text,
        raw=res.model_dump(exclude_defaults=True),
        sha=src.sha256 if src is not None and res.source_found is not False else None,
    )


def _unverified_support(
    claim_id: str, index: int, head: str, res: CitationResult | None, judge: JudgeFn
) -> None:
    why = (res.error or res.explanation) if res else ""
    judge(
        "dr3_support",
        None,
        claim=claim_id,
        ref=index,
        explanation=head,
        error=why or "not verified (no result for this citation)",
        raw=res.model_dump(exclude_defaults=True) if res else None,
    )


def _fa_claim(fa: FaClaim, claim_id: str, indices: list[int]) -> Claim:
    citations: dict[str, Any] = {"citations": fa.citations}
    return Claim(
        id=claim_id,
        fact=fa.claim_text,
        citations=indices,
        metadata={"source_type": fa.source_type, **citations} if fa.source_type else citations,
    )


def _reference_tables(
    refs: dict[str, _Ref],
) -> tuple[list[Reference], dict[str, str], dict[str, str]]:
    """The report's references, and each one's origin and class (report metadata)."""
    references: list[Reference] = []
    origin: dict[str, str] = {}
    klass: dict[str, str] = {}
    for raw, (index, src, _) in refs.items():
        references.append(Reference(index=index, title=raw, url=src.url if src else None))
        origin[str(index)] = src.origin if src is not None else _unresolved_origin(raw)
        klass[str(index)] = src.doc_class if src is not None else "unresolved"
    return references, origin, klass


def _unresolved_origin(raw: str) -> str:
    """A citation no document answers is a user file when it reads like a file name."""
    lowered = raw.lower()
    if (
        "long_context" in lowered
        or "rag-" in lowered
        or not re.search(r"\.[a-z0-9]{2,5}\b", lowered)
    ):
        return "sandbox"
    return "user_file"


def _insights_by_id(
    items: list[CoveredInsight], gold: int, name: str, where: Where
) -> dict[int, CoveredInsight]:
    """The evaluator's insights by id: each a gold insight of the task, at most once."""
    by_id: dict[int, CoveredInsight] = {}
    for i, given in enumerate(items):
        if given.id > gold:
            raise _err(
                where,
                f"insight id {given.id} but the task has {gold} {name} gold insights",
                f"information_recall.{name}.{i}.id",
            )
        if given.id in by_id:
            raise _err(where, f"insight id {given.id} repeats", f"information_recall.{name}.{i}.id")
        by_id[given.id] = given
    return by_id


def _insight_verdict(item: CoveredInsight | None, criterion: str, judge: JudgeFn) -> None:
    """One gold insight's coverage; an insight without a score has no value (NOT FOUND)."""
    if item is None or item.score is None:
        why = (item.error if item else None) or "no result from the judge (NOT FOUND)"
        judge(
            "dr3_insight",
            None,
            criterion=criterion,
            error=why,
            raw=item.model_dump(exclude_defaults=True) if item else None,
        )
        return
    value = _snap(item.score)
    judge(
        "dr3_insight",
        value,
        criterion=criterion,
        explanation=_insight_explanation(item, item.score, value),
        evidence=item.found_in_report,
        raw=item.model_dump(exclude_defaults=True),
    )


def _insight_explanation(item: CoveredInsight, score: float, value: float) -> str:
    core = item.core_points or (
        [item.core_meaning] if isinstance(item.core_meaning, str) else item.core_meaning
    )
    parts = []
    core = [c for c in core if c]
    if core:
        parts.append("Core points: " + "; ".join(core))
    if item.missing_points:
        parts.append("Missing: " + "; ".join(item.missing_points))
    reason = item.explanation or item.reasoning
    if reason:
        parts.append(reason)
    if value != score:
        parts.append(f"(judge gave {score:g}, snapped to {value:g} as the evaluator does)")
    return "\n".join(parts)


def _check_required_titles(given: Mapping[str, MatchDetail], ctx: _TaskCtx, where: Where) -> None:
    """The run's match details name required documents only."""
    titles = {title for _, _, title in ctx.required}
    for title in given:
        if title not in titles:
            raise _err(
                where,
                f"{title!r} is not a required document of task "
                f"{ctx.ext_id} (a supportive page title or a user file name)",
                f"citation_coverage.match_details.{title}",
            )


def _coverage_verdict(
    cid: str, title: str, match: Match, by: str, ctx: _TaskCtx, judge: JudgeFn
) -> None:
    """A required document cited or missed, with the rule that decided it."""
    rule = f"match rule: {match.match_type} (decided by {by})"
    raw: dict[str, str] = {
        "match_type": match.match_type,
        "matched_citation": match.matched_citation,
    }
    if match.cited and match.matched_citation:
        rule += f"\nmatched citation: {match.matched_citation}"
        rule += _named_document(match.matched_citation, title, ctx, raw)
    judge(
        "dr3_citation",
        "cited" if match.cited else "missed",
        criterion=cid,
        run=RULE_RUN,
        explanation=rule,
        evidence=match.matched_citation,
        raw=raw,
    )


def _named_document(citation: str, title: str, ctx: _TaskCtx, raw: dict[str, str]) -> str:
    """Which document the matched citation itself names, when it is another one: the
    clue to a false match (a distractor whose title shares the required one's prefix)."""
    if citation == title:
        return ""
    src, _ = resolve_citation(citation, ctx.pages, ctx.files)
    if src is None:
        return "\nthe matched citation names no document of the task on its own"
    raw["matched_document"] = src.url
    raw["matched_class"] = src.doc_class
    if src.title == title:
        return ""
    return (
        f"\nthe matched citation names another document: {src.title!r} ({src.doc_class}) {src.url}"
    )


def _checklist_by_id(
    section: FormatCompliance, ctx: _TaskCtx, where: Where
) -> dict[str, ChecklistResult]:
    """The evaluator's results by item id: each an item of the task's checklist, at most once."""
    by_id: dict[str, ChecklistResult] = {}
    for i, given in enumerate(section.results):
        key = str(given.id)
        if key not in ctx.checklist:
            raise _err(
                where,
                f"checklist id {given.id!r} is not in the task's checklist",
                f"format_compliance.results.{i}.id",
            )
        if key in by_id:
            raise _err(
                where, f"checklist id {given.id!r} repeats", f"format_compliance.results.{i}.id"
            )
        by_id[key] = given
    return by_id


def _checklist_verdict(item: ChecklistResult | None, cid: str, judge: JudgeFn) -> None:
    """One checklist item; an item the judge failed on has no value."""
    if item is None or item.satisfied is None or item.status == "error":
        why = (item.error if item else None) or "the judge returned no result"
        judge(
            "dr3_checklist",
            None,
            criterion=cid,
            error=why,
            raw=item.model_dump(exclude_defaults=True) if item else None,
        )
        return
    judge(
        "dr3_checklist",
        item.satisfied,
        criterion=cid,
        explanation=item.explanation,
        raw=item.model_dump(exclude_defaults=True),
    )


# -- the bundle: its runs, and where each entry was read ------------------------------------


def _place(bundle: Bundle, kind: str, target: list[T], entries: Iterable[tuple[T, Where]]) -> None:
    """Append to one of the bundle's lists, remembering where each entry was read."""
    for entry, where in entries:
        bundle.locations[(kind, len(target))] = where
        target.append(entry)


def _judge_runs(manifest: Manifest, rule_used: bool) -> list[JudgeRun]:
    """The LLM judge's run and the title-matching rule's run."""
    params = dict(manifest.params)
    if manifest.context_size:
        params["context_size"] = manifest.context_size
    rule_note = "; some or all decided by Gavel's implementation of the rule" if rule_used else ""
    return [
        JudgeRun(
            id=JUDGE_RUN,
            model=manifest.judge_model,
            prompt_version=manifest.prompt_version or "dr3-eval-appendix-J",
            params=params,
            created_at=manifest.created_at,
            description="LLM-judge verdicts: insight coverage, claim support, checklist, depth",
        ),
        JudgeRun(
            id=RULE_RUN,
            model="title-matching rule",
            prompt_version="dr3-citation-coverage",
            created_at=manifest.created_at,
            description="Citation coverage by title matching (no LLM)" + rule_note,
        ),
    ]


class _Reader:
    def __init__(self, root: Path, suite_id: str | None) -> None:
        self.root = root
        self.suite_id = suite_id
        self.notes: list[str] = []
        self.tasks: dict[str, _TaskCtx] = {}
        self.bundle_tasks: list[tuple[Task, Where]] = []
        self.sources: dict[str, tuple[Source, Where, set[str], dict[str, str]]] = {}
        self.systems: dict[str, tuple[System, Where]] = {}
        self.reports: list[tuple[Report, Where]] = []
        self.judgments: list[tuple[Judgment, Where]] = []
        self.pairs: set[tuple[str, str]] = set()
        self.rule_used = False

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def lines(self, path: Path) -> Iterator[tuple[Where, dict[str, Any]]]:
        for number, record in read_jsonl(path):
            yield (str(path), number), record

    # -- manifest and tasks ---------------------------------------------------------------

    def manifest(self) -> Manifest:
        path = self.root / "run.json"
        if not path.is_file():
            return Manifest()
        return _model(Manifest, read_json(path), (str(path), 0))

    def read_tasks(self) -> None:
        path = self.root / "tasks.jsonl"
        if not path.is_file():
            raise InputError(
                path,
                "missing: a DR3-Eval run needs tasks.jsonl (and results.jsonl)"
                ", or the released layout (query.jsonl, datasets/, results/)",
            )
        self.read_task_records(self.lines(path))

    def read_task_records(self, records: Iterator[tuple[Where, dict[str, Any]]]) -> None:
        for where, data in records:
            record = _model(TaskRecord, data, where)
            ext = _ext_id(record.task, where, "task")
            if ext in self.tasks:
                raise _err(where, f"task {ext!r} repeats", "task")
            self.add_task(record, ext, where)

    def add_task(self, record: TaskRecord, ext: str, where: Where) -> None:
        pages = self.add_pages(record, ext, where)
        files = self.add_user_files(record, ext, where)
        ctx = _TaskCtx(record, ext, where, pages, files)
        criteria = [
            *_insight_criteria(record, pages),
            *self.required_pages(ctx),
            *_required_files(ctx),
            *_checklist_criteria(ctx),
            _depth_criterion(),
        ]
        task = _model(
            Task,
            {
                "id": ext,
                "prompt": record.query,
                "language": record.language,
                "domain": record.domain,
                "category": record.subdomain,
                "metadata": _task_metadata(record, pages, files),
                "criteria": criteria,
            },
            where,
        )
        self.tasks[ext] = ctx
        self.bundle_tasks.append((task, where))

    def add_pages(self, record: TaskRecord, ext: str, where: Where) -> list[_Src]:
        """The task's sandbox pages as sources, each keeping its class."""
        pages: list[_Src] = []
        seen_urls: set[str] = set()
        for i, doc in enumerate(record.sandbox):
            title = doc.title.strip() or doc.page_body.strip()[:TITLE_FROM_BODY]
            url = doc.url.strip() or f"dr3-doc:{ext}/{i + 1}"
            if url in seen_urls:
                raise _err(
                    where, f"url {url!r} repeats within the task's sandbox", f"sandbox.{i}.url"
                )
            seen_urls.add(url)
            meta: dict[str, Any] = {"class": doc.doc_class, "task": ext}
            if doc.context_sizes:
                meta["context_sizes"] = doc.context_sizes
            if doc.keyword:
                meta["keyword"] = doc.keyword
            sha = self.add_source(url, title, doc.page_body, meta, ext, where)
            pages.append(_Src(url, title, "sandbox", doc.doc_class, sha))
        return pages

    def add_user_files(self, record: TaskRecord, ext: str, where: Where) -> list[_Src]:
        """The task's user files as sources (class ``user_file``, with their modality)."""
        files: list[_Src] = []
        names: set[str] = set()
        for i, uf in enumerate(record.user_files):
            if uf.filename in names:
                raise _err(where, f"user file {uf.filename!r} repeats", f"user_files.{i}.filename")
            names.add(uf.filename)
            url = f"dr3-file:{ext}/{uf.filename}"
            modality = uf.modality or _modality(uf.filename)
            meta = {"class": "user_file", "modality": modality, "task": ext}
            if uf.description:
                meta["description"] = uf.description
            self.add_source(url, uf.filename, uf.text or uf.description, meta, ext, where)
            files.append(_Src(url, uf.filename, "user_file", "user_file", None))
        return files

    def required_pages(self, ctx: _TaskCtx) -> list[Criterion]:
        """One criterion per distinct supportive page title (part of D_req)."""
        criteria: list[Criterion] = []
        titles: set[str] = set()
        for page in ctx.pages:
            if page.doc_class != "supportive":
                continue
            if page.title in titles:
                self.notes.append(
                    f"task {ctx.ext_id}: supportive title {page.title!r} repeats; "
                    "counted once in D_req, as the evaluator does"
                )
                continue
            titles.add(page.title)
            cid = f"page-{len(titles)}"
            ctx.required.append((cid, DIM_PAGE, page.title))
            criteria.append(
                Criterion(
                    id=cid,
                    framework="dr3",
                    dimension=DIM_PAGE,
                    text=page.title,
                    explanation=f"Required: supportive sandbox page {page.url}",
                    scale="dr3_cited",
                    metadata={"url": page.url, "class": "supportive"},
                )
            )
        return criteria

    def add_source(
        self, url: str, title: str, text: str, meta: dict[str, Any], task: str, where: Where
    ) -> str:
        known = self.sources.get(url)
        if known is None:
            source = Source(url=url, title=title, text=text, metadata=meta)
            self.sources[url] = (source, where, {task}, {task: str(meta["class"])})
            return _sha(text)
        source, first, tasks, classes = known
        if source.text != text:
            self.notes.append(f"{url}: different text in task {task}; the first page is kept")
        tasks.add(task)
        classes[task] = str(meta["class"])
        merged = dict(source.metadata)
        merged["task"] = ", ".join(sorted(tasks))
        if len(set(classes.values())) > 1:
            merged["class"] = "varies by task"
            merged["class_by_task"] = dict(sorted(classes.items()))
        self.sources[url] = (source.model_copy(update={"metadata": merged}), first, tasks, classes)
        return _sha(source.text)

    # -- results ----------------------------------------------------------------------------

    def read_results(self) -> None:
        path = self.root / "results.jsonl"
        if not path.is_file():
            raise InputError(path, "missing: a DR3-Eval run needs results.jsonl")
        self.read_result_records(self.lines(path))

    def read_result_records(self, records: Iterator[tuple[Where, dict[str, Any]]]) -> None:
        for where, data in records:
            record = _model(ResultRecord, data, where)
            task_id = _ext_id(record.task, where, "task")
            ctx = self.tasks.get(task_id)
            if ctx is None:
                raise _err(where, f"unknown task {task_id!r} (not in tasks.jsonl)", "task")
            if (task_id, record.system) in self.pairs:
                raise _err(
                    where,
                    f"a second result for task {task_id!r} and system {record.system!r}",
                    "system",
                )
            self.pairs.add((task_id, record.system))
            if record.system not in self.systems:
                self.systems[record.system] = (
                    _model(
                        System,
                        {
                            "id": record.system,
                            "name": record.system_name or record.system,
                        },
                        where,
                    ),
                    where,
                )
            self.add_result(record, ctx, where)

    def add_result(self, record: ResultRecord, ctx: _TaskCtx, where: Where) -> None:
        report_id = f"{record.system}:{ctx.ext_id}"
        judgments: list[Judgment] = []

        def judge(
            kind: str,
            value: str | float | bool | None,
            *,
            criterion: str | None = None,
            claim: str | None = None,
            ref: int | None = None,
            run: str = JUDGE_RUN,
            explanation: str = "",
            evidence: str = "",
            raw: object = None,
            error: str | None = None,
            sha: str | None = None,
        ) -> None:
            judgments.append(
                Judgment(
                    run=run,
                    report=report_id,
                    kind=kind,
                    criterion=criterion,
                    claim=claim,
                    ref=ref,
                    value=value,
                    explanation=explanation,
                    evidence=evidence,
                    raw="" if raw is None else json.dumps(raw, ensure_ascii=False, sort_keys=True),
                    error=error if value is None else None,
                    source_sha256=sha,
                )
            )

        if record.information_recall is not None:
            self.recall(record.information_recall, ctx, where, judge)
        citations = self.coverage(record, ctx, where, judge)
        claims, references, origin, klass = self.accuracy(record, ctx, where, judge)
        if record.format_compliance is not None:
            self.checklist(record.format_compliance, ctx, where, judge)
        if record.depth_quality is not None:
            self.depth(record.depth_quality, judge)

        metadata: dict[str, Any] = {}
        context_size = record.context_size or ctx.record.context_size
        if context_size:
            metadata["context_size"] = context_size
        metadata.update(citation_notes(citations, ctx))
        if origin:
            metadata[ORIGIN_META] = origin
            metadata[CLASS_META] = klass
        report = _model(
            Report,
            {
                "id": report_id,
                "task": ctx.ext_id,
                "system": record.system,
                "markdown": record.final_report,
                "references": references,
                "metadata": metadata,
                "claims": claims,
            },
            where,
        )
        self.reports.append((report, where))
        self.judgments.extend((j, where) for j in judgments)

    @staticmethod
    def recall(section: InformationRecall, ctx: _TaskCtx, where: Where, judge: JudgeFn) -> None:
        for name, origin, gold in (
            ("long_context", "sc", ctx.record.gold_insights_from_long_context),
            ("source_documents", "uf", ctx.record.gold_insights_from_source),
        ):
            items: list[CoveredInsight] | None = getattr(section, name)
            if items is None:
                continue
            by_id = _insights_by_id(items, len(gold), name, where)
            for n in range(1, len(gold) + 1):
                _insight_verdict(by_id.get(n), f"{origin}-{n}", judge)

    def coverage(
        self, record: ResultRecord, ctx: _TaskCtx, where: Where, judge: JudgeFn
    ) -> list[str]:
        """Writes one verdict per required document; returns the report's citations."""
        section = record.citation_coverage
        given = section.match_details if section is not None else {}
        _check_required_titles(given, ctx, where)
        citations = section.extracted_citations if section is not None else None
        if citations is None:
            citations = extract_citations(record.final_report)
        for cid, _, title in ctx.required:
            detail = given.get(title)
            if detail is not None:
                match = Match(detail.match_type, detail.matched_citation)
                by = "the run's citation_coverage.match_details"
            else:
                match = match_required(title, record.final_report, citations)
                by = "Gavel's implementation of the evaluator's rule"
                self.rule_used = True
            _coverage_verdict(cid, title, match, by, ctx, judge)
        return citations

    def accuracy(
        self, record: ResultRecord, ctx: _TaskCtx, where: Where, judge: JudgeFn
    ) -> tuple[list[Claim], list[Reference], dict[str, str], dict[str, str]]:
        section = record.factual_accuracy
        if section is None:
            return [], [], {}, {}
        refs: dict[str, _Ref] = {}
        claims: list[Claim] = []
        seen: set[str] = set()
        for i, fa in enumerate(section.claims):
            prefix = f"factual_accuracy.claims.{i}"
            claim_id = _ext_id(f"c{fa.id}", where, f"{prefix}.id")
            if claim_id in seen:
                raise _err(where, f"claim id {fa.id!r} repeats", f"{prefix}.id")
            seen.add(claim_id)
            results = _citation_results(fa, where, prefix)
            indices: list[int] = []
            for raw in dict.fromkeys(fa.citations):
                if raw not in refs:
                    src, how = _cited_source(raw, results.get(raw), fa, ctx, where, prefix)
                    refs[raw] = (len(refs) + 1, src, how)
                index, src, how = refs[raw]
                indices.append(index)
                _support_verdict(
                    claim_id,
                    index,
                    f"Citation {raw} → {_resolution(src, how)}",
                    src,
                    results.get(raw),
                    judge,
                )
            claims.append(_fa_claim(fa, claim_id, indices))
        references, origin, klass = _reference_tables(refs)
        return claims, references, origin, klass

    @staticmethod
    def checklist(section: FormatCompliance, ctx: _TaskCtx, where: Where, judge: JudgeFn) -> None:
        by_id = _checklist_by_id(section, ctx, where)
        for key, cid in ctx.checklist.items():
            _checklist_verdict(by_id.get(key), cid, judge)

    @staticmethod
    def depth(section: DepthQuality, judge: JudgeFn) -> None:
        score, why = section.score, section.justification
        if score is None and section.raw:
            score, parsed = _depth_from_xml(section.raw)
            why = why or parsed
        raw = section.model_dump(exclude_defaults=True)
        if score is None:
            judge(
                "dr3_depth",
                None,
                criterion="dq",
                explanation=why,
                raw=raw,
                error=section.error or "no parsable <score> in the judge's answer",
            )
            return
        value = float(min(10.0, max(1.0, score)))
        if value != score:
            why += f"\n(judge gave {score:g}, clipped to {value:g} as the evaluator does)"
        judge("dr3_depth", value, criterion="dq", explanation=why, raw=raw)

    # -- assembly ---------------------------------------------------------------------------

    def read(self) -> Bundle:
        if not self.root.is_dir():
            raise InputError(
                self.root,
                "no such folder (a DR3-Eval run is a folder with tasks.jsonl and results.jsonl)",
            )
        manifest = self.manifest()
        if is_release(self.root):
            release = Release(self.root, context_size=manifest.context_size)
            self.read_task_records(release.tasks())
            self.read_result_records(release.results())
            self.notes.extend(release.notes)
            if not self.reports:
                raise InputError(self.root, release.no_reports())
        else:
            self.read_tasks()
            self.read_results()
            if not self.reports:
                raise InputError(self.root / "results.jsonl", "no report in the file")
        manifest_where = (str(self.root / "run.json"), 0)
        bundle = Bundle(suite=self.suite(manifest, manifest_where))
        _place(bundle, "task", bundle.tasks, self.bundle_tasks)
        _place(bundle, "system", bundle.systems, self.systems.values())
        _place(bundle, "report", bundle.reports, self.reports)
        _place(bundle, "source", bundle.sources, ((s, w) for s, w, _, _ in self.sources.values()))
        runs = _judge_runs(manifest, self.rule_used)
        _place(bundle, "run", bundle.runs, ((run, manifest_where) for run in runs))
        _place(bundle, "judgment", bundle.judgments, self.judgments)
        return bundle

    def suite(self, manifest: Manifest, where: Where) -> Suite:
        name = self.root.resolve().name
        description = manifest.description or f"DR3-Eval run imported from {name}."
        if self.notes:
            description += "\nImport notes:\n" + "\n".join(f"- {n}" for n in self.notes[:200])
        return _model(
            Suite,
            {
                "id": self.suite_id or manifest.id or f"dr3-{name}",
                "name": manifest.name or f"DR3-Eval: {name}",
                "frameworks": ["dr3"],
                "source": str(self.root),
                "description": description,
            },
            where,
        )


def read(path: Path, suite_id: str | None = None) -> Bundle:
    """Parse a DR3-Eval run folder into a bundle (the format registry's entry point)."""
    return _Reader(Path(path), suite_id).read()
