"""asv suite: tree edit distance (Zhang–Shasha), TEDS on tables, and the workflow metrics.

The inputs are those of ``benches/bench_trees.py`` (random 200-node trees, a 40×10 table, 30-node
StarFlow-shaped workflows); ``track_*`` pins values on documented vectors so a behaviour drift
shows up.
"""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_trees import random_flow, random_tree  # noqa: E402

import scorekit as ek  # noqa: E402
from scorekit import flows  # noqa: E402
from scorekit.metrics.tables import Table  # noqa: E402
from scorekit.trees import Tree, tree_edit_distance, tree_edit_distance_batch  # noqa: E402


class TreeEditDistance:
    params = [50, 200]
    param_names = ["nodes"]

    def setup(self, nodes):
        rng = random.Random(nodes)
        self.pairs = [(random_tree(rng, nodes), random_tree(rng, nodes)) for _ in range(20)]

    def time_pair(self, nodes):
        tree_edit_distance(*self.pairs[0])

    def time_batch_of_20(self, nodes):
        tree_edit_distance_batch(self.pairs)


class Teds:
    def setup(self):
        rng = random.Random(40)
        gold = [["".join(rng.choice("abcdefgh0123456789 ") for _ in range(rng.randint(3, 12))) for _ in range(10)]
                for _ in range(40)]
        pred = [[c if rng.random() > 0.2 else c[::-1] for c in row] for row in gold[:-1]]
        self.pred, self.gold = Table.coerce(pred), Table.coerce(gold)
        self.teds, self.structure = ek.TedsMetric(), ek.TedsMetric(structure_only=True)

    def time_teds_40x10(self):
        self.teds(self.pred, self.gold)

    def time_teds_struct_40x10(self):
        self.structure(self.pred, self.gold)


class Flows:
    def setup(self):
        rng = random.Random(30)
        self.pairs = [(random_flow(rng), random_flow(rng)) for _ in range(10_000)]

    def time_evaluate_flows_10k(self):
        flows.evaluate_flows(self.pairs)


def track_ted_documented():
    return tree_edit_distance(Tree.from_brackets("{a{b}{c}}"), Tree.from_brackets("{a{b}}"))


def track_flowsim_documented():
    ref = {"trigger": "record_create", "components": ["look_up_record", {"category": "flowlogic", "definition": "IF",
                                                                        "children": ["update_record", "send_email"]}]}
    pred = {"trigger": "record_create", "components": ["look_up_record", {"category": "flowlogic", "definition": "IF",
                                                                         "children": ["update_record"]}]}
    return flows.compute_metrics(pred, ref).flowsim
