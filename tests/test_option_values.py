"""The option values of issue 32 (docs/design.md, "Options are values"): each checks itself when built, with
one InputError that names the setting (as the keyword it replaces did), and ``with_`` changes some settings
without touching the others. The numbers they lead to are checked by the tests of each analysis."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from xleval.audit import AUDIT_RESAMPLING
from xleval.calibration import HumanScale, LabelDraw, PlanTarget
from xleval.decision import DEFAULT_PROCEDURE, Caller
from xleval.exceptions import InputError
from xleval.fairness import ResourceFit
from xleval.judges import JudgeLocal, JudgeServer
from xleval.leaderboard import ScoreReading
from xleval.meta import Clustering, MetaStatistics, Spans
from xleval.metrics._judge_options import judge_settings
from xleval.output_checks import FlagThresholds
from xleval.stats import DEFAULT_RESAMPLING, FRESH_RESAMPLING, Resampling
from xleval.synthetic import MetricBias

BAD = [
    (lambda: Resampling(n_resamples=0), "n_resamples must be an integer >= 1"),
    (lambda: Resampling(n_resamples=True), "n_resamples must be an integer >= 1"),
    (lambda: Resampling(level=1.0), "level must be a confidence level"),
    (lambda: Resampling(random_state=True), "random_state must be a non-negative integer, None or a numpy Generator"),
    (lambda: Resampling(random_state=-1), "random_state must be a non-negative integer"),
    (lambda: MetaStatistics(average_by="segment"), "average_by='segment': use one of none, item, system"),
    (lambda: MetaStatistics(system_scores="mean"), "system_scores='mean': use one of complete, judged"),
    (lambda: Clustering(statistics=["sys_f1"]), "clusters: ['sys_f1'] cannot be clustered"),
    (lambda: Clustering(ties="exact"), "cluster_ties='exact': use one of count, mtme"),
    (lambda: Spans(predicted={"judge": pd.DataFrame()}), "predicted_spans= are scored against gold_spans="),
    (lambda: HumanScale(range=(100, 0)), "human_range=(100, 0): the bounds must be finite with LOW < HIGH"),
    (lambda: PlanTarget(confidence=1.5), "confidence=1.5: expected a number between 0 and 1"),
    (lambda: PlanTarget(residual_sd=0), "residual_sd=0: expected a positive number"),
    (lambda: LabelDraw(rows="best"), "rows='best': use one of stratified, random, systems, spread"),
    (lambda: LabelDraw(allocation="best"), "allocation='best': use one of equal, neyman"),
    (lambda: FlagThresholds(near_copy=0), "near_copy=0: expected a number in (0, 100]"),
    (lambda: JudgeLocal(batch_size=0), "batch_size must be an integer >= 1, got 0"),
    (lambda: JudgeLocal(precision="fp8"), "precision='fp8': a local judge runs in"),
    (lambda: JudgeServer(timeout=0), "timeout must be a positive number of seconds, got 0"),
    (lambda: JudgeServer(retries=-1), "retries must be an integer >= 0, got -1"),
]


@pytest.mark.parametrize("make, message", BAD, ids=[m for _, m in BAD])
def test_a_bad_setting_is_one_input_error_naming_it(make, message):
    with pytest.raises(InputError) as info:
        make()
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_the_arguments_are_carried_as_the_keywords_were_named():
    for make, argument in ((lambda: MetaStatistics(average_by="x"), "average_by"),
                           (lambda: Clustering(ties="x"), "cluster_ties"),
                           (lambda: HumanScale(range="x"), "human_range"),
                           (lambda: LabelDraw(rows="x"), "rows"), (lambda: JudgeServer(concurrency=0), "concurrency"),
                           (lambda: Resampling(random_state=1.5), "random_state")):
        with pytest.raises(InputError) as info:
            make()
        assert info.value.argument == argument


def test_defaults_are_the_keywords_defaults_and_with_changes_only_what_it_names():
    assert Resampling(1000, 0.95, 0) == DEFAULT_RESAMPLING and FRESH_RESAMPLING.random_state is None
    assert Resampling(2000, 0.95, 0) == AUDIT_RESAMPLING
    assert DEFAULT_RESAMPLING.with_(n_resamples=20) == Resampling(20, 0.95, 0)
    assert DEFAULT_PROCEDURE.resampling == Resampling(DEFAULT_PROCEDURE.n_resamples, DEFAULT_PROCEDURE.level,
                                                      DEFAULT_PROCEDURE.random_state)
    generator = np.random.default_rng(1)
    assert Resampling(random_state=generator).random_state is generator  # kept as given, as random_state= was
    for value in (MetaStatistics(), Clustering(), Spans(), HumanScale(), PlanTarget(), LabelDraw(), ScoreReading(),
                  Caller(), ResourceFit(), FlagThresholds(), JudgeLocal(), JudgeServer(), MetricBias()):
        assert dataclasses.is_dataclass(value) and type(value).__dataclass_params__.frozen
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.x = 1  # type: ignore[attr-defined]
        field = dataclasses.fields(value)[0]
        changed = value.with_(**{field.name: getattr(value, field.name)})
        assert type(changed) is type(value)
    assert Clustering(statistics="spa").statistics == ("spa",)  # one statistic, as clusters="spa" was
    assert not Clustering() and Clustering(task="wmt24") and not Spans() and Spans(critical=10)


def test_a_bare_scale_name_is_a_human_scale():
    assert HumanScale.of("esa") == HumanScale(name="esa") and HumanScale.of(None) == HumanScale()
    given = HumanScale("mqm", higher_is_better=False, range=[-25, 0])
    assert HumanScale.of(given) is given and given.range == (-25.0, 0.0)


def test_the_registry_still_takes_a_judges_settings_one_by_one():
    options = judge_settings({"prompt": "da", "batch_size": 2, "timeout": 30.0, "retries": 1})
    assert options == {"prompt": "da", "local": JudgeLocal(batch_size=2),
                       "server": JudgeServer(timeout=30.0, retries=1)}
    kept = judge_settings({"server": JudgeServer(concurrency=2), "timeout": 5.0})
    assert kept == {"server": JudgeServer(concurrency=2, timeout=5.0)}
    with pytest.raises(InputError, match="concurrency must be an integer >= 1"):
        judge_settings({"concurrency": 0})


def test_a_bad_precision_is_said_as_the_flag_on_the_command_line():
    """The neural and local-judge precision messages name ``precision=`` (before: "precision must be one of
    ('fp32', 'fp16'), got 'bf16'", which the command line could not turn into its flag)."""
    from xleval.cli import score as score_module
    from xleval.cli._errors import cli_words

    command = next(v for v in vars(score_module).values() if getattr(v, "name", None) == "score"
                   and hasattr(v, "params"))
    with pytest.raises(InputError) as refused:
        JudgeLocal(precision="bf17")
    assert cli_words(str(refused.value), command).startswith("--precision bf17: a local judge runs in fp32")
