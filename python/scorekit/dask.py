"""Corpus CER/WER of a Dask dataframe (docs/arrow-dask.md): ``scorekit.dask.evaluate``.

Owns mapping the Arrow path (:mod:`scorekit.arrow`) over the partitions of a
``dask.dataframe.DataFrame``, on whatever scheduler is active (a ``dask.distributed.Client`` of a
local or remote cluster, or Dask's default), and adding up the partitions' exact integer totals
(edits, reference lengths, S/D/I per slice) in partition order, so that the result equals the
single-process one bit for bit; and the per-item counts as a lazy Dask dataframe. Each partition's
text columns go to the kernels as Arrow buffers (``string[pyarrow]`` columns without a copy). Dask
is the ``dask`` extra.

>>> import dask.dataframe as dd, pandas as pd
>>> df = pd.DataFrame({"pred": ["ct", "dog", "eel"], "gold": ["cat", "dog", "eels"], "lang": ["en", "en", "fr"]})
>>> r = evaluate(dd.from_pandas(df, npartitions=2), pred="pred", gold="gold", slice="lang")
>>> r.n, r.detail["edits"], r.per_slice
(3, 2, {'en': 0.16666666666666666, 'fr': 0.25})
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from scorekit.arrow import ITEM_COLUMNS, ArrowEvaluator, ArrowReport, CountTotals, require_pyarrow
from scorekit.errors import InvalidTypeError
from scorekit.registry import MissingExtraError, install_hint

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate"]


def _dask() -> Any:
    try:
        import dask
        import dask.dataframe
    except ImportError:
        raise MissingExtraError(f"scorekit.dask needs Dask: {install_hint('dask')}") from None
    return dask


def _arrow_table(frame: pd.DataFrame, evaluator: ArrowEvaluator, where: str) -> Any:
    """The needed columns of one pandas partition as a checked Arrow table (``string[pyarrow]``
    columns are not copied)."""
    pa = require_pyarrow()
    try:
        table = pa.Table.from_pandas(frame[evaluator.columns], preserve_index=False)
    except (pa.ArrowTypeError, pa.ArrowInvalid) as exc:
        raise InvalidTypeError(f"{where}cannot be read as Arrow text: {exc}", field="partition") from None
    evaluator.check_schema(table.schema)
    return table


def _partition_totals(frame: pd.DataFrame, evaluator: ArrowEvaluator, k: int) -> CountTotals:
    where = f"partition {k} "
    return evaluator.run(_arrow_table(frame, evaluator, where).to_batches(), where=where)[0]


def _partition_items(frame: pd.DataFrame, evaluator: ArrowEvaluator, partition_info: Optional[dict] = None) -> Any:
    where = f"partition {partition_info['number'] if partition_info else 0} "
    batches = evaluator.run(_arrow_table(frame, evaluator, where).to_batches(), per_item=True, where=where)[1]
    if not batches:
        return _empty_items(frame, evaluator)
    pa = require_pyarrow()
    items = pa.Table.from_batches(batches).select(list(ITEM_COLUMNS[1:])).to_pandas()
    items.index = frame.index
    if evaluator.slice is not None:
        items["slice"] = frame[evaluator.slice].values
    return items


def _empty_items(frame: pd.DataFrame, evaluator: ArrowEvaluator) -> pd.DataFrame:
    import pandas as pd

    items = pd.DataFrame({name: pd.Series([], dtype="int64") for name in ITEM_COLUMNS[1:]})
    if evaluator.slice is not None:
        items["slice"] = frame[evaluator.slice].iloc[:0].values
    return items


def evaluate(ddf: Any, *, pred: str = "pred", gold: str = "gold", slice: Optional[str] = None, metric: str = "cer",
             normalize: Any = None, nulls: str = "error", per_item: bool = False, threads: Optional[int] = 1) -> ArrowReport:
    """Corpus CER or WER of the ``pred`` and ``gold`` columns of the Dask dataframe ``ddf``, computed
    on the active scheduler; the same arguments and report as :func:`scorekit.arrow.evaluate_arrow`.
    ``threads`` is the kernel threads per partition task (1: Dask runs the tasks in parallel).
    With ``per_item=True``, ``report.items`` is a lazy Dask dataframe of per-item counts (the
    columns of ``scorekit.arrow.ITEM_COLUMNS`` but ``row``, indexed like ``ddf``); each partition
    is scored again when it is computed (e.g. ``report.items.to_parquet(...)``).

    Errors name the column, the partition and the row within it.
    """
    dask = _dask()
    if not isinstance(ddf, dask.dataframe.DataFrame):
        raise InvalidTypeError(f"must be a dask.dataframe.DataFrame, got {type(ddf).__name__}", field="ddf")
    evaluator = ArrowEvaluator(pred=pred, gold=gold, slice=slice, metric=metric, normalize=normalize,
                               nulls=nulls, threads=threads)
    evaluator.check_schema(_meta_schema(ddf._meta))
    parts = [dask.delayed(_partition_totals)(part, evaluator, k) for k, part in enumerate(ddf.to_delayed())]
    totals = CountTotals()
    totals.nulls = dict.fromkeys((pred, gold), 0)
    for part in dask.compute(*parts):
        totals.merge(part)
    if not per_item:
        return totals.report(evaluator.mode)
    meta = _empty_items(ddf._meta, evaluator)
    items = ddf.map_partitions(_partition_items, evaluator, meta=meta)
    report = totals.report(evaluator.mode)
    report.items = items
    return report


def _meta_schema(meta: pd.DataFrame) -> Any:
    """The Arrow schema of the dataframe's (empty) meta; object columns, whose type shows only in
    their values, count as text here and are checked again on each partition."""
    pa = require_pyarrow()
    fields = []
    for name in meta.columns:
        if meta[name].dtype == object:
            fields.append((str(name), pa.string()))
            continue
        try:
            fields.append(pa.Schema.from_pandas(meta[[name]], preserve_index=False).field(0))
        except (pa.ArrowTypeError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InvalidTypeError(f"column {name!r} has dtype {meta[name].dtype}, which Arrow cannot read",
                                   field="ddf") from None
    return pa.schema(fields)
