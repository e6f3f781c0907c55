"""The Dask backend on a 2-worker LocalCluster (loopback, worker processes): the same results as the
single-process path (apply and score bit-identical, fit within 1e-12 relative), one metric model
per worker."""
import json
import platform
import sys
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xleval.calibration import LGN, calibrate_frame, prepare_frame
from xleval.io import write_table
from xleval.metrics import Metric
from xleval.scale import ApplyOptions, DaskBackend, apply_chunked, bias_chunked, fit_chunked, score_chunked
from xleval.scale._backend import FramePart, ParquetPart, ReadSpec

pytest.importorskip("distributed")
pytestmark = pytest.mark.dask

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from test_scale_chunked import assert_same_fit, generated  # noqa: E402

WARMED = ("xleval.scale._chunked", "xleval.metrics._bleu", "xleval.metrics._chrf", "langcodes")
FRESH: dict = {}


def _loaded(names):
    return [name in sys.modules for name in names]


@pytest.fixture(scope="module")
def cluster():
    import cloudpickle

    # worker processes cannot import this test module: ship its classes by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's start-up chatter (ports, deprecations) is not ours
        backend = DaskBackend(workers=2, processes=True).__enter__()
    # what the workers hold before any task ran (test_workers_are_warmed_when_the_cluster_is_entered)
    FRESH["modules"] = backend.client.run(_loaded, WARMED)
    FRESH["faults"] = [backend.client.submit(_faults_of_buffers, 0, workers=[w], pure=False).result()
                       for w in backend.client.scheduler_info()["workers"]]
    yield backend
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backend.__exit__(None, None, None)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    df = generated(20_000, seed=5)
    root = tmp_path_factory.mktemp("dask")
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), root / "t.parquet", row_group_size=1500)
    write_table(df, root / "t.csv")
    return df, root


@pytest.mark.parametrize("name", ["t.parquet", "t.csv"])
def test_dask_fit_equals_single_process(cluster, table, name):
    df, root = table
    local = fit_chunked(LGN(by="lp", score="score"), root / name, chunk_size=2000)
    dask = fit_chunked(LGN(by="lp", score="score"), root / name, chunk_size=2000, backend=cluster)
    assert_same_fit(dask, local, rtol=1e-12)
    assert_same_fit(dask, LGN(by="lp", score="score").fit(prepare_frame(df, ["lp"])), rtol=1e-12)


@pytest.mark.parametrize("row_group", [2000, 6000])
def test_dask_fit_is_bit_identical_to_single_process_on_the_same_batches(cluster, table, tmp_path, row_group):
    """Row groups of a multiple of chunk_size rows: the workers read the batches the single process reads
    and return each batch's statistics; merged in input order on the client, the fits are the same bits
    (with 6000-row groups a part holds three batches: merged inside the part first, the sums were grouped
    differently and the bits differed)."""
    df, _ = table
    path = tmp_path / "aligned.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=row_group)
    local = fit_chunked(LGN(by="lp", score="score"), path, chunk_size=2000)
    dask = fit_chunked(LGN(by="lp", score="score"), path, chunk_size=2000, backend=cluster)
    assert json.dumps(dask.to_dict(), sort_keys=True) == json.dumps(local.to_dict(), sort_keys=True)
    assert_same_fit(dask, local, rtol=0)


@pytest.mark.parametrize("name", ["t.parquet", "t.csv"])
def test_dask_apply_is_bit_identical(cluster, table, tmp_path, name):
    df, root = table
    model = LGN(by="lp", score="score").fit(prepare_frame(df, ["lp"]))
    with pytest.warns(Warning, match="row\\(s\\) have a missing"):
        result = apply_chunked(model, root / name, tmp_path / "d.parquet", ApplyOptions(interval=0.95), chunk_size=2000,
                               backend=cluster)
    with pytest.warns(Warning, match="row\\(s\\) have a missing"):
        apply_chunked(model, root / name, tmp_path / "l.parquet", ApplyOptions(interval=0.95), chunk_size=2000)
    got, single = pd.read_parquet(tmp_path / "d.parquet"), pd.read_parquet(tmp_path / "l.parquet")
    assert result.backend == "dask" and result.rows == len(df)
    assert got.equals(single)
    assert got["row"].astype(int).tolist() == list(range(len(df)))
    with pytest.warns(Warning, match="row\\(s\\) have a missing"):
        expected = calibrate_frame(model, df, interval=0.95)
    np.testing.assert_array_equal(got["score_lgn"].to_numpy(), expected["score_lgn"].to_numpy())


def test_dask_bias_equals_single_process(cluster, table):
    _, root = table
    local = bias_chunked(root / "t.parquet", "score", "lp", chunk_size=3000)
    dask = bias_chunked(root / "t.parquet", "score", "lp", chunk_size=3000, backend=cluster)
    pd.testing.assert_frame_equal(dask.groups, local.groups, rtol=1e-12)
    assert dask.eta_squared == pytest.approx(local.eta_squared, rel=1e-12)


class LoadCountingMetric(Metric):
    """A metric with a lazily loaded 'model' (dropped when pickled, like the neural adapters); each load
    appends the worker's pid to a log file, so the test can count loads per worker."""

    name = "fake"
    needs_refs = False

    def __init__(self, log: str):
        self.log = log
        self._model = None

    def _signature_fields(self):
        return {"fake": "1"}

    def __getstate__(self):
        return {**self.__dict__, "_model": None}

    def _sentence_scores(self, hyps, refs, srcs):
        if self._model is None:
            import os

            with open(self.log, "a") as fh:
                fh.write(f"{os.getpid()}\n")
            self._model = 2.0
        return np.array([len(h) * self._model for h in hyps], dtype=float)


def test_dask_scoring_loads_one_model_per_worker(cluster, tmp_path):
    n = 3000
    df = pd.DataFrame({"lp": "de-en", "hypothesis": [f"segment {i}" * (i % 5 + 1) for i in range(n)]})
    pq.write_table(pa.Table.from_pandas(df), tmp_path / "h.parquet", row_group_size=250)  # 12 parts
    log = tmp_path / "loads.txt"
    result = score_chunked([LoadCountingMetric(str(log))], tmp_path / "h.parquet", tmp_path / "s.parquet",
                           chunk_size=250, backend=cluster)
    pids = log.read_text().split()
    assert result.batches == 12 and len(pids) == len(set(pids)) <= 2  # once per worker, not once per part
    got = pd.read_parquet(tmp_path / "s.parquet")
    np.testing.assert_array_equal(got["fake"].to_numpy(), df["hypothesis"].str.len().to_numpy() * 2.0)


@pytest.mark.data
@pytest.mark.parametrize("name", ["w.parquet", "w.tsv"])
def test_dask_scores_join_the_clients_rows_into_the_single_process_table(cluster, tmp_path, wmt21_segments, name):
    """The workers return the score columns only; the client joins them to the rows it reads itself (a
    Parquet part: the workers read the same rows) or shipped (TSV): the written table is the single
    process's, and its scores are the metrics' own on the whole lists."""
    from xleval.metrics import BLEU, CHRF

    df = wmt21_segments.sample(3000, random_state=4)[["lp", "system", "hypothesis", "reference"]]
    df = df.reset_index(drop=True)
    if name.endswith(".parquet"):  # 12 row groups of 250 rows: parts of 2 row groups, read by the workers
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / name, row_group_size=250)
    else:
        write_table(df, tmp_path / name)
    metrics = [BLEU(tokenize="13a"), CHRF()]
    dask = score_chunked(metrics, tmp_path / name, tmp_path / "d.parquet", chunk_size=500, backend=cluster)
    local = score_chunked(metrics, tmp_path / name, tmp_path / "l.parquet", chunk_size=500)
    got, single = pd.read_parquet(tmp_path / "d.parquet"), pd.read_parquet(tmp_path / "l.parquet")
    assert dask.backend == "dask" and dask.rows == len(df) and dask.batches == local.batches == 6
    assert got.equals(single) and dask.mean_segment_score == local.mean_segment_score
    assert got[["lp", "system", "hypothesis", "reference"]].astype(object).equals(df.astype(object))
    hyps, refs = df["hypothesis"].tolist(), df["reference"].tolist()
    for metric in metrics:
        np.testing.assert_array_equal(got[metric.name].to_numpy(), metric.sentence_scores(hyps, [refs]))


def test_workers_are_warmed_when_the_cluster_is_entered(cluster):
    """Entering the backend imports the chunked operations and the metrics on every worker (checked on
    the module's cluster as entered, before any task ran), so no task pays for the imports (a short run
    never earned them back)."""
    loaded = FRESH["modules"]
    assert len(loaded) == 2 and all(all(v) for v in loaded.values())


def _faults_of_buffers(rounds_before):
    """Page faults while three 16 MiB buffers (a batch's float columns) are allocated and freed 5 times,
    after ``rounds_before`` rounds that let the heap grow."""
    import resource

    import numpy as np

    def round_trip():
        blocks = [np.ones(1 << 21) for _ in range(3)]
        del blocks

    for _ in range(rounds_before):
        round_trip()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        round_trip()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


#: page faults a warm worker may still take: cold ones take 5,000-7,200 (below); a warm first task took 520 once,
#: under the whole suite's load on 2 cores, against the 500 these tests allowed
FEW_FAULTS = 1_000


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc settings")
def test_local_workers_reuse_freed_batch_buffers(cluster):
    # Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 for its workers, which turns glibc's adaptive mmap
    # threshold off (every batch-sized buffer a fresh mmap: ~30% more CPU in BLEU/chrF tasks); even glibc's
    # default hands a freed batch back and faults it in again (~5,000 faults here: 10 buffers of 4,096
    # pages). The local cluster's workers keep it: no page is faulted in again.
    faults = cluster.client.run(_faults_of_buffers, 2)
    assert len(faults) == 2 and all(n < FEW_FAULTS for n in faults.values()), faults


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc settings")
def test_the_first_task_on_a_worker_finds_a_batch_of_heap(cluster):
    # entering the backend grows the heap of each worker's task thread by 64 MiB (glibc gives each thread
    # its own), which the workers keep: the first task's 48 MiB of buffers fault in no fresh page (7,200
    # without the warm-up), so a cluster's first fit is not slower than its next
    assert len(FRESH["faults"]) == 2 and all(n < FEW_FAULTS for n in FRESH["faults"]), FRESH["faults"]


def _decoding_threads():
    from xleval.scale._backend import DECODING

    return DECODING["threads"]


def test_workers_decode_their_parts_in_the_task_thread(cluster):
    # a worker is one task thread per core: pyarrow's own decoding threads only compete with the other
    # workers (docs/scale.md); the client keeps them (it reads alone while the workers compute)
    assert set(cluster.client.run(_decoding_threads).values()) == {False}
    assert _decoding_threads() is True


class _Future:
    def __init__(self, log, value):
        self.log, self.value = log, value

    def result(self):
        self.log.append("result")
        return self.value

    def cancel(self):
        pass


class _Client:
    """Records the order of submissions and of results taken (no cluster)."""

    def __init__(self):
        self.log = []

    def submit(self, func, part, *args, pure):
        self.log.append("submit")
        return _Future(self.log, func(part, *args))

    def nthreads(self):
        return {"tcp://a": 1, "tcp://b": 1}


def _index(part):
    return part.index if isinstance(part, ParquetPart) else part.batch.index


@pytest.mark.parametrize("small, kind, submitted_first", [(True, "parquet", 10), (False, "parquet", 4),
                                                          (True, "shipped", 4), (False, "shipped", 4)])
def test_dask_map_bounds_what_can_pile_up_and_nothing_else(small, kind, submitted_first):
    """Parts the workers read with small results (fit, bias) are all submitted before the first result is
    taken, so no worker waits for the client; shipped batches or large results stay 2 per worker thread."""
    from xleval.scale._readers import TableBatch

    spec = ReadSpec("t.parquet", 10)
    parts = [ParquetPart(spec, (i,), 10 * i, i) if kind == "parquet" else
             FramePart(TableBatch(pd.DataFrame({"x": [i]}), i, i)) for i in range(10)]
    client = _Client()
    got = list(DaskBackend(client=client).map(_index, iter(parts), small=small))
    assert got == list(range(10))  # in part order
    assert client.log.index("result") == submitted_first
    assert client.log.count("submit") == client.log.count("result") == 10
