"""Side-by-side speed of scorekit on page-length OCR text (issue #12) against its peers.

Everything is measured in one process run on the same generated pages: mixed Latin and Armenian
pages of 2,000–20,000 characters at 1–10 % character error (a uniform and a skewed length mix), and
1,000 kit pages of ≈ 3,000 characters. Each timing is the median of several repeats; each ratio
compares two medians of this run. Counts are checked against jiwer and rapidfuzz before timing.
Prints a Markdown report for benches/RESULTS.md.

    .venv/bin/python benches/bench_ocr_pages.py            # full run (several minutes)
    .venv/bin/python benches/bench_ocr_pages.py --quick    # fewer pairs, one repeat
    .venv/bin/python benches/bench_ocr_pages.py --dinglehopper /path/to/venv/bin/python

``--dinglehopper`` names a Python that has dinglehopper installed (it is not a scorekit
dependency); its CER runs there in a child process on the same pairs, written as plain text files.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jiwer  # noqa: E402
import numpy as np  # noqa: E402
from rapidfuzz.distance import Levenshtein  # noqa: E402
from rapidfuzz.process import cpdist  # noqa: E402

from corpus import ARMENIAN, ocr_noise, reference_line  # noqa: E402
from scorekit import batch  # noqa: E402
from scorekit.text import join_lines_with_hyphenation  # noqa: E402

SCRIPTS = ("latin", "armenian")


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def page_lines(rng: random.Random, script: str, n_chars: int) -> list[str]:
    """Reference lines of one script, about ``n_chars`` characters in all."""
    lines, total = [], 0
    while total < n_chars:
        line = reference_line(rng, script)
        lines.append(line)
        total += len(line) + 1
    return lines


def make_page_pairs(n: int, seed: int, skewed: bool) -> tuple[list[str], list[str]]:
    """``n`` (prediction, reference) pages: uniform lengths 2,000–20,000 characters, or (skewed)
    90 % of 2,000–3,000 and 10 % of 18,000–20,000 characters, so the long pages dominate the work.
    Each page is one script; its error rate is drawn from 1–10 %."""
    rng = random.Random(seed)
    preds, refs = [], []
    for k in range(n):
        script = SCRIPTS[k % 2]
        if skewed:
            length = rng.randint(18_000, 20_000) if rng.random() < 0.1 else rng.randint(2_000, 3_000)
        else:
            length = rng.randint(2_000, 20_000)
        ref = "\n".join(page_lines(rng, script, length))
        refs.append(ref)
        preds.append(ocr_noise(rng, ref, script, rng.uniform(0.01, 0.10)))
    return preds, refs


def make_hyphenated_pages(n: int, seed: int, n_chars: int) -> tuple[list[list[str]], list[list[str]]]:
    """``n`` Armenian (gt lines, prediction lines) pages of about ``n_chars`` characters: every
    fourth line ends in a word broken by a hyphen, and at half of those breaks the prediction has an
    extra schwa before the hyphen (the case the schwa-forgiving CER forgives)."""
    rng = random.Random(seed)
    gts, preds = [], []
    for _ in range(n):
        gt_lines, pred_lines = [], []
        for k, line in enumerate(page_lines(rng, "armenian", n_chars)):
            pred = ocr_noise(rng, line, "armenian", rng.uniform(0.01, 0.10)).replace("\n", " ")
            if k % 4 == 3:
                extra = "".join(rng.choice(ARMENIAN) for _ in range(3))
                line, pred = line + extra + "-", pred + extra + ("ը-" if rng.random() < 0.5 else "-")
            gt_lines.append(line)
            pred_lines.append(pred)
        gts.append(gt_lines)
        preds.append(pred_lines)
    return gts, preds


def editops_counts(pairs: list[tuple[str, str]]) -> np.ndarray:
    """(S, D, I) of each (prediction, reference) pair from rapidfuzz's editops, ref → prediction."""
    out = np.zeros((len(pairs), 3), dtype=np.int64)
    for k, (pred, ref) in enumerate(pairs):
        s = d = i = 0
        for tag, _, _ in Levenshtein.editops(ref, pred).as_list():
            if tag == "replace":
                s += 1
            elif tag == "delete":
                d += 1
            else:
                i += 1
        out[k] = (s, d, i)
    return out


def editops_pool(pool: ProcessPoolExecutor, preds: list[str], refs: list[str], workers: int) -> np.ndarray:
    """The editops loop spread over ``workers`` processes (chunks of interleaved pairs, so long and
    short pages are shared out evenly); includes the cost of shipping texts to the workers."""
    pairs = list(zip(preds, refs))
    chunks = [pairs[w::workers * 4] for w in range(workers * 4)]
    results = list(pool.map(editops_counts, chunks))
    out = np.zeros((len(pairs), 3), dtype=np.int64)
    for w, counts in enumerate(results):
        out[w::workers * 4] = counts
    return out


def verify(preds: list[str], refs: list[str], sample: int) -> None:
    """Assert that batch.cer's S/D/I equal jiwer's and the editops loop's, and its edits equal
    rapidfuzz's distance (on edge-stripped texts: jiwer strips edge whitespace)."""
    p, r = [x.strip() for x in preds[:sample]], [x.strip() for x in refs[:sample]]
    got = batch.cer(p, r)
    for k in range(len(p)):
        ref_chars = jiwer.process_characters(r[k], p[k])
        assert (got.substitutions[k], got.deletions[k], got.insertions[k]) == (
            ref_chars.substitutions, ref_chars.deletions, ref_chars.insertions), k
        assert got.ref_len[k] == len(r[k])
    assert got.edits.tolist() == cpdist(p, r, scorer=Levenshtein.distance, workers=-1).tolist()
    ops = editops_counts(list(zip(p, r)))
    assert ops.tolist() == np.stack([got.substitutions, got.deletions, got.insertions], axis=1).tolist()


def cer_rows(label: str, preds: list[str], refs: list[str], repeats: int, workers: int,
             pool: ProcessPoolExecutor) -> list[tuple]:
    pairs = list(zip(preds, refs))
    batch.cer(preds[:20], refs[:20])
    cpdist(preds[:20], refs[:20], scorer=Levenshtein.distance, workers=workers)
    t_cer_1 = median_time(lambda: batch.cer(preds, refs, threads=1), repeats)
    t_cer_n = median_time(lambda: batch.cer(preds, refs, threads=workers), repeats)
    t_ops_1 = median_time(lambda: editops_counts(pairs), repeats)
    t_ops_n = median_time(lambda: editops_pool(pool, preds, refs, workers), repeats)
    t_cp_1 = median_time(lambda: cpdist(preds, refs, scorer=Levenshtein.distance, workers=1), repeats)
    t_cp_n = median_time(lambda: cpdist(preds, refs, scorer=Levenshtein.distance, workers=workers), repeats)
    t_lev_n = median_time(lambda: batch.levenshtein(preds, refs, threads=workers), repeats)
    return [
        (f"{label}: batch.cer, threads=1", t_cer_1, "rapidfuzz editops loop, 1 process", t_ops_1, "≥ 3×"),
        (f"{label}: batch.cer, threads={workers}", t_cer_n, f"editops loop, {workers} processes", t_ops_n, "≥ 3×"),
        (f"{label}: batch.cer, threads=1", t_cer_1, "rapidfuzz cpdist, workers=1 (distance only)", t_cp_1, "≥ 1.5×"),
        (f"{label}: batch.cer, threads={workers}", t_cer_n, f"cpdist, workers={workers} (distance only)", t_cp_n,
         "≥ 1.5×"),
        (f"{label}: batch.levenshtein, threads={workers} (distance only)", t_lev_n,
         f"cpdist, workers={workers}", t_cp_n, "(info)"),
    ]


KIT_CHILD = r"""
import random, sys, time
sys.path.insert(0, {benches!r})
from bench_ocr_pages import make_kit_pages
from scorekit.ocr_pages.evaluation.text_metrics import compute_text_metrics_batch, join_box_lines_with_hyphenation
gts, preds = make_kit_pages({n}, seed=5)
start = time.perf_counter()
gt_texts = [join_box_lines_with_hyphenation(g) for g in gts]
metrics = compute_text_metrics_batch(gt_texts, preds, threads={threads})
elapsed = time.perf_counter() - start
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(elapsed, hwm // 1024, sum(m.char_edit_distance for m in metrics))
"""

DINGLE_CHILD = r"""
import sys, time
from pathlib import Path
from dinglehopper.character_error_rate import character_error_rate_n
from dinglehopper.ocr_files import plain_extract
root = Path(sys.argv[1])
start = time.perf_counter()
total = 0
for k in range(int(sys.argv[2])):
    gt = plain_extract(str(root / f"{{k}}.gt.txt"))
    ocr = plain_extract(str(root / f"{{k}}.ocr.txt"))
    cer, n = character_error_rate_n(gt, ocr)
    total += round(cer * n)
print(time.perf_counter() - start, total)
"""


def make_kit_pages(n: int, seed: int) -> tuple[list[str], list[str]]:
    """``n`` kit pages of ≈ 3,000 characters in ≈ 60 boxes: the gt is the boxes' lines (with
    hyphen breaks, joined by the kit), the prediction one plain text; half Latin, half Armenian."""
    hyph_gts, hyph_preds = make_hyphenated_pages(n // 2, seed, 3_000)
    rng = random.Random(seed + 1)
    gts = ["\n".join(lines) for lines in hyph_gts]
    preds = ["\n".join(lines) for lines in hyph_preds]
    for _ in range(n - n // 2):
        ref = "\n".join(page_lines(rng, "latin", 3_000))
        gts.append(ref)
        preds.append(ocr_noise(rng, ref, "latin", rng.uniform(0.01, 0.10)))
    return gts, preds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--dinglehopper", help="a Python interpreter with dinglehopper installed")
    parser.add_argument("--dingle-pairs", type=int, default=100,
                        help="kit pages dinglehopper scores (its time is extrapolated per pair)")
    args = parser.parse_args()
    n = 200 if args.quick else 1_000
    repeats = 1 if args.quick else 3
    workers = os.cpu_count() or 1
    load_before = os.getloadavg()

    preds, refs = make_page_pairs(n, seed=1, skewed=False)
    skew_preds, skew_refs = make_page_pairs(n, seed=2, skewed=True)
    verify(preds, refs, sample=40)
    verify(skew_preds, skew_refs, sample=40)

    rows = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        editops_pool(pool, preds[:8], refs[:8], workers)  # start the workers
        rows += cer_rows("uniform", preds, refs, repeats, workers, pool)
        rows += cer_rows("skewed", skew_preds, skew_refs, repeats, workers, pool)

    # Schwa-forgiving CER against plain CER on the same joined Armenian pages.
    hyph_gts, hyph_preds = make_hyphenated_pages(n, seed=3, n_chars=6_000)
    gts = [join_lines_with_hyphenation(g) for g in hyph_gts]
    jpreds = [join_lines_with_hyphenation(p) for p in hyph_preds]
    plain_gt, plain_pred = [g.text for g in gts], [p.text for p in jpreds]
    batch.schwa_cer(gts[:10], jpreds[:10])
    t_plain = median_time(lambda: batch.cer(plain_pred, plain_gt), repeats)
    t_schwa = median_time(lambda: batch.schwa_cer(gts, jpreds), repeats)
    t_plain_lev = median_time(lambda: batch.levenshtein(plain_pred, plain_gt), repeats)
    joins = sum(len(g.joins) + len(p.joins) for g, p in zip(gts, jpreds))
    schwa_rows = [
        (f"batch.schwa_cer ({n:,} Armenian pages ≈ 6,000 chars, {joins:,} joins)", t_schwa,
         "batch.cer on the same texts", t_plain, "schwa ≤ 1.5× plain"),
        ("batch.schwa_cer (same pages)", t_schwa, "batch.levenshtein on the same texts", t_plain_lev, "(info)"),
    ]

    # The kit's text metrics over 1,000 pages, in a fresh process for an honest peak RSS.
    kit = subprocess.run([sys.executable, "-c", KIT_CHILD.format(benches=str(Path(__file__).parent), n=1_000,
                                                                 threads=workers)],
                         capture_output=True, text=True, check=True)
    kit_seconds, kit_peak_mb, kit_edits = kit.stdout.split()
    kit_seconds = float(kit_seconds)

    dingle = None
    if args.dinglehopper:
        kit_gts, kit_preds = make_kit_pages(1_000, seed=5)
        m = min(args.dingle_pairs, len(kit_gts))
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(m):
                # The kit joins hyphenated gt lines; dinglehopper gets the same joined text.
                Path(tmp, f"{k}.gt.txt").write_text(join_lines_with_hyphenation(kit_gts[k]).text, encoding="utf-8")
                Path(tmp, f"{k}.ocr.txt").write_text(kit_preds[k], encoding="utf-8")
            out = subprocess.run([args.dinglehopper, "-c", DINGLE_CHILD.format(), tmp, str(m)],
                                 capture_output=True, text=True, check=True)
        d_seconds, d_edits = out.stdout.split()
        dingle = (m, float(d_seconds), int(d_edits))

    load_after = os.getloadavg()
    print(f"## OCR pages — {n:,} page pairs, {workers} cores, median of {repeats}\n")
    print(f"Load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} "
          f"(1-min; the machine is shared)\n")
    lengths = np.array([len(r) for r in refs])
    skew_lengths = np.array([len(r) for r in skew_refs])
    print(f"Uniform pages: reference length {lengths.min():,}–{lengths.max():,} chars, "
          f"mean {lengths.mean():,.0f}; skewed: mean {skew_lengths.mean():,.0f}, "
          f"{(skew_lengths > 15_000).sum()} pages ≥ 15,000 chars hold "
          f"{skew_lengths[skew_lengths > 15_000].sum() / skew_lengths.sum():.0%} of the characters.\n")
    print("| scorekit | time | peer | peer time | speed-up | target |")
    print("|---|---|---|---|---|---|")
    for name, seconds, peer, peer_seconds, target in rows:
        print(f"| {name} | {seconds * 1e3:.0f} ms | {peer} | {peer_seconds * 1e3:.0f} ms | "
              f"{peer_seconds / seconds:.2f}× | {target} |")
    for name, seconds, peer, peer_seconds, target in schwa_rows:
        print(f"| {name} | {seconds * 1e3:.0f} ms | {peer} | {peer_seconds * 1e3:.0f} ms | "
              f"cost {seconds / peer_seconds:.2f}× | {target} |")
    if dingle:
        m, d_seconds, _ = dingle
        per_pair = d_seconds / m
        print(f"| compute_text_metrics_batch, 1,000 kit pages | {kit_seconds * 1e3:.0f} ms | "
              f"dinglehopper CER ({m} pairs, extrapolated to 1,000) | {per_pair * 1e6:.0f} ms | "
              f"{per_pair * 1e3 / kit_seconds:.0f}× | ≥ 50× |")
    print(f"\nKit text metrics: `compute_text_metrics_batch` over 1,000 pages (≈ 3,000 chars, half Armenian "
          f"with hyphen joins), threads={workers}: {kit_seconds:.2f} s = {1_000 / kit_seconds:,.0f} pages/s, "
          f"peak RSS of the process {kit_peak_mb} MB (plain + forgiving edits {kit_edits}).")
    if dingle:
        m, d_seconds, d_edits = dingle
        print(f"\ndinglehopper: {m} of those pairs scored one by one through its Python API "
              f"(`plain_extract` of the text files + `character_error_rate_n`) in {d_seconds:.2f} s "
              f"({d_seconds / m * 1e3:.1f} ms per pair; Σ edits {d_edits}).")


if __name__ == "__main__":
    main()
