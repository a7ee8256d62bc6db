"""Numba twin of the ``fca`` kernel: same signature and result as ``scorekit._core.fca_errors``.

The matching of ``rust/kernels/src/fca.rs`` (see :mod:`scorekit._kernels.fca`) with the same
layout: pieces numbered on first sight through open-addressing tables, each step's runs as rows
of piece numbers in two arenas, runs taken by their first ground-truth piece so that a stamp
array asks for each distinct pair's alignment once per step (a run's other longest pieces ask
pair by pair), equal states merged by a hash checked for equality. The alignments are the
Levenshtein twin's best substring. Where it differs from the Rust kernel, for simplicity: the
known alignments are one table keyed by the pair (not one small table per ground-truth piece,
fetched ahead), and every buffer is sized at the start of a step for the most that step can add,
so the helpers never grow one. Validation happens
here in Python, with the Rust messages."""

from __future__ import annotations

import numba
import numpy as np

from scorekit._kernels.fca import MAX_COEFFICIENT, MAX_SIDE
from scorekit._kernels.levenshtein_numba import _best_substring

_jit = numba.njit(cache=True, nogil=True)

_EMPTY = -1  # no key of a table
_NONE = -1  # a finished state's number, and the end of a chain
_UNSET = -2  # a choice not yet made into a state
_MUL = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, Fibonacci hashing
_LOW = (1 << 32) - 1


@_jit
def _find(keys, shift, key):
    """The slot of ``key`` in the table ``keys``, or the empty slot where it would go."""
    mask = keys.shape[0] - 1
    at = ((key * _MUL) >> shift) & mask
    while keys[at] != key and keys[at] != _EMPTY:
        at = (at + 1) & mask
    return at


@_jit
def _reserve(keys, values, meta, extra):
    """The table (``meta``: entries, shift) with room for ``extra`` more entries at most half full."""
    size = keys.shape[0]
    shift = meta[1]
    while 2 * (meta[0] + extra) > size:
        size *= 2
        shift -= 1
    if size == keys.shape[0]:
        return keys, values
    new_keys = np.full(size, _EMPTY, dtype=np.int64)
    new_values = np.zeros(size, dtype=np.int64)
    for i in range(keys.shape[0]):
        if keys[i] != _EMPTY:
            at = _find(new_keys, shift, keys[i])
            new_keys[at] = keys[i]
            new_values[at] = values[i]
    meta[1] = shift
    return new_keys, new_values


@_jit
def _grown(array, need):
    """``array``, or a copy at least twice as long when it is shorter than ``need``."""
    if array.shape[0] >= need:
        return array
    out = np.empty(max(need, 2 * array.shape[0]), dtype=array.dtype)
    out[:array.shape[0]] = array
    return out


@_jit
def _number(pieces, start, end):
    """The number of the piece ``start..end`` in ``pieces`` (starts, ends, and the table of their
    numbers: keys, values, meta), numbered now if new (room reserved)."""
    starts, ends, keys, values, meta = pieces
    key = (start << 32) | end
    at = _find(keys, meta[1], key)
    if keys[at] == key:
        return values[at]
    n = meta[0]
    starts[n], ends[n] = start, end
    keys[at], values[at] = key, n
    meta[0] = n + 1
    return n


@_jit
def _insert_sorted(row, lo, hi, piece, starts, ends):
    """Insert ground-truth ``piece`` into ``row[lo:hi]`` (longest first, then by position)."""
    length, start = ends[piece] - starts[piece], starts[piece]
    at = hi
    while at > lo:
        x = row[at - 1]
        if ends[x] - starts[x] > length or (ends[x] - starts[x] == length and starts[x] < start):
            break
        row[at] = x
        at -= 1
    row[at] = piece


@_jit
def _same(row, a_lo, a_hi, b_lo, b_hi):
    """Whether ``row[a_lo:a_hi]`` equals ``row[b_lo:b_hi]``."""
    if a_hi - a_lo != b_hi - b_lo:
        return False
    for i in range(a_hi - a_lo):
        if row[a_lo + i] != row[b_lo + i]:
            return False
    return True


@_jit
def _state_hash(gt, gt_lo, gt_hi, ocr, ocr_lo, ocr_hi):
    h = np.int64(gt_hi - gt_lo)
    for i in range(gt_lo, gt_hi):
        h = (((h << 23) | ((h >> 41) & ((1 << 23) - 1))) ^ gt[i]) * _MUL
    for i in range(ocr_lo, ocr_hi):
        h = (((h << 23) | ((h >> 41) & ((1 << 23) - 1))) ^ ocr[i]) * _MUL
    return (h ^ ((h >> 31) & ((1 << 33) - 1))) & np.int64(0x7FFFFFFFFFFFFFFF)


@_jit
def _length(row, starts, ends):
    """The characters of the pieces ``row``."""
    total = 0
    for x in row:
        total += ends[x] - starts[x]
    return total


@_jit
def _next_rows(gt_rest, ocr, chosen, s, e, g, gt_pieces, ocr_pieces, next_gt, gt_lo, next_ocr, ocr_lo):
    """Write the rows of the state after ground-truth piece ``g`` (``gt_rest`` the run's other
    pieces) matches ``ocr[chosen]`` on its best substring ``s..e`` at ``next_gt[gt_lo:]`` and
    ``next_ocr[ocr_lo:]``; what is left of the longer piece goes back. Returns the rows' ends."""
    g_start, g_end = gt_pieces[0], gt_pieces[1]
    o_start, o_end = ocr_pieces[0], ocr_pieces[1]
    o = ocr[chosen]
    gs, ge, os, oe = g_start[g], g_end[g], o_start[o], o_end[o]
    gt_hi = gt_lo + gt_rest.shape[0]
    next_gt[gt_lo:gt_hi] = gt_rest
    next_ocr[ocr_lo:ocr_lo + chosen] = ocr[:chosen]
    ocr_hi = ocr_lo + chosen
    if ge - gs <= oe - os:
        for a, b in ((os, os + s), (os + e, oe)):
            if b > a:
                next_ocr[ocr_hi] = _number(ocr_pieces, a, b)
                ocr_hi += 1
    else:
        for a, b in ((gs, gs + s), (gs + e, ge)):
            if b > a:
                _insert_sorted(next_gt, gt_lo, gt_hi, _number(gt_pieces, a, b), g_start, g_end)
                gt_hi += 1
    rest = ocr.shape[0] - chosen - 1
    next_ocr[ocr_hi:ocr_hi + rest] = ocr[chosen + 1:]
    return gt_hi, ocr_hi + rest


@_jit
def _merge(next_gt, next_gt_at, next_ocr, next_ocr_at, next_errors, same_hash, merged, n_next, gt_hi, ocr_hi,
           errors):
    """The number of the state whose rows were just written after state ``n_next - 1``: an equal
    state's (its errors lowered to ``errors`` if fewer), else ``n_next``, the rows kept."""
    keys, values, meta = merged
    gt_lo, ocr_lo = next_gt_at[n_next], next_ocr_at[n_next]
    h = _state_hash(next_gt, gt_lo, gt_hi, next_ocr, ocr_lo, ocr_hi)
    at = _find(keys, meta[1], h)
    other = values[at] if keys[at] == h else _NONE
    while other != _NONE:
        if (_same(next_gt, next_gt_at[other], next_gt_at[other + 1], gt_lo, gt_hi)
                and _same(next_ocr, next_ocr_at[other], next_ocr_at[other + 1], ocr_lo, ocr_hi)):
            next_errors[other] = min(next_errors[other], errors)
            return other
        other = same_hash[other]
    if keys[at] == h:  # another state has this hash: chain this one after it
        same_hash[n_next] = same_hash[values[at]]
        same_hash[values[at]] = n_next
    else:
        same_hash[n_next] = _NONE
        keys[at], values[at] = h, n_next
        meta[0] += 1
    next_errors[n_next] = errors
    next_gt_at[n_next + 1], next_ocr_at[n_next + 1] = gt_hi, ocr_hi
    return n_next


@_jit
def _alignment(known, aligned, g, o, gt_values, ocr_values, gt_pieces, ocr_pieces, cost, first):
    """The row of ``aligned`` holding the alignment ``(d, start, end)`` of the pair ``(g, o)``,
    computed now if not met before (room reserved); ``known`` maps ``g << 32 | o`` to it."""
    keys, values, meta = known
    key = (g << 32) | o
    at = _find(keys, meta[1], key)
    if keys[at] != key:
        gs, ge, os, oe = gt_pieces[0][g], gt_pieces[1][g], ocr_pieces[0][o], ocr_pieces[1][o]
        if ge - gs <= oe - os:
            d, s, e = _best_substring(gt_values[gs:ge], ocr_values[os:oe], cost, first)
        else:
            d, s, e = _best_substring(ocr_values[os:oe], gt_values[gs:ge], cost, first)
        n = meta[0]
        aligned[n, 0], aligned[n, 1], aligned[n, 2] = d, s, e
        keys[at], values[at] = key, n
        meta[0] = n + 1
    return values[at]


@_jit
def _matching(gt_values, gt_lines, ocr_values, ocr_lines, coefficients):
    """The fewest errors (both sides hold pieces; lines as ``(start, end)`` rows)."""
    # Pieces of each side: starts, ends, number table (keys, values, meta = [count, shift]).
    g_start, g_end = np.empty(16, np.int64), np.empty(16, np.int64)
    g_keys, g_values, g_meta = np.full(16, _EMPTY, np.int64), np.zeros(16, np.int64), np.array([0, 60])
    o_start, o_end = np.empty(16, np.int64), np.empty(16, np.int64)
    o_keys, o_values, o_meta = np.full(16, _EMPTY, np.int64), np.zeros(16, np.int64), np.array([0, 60])
    # Known alignments: (g << 32 | o) -> row of `aligned` (d, start, end).
    k_keys, k_values, k_meta = np.full(16, _EMPTY, np.int64), np.zeros(16, np.int64), np.array([0, 60])
    aligned = np.empty((16, 3), np.int64)
    longest = 1
    for i in range(gt_lines.shape[0]):
        longest = max(longest, gt_lines[i, 1] - gt_lines[i, 0])
    for i in range(ocr_lines.shape[0]):
        longest = max(longest, ocr_lines[i, 1] - ocr_lines[i, 0])
    cost, first = np.empty(longest + 1, np.int64), np.empty(longest + 1, np.int64)

    # The runs of this step: rows of piece numbers in arenas, and their errors.
    n_gt, n_ocr = gt_lines.shape[0], ocr_lines.shape[0]
    g_start, g_end = _grown(g_start, n_gt), _grown(g_end, n_gt)
    o_start, o_end = _grown(o_start, n_ocr), _grown(o_end, n_ocr)
    g_keys, g_values = _reserve(g_keys, g_values, g_meta, n_gt)
    o_keys, o_values = _reserve(o_keys, o_values, o_meta, n_ocr)
    gt = np.empty(n_gt, np.int64)
    for i in range(n_gt):
        gt[i] = _number((g_start, g_end, g_keys, g_values, g_meta), gt_lines[i, 0], gt_lines[i, 1])
    gt = gt[np.argsort(g_start[:n_gt] - g_end[:n_gt], kind="mergesort")]  # lines come by position
    ocr = np.empty(n_ocr, np.int64)
    for i in range(n_ocr):
        ocr[i] = _number((o_start, o_end, o_keys, o_values, o_meta), ocr_lines[i, 0], ocr_lines[i, 1])
    gt_at, ocr_at = np.array([0, n_gt]), np.array([0, n_ocr])
    errors = np.zeros(1, np.int64)
    n_runs = 1

    n_coef = coefficients.shape[0]
    active = np.arange(n_coef)
    n_active = n_coef
    run_of = np.zeros(n_coef, np.int64)
    stamp = np.zeros(16, np.int64)
    slot = np.zeros(16, np.int64)
    group = 0
    best = np.iinfo(np.int64).max
    m_keys, m_values, m_meta = np.full(16, _EMPTY, np.int64), np.zeros(16, np.int64), np.array([0, 60])
    features = np.empty((16, 4), np.int64)
    rows = np.empty(16, np.int64)
    choice_state = np.empty(16, np.int64)

    while n_runs > 0:
        # The coefficient combinations of each run, by a counting sort.
        members_at = np.zeros(n_runs + 1, np.int64)
        for a in range(n_active):
            members_at[run_of[active[a]] + 1] += 1
        for r in range(n_runs):
            members_at[r + 1] += members_at[r]
        members = np.empty(n_active, np.int64)
        fill = members_at.copy()
        for a in range(n_active):
            r = run_of[active[a]]
            members[fill[r]] = active[a]
            fill[r] += 1
        # Each run's candidates: its ground-truth pieces as long as its first (the row is longest
        # first, then by position, so they lead it in line order).
        tied = np.ones(n_runs, np.int64)
        for r in range(n_runs):
            first_len = g_end[gt[gt_at[r]]] - g_start[gt[gt_at[r]]]
            while (gt_at[r] + tied[r] < gt_at[r + 1]
                   and g_end[gt[gt_at[r] + tied[r]]] - g_start[gt[gt_at[r] + tied[r]]] == first_len):
                tied[r] += 1
        # Room for the most this step can add: one state per run and choice, two pieces each.
        new_states, new_pairs, new_gt, new_ocr, widest = 0, 0, 0, 0, 0
        for r in range(n_runs):
            k = ocr_at[r + 1] - ocr_at[r]
            states = min(members_at[r + 1] - members_at[r], tied[r] * k)
            new_states += states
            new_pairs += tied[r] * k
            new_gt += states * (gt_at[r + 1] - gt_at[r] + 1)
            new_ocr += states * (k + 1)
            widest = max(widest, tied[r] * k)
        g_start, g_end = _grown(g_start, g_meta[0] + 2 * new_states), _grown(g_end, g_meta[0] + 2 * new_states)
        o_start, o_end = _grown(o_start, o_meta[0] + 2 * new_states), _grown(o_end, o_meta[0] + 2 * new_states)
        g_keys, g_values = _reserve(g_keys, g_values, g_meta, 2 * new_states)
        o_keys, o_values = _reserve(o_keys, o_values, o_meta, 2 * new_states)
        k_keys, k_values = _reserve(k_keys, k_values, k_meta, new_pairs)
        if aligned.shape[0] < k_meta[0] + new_pairs:
            bigger = np.empty((max(k_meta[0] + new_pairs, 2 * aligned.shape[0]), 3), np.int64)
            bigger[:k_meta[0]] = aligned[:k_meta[0]]
            aligned = bigger
        stamp_size = o_meta[0] + 2 * new_states
        if stamp.shape[0] < stamp_size:
            stamp = np.concatenate((stamp, np.zeros(stamp_size - stamp.shape[0], np.int64)))
            slot = _grown(slot, stamp.shape[0])
        m_meta[0] = 0
        m_keys, m_values = _reserve(m_keys, m_values, m_meta, new_states)
        m_keys[:] = _EMPTY
        merged = (m_keys, m_values, m_meta)
        known = (k_keys, k_values, k_meta)
        gt_pieces = (g_start, g_end, g_keys, g_values, g_meta)
        ocr_pieces = (o_start, o_end, o_keys, o_values, o_meta)
        features = np.empty((max(widest, 1), 4), np.int64)
        rows = _grown(rows, widest)
        choice_state = _grown(choice_state, widest)
        next_gt, next_ocr = np.empty(new_gt, np.int64), np.empty(new_ocr, np.int64)
        next_gt_at, next_ocr_at = np.zeros(new_states + 1, np.int64), np.zeros(new_states + 1, np.int64)
        next_errors = np.empty(new_states, np.int64)
        same_hash = np.empty(new_states, np.int64)
        n_next = 0

        # The runs by their first ground-truth piece: one group per piece.
        firsts = np.empty(n_runs, np.int64)
        for r in range(n_runs):
            firsts[r] = gt[gt_at[r]]
        order = np.argsort(firsts, kind="mergesort")
        i = 0
        while i < n_runs:
            g = firsts[order[i]]
            end = i
            while end < n_runs and firsts[order[end]] == g:
                end += 1
            group += 1
            for q in range(i, end):
                r = order[q]
                for p in range(ocr_at[r], ocr_at[r + 1]):
                    o = ocr[p]
                    if stamp[o] != group:
                        stamp[o] = group
                        slot[o] = _alignment(known, aligned, g, o, gt_values, ocr_values, gt_pieces, ocr_pieces,
                                             cost, first)
            a_len = g_end[g] - g_start[g]
            for q in range(i, end):
                r = order[q]
                lo, hi = ocr_at[r], ocr_at[r + 1]
                n = hi - lo
                for t in range(tied[r]):
                    gc = gt[gt_at[r] + t]
                    for p in range(lo, hi):
                        o = ocr[p]
                        if t == 0:
                            row = slot[o]
                        else:
                            row = _alignment(known, aligned, gc, o, gt_values, ocr_values, gt_pieces, ocr_pieces,
                                             cost, first)
                        b_len = o_end[o] - o_start[o]
                        short, long = min(a_len, b_len), max(a_len, b_len)
                        at = t * n + p - lo
                        features[at, 0] = aligned[row, 0]
                        features[at, 1] = long - short
                        features[at, 2] = min(aligned[row, 1], long - aligned[row, 2])
                        features[at, 3] = -short
                        rows[at] = row
                        choice_state[at] = _UNSET
                for mi in range(members_at[r], members_at[r + 1]):
                    j = members[mi]
                    c0, c1, c2, c3 = coefficients[j, 0], coefficients[j, 1], coefficients[j, 2], coefficients[j, 3]
                    # Each candidate's first OCR piece of least penalty, then the first candidate
                    # of least penalty: one scan with a strict `<` gives both.
                    chosen = 0
                    least = np.iinfo(np.int64).max
                    for k in range(tied[r] * n):
                        pen = c0 * features[k, 0] + c1 * features[k, 1] + c2 * features[k, 2] + c3 * features[k, 3]
                        if pen < least:
                            least = pen
                            chosen = k
                    if choice_state[chosen] == _UNSET:
                        # The state after run r matches its candidate t with its OCR piece `chosen % n`.
                        row = rows[chosen]
                        t = chosen // n
                        run_errors = errors[r] + aligned[row, 0]
                        gt_lo, ocr_lo = next_gt_at[n_next], next_ocr_at[n_next]
                        gt_rest = np.concatenate((gt[gt_at[r]:gt_at[r] + t], gt[gt_at[r] + t + 1:gt_at[r + 1]]))
                        gt_hi, ocr_hi = _next_rows(gt_rest, ocr[lo:hi], chosen % n,
                                                   aligned[row, 1], aligned[row, 2], gt[gt_at[r] + t], gt_pieces,
                                                   ocr_pieces, next_gt, gt_lo, next_ocr, ocr_lo)
                        state = _NONE
                        if gt_hi == gt_lo or ocr_hi == ocr_lo:
                            left = _length(next_gt[gt_lo:gt_hi], g_start, g_end)
                            best = min(best, run_errors + left + _length(next_ocr[ocr_lo:ocr_hi], o_start, o_end))
                        else:
                            state = _merge(next_gt, next_gt_at, next_ocr, next_ocr_at, next_errors, same_hash,
                                           merged, n_next, gt_hi, ocr_hi, run_errors)
                            n_next += state == n_next
                        choice_state[chosen] = state
                    run_of[j] = choice_state[chosen]
            i = end
        kept = 0
        for a in range(n_active):
            if run_of[active[a]] != _NONE:
                active[kept] = active[a]
                kept += 1
        n_active = kept
        gt, ocr, gt_at, ocr_at = next_gt, next_ocr, next_gt_at[:n_next + 1], next_ocr_at[:n_next + 1]
        errors, n_runs = next_errors, n_next
    return best


def _lines(values: np.ndarray, offsets: np.ndarray, side: str) -> np.ndarray:
    """``int64[k, 2]``: the non-empty lines ``(start, end)``, after checking the offsets."""
    if (values.ndim != 1 or offsets.ndim != 1 or not offsets.size or offsets[0] != 0
            or offsets[-1] != values.size or (np.diff(offsets) < 0).any()):
        raise ValueError(f"{side}_offsets must be n + 1 non-decreasing entries from 0 to len({side}_values)")
    lines = np.stack([offsets[:-1], offsets[1:]], axis=1).astype(np.int64)
    return lines[lines[:, 1] > lines[:, 0]]


def fca_errors(gt_values: np.ndarray, gt_offsets: np.ndarray, ocr_values: np.ndarray, ocr_offsets: np.ndarray,
               coefficients: np.ndarray) -> int:
    if (coefficients.ndim != 2 or coefficients.shape[1] != 4 or not coefficients.flags.c_contiguous
            or coefficients.dtype != np.int64):
        raise ValueError("coefficients must be a C-contiguous int64 array of shape (n, 4)")
    gt_lines = _lines(gt_values, gt_offsets, "gt")
    ocr_lines = _lines(ocr_values, ocr_offsets, "ocr")
    if not len(coefficients) or ((coefficients < 0) | (coefficients > MAX_COEFFICIENT)).any():
        raise ValueError(f"coefficients must be at least one row of four integers in 0..={MAX_COEFFICIENT}")
    if not len(gt_lines) or not len(ocr_lines):
        return int(gt_values.size + ocr_values.size)
    for values, side in ((gt_values, "gt"), (ocr_values, "ocr")):
        if values.size >= MAX_SIDE:
            raise ValueError(f"{side} has {MAX_SIDE} characters or more")
    return int(_matching(gt_values, gt_lines, ocr_values, ocr_lines, coefficients))
