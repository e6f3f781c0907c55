"""``xleval fairness gaps|min-size``: thin wiring over the library, JSON output, one-line errors."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import NormalIndPower

from xleval.fairness import fairness_gaps
from xleval.stats import Resampling


@pytest.fixture
def items_file(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"language": lang, "qid": i, "f1": float(rng.random() < p), "tokens": size, "order": order}
            for lang, p, size, order in (("en", 0.9, 3e11, "SVO"), ("de", 0.8, 7e10, "SOV"), ("sw", 0.6, 2e9, "SVO"),
                                         ("am", 0.35, 8e8, "SOV"), ("hi", 0.7, 2e10, "SOV"))
            for i in range(40)]
    path = tmp_path / "items.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_gaps_json_equals_the_library(cli, items_file):
    rc, out, _ = cli("fairness", "gaps", str(items_file), "--metric", "f1", "--by", "language",
                     "--n-resamples", "100", "--seed", "3", "--format", "json")
    assert rc == 0
    payload = json.loads(out)
    expected = fairness_gaps(pd.read_csv(items_file), "f1", "language",
                             resampling=Resampling(n_resamples=100, random_state=3)).to_dict()
    assert payload["result"] == json.loads(json.dumps(expected))


def test_gaps_text_with_resource_typology_and_paired_items(cli, items_file):
    rc, out, err = cli("fairness", "gaps", str(items_file), "--metric", "f1", "--by", "language", "--item", "qid",
                       "--resource", "tokens", "--typology", "order", "--typology", "script", "--floor", "0.5",
                       "--target-gain", "0.1", "--n-resamples", "50")
    assert rc == 0
    assert "paired" in out and "typological bias" in out and "order=" in out
    assert "elasticity" in err and "per doubling" in err


def test_gaps_per_model_and_where(cli, tmp_path, items_file):
    df = pd.read_csv(items_file)
    both = pd.concat([df.assign(model="a", split="test"), df.assign(model="b", split="test"),
                      df.assign(model="c", split="dev")])
    path = tmp_path / "models.tsv"
    both.to_csv(path, sep="\t", index=False)
    rc, out, _ = cli("fairness", "gaps", str(path), "--metric", "f1", "--by", "language", "--model", "model",
                     "--where", "split=test", "--n-resamples", "20", "--format", "json")
    assert rc == 0
    assert set(json.loads(out)["result"]) == {"a", "b"}


def test_gaps_errors_are_one_line(cli, items_file):
    rc, _, err = cli("fairness", "gaps", str(items_file), "--metric", "f1", "--by", "language", "--reference", "fr")
    assert rc == 2 and err.startswith("xleval: error: reference language 'fr'") and err.count("\n") == 1
    rc, _, err = cli("fairness", "gaps", str(items_file), "--metric", "acc", "--by", "language")
    assert rc == 2 and "missing required column(s) ['acc']" in err


def test_min_size_matches_statsmodels(cli):
    rc, out, _ = cli("fairness", "min-size", "--effect", "0.2", "--power", "0.9", "--alpha", "0.01", "--format", "json")
    assert rc == 0
    res = json.loads(out)
    assert res["n"] == math.ceil(NormalIndPower().solve_power(0.2, alpha=0.01, power=0.9, ratio=1.0) - 1e-6)


def test_min_size_inverse_question(cli):
    rc, out, _ = cli("fairness", "min-size", "--n", "300", "--baseline", "0.85", "--format", "json")
    res = json.loads(out)
    assert rc == 0 and 0 < res["difference"] < 0.15 and res["other_low"] < 0.85


def test_min_size_paired_needs_discordance(cli):
    rc, _, err = cli("fairness", "min-size", "--effect", "0.05", "--paired")
    assert rc == 2 and "--discordant" in err
    rc, out, _ = cli("fairness", "min-size", "--effect", "0.05", "--paired", "--discordant", "0.2")
    assert rc == 0 and "mcnemar" in out


def test_gaps_read_lower_is_better_from_the_metric_signature(cli, tmp_path):
    """A MetricX column (dir:lower in its signature) is a loss without the user saying it: the worst language
    is the one with the highest score; --higher-is-better overrides the signature."""
    from xleval.io import write_table

    df = pd.DataFrame({"lang": ["en"] * 3 + ["ha"] * 3, "metricx": [2.0, 2.5, 1.5, 9.0, 10.0, 8.0]})
    path = tmp_path / "scores.parquet"
    write_table(df, path, metadata={"signatures": {"metricx": "metricx|variant:24-ref|dir:lower|xleval:0"}})
    worst = {}
    for flag in ((), ("--higher-is-better",)):
        rc, out, err = cli("fairness", "gaps", str(path), "--metric", "metricx", "--by", "lang", "--n-resamples", "50",
                           "--format", "json", *flag)
        assert rc == 0, err
        worst[flag] = json.loads(out)["result"]["summary"]["worst"]["estimate"]
    assert worst[()] == pytest.approx(9.0)  # ha's mean: the highest error is the worst
    assert worst[("--higher-is-better",)] == pytest.approx(2.0)


def test_an_estimate_and_its_interval_share_one_precision(cli, items_file):
    """The text table wrote '8.7 [8.629, 8.759]' (each number to 4 significant digits, a round estimate
    losing its zeros) and 'reference None' under --reference none."""
    import re

    rc, out, err = cli("fairness", "gaps", str(items_file), "--metric", "f1", "--by", "language", "--reference",
                       "none", "--n-resamples", "100", "--seed", "3")
    assert rc == 0, err
    assert "no reference" in out and "reference None" not in out
    cells = re.findall(r"(-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]", out)
    assert len(cells) >= 5
    for cell in cells:
        decimals = {len(x.partition(".")[2]) for x in cell}
        assert len(decimals) == 1, cell
    # the planted rates: en 0.9 of 40 items; the library's estimate, shown to three significant digits
    rep = fairness_gaps(pd.read_csv(items_file), "f1", "language", reference=None,
                        resampling=Resampling(n_resamples=100, random_state=3))
    en = next(g for g in rep.languages if g.language == "en")
    assert f"{en.mean.estimate:.3f} [{en.mean.ci_low:.3f}, {en.mean.ci_high:.3f}]" in out
