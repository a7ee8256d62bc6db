"""asv suite: exact graph edit distance (the networkx drop-in) and ``TypedGraphMetric``.

The inputs are those of ``benches/bench_graphs.py`` (random labelled graphs, typed graphs with a
grammar, near-duplicate and unrelated pairs); ``track_*`` pins documented values.
"""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

import networkx as nx  # noqa: E402

from ged_cases import COSTS, ORACLE_GRAMMAR, mutate, random_graph, random_typed_graph  # noqa: E402
from scorekit.graphs import graph_edit_distance, graph_edit_distance_batch  # noqa: E402
from scorekit.metrics.graphs import TypedGraphMetric  # noqa: E402


class LabelledGed:
    params = [5, 7]
    param_names = ["nodes"]

    def setup(self, nodes):
        rng = random.Random(nodes)
        self.pairs = [(random_graph(rng, nodes, k % 2 == 0, 0.35), random_graph(rng, nodes, k % 2 == 0, 0.35))
                      for k in range(10)]

    def time_pairs(self, nodes):
        for g1, g2 in self.pairs:
            graph_edit_distance(g1, g2, **COSTS["match"])

    def time_batch(self, nodes):
        graph_edit_distance_batch(self.pairs, **COSTS["match"])


class TypedGraphs:
    params = [12, 30]
    param_names = ["nodes"]

    def setup(self, nodes):
        rng = random.Random(nodes)
        self.pairs = []
        for _ in range(10):
            gold = random_typed_graph(rng, nodes, 0.15)
            self.pairs.append((mutate(rng, gold), gold))
        self.metric = TypedGraphMetric(grammar=ORACLE_GRAMMAR, max_nodes=None)

    def time_near_duplicates(self, nodes):
        for pred, gold in self.pairs:
            self.metric(pred, gold)


def track_ged_path_vs_cycle():
    return graph_edit_distance(nx.path_graph(6), nx.cycle_graph(6))
