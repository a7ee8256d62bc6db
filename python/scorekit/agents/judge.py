"""LLM-as-judge seams: a reference-free signal, a reference-based metric, a swapped pairwise
preference, and the validation against human labels that must come before trusting any of them.

A judge is any callable you inject; scorekit never imports an LLM client and never calls a
network. Judges have large, known biases (the position of an answer, its length, preference for
their own text), and a raw judge score is not a probability: calibrate it before a decision
policy reads it. The three seams are deliberately separate:

- :class:`JudgeSignal` scores one output against criteria, with no gold (a ``Signal``; the most
  expensive family, ``cost_tier`` :data:`JUDGE_COST_TIER`).
- :class:`JudgeMetric` reads the gold answer, so it is a ``Metric`` (the ``score()`` side).
- :func:`pairwise_judge` compares two outputs, asking a second time with the order swapped.

:func:`judge_validation` treats the judge as one more annotator and measures its agreement with
humans with the statistics of :mod:`scorekit.harness`.

>>> stub = lambda output, *, criteria="", reference=None: 0.9 if "meow" in output else 0.1
>>> sig = JudgeSignal(stub, criteria="Is the answer helpful?")
>>> sig("the cat says meow")
0.9
>>> sig.cost_tier                       # the most expensive signal family
5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from scorekit.base import Finding, GraphGrammar, Score, Severity
from scorekit.errors import InvalidTypeError, InvalidValueError, describe
from scorekit.interrater import as_labels, cohen_kappa, is_missing, krippendorff_alpha, percent_agreement

__all__ = ["JUDGE_COST_TIER", "ALPHA_GOOD", "ALPHA_TENTATIVE", "JudgeSignal", "JudgeMetric",
           "pairwise_judge", "judge_validation"]

JUDGE_COST_TIER = 5
"""Judges are the most expensive signal family: run the cheap signals first and escalate."""
ALPHA_GOOD = 0.8
"""Krippendorff's alpha from which a judge agrees well with humans."""
ALPHA_TENTATIVE = 0.67
"""Krippendorff's alpha from which agreement is tentative (below it: unreliable)."""

_OUTPUT_ATTRIBUTES = ("output", "value", "text")
_ABSENT = object()


def _output_of(target: Any) -> Any:
    """What a judge reads: the first of ``output``, ``value``, ``text`` that ``target`` has (even
    if it is ``None``), else ``target`` itself."""
    for name in _OUTPUT_ATTRIBUTES:
        found = getattr(target, name, _ABSENT)
        if found is not _ABSENT:
            return found
    return target


def _judged(result: Any) -> float:
    """A judge's answer as a float (whatever ``float()`` accepts), or a clear error."""
    try:
        return float(result)
    except TypeError:
        raise InvalidTypeError(f"must return a number, got {describe(result)}", field="judge") from None
    except ValueError:
        raise InvalidValueError(f"must return a number, got {describe(result)}", field="judge") from None


@dataclass
class JudgeSignal:
    """A reference-free, criteria-only LLM judge as a ``Signal``: ``sig(target) -> float``.

    ``judge`` is your ``(output, *, criteria) -> float``; ``criteria`` (the rubric) is bound here,
    so the object keeps the one-argument ``Signal`` call. The judge sees ``target.output`` (or
    ``.value``, ``.text``) when the target has one, so an ``Episode`` can be passed directly.

    >>> from scorekit.agents import Episode
    >>> sig = JudgeSignal(lambda out, *, criteria="": 0.9 if out and "meow" in out else 0.1)
    >>> sig(Episode(output="meow")), sig(Episode(output=None)), sig.name
    (0.9, 0.1, 'judge')
    >>> sig.finding(None, "cites no source").layer
    'judge'
    """

    judge: Callable[..., Any]
    criteria: str = ""
    cost_tier: int = JUDGE_COST_TIER
    name: str = "judge"

    def __call__(self, target: Any) -> float:
        return _judged(self.judge(_output_of(target), criteria=self.criteria))

    def finding(self, target: Any, rationale: str) -> Finding:
        """The judge's rationale as an auditable :class:`~scorekit.base.Finding` (severity FLAG)."""
        return Finding(field="", layer="judge", severity=Severity.FLAG, message=rationale)


class JudgeMetric:
    """A reference-based LLM judge as a ``Metric``: ``metric(pred, gold) -> Score`` (higher is better).

    ``judge`` is your ``(output, *, criteria, reference) -> float`` in ``[0, 1]``; it gets the
    prediction's output and the gold answer as ``reference``.

    >>> from scorekit.agents import Episode
    >>> jm = JudgeMetric(lambda out, *, criteria, reference: float(out == reference), criteria="same?")
    >>> s = jm(Episode(output="x"), "x")
    >>> s.value, s.metric, s.detail
    (1.0, 'judge', {'criteria': 'same?', 'higher_is_better': True})
    >>> jm.aggregate([s, jm("y", "x")])
    0.5
    """

    name = "judge"

    def __init__(self, judge: Callable[..., Any], criteria: str = "") -> None:
        self.judge = judge
        self.criteria = criteria

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        value = _judged(self.judge(_output_of(pred), criteria=self.criteria, reference=gold))
        return Score(value=value, metric=self.name,
                     detail={"criteria": self.criteria, "higher_is_better": True})

    def aggregate(self, scores: Iterable[Any]) -> float:
        """The mean judge score (``0.0`` for none): a judge score is per item, nothing to pool."""
        values = [float(s) for s in scores]
        return sum(values) / len(values) if values else 0.0


def pairwise_judge(judge: Callable[..., Any], a: Any, b: Any, *, criteria: str = "",
                   swap: bool = True) -> float:
    """Preference for ``a`` over ``b`` (``0.5`` is a tie), corrected for position bias.

    ``judge`` is your ``(first, second, *, criteria) -> float``, the preference for ``first``. With
    ``swap`` (the default), it is asked again with the order reversed and the two answers are
    averaged: ``(forward + (1 - backward)) / 2``. Turn ``swap`` off only for a judge known to be
    order-invariant. Values are not clamped.

    >>> first_wins = lambda x, y, *, criteria="": 1.0     # a maximally position-biased judge
    >>> pairwise_judge(first_wins, "A", "B")              # swapping exposes it as a tie
    0.5
    >>> pairwise_judge(first_wins, "A", "B", swap=False)
    1.0
    """
    first, second = _output_of(a), _output_of(b)
    forward = _judged(judge(first, second, criteria=criteria))
    if not swap:
        return forward
    backward = _judged(judge(second, first, criteria=criteria))
    return (forward + (1.0 - backward)) / 2.0


def judge_validation(judge_labels: Sequence[Any], human_labels: Sequence[Any], *,
                     level: str = "nominal") -> dict[str, Any]:
    """Certify a judge against human labels before trusting it (the MT-Bench protocol).

    The judge is one more annotator: the result holds ``n``, Krippendorff's ``alpha`` at ``level``
    (:func:`scorekit.harness.krippendorff_alpha`), ``percent_agreement``, a ``verdict`` (``"good"``
    from alpha :data:`ALPHA_GOOD`, ``"tentative"`` from :data:`ALPHA_TENTATIVE`, else
    ``"unreliable"``) and, at the nominal level only, Cohen's ``kappa``. Without a single item
    labelled by both (no items, or every pair has a ``None``/NaN), nothing certifies the judge:
    :class:`~scorekit.errors.InvalidValueError` (the reference kit calls it ``"good"``, alpha 1.0).

    >>> r = judge_validation([1, 1, 0, 0], [1, 1, 0, 0])
    >>> r["alpha"], r["verdict"]
    (1.0, 'good')
    >>> judge_validation([1, 2, 3, 4], [1, 2, 3, 5], level="interval")
    {'n': 4, 'alpha': 0.9369369369369369, 'percent_agreement': 0.75, 'verdict': 'good'}
    """
    # (two lists, the common case, skip the calls to as_labels, which would return them as they are)
    judge = list(judge_labels if type(judge_labels) is list else as_labels(judge_labels, "judge_labels"))
    human = list(human_labels if type(human_labels) is list else as_labels(human_labels, "human_labels"))
    if len(judge) != len(human):
        raise InvalidValueError("judge and human must label the same items")
    for j, h in zip(judge, human):  # (a loop: all() over a generator costs more)
        if not (is_missing(j) or is_missing(h)):
            break  # an item labelled by both
    else:
        raise InvalidValueError(f"judge_validation: none of the {len(judge)} items has both a judge and a human "
                                "label; there is nothing to certify the judge on")
    alpha = krippendorff_alpha([judge, human], level=level)
    verdict = "good" if alpha >= ALPHA_GOOD else "tentative" if alpha >= ALPHA_TENTATIVE else "unreliable"
    result: dict[str, Any] = {"n": len(judge), "alpha": alpha,
                              "percent_agreement": percent_agreement(judge, human), "verdict": verdict}
    if level == "nominal":
        result["kappa"] = cohen_kappa(judge, human)
    return result
