"""DR. Bench (paper 004, RigorousBench): rubric points, keyword drift, trusted sources and the
integrated score (framework ``drbench``; its verdict kinds are named ``drb_*``)."""

from reviewer.framework import Benchmark, FormatSpec
from reviewer.frameworks.dr_bench.scoring import FRAMEWORK

BENCHMARK = Benchmark(
    "dr_bench",
    "DR. Bench",
    (FRAMEWORK,),
    (
        FormatSpec(
            "dr_bench",
            "DR. Bench (RigorousBench) tasks and reports",
            "reviewer.frameworks.dr_bench.format:read",
            ("drbench",),
        ),
    ),
)
