"""A small table the report and decision tests share: three language pairs of 5 systems whose human level differs
by pair (``levels``) while the metric is blind to it, and whose systems step up alike on both (``step``)."""
from __future__ import annotations

import numpy as np
import pandas as pd

PAIRS = ("en-de", "en-ja", "en-zh")


def three_pairs(rng: np.random.Generator, levels: tuple[float, float, float] = (-10.0, 0.0, 10.0), *,
                segments: int = 40, step: float = 2.0, spread: float = 4.0, human_sd: float = 3.0,
                metric_sd: float = 2.0) -> pd.DataFrame:
    """Columns lp, system, seg_id, metric, human (every segment judged); a segment's quality ``spread * q`` moves
    both scores, each with its own noise."""
    parts = []
    for lp, level in zip(PAIRS, levels, strict=True):
        for s in range(5):
            q = rng.normal(size=segments)
            human = 70 + level + step * s + spread * q + rng.normal(0, human_sd, segments)
            parts.append(pd.DataFrame({"lp": lp, "system": f"s{s}", "seg_id": np.arange(segments),
                                       "metric": 50 + step * s + spread * q + rng.normal(0, metric_sd, segments),
                                       "human": human}))
    return pd.concat(parts, ignore_index=True)
