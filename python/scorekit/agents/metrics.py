"""Task success and Cost-of-Pass: the two reference-based metrics over an :class:`Episode`.

This module owns the success oracles (:class:`Checker` and the three built-in checkers, registered
under the ``"checkers"`` namespace as ``"output"``, ``"final_state"`` and ``"recorded"``) and the
metrics :class:`TaskSuccessMetric` (aggregate: the success rate) and :class:`CostPerSuccessMetric`
(aggregate: total dollars over successes, ``inf`` when nothing succeeded — a ratio of sums, never a
mean). A checker is injected: scorekit never owns the sandbox, database or judge that decides
success, and a real suite should run its checker where the agent cannot reach it.

>>> from scorekit.agents.base import Cost, Episode
>>> from scorekit.agents.cost import per_million
>>> ep = Episode(task_id="t1", output="42", cost=Cost(input_tokens=1_000_000))
>>> TaskSuccessMetric()(ep, "42").value
1.0
>>> m = CostPerSuccessMetric(price=per_million(2.0, 6.0))
>>> round(m(ep, "42").value, 4)          # this episode's dollars
2.0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional, Protocol, runtime_checkable

from scorekit.agents.base import Episode
from scorekit.agents.cost import ModelPrice, UnknownModelPrice, cost_of_pass, episode_dollars
from scorekit.base import GraphGrammar, Score
from scorekit.canonicalize import default_canonicalizer
from scorekit.registry import register, resolve

__all__ = [
    "Checker", "output_match", "final_state_match", "recorded_success", "TaskSuccessMetric",
    "CostPerSuccessMetric",
]


@runtime_checkable
class Checker(Protocol):
    """The success oracle: did this episode leave the world in the required state?

    Any ``(episode, gold) -> bool`` callable is one: a database-state comparison, a hidden-test
    runner, a predicate, a judge. Run it isolated from the agent.
    """

    def __call__(self, episode: Any, gold: Any) -> bool: ...


_CANON = default_canonicalizer()


def output_match(episode: Any, gold: Any) -> bool:
    """The final answer equals the gold answer (GAIA style; the default and weakest oracle).

    ``gold`` may be the answer itself or a mapping with an ``"output"`` key. Two strings compare
    after NFC, case folding and whitespace collapsing; anything else by ``==``.

    >>> output_match(Episode(output="  The Answer "), {"output": "the answer"})
    True
    """
    pred = getattr(episode, "output", episode)
    expected = gold.get("output", gold) if isinstance(gold, Mapping) else gold
    if isinstance(pred, str) and isinstance(expected, str):
        return pred == expected or _CANON(pred) == _CANON(expected)
    return bool(pred == expected)


def final_state_match(episode: Any, gold: Any) -> bool:
    """The episode's ``final_state`` equals the goal state (the tau-bench oracle).

    ``gold`` may be the goal state itself or a mapping with a ``"final_state"`` key (a mapping
    without that key is compared whole, so ``{"db": 1}`` works as gold).

    >>> final_state_match(Episode(final_state={"db": 1}), {"db": 1})
    True
    """
    state = getattr(episode, "final_state", None)
    expected = gold.get("final_state", gold) if isinstance(gold, Mapping) else gold
    return bool(state == expected)


def recorded_success(episode: Any, gold: Any) -> bool:
    """Trust the ``success`` already recorded on the episode (e.g. by an external harness).

    >>> recorded_success(Episode(success=True), None)
    True
    """
    success = getattr(episode, "success", None)
    if success is None:
        raise ValueError(
            "checker 'recorded': episode carries no success verdict; grade it with a real checker "
            "(see scorekit.agents.Checker) or use check='output'/'final_state'.")
    return bool(success)


register("checkers", "output", output_match)
register("checkers", "final_state", final_state_match)
register("checkers", "recorded", recorded_success)


def resolve_checker(check: Any) -> Any:
    """A checker name (``"output"``, ``"final_state"``, ``"recorded"``, or one registered under
    ``"checkers"``) or a callable, as a callable; ``None`` means ``"output"``."""
    checker = resolve("checkers", check, default="output")
    if not callable(checker):
        raise TypeError(f"check must be a checker name or an (episode, gold) -> bool callable; got {check!r}")
    return checker


class TaskSuccessMetric:
    """Did the episode complete the task? ``1.0`` or ``0.0``; the aggregate is the success rate.

    ``check`` is a registered checker name or any ``(episode, gold) -> bool`` callable (default
    ``"output"``). When the episode carries a :class:`~scorekit.agents.Cost`, its tokens and
    latency are copied into ``detail``.

    >>> m = TaskSuccessMetric()
    >>> scores = [m(Episode(output="a"), "a"), m(Episode(output="b"), "c")]
    >>> m.aggregate(scores)
    0.5
    """

    name = "task_success"

    def __init__(self, check: Any = None) -> None:
        self.check = resolve_checker(check)

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        ok = bool(self.check(pred, gold))
        detail: dict[str, Any] = {"success": ok, "higher_is_better": True}
        cost = getattr(pred, "cost", None)
        if cost is not None:
            detail["total_tokens"] = cost.total_tokens
            detail["latency_s"] = cost.latency_s
        return Score(value=1.0 if ok else 0.0, metric=self.name, detail=detail)

    def aggregate(self, scores: Iterable[Score]) -> float:
        """The success rate over ``scores`` (``0.0`` for none)."""
        scores = list(scores)
        if not scores:
            return 0.0
        return sum(1 for s in scores if s.detail.get("success")) / len(scores)


_NEEDS_RATES = (
    "cost_per_success needs token rates, so it cannot be used by name alone. Construct it and "
    "pass it as the metric:\n"
    "    from scorekit.agents import CostPerSuccessMetric, per_million\n"
    "    m = CostPerSuccessMetric(price=per_million(3.0, 15.0))\n"
    "    ek.evaluate(cases, metric=m)\n"
    "(or pass prices={model: ModelPrice(...)} / scorekit.agents.load_prices(...)).")


class CostPerSuccessMetric:
    """Cost-of-Pass: dollars per successfully completed task (**lower is better**).

    Each episode's ``Score.value`` is its own dollar cost; the corpus figure is
    :meth:`aggregate`, ``sum(dollars) / #successes`` (``inf`` when nothing succeeded). ``price``
    prices every episode; otherwise each episode's ``run.model`` is looked up in ``prices``.

    >>> from scorekit.agents.base import Cost
    >>> from scorekit.agents.cost import per_million
    >>> m = CostPerSuccessMetric(price=per_million(1.0, 1.0))
    >>> eps = [Episode(output="x", cost=Cost(input_tokens=1_000_000)),
    ...        Episode(output="y", cost=Cost(input_tokens=1_000_000))]
    >>> m.aggregate([m(e, "x") for e in eps])      # $2 spent, one success
    2.0
    """

    name = "cost_per_success"

    def __init__(self, check: Any = None, *, price: Optional[ModelPrice] = None,
                 prices: Optional[Mapping[str, ModelPrice]] = None) -> None:
        self.check = resolve_checker(check)
        self.price = price
        self.prices = prices

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        if not isinstance(pred, Episode):
            raise TypeError(
                f"CostPerSuccessMetric scores an Episode (it needs the episode's Cost); got {type(pred)}")
        if self.price is None and self.prices is None:
            raise UnknownModelPrice(_NEEDS_RATES)
        ok = bool(self.check(pred, gold))
        money = episode_dollars(pred, prices=self.prices, price=self.price)
        return Score(value=money, metric=self.name,
                     detail={"dollars": money, "success": ok, "higher_is_better": False})

    def aggregate(self, scores: Iterable[Score]) -> float:
        """``sum(dollars) / #successes`` over ``scores``; ``inf`` without a success."""
        total, wins = 0.0, 0
        for s in scores:
            total += s.detail.get("dollars", 0.0)
            wins += bool(s.detail.get("success"))
        return cost_of_pass(total, wins)
