"""The flexible character accuracy's batched greedy runs (``scorekit.ocr.fca.fca_errors``) against
the one-run-at-a-time implementation they replaced (issue #32), kept here as the reference: the
same fewest errors, exactly, on random noisy pages of several sizes and error rates."""

from __future__ import annotations

import bisect
import random
from typing import NamedTuple, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit._kernels import levenshtein as lev
from scorekit._packing import offsets_of
from scorekit.ocr.fca import COEFFICIENTS, fca_errors

# --- the reference: scorekit.ocr.fca as it was before the batched runs ---------------------------


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

    def apply(self, gt: tuple, ocr: tuple, c: int, row: Sequence[int]):
        g, o = gt[0], self.ocr_pieces[ocr[c]]
        d, _, _, _, s, e = row
        if g.length <= o.length:
            rest = (Piece(o.line, o.start, o.start + s), Piece(o.line, o.start + e, o.end))
            return gt[1:], ocr[:c] + tuple(self.number(p) for p in rest if p.length) + ocr[c + 1:], d
        left = list(gt[1:])
        for p in (Piece(g.line, g.start, g.start + s), Piece(g.line, g.start + e, g.end)):
            if p.length:
                bisect.insort(left, p, key=_longest_first)
        return tuple(left), ocr[:c] + ocr[c + 1:], d


def _longest_first(p: Piece):
    return -p.length, p.line, p.start


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
        matcher.align([(gt[0], numbers) for (gt, _), (_, _, numbers) in active.items()])
        runs = {}
        for (gt, ocr), (errors, coef, numbers) in active.items():
            rows = matcher.rows(gt[0], numbers)
            choice = (rows[:, :4] * sign @ coef.T).argmin(axis=0)
            for c in np.unique(choice).tolist():
                new_gt, new_ocr, d = matcher.apply(gt, ocr, c, rows[c].tolist())
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


@pytest.mark.parametrize("size, rate, pages", [(60, 0.1, 40), (60, 0.5, 40), (300, 0.05, 12), (300, 0.3, 12),
                                               (300, 0.9, 12), (1200, 0.2, 3), (1200, 0.5, 3)])
def test_fca_errors_equal_the_reference_on_random_noisy_pages(size, rate, pages):
    rnd = random.Random(size * 1000 + int(rate * 100))
    for _ in range(pages):
        gt, ocr = page(rnd, size, rate)
        assert fca_errors(gt, ocr) == reference_errors(gt, ocr)


def test_fca_errors_equal_the_reference_on_a_noisy_page_of_two_thousand_characters():
    gt, ocr = page(random.Random(32), 2000, 0.5)
    assert fca_errors(gt, ocr) == reference_errors(gt, ocr)


def test_fca_errors_equal_the_reference_with_other_coefficients():
    rnd = random.Random(5)
    for _ in range(20):
        gt, ocr = page(rnd, 200, 0.4)
        coefficients = [tuple(rnd.randint(0, 40) for _ in range(4)) for _ in range(rnd.randint(1, 30))]
        assert fca_errors(gt, ocr, coefficients) == reference_errors(gt, ocr, coefficients)


lines = st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=15), min_size=0, max_size=8)


@settings(max_examples=150, deadline=None)
@given(lines, lines)
def test_fca_errors_equal_the_reference_on_generated_pages(gt, ocr):
    gt, ocr = [np.array(x, dtype=np.uint32) for x in gt], [np.array(x, dtype=np.uint32) for x in ocr]
    assert fca_errors(gt, ocr) == reference_errors(gt, ocr)


# --- the size guard --------------------------------------------------------------------------------

def test_fca_refuses_a_page_above_max_line_pairs_before_any_work(monkeypatch):
    from scorekit.errors import InputTooLargeError
    from scorekit.ocr import flexible_character_accuracy
    from scorekit.ocr import fca

    assert fca.MAX_LINE_PAIRS == 250_000
    assert flexible_character_accuracy("ab\n" * 500, "ab\n" * 500) == 1.0  # 500 × 500: at the limit
    monkeypatch.setattr(fca, "_Side", None)  # the guard answers before the matching starts
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
