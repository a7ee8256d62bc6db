"""The GED kernel contract (``scorekit._kernels.ged``) on both backends.

* An independent brute force over every partial injective node map is the oracle for random
  problems with self-loops, several edge classes and arbitrary (dyadic) cost tables.
* The two backends return identical results, budget-limited runs included (same distance,
  bound, flag, expansion count and edit path).
* Properties: zero iff isomorphic with equal labels (networkx's isomorphism test as oracle),
  symmetry under symmetric costs, the triangle inequality, and lower bound <= exact <= reported
  distance when the budget runs out.
* Bad input raises ValueError/TypeError naming the argument.
"""

from __future__ import annotations

import itertools
import random

import networkx as nx
import numpy as np
import pytest

from scorekit._kernels import ged, use_backend
from scorekit.graphs import graph_edit_distance, graph_edit_distance_batch
from ged_cases import COSTS, label_match, perturb, random_graph


def random_problem(rng: random.Random, max_n: int, directed: bool):
    n1, n2 = rng.randint(0, max_n), rng.randint(0, max_n)
    c1, c2 = rng.randint(1, 3), rng.randint(1, 3)
    dyadic = lambda *shape: rng.choices([0.0, 0.5, 1.0, 1.5, 2.0, 3.0], k=int(np.prod(shape)))  # noqa: E731

    def edges(n, classes):
        out = []
        for a in range(n):
            for b in range(n) if directed else range(a, n):
                if rng.random() < 0.35:
                    out.append((a, b, rng.randrange(classes)))
        return np.array(out, dtype=np.int64).reshape(-1, 3)

    return (
        np.array(dyadic(n1, n2)).reshape(n1, n2), np.array(dyadic(n1)), np.array(dyadic(n2)),
        edges(n1, c1), edges(n2, c2),
        np.array(dyadic(c1, c2)).reshape(c1, c2), np.array(dyadic(c1)), np.array(dyadic(c2)),
        directed,
    )


def path_cost(problem, mapping) -> float:
    """Cost of one edit path straight from the model's definition."""
    node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins, directed = problem
    cost = 0.0
    for u, v in enumerate(mapping):
        cost += node_del[u] if v < 0 else node_sub[u, v]
    cost += sum(node_ins[v] for v in range(len(node_ins)) if v not in mapping)
    key = (lambda a, b: (a, b)) if directed else (lambda a, b: frozenset((a, b)))
    by_pair2 = {key(s, d): c for s, d, c in edges2.tolist()}
    used2 = set()
    for s, d, c in edges1.tolist():
        fs, fd = mapping[s], mapping[d]
        k = key(fs, fd)
        if fs >= 0 and fd >= 0 and k in by_pair2:
            c2 = by_pair2[k]
            used2.add(k)
            cost += min(edge_sub[c, c2], edge_del[c] + edge_ins[c2])
        else:
            cost += edge_del[c]
    cost += sum(edge_ins[c] for k, c in by_pair2.items() if k not in used2)
    return cost


def brute_force(problem) -> float:
    n1, n2 = len(problem[1]), len(problem[2])
    best = float("inf")
    for images in itertools.product(range(-1, n2), repeat=n1):
        mapped = [v for v in images if v >= 0]
        if len(mapped) == len(set(mapped)):
            best = min(best, path_cost(problem, images))
    return best


def test_equals_brute_force_with_self_loops_and_classes(backend):
    rng = random.Random(11)
    for k in range(160):
        problem = random_problem(rng, 4, directed=k % 2 == 0)
        result = ged.graph_edit_distance_pair(*problem)
        want = brute_force(problem)
        assert result.exact and result.distance == want == result.lower_bound
        assert path_cost(problem, result.mapping) == want


def test_backends_return_identical_results():
    rng = random.Random(5)
    for k in range(120):
        problem = random_problem(rng, 7, directed=k % 2 == 1)
        for budget in (None, 0, 1, 4):
            with use_backend("rust"):
                r = ged.graph_edit_distance_pair(*problem, budget=budget)
            with use_backend("numba"):
                n = ged.graph_edit_distance_pair(*problem, budget=budget)
            assert (r.distance, r.lower_bound, r.exact, r.expanded) == (n.distance, n.lower_bound, n.exact, n.expanded)
            np.testing.assert_array_equal(r.mapping, n.mapping)


def test_budget_brackets_the_exact_distance(backend):
    rng = random.Random(8)
    ran_out = 0
    for k in range(80):
        problem = random_problem(rng, 7, directed=k % 2 == 0)
        exact = ged.graph_edit_distance_pair(*problem)
        for budget in (0, 2):
            r = ged.graph_edit_distance_pair(*problem, budget=budget)
            assert r.expanded <= budget
            assert r.lower_bound <= exact.distance <= r.distance
            assert path_cost(problem, r.mapping) == r.distance
            if r.exact:
                assert r.distance == exact.distance
            else:
                ran_out += 1
    assert ran_out > 20


def test_zero_iff_isomorphic_with_equal_labels(backend):
    rng = random.Random(3)
    zeros = 0
    for k in range(150):
        directed = k % 2 == 0
        g1 = random_graph(rng, rng.randint(1, 6), directed, 0.4, loops=True)
        # Relabel node ids (ids never matter) and sometimes perturb.
        g2 = nx.relabel_nodes(g1, {u: f"x{u}" for u in g1})
        if k % 3:
            g2 = perturb(rng, g2, 1)
        d = graph_edit_distance(g1, g2, **COSTS["match"])
        iso = nx.is_isomorphic(g1, g2, node_match=label_match, edge_match=label_match)
        assert (d == 0) == iso
        zeros += d == 0
    assert 30 < zeros < 150


def test_symmetric_costs_give_symmetric_distances_and_triangle_inequality(backend):
    rng = random.Random(4)
    for k in range(60):
        directed = k % 2 == 0
        a = random_graph(rng, rng.randint(0, 5), directed, 0.4, loops=True)
        b = perturb(rng, a, 2)
        c = perturb(rng, b, 2)
        pairs = [(a, b), (b, a), (b, c), (a, c)]
        d = graph_edit_distance_batch(pairs, **COSTS["match"]).distance
        assert d[0] == d[1]
        assert d[3] <= d[0] + d[2]


def test_kernel_rejects_bad_input(backend):
    problem = [np.ones((2, 2)), np.ones(2), np.ones(2), np.array([[0, 1, 0]]), np.array([[1, 0, 0]]),
               np.zeros((1, 1)), np.ones(1), np.ones(1), True]
    assert ged.graph_edit_distance_pair(*problem).distance == 2.0

    def bad(index, value, match):
        p = list(problem)
        p[index] = value
        with pytest.raises(ValueError, match=match):
            ged.graph_edit_distance_pair(*p)

    bad(1, -np.ones(len(problem[1])), "node_del")
    bad(0, np.full(problem[0].shape, np.nan), "node_sub")
    bad(0, np.zeros((9, 9)), "node_sub")
    bad(3, np.array([[0, 99, 0]]), "edges1")
    bad(3, np.array([[0, 1, 99]]), "class")
    bad(3, np.array([[0, 1, 0], [0, 1, 0]]), "duplicates")
    bad(3, np.array([[0, -1, 0]]), "edges1")
    bad(3, np.array([[0, 1]]), "edges1")
    with pytest.raises(ValueError, match="budget"):
        ged.graph_edit_distance_pair(*problem, budget=-3)
    with pytest.raises(ValueError, match="problem 1"):
        ged.graph_edit_distance_batch([problem, [-problem[0]] + problem[1:]])
    with pytest.raises(ValueError, match="9 parts"):
        ged.graph_edit_distance_batch([problem[:3]])
