"""Ingestion: lm-evaluation-harness perplexity samples and the "Apples to Apples" long table.

**lm-evaluation-harness** (``--log_samples``) writes, for a ``loglikelihood_rolling`` task
(wikitext-style perplexity), one JSON object per document with ``doc_id``, the document text
(``target``; in ``arguments`` too) and the metric inputs ``word_perplexity``/``byte_perplexity``/
``bits_per_byte`` as ``[loglikelihood, n]`` (natural log; ``n`` = words or UTF-8 bytes). The files
are read by :func:`xleval.io.read_lm_eval_samples`, which also finds the model and the language
of the text in the run's results file. The rolling windows score every token (the first one is
conditioned on the end-of-text token), and the token count is not logged: token-level metrics
need ``tokens`` from elsewhere (``count_tokens`` with the model's tokenizer).

**Apples to Apples** (``results.parquet`` of the shared data): one row per metric file x
sentence, metrics ``sent-nll`` (nats), ``token-nll``, ``ppl``, ``bpb``, ``cpb`` (bits per
*character*), ``mrr``. The denominators the paper used are recovered exactly from the values:
scored tokens = sent-nll / token-nll, bytes = sent-nll / (bpb ln 2), characters = sent-nll /
(cpb ln 2), all of the text after truncation to 120 model tokens. One-token sentences
(sent-nll = 0, token-nll = NaN: the first token is not scored) get ``tokens = 0`` and are
excluded by :class:`LMScores` with a count.
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xleval.exceptions import InputError
from xleval.io import LMEvalSamples, read_lm_eval_samples

from ._scores import LMScores

__all__ = ["lm_eval_scores", "read_apples_results", "apples_scores", "APPLES_METRICS", "TRANSLATION_SETS"]

LN2 = math.log(2.0)
APPLES_METRICS = ("bpb", "cpb", "mrr", "ppl", "sent-nll", "token-nll")
_APPLES_KEYS = ["experiment", "eval_set", "model", "model_name", "arch", "train_lang", "tokenizer_algo",
                "train_data", "lang", "vocab_size", "sent_idx"]
_LM_EVAL_PAIRS = ("byte_perplexity", "bits_per_byte", "word_perplexity")
TRANSLATION_SETS = ("en", "de", "de-ar", "de-arp", "de-p")  # WMT19 en-de: one English, four German versions


# ----------------------------------------------------------------------------- lm-evaluation-harness
def lm_eval_scores(samples: str | os.PathLike | LMEvalSamples, *, lang: str | None = None,
                   model: str | None = None) -> pd.DataFrame:
    """Rows ``item, lang, model, task, loglik, bytes, words, text`` from an lm-eval
    ``samples_*.jsonl`` of a loglikelihood-rolling task (a path, or what
    :func:`xleval.io.read_lm_eval_samples` returned); feed them to :meth:`LMScores.from_frame`.

    The model and the language come from the run (see :func:`xleval.io.read_lm_eval_samples`);
    ``lang``/``model`` override them. ``item`` is the harness's ``doc_id``, so the documents of a
    parallel corpus line up across the languages' runs.
    """
    if not isinstance(samples, LMEvalSamples):
        samples = read_lm_eval_samples(samples, lang=lang, model=model)
    found_lang = lang or samples.lang
    found_model = model or samples.model
    if found_lang is None:
        where = (f"the task config in {samples.results_path.name}" if samples.results_path
                 else "no results file beside it")
        raise InputError(f"{samples.path}: the language of the text is not named by the run ({where}: "
                         f"dataset_name {samples.task_config.get('dataset_name')!r}, task {samples.task!r}); "
                         "give the language (lang=)", argument="lang")
    if found_model is None:
        raise InputError(f"{samples.path}: no model name (no results file, no folder); "
                         "give the model (model=)", argument="model")
    rows = [_lm_eval_row(rec, samples.path, i) for i, rec in enumerate(samples.records)]
    df = pd.DataFrame(rows)
    df.insert(1, "lang", found_lang)
    df.insert(2, "model", found_model)
    df.insert(3, "task", samples.task or Path(samples.path).stem)
    df.attrs["provenance"] = {str(samples.path): {"model": "given" if model else samples.model_source,
                                                  "lang": "given" if lang else samples.lang_source}}
    return df


def _lm_eval_row(obj: dict[str, Any], path: Path, index: int) -> dict[str, Any]:
    pairs = {k: obj[k] for k in _LM_EVAL_PAIRS if k in obj}
    if not pairs:
        raise InputError(
            f"{path}: record {index + 1}: no [loglikelihood, n] field ({', '.join(_LM_EVAL_PAIRS)}); "
            "only loglikelihood_rolling tasks (perplexity tasks such as wikitext) can be read"
        )
    for key, pair in pairs.items():
        if not (isinstance(pair, list) and len(pair) == 2):
            raise InputError(f"{path}: record {index + 1}: {key} is {pair!r}, not [loglikelihood, n]")
    loglik = float(next(iter(pairs.values()))[0])
    words = pairs.get("word_perplexity", [None, None])[1]
    n_bytes = (pairs.get("byte_perplexity") or pairs.get("bits_per_byte") or [None, None])[1]
    return {"item": obj["doc_id"], "loglik": loglik, "bytes": n_bytes, "words": words, "text": _lm_eval_text(obj)}


def _lm_eval_text(obj: dict[str, Any]) -> str | None:
    if isinstance(obj.get("target"), str):
        return obj["target"]
    args = obj.get("arguments")
    # Older harness versions: [[text]]; newer: {"gen_args_0": {"arg_0": text}}.
    if isinstance(args, list) and args and isinstance(args[0], list) and args[0] and isinstance(args[0][0], str):
        return args[0][0]
    if isinstance(args, dict):
        first: Any = next(iter(args.values()), {})
        if isinstance(first, dict) and isinstance(first.get("arg_0"), str):
            return first["arg_0"]
    return None


# ----------------------------------------------------------------------------- Apples to Apples
def read_apples_results(
    path: str | os.PathLike,
    *,
    experiments: Sequence[str] | None = None,
    eval_sets: Sequence[str] | None = None,
    with_text: bool = False,
) -> pd.DataFrame:
    """The long ``results.parquet`` as one row per (experiment, eval set, model, sentence), one
    column per metric (``sent_nll``, ``token_nll``, ``ppl``, ``bpb``, ``cpb``, ``mrr``; the
    paper's per-sentence values) plus the recovered statistics ``nll``, ``tokens``, ``chars``,
    ``bytes``. Reads only the needed columns; ``experiments``/``eval_sets`` filter at read time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from xleval.io import require_file

    name = str(path)
    require_file(path, name)  # missing, a directory or a device: one line saying so; recorded as an input
    filters = [(col, "in", list(vals)) for col, vals in (("experiment", experiments), ("eval_set", eval_sets)) if vals]
    columns = _APPLES_KEYS + ["metric", "value"] + (["sentence"] if with_text else [])
    strings = ["experiment", "eval_set", "metric", "model", "model_name", "arch", "lang", "tokenizer_algo",
               "train_lang", "train_data"]
    try:
        table = pq.read_table(path, columns=columns, filters=filters or None, read_dictionary=strings)
    except (OSError, pa.ArrowException) as exc:  # not Parquet, a FIFO (not seekable), columns of another release
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{name}: cannot read as the Apples results.parquet ({reason}); give the file released "
                         "with the paper") from None
    if table.num_rows == 0:
        raise InputError(f"{name}: no rows for experiments={experiments} eval_sets={eval_sets}")
    long = table.to_pandas()
    return _widen(long, with_text)


def _widen(long: pd.DataFrame, with_text: bool) -> pd.DataFrame:
    keys = [k for k in _APPLES_KEYS if k in long.columns]
    for k in keys:
        if isinstance(long[k].dtype, pd.CategoricalDtype):
            long[k] = long[k].cat.add_categories(["-"]).fillna("-") if long[k].isna().any() else long[k]
    long["vocab_size"] = long["vocab_size"].fillna(-1)
    wide = long.set_index(keys + ["metric"])["value"].unstack("metric")
    wide.columns = [str(c).replace("-", "_") for c in wide.columns]
    if with_text:
        text = long.drop_duplicates(keys).set_index(keys)["sentence"]
        wide["text"] = text.reindex(wide.index).to_numpy()
    wide = wide.reset_index()
    wide.columns.name = None
    for k in keys:
        if isinstance(wide[k].dtype, pd.CategoricalDtype):
            wide[k] = wide[k].astype(str)
    return _recover_stats(wide)


def _recover_stats(wide: pd.DataFrame) -> pd.DataFrame:
    nll = wide["sent_nll"].to_numpy(dtype=float) if "sent_nll" in wide else np.full(len(wide), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        tokens = _count(nll / wide["token_nll"].to_numpy(dtype=float)) if "token_nll" in wide else np.nan
        bytes_ = _count(nll / (wide["bpb"].to_numpy(dtype=float) * LN2)) if "bpb" in wide else np.nan
        chars = _count(nll / (wide["cpb"].to_numpy(dtype=float) * LN2)) if "cpb" in wide else np.nan
    single = (nll == 0) & (wide["token_nll"].isna().to_numpy() if "token_nll" in wide else True)
    tokens = np.where(single, 0.0, tokens)
    return wide.assign(nll=nll, tokens=tokens, chars=chars, bytes=bytes_)


def _count(x: np.ndarray) -> np.ndarray:
    # The denominators are integers; the ratio only carries float rounding error.
    return np.where(np.isfinite(x), np.round(x), np.nan)


def apples_scores(wide: pd.DataFrame, *, where: str = "apples results", warn: bool = True) -> LMScores:
    """:class:`LMScores` from :func:`read_apples_results` rows of ONE corpus (one eval set, or the
    WMT19 en-de translation sets together). ``setting`` = tokenizer algorithm + vocabulary size
    for the controlled monolingual models (what is held equal across languages), the model name
    otherwise; ``variant`` = the translation version for the en-de sets; ``tokenizer_algo`` and
    ``model_family`` (the architecture) name the strata the confound analysis keeps apart."""
    t = wide.copy()
    controlled = t["vocab_size"].astype(float) > 0
    t["setting"] = np.where(controlled,
                            t["tokenizer_algo"].astype(str) + "_" + t["vocab_size"].astype("Int64").astype(str),
                            t["model_name"].astype(str))
    t["variant"] = np.where(t["eval_set"].isin(TRANSLATION_SETS), t["eval_set"], "")
    t["item"] = t["sent_idx"]
    t["model"] = t["model_name"]
    t["model_family"] = t["arch"]  # gpt2_small for the controlled models; gpt2, bloom-1b1 in the case study
    keep = ["lang", "model", "setting", "variant", "item", "nll", "tokens", "chars", "bytes", "experiment", "eval_set",
            "model_family", "tokenizer_algo", "vocab_size"] + (["text"] if "text" in t.columns else [])
    return LMScores.from_frame(t[keep], where=where, warn=warn)
