"""Side-by-side speed of scorekit's CER/WER against the peers a user would pick instead.

Everything is measured in one process run on the same data (100k mixed-script OCR-like line
pairs from ``benches/corpus.py``); each timing is the median of several repeats and each ratio
compares two medians of this run. Prints a Markdown report for benches/RESULTS.md.

    .venv/bin/python benches/compare_strings.py            # full run (a few minutes)
    .venv/bin/python benches/compare_strings.py --quick    # smaller sizes, fewer repeats
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jiwer  # noqa: E402
from rapidfuzz.distance import Levenshtein  # noqa: E402
from rapidfuzz.process import cpdist  # noqa: E402

import scorekit as ek  # noqa: E402
from corpus import make_pairs  # noqa: E402
from scorekit import batch  # noqa: E402
from scorekit._kernels import use_backend  # noqa: E402
from scorekit.text import join_lines_with_hyphenation  # noqa: E402


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def multiline_pairs(pairs, every: int = 2):
    """Turn every ``every``-th pair into a two-line, hyphen-broken transcription (joins with schwas
    nearby), so the schwa-forgiving path does real work."""
    gts, preds = [], []
    for k, (pred, ref, _) in enumerate(pairs):
        if k % every == 0 and len(ref) > 8:
            cut = len(ref) // 2
            gts.append(join_lines_with_hyphenation([ref[:cut] + "-", ref[cut:]]))
            preds.append(join_lines_with_hyphenation([pred[: len(pred) // 2] + "ը-", pred[len(pred) // 2:]]))
        else:
            gts.append(join_lines_with_hyphenation(ref))
            preds.append(join_lines_with_hyphenation(pred))
    return gts, preds


PEAK_RSS_CHILD = r"""
import sys, itertools
sys.path.insert(0, {benches!r})
from corpus import make_pairs
import scorekit as ek
base = make_pairs(3000, seed=7)
cases = itertools.islice(itertools.cycle(base), {n})
r = ek.evaluate(cases, metric="cer")
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking parent across exec.
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(r.n, r.aggregate, hwm // 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 20_000 if args.quick else 100_000
    repeats = 3 if args.quick else 5
    rss_pairs = 1_000_000 if args.quick else 10_000_000

    pairs = make_pairs(n, seed=1)
    hyps = [p for p, _, _ in pairs]
    refs = [r for _, r, _ in pairs]
    cases = [(p, r) for p, r, _ in pairs]
    rows = []

    def row(name, seconds, peer=None, peer_seconds=None, target=None):
        ratio = peer_seconds / seconds if peer_seconds else None
        rows.append((name, seconds, peer, peer_seconds, ratio, target))

    # Warm up (thread pools, first calls).
    ek.evaluate(cases[:1000], metric="cer")
    cpdist(hyps[:1000], refs[:1000], scorer=Levenshtein.distance, workers=-1)

    t_eval = median_time(lambda: ek.evaluate(cases, metric="cer"), repeats)
    t_jiwer = median_time(lambda: jiwer.cer(reference=refs, hypothesis=hyps), max(1, repeats // 2))
    t_cpdist = median_time(lambda: cpdist(hyps, refs, scorer=Levenshtein.distance, workers=-1), repeats)
    t_lev = median_time(lambda: batch.levenshtein(hyps, refs), repeats)
    t_wer = median_time(lambda: ek.evaluate(cases, metric="wer"), repeats)
    t_jiwer_wer = median_time(lambda: jiwer.wer(reference=refs, hypothesis=hyps), max(1, repeats // 2))
    row("evaluate(metric='cer'), full breakdown", t_eval, "jiwer.cer", t_jiwer, "≥ 50×")
    row("evaluate(metric='cer'), full breakdown", t_eval, "rapidfuzz cpdist (distances only, workers=-1)", t_cpdist, "≥ 1×")
    row("batch.levenshtein", t_lev, "rapidfuzz cpdist (workers=-1)", t_cpdist, "≥ 1×")
    row("evaluate(metric='wer'), full breakdown", t_wer, "jiwer.wer", t_jiwer_wer, "≥ 20×")

    gts, preds = multiline_pairs(pairs)
    plain_gt = [g.text for g in gts]
    plain_pred = [p.text for p in preds]
    t_plain = median_time(lambda: batch.cer(plain_pred, plain_gt), repeats)
    t_schwa = median_time(lambda: batch.schwa_cer(gts, preds), repeats)
    joins = sum(bool(g.joins) or bool(p.joins) for g, p in zip(gts, preds))
    rows.append((f"batch.schwa_cer ({joins:,} of {n:,} pairs with joins)", t_schwa, "batch.cer on the same texts",
                 t_plain, t_plain / t_schwa, "cost ≤ 2× (ratio ≥ 0.5)"))

    with use_backend("numba"):
        start = time.perf_counter()
        batch.cer(hyps[:10], refs[:10])
        batch.levenshtein(hyps[:10], refs[:10])
        compile_seconds = time.perf_counter() - start
        t_numba_cer = median_time(lambda: batch.cer(hyps, refs), repeats)
        t_numba_lev = median_time(lambda: batch.levenshtein(hyps, refs), repeats)
    t_rust_cer = median_time(lambda: batch.cer(hyps, refs), repeats)
    rows.append(("batch.cer, Numba backend", t_numba_cer, "batch.cer, Rust backend", t_rust_cer,
                 t_rust_cer / t_numba_cer, "Numba within 5× (ratio ≥ 0.2)"))
    rows.append(("batch.levenshtein, Numba backend", t_numba_lev, "batch.levenshtein, Rust backend", t_lev,
                 t_lev / t_numba_lev, "Numba within 5× (ratio ≥ 0.2)"))

    child = subprocess.run([sys.executable, "-c", PEAK_RSS_CHILD.format(benches=str(Path(__file__).parent), n=rss_pairs)],
                           capture_output=True, text=True, check=True)
    n_done, agg, peak_mb = child.stdout.split()
    elapsed_note = ""

    print(f"## CER/WER — {n:,} mixed-script OCR-like line pairs, {os.cpu_count()} cores, median of {repeats}\n")
    print("| scorekit | time | peer | peer time | speed-up | target |")
    print("|---|---|---|---|---|---|")
    for name, seconds, peer, peer_seconds, ratio, target in rows:
        print(f"| {name} | {seconds * 1e3:.1f} ms | {peer} | {peer_seconds * 1e3:.1f} ms | {ratio:.2f}× | {target} |")
    print(f"\nNumba first-call compile time (CER + distance kernels): {compile_seconds:.1f} s")
    print(f"\nPeak RSS of `evaluate(generator of {int(n_done):,} pairs, metric='cer')`: {peak_mb} MB "
          f"(aggregate {float(agg):.4f}){elapsed_note}")
    print(f"\nThis process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
