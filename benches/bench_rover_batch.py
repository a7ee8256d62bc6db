"""Side-by-side speed of ROVER agreement over a corpus of fields: scorekit's ``agreement_batch`` (one
kernel call), scorekit's ``AgreementSignal`` called per field, and the reference kit's.

Every field has three engines' readings of a short value (1–6 tokens: invoice numbers, dates,
amounts, names) with OCR-like noise (a confused character, a dropped or split token). The rows
are plain strings (the compiled reader) and OCR-result-shaped objects with word confidences (the
Python reader). Each time is the median of several repeats of the whole corpus (one run past a
second); every row also says whether all results are identical to ek's, bit for bit.

    .venv/bin/python benches/bench_rover_batch.py              # 100,000 fields (about 20 s)
    .venv/bin/python benches/bench_rover_batch.py --n 10000    # a quick run
"""

from __future__ import annotations

import argparse
import platform
import random
from dataclasses import dataclass
from typing import Optional

import ek
import ek.qe

from bench_iaa import timed  # median of repeats (one call past a second)
from scorekit import _kernels
from scorekit.qe.rover import AgreementSignal, agreement_batch

CONFUSIONS = {"0": "O", "O": "0", "1": "l", "l": "1", "5": "S", "S": "5", "8": "B", "e": "c", "m": "rn", ".": ","}
NAMES = ["ACME", "Corp", "GmbH", "Müller", "Zürich", "Hauptstraße", "Ltd", "Société", "Générale", "Rossi", "SpA"]


@dataclass
class Block:
    text: str
    confidence: Optional[float] = None


@dataclass
class OcrResult:
    text: str
    mean_confidence: Optional[float] = None
    blocks: tuple = ()


def field_value(rnd: random.Random) -> str:
    kind = rnd.randrange(5)
    if kind == 0:
        return f"INV-{rnd.randrange(2020, 2026)}-{rnd.randrange(100000):05d}"
    if kind == 1:
        return f"{rnd.randrange(1, 29):02d}.{rnd.randrange(1, 13):02d}.{rnd.randrange(2020, 2026)}"
    if kind == 2:
        return f"{rnd.randrange(1, 10**5)}.{rnd.randrange(100):02d} {rnd.choice(['EUR', 'USD', 'CHF'])}"
    if kind == 3:
        return " ".join(rnd.choice(NAMES) for _ in range(rnd.randrange(1, 5)))
    return " ".join(f"{rnd.randrange(1000)}" for _ in range(rnd.randrange(3, 7)))


def reading(rnd: random.Random, value: str) -> str:
    """One engine's OCR of ``value``: each token may lose a character to a confusion, vanish or split."""
    tokens = []
    for token in value.split():
        if rnd.random() < 0.15:
            k = rnd.randrange(len(token))
            token = token[:k] + CONFUSIONS.get(token[k], token[k]) + token[k + 1:]
        r = rnd.random()
        if r < 0.04:
            continue
        if r < 0.07 and len(token) > 3:
            tokens.extend((token[:2], token[2:]))
        else:
            tokens.append(token)
    return " ".join(tokens)


def corpus(n: int) -> tuple[list[list[str]], list[list[OcrResult]]]:
    """``n`` fields × 3 engines, as strings and as OCR results with word confidences."""
    rnd = random.Random(16)
    texts, ocr = [], []
    for _ in range(n):
        value = field_value(rnd)
        engines = [reading(rnd, value) for _ in range(3)]
        texts.append(engines)
        ocr.append([OcrResult(t, round(rnd.uniform(0.6, 1.0), 2),
                              tuple(Block(w, round(rnd.uniform(0.3, 1.0), 2)) for w in t.split())) for t in engines])
    return texts, ocr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="fields (default 100,000)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    texts, ocr = corpus(args.n)
    tokens = sum(len(h.split()) for item in texts for h in item)
    print(f"Python {platform.python_version()}, ek {ek.__version__}, {platform.machine()}, "
          f"{_kernels.available_cores()} cores; {args.n:,} fields × 3 engines, {tokens:,} tokens\n")
    print("| input | ek `AgreementSignal` per field | scorekit `AgreementSignal` per field | "
          "`agreement_batch` | batch vs ek | batch vs per field | identical to ek |")
    print("|---|---|---|---|---|---|---|")
    ek_signal, signal = ek.qe.AgreementSignal(), AgreementSignal()
    rows = [("strings", texts, {}, "rust"), ("strings, 1 thread", texts, {"threads": 1}, "rust"),
            ("strings, Numba backend", texts, {}, "numba"), ("OCR results with word confidences", ocr, {}, "rust")]
    ek_times: dict[int, tuple[float, list]] = {}
    for label, items, options, backend in rows:
        if id(items) not in ek_times:
            ek_times[id(items)] = timed(lambda: [ek_signal(h) for h in items], args.repeats)
        t_ek, expected = ek_times[id(items)]
        with _kernels.use_backend(backend):
            agreement_batch(items[:100], **options)  # compile (Numba) and warm up
            t_loop, per_field = timed(lambda: [signal(h) for h in items], args.repeats)
            t_batch, batch = timed(lambda: agreement_batch(items, **options).tolist(), args.repeats)
        same = batch == expected == per_field
        print(f"| {label} | {t_ek * 1e3:,.0f} ms | {t_loop * 1e3:,.0f} ms | {t_batch * 1e3:,.1f} ms | "
              f"**{t_ek / t_batch:,.1f}×** | {t_loop / t_batch:,.1f}× | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
