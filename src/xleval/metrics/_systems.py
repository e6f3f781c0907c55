"""Several systems on the same segments, as ``sacrebleu REF -i A B C``: corpus scores per system and
metric, optionally each system tested against the first (the baseline) with sacrebleu's paired
bootstrap (``test="bs"``) or approximate randomization (``test="ar"``), or a bootstrap interval per
system (``confidence=True``). Statistics come from :mod:`xleval.stats`; this module only builds the
per-segment sufficient statistics and keeps the signatures (sacrebleu adds ``bs``/``ar``/``seed``).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
import pandas as pd

from .._base.grouping import segment_rank
from .._base.result import Result
from ..exceptions import DataQualityWarning, InputError
from ._base import CORPUS_METRICS, Metric, count_refs
from ._registry import get_metric

__all__ = ["SystemsComparison", "compare_systems", "compare_systems_frame", "TESTS"]

TESTS = ("bs", "ar")
DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}


@dataclass(frozen=True, eq=False)
class SystemsComparison(Result):
    """Corpus scores of several systems on the same segments (sacrebleu's multi-system mode).

    ``systems``: names in input order (the first is the baseline of a test); ``metrics``: metric
    column names (``bleu``, ``chrf``, ...); ``results[metric][system]``: a
    :class:`xleval.stats.SystemTest` (score; with a test, p-value against the baseline and for
    ``bs`` the bootstrap mean and 95% half-width); ``signatures[metric]``: the metric signature with
    sacrebleu's ``bs``/``ar``/``seed`` fields when resampling was done. ``test`` is ``bs``, ``ar`` or
    None; ``group`` names the language pair (table input) or is None.
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    results: dict[str, dict[str, Any]]
    signatures: dict[str, str]
    test: str | None = None
    confidence: bool = False
    n_segments: int = 0
    n_resamples: int | None = None
    random_state: int | None = None
    group: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def baseline(self) -> str:
        return self.systems[0]

    def table(self) -> pd.DataFrame:
        """One row per system: ``system`` then per metric ``<m>`` and, when present, ``<m>_mean``,
        ``<m>_ci`` and ``<m>_p``."""
        rows = []
        for name in self.systems:
            row: dict[str, Any] = {"system": name}
            for m in self.metrics:
                r = self.results[m][name]
                row[m] = r.score
                if r.mean is not None:
                    row[f"{m}_mean"], row[f"{m}_ci"] = r.mean, r.ci
                if self.test is not None:
                    row[f"{m}_p"] = r.p_value
            rows.append(row)
        return pd.DataFrame(rows)


def _with_fields(signature: str, extra: Mapping[str, Any]) -> str:
    """sacrebleu's signature order: ``nrefs`` first, then ``bs``, ``ar``, ``seed``, then the rest."""
    head, sep, rest = signature.partition("|")
    fields = "|".join(f"{k}:{v}" for k, v in extra.items())
    return f"{head}|{fields}{sep}{rest}" if fields else signature


def _metric_name(metric: Metric, spec: str) -> str:
    return spec.split(":")[0] if ":" in spec else metric.name


def compare_systems(
    systems: Mapping[str, Sequence[str]] | Sequence[tuple[str, Sequence[str]]],
    references: Sequence[str] | Sequence[Sequence[str | None]],
    metrics: Sequence[str | Metric] = ("bleu",),
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    tgt_lang: str | None = None,
    test: str | None = None,
    confidence: bool = False,
    n_resamples: int | None = None,
    random_state: Any = 12345,
    sources: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> SystemsComparison:
    """Score each system against the same references (sacrebleu's corpus defaults).

    ``systems``: name -> hypotheses (first = baseline), in order; ``references``: one stream or
    several (``None`` for a missing reference). ``metrics``: registry names or Metric objects;
    ``options[name]`` are their options; BLEU without ``tokenize`` picks its tokenizer for
    ``tgt_lang`` as sacrebleu does for ``-l``. ``test``: None, ``"bs"`` (paired bootstrap,
    ``n_resamples`` default 1000) or ``"ar"`` (approximate randomization, default 10,000 trials);
    ``confidence=True`` (without a test) adds a bootstrap interval per system (default 1000
    resamples). ``random_state``: sacrebleu's default seed 12345.
    """
    named = list(systems.items()) if isinstance(systems, Mapping) else [(str(a), b) for a, b in systems]
    if not named:
        raise InputError("compare_systems needs at least one system")
    names = [n for n, _ in named]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InputError(f"system names must be unique; {dup} appear more than once")
    if test is not None and test not in TESTS:
        raise InputError(f"test must be one of {', '.join(TESTS)} or None, got {test!r}")
    if test is not None and len(named) < 2:
        raise InputError("a paired test needs at least two systems (the first is the baseline)")
    if test is not None and confidence:
        raise InputError(f"confidence=True does not combine with test={test!r}: a paired test gives every system its "
                         "interval too; use one of them", argument="confidence", value=confidence)
    one_stream = references and isinstance(next(iter(references)), str)
    streams = cast("list[list[str | None]]", [list(references)] if one_stream else [list(s) for s in references])
    n = len(streams[0]) if streams else 0
    for name, hyps in named:
        if len(hyps) != n:
            raise InputError(f"system {name!r} has {len(hyps)} segments but the references have {n}; "
                             "they must be line-aligned")
    if test is not None:
        _warn_identical(named)
    n_samples = n_resamples if n_resamples is not None else DEFAULT_SAMPLES.get(test or "bs", 1000)
    options = options or {}
    built = [_build(m, options, tgt_lang, count_refs(streams)) for m in metrics]
    results: dict[str, dict[str, Any]] = {}
    signatures: dict[str, str] = {}
    seed = None
    for spec, metric in built:
        column = _metric_name(metric, spec)
        if not metric.has_stats:
            raise InputError(f"metric {column!r} has no summable statistics; compare systems with bleu, chrf or ter")
        stats = _all_stats(metric, named, streams, sources, progress)
        res, seed = _test_all(metric, names, stats, test, confidence, n_samples, random_state)
        results[column] = res
        extra: dict[str, Any] = {}
        if test is not None:
            extra[test] = n_samples
        elif confidence:
            extra["bs"] = n_samples
        if extra:
            extra["seed"] = "none" if seed is None else seed
        signatures[column] = _with_fields(metric.signature, extra)
    return SystemsComparison(systems=tuple(names), metrics=tuple(results), results=results, signatures=signatures,
                             test=test, confidence=confidence, n_segments=n,
                             n_resamples=n_samples if (test or confidence) else None, random_state=seed)


def _warn_identical(named: Sequence[tuple[str, Sequence[str]]]) -> None:
    """A system whose outputs equal the baseline's, said: its paired test still prints p = 1/(B+1) with a
    star, as sacrebleu's does (no resample differs by more than the observed 0), which is no evidence."""
    base_name, base = named[0]
    same = [name for name, hyps in named[1:] if list(hyps) == list(base)]
    if same:
        warnings.warn(f"system(s) {', '.join(map(repr, same))}: outputs identical to the baseline {base_name!r}; the "
                      "paired test's p (1/(resamples+1), starred, as sacrebleu prints it) is no evidence of a "
                      "difference: the two are the same translations", DataQualityWarning, stacklevel=3)


def _build(metric: str | Metric, options, tgt_lang, nrefs) -> tuple[str, Metric]:
    if isinstance(metric, Metric):
        return metric.name, metric
    opts = dict(options.get(metric, {}))
    if metric.split(":")[0].lower() in CORPUS_METRICS:
        opts.setdefault("nrefs", nrefs)
    if metric.split(":")[0].lower() == "bleu" and "tokenize" not in opts:
        opts.update(tokenize=None, tgt_lang=tgt_lang)
    return metric, get_metric(metric, **opts)


def _all_stats(metric: Metric, named, streams, sources, progress) -> list[np.ndarray]:
    """Per-system statistics from one call (references repeat across systems: tokenised once)."""
    k = len(named)
    hyps = [h for _, hs in named for h in hs]
    refs = [s * k for s in streams]
    srcs = list(sources) * k if sources is not None else None
    stats = metric.sentence_stats(hyps, refs, srcs)
    if progress is not None:
        progress(len(hyps))
    n = len(streams[0])
    return [stats[i * n : (i + 1) * n] for i in range(k)]


def _test_all(metric, names, stats, test, confidence, n_samples, random_state):
    from ..stats import SystemTest, approximate_randomization_test, bootstrap_score_ci, paired_bootstrap_test
    from ..stats._paired_mt import null_p_value
    from ._sacrebleu_base import SacrebleuMetric, sacrebleu_resampled_score

    score = metric.score_from_stats
    out: dict[str, Any] = {}
    seed = None
    if test is None and not confidence:
        for name, st in zip(names, stats, strict=True):
            out[name] = SystemTest(score=float(score(st.sum(axis=0))), n=len(st), method="corpus score")
        return out, None
    if test is None:
        for name, st in zip(names, stats, strict=True):
            out[name] = r = bootstrap_score_ci(st, score, n_resamples=n_samples, random_state=random_state)
            seed = r.random_state
        return out, seed
    base = stats[0]
    exact = float(score(base.sum(axis=0)))
    if test == "bs":  # sacrebleu: the baseline's interval from the same resamples, in its arithmetic
        resampled = sacrebleu_resampled_score(metric) if isinstance(metric, SacrebleuMetric) else score
        r = bootstrap_score_ci(base, resampled, n_resamples=n_samples, random_state=random_state)
        out[names[0]] = r = replace(r, score=exact)
    else:
        out[names[0]] = r = SystemTest(score=exact, n=len(base), method="corpus score")
    seed = r.random_state
    for name, st in zip(names[1:], stats[1:], strict=True):
        if test == "bs":
            r = paired_bootstrap_test(base, st, resampled, random_state=random_state, n_resamples=n_samples)
            # the corpus scores and the observed difference as the metric gives them (sacrebleu's), not resampled
            mine = float(score(st.sum(axis=0)))
            r = replace(r, score=mine, baseline_score=exact, difference=mine - exact,
                        p_value=null_p_value(r.distribution, abs(exact - mine)))
        else:
            r = approximate_randomization_test(base, st, score, random_state=random_state, n_trials=n_samples)
        out[name] = r
        seed = r.random_state if seed is None else seed
    return out, seed


def compare_systems_frame(
    df: pd.DataFrame,
    metrics: Sequence[str] = ("bleu",),
    *,
    by: str = "lp",
    baseline: str | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    test: str | None = "bs",
    n_resamples: int | None = None,
    random_state: Any = 12345,
    progress: Callable[[int], None] | None = None,
) -> list[SystemsComparison]:
    """:func:`compare_systems` for every ``by`` group of a long table (``system``, ``seg_id``,
    ``hypothesis``, ``reference``[, ``reference_2`` ...]): the systems of a group must cover the same
    segments; the baseline is ``baseline`` (a system name) or the group's first system in row order.
    """
    from ._frame import score_inputs

    for column in ("system", "seg_id", by):
        if column not in df.columns:
            raise InputError(f"comparing systems needs a {column!r} column (columns: {list(df.columns)})")
        missing = df[column].isna().to_numpy()
        if missing.any():
            raise InputError(f"column {column!r} row {int(np.flatnonzero(missing)[0]) + 1}: missing value "
                             f"({int(missing.sum())} row(s) in all); every row needs its {column}")
    # the checks of score_frame and the streamed scoring: texts, references, language codes
    hyps, refs, _, tgt = score_inputs(df)
    if refs is None:
        raise InputError("comparing systems needs a 'reference' column")
    systems = df["system"].astype(str).to_numpy()
    seg = df["seg_id"].to_numpy()
    codes, groups = pd.factorize(df[by])
    out, alone = [], []
    for g, group in enumerate(groups):
        rows = np.flatnonzero(codes == g)
        order = list(dict.fromkeys(systems[rows]))
        if baseline is not None:
            if baseline not in order:
                raise InputError(f"{by} {group}: baseline system {baseline!r} not found; its systems are {order}")
            order = [baseline] + [s for s in order if s != baseline]
        if len(order) < 2 and test is not None:
            alone.append(f"{group} ({order[0]!r})")
            continue
        first = rows[systems[rows] == order[0]]
        # segments in their canonical order (ids by value), as sacrebleu reads line-aligned files: the bootstrap's
        # draws index segments, so the table's row order must not change them
        first = first[np.argsort(segment_rank(pd.Series(seg[first])), kind="stable")]
        seg_ids = seg[first].tolist()
        if len(set(seg_ids)) != len(seg_ids):
            raise InputError(f"{by} {group}, system {order[0]!r}: seg_id values repeat; one row per segment per system")
        named = []
        for name in order:
            own = rows[systems[rows] == name]
            position = dict(zip(seg[own].tolist(), own.tolist(), strict=True))
            if len(own) != len(seg_ids) or not all(s in position for s in seg_ids):
                raise InputError(f"{by} {group}: system {name!r} does not cover the same seg_id values as "
                                 f"{order[0]!r}; paired tests need every system on the same segments")
            aligned = [position[s] for s in seg_ids]
            _check_same_references(refs, first, aligned, name, order[0], f"{by} {group}", seg_ids)
            named.append((name, [hyps[i] for i in aligned]))
        group_refs = [[stream[i] for i in first] for stream in refs]
        lang = None if tgt is None else str(tgt[first[0]])
        res = compare_systems(named, group_refs, metrics, options=options, tgt_lang=lang, test=test,
                              n_resamples=n_resamples, random_state=random_state, progress=progress)
        out.append(replace(res, group=str(group)))
    if not out:
        raise InputError(f"no {by} group has two systems to compare")
    if alone:
        warnings.warn(f"{by} {', '.join(alone)}: one system only, left out of the paired tests (each compares a "
                      "system with a baseline of the same group)", DataQualityWarning, stacklevel=2)
    return out


def _check_same_references(refs: list, base_rows: Sequence[int], rows: Sequence[int], name: str, base: str,
                           where: str, seg_ids: Sequence[Any]) -> None:
    """Every system of a paired test is scored against one reference set (sacrebleu's paired tests take one);
    a system whose rows carry other references for a segment than the baseline's is refused, naming the row."""
    for k, (b, r) in enumerate(zip(base_rows, rows, strict=True)):
        if any(stream[b] != stream[r] for stream in refs):
            raise InputError(f"{where}: row {r + 1} (system {name!r}, seg_id {seg_ids[k]!r}) has another reference "
                             f"than the baseline {base!r} (row {b + 1}); a paired test scores every system against "
                             "one shared reference set (as sacrebleu's): give each segment the same reference in "
                             "every system's rows, or compare corpus scores without a paired test (each system on "
                             "its own rows)")
