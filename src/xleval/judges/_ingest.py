"""Judge and metric scores produced elsewhere, read into xleval's long table with signatures stating the source.

Two layouts (the reader tells them apart by each record's keys):

* **WMT25 automatic scores** (``wmt-conference/wmt25-general-mt``, ``data/automatic_scores/<system>.jsonl``): one
  line per document of one language pair as one system translated it::

      {"language_pair": "en-is_IS", "domain": "literary", "document_id": "rink_rats_chapter1",
       "metric_scores": {"GEMBA-ESA-CMDA": [60, ...], "XCOMET-XL": [...], ...}}

  each list holds one score per segment in document order; the system is the file name. One row per segment
  (``doc_seg_id`` = 1-based position in its document; ``seg_id`` = ``DOC#N``, the segment's key within the pair,
  since every command keys a segment by its ``seg_id``), one column per metric, named as in the file.
* **WMT26 task files** (the LLM-as-judge baseline of the WMT26 automated MT evaluation task, and submissions in
  its format): one line per segment, every system's prediction in it::

      {"item_id": "eng_Latn_###_deu_Latn_###_speech_###_DOC_###_0",
       "task1_pred": {"SYSTEM": {"errors": [{"start": 197, "end": 202, "severity": "major",
                                             "category": "accuracy/addition"}], "omission": null, ...}},
       "task2_pred": {"SYSTEM": 60.0}}

  ``item_id`` holds the source and target language, domain, document and segment index (``doc_seg_id``,
  1-based; ``seg_id`` = ``DOC#N``, as for WMT25). One row per segment and system: the score in column ``NAME``
  (``task2_pred``), error counts ``NAME_minor``/``NAME_major`` and ``NAME_omission`` (``task1_pred``); the spans
  (character offsets ``[start, end)`` in the translation) in a side table.

Language codes are kept in ``src_lang``/``tgt_lang`` and normalised (``is_IS`` -> ``is-IS``, ``eng_Latn`` ->
``en``), and the pair ``lp`` is their key (``en-is-IS``), so every command groups by language pair (grouped by
``tgt_lang``, WMT25's en-de_DE and cs-de_DE would be one group); the organisers' spelling stays in ``lp_wmt``.
Every score column gets a signature ``ingested:<layout>|metric:<name>|sha:<SHA-256 of the files read>``, so a
table built from other files (or another release) has another signature; a judge's column adds ``judge:yes``
(WMT25's ``GEMBA-*`` columns, a WMT26 file's score column), which ``meta`` and ``report`` read to
find the judges (:func:`xleval.judges.judge_columns`).
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xleval.exceptions import InputError

__all__ = ["JudgeScores", "read_judge_scores"]

_SEVERITIES = ("minor", "major")
_SPAN_COLUMNS = ["row", "lp_wmt", "system", "doc_id", "seg_id", "metric", "severity", "category", "start", "end"]


@dataclass(frozen=True)
class JudgeScores:
    """An ingested table: ``frame`` (one row per lp, system, document, segment), ``signatures`` (column ->
    signature, as ``write_table(..., metadata={"signatures": ...})`` stores them), ``spans`` (WMT26 task 1 spans,
    or None) and ``layout`` (``wmt25-automatic-scores`` or ``wmt26-task``)."""

    frame: Any
    signatures: dict[str, str]
    spans: Any
    layout: str

    def metadata(self) -> dict[str, Any]:
        return {"signatures": dict(self.signatures)}


def _files(paths: list[str | os.PathLike]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.name.endswith((".jsonl", ".jsonl.gz")))
            if not found:
                raise InputError(f"{str(p)!r} holds no .jsonl or .jsonl.gz file; give the folder of the WMT25 "
                                 "automatic scores or a WMT26 task file")
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(f"{str(p)!r} does not exist; give a .jsonl(.gz) file or a folder of them")
    return out


def _lines(path: Path):
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputError(f"{path}: line {number} is not JSON ({exc.msg}); each line must be one "
                                         "JSON record") from None
                    if not isinstance(record, dict):
                        raise InputError(f"{path}: line {number} is not a JSON object")
                    yield number, record
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from None


def _digest(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode("utf-8") + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def _signature(layout: str, metric: str, sha: str, judge: bool = False) -> str:
    from xleval.metrics._base import format_signature

    return format_signature({"ingested": layout, "metric": metric, "sha": sha, **({"judge": "yes"} if judge else {})})


def read_judge_scores(paths: list[str | os.PathLike] | str | os.PathLike, *, name: str = "judge") -> JudgeScores:
    """Read WMT25 automatic-score files (a folder of ``<system>.jsonl[.gz]``, or some of them) or WMT26 task files
    into a long table; see the module docstring. ``name`` names the WMT26 judge's columns."""
    files = _files([paths] if isinstance(paths, str | os.PathLike) else list(paths))
    first = next((rec for f in files for _, rec in _lines(f)), None)
    if first is None:
        raise InputError(f"{files[0]}: no records; give a non-empty file")
    if "metric_scores" in first:
        return _read_wmt25(files)
    if "task1_pred" in first or "task2_pred" in first:
        return _read_wmt26(files, name)
    raise InputError(f"{files[0]}: the first record has neither metric_scores (WMT25 automatic scores) nor "
                     f"task1_pred/task2_pred (WMT26 task file); its keys are {sorted(first)[:8]}")


def _read_wmt25(files: list[Path]):
    import pandas as pd

    cols: dict[str, list] = {k: [] for k in ("lp_wmt", "domain", "doc_id", "doc_seg_id", "seg_id", "system")}
    scores: dict[str, list] = {}
    n = 0
    for f in files:
        system = f.name.removesuffix(".gz").removesuffix(".jsonl")
        for number, rec in _lines(f):
            try:
                lp, doc, metrics = rec["language_pair"], rec["document_id"], rec["metric_scores"]
            except KeyError as exc:
                raise InputError(f"{f}: line {number} has no {exc.args[0]!r}; a WMT25 automatic-scores record has "
                                 "language_pair, document_id and metric_scores") from None
            lengths = {len(v) for v in metrics.values()}
            if len(lengths) != 1:
                raise InputError(f"{f}: line {number} ({doc}): the metrics' score lists differ in length "
                                 f"({sorted(lengths)}); each must hold one score per segment")
            k = lengths.pop()
            cols["lp_wmt"] += [lp] * k
            cols["domain"] += [rec.get("domain")] * k
            cols["doc_id"] += [doc] * k
            cols["doc_seg_id"] += range(1, k + 1)
            cols["seg_id"] += [f"{doc}#{i}" for i in range(1, k + 1)]
            cols["system"] += [system] * k
            for metric, values in metrics.items():
                if metric not in scores:  # a metric first seen here: missing on every row before
                    scores[metric] = [np.nan] * n
                scores[metric] += [np.nan if v is None else v for v in values]
            n += k
            if len(metrics) < len(scores):
                for kept in scores.values():
                    if len(kept) < n:
                        kept.extend([np.nan] * (n - len(kept)))
    frame = _with_languages(pd.DataFrame(cols), [lp.split("-", 1) for lp in cols["lp_wmt"]])
    for metric, column in scores.items():
        frame[metric] = np.asarray(column, dtype=np.float64)
    sha = _digest(files)
    # the organisers' LLM judges are their GEMBA-* columns (GEMBA-ESA with Command A and with GPT-4.1)
    sigs = {m: _signature("wmt25-automatic-scores", m, sha, judge=m.upper().startswith("GEMBA")) for m in scores}
    return JudgeScores(frame, sigs, None, "wmt25-automatic-scores")


def _item(item_id: str, where: str) -> tuple[str, str, str, str, int]:
    parts = item_id.split("_###_")
    if len(parts) != 5 or not parts[4].isdigit():
        raise InputError(f"{where}: item_id {item_id!r} is not SRC_###_TGT_###_DOMAIN_###_DOC_###_N (the WMT26 "
                         "form)")
    return parts[0], parts[1], parts[2], parts[3], int(parts[4]) + 1


def _read_wmt26(files: list[Path], name: str):
    import pandas as pd

    rows: list[dict[str, Any]] = []
    spans: list[dict[str, Any]] = []
    for f in files:
        for number, rec in _lines(f):
            where = f"{f}: line {number}"
            if "item_id" not in rec:
                raise InputError(f"{where} has no item_id; a WMT26 task record has item_id and task1_pred and/or "
                                 "task2_pred")
            src, tgt, domain, doc, seg = _item(str(rec["item_id"]), where)
            t1, t2 = rec.get("task1_pred") or {}, rec.get("task2_pred") or {}
            if not isinstance(t1, dict) or not isinstance(t2, dict):
                raise InputError(f"{where}: task1_pred and task2_pred must map system names to predictions")
            for system in list(dict.fromkeys([*t2, *t1])):
                score = t2.get(system)
                row = {"lp_wmt": f"{src}-{tgt}", "src": src, "tgt": tgt, "domain": domain, "doc_id": doc,
                       "doc_seg_id": seg, "seg_id": f"{doc}#{seg}", "system": system, "item_id": rec["item_id"],
                       name: np.nan if score is None else float(score)}
                pred = t1.get(system)
                if pred is not None:
                    errors = pred.get("errors") or [] if isinstance(pred, dict) else []
                    for s in _SEVERITIES:
                        row[f"{name}_{s}"] = sum(str(e.get("severity", "")).lower() == s for e in errors)
                    row[f"{name}_omission"] = pred.get("omission") or "" if isinstance(pred, dict) else ""
                    for e in errors:
                        spans.append({"row": len(rows), "system": system, "doc_id": doc, "seg_id": f"{doc}#{seg}",
                                      "severity": str(e.get("severity", "")).lower(), "category": e.get("category"),
                                      "start": e.get("start"), "end": e.get("end")})
                rows.append(row)
    frame = pd.DataFrame(rows)
    frame = _with_languages(frame.drop(columns=["src", "tgt"]), list(zip(frame["src"], frame["tgt"], strict=True)))
    span_frame = pd.DataFrame(spans, columns=[c for c in _SPAN_COLUMNS if c not in ("lp_wmt", "metric")])
    span_frame.insert(1, "lp_wmt", frame["lp_wmt"].to_numpy()[span_frame["row"].to_numpy(dtype=np.int64)]
                      if len(span_frame) else [])
    span_frame.insert(5, "metric", name)
    sha = _digest(files)
    sigs = {c: _signature("wmt26-task", f"{name}:{'task2_pred' if c == name else 'task1_pred'}", sha, judge=c == name)
            for c in frame.columns if c == name or (c.startswith(f"{name}_") and c != f"{name}_omission")}
    return JudgeScores(frame, sigs, span_frame, "wmt26-task")


def _with_languages(frame, pairs):
    """``src_lang``/``tgt_lang`` from the organisers' codes, normalised, then their pair ``lp`` (``en-is-IS``, which
    reads back by BCP-47 case), first; ``lp_wmt`` keeps the organisers' spelling."""
    from xleval.io import add_language_columns

    frame.insert(0, "src_lang", [p[0] for p in pairs])
    frame.insert(1, "tgt_lang", [p[1] if len(p) > 1 else "" for p in pairs])
    out = add_language_columns(frame, where="judge scores")
    out = out.drop(columns=[c for c in ("src_lang_orig", "tgt_lang_orig") if c in out.columns])
    return out[["src_lang", "tgt_lang", "lp", *(c for c in out.columns if c not in ("src_lang", "tgt_lang", "lp"))]]
