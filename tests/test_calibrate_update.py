"""Online updates from the command line: `calibrate fit --decay/--window` and `calibrate update MODEL.json INPUT -o
NEW.json` (LGN.partial_fit, which Python alone reached before). The oracles are hand z-scores over the rows each
update should count (population sd, as LGN's docs say)."""
import json

import numpy as np
import pandas as pd
import pytest

SIG = "chrF2|nrefs:1"


def _batches(tmp_path, n=3):
    rng = np.random.default_rng(0)
    paths, frames = [], []
    for i in range(n):
        groups = ["de-en", "cs-en"] + (["ja-en"] if i == n - 1 else [])
        df = pd.DataFrame({"lp": rng.choice(groups, 200), "system": "s", "seg_id": np.arange(200),
                           "score": rng.normal(50 + 5 * i, 10 + i, 200)})
        paths.append(tmp_path / f"b{i}.tsv")
        df.to_csv(paths[-1], sep="\t", index=False)
        frames.append(df)
    return paths, frames


def _hand_z(rows: pd.DataFrame, weights: np.ndarray, table: pd.DataFrame) -> np.ndarray:
    """z-scores of ``table`` by lp, from the weighted mean and population sd of ``rows``."""
    out = np.empty(len(table))
    for g, idx in table.groupby("lp").indices.items():
        mine = (rows["lp"] == g).to_numpy()
        x, w = rows["score"].to_numpy()[mine], weights[mine]
        mean = np.sum(w * x) / np.sum(w)
        sd = np.sqrt(np.sum(w * (x - mean) ** 2) / np.sum(w))
        out[idx] = (table["score"].to_numpy()[idx] - mean) / sd
    return out


def _applied(cli, tmp_path, model, table_path) -> np.ndarray:
    out = tmp_path / "applied.tsv"
    r = cli("calibrate", "apply", model, table_path, "-o", out, "--signature", SIG)
    assert r.exit_code == 0, r.stderr
    return pd.read_csv(out, sep="\t")["score_lgn"].to_numpy()


def _fit_and_update(cli, tmp_path, paths, *fit_options):
    r = cli("calibrate", "fit", paths[0], "--score", "score", "--method", "lgn", "-o", tmp_path / "m0.json",
            "--signature", SIG, "--min-count", "1", *fit_options)
    assert r.exit_code == 0, r.stderr
    for i, path in enumerate(paths[1:], start=1):
        r = cli("calibrate", "update", tmp_path / f"m{i - 1}.json", path, "-o", tmp_path / f"m{i}.json",
                "--signature", SIG)
        assert r.exit_code == 0, r.stderr
    return tmp_path / f"m{len(paths) - 1}.json"


@pytest.mark.parametrize("options, weights", [
    ((), lambda sizes: np.ones(sum(sizes))),  # every batch alike: one fit on all the rows
    (("--window", "2"), lambda sizes: np.r_[np.zeros(sizes[0]), np.ones(sizes[1] + sizes[2])]),
    (("--decay", "0.5"), lambda sizes: np.r_[np.full(sizes[0], 0.25), np.full(sizes[1], 0.5), np.ones(sizes[2])]),
])
def test_updates_count_the_rows_they_should(tmp_path, cli, options, weights):
    paths, frames = _batches(tmp_path)
    model = _fit_and_update(cli, tmp_path, paths, *options)
    rows = pd.concat(frames, ignore_index=True)
    rows.to_csv(tmp_path / "all.tsv", sep="\t", index=False)
    expected = _hand_z(rows, weights([len(f) for f in frames]), rows)
    assert np.allclose(_applied(cli, tmp_path, model, tmp_path / "all.tsv"), expected, rtol=0, atol=1e-9)
    saved = json.loads(model.read_text())
    assert saved["n_batches"] == 3


def test_update_refuses_what_it_cannot_do(tmp_path, cli):
    paths, _ = _batches(tmp_path, 2)
    model = _fit_and_update(cli, tmp_path, paths[:1])
    # never onto its input
    r = cli("calibrate", "update", model, paths[1], "-o", model, "--signature", SIG)
    assert r.exit_code == 2 and "input" in r.stderr
    # scores of another metric
    r = cli("calibrate", "update", model, paths[1], "-o", tmp_path / "x.json", "--signature", "BLEU|nrefs:1")
    assert r.exit_code == 2 and "BLEU" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "x.json").exists()
    # an anchored calibrator has no online update
    df = pd.read_csv(paths[0], sep="\t").assign(human=lambda d: np.where(d["seg_id"] % 4 == 0, d["score"], np.nan))
    df.to_csv(tmp_path / "h.tsv", sep="\t", index=False)
    import warnings

    from xleval.exceptions import DataQualityWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        r = cli("calibrate", "fit", tmp_path / "h.tsv", "--score", "score", "--method", "anchored", "--human", "human",
                "--human-higher-is-better", "--system", "system", "-o", tmp_path / "a.json")
    assert r.exit_code == 0, r.stderr
    r = cli("calibrate", "update", tmp_path / "a.json", paths[1], "-o", tmp_path / "y.json")
    assert r.exit_code == 2 and "no online update" in r.stderr
    # --decay and --window are LGN's, one at a time, in memory
    for extra, said in ((("--decay", "0.5", "--window", "2"), "give one of them"),
                        (("--window", "2", "--chunk-size", "50"), "fit in memory"),
                        (("--decay", "1.5"), "--decay")):
        r = cli("calibrate", "fit", paths[0], "--score", "score", "--method", "lgn", "-o", tmp_path / "z.json", *extra)
        assert r.exit_code == 2 and said in r.stderr, (extra, r.stderr)


def test_fallback_levels_are_read_as_a_list_of_names(tmp_path, cli):
    """`--fallback tgt_lang, pooled` (a space after the comma, as `--by lp, system` is read) is the chain
    tgt_lang then pooled; an empty level names the flag. Before: "fallback level ' pooled'" and "fallback level
    ''", the library's words."""
    paths, _ = _batches(tmp_path, 1)
    r = cli("calibrate", "fit", paths[0], "--score", "score", "--method", "lgn", "-o", tmp_path / "f.json",
            "--signature", SIG, "--fallback", "tgt_lang, pooled")
    assert r.exit_code == 0, r.stderr
    assert json.loads((tmp_path / "f.json").read_text())["params"]["fallback"] == ["tgt_lang", "pooled"]
    r = cli("calibrate", "fit", paths[0], "--score", "score", "--method", "lgn", "-o", tmp_path / "g.json",
            "--fallback", "tgt_lang,,pooled")
    assert r.exit_code == 2 and "--fallback 'tgt_lang,,pooled': an empty level" in r.stderr
