"""Figure builders: they draw what the report holds, and importing xleval.fairness loads no matplotlib."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from import_check import loaded_by
from xleval.fairness import fairness_gaps, plot_elasticity, plot_levels, plot_power_curve, plot_ratios
from xleval.stats import Resampling

SIZES = {"en": 300.0, "de": 66.0, "fr": 56.0, "sw": 1.6, "am": 0.8}
ACC = {"en": 0.9, "de": 0.86, "fr": 0.84, "sw": 0.7, "am": 0.56}  # multiples of 1/50


@pytest.fixture(scope="module")
def report():
    rows = [{"lang": lang, "correct": float(i < round(ACC[lang] * 50)), "size": SIZES[lang]}
            for lang in ACC for i in range(50)]
    return fairness_gaps(pd.DataFrame(rows), "correct", "lang", resource="size", floor=0.6,
                         resampling=Resampling(n_resamples=50, random_state=0))


def test_levels_figure_has_one_bar_per_language_and_the_floor(report):
    fig = plot_levels(report)
    ax = fig.axes[0]
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == pytest.approx(sorted(ACC.values()))
    assert any(np.allclose(line.get_ydata(), 0.6) for line in ax.get_lines())


def test_ratio_and_elasticity_figures(report):
    ratios = plot_ratios(report).axes[0]
    assert len(ratios.patches) == len(ACC) - 1
    el = plot_elasticity(report).axes[0]
    xs = sorted(np.asarray(el.collections[0].get_offsets())[:, 0].tolist())
    assert xs == pytest.approx(sorted(np.log(list(SIZES.values())).tolist()))


def test_power_curve_decreases():
    ax = plot_power_curve([0.1, 0.2, 0.5]).axes[0]
    ys = ax.get_lines()[0].get_ydata()
    assert list(ys) == sorted(ys, reverse=True)


def test_import_loads_no_matplotlib():
    assert loaded_by("import xleval.fairness") == []
