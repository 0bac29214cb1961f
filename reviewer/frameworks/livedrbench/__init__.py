"""LiveDRBench (paper 003): predicted claims matched one-to-one to ground-truth claims, graded
per key; precision, recall and F1 (framework ``claims_f1``)."""

from reviewer.framework import Benchmark, FormatSpec
from reviewer.frameworks.livedrbench.scoring import FRAMEWORK

BENCHMARK = Benchmark(
    "livedrbench",
    "LiveDRBench",
    (FRAMEWORK,),
    (
        FormatSpec(
            "livedrbench",
            "LiveDRBench claims and predictions",
            "reviewer.frameworks.livedrbench.format:read_livedrbench",
        ),
    ),
)
