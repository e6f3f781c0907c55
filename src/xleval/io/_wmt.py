"""The WMT system-output folder (``wmt-conference/wmtNN-news-systems``, folder ``txt/``) as the long table.

Files (one segment a line, UTF-8, split on ``\\n`` only)::

    txt/sources/TESTSET.SRC-TGT.src.SRC
    txt/references/TESTSET.SRC-TGT.ref.NAME.TGT          (NAME: A, B, ...)
    txt/system-outputs/TESTSET.SRC-TGT.hyp.SYSTEM.TGT

Every (language pair, system) becomes rows ``dataset, lp, system, seg_id (1-based line), source,
reference`` (the chosen reference; the others as ``reference_2``... with ``all_references``) and
``hypothesis``. A system's output must have as many lines as the source.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..exceptions import InputError
from ._read import read_lines

__all__ = ["read_wmt_folder"]

_HYP = re.compile(r"^(?P<test>[^.]+)\.(?P<lp>[A-Za-z]+-[A-Za-z]+)\.hyp\.(?P<system>.+)\.(?P<tgt>[A-Za-z]+)$")
_REF = re.compile(r"^(?P<test>[^.]+)\.(?P<lp>[A-Za-z]+-[A-Za-z]+)\.ref\.(?P<name>[^.]+)\.(?P<tgt>[A-Za-z]+)$")
_SRC = re.compile(r"^(?P<test>[^.]+)\.(?P<lp>[A-Za-z]+-[A-Za-z]+)\.src\.(?P<src>[A-Za-z]+)$")


def _txt_root(root: Path) -> Path:
    for candidate in (root, root / "txt"):
        if (candidate / "system-outputs").is_dir():
            return candidate
    raise InputError(f"{root}: not a WMT system-output folder (no system-outputs/ in it or in its txt/); "
                     "give the folder that holds txt/ or txt/ itself")


def _lines(path: Path) -> list[str]:
    return read_lines(path)  # recorded as an input of the running command (no output may replace it)


def read_wmt_folder(root: str | os.PathLike, *, test_set: str | None = None, lps: Sequence[str] | None = None,
                    systems: Sequence[str] | None = None, reference: str = "A",
                    all_references: bool = False) -> pd.DataFrame:
    """Read a WMT ``txt/`` folder (see the module docstring) into the long table.

    ``test_set`` (e.g. ``newstest2021``), ``lps`` and ``systems`` restrict what is read (default:
    everything found); ``reference`` names the reference in the ``reference`` column (``A``);
    ``all_references`` adds the others as ``reference_2``, ... (sorted by name).
    """
    txt = _txt_root(Path(root))
    found: dict[tuple[str, str], list[tuple[str, Path]]] = {}
    seen_lps: set[str] = set()
    seen_systems: set[str] = set()
    seen_tests: set[str] = set()
    for path in sorted((txt / "system-outputs").iterdir()):
        m = _HYP.match(path.name.removesuffix(".gz"))  # a gzipped output is read as the plain one
        if m:
            seen_tests.add(m["test"])
        if not m or (test_set and m["test"] != test_set):
            continue
        seen_lps.add(m["lp"])
        if lps and m["lp"] not in lps:
            continue
        seen_systems.add(m["system"])
        if systems and m["system"] not in systems:
            continue
        if m["tgt"] != m["lp"].split("-")[1]:  # not an output of the pair (a copy, '.orig', another system's name)
            raise InputError(f"{path}: the file ends in .{m['tgt']} but the target language of {m['lp']} is "
                             f"{m['lp'].split('-')[1]!r}; a WMT output is TESTSET.LP.hyp.SYSTEM.TGT: rename or move it")
        found.setdefault((m["test"], m["lp"]), []).append((m["system"], path))
    where = f"{txt}/system-outputs" + (f" ({test_set})" if test_set else "")
    check_requested("test_set", [test_set] if test_set else None, seen_tests, f"{txt}/system-outputs", "test set")
    check_requested("lps", lps, seen_lps, where, "language pair")
    check_requested("systems", systems, seen_systems, where + (f" for {', '.join(lps)}" if lps else ""), "system")
    if not found:
        raise InputError(f"{txt}/system-outputs: no file is named TESTSET.LP.hyp.SYSTEM.TGT (e.g. "
                         "newstest2021.de-en.hyp.SYSTEM.en); give the folder of a WMT system-output release")
    frames = []
    for (test, lp), outputs in sorted(found.items()):
        src_name, tgt_name = lp.split("-")
        source = _lines(txt / "sources" / f"{test}.{lp}.src.{src_name}")
        refs = {}
        ref_dir = txt / "references"
        for path in sorted(ref_dir.glob(f"{test}.{lp}.ref.*.{tgt_name}")) if ref_dir.is_dir() else ():
            m = _REF.match(path.name)
            if m:
                refs[m["name"]] = _lines(path)
        if reference not in refs:
            raise InputError(f"{ref_dir}: no reference {reference!r} for {test} {lp} (found {sorted(refs) or 'none'}); "
                             "choose one with reference=")
        names = [reference] + ([r for r in sorted(refs) if r != reference] if all_references else [])
        for name in names:
            _check_length(refs[name], source, f"reference {name}", test, lp)
        for system, path in outputs:
            hyps = _lines(path)
            _check_length(hyps, source, f"system {system!r} ({path.name})", test, lp)
            part = {"dataset": test, "lp": lp, "system": system, "seg_id": range(1, len(source) + 1),
                    "source": source, "hypothesis": hyps}
            for k, name in enumerate(names):
                part["reference" if k == 0 else f"reference_{k + 1}"] = refs[name]
            frames.append(pd.DataFrame(part))
    return pd.concat(frames, ignore_index=True)


def check_requested(argument: str, asked: Sequence[str] | None, found: set[str], where: str, what: str) -> None:
    """Every value of a filter (``lps=``, ``systems=``) names something that exists: one that matches
    nothing is refused with what exists (a silently ignored filter value reads another table than asked)."""
    missing = [value for value in dict.fromkeys(asked or ()) if value not in found]
    if missing:
        shown = ", ".join(sorted(found)[:20]) + (f", ... ({len(found)} in all)" if len(found) > 20 else "")
        raise InputError(f"{argument}={missing[0]!r}: {where} has no {what} of that name; found: {shown or 'none'}",
                         argument=argument, value=missing[0])


def _check_length(lines: list[str], source: list[str], what: str, test: str, lp: str) -> None:
    if len(lines) != len(source):
        raise InputError(f"{test} {lp}: {what} has {len(lines)} lines but the source has {len(source)}; "
                         "the files must be line-aligned")
