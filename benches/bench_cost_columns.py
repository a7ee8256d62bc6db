"""``cost_report`` on the episodes of a ``run_suite`` run (their recorded cost columns) and on a plain
list of the same episodes, against the reference kit's ``ek.agents.cost_report``.

    PYTHONPATH=python .venv/bin/python benches/bench_cost_columns.py [--tasks 10000] [--k 5] [--rounds 9]
    PYTHONPATH=python .venv/bin/python benches/bench_cost_columns.py --run-suite-only

The suite is ``benches/bench_agents.py``'s ``build`` (``--tasks`` tasks x ``--k`` graded episodes,
three models, a price table), once with ek's classes and once with scorekit's. scorekit's episodes
then go through ``run_suite`` (an agent that returns the built episode of its task and trial, graded
with the ``"recorded"`` checker), so that ``report.episodes`` is the run's ``RecordedEpisodes`` with
its cost columns. Each round times, one after the other: ek on its list, scorekit on
``report.episodes`` (``recorded``: its columns) and scorekit on the list of the episodes built
(``list``: the compiled reader of an arbitrary list), priced (``prices=table``) and unpriced; every
result is checked equal to ek's in every round. Printed: the time of making a ``RecordedEpisodes``
of the 50,000 episodes (what ``run_suite`` pays for the columns; best and median of 5), the best and
median time of each report, and the best and the median of the per-round ratios.

``--run-suite-only`` prints only the best of 3 ``run_suite`` calls on ``--tasks`` x ``--k`` with a
trivial agent (a fixed ``Episode`` with a ``Cost``, ``price=``), as ``bench_agents.py --run-suite``
runs it, with no other import of scorekit's: run it with ``PYTHONPATH`` naming this tree and another
(``main``'s), in turn, to see what recording the episodes costs the suite runner.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import ek.agents as ek_agents

import scorekit.agents as sk_agents

sys.path.insert(0, str(Path(__file__).parent))
from bench_agents import build  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def recorded_run(n_tasks: int, k: int):
    """``(report.episodes, the episodes built, price table)``: ``build``'s scorekit episodes, recorded
    by ``run_suite``."""
    episodes, table = build(sk_agents, n_tasks, k)
    by_trial = {(e.task_id, i % k): e for i, e in enumerate(episodes)}
    tasks = [sk_agents.TaskSpec(task_id) for task_id in dict.fromkeys(e.task_id for e in episodes)]

    def agent(task, seed):
        return by_trial[(task.task_id, seed)]

    report = sk_agents.run_suite(agent, tasks, k=k, seed=0, check="recorded", progress="never")
    assert list(report.episodes) == episodes
    return report.episodes, episodes, table


def run_suite_time(n_tasks: int, k: int) -> float:
    """Best of 3 ``run_suite`` calls with a trivial agent, in seconds."""
    tasks = [sk_agents.TaskSpec(f"task-{t:06d}", input="q", gold="done") for t in range(n_tasks)]
    cost = sk_agents.Cost(1200, 300, latency_s=1.5)

    def agent(task):
        return sk_agents.Episode(output="done", cost=cost)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a deterministic agent: pass^k warns
        return min(timed(lambda: sk_agents.run_suite(agent, tasks, k=k, price=sk_agents.per_million(3.0, 15.0),
                                                     progress="never"))[1] for _ in range(3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--run-suite-only", action="store_true", help="time run_suite with a trivial agent, nothing else")
    args = ap.parse_args()
    if args.run_suite_only:
        print(f"run_suite, {args.tasks:,} tasks x k={args.k}: {run_suite_time(args.tasks, args.k) * 1e3:.0f} ms "
              f"(load {os.getloadavg()[0]:.2f})")
        return
    ek_eps, ek_table = build(ek_agents, args.tasks, args.k)
    recorded, plain, table = recorded_run(args.tasks, args.k)
    record = [timed(lambda: sk_agents.RecordedEpisodes(plain))[1] for _ in range(5)]
    print(f"{len(recorded):,} episodes; load {os.getloadavg()[0]:.2f} at the start; making a RecordedEpisodes "
          f"of them (paid once, inside run_suite): best {min(record) * 1e3:.0f} ms, "
          f"median {statistics.median(record) * 1e3:.0f} ms")
    for label, ek_kw, sk_kw in (("priced", {"prices": ek_table}, {"prices": table}), ("unpriced", {}, {})):
        times: dict[str, list[float]] = {"ek": [], "recorded": [], "list": []}
        for _ in range(args.rounds):
            theirs, t = timed(lambda: ek_agents.cost_report(ek_eps, **ek_kw))
            times["ek"].append(t)
            for name, episodes in (("recorded", recorded), ("list", plain)):
                ours, t = timed(lambda: sk_agents.cost_report(episodes, **sk_kw))
                times[name].append(t)
                assert ours == theirs, (name, ours, theirs)
        print(f"\n{label}: ek best {min(times['ek']) * 1e3:.1f} ms (median {statistics.median(times['ek']) * 1e3:.1f})")
        for name in ("recorded", "list"):
            ratios = [a / b for a, b in zip(times["ek"], times[name])]
            print(f"  {name:8s} best {min(times[name]) * 1e3:.2f} ms (median {statistics.median(times[name]) * 1e3:.2f});"
                  f" ek / scorekit: best {max(ratios):.1f}x, median {statistics.median(ratios):.1f}x")
    print(f"\nload {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
