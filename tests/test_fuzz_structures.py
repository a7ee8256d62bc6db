"""Fuzzing the structured side of the public API with hostile values (``fuzz_harness``): tree edit
distance, networkx-compatible graph edit distance, typed-graph scores, ROVER and the agreement
signal, trajectory and tool-call scores. Each call must give a valid result (equal to an
independent oracle where one applies: zss, networkx) or a named error, identically on both
backends. The text side and the command line are fuzzed in ``test_fuzz_text.py`` and
``test_fuzz_cli.py``; tables and flows in ``test_hostile_tables_trees.py``.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import zss
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorekit as ek
from scorekit.agents import Step, ToolCallMetric, TrajectoryMetric
from scorekit.base import FieldSpec, GraphGrammar, NodeType
from scorekit.graphs import graph_edit_distance
from scorekit.metrics.graphs import TypedEdge, TypedGraph, TypedNode
from scorekit.qe import AgreementSignal
from scorekit.trees import Tree, tree_edit_distance, tree_edit_distance_batch

from fuzz_harness import floats, hostile_objects, ints, on_both_backends, outcome, scalar_text, wrong_values

SLOW_OK = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Tree labels: short hostile texts, lone surrogates excluded (labels are text). The empty label
#: is left out: zss, the oracle, prices inserting or deleting it as its distance to "", i.e. 0.
labels = st.one_of(st.sampled_from(["a", "b", "c", "\u0568", "\U0001F600"]),
                   scalar_text.map(lambda s: s[:4]).filter(bool))

#: A cost where a number is expected: numbers (valid and invalid) and wrong types.
costs = st.one_of(st.floats(0, 5), st.integers(0, 5), floats, ints, wrong_values)


def trees(max_leaves: int = 12) -> st.SearchStrategy:
    leaf = labels.map(Tree)
    return st.recursive(leaf, lambda kids: st.builds(Tree, labels, st.lists(kids, max_size=3)),
                        max_leaves=max_leaves)


def zss_distance(a: Tree, b: Tree) -> float:
    def convert(t: Tree) -> zss.Node:
        node = zss.Node(t.label)
        for child in t.children:
            node.addkid(convert(child))
        return node

    return float(zss.simple_distance(convert(a), convert(b)))


@SLOW_OK
@given(trees(), trees())
def test_tree_edit_distance_equals_zss_and_is_a_metric(a, b):
    d = on_both_backends(lambda: tree_edit_distance(a, b))
    assert d == ("ok", zss_distance(a, b))
    assert tree_edit_distance(b, a) == d[1]
    assert tree_edit_distance(a, a) == 0.0


@SLOW_OK
@given(st.lists(st.tuples(trees(6), trees(6)), max_size=5), costs, costs,
       st.one_of(st.none(), costs, st.just(lambda x, y: 0.5 * (x != y)), st.just(lambda x, y: math.nan),
                 st.just(lambda x, y: "x"), st.just({("a", "b"): 0.5}), st.just({("a", "b"): -1.0})),
       st.one_of(st.none(), st.integers(-2, 4), st.sampled_from([2**62, 1.5, "2"])))
def test_tree_costs_and_threads_are_valid_or_named(pairs, delete_cost, insert_cost, rename_cost, threads):
    def run():
        return tree_edit_distance_batch(pairs, delete_cost=delete_cost, insert_cost=insert_cost,
                                        rename_cost=rename_cost, threads=threads)

    out = on_both_backends(run)
    if out[0] == "ok":
        values = out[1]
        assert values.shape == (len(pairs),)
        assert np.all(np.isfinite(values)) and np.all(values >= 0)


def small_graphs() -> st.SearchStrategy:
    @st.composite
    def build(draw):
        n = draw(st.integers(0, 5))
        g = nx.Graph()
        for v in range(n):
            g.add_node(v, label=draw(st.sampled_from(["A", "B"])))
        for u in range(n):
            for v in range(u + 1, n):
                if draw(st.booleans()):
                    g.add_edge(u, v, w=draw(st.sampled_from([1, 2])))
        return g

    return build()


def label_match(a, b):
    return a["label"] == b["label"]


@SLOW_OK
@given(small_graphs(), small_graphs())
def test_graph_edit_distance_equals_networkx(g1, g2):
    expected = nx.graph_edit_distance(g1, g2, node_match=label_match)
    assert on_both_backends(lambda: graph_edit_distance(g1, g2, node_match=label_match)) == ("ok", expected)


#: Hostile cost functions: what they return, for every call.
cost_results = st.one_of(st.floats(0, 3), floats, ints, st.sampled_from(["x", None, np.float64("nan"), [1]]),
                         hostile_objects())


@SLOW_OK
@given(small_graphs(), small_graphs(), cost_results, cost_results,
       st.one_of(st.none(), floats, ints, st.sampled_from([0, -1, 1.5])),
       st.one_of(st.none(), st.sampled_from([(0, 0), (0, 7), ("x", 0)])))
def test_graph_edit_distance_hostile_costs_are_valid_or_named(g1, g2, node_cost, edge_cost, timeout, roots):
    import networkx.exception as nxe

    def run():
        return graph_edit_distance(g1, g2, node_del_cost=lambda n: node_cost, node_ins_cost=lambda n: node_cost,
                                   edge_del_cost=lambda e: edge_cost, edge_ins_cost=lambda e: edge_cost,
                                   timeout=timeout, roots=roots)

    try:
        out = on_both_backends(run)
    except AssertionError as exc:
        # networkx's own exception types are part of the drop-in's contract.
        assert isinstance(exc.__cause__, nxe.NetworkXException), exc
        return
    if out[0] == "ok" and out[1] is not None:
        assert math.isfinite(out[1]) and out[1] >= 0


FIELD_VALUES = st.one_of(scalar_text.map(lambda s: s[:6]), st.integers(-3, 3), floats, st.none(), wrong_values)


def typed_graphs() -> st.SearchStrategy:
    @st.composite
    def build(draw):
        n = draw(st.integers(0, 4))
        nodes = [TypedNode(f"n{k}", draw(st.sampled_from(["donation", "person"])),
                           {"amount": draw(FIELD_VALUES), "city": draw(FIELD_VALUES)}) for k in range(n)]
        edges = []
        for u in range(n):
            for v in range(n):
                if u != v and draw(st.integers(0, 3)) == 0:
                    edges.append(TypedEdge(f"n{u}", f"n{v}", draw(st.sampled_from(["gave", "knows"]))))
        return TypedGraph(nodes, edges)

    return build()


GRAMMAR = GraphGrammar(node_types={
    "donation": NodeType("donation", fields={"amount": FieldSpec("amount", "number", importance=10.0),
                                             "city": FieldSpec("city", "string", importance=1.0)}),
    "person": NodeType("person", fields={"city": FieldSpec("city", "string", importance=2.0)}),
})


@SLOW_OK
@given(typed_graphs(), typed_graphs())
def test_typed_graph_metric_is_valid_symmetric_in_identity_and_agrees(pred, gold):
    metric = ek.TypedGraphMetric(grammar=GRAMMAR)
    out = on_both_backends(lambda: metric(pred, gold), lambda s: (s.value, s.detail.get("raw_distance")))
    if out[0] == "ok":
        value, raw = out[1]
        assert 0.0 <= value <= 1.0 and math.isfinite(raw) and raw >= 0
    itself = outcome(lambda: metric(gold, gold).detail["raw_distance"])
    assert itself[0] == "error" or itself[1] == 0.0


#: One ROVER hypothesis: text, a token list, ``(token, confidence)`` pairs, or something wrong.
hypothesis_values = st.one_of(
    st.sampled_from(["the cat sat", "the bat sat", "a cat", "", "cat sat the"]),
    st.lists(st.sampled_from(["the", "cat", "sat", "\u0568", ""]), max_size=5),
    st.lists(st.tuples(st.sampled_from(["the", "cat", "sat"]), st.one_of(st.floats(0, 1), floats)), max_size=4),
    wrong_values,
)


@SLOW_OK
@given(st.one_of(st.lists(hypothesis_values, max_size=4), wrong_values, st.sampled_from(["the cat", b"x"])),
       st.one_of(st.floats(0, 1), floats), st.one_of(st.floats(0, 1), floats))
def test_rover_and_agreement_are_valid_or_named(hyps, conf_weight, null_conf):
    consensus = on_both_backends(lambda: ek.rover(hyps, conf_weight=conf_weight, null_conf=null_conf),
                                 lambda c: (c.text, list(c.agreement)))
    if consensus[0] == "ok":
        text, agreement = consensus[1]
        assert isinstance(text, str) and all(0.0 <= a <= 1.0 for a in agreement)
    signal = on_both_backends(lambda: AgreementSignal(conf_weight=conf_weight, null_conf=null_conf)(hyps))
    if signal[0] == "ok":
        assert signal[1] is None or 0.0 <= signal[1] <= 1.0


ARG_VALUES = st.one_of(st.integers(-2, 2), st.sampled_from([1.0, True, np.int64(1), math.nan, "1", None]),
                       scalar_text.map(lambda s: s[:5]), st.lists(st.integers(0, 2), max_size=2),
                       st.builds(np.array, st.lists(st.integers(0, 2), max_size=2)))
steps = st.builds(Step, st.sampled_from(["search", "open", "answer"]),
                  st.dictionaries(st.sampled_from(["q", "n"]), ARG_VALUES, max_size=2))
#: A trajectory: steps, tuple/dict call forms, or something wrong.
trajectories = st.one_of(
    st.lists(steps, max_size=5),
    st.lists(st.tuples(st.sampled_from(["search", "open"]), st.dictionaries(st.just("q"), ARG_VALUES)), max_size=3),
    st.lists(st.one_of(steps, wrong_values), max_size=3),
    wrong_values,
)


@SLOW_OK
@given(trajectories, trajectories, st.sampled_from(["in_order", "superset", "subset", "exact", "any_order"]))
def test_trajectory_and_tool_call_scores_are_valid_or_named(pred, gold, scheme):
    def trajectory():
        return TrajectoryMetric(scheme=scheme)(pred, gold).value

    out = on_both_backends(trajectory)
    if out[0] == "ok":
        assert math.isfinite(out[1]) and out[1] >= 0
    # A NaN argument equals nothing, not even itself (docs/decisions.md), so identity holds without.
    itself = outcome(lambda: TrajectoryMetric(scheme=scheme)(gold, gold).value)
    assert itself[0] == "error" or itself[1] == 0.0 or "nan" in repr(gold)
    calls = on_both_backends(lambda: ToolCallMetric()(pred, gold), lambda s: (s.precision, s.recall))
    if calls[0] == "ok":
        assert all(0.0 <= x <= 1.0 for x in calls[1])
