"""Side-by-side speed of scorekit's lexicon corrector and the reference kit's (issue #16).

Corrects a column of values against a closed vocabulary of pseudo-words: the reference kit runs one
``rapidfuzz.process.extractOne`` per value (``ek.validate.lexicon_corrector``), scorekit scores all
distinct out-of-vocabulary values at once with ``rapidfuzz.process.cdist`` and skips the word
lengths that cannot beat the best match (``LexiconCorrector.many``). Both run in this process on
the same data; every row checks that the findings (match, score, message) are identical. The
column mixes exact members (half), typos of members (one or two edits: 35%) and unrelated words
(15%), drawn independently, so repeats are rare. Timings are the median of a few repeats; a call
slower than a second runs once.

    .venv/bin/python benches/bench_validate.py                         # up to 100,000 values (about 2 minutes)
    .venv/bin/python benches/bench_validate.py --ek-max 10000          # the reference only up to 10,000 values
"""

from __future__ import annotations

import argparse
import os
import platform
import random

import ek.validate as ek_validate
import rapidfuzz
from bench_iaa import timed       # median of repeats, one call past a second

from scorekit.validate import lexicon_corrector, validation_pipeline

SYLLABLES = ["ka", "ro", "mi", "sen", "tal", "be", "do", "ur", "qui", "zan", "pe", "lo", "vis", "gar", "nu", "ew",
             "ha", "sti", "mo", "rin", "ta", "cel", "fo", "ja", "ly", "mar", "os", "ti", "bra", "de"]
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def pseudo_word(rnd: random.Random) -> str:
    return "".join(rnd.choice(SYLLABLES) for _ in range(rnd.randint(2, 6)))


def typo(rnd: random.Random, word: str) -> str:
    for _ in range(rnd.choice((1, 1, 2))):
        i = rnd.randrange(len(word))
        edit = rnd.choice(("substitute", "insert", "delete", "transpose"))
        if edit == "substitute":
            word = word[:i] + rnd.choice(LETTERS) + word[i + 1:]
        elif edit == "insert":
            word = word[:i] + rnd.choice(LETTERS) + word[i:]
        elif edit == "delete" and len(word) > 2:
            word = word[:i] + word[i + 1:]
        elif i + 1 < len(word):
            word = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word


def data(vocabulary_size: int, n_values: int) -> tuple[list[str], list[str]]:
    rnd = random.Random(16)
    vocabulary = list(dict.fromkeys(pseudo_word(rnd) for _ in range(int(vocabulary_size * 1.2))))[:vocabulary_size]
    values = []
    for _ in range(n_values):
        u = rnd.random()
        word = rnd.choice(vocabulary)
        values.append(word if u < 0.5 else typo(rnd, word) if u < 0.85 else pseudo_word(rnd))
    return vocabulary, values


def rows(per_value) -> list:
    return [[(f.severity.value, f.message, f.suggestion) for f in found] for found in per_value]


def fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocabulary", type=int, default=10_000, help="words in the lexicon (default 10,000)")
    parser.add_argument("--values", type=int, default=100_000, help="largest column (default 100,000)")
    parser.add_argument("--ek-max", type=int, default=100_000, help="largest column the reference runs on")
    args = parser.parse_args()

    vocabulary, column = data(args.vocabulary, args.values)
    sizes = [n for n in (1_000, 10_000, 100_000) if n < args.values] + [args.values]
    members = set(vocabulary)
    ours_one = lexicon_corrector(vocabulary, threads=1)
    ours_all = lexicon_corrector(vocabulary)
    theirs = ek_validate.lexicon_corrector(vocabulary)
    print(f"Python {platform.python_version()}, rapidfuzz {rapidfuzz.__version__}, {os.cpu_count()} cores; "
          f"{len(vocabulary):,}-word lexicon, words {min(map(len, vocabulary))}–{max(map(len, vocabulary))} chars\n")
    print("| values | out of vocabulary | ek (extractOne per value) | scorekit, 1 thread | ratio "
          "| scorekit, all cores | ratio | identical |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        values = column[:n]
        oov = sum(v not in members for v in values)
        t_one, found_one = timed(lambda: ours_one.many(values), 3)
        t_all, found_all = timed(lambda: ours_all.many(values), 3)
        assert found_all == found_one
        if n <= args.ek_max:
            t_ek, found_ek = timed(lambda: [list(theirs(v)) for v in values], 3)
            same = "yes" if rows(found_ek) == rows(found_one) else "**NO**"
            ek_cell, r_one, r_all = fmt(t_ek), f"**{t_ek / t_one:.1f}×**", f"**{t_ek / t_all:.1f}×**"
        else:
            ek_cell, r_one, r_all, same = "not run", "", "", "—"
        print(f"| {n:,} | {oov:,} | {ek_cell} | {fmt(t_one)} | {r_one} | {fmt(t_all)} | {r_all} | {same} |")

    n = min(1_000, args.values)
    values = column[:n]
    single = lexicon_corrector(vocabulary, threads=1)
    t_ek, found_ek = timed(lambda: [list(theirs(v)) for v in values], 3)
    t_call, found_call = timed(lambda: [single(v) for v in values], 3)
    pipe = validation_pipeline(single)
    t_pipe, results = timed(lambda: pipe.many(values), 3)
    same = rows(found_ek) == rows(found_call) == rows([r.findings for r in results])
    print(f"\nOne value at a time ({n:,} values, 1 thread): ek {fmt(t_ek)}, scorekit `corrector(v)` "
          f"{fmt(t_call)} ({t_ek / t_call:.1f}×); `validation_pipeline(corrector).many(values)` {fmt(t_pipe)} "
          f"({t_ek / t_pipe:.1f}×); identical: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
