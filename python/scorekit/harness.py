"""The offline evaluation harness (``ek.harness``): a predictor over gold, baselines and the regression
gate; the inter-annotator agreement statistics of :mod:`scorekit.interrater` are importable here too,
as in the reference kit.

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
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Optional

import numpy as np

from scorekit.base import Report
from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError, describe
from scorekit.interrater import LEVELS, RATIO_MAX_DISTINCT, cohen_kappa, krippendorff_alpha, percent_agreement
from scorekit.stores import JsonStore, json_key, json_store

__all__ = ["evaluate_store", "save_baseline", "load_baseline", "resolve_baseline", "regression_gate", "GateResult",
           "LOWER_IS_BETTER", "AGGREGATE", "LEVELS", "RATIO_MAX_DISTINCT", "krippendorff_alpha", "cohen_kappa",
           "percent_agreement"]  # the last four from scorekit.interrater, where the reference kit has them

LOWER_IS_BETTER = frozenset({"cer", "wer", "graph", "typed_graph"})
"""Metric names :func:`regression_gate` treats as lower-is-better when no score says."""

AGGREGATE = "__aggregate__"
"""The key of the aggregate's entry in :attr:`GateResult.regressions` (slices use their labels)."""



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
    is_agent_record = record.get("kind") == "agent"
    is_metric_record = not is_agent_record and "metric" in record
    if is_metric_record if agent else is_agent_record:
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
