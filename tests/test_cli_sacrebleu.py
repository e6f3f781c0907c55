"""`xleval score` as a drop-in for the `sacrebleu` command, run side by side on the same files; and
`xleval ingest`."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

SACREBLEU = shutil.which("sacrebleu") or str(Path(sys.executable).with_name("sacrebleu"))


def _xleval(*args, stdin=None, env=None):
    return subprocess.run([sys.executable, "-c", "import sys; from xleval.cli import main; sys.exit(main())", *args],
                          capture_output=True, text=True, input=stdin, env=env, check=False)


def _sacrebleu(*args):
    res = subprocess.run([SACREBLEU, *args], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    return res.stdout


def _files(tmp_path, **texts):
    out = {}
    for name, lines in texts.items():
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out[name] = str(path)
    return out


REF = ["the cat sat on the mat", "hello world", "The quick brown fox jumps .", "a b c d e f g"]
SYSTEMS = {
    "a": ["the cat sat", "hello", "The quick brown fox jumped .", "a b c d"],
    "b": ["the cat sat on a mat", "hello there world", "the quick brown fox jumps.", "a b c d e f"],
    "c": ["a cat sat on the mat", "hello world", "The fast brown fox jumps .", "a b x d e f g"],
}


@pytest.mark.parametrize("hyp, ref", [(["the cat sat", "hello"], ["the cat sat on the mat", "hello world"]),
                                      (["the cat"], ["the cat sat on the mat"]), ([""], ["x y"]),
                                      (["Hello , World !", ""], ["Hello, world!", "nothing"])])
def test_score_only_equals_sacrebleu_b(tmp_path, hyp, ref):
    f = _files(tmp_path, h=hyp, r=ref)
    for metric in ("bleu", "chrf", "ter"):
        ours = _xleval("score", "-i", f["h"], "-r", f["r"], "-l", "de-en", "-m", metric, "-b", "-w", "6")
        assert ours.returncode == 0, ours.stderr
        assert float(ours.stdout) == pytest.approx(float(_sacrebleu(f["r"], "-i", f["h"], "-m", metric, "-b", "-w",
                                                                    "6")),
                                                   abs=1e-6)


def test_three_systems_equal_sacrebleu_per_system(tmp_path):
    # plain files print sacrebleu's JSON: one object per system, the scores as printed with -w
    f = _files(tmp_path, r=REF, **SYSTEMS)
    ours = _xleval("score", f["r"], "-i", f["a"], f["b"], f["c"], "-m", "bleu", "chrf", "-w", "6", "-f", "json")
    assert ours.returncode == 0, ours.stderr
    got = {s["system"]: s for s in json.loads(ours.stdout)}
    theirs = json.loads(_sacrebleu(f["r"], "-i", f["a"], f["b"], f["c"], "-m", "bleu", "chrf", "-w", "6", "-f", "json"))
    for row in theirs:
        assert float(got[row["system"]]["BLEU"]) == pytest.approx(float(row["BLEU"]), abs=1e-6)
        assert float(got[row["system"]]["chrF2"]) == pytest.approx(float(row["chrF2"]), abs=1e-6)
    # -i repeated, -r after: the same
    again = _xleval("score", "-i", f["a"], "-i", f["b"], "-i", f["c"], "-r", f["r"], "-m", "bleu,chrf", "-w", "6",
                    "-f", "json")
    assert json.loads(again.stdout) == json.loads(ours.stdout)


@pytest.mark.parametrize("flag", ["--paired-bs", "--paired-ar"])
def test_paired_p_values_equal_sacrebleus(tmp_path, flag):
    f = _files(tmp_path, r=REF * 5, **{k: v * 5 for k, v in SYSTEMS.items()})
    ours = _xleval("score", f["r"], "-i", f["a"], f["b"], f["c"], "-m", "bleu", "chrf", flag, "-f", "json")
    assert ours.returncode == 0, ours.stderr
    data = json.loads(ours.stdout)  # valid JSON (sacrebleu's own crashes here on a float32)
    assert data[0]["system"] == f"Baseline: {f['a']}" and data[0]["BLEU"]["p_value"] is None
    got = {s["system"]: s for s in data}
    text = _sacrebleu(f["r"], "-i", f["a"], f["b"], f["c"], "-m", "bleu", "chrf", flag, "-f", "text", "-nc")
    theirs = [float(p) for p in re.findall(r"p = ([0-9.]+)", text)]
    assert len(theirs) == 4  # (b, c) x (BLEU, chrF)
    ours_p = [got[f[s]][m]["p_value"] for s in ("b", "c") for m in ("BLEU", "chrF2")]
    assert ours_p == pytest.approx(theirs, abs=1e-4)


def test_confidence_single_system(tmp_path):
    f = _files(tmp_path, r=REF * 5, a=SYSTEMS["a"] * 5)
    ours = json.loads(_xleval("score", "-i", f["a"], "-r", f["r"], "-m", "bleu", "--confidence", "-w", "4").stdout)
    theirs = json.loads(_sacrebleu(f["r"], "-i", f["a"], "-m", "bleu", "--confidence", "-w", "4"))
    assert ours["confidence_mean"] == theirs["confidence_mean"] and ours["confidence_var"] == theirs["confidence_var"]
    assert ours["signature"].startswith("nrefs:1|bs:1000|seed:12345|")


def test_lowercase_flag_is_bleu_only_as_in_sacrebleu(tmp_path):
    f = _files(tmp_path, h=["THE CAT SAT", "Hello"], r=["the cat sat", "hello"])
    for metric in ("bleu", "chrf"):
        ours = float(_xleval("score", "-i", f["h"], "-r", f["r"], "-m", metric, "-lc", "-b", "-w", "6").stdout)
        assert ours == pytest.approx(float(_sacrebleu(f["r"], "-i", f["h"], "-m", metric, "-lc", "-b", "-w", "6")),
                                     abs=1e-6)
    ours = float(_xleval("score", "-i", f["h"], "-r", f["r"], "-m", "chrf", "--chrf-lowercase", "-b", "-w", "6").stdout)
    assert ours == pytest.approx(float(_sacrebleu(f["r"], "-i", f["h"], "-m", "chrf", "--chrf-lowercase", "-b", "-w",
                                                  "6")))


def test_stdin_and_gz_plain_files(tmp_path):
    import gzip

    f = _files(tmp_path, r=REF)
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(("\n".join(SYSTEMS["a"]) + "\n").encode()))
    direct = _xleval("score", "-i", str(tmp_path / "a.txt.gz"), "-r", f["r"], "-m", "bleu", "-b", "-w", "6").stdout
    piped = _xleval("score", "-i", "-", "-r", f["r"], "-m", "bleu", "-b", "-w", "6",
                    stdin="\n".join(SYSTEMS["a"]) + "\n").stdout
    assert direct == piped and float(direct) == pytest.approx(float(_sacrebleu(f["r"], "-i", str(tmp_path / "a.txt.gz"),
                                                                             "-m", "bleu", "-b", "-w", "6")), abs=1e-6)


def test_table_paired_bs_per_language_pair(tmp_path):
    rows = []
    for lp in ("de-en", "en-zh"):
        for system, hyps in SYSTEMS.items():
            for i, (h, r) in enumerate(zip(hyps * 3, REF * 3, strict=True)):
                rows.append({"lp": lp, "system": system, "seg_id": i + 1, "hypothesis": h, "reference": r})
    path = tmp_path / "t.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    res = _xleval("score", str(path), "-m", "bleu", "--paired-bs", "--baseline", "b", "-f", "json")
    assert res.returncode == 0, res.stderr
    groups = {g["group"]: g for g in json.loads(res.stdout)}
    assert set(groups) == {"de-en", "en-zh"} and groups["de-en"]["baseline"] == "b"
    assert "tok:zh" in groups["en-zh"]["signatures"]["bleu"] and "tok:13a" in groups["de-en"]["signatures"]["bleu"]
    assert [s["system"] for s in groups["de-en"]["systems"]] == ["b", "a", "c"]


def test_user_errors_are_one_line(tmp_path):
    f = _files(tmp_path, r=REF, a=SYSTEMS["a"], short=["x"])
    for args, text in ((("-i", f["a"], "-r", f["r"], "--paired-bs"), "two or more systems"),
                       (("-i", f["a"], f["short"], "-r", f["r"]), "line counts"),
                       (("-i", f["a"]), "need references"),
                       (("-i", f["a"], "-r", f["r"], "--paired-bs", "--paired-ar"), "choose one")):
        res = _xleval("score", *args)
        assert res.returncode == 2 and text in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_seed_from_sacrebleus_environment_variable(tmp_path):
    f = _files(tmp_path, r=REF * 5, **{k: v * 5 for k, v in SYSTEMS.items() if k != "c"})
    env = {**os.environ, "SACREBLEU_SEED": "7"}
    res = _xleval("score", f["r"], "-i", f["a"], f["b"], "-m", "bleu", "--paired-bs", "-f", "text", env=env).stdout
    assert "|seed:7|" in res


def test_ingest_wmt_folder_then_score(tmp_path):
    txt = tmp_path / "wmt" / "txt"
    for sub in ("sources", "references", "system-outputs"):
        (txt / sub).mkdir(parents=True)
    (txt / "sources" / "newstest2021.de-en.src.de").write_text("x\ny\n", encoding="utf-8")
    (txt / "references" / "newstest2021.de-en.ref.A.en").write_text("\n".join(REF[:2]) + "\n", encoding="utf-8")
    for name in ("a", "b"):
        (txt / "system-outputs" / f"newstest2021.de-en.hyp.{name}.en").write_text("\n".join(SYSTEMS[name][:2]) + "\n",
                                                                                  encoding="utf-8")
    out = tmp_path / "t.parquet"
    res = _xleval("ingest", "wmt", str(tmp_path / "wmt"), "-o", str(out), "--format", "json")
    assert res.returncode == 0, res.stderr and json.loads(res.stdout)["rows"] == 4
    scored = _xleval("score", str(out), "-m", "bleu", "-f", "json")
    corpus = {r["system"]: r["bleu"] for r in json.loads(scored.stdout)["corpus"]}
    import sacrebleu

    assert corpus["a"] == sacrebleu.corpus_bleu(SYSTEMS["a"][:2], [REF[:2]]).score


def test_metric_list_before_the_table_still_reads_the_table(tmp_path):
    path = tmp_path / "t.tsv"
    pd.DataFrame({"hypothesis": ["the cat"], "reference": ["the cat sat"]}).to_csv(path, sep="\t", index=False)
    for args in (("-m", "bleu", "chrf", str(path)), (str(path), "-m", "bleu", "chrf"), ("-m", "bleu,chrf", str(path))):
        res = _xleval("score", *args, "-f", "json")
        assert res.returncode == 0, res.stderr
        assert set(json.loads(res.stdout)["corpus"][0]) >= {"bleu", "chrf"}
