"""The mt-metrics-eval data layout (``mt-metrics-eval-v2/TESTSET/``) as the long table.

Files (text lines are right-stripped when read, as mt-metrics-eval does; a text line that is exactly
``[No translation supplied]``, mt-metrics-eval's mark of a missing translation, is read as null)::

    documents/LP.docs                    "DOMAIN DOC" per segment
    sources/LP.txt or LP.jsonl           (JSONL field "source")
    references/LP.REF.txt or .jsonl      (REF: refA, refB, ...; JSONL field "target")
    system-outputs/LP/SYSTEM.txt or .jsonl   (JSONL field "hypothesis")
    human-scores/LP.NAME.LEVEL.score     "SYSTEM SCORE" lines ('None' = not scored); LEVEL seg or sys

JSONL files are read as mt-metrics-eval reads them (``data._ReadFieldFromJsonl``): one JSON object
per line, the text in the field named above, one segment per line. Their texts are NOT right-stripped
(mt-metrics-eval keeps a JSON string as it is). A JSON ``null``, which mt-metrics-eval keeps as
``None``, is read as missing text (null), and so is a value that is exactly ``[No translation
supplied]`` (mt-metrics-eval applies that mark to text files only and would keep it in JSONL as a
translation; xleval reads it as missing in both, said in a warning). A line that is blank, not JSON,
not an object, without the field, or whose field is neither a string nor null is an InputError naming
the file and line. Where ``sources/LP.txt`` and ``sources/LP.jsonl`` both exist the ``.txt`` is read, as
mt-metrics-eval does (a warning says the ``.jsonl`` is not read); a system or reference that is read and
has both a ``.txt`` and a ``.jsonl`` file is refused (mt-metrics-eval keeps whichever its directory
listing gives last for a system, and refuses a reference), since either choice could be the wrong file.
System and reference names are the file names without ``.txt``/``.jsonl``.

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
from ._shape import _json_type, iter_json_objects
from ._wmt import check_requested

__all__ = ["read_mtme", "read_mtme_system_scores"]


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        raise InputError(f"{path}: no such file; an mt-metrics-eval test-set folder has documents/, sources/, "
                         "references/, system-outputs/")
    return [line.rstrip() for line in read_lines(path)]  # recorded as an input of the running command


#: mt-metrics-eval's mark of a missing translation (its ``data.NO_TRANSLATION``): a line that is exactly this
#: text is no translation at all, read as missing (null), as mt-metrics-eval reads it (``None``)
NO_TRANSLATION = "[No translation supplied]"


#: the suffixes of the source, reference and system-output files mt-metrics-eval reads (``data._Read*File``)
_SUFFIXES = (".txt", ".jsonl")


def _texts(path: Path, field: str) -> list[str | None]:
    """The texts of a source, reference or system-output file (a ``.jsonl`` file: its ``field``), a
    :data:`NO_TRANSLATION` text (and in JSONL a null) as None (said)."""
    jsonl = path.suffix == ".jsonl"
    lines: list[str | None] = _jsonl_texts(path, field) if jsonl else list(_lines(path))
    missing = [i for i, line in enumerate(lines) if line is None or line == NO_TRANSLATION]
    if missing:
        for i in missing:
            lines[i] = None
        what = f"null or mt-metrics-eval's {NO_TRANSLATION!r}" if jsonl else f"mt-metrics-eval's {NO_TRANSLATION!r}"
        warnings.warn(f"{path}: {len(missing)} line(s) (first: line {missing[0] + 1}) are {what}: read as missing "
                      "text (null), not as a translation; fill or drop these rows before scoring them",
                      DataQualityWarning, stacklevel=4)
    return lines


def _jsonl_texts(path: Path, field: str) -> list[str | None]:
    """The ``field`` of every line of a JSONL file, as mt-metrics-eval's ``_ReadFieldFromJsonl`` reads it: one
    object per line, the string kept as it is (not stripped), null as None."""
    hint = f"every line of an mt-metrics-eval .jsonl file is one JSON object with a {field!r} string"
    lines = read_lines(path)  # recorded as an input of the running command
    blank = next((i for i, line in enumerate(lines, start=1) if not line.strip()), None)
    if blank is not None:  # mt-metrics-eval fails on it too; skipped, it would drop a segment unsaid
        raise InputError(f"{path}: line {blank}: blank; {hint}, one line per segment")
    texts: list[str | None] = []
    for i, obj in iter_json_objects(lines, str(path), hint):
        if field not in obj:
            keys = ", ".join(map(repr, list(obj)[:5])) + (", ..." if len(obj) > 5 else "")
            raise InputError(f"{path}: line {i}: no {field!r} field (keys: {keys or 'none'}); {hint}")
        value = obj[field]
        if value is not None and not isinstance(value, str):
            raise InputError(f"{path}: line {i}: {field!r} is {_json_type(value)}, not a string; {hint} (null for "
                             "no text)")
        texts.append(value)
    return texts


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
        raise InputError(f"{d}: not an mt-metrics-eval test-set folder (no system-outputs/); give the test-set "
                         "folder, or its parent with test_set= (e.g. mt-metrics-eval-v2 with test_set='wmt21.news')",
                         argument="test_set", value=test_set)
    return d


def read_mtme(root: str | os.PathLike, lp: str | Sequence[str], *, test_set: str | None = None,
              reference: str | None = None, systems: Sequence[str] | None = None) -> pd.DataFrame:
    """Read one or more language pairs of an mt-metrics-eval test set (see the module docstring).

    ``reference``: the reference in the ``reference`` column (default: ``refA`` if present, else the
    first by name); ``systems`` restricts the systems read.
    """
    d = _test_dir(Path(root), test_set)
    lps = [lp] if isinstance(lp, str) else list(dict.fromkeys(lp))  # a pair named twice is read once
    check_requested("lps", lps, set(_files(d / "sources", "")), str(d / "sources"), "language pair")
    if systems:
        seen = set().union(*(_files(d / "system-outputs" / x, "") for x in lps))
        check_requested("systems", systems, seen, f"{d / 'system-outputs'} for {', '.join(lps)}", "system")
    frames = [_one_lp(d, x, reference, systems) for x in lps]
    return pd.concat(frames, ignore_index=True)


def _files(folder: Path, prefix: str) -> dict[str, list[Path]]:
    """The ``PREFIX NAME.txt`` and ``PREFIX NAME.jsonl`` files of ``folder`` by NAME (two where a NAME has both)."""
    out: dict[str, list[Path]] = {}
    for suffix in _SUFFIXES if folder.is_dir() else ():
        for p in sorted(folder.glob(f"{prefix}*{suffix}")):
            out.setdefault(p.name[len(prefix) : -len(suffix)], []).append(p)
    return out


def _one_file(paths: list[Path], what: str, mtme_does: str) -> Path:
    """The file of a system or reference that is read: refused where it has both a ``.txt`` and a ``.jsonl``."""
    if len(paths) > 1:
        raise InputError(f"{paths[0]} and {paths[1]}: {what} has both a .txt and a .jsonl file ({mtme_does}); keep "
                         "the one that is meant and move the other out of the folder")
    return paths[0]


def _source_file(d: Path, lp: str) -> Path:
    """``sources/LP.txt``, else ``sources/LP.jsonl``, as mt-metrics-eval's ``_ReadSourceFile`` chooses (said)."""
    txt, jsonl = d / "sources" / f"{lp}.txt", d / "sources" / f"{lp}.jsonl"
    if not txt.is_file() and jsonl.is_file():
        return jsonl
    if txt.is_file() and jsonl.is_file():
        warnings.warn(f"{jsonl}: not read: {txt.name} is the source of {lp}, as mt-metrics-eval reads it (a .txt "
                      "source before a .jsonl one); remove one of them if they differ", DataQualityWarning,
                      stacklevel=4)
    return txt  # missing: _lines says so


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
    source = _texts(_source_file(d, lp), "source")
    n = len(source)
    refs = _files(d / "references", f"{lp}.")
    if not refs:
        raise InputError(f"{d / 'references'}: no {lp}.REF.txt or {lp}.REF.jsonl reference")
    name = reference or ("refA" if "refA" in refs else min(refs))
    if name not in refs:
        raise InputError(f"{d / 'references'}: no reference {name!r} for {lp} (found {sorted(refs)})")
    ref = _texts(_one_file(refs[name], f"reference {name!r}", "mt-metrics-eval refuses it too"), "target")
    docs_path = d / "documents" / f"{lp}.docs"
    docs = [line.split() for line in _lines(docs_path)] if docs_path.is_file() else [["", ""]] * n
    short = next((i for i, x in enumerate(docs) if len(x) < 2), None)
    if short is not None:  # mt-metrics-eval reads the document as the second field: there must be one
        raise InputError(f"{docs_path}: line {short + 1}: expected 'DOMAIN DOC', got "
                         f"{' '.join(docs[short])!r}; every line names the segment's domain and document")
    out_dir = d / "system-outputs" / lp
    found = _files(out_dir, "")
    all_systems = set(found)
    outputs = sorted(((system, _one_file(paths, f"system {system!r}", "mt-metrics-eval would read whichever its "
                                          "directory listing gives last"))
                      for system, paths in found.items() if not systems or system in systems),
                     key=lambda item: item[1].name)
    if not outputs:
        raise InputError(f"{out_dir}: no system output (SYSTEM.txt or SYSTEM.jsonl)")
    for what, lines in (("reference " + name, ref), ("documents", docs)):
        if len(lines) != n:
            raise InputError(f"{lp}: {what} has {len(lines)} lines but the source has {n}")
    seg_scores: dict[str, tuple[dict, Path]] = {}
    paths = sorted((d / "human-scores").glob(f"{lp}.*.seg.score"))
    names = [p.name[len(lp) + 1 : -len(".seg.score")] for p in paths]
    for path, name in zip(paths, names, strict=True):
        scores = _scores(path)
        seg_scores[_score_column(name, path, _OWN_COLUMNS, names)] = (scores, path)
        unknown = sorted(set(scores) - all_systems)
        if unknown:  # mt-metrics-eval refuses them ('Unknown system'); their scores would be lost unsaid
            warnings.warn(f"{path}: {len(unknown)} system(s) have human scores but no output in {out_dir} (first: "
                          f"{unknown[0]!r}): their scores are not read; check the system names", DataQualityWarning,
                          stacklevel=4)
    frames = []
    for system, path in outputs:
        hyps = _texts(path, "hypothesis")
        if len(hyps) != n:
            raise InputError(f"{path}: {len(hyps)} lines but the source has {n}")
        part = {"dataset": d.name, "lp": lp, "system": system, "seg_id": np.arange(1, n + 1),
                "domain": [x[0] for x in docs], "doc_id": [x[1] for x in docs],
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
            if len(values) != 1:  # a system-level file has one score per system (mt-metrics-eval checks the same)
                raise InputError(f"{path}: {len(values)} scores for {system!r}; a system-level score file has one "
                                 "line per system")
            table.setdefault(system, {})[column] = values[0]
    frame = pd.DataFrame.from_dict(table, orient="index").rename_axis("system").reset_index()
    frame.insert(0, "lp", lp)
    return frame
