"""Numba twin of the graph edit distance kernel (``rust/kernels/src/ged``).

Owns the same search as the Rust kernel, step for step: depth-first branch and bound over the
graph-1 nodes (fail-first node choice), an assignment lower bound per visited state whose duals
bound its children, every bound's assignment completed into an upper bound, and a budget on expanded
states. The floating-point
operations happen in the same order, so both backends return identical distances, bounds, flags
and expansion counts. Inputs are validated here with the same messages as the Rust kernel.

Functions take the arrays documented in :mod:`scorekit._kernels.ged`.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from scorekit._kernels.ged import UNLIMITED

_UNDECIDED = -2
_EPS = -1
_NO_EDGE = -1


@nb.njit(cache=True)
def _lsap(cost, ld, rows, cols, row_pot, col_pot, col_row, way, min_slack, col_done, row_col):
    """Rectangular assignment (rows <= cols) by shortest augmenting paths; returns the cost."""
    for j in range(cols + 1):
        col_pot[j] = 0.0
        col_row[j] = 0
        way[j] = 0
    for i in range(rows + 1):
        row_pot[i] = 0.0
    for i in range(1, rows + 1):
        col_row[0] = i
        j0 = 0
        for j in range(cols + 1):
            min_slack[j] = math.inf
            col_done[j] = False
        while True:
            col_done[j0] = True
            i0 = col_row[j0]
            delta = math.inf
            j1 = 0
            base = (i0 - 1) * ld
            for j in range(1, cols + 1):
                if not col_done[j]:
                    slack = cost[base + j - 1] - row_pot[i0] - col_pot[j]
                    if slack < min_slack[j]:
                        min_slack[j] = slack
                        way[j] = j0
                    if min_slack[j] < delta:
                        delta = min_slack[j]
                        j1 = j
            for j in range(cols + 1):
                if col_done[j]:
                    row_pot[col_row[j]] += delta
                    col_pot[j] -= delta
                else:
                    min_slack[j] -= delta
            j0 = j1
            if col_row[j0] == 0:
                break
        while True:
            j1 = way[j0]
            col_row[j0] = col_row[j1]
            j0 = j1
            if j0 == 0:
                break
    for j in range(1, cols + 1):
        i = col_row[j]
        if i > 0:
            row_col[i - 1] = j - 1
    total = 0.0
    for i in range(rows):
        total += cost[i * ld + row_col[i]]
    return total


@nb.njit(cache=True, inline="always")
def _pair_cost(a, b, edge_pair, edge_del, edge_ins, c2):
    if a < 0:
        if b < 0:
            return 0.0
        return edge_ins[b]
    if b < 0:
        return edge_del[a]
    return edge_pair[a * c2 + b]


@nb.njit(cache=True)
def _smallest_sum(values, n, k):
    total = 0.0
    for t in range(k):
        best = t
        for i in range(t + 1, n):
            if values[i] < values[best]:
                best = i
        tmp = values[t]
        values[t] = values[best]
        values[best] = tmp
        total += values[t]
    return total


@nb.njit(cache=True)
def _step_cost(u, v, pb, st):
    (n1, n2, directed, node_sub, node_del, node_ins, adj1, adj2, edge_pair, edge_del, edge_ins, c2) = pb
    map1, decided, counts = st[0], st[2], st[5]
    nd = counts[0]
    if v == _EPS:
        cost = node_del[u] + _pair_cost(adj1[u * n1 + u], _NO_EDGE, edge_pair, edge_del, edge_ins, c2)
        for t in range(nd):
            p = decided[t]
            cost += _pair_cost(adj1[u * n1 + p], _NO_EDGE, edge_pair, edge_del, edge_ins, c2)
            if directed:
                cost += _pair_cost(adj1[p * n1 + u], _NO_EDGE, edge_pair, edge_del, edge_ins, c2)
        return cost
    cost = node_sub[u * n2 + v] + _pair_cost(adj1[u * n1 + u], adj2[v * n2 + v], edge_pair, edge_del, edge_ins, c2)
    for t in range(nd):
        p = decided[t]
        q = map1[p]
        out2 = adj2[v * n2 + q] if q >= 0 else _NO_EDGE
        cost += _pair_cost(adj1[u * n1 + p], out2, edge_pair, edge_del, edge_ins, c2)
        if directed:
            in2 = adj2[q * n2 + v] if q >= 0 else _NO_EDGE
            cost += _pair_cost(adj1[p * n1 + u], in2, edge_pair, edge_del, edge_ins, c2)
    return cost


@nb.njit(cache=True)
def _insert_cost(v, pb, st):
    (n1, n2, directed, node_sub, node_del, node_ins, adj1, adj2, edge_pair, edge_del, edge_ins, c2) = pb
    map1, decided, counts = st[0], st[2], st[5]
    cost = node_ins[v] + _pair_cost(_NO_EDGE, adj2[v * n2 + v], edge_pair, edge_del, edge_ins, c2)
    for t in range(counts[0]):
        q = map1[decided[t]]
        if q >= 0:
            cost += _pair_cost(_NO_EDGE, adj2[v * n2 + q], edge_pair, edge_del, edge_ins, c2)
            if directed:
                cost += _pair_cost(_NO_EDGE, adj2[q * n2 + v], edge_pair, edge_del, edge_ins, c2)
    return cost


@nb.njit(cache=True)
def _match_bound(a, a_start, na, b, b_start, nb_, pb, excess):
    """Bound on matching edge classes ``a[a_start:a_start+na]`` against ``b[b_start:b_start+nb_]``."""
    edge_pair, edge_del, edge_ins, c2 = pb[8], pb[9], pb[10], pb[11]
    side1 = 0.0
    for i in range(na):
        x = a[a_start + i]
        best = edge_del[x]
        for j in range(nb_):
            best = min(best, edge_pair[x * c2 + b[b_start + j]])
        side1 += best
        excess[i] = edge_del[x] - best
    if na > nb_:
        side1 += _smallest_sum(excess, na, na - nb_)
    side2 = 0.0
    for j in range(nb_):
        y = b[b_start + j]
        best = edge_ins[y]
        for i in range(na):
            best = min(best, edge_pair[a[a_start + i] * c2 + y])
        side2 += best
        excess[j] = edge_ins[y] - best
    if nb_ > na:
        side2 += _smallest_sum(excess, nb_, nb_ - na)
    return max(side1, side2)


@nb.njit(cache=True)
def _collect_inner_edges(pb, st):
    """Edge classes among undecided graph-1 nodes (per row) and free graph-2 nodes (per column)."""
    n1, n2, directed, adj1, adj2 = pb[0], pb[1], pb[2], pb[6], pb[7]
    rows, cols, counts, inner1, inner2, len1, len2 = st[3], st[4], st[5], st[6], st[7], st[9], st[10]
    for i in range(counts[1]):
        u = rows[i]
        out = 0
        inc = 0
        for t in range(counts[1]):
            w = rows[t]
            if w == u:
                continue
            e = adj1[u * n1 + w]
            if e >= 0:
                inner1[2 * i * n1 + out] = e
                out += 1
            if directed:
                e = adj1[w * n1 + u]
                if e >= 0:
                    inner1[(2 * i + 1) * n1 + inc] = e
                    inc += 1
        len1[2 * i] = out
        len1[2 * i + 1] = inc
    for j in range(counts[2]):
        v = cols[j]
        out = 0
        inc = 0
        for t in range(counts[2]):
            x = cols[t]
            if x == v:
                continue
            e = adj2[v * n2 + x]
            if e >= 0:
                inner2[2 * j * n2 + out] = e
                out += 1
            if directed:
                e = adj2[x * n2 + v]
                if e >= 0:
                    inner2[(2 * j + 1) * n2 + inc] = e
                    inc += 1
        len2[2 * j] = out
        len2[2 * j + 1] = inc


@nb.njit(cache=True)
def _inner_bound(i, j, pb, st):
    """Half the bound on the inner edges of row ``i`` (-1: none) against column ``j`` (-1: none)."""
    n1, n2, directed = pb[0], pb[1], pb[2]
    inner1, inner2, excess, len1, len2 = st[6], st[7], st[8], st[9], st[10]
    total = 0.0
    passes = 2 if directed else 1
    for pss in range(passes):
        na = len1[2 * i + pss] if i >= 0 else 0
        nb_ = len2[2 * j + pss] if j >= 0 else 0
        a_start = (2 * i + pss) * n1 if i >= 0 else 0
        b_start = (2 * j + pss) * n2 if j >= 0 else 0
        total += _match_bound(inner1, a_start, na, inner2, b_start, nb_, pb, excess)
    return 0.5 * total


@nb.njit(cache=True)
def _bound(pb, st, ws):
    n1, n2 = pb[0], pb[1]
    map1, inv2, decided, rows, cols, counts = st[0], st[1], st[2], st[3], st[4], st[5]
    col_ins, matrix, row_pot, col_pot, col_row, way, min_slack, col_done, row_col = ws
    nd = 0
    r1 = 0
    for u in range(n1):
        if map1[u] == _UNDECIDED:
            rows[r1] = u
            r1 += 1
        else:
            decided[nd] = u
            nd += 1
    r2 = 0
    for v in range(n2):
        if inv2[v] == _EPS:
            cols[r2] = v
            r2 += 1
    counts[0] = nd
    counts[1] = r1
    counts[2] = r2
    _collect_inner_edges(pb, st)
    ld = n1 + n2
    h = 0.0
    for j in range(r2):
        v = cols[j]
        c = _insert_cost(v, pb, st) + _inner_bound(-1, j, pb, st)
        col_ins[j] = c
        h += c
    if r1 == 0:
        return h
    for i in range(r1):
        u = rows[i]
        dele = _step_cost(u, _EPS, pb, st) + _inner_bound(i, -1, pb, st)
        for j in range(r2):
            v = cols[j]
            c = _step_cost(u, v, pb, st) + _inner_bound(i, j, pb, st)
            matrix[i * ld + j] = c - col_ins[j]
        for j in range(r2, r2 + r1):
            matrix[i * ld + j] = dele
    return h + _lsap(matrix, ld, r1, r2 + r1, row_pot, col_pot, col_row, way, min_slack, col_done, row_col)


@nb.njit(cache=True)
def _full_cost(comp_map, comp_inv, pb):
    (n1, n2, directed, node_sub, node_del, node_ins, adj1, adj2, edge_pair, edge_del, edge_ins, c2) = pb
    comp_inv[:] = _EPS
    cost = 0.0
    for u in range(n1):
        v = comp_map[u]
        if v >= 0:
            comp_inv[v] = u
            cost += node_sub[u * n2 + v]
        else:
            cost += node_del[u]
    for v in range(n2):
        if comp_inv[v] == _EPS:
            cost += node_ins[v]
    for u in range(n1):
        start = 0 if directed else u
        for w in range(start, n1):
            e1 = adj1[u * n1 + w]
            if e1 < 0:
                continue
            fu = comp_map[u]
            fw = comp_map[w]
            e2 = adj2[fu * n2 + fw] if (fu >= 0 and fw >= 0) else _NO_EDGE
            cost += _pair_cost(e1, e2, edge_pair, edge_del, edge_ins, c2)
    for v in range(n2):
        start = 0 if directed else v
        for x in range(start, n2):
            e2 = adj2[v * n2 + x]
            if e2 < 0:
                continue
            gv = comp_inv[v]
            gx = comp_inv[x]
            matched = gv >= 0 and gx >= 0 and adj1[gv * n1 + gx] >= 0
            if not matched:
                cost += edge_ins[e2]
    return cost


@nb.njit(cache=True)
def _try_completion(pb, st, ws, inc):
    map1, rows, cols, counts = st[0], st[3], st[4], st[5]
    row_col = ws[8]
    comp_map, comp_inv, best_map, ub = inc
    comp_map[:] = map1
    r2 = counts[2]
    for i in range(counts[1]):
        j = row_col[i]
        comp_map[rows[i]] = cols[j] if j < r2 else _EPS
    cost = _full_cost(comp_map, comp_inv, pb)
    if cost < ub[0]:
        ub[0] = cost
        best_map[:] = comp_map


@nb.njit(cache=True)
def _assign(u, v, st):
    st[0][u] = v
    if v >= 0:
        st[1][v] = u


@nb.njit(cache=True)
def _unassign(u, st):
    v = st[0][u]
    if v >= 0:
        st[1][v] = _EPS
    st[0][u] = _UNDECIDED


@nb.njit(cache=True)
def _expand(level, f, order, level_node, lv, pb, st, ws):
    """Choose the node to decide at ``level`` (largest second-cheapest reduced cost, ties to
    higher degree) and bound its children by ``f`` plus each pair's reduced cost."""
    n1, n2 = pb[0], pb[1]
    map1, inv2, rows, counts = st[0], st[1], st[3], st[5]
    matrix, row_pot, col_pot = ws[1], ws[2], ws[3]
    cand_v, cand_step, cand_f, cand_count, cursor = lv
    ld = n1 + n2
    stride = n2 + 1
    base = level * stride
    r1, r2 = counts[1], counts[2]
    row = -1
    best_regret = -math.inf
    for k in range(n1):
        w = order[k]
        if map1[w] != _UNDECIDED:
            continue
        i = 0
        while rows[i] != w:
            i += 1
        first = math.inf
        second = math.inf
        deleted = math.inf
        for j in range(r2, r2 + r1):
            deleted = min(deleted, matrix[i * ld + j] - row_pot[i + 1] - col_pot[j + 1])
        for j in range(r2 + 1):
            rc = matrix[i * ld + j] - row_pot[i + 1] - col_pot[j + 1] if j < r2 else deleted
            if rc < first:
                second = first
                first = rc
            elif rc < second:
                second = rc
        if second > best_regret:
            best_regret = second
            row = i
    u = rows[row]
    level_node[level] = u
    deleted = math.inf
    for j in range(r2, r2 + r1):
        deleted = min(deleted, matrix[row * ld + j] - row_pot[row + 1] - col_pot[j + 1])
    count = 0
    col = 0
    for c in range(n2 + 1):
        v = c if c < n2 else _EPS
        if v >= 0 and inv2[c] != _EPS:
            continue
        if v >= 0:
            rc = matrix[row * ld + col] - row_pot[row + 1] - col_pot[col + 1]
        else:
            rc = deleted
        col += 1
        cand_v[base + count] = v
        cand_step[base + count] = _step_cost(u, v, pb, st)
        cand_f[base + count] = f + max(rc, 0.0)
        count += 1
    for i in range(1, count):
        k = base + i
        while k > base and cand_f[k - 1] > cand_f[k]:
            cand_f[k - 1], cand_f[k] = cand_f[k], cand_f[k - 1]
            cand_v[k - 1], cand_v[k] = cand_v[k], cand_v[k - 1]
            cand_step[k - 1], cand_step[k] = cand_step[k], cand_step[k - 1]
            k -= 1
    cand_count[level] = count
    cursor[level] = 0


@nb.njit(cache=True)
def _solve(n1, n2, directed, node_sub, node_del, node_ins, edges1, edges2,
           edge_sub, edge_del, edge_ins, budget):
    c1 = edge_del.shape[0]
    c2 = edge_ins.shape[0]
    adj1 = np.full(n1 * n1, _NO_EDGE, np.int32)
    adj2 = np.full(n2 * n2, _NO_EDGE, np.int32)
    degree = np.zeros(n1, np.int64)
    for k in range(edges1.shape[0]):
        s, d, c = edges1[k, 0], edges1[k, 1], edges1[k, 2]
        adj1[s * n1 + d] = c
        if not directed:
            adj1[d * n1 + s] = c
        degree[s] += 1
        if d != s:
            degree[d] += 1
    for k in range(edges2.shape[0]):
        s, d, c = edges2[k, 0], edges2[k, 1], edges2[k, 2]
        adj2[s * n2 + d] = c
        if not directed:
            adj2[d * n2 + s] = c
    edge_pair = np.empty(c1 * c2, np.float64)
    for a in range(c1):
        for b in range(c2):
            edge_pair[a * c2 + b] = min(edge_sub[a, b], edge_del[a] + edge_ins[b])
    # Highest degree first, ties by index (a stable sort on -degree).
    order = np.argsort(-degree, kind="mergesort")
    pb = (n1, n2, directed, node_sub.ravel(), node_del, node_ins, adj1, adj2, edge_pair, edge_del, edge_ins, c2)
    st = (
        np.full(n1, _UNDECIDED, np.int64),  # map1
        np.full(n2, _EPS, np.int64),  # inv2
        np.zeros(n1, np.int64),  # decided
        np.zeros(n1, np.int64),  # rows
        np.zeros(n2, np.int64),  # cols
        np.zeros(3, np.int64),  # counts: decided, rows, cols
        np.zeros(2 * n1 * n1, np.int64),  # inner1: per row, outgoing then incoming inner edge classes
        np.zeros(2 * n2 * n2, np.int64),  # inner2: the same per column
        np.zeros(max(n1, n2), np.float64),  # excess
        np.zeros(2 * n1, np.int64),  # inner1 lengths
        np.zeros(2 * n2, np.int64),  # inner2 lengths
    )
    ws = (
        np.zeros(n2, np.float64),  # col_ins
        np.zeros(n1 * (n1 + n2), np.float64),  # matrix
        np.zeros(n1 + 1, np.float64),  # row_pot
        np.zeros(n1 + n2 + 1, np.float64),  # col_pot
        np.zeros(n1 + n2 + 1, np.int64),  # col_row
        np.zeros(n1 + n2 + 1, np.int64),  # way
        np.zeros(n1 + n2 + 1, np.float64),  # min_slack
        np.zeros(n1 + n2 + 1, np.bool_),  # col_done
        np.zeros(n1, np.int64),  # row_col
    )
    inc = (np.full(n1, _EPS, np.int64), np.full(n2, _EPS, np.int64), np.full(n1, _EPS, np.int64),
           np.full(1, math.inf))
    stride = n2 + 1
    lv = (np.full(n1 * stride, _EPS, np.int64), np.zeros(n1 * stride), np.zeros(n1 * stride),
          np.zeros(n1, np.int64), np.zeros(n1, np.int64))
    cand_v, cand_step, cand_f, cand_count, cursor = lv
    g = np.zeros(n1 + 1)
    map1 = st[0]
    comp_map, comp_inv, best_map, ub = inc

    # The trivial edit path (delete everything, insert everything) caps every answer.
    comp_map[:] = _EPS
    ub[0] = _full_cost(comp_map, comp_inv, pb)
    root_bound = _bound(pb, st, ws)
    _try_completion(pb, st, ws, inc)
    if n1 == 0 or root_bound >= ub[0]:
        return ub[0], ub[0], True, 0, best_map
    if budget == 0:
        return ub[0], min(root_bound, ub[0]), False, 0, best_map
    expanded = 1
    level_node = np.zeros(n1, np.int64)
    _expand(0, root_bound, order, level_node, lv, pb, st, ws)
    depth = 0
    while True:
        k = cursor[depth]
        slot = depth * stride + k
        if k < cand_count[depth] and cand_f[slot] < ub[0]:
            u = level_node[depth]
            v = cand_v[slot]
            if depth + 1 == n1:
                cursor[depth] += 1
                _assign(u, v, st)
                comp_map[:] = map1
                cost = _full_cost(comp_map, comp_inv, pb)
                if cost < ub[0]:
                    ub[0] = cost
                    best_map[:] = map1
                _unassign(u, st)
                continue
            if expanded >= budget:
                frontier = math.inf
                for level in range(depth + 1):
                    kk = cursor[level]
                    if kk < cand_count[level]:
                        frontier = min(frontier, cand_f[level * stride + kk])
                return ub[0], min(max(frontier, root_bound), ub[0]), False, expanded, best_map
            cursor[depth] += 1
            _assign(u, v, st)
            g[depth + 1] = g[depth] + cand_step[slot]
            expanded += 1
            f = g[depth + 1] + _bound(pb, st, ws)
            _try_completion(pb, st, ws, inc)
            if f >= ub[0]:
                _unassign(u, st)
                continue
            _expand(depth + 1, f, order, level_node, lv, pb, st, ws)
            depth += 1
        else:
            if depth == 0:
                break
            depth -= 1
            _unassign(level_node[depth], st)
    return ub[0], ub[0], True, expanded, best_map


def _check_costs(name: str, costs: np.ndarray) -> None:
    bad = ~np.isfinite(costs) | (costs < 0)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        raise ValueError(f"{name} must hold finite non-negative costs, got {costs.ravel()[i]} at index {i}")


def _check_edges(name: str, edges: np.ndarray, n: int, n_class: int, directed: bool) -> None:
    if edges.ndim != 2 or edges.shape[1] != 3:
        raise ValueError(f"{name} must have shape (m, 3) of (source, target, class), got {edges.shape}")
    seen = set()
    for k, (s, d, c) in enumerate(edges.tolist()):
        if s < 0 or d < 0 or c < 0:
            raise ValueError(f"{name} holds {min(s, d, c)}, not a valid index")
        if s >= n or d >= n:
            raise ValueError(f"{name}[{k}] = ({s}, {d}) refers to a node outside 0..{n}")
        if c >= n_class:
            raise ValueError(f"{name}[{k}] has edge class {c}, outside 0..{n_class}")
        key = (s, d) if directed or s <= d else (d, s)
        if key in seen:
            raise ValueError(f"{name}[{k}] = ({s}, {d}) duplicates an earlier edge (graphs must be simple)")
        seen.add(key)


def _prepare(node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins):
    node_del = np.ascontiguousarray(node_del, dtype=np.float64)
    node_ins = np.ascontiguousarray(node_ins, dtype=np.float64)
    edge_del = np.ascontiguousarray(edge_del, dtype=np.float64)
    edge_ins = np.ascontiguousarray(edge_ins, dtype=np.float64)
    node_sub = np.ascontiguousarray(node_sub, dtype=np.float64)
    edge_sub = np.ascontiguousarray(edge_sub, dtype=np.float64)
    n1, n2, c1, c2 = len(node_del), len(node_ins), len(edge_del), len(edge_ins)
    for name, a, shape in (("node_sub", node_sub, (n1, n2)), ("edge_sub", edge_sub, (c1, c2))):
        if a.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    for name, a in (("node_sub", node_sub), ("node_del", node_del), ("node_ins", node_ins),
                    ("edge_sub", edge_sub), ("edge_del", edge_del), ("edge_ins", edge_ins)):
        _check_costs(name, a)
    edges1 = np.ascontiguousarray(edges1, dtype=np.int64)
    edges2 = np.ascontiguousarray(edges2, dtype=np.int64)
    return n1, n2, node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins


def graph_edit_distance_pair(node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins,
                             directed, budget):
    """Same contract as ``scorekit._core.graph_edit_distance_pair``."""
    n1, n2, node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins = _prepare(
        node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins)
    directed = bool(directed)
    _check_edges("edges1", edges1, n1, len(edge_del), directed)
    _check_edges("edges2", edges2, n2, len(edge_ins), directed)
    limit = UNLIMITED if budget is None else min(int(budget), UNLIMITED)
    distance, lower, exact, expanded, mapping = _solve(
        n1, n2, directed, node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins,
        np.int64(limit))
    return float(distance), float(lower), bool(exact), int(expanded), mapping.copy()


def graph_edit_distance_batch(problems, budget, threads):
    """Same contract as ``scorekit._core.graph_edit_distance_batch`` (runs serially)."""
    n = len(problems)
    distance = np.empty(n)
    lower = np.empty(n)
    exact = np.empty(n, dtype=np.bool_)
    expanded = np.empty(n, dtype=np.uint64)
    for k, problem in enumerate(problems):
        try:
            d, lb, ex, e, _ = graph_edit_distance_pair(*problem, budget)
        except ValueError as err:
            raise ValueError(f"problem {k}: {err}") from None
        distance[k], lower[k], exact[k], expanded[k] = d, lb, ex, e
    return distance, lower, exact, expanded
