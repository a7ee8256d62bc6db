"""``scorekit.graphs.graph_edit_distance`` against networkx as the oracle, on both backends.

* Random labelled graphs of up to 7 nodes, directed and undirected, under structural, 0/1-match
  and custom (asymmetric) costs: exact equality with ``networkx.graph_edit_distance``. networkx is
  slow, so its values are computed once per session and shared by the two backends, with many
  small graphs and fewer large ones.
* The worked values of networkx's own similarity tests, re-derived here.
* Self-loops: networkx lets a self-loop substitute an ordinary edge (networkx issues #5400 and
  #8188), which undercounts; scorekit keeps the true distance. Graphs with self-loops are checked
  against an independent brute force instead (``test_ged_kernel.py``), and the divergence is pinned.
"""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest

from scorekit.graphs import graph_edit_distance, graph_edit_distance_batch
from ged_cases import COSTS, perturb, random_graph


#: (max nodes, number of pairs): networkx takes milliseconds below 6 nodes, up to a second at 7.
SIZES = ((3, 700), (4, 700), (5, 500), (6, 200), (7, 60))


@pytest.fixture(scope="module")
def oracle_cases():
    rng = random.Random(20261130)
    cases = []
    for max_n, count in SIZES:
        for k in range(count):
            directed = k % 2 == 0
            cost = list(COSTS)[k % 3]
            g1 = random_graph(rng, rng.randint(0, max_n), directed, rng.uniform(0.15, 0.6))
            if k % 4:  # most pairs are near-duplicates, as predictions and gold are
                g2 = perturb(rng, g1, rng.randint(0, 4))
            else:
                g2 = random_graph(rng, rng.randint(0, max_n), directed, rng.uniform(0.15, 0.6))
            cases.append((g1, g2, cost, nx.graph_edit_distance(g1, g2, **COSTS[cost])))
    return cases


def test_random_graphs_equal_networkx(backend, oracle_cases):
    mismatches = []
    for g1, g2, cost, want in oracle_cases:
        got = graph_edit_distance(g1, g2, **COSTS[cost])
        if got != want:
            mismatches.append((cost, g1.is_directed(), got, want))
    assert not mismatches, f"{len(mismatches)} of {len(oracle_cases)} differ, e.g. {mismatches[:5]}"
    # The oracle set really covers what it claims to.
    assert sum(g1.is_directed() for g1, *_ in oracle_cases) * 2 == len(oracle_cases)
    assert max(len(g1) for g1, *_ in oracle_cases) == 7


def test_batch_equals_networkx_and_is_thread_independent(backend, oracle_cases):
    for cost in COSTS:
        subset = [(g1, g2, want) for g1, g2, c, want in oracle_cases if c == cost][:150]
        pairs = [(g1, g2) for g1, g2, _ in subset]
        one = graph_edit_distance_batch(pairs, **COSTS[cost], threads=1)
        two = graph_edit_distance_batch(pairs, **COSTS[cost], threads=2)
        np.testing.assert_array_equal(one.distance, [w for *_, w in subset])
        assert one.exact.all()
        np.testing.assert_array_equal(one.lower_bound, one.distance)
        for a, b in zip(one, two):
            np.testing.assert_array_equal(a, b)


def _colour_nodes(g, rule):
    for n, attr in g.nodes.items():
        attr["color"] = rule(n)
    return g


def _colour_edges(g, rule):
    for e, attr in g.edges.items():
        attr["color"] = rule(min(e))
    return g


def test_networkx_worked_values_unlabelled(backend):
    graphs = [nx.Graph(), nx.path_graph(6), nx.cycle_graph(6), nx.wheel_graph(7)]
    # Deleting a graph costs its nodes plus its edges; the others differ by a few edges.
    want = [[0, 11, 12, 19], [11, 0, 1, 8], [12, 1, 0, 7], [19, 8, 7, 0]]
    for i, a in enumerate(graphs):
        for j, b in enumerate(graphs):
            assert graph_edit_distance(a, b) == want[i][j]


def test_networkx_worked_values_labelled(backend):
    same = lambda a, b: a["color"] == b["color"]  # noqa: E731
    g1 = _colour_nodes(nx.cycle_graph(5), lambda n: "red" if n % 2 == 0 else "blue")
    g2 = _colour_nodes(nx.cycle_graph(5), lambda n: "red" if n % 2 == 1 else "blue")
    assert graph_edit_distance(g1, g2) == 0
    assert graph_edit_distance(g1, g2, node_match=same) == 1

    e1 = _colour_edges(nx.path_graph(6), lambda m: "red" if m % 2 == 0 else "blue")
    e2 = _colour_edges(nx.path_graph(6), lambda m: "red" if m // 3 == 0 else "blue")
    assert graph_edit_distance(e1, e2) == 0
    assert graph_edit_distance(e1, e2, edge_match=same) == 2

    p1 = _colour_nodes(nx.path_graph(6), lambda n: "red" if n % 2 == 0 else "blue")
    p2 = _colour_nodes(nx.path_graph(6), lambda n: "red" if n % 2 == 1 else "blue")
    node_costs = dict(
        node_subst_cost=lambda a, b: 1 if a["color"] == b["color"] else 10,
        node_del_cost=lambda a: 20 if a["color"] == "blue" else 50,
        node_ins_cost=lambda a: 40 if a["color"] == "blue" else 100,
    )
    assert graph_edit_distance(p1, p2, **node_costs) == 6

    edge_costs = dict(
        edge_subst_cost=lambda a, b: 0.01 if a["color"] == b["color"] else 0.1,
        edge_del_cost=lambda a: 0.2 if a["color"] == "blue" else 0.5,
        edge_ins_cost=lambda a: 0.4 if a["color"] == "blue" else 1.0,
    )
    # Decimal costs: the sum is 0.23 up to the order of floating-point additions.
    assert graph_edit_distance(e1, e2, **edge_costs) == pytest.approx(0.23, abs=1e-12)
    assert graph_edit_distance(e1, e2, **edge_costs) == pytest.approx(
        nx.graph_edit_distance(e1, e2, **edge_costs), abs=1e-12)


def test_networkx_worked_values_bounds_roots_digraph(backend):
    small, large = nx.circular_ladder_graph(2), nx.circular_ladder_graph(6)
    assert graph_edit_distance(small, large) == 22
    assert graph_edit_distance(small, large, upper_bound=24) == 22
    assert graph_edit_distance(small, large, upper_bound=5) is None

    star = nx.star_graph(5)
    assert graph_edit_distance(star, star.copy(), roots=(1, 2)) == 0
    assert graph_edit_distance(star, star.copy(), roots=(0, 1)) == 8
    assert graph_edit_distance(star, star.copy(), roots=(0, 1), timeout=5) == 8

    cycle = nx.DiGraph([("A", "B"), ("B", "C"), ("C", "D"), ("D", "A")])
    turned = nx.DiGraph([("A", "B"), ("B", "C"), ("C", "D"), ("A", "D")])
    diamond = nx.DiGraph([("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")])
    digraphs = [nx.DiGraph(), cycle, turned, diamond]
    want = [[0, 8, 8, 8], [8, 0, 2, 4], [8, 2, 0, 2], [8, 4, 2, 0]]
    for i, a in enumerate(digraphs):
        for j, b in enumerate(digraphs):
            assert graph_edit_distance(a, b) == want[i][j]


def test_self_loop_values_and_the_networkx_divergence(backend):
    g1 = nx.Graph([("A", "A"), ("A", "B")])
    g2 = nx.Graph([("A", "B"), ("B", "B")])
    g3 = nx.Graph([("A", "A"), ("A", "B"), ("B", "B")])
    graphs = [nx.Graph(), g1, g2, g3]
    want = [[0, 4, 4, 5], [4, 0, 0, 1], [4, 0, 0, 1], [5, 1, 1, 0]]  # networkx agrees on these
    for i, a in enumerate(graphs):
        for j, b in enumerate(graphs):
            assert graph_edit_distance(a, b) == want[i][j]
    # Here networkx substitutes the self-loop 22→22 for the edge 3→43 and reports 2; the best
    # edit path that keeps edges as edges costs 4 (one node insertion plus three edge edits).
    a = nx.DiGraph([(3, 43), (58, 43), (43, 3)])
    b = nx.DiGraph([(93, 22), (59, 78), (22, 78), (22, 22)])
    assert graph_edit_distance(a, b) == 4
    assert graph_edit_distance(b, a) == 4


def test_budget_reports_best_path_and_bounds(backend):
    g1 = nx.gnp_random_graph(9, 0.5, seed=3)
    g2 = nx.gnp_random_graph(9, 0.5, seed=4)
    exact = graph_edit_distance_batch([(g1, g2)], budget=None)
    tight = graph_edit_distance_batch([(g1, g2)], budget=2)
    assert exact.exact[0] and not tight.exact[0]
    assert tight.expanded[0] == 2
    assert tight.lower_bound[0] <= exact.distance[0] <= tight.distance[0]
    assert graph_edit_distance(g1, g2, budget=2) == tight.distance[0]


def test_bad_input_raises_clear_errors(backend):
    g = nx.path_graph(3)
    with pytest.raises(ValueError, match="multigraph"):
        graph_edit_distance(nx.MultiGraph(g), g)
    with pytest.raises(ValueError, match="directed"):
        graph_edit_distance(nx.DiGraph(g), g)
    with pytest.raises(TypeError, match="G2"):
        graph_edit_distance(g, [1, 2])
    with pytest.raises(ValueError, match="node_del_cost"):
        graph_edit_distance(g, g, node_del_cost=lambda a: -1)
    with pytest.raises(ValueError, match="edge_subst_cost"):
        graph_edit_distance(g, g, edge_subst_cost=lambda a, b: float("nan"))
    with pytest.raises(ValueError, match="roots"):
        graph_edit_distance(g, g, roots=(0, 9))
    with pytest.raises(ValueError, match="roots"):
        graph_edit_distance(g, g, roots=[2])
    with pytest.raises(ValueError, match="budget"):
        graph_edit_distance(g, g, budget=-1)
    with pytest.raises(TypeError, match="budget"):
        graph_edit_distance(g, g, budget=1.5)
    with pytest.raises(ValueError, match="pairs"):
        graph_edit_distance_batch([g])
