"""Field-level precision / recall / F1 for flat record (``Mapping``) extractions.

This module owns :class:`FieldMetric`. Two records are compared key by key over the union of
their keys: a key only in the prediction is a false positive, a key only in the gold a false
negative, an equal value a true positive, and a wrong value counts as **both** a false positive
and a false negative (slot-error accounting). Values are compared with Python ``==`` after
optional canonicalization of ``str`` values; nested values are not recursed into. Where ``==``
gives no truth value (NumPy arrays) or raises, values compare by the exact rule of
:mod:`scorekit._interning` (element by element, numbers by exact value).

The corpus aggregate is micro-F1 over the summed ``tp``/``fp``/``fn`` counts each
:class:`~scorekit.base.Score` carries in ``detail``, never a mean of per-record F1s. It is pure
Python with no optional dependency.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Optional, cast

from scorekit.base import GraphGrammar, Score
from scorekit.canonicalize import resolve_canonicalizer
from scorekit.errors import InvalidValueError, ScorekitError

__all__ = ["FieldMetric"]

TextNormalizer = Callable[[str], str]

# Per-field normalizers of each grammar seen, keyed by id(grammar); an entry is dropped when its
# grammar is garbage-collected. Grammars are frozen by contract, so an entry never goes stale.
_normalizer_cache: dict[int, tuple[weakref.ref[GraphGrammar], dict[str, TextNormalizer]]] = {}


def _build_field_normalizers(grammar: GraphGrammar) -> dict[str, TextNormalizer]:
    normalizers: dict[str, TextNormalizer] = {}
    for node_type in grammar.node_types.values():
        for field_name, spec in node_type.fields.items():
            if spec.normalizer:
                # Keyed by field name alone: a later node type declaring the same field wins.
                normalizers[field_name] = cast(TextNormalizer, resolve_canonicalizer(spec.normalizer))
    return normalizers


def _field_normalizers(grammar: GraphGrammar) -> dict[str, TextNormalizer]:
    """The grammar's ``field name -> normalizer`` map, built once per grammar object."""
    key = id(grammar)
    cached = _normalizer_cache.get(key)
    if cached is not None and cached[0]() is grammar:
        return cached[1]
    normalizers = _build_field_normalizers(grammar)
    try:
        ref = weakref.ref(grammar, lambda _: _normalizer_cache.pop(key, None))
    except TypeError:  # a grammar-like object that cannot be weakly referenced: no caching
        return normalizers
    _normalizer_cache[key] = (ref, normalizers)
    return normalizers


def values_equal(pred: Any, gold: Any, field: str) -> bool:
    """Python ``==`` where it gives a truth value; otherwise (NumPy arrays, a comparison that raises,
    such as an array against a huge int) the exact equality rule of :mod:`scorekit._interning`.
    ``field`` names the compared values in the error raised when neither rule can compare them.
    The rule for record values everywhere (here and in :mod:`scorekit.metrics.graphs`)."""
    try:
        result = pred == gold
    except Exception:
        result = NotImplemented
    if isinstance(result, bool):
        return result
    if getattr(result, "shape", None) == ():  # a NumPy scalar comparison
        return bool(result)
    from scorekit._interning import exact_key

    try:
        return bool(exact_key(pred) == exact_key(gold))
    except ScorekitError as exc:
        raise InvalidValueError(exc.message, field=field) from None
    except Exception as exc:
        raise InvalidValueError(f"cannot be compared: {type(exc).__name__}: {exc}", field=field) from None


def _precision_recall_f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Per-record rates; an empty side is perfect only if the other side has nothing to miss."""
    precision = tp / (tp + fp) if tp + fp else (1.0 if fn == 0 else 0.0)
    recall = tp / (tp + fn) if tp + fn else (1.0 if fp == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


class FieldMetric:
    """Per-field precision / recall / F1 between two flat records, ``(pred, gold)``.

    ``canonicalizer`` is an optional ``str -> str`` applied to ``str`` values of both sides
    before comparison. A grammar passed per call may declare per-field normalizers
    (:attr:`FieldSpec.normalizer <scorekit.base.FieldSpec.normalizer>`); they take precedence
    over ``canonicalizer`` for the fields they name, matched by field name across all node types.
    """

    name = "fields"

    def __init__(self, *, canonicalizer: Optional[TextNormalizer] = None) -> None:
        if canonicalizer is not None and not callable(canonicalizer):
            raise TypeError(
                f"canonicalizer must be a callable str -> str or None, got {type(canonicalizer).__name__}"
            )
        self.canonicalizer = canonicalizer

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        if not isinstance(pred, Mapping) or not isinstance(gold, Mapping):
            raise TypeError(
                "FieldMetric compares Mapping records; "
                f"got {type(pred).__name__} vs {type(gold).__name__}"
            )
        field_normalizers = _field_normalizers(grammar) if grammar is not None else {}
        tp = fp = fn = 0
        for key, gold_value in gold.items():
            if key not in pred:
                fn += 1
                continue
            normalize = field_normalizers.get(key, self.canonicalizer)
            if values_equal(self._normalized(pred[key], normalize), self._normalized(gold_value, normalize),
                            f"record field {key!r}"):
                tp += 1
            else:
                fp += 1
                fn += 1
        fp += sum(1 for key in pred if key not in gold)

        precision, recall, f1 = _precision_recall_f1(tp, fp, fn)
        return Score(
            value=f1,
            precision=precision,
            recall=recall,
            f1=f1,
            metric="fields",
            detail={"tp": tp, "fp": fp, "fn": fn, "higher_is_better": True},
        )

    @staticmethod
    def _normalized(value: Any, normalize: Optional[TextNormalizer]) -> Any:
        return normalize(value) if normalize is not None and isinstance(value, str) else value

    def aggregate(self, scores: Iterable[Score]) -> float:
        """Micro-F1 over the corpus: sum ``tp``/``fp``/``fn`` (missing counts are 0), then divide.

        A corpus with no fields at all (every count zero, or no scores) scores ``1.0``.
        """
        tp = fp = fn = 0
        for score in scores:
            detail = score.detail
            tp += detail.get("tp", 0)
            fp += detail.get("fp", 0)
            fn += detail.get("fn", 0)
        if tp + fp + fn == 0:
            return 1.0
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    def __repr__(self) -> str:
        return f"FieldMetric(canonicalizer={self.canonicalizer!r})"
