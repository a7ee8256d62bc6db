"""BFCL-style tool-call correctness (docs/decisions.md#tool-calls): call assignment and weighted TP/FP/FN.

This module owns :func:`match_calls` (the deterministic assignment of predicted to gold calls
within each tool name) and :class:`ToolCallMetric` (call- or argument-level precision/recall/F1,
weighted by the tool grammar, micro-averaged by :meth:`ToolCallMetric.aggregate`). Values are
compared through :func:`norm_value`, which folds strings and applies the exact, transitive equality
rule of :mod:`scorekit._interning` (Python ``==`` wherever that is transitive; numbers by exact
value); calls are never executed. Call and argument weights must be finite and ``>= 0``.

>>> from scorekit.agents.base import Step
>>> pred = [Step("search", {"q": "cats"}), Step("answer", {"a": "meow"})]
>>> gold = [("search", {"q": "cats"}), ("answer", {"a": "meow"})]
>>> ToolCallMetric()(pred, gold).f1
1.0
>>> hallucinated = [Step("search", {"q": "cats"}), Step("delete_all", {})]
>>> round(ToolCallMetric()(hallucinated, gold).f1, 3)     # 1 TP, 1 FP, 1 FN
0.5
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Optional

from scorekit._interning import MAX_DEPTH, exact_key
from scorekit._weights import grammar_weight
from scorekit.agents.base import as_call
from scorekit.base import GraphGrammar, Score
from scorekit.canonicalize import default_canonicalizer, resolve_canonicalizer
from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError, describe

__all__ = ["match_calls", "ToolCallMetric", "norm_value", "calls_of"]

Call = tuple[str, dict]
Canon = Optional[Callable[[str], str]]
LEVELS = ("call", "arg")


def norm_value(v: Any, canon: Canon) -> Any:
    """The comparison key of an argument value: strings through ``canon`` (if any); lists and
    tuples element-wise into tuples (so a list equals a tuple, order kept); anything else by
    :func:`scorekit._interning.exact_key` (numbers by exact value; strings inside dicts and sets are
    not folded). A value that contains itself or is nested too deeply raises
    :class:`~scorekit.errors.InvalidValueError`."""
    if isinstance(v, str):
        return canon(v) if canon else v
    if isinstance(v, (list, tuple)):
        return _norm_sequence(v, canon, 0, set())
    return exact_key(v)


def _norm_sequence(v: Any, canon: Canon, depth: int, open_ids: set) -> tuple:
    if depth >= MAX_DEPTH:
        raise InvalidValueError(f"is nested deeper than {MAX_DEPTH} levels")
    if id(v) in open_ids:
        raise InvalidValueError(f"contains itself (a recursive value): {describe(v)}")
    open_ids.add(id(v))
    try:
        return tuple([_norm_sequence(e, canon, depth + 1, open_ids) if isinstance(e, (list, tuple))
                      else norm_value(e, canon) for e in v])
    finally:
        open_ids.discard(id(v))


def value_error(exc: ScorekitError, item: Any, step: int, name: Any, side: str = "") -> ScorekitError:
    """``exc`` (raised by a bad argument value) again, naming the pair ``item``, the side
    (``"pred"``/``"gold"``, if known), the step and the argument."""
    where = f"{side}.steps[{step}]" if side else f"steps[{step}]"
    return type(exc)(exc.message, field=f"{where}.args[{name!r}]", item=item)


def _norm_args(args: Mapping, canon: Canon, side: str, step: int) -> dict:
    normed = {}
    for k, v in args.items():
        try:
            normed[k] = norm_value(v, canon)
        except ScorekitError as exc:
            raise value_error(exc, None, step, k, side) from None
    return normed


def _call_matches(p: Mapping, g: Mapping) -> bool:
    """Exact match of normalised argument maps: same names, equal values."""
    return set(p) == set(g) and all(p[k] == g[k] for k in g)


def calls_of(x: Any) -> list:
    """The raw calls of an Episode (its trajectory's steps), a Trajectory (its steps) or a sequence."""
    trajectory = getattr(x, "trajectory", None)
    if trajectory is not None:
        return list(getattr(trajectory, "steps", trajectory))
    steps = getattr(x, "steps", None)
    if steps is not None:
        return list(steps)
    if isinstance(x, Sequence) and not isinstance(x, (str, bytes)):
        return list(x)
    raise InvalidTypeError(
        f"ToolCallMetric needs an Episode, a Trajectory, or a sequence of calls; got {type(x).__name__}"
    )


def _assign(pred: list[Call], gold: list[Call], pn: list[dict], gn: list[dict]) -> list[tuple[int, int]]:
    """Index pairs ``(i, j)`` of the assignment, on already-normalised arguments ``pn``/``gn``."""
    gold_by_tool: dict[str, list[int]] = {}
    for j, (tool, _) in enumerate(gold):
        gold_by_tool.setdefault(tool, []).append(j)
    pred_by_tool: dict[str, list[int]] = {}
    for i, (tool, _) in enumerate(pred):
        pred_by_tool.setdefault(tool, []).append(i)
    if all(len(v) == 1 for v in gold_by_tool.values()) and all(len(v) == 1 for v in pred_by_tool.values()):
        # every tool occurs at most once per side: pair by name, whatever the arguments
        return [(i, gold_by_tool[tool][0]) for i, (tool, _) in enumerate(pred) if tool in gold_by_tool]
    candidates = []
    for tool, p_idx in pred_by_tool.items():
        for i in p_idx:
            for j in gold_by_tool.get(tool, ()):
                p, g = pn[i], gn[j]
                overlap = sum(1 for k in g if k in p and p[k] == g[k])
                candidates.append((0 if _call_matches(p, g) else 1, -overlap, i, j))
    candidates.sort()
    used_p: set[int] = set()
    used_g: set[int] = set()
    pairs = []
    for _, _, i, j in candidates:
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def _match(pred: Iterable, gold: Iterable, canon: Canon):
    p_calls = [as_call(x) for x in pred]
    g_calls = [as_call(x) for x in gold]
    pn = [_norm_args(args, canon, "pred", s) for s, (_, args) in enumerate(p_calls)]
    gn = [_norm_args(args, canon, "gold", s) for s, (_, args) in enumerate(g_calls)]
    pairs = _assign(p_calls, g_calls, pn, gn)
    return p_calls, g_calls, pn, gn, pairs


def match_calls(pred: Iterable, gold: Iterable, *, canon: Canon = None):
    """Assign predicted calls to gold calls of the same tool name.

    Returns ``(pairs, unmatched_pred, unmatched_gold)``: ``pairs`` are ``(pred_call, gold_call)``
    in prediction order; calls are ``(tool, args)`` tuples. When every tool name occurs at most
    once on each side, calls pair by name; otherwise candidates (exact matches first, then the most
    agreeing arguments, then prediction and gold position) are taken greedily.

    >>> pairs, up, ug = match_calls([("s", {"q": "b"}), ("s", {"q": "a"})],
    ...                             [("s", {"q": "a"}), ("s", {"q": "b"})])
    >>> len(pairs), up, ug          # order-insensitive within a tool name
    (2, [], [])
    """
    p_calls, g_calls, _, _, pairs = _match(pred, gold, canon)
    used_p = {i for i, _ in pairs}
    used_g = {j for _, j in pairs}
    return (
        [(p_calls[i], g_calls[j]) for i, j in pairs],
        [c for i, c in enumerate(p_calls) if i not in used_p],
        [c for j, c in enumerate(g_calls) if j not in used_g],
    )


class _Weights:
    """Call and argument weights of a grammar (1.0 without one), memoised per metric call; each
    must be finite and ``>= 0`` (:class:`~scorekit.errors.InvalidValueError` naming it otherwise)."""

    __slots__ = ("grammar", "_tool", "_arg")

    def __init__(self, grammar: Optional[GraphGrammar]) -> None:
        self.grammar = grammar
        self._tool: dict[str, float] = {}
        self._arg: dict[tuple[str, Any], float] = {}

    def tool(self, t: str) -> float:
        w = self._tool.get(t)
        if w is None:
            w = self._tool[t] = 1.0 if self.grammar is None else grammar_weight(
                self.grammar.node_cost, (t,), f"grammar weight of tool {t!r}")
        return w

    def arg(self, t: str, a: Any) -> float:
        w = self._arg.get((t, a))
        if w is None:
            w = self._arg[(t, a)] = 1.0 if self.grammar is None else grammar_weight(
                self.grammar.field_cost, (t, a), f"grammar weight of argument {a!r} of tool {t!r}")
        return w

    def mass(self, call: Call) -> float:
        """Call weight plus the sum (in argument order) of its own argument names' weights."""
        t, args = call
        return self.tool(t) + sum(self.arg(t, a) for a in args)


def _rates(tp: float, fp: float, fn: float) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else (1.0 if fn == 0 else 0.0)
    r = tp / (tp + fn) if tp + fn else (1.0 if fp == 0 else 0.0)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


class ToolCallMetric:
    """Precision / recall / F1 of tool calls against gold calls (higher is better).

    ``level="call"``: a matched call with exactly the gold arguments is a TP worth its call weight;
    a matched call with wrong arguments is a FP and a FN. ``level="arg"``: every argument name of a
    matched pair counts by its importance (hallucinated → FP, omitted → FN, equal → TP, different →
    both). A spurious call is a FP and a missed call a FN, worth the call weight (plus its
    arguments' weights at argument level). Strings are folded by ``canonicalizer`` (default: NFC,
    casefold, collapse whitespace); ``grammar`` supplies the weights (per-call ``grammar=`` wins).
    """

    name = "tool_call"

    def __init__(self, level: str = "call", *, canonicalizer: Any = None,
                 grammar: Optional[GraphGrammar] = None) -> None:
        if level not in LEVELS:
            raise InvalidValueError(f"must be 'call' or 'arg', got {level!r}", field="level")
        self.level = level
        self.canonicalizer = (resolve_canonicalizer(canonicalizer) if canonicalizer is not None
                              else default_canonicalizer())
        self.grammar = grammar

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        w = _Weights(grammar if grammar is not None else self.grammar)
        p_calls, g_calls, pn, gn, pairs = _match(calls_of(pred), calls_of(gold), self.canonicalizer)
        tp = fp = fn = 0.0
        for i, j in pairs:
            tool = g_calls[j][0]
            p, g = pn[i], gn[j]
            if self.level == "call":
                wt = w.tool(tool)
                if _call_matches(p, g):
                    tp += wt
                else:
                    fp += wt
                    fn += wt
            else:
                for name in list(g) + [k for k in p if k not in g]:
                    wa = w.arg(tool, name)
                    if name not in g:
                        fp += wa
                    elif name not in p:
                        fn += wa
                    elif p[name] == g[name]:
                        tp += wa
                    else:
                        fp += wa
                        fn += wa
        used_p = {i for i, _ in pairs}
        used_g = {j for _, j in pairs}
        extra = [c for i, c in enumerate(p_calls) if i not in used_p]
        missed = [c for j, c in enumerate(g_calls) if j not in used_g]
        for call in extra:
            fp += w.tool(call[0]) if self.level == "call" else w.mass(call)
        for call in missed:
            fn += w.tool(call[0]) if self.level == "call" else w.mass(call)
        if not all(map(math.isfinite, (tp, fp, fn))):
            raise InvalidValueError("the grammar weights are too large: the weighted counts exceed the float64 range")
        precision, recall, f1 = _rates(tp, fp, fn)
        return Score(
            value=f1, precision=precision, recall=recall, f1=f1, metric="tool_call",
            detail={"tp": tp, "fp": fp, "fn": fn, "level": self.level, "n_matched": len(pairs),
                    "n_spurious": len(extra), "n_missed": len(missed), "higher_is_better": True},
        )

    def aggregate(self, scores: Iterable[Score]) -> float:
        """Micro-F1: sum ``tp``/``fp``/``fn`` over all scores, then divide (1.0 if all are zero)."""
        tp = fp = fn = 0.0
        for s in scores:
            tp += s.detail.get("tp", 0.0)
            fp += s.detail.get("fp", 0.0)
            fn += s.detail.get("fn", 0.0)
        if tp == fp == fn == 0:
            return 1.0
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        return 2 * p * r / (p + r) if p + r else 0.0
