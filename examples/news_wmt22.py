"""Issue 33's news raw-DA set, rebuilt from public files as far as they go: WMT22's to-English DA.

WMT22's general task judged its seven to-English pairs (cs, de, ja, liv, ru, uk, zh into English) with
reference-based raw DA on MTurk; github.com/wmt-conference/wmt22-news-systems holds the segment scores in
``humaneval/DA/newstest2022-toen/ad-seg-scores-<xx>-en.csv`` (already averaged over judgments; Livonian is
``lv``), the outputs in ``txt/`` and the documents in ``xml/wmttest2022.<lp>.all.xml``; read here as ``xleval
ingest wmt --da`` reads them. 70 MT cells: close to the 71 cells issue 33 counts on
its news set, so this is likely that set. A DA ``SID`` is the 1-based position of the segment in the test set with
its documents sorted by id as text (WMT21's convention, ``$XLEVAL_DATA/README.md``): read so, sentence chrF
against reference A correlates with the raw DA at 0.17-0.39 per pair; read as the position in the file, at
0.00-0.16 (both printed).

**Only four pairs can be rebuilt.** The repository's copies of the cs-en, de-en and zh-en XML files are Git LFS
objects the public snapshot does not hold, and no other public file names their documents, so their SIDs cannot be
placed. This example reads ja-en, liv-en, ru-en and uk-en (38 MT cells) and reports the figures issue 33 checks on
the news set for those four; it is not the issue's seven-pair set, and its figures are not the issue's. Human
translations (``HUMAN-*`` in the DA files) are left out.

    PYTHONPATH=src python examples/news_wmt22.py --wmt22-repo PATH [--draws 10] [--k 25,50,100]

(about 65 s with 10 draws, 170 s with 40, on 2 cores.) It prints the cells' lines from every label (the common
between-system slope, each pair's own, the slope of the pairs' levels), the decision study
(``decision_check.run``, ``human_scale="da"``) and the leaderboard at K = 100 (anchored, ``--human-scale da``,
1,000 resamples) beside issue 33's plain procedure. The ratings are not in the shared data; no test reads them.
docs/calibration.md ("Issue 33's news set") quotes the output.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from xleval.exceptions import DataQualityWarning
from xleval.io import attach_wmt_da, read_wmt_folder
from xleval.metrics import score_frame

sys.path.insert(0, str(Path(__file__).resolve().parent))
import decision_check

PAIRS = ("ja-en", "liv-en", "ru-en", "uk-en")
DA_NAME = {"liv": "lv"}  # the DA files name Livonian "lv"


def load(repo: str | Path, order: str = "sorted") -> pd.DataFrame:
    """One row per judged MT segment: ``lp, system, doc_id, seg_id`` (the txt line), ``human_raw`` and ``chrf``, read
    as ``xleval ingest wmt PATH -l ja-en ... --da ja-en=humaneval/DA/newstest2022-toen/ad-seg-scores-ja-en.csv
    ...`` reads them (:func:`xleval.io.read_wmt_folder`, :func:`xleval.io.attach_wmt_da`; human translations left
    out with a warning). ``order="file"`` reads a SID as the segment's position in the file instead (the reading
    the correlation rules out)."""
    return judged(*scored_folder(repo), order)


def scored_folder(repo: str | Path) -> tuple[pd.DataFrame, dict[str, Path], Path]:
    """Every output line of the four pairs with its sentence chrF, the pairs' DA files and the folder: scored once,
    whichever way the SIDs are then read (:func:`judged`)."""
    repo = Path(repo)
    da = {}
    for lp in PAIRS:
        src = lp.split("-")[0]
        da[lp] = repo / "humaneval" / "DA" / "newstest2022-toen" / f"ad-seg-scores-{DA_NAME.get(src, src)}-en.csv"
        xml = repo / "xml" / f"wmttest2022.{lp}.all.xml"
        if not xml.is_file() or not da[lp].is_file():
            print(f"news_wmt22: no {xml if not xml.is_file() else da[lp]}; --wmt22-repo names a clone of "
                  "github.com/wmt-conference/wmt22-news-systems", file=sys.stderr)
            raise SystemExit(2)
    folder = read_wmt_folder(repo, test_set="generaltest2022", lps=list(PAIRS))
    return score_frame(folder, ["chrf"]).frame, da, repo


def judged(scored: pd.DataFrame, da: dict[str, Path], repo: Path, order: str = "sorted") -> pd.DataFrame:
    """The judged rows of :func:`scored_folder`'s table, its SIDs read in ``order``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # the DA's human translations (HUMAN-*): left out
        table = attach_wmt_da(scored, da, root=repo, order=order)
    table = table[table["human_n"] > 0].reset_index(drop=True)
    return table[["lp", "system", "doc_id", "seg_id", "human_raw", "chrf"]]


def cells_lines(cells: pd.DataFrame) -> str:
    """The cells' lines from every label: the between-system slope of DA on chrF (one intercept per pair), each
    pair's own, the slope of the pairs' DA levels on their chrF levels, and the cross-pair accuracy of each pair's
    DA mean plus the common or the pair's own slope times the cell's chrF distance from the pair's mean."""
    by = cells.groupby("lp")
    h = cells["human_raw"] - by["human_raw"].transform("mean")
    x = cells["chrf"] - by["chrf"].transform("mean")
    common = float((h * x).sum() / (x * x).sum())
    own = (h * x).groupby(cells["lp"]).sum() / (x * x).groupby(cells["lp"]).sum()
    levels = np.polyfit(by["chrf"].mean(), by["human_raw"].mean(), 1)[0]
    lp = cells["lp"].to_numpy()
    a, b = np.triu_indices(len(cells), k=1)
    a, b = a[lp[a] != lp[b]], b[lp[a] != lp[b]]
    truth = cells["human_raw"].to_numpy()

    def accuracy(pred: np.ndarray) -> float:
        return float(np.mean(np.sign(pred[a] - pred[b]) == np.sign(truth[a] - truth[b])))

    base = by["human_raw"].transform("mean")
    return (f"the cells' lines (every label): between-system slope {common:.2f} DA per chrF point, each pair's own "
            + ", ".join(f"{k} {v:.2f}" for k, v in own.items()) + f"; the pairs' levels {levels:.2f}; cross-pair "
            f"accuracy of pair mean + slope x distance: common {accuracy((base + common * x).to_numpy()):.3f}, "
            f"own {accuracy((base + cells['lp'].map(own) * x).to_numpy()):.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wmt22-repo", required=True, help="a clone of github.com/wmt-conference/wmt22-news-systems")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--k", default="25,50,100", help="labels per pair")
    args = parser.parse_args(argv)
    start = time.time()
    folder = scored_folder(args.wmt22_repo)
    table = judged(*folder)
    cells = table.groupby(["lp", "system"])[["human_raw", "chrf"]].mean()
    corr = {lp: part["chrf"].corr(part["human_raw"]) for lp, part in table.groupby("lp")}
    print(f"WMT22 to-English ({', '.join(PAIRS)}): {len(table):,} judged segments, {len(cells)} cells; pair means of "
          "the cells: " + "; ".join(f"{lp} DA {row['human_raw']:.2f}, chrF {row['chrf']:.1f}"
                                    for lp, row in cells.groupby(level="lp").mean().iterrows())
          + "; segment chrF~DA correlation " + ", ".join(f"{lp} {c:.2f}" for lp, c in corr.items()), flush=True)
    misread = judged(*folder, order="file")
    print("read as the position in the file, the correlation would be "
          + ", ".join(f"{lp} {part['chrf'].corr(part['human_raw']):.2f}" for lp, part in misread.groupby("lp")),
          flush=True)
    print(cells_lines(cells.reset_index()), flush=True)
    decision_check.held_out_report(table, "human_raw", args.draws, [int(v) for v in args.k.split(",")])
    print(f"\n{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
