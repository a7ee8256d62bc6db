"""The offline evaluation harness (``ek.harness``): a predictor over gold, baselines, the regression
gate, and inter-annotator agreement (IAA).

- :func:`evaluate_store` runs an ``input -> prediction`` callable over a gold store (a dict, a
  :func:`~scorekit.stores.json_store` of kind ``gold``, or ``(key, record)`` pairs), scores it
  with :func:`scorekit.evaluate` (per slice), keeps each item's prediction and score in
  ``report.detail["per_item"]`` and, with ``persist=True``, writes the run to the ``results`` and
  ``runs`` stores (the per-item results streamed to disk, one line per item).
- :func:`save_baseline`/:func:`load_baseline` freeze a report's aggregate and per-slice scores in
  the ``baselines`` store, which the agent baselines of :mod:`scorekit.agents.harness` share.
- :func:`regression_gate` compares a report with a baseline, the aggregate and every slice, and
  returns a :class:`GateResult` that is falsy when any of them got worse by more than a tolerance
  or could not be compared (missing, NaN, infinite, an empty run): the gate fails closed.
- :func:`krippendorff_alpha`, :func:`cohen_kappa` and :func:`percent_agreement` measure how far
  annotators agree, the ceiling of a gold standard; :func:`scorekit.agents.judge.judge_validation`
  uses them to certify an LLM judge against human labels.

Krippendorff's alpha is computed without building the coincidence matrix: the observed and expected
disagreements are sums over pairs of values, and for the nominal, ordinal and interval levels those
sums have closed forms (value counts, sums of squares), evaluated with NumPy in time linear in the
number of ratings. The ratio level has no closed form; its sums run over pairs of distinct values in
bounded-memory NumPy blocks (quadratic work, see :func:`krippendorff_alpha`). Results agree with
the reference kit ``ek`` to a relative 1e-9; they can differ in the last bits because the sums are
added in another order.

>>> import tempfile; root = tempfile.mkdtemp()
>>> gold = {"d1": {"input": "cat", "reference": "cat", "slice": "easy"},
...         "d2": {"input": "dgo", "reference": "dog", "slice": "hard"}}
>>> report = evaluate_store(str.strip, gold, metric="cer")
>>> report.per_slice, report.detail["per_item"]["d2"]["score"]
({'easy': 0.0, 'hard': 0.6666666666666666}, 0.6666666666666666)
>>> save_baseline(report, "v1", rootdir=root)["aggregate"]
0.3333333333333333
>>> gate = regression_gate(evaluate_store(lambda x: "", gold, metric="cer"), "v1", rootdir=root)
>>> bool(gate), sorted(gate.regressions)
(False, ['__aggregate__', 'easy', 'hard'])
>>> krippendorff_alpha([[1, 1, 1, 1], [1, 1, 1, 1]])     # two raters, perfect agreement
1.0
>>> krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 5]], level="interval")
0.9369369369369369
>>> cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"])
0.5
>>> percent_agreement(["a", "a", "b", "b"], ["a", "b", "b", "b"])
0.75
"""

from __future__ import annotations

import itertools
import math
import numbers
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from itertools import chain
from typing import Any, Optional, Union

import numpy as np

from scorekit.base import Report
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError, ScorekitError, describe
from scorekit.stores import JsonStore, json_key, json_store

__all__ = ["evaluate_store", "save_baseline", "load_baseline", "resolve_baseline", "regression_gate", "GateResult",
           "LOWER_IS_BETTER", "AGGREGATE", "LEVELS", "RATIO_MAX_DISTINCT", "krippendorff_alpha", "cohen_kappa",
           "percent_agreement"]

LOWER_IS_BETTER = frozenset({"cer", "wer", "graph", "typed_graph"})
"""Metric names :func:`regression_gate` treats as lower-is-better when no score says."""

AGGREGATE = "__aggregate__"
"""The key of the aggregate's entry in :attr:`GateResult.regressions` (slices use their labels)."""

LEVELS = ("nominal", "ordinal", "interval", "ratio")
"""The measurement levels of :func:`krippendorff_alpha`."""

RATIO_MAX_DISTINCT = 250_000
"""Most distinct values :func:`krippendorff_alpha` accepts at the ratio level, whose expected
disagreement has one term per pair of them (about a minute at this limit on one core)."""

#: Elements of one temporary array in the ratio-level pair sums (2 MiB of float64).
_BLOCK = 1 << 18
#: Cell types that NumPy converts to float64 exactly as ``float()`` does (``None`` becomes NaN).
_PLAIN_NUMBERS = frozenset({float, int, bool, type(None)})
# Small inputs are counted in Python, where NumPy's fixed cost per call would outweigh the work:
# Cohen's kappa below this many items, nominal alpha below this many cells of these types.
_SMALL_ITEMS = 512
_PLAIN_LABELS = _PLAIN_NUMBERS | {str}
# NumPy adds fewer terms than this left to right (from 8 on, in 8 interleaved partial sums), so a
# Python loop over fewer terms gives the same bits.
_NUMPY_SEQUENTIAL_BELOW = 8
_NUMERIC_KINDS = "biuf"


# --------------------------------------------------------------------------------------------
# A predictor over gold: evaluate_store
# --------------------------------------------------------------------------------------------


def _gold_items(gold: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(gold, Mapping):
        return iter(gold.items())
    if isinstance(gold, (str, bytes)) or not isinstance(gold, Iterable):
        raise InvalidTypeError("must be a mapping key -> record or an iterable of (key, record) pairs, got "
                               f"{describe(gold)}", field="gold")
    return _gold_pairs(gold)


def _gold_pairs(pairs: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    for i, pair in enumerate(pairs):
        try:
            key, record = pair
        except (TypeError, ValueError):
            raise InvalidTypeError(f"must be a (key, record) pair, got {describe(pair)}", field=f"gold[{i}]") from None
        yield key, record


def _field_of(record: Mapping, name: str, key: Any) -> Any:
    try:
        return record[name]
    except KeyError:
        raise KeyError(f"gold[{key!r}] has no {name!r} field") from None


def _item_score(score: Any, key: Any) -> float:
    try:
        return float(score)
    except (TypeError, ValueError):
        raise InvalidTypeError(f"the metric returned {describe(score)}; a score must be a number or a Score",
                               field=f"gold[{key!r}]") from None


def evaluate_store(predict: Callable[[Any], Any], gold: Any, *, metric: Any = None, grammar: Any = None,
                   normalize: Any = None, weights: Any = None, input_key: str = "input",
                   reference_key: str = "reference", slice_key: str = "slice", persist: bool = False,
                   run_id: Optional[str] = None, rootdir: Any = None) -> Report:
    """Run ``predict`` over every gold record and score the predictions, per slice.

    ``gold`` maps each key to a record ``{input, reference, [slice], ...}`` (a dict or a gold
    :class:`~scorekit.stores.JsonStore`), or is an iterable of ``(key, record)`` pairs (keys must
    then be distinct). Records are read in order; ``predict(record[input_key])`` is scored against
    ``record[reference_key]`` by :func:`scorekit.evaluate` with ``metric``, ``grammar``,
    ``normalize`` and ``weights`` (so the metric is picked from the first item's types when not
    given), and ``record.get(slice_key)`` labels its slice (``None``: in the aggregate only). A
    record without the input or reference field raises ``KeyError`` before ``predict`` is called
    on it; an exception of ``predict`` propagates.

    ``report.detail["per_item"]`` maps every key to ``{prediction, reference, slice, score}``, the
    score as a float (a metric may return a ``Score`` or a plain number).

    ``persist=True`` writes ``{metric, aggregate, n, per_slice, per_item}`` to the ``results``
    store and the same without ``per_item`` to ``runs``, under ``run_id``, in ``rootdir`` (see
    :func:`~scorekit.stores.data_dir`). The per-item results are written to disk one item per
    line as they are encoded, never as one big string. Without a ``run_id`` the run is named
    ``run-<UTC time to the second>``, with ``-2``, ``-3`` … added when an earlier run has that
    name: a default id never replaces an earlier run (an explicit ``run_id`` does).
    The id is in ``report.detail["run_id"]``. The stores hold strict JSON: a NaN or infinite
    score or aggregate is stored as ``null`` (the report keeps it), and keys and slice labels
    become JSON keys (``1`` → ``"1"``); predictions and references must be JSON-serialisable.

    >>> gold = [("a", {"input": "hello wrld", "reference": "hello world"}),
    ...         ("b", {"input": "good", "reference": "good", "slice": "short"})]
    >>> r = evaluate_store(lambda text: text, gold, metric="wer")
    >>> r.n, r.aggregate, r.per_slice, r.detail["per_item"]["a"]["score"]
    (2, 0.3333333333333333, {'short': 0.0}, 0.5)
    """
    from scorekit.facade import evaluate

    if not callable(predict):
        raise InvalidTypeError(f"must be callable (input -> prediction), got {describe(predict)}", field="predict")
    for name, value in (("input_key", input_key), ("reference_key", reference_key), ("slice_key", slice_key)):
        if not isinstance(value, str):
            raise InvalidTypeError(f"must be a str, got {describe(value)}", field=name)
    if run_id is not None and not isinstance(run_id, str):
        raise InvalidTypeError(f"must be a str or None, got {describe(run_id)}", field="run_id")
    if persist:  # a bad root or run id fails before the predictor runs
        results = json_store("results", rootdir=rootdir)
        if run_id is not None:
            results.path(run_id)

    per_item: dict[Any, dict[str, Any]] = {}

    def cases() -> Iterator[tuple[Any, Any, Any]]:
        for key, record in _gold_items(gold):
            if not isinstance(record, Mapping):
                raise InvalidTypeError(f"must be a mapping record, got {describe(record)}", field=f"gold[{key!r}]")
            try:
                seen = key in per_item
            except TypeError:
                raise InvalidTypeError(f"must be hashable, got {describe(key)}", field="gold keys") from None
            if seen:
                raise InvalidValueError("appears twice", field=f"gold key {key!r}")
            value = _field_of(record, input_key, key)
            reference = _field_of(record, reference_key, key)
            label = record.get(slice_key)
            prediction = predict(value)
            per_item[key] = {"prediction": prediction, "reference": reference, "slice": label}
            yield prediction, reference, label

    report = evaluate(cases(), metric=metric, grammar=grammar, normalize=normalize, weights=weights)
    for (key, item), score in zip(per_item.items(), report.scores):
        item["score"] = _item_score(score, key)
    report.detail["per_item"] = per_item
    if persist:
        report.detail["run_id"] = _persist(report, per_item, run_id, rootdir)
    return report


def _is_number(value: Any) -> bool:
    """A score or ``None`` (NaN included)."""
    return value is None or type(value) is float or isinstance(value, numbers.Real)


def _not_a_number(value: Any, what: str) -> InvalidTypeError:
    return InvalidTypeError(f"must be a number or None, got {describe(value)}", field=what)


def _stored_number(value: Any, what: str, label: Any = None) -> Optional[float]:
    """A score as the stores keep it: a float, or ``None`` for none, NaN and infinities. Errors
    name ``what`` (with ``[label]`` when given)."""
    if value is None:
        return None
    if type(value) is not float:
        if not isinstance(value, numbers.Real):
            raise _not_a_number(value, what if label is None else f"{what}[{label!r}]")
        value = float(value)
    return value if math.isfinite(value) else None


def _stored_slices(per_slice: Any, what: str) -> dict[str, Optional[float]]:
    if not isinstance(per_slice, Mapping):
        raise InvalidTypeError(f"must be a mapping label -> score, got {describe(per_slice)}", field=what)
    stored: dict[str, Optional[float]] = {}
    for label, value in per_slice.items():
        text = json_key(label)
        if text in stored:
            raise InvalidValueError(f"has two labels stored as the same JSON key {text!r}", field=what)
        stored[text] = _stored_number(value, what, label)
    return stored


class _StoredItems(Mapping):
    """``per_item`` as the results store keeps it (a NaN or infinite score becomes ``None``),
    item by item as the writer reaches it."""

    def __init__(self, per_item: Mapping) -> None:
        self._items = per_item

    def __getitem__(self, key: Any) -> dict[str, Any]:
        item = self._items[key]
        return {**item, "score": _stored_number(item.get("score"), "per_item", key)}

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def fresh_run_ids(runs: JsonStore, prefix: str = "run") -> Iterator[str]:
    """``<prefix>-<UTC time>``, then the same with ``-2``, ``-3`` …, skipping ids ``runs`` has
    (offered to :meth:`JsonStore.write_new`, which also skips ids another writer takes)."""
    stem = datetime.now(timezone.utc).strftime(f"{prefix}-%Y%m%dT%H%M%S")
    for n in itertools.count(1):
        candidate = stem if n == 1 else f"{stem}-{n}"
        if candidate not in runs:
            yield candidate


def _persist(report: Report, per_item: Mapping, run_id: Optional[str], rootdir: Any) -> str:
    summary = {"metric": report.metric, "aggregate": _stored_number(report.aggregate, "report.aggregate"),
               "n": report.n, "per_slice": _stored_slices(report.per_slice, "report.per_slice")}
    document = {**summary, "per_item": _StoredItems(per_item)}
    results, runs = json_store("results", rootdir=rootdir), json_store("runs", rootdir=rootdir)
    if run_id is None:
        run_id = results.write_new(document, fresh_run_ids(runs), stream="per_item")
    else:
        results.write(run_id, document, stream="per_item")
    runs[run_id] = summary
    return run_id


# --------------------------------------------------------------------------------------------
# Baselines and the regression gate
# --------------------------------------------------------------------------------------------


def _report_fields(report: Any, caller: str) -> tuple[str, Any, Mapping, int]:
    try:
        metric, aggregate, per_slice, n = report.metric, report.aggregate, report.per_slice, report.n
    except AttributeError:
        raise InvalidTypeError(f"{caller}: report must be a Report (metric, aggregate, per_slice, n), got "
                               f"{describe(report)}") from None
    if not isinstance(per_slice, Mapping):
        raise InvalidTypeError(f"must be a mapping label -> score, got {describe(per_slice)}", field="report.per_slice")
    if not _is_count(n):
        raise InvalidTypeError(f"must be a whole number of items >= 0, got {describe(n)}", field="report.n")
    return metric, aggregate, per_slice, n


def _is_count(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _comparable(value: Any) -> bool:
    """A score a gate can compare: a finite number (not ``None``, NaN or an infinity)."""
    return value is not None and math.isfinite(value)


def _baseline_record(report: Any, caller: str) -> dict[str, Any]:
    metric, aggregate, per_slice, n = _report_fields(report, caller)
    return {"metric": metric, "aggregate": _stored_number(aggregate, "report.aggregate"),
            "per_slice": _stored_slices(per_slice, "report.per_slice"), "n": n}


def save_baseline(report: Report, name: str, *, rootdir: Any = None) -> dict:
    """Freeze ``report``'s metric, aggregate, per-slice scores and size as the baseline ``name``
    in the ``baselines`` store; returns the record as stored.

    Slice labels become JSON keys (``1`` → ``"1"``). A report of zero items, or whose aggregate or
    a slice is missing, NaN or infinite, is refused: no later run could be compared with it (the
    gate would fail every time, see :func:`regression_gate`). The store is shared with the agent
    baselines, so give the two different names.
    """
    record = _baseline_record(report, "save_baseline")
    if record["n"] == 0:
        raise InvalidValueError(f"save_baseline({name!r}): refusing to freeze a report of zero items; every later "
                                "run would pass against it")
    unscored = [AGGREGATE] if record["aggregate"] is None else []
    unscored += [label for label, value in record["per_slice"].items() if value is None]
    if unscored:
        raise InvalidValueError(f"save_baseline({name!r}): refusing to freeze a report with no finite score for "
                                f"{', '.join(map(repr, unscored))}; no later run could be compared with it")
    json_store("baselines", rootdir=rootdir)[name] = record
    return record


def load_baseline(name: str, *, rootdir: Any = None) -> Optional[dict]:
    """The baseline ``name`` from the ``baselines`` store, or ``None`` when there is none. A
    corrupt file (not strict JSON: ``NaN`` and ``Infinity`` included) raises
    :class:`~scorekit.stores.CorruptStoreFileError` naming it."""
    store = json_store("baselines", rootdir=rootdir)
    try:
        record = store[name]
    except KeyError:
        return None
    if not isinstance(record, dict):
        raise InvalidValueError(f"{store.path(name)}: a baseline is a JSON object, this file holds "
                                f"{type(record).__name__}; the file was left as it is")
    return record


@dataclass
class GateResult:
    """The outcome of :func:`regression_gate`; ``bool(gate)`` is ``gate.passed``.

    ``regressions`` maps :data:`AGGREGATE` (the aggregate) and each regressed slice label to
    ``{"current": …, "baseline": …}``; ``reasons`` says, one line each, why the gate failed:
    every regression and everything that could not be compared.
    """

    passed: bool
    metric: str
    higher_is_better: bool
    tolerance: float
    aggregate_current: Optional[float] = None
    aggregate_baseline: Optional[float] = None
    regressions: dict = field(default_factory=dict)
    reasons: list = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.passed)


def _direction(report: Any, metric: str) -> bool:
    """Higher is better? The first score that says so in ``detail["higher_is_better"]`` decides,
    else the metric's name (:data:`LOWER_IS_BETTER`)."""
    for score in getattr(report, "scores", None) or ():
        detail = getattr(score, "detail", None)
        if isinstance(detail, Mapping) and detail.get("higher_is_better") is not None:
            return bool(detail["higher_is_better"])
    return metric not in LOWER_IS_BETTER


def resolve_baseline(baseline: Any, *, rootdir: Any, agent: bool, report_type: type,
                     record_of: Callable[[Any], dict]) -> Optional[tuple[dict, str]]:
    """The record a gate compares with, and how errors name it; ``None`` for no baseline (a
    baseline name never saved, or ``None``). The one reading of a gate's ``baseline`` argument,
    for :func:`regression_gate` (``agent=False``) and the agents' gate (``agent=True``): a name in
    the ``baselines`` store (:func:`load_baseline`), a report of ``report_type`` (its record is
    ``record_of(report)``) or a record. A record of the other kind of gate is refused (an agent
    record says ``kind: agent``; a metric record names its ``metric``)."""
    if baseline is None:
        return None
    if isinstance(baseline, str):
        record, where = load_baseline(baseline, rootdir=rootdir), f"baseline {baseline!r}"
        if record is None:
            return None
    elif isinstance(baseline, report_type):
        return record_of(baseline), "the baseline"
    elif isinstance(baseline, Mapping):
        record, where = dict(baseline), "the baseline"
    else:
        raise InvalidTypeError(f"must be a baseline name, a baseline dict, a {report_type.__name__} or None, got "
                               f"{describe(baseline)}", field="baseline")
    if (record.get("kind") == "agent") if not agent else (record.get("kind") != "agent" and "metric" in record):
        made, gate = (("save_agent_baseline", "scorekit.agents.agent_regression_gate") if not agent
                      else ("save_baseline", "scorekit.harness.regression_gate"))
        raise InvalidValueError(f"{where} is {'an agent' if not agent else 'a metric'} baseline ({made}); gate it "
                                f"with {gate}")
    return record, where


def _metric_baseline(baseline: Any, rootdir: Any) -> Optional[dict]:
    """:func:`resolve_baseline` for :func:`regression_gate`, with the checks of a metric record."""
    found = resolve_baseline(baseline, rootdir=rootdir, agent=False, report_type=Report,
                             record_of=lambda report: dict(zip(("metric", "aggregate", "per_slice", "n"),
                                                               _report_fields(report, "regression_gate"))))
    if found is None:
        return None
    record, where = found
    if "aggregate" not in record and "per_slice" not in record:
        raise InvalidValueError(f"{where} has neither 'aggregate' nor 'per_slice': it was not made by "
                                "save_baseline, and gating against it would pass vacuously")
    if record.get("metric") is None:
        raise InvalidValueError(f"{where} names no metric: it was not made by save_baseline, and nothing shows it "
                                "measured what this report measures (re-baseline, or add its 'metric')")
    if "n" in record and not _is_count(record["n"]):
        raise InvalidTypeError(f"must be a whole number of items >= 0, got {describe(record['n'])}",
                               field="baseline['n']")
    return record


def check_tolerance(value: Any, name: str = "tolerance") -> Any:
    """``value`` if it is a finite number ``>= 0``, else :class:`InvalidValueError` naming ``name``
    (a NaN tolerance makes every comparison false, so a gate would pass anything)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value >= 0):
        raise InvalidValueError(f"must be a finite number >= 0, got {describe(value)}", field=name)
    return value


def _compare(what: str, current: Any, baseline: Any, higher_is_better: bool, tolerance: float) -> Optional[str]:
    """Why ``current`` fails against ``baseline``: a regression by more than ``tolerance``, or a
    value that is missing, NaN or infinite on either side; ``None`` when it passes."""
    if not (_comparable(current) and _comparable(baseline)):
        return f"{what} could not be compared: current {current!r}, baseline {baseline!r} (need finite scores)"
    change = baseline - current if higher_is_better else current - baseline
    if change > tolerance:
        better = "higher" if higher_is_better else "lower"
        return f"{what} regressed: {current!r} vs baseline {baseline!r} ({better} is better, tolerance {tolerance})"
    return None


def _by_json_key(labels: Iterable[Any]) -> dict[str, Any]:
    """Each label's JSON key text -> the first label with that text."""
    by_text: dict[str, Any] = {}
    for label in labels:
        try:
            by_text.setdefault(json_key(label), label)
        except ScorekitError:
            continue
    return by_text


def _matched_slices(current: Mapping, baseline: Mapping) -> Iterator[tuple[Any, Any]]:
    """``(label, baseline label)`` for each slice of ``current`` that ``baseline`` has too,
    labels matched as they are or as JSON keys (a baseline read back from its file has ``"1"``
    for the slice ``1``)."""
    by_text: Optional[dict[str, Any]] = None
    for label in current:
        if label in baseline:
            yield label, label
            continue
        try:
            text = json_key(label)
        except ScorekitError:
            continue
        if by_text is None:
            by_text = _by_json_key(baseline)
        if text in by_text:
            yield label, by_text[text]


def regression_gate(report: Report, baseline: Any, *, tolerance: float = 0.0,
                    higher_is_better: Optional[bool] = None, rootdir: Any = None) -> GateResult:
    """Fail when ``report`` is worse than ``baseline`` by more than ``tolerance``, on the
    aggregate or on any slice, and whenever the two cannot be compared.

    ``baseline`` is a name in the ``baselines`` store, a record from :func:`save_baseline`, or a
    :class:`~scorekit.base.Report`. No baseline (``None`` or a name never saved) passes: it is
    the first run. The direction is ``higher_is_better`` when given, else the first score's
    ``detail["higher_is_better"]``, else the metric's name (CER, WER and graph distances are
    lower-is-better). A score regresses when ``baseline - current > tolerance`` (higher is
    better) or ``current - baseline > tolerance`` (lower is better); ``tolerance`` must be finite
    and ``>= 0``.

    The gate fails closed, and ``reasons`` says why: a report of zero items fails (even without
    a baseline), and so does a score it cannot compare, ``None``, NaN or infinite on either side
    (the aggregate, a slice both sides have), or a baseline slice the report does not have. A
    slice only the report has is new and not compared. Slice labels match as they are or as JSON
    keys. A baseline of another metric, or naming none, raises ``ValueError``; so does an agent
    baseline, or a dict that holds neither an aggregate nor slices.

    >>> from scorekit.base import Report
    >>> now = Report(metric="cer", aggregate=0.12, n=40, per_slice={"scans": 0.30, "born-digital": 0.02})
    >>> then = {"metric": "cer", "aggregate": 0.10, "per_slice": {"scans": 0.20, "born-digital": 0.03}}
    >>> gate = regression_gate(now, then, tolerance=0.05)
    >>> bool(gate), gate.regressions
    (False, {'scans': {'current': 0.3, 'baseline': 0.2}})
    >>> gate.reasons
    ["slice 'scans' regressed: 0.3 vs baseline 0.2 (lower is better, tolerance 0.05)"]
    """
    metric, aggregate, per_slice, n = _report_fields(report, "regression_gate")
    tolerance = check_tolerance(tolerance)
    if higher_is_better is not None and not isinstance(higher_is_better, (bool, np.bool_)):
        raise InvalidTypeError(f"must be True, False or None, got {describe(higher_is_better)}",
                               field="higher_is_better")
    hib = bool(higher_is_better) if higher_is_better is not None else _direction(report, metric)
    if not _is_number(aggregate):
        raise _not_a_number(aggregate, "report.aggregate")
    base = _metric_baseline(baseline, rootdir)
    reasons: list[str] = []
    if n == 0:
        reasons.append("the report scored zero items (n=0): an empty run cannot pass a regression gate")
    if base is None:
        if not _comparable(aggregate):
            reasons.append(f"the aggregate is {aggregate!r}: a run without a finite score cannot pass a gate")
        return GateResult(not reasons, metric, hib, tolerance, aggregate_current=aggregate, reasons=reasons)
    if base["metric"] != metric:
        raise InvalidValueError(f"baseline metric {base['metric']!r} != report metric {metric!r}; refusing to "
                                "compare incomparable scores (re-baseline against the new metric).")
    if base.get("n") == 0:
        reasons.append("the baseline scored zero items (n=0): nothing can be compared with it")
    base_aggregate = base.get("aggregate")
    if not _is_number(base_aggregate):
        raise _not_a_number(base_aggregate, "baseline['aggregate']")
    base_slices = base.get("per_slice") or {}
    if not isinstance(base_slices, Mapping):
        raise InvalidTypeError(f"must be a mapping label -> score, got {describe(base_slices)}",
                               field="baseline['per_slice']")
    regressions: dict[Any, dict[str, Any]] = {}
    why = _compare("the aggregate", aggregate, base_aggregate, hib, tolerance)
    if why is not None:
        reasons.append(why)
        if _comparable(aggregate) and _comparable(base_aggregate):
            regressions[AGGREGATE] = {"current": aggregate, "baseline": base_aggregate}
    compared = set()
    for label, base_label in _matched_slices(per_slice, base_slices):
        if label == AGGREGATE:
            raise InvalidValueError(f"{AGGREGATE!r} names the aggregate in GateResult.regressions; rename the slice",
                                    field="slice label")
        current, before = per_slice[label], base_slices[base_label]
        if not _is_number(current):
            raise _not_a_number(current, f"report.per_slice[{label!r}]")
        if not _is_number(before):
            raise _not_a_number(before, f"baseline['per_slice'][{label!r}]")
        compared.add(base_label)
        why = _compare(f"slice {label!r}", current, before, hib, tolerance)
        if why is not None:
            reasons.append(why)
            if _comparable(current) and _comparable(before):
                regressions[label] = {"current": current, "baseline": before}
    reasons += [f"slice {label!r} could not be compared: the baseline has it, this report does not"
                for label in base_slices if label not in compared]
    return GateResult(not reasons, metric, hib, tolerance, aggregate_current=aggregate,
                      aggregate_baseline=base_aggregate, regressions=regressions, reasons=reasons)


# --------------------------------------------------------------------------------------------
# Two raters: percent agreement and Cohen's kappa
# --------------------------------------------------------------------------------------------


def _labels(values: Any, name: str) -> Sequence[Any]:
    if isinstance(values, (list, tuple)):
        return values
    if isinstance(values, np.ndarray) and values.ndim:
        return values.tolist()
    try:
        return list(values)
    except TypeError:
        raise InvalidTypeError(f"must be a sequence of labels, got {describe(values)}", field=name) from None


def _two_raters(rater_a: Any, rater_b: Any) -> tuple[Sequence[Any], Sequence[Any]]:
    a, b = _labels(rater_a, "rater_a"), _labels(rater_b, "rater_b")
    if len(a) != len(b):
        raise InvalidValueError("raters must label the same number of items")
    return a, b


def _agreements(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many items the two raters labelled equal (``==``, so NaN never agrees with NaN)."""
    return len(list(filter(None, map(operator.eq, a, b))))


def percent_agreement(rater_a: Sequence[Any], rater_b: Sequence[Any]) -> float:
    """Raw fraction of items two raters labelled identically (``1.0`` when there are none).

    >>> percent_agreement([1, 2, 3, 4], [1, 2, 3, 5])
    0.75
    """
    a, b = _two_raters(rater_a, rater_b)
    if not a:
        return 1.0
    return _agreements(a, b) / len(a)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _not_hashable(values: Iterable[Any]) -> InvalidTypeError:
    bad = next(v for v in values if not _hashable(v))
    return InvalidTypeError(f"must be hashable, got {describe(bad)}", field="labels")


def _integer_counts(a: Sequence[Any], b: Sequence[Any]) -> Optional[tuple[np.ndarray, np.ndarray, int]]:
    """:func:`_shared_counts` for integer labels, with NumPy; ``None`` for other labels."""
    if not set(map(type, a)) | set(map(type, b)) <= {int, bool}:
        return None
    try:
        x, y = np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)
    except OverflowError:
        return None
    both = np.concatenate([x, y])
    lo, hi = int(both.min()), int(both.max())
    ids = both - lo if hi - lo <= 4 * both.size else np.unique(both, return_inverse=True)[1].reshape(-1)
    size = int(ids.max()) + 1
    return (np.bincount(ids[: x.size], minlength=size), np.bincount(ids[x.size:], minlength=size),
            int(np.count_nonzero(x == y)))


def _shared_counts(a: Sequence[Any], b: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """How often each rater gave each label (two aligned arrays; labels only one rater used may be
    left out), and the number of agreements."""
    counted = _integer_counts(a, b)
    if counted is not None:
        return counted
    try:
        count_a, count_b = Counter(a), Counter(b)
    except TypeError:
        raise _not_hashable(chain(a, b)) from None
    shared = count_a.keys() & count_b.keys()
    return (np.array([count_a[k] for k in shared], dtype=np.int64),
            np.array([count_b[k] for k in shared], dtype=np.int64), _agreements(a, b))


def _tally(values: Sequence[Any]) -> dict[Any, int]:
    """How often each label occurs, in order of first occurrence (a ``Counter`` without its cost
    per call)."""
    counts: dict[Any, int] = {}
    try:
        for v in values:
            counts[v] = counts.get(v, 0) + 1
    except TypeError:
        raise _not_hashable(values) from None
    return counts


def _small_chance_agreement(a: Sequence[Any], b: Sequence[Any]) -> Optional[float]:
    """``p_e`` of :func:`cohen_kappa` counted in Python for plain labels: the terms
    :func:`_shared_counts` gives, in its order, added left to right as NumPy adds fewer than 8
    terms, so the same bits; ``None`` for other labels, or when NumPy would add 8 terms or more."""
    types = {*map(type, a), *map(type, b)}
    if not types <= _PLAIN_LABELS:
        return None
    n = len(a)
    first_a, first_b = dict.fromkeys(a), dict.fromkeys(b)  # keys in Counter's order
    shared: Iterable[Any] = first_a.keys() & first_b.keys()
    terms = len(shared)
    if types <= {int, bool}:
        labels = first_a.keys() | first_b.keys()
        lo, hi = min(labels), max(labels)
        if -2**63 <= lo and hi < 2**63:  # _integer_counts: one term per id, ids in label order
            terms = hi - lo + 1 if hi - lo <= 4 * 2 * n else len(labels)
            shared = sorted(shared)
    if terms >= _NUMPY_SEQUENTIAL_BELOW:
        return None
    p_e = 0.0
    for label in shared:
        p_e += (a.count(label) / n) * (b.count(label) / n)
    return p_e


def cohen_kappa(rater_a: Sequence[Any], rater_b: Sequence[Any]) -> float:
    """Cohen's kappa for two raters on nominal labels (chance-corrected agreement).

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the fraction of equal labels and ``p_e`` the sum over
    labels of the product of the two raters' label frequencies; ``1.0`` for no items or when
    ``p_e`` is 1 (both raters always give the same single label). Use it only for exactly two
    raters, nominal (hashable) labels and complete data; :func:`krippendorff_alpha` covers the rest.

    >>> cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1])
    -1.0
    >>> cohen_kappa([1, 1, 0, 0, 1], [1, 1, 0, 1, 1])
    0.5454545454545455
    """
    a, b = _two_raters(rater_a, rater_b)
    n = len(a)
    if n == 0:
        return 1.0
    p_e = _small_chance_agreement(a, b) if n < _SMALL_ITEMS else None
    if p_e is None:
        count_a, count_b, agreements = _shared_counts(a, b)
        p_e = float(((count_a / n) * (count_b / n)).sum())
    else:
        agreements = _agreements(a, b)
    p_o = agreements / n
    if p_e == 1.0:
        return 1.0
    return (p_o - p_e) / (1.0 - p_e)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha: reading the table
# --------------------------------------------------------------------------------------------


def _numeric_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind in _NUMERIC_KINDS


def _table(reliability_data: Any) -> Union[np.ndarray, tuple[list[Any], int, int]]:
    """A numeric 2-D array (one row per rater), or ``(cells, raters, items)`` with ``cells`` the
    flat row-major list of every cell."""
    if _numeric_array(reliability_data):
        if reliability_data.ndim != 2:
            raise InvalidValueError(f"must be 2-dimensional (raters x items), got shape "
                                    f"{reliability_data.shape}", field="reliability_data")
        return reliability_data
    try:
        rows = list(reliability_data)
    except TypeError:
        raise InvalidTypeError(f"must be a sequence of rows (one per rater), got "
                               f"{describe(reliability_data)}", field="reliability_data") from None
    for r, row in enumerate(rows):
        if _numeric_array(row):
            if row.ndim != 1:
                raise InvalidValueError(f"must be 1-dimensional, got shape {row.shape}",
                                        field=f"reliability_data[{r}]")
            continue
        try:
            rows[r] = list(row)
        except TypeError:
            raise InvalidTypeError(f"must be a sequence of labels (one per item), got {describe(row)}",
                                   field=f"reliability_data[{r}]") from None
    for r, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise InvalidValueError(
                f"rows must all have the same length (one column per item): row 0 has {len(rows[0])} "
                f"items, row {r} has {len(row)}", field="reliability_data")
    if rows and all(isinstance(row, np.ndarray) for row in rows):
        return np.vstack(rows)
    cells = list(chain.from_iterable(row.tolist() if isinstance(row, np.ndarray) else row for row in rows))
    return cells, len(rows), len(rows[0]) if rows else 0


def _missing(value: Any) -> bool:
    """``None`` or a NaN (a value not equal to itself)."""
    return value is None or value != value


def _where(cells_index: int, items: int) -> str:
    rater, item = divmod(cells_index, items)
    return f"reliability_data[{rater}][{item}]"


def _numbers(table: Union[np.ndarray, tuple[list[Any], int, int]], level: str) -> np.ndarray:
    """The table as float64, NaN where a cell is missing; every other cell must be a finite number
    (booleans count as 0 and 1)."""
    if isinstance(table, np.ndarray):
        values = table.astype(np.float64)
    else:
        cells, raters, items = table
        if not set(map(type, cells)) <= _PLAIN_NUMBERS:
            cells = [None if _missing(v) else v for v in cells]
            for k, v in enumerate(cells):
                if v is not None and not isinstance(v, (numbers.Real, Decimal)):
                    raise InvalidTypeError(f"must be a number at the {level} level, got {describe(v)}",
                                           field=_where(k, items))
        try:
            values = np.array(cells, dtype=np.float64).reshape(raters, items)
        except OverflowError:
            raise InvalidValueError(f"holds a number too large for a float at the {level} level",
                                    field="reliability_data") from None
    infinite = np.isinf(values)
    if infinite.any():
        rater, item = np.argwhere(infinite)[0]
        raise InvalidValueError(f"must be finite at the {level} level, got {values[rater, item]}",
                                field=f"reliability_data[{rater}][{item}]")
    return values


def _exact_floats(cells: list[Any], raters: int, items: int) -> Union[np.ndarray, tuple[list[Any], int, int]]:
    """Plain-number labels as a float64 table (None becomes NaN) when the conversion keeps every
    label's equality and order (integers up to 2**53), else the cells unchanged."""
    if set(map(type, cells)) <= _PLAIN_NUMBERS:
        try:
            values = np.array(cells, dtype=np.float64)
        except OverflowError:
            return cells, raters, items
        if not (np.abs(values) > 2.0 ** 53).any():
            return values.reshape(raters, items)
    return cells, raters, items


def _intern(cells: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Label ids of ``cells`` (equal labels share an id, as in a ``dict``) and the distinct labels."""
    try:
        index = dict.fromkeys(cells)
    except TypeError:
        raise _not_hashable(cells) from None
    labels = list(index)
    index = dict(zip(labels, range(len(labels))))
    return np.fromiter(map(index.__getitem__, cells), dtype=np.int64, count=len(cells)), labels


def _label_codes(table: Union[np.ndarray, tuple[list[Any], int, int]], ordered: bool) -> np.ndarray:
    """Label ids, ``-1`` where a cell is missing; with ``ordered``, ids follow the labels' order."""
    if not isinstance(table, np.ndarray):
        table = _exact_floats(*table)
    if isinstance(table, np.ndarray):
        present = ~np.isnan(table) if table.dtype.kind == "f" else np.ones(table.shape, dtype=bool)
        codes = np.full(table.shape, -1, dtype=np.int64)
        codes[present] = np.unique(table[present], return_inverse=True)[1].reshape(-1)
        return codes
    cells, raters, items = table
    codes, labels = _intern(cells)
    kept = [k for k, label in enumerate(labels) if not _missing(label)]
    if ordered:
        try:
            kept.sort(key=labels.__getitem__)
        except TypeError as exc:
            raise InvalidTypeError(f"must be mutually comparable at the ordinal level ({exc})",
                                   field="labels") from None
    renumber = np.full(len(labels), -1, dtype=np.int64)
    renumber[kept] = np.arange(len(kept))
    return renumber[codes].reshape(raters, items)


# --------------------------------------------------------------------------------------------
# Krippendorff's alpha: the disagreement sums
# --------------------------------------------------------------------------------------------
#
# With o[c,k] the coincidence matrix, a unit (column) holding m values contributes
# cnt_c * cnt_k / (m - 1) to o[c,k] (cnt_c * (cnt_c - 1) / (m - 1) on the diagonal), so
#   n_c = sum_k o[c,k] = number of pairable values equal to c,   n = sum_c n_c,
#   D_o = sum_{c!=k} o[c,k] delta2(c,k) = sum_units pairs(unit) / (m - 1),
#   D_e = sum_{c!=k} n_c n_k delta2(c,k) = pairs(all pairable values),
# where pairs(values) = sum over ordered pairs (i, j) of delta2(v_i, v_j) (delta2(c,c) = 0, so the
# diagonal terms drop out). For delta2 = (c - k)**2, pairs(v) = 2 m sum(d**2) - 2 sum(d)**2 for
# d = v - s and any shift s; nominal is pairs(v) = m**2 - sum_c cnt_c**2.


def _disagreement(pair_sums: np.ndarray, sizes: np.ndarray) -> float:
    """``D_o``: the sum of each unit's pair sum over ``m - 1``, units of one size added first."""
    totals = np.bincount(sizes, weights=pair_sums)
    return float(sum(totals[m] / (m - 1) for m in np.flatnonzero(totals)))


def _alpha(n: int, observed: float, expected: float) -> float:
    return 1.0 - (n - 1) * observed / expected


def _nominal(codes: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> float:
    counts = np.bincount(codes[present])
    if np.count_nonzero(counts) < 2:
        return 1.0
    n = int(sizes.sum())
    expected = n * n - int(np.dot(counts, counts))
    # sum_c cnt_c**2 per unit: sort each column; the k-th copy of a value (k = 0, 1, ...) adds
    # 2k + 1, and 1 + 3 + ... + (2L - 1) = L**2 for a run of L equal values.
    ordered = np.sort(codes, axis=0)
    row = np.arange(ordered.shape[0])[:, None]
    new_run = np.ones(ordered.shape, dtype=bool)
    new_run[1:] = ordered[1:] != ordered[:-1]
    copy = row - np.maximum.accumulate(np.where(new_run, row, 0), axis=0)
    same = ((2 * copy + 1) * (ordered >= 0)).sum(axis=0)
    return _alpha(n, _disagreement(sizes * sizes - same, sizes), expected)


def _small_nominal(cells: list[Any], raters: int, items: int) -> float:
    """:func:`_nominal` counted in Python for a small table of plain labels: the same integer
    counts, and ``D_o`` added over unit sizes in ascending order as :func:`_disagreement` adds
    them, so the same bits."""
    units = []
    for item in range(items):
        labels = [v for v in cells[item::items] if not _missing(v)]
        if len(labels) >= 2:
            units.append(labels)
    counts = _tally(list(chain.from_iterable(units)))
    if len(counts) < 2:
        return 1.0
    n = sum(map(len, units))
    expected = n * n - sum(k * k for k in counts.values())
    totals: dict[int, int] = {}
    for labels in units:
        # sum of squared label counts = sum over the labels of how often each occurs
        m = len(labels)
        totals[m] = totals.get(m, 0) + m * m - sum(map(labels.count, labels))
    observed = 0.0
    for m in sorted(totals):
        if totals[m]:
            observed += totals[m] / (m - 1)
    return _alpha(n, observed, expected)


def _nearest_to_mean(values: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per column, the present value closest to the column's mean (a stable shift: an all-equal
    column gets deviations of exactly 0)."""
    mean = np.where(present, values, 0.0).sum(axis=0) / sizes
    nearest = np.where(present, np.abs(values - mean), np.inf).argmin(axis=0)
    return values[nearest, np.arange(values.shape[1])]


def _squared_pairs(values: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per column, the sum of ``(v_i - v_j)**2`` over ordered pairs of its present values."""
    d = np.where(present, values - _nearest_to_mean(values, present, sizes), 0.0)
    return np.maximum(2.0 * sizes * (d * d).sum(axis=0) - 2.0 * d.sum(axis=0) ** 2, 0.0)


def _interval(values: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> float:
    pooled = values[present]
    if pooled.min() == pooled.max():
        return 1.0
    n = pooled.size
    expected = float(_squared_pairs(pooled[:, None], np.ones((n, 1), dtype=bool), np.array([n]))[0])
    return _alpha(n, _disagreement(_squared_pairs(values, present, sizes), sizes), expected)


def _ordinal(codes: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> float:
    # delta2(c, k) = (sum_{g in [c, k]} n_g - (n_c + n_k) / 2)**2 = (M_k - M_c)**2 with the
    # mid-rank M_v = sum_{g < v} n_g + n_v / 2, so the ordinal level is the interval one on M.
    counts = np.bincount(codes[present])
    midrank = np.cumsum(counts) - counts / 2.0
    return _interval(np.where(present, midrank[np.maximum(codes, 0)], 0.0), present, sizes)


def _ratio_delta2(c: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``((c - k) / (c + k))**2`` for every pair of ``c`` and ``k`` (broadcast), and ``0`` where
    ``c + k == 0``."""
    total = c + k
    undefined = total == 0
    quotient = np.subtract(c, k)
    np.divide(quotient, total, out=quotient, where=~undefined)
    quotient[undefined] = 0.0
    return np.multiply(quotient, quotient, out=quotient)


def _ratio_expected(distinct: np.ndarray, counts: np.ndarray) -> float:
    """``D_e`` at the ratio level: sum of ``n_c n_k delta2(c, k)`` over ordered pairs of distinct
    values, a block of rows at a time against the columns from the block's first row on. Pairs
    inside the block's square come in both orders; the others (columns past the block) once, so
    they count twice."""
    if distinct.size > RATIO_MAX_DISTINCT:
        raise InputTooLargeError(
            f"has {distinct.size} distinct values at the ratio level, more than RATIO_MAX_DISTINCT="
            f"{RATIO_MAX_DISTINCT} (its expected disagreement costs one term per pair of distinct "
            "values); round the values, or use level='interval'", field="reliability_data")
    expected, width = 0.0, max(1, _BLOCK // distinct.size)
    for lo in range(0, distinct.size, width):
        hi = min(lo + width, distinct.size)
        delta2 = _ratio_delta2(distinct[lo:hi, None], distinct[None, lo:])
        weighted_rows = delta2 @ counts[lo:]
        weighted_square = delta2[:, : hi - lo] @ counts[lo:hi]
        expected += float(counts[lo:hi] @ (2.0 * weighted_rows - weighted_square))
    return expected


def _ratio(values: np.ndarray, present: np.ndarray, sizes: np.ndarray) -> float:
    distinct, counts = np.unique(values[present], return_counts=True)
    expected = _ratio_expected(distinct, counts.astype(np.float64))
    if expected == 0.0:
        return 1.0
    # D_o: every ordered pair of raters within each unit, a block of units (and, with very many
    # raters, of rows) at a time.
    raters, units = values.shape
    width = max(1, _BLOCK // (raters * raters))
    height = max(1, _BLOCK // (raters * width))
    pair_sums = np.zeros(units)
    for lo in range(0, units, width):
        v, p = values[:, lo:lo + width], present[:, lo:lo + width]
        for top in range(0, raters, height):
            delta2 = _ratio_delta2(v[top:top + height, None, :], v[None, :, :])
            delta2[~(p[top:top + height, None, :] & p[None, :, :])] = 0.0
            pair_sums[lo:lo + width] += delta2.sum(axis=(0, 1))
    return _alpha(int(sizes.sum()), _disagreement(pair_sums, sizes), expected)


def krippendorff_alpha(reliability_data: Any, *, level: str = "nominal") -> float:
    """Krippendorff's alpha, the general inter-annotator agreement coefficient.

    ``reliability_data`` has one row per rater and one column per item (a sequence of equally long
    sequences, or a 2-D NumPy array); ``None`` or a NaN marks an unlabelled cell. Any number of
    raters; ``level`` is ``"nominal"`` (any hashable labels), ``"ordinal"`` (labels that can be
    sorted), ``"interval"`` or ``"ratio"`` (finite real numbers; booleans count as 0 and 1).
    Alpha is ``1 - (n - 1) * D_o / D_e`` from the coincidence matrix (Krippendorff 2011): ``1.0``
    for perfect agreement, ``0.0`` at chance, negative for systematic disagreement. Only items
    with at least two labels count; with none, or when every pairable label is the same (``D_e``
    is 0), alpha is ``1.0``.

    Cost: linear in the number of cells for the nominal, ordinal and interval levels (closed forms
    of the pair sums); for ``"ratio"``, ``D_e`` runs over all pairs of distinct values (work
    quadratic in their number, memory bounded by blocks; more than :data:`RATIO_MAX_DISTINCT`
    raise :class:`~scorekit.errors.InputTooLargeError`) and ``D_o`` over all pairs of raters of
    each item. The reference kit ``ek`` adds the same terms in another order, so results agree
    with it to a relative 1e-9, not always to the last bit.

    Differences from ``ek`` (it accepts these): rows of different lengths, an unknown ``level``
    even when no item is pairable, a non-number at the interval/ratio level, an infinite value
    there and labels that cannot be sorted at the ordinal level raise an error wherever they are,
    even in an item that has no other label.

    >>> krippendorff_alpha([[1, 1, 1, 1], [1, 1, 1, 1]])
    1.0
    >>> krippendorff_alpha([[1, 0, 1, 0], [0, 1, 0, 1]])
    -0.75
    >>> ratings = [[1, 2, 3, 3, None],      # three raters, five items on a 1-5 scale
    ...            [1, 2, 4, 3, 5],
    ...            [2, 2, 4, 3, 5]]
    >>> krippendorff_alpha(ratings), krippendorff_alpha(ratings, level="ordinal")
    (0.6578947368421053, 0.9226190476190477)
    """
    if not isinstance(level, str) or level not in LEVELS:
        raise InvalidValueError(f"unknown level {level!r}; use nominal/ordinal/interval/ratio")
    table = _table(reliability_data)
    shape = table.shape if isinstance(table, np.ndarray) else table[1:]
    if 0 in shape:
        return 1.0
    if (level == "nominal" and not isinstance(table, np.ndarray) and len(table[0]) < _SMALL_ITEMS
            and set(map(type, table[0])) <= _PLAIN_LABELS):
        return _small_nominal(*table)
    with np.errstate(all="ignore"):
        if level in ("interval", "ratio"):
            values = _numbers(table, level)
            present = ~np.isnan(values)
        else:
            codes = _label_codes(table, ordered=level == "ordinal")
            present = codes >= 0
        sizes = present.sum(axis=0)
        units = sizes >= 2
        if not units.any():
            return 1.0
        present, sizes = present[:, units], sizes[units]
        if level == "nominal":
            return _nominal(codes[:, units], present, sizes)
        if level == "ordinal":
            return _ordinal(codes[:, units], present, sizes)
        values = np.where(present, values[:, units], 0.0)
        return (_interval if level == "interval" else _ratio)(values, present, sizes)
