"""``scorekit.metrics.graphs.TypedGraphMetric`` on both backends.

* ek's documented example and reference vectors, verbatim.
* networkx as the oracle for the cost model (docs/decisions.md#typed-graph-costs): random typed graphs converted with
  ``TypedGraph.to_networkx`` and scored by ``networkx.graph_edit_distance`` with the model's cost
  callables, written here from that model, must give the same ``raw_distance``.
* Guards, bad input, the deterministic budget, and dispatch through ``score``/``evaluate``.
"""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from scorekit import evaluate, score
from scorekit.base import EdgeType, FieldSpec, GraphGrammar, NodeType
from scorekit.canonicalize import resolve_canonicalizer
from scorekit.metrics.graphs import DEFAULT_MAX_NODES, TypedEdge, TypedGraph, TypedGraphMetric, TypedNode
from ged_cases import ORACLE_GRAMMAR, model_costs, mutate, random_typed_graph


G = GraphGrammar(
    node_types={
        "donation": NodeType("donation", fields={
            "amount": FieldSpec("amount", "number", importance=10.0),
            "city": FieldSpec("city", "string", importance=1.0)}, importance=2.0),
        "donor": NodeType("donor", fields={"name": FieldSpec("name", importance=1.0)}),
    },
    edge_types={"made_by": EdgeType("made_by", "donation", "donor", importance=3.0),
                "funds": EdgeType("funds", "donor", "donation", importance=5.0)},
)
GOLD0 = TypedGraph([TypedNode("d1", "donation", {"amount": "100", "city": "Paris"})])
AMOUNT_WRONG = TypedGraph([TypedNode("d1", "donation", {"amount": "900", "city": "Paris"})])
CITY_WRONG = TypedGraph([TypedNode("d1", "donation", {"amount": "100", "city": "Lyon"})])


def donation_graph(amount="100", city="Paris", name="Ann", edge=("d1", "p1", "made_by"), ids=("d1", "p1"),
                   extra_fields=None, extra_nodes=()):
    fields = {"amount": amount, "city": city}
    if city is None:
        del fields["city"]
    fields.update(extra_fields or {})
    nodes = [TypedNode(ids[0], "donation", fields), TypedNode(ids[1], "donor", {"name": name}), *extra_nodes]
    edges = [TypedEdge(*edge)] if edge else []
    return TypedGraph(nodes, edges)


def test_doctest_vector(backend):
    g = GraphGrammar(node_types={"donation": NodeType("donation", fields={
        "amount": FieldSpec("amount", "number", importance=10.0),
        "city": FieldSpec("city", "string", importance=1.0)})})
    m = TypedGraphMetric(grammar=g)
    assert m(AMOUNT_WRONG, GOLD0).detail["raw_distance"] == 10.0
    assert m(CITY_WRONG, GOLD0).detail["raw_distance"] == 1.0


def test_single_node_vectors(backend):
    m = TypedGraphMetric(grammar=G)
    s = score(GOLD0, GOLD0)
    assert (s.value, s.metric, s.detail["similarity"], s.detail["higher_is_better"]) == (0.0, "graph", 1.0, False)
    s = m(AMOUNT_WRONG, GOLD0)
    assert (s.detail["raw_distance"], s.detail["denom"]) == (10.0, 26.0)
    assert s.value == pytest.approx(10 / 26) and s.detail["exact"] is True
    assert m(CITY_WRONG, GOLD0).detail["raw_distance"] == 1.0
    s = m(TypedGraph(), GOLD0)
    assert (s.detail["raw_distance"], s.detail["denom"], s.value) == (13.0, 13.0, 1.0)
    donor = TypedGraph([TypedNode("x", "donor", {"name": "Acme"})])
    assert m(donor, GOLD0).detail["raw_distance"] == 15.0
    assert TypedGraphMetric()(AMOUNT_WRONG, GOLD0).detail["raw_distance"] == 1.0
    assert TypedGraphMetric(weights=lambda g, r: 5.0)(AMOUNT_WRONG, GOLD0).detail["raw_distance"] == 5.0
    with_edge = TypedGraph([TypedNode("d1", "donation", {"amount": "100"}), TypedNode("p1", "donor")],
                           [TypedEdge("d1", "p1", "made_by")])
    without = TypedGraph(with_edge.nodes)
    assert m(without, with_edge).detail["raw_distance"] == 3.0
    report = evaluate([(GOLD0, GOLD0), (AMOUNT_WRONG, GOLD0)], metric="graph", grammar=G)
    assert report.aggregate == pytest.approx(10 / 52)


@pytest.mark.parametrize("pred_kwargs, raw, denom", [
    ({"ids": ("X", "Y"), "edge": ("X", "Y", "made_by")}, 0.0, 36.0),
    ({"edge": ("d1", "p1", "funds")}, 5.0, 38.0),
    ({"edge": ("p1", "d1", "made_by")}, 6.0, 36.0),
    ({"edge": None}, 3.0, 33.0),
    ({"city": None}, 1.0, 35.0),
    ({"extra_fields": {"zip": "75001"}}, 1.0, 37.0),
    ({"amount": 100}, 10.0, 36.0),
    ({"extra_nodes": (TypedNode("p2", "donor", {"name": "Bob"}),)}, 2.0, 38.0),
])
def test_two_node_vectors(backend, pred_kwargs, raw, denom):
    s = TypedGraphMetric(grammar=G)(donation_graph(**pred_kwargs), donation_graph())
    assert (s.detail["raw_distance"], s.detail["denom"]) == (raw, denom)
    assert s.value == pytest.approx(raw / denom)
    assert s.detail["similarity"] == pytest.approx(1 - raw / denom)
    assert s.detail["exact"] is True and s.detail["timeout_s"] == 10.0


def test_empty_graphs_and_aggregate(backend):
    m = TypedGraphMetric(grammar=G)
    s = m(TypedGraph(), donation_graph())
    assert (s.detail["raw_distance"], s.detail["denom"], s.value) == (18.0, 18.0, 1.0)
    empty = m(TypedGraph(), TypedGraph())
    assert empty.value == 0.0 and empty.detail == {
        "raw_distance": 0.0, "denom": 0.0, "similarity": 1.0, "higher_is_better": False, "exact": True}
    gold = donation_graph()
    report = evaluate([(gold, gold), (donation_graph(edge=None), gold)], metric="graph", grammar=G)
    assert report.aggregate == pytest.approx(3 / 69)
    assert TypedGraphMetric().aggregate([]) == 0.0


def test_normalizers(backend):
    rec = GraphGrammar(node_types={"rec": NodeType("rec", fields={"name": FieldSpec("name", normalizer="lower")})})
    a = TypedGraph([TypedNode("r", "rec", {"name": "ACME"})])
    b = TypedGraph([TypedNode("r", "rec", {"name": "acme"})])
    assert TypedGraphMetric(grammar=rec)(a, b).detail["raw_distance"] == 0.0
    lower = resolve_canonicalizer("lower")
    assert TypedGraphMetric(canonicalizer=lower)(a, b).detail["raw_distance"] == 0.0
    assert TypedGraphMetric()(a, b).detail["raw_distance"] > 0
    assert score(a, b, normalize="lower").detail["raw_distance"] == 0.0


def test_guards_and_bad_input(backend):
    five = TypedGraph([TypedNode(i, "donor") for i in range(5)])
    with pytest.raises(ValueError, match="max_nodes"):
        TypedGraphMetric(max_nodes=3)(five, five)
    assert TypedGraphMetric(max_nodes=None)(five, five).detail["exact"] is True
    assert DEFAULT_MAX_NODES == 60
    with pytest.raises(ValueError, match="duplicate node id"):
        TypedGraphMetric()(TypedGraph([TypedNode(1, "a"), TypedNode(1, "b")]), five)
    with pytest.raises(ValueError, match="unknown node id"):
        TypedGraphMetric()(TypedGraph([TypedNode(1, "a")], [TypedEdge(1, 2, "e")]), five)
    with pytest.raises(ValueError, match="non-negative"):
        TypedGraphMetric(weights=lambda g, r: -1.0)(five, five)
    with pytest.raises(ValueError, match="non-negative"):
        TypedGraphMetric(weights=lambda g, r: float("nan"))(five, five)
    with pytest.raises(TypeError, match="gold"):
        TypedGraphMetric()(five, {"not": "a graph"})
    with pytest.raises(ValueError, match="budget"):
        TypedGraphMetric(budget=-1)
    with pytest.raises(ValueError, match="timeout"):
        TypedGraphMetric(timeout=0)


def test_duplicate_edges_collapse_last_type_wins(backend):
    nodes = [TypedNode("a", "x"), TypedNode("b", "x")]
    twice = TypedGraph(nodes, [TypedEdge("a", "b", "e"), TypedEdge("a", "b", "f")])
    once = TypedGraph(nodes, [TypedEdge("a", "b", "f")])
    assert TypedGraphMetric()(twice, once).detail["raw_distance"] == 0.0
    assert set(twice.to_networkx().edges(data="type")) == {("a", "b", "f")}


# ---- networkx as the oracle of the cost model ---------------------------------------------

def brute_force(g1: nx.DiGraph, g2: nx.DiGraph, costs: dict) -> float:
    """Minimum over every partial injective node map of the induced edit cost."""
    nodes1, nodes2 = list(g1), list(g2)
    best = float("inf")
    for images in itertools.product([None, *nodes2], repeat=len(nodes1)):
        used = [v for v in images if v is not None]
        if len(used) != len(set(used)):
            continue
        f = dict(zip(nodes1, images))
        total = sum(costs["node_del_cost"](g1.nodes[u]) if v is None
                    else costs["node_subst_cost"](g1.nodes[u], g2.nodes[v]) for u, v in f.items())
        total += sum(costs["node_ins_cost"](g2.nodes[v]) for v in nodes2 if v not in used)
        hit = set()
        for a, b, attrs in g1.edges(data=True):
            image = (f[a], f[b])
            if None not in image and g2.has_edge(*image):
                hit.add(image)
                total += min(costs["edge_subst_cost"](attrs, g2.edges[image]),
                             costs["edge_del_cost"](attrs) + costs["edge_ins_cost"](g2.edges[image]))
            else:
                total += costs["edge_del_cost"](attrs)
        total += sum(costs["edge_ins_cost"](attrs) for a, b, attrs in g2.edges(data=True) if (a, b) not in hit)
        best = min(best, total)
    return best


@pytest.fixture(scope="module")
def typed_oracle_cases():
    """(pred, gold, weights, brute-force raw distance, networkx raw distance)."""
    rng = random.Random(77)
    cases = []
    for max_n, count in ((3, 150), (4, 120), (5, 40)):
        for k in range(count):
            gold = random_typed_graph(rng, rng.randint(0, max_n))
            pred = mutate(rng, gold) if k % 3 else random_typed_graph(rng, rng.randint(0, max_n))
            weights = (lambda g, r: 1.0 + len(r.name) % 3) if k % 5 == 0 else None
            costs = model_costs(ORACLE_GRAMMAR, weights)
            g1, g2 = pred.to_networkx(), gold.to_networkx()
            cases.append((pred, gold, weights, brute_force(g1, g2, costs), nx.graph_edit_distance(g1, g2, **costs)))
    return cases


def test_raw_distance_is_the_exact_minimum_of_the_cost_model(backend, typed_oracle_cases):
    bad = []
    for pred, gold, weights, want, _ in typed_oracle_cases:
        s = TypedGraphMetric(grammar=ORACLE_GRAMMAR, weights=weights)(pred, gold)
        if s.detail["raw_distance"] != want or not s.detail["exact"]:
            bad.append((s.detail["raw_distance"], want))
    assert not bad, f"{len(bad)} of {len(typed_oracle_cases)} differ: {bad[:5]}"


def test_raw_distance_agrees_with_networkx_up_to_its_tie_bug(typed_oracle_cases):
    # A node of another type substitutes at exactly its deletion plus insertion cost; networkx
    # then sometimes misses the edit path that substitutes (keeping the node's edges matched) and
    # reports more (networkx issue #8099). It never reports less than the true minimum.
    assert all(exact <= nx_value for *_, exact, nx_value in typed_oracle_cases)
    agree = sum(exact == nx_value for *_, exact, nx_value in typed_oracle_cases)
    assert agree >= 0.9 * len(typed_oracle_cases)


def test_budget_is_deterministic_and_bracketing(backend):
    rng = random.Random(5)
    gold = random_typed_graph(rng, 12)
    pred = random_typed_graph(rng, 12)
    exact = TypedGraphMetric(grammar=ORACLE_GRAMMAR, max_nodes=None, budget=None)(pred, gold)
    runs = [TypedGraphMetric(grammar=ORACLE_GRAMMAR, budget=3)(pred, gold) for _ in range(2)]
    assert runs[0].detail == runs[1].detail
    d = runs[0].detail
    assert d["exact"] is False and d["expanded"] == 3
    assert d["lower_bound"] <= exact.detail["raw_distance"] <= d["raw_distance"] <= d["denom"]
    assert exact.detail["exact"] is True


def test_score_batch_equals_single_calls_for_any_thread_count(backend, typed_oracle_cases):
    pairs = [(pred, gold) for pred, gold, weights, *_ in typed_oracle_cases if weights is None][:120]
    pairs.append((TypedGraph(), TypedGraph()))  # denom 0: answered without the kernel
    m = TypedGraphMetric(grammar=ORACLE_GRAMMAR)
    singles = [m(p, g) for p, g in pairs]
    for threads in (1, 2):
        batch = m.score_batch(pairs, threads=threads)
        assert [(s.value, s.detail) for s in batch] == [(s.value, s.detail) for s in singles]
    with pytest.raises(ValueError, match="pairs"):
        m.score_batch([GOLD0])


def test_module_doctests_pass(backend):
    import doctest

    import scorekit.graphs
    import scorekit.metrics.graphs

    for module in (scorekit.graphs, scorekit.metrics.graphs):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0
