"""Case benchmark scoring: scorekit.cases against pyconveyor 1.10's scorer on the same documents.

    .venv/bin/python benches/bench_cases.py [--cases 10000] [--seed 0] [--big 20] [--small 2000]

Both ends in one run. The small end first (``--small`` documents of each kind, one step each):
ordinary extraction documents — invoice headers with an address dict, a list of tags and 1, 3 or
5 line items; nested dicts without lists; scalar lists (authors, keywords) — scored by
``scorekit.cases.score_step`` on the current backend and by pyconveyor's ``_score_step``,
alternately, median of ``--rounds`` rounds each, in µs per document.

Then the large end: ``--cases`` invoice-like cases in memory: an ``extract`` step (vendor, dates,
totals, an address dict and ``line_items``, a list of 5–50 records of 10 fields: texts, ints,
floats, a boolean, a null) and a ``classify`` step; the actual outputs are the expected ones with
records shuffled, dropped and added and ~10% of the fields changed. Both sides score every case's
steps (pyconveyor through ``BenchmarkRunner._score_step``, the scorer its ``run()`` calls per step;
scorekit through ``scorekit.cases.score_case``, greedy and optimal), in one process, one after the
other; the case scores are checked to agree where no decision of docs/cases.md applies (reported
as the count of cases whose scores differ, all of them from decisions 15 and 20). Also times the
hard end: ``--big`` cases with 500-record lists, and (``--end-to-end``) the whole run of
``BenchmarkRunner`` over the same cases written as case directories with a saved-outputs
pipeline: discovery, loading, scoring and aggregation, with 1 and 2 worker processes.

``SCOREKIT_BACKEND=numba`` times the Numba backend, where steps are walked in Python.
pyconveyor is a benchmark oracle (``pip install pyconveyor==1.10.0``), never a scorekit dependency.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import statistics
import tempfile
import time
from pathlib import Path

from scorekit.cases import score_case

VENDORS = ("Acme Corp", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries", "Wayne Enterprises")
WORDS = ("steel", "bolt", "washer", "cable", "panel", "sensor", "relay", "bracket", "valve", "pump", "hose")
UNITS = ("pcs", "kg", "m", "box")


def _record(rng: random.Random, n: int) -> dict:
    qty = rng.randint(1, 40)
    price = round(rng.uniform(0.5, 400), 2)
    return {"sku": f"SKU-{rng.randint(0, 99999):05d}", "description": " ".join(rng.sample(WORDS, 3)),
            "quantity": qty, "unit_price": price, "amount": round(qty * price, 2), "unit": rng.choice(UNITS),
            "tax_rate": rng.choice((0.0, 0.07, 0.19, 0.2)), "line": n, "taxable": rng.random() < 0.8,
            "note": None}


def _expected(rng: random.Random, n_items: int) -> dict:
    items = [_record(rng, k) for k in range(n_items)]
    return {"extract": {"vendor": rng.choice(VENDORS), "invoice_date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                        "total": round(sum(i["amount"] for i in items), 2), "currency": rng.choice(("EUR", "USD")),
                        "address": {"street": f"{rng.randint(1, 200)} Main St", "city": rng.choice(("Berlin", "Paris")),
                                    "zip": f"{rng.randint(10000, 99999)}"},
                        "line_items": items},
            "classify": rng.choice(("invoice", "receipt", "credit_note"))}


def _actual(rng: random.Random, expected: dict) -> dict:
    actual = copy.deepcopy(expected)
    items = actual["extract"]["line_items"]
    for item in items:
        for key in item:
            if rng.random() < 0.1:
                item[key] = rng.choice(("?", 0, None, "x"))
    if rng.random() < 0.3 and items:
        items.pop(rng.randrange(len(items)))
    if rng.random() < 0.3:
        items.append(_record(rng, 99))
    rng.shuffle(items)
    if rng.random() < 0.2:
        actual["extract"]["vendor"] = actual["extract"]["vendor"].upper()
    if rng.random() < 0.1:
        actual["classify"] = "other"
    return actual


def build(n: int, seed: int, lengths: tuple[int, int]) -> list[tuple[dict, dict]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        expected = _expected(rng, rng.randint(*lengths))
        cases.append((expected, _actual(rng, expected)))
    return cases


def reference_scores(cases) -> tuple[list[float], float]:
    from pyconveyor import BenchmarkRunner

    runner = BenchmarkRunner(tempfile.mkdtemp(), pipelines=[])
    scores = []
    start = time.perf_counter()
    for expected, actual in cases:
        steps = [runner._score_step(name, actual[name], value) for name, value in expected.items()]
        scored = [s for s, status, _ in steps if status == "scored"]
        scores.append(sum(scored) / len(scored))
    return scores, time.perf_counter() - start


def scorekit_scores(cases, matching: str) -> tuple[list[float], float]:
    scores = []
    start = time.perf_counter()
    for expected, actual in cases:
        steps = score_case(expected, actual, matching=matching)
        scored = [s.score for s in steps if s.status == "scored"]
        scores.append(math.fsum(scored) / len(scored))
    return scores, time.perf_counter() - start


def compare(label: str, cases) -> None:
    score_case(*cases[0])  # imports, kernel warm-up
    score_case(*cases[0], matching="optimal")  # imports SciPy
    ref, t_ref = reference_scores(cases)
    ours, t_ours = scorekit_scores(cases, "greedy")
    opt, t_opt = scorekit_scores(cases, "optimal")
    differ = sum(1 for a, b in zip(ref, ours) if abs(a - b) > 1e-12)
    n = len(cases)
    print(f"| {label} | {n:,} | {t_ref:.2f} s ({t_ref / n * 1e3:.2f} ms/case) | {t_ours:.3f} s ({t_ours / n * 1e6:.0f} µs/case) "
          f"| **{t_ref / t_ours:.1f}×** | {t_opt:.3f} s (+{(t_opt - t_ours) / n * 1e6:.0f} µs/case) | {differ} "
          f"| {statistics.fmean(ours):.4f} / {statistics.fmean(opt):.4f} |", flush=True)


NAMES = ("A. Ahn", "B. Berg", "C. Cruz", "D. Diaz", "E. Eze", "F. Fox", "G. Gill", "H. Hahn")


def _invoice(rng: random.Random, n_items: int) -> dict:
    """An invoice header, an address dict, a list of tags and ``n_items`` line items."""
    return {"vendor": rng.choice(VENDORS), "number": f"INV-{rng.randint(0, 99999):05d}",
            "date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", "total": round(rng.uniform(1, 900), 2),
            "currency": rng.choice(("EUR", "USD")), "paid": rng.random() < 0.5,
            "address": {"street": f"{rng.randint(1, 200)} Main St", "city": rng.choice(("Berlin", "Paris")),
                        "zip": f"{rng.randint(10000, 99999)}"},
            "tags": rng.sample(WORDS, 3),
            "line_items": [{"sku": f"SKU-{rng.randint(0, 99999):05d}", "description": rng.choice(WORDS),
                            "quantity": rng.randint(1, 9), "unit_price": round(rng.uniform(0.5, 50), 2)}
                           for _ in range(n_items)]}


def _parties(rng: random.Random) -> dict:
    """Nested dicts only: buyer and seller with addresses, dates."""
    def party():
        return {"name": rng.choice(VENDORS), "vat": f"DE{rng.randint(10**8, 10**9 - 1)}",
                "address": {"street": f"{rng.randint(1, 200)} Main St", "city": rng.choice(("Berlin", "Paris")),
                            "zip": f"{rng.randint(10000, 99999)}", "country": rng.choice(("DE", "FR"))}}
    return {"number": f"INV-{rng.randint(0, 99999):05d}", "total": round(rng.uniform(1, 900), 2),
            "buyer": party(), "seller": party(), "dates": {"issued": "2024-03-01", "due": "2024-04-01"}}


def _paper(rng: random.Random) -> dict:
    """Scalar lists: authors and keywords beside a few fields."""
    return {"title": " ".join(rng.sample(WORDS, 4)), "year": rng.randint(1990, 2024),
            "doi": f"10.{rng.randint(1000, 9999)}/{rng.randint(0, 99999)}", "venue": rng.choice(VENDORS),
            "authors": rng.sample(NAMES, rng.randint(3, 6)), "keywords": rng.sample(WORDS, rng.randint(3, 8))}


def _near(rng: random.Random, value):
    """An extraction near ``value``: ~10% of the scalars changed, list items shuffled, one sometimes
    dropped or added, a key sometimes missing."""
    if isinstance(value, dict):
        return {k: _near(rng, v) for k, v in value.items() if rng.random() > 0.03}
    if isinstance(value, list):
        items = [_near(rng, v) for v in value]
        if items and rng.random() < 0.2:
            items.pop(rng.randrange(len(items)))
        if rng.random() < 0.2:
            items.append(copy.deepcopy(rng.choice(value)) if value and isinstance(value[0], dict) else rng.choice(WORDS))
        rng.shuffle(items)
        return items
    if rng.random() < 0.1:
        return value.upper() if isinstance(value, str) else rng.choice(("?", 0, None))
    return value


SMALL_KINDS = {"invoice, 1 line item": lambda rng: _invoice(rng, 1),
               "invoice, 3 line items": lambda rng: _invoice(rng, 3),
               "invoice, 5 line items": lambda rng: _invoice(rng, 5),
               "nested dicts, no lists": _parties,
               "scalar lists (authors, keywords)": _paper}


def small_documents(kind: str, n: int, seed: int) -> list[tuple[dict, dict]]:
    """``n`` (expected, actual) pairs of the small document kind ``kind`` (a key of SMALL_KINDS)."""
    rng = random.Random(f"{seed}-{kind}")
    docs = []
    for _ in range(n):
        expected = SMALL_KINDS[kind](rng)
        docs.append((expected, _near(rng, expected)))
    return docs


def _leaves(value) -> int:
    return sum(_leaves(v) for v in value.values()) if isinstance(value, dict) else 1


def small_end(n: int, seed: int, rounds: int) -> None:
    """Per-document times of single steps at the small end, both kits alternately, median of ``rounds``."""
    from pyconveyor import BenchmarkRunner

    from scorekit._kernels import current_backend
    from scorekit.cases import score_step

    runner = BenchmarkRunner(tempfile.mkdtemp(), pipelines=[])
    print(f"| document (scorekit backend: {current_backend()}) | fields scored | pyconveyor 1.10 `_score_step` "
          "| scorekit `score_step` | ratio | steps whose score differs (decisions 15, 20) |")
    print("|---|---|---|---|---|---|")
    for label in SMALL_KINDS:
        docs = small_documents(label, n, seed)
        ours = [score_step(a, e).score for e, a in docs]
        ref = [runner._score_step("step", a, e)[0] for e, a in docs]
        differ = sum(1 for x, y in zip(ours, ref) if abs(x - y) > 1e-12)
        times_ours, times_ref = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            for e, a in docs:
                score_step(a, e)
            times_ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            for e, a in docs:
                runner._score_step("step", a, e)
            times_ref.append(time.perf_counter() - start)
        ours, ref = statistics.median(times_ours), statistics.median(times_ref)
        print(f"| {label} | {statistics.fmean(_leaves(e) for e, _ in docs):.1f} | {ref / n * 1e6:.1f} µs "
              f"| {ours / n * 1e6:.1f} µs | **{ref / ours:.2f}×** | {differ} |", flush=True)


#: Work per case of the callable pipeline in the whole-run rows (a stand-in for a model call).
PIPELINE_SECONDS = 0.005


def answer_slowly(case_input: dict) -> dict:
    """A pipeline that takes PIPELINE_SECONDS of CPU, then answers with the saved output."""
    until = time.perf_counter() + PIPELINE_SECONDS
    while time.perf_counter() < until:
        pass
    return case_input["answer"]


def _write(cases, root: Path) -> tuple[Path, Path]:
    bench, saved = root / "bench", root / "saved"
    saved.mkdir(parents=True)
    for k, (expected, actual) in enumerate(cases):
        case = bench / f"case-{k:05d}"
        case.mkdir(parents=True)
        (case / "input.json").write_text(json.dumps({"document": f"invoice {k}", "answer": actual}))
        (case / "expected.json").write_text(json.dumps(expected))
        (saved / f"case-{k:05d}.json").write_text(json.dumps(actual))
    return bench, saved


def end_to_end(cases, slow_cases: int = 2000) -> None:
    """Write the cases as directories plus saved outputs, then time whole runs: the saved outputs
    over every case, the slow callable over the first ``slow_cases``."""
    from scorekit.cases import BenchmarkRunner

    slow = f"py:{__name__ if __name__ != '__main__' else 'bench_cases'}:answer_slowly"
    print("\n| whole run | cases | discovery + loading | run() | total |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as root:
        full, saved = _write(cases, Path(root) / "full")
        small, _ = _write(cases[:slow_cases], Path(root) / "small")
        for label, bench, pipeline, jobs in (
                ("saved outputs, jobs=1", full, f"saved:{saved}", 1),
                ("saved outputs, jobs=2", full, f"saved:{saved}", 2),
                (f"callable taking {PIPELINE_SECONDS * 1e3:g} ms per case, jobs=1", small, slow, 1),
                (f"callable taking {PIPELINE_SECONDS * 1e3:g} ms per case, jobs=2", small, slow, 2)):
            start = time.perf_counter()
            runner = BenchmarkRunner(bench, [pipeline], jobs=jobs, pass_threshold=0.9)
            loaded = time.perf_counter()
            summary = runner.run()
            done = time.perf_counter()
            count = len(summary.pipelines[0].cases)
            assert count and all(c.status == "success" for c in summary.pipelines[0].cases)
            print(f"| {label} | {count:,} | {loaded - start:.2f} s | {done - loaded:.2f} s | {done - start:.2f} s |",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--big", type=int, default=20, help="cases with 500-record lists (the hard end)")
    ap.add_argument("--end-to-end", action="store_true", help="also time whole BenchmarkRunner runs")
    ap.add_argument("--small", type=int, default=2000, help="documents of each small kind (0: skip the small end)")
    ap.add_argument("--rounds", type=int, default=7, help="timing rounds at the small end (median taken)")
    args = ap.parse_args()
    if args.small:
        small_end(args.small, args.seed, args.rounds)
        print()
    print("| documents | cases | pyconveyor 1.10 `_score_step` | scorekit greedy | ratio | scorekit optimal (added) "
          "| cases whose score differs (decisions 15, 20) | mean greedy / optimal |")
    print("|---|---|---|---|---|---|---|---|")
    all_cases = build(args.cases, args.seed, (5, 50))
    compare("line_items 5–50 records", all_cases)
    for low, high in ((5, 15), (36, 50)):
        subset = [c for c in all_cases if low <= len(c[0]["extract"]["line_items"]) <= high]
        compare(f"… only {low}–{high} records", subset)
    if args.big:
        compare("line_items 500 records", build(args.big, args.seed + 1, (500, 500)))
    if args.end_to_end:
        end_to_end(all_cases)


if __name__ == "__main__":
    main()
