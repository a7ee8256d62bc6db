"""Schwa-forgiving CER against plain CER on page-length Armenian text with many hyphen joins
(issue #12; the schwa section of bench_ocr_pages.py, on its own and with alternating calls).

The pages are those of ``bench_ocr_pages.py``: 1,000 joined Armenian pages of ≈ 6,000 characters
(``make_hyphenated_pages(n, seed=3, n_chars=6_000)``). Each round times ``batch.schwa_cer``,
``batch.cer`` and ``batch.levenshtein`` one after the other on the same texts, so a change in the
machine's load hits all three; the report gives the median of each and the median of the per-round
ratios, with the load average before and after.

    .venv/bin/python benches/bench_schwa.py [--pages 1000] [--rounds 5] [--threads 1 2]
    .venv/bin/python benches/bench_schwa.py --dump pages.bin   # packed pages for the Rust A/B:
    cargo run --release -p scorekit-kernels --example schwa_ab -- pages.bin 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from bench_ocr_pages import make_hyphenated_pages  # noqa: E402
from scorekit import batch  # noqa: E402
from scorekit.text import SCHWA_CHARS, _pack_side, _schwa_codes, join_lines_with_hyphenation  # noqa: E402


def dump(path: str, gts, preds) -> None:
    """The packed pages as ``len, itemsize, bytes`` records (see rust/kernels/examples/schwa_ab.rs)."""
    gv, go, gjv, gjo = _pack_side(gts, None, "gts", "gt_joins")
    pv, po, pjv, pjo = _pack_side(preds, None, "preds", "pred_joins")
    with open(path, "wb") as f:
        for a in (go, gv, po, pv, gjo, gjv, pjo, pjv, _schwa_codes(SCHWA_CHARS)):
            a = np.ascontiguousarray(a)
            f.write(np.int64(len(a)).tobytes() + np.int64(a.dtype.itemsize).tobytes() + a.tobytes())


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--dump", help="write the packed pages here and stop")
    args = parser.parse_args()

    hyph_gts, hyph_preds = make_hyphenated_pages(args.pages, seed=3, n_chars=6_000)
    gts = [join_lines_with_hyphenation(g) for g in hyph_gts]
    preds = [join_lines_with_hyphenation(p) for p in hyph_preds]
    if args.dump:
        dump(args.dump, gts, preds)
        return
    plain_gt, plain_pred = [g.text for g in gts], [p.text for p in preds]
    joins = sum(len(g.joins) + len(p.joins) for g, p in zip(gts, preds))
    chars = sum(len(t) for t in plain_gt)
    batch.schwa_cer(gts[:10], preds[:10])
    batch.cer(plain_pred[:10], plain_gt[:10])

    load_before = os.getloadavg()
    print(f"{args.pages:,} Armenian pages, {chars:,} gt characters, {joins:,} joins; "
          f"{args.rounds} rounds; load average {load_before[0]:.2f} / {load_before[1]:.2f}")
    print()
    print("| threads | `batch.schwa_cer` | `batch.cer` | `batch.levenshtein` "
          "| schwa / cer (median of rounds, range) | schwa / levenshtein |")
    print("|---|---|---|---|---|---|")
    for threads in args.threads:
        t_schwa, t_cer, t_lev = [], [], []
        for _ in range(args.rounds):
            t_schwa.append(timed(lambda: batch.schwa_cer(gts, preds, threads=threads)))
            t_cer.append(timed(lambda: batch.cer(plain_pred, plain_gt, threads=threads)))
            t_lev.append(timed(lambda: batch.levenshtein(plain_pred, plain_gt, threads=threads)))
        ratios = [s / c for s, c in zip(t_schwa, t_cer)]
        ratios_lev = [s / c for s, c in zip(t_schwa, t_lev)]
        ms = lambda xs: f"{statistics.median(xs) * 1e3:,.0f} ms"  # noqa: E731
        print(f"| {threads} | {ms(t_schwa)} | {ms(t_cer)} | {ms(t_lev)} | "
              f"**{statistics.median(ratios):.2f}×** ({min(ratios):.2f}–{max(ratios):.2f}) | "
              f"{statistics.median(ratios_lev):.2f}× |")
    load_after = os.getloadavg()
    print()
    print(f"load average at the end {load_after[0]:.2f} / {load_after[1]:.2f}")


if __name__ == "__main__":
    main()
