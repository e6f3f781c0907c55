"""The mt-metrics-eval data layout (``mt-metrics-eval-v2/TESTSET/``) as the long table.

Files (lines are right-stripped when read, as mt-metrics-eval does)::

    documents/LP.docs                    "DOMAIN DOC" per segment
    sources/LP.txt
    references/LP.REF.txt                (REF: refA, refB, ...)
    system-outputs/LP/SYSTEM.txt
    human-scores/LP.NAME.LEVEL.score     "SYSTEM SCORE" lines ('None' = not scored); LEVEL seg or sys

The table has one row per (lp, system, segment): ``dataset, lp, system, seg_id (1-based),
domain, doc_id, source, reference, hypothesis``, ``is_human`` (the system is a reference), and
one column per segment-level human score (named by NAME, NaN where 'None').
:func:`read_mtme_system_scores` reads the system-level human scores.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import DataQualityWarning, InputError
from ._read import read_lines
from ._wmt import check_requested

__all__ = ["read_mtme", "read_mtme_system_scores"]


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        raise InputError(f"{path}: no such file; an mt-metrics-eval test-set folder has documents/, sources/, "
                         "references/, system-outputs/")
    return [line.rstrip() for line in read_lines(path)]  # recorded as an input of the running command


def _scores(path: Path) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for i, line in enumerate(_lines(path), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise InputError(f"{path}: line {i}: expected 'SYSTEM SCORE', got {line!r}")
        system, value = parts
        try:
            out.setdefault(system, []).append(float("nan") if value == "None" else float(value))
        except ValueError:
            raise InputError(f"{path}: line {i}: score {value!r} is not a number or None") from None
    return out


def _test_dir(root: Path, test_set: str | None) -> Path:
    d = root / test_set if test_set else root
    if not (d / "system-outputs").is_dir():
        raise InputError(f"{d}: not an mt-metrics-eval test-set folder (no system-outputs/); give "
                         "ROOT and test_set (e.g. mt-metrics-eval-v2 and wmt21.news) or the test-set folder")
    return d


def read_mtme(root: str | os.PathLike, lp: str | Sequence[str], *, test_set: str | None = None,
              reference: str | None = None, systems: Sequence[str] | None = None) -> pd.DataFrame:
    """Read one or more language pairs of an mt-metrics-eval test set (see the module docstring).

    ``reference``: the reference in the ``reference`` column (default: ``refA`` if present, else the
    first by name); ``systems`` restricts the systems read.
    """
    d = _test_dir(Path(root), test_set)
    lps = [lp] if isinstance(lp, str) else list(lp)
    check_requested("lps", lps, _names(d / "sources", ".txt"), str(d / "sources"), "language pair")
    if systems:
        seen = set().union(*(_names(d / "system-outputs" / x, ".txt") for x in lps))
        check_requested("systems", systems, seen, f"{d / 'system-outputs'} for {', '.join(lps)}", "system")
    frames = [_one_lp(d, x, reference, systems) for x in lps]
    return pd.concat(frames, ignore_index=True)


def _names(folder: Path, suffix: str) -> set[str]:
    return {p.name[: -len(suffix)] for p in folder.glob(f"*{suffix}")} if folder.is_dir() else set()


#: the columns the reader makes itself; a human score file of such a name is renamed ``human_NAME``
_OWN_COLUMNS = ("dataset", "lp", "system", "seg_id", "domain", "doc_id", "source", "reference", "hypothesis",
                "is_human")


def _score_column(name: str, path: Path, own: Sequence[str], names: Sequence[str]) -> str:
    """The column of the human scores in ``path``: their NAME, or ``human_NAME`` (said) where NAME is a
    column the reader makes (``own``: ``source``, ``system``, ...), which the scores would otherwise
    overwrite. ``names``: the names of every score file read with it."""
    if name not in own:
        return name
    renamed = f"human_{name}"
    if renamed in own or renamed in names:
        raise InputError(f"{path}: the human scores named {name!r} clash with the column {name!r} and with "
                         f"{renamed!r}; rename the file")
    warnings.warn(f"{path}: human scores named {name!r}, a column of the table ({name}): read as column "
                  f"{renamed!r}", DataQualityWarning, stacklevel=4)
    return renamed


def _one_lp(d: Path, lp: str, reference: str | None, systems: Sequence[str] | None) -> pd.DataFrame:
    source = _lines(d / "sources" / f"{lp}.txt")
    n = len(source)
    refs = {p.name[len(lp) + 1 : -len(".txt")]: p for p in sorted((d / "references").glob(f"{lp}.*.txt"))}
    if not refs:
        raise InputError(f"{d / 'references'}: no {lp}.REF.txt reference")
    name = reference or ("refA" if "refA" in refs else min(refs))
    if name not in refs:
        raise InputError(f"{d / 'references'}: no reference {name!r} for {lp} (found {sorted(refs)})")
    ref = _lines(refs[name])
    docs_path = d / "documents" / f"{lp}.docs"
    docs = [line.split() for line in _lines(docs_path)] if docs_path.is_file() else [["", ""]] * n
    out_dir = d / "system-outputs" / lp
    outputs = sorted(out_dir.glob("*.txt")) if out_dir.is_dir() else []
    if systems:
        outputs = [p for p in outputs if p.stem in systems]
    if not outputs:
        raise InputError(f"{out_dir}: no system output (SYSTEM.txt)")
    for what, lines in (("reference " + name, ref), ("documents", docs)):
        if len(lines) != n:
            raise InputError(f"{lp}: {what} has {len(lines)} lines but the source has {n}")
    seg_scores: dict[str, tuple[dict, Path]] = {}
    paths = sorted((d / "human-scores").glob(f"{lp}.*.seg.score"))
    names = [p.name[len(lp) + 1 : -len(".seg.score")] for p in paths]
    for path, name in zip(paths, names, strict=True):
        seg_scores[_score_column(name, path, _OWN_COLUMNS, names)] = (_scores(path), path)
    frames = []
    for path in outputs:
        system = path.stem
        hyps = _lines(path)
        if len(hyps) != n:
            raise InputError(f"{path}: {len(hyps)} lines but the source has {n}")
        part = {"dataset": d.name, "lp": lp, "system": system, "seg_id": np.arange(1, n + 1),
                "domain": [x[0] if x else "" for x in docs], "doc_id": [x[1] if len(x) > 1 else "" for x in docs],
                "source": source, "reference": ref, "hypothesis": hyps, "is_human": system in refs}
        for score_name, (table, score_path) in seg_scores.items():
            values = table.get(system)
            if values is not None and len(values) != n:
                raise InputError(f"{score_path}: {len(values)} scores for {system!r} but {n} segments")
            part[score_name] = values if values is not None else np.full(n, np.nan)
        frames.append(pd.DataFrame(part))
    return pd.concat(frames, ignore_index=True)


def read_mtme_system_scores(root: str | os.PathLike, lp: str, *, test_set: str | None = None) -> pd.DataFrame:
    """System-level human scores of one language pair: ``lp, system`` and one column per score name."""
    d = _test_dir(Path(root), test_set)
    table: dict[str, dict[str, float]] = {}
    paths = sorted((d / "human-scores").glob(f"{lp}.*.sys.score"))
    names = [p.name[len(lp) + 1 : -len(".sys.score")] for p in paths]
    for path, name in zip(paths, names, strict=True):
        column = _score_column(name, path, ("lp", "system"), names)
        for system, values in _scores(path).items():
            table.setdefault(system, {})[column] = values[0]
    frame = pd.DataFrame.from_dict(table, orient="index").rename_axis("system").reset_index()
    frame.insert(0, "lp", lp)
    return frame
