"""Anchored calibration: metric scores mapped onto a human scale per group, from few human labels.

The metric side uses every row; the human side only the rows that carry a label (e.g. 25-200
judged segments per language among thousands of scored rows). For row ``i`` of group ``g``
(language pair, target language...) and system ``s``::

    human_i = a_g + B * m_s + C * (x_i - m_s) + e_i

``x_i`` is the metric score and ``m_s`` the mean score of the row's system in its group, over all
of its rows (labelled or not). So the mean of the calibrated rows of a system is ``a_g + B * m_s``:
system scores come out on the human scale with the *between-system* slope ``B``, while single
segments move with the *within-system* slope ``C`` (on WMT21 the between-system slope of human
scores on chrF is about twice the segment one: a system's mean chrF is a more reliable measure of
its quality than one segment's chrF). In a table with one row per system (or without a system
column) ``m_s = x_i`` and there is one slope.

* **Slopes** are common to all groups (least squares with one intercept per group, on the labelled
  rows; cluster-robust covariance by system): 25 labels per group cannot determine a slope, seven
  groups of them can. Their sign is the direction of the human scale: found in the labels
  (``human_higher_is_better=None``, only when the better determined slope has |z| >= t(0.975, clusters - 1),
  i.e. 1.96 with many systems: else refused,
  or with ``strict=False`` offsets only) or given; with a direction, ``C`` is kept on its side of 0 and
  ``|B| >= |C|`` (a system mean is at least as informative as one segment). A slope estimated on the
  other side of the direction is not used (``B`` becomes ``C``, ``C`` becomes 0) and a warning says so.
  ``B`` from a few systems per group is noisy: it is shrunk toward ``C`` by positive-part James-Stein,
  ``B_used = C + max(0, 1 - Var(B - C) / (B - C)^2) * (B - C)`` (``between_shrinkage="none"``: not).
* **Offsets** ``a_g`` are the groups' mean residuals over their labels (the difference estimator
  of prediction-powered inference: calibrated group mean = mean of the map over all rows + mean
  residual over the labelled rows), pulled toward the common offset by empirical Bayes
  (Paule-Mandel between-group variance ``tau2``, weight ``tau2 / (tau2 + v_g)``) only as far as the
  number of groups supports it (``shrinkage="auto"``: none with 3 groups or fewer, Morris's factor
  ``(k - 3) / (k - 1)`` on the shrinkage above; ``"eb"``: full empirical Bayes, the format-2 default).
  A group without labels, or unseen in fit, gets the common offset (``calibration_source = pooled``).
* **Bounded scale** (``human_range=(lo, hi)``): every calibrated value (a row, or a system score in a
  table of system scores) is clipped to the range, so system means of calibrated rows stay inside it.
  Undeclared, a fit whose labels lie in [0, 1] or [0, 100] but whose calibrated system means leave that
  range says so (a warning), and guesses nothing.
* **Intervals** (:meth:`AnchoredCalibrator.interval`) carry the uncertainty of the offset and the
  slopes that comes from the few labels (normal approximation): they are intervals for the
  expected human score of rows like this one, not for one judge's score.

Nothing of the human scale is used beyond the labelled rows given to ``fit``. Persistence follows
LGN: versioned JSON with the metric signature and a SHA-256 checksum. See docs/calibration.md.
"""
from __future__ import annotations

import copy
import math
import os
import warnings
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import special, stats

from .. import __version__
from .._base.grouping import combined_codes, group_index
from .._base.signature import check_compatible
from ..exceptions import (
    DataQualityWarning,
    InputError,
    ModelFileError,
    NotFittedError,
    ScaleRangeWarning,
    SmallGroupWarning,
    UnseenGroupWarning,
)
from ..table import DEFAULT_BY, numeric_column, require_columns, warn_contradicting_labels
from ._lgn import refuse_groups_beside_columns
from ._params import ParamsMixin
from ._persist import _read_json as read_calibrator_json
from ._persist import check_loaded_columns, check_variance, load_checked, save_checked
from ._pooling import (
    MIN_GROUPS_MIXED,
    PRIORS,
    SHRINKAGE_MODES,
    MixedShrinkage,
    OffsetShrinkage,
    mixed_offsets,
    pooled_slopes,
    shrink_offsets,
    shrink_slope_toward,
)
from ._scales import human_scale_direction, one_known_scale
from ._spelling import SpellingIndex

__all__ = ["AnchoredCalibrator", "FORMAT_VERSION"]

FORMAT = "xleval.AnchoredCalibrator"
FORMAT_VERSION = 4
READABLE_VERSIONS = (3, 4)  # format 3: no prior (= "common")
SHRINKAGE = SHRINKAGE_MODES
BETWEEN_SHRINKAGE = ("james-stein", "none")
SETTLED_LEVEL = 0.975  # a slope's sign is settled when |z| reaches the two-sided 95% quantile of t(clusters - 1)
#: labels inside one of these look like a bounded scale (probabilities, DA 0-100); the first that holds them counts
BOUNDED_LOOKING = ((0.0, 1.0), (0.0, 100.0))
PRIOR_LABELS = 5  # a group's residual variance is pooled with the common one as if that were worth 5 labels
FEW_LABELS = 10
FEW_SYSTEMS = 3  # in a table of system scores a label is a system


class AnchoredCalibrator(ParamsMixin):
    """Map metric scores onto a human scale per group from sparse human labels (module docstring).

    Parameters
    ----------
    by : str or list of str
        Group columns (``lp``, ``tgt_lang``...).
    score, human : str
        Column names of the metric score and the human score (NaN = not labelled) in a DataFrame.
    system : str or None
        System column: system means of the score give the between-system slope. Absent column or
        None: every row is its own unit (one slope).
    shrinkage : {"auto", "eb", "none"}
        ``auto``: offsets pulled toward the common one by empirical Bayes only as far as the number of
        labelled groups supports (none with 3 or fewer; Morris's factor with more); ``eb``: full
        empirical Bayes (the format-2 default); ``none``: each labelled group keeps its own mean residual.
    between_shrinkage : {"james-stein", "none"}
        The between-system slope shrunk toward the within-system one by positive-part James-Stein, or not.
    human_range : (float, float) or None
        Bounds of the human scale (e.g. ``(0, 100)`` for DA): calibrated values are clipped to them.
    human_higher_is_better : bool or None
        Direction of the human scale (MQM: False). None: found in the labels and reported.
    score_higher_is_better : bool
        Direction of the metric (False for TER, losses).
    fallback : {"pooled", "error"}
        Groups unseen in fit: the common offset (with an UnseenGroupWarning) or refuse.
    prior : {"mixed", "common"}
        What the offsets are pulled toward. ``mixed`` (default): a centre that mixes the raw scale's common
        offset and LGN's equal group levels, with the mix and the pull weighted by what the labels show
        (:func:`~xleval.calibration._pooling.mixed_offsets`; ``shrinkage="none"`` still keeps every group's own
        offset, and so does any shrinkage with two labelled groups, which cannot tell the mix). ``common``: the
        common offset, as far as ``shrinkage`` says (format 3 and before).
    """

    _output_suffix = "anchored"
    kind = "anchored"  # the calibrated column is <score>_anchored
    signature_: str | None = None  # the metric signature of the fitted scores (None: unknown or unfitted)

    def __init__(self, by: Any = DEFAULT_BY, score: str = "score", human: str = "human",
                 system: str | None = "system", shrinkage: str = "auto", human_higher_is_better: bool | None = None,
                 score_higher_is_better: bool = True, fallback: str = "pooled", between_shrinkage: str = "james-stein",
                 human_range: tuple[float, float] | None = None, prior: str = "mixed"):
        self.by = by
        self.score = score
        self.human = human
        self.system = system
        self.shrinkage = shrinkage
        self.human_higher_is_better = human_higher_is_better
        self.score_higher_is_better = score_higher_is_better
        self.fallback = fallback
        self.between_shrinkage = between_shrinkage
        self.human_range = human_range
        self.prior = prior

    # fitting -------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, groups=None, human=None, systems=None, signature: str | None = None,
            strict: bool = True) -> AnchoredCalibrator:
        """Fit on an EvalTable or a DataFrame with the ``score``, ``human``, ``by`` (and ``system``)
        columns, or on an array of scores with ``groups``, ``human`` (and ``systems``). Rows without a
        human score are the metric side; rows with both are the labels. ``y`` is ignored
        (scikit-learn's signature: the human scores come from the ``human`` column or ``human=``,
        the groups from the ``by`` columns, never from ``y``). A refused fit leaves the calibrator
        as it was before the call (or unfitted).

        ``strict`` (default) refuses labels that leave no map from score to human scale: the score
        does not vary within any group's labels, the labels contradict a given direction, or, with no
        direction given (``human_higher_is_better=None``), they do not settle it (|z| of the better
        determined slope against the 95% quantile of t with clusters - 1 degrees of freedom, 1.96 with
        many systems). ``strict=False`` fits the flat map (every row gets its group's offset) with a
        warning: the out-of-fold evaluation does, where a small draw of labels can do either by chance."""
        with self._all_or_nothing():
            return self._fit(self._table_frame(X), groups, human, systems, self._table_signature(X, signature), strict)

    def _fit(self, X, groups, human, systems, signature, strict) -> AnchoredCalibrator:
        self._validate()
        if isinstance(X, pd.DataFrame) and human is None and self.human == self.score:
            raise InputError(f"the human column and the score column are the same ({self.score!r}); anchored "
                             "calibration maps the score onto human scores: name the human column with human=",
                             argument="human", value=self.human)
        x, labels, h, sys_codes = self._inputs(X, groups, human, systems, need_human=True)
        codes, keys = labels
        self.by_ = self._resolve_by(X)
        self.format_version_ = FORMAT_VERSION
        notes: list[str] = []
        finite = np.isfinite(x)
        if not finite.any():
            raise InputError(f"score column {self.score!r} has no finite value; check score=", argument="score",
                             value=self.score)
        if np.ptp(x[finite]) == 0:
            raise InputError(f"score column {self.score!r} is constant ({x[finite][0]:g} in every row); "
                             "no map to the human scale can be fitted; check that it is the metric's column")
        labelled = finite & np.isfinite(h)
        self._check_labels(h, labelled, finite)
        m, self.level_ = _system_means(x, codes, sys_codes)
        design = np.column_stack([m, x - m])
        slopes = pooled_slopes(design[labelled], h[labelled], codes[labelled],
                               None if sys_codes is None else _cell_codes(codes, sys_codes)[labelled])
        directed = self._directed_slopes(slopes, notes, strict, self._direction_of_name(h[labelled]),
                                         shape_of_labels(h[labelled]))
        self.direction_, self.direction_source_ = directed.direction, directed.source
        self.slopes_ = {"between": directed.between, "within": directed.within,
                        "between_estimate": _num(slopes.coef[0]), "within_estimate": _num(slopes.coef[1]),
                        "between_unshrunk": directed.between_unshrunk, "between_weight": directed.weight,
                        "z": [_num(v) for v in directed.z], "cov": _effective_cov(slopes),
                        "identified": [bool(v) for v in slopes.identified], "n_labels": slopes.n,
                        "n_clusters": slopes.n_clusters}
        self._fit_offsets(x, h, m, codes, keys, labelled, finite, notes)
        self._check_scale(x, h, m, codes, keys, sys_codes, labelled, finite, notes)
        self.signature_ = signature
        self.notes_ = tuple(notes)
        return self

    def _validate(self) -> None:
        if self.shrinkage not in SHRINKAGE:
            raise InputError(f"shrinkage={self.shrinkage!r}: use one of {', '.join(SHRINKAGE)}")
        if self.between_shrinkage not in BETWEEN_SHRINKAGE:
            raise InputError(f"between_shrinkage={self.between_shrinkage!r}: use one of "
                             f"{', '.join(BETWEEN_SHRINKAGE)}", argument="between_shrinkage",
                             value=self.between_shrinkage)
        human_range_of(self.human_range)
        if self.prior not in PRIORS:
            raise InputError(f"prior={self.prior!r}: use one of {', '.join(PRIORS)}", argument="prior",
                             value=self.prior)
        if self.fallback not in ("pooled", "error"):
            raise InputError(f"fallback={self.fallback!r}: use 'pooled' or 'error'")
        if self.human_higher_is_better not in (None, True, False) or self.score_higher_is_better not in (True, False):
            raise InputError("human_higher_is_better must be True, False or None; score_higher_is_better True or False")

    def _inputs(self, X, groups, human, systems, need_human: bool):
        by = self._resolve_by(X) if not hasattr(self, "by_") or need_human else list(self.by_)
        X = self._table_frame(X)
        if isinstance(X, pd.DataFrame):
            require_columns(X, [self.score], argument="score")  # the one column check: names the argument
            require_columns(X, by if groups is None else [], argument="by")
            require_columns(X, [self.human] if need_human and human is None else [], argument="human")
            x = _numeric(X[self.score], self.score)
            refuse_groups_beside_columns(X, groups, by)  # LGN's rule: y in a Pipeline is never the groups
            gframe = X[by] if groups is None else _as_frame(groups, by)
            h = (_numeric(X[self.human], self.human, "human") if human is None
                 else _numeric(pd.Series(human), "human")) if need_human else None
            if h is not None and human is None:
                warn_contradicting_labels(X, self.human, h, system=self.system)
            if systems is None and self.system is not None and self.system in X.columns:
                systems = X[self.system]
        else:
            if groups is None or (need_human and human is None):
                raise InputError("with an array of scores, pass groups= (and human= to fit)")
            x = _numeric(pd.Series(np.asarray(X)), "scores")
            gframe = _as_frame(groups, by)
            h = _numeric(pd.Series(np.asarray(human)), "human") if need_human else None
        if len(gframe) != len(x) or (h is not None and len(h) != len(x)):
            raise InputError(f"{len(x)} scores, {len(gframe)} group rows and "
                             f"{len(x) if h is None else len(h)} human scores: they must be aligned")
        index = group_index(gframe, names=list(gframe.columns), where="data")
        sys_codes = None
        if systems is not None:
            systems = pd.Series(np.asarray(systems, dtype=object)) if not isinstance(systems, pd.Series) else systems
            if len(systems) != len(x):
                raise InputError(f"{len(x)} scores but {len(systems)} system values; they must be aligned")
            sys_codes = group_index([systems], names=[self.system or "system"], where="data").codes
        return x, (index.codes, index.labels()), h, sys_codes

    def _check_labels(self, h, labelled, finite) -> None:
        if not np.isfinite(h).any():
            raise InputError(f"human column {self.human!r} has no values: anchored calibration needs human scores for "
                             "some rows of each group (`xleval calibrate select` picks them); without any, use LGN")
        if labelled.sum() < 2:
            raise InputError(f"only {int(labelled.sum())} row(s) have both a score and a human score; anchored "
                             "calibration needs at least 2 (better 25 or more per group)")
        values = h[labelled]
        if np.ptp(values) == 0:
            raise InputError(f"human column {self.human!r} is constant ({values[0]:g} on every labelled row): there "
                             "is no human scale to map onto; check human=", argument="human", value=self.human)
        dropped = int((np.isfinite(h) & ~finite).sum())
        if dropped:
            warnings.warn(f"{dropped} row(s) with a human score but no finite score were left out of the labels",
                          DataQualityWarning, stacklevel=4)

    def _direction_of_name(self, labels: np.ndarray) -> bool | None:
        """Whether higher is better by the human column's own name, where it is a scale's name (``mqm``, ``esa``,
        ``da``, ``hter``, ...: :func:`~xleval.calibration.scale_named`; MQM by the labels' signs), else None. Read
        only where the labels do not settle the direction (:meth:`_direction`): the column's name is the user's
        word for the scale, and better than no slope at all."""
        if self.human_higher_is_better is not None or not isinstance(self.human, str):
            return None  # given: the name is never read
        return human_scale_direction(one_known_scale({self.human}), labels)

    def _directed_slopes(self, slopes, notes: list[str], strict: bool, named: bool | None = None,
                         shape: LabelShape | None = None) -> DirectedSlopes:
        """Constrain the slopes to the direction of the human scale (given, or the sign of the better
        determined slope when the labels settle it), replace a slope estimated on the other side, shrink
        ``B`` toward ``C``; report what was found and what was not used."""
        b, c = slopes.coef
        cov = np.asarray(slopes.cov, dtype=float)
        settled = settled_z(slopes.n_clusters)
        z_b = _z(b, cov[0, 0]) if slopes.identified[0] else math.nan
        z_c = _z(c, cov[1, 1]) if slopes.identified[1] else math.nan
        if not slopes.identified.any():
            if strict:
                raise InputError(f"the score does not vary within any group's labelled rows ({slopes.n} label(s)): no "
                                 "map from the score to the human scale can be fitted; label at least 2 rows of "
                                 "different scores in a group")
            notes.append("the score does not vary within any group's labels: no slope, each group gets its offset")
            warnings.warn(notes[-1], DataQualityWarning, stacklevel=4)
            return DirectedSlopes(0.0, 0.0, 1, "none", 0.0, 0.0, (z_b, z_c))
        # the direction is read off the better determined slope (the within-system one, usually)
        candidates = [(z, coef, other) for z, coef, other in ((z_c, c, (b, z_b)), (z_b, b, (c, z_c)))
                      if np.isfinite(coef)]
        z, ref, other = max(candidates, key=lambda zc: abs(zc[0]))
        direction, source = self._direction(z, ref, other, settled, notes, strict, named, shape)
        if source == "none":
            return DirectedSlopes(0.0, 0.0, direction, "none", 0.0, 0.0, (z_b, z_c))
        within = direction * max(direction * c, 0.0) if slopes.identified[1] else math.nan
        between = direction * max(direction * b, 0.0) if slopes.identified[0] else math.nan
        self._warn_other_side(b, z_b, c, z_c, direction, settled, notes)
        if not np.isfinite(within):
            within = between
        if not np.isfinite(between) or direction * between < direction * within:
            between = within  # a system mean tells at least as much as one of its segments
        weight = 1.0
        if self.between_shrinkage == "james-stein" and slopes.identified.all():
            # positive-part James-Stein of the estimated B - C toward 0, with the variance of the difference
            weight = shrink_slope_toward(float(b), float(c), float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]))
        used = within + weight * (between - within)
        if weight < 1.0 and between != within:
            notes.append(f"between-system slope {between:+.4g} shrunk toward the within-system one {within:+.4g} "
                         f"(James-Stein weight {weight:.2f}): {used:+.4g} per score point")
        if used == 0 and within == 0:
            notes.append("no relation between score and human labels in that direction: every row of a group gets "
                         "the group's offset")
            warnings.warn(notes[-1], DataQualityWarning, stacklevel=4)
        return DirectedSlopes(float(used), float(within), direction, source, float(between), float(weight), (z_b, z_c))

    def _direction(self, z: float, ref: float, other: tuple[float, float], settled: float, notes: list[str],
                   strict: bool, named: bool | None = None, shape: LabelShape | None = None) -> tuple[int, str]:
        """The direction of the human scale relative to the score and where it comes from (``given``; ``data``;
        ``name``: the human column's name where the labels do not settle it, ``named``; ``shape``: where neither
        does, the slope's lean when the labels' shape says the same, :func:`shape_of_labels`; ``none`` when
        nothing does and it was not given: no slope is used), from the better determined slope ``ref`` (z-score
        ``z``; ``other``: the other slope and its z, for the message)."""
        found = 1 if ref >= 0 else -1
        human_word = {1: "rises", -1: "falls"}
        by_name = None if named is None else (1 if named == self.score_higher_is_better else -1)
        if self.human_higher_is_better is None:
            notes.append(f"human scale direction from the labels: the human score {human_word[found]} with the "
                         f"score ({ref:+.4g} per score point, z = {z:.2f})")
            if abs(z) >= settled:
                if by_name is not None and found != by_name:
                    notes.append(f"human column {self.human!r}: its name says {'higher' if named else 'lower'} is "
                                 f"better, but the labels settle the other way (the human score {human_word[found]} "
                                 f"with the score, {ref:+.3g} per score point, z = {z:.2f}); the labels are taken: "
                                 f"if the name is right, name the scale with human_scale={self.human!r} (or say "
                                 "the direction with human_higher_is_better=)")
                    warnings.warn(notes[-1], DataQualityWarning, stacklevel=5)
                return found, "data"
            unsettled = (f"the labels do not settle the direction of the human scale (the better determined slope is "
                         f"{ref:+.3g} per score point, z = {z:.2f}{_other_words(*other)})")
            if by_name is not None:  # the column's name says it: better than a map with no slope, and said
                word = "higher" if named else "lower"
                notes.append(f"{unsettled}: human column {self.human!r} is taken by its name, {word} is better; if "
                             "the name does not mean that scale, say the direction with human_higher_is_better=True "
                             "or human_higher_is_better=False, or name the scale with human_scale=")
                warnings.warn(notes[-1], DataQualityWarning, stacklevel=5)
                return by_name, "name"
            by_shape = None if shape is None else (1 if shape.higher_is_better == self.score_higher_is_better else -1)
            if shape is not None and by_shape == found:  # two weak signs that agree: better than no slope, and said
                word, end = ("higher", "top") if shape.higher_is_better else ("lower", "bottom")
                notes.append(f"{unsettled}: the slope's lean and the labels' shape agree, so {word} is taken as "
                             f"better: the labels pile up at the {end} of their range (skewness "
                             f"{shape.skewness:+.2f}, z = {shape.z:.2f}), where ratings of good translations lie on "
                             f"{'a quality' if shape.higher_is_better else 'an error'} scale; if that is wrong, say "
                             "the direction with human_higher_is_better=True or human_higher_is_better=False, or "
                             "name the scale with human_scale=")
                warnings.warn(notes[-1], DataQualityWarning, stacklevel=5)
                return found, "shape"
            msg = (f"{unsettled}; say it with human_higher_is_better=True or human_higher_is_better=False, or name "
                   "the scale (e.g. human_scale='mqm'), or label more rows")
            if strict:  # a sign the labels do not settle could reverse every order within a group
                raise InputError(msg, argument="human_higher_is_better", value=None)
            notes.append(msg + ": no slope is used, each group gets its offset")
            warnings.warn(notes[-1], DataQualityWarning, stacklevel=5)
            return found, "none"
        direction = 1 if self.human_higher_is_better == self.score_higher_is_better else -1
        notes.append(f"human scale direction given: {'higher' if self.human_higher_is_better else 'lower'} is "
                     f"better; the labels give {ref:+.4g} per score point (z = {z:.2f})")
        if found != direction and abs(z) >= settled:
            msg = (f"the labels contradict the given direction of the human scale: the human score "
                   f"{human_word[found]} with the score ({ref:+.3g} per point, z = {z:.2f}); check "
                   "human_higher_is_better= and the score's direction")
            if strict:  # the slopes would be clamped to 0: a flat map that ignores the score
                raise InputError(f"human column {self.human!r}: {msg} (or leave it out to take the direction "
                                 "from the labels)")
            notes.append(msg)
            warnings.warn(msg, DataQualityWarning, stacklevel=5)
        return direction, "given"

    def _warn_other_side(self, b, z_b, c, z_c, direction, settled: float, notes: list[str]) -> None:
        """A slope estimated on the other side of the direction is not used (its sign would reverse the
        order of systems, or of segments, within a group): say which, and what stands in for it."""
        for level, coef, z, instead in (
                ("between-system", b, z_b, "system means move with the within-system slope"),
                ("within-system", c, z_c, "the rows of a system get their system's calibrated mean (slope 0)")):
            if np.isfinite(coef) and direction * coef < 0:
                unsettled = "" if abs(z) >= settled else ", a sign the labels do not settle"
                notes.append(f"the labels give the {level} slope {coef:+.3g} per score point (z = {z:.2f}{unsettled}), "
                             f"against the direction of the human scale: it is not used, {instead}")
                warnings.warn(notes[-1], DataQualityWarning, stacklevel=5)

    def _fit_offsets(self, x, h, m, codes, keys, labelled, finite, notes) -> None:
        slopes: dict[str, Any] = self.slopes_
        b, c = float(slopes["between"]), float(slopes["within"])
        resid = h - (b * m + c * (x - m))
        n_groups = len(keys)
        lab_codes = codes[labelled]
        n_lab = np.bincount(lab_codes, minlength=n_groups)
        r_sum = np.bincount(lab_codes, resid[labelled], minlength=n_groups)
        has = n_lab > 0
        r_mean = np.where(has, r_sum / np.maximum(n_lab, 1), np.nan)
        dev2 = np.bincount(lab_codes, (resid[labelled] - r_mean[lab_codes]) ** 2, minlength=n_groups)
        dof = np.maximum(n_lab - 1, 0)
        if dof.sum() > 0:
            s2_pool = dev2.sum() / dof.sum()
        else:  # every labelled group has one label: the spread around the common offset stands in
            s2_pool = float(np.var(resid[labelled], ddof=1))
        s2 = (dev2 + PRIOR_LABELS * s2_pool) / (dof + PRIOR_LABELS)
        floor = 1e-12 * max(1.0, float(np.nanmean(r_mean[has] ** 2)))
        v = np.maximum(s2 / np.maximum(n_lab, 1), floor)
        rows = np.bincount(codes[finite], minlength=n_groups)
        score_mean = np.bincount(codes[finite], x[finite], minlength=n_groups) / np.maximum(rows, 1)
        if self.prior == "mixed" and self.shrinkage != "none":
            # LGN's equal levels a_g + B * mean score_g put the offsets at -B * mean score_g (plus a constant)
            # flat prior on tau up to twice the spread of the mean residuals (at least one offset standard error)
            tau_max = max(float(np.sqrt(np.median(v[has]))), 2 * float(np.ptp(r_mean[has])))
            shrunk: OffsetShrinkage = mixed_offsets(r_mean[has], v[has], -b * score_mean[has], tau_max)
            if int(has.sum()) == 2:  # describe() shows lgn_weight as missing: say why where the fit is read
                notes.append("two labelled groups: each keeps its own labels' offset (the mixed prior weighs LGN's "
                             f"equal levels against the raw scale's common offset from {MIN_GROUPS_MIXED} labelled "
                             "groups on; docs/calibration.md)")
        else:
            shrunk = shrink_offsets(r_mean[has], v[has], mode=self.shrinkage)
        z = np.column_stack([m, x - m])
        z_mean = np.stack([np.bincount(lab_codes, z[labelled, j], minlength=n_groups) for j in range(2)], axis=1) \
            / np.maximum(n_lab, 1)[:, None]
        centre_w = (shrunk.weights[:, None] * z_mean[has]).sum(axis=0)
        new_var = shrunk.tau2 + shrunk.mean_var
        self.pooled_ = {"offset": shrunk.mean, "offset_var": _num(new_var), "mean_var": shrunk.mean_var,
                        "tau2": _num(shrunk.tau2), "centre": centre_w.tolist(), "residual_var": float(s2_pool)}
        if isinstance(shrunk, MixedShrinkage) and np.isfinite(shrunk.lgn_weight):  # NaN with 2 groups: no mix
            self.pooled_.update(lgn_weight=_num(shrunk.lgn_weight), lgn_weight_sd=_num(shrunk.lgn_weight_sd))
        self.groups_ = {}
        at = {int(g): j for j, g in enumerate(np.flatnonzero(has))}
        for g, key in enumerate(keys):
            entry: dict[str, Any] = {"n_rows": int(rows[g]), "n_labels": int(n_lab[g]),
                                     "score_mean": _num(score_mean[g])}
            if g in at:
                j = at[g]
                lam = float(shrunk.lam[j])
                entry.update(source="labels", residual_mean=float(r_mean[g]), residual_var=float(s2[g]),
                             variance=float(v[g]), weight=lam, offset=float(shrunk.offset[j]),
                             offset_var=float(shrunk.offset_var[j]),
                             centre=(lam * z_mean[g] + (1 - lam) * centre_w).tolist())
            else:
                entry.update(source="pooled", residual_mean=math.nan, residual_var=math.nan, variance=math.nan,
                             weight=0.0, offset=shrunk.mean, offset_var=_num(new_var), centre=centre_w.tolist())
            self.groups_[str(key)] = entry
        self._warn_groups(notes)

    def _check_scale(self, x, h, m, codes, keys, sys_codes, labelled, finite, notes: list[str]) -> None:
        """A declared range must hold the labels; undeclared, labels that look bounded while calibrated
        system means leave [0, 1] or [0, 100] get a warning (the range is never guessed)."""
        values = h[labelled]
        bounds = human_range_of(self.human_range)
        if bounds is not None:
            outside = values[(values < bounds[0]) | (values > bounds[1])]
            if len(outside):
                raise InputError(f"{len(outside)} human label(s) lie outside human_range={self.human_range!r} (e.g. "
                                 f"{outside[0]:g}); check human_range= and the human column", argument="human_range",
                                 value=self.human_range)
            return
        low, high = float(values.min()), float(values.max())
        scale = next((r for r in BOUNDED_LOOKING if r[0] <= low and high <= r[1]), None)
        if scale is None:
            return
        rows = np.flatnonzero(finite)
        if sys_codes is not None:  # one row per (group, system): its system mean
            rows = rows[np.unique(_cell_codes(codes, sys_codes)[rows], return_index=True)[1]]
        offsets = np.array([self.groups_[str(k)]["offset"] for k in keys])
        means = offsets[codes[rows]] + self.slopes_["between"] * m[rows]
        beyond = means[(means < scale[0]) | (means > scale[1])]
        if len(beyond):
            notes.append(f"{len(beyond)} calibrated system mean(s) lie outside [{scale[0]:g}, {scale[1]:g}] (e.g. "
                         f"{beyond[np.argmax(np.abs(beyond - sum(scale) / 2))]:.4g}), the range the labels look like "
                         f"they come from (all lie in [{low:g}, {high:g}]); if the human scale is bounded, declare it "
                         f"with human_range=({scale[0]:g}, {scale[1]:g}) to keep calibrated scores inside it")
            warnings.warn(notes[-1], ScaleRangeWarning, stacklevel=4)

    def _warn_groups(self, notes: list[str]) -> None:
        none = [g for g, e in self.groups_.items() if e["n_labels"] == 0]
        limit = FEW_LABELS if self.level_ != "system" else FEW_SYSTEMS
        few = [g for g, e in self.groups_.items() if 0 < e["n_labels"] < limit]
        if none:
            notes.append(f"{len(none)} group(s) have no human labels and get the common offset (their score "
                         f"differences to the other groups are kept as the metric has them): {', '.join(none[:10])}")
            warnings.warn(notes[-1], SmallGroupWarning, stacklevel=4)
        if few:
            notes.append(f"{len(few)} group(s) have fewer than {limit} labels; their offsets lean on the "
                         f"common one: {', '.join(few[:10])}")
            warnings.warn(notes[-1], SmallGroupWarning, stacklevel=4)

    # applying ------------------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "groups_"):
            raise NotFittedError("this AnchoredCalibrator is not fitted yet; call fit() or load() first")

    def _rows(self, X, groups, systems, signature, force):
        """Per row: score, system mean, fitted-group position (-1 unseen) and group labels."""
        self._check_fitted()
        X = self._table_frame(X)
        x, (codes, labels), _, sys_codes = self._inputs(X, groups, None, systems, need_human=False)
        if not force:
            languages = [str(v) for v in pd.unique(X["tgt_lang"])] if isinstance(X, pd.DataFrame) and \
                "tgt_lang" in X.columns and signature is not None else None
            check_compatible(self.signature_, signature, languages=languages)
        if self.level_ == "segment":
            if sys_codes is None:
                warnings.warn(f"no system column ({self.system!r}): the rows of each group are treated as one system "
                              "(their mean score sets the group's level)", DataQualityWarning, stacklevel=3)
                sys_codes = np.zeros(len(x), dtype=np.intp)
            m, _ = _system_means(x, codes, sys_codes)
        else:
            m = x.copy()
        return x, m, codes, labels

    def fitted_labels(self, labels: list[str]) -> list[str]:
        """Each group label as the fit knows it (a key of ``groups_``): as written, else the fitted label that
        spells the same languages (``en-cs_CZ`` and ``en-cs-CZ``; :mod:`._spelling`), else as written (unseen)."""
        missing = [label for label in labels if label not in self.groups_]
        if not missing:
            return list(labels)
        index = SpellingIndex(self.groups_, self.by_, sep="|")
        found = {label: index.match(label) for label in missing}
        return [label if found.get(label) is None else str(found[label]) for label in labels]

    def _group_params(self, labels: list[str], warn: bool = True):
        """Offset, offset variance, centre and 'own' flag per distinct group of a table."""
        n = len(labels)
        offset, var, own = np.empty(n), np.empty(n), np.zeros(n, dtype=bool)
        centre = np.empty((n, 2))
        unseen = []
        for j, label in enumerate(self.fitted_labels(labels)):
            entry = self.groups_.get(label)
            if entry is None:
                unseen.append(label)
                entry = self.pooled_
            else:
                own[j] = entry["source"] == "labels"
            offset[j], var[j] = entry["offset"], _num(entry["offset_var"])
            centre[j] = entry["centre"]
        if unseen:
            if self.fallback == "error":
                raise InputError(f"group(s) {unseen[:10]} were not in the data the calibrator was fitted on; fit on "
                                 "data that covers them or allow the common offset (fallback='pooled', or "
                                 "on_unseen='pooled' where it is applied)", argument="on_unseen", value="error")
            if warn:
                warnings.warn(f"group(s) {unseen[:10]} unseen in fit: calibrated with the common offset",
                              UnseenGroupWarning, stacklevel=3)
        return offset, var, centre, own

    def transform(self, X, groups=None, *, systems=None, signature: str | None = None, force: bool = False):
        """Scores on the human scale (NaN where the score is missing or infinite): a 1-D array, or as
        configured by ``set_output``."""
        X = self._table_frame(X)
        x, m, codes, labels = self._rows(X, groups, systems, signature, force)
        offset, _, _, _ = self._group_params(labels)
        with np.errstate(invalid="ignore"):  # inf - inf where a row is its own system: NaN, set below anyway
            out = offset[codes] + self.slopes_["between"] * m + self.slopes_["within"] * (x - m)
        out[~np.isfinite(x)] = np.nan
        return self._as_output(self._clip(out), X)

    def _clip(self, values: np.ndarray) -> np.ndarray:
        """``values`` inside the declared human range (NaN stays NaN); unchanged without one."""
        bounds = human_range_of(getattr(self, "human_range", None))
        return values if bounds is None else np.clip(values, *bounds)

    def fit_transform(self, X, y=None, *, groups=None, human=None, systems=None,
                      signature: str | None = None) -> np.ndarray:
        return self.fit(X, groups=groups, human=human, systems=systems, signature=signature).transform(
            X, groups, systems=systems, signature=signature)

    def interval(self, X, groups=None, *, systems=None, level: float = 0.95, signature: str | None = None,
                 force: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Normal confidence interval of each calibrated score from the uncertainty of its group's
        offset and of the slopes (the few labels); NaN where it cannot be estimated."""
        if not 0 < level < 1:
            raise InputError(f"level={level!r}: expected a number between 0 and 1, e.g. 0.95", argument="level",
                             value=level)
        X = self._table_frame(X)
        x, m, codes, labels = self._rows(X, groups, systems, signature, force)
        offset, var, centre, _ = self._group_params(labels, warn=False)
        b, c = self.slopes_["between"], self.slopes_["within"]
        with np.errstate(invalid="ignore"):
            point = offset[codes] + b * m + c * (x - m)
        with np.errstate(invalid="ignore"):
            d1, d2 = m - centre[codes, 0], (x - m) - centre[codes, 1]
        from ._cell_interval import used_slope_cov

        cov = used_slope_cov(self)  # B as used: shrunk toward C, with the error that leaves it
        se = np.sqrt(var[codes] + cov[0, 0] * d1**2 + 2 * cov[0, 1] * d1 * d2 + cov[1, 1] * d2**2)
        half = special.ndtri(0.5 + level / 2) * se
        low, high = self._clip(point - half), self._clip(point + half)
        bad = ~np.isfinite(x)
        low[bad] = high[bad] = np.nan
        return low, high

    def sources(self, X, groups=None) -> np.ndarray:
        """Per row: the ``by`` columns joined by '+' (its group's own labels, possibly shrunk) or
        ``pooled`` (a group without labels, or unseen in fit: the common offset)."""
        self._check_fitted()
        _, (codes, labels), _, _ = self._inputs(X, groups, None, None, need_human=False)
        own = np.fromiter((self.groups_.get(g, {}).get("source") == "labels" for g in self.fitted_labels(labels)),
                          dtype=np.bool_,
                          count=len(labels))
        names = np.where(own, "+".join(self.by_), "pooled").astype(object)
        return names[codes]

    # reporting -----------------------------------------------------------------------------------
    def group_table(self) -> pd.DataFrame:
        """One row per fitted group: rows, labels, score mean, mean residual, shrinkage weight, offset
        and its standard error, and the source (``labels`` or ``pooled``)."""
        self._check_fitted()
        rows = [{"group": g, "n_rows": e["n_rows"], "n_labels": e["n_labels"], "score_mean": e["score_mean"],
                 "residual_mean": e["residual_mean"], "weight": e["weight"], "offset": e["offset"],
                 "offset_se": math.sqrt(e["offset_var"]) if np.isfinite(_num(e["offset_var"])) else math.nan,
                 "source": e["source"]} for g, e in self.groups_.items()]
        return pd.DataFrame(rows)

    def describe(self) -> dict:
        """The fitted model in words and numbers: level, slopes, direction, common offset, notes."""
        self._check_fitted()
        s: dict[str, Any] = self.slopes_
        extra = {
            "between_slope_estimate": s["between_estimate"], "between_slope_unshrunk": s["between_unshrunk"],
            "between_slope_weight": s["between_weight"], "within_slope_estimate": s["within_estimate"],
            "slope_z": {"between": s["z"][0], "within": s["z"][1]}}
        return {"level": self.level_, "between_slope": s["between"], "within_slope": s["within"], **extra,
                "direction": "human rises with the score" if self.direction_ > 0 else "human falls as the score rises",
                "direction_source": self.direction_source_, "common_offset": self.pooled_["offset"],
                "tau2": self.pooled_["tau2"], "shrinkage": self.shrinkage, "human_range": self.human_range,
                "prior": self.prior, "lgn_weight": self.pooled_.get("lgn_weight", math.nan),
                "lgn_weight_sd": self.pooled_.get("lgn_weight_sd", math.nan),
                "n_labels": s["n_labels"], "notes": list(self.notes_)}

    # persistence ---------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        self._check_fitted()
        params = self.get_params()
        params["by"] = self.by_[0] if len(self.by_) == 1 else list(self.by_)  # the default resolved
        version = getattr(self, "format_version_", FORMAT_VERSION)
        if self.human_range is not None:
            params["human_range"] = list(human_range_of(self.human_range) or ())
        if version == 3:  # a loaded format-3 model (prior "common") saves as it was read
            params = {k: v for k, v in params.items() if k != "prior"}
        return {"format": FORMAT, "format_version": version, "xleval_version": __version__, "params": params,
                "signature": self.signature_, "level": self.level_, "direction": self.direction_,
                "direction_source": self.direction_source_, "slopes": self.slopes_, "pooled": self.pooled_,
                "groups": self.groups_, "notes": list(self.notes_)}

    def save(self, path: str | os.PathLike) -> None:
        """Versioned JSON with options, slopes, per-group offsets, the metric signature and a SHA-256 checksum."""
        save_checked(self.to_dict(), path)

    def with_on_unseen(self, on_unseen: str | None) -> AnchoredCalibrator:
        """This fitted calibrator with unseen groups given the common offset (``pooled``) or refused
        (``error``) instead of its ``fallback``; ``None`` returns it unchanged. A shallow copy."""
        self._check_fitted()
        return anchored_on_unseen(self, on_unseen)

    @property
    def higher_is_better_(self) -> bool:
        """Whether a higher calibrated score is better: the human scale's direction as fitted (the slope's sign
        relative to the score's direction; with ``direction_source_ == "none"`` the labels' unsettled lean,
        which orders only the groups' offsets). What ranks calibrated scores (the leaderboard)."""
        self._check_fitted()
        return self.direction_ * (1 if self.score_higher_is_better else -1) > 0

    def calibrated_signature(self) -> str:
        """The signature of the calibrated column: groups, human column and direction, level, labels
        and the score's signature."""
        direction = "higher" if self.higher_is_better_ else "lower"
        return (f"anchored|by:{'+'.join(self.by_)}|human:{self.human}|human_better:{direction}|level:{self.level_}"
                f"|labels:{self.slopes_['n_labels']}|of:{self.signature_ or 'unknown'}")

    @classmethod
    def load(cls, path: str | os.PathLike) -> AnchoredCalibrator:
        """A saved anchored calibrator of this format version. Files of format version 1 (xleval 0.1.0,
        per-group maps) are read by :func:`xleval.calibration.load_calibrator`, which dispatches every
        saved calibrator by the format it declares."""
        payload = read_calibrator_json(path, str(path))  # regular files of bounded size only
        _refuse_format_1(payload, str(path))
        return cls.from_dict(payload, source=str(path))

    @classmethod
    def from_dict(cls, payload: Any, source: str = "calibrator") -> AnchoredCalibrator:
        _refuse_format_1(payload, source)
        found = payload.get("format_version") if isinstance(payload, dict) else None
        version = found if found in READABLE_VERSIONS and not isinstance(found, bool) else FORMAT_VERSION
        load_checked(payload, FORMAT, version, "anchored calibrator")
        try:
            params = dict(payload["params"])
            if version == 3:  # offsets pulled toward the common one only
                params = {**params, "prior": "common"}
            if params.get("human_range") is not None:
                params["human_range"] = tuple(params["human_range"])
            model = cls(**params)
            if version != FORMAT_VERSION:
                model.format_version_ = version
            model._validate()
            model.by_ = [model.by] if isinstance(model.by, str) else list(model.by)
            model.signature_ = payload.get("signature")
            if model.signature_ is not None and not isinstance(model.signature_, str):
                raise ValueError(f"signature {model.signature_!r} is not text")
            model.level_ = str(payload["level"])
            model.direction_ = int(payload["direction"])
            model.direction_source_ = str(payload["direction_source"])
            model.slopes_ = dict(payload["slopes"])
            model.pooled_ = dict(payload["pooled"])
            model.groups_ = {str(g): dict(e) for g, e in payload["groups"].items()}
            model.notes_ = tuple(payload.get("notes", ()))
            _check_state(model)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
            raise ModelFileError(f"{source}: malformed calibrator ({exc}); refit and save it again") from None
        return model


# helpers -------------------------------------------------------------------------------------------
def is_format_1(payload: object) -> bool:
    """Whether a saved payload is an anchored calibrator of format version 1 (xleval 0.1.0)."""
    version = payload.get("format_version") if isinstance(payload, dict) else None
    return isinstance(payload, dict) and payload.get("format") == FORMAT and version == 1 and version is not True


def _refuse_format_1(payload: object, source: str) -> None:
    if is_format_1(payload):
        raise ModelFileError(f"{source}: an anchored calibrator of format version 1 (xleval 0.1.0); load it with "
                             "xleval.calibration.load_calibrator (transform only), or refit it with this xleval")


class DirectedSlopes(NamedTuple):
    """The slopes as used (``between`` after the James-Stein shrinkage, ``between_unshrunk`` before it,
    ``weight`` the share of ``between_unshrunk - within`` kept), the direction and its source, and the
    z values of the raw between and within estimates."""

    between: float
    within: float
    direction: int
    source: str
    between_unshrunk: float
    weight: float
    z: tuple[float, float]


class LabelShape(NamedTuple):
    """Which end of their range human labels pile up at (:func:`shape_of_labels`)."""

    higher_is_better: bool
    skewness: float
    z: float


#: the skewness test's two-sided 5% point: a shape weaker than this says nothing
SHAPE_Z = 1.96


def shape_of_labels(labels: np.ndarray) -> LabelShape | None:
    """The direction the labels' shape suggests, where their skewness is clear (D'Agostino's test, |z| at least
    :data:`SHAPE_Z`, 8 labels or more), else None. Ratings of machine translation pile up at the scale's good end:
    raw DA and ESA near the top (skewed left), MQM error points at 0 (skewed right). On WMT20 and WMT21 raw DA
    (every pair), DA z and MQM, 25-100 random labels per pair are skewed the way the scale's direction says in
    every draw (docs/calibration.md, "The direction of the human scale"). Read only where the slopes' signs do
    not settle the direction, and taken only where the slope leans the same way (:meth:`AnchoredCalibrator._direction`):
    labels of poor systems on a quality scale pile up at the bottom."""
    values = np.asarray(labels, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) < 8 or np.ptp(values) == 0:
        return None
    z = float(stats.skewtest(values).statistic)
    if not math.isfinite(z) or abs(z) < SHAPE_Z:
        return None
    return LabelShape(z < 0, float(stats.skew(values)), z)


def settled_z(n_clusters: int) -> float:
    """The |z| from which the labels settle a slope's sign: the two-sided 95% quantile of Student's t with
    (clusters - 1) degrees of freedom, as for a cluster-robust (CR1) covariance from few clusters (Cameron &
    Miller 2015); 1.96 with many."""
    return float(stats.t.ppf(SETTLED_LEVEL, max(int(n_clusters) - 1, 1)))


def _other_words(coef: float, z: float) -> str:
    return f"; the other slope {coef:+.3g}, z = {z:.2f}" if np.isfinite(coef) else ""


def human_range_of(value: Any) -> tuple[float, float] | None:
    """``human_range`` checked: None, or two finite numbers ``lo < hi``."""
    if value is None:
        return None
    try:
        if isinstance(value, (str, bytes)) or len(value) != 2:
            raise TypeError
        lo, hi = (float(v) for v in value)
        if any(isinstance(v, bool) for v in value):
            raise TypeError
    except (TypeError, ValueError):
        raise InputError(f"human_range={value!r}: give the bounds of the human scale as two numbers (LOW, HIGH), "
                         "e.g. human_range=(0, 100)", argument="human_range", value=value) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise InputError(f"human_range={value!r}: the bounds must be finite with LOW < HIGH, e.g. "
                         "human_range=(0, 100)", argument="human_range", value=value)
    return lo, hi


def _check_state(model: AnchoredCalibrator) -> None:
    """A loaded state that transform and interval can use (a file with a valid checksum can still be
    crafted): finite slopes and offsets, a 2x2 covariance, centres of two numbers, known enums."""
    if model.level_ not in ("segment", "system", "row") or model.direction_ not in (1, -1):
        raise ValueError(f"level {model.level_!r} / direction {model.direction_!r}")
    slopes: dict[str, Any] = model.slopes_
    for key in ("between", "within"):
        if not math.isfinite(float(slopes[key])):
            raise ValueError(f"slope {key} is not a finite number")
    check_loaded_columns(model.by, score=model.score, **{"human?": model.human, "system?": model.system})
    cov = np.asarray(model.slopes_["cov"], dtype=float)
    if cov.shape != (2, 2):
        raise ValueError("the slopes' covariance is not 2x2")
    if not np.isfinite(cov).all() or (np.diag(cov) < 0).any():
        raise ValueError("the slopes' covariance has a negative or non-finite entry")
    for key in ("offset_var", "tau2"):  # NaN: one labelled group, no between-group spread estimated
        if key in model.pooled_:
            check_variance(model.pooled_[key], f"pooled {key}", unknown=True)
    for key in ("mean_var", "residual_var"):
        if key in model.pooled_:
            check_variance(model.pooled_[key], f"pooled {key}")
    entries: list[tuple[str, Any]] = [("pooled", model.pooled_), *model.groups_.items()]
    for name, entry in entries:
        if not math.isfinite(float(entry["offset"])):
            raise ValueError(f"offset of {name!r} is not a finite number")
        labelled = name != "pooled" and entry.get("source") == "labels"
        for key in ("offset_var", "variance", "residual_var") if labelled else ("offset_var",):
            if key in entry or key == "offset_var":
                check_variance(entry[key], f"{key} of {name!r}", unknown=not labelled)
        if np.asarray(entry["centre"], dtype=float).shape != (2,):
            raise ValueError(f"centre of {name!r} is not two numbers")
        if name != "pooled" and (entry["source"] not in ("labels", "pooled") or int(entry["n_labels"]) < 0):
            raise ValueError(f"group {name!r}: source {entry['source']!r}, n_labels {entry['n_labels']!r}")


def anchored_on_unseen(model: Any, on_unseen: str | None) -> Any:
    """``model`` (an anchored calibrator of either format) with unseen groups given the common offset
    (``pooled``) or refused (``error``); None returns it unchanged. A shallow copy."""
    if on_unseen is None:
        return model
    if on_unseen not in ("pooled", "error"):
        raise InputError(f"on_unseen={on_unseen!r}: an anchored calibrator gives unseen groups the common offset "
                         "(pooled) or refuses them (error); raw scores are not on the human scale",
                         argument="on_unseen", value=on_unseen)
    return copy.copy(model).set_params(fallback=on_unseen)


def _z(coef: float, var: float) -> float:
    return coef / math.sqrt(var) if np.isfinite(var) and var > 0 else math.copysign(math.inf, coef)


def _num(value) -> float:
    value = float(value)
    return value if math.isfinite(value) else math.nan


def _numeric(values: pd.Series, name: str, argument: str | None = None) -> np.ndarray:
    argument = argument or (name if name in ("score", "human") else None)
    return numeric_column(pd.DataFrame({name: values}), name, argument=argument)


def _as_frame(groups, by: list[str]) -> pd.DataFrame:
    if isinstance(groups, pd.DataFrame):
        return groups[by] if set(by) <= set(groups.columns) else groups
    if len(by) != 1:
        raise InputError(f"by={by} has several columns; pass groups as a DataFrame with those columns")
    if isinstance(groups, (pd.Categorical, pd.Series)) and isinstance(groups.dtype, pd.CategoricalDtype):
        return pd.DataFrame({by[0]: pd.Categorical(groups)})  # grouped by its codes (by position, not index)
    return pd.DataFrame({by[0]: np.asarray(groups, dtype=object)})


def _cell_codes(codes: np.ndarray, sys_codes: np.ndarray) -> np.ndarray:
    return combined_codes(codes, sys_codes)  # both are codes already: the cells without factorizing each again


def _system_means(x: np.ndarray, codes: np.ndarray, sys_codes: np.ndarray | None) -> tuple[np.ndarray, str]:
    """Each row's system mean of the finite scores within its group, and the table's level."""
    if sys_codes is None:
        return x.copy(), "row"
    cell = _cell_codes(codes, sys_codes)
    finite = np.isfinite(x)
    counts = np.bincount(cell[finite], minlength=int(cell.max()) + 1 if len(cell) else 0)
    sums = np.bincount(cell[finite], x[finite], minlength=len(counts))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    level = "segment" if (counts >= 2).any() else "system"
    return (means[cell] if level == "segment" else x.copy()), level


def _effective_cov(slopes) -> list[list[float]]:
    """Covariance of (between, within) as used: an unidentified slope takes the other's value, so
    it takes its variance (and full covariance) too."""
    cov = np.nan_to_num(np.asarray(slopes.cov, dtype=float))
    b_ok, c_ok = slopes.identified
    if c_ok and not b_ok:
        cov[0, 0] = cov[0, 1] = cov[1, 0] = cov[1, 1]
    if b_ok and not c_ok:
        cov[1, 1] = cov[0, 1] = cov[1, 0] = cov[0, 0]
    return cov.tolist()
