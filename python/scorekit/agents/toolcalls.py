"""BFCL-style tool-call correctness (docs/decisions.md#tool-calls): call assignment and weighted TP/FP/FN.

This module owns :func:`match_calls` (the deterministic assignment of predicted to gold calls
within each tool name: greedy, the reference's rule, or optimal, a maximum-worth assignment per
tool name on SciPy's ``linear_sum_assignment``; docs/agents-beyond.md), :class:`ToolCallMetric`
(call- or argument-level precision/recall/F1, weighted by the tool grammar, micro-averaged by
:meth:`ToolCallMetric.aggregate`) and its per-call diagnostics (:class:`CallOutcome`,
:func:`explain_calls`). Values are
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
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Optional

import numpy as np

from scorekit._interning import MAX_DEPTH, SELF_KEYED, exact_key
from scorekit._weights import grammar_weight
from scorekit.agents.base import as_call
from scorekit.base import GraphGrammar, Score
from scorekit.canonicalize import default_canonicalizer, resolve_canonicalizer
from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError, describe
from scorekit.registry import MissingExtraError

__all__ = ["match_calls", "ToolCallMetric", "CallOutcome", "explain_calls", "norm_value", "calls_of",
           "PAIRINGS", "OUTCOMES"]

Call = tuple[str, dict]
Canon = Optional[Callable[[str], str]]
#: The worth of pairing pred ``i`` with gold ``j`` (same tool) as float terms whose exact sum is
#: that worth; an optimal pairing maximises the total worth of its pairs.
Gain = Callable[[int, int], tuple]
LEVELS = ("call", "arg")
#: How predicted calls are paired with gold calls of the same tool name.
PAIRINGS = ("greedy", "optimal")
#: The :attr:`CallOutcome.outcome` values.
OUTCOMES = ("exact", "wrong_args", "spurious", "missed")
_TOOL = itemgetter(0)  # a call's tool name
_TOO_LARGE = "the grammar weights are too large: the weighted counts exceed the float64 range"


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


def check_pairing(pairing: Any) -> str:
    """``pairing`` if it is one of :data:`PAIRINGS`, else :class:`~scorekit.errors.InvalidValueError`;
    ``"optimal"`` without SciPy raises :class:`~scorekit.registry.MissingExtraError` here already."""
    if not isinstance(pairing, str) or pairing not in PAIRINGS:
        raise InvalidValueError(f"must be 'greedy' or 'optimal', got {pairing!r:.60}", field="pairing")
    if pairing == "optimal":
        _solver()
    return pairing


def _solver() -> Callable:
    """SciPy's ``linear_sum_assignment``, imported on first use of ``pairing="optimal"``."""
    try:
        from scipy.optimize import linear_sum_assignment
    except ImportError as exc:
        raise MissingExtraError(
            f"pairing='optimal' needs SciPy's linear_sum_assignment, which cannot be imported ({exc}); "
            "install it with:  pip install scipy") from exc
    return linear_sum_assignment


def _by_tool(calls: list[Call]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for k, (tool, _) in enumerate(calls):
        groups.setdefault(tool, []).append(k)
    return groups


def _assign(pred: list[Call], gold: list[Call], pn: list[dict], gn: list[dict],
            gain: Optional[Gain] = None) -> list[tuple[int, int]]:
    """Index pairs ``(i, j)`` of the assignment (sorted), on already-normalised arguments ``pn``/``gn``:
    the greedy rule, or with ``gain`` the optimal pairing for that gain."""
    gold_at = {tool: j for j, (tool, _) in enumerate(gold)}
    if len(gold_at) == len(gold) and len(set(map(_TOOL, pred))) == len(pred):
        # as many names as calls: every tool occurs at most once per side: pair by name, whatever the arguments
        return [(i, gold_at[tool]) for i, (tool, _) in enumerate(pred) if tool in gold_at]
    gold_by_tool, pred_by_tool = _by_tool(gold), _by_tool(pred)
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
    if gain is not None:
        pairs = _improve(pairs, pred, pred_by_tool, gold_by_tool, gain)
    return sorted(pairs)


def _improve(greedy: list[tuple[int, int]], pred: list[Call], pred_by_tool: dict[str, list[int]],
             gold_by_tool: dict[str, list[int]], gain: Gain) -> list[tuple[int, int]]:
    """Per tool name, the assignment of maximum total ``gain`` (``linear_sum_assignment`` on the
    float worths), kept only where its exact worth (``math.fsum`` of all its terms) beats the greedy
    pairs' strictly; elsewhere the greedy pairs stay. Both pair ``min(#pred, #gold)`` calls."""
    solve = _solver()
    greedy_of: dict[str, list[tuple[int, int]]] = {}
    for i, j in greedy:
        greedy_of.setdefault(pred[i][0], []).append((i, j))
    pairs: list[tuple[int, int]] = []
    for tool, current in greedy_of.items():
        rows, cols = pred_by_tool[tool], gold_by_tool[tool]
        if len(rows) > 1 or len(cols) > 1:
            terms = {(i, j): gain(i, j) for i in rows for j in cols}
            try:
                worth = np.array([math.fsum(terms[i, j]) for i in rows for j in cols])
                if not np.isfinite(worth).all():
                    raise OverflowError
                best = [(rows[r], cols[c]) for r, c in
                        zip(*(a.tolist() for a in solve(worth.reshape(len(rows), len(cols)), maximize=True)))]
                if (math.fsum(t for ij in best for t in terms[ij])
                        > math.fsum(t for ij in current for t in terms[ij])):
                    current = best
            except OverflowError:  # fsum's "intermediate overflow" too
                raise InvalidValueError(_TOO_LARGE) from None
        pairs.extend(current)
    return pairs


def _match_gain(pn: list[dict], gn: list[dict]) -> Gain:
    """The worth :func:`match_calls` optimises: exact matches first, then agreeing arguments
    (lexicographically: an exact match outweighs every possible sum of agreeing arguments)."""
    exact_worth = 1 + sum(len(g) for g in gn)

    def gain(i: int, j: int) -> tuple:
        p, g = pn[i], gn[j]
        overlap = sum(1 for k in g if k in p and p[k] == g[k])
        return (exact_worth if _call_matches(p, g) else 0, overlap)

    return gain


def _read(pred: Iterable, gold: Iterable, canon: Canon):
    p_calls = list(map(as_call, pred))
    g_calls = list(map(as_call, gold))
    return p_calls, g_calls, _normalised(p_calls, canon, "pred"), _normalised(g_calls, canon, "gold")


def _normalised(calls: list[Call], canon: Canon, side: str) -> list[dict]:
    """The arguments of each call (a dict, from :func:`as_call`) normalised by :func:`_norm_args`;
    without ``canon``, a dict whose values are all plain (each its own key) as it is (only ever read)."""
    normed = []
    for step, (_, args) in enumerate(calls):
        if canon is None:
            for v in args.values():
                if type(v) not in SELF_KEYED:
                    break
            else:  # every value plain
                normed.append(args)
                continue
        normed.append(_norm_args(args, canon, side, step))
    return normed


def match_calls(pred: Iterable, gold: Iterable, *, canon: Canon = None, pairing: str = "greedy"):
    """Assign predicted calls to gold calls of the same tool name.

    Returns ``(pairs, unmatched_pred, unmatched_gold)``: ``pairs`` are ``(pred_call, gold_call)``
    in prediction order; calls are ``(tool, args)`` tuples. When every tool name occurs at most
    once on each side, calls pair by name. Otherwise, with ``pairing="greedy"`` (the reference's
    rule), candidates (exact matches first, then the most agreeing arguments, then prediction and
    gold position) are taken greedily; with ``pairing="optimal"`` (needs SciPy), each tool name's
    assignment maximises the number of exact matches, then the total number of agreeing arguments.
    Either way each tool name pairs ``min(#pred, #gold)`` calls.

    >>> pairs, up, ug = match_calls([("s", {"q": "b"}), ("s", {"q": "a"})],
    ...                             [("s", {"q": "a"}), ("s", {"q": "b"})])
    >>> len(pairs), up, ug          # order-insensitive within a tool name
    (2, [], [])
    >>> pred = [("s", {"a": 1, "b": 1}), ("s", {"c": 1})]
    >>> gold = [("s", {"a": 1, "b": 1, "c": 1}), ("s", {"a": 1, "b": 1, "c": 2})]
    >>> [g for _, g in match_calls(pred, gold)[0]]                       # 2 + 0 agreeing arguments
    [('s', {'a': 1, 'b': 1, 'c': 1}), ('s', {'a': 1, 'b': 1, 'c': 2})]
    >>> [g for _, g in match_calls(pred, gold, pairing="optimal")[0]]    # 2 + 1
    [('s', {'a': 1, 'b': 1, 'c': 2}), ('s', {'a': 1, 'b': 1, 'c': 1})]
    """
    optimal = check_pairing(pairing) == "optimal"
    p_calls, g_calls, pn, gn = _read(pred, gold, canon)
    pairs = _assign(p_calls, g_calls, pn, gn, _match_gain(pn, gn) if optimal else None)
    used_p, used_g = zip(*pairs) if pairs else ((), ())
    return [(p_calls[i], g_calls[j]) for i, j in pairs], _unpaired(p_calls, used_p), _unpaired(g_calls, used_g)


def _unpaired(calls: list[Call], used: tuple[int, ...]) -> list[Call]:
    """The calls whose index is not in ``used`` (distinct indices): none when all are used."""
    if len(used) == len(calls):
        return []
    used_set = set(used)
    return [c for i, c in enumerate(calls) if i not in used_set]


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


@dataclass(frozen=True)
class CallOutcome:
    """What became of one call in :class:`ToolCallMetric` (a row of ``detail["calls"]``).

    ``pred``/``gold``: the call's index in the prediction / gold (``None`` on the side it lacks);
    ``outcome``: ``"exact"`` (paired, same arguments), ``"wrong_args"`` (paired, arguments differ),
    ``"spurious"`` (a predicted call left unpaired) or ``"missed"`` (a gold call left unpaired).
    ``tp``/``fp``/``fn``: what the row adds to the score's totals at the metric's level. For a
    paired call, the argument names (gold order, then prediction order) whose values differ
    (``mismatched_args``), that the prediction omits (``missing_args``) or adds (``extra_args``).
    """

    pred: Optional[int]
    gold: Optional[int]
    tool: str
    outcome: str
    tp: float = 0.0
    fp: float = 0.0
    fn: float = 0.0
    mismatched_args: tuple = ()
    missing_args: tuple = ()
    extra_args: tuple = ()


class ToolCallMetric:
    """Precision / recall / F1 of tool calls against gold calls (higher is better).

    ``level="call"``: a matched call with exactly the gold arguments is a TP worth its call weight;
    a matched call with wrong arguments is a FP and a FN. ``level="arg"``: every argument name of a
    matched pair counts by its importance (hallucinated → FP, omitted → FN, equal → TP, different →
    both). A spurious call is a FP and a missed call a FN, worth the call weight (plus its
    arguments' weights at argument level). Strings are folded by ``canonicalizer`` (default: NFC,
    casefold, collapse whitespace); ``grammar`` supplies the weights (per-call ``grammar=`` wins).

    ``pairing``: ``"greedy"`` (the reference's :func:`match_calls` rule) or ``"optimal"`` (per tool
    name, the assignment of maximum TP at this level; never a lower F1; needs SciPy).
    ``diagnostics=True`` adds ``detail["calls"]``: one :class:`CallOutcome` per predicted call (in
    order), then one per missed gold call.
    """

    name = "tool_call"

    def __init__(self, level: str = "call", *, canonicalizer: Any = None,
                 grammar: Optional[GraphGrammar] = None, pairing: str = "greedy",
                 diagnostics: bool = False) -> None:
        if level not in LEVELS:
            raise InvalidValueError(f"must be 'call' or 'arg', got {level!r}", field="level")
        self.level = level
        self.canonicalizer = (resolve_canonicalizer(canonicalizer) if canonicalizer is not None
                              else default_canonicalizer())
        self.grammar = grammar
        self.pairing = check_pairing(pairing)
        self.diagnostics = bool(diagnostics)

    def _gain(self, w: _Weights, g_calls: list[Call], pn: list[dict], gn: list[dict]) -> Optional[Gain]:
        """The worth of a pair that ``pairing="optimal"`` maximises: at call level the
        :func:`match_calls` worth (exact matches, then agreeing arguments: the TP is its call
        weight times the exact matches), at argument level the weights of the agreeing arguments
        (the pair's TP)."""
        if self.pairing == "greedy":
            return None
        if self.level == "call":
            return _match_gain(pn, gn)

        def agreeing(i: int, j: int) -> tuple:
            p, g = pn[i], gn[j]
            tool = g_calls[j][0]
            return tuple(w.arg(tool, k) for k in g if k in p and p[k] == g[k])

        return agreeing

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        w = _Weights(grammar if grammar is not None else self.grammar)
        p_calls, g_calls, pn, gn = _read(calls_of(pred), calls_of(gold), self.canonicalizer)
        pairs = _assign(p_calls, g_calls, pn, gn, self._gain(w, g_calls, pn, gn))
        # The totals add every weight in the same order whether or not rows are kept.
        tp = fp = fn = 0.0
        rows: dict[int, CallOutcome] = {}
        for i, j in pairs:
            tool = g_calls[j][0]
            p, g = pn[i], gn[j]
            exact = _call_matches(p, g)
            r_tp = r_fp = r_fn = 0.0
            mismatched, missing, extra_args = [], [], []
            if self.level == "call":
                wt = w.tool(tool)
                if exact:
                    r_tp = wt
                else:
                    r_fp = r_fn = wt
                tp += r_tp
                fp += r_fp
                fn += r_fn
            if self.level == "arg" or (self.diagnostics and not exact):
                # at call level this only names the row's arguments: every weight added is 0.0
                for name in list(g) + [k for k in p if k not in g]:
                    wa = w.arg(tool, name) if self.level == "arg" else 0.0
                    if name not in g:
                        extra_args.append(name)
                        fp += wa
                        r_fp += wa
                    elif name not in p:
                        missing.append(name)
                        fn += wa
                        r_fn += wa
                    elif p[name] == g[name]:
                        tp += wa
                        r_tp += wa
                    else:
                        mismatched.append(name)
                        fp += wa
                        fn += wa
                        r_fp += wa
                        r_fn += wa
            if self.diagnostics:
                rows[i] = CallOutcome(i, j, tool, "exact" if exact else "wrong_args", r_tp, r_fp, r_fn,
                                      tuple(mismatched), tuple(missing), tuple(extra_args))
        used_p = {i for i, _ in pairs}
        used_g = {j for _, j in pairs}
        extra = [i for i in range(len(p_calls)) if i not in used_p]
        missed = [j for j in range(len(g_calls)) if j not in used_g]
        for i in extra:
            call = p_calls[i]
            r_fp = w.tool(call[0]) if self.level == "call" else w.mass(call)
            fp += r_fp
            if self.diagnostics:
                rows[i] = CallOutcome(i, None, call[0], "spurious", fp=r_fp)
        missed_rows = []
        for j in missed:
            call = g_calls[j]
            r_fn = w.tool(call[0]) if self.level == "call" else w.mass(call)
            fn += r_fn
            if self.diagnostics:
                missed_rows.append(CallOutcome(None, j, call[0], "missed", fn=r_fn))
        if not all(map(math.isfinite, (tp, fp, fn))):
            raise InvalidValueError(_TOO_LARGE)
        precision, recall, f1 = _rates(tp, fp, fn)
        detail = {"tp": tp, "fp": fp, "fn": fn, "level": self.level, "n_matched": len(pairs),
                  "n_spurious": len(extra), "n_missed": len(missed), "higher_is_better": True}
        if self.diagnostics:
            detail["calls"] = [rows[i] for i in range(len(p_calls))] + missed_rows
        return Score(value=f1, precision=precision, recall=recall, f1=f1, metric="tool_call", detail=detail)

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


def explain_calls(pred: Any, gold: Any, *, level: str = "call", pairing: str = "greedy",
                  canonicalizer: Any = None, grammar: Optional[GraphGrammar] = None) -> list[CallOutcome]:
    """Per-call diagnostics of :class:`ToolCallMetric` with these settings: one
    :class:`CallOutcome` per predicted call (in order), then one per missed gold call. Their
    ``tp``/``fp``/``fn`` add up to the score's totals.

    >>> from scorekit.agents.base import Step
    >>> pred = [Step("search", {"q": "dogs", "n": 3}), Step("delete_all", {})]
    >>> gold = [("search", {"q": "cats", "n": 3}), ("answer", {"a": "meow"})]
    >>> for row in explain_calls(pred, gold):
    ...     print(row.pred, row.gold, row.tool, row.outcome, row.mismatched_args, row.fp, row.fn)
    0 0 search wrong_args ('q',) 1.0 1.0
    1 None delete_all spurious () 1.0 0.0
    None 1 answer missed () 0.0 1.0
    """
    metric = ToolCallMetric(level, canonicalizer=canonicalizer, grammar=grammar, pairing=pairing, diagnostics=True)
    return metric(pred, gold).detail["calls"]
