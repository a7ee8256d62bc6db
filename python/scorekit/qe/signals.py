"""Intrinsic confidence signals (``ek.qe.signals``, cost tier 2): one field score from the numbers an
extractor already emits, token log-probabilities or per-unit confidences (docs/qe-signals.md).

This module owns the four log-probability aggregators (:func:`geo_mean`, :func:`length_normalized`,
:func:`min_prob`, :func:`mean_prob`, registered under ``"aggregators"`` as ``geo_mean``,
``length_normalized``, ``min`` and ``mean``), :class:`LogprobSignal` and
:class:`IntrinsicConfidenceSignal` (registered under ``"signals"`` as ``logprob`` and ``intrinsic``).
Every score is raw and uncalibrated: a calibrator runs before any gate reads it.

>>> import math
>>> logps = [math.log(0.9), math.log(0.8), math.log(0.95)]
>>> round(geo_mean(logps), 4)            # exp(mean log p)
0.8811
>>> round(min_prob(logps), 4)            # weakest token
0.8
>>> round(length_normalized(logps, alpha=0.0), 3)    # exp(sum log p): the full length penalty
0.684

Log-probabilities are cleaned as in the reference: NaN and ``+inf`` are dropped, ``-inf`` (p = 0)
becomes ``log(DEFAULT_PROB_FLOOR)``, positive values are clamped to 0 (p = 1), and when nothing is
left every aggregator returns 1.0 ("no evidence"). Sums are Python's ``sum`` in input order, so
results equal the reference's bit for bit. Where the reference is silent or accidental:

* inputs are numbers: a ``str``/``bytes`` (whole or as an item), ``None`` among log-probabilities,
  or anything ``float()`` rejects raises :class:`~scorekit.errors.InvalidTypeError` naming the item
  (the reference converts ``"-0.5"`` and iterates a bare string character by character);
* an integer beyond the float range counts as the infinity of its sign (the reference raises
  ``OverflowError``);
* ``alpha`` must be a finite number, and extreme ones saturate (the reference divides by zero or
  overflows): the score tends to 1.0 when ``T**alpha`` overflows and to 0.0 when it underflows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from scorekit import _kernels
from scorekit.errors import InvalidTypeError, InvalidValueError, describe
from scorekit.registry import get, register

__all__ = [
    "DEFAULT_LENGTH_ALPHA",
    "DEFAULT_PROB_FLOOR",
    "geo_mean",
    "length_normalized",
    "min_prob",
    "mean_prob",
    "LogprobSignal",
    "IntrinsicConfidenceSignal",
]

#: Length-penalty exponent of :func:`length_normalized` (Wu et al. 2016 found 0.6–0.7 best).
DEFAULT_LENGTH_ALPHA = 0.6
#: Smallest probability treated as non-zero: a token with p = 0 (log-prob ``-inf``) counts as this,
#: so it still pulls ``min_prob`` and ``geo_mean`` towards 0 instead of being discarded.
DEFAULT_PROB_FLOOR = 1e-12

_LOG_FLOOR = math.log(DEFAULT_PROB_FLOOR)
_INF, _MINUS_INF = math.inf, -math.inf
_POOLS = ("geo_mean", "mean", "min")
_TEXT = (str, bytes, bytearray)


def _items(values: Any, what: str) -> Iterable[Any]:
    """``values`` as an iterable of items, refusing text and non-iterables with a named error."""
    if isinstance(values, _TEXT):
        raise InvalidTypeError(f"must be a sequence of numbers, got {describe(values)}", field=what)
    try:
        return iter(values)
    except TypeError:
        raise InvalidTypeError(f"must be a sequence of numbers, got {describe(values)}", field=what) from None


def _number(x: Any, field: str) -> float:
    """``x`` as a float; an int beyond the float range becomes the infinity of its sign."""
    if not isinstance(x, _TEXT) and x is not None:
        try:
            return float(x)
        except OverflowError:
            return math.inf if x > 0 else -math.inf
        except (TypeError, ValueError):
            pass
    raise InvalidTypeError(f"must be a number, got {describe(x)}", field=field)


def _floats(values: Any, what: str, *, skip_none: bool = False) -> list[float]:
    """``values`` as a list of floats (items converted by :func:`_number`, ``None`` dropped when
    ``skip_none``); read at C speed when they are floats already."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "fiub":
        return values.astype(float).tolist()
    items = values if type(values) in (list, tuple) else list(_items(values, what))
    if not [x for x in items if type(x) is not float]:  # cheaper than all() at every length
        return items if type(items) is list else list(items)
    return [x if type(x) is float else _number(x, f"{what}[{i}]")
            for i, x in enumerate(items) if not (skip_none and x is None)]


def _clean_logps(logps: Iterable[float]) -> list[float]:
    """The log-probabilities that count, cleaned (see the module docstring)."""
    core = _kernels.compiled()  # a list of floats (the common case) is read as it is
    if not (core.exact_floats(logps) if core is not None
            else type(logps) is list and not [x for x in logps if type(x) is not float]):
        logps = _floats(logps, "logps")
    return [(lp if lp <= 0.0 else 0.0) if lp > _MINUS_INF else _LOG_FLOOR
            for lp in logps if lp < _INF]  # NaN < inf is false: NaN is dropped


@register("aggregators", "geo_mean")
def geo_mean(logps: Iterable[float]) -> float:
    """Geometric mean of the token probabilities, ``exp(mean log p)`` (the inverse of perplexity).

    >>> geo_mean([math.log(0.5), math.log(0.5)])
    0.5
    """
    lps = _clean_logps(logps)
    return math.exp(sum(lps) / len(lps)) if lps else 1.0


@register("aggregators", "length_normalized")
def length_normalized(logps: Iterable[float], *, alpha: float = DEFAULT_LENGTH_ALPHA) -> float:
    """Length-normalised score ``exp(Σ log p / T**alpha)`` over the ``T`` tokens that count.

    ``alpha=1`` is :func:`geo_mean`; ``alpha=0`` is ``exp(Σ log p)``, the full length penalty.

    >>> length_normalized([math.log(0.5)] * 4, alpha=0.5)      # exp(4 log 0.5 / 2) = 0.5**2
    0.25
    """
    a = alpha if type(alpha) is float else _number(alpha, "alpha")
    if not _MINUS_INF < a < _INF:
        raise InvalidValueError(f"must be finite, got {alpha!r}", field="alpha")
    lps = _clean_logps(logps)
    if not lps:
        return 1.0
    total = sum(lps)
    if total == 0.0:
        return 1.0  # every token has p = 1, whatever the penalty
    try:
        return math.exp(total / len(lps) ** a)
    except OverflowError:  # T**alpha beyond the float range: the exponent is -0
        return 1.0
    except ZeroDivisionError:  # T**alpha underflowed to 0: the exponent is -inf
        return 0.0


@register("aggregators", "min")
def min_prob(logps: Iterable[float]) -> float:
    """Probability of the weakest token, ``exp(min log p)``: one bad character is enough to show.

    >>> min_prob([math.log(0.9), math.log(0.2)])
    0.2
    """
    lps = _clean_logps(logps)
    return math.exp(min(lps)) if lps else 1.0


@register("aggregators", "mean")
def mean_prob(logps: Iterable[float]) -> float:
    """Arithmetic mean of the token probabilities, ``mean(exp(log p))``.

    >>> mean_prob([math.log(0.5), 0.0])
    0.75
    """
    lps = _clean_logps(logps)
    return sum(math.exp(lp) for lp in lps) / len(lps) if lps else 1.0


@dataclass
class LogprobSignal:
    """Token log-probabilities pooled into one field score, raw and uncalibrated (a ``Signal``).

    ``aggregator`` is a name registered under ``"aggregators"`` (looked up on every call, so a
    plugin registered later is found) or a callable ``logps -> float``; ``alpha`` is passed only
    when the aggregator is :func:`length_normalized`.

    >>> sig = LogprobSignal(aggregator="min")
    >>> sig([math.log(0.9), math.log(0.8)])
    0.8
    >>> sig.cost_tier
    2
    """

    aggregator: Any = geo_mean
    alpha: float = DEFAULT_LENGTH_ALPHA
    cost_tier: int = 2

    def __call__(self, token_logps: Iterable[float]) -> float:
        aggregate = self._aggregator()
        if aggregate is length_normalized:
            return length_normalized(token_logps, alpha=self.alpha)
        return aggregate(token_logps)

    def _aggregator(self) -> Callable[..., float]:
        if isinstance(self.aggregator, str):
            return get("aggregators", self.aggregator)
        if not callable(self.aggregator):
            raise InvalidTypeError(f"must be a name registered under 'aggregators' or a callable, "
                                   f"got {describe(self.aggregator)}", field="aggregator")
        return self.aggregator


def _unit_confidences(source: Any) -> list[Any]:
    """The raw per-unit confidences of ``source``: its blocks', else its mean confidence, else its
    own items."""
    blocks = getattr(source, "blocks", None)
    if blocks:
        confidences = _clean_confidences([getattr(b, "confidence", None) for b in blocks], "blocks")
        if confidences:
            return confidences
    if hasattr(source, "mean_confidence"):
        return _clean_confidences([source.mean_confidence], "mean_confidence")
    return _clean_confidences(source, "source")


def _clean_confidences(values: Any, what: str) -> list[float]:
    """Confidences that count: ``None`` and non-finite values skipped, the rest clamped to [0, 1]."""
    return [(0.0 if c < 0.0 else 1.0 if c > 1.0 else c)
            for c in _floats(values, what, skip_none=True) if math.isfinite(c)]


@dataclass
class IntrinsicConfidenceSignal:
    """An extractor's per-unit confidences (already in [0, 1]) pooled into a field score.

    ``pool`` is ``"min"`` (weakest unit), ``"mean"`` or ``"geo_mean"``. The source is an
    OCR-result-shaped object (the ``confidence`` of its ``blocks``, else its ``mean_confidence``)
    or a sequence of numbers. ``None`` and non-finite confidences are skipped, others clamped to
    [0, 1]; with none left the score is 1.0 (a VLM or markdown result carries no confidences).

    >>> IntrinsicConfidenceSignal(pool="min")([0.99, 0.4, 0.95])
    0.4
    >>> IntrinsicConfidenceSignal(pool="mean")([0.5, None, 1.7, float("nan")])    # mean of 0.5 and 1.0
    0.75
    """

    pool: str = "min"
    cost_tier: int = 2

    def __call__(self, source: Any) -> float:
        if not isinstance(self.pool, str) or self.pool not in _POOLS:
            raise InvalidValueError(f"pool must be one of {list(_POOLS)}, got {self.pool!r}")
        confidences = _unit_confidences(source)
        if not confidences:
            return 1.0
        if self.pool == "min":
            return min(confidences)
        if self.pool == "mean":
            return sum(confidences) / len(confidences)
        logs = [math.log(max(c, DEFAULT_PROB_FLOOR)) for c in confidences]
        return math.exp(sum(logs) / len(logs))


register("signals", "logprob", LogprobSignal)
register("signals", "intrinsic", IntrinsicConfidenceSignal)
