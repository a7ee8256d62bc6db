"""Agents: reliability, cost report and bootstrap intervals, scorekit against the reference kit ``ek``.

    .venv/bin/python benches/bench_agents.py [--tasks 10000] [--k 5] [--repeat 3] [--quick]
                                             [--hard] [--run-suite] [--skip-ek-bootstrap]
                                             [--cost-rounds 9]

Builds a synthetic suite in memory, once with scorekit's classes and once with ek's (the same
values): ``--tasks`` tasks × ``--k`` graded episodes, each with a recorded trajectory of 2–5 tool
calls, a ``Cost`` (input, output, sometimes cached and reasoning tokens, a latency), a
``RunProvenance`` naming one of three models, and an outcome drawn from the task's own success
rate (so pass^k is informative). A price table holds the three models. Both sides then run, in
one process, one after the other, on their own copies of the same data:

- ``reliability(episodes, k=k)``: grouping, pass@k/pass^k per task, the Wilson interval and the
  pass^k bootstrap interval over tasks (2,000 resamples, seed 0);
- ``cost_report(episodes, prices=table)`` and unpriced, in ``--cost-rounds`` interleaved rounds
  (ek, then scorekit; the best time of each side, and the median of the rounds' ratios);
- ``bootstrap_ci`` of the cost per success over every episode's ``(dollars, success)`` pair, 2,000
  resamples (ek with its statistic as a Python callable, scorekit with ``"ratio"`` over the
  arrays of ``episode_dollars_array``), which is what the suite runner does for ``cost_ci``;
- as a floor for the cost report, the time of only reading the attributes it needs (no
  arithmetic), with list comprehensions;
- the peak memory of each (the highest resident set size above the level before the call, from
  ``/proc/self/status`` after resetting the peak with ``/proc/self/clear_refs``, so the compiled
  kernels' buffers count too).

Every result is checked to be identical on both sides. ``--hard`` adds the hard end (k=20 over
5,000 tasks, 100,000 episodes); ``--run-suite`` times ``run_suite`` itself with a trivial agent
(a fixed ``Episode`` with a ``Cost``) and ``price=``; ``--quick`` runs 1,000 tasks. Each scorekit
figure is the best of ``--repeat`` runs; ek runs once (its runs take seconds to minutes).
"""

from __future__ import annotations

import argparse
import gc
import math
import random
import time
import warnings
from pathlib import Path

import ek.agents as ek_agents
import numpy as np

import scorekit.agents as sk_agents
from scorekit.agents.cost import episode_dollars_array

TOOLS = ("search", "open_page", "calculator", "send_email", "lookup_order")
MODELS = {"model-small": (0.15, 0.6), "model-medium": (3.0, 15.0), "model-large": (15.0, 75.0)}


def build(kit, n_tasks: int, k: int, seed: int = 0):
    """``(episodes, price table)`` of the synthetic suite, made with ``kit``'s classes."""
    rng = random.Random(seed)
    runs = {m: kit.RunProvenance(model=m, temperature=0.7, scaffold="react") for m in MODELS}
    table = {m: kit.per_million(i, o, cached_input=i / 10) for m, (i, o) in MODELS.items()}
    episodes = []
    for t in range(n_tasks):
        task_id = f"task-{t:06d}"
        p = rng.choice((0.0, 1.0, rng.random(), rng.random()))
        model = rng.choice(tuple(MODELS))
        for _ in range(k):
            steps = tuple(kit.Step(rng.choice(TOOLS), {"q": f"{task_id}-{rng.randrange(100)}"})
                          for _ in range(rng.randint(2, 5)))
            cost = kit.Cost(input_tokens=rng.randint(200, 20_000), output_tokens=rng.randint(20, 2_000),
                            cached_input_tokens=rng.choice((0, 0, rng.randint(0, 5_000))),
                            reasoning_tokens=rng.choice((0, rng.randint(0, 3_000))),
                            latency_s=round(rng.uniform(0.3, 40.0), 3))
            episodes.append(kit.Episode(task_id=task_id, trajectory=kit.Trajectory(steps), output="done",
                                        cost=cost, success=rng.random() < p, run=runs[model]))
    return episodes, table


def _peak_rss_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


def measure(fn, repeat: int = 1):
    """``(result, best seconds, peak MB above the starting resident size)`` of ``fn()``."""
    best, peak, result = math.inf, 0.0, None
    for _ in range(repeat):
        gc.collect()
        try:
            Path("/proc/self/clear_refs").write_text("5")  # reset the peak resident size
            before = _rss_kb()
        except OSError:
            before = None
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
        if before is not None:
            peak = max(peak, (_peak_rss_kb() - before) / 1024)
    return result, best, peak


def report_fields(r) -> dict:
    return {f: getattr(r, f) for f in ("k", "n_tasks", "n_trials", "n_success", "success_rate", "success_ci",
                                       "pass_at_k", "pass_hat_k", "pass_hat_k_ci", "stochastic", "per_task")}


def read_cost_attributes(episodes) -> None:
    """What any reader of these Python objects must do for a priced cost report, and nothing else:
    read each episode's outcome, cost and run, the cost's four counts and latency, the run's model."""
    costs = [e.cost for e in episodes]
    [e.success for e in episodes]
    [r.model for r in [e.run for e in episodes]]
    [c.input_tokens for c in costs], [c.output_tokens for c in costs]
    [c.cached_input_tokens for c in costs], [c.reasoning_tokens for c in costs], [c.latency_s for c in costs]


def ek_ratio(sample):
    return ek_agents.cost_of_pass(sum(d for d, _ in sample), sum(w for _, w in sample))


class Table:
    def __init__(self):
        self.rows = []

    def add(self, what, size, ek_s, sk_s, ek_mb=None, sk_mb=None, same=None):
        self.rows.append((what, size, ek_s, sk_s, ek_mb, sk_mb, same))
        print(f"  {what} ({size}): ek {fmt_s(ek_s)}, scorekit {fmt_s(sk_s)}, {ratio(ek_s, sk_s)}", flush=True)

    def markdown(self) -> str:
        lines = ["| operation | size | ek | scorekit | ratio | peak memory ek / scorekit | identical |",
                 "|---|---|---|---|---|---|---|"]
        for what, size, ek_s, sk_s, ek_mb, sk_mb, same in self.rows:
            mem = "" if ek_mb is None else f"{ek_mb:.1f} MB / {sk_mb:.1f} MB"
            identical = "" if same is None else "yes" if same else "NO"
            lines.append(f"| {what} | {size} | {fmt_s(ek_s)} | {fmt_s(sk_s)} | **{ratio(ek_s, sk_s)}** | {mem} | "
                         f"{identical} |")
        return "\n".join(lines)


def fmt_s(s):
    return "–" if s is None else f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def ratio(ek_s, sk_s):
    return "–" if ek_s is None else f"{ek_s / sk_s:.1f}×"


def bench_suite(table: Table, n_tasks: int, k: int, repeat: int, ek_bootstrap: bool, cost_rounds: int) -> None:
    print(f"building {n_tasks:,} tasks × {k} episodes (twice: scorekit's and ek's classes) ...", flush=True)
    sk_eps, sk_prices = build(sk_agents, n_tasks, k)
    ek_eps, ek_prices = build(ek_agents, n_tasks, k)
    size = f"{n_tasks:,} tasks × {k} = {len(sk_eps):,} episodes"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ek_s, ek_mb = measure(lambda: ek_agents.reliability(ek_eps, k=k))
        ours, sk_s, sk_mb = measure(lambda: sk_agents.reliability(sk_eps, k=k), repeat)
    table.add(f"`reliability(episodes, k={k})` with the pass^k bootstrap CI", size, ek_s, sk_s, ek_mb, sk_mb,
              report_fields(ours) == report_fields(theirs))
    # cheap on both sides: interleaved rounds, so that both see the same moments of the machine
    for what, kw_ek, kw_sk in (("`cost_report(episodes, prices=table)`", {"prices": ek_prices},
                                {"prices": sk_prices}),
                               ("`cost_report(episodes)` (unpriced)", {}, {})):
        rounds = [(measure(lambda: ek_agents.cost_report(ek_eps, **kw_ek)),
                   measure(lambda: sk_agents.cost_report(sk_eps, **kw_sk))) for _ in range(cost_rounds)]
        ek_s, sk_s = min(e[1] for e, _ in rounds), min(o[1] for _, o in rounds)
        per_round = sorted(e[1] / o[1] for e, o in rounds)
        table.add(f"{what}, best of {cost_rounds} interleaved rounds (median of the rounds' ratios: "
                  f"{per_round[len(per_round) // 2]:.1f}×)", size, ek_s, sk_s,
                  max(e[2] for e, _ in rounds), max(o[2] for _, o in rounds),
                  all(e[0] == o[0] for e, o in rounds))
    _, sk_s, _ = measure(lambda: read_cost_attributes(sk_eps), repeat)
    table.add("(floor) only reading the 9 attributes a priced cost report needs, one list comprehension "
              "each", size, None, sk_s)

    def ours_ci():
        usd = episode_dollars_array(sk_eps, prices=sk_prices)
        wins = np.fromiter((e.success for e in sk_eps), dtype=np.float64, count=len(sk_eps))
        return sk_agents.bootstrap_ci(np.column_stack((usd, wins)), "ratio")

    ours, sk_s, sk_mb = measure(ours_ci, repeat)
    if ek_bootstrap:
        def theirs_ci():
            pairs = [(ek_agents.episode_dollars(e, prices=ek_prices), 1 if e.success else 0) for e in ek_eps]
            return ek_agents.bootstrap_ci(pairs, ek_ratio)

        theirs, ek_s, ek_mb = measure(theirs_ci)
        table.add("cost-per-success CI: `bootstrap_ci` of (dollars, success), ratio, 2,000 resamples",
                  f"{len(sk_eps):,} episodes", ek_s, sk_s, ek_mb, sk_mb, ours == theirs)
    else:
        table.add("cost-per-success CI: `bootstrap_ci` of (dollars, success), ratio, 2,000 resamples",
                  f"{len(sk_eps):,} episodes", None, sk_s, None, sk_mb)


def bench_run_suite(table: Table, n_tasks: int, k: int, repeat: int) -> None:
    sk_price, ek_price = sk_agents.per_million(3.0, 15.0), ek_agents.per_million(3.0, 15.0)
    sk_tasks = [sk_agents.TaskSpec(f"task-{t:06d}", input="q", gold="done") for t in range(n_tasks)]
    ek_tasks = [ek_agents.TaskSpec(f"task-{t:06d}", input="q", gold="done") for t in range(n_tasks)]
    sk_cost, ek_cost = sk_agents.Cost(1200, 300, latency_s=1.5), ek_agents.Cost(1200, 300, latency_s=1.5)

    def sk_agent(task):
        return sk_agents.Episode(output="done", cost=sk_cost)

    def ek_agent(task):
        return ek_agents.Episode(output="done", cost=ek_cost)

    size = f"{n_tasks:,} tasks × k={k}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ek_s, ek_mb = measure(lambda: ek_agents.run_suite(ek_agent, ek_tasks, k=k, price=ek_price))
        ours, sk_s, sk_mb = measure(lambda: sk_agents.run_suite(sk_agent, sk_tasks, k=k, price=sk_price,
                                                                progress="never"), repeat)
    same = report_fields(ours) == report_fields(theirs) and ours.cost == theirs.cost
    table.add("`run_suite(agent, tasks, k, price=)`, an agent returning a fixed Episode with a Cost", size,
              ek_s, sk_s, ek_mb, sk_mb, same)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="scorekit runs per figure (the best is kept)")
    ap.add_argument("--cost-rounds", type=int, default=9,
                    help="interleaved rounds of the cost reports, ek then scorekit (the best of each is kept)")
    ap.add_argument("--quick", action="store_true", help="1,000 tasks")
    ap.add_argument("--hard", action="store_true", help="also k=20 over 5,000 tasks (100,000 episodes)")
    ap.add_argument("--run-suite", action="store_true", help="also time run_suite with a trivial agent")
    ap.add_argument("--skip-ek-bootstrap", action="store_true",
                    help="do not run ek's cost-per-success bootstrap (minutes at full size)")
    args = ap.parse_args()
    n_tasks = 1_000 if args.quick else args.tasks
    table = Table()
    bench_suite(table, n_tasks, args.k, args.repeat, not args.skip_ek_bootstrap, args.cost_rounds)
    if args.hard:
        bench_suite(table, n_tasks // 2, 20, args.repeat, not args.skip_ek_bootstrap, args.cost_rounds)
    if args.run_suite:
        bench_run_suite(table, n_tasks, args.k, args.repeat)
    print()
    print(table.markdown())


if __name__ == "__main__":
    main()
