"""Flexible character accuracy (Clausner, Pletschacher, Antonacopoulos, "Flexible character
accuracy measure for reading-order-independent evaluation", Pattern Recognition Letters 131,
2020): a character accuracy that does not depend on the order of the lines
(docs/ocr-metrics.md#flexible-character-accuracy, docs/decisions.md#ocr-fca).

Owns the line matching and its penalty. Both texts are NFC-normalised, cut into lines
(``str.splitlines``, empty lines dropped) and the lines into grapheme clusters. Repeatedly, every
ground-truth piece of the longest remaining length finds the OCR piece of lowest penalty, and the
pair of lowest penalty (the first ground-truth piece in line order among equal ones) is matched:
the shorter of the two is aligned with its best substring in the longer one (the fewest edits, free ends), the
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
from scorekit._kernels import fca as fca_kernel
from scorekit._packing import offsets_of
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError

#: The coefficient combinations ``(edit_distance, length_difference, offset, length)`` tried; the
#: ranges the paper's evaluation uses (docs/ocr-metrics.md#flexible-character-accuracy).
COEFFICIENTS = tuple(itertools.product(range(15, 31, 5), range(0, 24, 3), range(0, 4), range(0, 6)))
#: The largest coefficient accepted (penalties stay far inside int64 for any page).
MAX_COEFFICIENT = fca_kernel.MAX_COEFFICIENT
#: The most ground-truth lines × OCR lines a page may have (about 500 lines on each side). The
#: greedy runs' work grows with the line pairs times the number of distinct runs, which grows with
#: the noise: 452 lines at 50 % noise take about 14 s and 260 MB, 1,504 lines more than 80 s and 1.5 GB
#: (docs/ocr-metrics.md#flexible-character-accuracy).
MAX_LINE_PAIRS = 250_000
#: The most ground-truth characters × OCR characters a page may have (about 31,600 on each side):
#: every alignment of a ground-truth piece with the OCR pieces costs their lengths' product.
MAX_CHARACTER_PAIRS = 10**9


def _lines(text: str, packer) -> list[np.ndarray]:
    lines = unicodedata.normalize("NFC", text).splitlines()
    return [packer.ids(line, "text") for line in lines if line]


def _pack(arrays: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``uint32`` id arrays in the batch layout."""
    values = np.concatenate(arrays).astype(np.uint32, copy=False) if len(arrays) else np.zeros(0, np.uint32)
    return values, offsets_of([len(x) for x in arrays], len(arrays))


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

    All combinations start together and advance one match per step; where they choose different
    OCR pieces the run branches, and runs that reach the same pieces merge (keeping the fewer
    errors so far, which is all the minimum needs). The step loop is the compiled kernel
    :func:`scorekit._kernels.fca.fca_errors` (Rust, with a Numba twin); empty lines are no pieces."""
    check_size(gt_lines, ocr_lines)
    return fca_kernel.fca_errors(*_pack(gt_lines), *_pack(ocr_lines),
                                 np.array(coefficients, dtype=np.int64).reshape(len(coefficients), 4))


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
