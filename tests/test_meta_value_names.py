"""MetaEvaluation.value: a misspelt group, metric or statistic is refused with the names there are; before, it was
NaN, the same answer as a statistic not computed, so `value("de-en", "chrf", "sys_pearsn")` looked like a missing
value instead of a typo."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss

from xleval.exceptions import InputError
from xleval.meta import MetaStatistics, meta_evaluate
from xleval.stats import Resampling


def _result():
    rng = np.random.default_rng(0)
    rows = []
    for lp in ("en-de", "de-en"):
        for s in ("A", "B", "C", "D"):
            q = rng.normal()
            for i in range(10):
                h = q + rng.normal()
                rows.append({"lp": lp, "system": s, "seg_id": i, "human": h, "good": h + rng.normal(scale=0.5)})
    df = pd.DataFrame(rows)
    res = meta_evaluate(df, ["good"], "human", statistics=MetaStatistics(spa=False, pdp=False),
                        resampling=Resampling(n_resamples=20))
    return df, res


def test_a_misspelt_name_is_refused_and_a_real_cell_read():
    df, res = _result()
    means = df[df.lp == "en-de"].groupby("system")[["good", "human"]].mean()
    assert res.value("en-de", "good", "sys_pearson") == pytest.approx(ss.pearsonr(means.good, means.human)[0])
    for args, named in ((("en-dd", "good", "sys_pearson"), "group 'en-dd'"),
                        (("en-de", "goood", "sys_pearson"), "metric 'goood'"),
                        (("en-de", "good", "sys_pearsn"), "statistic 'sys_pearsn'")):
        with pytest.raises(InputError, match=named):
            res.value(*args)
