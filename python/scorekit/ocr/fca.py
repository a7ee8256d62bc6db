"""Flexible character accuracy (Clausner, Pletschacher, Antonacopoulos, "Flexible character
accuracy measure for reading-order-independent evaluation", Pattern Recognition Letters 131,
2020): a character accuracy that does not depend on the order of the lines
(docs/ocr-metrics.md#flexible-character-accuracy, docs/decisions.md#ocr-fca).

Owns the line matching and its penalty. Both texts are NFC-normalised, cut into lines
(``str.splitlines``, empty lines dropped) and the lines into grapheme clusters. Repeatedly, the
longest remaining ground-truth piece is matched with the OCR piece of lowest penalty: the shorter
of the two is aligned with its best substring in the longer one (the fewest edits, free ends), the
matched parts are removed and what is left of the longer one goes back as pieces. When one side is
used up, what is left on the other counts as errors. This runs once per coefficient combination of
:data:`COEFFICIENTS` (one run per distinct sequence of choices) and the fewest errors are taken:
``fca = max(0, 1 − errors / n)``, ``n`` the ground truth's graphemes outside line breaks.

>>> flexible_character_accuracy("first line\\nsecond line", "second line\\nfirst line")
1.0
>>> round(flexible_character_accuracy("abc\\ndef", "def\\nabx"), 4)
0.8333
"""

from __future__ import annotations

import bisect
import itertools
import unicodedata
from typing import Any, NamedTuple, Sequence

import numpy as np

from scorekit._graphemes import grapheme_packer
from scorekit._kernels import levenshtein as lev
from scorekit._packing import offsets_of
from scorekit.errors import InvalidTypeError, InvalidValueError

#: The coefficient combinations ``(edit_distance, length_difference, offset, length)`` tried; the
#: ranges the paper's evaluation uses (docs/ocr-metrics.md#flexible-character-accuracy).
COEFFICIENTS = tuple(itertools.product(range(15, 31, 5), range(0, 24, 3), range(0, 4), range(0, 6)))
#: The largest coefficient accepted (penalties stay far inside int64 for any page).
MAX_COEFFICIENT = 10**6


class Piece(NamedTuple):
    """A contiguous run ``start:end`` of the graphemes of line ``line`` of one side."""

    line: int
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


def _lines(text: str, packer) -> list[np.ndarray]:
    lines = unicodedata.normalize("NFC", text).splitlines()
    return [packer.ids(line, "text") for line in lines if line]


def _pack(arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``uint32`` id arrays in the batch layout."""
    values = np.concatenate(arrays).astype(np.uint32, copy=False)
    return values, offsets_of([len(x) for x in arrays], len(arrays))


class _Matcher:
    """The line pieces of both sides, the OCR pieces numbered as they appear, and for every
    ground-truth piece the alignments found so far: the OCR piece numbers in increasing order and,
    for each, a row (edits, length difference, offset, matched length, start, end)."""

    def __init__(self, gt_lines: list[np.ndarray], ocr_lines: list[np.ndarray]) -> None:
        self.gt_lines, self.ocr_lines = gt_lines, ocr_lines
        self.ocr_pieces: list[Piece] = []
        self.ocr_numbers: dict[Piece, int] = {}
        self.known: dict[Piece, tuple[np.ndarray, np.ndarray]] = {}

    def number(self, piece: Piece) -> int:
        """The number of an OCR piece (a new one for a piece not met before)."""
        found = self.ocr_numbers.get(piece)
        if found is None:
            found = self.ocr_numbers[piece] = len(self.ocr_pieces)
            self.ocr_pieces.append(piece)
        return found

    def align(self, requests: Sequence[tuple[Piece, np.ndarray]]) -> None:
        """Align, in one batch, every ``(g, o)`` of ``requests`` (``o`` an array of OCR piece numbers)
        not aligned yet."""
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
        """``int64[len(numbers), 6]``: the alignment rows of ``g`` with these OCR pieces (aligned by
        :meth:`align` before); columns 0–3 are the penalty's terms: edit distance, length
        difference, offset and matched length (the shorter aligned inside the longer)."""
        keys, rows = self.known[g]
        return rows[np.searchsorted(keys, numbers)]

    def apply(self, gt: tuple, ocr: tuple, c: int, row: Sequence[int]) -> tuple[tuple, tuple, int]:
        """The pieces left after matching ``gt[0]`` with OCR piece number ``ocr[c]`` (alignment ``row``),
        and the match's edits. Ground-truth pieces stay longest first (then in line order), OCR
        pieces in line order."""
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


def _longest_first(p: Piece) -> tuple[int, int, int]:
    return -p.length, p.line, p.start


def fca_errors(gt_lines: list[np.ndarray], ocr_lines: list[np.ndarray],
               coefficients: Sequence[tuple[int, int, int, int]] = COEFFICIENTS) -> int:
    """The fewest errors of the greedy line matching over ``coefficients`` (lines as grapheme ids).

    All combinations start together and advance one match per round; where they choose different
    OCR pieces the run branches, and runs that reach the same pieces merge (keeping the fewer
    errors so far, which is all the minimum needs). Each round aligns its new pairs in one batch."""
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


def flexible_character_accuracy(gt: str, ocr: str, coefficients: Any = COEFFICIENTS) -> float:
    """Flexible character accuracy of ``ocr`` against ``gt`` in ``0..1`` (see the module).

    An empty ground truth gives 1.0 against an empty OCR text and 0.0 otherwise."""
    for value, field in ((gt, "gt"), (ocr, "ocr")):
        if not isinstance(value, str):
            raise InvalidTypeError(f"must be str, got {type(value).__name__}", field=field)
    coefficients = _check_coefficients(coefficients)
    packer = grapheme_packer()
    gt_lines, ocr_lines = _lines(gt, packer), _lines(ocr, packer)
    n = sum(len(x) for x in gt_lines)
    errors = fca_errors(gt_lines, ocr_lines, coefficients)
    if n == 0:
        return 1.0 if errors == 0 else 0.0
    return max(0.0, 1.0 - errors / n)


def _check_coefficients(coefficients: Any) -> tuple:
    """``coefficients`` as a tuple of 4-tuples of integers in ``0..MAX_COEFFICIENT``, or a named error."""
    try:
        rows = tuple(tuple(row) for row in coefficients)
    except TypeError:
        raise InvalidTypeError("must be a sequence of 4-tuples of numbers", field="coefficients") from None
    if not rows or any(len(r) != 4 for r in rows):
        raise InvalidValueError("must hold at least one (edit_distance, length_difference, offset, length) "
                                "4-tuple", field="coefficients")
    for r in rows:
        for x in r:
            if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= x <= MAX_COEFFICIENT:
                raise InvalidValueError(f"must hold integers in 0..{MAX_COEFFICIENT}, got {x!r}",
                                        field="coefficients")
    return rows
