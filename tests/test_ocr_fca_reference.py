"""The flexible character accuracy's greedy runs (``scorekit.ocr.fca.fca_errors``, the compiled
kernel ``scorekit._kernels.fca`` on both backends) against two oracles (issue #32): the Python
implementation that advanced the runs one at a time with merging (kept here as the reference,
with the paper's step 3: every ground-truth piece of the longest length tried), the same fewest
errors, exactly, on random noisy pages of several sizes and error rates; and, on every tiny page,
each coefficient combination's run by the definition, alone."""

from __future__ import annotations

import bisect
import itertools
import random
from functools import lru_cache
from typing import NamedTuple, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz_harness import levenshtein_dp
from scorekit._kernels import BACKENDS, use_backend
from scorekit._kernels import levenshtein as lev
from scorekit._packing import offsets_of
from scorekit.ocr.fca import COEFFICIENTS, fca_errors

# --- the reference: scorekit.ocr.fca's runs one at a time, merged by state ------------------------


class Piece(NamedTuple):
    line: int
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


def _pack(arrays):
    values = np.concatenate(arrays).astype(np.uint32, copy=False)
    return values, offsets_of([len(x) for x in arrays], len(arrays))


class _Matcher:
    def __init__(self, gt_lines, ocr_lines) -> None:
        self.gt_lines, self.ocr_lines = gt_lines, ocr_lines
        self.ocr_pieces: list[Piece] = []
        self.ocr_numbers: dict[Piece, int] = {}
        self.known: dict[Piece, tuple[np.ndarray, np.ndarray]] = {}

    def number(self, piece: Piece) -> int:
        found = self.ocr_numbers.get(piece)
        if found is None:
            found = self.ocr_numbers[piece] = len(self.ocr_pieces)
            self.ocr_pieces.append(piece)
        return found

    def align(self, requests) -> None:
        missing: dict[Piece, list[np.ndarray]] = {}
        for g, numbers in requests:
            keys = self.known[g][0] if g in self.known else numbers[:0]
            at = np.searchsorted(keys, numbers)
            new = numbers[(at == len(keys)) | (keys[np.minimum(at, len(keys) - 1)] != numbers)] if len(keys) else numbers
            if len(new):
                missing.setdefault(g, []).append(new)
        if not missing:
            return
        todo = [(g, np.unique(np.concatenate(parts))) for g, parts in missing.items()]
        pairs = []
        for g, numbers in todo:
            gi = self.gt_lines[g.line][g.start:g.end]
            for o in numbers.tolist():
                piece = self.ocr_pieces[o]
                oi = self.ocr_lines[piece.line][piece.start:piece.end]
                pairs.append((gi, oi) if g.length <= piece.length else (oi, gi))
        found = lev.best_substring_batch(*_pack([p for p, _ in pairs]), *_pack([t for _, t in pairs]))
        at = 0
        for g, numbers in todo:
            d, s, e = found[at:at + len(numbers)].T
            at += len(numbers)
            b = np.array([self.ocr_pieces[o].length for o in numbers.tolist()], dtype=np.int64)
            a = g.length
            rows = np.stack([d, np.abs(a - b), np.minimum(s, np.maximum(a, b) - e), np.minimum(a, b), s, e], axis=1)
            if g in self.known:
                keys, old = self.known[g]
                numbers, rows = np.concatenate([keys, numbers]), np.concatenate([old, rows])
                order = np.argsort(numbers, kind="stable")
                numbers, rows = numbers[order], rows[order]
            self.known[g] = (numbers, rows)

    def rows(self, g: Piece, numbers: np.ndarray) -> np.ndarray:
        keys, rows = self.known[g]
        return rows[np.searchsorted(keys, numbers)]

    def apply(self, gt: tuple, t: int, ocr: tuple, c: int, row: Sequence[int]):
        g, o = gt[t], self.ocr_pieces[ocr[c]]
        d, _, _, _, s, e = row
        if g.length <= o.length:
            rest = (Piece(o.line, o.start, o.start + s), Piece(o.line, o.start + e, o.end))
            return gt[:t] + gt[t + 1:], ocr[:c] + tuple(self.number(p) for p in rest if p.length) + ocr[c + 1:], d
        left = list(gt[:t] + gt[t + 1:])
        for p in (Piece(g.line, g.start, g.start + s), Piece(g.line, g.start + e, g.end)):
            if p.length:
                bisect.insort(left, p, key=_longest_first)
        return tuple(left), ocr[:c] + ocr[c + 1:], d


def _longest_first(p: Piece):
    return -p.length, p.line, p.start


def _candidates(gt: tuple) -> tuple:
    """The ground-truth pieces a step tries: all of the longest length, in line order."""
    return tuple(p for p in gt if p.length == gt[0].length)


def reference_errors(gt_lines, ocr_lines, coefficients=COEFFICIENTS) -> int:
    matcher = _Matcher(gt_lines, ocr_lines)
    start = (tuple(sorted((Piece(k, 0, len(x)) for k, x in enumerate(gt_lines)), key=_longest_first)),
             tuple(matcher.number(Piece(k, 0, len(x))) for k, x in enumerate(ocr_lines)))
    runs = {start: (0, np.array(coefficients, dtype=np.int64))}
    sign = np.array([1, 1, 1, -1], dtype=np.int64)
    best = None
    while runs:
        active = {}
        for (gt, ocr), (errors, coef) in runs.items():
            if gt and ocr:
                active[gt, ocr] = (errors, coef, np.array(ocr, dtype=np.int64))
            else:
                total = errors + sum(p.length for p in gt) + sum(matcher.ocr_pieces[o].length for o in ocr)
                best = total if best is None else min(best, total)
        matcher.align([(g, numbers) for (gt, _), (_, _, numbers) in active.items() for g in _candidates(gt)])
        runs = {}
        for (gt, ocr), (errors, coef, numbers) in active.items():
            # Candidate t's rows t·n … t·n + n − 1: the first least penalty is each candidate's
            # first best OCR piece, then the first candidate among equal penalties.
            rows = np.concatenate([matcher.rows(g, numbers) for g in _candidates(gt)])
            choice = (rows[:, :4] * sign @ coef.T).argmin(axis=0)
            for c in np.unique(choice).tolist():
                t, k = divmod(c, len(ocr))
                new_gt, new_ocr, d = matcher.apply(gt, t, ocr, k, rows[c].tolist())
                key, group = (new_gt, new_ocr), coef[choice == c]
                if key in runs:
                    group = np.concatenate([runs[key][1], group])
                    d = min(runs[key][0] - errors, d)
                runs[key] = (errors + d, group)
    return best


# --- random noisy pages --------------------------------------------------------------------------

ALPHABET = "abcdef gh"


def noisy(rnd: random.Random, line: list[int], rate: float) -> list[int]:
    """``line`` with each grapheme substituted, deleted or followed by an insertion at ``rate``."""
    out = []
    for x in line:
        roll = rnd.random()
        if roll < rate / 3:
            out.append(rnd.randrange(len(ALPHABET)))
        elif roll < 2 * rate / 3:
            continue
        else:
            out.append(x)
            if roll < rate:
                out.append(rnd.randrange(len(ALPHABET)))
    return out


def page(rnd: random.Random, size: int, rate: float):
    """About ``size`` graphemes of ground-truth lines and their noisy, partly reordered OCR lines."""
    gt, total = [], 0
    while total < size:
        gt.append([rnd.randrange(len(ALPHABET)) for _ in range(rnd.randint(1, 50))])
        total += len(gt[-1])
    ocr = [x for x in (noisy(rnd, line, rate) for line in gt) if x]
    if ocr and rnd.random() < 0.5:
        cut = rnd.randrange(len(ocr))
        ocr = ocr[cut:] + ocr[:cut]
    ids = [np.array(x, dtype=np.uint32) for x in gt], [np.array(x, dtype=np.uint32) for x in ocr]
    return ids


def on_both_backends(gt, ocr, coefficients=COEFFICIENTS) -> int:
    """``fca_errors`` on every backend, checked equal."""
    found = []
    for backend in BACKENDS:
        with use_backend(backend):
            found.append(fca_errors(gt, ocr, coefficients))
    assert len(set(found)) == 1, dict(zip(BACKENDS, found))
    return found[0]


@pytest.mark.parametrize("size, rate, pages", [(60, 0.1, 40), (60, 0.5, 40), (300, 0.05, 12), (300, 0.3, 12),
                                               (300, 0.9, 12), (1200, 0.2, 3), (1200, 0.5, 3)])
def test_fca_errors_equal_the_reference_on_random_noisy_pages(size, rate, pages):
    rnd = random.Random(size * 1000 + int(rate * 100))
    for _ in range(pages):
        gt, ocr = page(rnd, size, rate)
        assert on_both_backends(gt, ocr) == reference_errors(gt, ocr)


def test_fca_errors_equal_the_reference_on_a_noisy_page_of_two_thousand_characters():
    gt, ocr = page(random.Random(32), 2000, 0.5)
    assert on_both_backends(gt, ocr) == reference_errors(gt, ocr)


def test_fca_errors_equal_the_reference_with_other_coefficients():
    rnd = random.Random(5)
    for _ in range(20):
        gt, ocr = page(rnd, 200, 0.4)
        coefficients = [tuple(rnd.randint(0, 40) for _ in range(4)) for _ in range(rnd.randint(1, 30))]
        assert on_both_backends(gt, ocr, coefficients) == reference_errors(gt, ocr, coefficients)


def test_fca_errors_equal_the_reference_on_pages_with_empty_lines():
    """The reference took empty lines as pieces, the kernel leaves them out: the same errors (an
    empty piece is matched at no cost and changes nothing on the other side)."""
    rnd = random.Random(3)
    for _ in range(150):
        gt, ocr = ([np.array([rnd.randrange(3) for _ in range(rnd.choice([0, 0, 1, 2, 3, 5]))], dtype=np.uint32)
                    for _ in range(rnd.randint(0, 5))] for _ in range(2))
        coefficients = [tuple(rnd.randint(0, 10) for _ in range(4)) for _ in range(rnd.randint(1, 6))]
        assert on_both_backends(gt, ocr, coefficients) == reference_errors(gt, ocr, coefficients)


lines = st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=15), min_size=0, max_size=8)


@settings(max_examples=150, deadline=None)
@given(lines, lines)
def test_fca_errors_equal_the_reference_on_generated_pages(gt, ocr):
    gt, ocr = [np.array(x, dtype=np.uint32) for x in gt], [np.array(x, dtype=np.uint32) for x in ocr]
    assert on_both_backends(gt, ocr) == reference_errors(gt, ocr)


# --- every tiny page, against each combination's run alone ------------------------------------


@lru_cache(maxsize=None)
def best_substring(pattern: tuple, text: tuple) -> tuple[int, int, int]:
    """Every substring of ``text`` tried: the least distance to ``pattern``, then the last end,
    then the earliest start."""
    d, last_end, start = min((levenshtein_dp(pattern, text[s:e]), -e, s)
                             for e in range(len(text) + 1) for s in range(e + 1))
    return d, start, -last_end


def one_run(gt: list[tuple], ocr: list[tuple], c: tuple[int, int, int, int]) -> int:
    """One combination's greedy matching by the definition (docs/ocr-metrics.md): pieces
    ``(line, start, end)``; every ground-truth piece of the longest length finds its first OCR
    piece of least penalty, the pair of least penalty (the first ground-truth piece in line order
    among equal ones) is matched, what is left of the longer piece put back."""
    gp = [(k, 0, len(x)) for k, x in enumerate(gt) if x]
    op = [(k, 0, len(x)) for k, x in enumerate(ocr) if x]
    errors = 0
    while gp and op:
        longest = max(ge - gs for _, gs, ge in gp)
        options = []
        for gl, gs, ge in sorted(p for p in gp if p[2] - p[1] == longest):
            g = gt[gl][gs:ge]
            for k, (ol, os_, oe) in enumerate(op):
                o = ocr[ol][os_:oe]
                a, b = len(g), len(o)
                d, s, e = best_substring(g, o) if a <= b else best_substring(o, g)
                penalty = c[0] * d + c[1] * abs(a - b) + c[2] * min(s, max(a, b) - e) - c[3] * min(a, b)
                options.append((penalty, (gl, gs), k, (gl, gs, ge), d, s, e))
        _, _, k, (gl, gs, ge), d, s, e = min(options, key=lambda x: x[:3])
        gp.remove((gl, gs, ge))
        ol, os_, oe = op.pop(k)
        errors += d
        if ge - gs <= oe - os_:
            op[k:k] = [p for p in ((ol, os_, os_ + s), (ol, os_ + e, oe)) if p[2] > p[1]]
        else:
            gp += [p for p in ((gl, gs, gs + s), (gl, gs + e, ge)) if p[2] > p[1]]
    return errors + sum(p[2] - p[1] for p in gp + op)


TINY_LINES = ["a", "b", "aa", "ab", "ba", "bb"]
TINY_PAGES = [list(p) for n in range(3) for p in itertools.product(TINY_LINES, repeat=n)]
#: Combinations that pull the choice apart: one term alone, two against each other, and a sample
#: of the paper's grid.
TINY_COEFFICIENTS = [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (0, 0, 0, 0), (1, 0, 0, 5),
                     (0, 2, 0, 3), (3, 0, 1, 1), (10**6, 10**6, 10**6, 10**6), *COEFFICIENTS[::97]]


def test_fca_errors_equal_each_combinations_run_on_every_tiny_page():
    """Every page of up to two lines a side from ``a``, ``b``, ``aa`` … ``bb`` (43 × 43 pages)."""
    for gt, ocr in itertools.product(TINY_PAGES, repeat=2):
        expected = min(one_run([tuple(x) for x in gt], [tuple(x) for x in ocr], c) for c in TINY_COEFFICIENTS)
        ids = [np.array([ord(ch) for ch in x], dtype=np.uint32) for x in gt], \
            [np.array([ord(ch) for ch in x], dtype=np.uint32) for x in ocr]
        assert on_both_backends(*ids, TINY_COEFFICIENTS) == expected, (gt, ocr)


def test_fca_errors_equal_each_combinations_run_on_random_small_pages():
    """Pages of up to four lines of up to five letters, the paper's whole grid."""
    rnd = random.Random(11)
    for _ in range(25):
        gt, ocr = ([tuple(rnd.choice("abc") for _ in range(rnd.randint(1, 5))) for _ in range(rnd.randint(1, 4))]
                   for _ in range(2))
        expected = min(one_run(gt, ocr, c) for c in COEFFICIENTS)
        assert on_both_backends([np.array([ord(ch) for ch in x], dtype=np.uint32) for x in gt],
                                [np.array([ord(ch) for ch in x], dtype=np.uint32) for x in ocr]) == expected


# --- the size guard --------------------------------------------------------------------------------

def test_fca_refuses_a_page_above_max_line_pairs_before_any_work(monkeypatch):
    from scorekit.errors import InputTooLargeError
    from scorekit.ocr import flexible_character_accuracy
    from scorekit.ocr import fca

    assert fca.MAX_LINE_PAIRS == 250_000
    assert flexible_character_accuracy("ab\n" * 500, "ab\n" * 500) == 1.0  # 500 × 500: at the limit
    monkeypatch.setattr(fca, "fca_kernel", None)  # the guard answers before the matching starts
    with pytest.raises(InputTooLargeError, match=r"501 ground-truth lines × 500 OCR lines = 250,500 line pairs, "
                                                 r"above MAX_LINE_PAIRS=250,000"):
        flexible_character_accuracy("ab\n" * 501, "ab\n" * 500)


def test_fca_refuses_a_page_above_max_character_pairs(monkeypatch):
    from scorekit.errors import InputTooLargeError
    from scorekit.ocr import fca

    assert fca.MAX_CHARACTER_PAIRS == 10**9
    monkeypatch.setattr(fca, "MAX_CHARACTER_PAIRS", 12)
    assert fca.flexible_character_accuracy("abc\nd", "abc") == 0.75  # 4 × 3 = 12: at the limit
    with pytest.raises(InputTooLargeError, match=r"4 ground-truth × 4 OCR characters = 16, above "
                                                 r"MAX_CHARACTER_PAIRS=12"):
        fca.flexible_character_accuracy("abc\nd", "abc\nd")
    with pytest.raises(InputTooLargeError, match="MAX_CHARACTER_PAIRS"):
        fca.fca_errors([np.zeros(4, np.uint32)], [np.zeros(4, np.uint32)])


def test_fca_errors_refuses_coefficient_rows_that_are_not_four_long():
    line = [np.array([1, 2, 3], dtype=np.uint32)]
    for rows in ([(1, 2, 3, 4, 5, 6)] * 2, [(1, 2)] * 2, [(1, 2, 3)] * 4):  # 12 or 4 numbers: not re-cut into rows of 4
        with pytest.raises(ValueError):
            fca_errors(line, line, rows)
