"""Two builds of ``scorekit._core`` timed against each other on the same workloads: the check that
moving code between ``rust/bindings`` and ``rust/kernels`` costs no speed.

Each round runs every workload once per build, in a fresh process each (the builds alternate, the
first one switching every round), and takes the best of ``--repeat`` calls inside the process, in
CPU time (the process's, all threads: on a shared machine wall time mostly measures the others).
The table gives, per workload, both builds' best times and the best and the median of the
per-round ratios (new / old: below 1 is faster). Every process also prints a checksum of its
results; the two builds must agree.

    PYTHONPATH=python .venv/bin/python benches/ab_core.py OLD_PYTHON_DIR NEW_PYTHON_DIR [--rounds 7]

``OLD_PYTHON_DIR`` and ``NEW_PYTHON_DIR`` are ``python/`` trees whose ``scorekit/_core.abi3.so`` are
the two builds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

BENCHES = os.path.dirname(os.path.abspath(__file__))


def _trajectories():
    import random

    from bench_sequences import agent_pair
    from scorekit.agents import TrajectoryMetric

    rng = random.Random(3)
    pairs = [agent_pair(rng, rng.randrange(4, 24)) for _ in range(3_000)]
    preds, golds = [p for p, _ in pairs], [g for _, g in pairs]
    metric = TrajectoryMetric()
    return lambda: [s.value for s in metric.score_batch(preds, golds, threads=1)]


def _cases():
    from bench_cases import build
    from scorekit.cases import score_case

    cases = build(1_000, 1, (2, 12))
    return lambda: [s.score for e, a in cases for s in score_case(e, a)]


def _anls():
    from bench_anls import make_answers
    from scorekit.metrics.anls import anls_scores

    preds, golds = make_answers(20_000)
    return lambda: list(anls_scores(preds, golds))


def _rover():
    import random

    from bench_rover_batch import field_value, reading
    from scorekit.qe.rover import agreement_batch

    rnd = random.Random(5)
    values = [field_value(rnd) for _ in range(20_000)]
    items = [[reading(rnd, v) for _ in range(3)] for v in values]
    return lambda: list(agreement_batch(items))


def _conformal():
    import numpy as np

    from scorekit.qe import ConformalGate

    rng = np.random.default_rng(16)
    p = rng.beta(4.0, 1.5, 1_000_000)
    c = rng.random(p.size) < p
    return lambda: [ConformalGate(alpha=0.1).fit(p, c).q]


def _group_sums():
    import numpy as np

    from scorekit import _core

    rng = np.random.default_rng(7)
    rows = rng.integers(0, 100, (1_000_000, 4))
    codes = rng.integers(-1, 50, 1_000_000)
    return lambda: _core.group_sums(rows, codes, 50).ravel().tolist()


WORKLOADS = {
    "trajectory score_batch, 3,000 pairs, 1 thread": _trajectories,
    "score_case, 1,000 cases": _cases,
    "anls_scores, 20,000 answers": _anls,
    "ROVER agreement_batch, 20,000 fields": _rover,
    "ConformalGate.fit, 1,000,000 rows": _conformal,
    "group_sums, 1,000,000 rows x 4": _group_sums,
}


def child(name: str, repeat: int) -> None:
    sys.path.insert(0, BENCHES)
    run = WORKLOADS[name]()
    run()  # warm-up
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = run()
        best = min(best, time.process_time() - start)
    print(json.dumps({"seconds": best, "checksum": hash(repr(result))}))


def measure(python_dir: str, name: str, repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=python_dir, PYTHONHASHSEED="0")
    out = subprocess.run([sys.executable, __file__, "--child", name, "--repeat", str(repeat)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("old", nargs="?")
    parser.add_argument("new", nargs="?")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="run the workloads whose name contains this text")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.repeat)
        return
    names = [n for n in WORKLOADS if not args.only or args.only in n]
    times = {n: {"old": [], "new": []} for n in names}
    for r in range(args.rounds):
        for name in names:
            order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
            sums = {}
            for build in order:
                got = measure(getattr(args, build), name, args.repeat)
                times[name][build].append(got["seconds"])
                sums[build] = got["checksum"]
            if sums["old"] != sums["new"]:
                sys.exit(f"{name}: the two builds give different results")
    print("| workload | old (best) | new (best) | new / old: best; median of rounds |")
    print("|---|---:|---:|---:|")
    for name in names:
        old, new = times[name]["old"], times[name]["new"]
        ratios = [b / a for a, b in zip(old, new)]
        print(f"| {name} | {min(old) * 1e3:.1f} ms | {min(new) * 1e3:.1f} ms "
              f"| {min(new) / min(old):.3f}; {statistics.median(ratios):.3f} |")


if __name__ == "__main__":
    main()
