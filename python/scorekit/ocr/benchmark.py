"""Offline OCR benchmark: run an engine over a gold corpus, score the text, slice, optionally persist.

The engine is any ``image -> OcrResult`` callable (or an ocracy backend id), so a benchmark runs
without engines or credentials. Text is scored by :func:`scorekit.facade.evaluate` (CER/WER summed
over the corpus by the batch kernels). Gold items, results and run summaries live in JSON stores,
one file per key under ``<root>/<kind>/<key>.json`` (the stores of :mod:`scorekit.stores`); the
root is ``rootdir=``, else ``$SCOREKIT_DATA_HOME``, else ``$EK_DATA_HOME``, else scorekit's data folder.

>>> import tempfile; root = tempfile.mkdtemp()
>>> gold = {
...     "d1": {"image": "ignored", "reference_text": "cat", "slice": "easy"},
...     "d2": {"image": "ignored", "reference_text": "dog", "slice": "easy"},
... }
>>> # a stub engine that always reads "cat" (perfect for d1, wrong for d2):
>>> engine = lambda image: type("R", (), {"text": "cat"})()
>>> report = evaluate_ocr(engine, gold, metric="cer", rootdir=root)
>>> report.n
2
>>> sorted(report.per_slice)
['easy']
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional, Union

from scorekit.base import Report
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.stores import KINDS, JsonStore
from scorekit.stores import data_root as stores_root

__all__ = ["STORE_KINDS", "JsonStore", "data_root", "store", "add_gold_item", "evaluate_ocr"]

STORE_KINDS = KINDS
"""The kinds of store under the data root (those of :mod:`scorekit.stores`)."""


def data_root(rootdir: Optional[Union[str, os.PathLike]] = None) -> Path:
    """``rootdir``, else the stores' data root (:func:`scorekit.stores.data_root`: ``$SCOREKIT_DATA_HOME``,
    ``$EK_DATA_HOME``, else the data folder ``scorekit where`` prints)."""
    if rootdir is not None:
        if not isinstance(rootdir, (str, os.PathLike)):
            raise InvalidTypeError(f"must be a path, got {type(rootdir).__name__}", field="rootdir")
        return Path(rootdir)
    return stores_root()


def store(kind: str, *, rootdir: Optional[Union[str, os.PathLike]] = None) -> JsonStore:
    """The JSON store of one ``kind`` (see :data:`STORE_KINDS`) under :func:`data_root`: a
    :class:`scorekit.stores.JsonStore`, with its key rules, confinement and strict JSON."""
    if kind not in STORE_KINDS:
        raise InvalidValueError(f"must be one of {list(STORE_KINDS)}, got {kind!r}", field="kind")
    return JsonStore(data_root(rootdir) / kind)


def add_gold_item(key: str, image: Any, reference_text: str, *, slice: Optional[str] = None,
                  rootdir: Optional[Union[str, os.PathLike]] = None, **extra: Any) -> None:
    """Write one gold example ``{"image", "reference_text", **extra[, "slice"]}`` to the gold store
    (overwriting ``key``). ``image`` is stored as a reference (path, URL …), not as bytes."""
    if not isinstance(reference_text, str):
        raise InvalidTypeError(f"must be a str, got {type(reference_text).__name__}", field="reference_text")
    record = {"image": image, "reference_text": reference_text, **extra}
    if slice is not None:
        record["slice"] = slice
    store("gold", rootdir=rootdir)[key] = record


def _resolve_engine(engine: Any) -> Callable[[Any], Any]:
    if isinstance(engine, str):
        from scorekit.ocr.bridge import ocracy_backend

        return ocracy_backend(engine)
    if not callable(engine):
        raise InvalidTypeError(f"must be an image -> OcrResult callable or an ocracy backend id, "
                               f"got {type(engine).__name__}", field="engine")
    return engine


def _items(gold: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(gold, Mapping):
        return iter(gold.items())
    if isinstance(gold, (str, bytes)):
        raise InvalidTypeError("must be a mapping key -> record or an iterable of (key, record) pairs, "
                               f"got {type(gold).__name__}", field="gold")
    try:
        pairs = iter(gold)
    except TypeError:
        raise InvalidTypeError("must be a mapping key -> record or an iterable of (key, record) pairs, "
                               f"got {type(gold).__name__}", field="gold") from None
    return _checked_pairs(pairs)


def _checked_pairs(pairs: Iterator[Any]) -> Iterator[tuple[Any, Any]]:
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidTypeError(f"must be a (key, record) pair, got {type(pair).__name__}", field="gold", item=i)
        yield pair[0], pair[1]


def _field(record: Mapping, name: str, key: Any) -> Any:
    try:
        return record[name]
    except KeyError:
        raise KeyError(f"gold[{key!r}] has no {name!r} field") from None


def _text_of(result: Any) -> str:
    """The recognised text: a str result as is, else a str ``.text``, else "" (text-only and failed reads)."""
    if isinstance(result, str):
        return result
    text = getattr(result, "text", None)
    return text if isinstance(text, str) else ""


def _confidence_of(result: Any, key: Any) -> Optional[float]:
    """``result.mean_confidence``: None (engines without confidences) or a number in [0, 1]."""
    value = None if isinstance(result, str) else getattr(result, "mean_confidence", None)
    if value is None:
        return None
    field = f"per_item[{key!r}].mean_confidence"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"must be None or a number, got {type(value).__name__}", field=field)
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidValueError(f"must be a finite number in [0, 1], got {value!r}", field=field)
    return float(value)


def evaluate_ocr(engine: Any, gold: Any, *, metric: Any = "cer", normalize: Any = None, grammar: Any = None,
                 image_key: str = "image", reference_key: str = "reference_text", slice_key: str = "slice",
                 persist: bool = False, run_id: Optional[str] = None,
                 rootdir: Optional[Union[str, os.PathLike]] = None) -> Report:
    """Score ``engine`` on every gold item and return the corpus :class:`~scorekit.base.Report`.

    ``gold`` maps each key to a record ``{image, reference_text, [slice], ...}`` (a dict or a gold
    :class:`JsonStore`), or is an iterable of ``(key, record)`` pairs. Items are run in order and an
    engine exception propagates. The prediction is the result itself when it is a ``str``, else its
    ``.text`` when that is a ``str``, else ``""``. ``report.detail["per_item"][key]`` holds the
    prediction, reference, slice, score, ``mean_confidence`` (None or a finite number in [0, 1])
    and ``backend``. ``persist=True`` writes ``{metric, aggregate, n, per_slice, per_item}`` to the
    ``results`` store and the summary without ``per_item`` to ``runs``, under ``run_id`` (default:
    ``ocr-<UTC time>``); the stores hold strict JSON, so a NaN aggregate (no reference characters)
    is stored as ``null`` while the returned report keeps it. Slice labels and keys are stored as str.
    """
    from scorekit.facade import evaluate

    run = _resolve_engine(engine)
    for name, value in (("image_key", image_key), ("reference_key", reference_key), ("slice_key", slice_key)):
        if not isinstance(value, str):
            raise InvalidTypeError(f"must be a str, got {type(value).__name__}", field=name)
    per_item: dict[Any, dict[str, Any]] = {}
    cases = []
    for key, record in _items(gold):
        if not isinstance(record, Mapping):
            raise InvalidTypeError(f"must be a mapping record, got {type(record).__name__}", field=f"gold[{key!r}]")
        if key in per_item:
            raise InvalidValueError("appears twice", field=f"gold key {key!r}")
        image = _field(record, image_key, key)
        reference = _field(record, reference_key, key)
        if not isinstance(reference, str):
            raise InvalidTypeError(f"must be a str, got {type(reference).__name__}",
                                   field=f"gold[{key!r}][{reference_key!r}]")
        label = record.get(slice_key)
        result = run(image)
        prediction = _text_of(result)
        per_item[key] = {"prediction": prediction, "reference": reference, "slice": label,
                         "mean_confidence": _confidence_of(result, key),
                         "backend": None if isinstance(result, str) else getattr(result, "backend", None)}
        cases.append((prediction, reference, label))
    if not cases:
        report = Report(metric=metric if isinstance(metric, str) else "", n=0)
    else:
        report = evaluate(cases, metric=metric, normalize=normalize, grammar=grammar)
        for item, s in zip(per_item.values(), report.scores):
            item["score"] = s.value
    report.detail["per_item"] = per_item
    if persist:
        _persist(report, run_id, rootdir)
    return report


def _finite_or_none(value: Any) -> Any:
    """A NaN or infinite score (a corpus with no reference characters) is stored as JSON ``null``."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _persist(report: Report, run_id: Optional[str], rootdir: Any) -> None:
    if run_id is None:
        run_id = datetime.now(timezone.utc).strftime("ocr-%Y%m%dT%H%M%S")
    summary = {"metric": report.metric, "aggregate": _finite_or_none(report.aggregate), "n": report.n,
               "per_slice": {str(k): _finite_or_none(v) for k, v in report.per_slice.items()}}
    per_item = {str(k): {**v, "score": _finite_or_none(v.get("score"))} for k, v in report.detail["per_item"].items()}
    store("results", rootdir=rootdir)[run_id] = {**summary, "per_item": per_item}
    store("runs", rootdir=rootdir)[run_id] = summary
