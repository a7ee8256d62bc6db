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
    """The line pieces of both sides and a cache of the alignment of every piece pair met."""

    def __init__(self, gt_lines: list[np.ndarray], ocr_lines: list[np.ndarray]) -> None:
        self.gt_lines, self.ocr_lines = gt_lines, ocr_lines
        self.cache: dict[tuple[Piece, Piece], tuple[int, ...]] = {}

    def ids(self, lines, piece: Piece) -> np.ndarray:
        return lines[piece.line][piece.start:piece.end]

    def align(self, requests: Sequence[tuple[Piece, Sequence[Piece]]]) -> None:
        """Align, in one batch, every ``(g, o)`` of ``requests`` not aligned yet."""
        todo = list(dict.fromkeys((g, o) for g, candidates in requests for o in candidates
                                  if (g, o) not in self.cache))
        if not todo:
            return
        pairs = []
        for g, o in todo:
            gi, oi = self.ids(self.gt_lines, g), self.ids(self.ocr_lines, o)
            pairs.append((gi, oi) if g.length <= o.length else (oi, gi))
        found = lev.best_substring_batch(*_pack([p for p, _ in pairs]), *_pack([t for _, t in pairs]))
        for (g, o), (d, s, e) in zip(todo, found.tolist()):
            longer = max(g.length, o.length)
            self.cache[g, o] = (d, abs(g.length - o.length), min(s, longer - e), min(g.length, o.length), s, e)

    def features(self, g: Piece, candidates: Sequence[Piece]) -> np.ndarray:
        """``int64[len(candidates), 4]``: edit distance, length difference, offset and matched
        length of ``g`` against each OCR piece (the shorter aligned inside the longer), aligned
        by :meth:`align` before."""
        return np.array([self.cache[g, o][:4] for o in candidates], dtype=np.int64)

    def apply(self, gt: tuple, ocr: tuple, c: int) -> tuple[tuple, tuple, int]:
        """The pieces left after matching ``gt[0]`` with ``ocr[c]``, and the match's edits. Ground-truth
        pieces stay longest first (then in line order), OCR pieces in line order."""
        g, o = gt[0], ocr[c]
        d, _, _, _, s, e = self.cache[g, o]
        if g.length <= o.length:
            rest = tuple(p for p in (Piece(o.line, o.start, o.start + s), Piece(o.line, o.start + e, o.end))
                         if p.length)
            return gt[1:], ocr[:c] + rest + ocr[c + 1:], d
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
             tuple(Piece(k, 0, len(x)) for k, x in enumerate(ocr_lines)))
    runs = {start: (0, np.array(coefficients, dtype=np.int64))}
    sign = np.array([1, 1, 1, -1], dtype=np.int64)
    best = None
    while runs:
        active = {}
        for (gt, ocr), (errors, coef) in runs.items():
            if gt and ocr:
                active[gt, ocr] = (errors, coef)
            else:
                total = errors + sum(p.length for p in gt) + sum(p.length for p in ocr)
                best = total if best is None else min(best, total)
        matcher.align([(gt[0], ocr) for gt, ocr in active])
        runs = {}
        for (gt, ocr), (errors, coef) in active.items():
            choice = (matcher.features(gt[0], ocr) * sign @ coef.T).argmin(axis=0)
            for c in np.unique(choice).tolist():
                new_gt, new_ocr, d = matcher.apply(gt, ocr, c)
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
    try:
        rows = tuple(tuple(row) for row in coefficients)
    except TypeError:
        raise InvalidTypeError("must be a sequence of 4-tuples of numbers", field="coefficients") from None
    if not rows or any(len(r) != 4 for r in rows):
        raise InvalidValueError("must hold at least one (edit_distance, length_difference, offset, length) "
                                "4-tuple", field="coefficients")
    for r in rows:
        for x in r:
            if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
                raise InvalidValueError(f"must hold integers >= 0, got {x!r}", field="coefficients")
    return rows
