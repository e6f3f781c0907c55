"""The statistics engine of xleval: one place for bootstrap CIs, permutation tests,
correlations, pairwise accuracy and effect sizes. Every function validates its input once,
takes an explicit ``random_state`` where it resamples, and returns a frozen result
(:class:`Estimate`, :class:`TestResult`, :class:`CorrelationResult`,
:class:`PairwiseAccuracy`) with ``to_dict()``. See docs/stats.md for the table of functions and
the reference implementations they are tested against.
"""
from xleval.stats._bootstrap import bootstrap, bootstrap_sums, paired_bootstrap
from xleval.stats._chance import ChanceBaseline, chance_baseline
from xleval.stats._clusters import MetricClusters, assign_ranks, metric_clusters
from xleval.stats._compare_correlations import average_correlation, compare_correlations, williams_test
from xleval.stats._correlation import correlation, partial_correlation
from xleval.stats._effects import cohens_d, eta_squared, kruskal_wallis
from xleval.stats._estimate import estimate_from_distribution
from xleval.stats._grouped_bootstrap import bootstrap_pairwise_accuracy, resampled_pearson, stratified_resample_counts
from xleval.stats._joint import JointEstimate, RankIntervals, bootstrap_sums_joint, rank_intervals
from xleval.stats._paired_mt import (
                                     SystemTest,
                                     approximate_randomization_test,
                                     bootstrap_score_ci,
                                     paired_bootstrap_test,
)
from xleval.stats._pairwise import compare_pairwise_accuracy, pairwise_accuracy
from xleval.stats._pdp import pairwise_difference_pearson
from xleval.stats._permutation import permutation_test_2samp, permutation_test_paired
from xleval.stats._resample import percentile_bounds, weighted_bootstrap_counts
from xleval.stats._resampling import DEFAULT_RESAMPLING, FRESH_RESAMPLING, Resampling
from xleval.stats._results import CorrelationResult, Estimate, PairwiseAccuracy, TestResult
from xleval.stats._spa import SoftPairwiseAccuracy, pairwise_permutation_pvalues, soft_pairwise_accuracy
from xleval.stats._tasks import (
                                     WMT25_LPS,
                                     MetaTask,
                                     assign_weights,
                                     average_clusters,
                                     read_tasks,
                                     weighted_average_ranks,
                                     weighted_average_statistics,
                                     wmt_tasks,
)

__all__ = [
    "Resampling",
    "DEFAULT_RESAMPLING",
    "FRESH_RESAMPLING",
    "Estimate",
    "TestResult",
    "CorrelationResult",
    "PairwiseAccuracy",
    "JointEstimate",
    "RankIntervals",
    "bootstrap",
    "bootstrap_sums",
    "paired_bootstrap",
    "estimate_from_distribution",
    "weighted_bootstrap_counts",
    "percentile_bounds",
    "bootstrap_sums_joint",
    "rank_intervals",
    "permutation_test_paired",
    "permutation_test_2samp",
    "correlation",
    "partial_correlation",
    "pairwise_accuracy",
    "compare_pairwise_accuracy",
    "eta_squared",
    "kruskal_wallis",
    "cohens_d",
    "SystemTest",
    "paired_bootstrap_test",
    "approximate_randomization_test",
    "bootstrap_score_ci",
    "average_correlation",
    "compare_correlations",
    "williams_test",
    "stratified_resample_counts",
    "bootstrap_pairwise_accuracy",
    "resampled_pearson",
    "SoftPairwiseAccuracy",
    "soft_pairwise_accuracy",
    "pairwise_permutation_pvalues",
    "MetricClusters",
    "metric_clusters",
    "assign_ranks",
    "MetaTask",
    "wmt_tasks",
    "read_tasks",
    "WMT25_LPS",
    "assign_weights",
    "weighted_average_ranks",
    "weighted_average_statistics",
    "average_clusters",
    "ChanceBaseline",
    "chance_baseline",
    "pairwise_difference_pearson",
]
