"""asv suite: trajectory scoring (Needleman–Wunsch over tool calls) and ROVER consensus.

The inputs are those of ``benches/bench_sequences.py`` (50-step agent trajectories, 5 OCR-like
hypotheses); ``track_*`` pins values on ek's documented vectors so a behaviour drift shows up.
"""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_sequences import agent_pair  # noqa: E402

import scorekit as ek  # noqa: E402
from scorekit.agents import Step, TrajectoryMetric  # noqa: E402


class Trajectories:
    params = [10, 50]
    param_names = ["steps"]

    def setup(self, steps):
        rng = random.Random(steps)
        self.pairs = [agent_pair(rng, steps) for _ in range(100)]
        self.preds = [p for p, _ in self.pairs]
        self.golds = [g for _, g in self.pairs]
        self.metric = TrajectoryMetric()

    def time_metric_per_pair(self, steps):
        for p, g in self.pairs:
            self.metric(p, g)

    def time_score_batch(self, steps):
        self.metric.score_batch(self.preds, self.golds)


class Rover:
    def setup(self):
        rng = random.Random(5)
        words = [f"w{k}" for k in range(500)]
        base = [rng.choice(words) for _ in range(1_000)]
        self.hypotheses = [" ".join(w if rng.random() > 0.1 else rng.choice(words) for w in base)
                           for _ in range(5)]

    def time_rover_5x1000(self):
        ek.rover(self.hypotheses)


def track_trajectory_detour():
    gold = [Step("search", {"q": "cat"}), Step("answer", {"a": "meow"})]
    detour = [Step("search", {"q": "cat"}), Step("search", {"q": "cat"}), Step("answer", {"a": "meow"})]
    return TrajectoryMetric()(detour, gold).value


def track_rover_agreement_signal():
    return ek.AgreementSignal()(["the cat sat", "the cat sit", "the bat sat"])
