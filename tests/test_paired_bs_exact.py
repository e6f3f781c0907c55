"""``--paired-bs`` means and intervals are sacrebleu's to the last digit: sacrebleu scores every resample from
float32 sums with its own ``_compute_score_from_stats`` (chrF and TER in float32) and takes their mean in that
type; xleval's float64 differed from the seventh digit, and in the printed one where it fell on a tie (TER
``42.8 ± 31.2`` printed ``± 31.3``). The oracle is sacrebleu's own ``PairedTest`` on the same texts."""
import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest

from xleval.metrics import compare_systems

REF = ["the cat sat on the mat", "hello world", "The quick brown fox jumps .", "a b c d e f g",
       "we will meet tomorrow at noon", "it rained all day long"]
SYSTEMS = {
    "a": ["the cat sat", "hello", "The quick brown fox jumped .", "a b c d", "we meet tomorrow", "it rained"],
    "b": ["the cat sat on a mat", "hello there world", "the quick brown fox jumps.", "a b c d e f",
          "we will meet at noon tomorrow", "it rained the whole day"],
    "c": ["a cat sat on the mat", "hello world", "The fast brown fox jumps .", "a b x d e f g",
          "tomorrow we meet", "all day it rained long"],
}


@pytest.fixture(scope="module")
def sacrebleus():
    rng = np.random.default_rng(0)
    keep = rng.integers(0, len(REF), 40)  # 40 segments: the bootstrap's order statistics are not all ties
    refs = [REF[i] for i in keep]
    systems = {name: [hyps[i] for i in keep] for name, hyps in SYSTEMS.items()}
    metrics = {"BLEU": BLEU(), "chrF2": CHRF(), "TER": TER()}
    test = PairedTest(list(systems.items()), metrics, references=[refs], test_type="bs", n_samples=1000)
    _, scores = test()
    return refs, systems, scores


def test_paired_bootstrap_means_intervals_and_p_values_are_sacrebleus(sacrebleus):
    refs, systems, theirs = sacrebleus
    ours = compare_systems(systems, refs, ("bleu", "chrf", "ter"), test="bs")
    for column, metric in (("BLEU", "bleu"), ("chrF2", "chrf"), ("TER", "ter")):
        for name, result in zip(theirs["System"], theirs[column], strict=True):
            got = ours.results[metric][name]
            assert got.score == pytest.approx(result.score, rel=1e-12)
            assert float(got.mean) == float(result.mean), (metric, name)  # to the last digit
            assert float(got.ci) == float(result.ci), (metric, name)
            if result.p_value is not None:
                assert got.p_value == result.p_value, (metric, name)
