"""Hostile inputs, round 5 (issue 35): the model boundary (no code from a model folder, one identity per
model, strict weights), the score cache, the readers' ids, ingest and check-outputs, closed and terminal
standard output, and the option values that said nothing.

Each case ends in one of two ways, as in earlier rounds: exit 0 with the right result, or exit 2 with one
clear line, no traceback, no output file and the inputs unchanged. No case may run code from a model
folder: the pickle payload of ``models/evil`` would create the file ``PWNED``. The list is the catalogue's
section "Hostile inputs, round 5" in docs/errors.md; ``python tests/test_hostile_round5.py`` rewrites it.
"""
from __future__ import annotations

import hashlib
import json
import os
import pty
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import importorskip_lazy, run_cli, xleval_command

importorskip_lazy("comet", reason="needs unbabel-comet (make install-full installs it)")

from _tiny_models import (  # noqa: E402
    build_tiny_comet,
    build_tiny_encoder,
    build_tiny_metricx,
    build_tiny_mt5_tokenizer,
)

pytestmark = pytest.mark.neural

DOC = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
MARKER = "<!-- hostile inputs, round 5 -->"
PWNED = "PWNED"  # the file the pickle payload would write


@dataclass(frozen=True)
class Hostile:
    id: str
    command: str          # the command under attack, as the catalogue groups them
    attack: str           # what the hostile input is
    args: tuple[str, ...]
    expect: str           # "refused" (exit 2, one line holding `says`) or "ok" (exit 0, `check` passes)
    says: str = ""        # a fragment of the one line (refused) or of stdout+stderr (ok)
    check: Callable[[Path, str, str], None] | None = None
    output: str | None = None  # the output path: absent after a refusal


def _h(id, command, attack, args, expect, says="", check=None, output=None):
    return Hostile(id, command, attack, tuple(args.split()) if isinstance(args, str) else tuple(args), expect, says,
                   check, output)


# --- oracles ------------------------------------------------------------------------------------------------

def ids_kept(path: str, source: str) -> Callable[[Path, str, str], None]:
    """The written ids are the input's, digit for digit (2**53 + 1 is not 2**53)."""
    def check(root: Path, out: str, err: str) -> None:
        written = pd.read_csv(root / path, sep="\t", dtype=str)["seg_id"].tolist()
        given = pd.read_csv(root / source, sep="\t", dtype=str)["seg_id"].tolist()
        assert written == given and len(set(written)) == len(written), written
    return check


def flagged_empty(path: str, expected: list[bool]) -> Callable[[Path, str, str], None]:
    def check(root: Path, out: str, err: str) -> None:
        rows = pd.read_csv(root / path, sep="\t")
        assert rows["empty"].astype(bool).tolist() == expected
    return check


def signed_with_identity(path: str, column: str, folders: tuple[str, ...]) -> Callable[[Path, str, str], None]:
    """The table's signature carries the model's content identity (sha256 of its files, computed here)."""
    def check(root: Path, out: str, err: str) -> None:
        sig = json.loads((root / (path + ".signatures.json")).read_text())["signatures"][column]
        assert f"sha256:{_identity(*(root / f for f in folders))[:16]}" in sig, sig
    return check


def _identity(*folders: Path) -> str:
    """An independent computation of the identity xleval documents: per folder, sha256 over the sorted
    model files (relative name, NUL, size, NUL, bytes); then sha256 of the folders' hex digests."""
    outer = hashlib.sha256()
    for folder in folders:
        inner = hashlib.sha256()
        files = sorted((p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")
                        and not p.name.endswith(".md")), key=lambda p: p.relative_to(folder).as_posix())
        for p in files:
            inner.update(f"{p.relative_to(folder).as_posix()}\0{p.stat().st_size}\0".encode())
            inner.update(p.read_bytes())
        outer.update(inner.hexdigest().encode())
    return outer.hexdigest()


def no_raw_controls(root: Path, out: str, err: str) -> None:
    for ch in ("\u202e", "\x1b", "\x07"):
        assert ch not in out + err, repr(ch)


# --- the cases ----------------------------------------------------------------------------------------------
S = "score t.tsv"
CA, CB = "comet:models/a/comet", "comet:models/b/comet"
MX = "metricx:mx/metricx-24-hybrid-tiny --metricx-tokenizer mx/tok"
CASES: list[Hostile] = [
    # 1. no code from a model folder (the payload would write PWNED)
    _h("H5-001", "score (comet)", "model.ckpt whose pickle calls exec() (a payload that writes a file)",
       f"{S} -m comet:models/evil/comet -o out/H5-001.tsv", "refused", "holds more than weights",
       output="out/H5-001.tsv"),
    _h("H5-002", "score (metricx)", "the same payload in a MetricX pytorch_model.bin",
       f"{S} -m metricx:mx/evil/metricx-24-hybrid-tiny --metricx-tokenizer mx/tok -o out/H5-002.tsv", "refused",
       "mx/evil/metricx-24-hybrid-tiny", output="out/H5-002.tsv"),
    # 9. corrupt model folders: one line, naming the file
    _h("H5-003", "score (comet)", "hparams.yaml that is not YAML", f"{S} -m comet:models/badyaml/comet "
       "-o out/H5-003.tsv", "refused", "hparams.yaml: not valid YAML", output="out/H5-003.tsv"),
    _h("H5-004", "score (comet)", "hparams.yaml naming an unknown class", f"{S} -m comet:models/unknown/comet "
       "-o out/H5-004.tsv", "refused", "is not a COMET model class", output="out/H5-004.tsv"),
    _h("H5-005", "score (comet)", "an empty model.ckpt (0 bytes)", f"{S} -m comet:models/empty/comet "
       "-o out/H5-005.tsv", "refused", "model.ckpt: the COMET checkpoint is empty", output="out/H5-005.tsv"),
    _h("H5-006", "score (comet)", "model.ckpt of random bytes", f"{S} -m comet:models/random/comet "
       "-o out/H5-006.tsv", "refused", "not a readable PyTorch COMET checkpoint", output="out/H5-006.tsv"),
    _h("H5-007", "score (comet)", "hparams.yaml that is a YAML list, not a mapping",
       f"{S} -m comet:models/listyaml/comet -o out/H5-007.tsv", "refused", "no class_identifier",
       output="out/H5-007.tsv"),
    _h("H5-008", "score (comet)", "a checkpoint whose encoder is not on this machine (offline)",
       f"{S} -m comet:models/noenc/comet -o out/H5-008.tsv", "refused", "cannot build its encoder",
       output="out/H5-008.tsv"),
    _h("H5-052", "score (comet)", "a checkpoint whose hyper-parameters ask for a 10^9-wide estimator layer",
       f"{S} -m comet:models/huge/comet -o out/H5-052.tsv", "refused", "hidden_sizes=[1000000000, 16]",
       output="out/H5-052.tsv"),
    _h("H5-009", "score (metricx)", "config.json with d_model 10^9", f"{S} -m metricx:mx/huge/metricx-24-hybrid-tiny "
       "--metricx-tokenizer mx/tok -o out/H5-009.tsv", "refused", "d_model=1000000000 is not a size",
       output="out/H5-009.tsv"),
    _h("H5-010", "score (metricx)", "config.json of another width than the weights",
       f"{S} -m metricx:mx/wide/metricx-24-hybrid-tiny --metricx-tokenizer mx/tok -o out/H5-010.tsv", "refused",
       "the weights and config.json come from different models", output="out/H5-010.tsv"),
    _h("H5-011", "score (metricx)", "config.json that is not JSON", f"{S} -m metricx:mx/badjson/metricx-24-hybrid-tiny"
       " --metricx-tokenizer mx/tok -o out/H5-011.tsv", "refused", "config.json: not valid JSON",
       output="out/H5-011.tsv"),
    _h("H5-012", "score (metricx)", "model.safetensors of random bytes",
       f"{S} -m metricx:mx/randomst/metricx-24-hybrid-tiny --metricx-tokenizer mx/tok -o out/H5-012.tsv", "refused",
       "not a readable safetensors file", output="out/H5-012.tsv"),
    _h("H5-013", "score (bertscore)", "an encoder folder without weights (config.json only)",
       f"{S} -m bertscore:models/noweights -o out/H5-013.tsv", "refused", "models/noweights: the BERTScore model",
       output="out/H5-013.tsv"),
    _h("H5-014", "score (embed)", "modules.json that is not JSON", f"{S} -m embed:models/badmodules "
       "-o out/H5-014.tsv", "refused", "modules.json: not valid JSON", output="out/H5-014.tsv"),
    # 4. strict weights
    _h("H5-015", "score (comet)", "a checkpoint without its estimator (would score with random layers)",
       f"{S} -m comet:models/noest/comet -o out/H5-015.tsv", "refused", "weight(s) the model needs are missing",
       output="out/H5-015.tsv"),
    _h("H5-016", "score (comet)", "a checkpoint with a surplus weight", f"{S} -m comet:models/surplus/comet "
       "-o out/H5-016.tsv", "refused", "match no part of the model", output="out/H5-016.tsv"),
    _h("H5-017", "score (metricx)", "a checkpoint missing an encoder block's weight",
       f"{S} -m metricx:mx/noblock/metricx-24-hybrid-tiny --metricx-tokenizer mx/tok -o out/H5-017.tsv", "refused",
       "weight(s) the model needs are missing", output="out/H5-017.tsv"),
    _h("H5-018", "score (metricx)", "config.json that drops a layer the weights have",
       f"{S} -m metricx:mx/fewer/metricx-24-hybrid-tiny --metricx-tokenizer mx/tok -o out/H5-018.tsv", "refused",
       "match no part of the model", output="out/H5-018.tsv"),
    _h("H5-050", "score (bertscore)", "an encoder missing one layer's weight (bert_score would fill it at random)",
       f"{S} -m bertscore:models/encmiss -o out/H5-050.tsv", "refused", "weight(s) the model needs are missing",
       output="out/H5-050.tsv"),
    _h("H5-051", "score (embed)", "the same encoder as an embedding model", f"{S} -m embed:models/encmiss "
       "-o out/H5-051.tsv", "refused", "encoder.layer.1.", output="out/H5-051.tsv"),
    # 3. one identity per model
    _h("H5-019", "score (comet)", "the signature names the model's content, not its folder",
       f"{S} -m {CA} -o out/H5-019.tsv", "ok",
       check=signed_with_identity("out/H5-019.tsv", "comet", ("models/a/comet",))),
    _h("H5-020", "score (metricx)", "the signature covers weights and the tokenizer",
       f"{S} -m {MX} -o out/H5-020.tsv", "ok",
       check=signed_with_identity("out/H5-020.tsv", "metricx", ("mx/metricx-24-hybrid-tiny", "mx/tok"))),
    # 5. two models of one kind
    _h("H5-021", "score", "two COMET models in -m (one column each would be 'comet')", f"{S} -m {CA},{CB} "
       "-o out/H5-021.tsv", "refused", "would both write the column 'comet'", output="out/H5-021.tsv"),
    _h("H5-022", "score", "two COMET models as two -m", f"{S} -m {CA} -m {CB} -o out/H5-022.tsv", "refused",
       "would both write the column 'comet'", output="out/H5-022.tsv"),
    # 8/9. the cache
    _h("H5-023", "score (cache)", "--cache and -o the same file", f"{S} -m {MX} --cache out/H5-023.tsv "
       "-o out/H5-023.tsv", "refused", "name one file", output="out/H5-023.tsv"),
    _h("H5-024", "score (cache)", "--cache and -o the same file by another name", f"{S} -m {MX} --cache "
       "out/../out/H5-024.tsv -o out/H5-024.tsv", "refused", "name one file", output="out/H5-024.tsv"),
    _h("H5-025", "score (cache)", "a cached score edited to 99 (MetricX gives 0-25)", f"{S} -m {MX} --cache "
       "edited.sqlite -o out/H5-025.tsv", "refused", "holds a score 99.0 that the metric cannot give",
       output="out/H5-025.tsv"),
    _h("H5-026", "score (cache)", "a cached score edited to text", f"{S} -m {MX} --cache text.sqlite "
       "-o out/H5-026.tsv", "refused", "that the metric cannot give", output="out/H5-026.tsv"),
    _h("H5-027", "score (cache)", "a cache in a folder that does not exist (found only after scoring)",
       f"{S} -m {MX} --cache nodir/c.sqlite -o out/H5-027.tsv", "refused", "does not exist",
       output="out/H5-027.tsv"),
    _h("H5-028", "score (cache)", "a cache under a file (SQLite cannot open it)", f"{S} -m {MX} --cache "
       "t.tsv/c.sqlite -o out/H5-028.tsv", "refused", "c.sqlite", output="out/H5-028.tsv"),
    _h("H5-029", "score (cache)", "an SQLite file with another scores table", f"{S} -m {MX} --cache "
       "foreign.sqlite -o out/H5-029.tsv", "refused", "is not an xleval score cache", output="out/H5-029.tsv"),
    # 6. ids beyond 2**53
    _h("H5-030", "score", "seg_id 2**53 and 2**53 + 1 in a TSV", "score big_ids.tsv -m chrf -o out/H5-030.tsv", "ok",
       check=ids_kept("out/H5-030.tsv", "big_ids.tsv")),
    _h("H5-031", "score", "seg_id 2**53 + 1 beside a missing id in JSONL", "score big_ids.jsonl -m chrf "
       "-o out/H5-031.jsonl", "ok",
       check=lambda root, out, err: _jsonl_ids(root / "out/H5-031.jsonl", [2**53 + 1, None, 2**53])),
    _h("H5-032", "calibrate select", "ids beyond 2**53 (distinct rows, not merged)",
       "calibrate select big_select.tsv --score metric --budget 4 -o out/H5-032.tsv", "ok",
       check=lambda root, out, err: _distinct_ids(root / "out/H5-032.tsv", 8)),
    # 8. ingest and check-outputs
    _h("H5-033", "ingest mqm", "a negative weight", "ingest mqm spans.tsv --lp en-de --weights Major:-5 "
       "-o out/H5-033.tsv", "refused", "would reward errors", output="out/H5-033.tsv"),
    _h("H5-034", "ingest mqm", "a negative category weight", "ingest mqm spans.tsv --lp en-de --weights "
       "Major:5,Minor:1,Major/Accuracy:-0.5 -o out/H5-034.tsv", "refused", "'Major/Accuracy'",
       output="out/H5-034.tsv"),
    _h("H5-035", "ingest esa", "true as an ESA score", "ingest esa esa_bool.jsonl -o out/H5-035.tsv", "refused",
       "score = True is not a number from 0 to 100", output="out/H5-035.tsv"),
    _h("H5-036", "ingest esa", "false as an ESA score", "ingest esa esa_false.jsonl -o out/H5-036.tsv", "refused",
       "score = False", output="out/H5-036.tsv"),
    _h("H5-037", "check-outputs", "outputs of zero-width, word-joiner, BOM and no-break-space characters only",
       "check-outputs invisible.tsv --rows out/H5-037.tsv", "ok",
       check=flagged_empty("out/H5-037.tsv", [True, True, True, True, False, False])),
    # 10. --exclude-invalid says which system lost every row
    _h("H5-038", "leaderboard", "--exclude-invalid when one system's outputs are all empty",
       "leaderboard all_empty.tsv --score chrf --exclude-invalid", "ok", "every row of system 'B'"),
    # 9/10. option values
    _h("H5-039", "meta", "--calibrations anchored@K with K above every group's labels",
       "meta meta6.tsv --metrics m1 --human human --no-spa --calibrations anchored@1000", "refused",
       "no group has more than 60"),
    _h("H5-040", "meta", "--calibrations ''", ["meta", "meta6.tsv", "--metrics", "m1", "--human", "human", "--no-spa",
                                               "--calibrations", ""], "refused", "give at least one"),
    *[_h(f"H5-0{53 + i}", "meta", f"{flag} ''", ["meta", "meta6.tsv", "--metrics", "m1", "--human", "human",
                                                  "--no-spa", flag, ""], "refused", f"{flag} '': give a value")
      for i, flag in enumerate(("--exclude", "--lower-is-better", "--clusters", "--human-scale"))],
    _h("H5-041", "report", "--meta ''", ["report", "meta6.tsv", "--score", "m1", "--human", "human", "--meta", "",
                                         "-o", "out/H5-041.html"], "refused", "names no metric column",
       output="out/H5-041.html"),
    _h("H5-042", "report", "--meta ','", ["report", "meta6.tsv", "--score", "m1", "--human", "human", "--meta", ",",
                                          "-o", "out/H5-042.html"], "refused", "names no metric column",
       output="out/H5-042.html"),
    _h("H5-043", "score (cache)", "--cache ''", [*f"{S} -m {MX} -o out/H5-043.tsv".split(), "--cache", ""], "refused",
       "cache", output="out/H5-043.tsv"),
    # 10. a library's words on the command line ("pass refs=") become the table's
    _h("H5-047", "score (comet)", "a reference-based COMET model on a table without references",
       f"score t_noref.tsv -m {CA} -o out/H5-047.tsv", "refused", "has no 'reference' column",
       output="out/H5-047.tsv"),
    _h("H5-048", "score (comet)", "a COMET model on a table without sources",
       f"score t_nosrc.tsv -m {CA} -o out/H5-048.tsv", "refused", "--col source=NAME", output="out/H5-048.tsv"),
    # 10. ingest contradictions are said
    _h("H5-045", "ingest mqm", "a rater's No-error row beside an error in the same segment",
       "ingest mqm spans_contradict.tsv --lp en-de -o out/H5-045.tsv", "ok",
       "1 (segment, rater) pair(s) hold a No-error row beside an error"),
    _h("H5-046", "ingest esa", "every score within 0-1 (a 0-1 scale given as ESA)", "ingest esa esa_unit.jsonl "
       "-o out/H5-046.tsv", "ok", "every score is within 0-1"),
    _h("H5-049", "ingest esa", "a span that ends before it starts", "ingest esa esa_backwards.jsonl --spans spans "
       "-o out/H5-049.tsv", "refused", "ends (end 3) before it starts (start 9)", output="out/H5-049.tsv"),
    # 2. the one writer rule (a pipe gets the exact names)
    _h("H5-044", "score", "names with escape, BEL and bidi characters, -o - into a pipe",
       "score evil_names.parquet -m chrf -o -", "ok",
       check=lambda root, out, err: _exact_names(out)),
]


def _jsonl_ids(path: Path, expected: list) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["seg_id"] for r in rows] == expected


def _distinct_ids(path: Path, n: int) -> None:
    rows = pd.read_csv(path, sep="\t", dtype=str)
    assert len(rows) == n and rows["seg_id"].str.len().min() >= 16, rows["seg_id"].tolist()
    full = pd.read_csv(path.parents[1] / "big_select.tsv", sep="\t", dtype=str)
    assert set(rows["seg_id"]) <= set(full["seg_id"])


def _exact_names(out: str) -> None:
    assert "esc\x1b]0;title\x07" in out and "evil\u202eX" in out  # a pipe is data: exact


# --- files --------------------------------------------------------------------------------------------------

class _Payload:
    """Unpickling this calls exec(): it would write the file PWNED (the code of a hostile model.ckpt)."""

    def __reduce__(self):
        return (exec, (f"with open({PWNED!r}, 'w') as f:\n    f.write('ran')",))


def _rewrite_checkpoint(folder: Path, edit) -> None:
    import torch

    ckpt = folder / "checkpoints" / "model.ckpt"
    state = torch.load(ckpt, map_location="cpu", weights_only=True)
    edit(state)
    torch.save(state, ckpt)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _models(root: Path) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    m = root / "models"
    enc = build_tiny_encoder(m / "enc", kind="xlm-roberta")
    a = build_tiny_comet(m / "a" / "comet", enc, seed=0)
    build_tiny_comet(m / "b" / "comet", enc, seed=1)
    evil = _copy(a, m / "evil" / "comet")
    _rewrite_checkpoint(evil, lambda s: s.update(payload=_Payload()))
    _rewrite_checkpoint(_copy(a, m / "noest" / "comet"),
                        lambda s: s.update(state_dict={k: v for k, v in s["state_dict"].items()
                                                       if not k.startswith("estimator.")}))
    _rewrite_checkpoint(_copy(a, m / "surplus" / "comet"),
                        lambda s: s["state_dict"].update({"estimator.extra.weight": torch.zeros(3)}))
    _rewrite_checkpoint(_copy(a, m / "noenc" / "comet"),
                        lambda s: s["hyper_parameters"].update(pretrained_model=str(root / "nowhere" / "xlmr")))
    _rewrite_checkpoint(_copy(a, m / "huge" / "comet"),
                        lambda s: s["hyper_parameters"].update(hidden_sizes=[10**9, 16]))
    (_copy(a, m / "badyaml" / "comet") / "hparams.yaml").write_text("class_identifier: [regression_metric\n")
    (_copy(a, m / "unknown" / "comet") / "hparams.yaml").write_text("class_identifier: nosuch_metric\n")
    (_copy(a, m / "listyaml" / "comet") / "hparams.yaml").write_text("- class_identifier\n- regression_metric\n")
    (_copy(a, m / "empty" / "comet") / "checkpoints" / "model.ckpt").write_bytes(b"")
    (_copy(a, m / "random" / "comet") / "checkpoints" / "model.ckpt").write_bytes(
        np.random.default_rng(0).bytes(4096))
    (m / "noweights").mkdir()
    shutil.copy(enc / "config.json", m / "noweights" / "config.json")
    encmiss = _copy(enc, m / "encmiss")
    weights = load_file(encmiss / "model.safetensors")
    save_file({k: v for k, v in weights.items() if k != "encoder.layer.1.output.dense.weight"},
              encmiss / "model.safetensors", metadata={"format": "pt"})
    _copy(enc, m / "badmodules")
    (m / "badmodules" / "modules.json").write_text("[{")
    # MetricX
    mx = root / "mx"
    tiny = build_tiny_metricx(mx / "metricx-24-hybrid-tiny")
    build_tiny_mt5_tokenizer(mx / "tok")
    config = json.loads((tiny / "config.json").read_text())
    for name, change in (("huge", {"d_model": 10**9}), ("wide", {"d_model": 16})):
        folder = _copy(tiny, mx / name / "metricx-24-hybrid-tiny")
        (folder / "config.json").write_text(json.dumps({**config, **change}))
    (_copy(tiny, mx / "badjson" / "metricx-24-hybrid-tiny") / "config.json").write_text("{")
    evil_mx = _copy(tiny, mx / "evil" / "metricx-24-hybrid-tiny")
    torch.save({**load_file(evil_mx / "model.safetensors"), "payload": _Payload()}, evil_mx / "pytorch_model.bin")
    (evil_mx / "model.safetensors").unlink()
    (_copy(tiny, mx / "randomst" / "metricx-24-hybrid-tiny") / "model.safetensors").write_bytes(
        np.random.default_rng(1).bytes(4096))
    noblock = _copy(tiny, mx / "noblock" / "metricx-24-hybrid-tiny")
    weights = load_file(noblock / "model.safetensors")
    dropped = next(k for k in weights if k.startswith("encoder.block.0.layer.1."))
    save_file({k: v for k, v in weights.items() if k != dropped}, noblock / "model.safetensors",
              metadata={"format": "pt"})
    two = build_tiny_metricx(mx / "fewer" / "metricx-24-hybrid-tiny", layers=2)
    cfg = json.loads((two / "config.json").read_text())
    (two / "config.json").write_text(json.dumps({**cfg, "num_layers": 1, "num_decoder_layers": 1}))


def _table() -> pd.DataFrame:
    src = ["Die Katze sitzt auf der Matte.", "Das Wetter ist heute schön.", "Der Hund bellt."]
    ref = ["The cat sat on the mat.", "The weather is nice today.", "The dog barks."]
    hyp = {"A": ["The cat sat on the mat.", "The weather is nice.", "A dog barks."],
           "B": ["Cat on mat.", "Weather good today.", "The dog is barking."]}
    return pd.DataFrame([{"lp": "de-en", "system": s, "seg_id": i, "source": src[i], "hypothesis": hyp[s][i],
                          "reference": ref[i]} for s in ("A", "B") for i in range(3)])


def _write_files(root: Path) -> None:
    from xleval.metrics import MetricX
    from xleval.metrics._score_cache import ScoreCache, row_keys

    (root / "out").mkdir()
    _models(root)
    t = _table()
    t.to_csv(root / "t.tsv", sep="\t", index=False)
    t.drop(columns="reference").to_csv(root / "t_noref.tsv", sep="\t", index=False)
    t.drop(columns="source").to_csv(root / "t_nosrc.tsv", sep="\t", index=False)
    # a cache of the tiny MetricX's own signature, with one value edited out of range / to text
    metric = MetricX(root / "mx" / "metricx-24-hybrid-tiny", tokenizer_path=root / "mx" / "tok")
    keys = row_keys(t["hypothesis"].tolist(), [t["reference"].tolist()], t["source"].tolist())
    for name, value in (("edited.sqlite", 99.0), ("text.sqlite", 3.0)):
        ScoreCache(root / name, metric.signature).put(keys, [value] * len(keys))
    con = sqlite3.connect(root / "text.sqlite")
    with con:
        con.execute("UPDATE scores SET score = 'three'")
    con.close()
    con = sqlite3.connect(root / "foreign.sqlite")
    with con:
        con.execute("CREATE TABLE scores (name TEXT)")
    con.close()
    big = pd.DataFrame({"lp": "de-en", "system": "A", "seg_id": [str(2**53 + 1), str(2**53), str(2**53 + 3)],
                        "hypothesis": ["a b", "c d", "e f"], "reference": ["a b", "c e", "e f"]})
    big.to_csv(root / "big_ids.tsv", sep="\t", index=False)
    (root / "big_ids.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
        {"lp": "de-en", "system": "A", "seg_id": 2**53 + 1, "hypothesis": "a b", "reference": "a b"},
        {"lp": "de-en", "system": "A", "seg_id": None, "hypothesis": "c d", "reference": "c e"},
        {"lp": "de-en", "system": "A", "seg_id": 2**53, "hypothesis": "e f", "reference": "e f"})))
    rng = np.random.default_rng(0)
    select = pd.DataFrame({"lp": np.repeat(["en-de", "en-fr"], 20), "system": "A",
                           "seg_id": [str(2**60 + i) for i in range(40)], "metric": rng.normal(size=40),
                           "human": np.nan})
    select.to_csv(root / "big_select.tsv", sep="\t", index=False)
    spans = pd.DataFrame({"system": ["A", "A", "B"], "seg_id": [1, 2, 1], "rater": ["r1", "r1", "r2"],
                          "severity": ["Major", "No-error", "Minor"], "category": ["Accuracy", "No-error", "Fluency"]})
    spans.to_csv(root / "spans.tsv", sep="\t", index=False)
    spans.assign(seg_id=[1, 1, 1], system="A", rater="r1").to_csv(root / "spans_contradict.tsv", sep="\t",
                                                                   index=False)
    for name, value in (("esa_bool.jsonl", True), ("esa_false.jsonl", False), ("esa_unit.jsonl", 0.35)):
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in (
            {"lp": "cs-uk", "system": "A", "seg_id": 1, "rater": "x", "score": value},
            {"lp": "cs-uk", "system": "B", "seg_id": 1, "rater": "x",
             "score": 0.8 if name == "esa_unit.jsonl" else 80})))
    (root / "esa_backwards.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
        {"lp": "cs-uk", "system": "A", "seg_id": 1, "rater": "x", "score": 70,
         "spans": json.dumps([{"severity": "minor", "start": 9, "end": 3}])},
        {"lp": "cs-uk", "system": "B", "seg_id": 1, "rater": "x", "score": 80, "spans": "[]"})))
    invisible = t.assign(hypothesis=["\u200b\u200b", "\u2060", "\ufeff", "\u00a0 \u200d", "a\u200b", "ok"])
    invisible.to_csv(root / "invisible.tsv", sep="\t", index=False)
    rows = pd.concat([t.assign(seg_id=t["seg_id"] + 3 * k) for k in range(4)], ignore_index=True)
    rows["chrf"] = np.linspace(20, 80, len(rows))
    rows["hypothesis"] = rows["hypothesis"].where(rows["system"] != "B", "")
    rows.to_csv(root / "all_empty.tsv", sep="\t", index=False)
    meta = []
    for lp in ("en-de", "en-ja", "de-en"):
        for s in range(6):
            for i in range(10):
                h = s + rng.normal()
                meta.append({"lp": lp, "system": f"s{s}", "seg_id": i, "human": h, "m1": h + rng.normal()})
    pd.DataFrame(meta).to_csv(root / "meta6.tsv", sep="\t", index=False)
    evil = t.assign(system=t["system"].replace({"A": "esc\x1b]0;title\x07", "B": "evil\u202eX"}))
    evil.to_parquet(root / "evil_names.parquet")
    evil.assign(chrf=np.linspace(40, 60, len(evil))).to_parquet(root / "evil_scored.parquet")


@pytest.fixture(scope="module")
def workdir():
    root = Path(tempfile.mkdtemp(prefix="xleval-hostile5-"))
    _write_files(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _inputs(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and "out" not in p.relative_to(root).parts}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case, workdir):
    before = _inputs(workdir)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        rc, out, err = run_cli(*case.args, cwd=workdir)
    assert "Traceback" not in err
    assert not (workdir / PWNED).exists() and not Path(PWNED).exists(), "code from a model folder ran"
    assert _inputs(workdir) == before, f"{case.id}: an input changed"
    if case.expect == "refused":
        lines = err.splitlines()
        assert rc == 2, (rc, err)
        assert len(lines) == 1 and lines[0].startswith("xleval: error: "), err
        assert case.says in lines[0], (case.says, lines[0])
        if case.output:
            target = workdir / case.output
            assert not target.exists(), f"{case.output} was written"
            assert not list(target.parent.glob(f".{target.name}.*")), "a temporary file was left"
    else:
        assert rc == 0, err
        assert case.says in out + err, (case.says, err[-500:])
        if case.check is not None:
            case.check(workdir, out, err)


# --- class by class, beyond the one-line cases ----------------------------------------------------------------

def test_a_pickle_payload_never_runs_in_the_library(workdir, monkeypatch):
    """Security (item 1): the library refuses the checkpoint naming the file; the payload's file is absent."""
    from xleval.exceptions import ModelFileError
    from xleval.metrics import COMET

    monkeypatch.chdir(workdir)
    metric = COMET(workdir / "models" / "evil" / "comet")
    with pytest.raises(ModelFileError, match=r"model\.ckpt: the COMET checkpoint holds more than weights"):
        metric.sentence_scores(["a"], [["a"]], ["a"])
    assert not (workdir / PWNED).exists()


def test_the_payload_would_run_without_weights_only(workdir, monkeypatch):
    """The fixture is a real attack: torch's full unpickler runs it (so the test above tests something)."""
    import torch

    monkeypatch.chdir(workdir)
    torch.load(workdir / "models" / "evil" / "comet" / "checkpoints" / "model.ckpt", weights_only=False)
    assert (workdir / PWNED).read_text() == "ran"
    (workdir / PWNED).unlink()


def test_one_identity_per_model_not_per_folder_name(workdir):
    """Item 3: a/comet and b/comet (other weights) have other signatures; a byte-identical copy has the same
    identity (its folder name plays no part), and a file changed in place changes it."""
    from xleval.metrics import COMET
    from xleval.metrics._model_files import model_identity

    a, b = COMET(workdir / "models" / "a" / "comet"), COMET(workdir / "models" / "b" / "comet")
    assert a.signature != b.signature and a.model_path.name == b.model_path.name
    assert a.identity == _identity(workdir / "models" / "a" / "comet")
    copy = workdir / "out" / "copy" / "elsewhere"
    shutil.copytree(workdir / "models" / "a" / "comet", copy)
    assert model_identity(copy) == model_identity(workdir / "models" / "a" / "comet")
    (copy / "hparams.yaml").write_text((copy / "hparams.yaml").read_text() + "# edited\n")
    assert model_identity(copy) != model_identity(workdir / "models" / "a" / "comet")


def test_the_identity_is_remembered_on_disk_until_a_file_changes(tmp_path, monkeypatch):
    """Item 3, "computed once": a new run reads the digest of an unchanged folder from the on-disk memo; a file
    rewritten in place with its old size and modification time put back is hashed again (its change time
    differs), so a replaced checkpoint never keeps the old identity."""
    from xleval.metrics import _model_files as mf

    monkeypatch.setenv("XLEVAL_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"a" * 1000)
    first = mf.model_identity(folder)
    assert first == _identity(folder)
    mf._MEMO.clear()
    reads = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: reads.append(a[0]) or real_open(*a, **k))
    assert mf.model_identity(folder) == first and not [r for r in reads if str(r).endswith(".safetensors")]
    monkeypatch.undo()
    monkeypatch.setenv("XLEVAL_CACHE_DIR", str(tmp_path / "cache"))
    st = (folder / "model.safetensors").stat()
    (folder / "model.safetensors").write_bytes(b"b" * 1000)  # same size
    os.utime(folder / "model.safetensors", ns=(st.st_atime_ns, st.st_mtime_ns))  # same modification time
    mf._MEMO.clear()
    assert mf.model_identity(folder) == _identity(folder) != first


def test_a_single_model_file_has_the_identity_of_its_bytes(tmp_path, monkeypatch):
    """model_identity is reusable by any model-backed metric (an LLM judge's GGUF file): a file is its bytes,
    whatever its name (oracle: sha256 over NUL, size, NUL, bytes, then over that hex digest)."""
    from xleval.exceptions import ModelFileError
    from xleval.metrics._model_files import model_identity

    monkeypatch.setenv("XLEVAL_CACHE_DIR", "none")
    a, b = tmp_path / "a.gguf", tmp_path / "b.bin"
    a.write_bytes(b"weights")
    b.write_bytes(b"weights")
    inner = hashlib.sha256(b"\0" + b"7\0" + b"weights").hexdigest()
    assert model_identity(a) == model_identity(b) == hashlib.sha256(inner.encode()).hexdigest()
    with pytest.raises(ModelFileError, match="no such model file or folder"):
        model_identity(tmp_path / "missing")


def test_two_checkpoints_of_one_folder_name_never_share_a_cache_or_a_calibrator(workdir):
    """Item 3: scoring b/comet through the cache that a/comet filled gives b's own scores (the oracle: b
    scored without a cache); a calibrator fitted on a's scores refuses b's."""
    def run(*args):
        rc, out, err = run_cli(*args, cwd=workdir)
        assert rc == 0, err
        return rc, out, err

    (workdir / "out" / "shared").mkdir()
    run("score", "t.tsv", "-m", CA, "--cache", "out/shared/", "-o", "out/a_cached.tsv")
    run("score", "t.tsv", "-m", CB, "--cache", "out/shared/", "-o", "out/b_cached.tsv")
    run("score", "t.tsv", "-m", CB, "-o", "out/b_plain.tsv")
    run("score", "t.tsv", "-m", CA, "-o", "out/a_plain.tsv")
    read = lambda name: pd.read_csv(workdir / "out" / name, sep="\t")["comet"].to_numpy()  # noqa: E731
    np.testing.assert_allclose(read("b_cached.tsv"), read("b_plain.tsv"), rtol=1e-6)
    np.testing.assert_allclose(read("a_cached.tsv"), read("a_plain.tsv"), rtol=1e-6)
    assert not np.allclose(read("a_plain.tsv"), read("b_plain.tsv"))
    assert len(list((workdir / "out" / "shared").iterdir())) == 2  # one file per signature
    table = pd.read_csv(workdir / "out" / "a_plain.tsv", sep="\t")
    pd.concat([table.assign(lp=lp) for lp in ("de-en", "fr-en")]).to_csv(workdir / "out" / "a_fit.tsv", sep="\t",
                                                                          index=False)
    shutil.copy(workdir / "out" / "a_plain.tsv.signatures.json", workdir / "out" / "a_fit.tsv.signatures.json")
    run("calibrate", "fit", "out/a_fit.tsv", "--score", "comet", "-o", "out/a_model.json")
    rc, _, err = run_cli("calibrate", "apply", "out/a_model.json", "out/b_plain.tsv", "-o", "out/b_cal.tsv",
                         cwd=workdir)
    assert rc == 2 and "signature" in err and not (workdir / "out" / "b_cal.tsv").exists(), err


def test_sqlite_failures_are_one_line(tmp_path, monkeypatch):
    """Item 9: an SQLite error (a locked database, a full disk) is an InputError naming the cache, whether it
    happens opening, reading or writing."""
    from xleval.exceptions import InputError
    from xleval.metrics._score_cache import ScoreCache

    cache = ScoreCache(tmp_path / "c.sqlite", "sig", (0.0, 25.0))
    cache.put([b"k" * 16], [1.0])

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(sqlite3, "connect", locked)
    for call in (cache.check, lambda: cache.get([b"k" * 16]), lambda: cache.put([b"k" * 16], [2.0])):
        with pytest.raises(InputError, match=r"c\.sqlite.*SQLite cannot open it \(database is locked\)"):
            call()


def test_closed_stdout_is_not_a_traceback(workdir):
    """Item 9: a closed standard output (`>&-`) crashed every command at import. Now a command that writes
    files runs; one that prints (corpus scores, --version, sacrebleu's JSON) says in one line that its output
    cannot be shown, as any tool reports a write error, instead of exiting 0 with the result lost."""
    for args, rc_expected in ((["score", "big_ids.tsv", "-m", "chrf", "-o", "out/closed.tsv"], 0),
                              (["score", "big_ids.tsv", "-m", "chrf", "-o", "-"], 2),
                              (["score", "big_ids.tsv", "-m", "chrf"], 2),
                              (["--version"], 2),
                              (["calibrate", "fit", "nosuch.tsv", "--score", "s", "-o", "out/x.json"], 2)):
        command = " ".join(f"'{a}'" for a in xleval_command(*args)) + " >&-"
        proc = subprocess.run(["sh", "-c", command], cwd=workdir, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=False)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == rc_expected, proc.stderr
        if rc_expected == 2:
            assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("xleval: error: "), proc.stderr


def _on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run ``xleval ARGS`` with its standard output on a pseudo-terminal; its status and what the terminal got."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(xleval_command(*args), cwd=cwd, stdout=follower, stderr=subprocess.PIPE, timeout=300,
                              check=False, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    assert proc.returncode == 0, proc.stderr
    return proc.returncode, shown.decode("utf-8", "replace")


@pytest.mark.parametrize("args", [["score", "evil_names.parquet", "-m", "chrf", "-o", "/dev/stdout"],
                                  ["leaderboard", "evil_scored.parquet", "--score", "chrf", "--format", "tsv",
                                   "-o", "/dev/stdout"]], ids=["table-writer", "tsv-emitter"])
def test_a_terminal_named_as_a_file_gets_escaped_names(args, workdir):
    """Item 2: -o /dev/stdout (or /dev/tty) on a terminal is read by a person: names are escaped as with '-',
    by the table writer and the TSV emitter alike; the same command into a pipe writes them exactly (H5-044)."""
    _, text = _on_a_terminal(args, workdir)
    assert "esc\\x1b]0;title\\x07" in text and "evil\\u202eX" in text, text
    assert "\x1b]" not in text and "\u202e" not in text


def test_there_are_at_least_40_cases_with_unique_ids():
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)


def _render() -> str:
    lines = [MARKER, "", "## Hostile inputs, round 5", "",
             "Inputs of our own invention against the model boundary, the score cache, the readers' ids, ingest, "
             "check-outputs and the option values (tests/test_hostile_round5.py runs each, and checks that no code "
             "from a model folder ran): *refused* = exit 2 with one line containing the text shown, no output, "
             "inputs unchanged; *accepted* = exit 0 with the right result.", "",
             "| id | command | hostile input | outcome |", "|---|---|---|---|"]
    for c in CASES:
        shown = f": `{c.says}`" if c.says else ""
        outcome = f"refused{shown}" if c.expect == "refused" else f"accepted{shown}"
        lines.append(f"| {c.id} | `{c.command}` | {c.attack.replace('|', '/')} | {outcome.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def test_the_catalogue_lists_every_case():
    text = DOC.read_text(encoding="utf-8")
    assert MARKER in text, "run python tests/test_hostile_round5.py"
    assert text[text.index(MARKER):] == _render(), "run python tests/test_hostile_round5.py"


if __name__ == "__main__":  # python tests/test_hostile_round5.py: rewrite the section of docs/errors.md
    text = DOC.read_text(encoding="utf-8")
    head = text[: text.index(MARKER)] if MARKER in text else text.rstrip("\n") + "\n\n"
    DOC.write_text(head + _render(), encoding="utf-8")
    print(f"wrote {len(CASES)} hostile inputs to {DOC}")
