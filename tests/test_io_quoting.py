"""TSV quotes are read as their writer meant them (issue 23, item 1).

A TSV written with CSV quoting (pandas' ``to_csv(sep="\\t")``, ``csv.writer``) gives back the
writer's strings; a literal one (WMT, mt-metrics-eval plain text) keeps its quotes; a file that reads
both ways with nothing to tell is refused, naming ``quoting=``; xleval's own TSV reads back unchanged
through pandas and through xleval, whole and streamed.
"""
from __future__ import annotations

import csv
import os
import tempfile
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import read_table, write_table
from xleval.scale._readers import iter_batches
from xleval.scale._writers import open_writer

#: texts on one line: a quote inside, doubled, leading, trailing, wholly around, unicode, empty, 'NA'
LINE_TEXTS = ['He said "hi".', '"Yes," he said.', '""', 'a""b', '"wrapped"', 'ends with "', '" starts',
              'ünïcode 😀 «ß» "q"', "", "plain", "NA", "'single'"]
#: texts only CSV quoting can hold in a TSV
SPLIT_TEXTS = ["tab\there", "line\nbreak", '"tab\tin quotes"']

CHUNKS = (1, 2, 5, 1000)


def frame(texts):
    return pd.DataFrame({"system": [f"s{i % 2}" for i in range(len(texts))], "hypothesis": texts,
                         "reference": [f"ref {i}" for i in range(len(texts))]})


def read_both(path, **options):
    """The hypotheses read whole, and streamed with each chunk size (all must agree)."""
    whole = read_table(path, **options)["hypothesis"].tolist()
    for size in CHUNKS:
        streamed = pd.concat([b.frame for b in iter_batches(path, size, **options)], ignore_index=True)
        assert streamed["hypothesis"].tolist() == whole, size
    return whole


# files written with CSV quoting ------------------------------------------------------------------
@pytest.mark.parametrize("texts", [LINE_TEXTS, LINE_TEXTS + SPLIT_TEXTS], ids=["lines", "with-tabs-newlines"])
def test_pandas_written_tsv_reads_as_written(tmp_path, texts):
    path = tmp_path / "outputs.tsv"
    frame(texts).to_csv(path, sep="\t", index=False)
    assert read_both(path) == texts


@pytest.mark.parametrize("texts", [LINE_TEXTS, LINE_TEXTS + SPLIT_TEXTS], ids=["lines", "with-tabs-newlines"])
def test_csv_writer_quote_minimal_reads_as_written(tmp_path, texts):
    path = tmp_path / "outputs.tsv"
    df = frame(texts)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_MINIMAL)  # CRLF line ends, as csv writes
        writer.writerow(df.columns)
        writer.writerows(df.itertuples(index=False))
    assert read_both(path) == texts


def test_gzip_and_comment_block_keep_the_rule(tmp_path):
    import gzip

    path = tmp_path / "outputs.tsv.gz"
    body = frame(LINE_TEXTS).to_csv(sep="\t", index=False)
    path.write_bytes(gzip.compress(("# written by pandas\n" + body).encode()))
    assert read_both(path) == LINE_TEXTS


# files whose quotes are text ------------------------------------------------------------------------
def test_literal_wmt_style_lines_keep_their_quotes(tmp_path):
    path = tmp_path / "wmt.tsv"
    df = frame(LINE_TEXTS)
    path.write_text("\t".join(df.columns) + "\n"
                    + "".join("\t".join(row) + "\n" for row in df.itertuples(index=False)), encoding="utf-8")
    assert read_both(path) == LINE_TEXTS


def test_csv_writer_quote_none_reads_literally(tmp_path):
    path = tmp_path / "none.tsv"
    df = frame(LINE_TEXTS)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_NONE, quotechar=None, escapechar="\\")
        writer.writerow(df.columns)
        writer.writerows(df.itertuples(index=False))
    assert read_both(path) == LINE_TEXTS


def test_mixed_file_keeps_quotes_and_says_so(tmp_path):
    """Texts wholly in quotes next to a quote no CSV writer leaves bare: the quotes are text, and since
    a CSV reading would also parse the file, the choice is said with the way to force the other."""
    path = tmp_path / "mixed.tsv"
    path.write_text('system\thypothesis\ns\t"wrapped"\ns\tHe said "hi".\n', encoding="utf-8")
    with pytest.warns(DataQualityWarning, match=r'mixed\.tsv: quotes read as text.*line 3.*quoting="csv"'):
        assert read_table(path)["hypothesis"].tolist() == ['"wrapped"', 'He said "hi".']
    assert read_table(path, quoting="csv")["hypothesis"].tolist() == ["wrapped", 'He said "hi".']


# the ambiguous file, and forcing a rule -------------------------------------------------------------
def test_ambiguous_file_is_refused_naming_the_option(tmp_path):
    path = tmp_path / "amb.tsv"
    path.write_text('system\thypothesis\ns\t"Yes."\ns\tno quotes\n', encoding="utf-8")
    for read in (lambda: read_table(path), lambda: list(iter_batches(path, 1))):
        with pytest.raises(InputError, match=r'amb\.tsv: cannot tell.*line 2.*quoting="csv".*quoting="none"') as exc:
            read()
        assert exc.value.argument == "quoting" and "\n" not in str(exc.value)
    assert read_both(path, quoting="none") == ['"Yes."', "no quotes"]
    assert read_both(path, quoting="csv") == ["Yes.", "no quotes"]


def test_forced_none_keeps_pandas_quotes(tmp_path):
    path = tmp_path / "p.tsv"
    frame(['a "b"']).to_csv(path, sep="\t", index=False)
    assert read_both(path, quoting="none") == ['"a ""b"""']


def test_unknown_rule_is_refused(tmp_path):
    path = tmp_path / "p.tsv"
    frame(["x"]).to_csv(path, sep="\t", index=False)
    with pytest.raises(InputError, match=r"quoting='rfc'.*'auto', 'csv', 'none'"):
        read_table(path, quoting="rfc")


def test_a_wrong_row_is_still_a_width_error(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text('system\thypothesis\ns\t"a"\textra\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"row 1 .* has 3 tab-separated fields, the header has 2"):
        read_table(path)


# what xleval writes ----------------------------------------------------------------------------------
def test_xleval_tsv_reads_back_through_pandas_and_xleval(tmp_path):
    df = frame(LINE_TEXTS)
    path = tmp_path / "out.tsv"
    write_table(df, path)
    back = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    assert back.to_dict("list") == df.to_dict("list")
    assert read_both(path) == LINE_TEXTS
    assert path.read_text(encoding="utf-8") == df.to_csv(sep="\t", index=False, lineterminator="\n")


def test_streamed_writer_writes_the_same_bytes(tmp_path):
    df = frame(LINE_TEXTS)
    write_table(df, tmp_path / "whole.tsv")
    with open_writer(tmp_path / "streamed.tsv") as writer:
        for start in range(0, len(df), 5):
            writer.write(df.iloc[start:start + 5])
    assert (tmp_path / "streamed.tsv").read_bytes() == (tmp_path / "whole.tsv").read_bytes()


def test_text_without_quotes_is_written_as_before(tmp_path):
    """No quote, no quoting: a plain table's bytes are what a literal reader (cut, awk) expects."""
    path = tmp_path / "plain.tsv"
    write_table(frame(["a b", "c,d", "e;f"]), path)
    assert path.read_text(encoding="utf-8") == ("system\thypothesis\treference\ns0\ta b\tref 0\ns1\tc,d\tref 1\n"
                                                "s0\te;f\tref 2\n")


# the command line --------------------------------------------------------------------------------------
def test_cli_quoting_option_settles_an_ambiguous_file(tmp_path, cli):
    path = tmp_path / "amb.tsv"
    path.write_text('system\thypothesis\treference\ns\t"Yes."\tYes.\n', encoding="utf-8")
    rc, _, err = cli("score", path, "--metric", "chrf", "-o", tmp_path / "o.tsv")
    assert rc == 2 and "--quoting" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert cli("score", path, "--metric", "chrf", "--quoting", "csv", "-o", tmp_path / "csv.tsv").exit_code == 0
    assert cli("score", path, "--metric", "chrf", "--quoting", "none", "-o", tmp_path / "none.tsv").exit_code == 0
    as_csv = pd.read_csv(tmp_path / "csv.tsv", sep="\t", dtype=str, keep_default_na=False)
    as_text = pd.read_csv(tmp_path / "none.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert as_csv["hypothesis"].tolist() == ["Yes."] and float(as_csv["chrf"][0]) == 100
    assert as_text["hypothesis"].tolist() == ['"Yes."'] and float(as_text["chrf"][0]) < 100


def test_streamed_cli_says_the_rule_once_and_scores_the_true_strings(tmp_path, cli):
    path = tmp_path / "outputs.tsv"
    frame(LINE_TEXTS).to_csv(path, sep="\t", index=False)
    whole = cli("score", path, "--metric", "chrf", "-o", tmp_path / "whole.parquet")
    streamed = cli("score", path, "--metric", "chrf", "--chunk-size", "2", "-o", tmp_path / "streamed.parquet")
    assert whole.exit_code == streamed.exit_code == 0, streamed.stderr
    assert streamed.stderr.count("xleval: note: ") == 1 and "--quoting none" in streamed.stderr
    for name in ("whole", "streamed"):
        assert pd.read_parquet(tmp_path / f"{name}.parquet")["hypothesis"].tolist() == LINE_TEXTS


def test_sentence_chrf_of_a_pandas_tsv_equals_sacrebleu_on_the_true_strings(tmp_path, cli, wmt21_segments):
    """The issue's check, on real WMT21 text with quotes (wholly quoted, leading, inside)."""
    import sacrebleu

    quoted = wmt21_segments[wmt21_segments["hypothesis"].str.contains('"', regex=False)]
    rows = pd.concat([quoted[quoted["hypothesis"].str.match(r'^".*"$')].head(8),
                      quoted[quoted["hypothesis"].str.startswith('"')].head(8),
                      quoted[~quoted["hypothesis"].str.startswith('"')].head(8)])
    table = rows[["lp", "system", "seg_id", "source", "reference", "hypothesis"]].reset_index(drop=True)
    path = tmp_path / "outputs.tsv"
    table.to_csv(path, sep="\t", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a file that says what it is needs no warning in the library
        assert read_table(path)["hypothesis"].tolist() == table["hypothesis"].tolist()
    result = cli("score", path, "--metric", "chrf", "-o", tmp_path / "scored.tsv")
    assert result.exit_code == 0, result.stderr
    note = result.stderr
    assert "xleval: note: " in note and "read with CSV quoting" in note and "--quoting none" in note
    scored = pd.read_csv(tmp_path / "scored.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert scored["hypothesis"].tolist() == table["hypothesis"].tolist()
    expected = [sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(table["hypothesis"], table["reference"],
                                                                      strict=True)]
    assert scored["chrf"].astype(float).tolist() == pytest.approx(expected, abs=1e-9)


def test_calibrate_select_output_reads_back_through_pandas(tmp_path, cli):
    """The rows `calibrate select` writes are, read with pandas' defaults, the rows of the input."""
    texts = LINE_TEXTS * 3
    table = frame(texts).assign(lp=["de-en", "ja-en"] * (len(texts) // 2), seg_id=range(len(texts)),
                                source=[f'src "{i}"' for i in range(len(texts))],
                                chrf=[float(i) for i in range(len(texts))])
    table.to_csv(tmp_path / "in.tsv", sep="\t", index=False)
    result = cli("calibrate", "select", tmp_path / "in.tsv", "--by", "lp", "--budget", "6", "--score", "chrf",
                 "-o", tmp_path / "select.tsv")
    assert result.exit_code == 0, result.stderr
    chosen = pd.read_csv(tmp_path / "select.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert len(chosen) == 12
    truth = table.astype({"seg_id": str}).set_index("seg_id")
    for column in ("hypothesis", "source", "reference", "lp", "system"):
        assert chosen[column].tolist() == truth.loc[chosen["seg_id"], column].tolist(), column
    assert read_table(tmp_path / "select.tsv")["hypothesis"].tolist() == chosen["hypothesis"].tolist()


# any text ---------------------------------------------------------------------------------------------
FUZZ = settings(max_examples=int(os.environ.get("XLEVAL_FUZZ_EXAMPLES", "100")), deadline=None)
#: quotes, tabs and line breaks often; a CR is left out (CRLF is read as a line end in every text file)
_QUOTEY = st.text(st.one_of(st.sampled_from(['"', '"', "\t", "\n", " ", "a"]),
                            st.characters(exclude_categories=("Cs",), exclude_characters="\r\x00")), max_size=12)


@FUZZ
@given(st.lists(_QUOTEY, min_size=1, max_size=6))
def test_any_pandas_tsv_reads_as_written(texts):
    """Whatever the texts, a TSV from pandas' defaults is never misread, whole or streamed."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.tsv"
        frame(texts).to_csv(path, sep="\t", index=False)
        assert read_both(path) == texts


@FUZZ
@given(st.lists(_QUOTEY.filter(lambda t: "\t" not in t and "\n" not in t), min_size=1, max_size=6))
def test_any_xleval_tsv_reads_back_through_pandas_and_xleval(texts):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.tsv"
        write_table(frame(texts), path)
        assert pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)["hypothesis"].tolist() == texts
        assert read_both(path) == texts


@FUZZ
@given(st.lists(_QUOTEY.filter(lambda t: "\t" not in t and "\n" not in t), min_size=1, max_size=6))
def test_a_literal_tsv_is_read_literally_or_the_choice_is_said(texts):
    """A WMT-style file is never misread in silence: its texts come back, or the file is refused naming
    quoting=, or the CSV reading it was given is said in a note naming the way back (quoting="none")."""
    import logging

    df = frame(texts)
    notes: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: notes.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("xleval.io._quoting")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "wmt.tsv"
            path.write_text("\t".join(df.columns) + "\n"
                            + "".join("\t".join(row) + "\n" for row in df.itertuples(index=False)), encoding="utf-8")
            refused: InputError | None = None
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DataQualityWarning)  # said, and the texts are right
                    got = read_table(path)["hypothesis"].tolist()
            except InputError as exc:
                refused, got = exc, []
            if refused is not None:
                assert refused.argument == "quoting"
                assert read_table(path, quoting="none")["hypothesis"].tolist() == texts
            elif got != texts:
                assert any('read with CSV quoting' in n and 'quoting="none"' in n for n in notes), notes
                assert read_table(path, quoting="none")["hypothesis"].tolist() == texts
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
