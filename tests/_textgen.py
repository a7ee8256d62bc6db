"""Random text generators shared by the differential tests (not a test module)."""

from __future__ import annotations

import random

ALPHABETS = {
    "latin": "abcdeé ",
    "armenian": "աբգըԸեւվ -",
    "cjk": "的一是在不了 ",
    "combining": "ae\u0301\u0308\u0300 ",
    "emoji": "😀🙂👍🏽x ",
    "mixed": "aբ的😀\u0301 ",
}


def random_text(rng: random.Random, max_len: int, alphabet: str) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len)))


def mutate(rng: random.Random, text: str, alphabet: str, rate: float) -> str:
    out = []
    for ch in text:
        r = rng.random()
        if r < rate / 3:
            continue
        if r < 2 * rate / 3:
            out.append(rng.choice(alphabet))
        elif r < rate:
            out.append(ch + rng.choice(alphabet))
        else:
            out.append(ch)
    return "".join(out)


def random_pairs(seed: int, count: int, max_len: int = 60) -> list[tuple[str, str]]:
    """Pairs over several scripts: unrelated strings, near copies, empties."""
    rng = random.Random(seed)
    pairs = []
    names = sorted(ALPHABETS)
    for k in range(count):
        alphabet = ALPHABETS[names[k % len(names)]]
        a = random_text(rng, max_len, alphabet)
        kind = k % 4
        if kind == 0:
            b = random_text(rng, max_len, alphabet)
        elif kind == 3 and k % 8 == 3:
            b = ""
        else:
            b = mutate(rng, a, alphabet, rng.choice([0.05, 0.2, 0.5]))
        pairs.append((a, b))
    return pairs


def long_pairs(seed: int, count: int, length: int = 10_500) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for k in range(count):
        alphabet = ALPHABETS["mixed"] if k % 2 else "abcd"
        a = random_text(rng, length, alphabet)
        a = a + "x" * max(0, length - len(a))
        b = mutate(rng, a, alphabet, 0.02 if k % 3 else 0.4)
        pairs.append((a, b))
    return pairs
