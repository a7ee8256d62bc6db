"""Random labelled graphs, typed graphs and cost functions shared by the GED tests and benchmarks.

Costs are small integers or halves, so every sum is exact in floating point and results can be
compared with ``==`` against networkx.
"""

from __future__ import annotations

import random

import networkx as nx

from scorekit.base import EdgeType, FieldSpec, GraphGrammar, NodeType, TypeRef
from scorekit.metrics.graphs import TypedEdge, TypedGraph, TypedNode

NODE_LABELS = ("C", "N", "O")
EDGE_LABELS = ("s", "d")
NODE_WEIGHT = {"C": 1.0, "N": 2.0, "O": 1.5}
EDGE_WEIGHT = {"s": 1.0, "d": 2.5}


def random_graph(rng: random.Random, n: int, directed: bool, density: float, loops: bool = False) -> nx.Graph:
    """``n`` nodes with random ids and labels, each possible edge present with ``density``."""
    g = nx.DiGraph() if directed else nx.Graph()
    ids = rng.sample(range(100), n)
    for i in ids:
        g.add_node(i, label=rng.choice(NODE_LABELS))
    for a in range(n):
        for b in range(n) if directed else range(a, n):
            if a == b and (not loops or rng.random() > 0.15):
                continue
            if rng.random() < density:
                g.add_edge(ids[a], ids[b], label=rng.choice(EDGE_LABELS))
    return g


def perturb(rng: random.Random, g: nx.Graph, edits: int) -> nx.Graph:
    """A copy of ``g`` with ``edits`` random relabellings, node/edge deletions or insertions."""
    h = g.copy()
    for _ in range(edits):
        op = rng.randrange(4)
        nodes = list(h.nodes)
        if op == 0 and nodes:
            h.nodes[rng.choice(nodes)]["label"] = rng.choice(NODE_LABELS)
        elif op == 1 and h.number_of_edges():
            h.remove_edge(*rng.choice(list(h.edges)))
        elif op == 2 and len(nodes) >= 2:
            a, b = rng.sample(nodes, 2)
            h.add_edge(a, b, label=rng.choice(EDGE_LABELS))
        elif op == 3 and nodes:
            h.remove_node(rng.choice(nodes))
    return h


def label_match(a: dict, b: dict) -> bool:
    return a.get("label") == b.get("label")


# Custom, asymmetric costs (dyadic values: exact sums).
def node_subst(a: dict, b: dict) -> float:
    return 0.0 if a["label"] == b["label"] else NODE_WEIGHT[a["label"]] + 0.5 * NODE_WEIGHT[b["label"]]


def node_del(a: dict) -> float:
    return NODE_WEIGHT[a["label"]]


def node_ins(a: dict) -> float:
    return 2.0 * NODE_WEIGHT[a["label"]] - 0.5


def edge_subst(a: dict, b: dict) -> float:
    return 0.0 if a["label"] == b["label"] else 3.0 * EDGE_WEIGHT[a["label"]]


def edge_del(a: dict) -> float:
    return EDGE_WEIGHT[a["label"]]


def edge_ins(a: dict) -> float:
    return 0.5 + EDGE_WEIGHT[a["label"]]


#: Named cost settings as keyword arguments of ``graph_edit_distance``.
COSTS = {
    "structure": {},
    "match": {"node_match": label_match, "edge_match": label_match},
    "custom": {
        "node_subst_cost": node_subst, "node_del_cost": node_del, "node_ins_cost": node_ins,
        "edge_subst_cost": edge_subst, "edge_del_cost": edge_del, "edge_ins_cost": edge_ins,
    },
}


# ---- typed graphs (scorekit.metrics.graphs) ----------------------------------------------

TYPES = {"person": ("name", "age"), "org": ("name",), "amount": ("value", "currency")}
VALUES = ("a", "b", 1, "1")


def random_typed_graph(rng: random.Random, n: int, density: float = 0.3) -> TypedGraph:
    nodes = []
    for i in range(n):
        t = rng.choice(list(TYPES))
        fields = {f: rng.choice(VALUES) for f in TYPES[t] if rng.random() < 0.8}
        if rng.random() < 0.1:
            fields["extra"] = "x"
        nodes.append(TypedNode(f"n{rng.randrange(10**6)}-{i}", t, fields))
    edges = {}
    for a in nodes:
        for b in nodes:
            if a is not b and rng.random() < density:
                edges[(a.node_id, b.node_id)] = rng.choice(["employs", "pays", "owns"])
    return TypedGraph(nodes, [TypedEdge(s, d, t) for (s, d), t in edges.items()])


def mutate(rng: random.Random, g: TypedGraph) -> TypedGraph:
    nodes, edges = list(g.nodes), list(g.edges)
    for _ in range(rng.randint(0, 3)):
        op = rng.randrange(3)
        if op == 0 and nodes:
            k = rng.randrange(len(nodes))
            n = nodes[k]
            fields = dict(n.fields)
            if fields:
                fields[rng.choice(list(fields))] = rng.choice(VALUES)
            nodes[k] = TypedNode(n.node_id, n.node_type, fields)
        elif op == 1 and edges:
            edges.pop(rng.randrange(len(edges)))
        elif op == 2 and nodes:
            gone = nodes.pop(rng.randrange(len(nodes))).node_id
            edges = [e for e in edges if gone not in (e.src, e.dst)]
    return TypedGraph(nodes, edges)


ORACLE_GRAMMAR = GraphGrammar(
    node_types={"person": NodeType("person", {"name": FieldSpec("name", importance=4.0),
                                              "age": FieldSpec("age", importance=0.5)}, importance=2.0),
                "amount": NodeType("amount", {"value": FieldSpec("value", importance=10.0)}, importance=1.5)},
    edge_types={"pays": EdgeType("pays", "person", "amount", importance=2.5),
                "owns": EdgeType("owns", "person", "org", importance=0.5)},
)


def model_costs(grammar: GraphGrammar, weights=None) -> dict:
    """networkx-style cost callables written from the cost model (docs/decisions.md#typed-graph-costs)."""
    cost = (lambda ref: weights(grammar, ref)) if weights else grammar.cost

    def mass(attrs):
        t = attrs["type"]
        return cost(TypeRef("node", t)) + sum(cost(TypeRef("field", t, f)) for f in attrs["fields"])

    def node_subst(a, b):
        if a["type"] != b["type"]:
            return mass(a) + mass(b)
        t, fa, fb = a["type"], a["fields"], b["fields"]
        return sum(cost(TypeRef("field", t, f)) for f in set(fa) | set(fb)
                   if (f in fa) != (f in fb) or (f in fa and fa[f] != fb[f]))

    def edge_subst(a, b):
        if a["type"] == b["type"]:
            return 0.0
        return max(cost(TypeRef("edge", a["type"])), cost(TypeRef("edge", b["type"])))

    edge_unit = lambda e: cost(TypeRef("edge", e["type"]))  # noqa: E731
    return dict(node_subst_cost=node_subst, node_del_cost=mass, node_ins_cost=mass,
                edge_subst_cost=edge_subst, edge_del_cost=edge_unit, edge_ins_cost=edge_unit)
