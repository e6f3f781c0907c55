"""WMT's segment-level DA files (``ad-seg-scores-XX-YY.csv``) placed on the lines of a WMT system-output folder.

A DA file is whitespace-separated with the header ``SYS SID RAW.SCR Z.SCR N``: the system name with a ``.N``
suffix that is no id (``CUNI-DocTransformer.6``), the segment, the raw 0-100 score, the z-score and the number
of judgments averaged. The ``SID`` is **not** the line of the ``txt/`` files: it is the 1-based position of the
segment in the test set with its documents sorted by document id as text (Python ``sorted()``), while
``txt/`` and ``xml/`` keep the documents in file order. The documents (ids, segment counts, file order) come
from ``xml/<name>.<lp>.all.xml``. WMT21's Wikipedia DA writes ``bn-hi-0-117-1001712.3_3``: document 117 of
the sorted ids, its segment 3. ``order="file"`` reads positions in file order (a release whose SIDs are lines).
"""
from __future__ import annotations

import os
import re
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import DataQualityWarning, InputError
from ._inputs import require_file
from ._read import read_lines
from ._wmt import _txt_root

__all__ = ["wmt_xml_documents", "da_sid_lines", "read_wmt_da", "attach_wmt_da", "find_wmt_xml", "DA_ORDERS"]

#: how a DA SID counts the documents: sorted by id as text (WMT21, WMT22), or in the file's order
DA_ORDERS = ("sorted", "file")
HEADER = ("SYS", "SID", "RAW.SCR", "Z.SCR", "N")
_LINE_SID = re.compile(r"^\d+$")
_WIKI_SID = re.compile(r"^[A-Za-z]+-[A-Za-z]+-\d+-(\d+)-\d+\.(\d+)_\d+$")
_SUFFIX = re.compile(r"\.\d+$")
HUMAN_COLUMNS = ("human_raw", "human_z", "human_n")


def wmt_xml_documents(path: str | os.PathLike, *, testsuites: bool = False) -> list[tuple[str, int]]:
    """(document id, number of source segments) of a WMT ``*.all.xml`` file, in file order. Documents of the
    test suites (``<doc testsuite="...">``, WMT21) are not in ``txt/`` nor counted by the DA SIDs: left out
    unless ``testsuites=True`` (for ``txt-ts/``)."""
    name = str(path)
    require_file(path, name)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise InputError(f"{name}: not well-formed XML ({exc}); give the test set's xml/NAME.LP.all.xml as WMT "
                         "publishes it") from None
    documents: list[tuple[str, int]] = []
    seen: set[str] = set()
    for k, doc in enumerate(root.iter("doc"), 1):
        doc_id, src = doc.get("id"), doc.find("src")
        if not doc_id:
            raise InputError(f"{name}: document {k} (<doc>) has no id attribute; the DA SIDs count documents by "
                             "id, so every <doc> needs one: use the file as WMT publishes it")
        if doc_id in seen:
            raise InputError(f"{name}: document id {doc_id!r} occurs twice; the DA SIDs count documents by id, "
                             "so ids must be unique: use the file as WMT publishes it")
        if src is None:
            raise InputError(f"{name}: document {doc_id!r} has no <src> element; the segments are counted in the "
                             "source: use the file as WMT publishes it")
        seen.add(doc_id)
        if doc.get("testsuite") and not testsuites:
            continue
        documents.append((doc_id, sum(1 for _ in src.iter("seg"))))
    if not documents:
        raise InputError(f"{name}: no <doc> element; give the test set's xml/NAME.LP.all.xml as WMT publishes it")
    return documents


def da_sid_lines(sids: Sequence[object], documents: Sequence[tuple[str, int]], *,
                 order: str = "sorted") -> np.ndarray:
    """The 1-based ``txt/`` line of each DA SID (``1015`` or ``bn-hi-0-117-1001712.3_3``) given the test set's
    ``documents`` (id, segment count) in file order; ``order="file"`` counts documents in file order instead."""
    return _sid_lines(sids, documents, order, lambda k: f"sids[{k}]")


def _check_order(order: str) -> None:
    if order not in DA_ORDERS:
        raise InputError(f"order={order!r}: a DA SID counts documents either 'sorted' (by id as text, WMT21/22) or "
                         "in 'file' order; give one of them", argument="order", value=order)


def _line_documents(documents: Sequence[tuple[str, int]]) -> np.ndarray:
    """The document id of every line (0-based) of the test set, file order."""
    return np.repeat(np.array([d for d, _ in documents], dtype=object), [n for _, n in documents])


def _sid_lines(sids: Sequence[object], documents: Sequence[tuple[str, int]], order: str,
               where: Callable[[int], str]) -> np.ndarray:
    _check_order(order)
    if not documents:
        raise InputError("documents: empty; give the (id, segment count) of every document of the test set",
                         argument="documents")
    counts = np.array([n for _, n in documents], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])  # lines before each document, file order
    ranked = sorted(range(len(documents)), key=lambda i: documents[i][0]) if order == "sorted" else \
        list(range(len(documents)))
    by_position = np.concatenate([np.arange(starts[i] + 1, starts[i] + counts[i] + 1) for i in ranked])
    text = pd.Series(list(sids), dtype=object).map(lambda v: str(v).strip())
    plain = text.str.fullmatch(_LINE_SID.pattern).to_numpy(dtype=bool)
    wiki = text.str.extract(_WIKI_SID)
    bad = ~plain & wiki[0].isna().to_numpy()
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        raise InputError(f"{where(b)}: SID {text.iloc[b]!r} is neither a segment number (1015) nor WMT21's "
                         "Wikipedia form (bn-hi-0-117-1001712.3_3); give the SID column of a WMT DA file")
    out = np.zeros(len(text), dtype=np.int64)
    total = int(counts.sum())
    for k in np.flatnonzero(plain).tolist():
        position = int(text.iloc[k])
        if not 1 <= position <= total:
            raise InputError(f"{where(k)}: SID {position} is past the test set's {total} segments "
                             f"({len(documents)} document(s)); the DA file is of another test set or language pair")
        out[k] = by_position[position - 1]
    for k in np.flatnonzero(~plain).tolist():
        doc, seg = int(wiki.iat[k, 0]), int(wiki.iat[k, 1])
        i = ranked[doc - 1] if 1 <= doc <= len(documents) else None
        if i is None or not 1 <= seg <= counts[i]:
            raise InputError(f"{where(k)}: SID {text.iloc[k]!r} names segment {seg} of document {doc}, past the test "
                             f"set's {len(documents)} documents or that document's segments; the DA file is of "
                             "another test set or language pair")
        out[k] = starts[i] + seg
    return out


def read_wmt_da(path: str | os.PathLike, documents: Sequence[tuple[str, int]], *, lp: str,
                order: str = "sorted") -> pd.DataFrame:
    """A WMT segment-level DA file as rows ``lp, system, seg_id`` (the ``txt/`` line), ``doc_id, human_raw,
    human_z, human_n, da_system, da_sid`` (one per file row); ``documents`` as :func:`wmt_xml_documents` gives."""
    name = str(path)
    require_file(path, name)
    rows = [(n, line.split()) for n, line in enumerate(read_lines(path), 1) if line.strip()]
    if not rows or tuple(rows[0][1]) != HEADER:
        found = " ".join(rows[0][1]) if rows else "an empty file"
        raise InputError(f"{name}: the header is {found!r}, not WMT's segment-level DA header "
                         f"{' '.join(HEADER)!r}; give an ad-seg-scores-XX-YY.csv file")
    if len(rows) == 1:
        raise InputError(f"{name}: a header but no rows; give an ad-seg-scores-XX-YY.csv file with its scores")
    for n, fields in rows[1:]:
        if len(fields) != len(HEADER):
            raise InputError(f"{name}, line {n}: {len(fields)} fields where the header {' '.join(HEADER)!r} has "
                             f"{len(HEADER)}; fix or remove the line")
    numbers, body = [n for n, _ in rows[1:]], [f for _, f in rows[1:]]
    cols = {h: [f[i] for f in body] for i, h in enumerate(HEADER)}
    raw, z = (_numbers(cols[h], h, float, name, numbers) for h in ("RAW.SCR", "Z.SCR"))
    judged = _numbers(cols["N"], "N", int, name, numbers)
    lines = _sid_lines(cols["SID"], documents, order, lambda k: f"{name}, line {numbers[k]}")
    doc_of = _line_documents(documents)
    frame = pd.DataFrame({"lp": lp, "system": [_SUFFIX.sub("", s) for s in cols["SYS"]], "seg_id": lines,
                          "doc_id": doc_of[lines - 1], "human_raw": raw, "human_z": z, "human_n": judged,
                          "da_system": cols["SYS"], "da_sid": cols["SID"]})
    twice = frame.duplicated(["system", "seg_id"], keep=False).to_numpy()
    if twice.any():
        first, second = (numbers[int(k)] for k in np.flatnonzero(twice)[:2])
        k = int(np.flatnonzero(twice)[0])
        raise InputError(f"{name}, lines {first} and {second}: system {frame['system'].iat[k]!r} is scored twice on "
                         f"SID {frame['da_sid'].iat[k]} ({lp}); a DA file has one row per system and segment: "
                         "remove one")
    return frame


def _numbers(values: list[str], column: str, kind: type, name: str, numbers: list[int]) -> np.ndarray:
    out = []
    for k, value in enumerate(values):
        try:
            out.append(kind(value))
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise InputError(f"{name}, line {numbers[k]}: {column} is {value!r}, not {what}; fix the line") from None
    return np.array(out, dtype=np.int64 if kind is int else np.float64)


def find_wmt_xml(root: str | os.PathLike, lp: str, *, test_set: str | None = None) -> Path:
    """The ``xml/*.LP.all.xml`` of a WMT folder (beside its ``txt/``): ``TEST_SET.LP.all.xml`` when it exists,
    else the only one for the pair (its test-set name may differ from the txt one: WMT22's ``wmttest2022``)."""
    folder = _txt_root(Path(root)).parent / "xml"
    if test_set and (folder / f"{test_set}.{lp}.all.xml").is_file():
        return folder / f"{test_set}.{lp}.all.xml"
    found = sorted(folder.glob(f"*.{lp}.all.xml")) if folder.is_dir() else []
    if len(found) == 1:
        return found[0]
    if found:
        raise InputError(f"{folder}: several XML files for {lp} ({', '.join(p.name for p in found)}); name the test "
                         f"set with test_set= (reads TEST_SET.{lp}.all.xml), or keep one")
    there = sorted(p.name for p in folder.glob("*.all.xml")) if folder.is_dir() else []
    raise InputError(f"{folder}: no *.{lp}.all.xml (found: {', '.join(there) or 'none'}); the DA SIDs are placed by "
                     "the test set's documents: add the pair's XML file of the WMT release")


def attach_wmt_da(table: pd.DataFrame, da: Mapping[str, str | os.PathLike], *, root: str | os.PathLike,
                  test_set: str | None = None, order: str = "sorted",
                  da_systems: Mapping[str, str] | None = None) -> pd.DataFrame:
    """``table`` (as :func:`read_wmt_folder` reads ``root``) with the DA of each pair (``da``: lp -> DA file)
    as ``human_raw, human_z`` (NaN where not judged) and ``human_n`` (0), matched on lp, system, seg_id, and the
    WMT document of every row of those pairs as ``doc_id`` (from the XML; missing for other pairs) when the table
    has none: the unit the leaderboard's bootstrap and ``calibrate select`` resample and stratify by.

    The documents come from :func:`find_wmt_xml`; DA rows of systems the table has not (human translations,
    ``HUMAN.0``, ``HUMAN-B``) are left out with one warning naming and counting them. ``da_systems`` maps a DA
    system name (without its ``.N`` suffix) to its output file's, where the two differ (WMT21's DA ``Nemo`` is
    the output ``NVIDIA-NeMo``); a name no DA file has is refused (a typo would leave its rows out)."""
    _check_order(order)
    clash = [c for c in HUMAN_COLUMNS if c in table.columns]
    if clash:
        raise InputError(f"table: has a column {clash[0]} already; drop it before adding the DA scores")
    frames = []
    add_documents = "doc_id" not in table.columns
    doc_ids = pd.Series(pd.NA, index=table.index, dtype=object)
    for lp, path in da.items():
        rows = table[table["lp"] == lp]
        if rows.empty:
            raise InputError(f"the DA file for {lp} ({path}): {lp} is not a language pair read from {root} (read: "
                             f"{', '.join(sorted(table['lp'].unique()))}); drop that DA file or read the pair")
        tests = sorted(rows["dataset"].unique()) if "dataset" in rows.columns else []
        if len(tests) > 1:
            raise InputError(f"{root}: {lp} is read from several test sets ({', '.join(tests)}) and a DA file scores "
                             "one; name it with test_set=")
        xml = find_wmt_xml(root, lp, test_set=test_set)
        documents = wmt_xml_documents(xml)
        segments, lines = sum(n for _, n in documents), int(rows["seg_id"].max())
        if segments != lines:
            suites = len(wmt_xml_documents(xml, testsuites=True)) - len(documents)
            raise InputError(f"{xml}: {segments} source segments in {len(documents)} documents"
                             + (f" (not counting {suites} test-suite documents)" if suites else "")
                             + f", but the {lp} txt files have {lines} lines; the XML must be of the same test set: "
                             "give the matching file (test_set=)")
        frames.append(read_wmt_da(path, documents, lp=lp, order=order))
        if add_documents:
            doc_ids[rows.index] = _line_documents(documents)[rows["seg_id"].to_numpy(dtype=np.int64) - 1]
    if add_documents and frames:
        table = table.assign(doc_id=doc_ids)
    if not frames:
        return table.assign(human_raw=np.nan, human_z=np.nan, human_n=0)
    scores = pd.concat(frames, ignore_index=True)
    if da_systems:
        unknown = sorted(set(da_systems) - set(scores["system"]))
        if unknown:
            raise InputError(f"da_systems= maps {unknown[0]!r}, a system no DA file names (theirs: "
                             f"{', '.join(sorted(scores['system'].unique())[:12])}); map a DA name, without its .N "
                             "suffix, to its output file's name", argument="da_systems", value=unknown[0])
        scores["system"] = scores["system"].replace(dict(da_systems))
        twice = scores.duplicated(["lp", "system", "seg_id"], keep=False)
        if twice.any():
            row = scores[twice].iloc[0]
            raise InputError(f"da_systems= maps a DA name onto {row['system']!r}, which the {row['lp']} DA file "
                             f"scores under another name too (SID {row['da_sid']}); map each output from one DA name",
                             argument="da_systems", value=row["system"])
    known = pd.MultiIndex.from_frame(table[["lp", "system"]].drop_duplicates())
    kept = pd.MultiIndex.from_frame(scores[["lp", "system"]]).isin(known)
    if not kept.all():
        left = scores[~kept].groupby(["lp", "da_system"], sort=True).size()
        named = ", ".join(f"{lp} {system} ({n})" for (lp, system), n in left.items())
        warnings.warn(f"{int((~kept).sum())} DA rows left out: their systems are not outputs read from {root} "
                      f"(human translations, systems not read, or an output under another name: map it with "
                      f"da_systems=): {named}", DataQualityWarning, stacklevel=2)
    out = table.merge(scores.loc[kept, ["lp", "system", "seg_id", *HUMAN_COLUMNS]], how="left",
                      on=["lp", "system", "seg_id"], validate="many_to_one")
    out["human_n"] = out["human_n"].fillna(0).astype(np.int64)
    return out
