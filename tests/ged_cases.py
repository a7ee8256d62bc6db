"""Random labelled graphs and cost functions shared by the GED tests and benchmarks.

Costs are small integers or halves, so every sum is exact in floating point and results can be
compared with ``==`` against networkx.
"""

from __future__ import annotations

import random

import networkx as nx

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
