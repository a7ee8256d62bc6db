"""scorekit.dask: the cluster result equals the single-process Arrow result bit for bit (on a
LocalCluster of two worker processes), per-item counts as a Dask dataframe, and errors naming the
partition and row."""

from __future__ import annotations

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from dask.distributed import Client, LocalCluster

import scorekit
import scorekit.dask
from _textgen import random_pairs
from scorekit.arrow import evaluate_arrow
from scorekit.errors import InvalidTypeError, InvalidValueError

pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index")


def _frame(seed: int, count: int) -> pd.DataFrame:
    pairs = random_pairs(seed, count)
    rng = np.random.default_rng(seed)
    labels = rng.choice(["latin", "cjk", "mixed"], count).tolist()
    for k in range(0, count, 13):
        labels[k] = None
    return pd.DataFrame({
        "pred": pd.array([p for p, _ in pairs], dtype="string[pyarrow]"),
        "gold": pd.array([g for _, g in pairs], dtype="string[pyarrow]"),
        "lang": pd.array(labels, dtype="string[pyarrow]"),
    })


def _same(a, b) -> None:
    assert (a.n, a.aggregate, a.detail, a.slice_counts, a.nulls) == (b.n, b.aggregate, b.detail, b.slice_counts, b.nulls)
    assert list(a.per_slice.items()) == list(b.per_slice.items())


@pytest.fixture(scope="module")
def cluster_client():
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        yield client


def test_cluster_equals_single_process(cluster_client):
    frame = _frame(1, 6000)
    ddf = dd.from_pandas(frame, npartitions=7)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for metric, normalize in (("cer", None), ("wer", ["nfkc", "lower", "collapse_whitespace"]), ("cer", str.upper)):
        single = evaluate_arrow(table, slice="lang", metric=metric, normalize=normalize)
        on_cluster = scorekit.dask.evaluate(ddf, slice="lang", metric=metric, normalize=normalize)
        _same(on_cluster, single)
        python = scorekit.evaluate(zip(frame.pred, frame.gold, frame.lang.astype(object).where(frame.lang.notna(), None)),
                                   metric=metric, normalize=normalize)
        assert (on_cluster.aggregate, on_cluster.detail, on_cluster.per_slice) == \
            (python.aggregate, python.detail, python.per_slice)
    assert set(cluster_client.scheduler_info()["workers"]) and len(cluster_client.scheduler_info()["workers"]) == 2


def test_per_item_dataframe(cluster_client):
    frame = _frame(2, 900)
    ddf = dd.from_pandas(frame, npartitions=3)
    report = scorekit.dask.evaluate(ddf, slice="lang", per_item=True)
    items = report.items.compute()
    single = evaluate_arrow(pa.Table.from_pandas(frame, preserve_index=False), slice="lang", per_item=True).items
    assert list(items.columns) == ["pred_len", "gold_len", "edits", "substitutions", "deletions", "insertions",
                                   "hits", "slice"]
    for name in ("edits", "gold_len", "pred_len", "hits"):
        assert items[name].tolist() == single.column(name).to_pylist()
    assert items.index.tolist() == frame.index.tolist()
    assert items["slice"].tolist() == frame["lang"].tolist()
    assert int(items["edits"].sum()) == report.detail["edits"]


def test_object_columns_and_nulls_on_the_default_scheduler():
    frame = pd.DataFrame({"pred": ["ct", None, "x"], "gold": ["cat", "dog", "x"]}, dtype=object)
    ddf = dd.from_pandas(frame, npartitions=2)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(InvalidValueError, match=r"column 'pred' partition 0 row 1 is null"):
            scorekit.dask.evaluate(ddf)
        report = scorekit.dask.evaluate(ddf, nulls="count")
    assert report.nulls == {"pred": 1, "gold": 0}
    assert report.detail == scorekit.evaluate([("ct", "cat"), (None, "dog"), ("x", "x")]).detail


def test_bad_input_is_named():
    frame = pd.DataFrame({"pred": ["a", "b"], "gold": ["a", "b"], "score": [1.0, 2.0]})
    ddf = dd.from_pandas(frame, npartitions=1)
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(InvalidValueError, match="gold column 'truth' not found"):
            scorekit.dask.evaluate(ddf, gold="truth")
        with pytest.raises(InvalidTypeError, match="pred column 'score' has type double"):
            scorekit.dask.evaluate(ddf, pred="score")
    with pytest.raises(InvalidTypeError, match="ddf must be a dask.dataframe.DataFrame"):
        scorekit.dask.evaluate(frame)
