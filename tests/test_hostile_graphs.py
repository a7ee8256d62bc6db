"""Hostile input for graph edit distance (issue 11, section 3), on both kernel backends.

networkx's own GED tests (``networkx/algorithms/tests/test_similarity.py``, shipped in the
networkx wheel) run with ``graph_edit_distance`` swapped for scorekit's, both the module's name and
``nx.graph_edit_distance`` (a counter proves every run really called scorekit). Of that module's
``TestSimilarity`` tests that call ``graph_edit_distance``:

* run unchanged and pass: the :data:`NETWORKX_TESTS` below;
* ``test_graph_edit_distance_roots_and_timeout`` runs unchanged and passes up to the one documented
  difference (a tiny positive ``timeout`` does not cut a finished search short, so scorekit returns
  8 where networkx returns ``None``); the test asserts that it stops exactly there and checks that
  line's value and the test's remaining line (``timeout=0`` raises ``NetworkXError``) itself;
* not run, each with its own check here: ``test_multigraph``, ``test_multidigraph`` and
  ``test_one_node_two_loops_and_empty_graph`` (multigraphs are not supported: ``ValueError``),
  ``test_symmetry_with_custom_matching`` (networkx lets a self-loop substitute an ordinary edge,
  networkx issues #5400/#8188; scorekit keeps the true distance, 2);
* not run: ``test_optimal_edit_paths`` and ``test_optimize_graph_edit_distance``, which test
  networkx-only functions (scorekit has no ``optimal_edit_paths``/``optimize_graph_edit_distance``).

Also: unknown ``roots`` and a non-positive ``timeout`` raise networkx's exceptions (which are
scorekit ``InvalidValueError`` too, and plain ``InvalidValueError`` without networkx); costs that are
negative, NaN, infinite, too large or not numbers, cost arguments that are not callable and match
functions without a truth value are named errors, in ``graph_edit_distance``, its batch form and
``TypedGraphMetric``.
"""

from __future__ import annotations

import math
import subprocess
import sys
import traceback

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms.tests import test_similarity as nx_tests

from scorekit import graphs as sk_graphs
from scorekit.base import EdgeType, FieldSpec, GraphGrammar, NodeType
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.graphs import graph_edit_distance, graph_edit_distance_batch
from scorekit.metrics.graphs import TypedEdge, TypedGraph, TypedGraphMetric, TypedNode

NETWORKX_TESTS = [
    "test_graph_edit_distance", "test_graph_edit_distance_node_match",
    "test_graph_edit_distance_edge_match", "test_graph_edit_distance_node_cost",
    "test_graph_edit_distance_edge_cost", "test_graph_edit_distance_upper_bound",
    "test_selfloops", "test_digraph", "testCopy", "testSame", "testOneEdgeLabelDiff",
    "testOneNodeLabelDiff", "testOneExtraNode", "testOneExtraEdge", "testOneExtraNodeAndEdge",
    "testGraph1", "testGraph2", "testGraph3", "testGraph4", "testGraph4_a", "testGraph4_b",
    "test_one_node_one_loop_and_empty_graph", "test_two_directed_loops",
]


@pytest.fixture
def scorekit_ged(monkeypatch):
    """networkx's test module with scorekit's ``graph_edit_distance``; yields the call counter."""
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return graph_edit_distance(*args, **kwargs)

    monkeypatch.setattr(nx_tests, "graph_edit_distance", counted)
    monkeypatch.setattr(nx, "graph_edit_distance", counted)
    nx_tests.TestSimilarity.setup_class()
    return calls


@pytest.mark.parametrize("name", NETWORKX_TESTS)
def test_networkx_ged_suite(backend, scorekit_ged, name):
    getattr(nx_tests.TestSimilarity(), name)()
    assert scorekit_ged, "the networkx test did not call scorekit"


def test_networkx_roots_and_timeout_up_to_the_documented_difference(backend, scorekit_ged):
    with pytest.raises(AssertionError) as info:
        nx_tests.TestSimilarity().test_graph_edit_distance_roots_and_timeout()
    failed_line = traceback.extract_tb(info.value.__traceback__)[-1].line
    assert failed_line == "assert graph_edit_distance(G0, G1, roots=(0, 1), timeout=0.0001) is None"
    assert len(scorekit_ged) == 10  # every earlier line ran through scorekit
    g0 = nx.star_graph(5)
    assert graph_edit_distance(g0, g0.copy(), roots=(0, 1), timeout=0.0001) == 8
    with pytest.raises(nx.NetworkXError):
        graph_edit_distance(g0, g0.copy(), timeout=0)


def test_networkx_tests_not_run_diverge_as_documented(backend):
    multi = nx.MultiGraph([("A", "B"), ("B", "C")])
    with pytest.raises(ValueError, match="multigraph"):
        graph_edit_distance(multi, multi)
    g2, g3 = nx.Graph([("A", "B")]), nx.Graph()
    g3.add_nodes_from(("B", "A"))
    g3.add_edge("A", "A")
    for g in (g2, g3):
        for n in g:
            g.nodes[n]["attr"] = n
        for e in g.edges:
            g.edges[e]["attr"] = e
    same = lambda x, y: x == y  # noqa: E731
    # A and B keep their places; (A, B) is deleted and the loop (A, A) inserted: 2 (networkx: 1)
    assert graph_edit_distance(g2, g3, node_match=same, edge_match=same) == 2
    assert graph_edit_distance(g3, g2, node_match=same, edge_match=same) == 2


@pytest.mark.parametrize("roots", [(9, 3), (3, 9), (9, 9)])
def test_unknown_roots_raise_node_not_found(backend, roots):
    g = nx.star_graph(5)
    with pytest.raises(nx.NodeNotFound) as info:
        graph_edit_distance(g, g.copy(), roots=roots)
    assert isinstance(info.value, InvalidValueError) and info.value.field == "roots"
    for bad in ([2], [2, 3, 4]):
        with pytest.raises(InvalidValueError, match="roots must be a pair"):
            graph_edit_distance(g, g.copy(), roots=bad)


@pytest.mark.parametrize("timeout", [0, 0.0, -1, -math.inf, math.nan])
def test_non_positive_timeout_raises_networkx_error(backend, timeout):
    g = nx.path_graph(3)
    with pytest.raises(nx.NetworkXError) as info:
        graph_edit_distance(g, g, timeout=timeout)
    assert isinstance(info.value, InvalidValueError) and info.value.field == "timeout"
    with pytest.raises(InvalidTypeError, match="timeout"):
        graph_edit_distance(g, g, timeout="5")
    assert graph_edit_distance(g, nx.path_graph(4), timeout=1e-9) == 2.0


def test_networkx_errors_without_networkx(monkeypatch):
    """Without networkx the same failures are plain scorekit InvalidValueErrors, and importing
    scorekit.graphs never imports networkx."""
    g = nx.path_graph(3)
    monkeypatch.setitem(sys.modules, "networkx", None)
    with pytest.raises(InvalidValueError, match="roots") as info:
        graph_edit_distance(g, g, roots=(7, 0))
    assert type(info.value) is InvalidValueError
    with pytest.raises(InvalidValueError, match="timeout") as info:
        graph_edit_distance(g, g, timeout=0)
    assert type(info.value) is InvalidValueError
    code = "import sys, scorekit.graphs, scorekit.metrics.graphs; print('networkx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


BAD_COSTS = [(-1.0, InvalidValueError), (math.nan, InvalidValueError), (math.inf, InvalidValueError),
             (10**400, InvalidValueError), ("1.5", InvalidTypeError), (None, InvalidTypeError)]
COST_FUNCTIONS = {
    "node_subst_cost": lambda c: (lambda a, b: c), "node_del_cost": lambda c: (lambda a: c),
    "node_ins_cost": lambda c: (lambda a: c), "edge_subst_cost": lambda c: (lambda a, b: c),
    "edge_del_cost": lambda c: (lambda a: c), "edge_ins_cost": lambda c: (lambda a: c),
}


@pytest.mark.parametrize("name", COST_FUNCTIONS)
@pytest.mark.parametrize("cost, error", BAD_COSTS)
def test_bad_costs_are_named_errors(backend, name, cost, error):
    g1, g2 = nx.path_graph(2), nx.path_graph(3)
    kwargs = {name: COST_FUNCTIONS[name](cost)}
    with pytest.raises(error, match=name):
        graph_edit_distance(g1, g2, **kwargs)
    with pytest.raises(error, match=name):
        graph_edit_distance_batch([(g1, g2)], **kwargs)


@pytest.mark.parametrize("name", [*COST_FUNCTIONS, "node_match", "edge_match"])
def test_non_callable_costs_are_type_errors(backend, name):
    g = nx.path_graph(2)
    for bad in (3, "cost", [1]):
        with pytest.raises(InvalidTypeError, match=f"{name} must be a callable"):
            graph_edit_distance(g, g, **{name: bad})
        with pytest.raises(InvalidTypeError, match=f"{name} must be a callable"):
            graph_edit_distance_batch([(g, g)], **{name: bad})


def test_valid_costs_still_score(backend):
    g1, g2 = nx.path_graph(2), nx.path_graph(3)
    assert graph_edit_distance(g1, g2, node_ins_cost=lambda a: 0, edge_ins_cost=lambda a: 2.5) == 2.5
    assert graph_edit_distance(g1, g2, node_ins_cost=lambda a: 1e300) == 1e300 + 1


def _typed(amount: str) -> TypedGraph:
    return TypedGraph([TypedNode("d", "donation", {"amount": amount}), TypedNode("p", "person")],
                      [TypedEdge("p", "d", "gave")])


def _grammar(node=1.0, field=1.0, edge=1.0) -> GraphGrammar:
    return GraphGrammar(node_types={"donation": NodeType("donation", {"amount": FieldSpec("amount", importance=field)},
                                                         importance=node),
                                    "person": NodeType("person")},
                        edge_types={"gave": EdgeType("gave", "person", "donation", importance=edge)})


@pytest.mark.parametrize("cost, error", [(c, e) for c, e in BAD_COSTS if c is not None])
def test_typed_graph_metric_rejects_bad_weights(backend, cost, error):
    pred, gold = _typed("1"), _typed("2")
    # the grammar converts its importances with float() (so "1.5" reads as 1.5): a non-number there
    in_grammar = "heavy" if isinstance(cost, str) else cost
    for kind in ("node", "field", "edge"):
        with pytest.raises(error, match=f"cost weight of .*{kind}"):
            TypedGraphMetric(grammar=_grammar(**{kind: in_grammar}))(pred, gold)
    with pytest.raises(error, match="cost weight of"):
        TypedGraphMetric(weights=lambda grammar, ref: cost)(pred, gold)
    assert TypedGraphMetric(grammar=_grammar(field=7.0))(pred, gold).detail["raw_distance"] == 7.0


def test_networkx_error_classes_are_reused():
    g = nx.path_graph(2)
    kinds = set()
    for _ in range(3):
        try:
            graph_edit_distance(g, g, roots=(5, 0))
        except nx.NodeNotFound as e:
            kinds.add(type(e))
    assert len(kinds) == 1 and sk_graphs._NX_ERRORS["NodeNotFound"] in kinds


@pytest.mark.parametrize("name", ["node_match", "edge_match"])
def test_match_without_a_truth_value_is_a_named_error(backend, name):
    g = nx.path_graph(3)
    with pytest.raises(InvalidTypeError, match=f"{name} must return a truth value"):
        graph_edit_distance(g, g, **{name: lambda a, b: np.array([True, False])})
    assert graph_edit_distance(g, g, **{name: lambda a, b: np.bool_(True)}) == 0.0


def test_costs_summing_past_the_guard_are_named_errors_not_hangs(backend):
    """Found by tests/test_fuzz_structures.py: deleting a 3-node path with node and edge costs of
    1e308 made the search loop forever on inf - inf. The check runs before either kernel; the
    call runs in a child process so that a regression fails instead of hanging the suite."""
    code = (
        "import networkx as nx\n"
        "from scorekit._kernels import use_backend\n"
        "from scorekit.graphs import graph_edit_distance\n"
        "from scorekit.errors import InvalidValueError\n"
        f"with use_backend({backend!r}):\n"
        "    try:\n"
        "        graph_edit_distance(nx.path_graph(3), nx.Graph(), node_del_cost=lambda n: 1e308,\n"
        "                            edge_del_cost=lambda e: 1e308)\n"
        "    except InvalidValueError as e:\n"
        "        print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("the costs sum to inf, above the graph edit distance's guard of 1e+305"), out
    big = graph_edit_distance(nx.path_graph(3), nx.Graph(), node_del_cost=lambda n: 1e299,
                              edge_del_cost=lambda e: 1e299)
    assert big == 5e299
