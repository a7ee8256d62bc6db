"""CER over grapheme clusters (``unit="grapheme"``) against code-point CER on the same pairs.

Two corpora of 100,000 short pairs (the OCR-like Latin/Armenian/CJK lines of ``corpus.py``, where
no cluster has more than one code point, and Devanagari lines, where most letters do: words of
random syllables from a 20,000-word vocabulary drawn with Zipf weights, OCR-like errors on syllables) and a few
page-length pairs of each kind; ``batch.cer`` with ``unit="char"`` and ``unit="grapheme"``, and the
readers alone (``_core.pack_texts`` vs ``_core.GraphemePacker().pack_texts``, both sides). Median
of ``--repeats`` runs, ``threads`` = all cores. Before timing, grapheme and code-point counts are
asserted equal on the corpus without multi-code-point clusters.

    .venv/bin/python benches/bench_graphemes.py [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from corpus import make_pairs, ocr_noise, reference_line  # noqa: E402
from scorekit import _core, batch  # noqa: E402

CONSONANTS = "कखगचजटडतदनपबमयरलवसहशष"
SIGNS = "ािीुूेैोौृ"


def devanagari_syllable(rng: random.Random) -> str:
    s = rng.choice(CONSONANTS)
    if rng.random() < 0.25:
        s += "\u094d" + rng.choice(CONSONANTS)
    if rng.random() < 0.6:
        s += rng.choice(SIGNS)
    if rng.random() < 0.1:
        s += "ं"
    return s


def devanagari_vocabulary(rng: random.Random, size: int = 20_000) -> list[list[str]]:
    return [[devanagari_syllable(rng) for _ in range(rng.randint(1, 4))] for _ in range(size)]


def devanagari_line(rng: random.Random, words: int, vocabulary: list[list[str]], cum_weights: list[float]) -> list[str]:
    """Words drawn from a fixed vocabulary with Zipf weights (1/rank), as in running text."""
    out = []
    for word in rng.choices(vocabulary, cum_weights=cum_weights, k=words):
        out.extend(word)
        out.append(" ")
    return out[:-1]


def devanagari_noise(rng: random.Random, syllables: list[str], rate: float) -> str:
    """OCR-like errors on syllables: a dropped vowel sign or virama, a substituted or dropped syllable."""
    out = []
    for s in syllables:
        r = rng.random()
        if r < rate * 0.4 and len(s) > 1:
            cut = rng.randrange(1, len(s))
            out.append(s[:cut] + s[cut + 1:])
        elif r < rate * 0.7:
            out.append(devanagari_syllable(rng))
        elif r < rate:
            continue
        else:
            out.append(s)
    return "".join(out)


def devanagari_pairs(n: int, seed: int, words: tuple[int, int]) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    vocabulary = devanagari_vocabulary(random.Random(0))
    weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocabulary))))
    preds, refs = [], []
    for _ in range(n):
        syl = devanagari_line(rng, rng.randint(*words), vocabulary, weights)
        refs.append("".join(syl))
        preds.append(devanagari_noise(rng, syl, rng.choice([0.0, 0.02, 0.05, 0.1, 0.2])))
    return preds, refs


def mixed_pages(n: int, seed: int, chars: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    preds, refs = [], []
    for k in range(n):
        script = ("latin", "armenian")[k % 2]
        lines, total = [], 0
        while total < chars:
            lines.append(reference_line(rng, script))
            total += len(lines[-1]) + 1
        ref = "\n".join(lines)
        refs.append(ref)
        preds.append(ocr_noise(rng, ref, script, rng.uniform(0.01, 0.10)))
    return preds, refs


def median_ms(fns, repeats: int) -> list[float]:
    """Median wall time of each of ``fns``, run alternately (so a change of load hits all alike)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [1000 * statistics.median(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10,000 short pairs, 1 repeat")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = 10_000 if args.quick else 100_000
    repeats = 1 if args.quick else args.repeats
    plain = make_pairs(n, seed=7)
    corpora = {
        f"{n:,} short OCR lines (Latin/Armenian/CJK, no multi-code-point cluster)":
            ([p for p, _, _ in plain], [r for _, r, _ in plain]),
        f"{n:,} short Devanagari lines": devanagari_pairs(n, 8, (3, 9)),
        "20 pages ≈ 10,000 chars (Latin/Armenian)": mixed_pages(20, 9, 10_000),
        "20 Devanagari pages ≈ 10,000 code points": devanagari_pairs(20, 10, (1500, 1500)),
    }
    preds, refs = corpora[next(iter(corpora))]
    by_char, by_grapheme = batch.cer(preds, refs), batch.cer(preds, refs, unit="grapheme")
    assert np.array_equal(by_char.edits, by_grapheme.edits) and np.array_equal(by_char.ref_len, by_grapheme.ref_len)
    print("| corpus | code points / clusters (ref) | CER char | CER grapheme | `batch.cer` char | `batch.cer` grapheme "
          "| ratio | pack char | pack grapheme |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, (preds, refs) in corpora.items():
        c = batch.cer(preds, refs)
        g = batch.cer(preds, refs, unit="grapheme")
        def pack_graphemes():
            packer = _core.GraphemePacker()
            packer.pack_texts(preds, "p")
            packer.pack_texts(refs, "r")

        t_char, t_graph, p_char, p_graph = median_ms(
            [lambda: batch.cer(preds, refs), lambda: batch.cer(preds, refs, unit="grapheme"),
             lambda: (_core.pack_texts(preds, "p"), _core.pack_texts(refs, "r")), pack_graphemes], repeats)
        print(f"| {label} | {int(c.ref_len.sum()):,} / {int(g.ref_len.sum()):,} | {c.corpus_rate:.4f} | "
              f"{g.corpus_rate:.4f} | {t_char:,.0f} ms | {t_graph:,.0f} ms | {t_graph / t_char:.2f}× | "
              f"{p_char:,.1f} ms | {p_graph:,.1f} ms |")


if __name__ == "__main__":
    main()
