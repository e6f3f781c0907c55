"""Human scales by name: their kind (one scale for every group, or standardised within groups) and their
direction, so that a user who names the scale (``--human-scale mqm``, or the ``NAME_scale`` column that
``xleval ingest`` writes) is never asked which way it points.

The one table of names is :data:`SCALES`; :func:`human_scale_direction` is what every caller asks
(``calibrate fit``, the leaderboard, the decision). MQM is the one scale whose direction depends on how
it was written: error points (WMT's files, 0 = perfect, higher is worse) or their negation (what
``xleval ingest mqm`` writes, higher is better). The labels' signs tell which, without any fit: MQM
error points are never negative and negated ones never positive.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..exceptions import InputError

__all__ = ["HumanScaleName", "SCALES", "SCALE_NAMES", "scale_named", "human_scale_direction", "scale_kind",
           "declared_scale", "one_known_scale", "direction_for", "scale_bounds", "named_bounds", "bounded_by_name",
           "PastTheScale", "past_the_scale", "past_the_scale_note"]


@dataclass(frozen=True)
class HumanScaleName:
    """One named human scale: ``kind`` (``raw``: one scale for every group; ``z``: standardised within groups,
    which the decision reads as such), ``higher_is_better`` (None: the name does not say; ``"sign"``: by the
    sign of the labels, MQM) and a description."""

    name: str
    kind: str
    higher_is_better: bool | str | None
    description: str
    #: the scale's bounds (low, high) when the name fixes them (ESA and raw DA 0-100, SQM 0-6), else None
    bounds: tuple[float, float] | None = None


SCALES: dict[str, HumanScaleName] = {s.name: s for s in (
    HumanScaleName("mqm", "raw", "sign", "MQM: error points (>= 0, lower is better) or their negation as `xleval "
                   "ingest mqm` writes it (<= 0, higher is better); the labels' signs tell which"),
    HumanScaleName("esa", "raw", True, "ESA 0-100 (error span annotation), higher is better", (0.0, 100.0)),
    HumanScaleName("da", "raw", True, "raw direct assessment 0-100, higher is better", (0.0, 100.0)),
    HumanScaleName("sqm", "raw", True, "scalar quality metric 0-6, higher is better", (0.0, 6.0)),
    HumanScaleName("likert", "raw", True, "a Likert rating, higher is better"),
    HumanScaleName("hter", "raw", False, "HTER (post-editing edit rate), lower is better"),
    HumanScaleName("z", "z", True, "z-scores per annotator or group (WMT DA z), higher is better"),
    HumanScaleName("da-z", "z", True, "WMT DA z (standardised per annotator), higher is better"),
    HumanScaleName("raw", "raw", None, "one scale for every group; the name does not say its direction"),
)}
SCALE_NAMES = tuple(SCALES)
_ALIASES = {"da-raw": "da", "raw-da": "da", "da_raw": "da", "rawda": "da", "daz": "da-z", "da_z": "da-z",
            "zscore": "z", "z-score": "z", "mqm-neg": "mqm"}


def scale_named(name: str) -> HumanScaleName:
    """The scale called ``name`` (case and spaces ignored; ``da-raw``, ``da_z`` ... are aliases); a name
    ``xleval ingest`` writes into its ``_scale`` column (``MQM (weighted; raters all)``, ``ESA 0-100 (raters
    all)``, ``MQM rater-z (...)``) is read as the scale it names. Unknown names are refused."""
    text = str(name).strip().lower()
    key = _ALIASES.get(text, text)
    if key in SCALES:
        return SCALES[key]
    # the descriptive names `xleval ingest` writes (ratings._mqm, ratings._esa)
    if re.search(r"\brater-z\b|\bz\b", text) and re.match(r"(mqm|esa|da)\b", text):
        return SCALES["z"]
    for stem in ("mqm", "esa"):
        if re.match(rf"{stem}\b", text):
            return SCALES[stem]
    raise InputError(f"human scale {name!r}: unknown; use one of {', '.join(SCALE_NAMES)}", argument="human_scale",
                     value=name)


def scale_kind(name: str | None) -> str | None:
    """``raw`` or ``z`` for a named scale (what the standardisation check reads), None for None."""
    return None if name is None else scale_named(name).kind


def scale_bounds(name: str | None) -> tuple[float, float] | None:
    """The bounds (low, high) of the human scale called ``name`` when the name fixes them (ESA, raw DA: 0-100;
    SQM: 0-6), else None (MQM has no upper bound on error points, a Likert scale's range varies, z has none)."""
    return None if name is None else scale_named(name).bounds


def human_scale_direction(name: str | None, labels: np.ndarray | None = None) -> bool | None:
    """Whether higher is better on the human scale called ``name`` (:data:`SCALES`): True, False, or None
    when the name does not say (``raw``, no name) or, for MQM, when the labels have both signs (or none are
    given). ``labels``: the human scores (NaN = no label)."""
    if name is None:
        return None
    rule = scale_named(name).higher_is_better
    if rule != "sign":
        return rule if isinstance(rule, bool) else None
    if labels is None:
        return None
    values = np.asarray(labels, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values) or not values.any():
        return None
    if values.min() >= 0:
        return False  # error points: 0 is perfect
    if values.max() <= 0:
        return True  # negated error points
    return None


def named_bounds(frame, human: str | None, human_scale: str | None = None
                 ) -> tuple[tuple[float, float] | None, str | None, np.ndarray]:
    """The one rule by which a named scale bounds anchored calibration (``leaderboard``, ``report``, ``calibrate
    fit``, and their Python calls): the bounds of the scale ``human_scale`` names, else the table's
    ``HUMAN_scale`` column (:func:`declared_scale`), that name, and the labels lying outside the bounds (a name
    the labels contradict bounds nothing). Bounds None: the scale has none known (MQM, z, Likert, unnamed)."""
    name = declared_scale(frame, human, human_scale)
    bounds = scale_bounds(name)
    if bounds is None or human is None or human not in getattr(frame, "columns", ()):
        return None, name, np.empty(0)
    import pandas as pd

    labels = pd.to_numeric(frame[human], errors="coerce").to_numpy(dtype=float)
    outside = labels[np.isfinite(labels) & ((labels < bounds[0]) | (labels > bounds[1]))]
    return bounds, name, outside


def bounded_by_name(frame, human: str | None, human_scale: str | None = None
                    ) -> tuple[tuple[float, float] | None, str | None, str | None]:
    """For the library's entry points given no range: the named scale's bounds when every label lies inside them
    (else None), the note that says so, in the library's words, and where the bounds came from ('the range of the
    human scale (human_scale='esa')', for :func:`past_the_scale_note`; else None). Labels outside the bounds bound
    nothing, and the note says that instead (the name may be wrong), as the command line does."""
    bounds, name, outside = named_bounds(frame, human, human_scale)
    if bounds is None:
        return None, None, None
    said = f"human_scale={human_scale!r}" if human_scale is not None else f"the {human}_scale column: {name}"
    if len(outside):
        return None, (f"{len(outside)} human label(s) lie outside {bounds[0]:g} to {bounds[1]:g}, the range of the "
                      f"human scale ({said}; e.g. {outside[0]:g}): calibrated scores are not bounded by it; check "
                      "the scale's name, or give the labels' range as human_range="), None
    source = f"the range of the human scale ({said})"
    return bounds, (f"calibrated system scores are kept inside {bounds[0]:g} to {bounds[1]:g}, {source}; give "
                    "human_range= to bound them otherwise"), source


def declared_scale(frame, human: str | None, human_scale: str | None = None) -> str | None:
    """The scale a table declares for its human column: ``human_scale`` when given, else the one value of the
    ``HUMAN_scale`` column (written by ``xleval ingest``) over the labelled rows, when every row names the
    same scale (several scales: None, the caller cannot take one direction)."""
    if human_scale is not None:
        scale_named(human_scale)  # refused early when unknown
        return human_scale
    if human is None or frame is None or f"{human}_scale" not in getattr(frame, "columns", ()):
        return None
    import pandas as pd

    labelled = pd.to_numeric(frame[human], errors="coerce").notna()
    return one_known_scale({str(v) for v in frame.loc[labelled, f"{human}_scale"].dropna().unique()})


def one_known_scale(names) -> str | None:
    """The one name among ``names`` when there is exactly one and it is a scale :func:`scale_named` knows, else
    None (several scales, none, or a user's own name: no direction can be taken from it)."""
    names = set(names)
    if len(names) != 1:
        return None
    name = names.pop()
    try:
        scale_named(name)
    except InputError:
        return None
    return name


def direction_for(frame, human: str | None, human_scale: str | None = None,
                  given: bool | None = None) -> bool | None:
    """The direction of the human column for an anchored fit: ``given`` (the user's
    ``--human-higher-is-better/--human-lower-is-better``) wins; else the named scale (``human_scale``, or the
    ``HUMAN_scale`` column of the table) with the labels' signs for MQM; else None (the labels decide, and
    E122 is raised only where they cannot)."""
    if given is not None:
        return bool(given)
    name = declared_scale(frame, human, human_scale)
    if name is None:
        return None
    import pandas as pd

    labels = None
    if human is not None and frame is not None and human in getattr(frame, "columns", ()):
        labels = pd.to_numeric(frame[human], errors="coerce").to_numpy(dtype=float)
    return human_scale_direction(name, labels)


@dataclass(frozen=True)
class PastTheScale:
    """Calibrated system scores (or their interval bounds) past the human scale: ``count`` cells, the worst of
    them (``example``: 'A in en-de (calibrated 97.0, ci_low 87.0, ci_high 107.0)'), the scale (``scale``: '0 to
    100 (raw DA, ESA)'), and the range that would bound them (``bound``: '0,100'; for MQM '0,M' or '-M,0' with M
    the largest error in the labels rounded up to a whole number, as MQM names no upper bound; None when
    a range was applied: the intervals run past the range, which bounds only the means)."""

    count: int
    example: str
    scale: str
    bound: str | None
    low: float
    high: float

    def sentence(self, given: str, fix: str) -> str:
        """The note, one phrasing for every caller: ``given`` names an applied range (the flag, the argument or
        the named scale), ``fix`` ends the sentence where no range was applied ('; give human_range=(0, 100) to
        keep calibrated scores inside it', with the command line's command to run)."""
        if self.bound is None:
            return (f"{self.count} calibrated system score(s) or their intervals run past the human scale given, "
                    f"{self.scale} ({given}): e.g. {self.example}; read them as capped at the scale")
        return (f"{self.count} calibrated system score(s) or their intervals run past the human labels' scale, "
                f"{self.scale}: e.g. {self.example}{fix}")


def past_the_scale(rows, labels, human_range: tuple[float, float] | None = None, *,
                   scale_name: str | None = None) -> PastTheScale | None:
    """The one check of calibrated values against the human scale (the leaderboard's and the report's, in Python
    and on the command line): ``rows`` (a board's rows, records or a frame with ``calibrated`` and its interval)
    against ``human_range`` when one was applied, else the scale the ``labels`` are on: within 0-100 reaching
    above 1: raw DA, ESA; all at most 0: negated MQM; with ``scale_name`` MQM, all at least 0: MQM error points.
    A named scale other than MQM is not guessed from its labels (MQM error points in 0-25 are not raw DA),
    ``raw`` excepted: it names no bounds. None when nothing is past the scale, or the scale cannot be told."""
    import pandas as pd

    values_of_labels = np.asarray(labels, dtype=float)
    values_of_labels = values_of_labels[np.isfinite(values_of_labels)]
    named = None if scale_name is None else scale_named(scale_name).name
    if human_range is not None:
        low, high = human_range
        scale, bound = f"{low:g} to {high:g}", None
    elif values_of_labels.size == 0 or named not in (None, "raw", "mqm"):
        return None
    elif named == "mqm" and values_of_labels.min() >= 0:
        # MQM has no upper bound by its name: the bound offered is the largest label (a system's mean of labels
        # stays below it), so the command it names runs as written
        top = max(int(np.ceil(values_of_labels.max())), 1)  # a whole number at or above every label
        low, high, scale, bound = 0.0, np.inf, "at least 0 (MQM error points)", f"0,{top}"
    elif named != "mqm" and values_of_labels.min() >= 0 and 1 < values_of_labels.max() <= 100:
        low, high, scale, bound = 0.0, 100.0, "0 to 100 (raw DA, ESA)", "0,100"
    elif values_of_labels.max() <= 0:
        bottom = min(int(np.floor(values_of_labels.min())), -1)  # at or below every label, as above
        low, high, scale, bound = -np.inf, 0.0, "at most 0 (MQM)", f"{bottom},0"
    else:
        return None
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    columns = [c for c in ("calibrated", "calibrated_ci_low", "calibrated_ci_high") if c in frame.columns]
    if not columns or frame.empty:
        return None
    values = frame[columns].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    outside = (values > high) | (values < low)
    if not outside.any():
        return None
    worst = int(np.nanargmax(np.where(outside, np.abs(values - np.clip(values, low, high)), -1).max(axis=1)))
    row = frame.iloc[worst]
    shown = ", ".join(f"{c.replace('calibrated_', '')} {float(row[c]):.1f}" for c in columns)
    return PastTheScale(int(outside.any(axis=1).sum()), f"{row.get('system', '?')} in {row.get('group', '?')} "
                        f"({shown})", scale, bound, float(low), float(high))


def past_the_scale_note(rows, frame, human: str | None, human_range: tuple[float, float] | None = None, *,
                        source: str | None = None, human_scale: str | None = None) -> str | None:
    """:func:`past_the_scale` of the calibrated ``rows`` against the labels of ``frame[human]`` and the scale they
    declare (``human_scale``, else the ``HUMAN_scale`` column), as a note in the library's words (a Python call's;
    the command line says it with the command that reruns it): ``source``, where an applied range came from
    (else ``human_range=``)."""
    import pandas as pd

    if human is None or human not in frame.columns:
        return None
    labels = pd.to_numeric(frame[human], errors="coerce").to_numpy(dtype=float)
    past = past_the_scale(rows, labels, human_range, scale_name=declared_scale(frame, human, human_scale))
    if past is None:
        return None
    bound = (past.bound or "").replace(",", ", ")
    return past.sentence(source or f"human_range=({past.low:g}, {past.high:g})",
                         f"; give human_range=({bound}) to keep calibrated scores inside it")
