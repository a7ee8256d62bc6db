"""Side-by-side speed (and persistence memory) of scorekit's offline harness and stores and the
reference kit's.

Times ``evaluate_store`` (without and with ``persist=True``), ``regression_gate`` on a report with
many slices, ``save_baseline``/``load_baseline``, ``json_store`` writes and reads,
``persistent_cache`` hits and ``cache_this`` hits against ``ek.harness``/``ek.stores`` (the test
oracle; its ``cache_this`` is dol's) in one process, each side in its own temporary folder, and
prints a Markdown table. Times are the best of a few repeats (one run when a call takes over 5 s).
The memory rows are tracemalloc peaks of one persisted run.

    .venv/bin/python benches/bench_harness.py                  # 100,000 gold items
    .venv/bin/python benches/bench_harness.py --items 10000    # a quick run
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import tempfile
import time
import tracemalloc

import ek
import ek.base as ek_base
import ek.harness as ek_harness
import ek.stores as ek_stores

import scorekit.harness as sk_harness
import scorekit.stores as sk_stores
from scorekit.base import Report

WORDS = "the invoice total amount due date customer account number paid net tax".split()


def best(fn, repeats: int) -> float:
    """Best seconds of ``repeats`` calls (one when the first takes over 5 s)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        if times[0] > 5.0:
            break
    return min(times)


def peak_mib(fn) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def gold_store(items: int) -> tuple[dict, dict]:
    rnd = random.Random(16)
    gold, readings = {}, {}
    for i in range(items):
        reference = " ".join(rnd.choice(WORDS) for _ in range(rnd.randrange(3, 12)))
        chars = list(reference)
        for _ in range(rnd.randrange(0, 3)):
            chars[rnd.randrange(len(chars))] = rnd.choice("xyz")
        gold[f"doc-{i:07d}"] = {"input": f"page-{i}", "reference": reference, "slice": f"s{i % 20}"}
        readings[f"page-{i}"] = "".join(chars)
    return gold, readings


def rows(items: int):
    gold, readings = gold_store(items)
    predict = readings.__getitem__
    sk_root, ek_root = tempfile.mkdtemp(), tempfile.mkdtemp()
    counter = iter(range(10**9))

    yield (f"evaluate_store, CER, {items:,} items", 3,
           lambda: sk_harness.evaluate_store(predict, gold, metric="cer"),
           lambda: ek_harness.evaluate_store(predict, gold, metric="cer"))
    yield (f"evaluate_store, CER, persist=True, {items:,} items", 3,
           lambda: sk_harness.evaluate_store(predict, gold, metric="cer", persist=True,
                                             run_id=f"r{next(counter)}", rootdir=sk_root),
           lambda: ek_harness.evaluate_store(predict, gold, metric="cer", persist=True,
                                             run_id=f"r{next(counter)}", rootdir=ek_root))
    slices = {f"slice-{i}": random.Random(i).random() for i in range(10_000)}
    sk_report = Report(metric="cer", aggregate=0.1, n=10_000, per_slice=slices)
    ek_report = ek_base.Report(metric="cer", aggregate=0.1, n=10_000, per_slice=slices)
    sk_harness.save_baseline(sk_report, "wide", rootdir=sk_root)
    ek_harness.save_baseline(ek_report, "wide", rootdir=ek_root)
    yield ("regression_gate by name, 10,000 slices", 5,
           lambda: sk_harness.regression_gate(sk_report, "wide", rootdir=sk_root),
           lambda: ek_harness.regression_gate(ek_report, "wide", rootdir=ek_root))
    yield ("save_baseline + load_baseline, 10,000 slices", 5,
           lambda: (sk_harness.save_baseline(sk_report, "b", rootdir=sk_root),
                    sk_harness.load_baseline("b", rootdir=sk_root)),
           lambda: (ek_harness.save_baseline(ek_report, "b", rootdir=ek_root),
                    ek_harness.load_baseline("b", rootdir=ek_root)))
    sk_gold, ek_gold = sk_stores.json_store("gold", rootdir=sk_root), ek_stores.json_store("gold", rootdir=ek_root)
    records = list(gold.items())[:200]

    def write_read(store):
        for key, record in records:
            store[key] = record
        for key, _ in records:
            store[key]

    yield ("json_store, 200 writes + 200 reads", 3, lambda: write_read(sk_gold), lambda: write_read(ek_gold))

    @sk_stores.persistent_cache(key="answer", rootdir=sk_root)
    def sk_cached():
        return {"answer": 42}

    @ek_stores.persistent_cache(key="answer", rootdir=ek_root)
    def ek_cached():
        return {"answer": 42}

    yield ("persistent_cache, 1,000 hits", 3, lambda: [sk_cached() for _ in range(1000)],
           lambda: [ek_cached() for _ in range(1000)])

    def holder(cache_this):
        class Holder:
            def __init__(self):
                self.memo = {}

            @cache_this(cache="memo")
            def method(self, x, y=1):
                return x * y

        return Holder()

    sk_obj, ek_obj = holder(sk_stores.cache_this), holder(ek.cache_this)
    yield ("cache_this method, 100,000 hits (10 keys)", 3,
           lambda: [sk_obj.method(i % 10) for i in range(100_000)],
           lambda: [ek_obj.method(i % 10) for i in range(100_000)])
    yield (f"peak memory, evaluate_store persist=True, {items:,} items", None,
           lambda: sk_harness.evaluate_store(predict, gold, metric="cer", persist=True,
                                             run_id=f"m{next(counter)}", rootdir=sk_root),
           lambda: ek_harness.evaluate_store(predict, gold, metric="cer", persist=True,
                                             run_id=f"m{next(counter)}", rootdir=ek_root))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, ek {ek.__version__}, {args.items:,} gold items\n")
    print("| case | ek | scorekit | ratio |")
    print("|---|---|---|---|")
    for name, repeats, ours, theirs in rows(args.items):
        if repeats is None:
            a, b = peak_mib(theirs), peak_mib(ours)
            print(f"| {name} | {a:,.1f} MiB | {b:,.1f} MiB | {a / b:.1f}× less |", flush=True)
            continue
        a, b = best(theirs, repeats), best(ours, repeats)
        print(f"| {name} | {a * 1e3:,.1f} ms | {b * 1e3:,.1f} ms | {a / b:.1f}× |", flush=True)


if __name__ == "__main__":
    main()
