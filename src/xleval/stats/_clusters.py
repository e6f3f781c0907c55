"""Significance clusters and ranks of metrics, the way the WMT metrics tasks make them.

For one task (one language pair, one statistic) every pair of metrics is compared with a one-sided
paired permutation test, and ranks are assigned from the p-value matrix as mt-metrics-eval's
``data.AssignRanks`` does: metrics are sorted by decreasing statistic (ties by name); walking down
the list, a metric starts a new cluster (rank + 1) when some metric of the current cluster is
significantly better than it (p <= alpha).

Tests (mt-metrics-eval ``stats.py``):

* system-level statistics (``pearson``, ``spearman``, ``kendall`` (tau-b), ``pairwise_accuracy``)
  and ``spa``: PERM-BOTH (``PermutationSigDiff``, Deutsch et al. 2021): both metrics are z-scored
  over all their scores, then each unit's two scores (a system's score; for SPA one system's score
  of one segment) are swapped with probability 1/2, and the statistic of both hybrids recomputed.
  p = #{stat(hybrid_a) - stat(hybrid_b) >= stat(a) - stat(b)} / n_resamples (no +1, as there).
* **Ties** (``ties=``). Resampled differences often equal the observed one exactly (accuracies are counts over
  pairs; two hybrids can order the same pairs). ``"count"`` (the default) counts them as at least as large
  (the permutation test's own rule, conservative): a difference within 1e-12 (relative) of the observed one
  counts. ``"mtme"`` is mt-metrics-eval's rule: the floating-point comparison ``>=`` as written, so a tie counts
  only when its rounding happens to land at or above the observed difference (e.g. 7/10 - 5/10 against
  6/10 - 4/10); with the same draws it gives mt-metrics-eval's p-values, which can be lower.
* ``acc_t`` (segment-level acc23 with tie calibration, averaged by item): the ``pairs`` test
  (``PairwisePermutationSigDiff``): each metric's epsilon is calibrated once on the data, then each
  pair's two verdicts are swapped with probability 1/2.

Speed. One swap matrix (n_resamples x units) serves every metric pair. The ``pairs`` test is linear
in the verdicts, so every pair's null distribution comes from one matrix product. For SPA, system
i beats j in permutation r of SPA's own test when ``U_ri >= U_rj`` with ``U = (S - 1) @ x.T``
(linear in x), and a hybrid is ``b + W o (a - b)``: its ``U`` is ``U(b) + V(a) - V(b)`` with
``V(m) = (S - 1) @ (W o m).T`` computed once per metric (not per metric pair), in float64, one
matrix product per metric and block of resamples. Segment-level Pearson of the hybrids comes from
sums (``W @ d``, ...), no hybrid is built.

Draws differ from mt-metrics-eval's (it draws from numpy's global, unseeded generator), so p-values
agree with its runs within Monte-Carlo error (about 0.02 at 1000 resamples), not to the digit.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from xleval._base.result import Result, array_field
from xleval._base.seeding import child_seeds, resolve_seed
from xleval.exceptions import InputError
from xleval.stats import _validate as v
from xleval.stats._pairwise import _calibrate, _unit_pairs, _verdicts
from xleval.stats._spa import N_RESAMPLES as SPA_RESAMPLES
from xleval.stats._spa import SEED as SPA_SEED
from xleval.stats._spa import _pvalues, sign_matrix, spa_from_pvalues

__all__ = ["MetricClusters", "metric_clusters", "assign_ranks", "CLUSTER_STATISTICS", "TIES"]

SYSTEM_STATISTICS = ("pearson", "spearman", "kendall", "pairwise_accuracy")
CLUSTER_STATISTICS = (*SYSTEM_STATISTICS, "spa", "acc_t")
#: how a resampled difference equal to the observed one counts (module docstring, "Ties")
TIES = ("count", "mtme")
#: metric-pair x resample x (resamples of SPA's own test) entries per block (bounds memory)
_SPA_BLOCK = 6_000_000
#: coins per block of a swap draw (bounds the float temporaries)
_COIN_BLOCK = 2_000_000


@dataclass(frozen=True, eq=False)
class MetricClusters(Result):
    """Per-metric statistic and significance rank for one task.

    ``metrics`` are in rank order (decreasing statistic, ties by name); ``values``/``ranks`` map a
    metric to its statistic / cluster rank (1 = best cluster). ``pvalues[i, j]`` (i < j, in the
    order of ``metrics``) is the p-value of the test that metric i is better than metric j; 0
    elsewhere, as mt-metrics-eval's significance matrix. ``epsilons`` are the calibrated metric tie
    thresholds of ``acc_t`` (None otherwise). ``draws[i, j]`` keeps the resampled differences
    stat(hybrid favouring i) - stat(hybrid favouring j) (antisymmetric), for :func:`average_clusters`.
    ``ties``: how a resampled difference equal to the observed one counted (:data:`TIES`).
    """

    statistic: str
    metrics: tuple[str, ...]
    values: dict[str, float]
    ranks: dict[str, int]
    pvalues: np.ndarray
    alpha: float
    n_resamples: int
    random_state: int
    test: str
    n_systems: int
    n_segments: int | None = None
    epsilons: dict[str, float] | None = None
    n_resamples_used: np.ndarray | None = array_field()
    draws: np.ndarray | None = array_field()
    ties: str = "count"


def assign_ranks(pvalues: np.ndarray, alpha: float = 0.05) -> list[int]:
    """mt-metrics-eval's ``AssignRanks``: rows/columns sorted by decreasing statistic; metric i
    opens a new cluster when some metric since the start of the current cluster beats it with
    p <= alpha."""
    ranks, current, start = [], 1, 0
    for i in range(pvalues.shape[0]):
        if np.any(pvalues[start:i, i] <= alpha):
            current, start = current + 1, i
        ranks.append(current)
    return ranks


def metric_clusters(metrics: Mapping[str, Any], human: Any, statistic: str, *, n_resamples: int = 1000,
                    random_state: int = 0, alpha: float = 0.05, groups: Any = None,
                    early_stopping: tuple[int, float, float] | None = None, level: str = "system",
                    spa_resamples: int = SPA_RESAMPLES, spa_random_state: int = SPA_SEED,
                    ties: str = "count") -> MetricClusters:
    """Statistic, significance cluster rank and p-value matrix of each metric on one task.

    ``metrics[name]`` and ``human``: (n_systems, n_segments) matrices (rows: the same systems in
    the same order). System-level statistics also take (n_systems,) system scores; from a matrix
    the system score is the row mean (the human's over its non-missing cells). ``spa`` needs
    complete matrices; ``acc_t`` leaves out the cells without a human score (items with < 2 such
    cells have no pair). ``groups`` (pairwise_accuracy only): one label per system; only pairs
    inside a group count (WMT23's global accuracy over language pairs, systems stacked).
    ``level="segment"`` (``pearson`` only): the segment-level Pearson of WMT23 (no averaging: one
    correlation over every cell with a human score; PERM-BOTH swaps cells).
    ``n_resamples=0`` runs no test (mt-metrics-eval's ``k=0``): p-values 0, so every metric is its
    own cluster and the ranks are the order of the statistic.
    ``early_stopping=(block_size, early_min, early_max)``: stop a pair's test at the first block
    boundary where its p-value is below early_min or above early_max (mt-metrics-eval's
    ``PermutationSigDiffParams``; the WMT tasks use (100, 0.02, 0.5)); None runs every resample.
    ``ties``: ``"count"`` (a resampled difference equal to the observed one counts as at least as large) or
    ``"mtme"`` (mt-metrics-eval's plain floating-point ``>=``); module docstring, "Ties".
    """
    v.check_choice(statistic, "statistic", CLUSTER_STATISTICS)
    v.check_choice(ties, "ties", TIES)
    n_resamples = v.check_n_resamples(n_resamples, minimum=0)
    alpha = v.check_probability(alpha, "alpha")
    seed = resolve_seed(random_state)
    if not isinstance(metrics, Mapping) or len(metrics) < 1:
        raise InputError("metrics must be a mapping {name: scores} with at least one metric", argument="metrics")
    names = [str(k) for k in metrics]
    swap_seed = child_seeds(seed, 1)[0]
    v.check_choice(level, "level", ("system", "segment"))
    if level == "segment" and statistic not in ("pearson", "acc_t"):
        raise InputError(f"level='segment' is available for 'pearson' (and 'acc_t', segment-level already); "
                         f"got statistic={statistic!r}", argument="level")
    n_seg: int | None
    if level == "segment" and statistic == "pearson":
        values, null, n_sys, n_seg, eps = _segment_pearson(metrics, human, n_resamples, swap_seed)
        test = "PERM-BOTH (PermutationSigDiff), swaps of segment scores"
    elif statistic in SYSTEM_STATISTICS:
        values, null, n_sys, n_seg, eps = _system_level(metrics, human, statistic, groups, n_resamples, swap_seed)
        test = "PERM-BOTH (PermutationSigDiff), swaps of system scores"
    elif statistic == "spa":
        values, null, n_sys, n_seg, eps = _spa_level(metrics, human, n_resamples, swap_seed, spa_resamples,
                                                     spa_random_state)
        test = "PERM-BOTH (PermutationSigDiff), swaps of segment scores"
    else:
        values, null, n_sys, n_seg, eps = _acc_t(metrics, human, n_resamples, swap_seed)
        test = "pairs (PairwisePermutationSigDiff), swaps of pair verdicts"
    order = sorted(range(len(names)), key=lambda i: (-values[i], names[i]))
    m = len(names)
    pvals = np.zeros((m, m))
    used = np.zeros((m, m), dtype=np.int64)
    draws = np.zeros((m, m, n_resamples))
    for a in range(m):
        for b in range(a + 1, m):
            if n_resamples == 0:  # no test: mt-metrics-eval's k=0 (a zero matrix, so ranks 1, 2, 3, ...)
                continue
            i, j = order[a], order[b]
            diff = null(i, j)  # stat(hybrid taking i where swapped) - stat(the other hybrid)
            delta = values[i] - values[j]
            hits = at_least(diff, delta, ties)
            pvals[a, b], used[a, b] = _stop(hits, early_stopping)
            draws[a, b], draws[b, a] = diff, -diff
    ordered = tuple(names[i] for i in order)
    ranks = assign_ranks(pvals, alpha)
    return MetricClusters(
        statistic=statistic, metrics=ordered, values={names[i]: float(values[i]) for i in order},
        ranks=dict(zip(ordered, ranks, strict=True)), pvalues=pvals, alpha=alpha, n_resamples=n_resamples,
        random_state=seed, test=test, n_systems=n_sys, n_segments=n_seg,
        epsilons={names[i]: float(eps[i]) for i in order} if eps is not None else None,
        n_resamples_used=used, draws=draws, ties=ties)


def at_least(diff: np.ndarray, observed: float, ties: str) -> np.ndarray:
    """Which resampled differences count as at least as large as the observed one (module docstring, "Ties")."""
    if ties == "mtme":
        return diff >= observed
    return diff >= observed - 1e-12 * max(1.0, abs(observed))


def _coins(seed: int, n_rows: int, tail: tuple[int, ...]) -> Iterator[np.ndarray]:
    """Rows of fair 0/1 coins (bool) drawn block by block: ``random((n_rows, *tail)) < 0.5`` of one
    Generator, without its float64 temporary (Generator.random fills in C order, so the blocks are
    the rows of the one large draw)."""
    rng = np.random.default_rng(seed)
    step = max(1, _COIN_BLOCK // max(1, int(np.prod(tail))))
    for start in range(0, n_rows, step):
        yield rng.random((min(step, n_rows - start), *tail)) < 0.5


def _coin_matrix(seed: int, n_rows: int, tail: tuple[int, ...]) -> np.ndarray:
    out = np.empty((n_rows, *tail), dtype=bool)
    row = 0
    for block in _coins(seed, n_rows, tail):
        out[row:row + len(block)] = block
        row += len(block)
    return out


def _bool_matmul(coins: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``coins @ vectors`` for a bool (rows, n) matrix, converted to float block by block."""
    step = max(1, _COIN_BLOCK // max(1, coins.shape[1]))
    out = np.zeros((len(coins), vectors.shape[1]))
    for i in range(0, len(coins), step):
        out[i:i + step] = coins[i:i + step].astype(np.float64) @ vectors
    return out


def _stop(hits: np.ndarray, early: tuple[int, float, float] | None) -> tuple[float, int]:
    if early is None:
        return float(hits.mean()), hits.size
    block, low, high = early
    if int(block) < 1:
        raise InputError(f"early_stopping block size must be >= 1; got {block!r}", argument="early_stopping")
    counts = np.cumsum(hits)
    for end in range(int(block), hits.size + 1, int(block)):
        p = counts[end - 1] / end
        if p < low or p > high:
            return float(p), end
    return float(counts[-1] / hits.size), hits.size


# ---------------------------------------------------------------------------------------------- inputs
def _matrix(x: Any, name: str, *, allow_nan: bool = False, ndim: int | tuple[int, ...] = 2) -> np.ndarray:
    arr = v.as_float_array(x, name, ndim=ndim, allow_nan=True)
    if not allow_nan and not np.isfinite(arr).all():
        rows = np.unique(np.nonzero(~np.isfinite(arr))[0])
        fix = ("soft pairwise accuracy needs a complete systems x segments matrix: keep only the segments judged "
               "for every system" if name == "human" else "every metric needs a score for every system and segment "
               "of the task: drop the systems or segments it did not score")
        raise InputError(f"{name} has missing (NaN/inf) scores for {rows.size} system(s) (first: row "
                         f"{int(rows[0])}); {fix}", argument="human" if name == "human" else "metrics")
    return arr


def _inputs(metrics: Mapping[str, Any], human: Any, ndim: int | tuple[int, ...], allow_human_nan: bool
            ) -> tuple[list[np.ndarray], np.ndarray]:
    h = _matrix(human, "human", allow_nan=allow_human_nan, ndim=ndim)
    ms = []
    for name, x in metrics.items():
        arr = _matrix(x, f"metric {name!r}", ndim=ndim)
        if arr.shape != h.shape:
            raise InputError(f"metric {name!r} has shape {arr.shape} but human has {h.shape}; give every metric the "
                             "same systems x segments as the human scores", argument="metrics")
        ms.append(arr)
    if h.shape[0] < 2:
        raise InputError(f"the task has {h.shape[0]} system(s); ranking metrics compares pairs of systems and needs at "
                         "least 2", argument="human")
    return ms, h


def _zscore(x: np.ndarray, name: str) -> np.ndarray:
    sd = x.std()
    if not sd > 0:
        raise InputError(f"{name} is constant (every score {x.ravel()[0]:g}); a constant metric cannot be compared: "
                         "drop it", argument="metrics")
    return (x - x.mean()) / sd


# ---------------------------------------------------------------------------------------- system level
def _system_stat(statistic: str, x: np.ndarray, h: np.ndarray, pair_mask: np.ndarray | None) -> np.ndarray:
    """The statistic of each row of ``x`` (B, n) against the human system scores ``h`` (n,)."""
    if statistic == "spearman":
        from scipy.stats import rankdata

        x, h = rankdata(x, axis=1), rankdata(h)
    if statistic in ("pearson", "spearman"):
        xc = x - x.mean(axis=1, keepdims=True)
        hc = h - h.mean()
        den = np.sqrt((xc * xc).sum(axis=1) * (hc @ hc))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, (xc @ hc) / np.where(den > 0, den, 1.0), np.nan)
    iu, ju = np.triu_indices(len(h), 1)
    if pair_mask is not None:
        keep = pair_mask[iu, ju]
        iu, ju = iu[keep], ju[keep]
    sx, sh = np.sign(x[:, iu] - x[:, ju]), np.sign(h[iu] - h[ju])
    if statistic == "pairwise_accuracy":  # mt-metrics-eval's Agreement: equal signs (ties agree with ties)
        return (sx == sh).mean(axis=1)
    # Kendall tau-b (scipy.stats.kendalltau's default)
    n0 = iu.size
    con_dis = (sx * sh).sum(axis=1)
    tx, th = (sx == 0).sum(axis=1), (sh == 0).sum()
    den = np.sqrt((n0 - tx) * float(n0 - th))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, con_dis / np.where(den > 0, den, 1.0), np.nan)


def _system_level(metrics: Mapping[str, Any], human: Any, statistic: str, groups: Any, n_resamples: int,
                  seed: int) -> tuple[np.ndarray, Any, int, int | None, None]:
    ms, h = _inputs(metrics, human, (1, 2), allow_human_nan=True)
    n_seg = h.shape[1] if h.ndim == 2 else None
    if h.ndim == 2:
        with np.errstate(invalid="ignore"):
            counts = np.isfinite(h).sum(axis=1)
        if (counts == 0).any():
            raise InputError(f"human has no score for system row {int(np.argmax(counts == 0))}; drop the systems "
                             "nobody judged", argument="human")
        h = np.nanmean(h, axis=1)
        ms = [m.mean(axis=1) for m in ms]
    elif not np.isfinite(h).all():
        raise InputError("human has missing system scores; drop the systems nobody judged", argument="human")
    if np.ptp(h) == 0:
        raise InputError("human scores are tied for every system; no metric can be ranked against them",
                         argument="human")
    mask = None
    if groups is not None:
        if statistic != "pairwise_accuracy":
            raise InputError("groups= applies to statistic='pairwise_accuracy' only (global accuracy)",
                             argument="groups")
        codes, _ = v.group_codes(groups, len(h), "groups")
        mask = codes[:, None] == codes[None, :]
        if not np.triu(mask, 1).any():
            raise InputError("groups= leaves no pair of systems in the same group", argument="groups")
    names = list(metrics)
    zs = [_zscore(m, f"metric {name!r}") for name, m in zip(names, ms, strict=True)]
    values = np.array([_system_stat(statistic, z[None, :], h, mask)[0] for z in zs])
    swaps = np.random.default_rng(seed).random((n_resamples, len(h))) < 0.5

    def null(i: int, j: int) -> np.ndarray:
        hyb_a = np.where(swaps, zs[i], zs[j])
        hyb_b = np.where(swaps, zs[j], zs[i])
        # a constant hybrid has no correlation: mt-metrics-eval averages no value, giving 0
        stat_a = np.nan_to_num(_system_stat(statistic, hyb_a, h, mask), nan=0.0)
        return stat_a - np.nan_to_num(_system_stat(statistic, hyb_b, h, mask), nan=0.0)

    return values, null, len(h), n_seg, None


def _segment_pearson(metrics: Mapping[str, Any], human: Any, n_resamples: int, seed: int
                     ) -> tuple[np.ndarray, Any, int, int, None]:
    """Pearson over all judged cells; the hybrids' correlations from sums (w^2 = w for 0/1 swaps):
    for ``y + W o d``: sum = sum y + W d, sum sq = sum y^2 + W (d^2 + 2 y d), sum h x = sum h y + W (h d)."""
    ms, h = _inputs(metrics, human, 2, allow_human_nan=True)
    n_sys, n_seg = h.shape
    keep = np.isfinite(h)
    hv = h[keep]
    if np.ptp(hv) == 0:
        raise InputError("human scores are tied for every segment; no metric can be ranked against them",
                         argument="human")
    names = list(metrics)
    zs = [_zscore(m[keep], f"metric {name!r}") for name, m in zip(names, ms, strict=True)]
    hc = hv - hv.mean()
    values = np.array([float(np.corrcoef(z, hv)[0, 1]) for z in zs])
    swaps = _coin_matrix(seed, n_resamples, (hv.size,))
    n = float(hv.size)

    def corr(s1: np.ndarray, s2: np.ndarray, sh: np.ndarray) -> np.ndarray:
        var = s2 - s1 * s1 / n
        with np.errstate(invalid="ignore", divide="ignore"):
            r = sh / np.sqrt(var * float(hc @ hc))
        return np.where(var > 1e-12 * n, r, 0.0)  # a constant hybrid: mt-metrics-eval averages nothing, 0

    def null(i: int, j: int) -> np.ndarray:
        x, y = zs[i], zs[j]
        d = x - y
        wd, wdd, whd, wyd, wxd = _bool_matmul(swaps, np.column_stack([d, d * d, hc * d, y * d, x * d])).T
        a = corr(y.sum() + wd, (y * y).sum() + wdd + 2 * wyd, hc @ y + whd)
        b = corr(x.sum() - wd, (x * x).sum() + wdd - 2 * wxd, hc @ x - whd)
        return a - b

    return values, null, n_sys, n_seg, None


# ----------------------------------------------------------------------------------------------- SPA
def _spa_level(metrics: Mapping[str, Any], human: Any, n_resamples: int, seed: int, spa_resamples: int,
               spa_seed: int) -> tuple[np.ndarray, Any, int, int, None]:
    from xleval.stats._spa import _check_seed

    ms, h = _inputs(metrics, human, 2, allow_human_nan=False)
    spa_seed = _check_seed(spa_seed)
    spa_resamples = v.check_n_resamples(spa_resamples)
    n_sys, n_seg = h.shape
    signs = sign_matrix(spa_resamples, n_seg, spa_seed)
    hp = _pvalues(h, signs)
    values = np.array([spa_from_pvalues(hp, _pvalues(m, signs)) for m in ms])
    names = list(metrics)
    zs = [_zscore(m, f"metric {name!r}") for name, m in zip(names, ms, strict=True)]
    swaps = _coin_matrix(seed, n_resamples, (n_sys, n_seg))
    draws = _spa_draws(zs, swaps, signs.astype(np.float64), hp)
    return values, lambda i, j: draws[i, j], n_sys, n_seg, None


def _spa_draws(zs: list[np.ndarray], swaps: np.ndarray, signs: np.ndarray, hp: np.ndarray) -> np.ndarray:
    """draws[i, j, k] = SPA(hybrid taking metric i at the swapped cells of resample k, j elsewhere)
    - SPA(the complementary hybrid).

    System i beats system j in permutation r when ``S_r . x_i - S_r . x_j >= sum x_i - sum x_j``,
    i.e. when ``U_ri >= U_rj`` with ``U = (S - 1) @ x.T`` (linear in x). For the hybrid
    ``y + W o (x - y)``: ``U = U(y) + V_k(x) - V_k(y)`` with ``V_k(x) = (S - 1) @ (W_k o x).T``, so
    each metric's ``V`` is computed once per block of resamples and shared by all its pairs.
    """
    m, (n_res, n_sys, _) = len(zs), swaps.shape
    iu, ju = np.triu_indices(n_sys, 1)
    h_iu = hp[iu, ju]
    lowered = signs - 1.0  # 0 where a segment keeps its sign, -2 where it is flipped
    base = [np.ascontiguousarray((lowered @ z.T).T) for z in zs]  # (n_sys, R_p): U of each metric
    n_perm = len(signs)
    out = np.zeros((m, m, n_res))
    step = max(1, _SPA_BLOCK // max(1, n_perm * n_sys * m))
    for start in range(0, n_res, step):
        sl = slice(start, min(n_res, start + step))
        # v[a][k, s, r] = ((S - 1) @ (W_k o z_a).T)[r, s]
        kb = sl.stop - sl.start
        w = swaps[sl].astype(np.float64)
        v_ = [np.ascontiguousarray((lowered @ (w * z[None]).reshape(kb * n_sys, -1).T).reshape(n_perm, kb, n_sys)
                                   .transpose(1, 2, 0)) for z in zs]  # C order: vd below is contiguous too
        kernel = _compiled()
        for a in range(m):
            for b in range(a + 1, m):
                vd = v_[a] - v_[b]  # (kb, n_sys, R_p)
                if kernel is not None:
                    spa_a, spa_b = _spa_batch_compiled(kernel, base[a], base[b], vd, h_iu, n_perm)
                else:
                    spa_a = _spa_batch(base[b][None] + vd, h_iu, n_perm)
                    spa_b = _spa_batch(base[a][None] - vd, h_iu, n_perm)
                out[a, b, sl] = spa_a - spa_b
                out[b, a, sl] = spa_b - spa_a
    return out


def _compiled() -> Any:
    """The numba kernel of SPA's clusters (:mod:`xleval.stats._spa_kernel`), or None without numba (the numpy path
    gives the same numbers) or with ``XLEVAL_NUMBA=0``."""
    import importlib
    import os

    if os.environ.get("XLEVAL_NUMBA", "1") == "0":
        return None
    try:
        return importlib.import_module("xleval.stats._spa_kernel").spa_hybrid_counts
    except (ImportError, RuntimeError):
        return None


def _spa_batch_compiled(kernel: Any, base_a: np.ndarray, base_b: np.ndarray, vd: np.ndarray, h_iu: np.ndarray,
                        n_perm: int) -> tuple[np.ndarray, np.ndarray]:
    kb = vd.shape[0]
    ca, cb = np.empty((kb, h_iu.size), dtype=np.int64), np.empty((kb, h_iu.size), dtype=np.int64)
    kernel(base_a, base_b, vd, ca, cb)
    out = []
    for c in (ca, cb):
        p = c.astype(np.float64)
        p /= n_perm
        out.append(1.0 - np.mean(np.abs(p - h_iu[None, :]), axis=1))
    return out[0], out[1]


def _spa_batch(u: np.ndarray, h_iu: np.ndarray, n_perm: int) -> np.ndarray:
    """SPA of a batch of hybrids from their ``U`` (kb, n_sys, R_p): p_ij = share of r with U_i >= U_j."""
    kb, n_sys, _ = u.shape
    p = np.empty((kb, h_iu.size))
    col = 0
    for i in range(n_sys - 1):
        width = n_sys - 1 - i
        p[:, col:col + width] = np.count_nonzero(u[:, i:i + 1, :] >= u[:, i + 1:, :], axis=2)
        col += width
    p /= n_perm
    return 1.0 - np.mean(np.abs(p - h_iu[None, :]), axis=1)


# --------------------------------------------------------------------------------------------- acc-t
def _acc_t(metrics: Mapping[str, Any], human: Any, n_resamples: int, seed: int
           ) -> tuple[np.ndarray, Any, int, int, np.ndarray]:
    ms, h = _inputs(metrics, human, 2, allow_human_nan=True)
    n_sys, n_seg = h.shape
    keep = np.isfinite(h)
    items = np.broadcast_to(np.arange(n_seg)[None, :], h.shape)[keep]
    hv = h[keep]
    try:
        layout = _unit_pairs(items)
    except InputError:
        raise InputError("no segment has human scores for two systems; segment-level accuracy compares the systems' "
                         "outputs of one segment", argument="human") from None
    dh = hv[layout.iu] - hv[layout.ju]
    if not np.any(dh != 0):
        raise InputError("human scores are tied on every pair of outputs of a segment (ties everywhere); "
                         "segment-level accuracy cannot rank metrics", argument="human")
    wts = layout.weights
    verdicts, eps, values = [], [], []
    for m in ms:
        mv = m[keep]
        dm = mv[layout.iu] - mv[layout.ju]
        e = _calibrate(dm, dh, wts)
        vd = _verdicts(dm, dh, e)
        verdicts.append(vd * wts)
        eps.append(e)
        values.append(float(vd @ wts))
    vmat = np.column_stack(verdicts)  # (pairs, metrics)
    # (n_resamples, metrics): sum_p s_p w_p v_m,p with signs s = +-1, streamed (pairs can be ~10^5)
    proj = np.zeros((n_resamples, vmat.shape[1]))
    row = 0
    for block in _coins(seed, n_resamples, (dh.size,)):
        proj[row:row + len(block)] = (block * 2.0 - 1.0) @ vmat
        row += len(block)

    def null(i: int, j: int) -> np.ndarray:
        return proj[:, i] - proj[:, j]

    return np.array(values), null, n_sys, n_seg, np.array(eps)

