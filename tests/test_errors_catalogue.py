"""The bad-input catalogue (docs/errors.md): every mistake a user can make gets one line on stderr
(what, where, how to fix), exit status 2, no traceback, and no output file, not even a partial one.

``CASES`` mirrors docs/errors.md entry by entry: the test checks that the doc shows each case's
exact command and the exact message the CLI prints (run from the folder holding the files, so the
messages name relative paths). Every case runs in-process through ``xleval.cli.main`` (the same
code path as the console script); ``SUBPROCESS`` re-runs a representative subset through
``python -m xleval`` to check the real exit status and stderr (three in the fast tier, the rest slow:
the process start-up they add is the same for every case). Regenerate the entries of the doc
after changing a message with ``python tests/test_errors_catalogue.py``.

Accepted inputs that are easy to mistake for errors (NaN/inf scores, CRLF line endings, a group
with one row, a group with constant scores) are in ``ACCEPTED``: exit 0, every row kept, a warning.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli, xleval_command
from xleval.calibration import LGN, AnchoredCalibrator, prepare_frame

DOC = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
SIG_BLEU = "bleu|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1"
SIG_CHRF = "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1"


@dataclass(frozen=True)
class Case:
    id: str
    mistake: str
    args: tuple[str, ...]
    fix: str
    output: str | None = None  # the output path that must not exist afterwards


def _c(id, mistake, cmd, fix, output=None):
    return Case(id, mistake, tuple(cmd.split()), fix, output)


FIT = "calibrate fit"
LMEVAL_DATE = "2025-03-14T09-26-53.589793"  # the <date> lm_eval --log_samples puts in its file names
APPLY = "calibrate apply model.json"
META = "meta meta.tsv --human human"
CASES: list[Case] = [
    # --- reading tables (every command reads through xleval.io.read_table) ---
    _c("E01", "Empty input file", f"{FIT} empty.tsv --score score -o out/E01.json",
       "Give a table with a header row and at least one data row.", "out/E01.json"),
    _c("E02", "Header but no rows", f"{FIT} header_only.tsv --score score -o out/E02.json",
       "The file was probably cut off or filtered to nothing; regenerate it.", "out/E02.json"),
    _c("E03", "Wrong delimiter: a CSV file named .tsv", f"{FIT} comma.tsv --score score -o out/E03.json",
       "Rename the file to .csv (the format is chosen by extension) or convert it to tabs.", "out/E03.json"),
    _c("E04", "A TSV row with a different number of fields (a tab inside a text)",
       f"{FIT} ragged.tsv --score score -o out/E04.json",
       "Remove or escape the tab in that row's text, or write the table as .jsonl/.parquet.", "out/E04.json"),
    _c("E05", "A CSV row with fewer fields than the header (pandas would pad it with empty cells)",
       f"{FIT} short_row.csv --score score -o out/E05.json",
       "Complete the row; a missing value is an empty field between commas (`de-en,,x`).", "out/E05.json"),
    _c("E06", "A CSV row with more fields than the header (pandas would read the first column as an index)",
       f"{FIT} long_row.csv --score score -o out/E06.json",
       "Quote the text that holds a comma (`\"a, b\"`), or remove the extra field.", "out/E06.json"),
    _c("E07", "Mixed line endings: a lone CR (old Mac) in a CSV file",
       f"{FIT} lone_cr.csv --score score -o out/E07.json",
       "Convert the file to LF (or CRLF) line endings, e.g. `dos2unix -c mac`. CRLF and LF may be mixed freely.",
       "out/E07.json"),
    _c("E08", "Non-UTF-8 bytes (e.g. a Latin-1 file)", f"{FIT} latin1.tsv --score score -o out/E08.json",
       "Re-encode the file: `iconv -f latin1 -t utf-8 in.tsv > out.tsv`.", "out/E08.json"),
    _c("E09", "Duplicate column names", f"{FIT} dup_columns.tsv --score score -o out/E09.json",
       "Rename one of the columns; xleval never guesses which one you meant.", "out/E09.json"),
    _c("E10", "The score column is missing (or misspelt)", f"{FIT} scores.tsv --score bleu -o out/E10.json",
       "Name an existing column with --score, or map yours with --col.", "out/E10.json"),
    _c("E11", "A string in a score column", f"{FIT} text_in_score.tsv --score score -o out/E11.json",
       "Fix the cell; empty, NA, nan and inf are read as missing/infinite values, any other text is an error.",
       "out/E11.json"),
    _c("E12", "A JSONL line that is not valid JSON", f"{FIT} broken.jsonl --score score -o out/E12.json",
       "Fix the line; JSONL has exactly one JSON object per line.", "out/E12.json"),
    _c("E13", "A JSONL line that is not an object", f"{FIT} array.jsonl --score score -o out/E13.json",
       "Write each row as an object: `{\"lp\": \"en-de\", \"score\": 1.0}`.", "out/E13.json"),
    _c("E14", "A corrupt or truncated Parquet file", f"{FIT} truncated.parquet --score score -o out/E14.json",
       "Rewrite the file; an interrupted copy leaves no Parquet footer.", "out/E14.json"),
    _c("E15", "An input format xleval does not read", f"{FIT} scores.xlsx --score score -o out/E15.json",
       "Export the sheet as .csv or .tsv.", "out/E15.json"),
    _c("E16", "The input file does not exist", f"{FIT} missing.tsv --score score -o out/E16.json",
       "Check the path (relative paths start at the current folder).", "out/E16.json"),
    # --- language codes ---
    _c("E17", "A malformed language pair", f"{FIT} bad_lp.tsv --score score -o out/E17.json",
       "Write pairs as SRC-TGT with BCP-47 codes (`en-de`, `zh-Hant-en`; an underscore joins the subtags of one "
       "code, as in WMT25's `en-de_DE`), or give src_lang/tgt_lang columns.",
       "out/E17.json"),
    _c("E18", "An unknown language code", f"{FIT} bad_tgt_lang.tsv --score score -o out/E18.json",
       "Use a BCP-47/ISO 639 code; `xx`-style placeholders are refused rather than grouped silently.",
       "out/E18.json"),
    _c("E19", "A missing language pair in one row", f"{FIT} empty_lp.parquet --score score -o out/E19.json",
       "Fill in the pair or drop the row yourself; rows are never dropped silently.", "out/E19.json"),
    # --- options ---
    _c("E20", "Every score is constant (e.g. the wrong column)", f"{FIT} constant.tsv --score score -o out/E20.json",
       "Check that --score names the metric's column; LGN needs scores that vary within a group.",
       "out/E20.json"),
    _c("E21", "A malformed --col mapping", f"{FIT} scores.tsv --score score --col score -o out/E21.json",
       "Write CANONICAL=FILE_COLUMN, e.g. `--col score=bleu`.", "out/E21.json"),
    _c("E22", "--col names a column that is not in the file",
       f"{FIT} scores.tsv --score score --col score=bleu -o out/E22.json",
       "Use one of the columns the message lists.", "out/E22.json"),
    _c("E23", "--by names a column that is not in the file",
       f"{FIT} scores.tsv --score score --by domain -o out/E23.json",
       "Group by tgt_lang, lp or an existing column.", "out/E23.json"),
    _c("E24", "A malformed --target", f"{FIT} scores.tsv --score score --target 80 -o out/E24.json",
       "Give the mean and standard deviation of the calibrated scale: `--target 80,10`.", "out/E24.json"),
    _c("E25", "An unknown --method", f"{FIT} scores.tsv --score score --method minmax -o out/E25.json",
       "Use lgn, anchored or auto (or one of the LGN statistics zscore, robust, quantile).", "out/E25.json"),
    _c("E26", "An unknown fallback level", f"{FIT} scores.tsv --score score --fallback country,pooled -o out/E26.json",
       "Chain levels from tgt_lang, script, family and end with pooled, raw or error.", "out/E26.json"),
    # --- calibrators ---
    _c("E27", "The calibrator file does not exist", "calibrate apply nothere.json scores.tsv -o out/E27.tsv",
       "Check the path, or fit one with `xleval calibrate fit`.", "out/E27.tsv"),
    _c("E28", "A truncated calibrator JSON", "calibrate apply truncated.json scores.tsv -o out/E28.tsv",
       "Refit; the file was cut off (an interrupted copy).", "out/E28.tsv"),
    _c("E29", "An edited calibrator JSON (valid JSON, one number changed)",
       "calibrate apply edited.json scores.tsv -o out/E29.tsv",
       "Refit instead of editing: the SHA-256 checksum covers every statistic and option.", "out/E29.tsv"),
    _c("E30", "A calibrator of another format version", "calibrate apply future.json scores.tsv -o out/E30.tsv",
       "Refit with the installed xleval (or install the version that wrote it).", "out/E30.tsv"),
    _c("E31", "A JSON file that is not a calibrator", "calibrate apply not_a_model.json scores.tsv -o out/E31.tsv",
       "Pass the file written by `calibrate fit -o`.", "out/E31.tsv"),
    _c("E32", "The calibrator path is a folder", "calibrate apply out scores.tsv -o out/E32.tsv",
       "Pass the JSON file inside it.", "out/E32.tsv"),
    _c("E33", "A calibrator of another metric signature (--signature)",
       f"calibrate apply model_bleu.json scores.tsv --signature {SIG_CHRF} -o out/E33.tsv",
       "Score with the options the calibrator was fitted on, refit, or pass --force if you know the scales agree.",
       "out/E33.tsv"),
    _c("E34", "A calibrator of another metric (signature stored with the table)",
       "calibrate apply model_bleu.json chrf_scores.tsv -o out/E34.tsv",
       "The table's PATH.signatures.json (or Parquet metadata) says the score is chrF: fit a chrF calibrator.",
       "out/E34.tsv"),
    _c("E35", "Unseen languages with --on-unseen error", f"{APPLY} unseen.tsv --on-unseen error -o out/E35.tsv",
       "Fit on data covering these languages, or choose --on-unseen pooled/raw (every row is labelled in "
       "calibration_source).", "out/E35.tsv"),
    _c("E36", "An unknown --on-unseen value", f"{APPLY} scores.tsv --on-unseen drop -o out/E36.tsv",
       "Use pooled, raw or error; rows are never dropped.", "out/E36.tsv"),
    # --- outputs ---
    _c("E37", "The output folder does not exist", f"{APPLY} scores.tsv -o nodir/E37.tsv",
       "Create the folder first; xleval does not create folders for you.", "nodir/E37.tsv"),
    _c("E38", "An output format xleval does not write", f"{APPLY} scores.tsv -o out/E38.xlsx",
       "Use .tsv, .csv, .jsonl or .parquet.", "out/E38.xlsx"),
    _c("E39", "A text with a tab or newline written to TSV", f"{APPLY} tab_in_text.jsonl -o out/E39.tsv",
       "Write .parquet, .jsonl or .csv, which can hold any text.", "out/E39.tsv"),
    # --- diagnose ---
    _c("E40", "A human column with no overlap with the scores",
       "diagnose no_overlap.tsv --score score --human human", "Join the human scores to the scored rows (same "
       "lp, system, seg_id) and check --human."),
    _c("E41", "A human column without any value", "diagnose no_human.tsv --score score --human human",
       "Give the column that holds the human scores."),
    _c("E42", "Too few resamples", "diagnose scores.tsv --score score --n-resamples 1",
       "Use at least 2 (1000 or more for reported intervals)."),
    # --- score ---
    _c("E43", "Mismatched line counts in plain-file mode", "score -i hyp.txt -r ref.txt -l en-de -o out/E43.tsv",
       "The files must be line-aligned: one segment per line in each.", "out/E43.tsv"),
    _c("E44", "Neither a table nor plain files", "score -o out/E44.tsv",
       "Give a table, or -i HYP.txt -r REF.txt.", "out/E44.tsv"),
    _c("E45", "An unknown metric", "score scores.tsv -m bleurt -o out/E45.tsv",
       "Choose a metric the message lists; neural metrics take a local model folder.", "out/E45.tsv"),
    _c("E46", "A neural model path that does not exist",
       "score scores.tsv -m comet:models/wmt22-comet-da -o out/E46.tsv",
       "Download the model once and pass its folder; xleval never downloads at run time.", "out/E46.tsv"),
    _c("E47", "An unknown BLEU tokenizer", "score scores.tsv --tokenize spm -o out/E47.tsv",
       "Use one of sacrebleu's tokenizers listed in the message.", "out/E47.tsv"),
    # --- report ---
    _c("E48", "An unknown report format", "report scores.tsv --score score --format pdf -o out/E48.pdf",
       "Use html (one self-contained page) or json.", "out/E48.pdf"),
    _c("E49", "A report with a calibrator that does not exist",
       "report scores.tsv --score score --model nothere.json -o out/E49.html",
       "Check the path, or leave out --model to fit LGN on the input.", "out/E49.html"),
    # --- fairness ---
    _c("E50", "--where leaves no rows", "fairness gaps scores.tsv --metric score --by lp --where system=C",
       "Use a value the message lists (values are compared as text)."),
    _c("E51", "A string in the fairness metric column", "fairness gaps text_in_score.tsv --metric score --by lp",
       "Fix the cell; 0/1 correctness and scores must be numbers."),
    _c("E52", "min-size without an effect or a size", "fairness min-size",
       "Give --effect (how many items?) or --n (what gap can my test set detect?)."),
    # --- intrinsic ---
    _c("E53", "An LM path that does not exist", "intrinsic score --model models/gpt2 --input texts.tsv -o out/E53.tsv",
       "Pass a local transformers model folder.", "out/E53.tsv"),
    _c("E54", "A plain text file without --lang", "intrinsic score --model models --input texts.txt -o out/E54.tsv",
       "Give --lang, or a table with a lang column.", "out/E54.tsv"),
    # --- audit ---
    _c("E55", "An unknown audit condition", "audit bad_condition.tsv",
       "Name conditions source, translated, back_translated, native or naturalized."),
    _c("E56", "An audit checklist in a missing folder",
       "audit audit.tsv --n-resamples 20 --checklist nodir/checklist.md",
       "Create the folder first.", "nodir/checklist.md"),
    # --- outputs never destroy inputs (the one writer's guard) ---
    _c("E57", "The output is the input", f"{FIT} scores.tsv --score score -o scores.tsv",
       "Write the output to another path; xleval never writes over a file the same command reads."),
    _c("E58", "The output is the input under another name (a symbolic or hard link, ./, ..)",
       f"{APPLY} scores.tsv -o alias.tsv", "Files are compared by device and inode, not by name: choose another path."),
    _c("E59", "Two outputs of one command name the same file",
       "audit audit.tsv --n-resamples 20 --checklist out/E59.md --report out/E59.md",
       "Give each output its own path (the second would replace the first).", "out/E59.md"),
    _c("E60", "The output device is full", f"{APPLY} scores.tsv -o /dev/full",
       "Free some space or write elsewhere; a regular file keeps its previous version (nothing is renamed over it)."),
    _c("E61", "--column names a column the input already has", f"{APPLY} scores.tsv --column human -o out/E61.tsv",
       "Choose another name, or pass --overwrite to replace that column on purpose.", "out/E61.tsv"),
    # --- hostile input files ---
    _c("E62", "A folder where a file is expected", "score -i out -r ref.txt -l en-de -o out/E62.tsv",
       "Give the file inside the folder.", "out/E62.tsv"),
    _c("E63", "A calibrator path that is a device or a FIFO (/dev/zero, a named pipe)",
       "calibrate apply /dev/zero scores.tsv -o out/E63.tsv",
       "Give the JSON file written by `calibrate fit`; calibrators are read only from regular files (up to 1 GiB).",
       "out/E63.tsv"),
    _c("E64", "A calibrator JSON nested thousands of levels deep",
       "calibrate apply nested.json scores.tsv -o out/E64.tsv",
       "Refit; a calibrator is a flat record of statistics.", "out/E64.tsv"),
    _c("E65", "A calibrator JSON holding an integer of thousands of digits",
       "calibrate apply huge_int.json scores.tsv -o out/E65.tsv", "Refit; no statistic has thousands of digits.",
       "out/E65.tsv"),
    _c("E66", "A corrupt signature sidecar (PATH.signatures.json)", f"{APPLY} bad_sidecar.tsv -o out/E66.tsv",
       "Delete the sidecar to go on without signatures, or write the table again with `xleval score -o`.",
       "out/E66.tsv"),
    _c("E67", "Corrupt xleval metadata in a Parquet file", f"{APPLY} bad_meta.parquet -o out/E67.tsv",
       "Write the table again with xleval, or without that metadata key.", "out/E67.tsv"),
    _c("E68", "A JSONL object with a key given twice", f"{FIT} dup_keys.jsonl --score score -o out/E68.json",
       "Keep one of the values: JSON parsers silently keep the last, so xleval refuses to guess.", "out/E68.json"),
    _c("E69", "A JSONL cell holding a list (e.g. a language pair as [\"en\", \"de\"])",
       f"{FIT} list_lp.jsonl --score score -o out/E69.json", "Write one value per cell: `\"lp\": \"en-de\"`.",
       "out/E69.json"),
    _c("E70", "A placeholder language code (qaa-qtz, mis, mul, zxx, und, x-...)",
       f"{FIT} placeholder.tsv --score score -o out/E70.json",
       "Use the language's own code; placeholders would become a language group of their own.", "out/E70.json"),
    _c("E71", "An lp that contradicts src_lang/tgt_lang", f"{FIT} lp_conflict.tsv --score score -o out/E71.json",
       "Fix the row, or drop the lp column (it is derived from src_lang and tgt_lang).", "out/E71.json"),
    _c("E72", "A blank line between the rows of a TSV file", f"{FIT} blank_line.tsv --score score -o out/E72.json",
       "Remove the blank line (or the line break inside a text that made it); blank lines at the end are fine.",
       "out/E72.json"),
    _c("E73", "A header line starting with '#' (it names a column '#score')",
       f"{FIT} hash_header.tsv --score score -o out/E73.json",
       "Remove the '#'; only lines starting with '# ' (hash and space) before the header are a comment block.",
       "out/E73.json"),
    _c("E74", "Scores so large that their squares overflow (beyond 1e150, e.g. 1e308)",
       f"{FIT} overflow.tsv --score score -o out/E74.json", "Rescale the scores; LGN is invariant to the scale.",
       "out/E74.json"),
    # --- options that would make results meaningless ---
    _c("E75", "An empty --by", f"{FIT} scores.tsv --score score --by , -o out/E75.json",
       "Name the group column(s), e.g. --by tgt_lang or --by lp,system.", "out/E75.json"),
    _c("E76", "A significance level outside (0, 1)", "fairness min-size --effect 0.2 --alpha 0",
       "alpha, power, --interval and --baseline are probabilities strictly between 0 and 1."),
    _c("E77", "nan or inf as a number option", "fairness gaps scores.tsv --metric score --by lp --floor nan",
       "Give a finite number."),
    _c("E78", "--effect together with --n", "fairness min-size --effect 0.2 --n 100",
       "--effect asks how many items you need, --n what effect your items can detect: give one."),
    _c("E79", "An effect no proportion can have (Cohen's h above pi)", "fairness min-size --effect 5",
       "Give Cohen's h (e.g. 0.12 for 0.80 vs 0.75), or --kind continuous for Cohen's d."),
    _c("E80", "A resample count that would not fit in memory",
       "diagnose scores.tsv --score score --n-resamples 100000000",
       "Use 1000-10000 resamples; at most 100000."),
    _c("E81", "A report whose calibrator was fitted on another column",
       "report scores.tsv --score human --model model.json -o out/E81.html",
       "Report the column the calibrator was fitted on, or fit one on this column.", "out/E81.html"),
    _c("E82", "No metric named", "score scores.tsv -m , -o out/E82.tsv", "Name at least one metric, e.g. -m bleu,chrf.",
       "out/E82.tsv"),
    _c("E83", "A --target that overflows", f"{FIT} scores.tsv --score score --target 1e308,1e308 -o out/E83.json",
       "Give a finite mean and a positive standard deviation of a usual size, e.g. --target 80,10.", "out/E83.json"),
    _c("E84", "Streaming standard input", f"{FIT} - --score score -o out/E84.json --chunk-size 5",
       "Save the table to a file first (streaming reads it twice), or drop --chunk-size.", "out/E84.json"),
    # --- found by our own adversarial pass ---
    _c("E85", "An output path that ends with / (a folder that does not exist)",
       f"{FIT} scores.tsv --score score -o newdir/",
       "Give a file name; create the folder first if you meant one.", "newdir"),
    _c("E86", "A streamed table that is a FIFO (named pipe)", f"{APPLY} pipe.tsv -o out/E86.tsv --chunk-size 5",
       "Save it to a file (a stream is read twice), or drop --chunk-size to read it once in memory.", "out/E86.tsv"),
    _c("E87", "Parquet columns with the same name", f"{FIT} dup_columns.parquet --score score -o out/E87.json",
       "Rename one of the columns.", "out/E87.json"),
    _c("E88", "--human (or --calibrated) names the --score column", "diagnose scores.tsv --score score --human score",
       "Name the human-score column; comparing a column with itself measures nothing."),
    _c("E89", "An effect too small to plan for", "fairness min-size --effect 0.0000001",
       "Give the smallest effect that matters in practice (e.g. Cohen's h 0.1)."),
    _c("E90", "A Cohen's d no difference can have", "fairness min-size --effect 500 --kind continuous",
       "Give d in standard deviations: 0.2 small, 0.5 medium, 0.8 large."),
    _c("E91", "A malformed -l language pair in plain-file mode",
       "score -i hyp.txt -r hyp.txt -l english-german -o out/E91.tsv",
       "Write the pair as SRC-TGT, e.g. -l en-de.", "out/E91.tsv"),
    _c("E92", "demo --out naming a file", "demo --out scores.tsv",
       "Give a folder (it is created) for the demo's data, calibrator, summary and report."),
    _c("E93", "A table name so long that its signature sidecar cannot exist",
       f"{APPLY} scores.tsv -o out/{'b' * 240}.tsv",
       "Use a shorter name: PATH.signatures.json must fit the file system's 255-byte limit too.",
       f"out/{'b' * 240}.tsv"),
    # --- audit conditions and rating scales ---
    _c("E94", "Audit conditions no estimator can use", "audit no_estimator.tsv",
       "Add the conditions an estimator compares (e.g. back_translated next to source for E1)."),
    _c("E95", "A rating scale that the ratings do not fit", "audit audit.tsv --ratings ratings.tsv --scale 2-5",
       "Give the scale the raters used, e.g. --scale 1-5."),
    _c("E96", "A malformed --scale (ends reversed, not integers, or a billion levels)",
       "audit audit.tsv --ratings ratings.tsv --scale 5-1 --save-table out/E96.tsv",
       "Give LOW-HIGH with LOW below HIGH (e.g. --scale 1-5) or the levels (1,2,3,4,5); at most 1001 levels.",
       "out/E96.tsv"),
    # --- lm-evaluation-harness runs ---
    _c("E97", "The results_DATE.json beside lm-eval samples is a FIFO or a device",
       f"intrinsic ingest lmeval/samples_flores_ppl_eng_Latn_{LMEVAL_DATE}.jsonl -o out/E97.parquet",
       "Put back the results file the run wrote (a regular JSON file), or remove it and give --lang/--model.",
       "out/E97.parquet"),
    # --- sacrebleu-style inputs: .gz, standard input, several systems, published layouts ---
    _c("E98", "A .gz file that is not gzip (or was cut off)", "score broken.tsv.gz -o out/E98.tsv",
       "Check the file with `gunzip -t`; drop the .gz from its name if it is not compressed.", "out/E98.tsv"),
    _c("E99", "A gzip-compressed Parquet file streamed",
       "score good.parquet.gz --tokenize 13a --chunk-size 5 -o out/E99.tsv",
       "Decompress it (Parquet compresses its pages itself), or drop --chunk-size to read it whole.", "out/E99.tsv"),
    _c("E100", "Standard input named for two files", "score -i - -r - -o out/E100.tsv",
       "Give the other file by name; standard input can be read once.", "out/E100.tsv"),
    _c("E101", "A paired test with one system", "score -i hyp.txt -r hyp.txt --paired-bs",
       "Give the baseline and at least one more system: -i BASELINE.txt SYSTEM.txt."),
    _c("E102", "Systems of a table that do not cover the same segments", "score uneven_systems.tsv --paired-bs",
       "Score every system on the same seg_id values of a language pair (or leave out the extra rows yourself)."),
    _c("E103", "ingest writing over a file it reads",
       "ingest mtme mtme --test-set wmt21.news -l en-de -o mtme/wmt21.news/system-outputs/en-de/sys1.txt",
       "Write the table outside the data folder."),
    _c("E104", "A WMT system output with another number of lines than the source", "ingest wmt wmt -o out/E104.parquet",
       "The files must be line-aligned: one segment per line; re-download or fix the system output.",
       "out/E104.parquet"),
    _c("E105", "A --seed that is not a number", "score -i hyp.txt -r hyp.txt --paired-bs --seed x",
       "Give a non-negative integer, or 'none' for a fresh seed (recorded in the signature)."),
    # --- anchored calibration: fit, select, evaluate, apply ---
    _c("E106", "--method anchored without --human",
       f"{FIT} labelled.tsv --score score --method anchored -o out/E106.json",
       "Name the human score column; rows without a human score are fine (see `calibrate select`).", "out/E106.json"),
    _c("E107", "--human names the --score column",
       f"{FIT} labelled.tsv --score score --method anchored --human score -o out/E107.json",
       "Name the column of human scores (DA, MQM, ...); mapping a score onto itself measures nothing.",
       "out/E107.json"),
    _c("E108", "A human column without any value (anchored)",
       f"{FIT} no_human.tsv --score score --method anchored --human human -o out/E108.json",
       "Label some rows of every group (`xleval calibrate select --budget 100`), or use --method lgn.",
       "out/E108.json"),
    _c("E109", "Human labels that contradict --human-higher-is-better (e.g. MQM, where lower is better)",
       f"{FIT} mqm.tsv --score score --method anchored --human human --human-higher-is-better -o out/E109.json",
       "Give the scale's direction (--human-lower-is-better for MQM), or leave it out to take it from the labels.",
       "out/E109.json"),
    _c("E110", "Labels whose score does not vary within any group (one label per group)",
       f"{FIT} one_label.tsv --score score --method anchored --human human -o out/E110.json",
       "Label several rows of different scores per group; `calibrate select` spreads them over the score's range.",
       "out/E110.json"),
    _c("E111", "An LGN option (--target, --min-count) with --method anchored",
       f"{FIT} labelled.tsv --score score --method anchored --human human --target 80,10 -o out/E111.json",
       "Drop it: anchored scores are on the human scale; --target sets LGN's scale.", "out/E111.json"),
    _c("E112", "--system names a column that is not in the table",
       f"{FIT} labelled.tsv --score score --method anchored --human human --system model -o out/E112.json",
       "Name the system column (or map it with --col); leave --system out for a table without systems.",
       "out/E112.json"),
    _c("E113", "select --budget 0 (or negative)",
       "calibrate select labelled.tsv --budget 0 --score score -o out/E113.tsv",
       "Give the number of rows to annotate per group, e.g. --budget 100.", "out/E113.tsv"),
    _c("E114", "select --budget above every group's rows (a total given as the budget per group)",
       "calibrate select labelled.tsv --budget 1000 --score score -o out/E114.tsv",
       "The budget is per group: give at most the largest group's rows (a smaller group gives all of its rows).",
       "out/E114.tsv"),
    _c("E115", "select --label-column naming a column of the rows to annotate",
       "calibrate select labelled.tsv --budget 10 --score score --label-column lp -o out/E115.tsv",
       "Choose a new name for the empty column the annotators fill in (default: human).", "out/E115.tsv"),
    _c("E116", "evaluate on a table of one system", "calibrate evaluate one_system.tsv --score score --human human",
       "The evaluation holds out systems: give a table of several systems (or name the system column with --system)."),
    _c("E117", "evaluate with a malformed --budget list",
       "calibrate evaluate labelled.tsv --score score --human human --budget 25,50,all",
       "Give whole numbers of labels per group separated by commas, e.g. --budget 25,50,100,200."),
    _c("E118", "An anchored calibrator applied to a table without its group column",
       "calibrate apply anchored.json no_lp.tsv -o out/E118.tsv",
       "Add the column the calibrator groups by (lp here), or map yours with --col lp=COLUMN.", "out/E118.tsv"),
    _c("E119", "--on-unseen raw with an anchored calibrator",
       "calibrate apply anchored.json labelled.tsv --on-unseen raw -o out/E119.tsv",
       "Use pooled (the common offset, on the human scale) or error; raw scores are not on the human scale.",
       "out/E119.tsv"),
    _c("E120", "A TSV whose only quotes wrap whole texts (CSV quoting or literal quotes: the file cannot tell)",
       "calibrate fit quoted_only.tsv --score score -o out/E120.json",
       "Say how the file was written: --quoting csv (pandas, csv.writer, spreadsheets) or --quoting none "
       "(plain text, WMT files).", "out/E120.json"),
    _c("E121", "--human-range whose LOW is not below HIGH (or not two numbers)",
       f"{FIT} labelled.tsv --score score --method anchored --human human --human-range 100,0 -o out/E121.json",
       "Give the bounds of the human scale as LOW,HIGH with LOW < HIGH, e.g. --human-range 0,100.", "out/E121.json"),
    _c("E122", "Labels that do not settle the direction of the human scale (no direction given)",
       f"{FIT} unrelated.tsv --score score --method anchored --human human -o out/E122.json",
       "Name the scale (--human-scale mqm, esa, da ...: its direction is known) or give its direction "
       "(--human-higher-is-better, or --human-lower-is-better for MQM error points), or label more rows: a sign the "
       "labels cannot tell could reverse every order within a group.", "out/E122.json"),
    _c("E129", "leaderboard --format tsv -o FILE with a tab or line break in a name (a TSV file is data: lossless)",
       "leaderboard tab_in_system.jsonl --score score --n-resamples 20 --format tsv -o out/E129.tsv",
       "Write --format json (it holds any name), or fix the name.", "out/E129.tsv"),
    _c("E130", "plan --budget not above the labels already collected (the budget is the total)",
       "calibrate plan labelled.tsv --budget 40 --score score --human human -o out/E130.tsv",
       "Give the total number of labels wanted, those already in --human included.", "out/E130.tsv"),
    _c("E131", "plan --budget above the rows that can carry a label",
       "calibrate plan labelled.tsv --budget 100000 --score score -o out/E131.tsv",
       "Give at most the number of rows with a score.", "out/E131.tsv"),
    # --- outputs and inputs, issue 26 (closed stdin, stdout into an input, table and sidecar together:
    # shell redirections, in tests/test_hardening_io.py and the Outputs table above) ---
    _c("E180", "-o - where the output is a file (a calibrator: `--model` reads it back)",
       f"{FIT} scores.tsv --score score -o -",
       "Give a file name; '-' is standard output only where the output is the command's result (tables, leaderboard, "
       "report).", "-"),
    _c("E181", "'-' for a second output while standard output carries the command's results",
       "audit audit.tsv --n-resamples 20 --report -",
       "Give the report a file name; the command's own results are on standard output.", "-"),
    _c("E182", "A binary (bytes) column written to a text table", f"{APPLY} binary.parquet -o out/E182.jsonl",
       "Write .parquet, which holds bytes, or decode the column to text first (dates, decimals and durations are "
       "written as ISO 8601 or exact digits).", "out/E182.jsonl"),
    _c("E183", "A tab or newline in a column name written to TSV", f"{APPLY} tab_header.jsonl -o out/E183.tsv",
       "Rename the column, or write .parquet, .jsonl or .csv.", "out/E183.tsv"),
    _c("E184", "leaderboard --format tsv -o FILE with a tab or newline in a system name",
       "leaderboard tab_system.jsonl --score score --by lp --n-resamples 20 --format tsv -o out/E184.tsv",
       "Use --format json, which holds any name exactly (TSV to a file is data: names are written as they are).",
       "out/E184.tsv"),
    # --- issue 26: calibration and data semantics ---
    _c("E170", "--col maps another metric's column onto the calibrator's score name",
       "calibrate apply model_bleu.json chrf_column.tsv --col score=chrf -o out/E170.tsv",
       "A signature travels with the file's column: score the table with the calibrator's metric, or fit a "
       "calibrator on this metric.", "out/E170.tsv"),
    _c("E171", "leaderboard --model with a calibrator fitted on another score column",
       "leaderboard scores.tsv --score human --model model.json -o out/E171.tsv",
       "Rank the column the calibrator was fitted on (--score), or fit one on this column; report refuses the same.",
       "out/E171.tsv"),
    _c("E172", "leaderboard --model: the table's signature differs from the calibrator's",
       "leaderboard chrf_scores.tsv --score score --by tgt_lang --model model_bleu.json -o out/E172.tsv",
       "Score the table with the calibrator's metric options (the message names the table).", "out/E172.tsv"),
    _c("E173", "An infinite human score (inf) in the label column",
       f"{FIT} inf_label.tsv --score score --method anchored --human human -o out/E173.json",
       "Fix the cell, or leave it empty for a row without a label; select --skip-labelled refuses it too.",
       "out/E173.json"),
    _c("E174", "A hand-edited calibrator with a recomputed checksum and a negative variance",
       "calibrate show negative_var.json",
       "Refit and save the calibrator; variances are finite numbers >= 0 (NaN only where the fit writes it)."),
    _c("E175", "A hand-edited calibrator whose by is a nested list",
       "calibrate apply nested_by.json scores.tsv -o out/E175.tsv",
       "Refit and save the calibrator; by is a column name or a list of names.", "out/E175.tsv"),
    _c("E176", "fit -o with a compressed name (.gz)",
       f"{FIT} scores.tsv --score score -o out/E176.json.gz",
       "Name the calibrator .json: calibrators are plain JSON, and no command reads a compressed one.",
       "out/E176.json.gz"),
    _c("E177", "A one-group table where groups are compared (fit --human, report)",
       f"{FIT} one_group.tsv --score score --human human -o out/E177.json",
       "Group by a column with several values (--by); a leaderboard of one group ranks it on the raw scores.",
       "out/E177.json"),
    # --- branch harden (issue 26: paired tests, ingest filters, options) ---
    _c("E185", "Paired tests on a table whose systems carry other references for a segment",
       "score other_refs.tsv --paired-bs -o out/E185.tsv",
       "Give every system's rows of a segment the same reference (sacrebleu's paired tests take one reference set), "
       "or score the systems without a paired test (--corpus scores each system against its own rows).",
       "out/E185.tsv"),
    _c("E186", "score TABLE --paired-bs -o OUT on a table the paired test refuses",
       "score uneven_systems.tsv --paired-bs -o out/E186.tsv",
       "Give every system the same segments; nothing is written until the table passes the paired test's checks.",
       "out/E186.tsv"),
    _c("E187", "ingest mtme --system with a name that matches no system output",
       "ingest mtme mtme --test-set wmt21.news -l en-de --system sys2 -o out/E187.tsv",
       "Use a system name the message lists (the file names under system-outputs/LP/, without .txt).",
       "out/E187.tsv"),
    _c("E188", "ingest wmt -l with a language pair the folder does not have",
       "ingest wmt wmt -l fr-en -o out/E188.parquet",
       "Use a language pair the message lists.", "out/E188.parquet"),
    _c("E189", "fairness gaps --by lp with the default --reference en (a language, not a pair)",
       "fairness gaps scores.tsv --metric score --by lp",
       "Give a pair with --reference (the message suggests one), or --reference none to skip the ratios."),
    _c("E190", "--col maps one file column to two canonical columns",
       "diagnose scores.tsv --score metric --human gold --col metric=score --col gold=score",
       "Keep one mapping per file column; copy the column under a second name in the file if both are meant."),
    _c("E191", "--col maps two file columns to one canonical column",
       "diagnose scores.tsv --score metric --col metric=score --col metric=human",
       "Keep one mapping per canonical column."),
    _c("E192", "score -cc 0 without a word order (sacrebleu fails on it)",
       "score scores.tsv -m chrf -cc 0 -o out/E192.tsv",
       "Give a character order of 1 or more (chrF: 6), or add a word order (-cw 2) for a word-only score, which "
       "sacrebleu computes and xleval matches.", "out/E192.tsv"),
    # --- meta-cmd (issue 24): xleval meta ---
    _c("E320", "meta: a metric column that is constant", "meta meta_constant.tsv --metrics chrf,bleu --human human "
       "-o out/E320.txt", "Drop the metric, or check that its column was filled.", "out/E320.txt"),
    _c("E321", "meta: a group with one judged system", "meta meta_one_system.tsv --metrics chrf,bleu --human human "
       "-o out/E321.txt", "Drop the group, or group by another column (--by).", "out/E321.txt"),
    _c("E322", "meta: a metric with no score for some systems of a group",
       "meta meta_nan_system.tsv --metrics chrf,bleu --human human -o out/E322.txt",
       "Score every system with the metric, or leave those systems out (--exclude).", "out/E322.txt"),
    _c("E323", "meta: human scores tied everywhere (one value per group)",
       "meta meta_tied.tsv --metrics chrf,bleu --human human -o out/E323.txt",
       "Give the human scores column, not a constant.", "out/E323.txt"),
    _c("E324", "meta: human scores on different scales across groups without saying so",
       "meta meta_scales.tsv --metrics chrf,bleu --human human -o out/E324.txt",
       "Say which scale each group uses: --human-scale NAME (shared) or GROUP=SCALE,...", "out/E324.txt"),
    _c("E325", "meta: fewer than 2 segments judged for every system of a group",
       "meta meta_sparse.tsv --metrics chrf,bleu --human human -o out/E325.txt",
       "Use --system-scores judged (SPA is then left out for that group), or drop the group.", "out/E325.txt"),
    _c("E326", "meta: no metric named", f"{META} -o out/E326.txt",
       "Name the metrics with --metrics A,B or --metrics-prefix PREFIX.", "out/E326.txt"),
    _c("E327", "meta: --metrics-prefix matches no column", f"{META} --metrics-prefix metric: -o out/E327.txt",
       "Check the prefix, or name the metrics with --metrics.", "out/E327.txt"),
    _c("E328", "meta: the human column named among the metrics", f"{META} --metrics chrf,human -o out/E328.txt",
       "Name the human column once, with --human.", "out/E328.txt"),
    _c("E329", "meta: a malformed --human-scale", f"{META} --metrics chrf --human-scale en-de= -o out/E329.txt",
       "Give NAME, or GROUP=SCALE pairs separated by commas.", "out/E329.txt"),
    _c("E330", "meta: --human-scale GROUP=SCALE without every group",
       f"{META} --metrics chrf --human-scale en-de=da -o out/E330.txt", "Name a scale for every group.",
       "out/E330.txt"),
    _c("E331", "meta: a (group, system, segment) repeated", "meta meta_dup.tsv --metrics chrf --human human "
       "-o out/E331.txt", "Average or drop the repeats first, or name the segment column (--segment).",
       "out/E331.txt"),
    _c("E332", "meta: a metric tied everywhere (one value per group)",
       "meta meta_metric_tied.tsv --metrics chrf,bleu --human human -o out/E332.txt",
       "Drop the metric, or check how its column was joined to the rows.", "out/E332.txt"),
    # --- issues 35 (item 7) and 36: meta's input layer, tasks and spans ---
    _c("E333", "meta: an infinite metric score (it was read as 'not scored' for every metric)",
       "meta meta_infmetric.tsv --metrics chrf,bleu --human human -o out/E333.txt",
       "Fix the cell, or leave it empty for a row the metric did not score.", "out/E333.txt"),
    _c("E334", "meta: --lower-is-better names no metric", f"{META} --metrics chrf --lower-is-better nosuch "
       "-o out/E334.txt", "Name a metric column (one of --metrics).", "out/E334.txt"),
    _c("E335", "meta: an --exclude pattern that matches no system", f"{META} --metrics chrf --exclude Human-* "
       "-o out/E335.txt", "Check the pattern: shell style, case-sensitive, matched against the system names.",
       "out/E335.txt"),
    _c("E336", "meta: --predicted-spans without NAME=FILE", f"{META} --metrics chrf --predicted-spans spans.tsv "
       "-o out/E336.txt", "Name each source: --predicted-spans xcomet=xcomet_spans.tsv.", "out/E336.txt"),
    _c("E337", "meta: --task neither a preset nor a JSON file of tasks", f"{META} --metrics chrf --task wmt26 "
       "-o out/E337.txt", "Use wmt23, wmt24 or wmt25, or a JSON list of tasks (FILE.json).", "out/E337.txt"),
    # --- issue 37 item 3: judges per language in meta ---
    _c("E440", "meta: no --human and no judges to compare (no two judge columns)", "meta meta.tsv -o out/E440.txt",
       "Give --human COL to meta-evaluate metrics, or name two or more columns to compare with --judges A,B.",
       "out/E440.txt"),
    _c("E441", "meta: --judges names one column", "meta meta.tsv --judges chrf -o out/E441.txt",
       "Name two or more score columns: --judges A,B.", "out/E441.txt"),
    # --- ingest wmt --da: WMT's segment-level DA files placed on the txt lines ---
    _c("E442", "ingest wmt --da: a DA SID past the test set's last segment",
       "ingest wmt wmt_da --da de-en=da_past.csv -o out/E442.parquet",
       "Give the DA file of the same test set and language pair as the folder (its SIDs count that test set's "
       "segments).", "out/E442.parquet"),
    _c("E443", "ingest wmt --da: no xml/*.LP.all.xml to place the pair's SIDs",
       "ingest wmt wmt_da -l en-de --da en-de=da_ok.csv -o out/E443.parquet",
       "Add the pair's xml/TESTSET.LP.all.xml of the WMT release beside txt/ (the SIDs count its documents).",
       "out/E443.parquet"),
    _c("E444", "ingest wmt --da for a language pair that is not read",
       "ingest wmt wmt_da -l de-en --da en-de=da_ok.csv -o out/E444.parquet",
       "Give --da only for pairs the command reads (drop the -l filter, or the --da).", "out/E444.parquet"),
    # --- branch ratings: ingest mqm / esa / gold (human ratings as the data comes) ---
    _c("E380", "ingest mqm: a span file without an lp column, and no --lp",
       "ingest mqm mqm_spans.tsv -o out/E380.tsv",
       "Give the pair of the file's rows with --lp (WMT's MQM files hold one pair each).", "out/E380.tsv"),
    _c("E381", "ingest mqm: a weight spec that is not severity[/category]:weight",
       "ingest mqm mqm_spans.tsv --lp en-de --weights Major=5 -o out/E381.tsv",
       "Write each weight as severity[/category]:weight, e.g. 'Major:5 Minor:1', or use the preset wmt.",
       "out/E381.tsv"),
    _c("E382", "ingest mqm --raters z with a rater who rated one segment",
       "ingest mqm mqm_spans.tsv --lp en-de --raters z -o out/E382.tsv",
       "Pool raters by their mean (--raters mean), or give each rater several segments.", "out/E382.tsv"),
    _c("E383", "ingest esa: a score outside ESA's 0-100",
       "ingest esa esa_bad.tsv -o out/E383.tsv",
       "Give the rater's score on the 0-100 slider (rescale other scales first).", "out/E383.tsv"),
    _c("E384", "ingest gold: one language pair with gold in two columns",
       "ingest gold gold_both.tsv --from mqm --from esa -o out/E384.tsv",
       "Mixed gold takes one scale per group: empty one of the columns for that group.", "out/E384.tsv"),
    _c("E391", "score -m judge:URL without the served model's name",
       "score judge.tsv -m judge:http://127.0.0.1:9/v1 -o out/E391.tsv",
       "Name the model the server serves after '#': judge:http://HOST:PORT/v1#MODEL.", "out/E391.tsv"),
    _c("E392", "score -m judge:URL when no server listens there",
       "score judge.tsv -m judge:http://127.0.0.1:9/v1#qwen -o out/E392.tsv",
       "Start the server (vLLM, llama.cpp, Ollama, TGI), or correct the host and port.", "out/E392.tsv"),
    _c("E393", "ingest judge: a WMT26 record whose item_id is not in the WMT26 form",
       "ingest judge judge_bad.jsonl -o out/E393.tsv",
       "Give the task file as the WMT26 tools write it: item_id SRC_###_TGT_###_DOMAIN_###_DOC_###_N.",
       "out/E393.tsv"),
    _c("E385", "ingest mqm: a negative weight (it would reward errors)",
       "ingest mqm mqm_spans.tsv --lp en-de --weights Major:-5,Minor:1 -o out/E385.tsv",
       "Give each severity a penalty of 0 or more.", "out/E385.tsv"),
    _c("E386", "ingest esa: true/false in the score column",
       "ingest esa esa_bool.jsonl -o out/E386.tsv",
       "Give the rater's score on the 0-100 slider; a checkbox column is not an ESA score.", "out/E386.tsv"),
    # --- branch outchk: output checks (check-outputs, --exclude-invalid; issue 27, item 4) ---
    _c("E360", "check-outputs: a target language the language identifier does not know",
       "check-outputs outchk_chr.tsv --langid py3langid -o out/E360.json",
       "Drop those rows (--where), or skip the off-target flag with --langid none; the other flags need no identifier.",
       "out/E360.json"),
    _c("E361", "check-outputs --flag copy_source on a table without a source column",
       "check-outputs scores.tsv --flag copy_source -o out/E361.json",
       "Add the source texts (or map them with --col source=COLUMN); without --flag the check is skipped with a note.",
       "out/E361.json"),
    _c("E362", "check-outputs --flag off_target with --langid none",
       "check-outputs scores.tsv --flag off_target --langid none -o out/E362.json",
       "Install the identifier (pip install 'xleval[langid]') and drop --langid none, or leave the flag out.",
       "out/E362.json"),
    _c("E363", "check-outputs on a table without output texts",
       "check-outputs no_hypothesis.tsv -o out/E363.json",
       "Give the table its hypothesis column, or map it with --col hypothesis=COLUMN.", "out/E363.json"),
    _c("E364", "leaderboard --exclude-invalid on a table without output texts",
       "leaderboard no_hypothesis.tsv --score score --exclude-invalid -o out/E364.tsv",
       "The output checks read the hypotheses: map the column with --col hypothesis=COLUMN, or drop --exclude-invalid.",
       "out/E364.tsv"),
    _c("E365", "calibrate fit --exclude-invalid with chunked (streamed) fitting",
       f"{FIT} scores.tsv --score score --exclude-invalid --chunk-size 10 -o out/E365.json",
       "Fit in memory (drop the scale options), or save the table without the flagged rows first "
       "(check-outputs --rows).", "out/E365.json"),
    _c("E366", "check-outputs --score names a column that is not a number",
       "check-outputs scores.tsv --score hypothesis -o out/E366.json",
       "Name a metric column (numbers), e.g. --score chrf.", "out/E366.json"),
    _c("E367", "report --output-checks on a table without output texts",
       "report no_hypothesis.tsv --score score --output-checks -o out/E367.html",
       "The output checks read the hypotheses: map the column with --col hypothesis=COLUMN, or drop --output-checks.",
       "out/E367.html"),
    # --- the label round trip (issue 34) ---
    _c("E394", "calibrate merge with a label that matches no row of the table",
       "calibrate merge stray_labels.tsv labelled.tsv -o out/E394.tsv",
       "Merge into the table the rows were selected from; a label is never dropped in silence.", "out/E394.tsv"),
    _c("E395", "calibrate merge with a label that is not a number",
       "calibrate merge word_labels.tsv labelled.tsv -o out/E395.tsv",
       "Labels are numbers on the human scale; leave a cell empty for a row not judged.", "out/E395.tsv"),
    # --- branch metricx: MetricX, several devices, the score cache (issue 27) ---
    _c("E340", "metricx:PATH names a checkpoint that is not MetricX (an XLM-R encoder)",
       "score scores.tsv -m metricx:mx/xlmr -o out/E340.tsv",
       "Pass the directory of a downloaded MetricX model (google/metricx-23-*, google/metricx-24-hybrid-*).",
       "out/E340.tsv"),
    _c("E341", "A reference-based variant asked of a MetricX-23 QE checkpoint",
       "score scores.tsv -m metricx:mx/metricx-23-qe-large-v2p0 --metricx-variant 23-ref -o out/E341.tsv",
       "Leave --metricx-variant out (the checkpoint's name says what it is), or use a reference-based checkpoint.",
       "out/E341.tsv"),
    _c("E342", "A MetricX checkpoint whose name does not say which MetricX it is",
       "score scores.tsv -m metricx:mx/my-model -o out/E342.tsv",
       "Say it with --metricx-variant (23-ref, 23-qe, 24-hybrid, 24-ref, 24-qe).", "out/E342.tsv"),
    _c("E343", "A MetricX checkpoint without a tokenizer, and none given",
       "score scores.tsv -m metricx:mx/metricx-24-hybrid-large-v2p6 -o out/E343.tsv",
       "Pass the local mT5 tokenizer with --metricx-tokenizer DIR (MetricX's README uses google/mt5-xl).",
       "out/E343.tsv"),
    _c("E344", "--device lists devices of two kinds",
       "score scores.tsv -m metricx:mx/metricx-24-hybrid-large-v2p6 --device cuda:0,cpu -o out/E344.tsv",
       "List GPUs of one kind by number (cuda:0,cuda:1), or one device.", "out/E344.tsv"),
    _c("E345", "--device names a device torch does not know",
       "score scores.tsv -m metricx:mx/metricx-24-hybrid-large-v2p6 --device gpu -o out/E345.tsv",
       "Use cpu, cuda, cuda:N or mps.", "out/E345.tsv"),
    _c("E346", "Several devices for a metric that runs on one (COMET, BERTScore, embed)",
       "score scores.tsv -m comet:mx --device cpu,cpu -o out/E346.tsv",
       "Give one device; metricx:PATH splits its batches over several.", "out/E346.tsv"),
    _c("E347", "--cache names a cache file made for another metric signature",
       "score scores.tsv -m metricx:mx/metricx-23-large-v2p0 --metricx-tokenizer mx/tok --cache mx/other.sqlite "
       "-o out/E347.tsv",
       "Give each metric signature its own cache file, or a directory (one file per signature inside).",
       "out/E347.tsv"),
    _c("E348", "--cache names a file that is not a score cache",
       "score scores.tsv -m metricx:mx/metricx-23-large-v2p0 --metricx-tokenizer mx/tok --cache scores.tsv "
       "-o out/E348.tsv",
       "Give a new path or a directory for the cache.", "out/E348.tsv"),
    _c("E352", "--metricx-tokenizer names a tokenizer that does not match MetricX (another pad token id)",
       "score scores.tsv -m metricx:mx/metricx-23-large-v2p0 --metricx-tokenizer mx/wordlevel -o out/E352.tsv",
       "Give the mT5 tokenizer MetricX was trained with (google/mt5-xl, saved locally).", "out/E352.tsv"),
    _c("E349", "--error-spans with a COMET model that tags no spans (a regression model)",
       "score scores.tsv -m comet:mx/comet-da --error-spans out/E349-spans.tsv -o out/E349.tsv",
       "Use an XCOMET model (e.g. Unbabel/XCOMET-XL), or drop --error-spans.", "out/E349.tsv"),
    _c("E350", "--error-spans without a COMET metric",
       "score scores.tsv -m chrf --error-spans out/E350-spans.tsv -o out/E350.tsv",
       "Add -m comet:PATH with a local XCOMET model.", "out/E350.tsv"),
    _c("E351", "--cache names one file for several neural metrics",
       "score scores.tsv -m metricx:mx/metricx-23-large-v2p0,comet:mx/comet-da --cache out/E351.sqlite "
       "-o out/E351.tsv",
       "Give a directory: each metric signature gets its own file inside it.", "out/E351.tsv"),
    _c("E387", "Two models of one kind in -m (both would write the column comet)",
       "score scores.tsv -m comet:mx/comet-da,comet:./mx/comet-da -o out/E387.tsv",
       "Score one model of a kind per run, each to its own output, and join the columns.", "out/E387.tsv"),
    _c("E388", "--cache names the output file",
       "score scores.tsv -m metricx:mx/metricx-23-large-v2p0 --metricx-tokenizer mx/tok --cache out/E388.tsv "
       "-o out/E388.tsv",
       "Give the cache and the output their own paths (a directory for the cache serves every metric).",
       "out/E388.tsv"),
]

#: representative subset re-run through a real subprocess (exit status, stderr, no traceback)
SUBPROCESS = ["E01", "E05", "E08", "E11", "E17", "E29", "E33", "E35", "E37", "E40", "E43", "E53", "E57", "E58", "E60",
              "E63", "E64", "E68", "E76", "E109"]
SUBPROCESS_FAST = {"E01", "E29", "E53"}


# files --------------------------------------------------------------------------------------------------
def _scores(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"lp": lp, "system": system, "seg_id": i, "hypothesis": f"the cat {i}", "reference": f"the cat sat {i}",
             "score": float(rng.normal(50, 10)), "human": float(rng.normal())}
            for lp in ("en-de", "en-fr", "en-zh", "de-en") for system in ("A", "B") for i in range(30)]
    return pd.DataFrame(rows)


def _tsv(df: pd.DataFrame) -> bytes:
    return df.to_csv(sep="\t", index=False, lineterminator="\n").encode()


def _write_files(root: Path) -> None:
    df = _scores()
    tsv = _tsv(df)
    header, first, *rest = tsv.decode().split("\n")
    (root / "out").mkdir()
    (root / "models").mkdir()
    files: dict[str, bytes] = {
        "scores.tsv": tsv,
        "empty.tsv": b"",
        "quoted_only.tsv": b'lp\tscore\thypothesis\nen-de\t1.5\t"Yes."\nen-fr\t2.5\tno\n',
        "header_only.tsv": (header + "\n").encode(),
        "comma.tsv": df.to_csv(index=False).encode(),
        "ragged.tsv": "\n".join([header, first, first.replace("the cat", "the\tcat", 1), *rest]).encode(),
        "short_row.csv": b"lp,score,hypothesis\nen-de,1.5,a\nen-de,2.5\nen-fr,3,c\n",
        "long_row.csv": b"lp,score\nen-de,1,5\nen-de,2\n",
        "lone_cr.csv": b"lp,score\nen-de,1\ren-de,2\nen-fr,3\n",
        "latin1.tsv": "lp\tscore\thypothesis\nen-de\t1\tdas Haus\nen-de\t2\tdie Stra\u00dfe\n".encode("latin-1"),
        "dup_columns.tsv": tsv.replace(b"\thuman\n", b"\tscore\n", 1),
        "text_in_score.tsv": _tsv(df.assign(score=df["score"].astype(object).where(df.index != 6, "#VALUE!"))),
        "broken.jsonl": b'{"lp": "en-de", "score": 1}\n{"lp": "en-de", "score": 2\n',
        "array.jsonl": b'{"lp": "en-de", "score": 1}\n["en-de", 2]\n',
        "bad_lp.tsv": _tsv(df.assign(lp=df["lp"].where(df.index != 41, "english-german"))),
        "bad_tgt_lang.tsv": _tsv(df.drop(columns="lp").assign(src_lang="en",
                                                               tgt_lang=np.where(df.index == 7, "xx1", "de"))),
        "constant.tsv": _tsv(df.assign(score=70.0)),
        "unseen.tsv": _tsv(df.assign(lp=np.where(df.index % 2 == 0, "en-sw", df["lp"]))),
        "no_overlap.tsv": _tsv(df.assign(human=df["human"].where(df["lp"] == "en-de"),
                                         score=df["score"].where(df["lp"] != "en-de"))),
        "no_human.tsv": _tsv(df.assign(human="")),
        "scores.xlsx": b"PK\x03\x04",  # exists: E15 is about the format, not a missing file
        "nested.json": b"[" * 100_000 + b"]" * 100_000,
        "judge.tsv": b"lp\tsource\thypothesis\nen-de\tThe cat.\tDie Katze.\n",
        "judge_bad.jsonl": b'{"item_id": "eng_Latn-deu_Latn-doc1", "task2_pred": {"A": 70}}\n',
        "huge_int.json": b'{"format": "xleval.LGN", "format_version": ' + b"9" * 5000 + b"}",
        "bad_sidecar.tsv": tsv,
        "bad_sidecar.tsv.signatures.json": b'{"signatures": {"score": "bleu|',
        "dup_keys.jsonl": b'{"lp": "en-de", "score": 1}\n{"lp": "en-de", "score": 2, "score": 3}\n',
        "list_lp.jsonl": b'{"lp": "en-de", "score": 1}\n{"lp": ["en", "de"], "score": 2}\n',
        "placeholder.tsv": _tsv(df.drop(columns="lp").assign(src_lang="en",
                                                             tgt_lang=np.where(df.index == 9, "qaa", "de"))),
        "lp_conflict.tsv": _tsv(df.assign(src_lang="en", tgt_lang=df["lp"].str[-2:]).assign(
            lp=lambda d: d["lp"].where(d.index != 4, "de-en"))),
        "blank_line.tsv": "\n".join([header, first, "", *rest]).encode(),
        "hash_header.tsv": b"#" + _tsv(df[["score", "lp", "system", "seg_id"]]),
        "overflow.tsv": _tsv(df.assign(score=np.where(df["lp"] == "en-fr", np.where(df.index % 2, 1e308, -1e308),
                                                      df["score"]))),
        "hyp.txt": b"the cat\nsat on\nthe mat\n",
        "ref.txt": b"the cat\nsat on the mat\n",
        "texts.tsv": b"lang\ttext\nen\thello world\n",
        "texts.txt": b"hello world\n",
        "not_a_model.json": b'{"format": "xleval.report", "sections": []}\n',
        "chrf_scores.tsv": tsv,
        "chrf_scores.tsv.signatures.json": json.dumps({"signatures": {"score": SIG_CHRF}}).encode(),
        "tab_in_system.jsonl": df.assign(system=df["system"].where(df["system"] != "B", "B\tnew")).to_json(
            orient="records", lines=True).encode(),
        "tab_in_text.jsonl": "".join(json.dumps({**r, "hypothesis": r["hypothesis"] + ("\tx" if i == 3 else "")}) + "\n"
                                     for i, r in enumerate(df.to_dict(orient="records"))).encode(),
        "audit.tsv": _audit_table().to_csv(sep="\t", index=False).encode(),
        "bad_condition.tsv": _audit_table().replace({"condition": {"back_translated": "orig"}})
                                           .to_csv(sep="\t", index=False).encode(),
        "no_estimator.tsv": _audit_table().replace({"condition": {"back_translated": "translated"}})
                                          .to_csv(sep="\t", index=False).encode(),
        "ratings.tsv": b"item_id\trater\trating\n0\tr1\t1\n0\tr2\t2\n1\tr1\t5\n1\tr2\t4\n",
        # branch outchk: a target language py3langid does not know (Cherokee), a table without hypotheses
        "outchk_chr.tsv": _tsv(df.assign(lp="en-chr")),
        "no_hypothesis.tsv": _tsv(df.drop(columns="hypothesis")),
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    df.assign(lp=df["lp"].where(df.index != 12)).to_parquet(root / "empty_lp.parquet")
    df.to_parquet(root / "good.parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}), b"xleval": b"{not json"}),
                   root / "bad_meta.parquet")
    os.symlink("scores.tsv", root / "alias.tsv")
    os.mkfifo(root / "pipe.tsv")
    (root / "lmeval").mkdir()
    (root / "lmeval" / f"samples_flores_ppl_eng_Latn_{LMEVAL_DATE}.jsonl").write_text(
        json.dumps({"doc_id": 0, "target": "The cat sat.", "filter": "none", "word_perplexity": [-12.0, 3],
                    "byte_perplexity": [-12.0, 12], "bits_per_byte": [-12.0, 12]}) + "\n", encoding="utf-8")
    os.mkfifo(root / "lmeval" / f"results_{LMEVAL_DATE}.json")  # read_text() waited for a writer forever
    pq.write_table(pa.table([pa.array(df["lp"]), pa.array(df["score"]), pa.array(df["human"])],
                            names=["lp", "score", "score"]), root / "dup_columns.parquet")
    (root / "truncated.parquet").write_bytes((root / "good.parquet").read_bytes()[:2000])
    import gzip

    (root / "broken.tsv.gz").write_bytes(tsv)
    (root / "good.parquet.gz").write_bytes(gzip.compress((root / "good.parquet").read_bytes()))
    uneven = df[(df["lp"] == "en-de") & ~((df["system"] == "B") & (df["seg_id"] == 3))]
    (root / "uneven_systems.tsv").write_bytes(_tsv(uneven))
    _layouts(root)
    _meta_files(root)
    _ratings_files(root)
    _anchored_files(root, df)
    _harden_files(root, df)
    df.assign(blob=[bytes([i % 256]) for i in range(len(df))]).to_parquet(root / "binary.parquet")
    (root / "tab_header.jsonl").write_text(df.rename(columns={"human": "human\tscore"}).to_json(orient="records",
                                           lines=True), encoding="utf-8")
    (root / "tab_system.jsonl").write_text(df.assign(system=df["system"].where(df["system"] != "A", "A\tx"))
                                           .to_json(orient="records", lines=True), encoding="utf-8")
    model = LGN(score="score").fit(prepare_frame(df, ["tgt_lang"]))
    model.save(root / "model.json")
    LGN(score="score").fit(prepare_frame(df, ["tgt_lang"]), signature=SIG_BLEU).save(root / "model_bleu.json")
    text = (root / "model.json").read_text()
    (root / "truncated.json").write_text(text[: len(text) // 2])
    payload = json.loads(text)
    payload["levels"]["__by__"]["mean"][0] += 1.0
    (root / "edited.json").write_text(json.dumps(payload, indent=1))
    (root / "future.json").write_text(text.replace('"format_version": 1', '"format_version": 2'))


def _meta_files(root: Path) -> None:
    """Tables of ``xleval meta`` (issue 24): 3 groups x 3 systems x 8 segments, two metrics, a human score."""
    rng = np.random.default_rng(24)
    df = pd.DataFrame([{"lp": lp, "system": s, "seg_id": i, "human": float(rng.normal(q, 1)),
                        "chrf": float(rng.normal(q, 1)), "bleu": float(rng.normal(q, 1))}
                       for lp in ("en-de", "en-fr", "de-en") for q, s in enumerate("ABC") for i in range(8)])
    g = df["lp"] == "en-de"
    tables = {
        "meta.tsv": df,
        "meta_constant.tsv": df.assign(bleu=20.0),
        "meta_one_system.tsv": df[~(g & (df["system"] != "A"))],
        "meta_nan_system.tsv": df.assign(bleu=df["bleu"].where(~(g & (df["system"] == "B")))),
        "meta_tied.tsv": df.assign(human=df["lp"].map({"en-de": 1.0, "en-fr": 2.0, "de-en": 3.0})),
        "meta_scales.tsv": df.assign(human=np.where(g, df["human"] * 100, df["human"])),
        "meta_sparse.tsv": df.assign(human=df["human"].where(~(g & (df["seg_id"] % 3 == df["system"].map(
            {"A": 0, "B": 1, "C": 2}))) & ~(g & (df["seg_id"] > 5)))),
        "meta_dup.tsv": pd.concat([df, df.iloc[[0]]]),
        "meta_metric_tied.tsv": df.assign(bleu=df["lp"].map({"en-de": 10.0, "en-fr": 20.0, "de-en": 30.0})),
        "meta_infmetric.tsv": df.assign(bleu=df["bleu"].where(df.index != 4, np.inf)),
    }
    for name, table in tables.items():
        (root / name).write_bytes(_tsv(table))


def _anchored_files(root: Path, df: pd.DataFrame) -> None:
    """Tables with sparse human labels (every third row) that follow the score, and an anchored calibrator."""
    rng = np.random.default_rng(2)
    human = df["score"] * 0.5 + rng.normal(0, 3, len(df))
    labelled = df.assign(human=human.where(df.index % 3 == 0))
    first_of_group = ~labelled["lp"].duplicated()
    files = {"labelled.tsv": labelled, "mqm.tsv": labelled.assign(human=-labelled["human"]),
             "one_label.tsv": labelled.assign(human=human.where(first_of_group)),
             "one_system.tsv": labelled[labelled["system"] == "A"], "no_lp.tsv": labelled.drop(columns="lp"),
             "unrelated.tsv": labelled.assign(human=pd.Series(np.random.default_rng(1).normal(50, 3, len(df)))
                                              .where(df.index % 3 == 0)),
             "stray_labels.tsv": labelled.loc[[1, 2], ["lp", "system", "seg_id"]].assign(seg_id=[1, 99], human=70.0),
             "word_labels.tsv": labelled.loc[[1], ["lp", "system", "seg_id"]].assign(human="good")}
    for name, table in files.items():
        (root / name).write_bytes(_tsv(table))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its notes are not what these files are for
        AnchoredCalibrator(by="lp").fit(labelled).save(root / "anchored.json")
    _issue26_files(root, df, labelled)
    _metricx_files(root)


def _metricx_files(root: Path) -> None:
    """MetricX-like checkpoint folders (config.json only: every case is refused before any weight is read),
    a tokenizer folder, and a score cache made under another signature."""
    from xleval.metrics._score_cache import ScoreCache

    config = {"model_type": "mt5", "architectures": ["MT5ForRegression"], "vocab_size": 250112}
    for name in ("metricx-23-qe-large-v2p0", "metricx-24-hybrid-large-v2p6", "metricx-23-large-v2p0", "my-model"):
        (root / "mx" / name).mkdir(parents=True)
        (root / "mx" / name / "config.json").write_text(json.dumps(config))
    (root / "mx" / "xlmr").mkdir()
    (root / "mx" / "xlmr" / "config.json").write_text(json.dumps({"model_type": "xlm-roberta",
                                                                  "architectures": ["XLMRobertaModel"]}))
    (root / "mx" / "comet-da" / "checkpoints").mkdir(parents=True)
    (root / "mx" / "comet-da" / "checkpoints" / "model.ckpt").write_bytes(b"")  # refused before it is read
    (root / "mx" / "comet-da" / "hparams.yaml").write_text("class_identifier: regression_metric\n")
    (root / "mx" / "tok").mkdir()
    (root / "mx" / "tok" / "tokenizer_config.json").write_text("{}")
    ScoreCache(root / "mx" / "other.sqlite", "model:metricx-23-xl-v2p0|variant:23-ref").put([b"k" * 16], [1.0])
    # a real tokenizer that is not mT5's: its padding token has id 2 where MetricX pads with 0
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = Tokenizer(models.WordLevel({"[UNK]": 0, "</s>": 1, "<pad>": 2, "a": 3}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=words, unk_token="[UNK]", eos_token="</s>",
                            pad_token="<pad>").save_pretrained(root / "mx" / "wordlevel")


def _issue26_files(root: Path, df: pd.DataFrame, labelled: pd.DataFrame) -> None:
    """Issue 26: a chrF column, an infinite label, one group, and calibrators
    edited by hand with a recomputed checksum (as save_checked computes it)."""
    from xleval.calibration._persist import checksum
    from xleval.io import write_table

    write_table(df.rename(columns={"score": "chrf"}), root / "chrf_column.tsv",
                metadata={"signatures": {"chrf": SIG_CHRF}})
    (root / "inf_label.tsv").write_bytes(_tsv(labelled.assign(human=labelled["human"].where(labelled.index != 3,
                                                                                            np.inf))))
    (root / "one_group.tsv").write_bytes(_tsv(labelled[labelled["lp"] == "en-de"]))

    def edited(source: str, target: str, edit) -> None:
        payload = json.loads((root / source).read_text())
        payload.pop("checksum")
        edit(payload)
        payload["checksum"] = checksum(json.loads(json.dumps(payload, allow_nan=True)))
        (root / target).write_text(json.dumps(payload, allow_nan=True))

    edited("anchored.json", "negative_var.json", lambda p: p["pooled"].update(offset_var=-1.0))
    edited("anchored.json", "nested_by.json", lambda p: p["params"].update(by=[["lp"]]))


def _ratings_files(root: Path) -> None:
    """MQM spans (WMT's columns, no lp), ESA ratings with a score of 120, and a table with two golds for en-de."""
    spans = pd.DataFrame({"system": ["A", "A", "B"], "doc": "d1", "seg_id": [1, 2, 1], "rater": ["r1", "r1", "r2"],
                          "severity": ["Major", "No-error", "Minor"], "category": ["Accuracy", "No-error", "Fluency"]})
    (root / "mqm_spans.tsv").write_bytes(_tsv(spans))
    esa = pd.DataFrame({"lp": "cs-uk", "system": ["A", "B"], "seg_id": [1, 1], "rater": "x", "score": [80, 120]})
    (root / "esa_bad.tsv").write_bytes(_tsv(esa))
    (root / "esa_bool.jsonl").write_text(esa.assign(score=[True, False]).to_json(orient="records", lines=True))
    gold = pd.DataFrame({"lp": ["en-de", "en-de", "cs-uk"], "system": ["A", "B", "A"], "seg_id": [1, 1, 1],
                         "mqm": [-5.0, 0.0, None], "mqm_scale": "MQM", "esa": [None, 70.0, 80.0], "esa_scale": "ESA"})
    (root / "gold_both.tsv").write_bytes(_tsv(gold))


def _layouts(root: Path) -> None:
    """A WMT system-output folder (one output a line short) and an mt-metrics-eval test set."""
    txt = root / "wmt" / "txt"
    for sub in ("sources", "references", "system-outputs"):
        (txt / sub).mkdir(parents=True)
    (txt / "sources" / "newstest2021.de-en.src.de").write_text("Hallo\nWelt\n")
    (txt / "references" / "newstest2021.de-en.ref.A.en").write_text("Hello\nWorld\n")
    (txt / "system-outputs" / "newstest2021.de-en.hyp.sysA.en").write_text("Hello\n")
    test_set = root / "mtme" / "wmt21.news"
    for sub in ("sources", "references", "system-outputs/en-de"):
        (test_set / sub).mkdir(parents=True)
    (test_set / "sources" / "en-de.txt").write_text("a\nb\n")
    (test_set / "references" / "en-de.refA.txt").write_text("A1\nA2\n")
    (test_set / "system-outputs" / "en-de" / "sys1.txt").write_text("s1\ns2\n")
    da = root / "wmt_da" / "txt"  # de-en with its xml/ (one document of two segments); en-de without
    for sub in ("sources", "references", "system-outputs"):
        (da / sub).mkdir(parents=True)
    for lp, src, tgt in (("de-en", "de", "en"), ("en-de", "en", "de")):
        (da / "sources" / f"newstest2021.{lp}.src.{src}").write_text("a\nb\n")
        (da / "references" / f"newstest2021.{lp}.ref.A.{tgt}").write_text("A\nB\n")
        (da / "system-outputs" / f"newstest2021.{lp}.hyp.sysA.{tgt}").write_text("x\ny\n")
    (root / "wmt_da" / "xml").mkdir()
    (root / "wmt_da" / "xml" / "newstest2021.de-en.all.xml").write_text(
        '<dataset><doc id="d1"><src lang="de"><p><seg id="1">a</seg><seg id="2">b</seg></p></src></doc></dataset>')
    (root / "da_ok.csv").write_text("SYS SID RAW.SCR Z.SCR N\nsysA.1 1 70 0.2 1\n")
    (root / "da_past.csv").write_text("SYS SID RAW.SCR Z.SCR N\nsysA.1 1 70 0.2 1\nsysA.1 3 50 -0.1 1\n")


def _harden_files(root: Path, df: pd.DataFrame) -> None:
    """Files of branch harden: a table whose system B carries other references than A."""
    other = df[df["lp"] == "en-de"].copy()
    other["reference"] = other["reference"].where(other["system"] != "B", "another reference")
    (root / "other_refs.tsv").write_bytes(_tsv(other))


def _audit_table() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame([{"item_id": i, "model": m, "condition": c, "correct": int(rng.random() < 0.6)}
                         for m in ("m1", "m2") for c in ("source", "back_translated") for i in range(30)])


@pytest.fixture(scope="module")
def workdir():
    # mkdtemp + 0755, not tmp_path: the read-only-folder case runs as another user, who must read the inputs
    root = Path(tempfile.mkdtemp(prefix="xleval-errors-"))
    root.chmod(0o755)
    _write_files(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


# checks -------------------------------------------------------------------------------------------------
def _documented() -> dict[str, tuple[str, str]]:
    """id -> (command, message) as docs/errors.md shows them."""
    text = DOC.read_text(encoding="utf-8")
    entries = re.split(r"^### ", text, flags=re.M)[1:]
    out = {}
    for entry in entries:
        head = entry.split(" ", 1)[0]
        command = re.search(r"^\$ (.*)$", entry, flags=re.M)
        message = re.search(r"^(xleval: error: .*)$", entry, flags=re.M)
        if command and message:
            out[head] = (command.group(1), message.group(1))
    return out


def _no_output(root: Path, case: Case) -> None:
    if case.output:
        target = root / case.output
        assert not target.exists(), f"{case.id}: {case.output} was written"
        if target.parent.is_dir():
            assert not list(target.parent.glob(f".{target.name}.*")), f"{case.id}: a temporary file was left"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_catalogue_entry(case, workdir, cli):
    rc, _, err = cli(*case.args, cwd=workdir)
    lines = err.splitlines()
    assert rc == 2, err
    assert len(lines) == 1 and lines[0].startswith("xleval: error: "), err
    assert "Traceback" not in err
    _no_output(workdir, case)
    command, message = _documented().get(case.id, (None, None))
    assert command == "xleval " + " ".join(case.args), f"{case.id}: docs/errors.md shows another command"
    assert message == lines[0], f"{case.id}: docs/errors.md shows another message"


@pytest.mark.parametrize("case_id", [c if c in SUBPROCESS_FAST else pytest.param(c, marks=pytest.mark.slow)
                                     for c in SUBPROCESS])
def test_catalogue_entry_in_a_real_process(case_id, workdir, cli_process):
    case = next(c for c in CASES if c.id == case_id)
    rc, _, err = cli_process(*case.args, cwd=workdir)
    assert rc == 2, err
    assert err.count("\n") == 1 and err.startswith("xleval: error: "), err
    assert "Traceback" not in err
    _no_output(workdir, case)


def test_debug_shows_the_traceback(workdir, cli):
    from xleval.exceptions import InputError

    with pytest.raises(InputError):  # --debug re-raises (the console then prints the traceback)
        cli("--debug", *CASES[0].args, cwd=workdir)


def test_output_folder_without_write_permission(workdir):
    """As root the permission bits do not bind, so run the command as 'nobody' (setpriv)."""
    folder = workdir / "readonly"
    folder.mkdir(exist_ok=True)
    folder.chmod(0o555)
    command = xleval_command(*APPLY.split(), "scores.tsv", "-o", "readonly/o.tsv")
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot drop the write permission")
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    proc = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "xleval: error: readonly/o.tsv: output directory readonly is not writable\n"
    assert list(folder.iterdir()) == []


def test_catalogue_is_documented_and_large_enough():
    documented = _documented()
    assert len(CASES) >= 30 and len({c.id for c in CASES}) == len(CASES)
    assert sorted(documented) == sorted(c.id for c in CASES), "docs/errors.md and CASES list different entries"


# accepted inputs: not errors, but never silent --------------------------------------------------------------
ACCEPTED = {
    "nan_inf_scores": ("scores.tsv", lambda df: df.assign(score=df["score"].where(~df.index.isin([3, 4]), np.nan)
                                                          .where(df.index != 5, np.inf)), "3 row(s) have a missing"),
    "one_row_group": ("scores.tsv", lambda df: pd.concat([df, df.iloc[[0]].assign(lp="en-ja")], ignore_index=True),
                      "zero spread"),
    "small_group": ("scores.tsv", lambda df: pd.concat([df, df.iloc[:5].assign(lp="en-ja")], ignore_index=True),
                    "fewer than --min-count 50"),  # the command's JSON names its flag, as its text does
    "constant_group": ("scores.tsv", lambda df: df.assign(score=df["score"].where(df["lp"] != "en-fr", 50.0)),
                       "zero spread"),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_inputs_keep_every_row_and_warn(name, tmp_path, cli):
    _, change, warning = ACCEPTED[name]
    df = change(_scores())
    source = tmp_path / "in.tsv"
    source.write_bytes(_tsv(df))
    model, out = tmp_path / "m.json", tmp_path / "out.tsv"
    rc, stdout, err = cli("calibrate", "fit", source, "--score", "score", "-o", model, "--format", "json")
    assert rc == 0, err
    fit_notes = json.loads(stdout)["warnings"]
    rc, stdout, err = cli("calibrate", "apply", model, source, "-o", out, "--format", "json")
    assert rc == 0, err
    notes = fit_notes + json.loads(stdout)["warnings"]
    assert any(warning in n for n in notes), notes
    result = pd.read_csv(out, sep="\t", keep_default_na=False)
    assert len(result) == len(df) and result["seg_id"].tolist() == df["seg_id"].tolist()


def test_crlf_and_mixed_line_endings_read_like_lf(tmp_path):
    from xleval.io import read_table

    tsv = _tsv(_scores())
    lines = tsv.split(b"\n")
    mixed = b"\n".join(line + (b"\r" if i % 2 else b"") for i, line in enumerate(lines[:-1])) + b"\n"
    (tmp_path / "lf.tsv").write_bytes(tsv)
    (tmp_path / "mixed.tsv").write_bytes(mixed)
    (tmp_path / "crlf.csv").write_bytes(_scores().to_csv(index=False, lineterminator="\r\n").encode())
    expected = read_table(tmp_path / "lf.tsv")
    pd.testing.assert_frame_equal(read_table(tmp_path / "mixed.tsv"), expected)
    pd.testing.assert_frame_equal(read_table(tmp_path / "crlf.csv"), expected)


# regenerating the doc's entries ------------------------------------------------------------------------------
def _render_entries(root: Path) -> str:
    blocks = []
    for case in CASES:
        message = run_cli(*case.args, cwd=root).stderr.strip()
        blocks.append(f"### {case.id} {case.mistake}\n\n```text\n$ xleval {' '.join(case.args)}\n{message}\n```\n\n"
                      f"**Fix:** {case.fix}\n")
    return "\n".join(blocks)


if __name__ == "__main__":  # python tests/test_errors_catalogue.py: rewrite the entries of docs/errors.md
    root = Path(tempfile.mkdtemp(prefix="xleval-errors-"))
    _write_files(root)
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "<!-- entries -->\n"
    head, marker, rest = text.partition("<!-- entries -->")
    hostile = "<!-- hostile inputs, round 4 -->"  # the section tests/test_hostile_round4.py writes: kept as it is
    tail = rest[rest.index(hostile):] if hostile in rest else ""
    DOC.write_text(head + marker + "\n\n" + _render_entries(root) + ("\n" + tail if tail else ""), encoding="utf-8")
    shutil.rmtree(root, ignore_errors=True)
    print(f"wrote {len(CASES)} entries to {DOC}")


# the streamed path (xleval.scale) refuses what the in-memory path refuses ----------------------------------
@pytest.mark.parametrize("name, data", [("short.tsv", b"lp\tscore\tx\nen-de\t1\ta\nen-de\t2\nen-fr\t3\tc\n"),
                                        ("short.csv", b"lp,score,x\nen-de,1,a\nen-de,2\nen-fr,3,c\n")])
def test_streamed_rows_of_another_width_are_refused(name, data, workdir, cli):
    (workdir / name).write_bytes(data)
    rc, _, err = cli(*APPLY.split(), name, "-o", f"out/stream-{name}", "--chunk-size", "2", cwd=workdir)
    assert rc == 2 and "row 2" in err and not (workdir / f"out/stream-{name}").exists()


def test_chunk_size_zero_is_refused(workdir, cli):
    rc, _, err = cli(*APPLY.split(), "scores.tsv", "-o", "out/chunk0.tsv", "--chunk-size", "0", cwd=workdir)
    assert rc == 2 and "'--chunk-size': 0 is not in the range x>=1" in err


def test_rewriting_a_table_without_metadata_removes_its_stale_sidecar(tmp_path):
    """A PATH.signatures.json left by an earlier write would lend its signatures to the new table."""
    from xleval.io import read_table_metadata, write_table

    path = tmp_path / "t.tsv"
    write_table(_scores(), path, metadata={"signatures": {"score": SIG_CHRF}})
    assert read_table_metadata(path) == {"signatures": {"score": SIG_CHRF}}
    write_table(_scores(1), path)
    assert read_table_metadata(path) == {} and sorted(p.name for p in tmp_path.iterdir()) == ["t.tsv"]
