"""DeepResearch Bench II (arXiv 2601.08536): rubric items from expert reports in three
dimensions (information recall, analysis, presentation), each judged 1 / 0 / -1 (framework
``drb2``)."""

from reviewer.framework import Benchmark, FormatSpec
from reviewer.frameworks.deepresearch_bench_2.scoring import FRAMEWORK

BENCHMARK = Benchmark(
    "deepresearch_bench_2",
    "DeepResearch Bench II",
    (FRAMEWORK,),
    (
        FormatSpec(
            "drb2",
            "DeepResearch Bench II checkout: tasks_and_rubrics.jsonl, report/<model>/, "
            "judge outputs",
            "reviewer.frameworks.deepresearch_bench_2.format:read",
        ),
    ),
)
