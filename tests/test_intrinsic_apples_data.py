"""[data] The Apples-to-Apples replication on the shared data: key findings asserted from the data."""
from __future__ import annotations

import importlib.util
import warnings

import pytest

from conftest import REPO, require_data

pytestmark = [pytest.mark.data, pytest.mark.slow]


@pytest.fixture(scope="module")
def replication():
    data = require_data("apples", "results.parquet").parents[1]
    spec = importlib.util.spec_from_file_location("apples_replication", REPO / "examples" / "apples_replication.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exclusions are counted in the results, checked below
        return module, module.run(data)


def _corr(res, corpus, metric, length):
    t = res["c1"][corpus]["paper"]
    return t[(t["metric"] == metric) & (t["length"] == f"{length}_per_sentence")].iloc[0]


@pytest.mark.parametrize("corpus", ["flores", "pud", "parallel10"])
def test_bpb_follows_bytes_and_sent_nll_less_so(replication, corpus):
    _, res = replication
    bpb = _corr(res, corpus, "bpb", "bytes")
    assert bpb["estimate"] < 0 and bpb["p_value"] < 0.01  # more bytes for the same content -> lower BPB
    for length in ("tokens", "chars", "bytes"):
        assert abs(_corr(res, corpus, "sent_nll", length)["estimate"]) < abs(bpb["estimate"])


def test_sent_nll_not_significant_on_flores(replication):
    _, res = replication
    assert all(_corr(res, "flores", "sent_nll", L)["p_value"] >= 0.01 for L in ("tokens", "chars", "bytes"))
    assert _corr(res, "flores", "token_nll", "tokens")["p_value"] < 0.01  # token NLL follows tokens


def test_vocab_size_moves_ppl_not_sent_nll(replication):
    _, res = replication
    v = res["c1"]["flores"]["vocab_paper"].set_index("metric")
    assert v.loc["ppl", "rel_range_median"] > 10 * v.loc["sent_nll", "rel_range_median"]
    assert v.loc["ppl", "spearman_p"] < 0.01 and v.loc["ppl", "spearman_within"] > 0


def test_translation_choice_never_flips_sent_nll(replication):
    _, res = replication
    s = res["c2"]["summary"].set_index("metric")
    assert s.loc["sent_nll", "settings_with_flip"] == 0
    assert s.loc["ppl", "settings_with_flip"] + s.loc["token_nll", "settings_with_flip"] > 0


def test_single_token_sentences_counted_not_averaged(replication):
    _, res = replication
    excluded = res["c1"]["parallel10"]["excluded"]
    assert sum(v for k, v in excluded.items() if "zero scored tokens" in k) == 148  # data README: 148 pairs


def test_document_is_generated_from_the_same_findings(replication):
    module, res = replication
    text = module.render(res, "test")
    for claim, ok, _ in module.findings(res):
        assert f"| {claim} | {'**yes**' if ok else '**no**'} |" in text
