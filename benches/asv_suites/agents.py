"""asv suite: agent reliability, cost reports (of a list, and of the recorded episodes of a run) and
bootstrap intervals (``scorekit.agents``) on the synthetic suites of ``benches/bench_agents.py``; the
bootstrap kernels alone; ``peakmem_*`` shows that the bootstrap's memory does not grow with the
resamples; ``track_*`` pins the pass^k interval of a fixed suite."""

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scorekit.agents as agents  # noqa: E402
from bench_agents import build  # noqa: E402
from scorekit._kernels import bootstrap as kernels  # noqa: E402
from scorekit.agents.cost import episode_dollars_array  # noqa: E402


class Reliability:
    params = [(1_000, 5), (10_000, 5), (5_000, 20)]
    param_names = ["tasks_k"]

    def setup(self, tasks_k):
        self.episodes, _ = build(agents, *tasks_k)
        self.outcomes = {}
        for e in self.episodes:
            self.outcomes.setdefault(e.task_id, []).append(e.success)

    def time_reliability_episodes(self, tasks_k):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agents.reliability(self.episodes, k=tasks_k[1])

    def time_reliability_mapping(self, tasks_k):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agents.reliability(self.outcomes, k=tasks_k[1])


class CostReport:
    params = [5_000, 50_000]
    param_names = ["episodes"]

    def setup(self, episodes):
        self.episodes, self.prices = build(agents, episodes // 5, 5)
        self.recorded = agents.RecordedEpisodes(self.episodes)  # report.episodes of run_suite

    def time_cost_report_priced(self, episodes):
        agents.cost_report(self.episodes, prices=self.prices)

    def time_cost_report_recorded_priced(self, episodes):
        agents.cost_report(self.recorded, prices=self.prices)

    def time_recorded_episodes(self, episodes):
        agents.RecordedEpisodes(self.episodes)

    def time_cost_report_unpriced(self, episodes):
        agents.cost_report(self.episodes)

    def time_episode_dollars_array(self, episodes):
        episode_dollars_array(self.episodes, prices=self.prices)


class Bootstrap:
    params = [1_000, 10_000, 100_000]
    param_names = ["values"]

    def setup(self, values):
        rng = np.random.default_rng(0)
        self.values = rng.random(values)
        self.pairs = np.column_stack((rng.random(values) * 1e-2, (rng.random(values) < 0.3).astype(float)))

    def time_means(self, values):
        kernels.resample_means(self.values, 0, 2_000)

    def time_ratios(self, values):
        kernels.resample_ratios(self.pairs[:, 0], self.pairs[:, 1], 0, 2_000)

    def peakmem_ratio_ci_2000(self, values):
        agents.bootstrap_ci(self.pairs, "ratio", resamples=2_000)

    def peakmem_ratio_ci_20000(self, values):
        agents.bootstrap_ci(self.pairs, "ratio", resamples=20_000)


def track_pass_hat_k_ci_width():
    episodes, _ = build(agents, 2_000, 5)
    lo, hi = agents.reliability(episodes, k=5).pass_hat_k_ci
    return hi - lo


track_pass_hat_k_ci_width.unit = "pass^k"
