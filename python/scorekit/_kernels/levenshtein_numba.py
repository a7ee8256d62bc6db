"""Numba backend of the Levenshtein kernel family (the twin of the Rust ``levenshtein`` kernels).

Owns, over packed ``uint32`` sequences (see :mod:`scorekit._kernels.levenshtein` for the contract):

* ``levenshtein_distance_batch``: unit-cost distance. Common prefix and suffix are stripped; the
  shorter side becomes the bit-parallel pattern: one 64-bit word (Hyyrö 2003) when it has at most
  64 elements, otherwise 64-row blocks (Myers 1999) restricted to a diagonal band whose width doubles
  until the result is provably exact.
* ``levenshtein_alignment_batch`` / ``levenshtein_editops``: the edit script rapidfuzz's
  ``Levenshtein.editops(ref, hyp)`` returns, including its Hirschberg splitting of large problems.
* ``word_alignment_batch``: ``str.split()`` tokenisation inside the kernel, then the same alignment
  over word ids.
* ``schwa_distance_batch``: the schwa-forgiving distance (docs/decisions.md#schwa-forgiving-distance).
* ``best_substring_batch``: the substring of a text closest to a whole pattern (both text ends free),
  a plain row dynamic program carrying each cell's substring start.
* ``lcs_length_batch``: the length of a longest common subsequence, bit-parallel (Allison-Dix /
  Hyyrö) over the shorter side's blocks.

It does not canonicalise text and builds no Python result objects. Every pair is computed
independently, so no result depends on the number of threads.

Bit-parallel conventions: rows ``i = 1..len(pattern)`` are pattern positions, columns ``j`` are text
positions. For a column, bit ``r`` of a block ``VP``/``VN`` word says that
``D[64*blk + r + 1][j] - D[64*blk + r][j]`` is ``+1``/``-1`` (the vertical deltas).

Memory is linear in the input, as in the Rust kernels: the match masks of a long pattern are a dense
``elements x blocks`` table only while that table is small (at most ``_DENSE_BYTES_PER_ELEMENT``
bytes per pattern element, or ``_DENSE_MIN_BYTES``), otherwise per element only the blocks where it
occurs; stored traceback rows are bounded by the Hirschberg splitting. An allocation that fails
raises ``MemoryError``.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from scorekit._kernels import available_cores, resolve_threads

__all__ = [
    "WHITESPACE_CODE_POINTS",
    "levenshtein_distance_batch",
    "levenshtein_alignment_batch",
    "word_alignment_batch",
    "schwa_distance_batch",
    "levenshtein_editops",
    "best_substring_batch",
    "lcs_length_batch",
]

#: Code points ``c`` with ``chr(c).isspace()``: the separators of Python's ``str.split()``.
WHITESPACE_CODE_POINTS = (
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680,
    0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
    0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
)
_SPACE_LIMIT = max(WHITESPACE_CODE_POINTS) + 1
_IS_SPACE = np.zeros(_SPACE_LIMIT, dtype=np.bool_)
_IS_SPACE[list(WHITESPACE_CODE_POINTS)] = True

OP_SUBSTITUTE, OP_DELETE, OP_INSERT = 1, 2, 3

# Hirschberg splitting, as rapidfuzz decides it: a problem is traced back directly when its banded
# bit matrix (2 bits per cell) stays under 1 MiB, or when it is small on either side.
_SPLIT_BYTES = 1024 * 1024
_SPLIT_MIN_REF = 65
_SPLIT_MIN_HYP = 10

_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_TOP_BIT = np.uint64(1) << np.uint64(63)
_SMALL_TABLE = 128  # hashed slots of the reusable element map (patterns of at most 64 elements)
_HASH_MUL = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, Fibonacci hashing
_INITIAL_BAND = 64
_FAR = 1 << 60  # "outside the computed band": larger than any distance, and safe to add twice
# Mask layout rule, the same as the Rust kernels' (rust/kernels/src/levenshtein/pattern.rs).
_DENSE_BYTES_PER_ELEMENT = 64
_DENSE_MIN_BYTES = 8 << 20

_jit = numba.njit(cache=True, nogil=True)
# Small helpers are inlined into their callers' Numba IR: no separate compilation per call-site
# signature (literal arguments would otherwise each get their own specialisation).
_inline = numba.njit(cache=True, nogil=True, inline="always")


# --------------------------------------------------------------------------------------------------
# Element map: code point (any uint32) -> dense index 0..k-1 of the distinct elements of a pattern.
# Values below 256 use a direct table; the rest an open-addressing table with linear probing.
# --------------------------------------------------------------------------------------------------

@_inline
def _map_new(pattern_len):
    size = _SMALL_TABLE
    while size < 2 * pattern_len:
        size *= 2
    direct = np.full(256, -1, dtype=np.int64)
    keys = np.full(size, -1, dtype=np.int64)
    slots = np.empty(size, dtype=np.int64)
    return direct, keys, slots


# The hashing code is written out in the loops below rather than called per element: helpers that
# take arrays, inlined into a loop, bring reference counting into it and cost a factor of 3-4.

@_jit
def _map_fill(pattern, direct, keys, slots, index):
    """Add the elements of ``pattern`` to an empty map; ``index[i]`` gets the dense index of
    ``pattern[i]``. Returns the number of distinct elements."""
    mask = keys.shape[0] - 1
    count = 0
    for i in range(pattern.shape[0]):
        c = np.int64(pattern[i])
        if c < 256:
            if direct[c] < 0:
                direct[c] = count
                count += 1
            index[i] = direct[c]
        else:
            h = ((c * _HASH_MUL) >> 32) & mask
            while keys[h] != -1 and keys[h] != c:
                h = (h + 1) & mask
            if keys[h] == -1:
                keys[h] = c
                slots[h] = count
                count += 1
            index[i] = slots[h]
    return count


@_jit
def _map_lookup(text, direct, keys, slots, index):
    """``index[j]`` = dense index of ``text[j]``, or -1 when the pattern does not contain it."""
    mask = keys.shape[0] - 1
    for j in range(text.shape[0]):
        c = np.int64(text[j])
        if c < 256:
            index[j] = direct[c]
        else:
            h = ((c * _HASH_MUL) >> 32) & mask
            while keys[h] != -1 and keys[h] != c:
                h = (h + 1) & mask
            index[j] = slots[h] if keys[h] == c else -1


@_jit
def _map_clear(pattern, direct, keys):
    """Empty a map that holds exactly the elements of ``pattern``."""
    hashed = False
    for i in range(pattern.shape[0]):
        c = np.int64(pattern[i])
        if c < 256:
            direct[c] = -1
        else:
            hashed = True
    if hashed:
        for h in range(keys.shape[0]):
            keys[h] = -1


@_jit
def _block_masks(pattern, direct, keys, slots):
    """Build the (empty) map of ``pattern`` and its per-block match masks ``(pm, starts, blocks,
    bits)``. Dense layout (``starts`` empty): ``pm[element, block]``. Sparse layout (``pm`` empty):
    entries ``starts[e]:starts[e + 1]`` of ``blocks`` (increasing) and ``bits`` are element ``e``'s."""
    m = pattern.shape[0]
    words = (m + 63) // 64
    index = np.empty(m, dtype=np.int64)
    count = _map_fill(pattern, direct, keys, slots, index)
    if count * words <= max(_DENSE_BYTES_PER_ELEMENT * m, _DENSE_MIN_BYTES) // 8:
        pm = np.zeros((max(count, 1), words), dtype=np.uint64)
        for i in range(m):
            pm[index[i], i >> 6] |= _ONE << np.uint64(i & 63)
        none = np.empty(0, dtype=np.int64)
        return pm, none, none, np.empty(0, dtype=np.uint64)
    # Count each element's blocks, then fill them in pattern order (so they come out increasing).
    starts = np.zeros(count + 1, dtype=np.int64)
    last = np.full(count, -1, dtype=np.int64)
    for i in range(m):
        if last[index[i]] != i >> 6:
            last[index[i]] = i >> 6
            starts[index[i] + 1] += 1
    for e in range(count):
        starts[e + 1] += starts[e]
    blocks = np.empty(starts[count], dtype=np.int64)
    bits = np.zeros(starts[count], dtype=np.uint64)
    cursor = starts[:count].copy()
    last[:] = -1
    for i in range(m):
        e = index[i]
        if last[e] != i >> 6:
            last[e] = i >> 6
            blocks[cursor[e]] = i >> 6
            cursor[e] += 1
        bits[cursor[e] - 1] |= _ONE << np.uint64(i & 63)
    return np.empty((0, 0), dtype=np.uint64), starts, blocks, bits


@_jit
def _scratch_new(longest):
    """Reusable buffers of the one-word paths, for sequences of up to ``longest`` elements: the map
    of a pattern of at most 64 elements, its match masks, element indices of a sequence, and one
    ``VP``/``VN`` word per text column."""
    direct, keys, slots = _map_new(64)
    masks = np.empty(64, dtype=np.uint64)
    index = np.empty(max(longest, 64), dtype=np.int64)
    col_vp = np.empty((longest, 1), dtype=np.uint64)
    col_vn = np.empty((longest, 1), dtype=np.uint64)
    return direct, keys, slots, masks, index, col_vp, col_vn


# --------------------------------------------------------------------------------------------------
# Bit-parallel column step
# --------------------------------------------------------------------------------------------------

@_inline
def _advance(eq, vp, vn, hin, out_bit):
    """One 64-row block of one column (Myers' block step in Hyyrö's formulation).

    ``hin`` is the horizontal delta entering above the block's first row; returns the new
    ``(vp, vn)`` and the horizontal delta at row bit ``out_bit`` (which leaves the block when
    ``out_bit`` is its last row).
    """
    xv = eq | vn
    if hin < 0:
        eq |= _ONE
    xh = (((eq & vp) + vp) ^ vp) | eq
    ph = vn | ~(xh | vp)
    mh = vp & xh
    hout = 0
    if ph & out_bit:
        hout = 1
    elif mh & out_bit:
        hout = -1
    ph <<= _ONE
    mh <<= _ONE
    if hin < 0:
        mh |= _ONE
    elif hin > 0:
        ph |= _ONE
    return mh | ~(xv | ph), ph & xv, hout


@_inline
def _band_blocks(j, w, m):
    """First and last 64-row block holding a row ``i`` with ``|i - j| <= w`` (``1 <= i <= m``)."""
    lo = j - w
    if lo < 1:
        lo = 1
    hi = j + w
    if hi > m:
        hi = m
    return (lo - 1) >> 6, (hi - 1) >> 6


@_jit
def _banded_pass(masks, direct, keys, slots, m, text, w, vp_out, vn_out):
    """Run the block recurrence over all columns of ``text``, computing only blocks that meet the
    diagonal band ``|i - j| <= w`` of the ``m``-row pattern whose masks (:func:`_block_masks`) are
    ``masks``.

    Blocks outside the band are never computed: the first computed block assumes a horizontal
    delta of +1 above it, and a block entering the band at the bottom starts from vertical deltas of
    +1. Both assumptions describe real (not necessarily optimal) paths, so every computed value is
    an upper bound of the true ``D``, and it is exact for each cell that has an optimal path inside
    the computed region -- in particular for every cell with ``D <= w``, because a path of cost c
    never leaves the diagonal band of half-width c.

    When ``vp_out`` has rows (one per column), the column-``j`` words of blocks ``fb(j)..lb(j)`` go to
    ``vp_out[j-1, blk - fb(j)]`` / ``vn_out``. Returns the final ``VP``/``VN`` words of all blocks and
    the computed ``D`` at each block's last row in the last column (``D[m][len(text)]`` is the last
    entry, meaningful when row ``m`` is in the band at the last column).
    """
    nblocks = (m + 63) >> 6
    last_bit = _ONE << np.uint64((m - 1) & 63)
    store = vp_out.shape[0] > 0
    pm, starts, blocks, bits = masks
    sparse = starts.shape[0] > 0
    text_index = np.empty(text.shape[0], dtype=np.int64)
    _map_lookup(text, direct, keys, slots, text_index)
    vp = np.full(nblocks, _ALL, dtype=np.uint64)
    vn = np.zeros(nblocks, dtype=np.uint64)
    # bottom[blk]: computed D at the block's last row, in the current column (column 0: D[i][0] = i).
    bottom = np.empty(nblocks, dtype=np.int64)
    for blk in range(nblocks):
        bottom[blk] = min(64 * (blk + 1), m)
    prev_lb = _band_blocks(0, w, m)[1]
    for j in range(1, text.shape[0] + 1):
        fb, lb = _band_blocks(j, w, m)
        if lb > prev_lb:  # a block enters the band below: its column j-1 is all +1 deltas
            bottom[lb] = bottom[lb - 1] + min(64 * (lb + 1), m) - 64 * lb
            prev_lb = lb
        k = text_index[j - 1]
        hin = 1
        e = end = 0
        if sparse and k >= 0:  # the element's first block at or after fb; its blocks follow in order
            e, end = starts[k], starts[k + 1]
            hi = end
            while e < hi:
                mid = (e + hi) >> 1
                if blocks[mid] < fb:
                    e = mid + 1
                else:
                    hi = mid
        for blk in range(fb, lb + 1):
            eq = np.uint64(0)
            if k >= 0:
                if not sparse:
                    eq = pm[k, blk]
                elif e < end and blocks[e] == blk:
                    eq = bits[e]
                    e += 1
            out_bit = last_bit if blk == nblocks - 1 else _TOP_BIT
            vp[blk], vn[blk], hin = _advance(eq, vp[blk], vn[blk], hin, out_bit)
            bottom[blk] += hin
            if store:
                vp_out[j - 1, blk - fb] = vp[blk]
                vn_out[j - 1, blk - fb] = vn[blk]
    return vp, vn, bottom


# --------------------------------------------------------------------------------------------------
# Distance
# --------------------------------------------------------------------------------------------------

@_jit
def _affix_lengths(a, b):
    """Lengths of the common prefix and of the common suffix of the rest."""
    n = min(a.shape[0], b.shape[0])
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    s = 0
    while s < n - p and a[a.shape[0] - 1 - s] == b[b.shape[0] - 1 - s]:
        s += 1
    return p, s


@_jit
def _word_pass(pattern, text, scratch):
    """Hyyrö 2003 in one 64-bit word, for a non-empty pattern of at most 64 elements: returns the
    distance and leaves column ``j``'s ``VP``/``VN`` words in the scratch rows ``j - 1``."""
    direct, keys, slots, masks, index, col_vp, col_vn = scratch
    m = pattern.shape[0]
    count = _map_fill(pattern, direct, keys, slots, index)
    for k in range(count):
        masks[k] = 0
    for i in range(m):
        masks[index[i]] |= _ONE << np.uint64(i)
    _map_lookup(text, direct, keys, slots, index)
    _map_clear(pattern, direct, keys)
    last_bit = _ONE << np.uint64(m - 1)
    vp = _ALL
    vn = np.uint64(0)
    score = m
    for j in range(text.shape[0]):
        k = index[j]
        eq = masks[k] if k >= 0 else np.uint64(0)
        vp, vn, hout = _advance(eq, vp, vn, 1, last_bit)
        score += hout
        col_vp[j, 0] = vp
        col_vn[j, 0] = vn
    return score


@_jit
def _blocked_distance(pattern, text):
    """Distance for a pattern longer than 64: banded blocks, doubling the band until exact."""
    m, n = pattern.shape[0], text.shape[0]
    direct, keys, slots = _map_new(m)
    masks = _block_masks(pattern, direct, keys, slots)
    no_store = np.empty((0, 0), dtype=np.uint64)
    w = max(_INITIAL_BAND, abs(m - n))
    while True:
        d = _banded_pass(masks, direct, keys, slots, m, text, w, no_store, no_store)[2][-1]
        if d <= w or w >= max(m, n):
            return d
        w *= 2


@_jit
def _distance(a, b, scratch):
    """Unit-cost Levenshtein distance (``scratch`` from :func:`_scratch_new`, long enough for both)."""
    p, s = _affix_lengths(a, b)
    a = a[p:a.shape[0] - s]
    b = b[p:b.shape[0] - s]
    if a.shape[0] > b.shape[0]:
        a, b = b, a
    if a.shape[0] == 0:
        return b.shape[0]
    if a.shape[0] <= 64:
        return _word_pass(a, b, scratch)
    return _blocked_distance(a, b)


@_jit
def _lcs(a, b):
    """Length of a longest common subsequence, as ``rust/kernels/src/levenshtein/lcs.rs``: the
    zero bits of ``V' = (V + (V & M)) | (V & ~M)`` over the shorter side, the addition's carry
    passed from block to block."""
    p, s = _affix_lengths(a, b)
    a = a[p:a.shape[0] - s]
    b = b[p:b.shape[0] - s]
    if a.shape[0] > b.shape[0]:
        a, b = b, a
    m = a.shape[0]
    if m == 0:
        return p + s
    direct, keys, slots = _map_new(m)
    pm, starts, blocks, bits = _block_masks(a, direct, keys, slots)
    sparse = starts.shape[0] > 0
    index = np.empty(b.shape[0], dtype=np.int64)
    _map_lookup(b, direct, keys, slots, index)
    words = (m + 63) >> 6
    v = np.full(words, _ALL, dtype=np.uint64)
    for j in range(b.shape[0]):
        k = index[j]
        if k < 0:
            continue
        carry = np.uint64(0)
        e = end = 0
        if sparse:
            e, end = starts[k], starts[k + 1]
        for blk in range(words):
            eq = np.uint64(0)
            if not sparse:
                eq = pm[k, blk]
            elif e < end and blocks[e] == blk:
                eq = bits[e]
                e += 1
            x = v[blk]
            u = x & eq
            s1 = x + u
            s2 = s1 + carry
            carry = _ONE if s1 < x or s2 < s1 else np.uint64(0)
            v[blk] = s2 | (x - u)
    zeros = 0
    for blk in range(words):
        w = ~v[blk]
        if blk == words - 1 and m & 63:
            w &= (_ONE << np.uint64(m & 63)) - _ONE
        while w:
            w &= w - _ONE
            zeros += 1
    return p + s + zeros


# --------------------------------------------------------------------------------------------------
# Alignment (rapidfuzz-compatible edit script)
# --------------------------------------------------------------------------------------------------

@_jit
def _column_scores(pattern, text, w):
    """Upper bounds of ``D[i][len(text)]`` for ``i = 0..len(pattern)``, exact wherever they are at most
    ``w`` (pattern longer than 64, text non-empty); ``_FAR`` for rows outside the band of the last
    column. Only the band ``|i - j| <= w`` is computed (see :func:`_banded_pass`)."""
    m, n = pattern.shape[0], text.shape[0]
    direct, keys, slots = _map_new(m)
    masks = _block_masks(pattern, direct, keys, slots)
    no_store = np.empty((0, 0), dtype=np.uint64)
    vp, vn, bottom = _banded_pass(masks, direct, keys, slots, m, text, w, no_store, no_store)
    scores = np.full(m + 1, _FAR, dtype=np.int64)
    scores[0] = n
    fb, lb = _band_blocks(n, w, m)
    for blk in range(fb, lb + 1):  # walk up each band block from its computed last row
        end = min(64 * (blk + 1), m)
        v = bottom[blk]
        scores[end] = v
        for i in range(end, 64 * blk, -1):
            bit = _ONE << np.uint64((i - 1) & 63)
            v += (1 if vn[blk] & bit else 0) - (1 if vp[blk] & bit else 0)
            if v < scores[i - 1]:
                scores[i - 1] = v
    return scores


@_jit
def _walk_back(a, b, off_a, off_b, ops, n, vp_store, vn_store, w):
    """Trace back from ``(len(a), len(b))`` with the tie-breaking rule of the family contract, using
    only stored vertical deltas: delete iff ``D[i][j] - D[i-1][j] == +1``, else insert iff
    ``D[i][j-1] - D[i-1][j-1] == -1``, else diagonal. Appends the operations in reverse order.
    The deltas of column ``j`` are stored as :func:`_banded_pass` stores them for band ``w``."""
    m = a.shape[0]
    i, j = m, b.shape[0]
    while i > 0 or j > 0:
        if i == 0:
            j -= 1
            op = OP_INSERT
        elif j == 0:
            i -= 1
            op = OP_DELETE
        else:
            word = (i - 1) >> 6
            bit = _ONE << np.uint64((i - 1) & 63)
            if vp_store[j - 1, word - _band_blocks(j, w, m)[0]] & bit:
                i -= 1
                op = OP_DELETE
            elif j > 1 and vn_store[j - 2, word - _band_blocks(j - 1, w, m)[0]] & bit:
                j -= 1
                op = OP_INSERT
            else:
                i -= 1
                j -= 1
                if a[i] == b[j]:
                    continue
                op = OP_SUBSTITUTE
        ops[n, 0] = op
        ops[n, 1] = off_a + i
        ops[n, 2] = off_b + j
        n += 1
    return n


@_jit
def _reverse_rows(ops, lo, hi):
    """Reverse the order of rows ``lo..hi-1`` of ``ops`` in place."""
    hi -= 1
    while lo < hi:
        for c in range(3):
            ops[lo, c], ops[hi, c] = ops[hi, c], ops[lo, c]
        lo += 1
        hi -= 1


@_jit
def _direct_alignment(a, b, off_a, off_b, hint, hint_exact, ops, n, scratch):
    """Append the operations of one directly traced (unsplit) problem, in sequence order."""
    start = n
    m = a.shape[0]
    if m == 0 or b.shape[0] == 0:
        n = _walk_back(a, b, off_a, off_b, ops, n, scratch[5], scratch[6], m + b.shape[0])
    elif m <= 64:
        _word_pass(a, b, scratch)
        n = _walk_back(a, b, off_a, off_b, ops, n, scratch[5], scratch[6], m + b.shape[0])
    else:
        # The walk only visits cells of optimal paths (D <= d) and reads their upper, left and
        # upper-left neighbours (D <= d + 1), so a band of half-width d + 1 holds exact deltas for
        # every cell it reads (see _banded_pass).
        d = hint if hint_exact else _distance(a, b, scratch)
        w = d + 1
        width = min((m + 63) >> 6, ((2 * w) >> 6) + 2)
        vp_store = np.empty((b.shape[0], width), dtype=np.uint64)
        vn_store = np.empty((b.shape[0], width), dtype=np.uint64)
        direct, keys, slots = _map_new(m)
        masks = _block_masks(a, direct, keys, slots)
        _banded_pass(masks, direct, keys, slots, m, b, w, vp_store, vn_store)
        n = _walk_back(a, b, off_a, off_b, ops, n, vp_store, vn_store, w)
    _reverse_rows(ops, start, n)
    return n


@_inline
def _push(stack, depth, a_lo, a_hi, b_lo, b_hi, hint, hint_exact):
    stack[depth, 0] = a_lo
    stack[depth, 1] = a_hi
    stack[depth, 2] = b_lo
    stack[depth, 3] = b_hi
    stack[depth, 4] = hint
    stack[depth, 5] = hint_exact


@_jit
def _align(a, b, ops, scratch):
    """Edit script turning ``a`` (ref) into ``b`` (hyp), written to ``ops`` (at least
    ``len(a) + len(b)`` rows of ``(op, ref_pos, hyp_pos)``); returns the number of operations.

    Problems are split as rapidfuzz splits them: after stripping the common affix, a problem whose
    banded bit matrix would exceed 1 MiB is cut at the middle column ``mid = len(b) // 2`` and at the
    smallest ref position ``i`` minimising ``D(a[:i], b[:mid]) + D(a[i:], b[mid:])``; both halves
    are solved the same way, each with its exact distance as the band hint. At the top level the
    hint is ``max(len(a), len(b))`` (it decides the first split; the split itself is computed in the
    band of the exact distance). ``scratch`` (:func:`_scratch_new`) fits ``max(len(a), len(b))``.
    """
    # Pending problems; each split replaces one entry by two, and halves len(b), so depth <= 2 * 64.
    stack = np.empty((130, 6), dtype=np.int64)
    _push(stack, 0, 0, a.shape[0], 0, b.shape[0], max(a.shape[0], b.shape[0]), 0)
    depth = 1
    n = np.int64(0)  # typed, not a literal: one compiled signature of _direct_alignment
    while depth > 0:
        depth -= 1
        a_lo, a_hi, b_lo, b_hi = stack[depth, 0], stack[depth, 1], stack[depth, 2], stack[depth, 3]
        hint, hint_exact = stack[depth, 4], stack[depth, 5]
        p, s = _affix_lengths(a[a_lo:a_hi], b[b_lo:b_hi])
        a_lo += p
        b_lo += p
        a_hi -= s
        b_hi -= s
        sa = a[a_lo:a_hi]
        sb = b[b_lo:b_hi]
        l1, l2 = sa.shape[0], sb.shape[0]
        band = min(l1, 2 * min(hint, max(l1, l2)) + 1)
        if 2 * band * l2 // 8 < _SPLIT_BYTES or l1 < _SPLIT_MIN_REF or l2 < _SPLIT_MIN_HYP:
            n = _direct_alignment(sa, sb, a_lo, b_lo, hint, hint_exact != 0, ops, n, scratch)
            continue
        # Every optimal split lies within the band of the exact distance d (plus one), so only that
        # band of the forward and backward passes is computed.
        d = hint if hint_exact else _distance(sa, sb, scratch)
        mid = l2 // 2
        left = _column_scores(sa, sb[:mid], d + 1)
        right = _column_scores(sa[::-1].copy(), sb[mid:][::-1].copy(), d + 1)
        best = 0
        for i in range(1, l1 + 1):
            if left[i] + right[l1 - i] < left[best] + right[l1 - best]:
                best = i
        _push(stack, depth, a_lo + best, a_hi, b_lo + mid, b_hi, right[l1 - best], 1)  # right half, after
        _push(stack, depth + 1, a_lo, a_lo + best, b_lo, b_lo + mid, left[best], 1)  # left half, first
        depth += 2
    return n


@_jit
def _count_ops(ops, n, ref_len):
    """``(hits, substitutions, deletions, insertions)`` of an edit script over a ref of ``ref_len``."""
    subs = dels = ins = 0
    for k in range(n):
        op = ops[k, 0]
        if op == OP_SUBSTITUTE:
            subs += 1
        elif op == OP_DELETE:
            dels += 1
        else:
            ins += 1
    return ref_len - subs - dels, subs, dels, ins


# --------------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------------

@_inline
def _is_space(c):
    return c < _SPACE_LIMIT and _IS_SPACE[c]


@_jit
def _split_words(text, lo, hi, bounds, count):
    """Append the ``[start, end)`` of each ``str.split()`` word of ``text[lo:hi]`` to ``bounds``
    from row ``count`` on; returns the new number of rows."""
    i = lo
    while i < hi:
        while i < hi and _is_space(np.int64(text[i])):
            i += 1
        if i == hi:
            break
        start = i
        while i < hi and not _is_space(np.int64(text[i])):
            i += 1
        bounds[count, 0] = start
        bounds[count, 1] = i
        count += 1
    return count


@_jit
def _word_ids(text, bounds, count):
    """Dense ids of the words ``bounds[:count]`` of ``text``: equal ids iff equal code points."""
    size = 16
    while size < 2 * count:
        size *= 2
    mask = size - 1
    first = np.full(size, -1, dtype=np.int64)  # slot -> the first word with this content
    hashes = np.empty(size, dtype=np.int64)
    ids = np.empty(count, dtype=np.uint32)
    next_id = 0
    for w in range(count):
        start, end = bounds[w, 0], bounds[w, 1]
        h = np.int64(end - start)
        for k in range(start, end):
            h = (h ^ np.int64(text[k])) * np.int64(1099511628211)  # FNV-1 style
        slot = ((h * _HASH_MUL) >> 32) & mask
        while first[slot] >= 0:
            other = first[slot]
            o_start = bounds[other, 0]
            if hashes[slot] == h and bounds[other, 1] - o_start == end - start:
                same = True
                for k in range(end - start):
                    if text[o_start + k] != text[start + k]:
                        same = False
                        break
                if same:
                    break
            slot = (slot + 1) & mask
        if first[slot] < 0:
            first[slot] = w
            hashes[slot] = h
            ids[w] = next_id
            next_id += 1
        else:
            ids[w] = ids[first[slot]]
    return ids


# --------------------------------------------------------------------------------------------------
# Schwa-forgiving distance (docs/decisions.md#schwa-forgiving-distance)
# --------------------------------------------------------------------------------------------------

@_jit
def _mark(positions, length):
    flags = np.zeros(length + 1, dtype=np.bool_)
    for k in range(positions.shape[0]):
        flags[positions[k]] = True
    return flags


@_jit
def _schwa_flags(text, schwa):
    flags = np.zeros(text.shape[0], dtype=np.bool_)
    any_schwa = False
    for i in range(text.shape[0]):
        for k in range(schwa.shape[0]):
            if text[i] == schwa[k]:
                flags[i] = True
                any_schwa = True
                break
    return flags, any_schwa


@_jit
def _schwa_distance(g, p, g_joins, p_joins, schwa, scratch):
    """Deleting ``g[i-1]`` / inserting ``p[j-1]`` is free when it is a schwa next to a join of
    its own string or at the current position's join of the other string. One DP row over ``p``,
    restricted to the diagonals an optimal path can reach, as the Rust kernel does: such a path
    makes at most ``strict + F`` insertions and deletions (``F`` = schwas that can ever be free),
    and one through diagonal ``d = j - i`` ending on ``m - n`` makes at least ``|d| + |m - n - d|``."""
    n, m = g.shape[0], p.shape[0]
    g_schwa, g_any = _schwa_flags(g, schwa)
    p_schwa, p_any = _schwa_flags(p, schwa)
    has_joins = g_joins.shape[0] > 0 or p_joins.shape[0] > 0
    if not has_joins or not (g_any or p_any):  # no operation can be free: plain distance
        return _distance(g, p, scratch)
    strict = _distance(g, p, scratch)
    if strict == 0:
        return 0
    jg = _mark(g_joins, n)
    jp = _mark(p_joins, m)
    free = 0
    for i in range(n):
        if g_schwa[i] and (jg[i] or jg[i + 1] or p_joins.shape[0] > 0):
            free += 1
    for j in range(m):
        if p_schwa[j] and (jp[j] or jp[j + 1] or g_joins.shape[0] > 0):
            free += 1
    if free == 0:
        return strict
    budget, delta = strict + free, m - n
    d_lo, d_hi = -((budget - delta) // 2), (budget + delta) // 2  # budget >= |delta|: both halves >= 0
    prev = np.full(m + 2, _FAR, dtype=np.int64)
    cur = np.full(m + 2, _FAR, dtype=np.int64)
    prev[0] = 0
    for j in range(1, min(d_hi, m) + 1):
        free_ins = p_schwa[j - 1] and (jp[j - 1] or jp[j] or jg[0])
        prev[j] = prev[j - 1] + (0 if free_ins else 1)
    for i in range(1, n + 1):
        lo, hi = max(i + d_lo, 0), min(i + d_hi, m)
        del_schwa = g_schwa[i - 1]
        del_at_join = jg[i - 1] or jg[i]
        gi = g[i - 1]
        # column lo has no left neighbour inside the band
        free_del = del_schwa and (del_at_join or jp[lo])
        left = prev[lo] + (0 if free_del else 1)
        if lo > 0:
            cand = prev[lo - 1] + (0 if gi == p[lo - 1] else 1)
            if cand < left:
                left = cand
        cur[lo] = left
        for j in range(lo + 1, hi + 1):
            free_del = del_schwa and (del_at_join or jp[j])
            free_ins = p_schwa[j - 1] and (jp[j - 1] or jp[j] or jg[i])
            best = prev[j - 1] + (0 if gi == p[j - 1] else 1)
            cand = prev[j] + (0 if free_del else 1)
            if cand < best:
                best = cand
            cand = left + (0 if free_ins else 1)
            if cand < best:
                best = cand
            cur[j] = best
            left = best
        cur[hi + 1] = _FAR
        prev, cur = cur, prev
    return prev[m]


# --------------------------------------------------------------------------------------------------
# Batch kernels: each processes pairs lo..hi-1 with one set of scratch buffers and writes out[lo:hi].
# --------------------------------------------------------------------------------------------------

@_jit
def _max_len(offsets, lo, hi):
    longest = 0
    for k in range(lo, hi):
        longest = max(longest, offsets[k + 1] - offsets[k])
    return longest


@_jit
def _distance_chunk(a_values, a_offsets, b_values, b_offsets, lo, hi, out):
    scratch = _scratch_new(max(_max_len(a_offsets, lo, hi), _max_len(b_offsets, lo, hi)))
    for k in range(lo, hi):
        out[k] = _distance(a_values[a_offsets[k]:a_offsets[k + 1]], b_values[b_offsets[k]:b_offsets[k + 1]],
                           scratch)


@_jit
def _lcs_chunk(a_values, a_offsets, b_values, b_offsets, lo, hi, out):
    for k in range(lo, hi):
        out[k] = _lcs(a_values[a_offsets[k]:a_offsets[k + 1]], b_values[b_offsets[k]:b_offsets[k + 1]])


@_jit
def _best_substring(pattern, text, cost, start):
    """``(d, start, end)`` as ``rust/kernels/src/levenshtein/substring.rs``: cells compare as
    ``(cost, start)``; the last end of least cost."""
    n = text.shape[0]
    for j in range(n + 1):
        cost[j] = 0
        start[j] = j
    for i in range(pattern.shape[0]):
        p = pattern[i]
        diag_cost, diag_start = cost[0], start[0]
        cost[0], start[0] = i + 1, 0
        for j in range(n):
            best_cost, best_start = diag_cost + (1 if p != text[j] else 0), diag_start
            up_cost, up_start = cost[j + 1] + 1, start[j + 1]
            if up_cost < best_cost or (up_cost == best_cost and up_start < best_start):
                best_cost, best_start = up_cost, up_start
            left_cost, left_start = cost[j] + 1, start[j]
            if left_cost < best_cost or (left_cost == best_cost and left_start < best_start):
                best_cost, best_start = left_cost, left_start
            diag_cost, diag_start = cost[j + 1], start[j + 1]
            cost[j + 1], start[j + 1] = best_cost, best_start
    end = 0
    for j in range(1, n + 1):
        if cost[j] <= cost[end]:
            end = j
    return cost[end], start[end], end


@_jit
def _substring_chunk(p_values, p_offsets, t_values, t_offsets, lo, hi, out):
    width = _max_len(t_offsets, lo, hi) + 1
    cost = np.empty(width, dtype=np.int64)
    start = np.empty(width, dtype=np.int64)
    for k in range(lo, hi):
        out[k, 0], out[k, 1], out[k, 2] = _best_substring(
            p_values[p_offsets[k]:p_offsets[k + 1]], t_values[t_offsets[k]:t_offsets[k + 1]], cost, start)


@_jit
def _alignment_chunk(ref_values, ref_offsets, hyp_values, hyp_offsets, lo, hi, out):
    longest_ref = _max_len(ref_offsets, lo, hi)
    longest_hyp = _max_len(hyp_offsets, lo, hi)
    scratch = _scratch_new(max(longest_ref, longest_hyp))
    ops = np.empty((longest_ref + longest_hyp, 3), dtype=np.int64)
    for k in range(lo, hi):
        ref = ref_values[ref_offsets[k]:ref_offsets[k + 1]]
        n_ops = _align(ref, hyp_values[hyp_offsets[k]:hyp_offsets[k + 1]], ops, scratch)
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = _count_ops(ops, n_ops, ref.shape[0])


@_jit
def _word_alignment_chunk(ref_values, ref_offsets, hyp_values, hyp_offsets, lo, hi, out):
    longest_ref = _max_len(ref_offsets, lo, hi)
    longest_hyp = _max_len(hyp_offsets, lo, hi)
    # A text of L code points holds at most (L + 1) // 2 words.
    most_ref = (longest_ref + 1) // 2
    most_hyp = (longest_hyp + 1) // 2
    scratch = _scratch_new(max(most_ref, most_hyp))
    both = np.empty(longest_ref + longest_hyp, dtype=np.uint32)  # ref then hyp, one pair at a time
    bounds = np.empty((most_ref + most_hyp, 2), dtype=np.int64)
    ops = np.empty((most_ref + most_hyp, 3), dtype=np.int64)
    for k in range(lo, hi):
        n_ref_cp = ref_offsets[k + 1] - ref_offsets[k]
        n_hyp_cp = hyp_offsets[k + 1] - hyp_offsets[k]
        for i in range(n_ref_cp):
            both[i] = ref_values[ref_offsets[k] + i]
        for i in range(n_hyp_cp):
            both[n_ref_cp + i] = hyp_values[hyp_offsets[k] + i]
        n_ref = _split_words(both, 0, n_ref_cp, bounds, 0)
        n_words = _split_words(both, n_ref_cp, n_ref_cp + n_hyp_cp, bounds, n_ref)
        ids = _word_ids(both, bounds, n_words)
        n_ops = _align(ids[:n_ref], ids[n_ref:], ops, scratch)
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = _count_ops(ops, n_ops, n_ref)
        out[k, 4] = n_ref
        out[k, 5] = n_words - n_ref


@_jit
def _schwa_chunk(gt_values, gt_offsets, pred_values, pred_offsets,
                 gt_join_values, gt_join_offsets, pred_join_values, pred_join_offsets, schwa, lo, hi, out):
    scratch = _scratch_new(max(_max_len(gt_offsets, lo, hi), _max_len(pred_offsets, lo, hi)))
    for k in range(lo, hi):
        out[k] = _schwa_distance(
            gt_values[gt_offsets[k]:gt_offsets[k + 1]], pred_values[pred_offsets[k]:pred_offsets[k + 1]],
            gt_join_values[gt_join_offsets[k]:gt_join_offsets[k + 1]],
            pred_join_values[pred_join_offsets[k]:pred_join_offsets[k + 1]],
            schwa, scratch,
        )


@_jit
def _editops_kernel(ref, hyp):
    ops = np.empty((ref.shape[0] + hyp.shape[0], 3), dtype=np.int64)
    n = _align(ref, hyp, ops, _scratch_new(max(ref.shape[0], hyp.shape[0])))
    return ops[:n].copy()


# --------------------------------------------------------------------------------------------------
# Python entry points: argument checks, thread count, dispatch to the kernels.
# --------------------------------------------------------------------------------------------------

def _array(x, dtype, name: str) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(x).__name__}")
    if x.dtype != dtype:
        raise TypeError(f"{name} must have dtype {np.dtype(dtype).name}, got {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {x.shape}")
    if not x.flags.writeable:  # one compiled signature: the kernels only ever see writable arrays
        return x.copy()
    return np.ascontiguousarray(x)


def _packed(values, offsets, name: str, values_dtype=np.uint32) -> tuple[np.ndarray, np.ndarray]:
    values = _array(values, values_dtype, f"{name}_values")
    offsets = _array(offsets, np.int64, f"{name}_offsets")
    if offsets.shape[0] == 0:
        raise ValueError(f"{name}_offsets must hold n + 1 >= 1 entries, got an empty array")
    if offsets[0] != 0 or offsets[-1] != values.shape[0] or np.any(np.diff(offsets) < 0):
        raise ValueError(
            f"{name}_offsets must be non-decreasing from 0 to len({name}_values) = {values.shape[0]}, "
            f"got first {offsets[0]}, last {offsets[-1]}"
        )
    return values, offsets


def _same_count(*named: tuple[str, np.ndarray]) -> None:
    counts = {name: offsets.shape[0] - 1 for name, offsets in named}
    if len(set(counts.values())) != 1:
        raise ValueError(f"every side must hold the same number of items, got {counts}")


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
# Batches with fewer code points than this per chunk are not worth a thread hand-off.
_MIN_CHUNK_ELEMENTS = 4096


def _pool(threads: int) -> ThreadPoolExecutor:
    """The executor of ``threads`` workers (at most one per count up to the number of cores)."""
    with _POOLS_LOCK:
        if threads not in _POOLS:
            _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="scorekit-levenshtein")
        return _POOLS[threads]


def _run(chunk_kernel, threads, out: np.ndarray, elements: int, *args) -> np.ndarray:
    """Fill ``out`` (one row per pair) with ``chunk_kernel`` on ``threads`` threads (0 = all cores).

    The pairs are cut into up to eight chunks per thread (fewer for small batches: ``elements`` is
    the batch's total length), handed out dynamically to a thread pool; the kernels release the
    GIL. Chunks write disjoint rows, so results never depend on the thread count. (A thread pool
    rather than ``prange``: Numba's parallel lowering would add about 20 s of CPU to the first,
    uncached compilation, for the same speed.)
    """
    threads = resolve_threads(threads) or available_cores()
    n = out.shape[0]
    nchunks = min(n, 8 * threads, elements // _MIN_CHUNK_ELEMENTS)
    if threads == 1 or nchunks <= 1:
        chunk_kernel(*args, 0, n, out)
        return out
    bounds = [(k * n // nchunks, (k + 1) * n // nchunks) for k in range(nchunks)]
    for _ in _pool(threads).map(lambda lo_hi: chunk_kernel(*args, lo_hi[0], lo_hi[1], out), bounds):
        pass
    return out


def _pair_batch(chunk_kernel, width, names, a_values, a_offsets, b_values, b_offsets, threads) -> np.ndarray:
    """Check two packed sides (named ``names``) and fill one row of ``width`` per pair (``width``
    0: a flat ``int64[n]``) with ``chunk_kernel`` (:func:`_run`)."""
    a_values, a_offsets = _packed(a_values, a_offsets, names[0])
    b_values, b_offsets = _packed(b_values, b_offsets, names[1])
    _same_count((names[0], a_offsets), (names[1], b_offsets))
    n = a_offsets.shape[0] - 1
    out = np.empty((n, width) if width else n, dtype=np.int64)
    return _run(chunk_kernel, threads, out, a_values.shape[0] + b_values.shape[0],
                a_values, a_offsets, b_values, b_offsets)


def levenshtein_distance_batch(a_values, a_offsets, b_values, b_offsets, threads=0) -> np.ndarray:
    """Unit-cost Levenshtein distance of every pair; ``int64[n]``."""
    return _pair_batch(_distance_chunk, 0, ("a", "b"), a_values, a_offsets, b_values, b_offsets, threads)


def lcs_length_batch(a_values, a_offsets, b_values, b_offsets, threads=0) -> np.ndarray:
    """Length of a longest common subsequence of every pair; ``int64[n]``."""
    return _pair_batch(_lcs_chunk, 0, ("a", "b"), a_values, a_offsets, b_values, b_offsets, threads)


def best_substring_batch(pattern_values, pattern_offsets, text_values, text_offsets, threads=0) -> np.ndarray:
    """``int64[n, 3]`` rows ``(d, start, end)``: the best substring of each text for its pattern."""
    return _pair_batch(_substring_chunk, 3, ("pattern", "text"), pattern_values, pattern_offsets,
                       text_values, text_offsets, threads)


def levenshtein_alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads=0) -> np.ndarray:
    """``int64[n, 4]``: hits, substitutions, deletions, insertions of rapidfuzz's edit script."""
    return _pair_batch(_alignment_chunk, 4, ("ref", "hyp"), ref_values, ref_offsets, hyp_values, hyp_offsets,
                       threads)


def word_alignment_batch(ref_values, ref_offsets, hyp_values, hyp_offsets, threads=0) -> np.ndarray:
    """``int64[n, 6]``: hits, substitutions, deletions, insertions, ref_words, hyp_words of the
    word-level edit script (words as Python's ``str.split()`` finds them)."""
    return _pair_batch(_word_alignment_chunk, 6, ("ref", "hyp"), ref_values, ref_offsets, hyp_values, hyp_offsets,
                       threads)


def schwa_distance_batch(gt_values, gt_offsets, pred_values, pred_offsets,
                         gt_join_values, gt_join_offsets, pred_join_values, pred_join_offsets,
                         schwa_chars, threads=0) -> np.ndarray:
    """Schwa-forgiving distance (docs/decisions.md#schwa-forgiving-distance) of every pair; ``int64[n]``."""
    gt_values, gt_offsets = _packed(gt_values, gt_offsets, "gt")
    pred_values, pred_offsets = _packed(pred_values, pred_offsets, "pred")
    gt_join_values, gt_join_offsets = _packed(gt_join_values, gt_join_offsets, "gt_join", np.int64)
    pred_join_values, pred_join_offsets = _packed(pred_join_values, pred_join_offsets, "pred_join", np.int64)
    schwa_chars = _array(schwa_chars, np.uint32, "schwa_chars")
    _same_count(("gt", gt_offsets), ("pred", pred_offsets),
                ("gt_join", gt_join_offsets), ("pred_join", pred_join_offsets))
    for side, joins, join_offsets, offsets in (
        ("gt", gt_join_values, gt_join_offsets, gt_offsets),
        ("pred", pred_join_values, pred_join_offsets, pred_offsets),
    ):
        lengths = np.repeat(np.diff(offsets), np.diff(join_offsets))  # the item length of each join
        bad = np.flatnonzero((joins < 0) | (joins > lengths))
        if bad.size:
            k = int(bad[0])
            raise ValueError(
                f"{side}_join_values must lie in [0, len(text)] of their item; "
                f"got {int(joins[k])} for an item of length {int(lengths[k])}"
            )
    out = np.empty(gt_offsets.shape[0] - 1, dtype=np.int64)
    return _run(_schwa_chunk, threads, out, gt_values.shape[0] + pred_values.shape[0],
                gt_values, gt_offsets, pred_values, pred_offsets,
                gt_join_values, gt_join_offsets, pred_join_values, pred_join_offsets, schwa_chars)


def levenshtein_editops(ref, hyp) -> np.ndarray:
    """Edit operations turning ``ref`` into ``hyp``; ``int64[k, 3]`` rows ``(op, ref_pos, hyp_pos)``
    with op 1 = substitute, 2 = delete, 3 = insert, positions as rapidfuzz's ``editops`` reports them."""
    return _editops_kernel(_array(ref, np.uint32, "ref"), _array(hyp, np.uint32, "hyp"))
