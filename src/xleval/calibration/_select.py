"""Which rows to send to annotators: K rows per group for anchored calibration.

``stratified`` (the default) is a random sample stratified by system and document: the K labels of a
group go evenly to its systems (the remainder to systems drawn at random), and a system's labels
evenly to its documents in a random order, one random segment of each; no use of the score, and no
system or document left without labels by chance. ``random`` is a simple random sample of K rows per
group. ``spread`` allocates the budget evenly over the group's systems and, within a system, cuts its
rows sorted by score into as many equal strata as it gets labels and draws one row per stratum,
preferring segments not yet chosen in the group. On WMT21 neither spread nor stratified was measurably
better or worse than random for the cross-group accuracy of anchored calibration (paired intervals over
draws include 0; docs/calibration.md, "Label budget"); stratified is the default because it is never
less even than random. ``calibrate plan`` (:mod:`._plan`) decides how many labels each group needs.
Every draw comes from one seeded generator.
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._base.grouping import canonical_order, group_index, segment_rank
from .._base.seeding import make_rng
from ..exceptions import DataQualityWarning, InputError
from ..table import DEFAULT_BY, EvalTable, as_table, numeric_column, require_columns

__all__ = ["select_rows", "select_for_annotation", "SELECTIONS", "ANNOTATION_COLUMNS"]

SELECTIONS = ("spread", "random", "stratified")  # order fixed: the evaluation seeds its draws by position
ANNOTATION_COLUMNS = ("system", "seg_id", "doc_id", "source", "hypothesis", "reference")


def select_rows(scores: np.ndarray, groups: np.ndarray, budget: int, *, systems: np.ndarray | None = None,
                segments: np.ndarray | None = None, eligible: np.ndarray | None = None, method: str = "random",
                random_state: Any = 0, documents: np.ndarray | None = None) -> np.ndarray:
    """Row positions of ``budget`` rows per group (all eligible rows of a smaller group). ``groups``,
    ``systems``, ``segments`` and ``documents`` are integer codes; ``eligible`` masks the rows that may be
    chosen (default: a finite score)."""
    if method not in SELECTIONS:
        raise InputError(f"selection {method!r}: use one of {', '.join(SELECTIONS)}")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise InputError(f"budget={budget!r}: expected a whole number of rows per group >= 1")
    rng, _ = make_rng(random_state)
    scores = np.asarray(scores, dtype=float)
    ok = np.isfinite(scores) if eligible is None else (np.asarray(eligible, dtype=bool) & np.isfinite(scores))
    chosen: list[np.ndarray] = []
    for g in np.unique(groups):
        rows = np.flatnonzero(ok & (groups == g))
        if len(rows) <= budget:
            chosen.append(rows)
        elif method == "random":
            chosen.append(np.sort(rng.choice(rows, size=budget, replace=False)))
        elif method == "stratified":
            chosen.append(stratified_rows(rows, budget, systems, documents, rng))
        else:
            chosen.append(_spread(rows, scores, budget, systems, segments, rng))
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.intp)


def _allocate(sizes: np.ndarray, budget: int, rng: np.random.Generator) -> np.ndarray:
    """Labels per system: as even as the budget allows, never more than a system's rows."""
    alloc = np.zeros(len(sizes), dtype=int)
    left = budget
    while left > 0:
        room = np.flatnonzero(alloc < sizes)
        share, extra = divmod(left, len(room))
        add = np.minimum(np.full(len(room), share), sizes[room] - alloc[room])
        if extra:
            lucky = rng.choice(len(room), size=extra, replace=False)
            add[lucky] = np.minimum(add[lucky] + 1, sizes[room][lucky] - alloc[room][lucky])
        alloc[room] += add
        left = budget - int(alloc.sum())
        if add.sum() == 0:
            break
    return alloc


def stratified_rows(rows: np.ndarray, budget: int, systems: np.ndarray | None, documents: np.ndarray | None,
                    rng: np.random.Generator, have: np.ndarray | None = None) -> np.ndarray:
    """``budget`` of ``rows``: evenly over systems (counting the labels ``have``, per system code, that each
    already has; default none), within a system evenly over its documents in a random order, a random row of
    each document per round."""
    sys_of = systems[rows] if systems is not None else np.zeros(len(rows), dtype=np.intp)
    names, members = np.unique(sys_of, return_inverse=True)
    sizes = np.bincount(members, minlength=len(names))
    alloc = _allocate_after(sizes, budget, rng, None if have is None else have[names])
    picked: list[np.ndarray] = []
    for s in np.flatnonzero(alloc):
        own = rows[members == s]
        doc_of = documents[own] if documents is not None else np.arange(len(own))
        # a random order of the system's rows in which every document comes up once per round
        docs, inverse = np.unique(doc_of, return_inverse=True)
        doc_rank = rng.permutation(len(docs))[inverse]
        shuffled = rng.permutation(len(own))
        within = np.empty(len(own), dtype=np.int64)  # position of a row among its document's rows (random)
        order_in_doc = np.lexsort((shuffled, inverse))
        starts = np.r_[0, np.cumsum(np.bincount(inverse, minlength=len(docs)))[:-1]]
        within[order_in_doc] = np.arange(len(own)) - starts[inverse[order_in_doc]]
        order = np.lexsort((doc_rank, within))
        picked.append(own[order[:alloc[s]]])
    return np.sort(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.intp)


def _allocate_after(sizes: np.ndarray, budget: int, rng: np.random.Generator,
                    have: np.ndarray | None) -> np.ndarray:
    """Labels per system, as even as the budget allows counting the labels ``have`` (none by default)."""
    if have is None or not np.any(have):
        return _allocate(sizes, budget, rng)
    alloc = np.zeros(len(sizes), dtype=int)
    jitter = rng.random(len(sizes))
    for _ in range(int(min(budget, sizes.sum()))):  # water-filling: the next label to the fewest so far
        open_ = np.flatnonzero(alloc < sizes)
        j = open_[np.lexsort((jitter[open_], (have + alloc)[open_]))[0]]
        alloc[j] += 1
    return alloc


def _spread(rows: np.ndarray, scores: np.ndarray, budget: int, systems, segments, rng) -> np.ndarray:
    sys_of = systems[rows] if systems is not None else np.zeros(len(rows), dtype=np.intp)
    names, members = np.unique(sys_of, return_inverse=True)
    sizes = np.bincount(members, minlength=len(names))
    alloc = _allocate(sizes, budget, rng)
    used: set = set()
    picked = []
    for s in rng.permutation(len(names)):
        k = alloc[s]
        if k == 0:
            continue
        own = rows[members == s]
        jitter = rng.random(len(own))  # ties in the score are broken at random, not by row order
        order = own[np.lexsort((jitter, scores[own]))]
        for stratum in np.array_split(order, k):
            fresh = stratum if segments is None else stratum[[segments[i] not in used for i in stratum]]
            pool = fresh if len(fresh) else stratum
            i = pool[rng.integers(len(pool))]
            picked.append(i)
            if segments is not None:
                used.add(segments[i])
    return np.sort(np.asarray(picked, dtype=np.intp))


def select_for_annotation(data: EvalTable | pd.DataFrame, by: str | Sequence[str] | None, budget: int, *,
                          score: str | None = None,
                          system: str | None = "system", segment: str | None = "seg_id",
                          method: str = "stratified", label_column: str | None = "human",
                          skip_labelled: str | None = None, random_state: Any = 0,
                          document: str | None = "doc_id") -> pd.DataFrame:
    """The chosen rows ready for annotation: the group columns, system, seg_id, doc_id, source,
    hypothesis and reference (those present; never the score, so that it cannot sway the judges),
    ``row_id`` (the row's 0-based position in ``data``: its label in pandas' default index) and an empty
    ``label_column`` to fill in. :func:`~xleval.calibration.merge_labels` joins the filled-in labels back.
    ``skip_labelled``: a human column; rows that already have a value are not chosen again.
    ``data``: an :class:`~xleval.table.EvalTable` (its ``by`` and ``score`` are the defaults) or a frame
    (tgt_lang/src_lang are derived from lp, as everywhere)."""
    table = as_table(data, by=by, score=score, default_by=DEFAULT_BY)
    given = table.frame
    table, order = in_row_order(table, system, segment, document)
    data, by_cols, score = table.frame, list(table.by), table.score_column
    if skip_labelled:
        require_columns(data, [skip_labelled], what="table", argument="skip_labelled")
    x = table.scores()
    if not np.isfinite(x).any():
        raise InputError(f"score column {score!r} has no finite value; rows to annotate are chosen among rows with "
                         "a score")
    index = table.groups
    groups = index.codes
    systems = group_index([data[system]], names=[system], allow_missing=True).codes \
        if system and system in data.columns else None
    segments = group_index([data[segment]], names=[segment], allow_missing=True).codes \
        if segment and segment in data.columns else None
    documents = group_index([data[document]], names=[document], allow_missing=True).codes \
        if document and document in data.columns else None
    eligible = None
    if skip_labelled:
        eligible = np.isnan(numeric_column(data, skip_labelled, what="table", argument="skip_labelled"))
    keep = annotation_columns(data, by_cols, system, segment, label_column, score=score)
    _check_budget(x, groups, eligible, budget, index.labels(), skip_labelled)
    rows = select_rows(x, groups, budget, systems=systems, segments=segments, eligible=eligible, method=method,
                       random_state=random_state, documents=documents)
    return annotation_rows(given, np.sort(order[rows]), keep, label_column)


def in_row_order(table: EvalTable, system: str | None, segment: str | None,
                 document: str | None) -> tuple[EvalTable, np.ndarray]:
    """The table with its rows in the canonical order (:func:`~xleval._base.grouping.canonical_order`: group,
    system, segment id by value; ties broken by the document and the texts the annotators see, not by the file's
    order), and the position in ``table`` of each of them: a seed then draws the same rows from a re-sorted or
    shuffled table (docs/design.md, "Row order never changes a result")."""
    frame = table.frame
    systems = frame[system].to_numpy(dtype=object) if system and system in frame.columns else None
    segments = segment_rank(frame[segment]) if segment and segment in frame.columns else None
    ties = [frame[c].to_numpy(dtype=object) for c in (document, "source", "hypothesis", "reference")
            if c and c in frame.columns]
    order = canonical_order(table.row_labels(), systems, segments, ties)
    if (order == np.arange(len(order))).all():
        return table, order
    return dataclasses.replace(table, _frame=frame.iloc[order]), order


def annotation_columns(data: pd.DataFrame, by_cols: Sequence[str], system: str | None, segment: str | None,
                       label_column: str | None, score: str | None = None) -> list[str]:
    """The columns of the rows to annotate that ``data`` has (never the score); refuses a label
    column that would blank one of them, or that is the ``score`` column (the labels are joined back to
    the table by ``row``: they would replace the scores)."""
    wanted = [*by_cols, system, segment, *ANNOTATION_COLUMNS]
    keep = list(dict.fromkeys(c for c in wanted if c and c in data.columns))
    if label_column is not None and not str(label_column).strip():
        raise InputError(f"label column {label_column!r} is empty: name the column the annotators fill in "
                         "(label_column=), e.g. 'human'", argument="label_column", value=label_column)
    if label_column and label_column in ("row", "row_id", *keep):
        raise InputError(f"label column {label_column!r} is a column of the rows to annotate ({['row_id', *keep]}); an "
                         "empty label column would replace it: choose another name (label_column=)",
                         argument="label_column", value=label_column)
    if label_column and label_column == score:
        raise InputError(f"label column {label_column!r} is the score column; labels joined back by row would replace "
                         "the scores: choose another name (label_column=), e.g. 'human'",
                         argument="label_column", value=label_column)
    return keep


def annotation_rows(data: pd.DataFrame, rows: np.ndarray, keep: Sequence[str],
                    label_column: str | None) -> pd.DataFrame:
    """The rows to annotate: ``keep`` columns of the chosen ``rows`` (positions), ``row_id`` first (the
    0-based position in ``data``, as pandas numbers the rows of a table it reads) and an empty
    ``label_column`` last. Written with :func:`xleval.io.write_table`, pandas and xleval read it back alike."""
    out = data.iloc[rows][list(keep)].reset_index(drop=True)
    out.insert(0, "row_id", np.asarray(rows, dtype=np.int64))
    if label_column:
        out[label_column] = np.nan
    return out


def _check_budget(x, groups, eligible, budget, names, skip_labelled=None) -> None:
    """A budget above every group's eligible rows selects nothing (every row would be sent: a total
    mistaken for the budget per group); a budget above some groups' rows takes all of theirs, said."""
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        return  # select_rows names the mistake
    ok = np.isfinite(x) if eligible is None else (eligible & np.isfinite(x))
    sizes = np.bincount(groups[ok], minlength=int(groups.max()) + 1 if len(groups) else 0)
    present = np.unique(groups)
    if not ok.any():  # no budget helps here: "give at most 0" would ask for a budget the option refuses
        raise InputError(f"every row with a score already has a value in {skip_labelled!r}: there is no row left to "
                         "choose; the labels are complete (fit on them), or leave out skip_labelled= to choose among "
                         "all rows", argument="skip_labelled", value=skip_labelled)
    if budget > sizes[present].max():
        g = int(present[np.argmax(sizes[present])])
        raise InputError(f"budget={budget} is more than any group's rows to choose from (the largest, "
                         f"{names[g]!r}, has {int(sizes[g])}): every row would be sent, none selected; the budget is "
                         f"per group: give at most {int(sizes[g])}", argument="budget", value=budget)
    scored = np.bincount(groups[np.isfinite(x)], minlength=len(sizes))
    blank = [names[int(g)] for g in present if scored[g] == 0]
    if blank:  # not "fewer rows than the budget, all chosen": none can be (WMT25: chrF++ in 2 of 31 pairs)
        warnings.warn(f"{len(blank)} group(s) have no row with a finite score, so none of theirs is chosen: "
                      f"{', '.join(blank[:10])}{' ...' if len(blank) > 10 else ''}", DataQualityWarning, stacklevel=3)
    short = [names[int(g)] for g in present if sizes[g] < budget and scored[g] > 0]
    if short:
        warnings.warn(f"{len(short)} group(s) have fewer than {budget} rows to choose from, so all of theirs are "
                      f"chosen: {', '.join(short[:10])}{' ...' if len(short) > 10 else ''}",
                      DataQualityWarning, stacklevel=3)
