"""Issue 33's Wikipedia raw-DA set, rebuilt from public files: WMT21's Wikipedia task (bn-hi, hi-bn, xh-zu, zu-xh).

The WMT21 news-systems repository (github.com/wmt-conference/wmt21-news-systems) holds the outputs of the
large-scale multilingual (Wikipedia, FLORES) task in ``xml/florestest2021.<lp>.all.xml`` and its segment-level raw
DA in ``humaneval/facebook-wikipedia-2021/ad-seg-scores-<lp>.csv`` (already averaged over judgments). A DA ``SID``
such as ``bn-hi-0-117-1001712.3_3`` names the document by its 1-based position among the test set's document ids
sorted as text (the fourth field) and the segment within it (after the dot): the convention of WMT21's news DA
(``$XLEVAL_DATA/README.md``). Read so, every judged segment finds its output and reference (none is left over),
and sentence chrF against reference A correlates with the raw DA at 0.11-0.41 per pair (both printed). System
names lose the DA files' ``.N`` suffix. This gives 29 cells (9, 9, 6, 5
systems); issue 33's plain procedure declares 67% of the cross-pair orders at K = 100 here, 0.6% of them wrong
(the issue: 59% and 0.5% on its Wikipedia set).

    PYTHONPATH=src python examples/wikipedia_wmt21.py --wmt21-repo PATH [--draws 10] [--k 25,50,100]

(15 s on 2 cores.) It prints the decision study (``decision_check.run``, ``human_scale="da"``) and
the leaderboard at K = 100 (anchored, ``--human-scale da``, 1,000 resamples) beside issue 33's plain procedure, and
the leaderboard's estimate of the cells' deviation variance from every judged segment and on average at K = 100.
The ratings are not in the shared data; no test reads them. docs/calibration.md ("Issue 33's Wikipedia set")
quotes the output.
"""
from __future__ import annotations

import argparse
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd

from xleval.io import da_sid_lines, wmt_xml_documents
from xleval.metrics import score_frame

sys.path.insert(0, str(Path(__file__).resolve().parent))
import decision_check

PAIRS = ("bn-hi", "hi-bn", "xh-zu", "zu-xh")


def load(repo: str | Path) -> pd.DataFrame:
    """One row per judged segment: ``lp, system, doc_id, seg_id`` (the line in file order), ``human_raw`` and
    ``chrf``. The SIDs are placed by :func:`xleval.io.da_sid_lines` on the XML's documents, as ``xleval ingest wmt
    --da`` places them (the repository has no ``txt/`` for this test set, so the texts come from the XML)."""
    repo, parts = Path(repo), []
    for lp in PAIRS:
        xml = repo / "xml" / f"florestest2021.{lp}.all.xml"
        scores = repo / "humaneval" / "facebook-wikipedia-2021" / f"ad-seg-scores-{lp}.csv"
        if not xml.is_file() or not scores.is_file():
            print(f"wikipedia_wmt21: no {xml if not xml.is_file() else scores}; --wmt21-repo names a clone of "
                  "github.com/wmt-conference/wmt21-news-systems", file=sys.stderr)
            raise SystemExit(2)
        reference: list[str] = []
        outputs: dict[str, list[str]] = {}
        for doc in ET.parse(xml).getroot().iter("doc"):  # the texts in file order, the lines of the test set
            reference += [s.text or "" for s in doc.find("ref").iter("seg")]
            for h in doc.findall("hyp"):
                outputs.setdefault(h.get("system"), []).extend(s.text or "" for s in h.iter("seg"))
        documents = wmt_xml_documents(xml)
        doc_of = np.repeat([d for d, _ in documents], [n for _, n in documents])
        da = pd.read_csv(scores, sep=r"\s+")
        lines = da_sid_lines(da["SID"].tolist(), documents)
        systems = da["SYS"].str.replace(r"\.\d+$", "", regex=True)
        parts.append(pd.DataFrame({
            "lp": lp, "system": systems, "doc_id": doc_of[lines - 1], "seg_id": lines,
            "human_raw": da["RAW.SCR"].astype(float),
            "reference": [reference[n - 1] for n in lines],
            "hypothesis": [outputs[y][n - 1] for y, n in zip(systems, lines, strict=True)]}))
    table = score_frame(pd.concat(parts, ignore_index=True), ["chrf"]).frame
    return table.drop(columns=["reference", "hypothesis"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wmt21-repo", required=True, help="a clone of github.com/wmt-conference/wmt21-news-systems")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--k", default="25,50,100", help="labels per pair")
    args = parser.parse_args(argv)
    start = time.time()
    table = load(args.wmt21_repo)
    cells = table.groupby(["lp", "system"])[["human_raw", "chrf"]].mean()
    corr = {lp: part["chrf"].corr(part["human_raw"]) for lp, part in table.groupby("lp")}
    # the pairs' raters differ: the DA's sd within a cell, per pair (median and range over its systems)
    spread = table.groupby(["lp", "system"])["human_raw"].std().groupby(level="lp").agg(["median", "min", "max"])
    print(f"WMT21 Wikipedia: {len(table):,} judged segments, {len(cells)} cells; pair means of the cells: "
          + "; ".join(f"{lp} DA {row['human_raw']:.2f}, chrF {row['chrf']:.1f}"
                      for lp, row in cells.groupby(level="lp").mean().iterrows())
          + "; segment chrF~DA correlation " + ", ".join(f"{lp} {c:.2f}" for lp, c in corr.items())
          + "; DA sd within a cell, median (range) over the pair's systems: "
          + ", ".join(f"{lp} {r['median']:.1f} ({r['min']:.1f}-{r['max']:.1f})" for lp, r in spread.iterrows()),
          flush=True)
    decision_check.held_out_report(table, "human_raw", args.draws, [int(v) for v in args.k.split(",")])
    print(f"\n{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
