"""``score`` and ``evaluate``: one pair, or a whole corpus, against gold (docs/decisions.md#aggregation);
also the home of ``estimate_quality`` (re-exported from :mod:`scorekit.qe.estimate`, where the pipeline lives).

Owns metric resolution (a name, a callable, or dispatch on the input types), the application of
the ``normalize`` canonicaliser, corpus aggregation by the metric's own aggregator, and slices.
Text metrics (CER/WER) take a streaming path: cases are consumed in chunks from any iterable and
each chunk goes through one batch kernel call; per-item counts are kept in compact arrays and
``Report.scores`` is a lazy sequence that builds each ``Score`` on access, so memory stays bounded
for tens of millions of pairs. Other metrics are called once per case.
"""

from __future__ import annotations

import itertools
import operator
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from scorekit import _kernels
from scorekit._graphemes import check_unit
from scorekit.base import GraphGrammar, Report
from scorekit.canonicalize import resolve_canonicalizer
from scorekit.errors import InvalidTypeError, describe
from scorekit.metrics.fields import FieldMetric
from scorekit.metrics.strings import (MODES, StringMetric, TextScores, compact_counts, count_pair, count_packed, error_rate,
                                      text_score)
from scorekit.registry import get

if TYPE_CHECKING:  # NumPy and the packer are imported where corpora need them: score() needs neither
    from concurrent.futures import Future

    import numpy as np

    from scorekit._packing import Packed

#: Pairs per kernel call on the streaming text path (small enough to pipeline packing and counting).
CHUNK_SIZE = 1 << 13
#: Corpora of at most this many plain pairs are counted pair by pair (NumPy's fixed costs exceed the work).
SMALL_CORPUS = 16

_third = operator.itemgetter(2)


def _typed_graph_class() -> Optional[type]:
    # A TypedGraph exists only once its module has been imported; not importing it here keeps the
    # graph metric (and its kernels) out of the text path.
    return getattr(sys.modules.get("scorekit.metrics.graphs"), "TypedGraph", None)


def _is_text_like(x: Any) -> bool:
    return isinstance(x, str) or hasattr(x, "text")


def default_metric_name(pred: Any, gold: Any) -> str:
    """The metric name ``score``/``evaluate`` pick when none is given."""
    typed_graph = _typed_graph_class()
    if typed_graph is not None and isinstance(pred, typed_graph) and isinstance(gold, typed_graph):
        return "graph"
    if _is_text_like(pred) and _is_text_like(gold):
        return "cer"
    if isinstance(pred, Mapping) and isinstance(gold, Mapping):
        return "fields"
    raise TypeError(
        f"No default metric for {type(pred).__name__} vs {type(gold).__name__}; "
        "pass metric=<name|callable> explicitly (e.g. metric='wer')."
    )


def resolve_metric(metric: Any, pred: Any, gold: Any, canonicalizer: Any = None, weights: Any = None,
                   unit: str = "char") -> Any:
    """A callable metric for ``metric`` (name, callable or ``None``) given one example pair;
    ``unit="grapheme"`` is accepted for CER only."""
    if metric is not None and not isinstance(metric, str):
        if not callable(metric):
            raise TypeError(f"metric must be a name, a callable or None, got {type(metric).__name__}")
        check_unit(unit, metric)
        return metric
    name = metric or default_metric_name(pred, gold)
    check_unit(unit, name)
    if name in ("cer", "wer"):
        return StringMetric(name, canonicalizer=canonicalizer, unit=unit)
    if name == "fields":
        return FieldMetric(canonicalizer=canonicalizer)
    if name in ("graph", "typed_graph"):
        try:
            from scorekit.metrics.graphs import TypedGraphMetric
        except ImportError:
            raise KeyError(f"metric {name!r} (typed-graph distance) is not available in this build") from None
        return TypedGraphMetric(weights=weights, canonicalizer=canonicalizer)
    return get("metrics", name)


def metric_label(m: Any) -> str:
    for attr in ("name", "mode", "__name__"):
        value = getattr(m, attr, None)
        if isinstance(value, str):
            return value
    return ""


def aggregate_scores(m: Any, scores: Sequence[Any]) -> Optional[float]:
    """The metric's own aggregate of ``scores``; the mean of ``float(s)`` for metrics without one."""
    if not scores:
        return None
    aggregate = getattr(m, "aggregate", None)
    if callable(aggregate):
        return aggregate(scores)
    return sum(float(s) for s in scores) / len(scores)


def score(pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None, metric: Any = None,
          normalize: Any = None, weights: Any = None, unit: str = "char") -> Any:
    """Score one prediction against its gold (a ``Score`` for built-in metrics). ``unit`` (CER
    only): ``"char"`` counts code points, ``"grapheme"`` extended grapheme clusters
    (docs/decisions.md#grapheme-clusters).

    >>> round(score("hello wrld", "hello world").value, 3)
    0.091
    >>> score("hello wrld", "hello world", metric="wer").value
    0.5
    >>> score("नमस्त", "नमस्ते", unit="grapheme").detail["ref_len"]
    3
    """
    if (type(pred) is str and type(gold) is str and normalize is None and unit == "char"
            and (metric is None or (type(metric) is str and metric in MODES))):
        # what StringMetric(metric or "cer") gives, without building it: the most common call
        mode = metric or "cer"
        return text_score(mode, *count_pair(pred, gold, mode))
    check_unit(unit, metric if metric is not None else "cer")
    m = resolve_metric(metric, pred, gold, resolve_canonicalizer(normalize), weights, unit)
    return m(pred, gold, grammar=grammar)


def _unpack(case: Any, k: int) -> tuple[Any, Any, Any]:
    if not isinstance(case, (tuple, list)) or len(case) < 2:
        raise ValueError(f"cases[{k}] must be a (pred, gold) or (pred, gold, slice) tuple, got {case!r:.80}")
    return case[0], case[1], (case[2] if len(case) > 2 else None)


def evaluate(cases: Iterable[Any], *, metric: Any = None, grammar: Optional[GraphGrammar] = None,
             normalize: Any = None, weights: Any = None, threads: Optional[int] = None,
             unit: str = "char") -> Report:
    """Score a corpus of ``(pred, gold)`` or ``(pred, gold, slice)`` cases.

    The metric is resolved once, from the first case. ``aggregate`` is the metric's own corpus
    aggregate (global Σedits/Σref_len for CER/WER, micro-F1 for fields); ``per_slice`` maps each
    slice label (first-appearance order; ``None`` is not grouped) to its aggregate. Labels are dict
    keys: Python equality decides what one slice is, so ``1`` and ``"1"`` are two slices while
    ``1``, ``1.0`` and ``True`` are one; a label that cannot be hashed is an ``InvalidTypeError``
    naming the case. ``threads``
    (CER/WER only) bounds the kernel threads; ``None`` uses all cores. ``unit`` (CER only) is
    ``"char"`` (code points) or ``"grapheme"`` (extended grapheme clusters, interned per chunk).

    >>> r = evaluate([("ct", "cat"), ("dg", "dog")], metric="cer")
    >>> r.n, round(r.aggregate, 3)
    (2, 0.333)

    A pyarrow ``Table``, ``RecordBatch``, ``RecordBatchReader`` or ``pyarrow.dataset.Dataset`` with
    columns ``pred``, ``gold`` (and ``slice``) is scored from its buffers by
    :func:`scorekit.arrow.evaluate_arrow` (docs/arrow-dask.md).
    """
    if "pyarrow" in sys.modules:  # without pyarrow loaded, nothing is Arrow data
        from scorekit.arrow import evaluate_table, is_arrow_data

        if is_arrow_data(cases):
            return evaluate_table(cases, metric=metric, normalize=normalize, threads=threads, unit=unit,
                                  grammar=grammar, weights=weights)
    try:
        iterator = iter(cases)
    except TypeError:
        raise TypeError(f"cases must be an iterable of (pred, gold[, slice]) tuples, got {type(cases).__name__}") from None
    check_unit(unit, metric if metric is not None else "cer")
    first = next(iterator, _END)
    if first is _END:
        return Report(metric=metric if isinstance(metric, str) else "", n=0)
    pred0, gold0, _ = _unpack(first, 0)
    m = resolve_metric(metric, pred0, gold0, resolve_canonicalizer(normalize), weights, unit)
    all_cases = itertools.chain([first], iterator)
    if type(m) is StringMetric:
        return _evaluate_text(m, all_cases, _kernels.resolve_threads(threads))
    return _evaluate_generic(m, all_cases, grammar)


_END = object()


def _evaluate_generic(m: Any, cases: Iterable[Any], grammar: Optional[GraphGrammar]) -> Report:
    scores: list[Any] = []
    buckets: dict[Any, list[Any]] = {}
    for k, case in enumerate(cases):
        pred, gold, label = _unpack(case, k)
        s = m(pred, gold, grammar=grammar)
        scores.append(s)
        if label is not None:
            try:
                buckets.setdefault(label, []).append(s)
            except Exception as exc:
                raise _slice_label_error([label], k, exc) from None
    return Report(
        metric=metric_label(m),
        aggregate=aggregate_scores(m, scores),
        n=len(scores),
        scores=scores,
        per_slice={label: aggregate_scores(m, bucket) for label, bucket in buckets.items()},
        detail={},
    )


def _split_block(block: list, offset: int) -> tuple[list, list, Optional[list]]:
    """Predictions, golds and slice labels (``None`` when no case of the block has one)."""
    if not set(map(type, block)) <= {tuple, list} or min(map(len, block)) < 2:
        for k, case in enumerate(block):
            _unpack(case, offset + k)  # raises for the first malformed case
    preds = [case[0] for case in block]
    golds = [case[1] for case in block]
    if max(map(len, block)) == 2:
        return preds, golds, None
    return preds, golds, _labels(block)


def _labels(block: list) -> list:
    """The slice label of every case (``None`` for a two-item case)."""
    if min(map(len, block)) > 2:
        return list(map(_third, block))
    return [case[2] if len(case) > 2 else None for case in block]


def _slice_label_error(labels: list, offset: int, exc: BaseException) -> InvalidTypeError:
    """The named error for the first label of ``labels`` that cannot key a slice."""
    for k, label in enumerate(labels):
        try:
            hash(label)
        except Exception as bad:  # a hostile __hash__ may raise anything, StopIteration included
            return InvalidTypeError(f"must be hashable, got {type(label).__name__}: {describe(label)}; "
                                    f"hash() raised {type(bad).__name__}: {bad}", field="slice labels", item=offset + k)
    return InvalidTypeError(f"must hash and compare consistently ({type(exc).__name__}: {exc})", field="slice labels")


def _add_slice_totals(slice_totals: dict[Any, list[int]], labels: list, counts: np.ndarray, offset: int) -> None:
    """Add each labelled case's (edits, ref_len) to its slice, slices in first-appearance order.
    Labels are dict keys: Python equality decides what one slice is (``1`` and ``"1"`` are two)."""
    import numpy as np

    try:
        order = dict.fromkeys(labels)  # unique labels, first appearance first
        code_of = {label: code for code, label in enumerate(order)}
        codes = np.fromiter(map(code_of.__getitem__, labels), dtype=np.int64, count=len(labels))
        edits = np.bincount(codes, weights=counts[:, 1:].sum(axis=1), minlength=len(order))
        ref_len = np.bincount(codes, weights=counts[:, 0], minlength=len(order))
        for label, e, n in zip(order, edits.tolist(), ref_len.tolist()):
            if label is not None:
                acc = slice_totals.setdefault(label, [0, 0])
                acc[0] += round(e)
                acc[1] += round(n)
    except Exception as exc:
        raise _slice_label_error(labels, offset, exc) from None


def _count_small(m: StringMetric, block: list) -> Optional[tuple[list, dict[Any, list[int]]]]:
    """The counts of a block of at most :data:`SMALL_CORPUS` plain ``(str, str[, slice])`` cases,
    pair by pair (what the batch path gives, without its arrays), with their slice totals; ``None``
    for anything else, which the batch path reads (and names in its errors)."""
    if (len(block) > SMALL_CORPUS or m.canonicalizer is not None or m.unit != "char"
            or not all(type(case) is tuple and 2 <= len(case) <= 3 and type(case[0]) is str
                       and type(case[1]) is str for case in block)):
        return None
    try:
        rows = [count_pair(case[0], case[1], m.mode) for case in block]
        slice_totals: dict[Any, list[int]] = {}
        for case, (ref_len, s, d, i) in zip(block, rows):
            if len(case) == 3 and case[2] is not None:
                acc = slice_totals.setdefault(case[2], [0, 0])
                acc[0] += s + d + i
                acc[1] += ref_len
    except Exception:  # a lone surrogate, a label that cannot key a slice: the batch path says which
        return None
    return rows, slice_totals


def _evaluate_text(m: StringMetric, cases: Iterable[Any], threads: int) -> Report:
    """The streaming text path. Chunks are pipelined: while the kernels count chunk k on a worker
    thread (they release the GIL), the calling thread reads and packs chunk k + 1."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    chunks: list[np.ndarray] = []
    slice_totals: dict[Any, list[int]] = {}
    totals = np.zeros(4, dtype=np.int64)
    k = 0
    iterator = iter(cases)

    def collect(counts: np.ndarray, labels: Optional[list], offset: int) -> None:
        nonlocal totals
        totals += counts.sum(axis=0)
        if labels is not None:
            _add_slice_totals(slice_totals, labels, counts, offset)
        chunks.append(compact_counts(counts))

    first = list(itertools.islice(iterator, CHUNK_SIZE))
    second = list(itertools.islice(iterator, CHUNK_SIZE)) if first else []
    small = None if second or not first else _count_small(m, first)
    if small is not None:  # a handful of plain pairs: counted one by one, no arrays
        rows, slice_totals = small
        chunks.append(rows)
        totals = [sum(column) for column in zip(*rows)] if rows else totals
        k = len(first)
    elif not second:  # one chunk: nothing to overlap, so no worker thread to start
        if first:
            hyp, ref, labels = _pack_block(m, first, 0)
            collect(count_packed(hyp, ref, m.mode, threads=threads), labels, 0)
            k = len(first)
    else:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorekit-evaluate") as worker:
            pending: Optional[tuple[Future, Optional[list], int]] = None
            for block in itertools.chain((first, second), iter(lambda: list(itertools.islice(iterator, CHUNK_SIZE)), [])):
                hyp, ref, labels = _pack_block(m, block, k)
                job = (worker.submit(count_packed, hyp, ref, m.mode, threads=threads), labels, k)
                k += len(block)
                if pending is not None:
                    future, pending_labels, offset = pending
                    collect(future.result(), pending_labels, offset)
                pending = job
            if pending is not None:
                future, pending_labels, offset = pending
                collect(future.result(), pending_labels, offset)
    ref_len, s, d, i = (int(v) for v in totals)
    return Report(
        metric=m.name,
        aggregate=error_rate(s + d + i, ref_len),
        n=k,
        scores=TextScores(m.mode, chunks),
        per_slice={label: error_rate(e, n) for label, (e, n) in slice_totals.items()},
        detail={"edits": s + d + i, "ref_len": ref_len, "substitutions": s, "deletions": d,
                "insertions": i, "hits": ref_len - s - d},
    )


def _pack_block(m: StringMetric, block: list, offset: int) -> tuple[Packed, Packed, Optional[list]]:
    """Packed predictions, packed golds and slice labels of one chunk of cases. Plain
    ``(str, str[, slice])`` cases without a canonicaliser are packed straight from the tuples by the
    compiled core; anything else (``None``, OCR results, numbers) is coerced first. With
    ``unit="grapheme"`` one grapheme packer serves the chunk (both sides share its ids)."""
    from scorekit._graphemes import grapheme_packer
    from scorekit._packing import pack_texts

    if m.unit == "grapheme":
        packer = grapheme_packer()
        pack_texts, pack_pairs = packer.pack_texts, packer.pack_pairs
    else:
        core = _kernels.compiled()
        pack_pairs = core.pack_pairs if core is not None else None
    try:
        if m.canonicalizer is None and pack_pairs is not None:
            try:
                hyp, ref = pack_pairs(block)
            except TypeError:
                pass  # something to coerce or reject: the general path below says what
            else:
                return hyp, ref, (_labels(block) if max(map(len, block)) > 2 else None)
        preds, golds, labels = _split_block(block, offset)
        if m.canonicalizer is None:
            try:
                return pack_texts(preds, "pred"), pack_texts(golds, "gold"), labels
            except TypeError:
                pass
        return pack_texts([m.prepare(x) for x in preds], "pred"), pack_texts([m.prepare(x) for x in golds], "gold"), labels
    except ValueError as exc:
        # Re-number the item in the message from chunk-local to corpus-wide.
        raise ValueError(_renumber(str(exc), offset)) from None


def _renumber(message: str, offset: int) -> str:
    return re.sub(r"^(pred|gold)\[(\d+)\]", lambda mt: f"cases[{int(mt.group(2)) + offset}] {mt.group(1)}", message)


def __getattr__(name: str) -> Any:
    """``estimate_quality`` lives in :mod:`scorekit.qe.estimate`; it is imported on first access so
    that scoring text never loads the quality-estimation stack."""
    if name == "estimate_quality":
        from scorekit.qe.estimate import estimate_quality

        return estimate_quality
    raise AttributeError(f"module 'scorekit.facade' has no attribute {name!r}")
