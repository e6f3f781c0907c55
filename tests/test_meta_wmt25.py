"""``meta --task wmt25`` on a WMT25-shaped table built from the shared data (wmt25-autoscores: the 16 pairs of
WMT25's metrics task, codes with regions and a script, e.g. en-sr_Cyrl_RS). The shared set has no human scores,
so a stand-in gold is taken from its judges with WMT25's mix of gold per pair: MQM-like gold (MetricX-24, scale
``mqm``) for en-ko_KR and ja-zh_CN, ESA-like gold (GEMBA-ESA with Command A, scale ``esa``) for the 14 others, in
one column with a ``gold_scale`` column as ``xleval ingest`` writes it. What is checked: every pair's code is read
as it is written; the ranking has mt-metrics-eval's WMT25 shape (system SPA + segment acc-t per pair, 32 tasks,
equal weights: the weighted average statistic is the plain mean of the 32 values, computed here by hand from the
cells); the same from a task file."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.stats import WMT25_LPS

pytestmark = pytest.mark.data

MQM_PAIRS = ("en-ko_KR", "ja-zh_CN")
METRICS = ("xcomet", "kiwi", "gemba_gpt")


@pytest.fixture(scope="module")
def wmt25_table(data_root, tmp_path_factory):
    folder = data_root / "wmt25-autoscores"
    files = sorted(folder.glob("*.jsonl.gz"))[:12]  # 12 systems (alphabetical) keep the test small
    rows = []
    for f in files:
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                if r["language_pair"] not in WMT25_LPS:
                    continue
                ms = r["metric_scores"]
                for i in range(len(ms["XCOMET-XL"])):
                    rows.append((r["language_pair"], f.name[:-len(".jsonl.gz")], f"{r['document_id']}#{i}",
                                 ms["XCOMET-XL"][i], ms["CometKiwi-XL"][i], ms["GEMBA-ESA-GPT4.1"][i],
                                 ms["GEMBA-ESA-CMDA"][i], ms["MetricX-24-Hybrid-XL"][i]))
    df = pd.DataFrame(rows, columns=["lp", "system", "seg_id", *METRICS, "cmda", "metricx"])
    parts = []
    for _, pair in df.groupby("lp"):
        systems = sorted(pair["system"].unique())[:4]
        kept = pair[pair["system"].isin(systems)].dropna()
        per_seg = kept.groupby("seg_id")["system"].nunique()
        segs = sorted(per_seg.index[per_seg == len(systems)])[:25]
        parts.append(kept[kept["seg_id"].isin(segs)])
    df = pd.concat(parts)
    mqm = df["lp"].isin(MQM_PAIRS)
    df["gold"] = np.where(mqm, df["metricx"], df["cmda"])
    df["gold_scale"] = np.where(mqm, "mqm", "esa")
    path = tmp_path_factory.mktemp("wmt25") / "wmt25.tsv"
    df.drop(columns=["cmda", "metricx"]).to_csv(path, sep="\t", index=False)
    return path


def _check_wmt25(out: dict) -> None:
    assert sorted(out["groups"]) == sorted(WMT25_LPS)  # regional codes and the script read as written
    assert {g: v["scale"] for g, v in out["groups"].items() if v["scale"] == "mqm"} == dict.fromkeys(MQM_PAIRS, "mqm")
    cells = {(c["group"], c["metric"], c["statistic"]): c["value"] for c in out["cells"]}
    assert set(out["ranking"]) == set(METRICS)
    for m in METRICS:
        values = [cells[(lp, m, stat)] for lp in WMT25_LPS for stat in ("spa", "seg_acc_t")]
        assert len(values) == 32
        assert out["ranking"][m]["average_statistic"] == pytest.approx(np.mean(values), abs=1e-12)


def test_task_wmt25_ranks_the_16_pairs_with_equal_weights(wmt25_table, tmp_path):
    args = ["meta", str(wmt25_table), "--metrics", ",".join(METRICS), "--human", "gold", "--task", "wmt25",
            "--cluster-resamples", "20", "--spa-permutations", "100", "--n-resamples", "20", "--no-pdp",
            "--format", "json"]
    r = run_cli(*args)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["task"] == "wmt25"
    _check_wmt25(out)
    tasks = [{"lang": lp, "level": level, "statistic": stat, "test_set": "wmt25"}
             for lp in WMT25_LPS for level, stat in (("sys", "spa"), ("seg", "acc_t"))]
    task_file = tmp_path / "tasks.json"
    task_file.write_text(json.dumps(tasks), encoding="utf-8")
    r2 = run_cli(*[a if a != "wmt25" else str(task_file) for a in args])
    assert r2.exit_code == 0, r2.stderr
    out2 = json.loads(r2.stdout)
    assert out2["task"] == "task list (32 tasks)"
    _check_wmt25(out2)
    assert out2["ranking"] == out["ranking"]
