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
A page above :data:`MAX_LINE_PAIRS` or :data:`MAX_CHARACTER_PAIRS` is refused before any work.

>>> flexible_character_accuracy("first line\\nsecond line", "second line\\nfirst line")
1.0
>>> round(flexible_character_accuracy("abc\\ndef", "def\\nabx"), 4)
0.8333
"""

from __future__ import annotations

import itertools
import unicodedata
from typing import Any, Sequence

import numpy as np

from scorekit._graphemes import grapheme_packer
from scorekit._kernels import levenshtein as lev
from scorekit._packing import offsets_of
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError

#: The coefficient combinations ``(edit_distance, length_difference, offset, length)`` tried; the
#: ranges the paper's evaluation uses (docs/ocr-metrics.md#flexible-character-accuracy).
COEFFICIENTS = tuple(itertools.product(range(15, 31, 5), range(0, 24, 3), range(0, 4), range(0, 6)))
#: The largest coefficient accepted (penalties stay far inside int64 for any page).
MAX_COEFFICIENT = 10**6
#: The most ground-truth lines × OCR lines a page may have (about 500 lines on each side). The
#: greedy runs' work grows with the line pairs times the number of distinct runs, which grows with
#: the noise: 452 lines at 50 % noise take about 18 s and 300 MB, 1,504 lines about 4 minutes and
#: 2.7 GB (docs/ocr-metrics.md#flexible-character-accuracy).
MAX_LINE_PAIRS = 250_000
#: The most ground-truth characters × OCR characters a page may have (about 31,600 on each side):
#: every alignment of a ground-truth piece with the OCR pieces costs their lengths' product.
MAX_CHARACTER_PAIRS = 10**9


def _lines(text: str, packer) -> list[np.ndarray]:
    lines = unicodedata.normalize("NFC", text).splitlines()
    return [packer.ids(line, "text") for line in lines if line]


def _pack(arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``uint32`` id arrays in the batch layout."""
    values = np.concatenate(arrays).astype(np.uint32, copy=False)
    return values, offsets_of([len(x) for x in arrays], len(arrays))


#: Sorts after every piece code: pads the rows of the run states.
_END = np.int64(1 << 62)


class _Side:
    """One side's lines as one ``uint32`` array, and its pieces as ``int64`` codes that sort in the
    order the matching keeps them: ground truth longest first (then line, start), OCR in line order."""

    def __init__(self, lines: list[np.ndarray], longest_first: bool) -> None:
        self.values, self.offsets = _pack(lines) if lines else (np.zeros(0, np.uint32), np.zeros(1, np.int64))
        self.longest_first = longest_first
        self.width = max((len(x) for x in lines), default=0) + 1
        self.block = max(len(lines), 1) * self.width

    def encode(self, line, start, end) -> np.ndarray:
        if self.longest_first:
            return (self.width - (end - start)) * self.block + line * self.width + start
        return (line * self.width + start) * self.width + end

    def decode(self, code: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.longest_first:
            rank, rest = np.divmod(code, self.block)
            line, start = np.divmod(rest, self.width)
            return line, start, start + self.width - rank
        rest, end = np.divmod(code, self.width)
        line, start = np.divmod(rest, self.width)
        return line, start, end

    def lengths(self, codes: np.ndarray) -> np.ndarray:
        """The lengths of the pieces ``codes`` (0 for :data:`_END`)."""
        _, start, end = self.decode(np.where(codes == _END, 0, codes))
        return np.where(codes == _END, 0, end - start)

    def whole(self) -> np.ndarray:
        """``int64[1, n + 1]``: the run state holding every line, in order, and one pad."""
        line = np.arange(len(self.offsets) - 1)
        codes = np.sort(self.encode(line, 0, np.diff(self.offsets)))
        return np.append(codes, _END)[None, :]


class _Alignments:
    """For every ground-truth piece met, its alignments with OCR pieces: the OCR piece codes in
    increasing order and, for each, a row (edits, length difference, offset, matched length, start,
    end) — the shorter piece aligned with its best substring in the longer one."""

    def __init__(self, gt: _Side, ocr: _Side) -> None:
        self.gt, self.ocr = gt, ocr
        self.known: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def rows(self, g: np.ndarray, ocr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(table, at)``: ``table[at[r, k]]`` is the row of ``g[r]`` (``g`` sorted) with the OCR piece
        ``ocr[r, k]`` (pads get arbitrary rows), aligning in one batch the pairs not met before. One
        lookup serves every run: the known rows of this round's ground-truth pieces are laid out as
        one sorted table."""
        distinct, slot = _distinct_sorted(g)
        codes = distinct.tolist()
        shift = self.ocr.block * self.ocr.width + 1
        query = slot.reshape(-1, 1) * shift + np.where(ocr == _END, shift - 1, ocr)
        table, found = self._table(codes, shift)
        at = np.searchsorted(table, query)
        missing = (table[np.minimum(at, len(table) - 1)] != query) & (ocr != _END) if len(table) else ocr != _END
        if missing.any():
            new = np.unique(query[missing])
            slots, wanted = np.divmod(new, shift)
            where = np.searchsorted(table, new)
            table, found = np.insert(table, where, new), np.insert(found, where, self._align(distinct[slots], wanted), axis=0)
            changed = _distinct_sorted(slots)[0]
            bounds = np.searchsorted(table, np.stack([changed * shift, (changed + 1) * shift]))
            for s, lo, hi in zip(changed.tolist(), *bounds.tolist()):
                self.known[codes[s]] = (table[lo:hi] - s * shift, found[lo:hi].copy())
            at += np.searchsorted(new, query)
        return found, np.minimum(at, len(table) - 1)

    def _table(self, codes: list[int], shift: int) -> tuple[np.ndarray, np.ndarray]:
        """The known rows of the ground-truth pieces ``codes``, keyed ``slot * shift + OCR code``."""
        empty = (np.zeros(0, np.int64), np.zeros((0, 6), np.int64))
        known = [self.known.get(code, empty) for code in codes]
        lengths = [len(keys) for keys, _ in known]
        slots = np.repeat(np.arange(len(codes), dtype=np.int64), lengths)
        return (slots * shift + np.concatenate([keys for keys, _ in known]),
                np.concatenate([rows for _, rows in known]))

    def _align(self, g: np.ndarray, o: np.ndarray) -> np.ndarray:
        """The rows of the ground-truth pieces ``g`` with the OCR pieces ``o`` (codes), in one batch."""
        gl, gs, ge = self.gt.decode(g)
        ol, os_, oe = self.ocr.decode(o)
        a, b = ge - gs, oe - os_
        g_at, o_at = self.gt.offsets[gl] + gs, self.ocr.offsets[ol] + os_ + len(self.gt.values)
        values = np.concatenate([self.gt.values, self.ocr.values])
        shorter = a <= b
        found = lev.best_substring_batch(*_slices(values, np.where(shorter, g_at, o_at), np.minimum(a, b)),
                                         *_slices(values, np.where(shorter, o_at, g_at), np.maximum(a, b)))
        d, s, e = found.T
        return np.stack([d, np.abs(a - b), np.minimum(s, np.maximum(a, b) - e), np.minimum(a, b), s, e], axis=1)


def _slices(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values[starts[k]:starts[k] + lengths[k]]`` for every ``k`` in the batch layout."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    at = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    return values[at], offsets


def _insert(rows: np.ndarray, *columns: np.ndarray) -> np.ndarray:
    """``rows`` (sorted, padded with :data:`_END`) with ``columns`` added, sorted, and pad columns
    dropped but one."""
    out = np.sort(np.concatenate([rows, *(c[:, None] for c in columns)], axis=1), axis=1, kind="stable")
    used = int((out != _END).sum(axis=1).max(initial=0))
    return out[:, :used + 1]


def _distinct_sorted(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_inverse=True)`` for a sorted ``x`` (the run states are kept sorted by
    their first piece), without sorting again."""
    first = np.empty(len(x), dtype=bool)
    first[:1] = True
    np.not_equal(x[1:], x[:-1], out=first[1:])
    return x[first], np.cumsum(first) - 1


def _distinct_rows(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(states, axis=0, return_inverse=True)``, the distinct rows in the order of their
    first column: rows are grouped by a hash, checked equal to their group's row, and sorted the
    slow way only on a collision."""
    if len(states) == 1:
        return states, np.zeros(1, dtype=np.int64)
    weights = (np.arange(1, states.shape[1] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
    _, first, inverse = np.unique(states.view(np.uint64) @ weights, return_index=True, return_inverse=True)
    if (states[first][inverse] == states).all():
        order = np.argsort(states[first, 0], kind="stable")  # by first piece: the lookups then come sorted
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return states[first[order]], rank[inverse]
    distinct, inverse = np.unique(states, axis=0, return_inverse=True)
    return distinct, inverse.reshape(-1)


def check_size(gt_lines: Sequence[Any], ocr_lines: Sequence[Any]) -> None:
    """Raise :class:`~scorekit.errors.InputTooLargeError` for a page above :data:`MAX_LINE_PAIRS` or
    :data:`MAX_CHARACTER_PAIRS` (lines as sequences of characters), before any work."""
    pairs = len(gt_lines) * len(ocr_lines)
    if pairs > MAX_LINE_PAIRS:
        raise InputTooLargeError(
            f"has {len(gt_lines):,} ground-truth lines × {len(ocr_lines):,} OCR lines = {pairs:,} line pairs, above "
            f"MAX_LINE_PAIRS={MAX_LINE_PAIRS:,}: the greedy matching's work grows with the line pairs and the "
            "noise, and such a page could take many minutes and gigabytes", field="fca: the page")
    cells = sum(map(len, gt_lines)) * sum(map(len, ocr_lines))
    if cells > MAX_CHARACTER_PAIRS:
        raise InputTooLargeError(
            f"has {sum(map(len, gt_lines)):,} ground-truth × {sum(map(len, ocr_lines)):,} OCR characters = {cells:,}, "
            f"above MAX_CHARACTER_PAIRS={MAX_CHARACTER_PAIRS:,}: the alignments' work grows with that product, "
            "and such a page could take many minutes", field="fca: the page")


def fca_errors(gt_lines: list[np.ndarray], ocr_lines: list[np.ndarray],
               coefficients: Sequence[tuple[int, int, int, int]] = COEFFICIENTS) -> int:
    """The fewest errors of the greedy line matching over ``coefficients`` (lines as grapheme ids).

    All combinations start together and advance one match per round; where they choose different
    OCR pieces the run branches, and runs that reach the same pieces merge (keeping the fewer
    errors so far, which is all the minimum needs). A run's state is two rows of piece codes, and
    each round advances every run at once: it aligns the new pairs in one batch, chooses each
    combination's OCR piece with one penalty matrix and merges equal states with one sort."""
    check_size(gt_lines, ocr_lines)
    gt, ocr = _Side(gt_lines, longest_first=True), _Side(ocr_lines, longest_first=False)
    if max(gt.block * gt.width, len(coefficients) * ocr.block * ocr.width) >= _END:
        raise InputTooLargeError("has too many lines times too long a line to number its pieces in 64 bits",
                                 field="fca: the page")
    alignments = _Alignments(gt, ocr)
    coef = np.array(coefficients, dtype=np.int64) * np.array([1, 1, 1, -1], dtype=np.int64)
    gt_rows, ocr_rows = gt.whole(), ocr.whole()
    errors = np.zeros(1, dtype=np.int64)
    run_of = np.zeros(len(coef), dtype=np.int64)
    best = None
    while True:
        done = (gt_rows[:, 0] == _END) | (ocr_rows[:, 0] == _END)
        if done.any():
            left = errors[done] + gt.lengths(gt_rows[done]).sum(axis=1) + ocr.lengths(ocr_rows[done]).sum(axis=1)
            best = int(left.min()) if best is None else min(best, int(left.min()))
            if done.all():
                return best
            renumber = np.cumsum(~done) - 1
            coef, run_of = coef[~done[run_of]], renumber[run_of[~done[run_of]]]
            gt_rows, ocr_rows, errors = gt_rows[~done], ocr_rows[~done], errors[~done]
        table, at = alignments.rows(gt_rows[:, 0], ocr_rows)
        penalty = np.einsum("jkt,jt->jk", np.ascontiguousarray(table[:, :4])[at[run_of]], coef)
        penalty[ocr_rows[run_of] == _END] = np.iinfo(np.int64).max
        width = ocr_rows.shape[1]
        steps, step_of = np.unique(run_of * width + penalty.argmin(axis=1), return_inverse=True)
        r, c = np.divmod(steps, width)
        d, s, e = table[at[r, c]][:, [0, 4, 5]].T
        g, o = gt_rows[r, 0], ocr_rows[r, c]
        gl, gs, ge = gt.decode(g)
        ol, os_, oe = ocr.decode(o)
        shorter = ge - gs <= oe - os_
        # The longer piece's parts before and after the match go back (an empty part is dropped).
        cut = [np.where(shorter, os_, gs), np.where(shorter, os_ + s, gs + s),
               np.where(shorter, os_ + e, gs + e), np.where(shorter, oe, ge)]
        line = np.where(shorter, ol, gl)
        parts = [(cut[0], cut[1]), (cut[2], cut[3])]
        gt_new = [np.where(~shorter & (b > a), gt.encode(line, a, b), _END) for a, b in parts]
        ocr_new = [np.where(shorter & (b > a), ocr.encode(line, a, b), _END) for a, b in parts]
        ocr_left = ocr_rows[r]
        ocr_left[np.arange(len(r)), c] = _END
        new_gt, new_ocr = _insert(gt_rows[r, 1:], *gt_new), _insert(ocr_left, *ocr_new)
        states, merged = _distinct_rows(np.concatenate([new_gt, new_ocr], axis=1))
        reached = np.full(len(states), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(reached, merged, errors[r] + d)
        errors, run_of = reached, merged[step_of.reshape(-1)]
        gt_rows, ocr_rows = states[:, :new_gt.shape[1]], states[:, new_gt.shape[1]:]


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
