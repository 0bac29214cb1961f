"""DeepResearch Bench (paper 001): RACE (per-criterion scores of a target against a reference
report) and FACT (statement–URL support); read from the benchmark repository's layout."""

from reviewer.framework import Benchmark, FormatSpec
from reviewer.frameworks.deepresearch_bench import fact, race

BENCHMARK = Benchmark(
    "deepresearch_bench",
    "DeepResearch Bench",
    (race.FRAMEWORK, fact.FRAMEWORK),
    (
        FormatSpec(
            "deepresearch_bench",
            "DeepResearch Bench repository layout (RACE, FACT)",
            "reviewer.frameworks.deepresearch_bench.format:read_drb",
            ("drb",),
            ("system_map",),
        ),
    ),
)
