"""``scorekit.agents`` base / toolcalls / trajectory: doctests and ek's documented vectors
(trajectory tests on both backends), and TrajectoryMetric against the plain Python dynamic program."""

from __future__ import annotations

import doctest
import math
import random

import pytest

import scorekit
import scorekit.agents as agents
from reference_sequences import nw_distance
from scorekit import _kernels, registry
from scorekit.agents import (
    DESTRUCTIVE_WEIGHT, SCHEMES, Cost, Episode, RunProvenance, Step, TaskSpec, ToolCallMetric, ToolSpec,
    Trajectory, TrajectoryMetric, as_call, is_episode, match_calls, suite_grammar, tool_grammar,
)
from scorekit.agents import base as base_module
from scorekit.agents import toolcalls as toolcalls_module
from scorekit.agents import trajectory as trajectory_module
from scorekit.base import FieldSpec
from scorekit.canonicalize import default_canonicalizer


@pytest.fixture(params=["rust", "numba"])
def backend(request):
    with _kernels.use_backend(request.param):
        yield request.param


def s(tool, **args):
    return Step(tool, args)


# --------------------------------------------------------------------------- base

@pytest.mark.parametrize("module", [base_module, toolcalls_module, trajectory_module])
def test_doctests(backend, module):
    assert doctest.testmod(module, raise_on_error=False).failed == 0


def test_exports():
    for name in ["TaskSpec", "ToolSpec", "tool_grammar", "suite_grammar", "DEFAULT_TASK_VALUE",
                 "DESTRUCTIVE_WEIGHT", "Episode", "Trajectory", "Step", "Cost", "RunProvenance", "as_call",
                 "is_episode", "ToolCallMetric", "TrajectoryMetric", "SCHEMES", "match_calls"]:
        assert name in agents.__all__ and hasattr(agents, name)
    assert SCHEMES == ("in_order", "exact", "any_order", "superset")
    assert isinstance(registry.get("metrics", "tool_call"), ToolCallMetric)
    assert isinstance(registry.get("metrics", "trajectory"), TrajectoryMetric)


def test_tool_grammar_and_specs():
    g = tool_grammar(ToolSpec("search", params={"q": FieldSpec("q", "string")}),
                     ToolSpec("refund", params={"amount": FieldSpec("amount", "number", importance=20.0)},
                              destructive=True))
    assert (g.node_cost("search"), g.node_cost("refund")) == (1.0, 10.0)
    assert (g.field_cost("refund", "amount"), g.field_cost("search", "q")) == (20.0, 1.0)
    assert ToolSpec("wipe", importance=3.0, destructive=True).weight == 3.0
    assert ToolSpec("wipe", destructive=True).weight == DESTRUCTIVE_WEIGHT
    t1 = TaskSpec("t1", tools=(ToolSpec("a", importance=2.0),))
    t2 = TaskSpec("t2", tools=(ToolSpec("a", importance=5.0), ToolSpec("b")))
    assert t1.grammar().node_cost("a") == 2.0 and t1.value == 1.0
    g = suite_grammar([t1, t2])
    assert (g.node_cost("a"), g.node_cost("b"), list(g.edge_types)) == (5.0, 1.0, [])


def test_as_call():
    assert as_call({"name": "s", "arguments": {"q": "x"}}) == ("s", {"q": "x"})
    assert as_call(["s"]) == ("s", {})
    assert as_call(("s", "notamapping")) == ("s", {})
    assert as_call({"function": "f"}) == ("f", {})
    for bad in (3.7, ()):
        with pytest.raises(TypeError, match="Cannot read a tool call from"):
            as_call(bad)
    for bad in ({"tool": "s", "args": '{"q": 1}'}, Step("s", "x")):
        with pytest.raises(ValueError, match="arguments of tool call 's' must be a mapping"):
            as_call(bad)
    assert as_call({"tool": "s", "args": [("q", 1)]}) == ("s", {"q": 1})
    step = Step("a", {"k": 1})
    call = step.call
    call[1]["k"] = 2
    assert step.args["k"] == 1  # Step.call copies the arguments


def test_trajectory_episode_cost_provenance():
    steps = [Step("a", {})]
    t = Trajectory(steps)
    steps.append(Step("b", {}))
    assert len(t) == 1 and isinstance(t.steps, tuple)
    t = Trajectory([s("search", q="cat"), s("answer", a="meow")])
    assert t[1].tool == "answer" and [x.tool for x in t] == ["search", "answer"]
    assert t.calls == (("search", {"q": "cat"}), ("answer", {"a": "meow"}))
    assert sum([Cost(input_tokens=1), Cost(input_tokens=2), Cost(input_tokens=3)]).input_tokens == 6
    assert sum([Cost(input_tokens=1), Cost(input_tokens=2)], Cost()).input_tokens == 3
    assert (Cost(latency_s=1.0) + Cost()).latency_s == 1.0
    assert (Cost() + Cost()).latency_s is None
    assert Cost(1, 2, 3, 4).total_tokens == 10
    assert Cost().__add__(3) is NotImplemented
    key = RunProvenance(seed=1, model="m", simulator="s", suite_version="v", scaffold="x").comparability_key()
    assert key == ("s", "v", "x")
    ep = Episode(task_id="t", trajectory=t, meta={"k": 1})
    graded = ep.graded(True)
    graded.meta["k"] = 2
    assert (ep.meta["k"], ep.success, graded.success) == (1, None, True)
    assert ep.calls == t.calls
    assert Episode().trajectory is not Episode().trajectory
    assert is_episode(ep) and not is_episode("x")

    class Shaped:
        trajectory = task_id = cost = None
    assert is_episode(Shaped())


# --------------------------------------------------------------------------- tool calls

def test_match_calls_vectors():
    pairs, up, ug = match_calls([("s", {"q": "z"}), ("s", {"q": "a"})], [("s", {"q": "a"})])
    assert (pairs, up, ug) == ([(("s", {"q": "a"}), ("s", {"q": "a"}))], [("s", {"q": "z"})], [])
    pairs, up, ug = match_calls([("s", {"a": 1, "z": 1}), ("s", {"a": 1, "b": 1, "z": 1})],
                                [("s", {"a": 1, "b": 1}), ("s", {"a": 1})])
    assert (up, ug) == ([], [])
    assert pairs == [(("s", {"a": 1, "z": 1}), ("s", {"a": 1})),
                     (("s", {"a": 1, "b": 1, "z": 1}), ("s", {"a": 1, "b": 1}))]
    # forced path: every tool once per side pairs by name whatever the arguments
    pairs, up, ug = match_calls([("a", {"x": 1}), ("b", {})], [("b", {"y": 2}), ("c", {})])
    assert (pairs, up, ug) == ([(("b", {}), ("b", {"y": 2}))], [("a", {"x": 1})], [("c", {})])


def test_match_calls_invariants():
    rng = random.Random(0)
    for _ in range(200):
        pred = [(rng.choice("abc"), {"q": rng.randrange(3)}) for _ in range(rng.randrange(6))]
        gold = [(rng.choice("abc"), {"q": rng.randrange(3)}) for _ in range(rng.randrange(6))]
        pairs, up, ug = match_calls(pred, gold)
        assert len(pairs) + len(up) == len(pred) and len(pairs) + len(ug) == len(gold)
        assert all(p[0] == g[0] for p, g in pairs)


def test_tool_call_metric_vectors():
    m = ToolCallMetric()
    gold = [("search", {"q": "cats"}), ("answer", {"a": "meow"})]
    r = m([s("search", q="cats"), s("answer", a="meow")], gold)
    assert r.detail == {"tp": 2.0, "fp": 0.0, "fn": 0.0, "level": "call", "n_matched": 2, "n_spurious": 0,
                        "n_missed": 0, "higher_is_better": True}
    r = m([s("search", q="cats"), s("delete_all")], gold)
    assert (r.detail["tp"], r.detail["fp"], r.detail["fn"], r.detail["n_spurious"], r.detail["n_missed"]) == \
        (1.0, 1.0, 1.0, 1, 1)
    assert (r.precision, r.recall, r.f1, r.value) == (0.5, 0.5, 0.5, 0.5)
    assert m([s("s", q="b"), s("s", q="a")], [("s", {"q": "a"}), ("s", {"q": "b"})]).f1 == 1.0
    r = m([s("s", q="a"), s("s", q="a")], [("s", {"q": "a"}), ("s", {"q": "b"})])
    assert (r.detail["tp"], r.detail["fp"], r.detail["fn"], r.detail["n_matched"], r.f1) == (1, 1, 1, 2, 0.5)
    r = m([s("s", q="a"), s("rm", path="/")], [("s", {"q": "a"})])
    assert (r.detail["n_spurious"], r.detail["n_missed"]) == (1, 0)
    r = m([s("s", q="wrong")], [("s", {"q": "right"})])
    assert r.detail["tp"] == 0 and r.detail["fp"] > 0 and r.detail["fn"] > 0
    assert m([s("s", q="Cats ")], [("s", {"q": "cats"})]).f1 == 1.0
    assert ToolCallMetric(canonicalizer=str)([s("s", q="Cats")], [("s", {"q": "cats"})]).f1 == 0.0
    assert m([s("s", l=["a", "b"])], [("s", {"l": ["b", "a"]})]).f1 == 0.0
    assert m([s("s", l=["A ", "b"])], [("s", {"l": ("a", "b")})]).f1 == 1.0
    r = m([], [])
    assert (r.value, r.precision, r.recall, r.f1) == (1.0, 1.0, 1.0, 1.0)
    assert (r.detail["tp"], r.detail["fp"], r.detail["fn"]) == (0, 0, 0)
    r = m([s("x")], [])
    assert (r.precision, r.recall, r.f1, r.detail["fp"]) == (0.0, 0.0, 0.0, 1.0)
    r = m([], [("x", {})])
    assert (r.f1, r.detail["fn"]) == (0.0, 1.0)
    assert m([s("s", q="z"), s("s", q="a")], [("s", {"q": "a"})]).f1 == 2 / 3
    scores = [m([Step("a", {})] * 3, [("a", {})] * 3), m([Step("b", {})], [("c", {})])]
    assert m.aggregate(scores) == 0.75
    assert m.aggregate([]) == 1.0
    with pytest.raises(ValueError, match="level must be 'call' or 'arg', got 'x'"):
        ToolCallMetric("x")
    with pytest.raises(TypeError, match="ToolCallMetric needs an Episode"):
        m("search", gold)


def test_tool_call_metric_grammar_weights():
    g = tool_grammar(ToolSpec("note", params={"text": FieldSpec("text")}),
                     ToolSpec("refund", params={"amt": FieldSpec("amt", importance=50.0)}, destructive=True))
    arg = ToolCallMetric("arg", grammar=g)
    cheap = arg([s("note", text="x")], [("note", {"text": "y"})]).detail
    assert (cheap["tp"], cheap["fp"], cheap["fn"]) == (0, 1, 1)
    pricey = arg([s("refund", amt=1)], [("refund", {"amt": 999})]).detail
    assert (pricey["fp"], pricey["fn"]) == (50.0, 50.0) and pricey["fn"] > cheap["fn"] * 10
    call = ToolCallMetric("call", grammar=g)([s("refund", amt=1)], [("refund", {"amt": 999})]).detail
    assert (call["fp"], call["fn"]) == (10.0, 10.0)
    d = arg([s("refund", amt=1), s("note", text="x")], [("refund", {"amt": 1})]).detail
    assert (d["tp"], d["fp"], d["fn"]) == (50.0, 2.0, 0.0)
    d = ToolCallMetric("arg")([s("s", a=1, b=2, c=3)], [("s", {"a": 1, "b": 3, "d": 4})]).detail
    assert (d["tp"], d["fp"], d["fn"]) == (1, 2, 2)
    # a per-call grammar wins over the metric's own
    d = ToolCallMetric("call")([s("refund", amt=1)], [("refund", {"amt": 2})], grammar=g).detail
    assert d["fp"] == 10.0


def test_tool_call_metric_episode_inputs():
    ep = Episode(task_id="t", trajectory=Trajectory([s("s", q="cats")]))
    assert ToolCallMetric()(ep, [("s", {"q": "cats"})]).f1 == 1.0
    assert ToolCallMetric()(Trajectory([s("s", q="cats")]), ep).f1 == 1.0
    assert scorekit.score(ep, [("s", {"q": "cats"})], metric="tool_call").f1 == 1.0


# --------------------------------------------------------------------------- trajectories

def _vec(metric, pred, gold, **kw):
    r = metric(pred, gold, **kw)
    return r.value, r.detail["raw_distance"], r.detail["denom"]


DETOUR = [s("search", q="cat"), s("search", q="cat"), s("answer", a="meow")]
GOLD = [s("search", q="cat"), s("answer", a="meow")]


@pytest.mark.parametrize("scheme, detour, swapped", [
    ("in_order", (0.2, 2.0, 10.0), (0.5, 2.0, 4.0)),
    ("exact", (1.0, 10.0, 10.0), (1.0, 4.0, 4.0)),
    ("any_order", (0.2, 2.0, 10.0), (0.0, 0, 4.0)),
    ("superset", (0.0, 0, 4.0), (0.0, 0, 2.0)),
])
def test_trajectory_scheme_vectors(backend, scheme, detour, swapped):
    m = TrajectoryMetric(scheme)
    assert _vec(m, DETOUR, GOLD) == detour
    assert _vec(m, [s("b"), s("a")], [s("a"), s("b")]) == swapped


def test_trajectory_vectors(backend):
    m = TrajectoryMetric()
    r = m([s("a")], [s("b")])
    assert (r.value, r.detail["raw_distance"], r.detail["denom"], r.detail["similarity"]) == (1.0, 2.0, 2.0, 0.0)
    assert r.detail["higher_is_better"] is False and r.detail["exact"] is True and r.metric == "trajectory"
    assert (r.detail["scheme"], r.detail["n_pred_steps"], r.detail["n_gold_steps"]) == ("in_order", 1, 1)
    assert _vec(m, [s("s", q="x", r=1)], [s("s", q="y", r=1)]) == (0.16666666666666666, 1.0, 6.0)
    assert _vec(m, [s("s")], [("s", {"x": None})]) == (0.3333333333333333, 1.0, 3.0)
    assert m([("s", {"x": None})], [s("s")]).value > 0
    assert _vec(TrajectoryMetric("exact"), [s("a", x=2), s("b")], [s("a", x=1), s("b")]) == (1.0, 6.0, 6.0)
    assert TrajectoryMetric("exact")([s("a", x=1), s("b")], [s("a", x=1), s("b")]).value == 0.0
    assert _vec(TrajectoryMetric("superset"), [s("send")], [s("verify"), s("send")]) == (0.5, 1.0, 2.0)
    r = m([], [])
    assert (r.value, r.detail["denom"], r.detail["similarity"]) == (0.0, 0, 1.0)
    g = tool_grammar(ToolSpec("ping"), ToolSpec("wipe", destructive=True))
    assert _vec(m, [s("ping"), s("ping")], [s("ping")], grammar=g)[1:] == (1.0, 3.0)
    assert _vec(m, [s("ping"), s("wipe")], [s("ping")], grammar=g)[1:] == (10.0, 12.0)
    assert TrajectoryMetric(grammar=g)([s("ping")] * 200, [s("ping")]).value == 0.9900497512437811
    scores = [m(DETOUR, GOLD), m(GOLD, GOLD)]
    assert m.aggregate(scores) == 0.1111111111111111
    assert m.aggregate([]) == 0.0
    ep = Episode(trajectory=Trajectory([s("s", q="cats")]))
    assert scorekit.score(ep, [("s", {"q": "cats"})], metric="trajectory").value == 0.0
    # the default canonicalizer folds case and whitespace; canonicalizer=str compares raw strings
    assert m([s("s", q=" Cat")], [s("s", q="cat")]).value == 0.0
    assert TrajectoryMetric(canonicalizer=str)([s("s", q="Cat")], [s("s", q="cat")]).value == 0.25


def test_trajectory_python_equality_semantics(backend):
    m = TrajectoryMetric()
    assert m([s("s", x=1)], [s("s", x=1.0)]).value == 0.0  # 1 == 1.0
    assert m([s("s", x=True)], [s("s", x=1)]).value == 0.0
    assert m([s("s", x=math.nan)], [s("s", x=math.nan)]).value > 0  # NaN != NaN
    nan = math.nan
    assert m([s("s", x=nan), s("s", x=nan)], [s("s", x=nan)]).detail["raw_distance"] == 3.0
    assert m([s("s", x={"k": [1]})], [s("s", x={"k": [1]})]).value == 0.0  # unhashable values
    assert m([s("s", x=[1, "A"])], [s("s", x=(1, "a"))]).value == 0.0
    assert m([s("s", x=None)], [s("s")]).value > 0  # None is a value, not "missing"


def test_trajectory_errors():
    with pytest.raises(ValueError, match="scheme must be one of .* got 'bogus'"):
        TrajectoryMetric("bogus")
    with pytest.raises(TypeError, match="Episode"):
        TrajectoryMetric()(3, [])
    with pytest.raises(ValueError, match="same length"):
        TrajectoryMetric().score_batch([[]], [])
    with pytest.raises(ValueError, match="must be a mapping"):
        TrajectoryMetric()([Step("s", "x")], [])
    with pytest.raises(ValueError, match="must be a mapping"):
        ToolCallMetric()([Step("s", "x")], [])


def _random_traj(rng, n):
    return [(rng.choice(["search", "open", "answer"]),
             {k: rng.choice(["Cat", "cat ", "dog", 1, 1.0, 2, None, ("x", "Y")])
              for k in ("q", "n", "m") if rng.random() < 0.5}) for _ in range(n)]


@pytest.mark.parametrize("weights", ["unit", "dyadic", "decimal"])
def test_in_order_matches_the_plain_program(backend, weights):
    """Random trajectories, canonicalised values, grammar weights: the kernel path equals the plain
    dynamic program (exactly for unit and dyadic weights, to rounding for decimal ones)."""
    rng = random.Random({"unit": 1, "dyadic": 2, "decimal": 3}[weights])
    choices = {"unit": [1.0], "dyadic": [0.5, 1.0, 2.0, 20.0], "decimal": [0.1, 0.3, 1.7]}[weights]
    tools = {t: ToolSpec(t, importance=rng.choice(choices),
                         params={k: FieldSpec(k, importance=rng.choice(choices)) for k in ("q", "n", "m")})
             for t in ("search", "open", "answer")}
    g = tool_grammar(*tools.values())
    canon = default_canonicalizer()
    preds = [_random_traj(rng, rng.randrange(10)) for _ in range(500)]
    golds = [_random_traj(rng, rng.randrange(10)) for _ in range(500)]
    scores = TrajectoryMetric(grammar=g).score_batch(preds, golds)
    for p, q, sc in zip(preds, golds, scores):
        expected = nw_distance(p, q, g.node_cost, g.field_cost, canon)
        if weights == "decimal":
            assert sc.detail["raw_distance"] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        else:
            assert sc.detail["raw_distance"] == expected
    single = [TrajectoryMetric(grammar=g)(p, q) for p, q in zip(preds[:50], golds[:50])]
    assert [x.detail["raw_distance"] for x in single] == [x.detail["raw_distance"] for x in scores[:50]]
