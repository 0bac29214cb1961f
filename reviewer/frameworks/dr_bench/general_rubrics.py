"""DR. Bench's 48 General-Report Rubrics (GRRs), shared by every task.

Copied verbatim from Appendix B of the paper (seed 004), because the judge prompt embeds each
rubric line word for word, point scale included (spec §1.4, §4.1). All are binary, Yes = w,
No = 0, and their full scores sum to 73. The paper names seven dimensions but does not assign
items to them; ``GRR_GROUPS`` is the spec's grouping inferred from the item order ([INFERRED]),
kept as a display tag only: no score depends on it.
"""

from __future__ import annotations

GRR_GROUPS: dict[str, str] = {
    "structure": "Structural organization",
    "logic": "Logical clarity & expression",
    "coverage": "Informational coverage & content depth",
    "citation": "Citation quality & source credibility",
    "originality": "Originality & insight",
    "data": "Data usage & analytical rigor",
    "format": "Formatting consistency",
}
"""Group tag -> the paper's dimension name."""

GENERAL_RUBRICS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "structure",
        "Does the report include a clear three-part structure (introduction, body, "
        "conclusion)? Yes=2, No=0",
    ),
    (
        2,
        "structure",
        "Does the report clearly state the research question or objective at the beginning? "
        "Yes=2, No=0",
    ),
    (
        3,
        "structure",
        "Does the report provide background and purpose in the introduction? Yes=1, No=0",
    ),
    (4, "structure", "Does the report develop coherent arguments in the body section? Yes=2, No=0"),
    (5, "structure", "Does the report summarize key findings in the conclusion? Yes=2, No=0"),
    (
        6,
        "structure",
        "Does the report offer actionable recommendations or future directions? Yes=2, No=0",
    ),
    (
        7,
        "structure",
        "Does the report use smooth transitions between paragraphs or sections? Yes=1, No=0",
    ),
    (
        8,
        "structure",
        "Does the report use headings and subheadings to organize content? Yes=1, No=0",
    ),
    (
        9,
        "logic",
        "Does the report avoid information dumping and present ideas clearly? Yes=2, No=0",
    ),
    (10, "logic", "Does the report use precise and clear language to express ideas? Yes=2, No=0"),
    (
        11,
        "logic",
        "Does the report avoid grammar, spelling, or sentence structure issues? Yes=1, No=0",
    ),
    (
        12,
        "logic",
        "Does the report demonstrate logical reasoning such as cause-effect or comparison? "
        "Yes=2, No=0",
    ),
    (13, "logic", "Does the report reflect critical thinking or independent judgment? Yes=2, No=0"),
    (
        14,
        "logic",
        "Does the report conclude with insightful perspectives or calls to action? Yes=1, No=0",
    ),
    (
        15,
        "logic",
        "Does the report maintain a formal, academic, and objective tone throughout? Yes=1, No=0",
    ),
    (16, "coverage", "Does the report cover all key aspects of the research topic? Yes=2, No=0"),
    (
        17,
        "coverage",
        "Does the report avoid missing important background or variables? Yes=1, No=0",
    ),
    (
        18,
        "coverage",
        "Does the report provide sufficient evidence to support its claims? Yes=2, No=0",
    ),
    (
        19,
        "coverage",
        "Does the report analyze underlying causes or trends in the data? Yes=2, No=0",
    ),
    (
        20,
        "coverage",
        "Does the report incorporate multiple angles or dimensions in its analysis? Yes=1, No=0",
    ),
    (
        21,
        "coverage",
        "Does the report demonstrate both breadth and depth of understanding? Yes=2, No=0",
    ),
    (22, "coverage", "Does the report avoid vague or repetitive statements? Yes=1, No=0"),
    (
        23,
        "citation",
        "Does the report cite authoritative academic journals or professional sources? Yes=2, No=0",
    ),
    (24, "citation", "Does the report provide clear citation formatting? Yes=1, No=0"),
    (
        25,
        "citation",
        "Does the report cite sources that are highly relevant to the topic? Yes=2, No=0",
    ),
    (
        26,
        "citation",
        "Does the report avoid fabricated, unclear, or misleading references? Yes=2, No=0",
    ),
    (
        27,
        "citation",
        "Does the report embed citations within the body rather than only at the end? Yes=1, No=0",
    ),
    (
        28,
        "citation",
        "Does the report distinguish between primary and secondary sources? Yes=1, No=0",
    ),
    (
        29,
        "originality",
        "Does the report offer a unique perspective or analytical framework? Yes=2, No=0",
    ),
    (30, "originality", "Does the report critique existing viewpoints thoughtfully? Yes=2, No=0"),
    (
        31,
        "originality",
        "Does the report propose innovative ideas or future research directions? Yes=2, No=0",
    ),
    (32, "originality", "Does the report show deep understanding of complex issues? Yes=2, No=0"),
    (33, "originality", "Does the report avoid simply repeating existing conclusions? Yes=1, No=0"),
    (
        34,
        "originality",
        "Does the report reflect the author's reasoning and intellectual depth? Yes=2, No=0",
    ),
    (35, "data", "Does the report use credible and verifiable data sources? Yes=2, No=0"),
    (36, "data", "Does the report interpret and explain data appropriately? Yes=2, No=0"),
    (37, "data", "Does the report use charts, tables, or visuals to support analysis? Yes=1, No=0"),
    (38, "data", "Does the report avoid misusing statistics or exaggerating findings? Yes=2, No=0"),
    (39, "data", "Does the report analyze data with causal or trend-based reasoning? Yes=2, No=0"),
    (40, "data", "Does the report acknowledge limitations or biases in the data? Yes=1, No=0"),
    (41, "data", "Does the report include source and date information for cited data? Yes=1, No=0"),
    (
        42,
        "format",
        "Does the report use proper Markdown heading levels (e.g., #, ##, ###)? Yes=1, No=0",
    ),
    (
        43,
        "format",
        "Does the report use ordered or unordered lists to present key points? Yes=1, No=0",
    ),
    (
        44,
        "format",
        "Does the report correctly use Markdown elements like code blocks, quotes, or tables? "
        "Yes=1, No=0",
    ),
    (
        45,
        "format",
        "Does the report avoid Markdown syntax errors or formatting issues? Yes=1, No=0",
    ),
    (
        46,
        "format",
        "Does the report maintain clean, readable, and visually consistent layout? Yes=1, No=0",
    ),
    (
        47,
        "format",
        "Does the report use consistent terminology and avoid style shifts? Yes=1, No=0",
    ),
    (48, "format", "Does the report avoid informal or conversational language? Yes=1, No=0"),
)
"""(number 1–48, group tag, rubric text with its point scale), in the paper's order."""

GRR_TOTAL = 73
"""The paper's stated full score of the GRRs (a test checks the texts add up to it)."""


def grr_id(number: int) -> str:
    """The criterion id of general rubric ``number`` in every DR. Bench task."""
    return f"grr-{number:02d}"
