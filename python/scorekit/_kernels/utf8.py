"""Arrow text kernel family: dispatch of UTF-8 column scoring to the Rust core or the Numba twin.

Owns the kernel contract of the Arrow path: a column is ``(data uint8, offsets int32|int64,
validity uint8 bitmap | None, validity_offset)`` exactly as Arrow lays out ``string``/``binary``
(and their ``large_`` forms); a pair of columns gives ``int64[n, 5]`` rows
``(ref_len, substitutions, deletions, insertions, status)`` with :data:`STATUS` codes, which
:func:`group_sums` adds up per slice. It also
owns the Unicode tables the compiled normaliser reads, derived from this Python's own
``unicodedata`` so that compiled and Python canonicalisation agree (``str.casefold`` per code
point, category ``P*`` punctuation, and the code points this Python leaves unassigned, which the
compiled NFC/NFKC hands back to the caller). It builds no Python object per item.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import TYPE_CHECKING, Sequence

from scorekit import _kernels

if TYPE_CHECKING:
    import numpy as np

#: Meaning of the status column: counted, the caller scores the pair, prediction / gold not UTF-8.
STATUS = {0: "counted", 1: "needs_caller", 2: "invalid_pred", 3: "invalid_gold"}
NEEDS_CALLER, INVALID_PRED, INVALID_GOLD = 1, 2, 3
#: Normaliser steps the compiled core applies itself (``scorekit.canonicalize`` names).
COMPILED_STEPS = frozenset({"nfc", "nfkc", "lower", "strip", "collapse_whitespace", "strip_punctuation"})


@functools.lru_cache(maxsize=1)
def unicode_tables() -> tuple[np.ndarray, ...]:
    """``(fold_keys, fold_offsets, fold_values, punctuation, unassigned)``: every code point whose
    ``str.casefold()`` differs (with what it folds to), and little-endian bitmaps of category
    ``P*`` and of unassigned (``Cn``) code points, all from this interpreter's ``unicodedata``.
    Built once per process (a pass over every code point, a few tenths of a second)."""
    import numpy as np

    keys: list[int] = []
    offsets = [0]
    values: list[int] = []
    punctuation = np.zeros(0x110000, dtype=bool)
    unassigned = np.zeros(0x110000, dtype=bool)
    category = unicodedata.category
    for c in range(0x110000):
        ch = chr(c)
        cat = category(ch)
        if cat == "Cn":
            unassigned[c] = True
            continue
        if cat[0] == "P":
            punctuation[c] = True
        folded = ch.casefold()
        if folded != ch:
            keys.append(c)
            values.extend(map(ord, folded))
            offsets.append(len(values))
    return (np.array(keys, dtype=np.uint32), np.array(offsets, dtype=np.int64), np.array(values, dtype=np.uint32),
            np.packbits(punctuation, bitorder="little"), np.packbits(unassigned, bitorder="little"))


def pair_counts(pred: tuple, gold: tuple, mode: str, steps: Sequence[str] = (), threads: int = 0) -> np.ndarray:
    """Rows ``(ref_len, substitutions, deletions, insertions, status)`` of every (pred, gold) pair
    of two UTF-8 columns, the gold being the reference; ``steps`` are built-in normaliser names
    (:data:`COMPILED_STEPS`) applied to both sides first. The Numba twin applies none: with steps,
    it leaves every pair to the caller (status 1)."""
    tables = unicode_tables() if steps and _kernels.current_backend() == "rust" else None
    return _kernels.implementation("utf8").utf8_pair_counts(
        pred, gold, mode, list(steps), tables, _kernels.resolve_threads(threads))



def group_sums(rows: np.ndarray, codes: np.ndarray | None, groups: int) -> np.ndarray:
    """``int64[groups + 1, w + 2]``: the column sums of ``rows`` (``int64[n, w]``, any strides) per
    code in ``0..groups``, then of every row; then the count of the rows and the first of them
    (-1: none), which orders the groups by first appearance. Code -1 (or no ``codes``) puts a row
    in no group.

    >>> import numpy as np
    >>> group_sums(np.array([[3, 1], [2, 0], [4, 4]]), np.array([1, -1, 1]), 2).tolist()
    [[0, 0, 0, -1], [7, 5, 2, 0], [9, 5, 3, 0]]
    """
    return _kernels.implementation("utf8").group_sums(rows, codes, groups)
