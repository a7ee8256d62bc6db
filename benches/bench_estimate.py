"""estimate_quality over a corpus of fields with three engines each, side by side with the
reference kit ``ek`` in one run: ek's per-field ``estimate_quality`` loop, scorekit's loop, and
scorekit's ``estimate_quality_batch`` (one compiled ROVER batch; the median of ``--repeat`` runs). Every report
is checked equal.

    .venv/bin/python benches/bench_estimate.py [--fields 100000]
"""

from __future__ import annotations

import argparse
import random

import ek
from bench_iaa import timed

import scorekit as sk

WORDS = ["INV", "2024", "0117", "ACME", "GmbH", "Berlin", "total", "12.50", "EUR", "Straße", "Nº", "4111"]


def corpus(n: int, seed: int = 15) -> tuple[list[str], list[list[str]]]:
    """``n`` field values (1–6 words) and, for each, two other engines' readings with typos."""
    rng = random.Random(seed)
    values, sources = [], []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randrange(1, 7))]
        value = " ".join(words)
        others = []
        for _ in range(2):
            noisy = [w if rng.random() > 0.2 else w[:-1] + "x" for w in words]
            others.append(" ".join(noisy))
        values.append(value)
        sources.append(others)
    return values, sources


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fields", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    values, sources = corpus(args.fields)
    ek_s, theirs = timed(lambda: [ek.estimate_quality(v, sources=s) for v, s in zip(values, sources)], 1)
    loop_s, ours_loop = timed(lambda: [sk.estimate_quality(v, sources=s) for v, s in zip(values, sources)], 1)
    batch_s, ours = timed(lambda: sk.estimate_quality_batch(values, sources=sources), args.repeat)
    same = all(a.raw_signals == b.raw_signals == c.raw_signals and a.calibrated_confidence == b.calibrated_confidence
               for a, b, c in zip(ours, ours_loop, theirs))
    print("| operation | fields | ek | scorekit | ratio | identical |")
    print("|---|---|---|---|---|---|")
    print(f"| `estimate_quality` per field (loop) | {args.fields:,} | {ek_s:.2f} s | {loop_s:.2f} s | "
          f"**{ek_s / loop_s:.1f}×** | {'yes' if same else 'NO'} |")
    print(f"| `estimate_quality_batch` (one call) | {args.fields:,} | {ek_s:.2f} s | {batch_s * 1000:.0f} ms | "
          f"**{ek_s / batch_s:.1f}×** | {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
