"""The one place that turns a ``random_state`` argument into a numpy Generator and a seed to record."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["make_rng", "resolve_seed", "child_seeds"]

_MESSAGE = "random_state must be a non-negative integer, None or a numpy Generator; got {!r}"


def make_rng(random_state: Any) -> tuple[np.random.Generator, int | None]:
    """A Generator and the integer seed to record: drawn fresh when ``random_state`` is None (so a
    result can be reproduced from its own record), None when a Generator is passed."""
    if isinstance(random_state, np.random.Generator):
        return random_state, None
    seed = resolve_seed(random_state)
    return np.random.default_rng(seed), seed


def resolve_seed(random_state: Any) -> int:
    """One integer seed: the given one, a fresh one for None, or one drawn from a Generator (for
    procedures that must reuse one seed across several resampling steps)."""
    from ..exceptions import InputError

    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**32 - 1))
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral) or int(random_state) < 0:
        raise InputError(_MESSAGE.format(random_state), argument="random_state", value=random_state)
    return int(random_state)


def child_seeds(seed: int, n: int) -> list[int]:
    """``n`` independent integer seeds derived from one recorded ``seed`` (numpy's SeedSequence), for a
    procedure that resamples several parts on their own streams and records only ``seed``."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(n)]
