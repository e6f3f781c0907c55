"""The compiled (numba) inner loop of SPA's significance clusters; imported only when numba is installed.

:func:`spa_hybrid_counts` is ``_spa_batch``'s counting, fused: for every resample and system pair it counts the
permutations where system i's ``U`` is at least system j's, for both hybrids of a metric pair at once, without
the (resamples x pairs x permutations) temporaries of the numpy path. Each comparison is the same IEEE
operation as there (``base + vd >= base + vd``), so the counts, and everything computed from them, are equal.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["spa_hybrid_counts"]


@njit(cache=True, nogil=True)
def spa_hybrid_counts(base_a: np.ndarray, base_b: np.ndarray, vd: np.ndarray, counts_a: np.ndarray,
                      counts_b: np.ndarray) -> None:  # pragma: no cover - compiled
    """counts_a[k, pair] = #{r: (base_b + vd[k])[i, r] >= (base_b + vd[k])[j, r]} (the hybrid taking metric a at
    the swapped cells); counts_b likewise for ``base_a - vd[k]``. Pairs (i < j) in ``np.triu_indices`` order."""
    kb, n_sys, n_perm = vd.shape
    for k in range(kb):
        col = 0
        for i in range(n_sys - 1):
            for j in range(i + 1, n_sys):
                ca = 0
                cb = 0
                for r in range(n_perm):
                    if base_b[i, r] + vd[k, i, r] >= base_b[j, r] + vd[k, j, r]:
                        ca += 1
                    if base_a[i, r] - vd[k, i, r] >= base_a[j, r] - vd[k, j, r]:
                        cb += 1
                counts_a[k, col] = ca
                counts_b[k, col] = cb
                col += 1
