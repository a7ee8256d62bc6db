"""Numba twin of the tree kernel family (``rust/kernels/src/tree``): Zhang–Shasha tree edit distance.

Same signatures, same validation and bit-identical results as ``scorekit._core.tree_distance_batch``
and ``scorekit._core.tree_mapping``: every floating-point sum and ``min`` is taken in the order the
Rust kernel documents (``del``, then ``ins``, then the rename/subtree term; the later operand wins
only when strictly smaller). Batches run serially here. This module owns the numerics only; packing
trees and building costs is ``scorekit.trees``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_MODES = (0, 1, 2)


@njit(cache=True)
def _tree_problem(lld):
    """0 if ``lld`` is one post-order tree (or empty), else ``k + 1`` for the first bad node ``k``."""
    n = lld.shape[0]
    starts = np.empty(n, np.int64)
    top = 0
    for k in range(n):
        leftmost = np.int64(lld[k])
        if leftmost > k:
            return k + 1
        if leftmost < k:
            while True:
                if top == 0:
                    return k + 1
                top -= 1
                s = starts[top]
                if s == leftmost:
                    break
                if s < leftmost:
                    return k + 1
        starts[top] = leftmost
        top += 1
    if n > 0 and top != 1:
        return n
    return 0


@njit(cache=True)
def _levenshtein(a, b, row):
    la, lb = a.shape[0], b.shape[0]
    p = 0
    while p < la and p < lb and a[p] == b[p]:
        p += 1
    s = 0
    while s < la - p and s < lb - p and a[la - 1 - s] == b[lb - 1 - s]:
        s += 1
    a = a[p:la - s]
    b = b[p:lb - s]
    la, lb = a.shape[0], b.shape[0]
    if la == 0:
        return lb
    if lb == 0:
        return la
    for j in range(lb + 1):
        row[j] = j
    for i in range(la):
        diagonal = row[0]
        row[0] = i + 1
        ca = a[i]
        for j in range(lb):
            substitute = diagonal + (1 if ca != b[j] else 0)
            delete = row[j + 1] + 1
            insert = row[j] + 1
            diagonal = row[j + 1]
            best = substitute if substitute < delete else delete
            row[j + 1] = best if best < insert else insert
    return row[lb]


@njit(cache=True)
def _rename(a, b, labels1, labels2, mode, table, n_labels, tv1, to1, tv2, to2, mismatch, row):
    la = labels1[a]
    lb = labels2[b]
    if mode == 0:
        return 0.0 if la == lb else 1.0
    if mode == 1:
        return table[np.int64(la) * n_labels + np.int64(lb)]
    if la != lb:
        return mismatch
    x = tv1[to1[a]:to1[a + 1]]
    y = tv2[to2[b]:to2[b + 1]]
    if x.shape[0] == y.shape[0]:
        same = True
        for k in range(x.shape[0]):
            if x[k] != y[k]:
                same = False
                break
        if same:
            return 0.0
    longest = max(x.shape[0], y.shape[0])
    return float(_levenshtein(x, y, row)) / float(longest)


@njit(cache=True)
def _forest(i, j, labels1, lld1, labels2, lld2, delete, insert, mode, table, n_labels,
            tv1, to1, tv2, to2, mismatch, td, fd, row, store):
    n2 = lld2.shape[0]
    l1 = np.int64(lld1[i])
    l2 = np.int64(lld2[j])
    rows = i - l1 + 2
    width = j - l2 + 2
    fd[0] = 0.0
    for x in range(1, rows):
        fd[x * width] = fd[(x - 1) * width] + delete[l1 + x - 1]
    for y in range(1, width):
        fd[y] = fd[y - 1] + insert[l2 + y - 1]
    for x in range(1, rows):
        a = l1 + x - 1
        la = np.int64(lld1[a])
        cost_delete = delete[a]
        for y in range(1, width):
            b = l2 + y - 1
            lb = np.int64(lld2[b])
            d = fd[(x - 1) * width + y] + cost_delete
            s = fd[x * width + y - 1] + insert[b]
            best = s if s < d else d
            if la == l1 and lb == l2:
                r = fd[(x - 1) * width + y - 1] + _rename(
                    a, b, labels1, labels2, mode, table, n_labels, tv1, to1, tv2, to2, mismatch, row)
                value = r if r < best else best
                fd[x * width + y] = value
                if store:
                    td[a * n2 + b] = value
            else:
                r = fd[(la - l1) * width + (lb - l2)] + td[a * n2 + b]
                fd[x * width + y] = r if r < best else best


@njit(cache=True)
def _keyroots(lld):
    n = lld.shape[0]
    seen = np.zeros(n, np.bool_)
    out = np.empty(n, np.int64)
    count = 0
    for k in range(n - 1, -1, -1):
        leftmost = lld[k]
        if not seen[leftmost]:
            seen[leftmost] = True
            out[count] = k
            count += 1
    return out[:count][::-1].copy()


@njit(cache=True)
def _run(labels1, lld1, labels2, lld2, delete, insert, mode, table, n_labels, tv1, to1, tv2, to2, mismatch):
    """Fill the tree-distance table; returns (distance, td, fd, row)."""
    n1, n2 = labels1.shape[0], labels2.shape[0]
    td = np.zeros(n1 * n2, np.float64)
    fd = np.zeros((n1 + 1) * (n2 + 1), np.float64)
    longest = 0
    if mode == 2:
        for k in range(n1):
            longest = max(longest, to1[k + 1] - to1[k])
        for k in range(n2):
            longest = max(longest, to2[k + 1] - to2[k])
    row = np.empty(longest + 1, np.int64)
    if n1 == 0 or n2 == 0:
        total_delete = 0.0
        for k in range(n1):
            total_delete += delete[k]
        total_insert = 0.0
        for k in range(n2):
            total_insert += insert[k]
        return total_delete + total_insert, td, fd, row
    for i in _keyroots(lld1):
        for j in _keyroots(lld2):
            _forest(i, j, labels1, lld1, labels2, lld2, delete, insert, mode, table, n_labels,
                    tv1, to1, tv2, to2, mismatch, td, fd, row, True)
    return td[n1 * n2 - 1], td, fd, row


@njit(cache=True)
def _distance_batch(labels1, lld1, offsets1, labels2, lld2, offsets2, delete_costs, insert_costs,
                    mode, table, n_labels, tv1, to1, tv2, to2, mismatch):
    n = offsets1.shape[0] - 1
    out = np.empty(n, np.float64)
    for p in range(n):
        s1, e1 = offsets1[p], offsets1[p + 1]
        s2, e2 = offsets2[p], offsets2[p + 1]
        if delete_costs.shape[0] == 0:
            delete = np.ones(e1 - s1, np.float64)
        else:
            delete = delete_costs[s1:e1]
        if insert_costs.shape[0] == 0:
            insert = np.ones(e2 - s2, np.float64)
        else:
            insert = insert_costs[s2:e2]
        if mode == 2:
            o1 = to1[s1:e1 + 1]
            o2 = to2[s2:e2 + 1]
        else:
            o1 = to1[0:0]
            o2 = to2[0:0]
        out[p] = _run(labels1[s1:e1], lld1[s1:e1], labels2[s2:e2], lld2[s2:e2], delete, insert,
                      mode, table, n_labels, tv1, o1, tv2, o2, mismatch)[0]
    return out


@njit(cache=True)
def _mapping(labels1, lld1, labels2, lld2, delete, insert, mode, table, n_labels, tv1, to1, tv2, to2, mismatch):
    distance, td, fd, row = _run(labels1, lld1, labels2, lld2, delete, insert, mode, table, n_labels,
                                 tv1, to1, tv2, to2, mismatch)
    n1, n2 = labels1.shape[0], labels2.shape[0]
    out = np.empty((n1 + n2, 2), np.int64)
    count = 0
    if n1 == 0 or n2 == 0:
        for a in range(n1):
            out[count, 0] = a
            out[count, 1] = -1
            count += 1
        for b in range(n2):
            out[count, 0] = -1
            out[count, 1] = b
            count += 1
        return distance, out[:count]
    pending = np.empty((n1 + n2, 2), np.int64)
    pending[0, 0] = n1 - 1
    pending[0, 1] = n2 - 1
    top = 1
    while top > 0:
        top -= 1
        i, j = pending[top, 0], pending[top, 1]
        _forest(i, j, labels1, lld1, labels2, lld2, delete, insert, mode, table, n_labels,
                tv1, to1, tv2, to2, mismatch, td, fd, row, False)
        l1 = np.int64(lld1[i])
        l2 = np.int64(lld2[j])
        width = j - l2 + 2
        x, y = i - l1 + 1, j - l2 + 1
        while x > 0 or y > 0:
            here = fd[x * width + y]
            if x > 0 and here == fd[(x - 1) * width + y] + delete[l1 + x - 1]:
                out[count, 0] = l1 + x - 1
                out[count, 1] = -1
                count += 1
                x -= 1
            elif y > 0 and here == fd[x * width + y - 1] + insert[l2 + y - 1]:
                out[count, 0] = -1
                out[count, 1] = l2 + y - 1
                count += 1
                y -= 1
            else:
                a, b = l1 + x - 1, l2 + y - 1
                la, lb = np.int64(lld1[a]), np.int64(lld2[b])
                if la == l1 and lb == l2:
                    out[count, 0] = a
                    out[count, 1] = b
                    count += 1
                    x -= 1
                    y -= 1
                else:
                    pending[top, 0] = a
                    pending[top, 1] = b
                    top += 1
                    x = la - l1
                    y = lb - l2
    return distance, out[:count]


def _bad_cost(name, costs):
    bad = np.flatnonzero(~(np.isfinite(costs) & (costs >= 0)))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"{name}[{k}] = {costs[k]} is not a finite non-negative cost")


def _check_offsets(offsets, total, name):
    if offsets.shape[0] == 0 or offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != total:
        raise ValueError(f"{name} must start at 0, never decrease and end at {total} (the number of nodes)")
    return offsets.shape[0] - 1


def _check_tree(lld, pair, side):
    problem = _tree_problem(lld)
    if problem:
        raise ValueError(f"pair {pair}, {side}: lld does not describe a post-order tree at node {problem - 1}")


def _check_costs(nodes1, nodes2, delete_costs, insert_costs, mode, table, n_labels, labels1, labels2,
                 to1, to2, mismatch):
    if delete_costs.shape[0] not in (0, nodes1):
        raise ValueError(f"delete_costs must be empty (unit) or have one entry per node of the first trees "
                         f"({nodes1}), got {delete_costs.shape[0]}")
    if insert_costs.shape[0] not in (0, nodes2):
        raise ValueError(f"insert_costs must be empty (unit) or have one entry per node of the second trees "
                         f"({nodes2}), got {insert_costs.shape[0]}")
    if mode not in _MODES:
        raise ValueError(f"rename_mode must be 0 (unit), 1 (table) or 2 (text), got {mode}")
    _bad_cost("delete_costs", delete_costs)
    _bad_cost("insert_costs", insert_costs)
    if mode == 1:
        if table.shape[0] != n_labels * n_labels:
            raise ValueError(f"rename_table must have {n_labels * n_labels} entries, got {table.shape[0]}")
        _bad_cost("rename_table", table)
        for side, labels in ((1, labels1), (2, labels2)):
            if labels.shape[0] and int(labels.max()) >= n_labels:
                raise ValueError(f"tree {side} has a label id outside the {n_labels}x{n_labels} rename table")
    if mode == 2:
        if to1.shape[0] != nodes1 + 1 or to2.shape[0] != nodes2 + 1:
            raise ValueError("text offsets must have one entry per node plus one")
        _bad_cost("label_mismatch", np.array([mismatch], np.float64))


def _arrays(labels1, lld1, labels2, lld2, delete_costs, insert_costs, table, tv1, to1, tv2, to2):
    u32 = lambda a: np.ascontiguousarray(a, np.uint32)  # noqa: E731
    i64 = lambda a: np.ascontiguousarray(a, np.int64)  # noqa: E731
    f64 = lambda a: np.ascontiguousarray(a, np.float64)  # noqa: E731
    return (u32(labels1), u32(lld1), u32(labels2), u32(lld2), f64(delete_costs), f64(insert_costs),
            f64(table), u32(tv1), i64(to1), u32(tv2), i64(to2))


def _check_text_offsets(offsets, values, side):
    if offsets.shape[0] and (offsets[0] < 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > values.shape[0]):
        raise ValueError(f"text offsets of tree {side} must be n + 1 non-decreasing in-range values")


def tree_distance_batch(labels1, lld1, offsets1, labels2, lld2, offsets2, delete_costs, insert_costs,
                        rename_mode, rename_table, n_labels, text1_values, text1_offsets, text2_values,
                        text2_offsets, label_mismatch, threads=0):
    """Zhang–Shasha distance of every packed pair; ``float64[n_pairs]`` (see ``scorekit._kernels.tree``)."""
    (labels1, lld1, labels2, lld2, delete_costs, insert_costs, rename_table, text1_values, text1_offsets,
     text2_values, text2_offsets) = _arrays(labels1, lld1, labels2, lld2, delete_costs, insert_costs,
                                            rename_table, text1_values, text1_offsets, text2_values, text2_offsets)
    offsets1 = np.ascontiguousarray(offsets1, np.int64)
    offsets2 = np.ascontiguousarray(offsets2, np.int64)
    if labels1.shape[0] != lld1.shape[0] or labels2.shape[0] != lld2.shape[0]:
        raise ValueError("labels and lld must have the same length on each side")
    n = _check_offsets(offsets1, labels1.shape[0], "offsets1")
    m = _check_offsets(offsets2, labels2.shape[0], "offsets2")
    if n != m:
        raise ValueError(f"offsets1 has {n} items but offsets2 has {m}")
    _check_costs(labels1.shape[0], labels2.shape[0], delete_costs, insert_costs, rename_mode, rename_table,
                 n_labels, labels1, labels2, text1_offsets, text2_offsets, label_mismatch)
    for p in range(n):
        _check_tree(lld1[offsets1[p]:offsets1[p + 1]], p, "first tree")
        _check_tree(lld2[offsets2[p]:offsets2[p + 1]], p, "second tree")
    if rename_mode == 2:
        _check_text_offsets(text1_offsets, text1_values, 1)
        _check_text_offsets(text2_offsets, text2_values, 2)
    return _distance_batch(labels1, lld1, offsets1, labels2, lld2, offsets2, delete_costs, insert_costs,
                           int(rename_mode), rename_table, int(n_labels), text1_values, text1_offsets,
                           text2_values, text2_offsets, float(label_mismatch))


def tree_mapping(labels1, lld1, labels2, lld2, delete_costs, insert_costs, rename_mode, rename_table, n_labels,
                 text1_values, text1_offsets, text2_values, text2_offsets, label_mismatch):
    """Distance and one optimal edit mapping of a single pair; ``(float, int64[k, 2])``, -1 = no partner."""
    (labels1, lld1, labels2, lld2, delete_costs, insert_costs, rename_table, text1_values, text1_offsets,
     text2_values, text2_offsets) = _arrays(labels1, lld1, labels2, lld2, delete_costs, insert_costs,
                                            rename_table, text1_values, text1_offsets, text2_values, text2_offsets)
    if labels1.shape[0] != lld1.shape[0] or labels2.shape[0] != lld2.shape[0]:
        raise ValueError("labels and lld must have the same length on each side")
    _check_costs(labels1.shape[0], labels2.shape[0], delete_costs, insert_costs, rename_mode, rename_table,
                 n_labels, labels1, labels2, text1_offsets, text2_offsets, label_mismatch)
    _check_tree(lld1, 0, "first tree")
    _check_tree(lld2, 0, "second tree")
    if rename_mode == 2:
        _check_text_offsets(text1_offsets, text1_values, 1)
        _check_text_offsets(text2_offsets, text2_values, 2)
    delete = delete_costs if delete_costs.shape[0] else np.ones(labels1.shape[0], np.float64)
    insert = insert_costs if insert_costs.shape[0] else np.ones(labels2.shape[0], np.float64)
    return _mapping(labels1, lld1, labels2, lld2, delete, insert, int(rename_mode), rename_table, int(n_labels),
                    text1_values, text1_offsets, text2_values, text2_offsets, float(label_mismatch))
