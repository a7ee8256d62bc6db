"""ANLS* over question/answer pairs: scorekit's ``anls_scores`` against the ``anls-star`` package
(issue #17), side by side on the same answers in one run.

Two workloads:

* **mixed answers** (``--pairs``, default 100,000): 30 % plain string answers, 25 % gold tuples of
  alternatives against one answer, 20 % lists of strings (shuffled, an item dropped or added), 15 %
  small dicts of strings (a key missing or extra) and 10 % nested invoices (a dict with a tuple
  value and a list of line-item dicts). Predictions carry OCR-like noise (a character replaced,
  dropped, upper-cased or padded).
* **long answers** (``--pages``, default 12): page-length strings (≈ 3,000 characters) with 5 %
  of their characters replaced.

anls-star scores one pair per call (its pure-Python Levenshtein and munkres); scorekit scores the
whole batch in one call (best of ``--rounds``, after a warm-up). Every value is checked equal.
The machine is shared, so both wall time and CPU time (``time.process_time``: the process's CPU
over all its threads, which also counts the kernel's second thread against scorekit) are reported.
``--by-shape`` adds one row per shape of the mix (each shape's answers scored on their own).

    .venv/bin/python benches/bench_anls.py [--pairs 100000] [--pages 12] [--rounds 3] [--by-shape]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import warnings

from anls_star import anls_score

from scorekit.metrics.anls import anls_scores

WORDS = ("invoice total amount date paris london acme corp street road number customer order item "
         "price tax net gross berlin madrid due paid bank account reference").split()
KEYS = ("name", "city", "total", "date", "id", "iban", "vat")


def _noisy(r: random.Random, s: str) -> str:
    if not s or r.random() < 0.5:
        return s
    i = r.randrange(len(s))
    c = r.random()
    if c < 0.4:
        return s[:i] + r.choice("abcdefghijklmnopqrstuvwxyz0123456789") + s[i + 1:]
    if c < 0.7:
        return s[:i] + s[i + 1:]
    return s.upper() if c < 0.85 else f" {s}  "


def _phrase(r: random.Random) -> str:
    return " ".join(r.choice(WORDS) for _ in range(r.randint(1, 4)))


def _amount(r: random.Random) -> str:
    return f"{r.randint(1, 9999)}.{r.randint(0, 99):02d}"


def make_answers(n: int, seed: int = 17) -> tuple[list, list]:
    """``n`` (prediction, gold) answers in the mix described above."""
    r = random.Random(seed)
    preds, golds = [], []
    for _ in range(n):
        c = r.random()
        if c < 0.30:
            gold = _phrase(r)
            pred = _noisy(r, gold)
        elif c < 0.55:
            gold = tuple(_phrase(r) for _ in range(r.randint(2, 4)))
            pred = _noisy(r, r.choice(gold))
        elif c < 0.75:
            gold = [_phrase(r) for _ in range(r.randint(1, 6))]
            pred = [_noisy(r, x) for x in gold if r.random() < 0.9]
            r.shuffle(pred)
            if r.random() < 0.3:
                pred.append(_phrase(r))
        elif c < 0.90:
            gold = {k: _phrase(r) for k in r.sample(KEYS, r.randint(1, 5))}
            pred = {k: _noisy(r, v) for k, v in gold.items() if r.random() < 0.9}
            if r.random() < 0.2:
                pred["note"] = _phrase(r)
        else:
            items = [{"description": _phrase(r), "amount": _amount(r)} for _ in range(r.randint(1, 3))]
            total = _amount(r)
            gold = {"vendor": _phrase(r), "total": (total, total.replace(".", ",")), "items": items}
            pred = {"vendor": _noisy(r, gold["vendor"]), "total": total,
                    "items": [{k: _noisy(r, v) for k, v in item.items()} for item in items]}
            r.shuffle(pred["items"])
        preds.append(pred)
        golds.append(gold)
    return preds, golds


def shape_of(gold) -> str:
    """The shape of the mix a gold answer belongs to."""
    if isinstance(gold, str):
        return "plain strings"
    if isinstance(gold, tuple):
        return "alternatives (gold tuple)"
    if isinstance(gold, list):
        return "lists of strings"
    return "nested invoices" if "items" in gold else "dicts of strings"


def make_pages(n: int, seed: int = 5, n_chars: int = 3_000) -> tuple[list, list]:
    """``n`` page-length (prediction, gold) strings, 5 % of the prediction's characters replaced."""
    r = random.Random(seed)
    golds = [" ".join(r.choice(WORDS) for _ in range(n_chars // 6))[:n_chars] for _ in range(n)]
    preds = ["".join(r.choice("xyz") if r.random() < 0.05 else ch for ch in g) for g in golds]
    return preds, golds


def run(name: str, preds: list, golds: list, rounds: int) -> dict:
    anls_scores(preds[:100], golds[:100])  # warm-up: imports, first kernel call
    ours, ours_cpu = [], []
    for _ in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        values = anls_scores(preds, golds)
        ours.append(time.perf_counter() - start)
        ours_cpu.append(time.process_time() - start_cpu)
    start, start_cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = [anls_score(g, p) for p, g in zip(preds, golds)]
    theirs, theirs_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    mismatches = sum(a != b for a, b in zip(values.tolist(), reference))
    return {"name": name, "n": len(preds), "theirs": theirs, "ours": min(ours),
            "ours_median": statistics.median(ours), "theirs_cpu": theirs_cpu, "ours_cpu": min(ours_cpu),
            "mismatches": mismatches}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--by-shape", action="store_true", help="also one row per shape of the mix")
    args = parser.parse_args()
    load = os.getloadavg()
    preds, golds = make_answers(args.pairs)
    rows = [run("mixed answers", preds, golds, args.rounds)]
    if args.by_shape:
        shapes: dict = {}
        for pred, gold in zip(preds, golds):
            shape = shapes.setdefault(shape_of(gold), ([], []))
            shape[0].append(pred)
            shape[1].append(gold)
        rows += [run(f"– {name}", *shapes[name], args.rounds) for name in sorted(shapes)]
    rows.append(run("page-length strings (≈ 3,000 chars)", *make_pages(args.pages), args.rounds))
    print(f"load average before: {load[0]:.2f}, after: {os.getloadavg()[0]:.2f}\n")
    print("| workload | pairs | anls-star wall (CPU) | scorekit `anls_scores` wall, best; median (CPU) "
          "| ratio wall | ratio CPU | values equal |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        equal = "all" if row["mismatches"] == 0 else f"{row['n'] - row['mismatches']} of {row['n']}"
        print(f"| {row['name']} | {row['n']:,} | {row['theirs']:.2f} s ({row['theirs_cpu']:.2f} s) "
              f"| {row['ours'] * 1e3:.0f} ms; {row['ours_median'] * 1e3:.0f} ms ({row['ours_cpu'] * 1e3:.0f} ms) "
              f"| **{row['theirs'] / row['ours']:.0f}×** | {row['theirs_cpu'] / row['ours_cpu']:.0f}× | {equal} |")


if __name__ == "__main__":
    main()
