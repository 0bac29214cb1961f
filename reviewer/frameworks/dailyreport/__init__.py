"""DailyReport (paper 000): per-subtask cascade rubrics (ins, fac, rat), claim factuality and
claim ↔ reference consistency; Ins, Fac, Rat, UserPref (Algorithm 1). Its runs come in the
native bundle format; ``judge_*`` hold the paper's judging pipeline, ``synthetic`` the
DailyReport-size runs ``gavel bench`` generates."""

from reviewer.framework import Benchmark
from reviewer.frameworks.dailyreport.scoring import FRAMEWORK

BENCHMARK = Benchmark("dailyreport", "DailyReport", (FRAMEWORK,))
