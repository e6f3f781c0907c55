"""Scoring a long table: one column per metric, target-language-aware BLEU tokenizers, corpus
scores per (lp, system) from summed sufficient statistics.

The score columns are sentence-level scores as sacrebleu's ``sentence_bleu`` / ``sacrebleu -sl``
compute them (BLEU with effective order); corpus scores are sacrebleu's ``corpus_score`` /
``corpus_bleu`` (BLEU without it) from the same per-row statistics. Both signatures are kept.

The table is a pandas DataFrame or a ``pyarrow.Table``: both are read column by column through
:class:`_Table` with the same checks and texts, so a Parquet file is scored into a Parquet file
without importing pandas (``xleval score IN.parquet -o OUT.parquet``).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from xleval._base.progress import tell_stage
from xleval._base.signature import combine_signatures
from xleval.exceptions import InputError
from xleval.io._write import is_arrow_table

from . import _fast
from ._base import CORPUS_METRICS, Metric, count_refs
from ._registry import get_metric

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made, not at import
    import pandas as pd

__all__ = ["ScoredFrame", "score_frame", "score_inputs", "corpus_table", "reference_columns", "CORPUS_METRICS",
           "signature_metadata"]

_REF_EXTRA = re.compile(r"^reference_(\d+)$")
_NEURAL = ("comet:", "bertscore:", "embed:")
# rows per metric call when reporting progress (the compiled kernels batch 50,000 segments anyway)
PROGRESS_ROWS = 50_000


def reference_columns(df: Any) -> list[str]:
    """``reference`` then ``reference_2``, ``reference_3``, ... (sacrebleu's several references) of a
    DataFrame or a pyarrow Table."""
    names = list(df.column_names if is_arrow_table(df) else df.columns)
    extra = sorted((int(m.group(1)), c) for c in names if (m := _REF_EXTRA.match(str(c))))
    return (["reference"] if "reference" in names else []) + [c for _, c in extra]


class _Table:
    """The table being scored, read column by column: a pandas DataFrame, or a pyarrow Table read
    with pyarrow only. Both give the same texts, codes and errors."""

    def __init__(self, data: Any):
        self.data = data
        self.arrow = is_arrow_table(data)
        self.columns = list(data.column_names if self.arrow else data.columns)
        self.n = data.num_rows if self.arrow else len(data)

    def texts(self, column: str, allow_missing: bool = False) -> list[str | None]:
        """A column's cells as Python strings (None where missing; a missing cell is refused unless
        ``allow_missing``, then a cell whose spelling a reader lost: :func:`_refuse_spelling_lost`)."""
        if self.arrow:
            values = self.data.column(column)
            if not _arrow_text(values.type):  # numbers become text as pandas spells them
                return _Table(self.data.select([column]).to_pandas()).texts(column, allow_missing)
            texts = values.to_pylist()
            if values.null_count and not allow_missing:
                _refuse_missing(column, np.fromiter((v is None for v in texts), dtype=bool, count=self.n))
            return texts
        import pandas as pd

        values = self.data[column]
        missing = values.isna().to_numpy()
        if not allow_missing:
            _refuse_missing(column, missing)
        if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty", "integer"):
            _refuse_spelling_lost(column, values, missing)
        if not missing.any():
            # string columns already hold Python strings: tolist() without an astype(str) copy
            return values.tolist() if pd.api.types.is_string_dtype(values) else values.astype(str).tolist()
        return [None if gone else str(v) for v, gone in zip(values.tolist(), missing, strict=True)]

    def factorize(self, column: str) -> tuple[np.ndarray, list]:
        """Codes in first-seen order (-1 for a missing cell) and the distinct values, as pandas.factorize."""
        if self.arrow:
            values = self.data.column(column)
            if _arrow_text(values.type) and not _arrow_dictionary(values.type):
                encoded = _fast.dictionary_encode(values).combine_chunks()  # codes in first-seen order, as below
                codes = _fast.arrow_ints(encoded.indices).astype(np.int64)
                if encoded.indices.null_count:  # pyarrow's fill_null and to_numpy would import pandas
                    bitmap = np.frombuffer(encoded.indices.buffers()[0], dtype=np.uint8)
                    valid = np.unpackbits(bitmap, bitorder="little")
                    offset = encoded.indices.offset
                    codes[valid[offset : offset + len(codes)] == 0] = -1
                return codes, encoded.dictionary.to_pylist()
            index: dict = {}
            put = index.setdefault
            codes = np.fromiter((-1 if v is None else put(v, len(index)) for v in values.to_pylist()),
                                dtype=np.int64, count=self.n)
            return codes, list(index)
        import pandas as pd

        codes, uniques = pd.factorize(self.data[column])
        return codes, list(uniques)

    def pandas(self, columns: list[str]):
        """Some columns as a DataFrame (for the checks that are written for pandas)."""
        return self.data.select(columns).to_pandas() if self.arrow else self.data[columns]

    def with_columns(self, new: Mapping[str, np.ndarray]) -> Any:
        """A copy with the score columns set: a column of the same name is replaced where it stands,
        the others are appended, as assigning them to a DataFrame does."""
        if not self.arrow:
            out = self.data.copy()
            for name, values in new.items():
                out[name] = values
            return out
        table = self.data
        for name, values in new.items():
            array = _arrow_floats(values)
            if name in table.column_names:
                table = table.set_column(table.column_names.index(name), name, array)
            else:
                table = table.append_column(name, array)
        return table


def _arrow_floats(values: np.ndarray):
    """Scores as an Arrow float64 array, NaN as null (as the DataFrame's conversion writes them), made
    from the buffers: ``pyarrow.array`` would import pandas to ask whether they are a Series."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.float64)
    valid = ~np.isnan(values)
    if valid.all():
        return pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(values)])
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.float64(), len(values), [bitmap, pa.py_buffer(values)],
                                 null_count=int(len(values) - valid.sum()))


def _arrow_dictionary(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_dictionary(kind)


def _arrow_text(kind) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)


@dataclass(frozen=True)
class ScoredFrame:
    """Per-row scores (``frame``), per-row statistics and the metrics used for each row group.

    ``signatures``: column -> signature of the sentence-level scores in the column;
    ``corpus_signatures``: column -> signature of corpus scores from the summed statistics (they
    differ for BLEU: ``eff:yes`` per sentence, ``eff:no`` per corpus, as in sacrebleu);
    ``metrics`` / ``corpus_metrics``: column -> {group: Metric}; ``group_of_row``: column -> the
    group index of each row (groups are target languages when BLEU picks its tokenizer by them).
    """

    frame: Any  # a pandas DataFrame, or a pyarrow Table when a pyarrow Table was scored
    signatures: dict[str, str]
    signatures_by_group: dict[str, dict[str, str]] = field(default_factory=dict)
    stats: dict[str, np.ndarray | None] = field(default_factory=dict, repr=False)
    metrics: dict[str, dict[str, Metric]] = field(default_factory=dict, repr=False)
    group_of_row: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    corpus_metrics: dict[str, dict[str, Metric]] = field(default_factory=dict, repr=False)
    corpus_signatures: dict[str, str] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        """What ``write_table(..., metadata=)`` stores: ``{"signatures": {column: signature}, ...}``
        (plus ``corpus_signatures`` where they differ from the column's, and
        ``signatures_by_tgt_lang`` where a column's signature differs by target language)."""
        meta = signature_metadata(self.signatures, self.corpus_signatures)
        varying = {k: v for k, v in self.signatures_by_group.items() if len(set(v.values())) > 1}
        if varying:
            meta["signatures_by_tgt_lang"] = varying
        return meta


def _refuse_spelling_lost(column: str, values: Any, missing: np.ndarray) -> None:
    """A text cell that a reader typed as a fraction or a truth value (JSON's ``1e5``, ``3.10``, ``true``; a float
    column) has lost its spelling: scored as Python spells it ('100000.0'), it would score another text. Refused,
    naming the first row; integers keep their spelling and are read as text."""
    import numbers

    for i, (v, gone) in enumerate(zip(values.tolist(), missing, strict=True)):
        if not gone and (isinstance(v, (bool, np.bool_)) or (isinstance(v, numbers.Real) and not isinstance(
                v, (int, np.integer)))):
            shown = json.dumps(v.item() if isinstance(v, np.generic) else v)
            raise InputError(f"column {column!r} row {i + 1}: the cell is the number or truth value {shown}, not a "
                             "text, so its spelling is lost (1e5 and 100000.0 are one number); write the cell as a "
                             "string in the file (in JSONL: in double quotes, as written)")


def _refuse_missing(column: str, missing: np.ndarray) -> None:
    if missing.any():
        row = int(np.flatnonzero(missing)[0]) + 1
        raise InputError(
            f"column {column!r} row {row}: missing text ({int(missing.sum())} row(s) in all); "
            "fill them (e.g. with an empty string) — rows are never dropped silently"
        )


def _check_present(table: _Table, column: str) -> None:
    """The check of :meth:`_Table.texts` without making the texts (a column the metrics may not read)."""
    if table.arrow:
        values = table.data.column(column)
        if not _arrow_text(values.type):  # numbers become text through pandas, NaN a missing cell
            table.texts(column)
        elif values.null_count:
            _refuse_missing(column, values.is_null().to_numpy(zero_copy_only=False))
        return
    _refuse_missing(column, table.data[column].isna().to_numpy())


def _references(table: _Table) -> list[list[str | None]] | None:
    """Reference streams; a missing cell in ``reference_k`` is a missing reference (sacrebleu's None:
    that segment has fewer references), but every row needs at least one. An empty cell of ``reference_2``
    and after is missing too: it is how a TSV or CSV writes a missing cell, and the same rows in Parquet or
    JSONL (null) must score alike; the first reference keeps an empty text as sacrebleu's plain files do."""
    columns = reference_columns(table.data)
    if not columns:
        return None
    if len(columns) == 1:
        return [table.texts(columns[0])]
    streams = [table.texts(c, allow_missing=True) for c in columns]
    streams[1:] = [[None if r == "" else r for r in stream] for stream in streams[1:]]
    none_left = np.ones(table.n, dtype=bool)
    for stream in streams:
        none_left &= np.fromiter((r is None for r in stream), dtype=bool, count=table.n)
    if none_left.any():
        row = int(np.flatnonzero(none_left)[0]) + 1
        raise InputError(f"row {row}: no reference in any of {columns} ({int(none_left.sum())} row(s) in all); "
                         "give at least one reference per row, or score those rows separately")
    return streams


# Two-letter ISO 639-1 codes that xleval.io.normalize_code maps to themselves (a test checks the
# list against it): a language pair made of two of them needs no langcodes (whose import costs a
# short command a quarter of a CPU-second) to find its normalised target language.
_PLAIN_CODES = frozenset(["aa", "ab", "ae", "af", "ak", "am", "an", "ar", "as", "av", "ay", "az", "ba", "be", "bg",
                          "bi", "bm", "bn", "bo", "br", "bs", "ca", "ce", "ch", "co", "cr", "cs", "cu", "cv", "cy",
                          "da", "de", "dv", "dz", "ee", "el", "en", "eo", "es", "et", "eu", "fa", "ff", "fi", "fj",
                          "fo", "fr", "fy", "ga", "gd", "gl", "gn", "gu", "gv", "ha", "he", "hi", "ho", "hr", "ht",
                          "hu", "hy", "hz", "ia", "id", "ie", "ig", "ii", "ik", "io", "is", "it", "iu", "ja", "jv",
                          "ka", "kg", "ki", "kj", "kk", "kl", "km", "kn", "ko", "kr", "ks", "ku", "kv", "kw", "ky",
                          "la", "lb", "lg", "li", "ln", "lo", "lt", "lu", "lv", "mg", "mh", "mi", "mk", "ml", "mn",
                          "mr", "ms", "mt", "my", "na", "nb", "nd", "ne", "ng", "nl", "nn", "no", "nr", "nv", "ny",
                          "oc", "oj", "om", "or", "os", "pa", "pi", "pl", "ps", "pt", "qu", "rm", "rn", "ro", "ru",
                          "rw", "sa", "sc", "sd", "se", "sg", "si", "sk", "sl", "sm", "sn", "so", "sq", "sr", "ss",
                          "st", "su", "sv", "sw", "ta", "te", "tg", "th", "ti", "tk", "tn", "to", "tr", "ts", "tt",
                          "ty", "ug", "uk", "ur", "uz", "ve", "vi", "vo", "wa", "wo", "xh", "yi", "yo", "za", "zh",
                          "zu"])


def _tgt_langs(table: _Table) -> np.ndarray | None:
    """Normalised target languages (``tgt_lang``, or from ``lp``); every language column is checked,
    an ``lp`` against ``src_lang``/``tgt_lang`` too."""
    present = [c for c in ("lp", "src_lang", "tgt_lang") if c in table.columns]
    if not present:
        return None
    if present == ["lp"]:
        plain = _plain_targets(*table.factorize("lp"))
        if plain is not None:
            return plain
    from xleval.io import add_language_columns

    return add_language_columns(table.pandas(present))["tgt_lang"].astype(str).to_numpy()


def _plain_targets(codes: np.ndarray, uniques: list) -> np.ndarray | None:
    """The target languages of language pairs that are all two plain codes (``de-en``), without
    langcodes; None when any pair needs :func:`xleval.io.add_language_columns` (or is missing)."""
    parts = [str(u).split("-") for u in uniques]
    if (codes >= 0).all() and all(len(p) == 2 and p[0] in _PLAIN_CODES and p[1] in _PLAIN_CODES for p in parts):
        return np.array([p[1] for p in parts], dtype=object)[codes].astype(str)
    return None


def score_inputs(df: Any) -> tuple[list[str], list[list[str | None]] | None, list[str] | None, np.ndarray | None]:
    """The checked inputs of scoring a table (a DataFrame or a pyarrow Table): hypotheses, reference
    streams (``reference``, ``reference_2``, ...; None where a segment has fewer references), sources
    and target languages. The one validation of the in-memory and the streamed scoring, of plain
    files and of paired tests: a missing column or text, a row without any reference, or a bad
    language code, is an InputError."""
    return _checked(_Table(df))


def _checked(table: _Table, sources: bool = True):
    """Hypotheses, references, sources (None when ``sources`` is False: then only checked) and target
    languages."""
    if "hypothesis" not in table.columns:
        raise InputError(f"no 'hypothesis' column (columns: {table.columns}); map yours with "
                         "columns={'NAME': 'hypothesis'}", argument="columns", value="hypothesis")
    hyps = table.texts("hypothesis")
    refs = _references(table)
    srcs = None
    if "source" in table.columns:
        if sources:
            srcs = table.texts("source")
        else:
            _check_present(table, "source")
    return hyps, refs, srcs, _tgt_langs(table)


def _lang_pairs(table: _Table) -> np.ndarray | None:
    """``src<TAB>tgt`` normalised language pair of each row (a judge's prompts name both languages)."""
    present = [c for c in ("lp", "src_lang", "tgt_lang") if c in table.columns]
    if "lp" not in present and len(present) < 2:
        return None
    from xleval.io import add_language_columns

    langs = add_language_columns(table.pandas(present))
    return (langs["src_lang"].astype(str) + "\t" + langs["tgt_lang"].astype(str)).to_numpy()


def _groups(spec: str, options: Mapping[str, Any], tgt: np.ndarray | None, n: int,
            pairs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row groups of one metric: target languages for BLEU without an explicit tokenizer, language pairs for a
    judge, else one."""
    if spec.split(":")[0].lower() == "judge" and pairs is not None:
        groups, inverse = np.unique(pairs, return_inverse=True)
        return groups, inverse.astype(np.int64)
    if spec.split(":")[0].lower() == "bleu" and "tokenize" not in options and tgt is not None:
        groups, inverse = np.unique(tgt, return_inverse=True)
        return groups, inverse.astype(np.int64)
    return np.array(["*"]), np.zeros(n, dtype=np.int64)


def signature_metadata(signatures: Mapping[str, str], corpus_signatures: Mapping[str, str]) -> dict[str, Any]:
    """What a scored table stores of its metrics: ``{"signatures": ...}``, plus ``corpus_signatures`` where a
    column's corpus score has another signature than its segments (the in-memory and the streamed ``score``)."""
    meta: dict[str, Any] = {"signatures": dict(signatures)}
    corpus = {k: v for k, v in corpus_signatures.items() if k in signatures and v != signatures[k]}
    if corpus:
        meta["corpus_signatures"] = corpus
    return meta


def _build(spec: str, options: Mapping[str, Any], group: str, nrefs: int | str | None, level: str) -> Metric:
    opts = dict(options)
    kind = spec.split(":")[0].lower()
    if nrefs is not None and kind in CORPUS_METRICS:
        opts.setdefault("nrefs", nrefs)
    if group != "*" and kind == "judge":
        src_lang, tgt_lang = group.split("\t")
        return get_metric(spec, level=level, src_lang=src_lang, tgt_lang=tgt_lang, **opts)
    if group != "*":
        return get_metric(spec, level=level, tokenize=None, tgt_lang=group, **opts)
    return get_metric(spec, level=level, **opts)


def score_frame(
    df: Any,
    metrics: Sequence[str],
    options: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> ScoredFrame:
    """Add one float column per metric (named by the metric) to a copy of ``df`` (a pandas DataFrame,
    or a pyarrow Table: then ``frame`` is a pyarrow Table too, and pandas is not imported).

    ``df`` needs ``hypothesis`` and (for reference-based metrics) ``reference`` (+ ``reference_2``
    ...; a missing cell there means that segment has fewer references), optionally ``source``.
    BLEU without an explicit ``tokenize`` option picks its tokenizer per target language
    (``tgt_lang``, or from ``lp``); each group's signature is recorded. ``progress(rows)`` is
    called as rows are scored (once per metric, so the total is ``len(df) * len(metrics)``); a callback
    that takes ``stage=`` is told which metric runs (:func:`xleval._base.progress.tell_stage`).
    """
    options = options or {}
    table = _Table(df)
    # BLEU and chrF read a table whose segments all have every reference through one pool of its
    # distinct texts (converted once for every metric and language); other metrics read the lists.
    # A Parquet table's texts go into the pool without becoming Python strings.
    arrow_texts = _fast.enabled() and _plain_arrow_texts(table)
    hyps: list | None = None
    refs: list | None = None
    if arrow_texts:
        if "source" in table.columns:
            _check_present(table, "source")
        tgt = _tgt_langs(table)
        n_refs = len(reference_columns(table.data))
        whole_refs = True
    else:
        hyps, refs, _, tgt = _checked(table, sources=False)
        n_refs = len(refs) if refs is not None else 0
        whole_refs = refs is not None and _fast.enabled() and not any(None in stream for stream in refs)
    n = table.n
    pool: _fast.TextPool | None = None
    srcs: list | None = None
    parts: dict[str, dict] = {key: {} for key in ("signatures", "signatures_by_group", "stats", "metrics",
                                                   "group_of_row", "corpus_metrics", "corpus_signatures")}
    columns: dict[str, np.ndarray] = {}
    pairs = _lang_pairs(table) if any(s.split(":")[0].lower() == "judge" for s in metrics) else None
    spec_of: dict[str, str] = {}
    # comet:PATH, metricx:PATH, ... (judges name their columns by model: several judges are several columns)
    neural = [spec for spec in metrics if ":" in spec and spec.split(":")[0].lower() != "judge"]
    for i, spec in enumerate(neural):  # before any model runs: comet:A,comet:B would write one column 'comet'
        for other in neural[:i]:
            if other.split(":")[0].lower() == spec.split(":")[0].lower():
                _same_column(other, spec, spec.split(":")[0].lower())
    for k, spec in enumerate(metrics, 1):
        tell_stage(progress, f"{spec} ({k} of {len(metrics)})" if len(metrics) > 1 else spec)
        opts = options.get(spec, {})
        groups, inverse = _groups(spec, opts, tgt, n, pairs)
        rows_of = [np.arange(n)] if len(groups) == 1 else [np.flatnonzero(inverse == i) for i in range(len(groups))]
        seg_metrics, corpus_metrics = {}, {}
        for g, rows in zip(groups, rows_of, strict=True):
            nrefs = n_refs if whole_refs and len(rows) else _count_refs(refs, rows)
            seg_metrics[str(g)] = _build(spec, opts, str(g), nrefs, "sentence")
            corpus_metrics[str(g)] = _build(spec, opts, str(g), nrefs, "corpus")
        first = next(iter(seg_metrics.values()))
        column = spec.split(":")[0] if spec.lower().startswith(_NEURAL) else getattr(first, "column", first.name)
        _check_reads(spec, first, table)
        if column in spec_of:  # bleu and BLEU: the second would overwrite the first's column without a word
            _same_column(spec_of[column], spec, column)
        spec_of[column] = spec
        if whole_refs and all(hasattr(m, "_pool_stats") for m in seg_metrics.values()):
            if pool is None:
                pool = _arrow_pool(table) if arrow_texts else None
            if pool is None:
                if hyps is None:
                    hyps, refs = table.texts("hypothesis"), _references(table)
                pool = _fast.TextPool.of(hyps, refs)  # type: ignore[arg-type]
            scores, stats = _score_pooled(list(seg_metrics.values()), rows_of, pool, progress)
        else:
            if hyps is None:
                hyps, refs = table.texts("hypothesis"), _references(table)
            if srcs is None and "source" in table.columns:
                srcs = table.texts("source")
            scores, stats = _score_groups(list(seg_metrics.values()), rows_of, hyps, refs, srcs, progress)
        columns[column] = scores
        sigs = {g: m.signature for g, m in seg_metrics.items()}
        parts["signatures"][column] = combine_signatures(sigs)
        parts["signatures_by_group"][column] = sigs
        parts["corpus_signatures"][column] = combine_signatures({g: m.signature for g, m in corpus_metrics.items()})
        parts["stats"][column] = stats
        parts["metrics"][column] = seg_metrics
        parts["corpus_metrics"][column] = corpus_metrics
        parts["group_of_row"][column] = inverse
    return ScoredFrame(table.with_columns(columns), **parts)


def _check_reads(spec: str, metric: Metric, table: _Table) -> None:
    """The table has the columns the metric reads (the metric's own check speaks of its Python arguments)."""
    for needed, column, present in ((metric.needs_refs, "reference", bool(reference_columns(table.data))),
                                    (metric.needs_srcs, "source", "source" in table.columns)):
        if needed and not present:
            raise InputError(f"metric {spec!r} reads a {column} for every row, and the table has no {column!r} "
                             f"column (columns: {list(table.columns)}); map yours with columns={{'NAME': "
                             f"'{column}'}}, or use a metric that does without", argument="columns", value=column)


def _same_column(first: str, second: str, column: str) -> None:
    raise InputError(f"metrics {first!r} and {second!r} would both write the column {column!r} (one would be "
                     "lost); score one model of a kind per run, each to its own output, and join the columns",
                     argument="metrics", value=second)


def _count_refs(refs, rows: np.ndarray) -> int | str | None:
    """sacrebleu's number of references of the rows."""
    if refs is None or not len(rows):
        return None
    return count_refs([[s[i] for i in rows] for s in refs])


def _plain_arrow_texts(table: _Table) -> bool:
    """An Arrow table whose hypotheses and references are text columns without a missing cell."""
    if not table.arrow or "hypothesis" not in table.columns:
        return False
    import pyarrow as pa

    columns = ["hypothesis", *reference_columns(table.data)]
    return len(columns) > 1 and all(
        (pa.types.is_string(c.type) or pa.types.is_large_string(c.type)) and not c.null_count
        for c in map(table.data.column, columns))


def _arrow_pool(table: _Table) -> _fast.TextPool | None:
    return _fast.TextPool.from_arrow([table.data.column(c) for c in ["hypothesis", *reference_columns(table.data)]])


def _score_pooled(metrics: list, rows_of: list[np.ndarray], pool: _fast.TextPool, progress):
    """Scores and statistics of BLEU/chrF from the pool: row groups whose metrics give equal statistics
    (BLEU of target languages with one tokenizer) are counted in one pass, then scored by their metric."""
    n = len(pool)
    scores = np.full(n, np.nan)
    stats = None
    same: dict[tuple, list] = {}
    for metric, rows in zip(metrics, rows_of, strict=True):
        same.setdefault(metric._stats_key(), []).append((metric, rows))
    for members in same.values():
        rows = members[0][1] if len(members) == 1 else np.concatenate([r for _, r in members])
        st = members[0][0]._pool_stats(pool.subset(rows))
        if stats is None:
            stats = np.zeros((n, st.shape[1]), dtype=st.dtype)
        stats[rows] = st
        for metric, part in members:
            if len(part):
                scores[part] = metric.score_from_stats(stats[part])
        if progress is not None:
            progress(len(rows))
    return scores, stats


def _score_groups(metrics: list[Metric], rows_of: list[np.ndarray], hyps, refs, srcs, progress):
    n = len(hyps)
    has_stats = all(m.has_stats for m in metrics)
    scores = np.full(n, np.nan)
    stats = None
    for metric, rows in zip(metrics, rows_of, strict=True):
        whole = len(metrics) == 1
        step = getattr(metric, "progress_rows", PROGRESS_ROWS) if progress is not None else max(len(rows), 1)
        for start in range(0, len(rows), step):
            part = rows[start : start + step]
            if whole and len(part) == n:
                h, r, s = hyps, refs, srcs
            else:
                h = [hyps[i] for i in part]
                r = [[stream[i] for i in part] for stream in refs] if refs is not None else None
                s = [srcs[i] for i in part] if srcs is not None else None
            if has_stats:
                st = metric.sentence_stats(h, r, s)
                if stats is None:
                    stats = np.zeros((n, st.shape[1]), dtype=st.dtype)
                stats[part] = st
                scores[part] = metric.score_from_stats(st) if len(st) else []
            else:
                scores[part] = metric.sentence_scores(h, r, s)
            if progress is not None:
                progress(len(part))
    return scores, stats


def corpus_table(scored: ScoredFrame, by: Sequence[str] = ("lp", "system")) -> pd.DataFrame:
    """Corpus score per group of ``by`` for every metric: summed sufficient statistics where the
    metric has them (exactly sacrebleu's corpus_score, with its corpus defaults), else the mean
    segment score."""
    import pandas as pd

    df = scored.frame.to_pandas() if is_arrow_table(scored.frame) else scored.frame
    keys = [c for c in by if c in df.columns]
    if keys:
        codes, uniques = pd.MultiIndex.from_frame(df[keys].astype(str)).factorize()
        table = pd.DataFrame(list(uniques), columns=keys)
    else:
        codes = np.zeros(len(df), dtype=np.int64)
        table = pd.DataFrame(index=[0])
    table["n"] = np.bincount(codes, minlength=len(table))
    for column, stats in scored.stats.items():
        table[column] = _corpus_column(scored, df, column, stats, codes, len(table))
    return table


def _corpus_column(scored, df, column, stats, codes, n_groups) -> np.ndarray:
    if stats is None:  # mean of segment scores
        values = df[column].to_numpy(dtype=float)
        return np.bincount(codes, weights=values, minlength=n_groups) / np.bincount(codes, minlength=n_groups)
    metrics = list((scored.corpus_metrics.get(column) or scored.metrics[column]).values())
    group = scored.group_of_row[column]
    # integer statistics are summed exactly (bincount's float weights would round above 2**53)
    summed = np.zeros((n_groups, stats.shape[1]), dtype=stats.dtype)
    np.add.at(summed, codes, stats)
    # each (lp, system) must lie in one target language, whose metric (tokenizer) scores it
    metric_of = np.zeros(n_groups, dtype=np.int64)
    metric_of[codes] = group
    if len(metrics) > 1 and (metric_of[codes] != group).any():
        raise InputError(
            f"corpus {column} groups mix target languages scored with different tokenizers; "
            "group by lp (or tgt_lang) too, or fix the tokenizer with tokenize="
        )
    out = np.empty(n_groups)
    for i, metric in enumerate(metrics):
        sel = metric_of == i
        if sel.any():
            out[sel] = metric.score_from_stats(summed[sel])
    return out
