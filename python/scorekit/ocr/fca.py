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

import itertools
import unicodedata
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from scorekit._graphemes import grapheme_packer
from scorekit.errors import InvalidTypeError, InvalidValueError

#: The coefficient combinations ``(edit_distance, length_difference, offset, length)`` tried; the
#: ranges the paper's evaluation uses (docs/ocr-metrics.md#flexible-character-accuracy).
COEFFICIENTS = tuple(itertools.product(range(15, 31, 5), range(0, 24, 3), range(0, 4), range(0, 6)))
#: Sentinels that equal nothing in a padded alignment batch.
_PAD_PATTERN, _PAD_TEXT = np.uint32(0xFFFF_FFFF), np.uint32(0xFFFF_FFFE)


@dataclass(frozen=True)
class Piece:
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


def best_substrings(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """For each ``(pattern, text)``: ``(d, start, end)``, ``d = min lev(pattern, text[start:end])``
    over all substrings, the last ``end`` reaching it, then the longest such substring (a character
    matched at no cost is better than one left over).
    ``int64[len(pairs), 3]``; one NumPy pass over pattern positions for the whole batch."""
    ends = _semiglobal(pairs, free_start=True)
    back = [(p[::-1], t[:e][::-1]) for (p, t), (_, e) in zip(pairs, ends)]
    lengths = _semiglobal(back, free_start=False)
    out = np.empty((len(pairs), 3), dtype=np.int64)
    out[:, 0] = ends[:, 0]
    out[:, 2] = ends[:, 1]
    out[:, 1] = ends[:, 1] - lengths[:, 1]
    return out


def _semiglobal(pairs, free_start: bool) -> np.ndarray:
    """``(d, j)`` per pair: the least ``D[m][j]`` over ``j`` and its last ``j``, where ``D`` is
    the edit-distance table of the whole pattern (length ``m``) against text prefixes, with the
    text's start free (``D[0][j] = 0``) or fixed (``D[0][j] = j``)."""
    k = len(pairs)
    m = np.array([len(p) for p, _ in pairs], dtype=np.int64)
    n = np.array([len(t) for _, t in pairs], dtype=np.int64)
    width = int(n.max(initial=0)) + 1
    patterns = np.full((k, int(m.max(initial=0))), _PAD_PATTERN, dtype=np.uint32)
    texts = np.full((k, width - 1), _PAD_TEXT, dtype=np.uint32)
    for at, (p, t) in enumerate(pairs):
        patterns[at, :len(p)] = p
        texts[at, :len(t)] = t
    columns = np.arange(width, dtype=np.int64)
    row = np.zeros((k, width), dtype=np.int64) if free_start else np.tile(columns, (k, 1))
    final = row.copy()
    for i in range(1, patterns.shape[1] + 1):
        step = np.empty_like(row)
        step[:, 0] = i
        np.minimum(row[:, :-1] + (patterns[:, i - 1:i] != texts), row[:, 1:] + 1, out=step[:, 1:])
        row = np.minimum.accumulate(step - columns, axis=1) + columns
        done = m == i
        final[done] = row[done]
    final[columns[None, :] > n[:, None]] = np.iinfo(np.int64).max
    best = width - 1 - final[:, ::-1].argmin(axis=1)
    return np.stack([final[np.arange(k), best], best], axis=1)


class _Matcher:
    """The line pieces of both sides and a cache of the alignment of every piece pair met."""

    def __init__(self, gt_lines: list[np.ndarray], ocr_lines: list[np.ndarray]) -> None:
        self.gt_lines, self.ocr_lines = gt_lines, ocr_lines
        self.cache: dict[tuple[Piece, Piece], tuple[int, ...]] = {}

    def ids(self, lines, piece: Piece) -> np.ndarray:
        return lines[piece.line][piece.start:piece.end]

    def features(self, g: Piece, candidates: Sequence[Piece]) -> np.ndarray:
        """``int64[len(candidates), 4]``: edit distance, length difference, offset and matched
        length of ``g`` against each OCR piece (the shorter aligned inside the longer)."""
        todo = [o for o in candidates if (g, o) not in self.cache]
        if todo:
            pairs = []
            for o in todo:
                gi, oi = self.ids(self.gt_lines, g), self.ids(self.ocr_lines, o)
                pairs.append((gi, oi) if g.length <= o.length else (oi, gi))
            for o, (d, s, e) in zip(todo, best_substrings(pairs).tolist()):
                longer = max(g.length, o.length)
                self.cache[g, o] = (d, abs(g.length - o.length), min(s, longer - e), min(g.length, o.length), s, e)
        return np.array([self.cache[g, o][:4] for o in candidates], dtype=np.int64)

    def apply(self, gt: tuple, ocr: tuple, g: Piece, o: Piece) -> tuple[tuple, tuple, int]:
        """The pieces left after matching ``g`` with ``o``, and the match's edits."""
        d, _, _, _, s, e = self.cache[g, o]
        if g.length <= o.length:
            rest = (Piece(o.line, o.start, o.start + s), Piece(o.line, o.start + e, o.end))
            gt = tuple(p for p in gt if p != g)
            ocr = _sorted(tuple(p for p in ocr if p != o) + tuple(p for p in rest if p.length))
        else:
            rest = (Piece(g.line, g.start, g.start + s), Piece(g.line, g.start + e, g.end))
            gt = _sorted(tuple(p for p in gt if p != g) + tuple(p for p in rest if p.length))
            ocr = tuple(p for p in ocr if p != o)
        return gt, ocr, d


def _sorted(pieces: tuple) -> tuple:
    return tuple(sorted(pieces, key=lambda p: (p.line, p.start)))


def _longest(pieces: tuple) -> Piece:
    """The longest piece, the first in line order among equals."""
    return max(pieces, key=lambda p: (p.length, -p.line, -p.start))


def fca_errors(gt_lines: list[np.ndarray], ocr_lines: list[np.ndarray],
               coefficients: Sequence[tuple[int, int, int, int]] = COEFFICIENTS) -> int:
    """The fewest errors of the greedy line matching over ``coefficients`` (lines as grapheme ids).

    All combinations start together; where they choose different OCR pieces the run branches, so
    each distinct sequence of choices is followed once."""
    matcher = _Matcher(gt_lines, ocr_lines)
    start_gt = tuple(Piece(k, 0, len(x)) for k, x in enumerate(gt_lines))
    start_ocr = tuple(Piece(k, 0, len(x)) for k, x in enumerate(ocr_lines))
    stack = [(start_gt, start_ocr, 0, np.array(coefficients, dtype=np.int64))]
    best = None
    while stack:
        gt, ocr, errors, coef = stack.pop()
        if not gt or not ocr:
            total = errors + sum(p.length for p in gt) + sum(p.length for p in ocr)
            best = total if best is None else min(best, total)
            continue
        g = _longest(gt)
        penalties = matcher.features(g, ocr) * np.array([1, 1, 1, -1]) @ coef.T
        choice = penalties.argmin(axis=0)
        for c in np.unique(choice).tolist():
            new_gt, new_ocr, d = matcher.apply(gt, ocr, g, ocr[c])
            stack.append((new_gt, new_ocr, errors + d, coef[choice == c]))
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
