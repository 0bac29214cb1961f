"""Agreement statistics between LLM judges and human reviewers (pure functions, no I/O).

What is here and where it comes from:

- two raters, categorical labels: :func:`accuracy`, :func:`confusion_matrix`,
  :func:`cohen_kappa` (unweighted, linear, quadratic; DailyReport's weighted kappa of
  UserPref vs 1-4 human ratings), :func:`gwet_ac1`, plus :func:`wilson_interval` for DR-Bench's
  percent agreement on an audit sample;
- any number of coders with missing data: :func:`krippendorff_alpha` (nominal, ordinal,
  interval, ratio), :func:`gwet_ac1_multi`;
- paired scores: :func:`pearson`, :func:`spearman`, :func:`kendall_tau_b`,
  :func:`mean_absolute_error`, :func:`mean_signed_difference`, and DR3-Eval's
  :func:`pairwise_agreement`;
- DeepResearch Bench's human-consistency suite: :func:`par_vs_mean_human`,
  :func:`par_vs_each_rater`, :func:`par_inter_rater`, :func:`icc_1_1`,
  :func:`filtered_average_correlations` (FAP/FAS), :func:`overall_pearson_correlation` (OPC)
  and :func:`drb_overall_score`;
- :func:`bootstrap_ci` for a percentile interval around any of them, and
  :func:`bootstrap_table_ci`, a faster equivalent for statistics of a two-rater count table.

Undefined results are ``value is None`` (never NaN); bad input raises ``ValueError``. Each
function documents exactly when its value is undefined.
"""

from __future__ import annotations

from reviewer.agreement._core import ChanceCorrected, ConfusionMatrix, Estimate, HasValue
from reviewer.agreement.alpha import AlphaLevel, AlphaResult, krippendorff_alpha
from reviewer.agreement.bootstrap import BootstrapCI, bootstrap_ci, bootstrap_table_ci
from reviewer.agreement.categorical import (
    KappaWeights,
    accuracy,
    accuracy_from_table,
    cohen_kappa,
    cohen_kappa_from_table,
    confusion_matrix,
    gwet_ac1,
    gwet_ac1_from_table,
    gwet_ac1_multi,
    wilson_interval,
)
from reviewer.agreement.consistency import (
    FilteredCorrelations,
    HumanScores,
    ICCResult,
    MethodScores,
    PARResult,
    TiePolicy,
    drb_overall_score,
    filtered_average_correlations,
    icc_1_1,
    overall_pearson_correlation,
    pairwise_agreement,
    par_inter_rater,
    par_vs_each_rater,
    par_vs_mean_human,
)
from reviewer.agreement.correlation import (
    average_ranks,
    kendall_tau_b,
    mean_absolute_error,
    mean_signed_difference,
    pearson,
    spearman,
)

__all__ = [
    "AlphaLevel",
    "AlphaResult",
    "BootstrapCI",
    "ChanceCorrected",
    "ConfusionMatrix",
    "Estimate",
    "FilteredCorrelations",
    "HasValue",
    "HumanScores",
    "ICCResult",
    "KappaWeights",
    "MethodScores",
    "PARResult",
    "TiePolicy",
    "accuracy",
    "accuracy_from_table",
    "average_ranks",
    "bootstrap_ci",
    "bootstrap_table_ci",
    "cohen_kappa",
    "cohen_kappa_from_table",
    "confusion_matrix",
    "drb_overall_score",
    "filtered_average_correlations",
    "gwet_ac1",
    "gwet_ac1_from_table",
    "gwet_ac1_multi",
    "icc_1_1",
    "kendall_tau_b",
    "krippendorff_alpha",
    "mean_absolute_error",
    "mean_signed_difference",
    "overall_pearson_correlation",
    "pairwise_agreement",
    "par_inter_rater",
    "par_vs_each_rater",
    "par_vs_mean_human",
    "pearson",
    "spearman",
    "wilson_interval",
]
