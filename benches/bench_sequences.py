"""Side-by-side speed of scorekit's sequence kernels (trajectory NW, ROVER) against pure Python.

The pure-Python peers are the straightforward implementations in
``tests/reference_sequences.py`` (full-table dynamic programs over Python objects, canonicalising
inside the cost function as ek does). Everything runs in one process on the same
data; every timing is the median of several repeats and every ratio compares two medians of this
run. Prints a Markdown report (appended to ``benches/RESULTS_sequences.md`` by hand or with
``--append``).

    .venv/bin/python benches/bench_sequences.py            # full run (a few minutes)
    .venv/bin/python benches/bench_sequences.py --quick    # smaller sizes, fewer repeats
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

from reference_sequences import nw_distance, rover_units  # noqa: E402
from scorekit._kernels import align as align_kernels  # noqa: E402
from scorekit._kernels import use_backend  # noqa: E402
from scorekit.agents import Step, TrajectoryMetric  # noqa: E402
from scorekit.agents.toolcalls import _Weights  # noqa: E402
from scorekit.agents.trajectory import _call_packer  # noqa: E402
from scorekit.canonicalize import builtin_steps, default_canonicalizer  # noqa: E402
from scorekit.qe import rover  # noqa: E402

TOOLS = ["search", "open_page", "click", "type_text", "scroll", "read_file", "write_file", "answer"]
WORDS = [f"w{k}" for k in range(2000)]
#: Pairs per interleaved slice of the trajectory benchmark.
TRAJECTORY_SLICE = 10


def timings(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def median_time(fn, repeats: int) -> float:
    return statistics.median(timings(fn, repeats))


def thread_cpu_seconds() -> dict[str, float]:
    """CPU seconds (user + system) of every thread of this process, from /proc (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[tid] = (int(fields[11]) + int(fields[12])) / tick
    return out


def agent_pair(rng: random.Random, n: int) -> tuple[list[Step], list[Step]]:
    """A gold trajectory of ``n`` calls (1–3 arguments, mixed-case strings from a 2,000-word
    vocabulary and small ints) and a prediction that drops, repeats and perturbs ~20% of them."""
    gold = []
    for _ in range(n):
        args = {"query": " ".join(rng.choice(WORDS).title() for _ in range(rng.randrange(1, 4)))}
        if rng.random() < 0.6:
            args["page"] = rng.randrange(5)
        if rng.random() < 0.3:
            args["path"] = f"/data/{rng.choice(WORDS)}.txt"
        gold.append(Step(rng.choice(TOOLS), args))
    pred = []
    for step in gold:
        r = rng.random()
        if r < 0.07:
            continue
        if r < 0.14:
            pred.append(Step(step.tool, {**step.args, "query": rng.choice(WORDS)}))
        elif r < 0.2:
            pred += [step, Step(rng.choice(TOOLS), {"query": rng.choice(WORDS).upper()})]
        else:
            pred.append(Step(step.tool, dict(step.args)))
    return pred[:n], gold


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0–1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_trajectory(repeats: int, n_pairs: int) -> list[str]:
    """Per-pair rows are measured slice by slice (10 pairs): the pure-Python peer once, then every
    scorekit row best of 3, so each ratio compares timings taken within ~0.1 s of each other (this
    VM's speed drifts by more than 1.5× over seconds). Batch rows run over all pairs once per round,
    against that round's peer time."""
    rng = random.Random(50)
    pairs = [agent_pair(rng, 50) for _ in range(n_pairs)]
    preds, golds = [p for p, _ in pairs], [g for _, g in pairs]
    tuple_pairs = [([(s.tool, s.args) for s in p], [(s.tool, s.args) for s in g]) for p, g in pairs]
    canon = default_canonicalizer()
    metric = TrajectoryMetric()
    slices = [range(k, min(k + TRAJECTORY_SLICE, n_pairs)) for k in range(0, n_pairs, TRAJECTORY_SLICE)]
    per_slice = {}
    per_batch = {}
    for name in ("rust", "numba"):
        with use_backend(name):
            for (p, g), (tp, tg) in zip(pairs, tuple_pairs):  # exactness check and warm-up
                expected = nw_distance([s.call for s in p], [s.call for s in g], canon=canon)
                assert metric(p, g).detail["raw_distance"] == expected
                assert metric(tp, tg).detail["raw_distance"] == expected
            packed = []
            for p, g in pairs:  # one call table per pair, as the metric packs a single pair
                packer = _call_packer(canon, _Weights(None), builtin_steps(canon))
                packed.append((packer.pack([p])[:2], packer.pack([g])[:2], packer.table()))

        def on(backend, fn):
            def run(*args):
                with use_backend(backend):
                    fn(*args)
            return run
        per_slice[f"pair {name}"] = on(name, lambda sl: [metric(*pairs[k]) for k in sl])
        if name == "rust":  # the same calls given as (tool, args) tuples
            per_slice["tuples rust"] = on(name, lambda sl: [metric(*tuple_pairs[k]) for k in sl])
        per_slice[f"kernel {name}"] = on(name, lambda sl, packed=packed: [
            align_kernels.calls_distance_batch(packed[k][2], *packed[k][0], *packed[k][1]) for k in sl])
        per_batch[f"batch {name}"] = on(name, lambda: metric.score_batch(preds, golds))

    def peer(sl) -> None:
        for k in sl:
            p, g = pairs[k]
            nw_distance([s.call for s in p], [s.call for s in g], canon=canon)

    times: dict[str, list[float]] = {k: [] for k in ("peer", *per_slice, *per_batch)}
    ratios: dict[str, list[float]] = {k: [] for k in (*per_slice, *per_batch)}
    for _ in range(max(3, repeats // 2)):
        round_peer = 0.0
        for sl in slices:
            t_peer = timings(lambda: peer(sl), 1)[0] / len(sl)
            round_peer += t_peer * len(sl)
            times["peer"].append(t_peer)
            for key, fn in per_slice.items():
                t = min(timings(lambda: fn(sl), 3)) / len(sl)
                times[key].append(t)
                ratios[key].append(t_peer / t)
        for key, fn in per_batch.items():
            t = min(timings(fn, 3)) / n_pairs
            times[key].append(t)
            ratios[key].append(round_peer / n_pairs / t)
    peer_time = statistics.median(times["peer"])

    def row(label: str, key: str) -> str:
        r = ratios[key]
        spread = (f"10th–90th percentile {percentile(r, 0.1):,.0f}–{percentile(r, 0.9):,.0f}×"
                  if key in per_slice else f"rounds {min(r):,.0f}–{max(r):,.0f}×")
        return (f"| {label} | {statistics.median(times[key]) * 1e6:,.1f} µs | "
                f"{statistics.median(r):,.0f}× ({spread}) |")

    n_rounds = len(ratios["batch rust"])
    out = ["### TrajectoryMetric (in_order) on 50-step trajectory pairs", "",
           f"{n_pairs} pairs of 50-step trajectories (2,000-word vocabulary, ~20% perturbed), default "
           "canonicalizer, no grammar. Per pair, end to end (reading calls, canonicalising, packing, "
           f"kernel, Score). {n_rounds} rounds; in each, every slice of {TRAJECTORY_SLICE} pairs is timed with "
           "the peer once and then each per-pair scorekit row (best of 3), and the ratio is taken per "
           "slice; `score_batch` runs over all pairs (best of 3) against the round's peer time. "
           "Medians of the times and of the ratios.", "",
           "| implementation | per pair (median) | speed-up vs pure Python |", "|---|---:|---:|",
           f"| pure-Python NW (`tests/reference_sequences.nw_distance`) | {peer_time * 1e6:,.0f} µs | 1× |"]
    for name in ("rust", "numba"):
        out.append(row(f"scorekit `TrajectoryMetric()(p, g)`, {name}", f"pair {name}"))
        if name == "rust":
            out.append(row("the same, calls given as `(tool, args)` tuples, rust", "tuples rust"))
        out.append(row(f"scorekit `score_batch` over the {n_pairs} pairs, {name}", f"batch {name}"))
        out.append(row(f"NW kernel alone on the packed pair (`calls_distance_batch`), {name}", f"kernel {name}"))
    return out + [""]


def bench_rover(repeats: int) -> list[str]:
    rng = random.Random(5)
    vocab = [f"t{k}" for k in range(3000)]

    def hypotheses(length: int) -> list[list[tuple[str, float]]]:
        base = [rng.choice(vocab) for _ in range(length)]
        hyps = []
        for _ in range(5):
            h = []
            for tok in base:
                r = rng.random()
                if r < 0.05:
                    continue
                h.append((rng.choice(vocab) if r < 0.12 else tok, round(0.5 + rng.random() / 2, 3)))
                if rng.random() < 0.03:
                    h.append((rng.choice(vocab), 0.4))
            hyps.append(h[:length])
        return hyps

    h1000 = hypotheses(1000)
    h5000 = hypotheses(5000)
    rows = []
    for name in ("rust", "numba"):
        with use_backend(name):
            c = rover(h1000)
            assert [(s.entries, s.winner, s.score, s.vote_share) for s in c.slots] == rover_units(h1000, 0.5, 0.7)
            t1000 = median_time(lambda: rover(h1000), repeats)
            rover(h5000)
            t5000 = median_time(lambda: rover(h5000), max(3, repeats // 3))
            rows.append((name, t1000, t5000))
    peer = median_time(lambda: rover_units(h1000, 0.5, 0.7), 3)
    out = ["### ROVER", "",
           "5 hypotheses (≈5% deletions, 7% substitutions, 3% insertions, confidences in [0.5, 1]), "
           "default voting; end to end (units, interning, kernel, RoverSlot objects).", "",
           "| implementation | 5 × 1,000 tokens | speed-up vs pure Python | 5 × 5,000 tokens (the guard) |",
           "|---|---:|---:|---:|",
           "| pure-Python progressive alignment (`tests/reference_sequences.rover_units`) | "
           f"{peer * 1e3:,.0f} ms | 1× | – |"]
    for name, t1000, t5000 in rows:
        out.append(f"| scorekit `rover`, {name} | {t1000 * 1e3:,.2f} ms | {peer / t1000:,.0f}× | "
                   f"{t5000 * 1e3:,.0f} ms |")
    return out + [""]


def bench_batch(repeats: int, n_pairs: int) -> list[str]:
    """1M 10-step pairs: the kernel over a packed batch on 1 thread vs all cores, and the packing."""
    rng = random.Random(10)
    distinct = [agent_pair(rng, 10) for _ in range(2000)]
    preds = [distinct[k % 2000][0] for k in range(n_pairs)]
    golds = [distinct[(k * 7 + 3) % 2000][1] for k in range(n_pairs)]
    canon = default_canonicalizer()
    packer = _call_packer(canon, _Weights(None), builtin_steps(canon))
    start = time.perf_counter()
    a, a_off, _, _ = packer.pack(preds)
    b, b_off, _, _ = packer.pack(golds)
    table = packer.table()
    pack_s = time.perf_counter() - start
    start = time.perf_counter()
    scores = TrajectoryMetric().score_batch(preds, golds)
    end_to_end = time.perf_counter() - start
    del scores
    out = ["### Batch trajectory scoring", "",
           f"{n_pairs:,} pairs of 10-step trajectories (drawn from 4,000 distinct trajectories). End to end, "
           f"`TrajectoryMetric().score_batch(preds, golds)` (reading and packing the calls, the kernel on "
           f"all cores, one Score per pair): {end_to_end:.1f} s, {n_pairs / end_to_end:,.0f} pairs/s. Of "
           f"that, reading and packing the {2 * n_pairs:,} trajectories into one call table of "
           f"{len(table[0]):,} distinct calls: {pack_s:.1f} s ({n_pairs / pack_s:,.0f} pairs/s, "
           f"{type(packer).__name__}). The NW kernel alone over the packed batch "
           f"(`scorekit._kernels.align.calls_distance_batch`), {os.cpu_count()} cores:", "",
           "| backend | threads | median wall time | best wall time | pairs / s (best) | CPU time / wall time |",
           "|---|---:|---:|---:|---:|---:|"]
    reference = None
    spread = []
    for name in ("rust", "numba"):
        with use_backend(name):
            align_kernels.calls_distance_batch(table, a[:10], a_off[:2], b[:10], b_off[:2])
            for threads in (1, 0):
                before = thread_cpu_seconds()
                res = align_kernels.calls_distance_batch(table, a, a_off, b, b_off, threads)
                if threads == 0:
                    after = thread_cpu_seconds()
                    busy = sorted((after[k] - before.get(k, 0.0) for k in after), reverse=True)
                    spread.append(f"{name}: " + ", ".join(f"{x:.2f} s" for x in busy if x >= 0.01))
                if reference is None:
                    reference = res
                assert np.array_equal(res, reference)
                cpu0 = time.process_time()
                ts = timings(lambda: align_kernels.calls_distance_batch(table, a, a_off, b, b_off, threads), repeats)
                cpu = time.process_time() - cpu0
                label = "1" if threads == 1 else f"all ({os.cpu_count()})"
                out.append(f"| {name} | {label} | {statistics.median(ts):.2f} s | {min(ts):.2f} s | "
                           f"{n_pairs / min(ts):,.0f} | {cpu / sum(ts):.2f} |")
    out += ["", "CPU seconds per busy thread (≥ 0.01 s) during one all-core run, from /proc: "
            + "; ".join(spread) + "."]
    return out + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--append", action="store_true", help="append the report to benches/RESULTS_sequences.md")
    parser.add_argument("--only", choices=["trajectory", "rover", "batch"], help="run one section")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    lines = ["## Sequences: trajectory NW and ROVER", "",
             f"Command: `.venv/bin/python benches/bench_sequences.py{' --quick' if args.quick else ''}"
             f"{' --only ' + args.only if args.only else ''}` "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, shared machine; "
             "medians of repeats, ratios within this run).", ""]
    if args.only in (None, "trajectory"):
        lines += bench_trajectory(repeats, 20 if args.quick else 100)
    if args.only in (None, "rover"):
        lines += bench_rover(repeats)
    if args.only in (None, "batch"):
        lines += bench_batch(repeats, 100_000 if args.quick else 1_000_000)
    report = "\n".join(lines)
    print(report)
    if args.append:
        with open(ROOT / "benches" / "RESULTS_sequences.md", "a", encoding="utf-8") as f:
            f.write(report + "\n")


if __name__ == "__main__":
    main()
