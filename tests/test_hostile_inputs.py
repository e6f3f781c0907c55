"""Hostile files, codes and numbers: each is either read correctly or refused with one InputError
(the command-line messages are in docs/errors.md, checked by test_errors_catalogue.py). These tests
check the behaviour behind them: what is accepted is read right, what is refused leaves nothing."""
from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import LGN, calibrate_frame, prepare_frame
from xleval.calibration._persist import checksum
from xleval.cli import main
from xleval.exceptions import InputError, LanguageCodeError, ModelFileError
from xleval.io import add_language_columns, normalize_code, read_table, read_table_metadata


def _scores(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"lp": np.repeat(["en-de", "en-fr"], n), "seg_id": np.arange(2 * n),
                         "score": rng.normal(50, 10, 2 * n), "human": rng.normal(0, 1, 2 * n)})


# text tables ------------------------------------------------------------------------------------------
def test_blank_lines_at_the_end_of_a_tsv_are_not_rows(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("lp\tscore\nen-de\t1\nen-fr\t2\n\n\n")
    assert read_table(path, numeric=["score"])["score"].tolist() == [1.0, 2.0]


def test_a_blank_line_in_a_one_column_tsv_is_an_empty_value(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("text\na\n\nb\n")
    assert read_table(path)["text"].tolist() == ["a", "", "b"]


def test_a_header_starting_with_a_hash_is_a_header_and_a_comment_block_is_skipped(tmp_path):
    (tmp_path / "h.tsv").write_text("#id\tscore\n1\t2\n3\t4\n")
    assert list(read_table(tmp_path / "h.tsv").columns) == ["#id", "score"]
    (tmp_path / "c.tsv").write_text("# produced by a script\n#\nid\tscore\n1\t2\n")
    df = read_table(tmp_path / "c.tsv")
    assert list(df.columns) == ["id", "score"] and len(df) == 1


def test_line_numbers_count_the_comment_block(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("# two\n# comment lines\nlp\tscore\nen-de\t1\nen-de\t2\t3\n")
    with pytest.raises(InputError, match=r"row 2 \(line 5\)"):
        read_table(path)


def test_a_directory_is_named_as_a_directory(tmp_path):
    with pytest.raises(InputError, match="is a directory; give a file"):
        read_table(tmp_path / ".." / tmp_path.name)


def test_a_table_from_a_pipe_is_read(tmp_path):
    import os
    import threading

    fifo = tmp_path / "pipe.tsv"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text("lp\tscore\nen-de\t1\n"))
    writer.start()
    df = read_table(fifo, numeric=["score"])
    writer.join(timeout=30)
    assert df.to_dict(orient="list") == {"lp": ["en-de"], "score": [1.0]}


# JSON records -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("line, message", [
    ('{"lp": "en-de", "score": 1, "score": 2}', "key 'score' occurs more than once"),
    ('{"lp": "en-de", "meta": {"a": 1, "a": 2}, "score": 1}', "key 'a' occurs more than once"),
    ('{"lp": ["en", "de"], "score": 1}', "'lp' is an array"),
    ('{"lp": "en-de", "score": {"v": 1}}', "'score' is an object"),
    ('{"lp": "en-de", "score": ' + "9" * 5000 + "}", "cannot read the JSON"),
    ("[" * 50_000 + "]" * 50_000, "nested too deeply"),
])
def test_hostile_json_records_are_refused(tmp_path, line, message):
    path = tmp_path / "t.jsonl"
    path.write_text('{"lp": "en-de", "score": 0}\n' + line + "\n")
    with pytest.raises(InputError, match=message) as info:
        read_table(path)
    assert "line 2" in str(info.value) and "\n" not in str(info.value)


def test_parquet_duplicate_column_names_are_named(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table([pa.array(["en-de"]), pa.array([1.0]), pa.array([2.0])], names=["lp", "score", "score"]),
                   tmp_path / "t.parquet")
    with pytest.raises(InputError, match=r"duplicate column name\(s\) \['score'\]"):
        read_table(tmp_path / "t.parquet")


def test_parquet_list_columns_are_refused(tmp_path):
    pd.DataFrame({"lp": [["en", "de"]], "score": [1.0]}).to_parquet(tmp_path / "t.parquet")
    with pytest.raises(InputError, match=r"column\(s\) \['lp'\] hold lists"):
        read_table(tmp_path / "t.parquet")


# metadata ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sidecar", [b"{not json", b"[1, 2]", b'{"signatures": ["bleu"]}', b'{"signatures": {"s": 5}}',
                                     b"\xff\xfe"])
def test_a_corrupt_sidecar_is_one_line(tmp_path, sidecar):
    _scores().to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    (tmp_path / "t.tsv.signatures.json").write_bytes(sidecar)
    with pytest.raises(InputError, match=r"t.tsv.signatures.json: .*metadata") as info:
        read_table_metadata(tmp_path / "t.tsv")
    assert "\n" not in str(info.value)


def test_a_sidecar_that_is_a_directory_is_one_line(tmp_path):
    _scores().to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    (tmp_path / "t.tsv.signatures.json").mkdir()
    with pytest.raises(InputError, match="cannot read the table's metadata"):
        read_table_metadata(tmp_path / "t.tsv")


# language codes --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("code", ["qaa", "qtz", "mis", "mul", "zxx", "und", "x-klingon", "en-QM", "en-ZZ", "en-XA",
                                  "zh-Qaaa", "en-Zzzz", "qab-DE"])
def test_placeholder_codes_are_not_languages(code):
    with pytest.raises(LanguageCodeError, match=r"placeholder|not a known language"):
        normalize_code(code)


@pytest.mark.parametrize("code, key",
                         [("en-001", "en-001"), ("i-klingon", "tlh"), ("de-AT", "de-AT"), ("sr-Latn", "sr-Latn")])
def test_real_codes_near_the_placeholders_are_kept(code, key):
    assert normalize_code(code) == key


def test_an_lp_agreeing_with_src_and_tgt_is_kept_and_a_contradicting_one_refused():
    ok = add_language_columns(pd.DataFrame({"lp": ["eng-deu"], "src_lang": ["en"], "tgt_lang": ["de"]}))
    assert ok["lp"].tolist() == ["en-de"] and ok["lp_orig"].tolist() == ["eng-deu"]
    with pytest.raises(LanguageCodeError, match=r"row 2: lp 'de-en' contradicts src_lang/tgt_lang \(en-fr\)"):
        add_language_columns(pd.DataFrame({"lp": ["en-de", "de-en"], "src_lang": ["en", "en"],
                                           "tgt_lang": ["de", "fr"]}))
    with pytest.raises(LanguageCodeError, match="contradicts"):  # a free label is not a pair either
        add_language_columns(pd.DataFrame({"lp": ["wmt21"], "src_lang": ["en"], "tgt_lang": ["de"]}))


# numbers ----------------------------------------------------------------------------------------------------
def test_a_spread_that_overflows_is_refused_not_calibrated_to_zeros():
    df = pd.DataFrame({"lp": ["en-de"] * 4 + ["en-fr"] * 4, "score": [1e308, -1e308, 1e308, -1e308, 1, 2, 3, 4]})
    with pytest.raises(InputError, match="group 'en-de': the spread of its scores overflows"):
        LGN(score="score", min_count=1).fit(prepare_frame(df, ["tgt_lang"]))


@pytest.mark.parametrize("ext", ["tsv", "jsonl", "parquet"])
def test_numbers_whose_squares_overflow_are_refused_at_reading(tmp_path, ext):
    df = _scores().assign(score=lambda d: d["score"].where(d.index != 7, -1e200))
    path = tmp_path / f"t.{ext}"
    from xleval.io import write_table

    write_table(df, path)
    with pytest.raises(InputError, match=r"column 'score' row 8: -1e\+200 is beyond \+-1e\+150"):
        read_table(path, numeric=["score"])
    assert read_table(path)["score"].iloc[7] == -1e200  # a column no command computes with is read as it is


def test_large_scores_whose_squares_fit_are_calibrated():
    """Deviations are squared (Welford/Chan): up to ~1e154 they fit a float64; beyond, the refusal above."""
    df = pd.DataFrame({"lp": ["en-de"] * 4 + ["en-fr"] * 4, "score": [1e150, 2e150, 3e150, 4e150, 1, 2, 3, 4]})
    out = LGN(score="score", min_count=1).fit_transform(prepare_frame(df, ["tgt_lang"]))
    np.testing.assert_allclose(out[:4], out[4:])


# calibrators ------------------------------------------------------------------------------------------------
@pytest.fixture
def payload():
    model = LGN(score="score").fit(prepare_frame(_scores(), ["tgt_lang"]))
    return json.loads(json.dumps(model.to_dict()))


@pytest.mark.parametrize("path, value", [
    (("params", "min_count"), 10**400), (("levels",), [1, 2]), (("levels", "__by__", "mean"), [1.0]),
    (("levels", "__by__", "count"), [-1.0, -5.0]), (("levels", "__by__", "keys"), ["de", "de"]),
    (("params", "by"), None), (("levels", "__by__"), None),
])
def test_a_crafted_calibrator_with_a_valid_checksum_is_refused(payload, tmp_path, path, value):
    """The checksum catches edits, not a file built on purpose: its content is checked too."""
    crafted = copy.deepcopy(payload)
    node = crafted
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    crafted.pop("checksum", None)
    crafted["checksum"] = checksum(crafted)
    (tmp_path / "m.json").write_text(json.dumps(crafted))
    with pytest.raises(ModelFileError, match="malformed calibrator"):
        LGN.load(tmp_path / "m.json")


def test_a_calibrator_larger_than_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr("xleval.calibration._persist.MAX_CALIBRATOR_BYTES", 1000)
    LGN(score="score").fit(prepare_frame(_scores(), ["tgt_lang"])).save(tmp_path / "m.json")
    with pytest.raises(ModelFileError, match=r"bytes, more than the 0 MiB a calibrator file may have"):
        LGN.load(tmp_path / "m.json")


# output columns -------------------------------------------------------------------------------------------------
def test_calibrated_columns_never_replace_input_columns_unless_asked():
    df = _scores()
    model = LGN(score="score").fit(prepare_frame(df, ["tgt_lang"]))
    for column in ("score", "lp", "human"):
        with pytest.raises(InputError, match=rf"already has column\(s\) \['{column}'\]"):
            calibrate_frame(model, df, column=column)
    with pytest.raises(InputError, match="taken by another output column"):
        calibrate_frame(model, df, column="calibration_source")
    out = calibrate_frame(model, df, column="human", overwrite=True)
    assert not np.allclose(out["human"], df["human"]) and out["score"].equals(df["score"])


def test_overwrite_from_the_command_line(tmp_path, capsys):
    _scores().to_csv(tmp_path / "in.tsv", sep="\t", index=False)
    LGN(score="score").fit(prepare_frame(_scores(), ["tgt_lang"])).save(tmp_path / "m.json")
    base = ["calibrate", "apply", str(tmp_path / "m.json"), str(tmp_path / "in.tsv"), "--column", "human"]
    assert main([*base, "-o", str(tmp_path / "a.tsv")]) == 2
    assert main([*base, "-o", str(tmp_path / "b.tsv"), "--chunk-size", "7"]) == 2
    assert not (tmp_path / "a.tsv").exists() and not (tmp_path / "b.tsv").exists()
    assert main([*base, "-o", str(tmp_path / "c.tsv"), "--overwrite"]) == 0
    assert main([*base, "-o", str(tmp_path / "d.tsv"), "--overwrite", "--chunk-size", "7"]) == 0
    capsys.readouterr()
    assert (tmp_path / "c.tsv").read_bytes() == (tmp_path / "d.tsv").read_bytes()
    assert list(read_table(tmp_path / "c.tsv").columns) == ["lp", "seg_id", "score", "human", "calibration_source"]


# the command line -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    ("score in.tsv -m chrf,chrf -o o.tsv", "chrf given twice"),
    ("calibrate fit in.tsv --score score --by lp,lp -o m2.json", "a column is named twice"),
    ("calibrate apply m.json in.tsv -o o.tsv --interval 1.5", "'--interval': '1.5' is not in (0, 1)"),
    ("calibrate apply m.json in.tsv -o o.tsv --interval 95",
     "'95' is not in (0, 1): give a fraction, e.g. 0.95 for 95%"),
    ("calibrate fit in.tsv --score score --workers 0 -o m2.json", "'--workers': 0 is not in the range"),
    ("calibrate fit in.tsv --score score --target 80,-1 -o m2.json", "STD positive"),
    ("fairness min-size --effect 0.2 --power 1", "'--power': '1' is not in (0, 1)"),
    ("fairness min-size --effect inf", "'--effect': 'inf' is not a finite number"),
    ("fairness min-size --n 0", "'--n': 0 is not in the range x>=1"),
    ("diagnose in.tsv --score score --seed -3", "'--seed': -3 is not in the range x>=0"),
    ("fairness min-size --effect 1e-308", "effect 1e-308 is too small"),
    ("fairness min-size --effect 1e308 --kind continuous", "not a plausible Cohen's d"),
])
def test_meaningless_options_are_one_line(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _scores().to_csv("in.tsv", sep="\t", index=False)
    LGN(score="score").fit(prepare_frame(_scores(), ["tgt_lang"])).save("m.json")
    capsys.readouterr()
    assert main(args.split()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "o.tsv").exists() and not (tmp_path / "m2.json").exists()


def test_numpy_scalars_in_messages_read_as_numbers():
    assert str(InputError(f"got {np.float64(-5.0)!r} and {np.int64(3)!r}, {np.str_('x')!r}, {np.True_!r}")) == \
        "got -5.0 and 3, 'x', True"


@pytest.mark.parametrize("args, message", [
    ("diagnose in.tsv --score score --human score", "--score, --human and --calibrated name the same column"),
    ("demo --out in.tsv", "--out in.tsv: is a file, not a folder"),
    ("score -i in.tsv -r in.tsv -l english-german -m chrf", "-l/--lp: language pair 'english-german'"),
    ("calibrate apply m.json lone_cr.csv -o o.tsv --chunk-size 2",
     "line 2: a carriage return (CR) without a line feed"),
    ("calibrate apply m.json pipe.tsv -o o.tsv --chunk-size 2", "is a FIFO (named pipe), which can be read once"),
    ("intrinsic ingest samples_dup.jsonl --lang en -o o.tsv", "key 'doc_id' occurs more than once"),
])
def test_adversarial_pass_findings_are_one_line(args, message, tmp_path, capsys, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)
    _scores().to_csv("in.tsv", sep="\t", index=False)
    LGN(score="score").fit(prepare_frame(_scores(), ["tgt_lang"])).save("m.json")
    (tmp_path / "lone_cr.csv").write_bytes(b"lp,score\nen-de,1\ren-de,2\nen-fr,3\n")
    os.mkfifo(tmp_path / "pipe.tsv")
    (tmp_path / "samples_dup.jsonl").write_text('{"doc_id": 1, "doc_id": 2, "bits_per_byte": [-3.0, 10]}\n')
    capsys.readouterr()
    assert main(args.split()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "o.tsv").exists()


# sacrebleu-style entry points: several systems, paired tests, .gz, standard input, ingest ------------------
REF = ["the cat sat on the mat", "hello world", "The quick brown fox jumps .", "a b c d e f g"]
HYPS = [["the cat sat", "hello", "The quick brown fox jumped .", "a b c d"],
        ["the cat sat on a mat", "hello there world", "the quick brown fox jumps.", "a b c d e f"],
        ["a cat sat on the mat", "hello world", "The fast brown fox jumps .", "a b x d e f g"]]
#: system names that are markup, a link, an ANSI escape, a bidi override and a newline
HOSTILE_NAMES = ["[bold red]B", "[link=https://evil.example/x]ok[/link]", "\x1b[31mred", "r\u202etl", "two\nlines"]
#: the same as file names (which cannot hold '/')
FILE_NAMES = ["[bold red]B", "\x1b[31mred", "[link=evil.example]ok", "r\u202etl", "two\nlines"]
RAW = ("\x1b", "\u202e", "two\nlines")


def _digests(root) -> dict[str, str]:
    import hashlib

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def _lines(path, lines) -> str:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path.name)


def _run(args, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture
def systems(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _lines(tmp_path / "ref.txt", REF)
    return [_lines(tmp_path / f"{name}.txt", hyps) for name, hyps in zip(FILE_NAMES, HYPS * 2, strict=False)]


def test_several_systems_with_hostile_file_names_are_shown_as_they_are(systems, capsys):
    rc, out, err = _run(["score", "-i", *systems[:3], "-r", "ref.txt", "-m", "bleu", "chrf", "--paired-bs",
                         "--paired-bs-n", "50", "-f", "text"], capsys)  # plain files: sacrebleu's default is JSON
    assert rc == 0, err
    text = out + err
    assert not [raw for raw in RAW if raw in text], text
    assert "[bold red]B.txt" in text and "[link=evil.example]ok.txt" in text
    assert "\\x1b[31mred.txt" in text and "Baseline: [bold red]B.txt" in text  # the baseline, named literally
    assert "compared to Baseline: [bold red]B.txt." in out  # sacrebleu's explanation names it too, as it is


def test_paired_json_keeps_the_hostile_names_exactly(systems, capsys):
    rc, out, err = _run(["score", "-i", *systems[2:], "-r", "ref.txt", "-m", "bleu", "--paired-ar", "--paired-ar-n",
                         "50", "-f", "json"], capsys)
    assert rc == 0, err
    assert "\x1b" not in out and "\u202e" not in out
    # sacrebleu's JSON: one object per system, the baseline's name prefixed as in its table
    assert [s["system"] for s in json.loads(out)] == [f"Baseline: {systems[2]}", *systems[3:]]


@pytest.mark.parametrize("target", [1, 2, "ref"])
def test_several_systems_never_write_onto_one_of_them(systems, target, capsys, tmp_path):
    output = "ref.txt" if target == "ref" else systems[target]
    before = _digests(tmp_path)
    rc, _, err = _run(["score", "-i", *systems[:3], "-r", "ref.txt", "-m", "bleu", "-o", output], capsys)
    assert rc == 2 and err.count("\n") == 1 and "would destroy it" in err, err
    assert _digests(tmp_path) == before


def _hostile_table(path) -> None:
    rows = [{"lp": lp, "system": name, "seg_id": i + 1, "hypothesis": hyps[i], "reference": REF[i]}
            for lp in ("en-de",
                       "de-en") for name, hyps in zip(HOSTILE_NAMES, HYPS * 2, strict=False) for i in range(len(REF))]
    pd.DataFrame(rows).to_json(path, orient="records", lines=True, force_ascii=False)


def test_paired_tests_of_a_table_show_markup_like_system_names_literally(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _hostile_table(tmp_path / "t.jsonl")
    rc, out, err = _run(["score", "t.jsonl", "-m", "bleu", "--paired-bs", "--paired-bs-n", "50",
                         "--baseline", HOSTILE_NAMES[1]], capsys)
    assert rc == 0, err
    text = out + err
    assert not [raw for raw in RAW if raw in text], text
    assert "Baseline: [link=https://evil.example/x]ok[/link]" in text and "[bold red]B" in text
    assert "two\\x0alines" in text and "r\\u202etl" in text
    rc, out, err = _run(["score", "t.jsonl", "-m", "bleu", "--paired-bs", "--paired-bs-n", "50", "-f", "json"], capsys)
    assert rc == 0 and [s["system"] for s in json.loads(out)[0]["systems"]] == HOSTILE_NAMES


def test_a_missing_hypothesis_in_a_paired_test_is_refused_not_read_as_nan(tmp_path, monkeypatch, capsys):
    from xleval.metrics import compare_systems_frame

    monkeypatch.chdir(tmp_path)
    _hostile_table(tmp_path / "t.jsonl")
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[5])
    record["hypothesis"] = None
    lines[5] = json.dumps(record)
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc, _, err = _run(["score", "t.jsonl", "-m", "bleu", "--paired-bs", "--paired-bs-n", "50"], capsys)
    assert rc == 2 and "column 'hypothesis' row 6: missing text" in err, err
    with pytest.raises(InputError, match="row 6: missing text"):
        compare_systems_frame(read_table(tmp_path / "t.jsonl"), ["bleu"])


def _gz_table(tmp_path) -> pd.DataFrame:
    import gzip

    df = pd.DataFrame({"lp": ["en-de", "en-de", "de-en"], "system": "s", "seg_id": [1, 2, 3],
                       "hypothesis": HYPS[0][:3], "reference": REF[:3]})
    df.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    (tmp_path / "t.tsv.gz").write_bytes(gzip.compress((tmp_path / "t.tsv").read_bytes()))
    return df


@pytest.mark.parametrize("args", ["score t.tsv.gz -m chrf -o t.tsv.gz",
                                  "score t.tsv.gz -m chrf -o t.tsv.gz --chunk-size 2",
                                  "score -i h.txt.gz -r ref.txt -m chrf -o h.txt.gz",
                                  "score -i h.txt.gz -r ref.txt -m chrf -o alias.tsv.gz"])
def test_a_gz_output_onto_its_own_input_is_refused(args, tmp_path, monkeypatch, capsys):
    import gzip
    import os

    monkeypatch.chdir(tmp_path)
    _gz_table(tmp_path)
    _lines(tmp_path / "ref.txt", REF)
    (tmp_path / "h.txt.gz").write_bytes(gzip.compress(("\n".join(HYPS[0]) + "\n").encode()))
    os.symlink("h.txt.gz", tmp_path / "alias.tsv.gz")
    before = _digests(tmp_path)
    rc, _, err = _run(args.split(), capsys)
    assert rc == 2 and err.count("\n") == 1 and "would destroy it" in err, err
    assert _digests(tmp_path) == before and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("streamed", [False, True])
def test_a_gz_output_is_compressed_reproducible_and_reads_back_as_the_plain_one(streamed, tmp_path, monkeypatch,
                                                                                capsys):
    import gzip

    monkeypatch.chdir(tmp_path)
    _gz_table(tmp_path)
    extra = ["--chunk-size", "2", "--tokenize", "13a"] if streamed else ["--tokenize", "13a"]
    for out in ("o.tsv", "o.tsv.gz", "again.tsv.gz", "o.parquet.gz"):
        rc, _, err = _run(["score", "t.tsv.gz", "-m", "bleu", "chrf", "-o", out, *extra], capsys)
        assert rc == 0, err
    assert (tmp_path / "o.tsv.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress((tmp_path / "o.tsv.gz").read_bytes()) == (tmp_path / "o.tsv").read_bytes()
    assert (tmp_path / "o.tsv.gz").read_bytes() == (tmp_path / "again.tsv.gz").read_bytes()  # no time, no name inside
    plain = read_table(tmp_path / "o.tsv")
    pd.testing.assert_frame_equal(read_table(tmp_path / "o.parquet.gz"), plain, check_dtype=False)
    assert read_table_metadata(tmp_path / "o.tsv.gz") == read_table_metadata(tmp_path / "o.tsv")
    tsv = read_table_metadata(tmp_path / "o.tsv")
    assert read_table_metadata(tmp_path / "o.parquet.gz")["signatures"] == tsv["signatures"]


@pytest.mark.parametrize("name, data, args, message", [
    ("t.tsv.gz", b"lp\thypothesis\n", "score t.tsv.gz -m chrf", "t.tsv.gz: not a valid gzip file"),
    ("t.tsv.gz", None, "score t.tsv.gz -m chrf -o o.tsv --chunk-size 2", "t.tsv.gz: not a valid gzip file"),
    ("h.txt.gz", b"\x1f\x8b\x08\x00garbage", "score -i h.txt.gz -r ref.txt -m chrf", "h.txt.gz: not a valid gzip file"),
    ("t.parquet.gz", "parquet", "score t.parquet.gz -m chrf --tokenize 13a -o o.tsv --chunk-size 2",
     "a gzip-compressed Parquet file cannot be streamed"),
    ("ref2.txt", b"x\n", "score -i - -r - -m chrf", "standard input ('-') can be read once"),
])
def test_hostile_compressed_inputs_are_one_line(name, data, args, message, tmp_path, monkeypatch, capsys):
    import gzip

    monkeypatch.chdir(tmp_path)
    _lines(tmp_path / "ref.txt", REF)
    if data is None:  # a gzip stream cut off in the middle: found while streaming
        packed = gzip.compress(("lp\tsystem\thypothesis\treference\n" + "en-de\ts\ta b\ta b c\n" * 5000).encode())
        data = packed[: len(packed) // 2]
    elif data == "parquet":
        import io

        buffer = io.BytesIO()
        pd.DataFrame({"hypothesis": ["a"], "reference": ["a"]}).to_parquet(buffer)
        data = gzip.compress(buffer.getvalue())
    (tmp_path / name).write_bytes(data)
    rc, _, err = _run(args.split(), capsys)
    assert rc == 2 and err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "o.tsv").exists() and not list(tmp_path.glob(".*.tmp"))


def test_standard_input_redirected_from_the_output_is_refused(tmp_path):
    import subprocess
    import sys

    _lines(tmp_path / "ref.txt", REF)
    _lines(tmp_path / "hyp.tsv", HYPS[0])  # a plain hypothesis file whose name is also a table's
    before = _digests(tmp_path)
    proc = subprocess.run(f"{sys.executable} -m xleval score -i - -r ref.txt -m chrf -o hyp.tsv < hyp.tsv", shell=True,
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2 and "is the same file as the input <stdin>" in proc.stderr, proc.stderr
    assert _digests(tmp_path) == before


def _wmt(root):
    txt = root / "wmt" / "txt"
    for sub in ("sources", "references", "system-outputs"):
        (txt / sub).mkdir(parents=True)
    _lines(txt / "sources" / "newstest2021.de-en.src.de", ["Hallo", "Welt"])
    _lines(txt / "references" / "newstest2021.de-en.ref.A.en", ["Hello", "World"])
    _lines(txt / "system-outputs" / "newstest2021.de-en.hyp.[bold]x.en", ["Hello", "world"])
    return root / "wmt"


def _mtme(root):
    d = root / "mtme" / "wmt21.news"
    for sub in ("sources", "references", "system-outputs/en-de", "human-scores"):
        (d / sub).mkdir(parents=True)
    _lines(d / "sources" / "en-de.txt", ["a", "b"])
    _lines(d / "references" / "en-de.refA.txt", ["A1", "A2"])
    _lines(d / "system-outputs" / "en-de" / "sys1.txt", ["s1", "s2"])
    return root / "mtme"


@pytest.mark.parametrize("args", [
    "ingest mtme mtme --test-set wmt21.news -l en-de -o mtme/wmt21.news/system-outputs/en-de/sys1.txt",
    "ingest mtme mtme --test-set wmt21.news -l en-de -o mtme/wmt21.news/references/en-de.refA.txt",
    "ingest mtme mtme --test-set wmt21.news -l en-de -o alias_mtme.tsv",
    "ingest wmt wmt -o alias_wmt.tsv",
    "ingest wmt wmt/txt -o hard_wmt.tsv",
])
def test_ingest_never_writes_onto_a_file_it_reads(args, tmp_path, monkeypatch, capsys):
    import os

    monkeypatch.chdir(tmp_path)
    wmt, mtme = _wmt(tmp_path), _mtme(tmp_path)
    os.symlink(mtme / "wmt21.news" / "sources" / "en-de.txt", tmp_path / "alias_mtme.tsv")
    os.symlink(wmt / "txt" / "system-outputs" / "newstest2021.de-en.hyp.[bold]x.en", tmp_path / "alias_wmt.tsv")
    os.link(wmt / "txt" / "references" / "newstest2021.de-en.ref.A.en", tmp_path / "hard_wmt.tsv")
    before = _digests(tmp_path)
    rc, _, err = _run(args.split(), capsys)
    assert rc == 2 and err.count("\n") == 1 and "would destroy it" in err, err
    assert _digests(tmp_path) == before and not list(tmp_path.rglob(".*.tmp"))


def test_ingest_keeps_a_markup_like_system_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _wmt(tmp_path)
    rc, _, err = _run(["ingest", "wmt", "wmt", "-o", "o.jsonl"], capsys)
    assert rc == 0, err
    assert read_table(tmp_path / "o.jsonl")["system"].tolist() == ["[bold]x", "[bold]x"]
