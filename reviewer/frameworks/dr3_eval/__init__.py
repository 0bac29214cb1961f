"""DR3-Eval (paper 002): insight coverage, citation coverage, claim support, checklist and
depth over a sandbox of supportive, distractor and noise documents."""

from reviewer.framework import Benchmark, FormatSpec
from reviewer.frameworks.dr3_eval.scoring import FRAMEWORK

BENCHMARK = Benchmark(
    "dr3_eval",
    "DR3-Eval",
    (FRAMEWORK,),
    (FormatSpec("dr3_eval", "DR3-Eval run", "reviewer.frameworks.dr3_eval.format:read", ("dr3",)),),
)
