"""Optimal pairing of tool calls and per-call diagnostics (``pairing=``, :class:`CallOutcome`,
:func:`explain_calls`): hand-computed cases, brute force over every assignment of small cases, the
never-worse-than-greedy property on thousands of random cases, the default (greedy) path against
the reference kit ``ek`` (the test oracle), diagnostics that add up to the totals, and bad input."""

from __future__ import annotations

import doctest
import importlib
import itertools
import random
import sys
import time

import ek.agents
import ek.base
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_examples import run_python_blocks
from scorekit.agents import Step, ToolCallMetric, ToolSpec, TrajectoryMetric, match_calls, tool_grammar
from scorekit.agents.toolcalls import OUTCOMES, CallOutcome, explain_calls
from scorekit.base import FieldSpec
from scorekit.canonicalize import default_canonicalizer
from scorekit.registry import MissingExtraError

toolcalls = importlib.import_module("scorekit.agents.toolcalls")
trajectory = importlib.import_module("scorekit.agents.trajectory")

TOOLS = ("s", "t", "u")
NAMES = ("a", "b", "c", "d")


def test_module_doctests():
    assert doctest.testmod(toolcalls).failed == 0
    assert doctest.testmod(trajectory).failed == 0


def test_docs_page():
    assert run_python_blocks("agents-beyond.md", min_blocks=4) >= 20


# ------------------------------------------------------------------ an independent oracle


def random_calls(rng, n, tools=TOOLS[:2], values=(0, 1, 2)):
    return [(rng.choice(tools), {k: rng.choice(values) for k in NAMES if rng.random() < 0.5})
            for _ in range(n)]


def integer_grammar(rng):
    """Integer call and argument weights (sums exact in float64), some of them zero."""
    return tool_grammar(*(ToolSpec(t, importance=float(rng.choice([0, 1, 2, 5])),
                                   params={k: FieldSpec(k, importance=float(rng.choice([0, 1, 3, 10])))
                                           for k in NAMES})
                          for t in TOOLS))


def weights(grammar):
    if grammar is None:
        return (lambda t: 1.0), (lambda t, a: 1.0)
    return grammar.node_cost, grammar.field_cost


def matchings(pred, gold):
    """Every partial one-to-one pairing of pred and gold calls of the same tool name."""
    per_tool = []
    for tool in {t for t, _ in pred}:
        rows = [i for i, (t, _) in enumerate(pred) if t == tool]
        cols = [j for j, (t, _) in enumerate(gold) if t == tool]
        options = []
        for size in range(min(len(rows), len(cols)) + 1):
            for chosen in itertools.combinations(rows, size):
                for image in itertools.permutations(cols, size):
                    options.append(list(zip(chosen, image)))
        per_tool.append(options)
    for combo in itertools.product(*per_tool):
        yield [pair for part in combo for pair in part]


def counts(pred, gold, pairs, level, grammar):
    """TP/FP/FN of a pairing, written from the rules of ek-agents §6.5."""
    w_tool, w_arg = weights(grammar)
    tp = fp = fn = 0.0
    for i, j in pairs:
        (tool, p), (_, g) = pred[i], gold[j]
        if level == "call":
            if p == g:
                tp += w_tool(tool)
            else:
                fp += w_tool(tool)
                fn += w_tool(tool)
            continue
        for name in set(p) | set(g):
            w = w_arg(tool, name)
            if name not in g:
                fp += w
            elif name not in p:
                fn += w
            elif p[name] == g[name]:
                tp += w
            else:
                fp += w
                fn += w
    mass = (lambda c: w_tool(c[0])) if level == "call" else (
        lambda c: w_tool(c[0]) + sum(w_arg(c[0], a) for a in c[1]))
    fp += sum(mass(c) for i, c in enumerate(pred) if i not in {i for i, _ in pairs})
    fn += sum(mass(c) for j, c in enumerate(gold) if j not in {j for _, j in pairs})
    return tp, fp, fn


def f1(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else (1.0 if fn == 0 else 0.0)
    r = tp / (tp + fn) if tp + fn else (1.0 if fp == 0 else 0.0)
    return 2 * p * r / (p + r) if p + r else 0.0


def distances(pred, gold, pairs, grammar):
    """``(any_order raw, superset raw)`` of a pairing (ek-agents §7.2-7.3)."""
    w_tool, w_arg = weights(grammar)

    def mass(c):
        return w_tool(c[0]) + sum(w_arg(c[0], a) for a in c[1])

    paired_p, paired_g = {i for i, _ in pairs}, {j for _, j in pairs}
    sub = sum(w_arg(gold[j][0], k) for i, j in pairs for k in set(pred[i][1]) | set(gold[j][1])
              if pred[i][1].get(k, KeyError) != gold[j][1].get(k, KeyError))
    unpaired_p = sum(mass(c) for i, c in enumerate(pred) if i not in paired_p)
    unpaired_g = sum(mass(c) for j, c in enumerate(gold) if j not in paired_g)
    superset = unpaired_g + sum(mass(gold[j]) for i, j in pairs if pred[i][1] != gold[j][1])
    return sub + unpaired_p + unpaired_g, superset


def match_worth(pairs):
    """What ``match_calls(pairing="optimal")`` maximises over ``(pred_call, gold_call)`` pairs:
    exact matches, then agreeing arguments."""
    exact = sum(p[1] == g[1] for p, g in pairs)
    overlap = sum(1 for p, g in pairs for k, v in g[1].items() if k in p[1] and p[1][k] == v)
    return exact, overlap


# ------------------------------------------------------------------ hand-computed cases

PRED = [("s", {"a": 1, "b": 1}), ("s", {"c": 1})]
GOLD = [("s", {"a": 1, "b": 1, "c": 1}), ("s", {"a": 1, "b": 1, "c": 2})]


def test_hand_computed_greedy_versus_optimal():
    # Agreeing arguments: p0-g0 2, p0-g1 2, p1-g0 1 (c), p1-g1 0. Greedy takes p0-g0 (first of the
    # tie), leaving p1-g1: 2 + 0. Optimal: p0-g1 + p1-g0 = 2 + 1.
    assert match_calls(PRED, GOLD)[0] == [(PRED[0], GOLD[0]), (PRED[1], GOLD[1])]
    assert match_calls(PRED, GOLD, pairing="optimal")[0] == [(PRED[0], GOLD[1]), (PRED[1], GOLD[0])]
    # Argument level: tp + fp = 3 pred arguments, tp + fn = 6 gold arguments; F1 = 2 tp / 9.
    greedy = ToolCallMetric("arg")(PRED, GOLD)
    optimal = ToolCallMetric("arg", pairing="optimal")(PRED, GOLD)
    assert (greedy.detail["tp"], greedy.detail["fp"], greedy.detail["fn"]) == (2.0, 1.0, 4.0)
    assert (optimal.detail["tp"], optimal.detail["fp"], optimal.detail["fn"]) == (3.0, 0.0, 3.0)
    assert greedy.f1 == pytest.approx(4 / 9) and optimal.f1 == pytest.approx(6 / 9)
    # any_order: masses 3, 2 (pred) and 4, 4 (gold): denominator 13. Greedy substitutions:
    # p0/g0 lacks c (1), p1/g1 lacks a, b and differs on c (3) -> 4. Optimal: p0/g1 1 + p1/g0 2 -> 3.
    g_any = TrajectoryMetric("any_order")(PRED, GOLD)
    o_any = TrajectoryMetric("any_order", pairing="optimal")(PRED, GOLD)
    assert (g_any.detail["raw_distance"], g_any.detail["denom"]) == (4.0, 13.0)
    assert (o_any.detail["raw_distance"], o_any.detail["denom"]) == (3.0, 13.0)
    # Call level and superset: no exact match either way, so the same scores.
    assert ToolCallMetric(pairing="optimal")(PRED, GOLD).detail == ToolCallMetric()(PRED, GOLD).detail
    assert (TrajectoryMetric("superset", pairing="optimal")(PRED, GOLD).value
            == TrajectoryMetric("superset")(PRED, GOLD).value == 1.0)


def test_weighted_arguments_steer_the_optimal_pairing():
    # c weighs 10, a weighs 1.
    g = tool_grammar(ToolSpec("s", params={"a": FieldSpec("a"), "c": FieldSpec("c", importance=10.0)}))
    pred = [("s", {"a": 1, "c": 7}), ("s", {"a": 3, "c": 9})]
    gold = [("s", {"a": 1, "c": 8}), ("s", {"a": 2, "c": 7})]
    # Greedy ranks by the number of agreeing arguments: p0-g0 (a) and p0-g1 (c) tie at 1, g0 comes
    # first -> p0-g0 + p1-g1: tp = 1. Optimal: p0-g1 (c, 10) + p1-g0 (nothing) -> tp = 10.
    assert ToolCallMetric("arg", grammar=g)(pred, gold).detail["tp"] == 1.0
    assert ToolCallMetric("arg", grammar=g, pairing="optimal")(pred, gold).detail["tp"] == 10.0
    # An exact match is kept: p1-g0 exact (a 1 + c 10), then p0-g1 agrees on nothing -> 11, while
    # the other assignment, p0-g0 (a) + p1-g1 (nothing), is worth 1.
    pred = [("s", {"a": 1, "c": 5}), ("s", {"a": 1, "c": 7})]
    gold = [("s", {"a": 1, "c": 7}), ("s", {"a": 2, "c": 9})]
    assert ToolCallMetric("arg", grammar=g)(pred, gold).detail["tp"] == 11.0
    assert ToolCallMetric("arg", grammar=g, pairing="optimal")(pred, gold).detail["tp"] == 11.0


def test_explain_calls_hand_computed():
    g = tool_grammar(ToolSpec("note", params={"text": FieldSpec("text")}),
                     ToolSpec("refund", params={"amt": FieldSpec("amt", importance=50.0)}, destructive=True))
    pred = [Step("refund", {"amt": 999, "why": "x"}), Step("note", {"text": "Hi "}), Step("ping")]
    gold = [("note", {"text": "hi"}), ("refund", {"amt": 1}), ("note", {"text": "bye", "to": "me"})]
    rows = explain_calls(pred, gold, level="arg", grammar=g)
    assert rows == [
        # amt differs (50 both ways), why is hallucinated (undeclared: weight 1)
        CallOutcome(0, 1, "refund", "wrong_args", 0.0, 51.0, 50.0, ("amt",), (), ("why",)),
        # "Hi " folds to "hi": exact; the note's text weighs 1
        CallOutcome(1, 0, "note", "exact", 1.0, 0.0, 0.0),
        # spurious ping: call weight 1, no arguments
        CallOutcome(2, None, "ping", "spurious", fp=1.0),
        # missed note: call 1 + text 1 + to 1
        CallOutcome(None, 2, "note", "missed", fn=3.0),
    ]
    score = ToolCallMetric("arg", grammar=g, diagnostics=True)(pred, gold)
    assert (score.detail["tp"], score.detail["fp"], score.detail["fn"]) == (1.0, 52.0, 53.0)
    assert score.detail["calls"] == rows
    call_rows = explain_calls(pred, gold, grammar=g)          # call level: refund weighs 10
    assert [(r.outcome, r.tp, r.fp, r.fn) for r in call_rows] == [
        ("wrong_args", 0.0, 10.0, 10.0), ("exact", 1.0, 0.0, 0.0), ("spurious", 0.0, 1.0, 0.0),
        ("missed", 0.0, 0.0, 1.0)]
    assert call_rows[0].mismatched_args == ("amt",) and call_rows[0].extra_args == ("why",)


def test_explain_calls_empty_and_wrong_tool():
    assert explain_calls([], []) == []
    rows = explain_calls([("a", {})], [("b", {})])
    assert [(r.pred, r.gold, r.tool, r.outcome) for r in rows] == [(0, None, "a", "spurious"),
                                                                  (None, 0, "b", "missed")]
    assert "calls" not in ToolCallMetric()([("a", {})], [("b", {})]).detail


# ------------------------------------------------------------------ brute force on small cases


def test_optimal_equals_brute_force_on_small_cases():
    rng = random.Random(15)
    checked = 0
    for case in range(400):
        pred = random_calls(rng, rng.randrange(5))
        gold = random_calls(rng, rng.randrange(5))
        grammar = integer_grammar(rng) if case % 2 else None
        every = list(matchings(pred, gold))
        # match_calls: most exact matches, then most agreeing arguments
        best_worth = max(match_worth([(pred[i], gold[j]) for i, j in m]) for m in every)
        assert match_worth(match_calls(pred, gold, pairing="optimal")[0]) == best_worth
        for level in ("call", "arg"):
            best = max(counts(pred, gold, m, level, grammar)[0] for m in every)
            best_f1 = max(f1(*counts(pred, gold, m, level, grammar)) for m in every)
            got = ToolCallMetric(level, grammar=grammar, pairing="optimal", canonicalizer=str)(pred, gold)
            assert got.detail["tp"] == best
            assert got.f1 == pytest.approx(best_f1, rel=1e-12, abs=1e-15)
        best_any = min(distances(pred, gold, m, grammar)[0] for m in every)
        best_sup = min(distances(pred, gold, m, grammar)[1] for m in every)
        opt = TrajectoryMetric("any_order", grammar=grammar, pairing="optimal", canonicalizer=str)
        sup = TrajectoryMetric("superset", grammar=grammar, pairing="optimal", canonicalizer=str)
        assert opt(pred, gold).detail["raw_distance"] == best_any
        assert sup(pred, gold).detail["raw_distance"] == best_sup
        checked += len(every)
    assert checked > 2000  # the cases really had several assignments each


# ------------------------------------------------------------------ never worse than greedy


def test_optimal_is_never_worse_than_greedy():
    rng = random.Random(2024)
    better_arg = better_any = 0
    for case in range(2500):
        n_tools = rng.choice([1, 1, 2, 3])
        pred = random_calls(rng, rng.randrange(9), TOOLS[:n_tools])
        gold = random_calls(rng, rng.randrange(9), TOOLS[:n_tools])
        grammar = integer_grammar(rng) if case % 3 else None
        for level in ("call", "arg"):
            greedy = ToolCallMetric(level, grammar=grammar)(pred, gold)
            optimal = ToolCallMetric(level, grammar=grammar, pairing="optimal")(pred, gold)
            assert optimal.f1 >= greedy.f1
            assert optimal.detail["tp"] >= greedy.detail["tp"]
            assert optimal.detail["n_matched"] == greedy.detail["n_matched"]
            if level == "call":
                # exact matching is an equivalence, so greedy's exact-first rule is already optimal
                assert optimal.f1 == greedy.f1
            else:
                better_arg += optimal.f1 > greedy.f1
        any_g = TrajectoryMetric("any_order", grammar=grammar)(pred, gold).detail["raw_distance"]
        any_o = TrajectoryMetric("any_order", grammar=grammar, pairing="optimal")(pred, gold).detail["raw_distance"]
        assert any_o <= any_g
        better_any += any_o < any_g
        sup_g = TrajectoryMetric("superset", grammar=grammar)(pred, gold).value
        assert TrajectoryMetric("superset", grammar=grammar, pairing="optimal")(pred, gold).value == sup_g
    assert better_arg > 50 and better_any > 50  # the property is not vacuous


def test_optimal_keeps_greedy_when_it_is_already_optimal():
    # Greedy is exact for distinct calls, repeats and reorderings: optimal returns the same pairs.
    rng = random.Random(5)
    for _ in range(300):
        gold = random_calls(rng, rng.randrange(8))
        pred = [gold[i] for i in rng.sample(range(len(gold)), len(gold))]
        assert match_calls(pred, gold, pairing="optimal") == match_calls(pred, gold)


def test_hard_case_200_calls_of_one_tool():
    rng = random.Random(7)
    pred = random_calls(rng, 200, ("s",), values=("x", "y", "z", "w"))
    gold = random_calls(rng, 200, ("s",), values=("x", "y", "z", "w"))
    start = time.perf_counter()
    optimal = ToolCallMetric("arg", pairing="optimal")(pred, gold)
    elapsed = time.perf_counter() - start
    greedy = ToolCallMetric("arg")(pred, gold)
    assert optimal.f1 > greedy.f1 and optimal.detail["n_matched"] == 200
    assert elapsed < 10  # measured about 0.2 s (docs/agents-beyond.md)
    assert (TrajectoryMetric("any_order", pairing="optimal")(pred, gold).value
            < TrajectoryMetric("any_order")(pred, gold).value)


# ------------------------------------------------------------------ the default path is unchanged


def ek_grammar(spec):
    return ek.agents.tool_grammar(*(ek.agents.ToolSpec(t, importance=imp, params={
        k: ek.base.FieldSpec(k, importance=w) for k, w in params.items()}) for t, imp, params in spec))


def test_default_and_diagnostics_agree_with_ek():
    """Greedy (the default), with or without diagnostics, gives ek's scores (exactly with integer
    weights; to rounding with decimal ones, whose sums ek adds in set order); the diagnostics rows
    add up to the totals."""
    rng = random.Random(99)
    for case in range(600):
        choices = [[0.0, 1.0, 2.0, 10.0], [0.1, 0.3, 1.7, 20.0]][case % 2]
        spec = [(t, rng.choice(choices), {k: rng.choice(choices) for k in NAMES}) for t in TOOLS]
        grammar = tool_grammar(*(ToolSpec(t, importance=imp, params={k: FieldSpec(k, importance=w)
                                                                      for k, w in params.items()})
                                 for t, imp, params in spec))
        values = ("Cat", "cat ", "dog", 1, 1.0, 2, None)
        pred = random_calls(rng, rng.randrange(7), TOOLS, values)
        gold = random_calls(rng, rng.randrange(7), TOOLS, values)
        level = rng.choice(["call", "arg"])
        theirs = ek.agents.ToolCallMetric(level, grammar=ek_grammar(spec))(pred, gold)
        plain = ToolCallMetric(level, grammar=grammar)(pred, gold)
        explained = ToolCallMetric(level, grammar=grammar, diagnostics=True)(pred, gold)
        rows = explained.detail.pop("calls")
        assert plain == explained
        if case % 2 == 0:
            assert (plain.value, plain.precision, plain.recall, plain.f1, plain.metric, plain.detail) == \
                (theirs.value, theirs.precision, theirs.recall, theirs.f1, theirs.metric, theirs.detail)
        else:
            assert {k: v for k, v in plain.detail.items() if k not in ("tp", "fp", "fn")} == \
                {k: v for k, v in theirs.detail.items() if k not in ("tp", "fp", "fn")}
            pairs = [(plain.f1, theirs.f1), (plain.precision, theirs.precision), (plain.recall, theirs.recall)]
            pairs += [(plain.detail[k], theirs.detail[k]) for k in ("tp", "fp", "fn")]
            for mine, ref in pairs:
                assert mine == pytest.approx(ref, rel=1e-12, abs=1e-12)
        for key in ("tp", "fp", "fn"):
            total = sum(getattr(r, key) for r in rows)
            assert total == plain.detail[key] if case % 2 == 0 else total == pytest.approx(plain.detail[key], rel=1e-12)


call_strategy = st.tuples(st.sampled_from(TOOLS[:2]),
                          st.dictionaries(st.sampled_from(NAMES), st.sampled_from([0, 1, "x", "X "]), max_size=3))


@settings(max_examples=300)
@given(st.lists(call_strategy, max_size=7), st.lists(call_strategy, max_size=7),
       st.sampled_from(["call", "arg"]), st.sampled_from(["greedy", "optimal"]), st.booleans())
def test_diagnostics_add_up_exactly(pred, gold, level, pairing, weighted):
    grammar = integer_grammar(random.Random(len(pred) * 31 + len(gold))) if weighted else None
    score = ToolCallMetric(level, grammar=grammar, pairing=pairing, diagnostics=True)(pred, gold)
    rows = score.detail["calls"]
    # the per-call contributions sum to the totals exactly (integer weights)
    for key in ("tp", "fp", "fn"):
        assert sum(getattr(r, key) for r in rows) == score.detail[key]
    # one row per predicted call in order, then the missed gold calls in order
    assert [r.pred for r in rows[:len(pred)]] == list(range(len(pred)))
    missed = [r.gold for r in rows[len(pred):]]
    assert all(r.pred is None and r.outcome == "missed" for r in rows[len(pred):]) and missed == sorted(missed)
    paired = [r for r in rows if r.pred is not None and r.gold is not None]
    assert sorted([r.gold for r in paired] + missed) == list(range(len(gold)))
    assert len(paired) == score.detail["n_matched"]
    assert sum(r.outcome == "spurious" for r in rows) == score.detail["n_spurious"]
    assert len(missed) == score.detail["n_missed"]
    assert {r.outcome for r in rows} <= set(OUTCOMES)
    fold = {0: 0, 1: 1, "x": "x", "X ": "x"}
    for r in paired:
        p, g = pred[r.pred][1], gold[r.gold][1]
        assert r.tool == pred[r.pred][0] == gold[r.gold][0]
        assert set(r.missing_args) == set(g) - set(p) and set(r.extra_args) == set(p) - set(g)
        assert set(r.mismatched_args) == {k for k in set(p) & set(g) if fold[p[k]] != fold[g[k]]}
        assert (r.outcome == "exact") == (not (r.missing_args or r.extra_args or r.mismatched_args))
    # the rows pair the calls as match_calls does (at call level, whose worth it shares)
    if level == "call" or pairing == "greedy":
        expected = match_calls(pred, gold, canon=default_canonicalizer(), pairing=pairing)[0]
        assert [(pred[r.pred], gold[r.gold]) for r in paired] == expected


def test_in_order_and_exact_ignore_pairing():
    rng = random.Random(3)
    preds = [random_calls(rng, rng.randrange(6)) for _ in range(200)]
    golds = [random_calls(rng, rng.randrange(6)) for _ in range(200)]
    for scheme in ("in_order", "exact"):
        a = TrajectoryMetric(scheme).score_batch(preds, golds)
        b = TrajectoryMetric(scheme, pairing="optimal").score_batch(preds, golds)
        assert a == b


# ------------------------------------------------------------------ bad input


def test_bad_pairing():
    for bad in ("best", "Optimal", None, 1, ["greedy"]):
        with pytest.raises(ValueError, match=r"pairing must be 'greedy' or 'optimal'"):
            ToolCallMetric(pairing=bad)
        with pytest.raises(ValueError, match=r"pairing must be 'greedy' or 'optimal'"):
            TrajectoryMetric("any_order", pairing=bad)
        with pytest.raises(ValueError, match=r"pairing must be 'greedy' or 'optimal'"):
            match_calls([], [], pairing=bad)
        with pytest.raises(ValueError, match=r"pairing must be 'greedy' or 'optimal'"):
            explain_calls([], [], pairing=bad)


def test_optimal_without_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)  # makes the import fail
    for make in (lambda: ToolCallMetric(pairing="optimal"), lambda: TrajectoryMetric(pairing="optimal"),
                 lambda: match_calls([("s", {})] * 2, [("s", {})], pairing="optimal")):
        with pytest.raises(MissingExtraError, match=r"pip install scipy") as info:
            make()
        assert isinstance(info.value, ImportError)
    # greedy never needs SciPy
    assert ToolCallMetric()(PRED, GOLD).detail["n_matched"] == 2
    assert TrajectoryMetric("any_order")(PRED, GOLD).detail["raw_distance"] == 4.0


def test_weights_too_large_for_the_assignment():
    huge = tool_grammar(ToolSpec("s", importance=1e308, params={"a": FieldSpec("a", importance=1e308),
                                                                "b": FieldSpec("b", importance=1e308)}))
    pred = [("s", {"a": 1, "b": 1}), ("s", {"a": 2, "b": 1})]
    gold = [("s", {"a": 1, "b": 2}), ("s", {"a": 2, "b": 2})]
    with pytest.raises(ValueError, match="grammar weights are too large"):
        TrajectoryMetric("any_order", grammar=huge, pairing="optimal")(pred, gold)
    with pytest.raises(ValueError, match="grammar weights are too large"):
        ToolCallMetric("arg", grammar=huge, pairing="optimal")(pred, gold)


def test_bad_calls_still_raise_named_errors():
    with pytest.raises(TypeError, match="ToolCallMetric needs an Episode"):
        explain_calls(3, [])
    with pytest.raises(ValueError, match="contains itself"):
        loop = []
        loop.append(loop)
        ToolCallMetric(pairing="optimal", diagnostics=True)([("s", {"a": loop})], [("s", {})])
