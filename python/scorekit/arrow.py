"""Corpus CER/WER straight from Arrow data (docs/arrow-dask.md): ``evaluate_arrow``.

Owns reading the text columns of a ``pyarrow.Table``, ``RecordBatch``, ``RecordBatchReader``,
``pyarrow.dataset.Dataset``, Parquet file or any iterable of record batches, batch by batch, and
handing each column's UTF-8 buffer and offsets to the kernels (:mod:`scorekit._kernels.utf8`), so
no Python object is made per item; the exact integer totals of a corpus overall and per slice
(:class:`CountTotals`, which :mod:`scorekit.dask` adds up across partitions); per-item counts as an
Arrow table; and the errors for bad columns (missing, not text, null cells, invalid UTF-8), each
naming the column and the row.

Results equal ``scorekit.evaluate`` on the same pairs as Python strings: a null cell scores as
empty text (as ``None`` does there) when ``nulls="count"``; NaN slice labels are one slice here
(there, each distinct NaN object is a slice of its own). Built-in normalisers run in the compiled
core; a pair it hands back (a code point this Python's Unicode leaves unassigned, under NFC/NFKC)
and every pair under a Python-callable normaliser (or on the Numba backend, under any normaliser)
go through the Python canonicaliser instead. pyarrow is the ``arrow`` extra.

>>> import pyarrow as pa
>>> table = pa.table({"pred": ["ct", "dog", None], "gold": ["cat", "dog", "eel"], "lang": ["en", "en", "fr"]})
>>> r = evaluate_arrow(table, pred="pred", gold="gold", slice="lang", nulls="count")
>>> r.n, round(r.aggregate, 4), r.detail["edits"], r.nulls
(3, 0.4444, 4, {'pred': 1, 'gold': 0})
>>> r.per_slice
{'en': 0.16666666666666666, 'fr': 1.0}
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional

from scorekit import _kernels
from scorekit._kernels import utf8
from scorekit.base import Report
from scorekit.canonicalize import Canonicalizer, builtin_steps, resolve_canonicalizer
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.metrics.strings import COUNT_COLUMNS, StringMetric, TextScores, count_errors, error_rate
from scorekit.registry import MissingExtraError, install_hint

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["evaluate_arrow", "open_parquet", "open_parquet_dataset", "ArrowReport", "ArrowEvaluator", "CountTotals",
           "NullCellError", "is_arrow_data", "ITEM_COLUMNS"]

#: Rows per record batch read from a table, file or dataset: bounded memory, few kernel calls.
BATCH_ROWS = 1 << 16
#: Record batches read ahead on a worker thread while the current one is scored (with
#: :data:`BATCH_ROWS`, a 10-million-row Parquet file peaks near 320 MB).
READ_AHEAD = 2
#: Columns of the per-item table (then ``slice`` when a slice column is given).
ITEM_COLUMNS = ("row", "pred_len", "gold_len", "edits", "substitutions", "deletions", "insertions", "hits")
NULL_POLICIES = ("error", "count")
#: The one label of every NaN slice value: NaN equals nothing, not even itself, so each NaN read
#: from a batch would otherwise open a slice of its own.
NAN_LABEL = float("nan")


class NullCellError(InvalidValueError):
    """A null text cell under ``nulls="error"``; the message ends with how to score it instead
    (``advice``: the Python spelling here, the command line's in ``scorekit eval-table``)."""

    def __init__(self, column: str, place: str, advice: str = "pass nulls='count'") -> None:
        self.column, self.place = column, place
        super().__init__(f"{place} is null ({advice} to score null cells as empty text)", field=f"column {column!r}")

    def advise(self, advice: str) -> NullCellError:
        """The same error with other advice."""
        return NullCellError(self.column, self.place, advice)


def require_pyarrow() -> Any:
    """The ``pyarrow`` module, or :class:`MissingExtraError` saying how to install the ``arrow`` extra."""
    try:
        import pyarrow
    except ImportError:
        raise MissingExtraError(f"Arrow input needs pyarrow: {install_hint('arrow')}") from None
    return pyarrow


def is_arrow_data(data: Any) -> bool:
    """Whether ``data`` is a pyarrow ``Table``, ``RecordBatch``, ``RecordBatchReader`` or
    ``pyarrow.dataset.Dataset`` (never imports pyarrow: without it loaded, nothing is Arrow data)."""
    pa = sys.modules.get("pyarrow")
    if pa is None:
        return False
    if isinstance(data, (pa.Table, pa.RecordBatch, pa.RecordBatchReader)):
        return True
    ds = sys.modules.get("pyarrow.dataset")
    return ds is not None and isinstance(data, ds.Dataset)


@dataclass
class ArrowReport(Report):
    """A :class:`~scorekit.base.Report` of the Arrow path. ``scores`` is empty unless per-item
    results were asked for (then a lazy sequence over ``items``); ``items`` is the per-item Arrow
    table (:data:`ITEM_COLUMNS`); ``nulls`` counts the null cells of each text column;
    ``slice_counts`` maps each slice to its exact totals (``n``, ``ref_len``, ``substitutions``,
    ``deletions``, ``insertions``, ``edits``, ``hits``)."""

    items: Optional[pa.Table] = None
    nulls: dict[str, int] = field(default_factory=dict)
    slice_counts: dict[Any, dict[str, int]] = field(default_factory=dict)


class CountTotals:
    """Exact integer totals of scored pairs: overall and per slice (first-appearance order; a null
    label is not grouped), plus null cells per text column. Two totals of consecutive parts of a
    corpus :meth:`merge` into the totals of the whole, exactly. Every NaN label is one slice.

    >>> import numpy as np
    >>> t = CountTotals()
    >>> t.add(np.array([[3, 0, 1, 0], [2, 1, 0, 0]]), np.array([0, -1]), ["a"])
    >>> t.n, t.counts, t.slices
    (2, [5, 1, 1, 0], {'a': [1, 3, 0, 1, 0]})
    """

    def __init__(self) -> None:
        self.n = 0
        #: ref_len, substitutions, deletions, insertions (:data:`COUNT_COLUMNS`).
        self.counts = [0, 0, 0, 0]
        #: label -> [n, ref_len, substitutions, deletions, insertions]
        self.slices: dict[Any, list[int]] = {}
        self.nulls: dict[str, int] = {}

    def add(self, counts: np.ndarray, codes: Optional[np.ndarray] = None, labels: Any = None) -> None:
        """Add pairs' counts (``int64[k, 4]`` in :data:`COUNT_COLUMNS` order, any strides); ``codes``
        (``-1``: no slice) index ``labels`` (a list or a pyarrow array, which may hold unused and
        repeated labels); the slices are added in order of their first row."""
        import numpy as np

        grouped = codes is not None and labels is not None and len(labels) > 0
        sums = utf8.group_sums(counts, codes if grouped else None, len(labels) if grouped else 0)
        *total, _, _ = sums[-1].tolist()
        self.n += len(counts)
        self.counts = [a + b for a, b in zip(self.counts, total)]
        if not grouped:
            return
        used = np.flatnonzero(sums[:-1, -2])
        used = used[np.argsort(sums[used, -1])]
        for label, (*column_sums, n, _) in zip(_used_labels(labels, used), sums[used].tolist()):
            if label is not None:  # a null label (the dictionary of an all-null column) is not grouped
                self._add_slice(label, [n, *column_sums])

    def _add_slice(self, label: Any, sums: list[int]) -> None:
        if isinstance(label, float) and label != label:
            label = NAN_LABEL
        try:
            acc = self.slices.setdefault(label, [0] * 5)
        except TypeError as exc:
            raise InvalidTypeError(f"labels must be hashable, got {type(label).__name__} ({exc})",
                                   field="slice") from None
        for k, v in enumerate(sums):
            acc[k] += v

    def merge(self, other: CountTotals) -> CountTotals:
        """Add ``other`` (the totals of the part after this one) into these totals; returns self."""
        self.n += other.n
        self.counts = [a + b for a, b in zip(self.counts, other.counts)]
        for label, sums in other.slices.items():
            self._add_slice(label, sums)
        for name, count in other.nulls.items():
            self.nulls[name] = self.nulls.get(name, 0) + count
        return self

    def report(self, mode: str, scores: Any = (), items: Optional[pa.Table] = None) -> ArrowReport:
        """The report of these totals: the same ``aggregate``, ``per_slice`` and ``detail`` as
        ``scorekit.evaluate`` gives for the same pairs."""
        if self.n == 0:
            return ArrowReport(metric=mode, n=0, scores=list(scores), items=items, nulls=dict(self.nulls))
        ref_len, s, d, i = self.counts
        slice_counts = {
            label: {"n": n, "ref_len": r, "substitutions": ss, "deletions": dd, "insertions": ii,
                    "edits": ss + dd + ii, "hits": r - ss - dd}
            for label, (n, r, ss, dd, ii) in self.slices.items()
        }
        return ArrowReport(
            metric=mode,
            aggregate=error_rate(s + d + i, ref_len),
            n=self.n,
            scores=scores,
            per_slice={label: error_rate(c["edits"], c["ref_len"]) for label, c in slice_counts.items()},
            detail={"edits": s + d + i, "ref_len": ref_len, "substitutions": s, "deletions": d,
                    "insertions": i, "hits": ref_len - s - d},
            items=items,
            nulls=dict(self.nulls),
            slice_counts=slice_counts,
        )


def _is_text_type(pa: Any, t: Any) -> bool:
    if pa.types.is_dictionary(t):
        t = t.value_type
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_null(t)
            or t in (getattr(pa, "string_view", lambda: None)(), getattr(pa, "binary_view", lambda: None)()))


class ArrowEvaluator:
    """The checked arguments of one Arrow evaluation, and the scoring of one record batch.
    Picklable (``scorekit.dask`` sends it to the workers)."""

    def __init__(self, *, pred: str, gold: str, slice: Optional[str] = None, metric: str = "cer",
                 normalize: Any = None, nulls: str = "error", threads: Optional[int] = None) -> None:
        roles: dict[str, str] = {}
        for arg, value in (("pred", pred), ("gold", gold), ("slice", slice)):
            if value is None and arg == "slice":
                continue
            if not isinstance(value, str):
                raise InvalidTypeError(f"must be a column name (str), got {type(value).__name__}", field=arg)
            if value in roles:
                raise InvalidValueError(f"names column {value!r}, as {roles[value]} does; each role "
                                        "needs a column of its own", field=arg)
            roles[value] = arg
        if metric not in ("cer", "wer"):
            raise InvalidValueError(f"must be 'cer' or 'wer' on Arrow data, got {metric!r}", field="metric")
        if nulls not in NULL_POLICIES:
            raise InvalidValueError(f"must be 'error' or 'count', got {nulls!r}", field="nulls")
        self.pred, self.gold, self.slice = pred, gold, slice
        self.mode = metric
        self.nulls = nulls
        self.threads = _kernels.resolve_threads(threads)
        canon = resolve_canonicalizer(normalize)
        self.metric = StringMetric(metric, canonicalizer=canon)
        steps = [] if canon is None else builtin_steps(canon)
        if isinstance(canon, Canonicalizer) and canon.audit_marks:
            steps = None  # its warnings come from the Python canonicaliser
        #: Built-in step names the kernels apply, or ``None``: the Python canonicaliser scores every pair.
        self.steps: Optional[tuple[str, ...]] = None if steps is None else tuple(steps)

    @property
    def columns(self) -> list[str]:
        """The columns read, in order (pred, gold, then the slice column if any; ``""`` is a name)."""
        return [self.pred, self.gold] + ([self.slice] if self.slice is not None else [])

    def check_schema(self, schema: pa.Schema) -> None:
        """Every column present exactly once; pred and gold of a text type."""
        pa = require_pyarrow()
        for role, name in (("pred", self.pred), ("gold", self.gold), ("slice", self.slice)):
            if name is None:
                continue
            indices = schema.get_all_field_indices(name)
            if not indices:
                found = ", ".join(repr(n) for n in schema.names[:20]) or "none"
                raise InvalidValueError(f"column {name!r} not found (columns: {found})", field=role)
            if len(indices) > 1:
                raise InvalidValueError(f"column {name!r} appears {len(indices)} times in the data; which one "
                                        "to read is ambiguous", field=role)
            index = indices[0]
            t = schema.field(index).type
            if role != "slice" and not _is_text_type(pa, t):
                raise InvalidTypeError(f"column {name!r} has type {t}; expected text (string, large_string, binary, "
                                       "large_binary, or a dictionary of them)", field=role)

    def _text_array(self, batch: Any, name: str, row0: int, where: str, totals: CountTotals) -> pa.Array:
        """Column ``name`` of ``batch`` as a plain string/binary array; null cells counted, or an error."""
        pa = require_pyarrow()
        arr = batch.column(name)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        t = arr.type
        if pa.types.is_null(t):
            arr = pa.nulls(len(arr), pa.string())
        elif not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
                  or pa.types.is_large_binary(t)):
            arr = arr.cast(pa.large_binary() if "binary" in str(t) else pa.large_string())
        if arr.null_count:
            if self.nulls == "error":
                import numpy as np

                k = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
                raise NullCellError(name, f"{where}row {row0 + k}")
            totals.nulls[name] = totals.nulls.get(name, 0) + arr.null_count
        return arr

    def score_batch(self, batch: Any, row0: int, totals: CountTotals, items: Optional[list] = None,
                    where: str = "") -> None:
        """Score one record batch (rows ``row0…`` of the corpus) into ``totals``; with ``items``, append
        its per-item record batch. ``where`` prefixes row numbers in errors (``"partition 3 "``)."""
        n = batch.num_rows
        if n == 0:
            return
        pred = self._text_array(batch, self.pred, row0, where, totals)
        gold = self._text_array(batch, self.gold, row0, where, totals)
        counts = self._counts(pred, gold, row0, where)
        codes = labels = None
        slice_array = None
        if self.slice is not None:
            slice_array = batch.column(self.slice)
            codes, labels = _slice_codes(slice_array, self.slice, row0, where)
        totals.add(counts, codes, labels)
        if items is not None:
            items.append(_item_batch(counts, row0, slice_array))

    def _counts(self, pred: pa.Array, gold: pa.Array, row0: int, where: str) -> np.ndarray:
        import numpy as np

        if self.steps is None:
            return self._python_counts(pred, gold, row0, where)
        raw = utf8.pair_counts(_buffers(pred), _buffers(gold), self.mode, self.steps, self.threads)
        status = raw[:, 4]
        if status.max() > 0:  # statuses are 0..3; `any` would cast the column to bool first
            bad = np.flatnonzero(status >= utf8.INVALID_PRED)
            if bad.size:
                k = int(bad[0])
                name, arr = (self.pred, pred) if status[k] == utf8.INVALID_PRED else (self.gold, gold)
                raise _utf8_error(arr, k, name, row0 + k, where)
            rows = np.flatnonzero(status == utf8.NEEDS_CALLER)
            raw[rows, :4] = self._python_counts(pred.take(rows), gold.take(rows), row0, where, rows)
        return raw[:, :4]

    def _python_counts(self, pred: pa.Array, gold: pa.Array, row0: int, where: str,
                       rows: Optional[np.ndarray] = None) -> np.ndarray:
        """Counts of pairs through the Python canonicaliser (``rows``: their rows in the batch)."""
        sides = []
        for name, arr in ((self.pred, pred), (self.gold, gold)):
            texts = []
            for k, raw in enumerate(_as_bytes(arr).to_pylist()):
                try:
                    text = None if raw is None else raw.decode("utf-8")
                except UnicodeDecodeError:
                    row = row0 + (k if rows is None else int(rows[k]))
                    raise _utf8_error(arr, k, name, row, where) from None
                texts.append(self.metric.prepare(text))
            sides.append(texts)
        return count_errors(sides[0], sides[1], self.mode, threads=self.threads,
                            pred_name=self.pred, ref_name=self.gold)

    def run(self, batches: Iterable[Any], *, per_item: bool = False, row0: int = 0, where: str = "",
            after_batch: Optional[Callable[[], None]] = None) -> tuple[CountTotals, Optional[list]]:
        """Score ``batches`` in order: their totals, and their per-item record batches if asked."""
        totals = CountTotals()
        totals.nulls = dict.fromkeys((self.pred, self.gold), 0)
        items: Optional[list] = [] if per_item else None
        for batch in batches:
            self.score_batch(batch, row0 + totals.n, totals, items, where)
            if after_batch is not None:
                after_batch()
        return totals, items


def _as_bytes(arr: pa.Array) -> pa.Array:
    pa = require_pyarrow()
    return arr.cast(pa.large_binary()) if not pa.types.is_large_binary(arr.type) else arr


def _utf8_error(arr: pa.Array, k: int, name: str, row: int, where: str) -> InvalidValueError:
    """The error for item ``k`` of ``arr`` (corpus row ``row``), saying why it is not UTF-8."""
    raw = _as_bytes(arr)[k].as_py() or b""
    try:
        raw.decode("utf-8")
        reason = "not UTF-8"
    except UnicodeDecodeError as exc:
        reason = f"{exc.reason} at byte {exc.start}"
    return InvalidValueError(f"{where}row {row}: invalid UTF-8 ({reason})", field=f"column {name!r}")


def _buffers(arr: pa.Array) -> tuple:
    """The kernel's view of a string/binary array: ``(data, offsets, validity | None, offset)``, all
    NumPy views of the Arrow buffers (nothing copied)."""
    import numpy as np

    pa = require_pyarrow()
    validity, offsets, data = arr.buffers()[:3]
    wide = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    offsets = np.frombuffer(offsets, dtype=np.int64 if wide else np.int32, count=arr.offset + len(arr) + 1)
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    bits = np.frombuffer(validity, dtype=np.uint8) if validity is not None and arr.null_count else None
    offsets = offsets[arr.offset:]
    if not offsets.flags.aligned:  # buffers received over a wire (Dask) may start anywhere
        offsets = offsets.copy()
    return data, offsets, bits, arr.offset


def _slice_codes(arr: Any, name: str, row0: int = 0, where: str = "") -> tuple[np.ndarray, pa.Array]:
    """Per row, the index of its label in the labels (``-1`` for null), and the labels: the
    dictionary of the column (Parquet's pages, a pandas categorical: in any order, maybe with
    unused or repeated values), or of its dictionary encoding. A non-null index outside the
    dictionary (damaged data) is an error naming its row (``row0 + k``, prefixed by ``where``)."""
    import numpy as np

    pa = require_pyarrow()
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pa.types.is_dictionary(arr.type):
        try:
            arr = arr.dictionary_encode()
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            raise InvalidTypeError(f"column {name!r} has type {arr.type}, which cannot label slices",
                                   field="slice") from None
    indices = arr.indices
    kind = "i" if pa.types.is_signed_integer(indices.type) else "u"
    dtype = np.dtype(f"{kind}{indices.type.bit_width // 8}")
    validity, values = indices.buffers()
    start, n = indices.offset, len(indices)
    codes = np.frombuffer(values, dtype=dtype, count=start + n)[start:].astype(np.int64)
    outside = (codes < 0) | (codes >= len(arr.dictionary))
    null = None
    if indices.null_count:
        bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), count=start + n, bitorder="little")
        null = bits[start:] == 0
        outside &= ~null
    if outside.any():
        k = int(np.flatnonzero(outside)[0])
        raise InvalidValueError(f"{where}row {row0 + k}: dictionary index {int(codes[k])} is not one of the "
                                f"{len(arr.dictionary)} labels (damaged data)", field=f"column {name!r}")
    if null is not None:
        codes[null] = -1
    return codes, arr.dictionary


def _used_labels(labels: Any, used: np.ndarray) -> list:
    """The labels at the indices ``used`` of ``labels`` (a list or a pyarrow array), as Python values."""
    if isinstance(labels, list):
        return [labels[k] for k in used]
    if len(labels) <= 2 * len(used) + 256:  # a small dictionary: whole (no compute kernel)
        values = labels.to_pylist()
        return [values[k] for k in used]
    return labels.take(used).to_pylist()


def _item_batch(counts: np.ndarray, row0: int, slice_array: Any) -> pa.RecordBatch:
    import numpy as np

    pa = require_pyarrow()
    ref_len, s, d, i = (np.ascontiguousarray(counts[:, c]) for c in range(4))
    columns = [np.arange(row0, row0 + len(counts), dtype=np.int64), ref_len - d + i, ref_len,
               s + d + i, s, d, i, ref_len - s - d]
    names = list(ITEM_COLUMNS)
    if slice_array is not None:
        columns.append(slice_array.combine_chunks() if isinstance(slice_array, pa.ChunkedArray) else slice_array)
        names.append("slice")
    return pa.RecordBatch.from_arrays([pa.array(c) if isinstance(c, np.ndarray) else c for c in columns], names=names)


def open_parquet(path: Any, slice: Optional[str] = None) -> Any:
    """``path`` as a ``pyarrow.parquet.ParquetFile`` read the way this module reads files: the
    ``slice`` column's labels as dictionary indices (no string column is built for them), each row
    group's column chunks in one go (pre-buffered: fewer, larger reads), and the pages' CRC
    checksums verified where the file has them (a damaged page is an error, not other text)."""
    require_pyarrow()
    import pyarrow.parquet as pq

    options = {"pre_buffer": True, "page_checksum_verification": True}
    if slice is not None:
        try:
            return pq.ParquetFile(path, read_dictionary=[slice], **options)
        except KeyError:  # no such column (pyarrow's bare KeyError): the schema check names it
            pass
    return pq.ParquetFile(path, **options)


def open_parquet_dataset(paths: list, slice: Optional[str] = None) -> Any:
    """The Parquet files ``paths``, in that order, as one ``pyarrow.dataset.Dataset`` read as
    :func:`open_parquet` reads one file (the ``slice`` column as dictionary indices, column chunks
    pre-buffered, page checksums verified). Every file must have the first one's schema (column
    names and types): a dataset would otherwise cast another file's column to the first file's type
    (integers read as text) or fill a missing column with nulls."""
    require_pyarrow()
    import pyarrow.dataset as ds

    parquet = ds.ParquetFileFormat(
        read_options=ds.ParquetReadOptions(dictionary_columns=[] if slice is None else [slice]),
        default_fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=True, page_checksum_verification=True))
    dataset = ds.dataset([os.fspath(path) for path in paths], format=parquet)
    fragments = list(dataset.get_fragments())
    first = fragments[0].physical_schema
    for fragment in fragments[1:]:
        schema = fragment.physical_schema
        if not schema.equals(first, check_metadata=False):
            differ = [f"{f.name}: {f.type}" for f in schema if first.get_field_index(f.name) < 0
                      or first.field(f.name).type != f.type]
            missing = [name for name in first.names if schema.get_field_index(name) < 0]
            raise InvalidValueError(
                f"{fragment.path!r} does not have the schema of {fragments[0].path!r} (columns of its own or of another "
                f"type: {', '.join(differ) or 'none'}; missing: {', '.join(missing) or 'none'}); every file of a "
                "dataset needs the same columns and types", field="dataset")
    return dataset


def _batches(data: Any, evaluator: ArrowEvaluator,
             progress: Optional[Callable[[int, int], None]]) -> Iterator[Any]:
    """Record batches of the needed columns of ``data``, schema checked first."""
    pa = require_pyarrow()
    columns = evaluator.columns
    if isinstance(data, (str, os.PathLike)):
        data = open_parquet(data, evaluator.slice)
    if type(data).__name__ == "ParquetFile":
        evaluator.check_schema(data.schema_arrow)
        groups = data.num_row_groups
        for g in range(groups):
            # one reading thread (``_read_ahead``'s): Arrow's own pool decoding the columns of a
            # batch side by side would only contend with the kernel threads for the cores
            yield from data.iter_batches(batch_size=BATCH_ROWS, row_groups=[g], columns=columns, use_threads=False)
            if progress is not None:
                progress(g + 1, groups)
        return
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        evaluator.check_schema(data.schema)
        parts = data.select(columns).to_batches(max_chunksize=BATCH_ROWS) if isinstance(data, pa.Table) \
            else [data.select(columns)]
        for k, batch in enumerate(parts):
            yield batch
            if progress is not None:
                progress(k + 1, len(parts))
        return
    if isinstance(data, pa.RecordBatchReader):
        evaluator.check_schema(data.schema)
        yield from data
        return
    ds = sys.modules.get("pyarrow.dataset")
    if ds is not None and isinstance(data, ds.Dataset):
        evaluator.check_schema(data.schema)
        if progress is None:
            yield from data.to_batches(columns=columns, batch_size=BATCH_ROWS)
            return
        fragments = list(data.get_fragments())
        for k, fragment in enumerate(fragments):  # a file of a file system dataset: one progress step
            yield from fragment.to_batches(schema=data.schema, columns=columns, batch_size=BATCH_ROWS)
            progress(k + 1, len(fragments))
        return
    try:
        iterator = iter(data)
    except TypeError:
        raise InvalidTypeError("must be a pyarrow Table, RecordBatch, RecordBatchReader, Dataset, a Parquet file "
                               f"path or an iterable of record batches, got {type(data).__name__}", field="data") from None
    for k, batch in enumerate(iterator):
        if not isinstance(batch, (pa.RecordBatch, pa.Table)):
            raise InvalidTypeError(f"must hold pyarrow record batches, got {type(batch).__name__} at position {k}",
                                   field="data")
        evaluator.check_schema(batch.schema)
        yield batch


def evaluate_arrow(data: Any, *, pred: str = "pred", gold: str = "gold", slice: Optional[str] = None,
                   metric: str = "cer", normalize: Any = None, nulls: str = "error", per_item: bool = False,
                   threads: Optional[int] = None,
                   progress: Optional[Callable[[int, int], None]] = None) -> ArrowReport:
    """Corpus CER or WER of the ``pred`` and ``gold`` text columns of ``data``: a pyarrow ``Table``,
    ``RecordBatch``, ``RecordBatchReader``, ``pyarrow.dataset.Dataset``, a Parquet file (path or
    ``pyarrow.parquet.ParquetFile``) or an iterable of record batches, read batch by batch.

    ``slice`` names a column grouping the rows (``per_slice``; null labels are not grouped).
    ``normalize`` is anything ``evaluate`` accepts. ``nulls="error"`` (default) rejects a null
    text cell naming its column and row; ``"count"`` scores it as empty text and counts it in
    ``report.nulls``. ``per_item=True`` also returns ``report.items``, an Arrow table of per-item
    counts (:data:`ITEM_COLUMNS`), and ``report.scores`` as a lazy sequence over it. ``threads``
    bounds the kernel threads (``None``: all cores); ``progress(done, total)`` is called after each
    row group of a Parquet file (each batch of a table, each file of a dataset).

    >>> import pyarrow as pa
    >>> t = pa.table({"pred": ["hello wrld"], "gold": ["Hello world"]})
    >>> evaluate_arrow(t, metric="wer", normalize="lower").detail["substitutions"]
    1
    >>> evaluate_arrow(t, per_item=True).items.column("edits").to_pylist()
    [2]
    """
    evaluator = ArrowEvaluator(pred=pred, gold=gold, slice=slice, metric=metric, normalize=normalize,
                               nulls=nulls, threads=threads)
    totals, items = evaluator.run(_read_ahead(_batches(data, evaluator, progress)), per_item=per_item)
    return finish_report(evaluator, totals, items)


_END = object()


def _read_ahead(batches: Iterator[Any]) -> Iterator[Any]:
    """``batches``, the next :data:`READ_AHEAD` ones read on a worker thread while the caller scores
    the current one (reading and the kernels both release the GIL)."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorekit-read") as reader:
        pending = deque(reader.submit(next, batches, _END) for _ in range(READ_AHEAD))
        while (batch := pending.popleft().result()) is not _END:
            pending.append(reader.submit(next, batches, _END))
            yield batch


def finish_report(evaluator: ArrowEvaluator, totals: CountTotals, items: Optional[list]) -> ArrowReport:
    """The report of ``totals``, with the per-item table and lazy scores when ``items`` is a list
    of per-item record batches."""
    if items is None:
        return totals.report(evaluator.mode)
    import numpy as np


    pa = require_pyarrow()
    if items:
        table = pa.Table.from_batches(items)
    else:
        table = pa.table({name: pa.array([], pa.int64()) for name in ITEM_COLUMNS})
    chunks = [np.column_stack([b.column(name).to_numpy() for name in ("gold_len", *COUNT_COLUMNS[1:])])
              for b in items]
    return totals.report(evaluator.mode, TextScores(evaluator.mode, chunks), table)


def evaluate_table(data: Any, *, metric: Any = None, normalize: Any = None, threads: Optional[int] = None,
                   unit: str = "char", grammar: Any = None, weights: Any = None) -> ArrowReport:
    """``scorekit.evaluate`` given Arrow data: columns ``pred`` and ``gold`` (and ``slice`` when
    present), CER by default, null cells scored as empty text (as ``None`` is for Python cases)."""
    if unit != "char" or grammar is not None or weights is not None:
        raise InvalidValueError("Arrow data is scored by CER/WER over code points: unit='grapheme', grammar and "
                                "weights need Python cases", field="evaluate")
    metric = "cer" if metric is None else metric
    if not isinstance(metric, str):
        raise InvalidTypeError("must be 'cer' or 'wer' for Arrow data (a callable needs Python cases)", field="metric")
    schema = data.schema
    slice_column = "slice" if "slice" in schema.names else None
    return evaluate_arrow(data, slice=slice_column, metric=metric, normalize=normalize, nulls="count",
                          threads=threads)
