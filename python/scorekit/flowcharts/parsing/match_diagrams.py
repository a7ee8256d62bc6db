"""Matching predicted flowcharts to their ground truth (docs/flowcharts-parsing.md).

Text lists are matched by one ``linear_sum_assignment`` on a padded square matrix. Nodes are
matched lexicographically: minimal total node text cost first (the same assignment problem),
then, among those matchings, the most preserved directed edges (when the prediction has flow),
then the least label cost (when it has labels), each stage a 0/1 MILP solved exactly by HiGHS
with the earlier optima as hard constraints. SciPy is imported on first use.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from scorekit.flowcharts.parsing._costs import Costs, as_costs
from scorekit.flowcharts.parsing._deps import require
from scorekit.flowcharts.parsing.parsing_bench_types import (
    Diagram, DiagramMatch, DiagramOptions, NodeMatch, NodeMatches, TextListMatch, TextListMatches, Unproven,
)

__all__ = ["match_texts_lists", "match_nodes_single_option", "match_nodes", "match_node_labels",
           "match_additional_texts", "match_single_diagram", "match_diagrams"]

#: Relative tolerance of a cost tie and of the text-cost face of the MILP.
TIE_TOL = 1e-9
#: Default seconds the exact stages (flow, labels) of one ground-truth option may take.
TIME_LIMIT = 10.0
#: The least time a stage's solver is given, even past the option's time limit.
MIN_SOLVE_SECONDS = 0.05
#: Larger models (about this many constraint nonzeros) skip the MILP: HiGHS would not finish
#: its root within a time limit of seconds, and overruns the limit while trying.
MILP_MAX_NONZEROS = 400_000
#: Models with more free variables than this are solved without HiGHS's presolve.
PRESOLVE_MAX_VARIABLES = 5000
#: The flow heuristic's seed pairs, and the swaps it tries per round (most promising first).
HEURISTIC_SEEDS = 3
SWAP_CANDIDATES = 60
#: The share of an option's time limit the flow heuristic may use.
HEURISTIC_SHARE = 0.3
#: Flow models with at most this many edge-pair variables go to the solver before the heuristic.
SMALL_MODEL_EDGE_PAIRS = 2000
#: Rounds of colour refinement that rank the flow heuristic's candidate pairs.
REFINEMENT_ROUNDS = 8


def check_time_limit(time_limit: Any, name: str = "time_limit") -> None:
    """ValueError naming ``name`` unless ``time_limit`` is a positive finite number of seconds."""
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not (
            math.isfinite(time_limit) and time_limit > 0):
        raise ValueError(f"{name} must be a positive finite number of seconds, found {time_limit!r}.")


def _tied(a: float, b: float) -> bool:
    return abs(a - b) <= TIE_TOL * max(1.0, abs(a), abs(b))


def _padded(C: np.ndarray, u: np.ndarray, v: np.ndarray, allowed: Optional[np.ndarray] = None) -> np.ndarray:
    """The (nT+nP) square matrix: pairs, true-unmatched diagonal, pred-unmatched diagonal, free dummies.

    ``allowed`` (x, a, b flags as in the MILP) forbids the pairs and unmatched slots it leaves out."""
    nT, nP = C.shape
    n = nT + nP
    top = max(float(C.max()) if C.size else 0.0, float(u.max()) if u.size else 0.0,
              float(v.max()) if v.size else 0.0, 0.0)
    forbidden = (top + 1.0) * (n + 1)
    if not math.isfinite(forbidden):
        raise RuntimeError("Could not establish an optimal matching: the text costs overflow.")
    M = np.full((n, n), forbidden)
    M[:nT, :nP] = C
    M[np.arange(nT), nP + np.arange(nT)] = u
    M[nT + np.arange(nP), np.arange(nP)] = v
    if allowed is not None:
        nx = nT * nP
        M[:nT, :nP][~allowed[:nx].reshape(nT, nP)] = forbidden
        M[np.flatnonzero(~allowed[nx:nx + nT]), nP + np.flatnonzero(~allowed[nx:nx + nT])] = forbidden
        M[nT + np.flatnonzero(~allowed[nx + nT:]), np.flatnonzero(~allowed[nx + nT:])] = forbidden
    M[nT:, nP:] = 0.0
    return M


def _assignment(C: np.ndarray, u: np.ndarray, v: np.ndarray, allowed: Optional[np.ndarray] = None
                ) -> tuple[list[Optional[int]], float]:
    """For each true row its pred column (None: unmatched), and the minimal total cost (within
    ``allowed``, see :func:`_padded`, which must hold at least one matching)."""
    linear_sum_assignment = require("scipy.optimize").linear_sum_assignment
    nT, nP = C.shape
    M = _padded(C, u, v, allowed)
    rows, cols = linear_sum_assignment(M)
    pairs: list[Optional[int]] = [None] * nT
    for r, c in zip(rows.tolist(), cols.tolist()):
        if r < nT and c < nP:
            pairs[r] = c
    return pairs, float(M[rows, cols].sum())


def _decode(pairs: Sequence[Optional[int]], nP: int) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    matched = [(t, p) for t, p in enumerate(pairs) if p is not None]
    used = {p for _, p in matched}
    return matched, [t for t, p in enumerate(pairs) if p is None], [p for p in range(nP) if p not in used]


def match_texts_lists(true_texts: Sequence[str], pred_texts: Sequence[str], distance_fn: Any) -> TextListMatches:
    """Minimal-cost matching of two lists of strings; each string is paired once or left unmatched."""
    true_texts, pred_texts = list(true_texts), list(pred_texts)
    if not true_texts and not pred_texts:
        return TextListMatches(matches=[])
    C, u, v = as_costs(distance_fn).matrices(true_texts, pred_texts)
    pairs, _ = _assignment(C, u, v)
    records = []
    for i, j in enumerate(pairs):
        if j is None:
            records.append(TextListMatch(true_index=i, true_text=true_texts[i], cost=float(u[i])))
        else:
            records.append(TextListMatch(true_index=i, pred_index=j, true_text=true_texts[i],
                                         pred_text=pred_texts[j], cost=float(C[i, j])))
    used = {j for j in pairs if j is not None}
    for j in range(len(pred_texts)):
        if j not in used:
            records.append(TextListMatch(pred_index=j, pred_text=pred_texts[j], cost=float(v[j])))
    return TextListMatches(matches=records)


def _edges(nodes: Sequence[Any]) -> list[tuple[int, int]]:
    """Directed edges as (source index, target index), node order then points_to order, no duplicates."""
    index = {n.node_number: i for i, n in enumerate(nodes)}
    return list(dict.fromkeys((i, index[k]) for i, n in enumerate(nodes) for k in n.points_to))


def _label_costs(true_nodes: Sequence[Any], pred_nodes: Sequence[Any], costs: Costs
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``L[t,p]``, ``Lu[t]``, ``Lv[p]``: label-list matching costs, computed once per distinct pair of lists."""
    all_true = [s for n in true_nodes for s in n.labels]
    all_pred = [s for n in pred_nodes for s in n.labels]
    costs.fill(all_true + [None], all_pred + [None])  # one batch for every label pair of the diagram
    t_lists = list(dict.fromkeys(tuple(n.labels) for n in true_nodes))
    p_lists = list(dict.fromkeys(tuple(n.labels) for n in pred_nodes))
    t_of = np.array([t_lists.index(tuple(n.labels)) for n in true_nodes], dtype=np.int64)
    p_of = np.array([p_lists.index(tuple(n.labels)) for n in pred_nodes], dtype=np.int64)
    memo = costs.memo
    alone_t = [sum(memo[(s, None)] for s in a) for a in t_lists]
    alone_p = [sum(memo[(None, s)] for s in b) for b in p_lists]

    def cost(i: int, j: int) -> float:
        a, b = t_lists[i], p_lists[j]
        if not a or not b:  # nothing to pair: every label is unmatched
            return alone_t[i] + alone_p[j]
        if len(a) == 1 or len(b) == 1:  # one string on a side: pair it with its best partner or with nobody
            base = alone_t[i] + alone_p[j]
            if len(a) == 1:
                gain = min(memo[(a[0], q)] - memo[(a[0], None)] - memo[(None, q)] for q in b)
            else:
                gain = min(memo[(t, b[0])] - memo[(t, None)] - memo[(None, b[0])] for t in a)
            return base + min(0.0, gain)
        return match_texts_lists(a, b, costs).total_cost

    grid = np.array([[cost(i, j) for j in range(len(p_lists))] for i in range(len(t_lists))], dtype=np.float64)
    return grid[np.ix_(t_of, p_of)], np.array(alone_t)[t_of], np.array(alone_p)[p_of]


def _milp_failure(stage: str, stem: str, option_idx: int, detail: str) -> RuntimeError:
    return RuntimeError(f"Could not establish an optimal node matching ({stage} stage, flowchart {stem!r}, "
                        f"option {option_idx}): {detail}")


def _text_optimal_support(C: np.ndarray, u: np.ndarray, v: np.ndarray, optimize: Any, sparse: Any) -> np.ndarray:
    """Which of x, a, b are 1 in at least one minimal-text-cost matching (exact, up to a loose tolerance).

    On the padded square matrix M with an optimal assignment s (``linear_sum_assignment``): dual
    potentials come from Bellman-Ford on the residual graph (rows -> columns along M, a column back to
    its assigned row at -M), so every reduced cost is >= 0 and 0 on s. Every optimal assignment uses
    only tight cells, and a tight cell is in some optimal assignment iff it is in s or its row and
    column share a strongly connected component of the tight residual graph (an alternating cycle of
    zero cost). Cells within the tolerance count as tight: keeping a variable is always safe.
    """
    csgraph = require("scipy.sparse.csgraph")
    nT, nP = C.shape
    n = nT + nP
    M = _padded(C, u, v)
    rows, cols = optimize.linear_sum_assignment(M)
    assigned = np.empty(n, dtype=np.int64)
    assigned[rows] = cols
    own = M[np.arange(n), assigned]
    drow = np.zeros(n)
    for _ in range(2 * n + 2):
        dcol = (drow[:, None] + M).min(axis=0)
        new = np.minimum(0.0, dcol[assigned] - own)
        if np.array_equal(new, drow):
            break
        drow = new
    else:  # no fixed point (cannot happen with an optimal assignment): keep every variable
        return np.ones(nT * nP + nT + nP, dtype=bool)
    dcol = (drow[:, None] + M).min(axis=0)
    reduced = drow[:, None] + M - dcol[None, :]
    scale = max(1.0, float(np.abs(M[np.isfinite(M)]).max()) if M.size else 1.0)
    tight = reduced <= 1e-7 * scale
    tight[np.arange(n), assigned] = True
    # residual graph: row i -> column j (tight, unassigned), column assigned[i] -> row i
    ti, tj = np.nonzero(tight)
    free = tj != assigned[ti]
    src = np.concatenate([ti[free], n + assigned])
    dst = np.concatenate([n + tj[free], np.arange(n)])
    graph = sparse.csr_array((np.ones(len(src)), (src, dst)), shape=(2 * n, 2 * n))
    _, label = csgraph.connected_components(graph, directed=True, connection="strong")
    usable = tight & (label[:n, None] == label[None, n:])
    usable[np.arange(n), assigned] = True
    return np.concatenate([usable[:nT, :nP].ravel(), usable[np.arange(nT), nP + np.arange(nT)],
                           usable[nT + np.arange(nP), np.arange(nP)]])


def _pair_cost(pairs: Sequence[Optional[int]], C: np.ndarray, u: np.ndarray, v: np.ndarray) -> float:
    """The total cost of a matching: its pairs, its unmatched true rows and its unmatched pred columns."""
    used = {p for p in pairs if p is not None}
    return (sum(float(C[t, p]) if p is not None else float(u[t]) for t, p in enumerate(pairs))
            + sum(float(v[p]) for p in range(len(v)) if p not in used))


def _preserved(pairs: Sequence[Optional[int]], true_edges: list[tuple[int, int]],
               pred_edges: list[tuple[int, int]]) -> int:
    """How many pred edges the matching maps onto true edges."""
    to_true = {p: t for t, p in enumerate(pairs) if p is not None}
    known = set(true_edges)
    return sum(1 for s, d in pred_edges if s in to_true and d in to_true and (to_true[s], to_true[d]) in known)


def _link_rows(te: np.ndarray, pe: np.ndarray, ei: np.ndarray, fi: np.ndarray, nT: int, nP: int, y0: int,
               r: int) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], int]:
    """Rows tying the preserved-edge variables y[e,f] (true edge ei, pred edge fi) to the node pairs.

    Aggregated, for a tight relaxation: for a true edge e = (s, d) and a pred node s', the y[e,f] of
    the pred edges f leaving s' sum to at most x[s,s'] (with s matched to s', e is preserved by one
    pred edge at most: the one to d's partner); the same at the target, and from each pred edge's
    side. Integer solutions are those of y <= x[s,s'], y <= x[d,d']; the LP bound is far closer.
    Returns (rows, cols, vals, next free row), all rows ``<= 0``."""
    s, d = te[ei, 0], te[ei, 1]
    s2, d2 = pe[fi, 0], pe[fi, 1]
    width = nT + nP
    y = y0 + np.arange(len(ei))
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    for owner, other, pair in ((ei, s2, s * nP + s2), (ei, d2, d * nP + d2),
                               (fi, s, s * nP + s2), (fi, d, d * nP + d2)):
        _, first, group = np.unique(owner * width + other, return_index=True, return_inverse=True)
        rows += [r + group, r + np.arange(len(first))]
        cols += [y, pair[first]]
        vals += [np.ones(len(y)), np.full(len(first), -1.0)]
        r += len(first)
    return rows, cols, vals, r


def _degree_overlap(te: np.ndarray, pe: np.ndarray, nT: int, nP: int) -> np.ndarray:
    """``W[t,p]``: how many edges the pair (t, p) can preserve at most: min of the out-degrees plus
    min of the in-degrees (each preserved edge is counted once leaving a pair and once entering one)."""
    out_t, in_t = np.bincount(te[:, 0], minlength=nT), np.bincount(te[:, 1], minlength=nT)
    out_p, in_p = np.bincount(pe[:, 0], minlength=nP), np.bincount(pe[:, 1], minlength=nP)
    return np.minimum(out_t[:, None], out_p[None, :]) + np.minimum(in_t[:, None], in_p[None, :])


def _flow_bound(W: np.ndarray, X: np.ndarray) -> int:
    """An upper bound on the preserved edges of any matching within the pairs ``X``: the largest
    total of ``W`` over such a matching (an assignment), halved."""
    linear_sum_assignment = require("scipy.optimize").linear_sum_assignment
    weights = np.where(X, W, 0)
    rows, cols = linear_sum_assignment(weights, maximize=True)
    return int(weights[rows, cols].sum()) // 2


def _structural_similarity(out_t: list[np.ndarray], in_t: list[np.ndarray], out_p: list[np.ndarray],
                           in_p: list[np.ndarray]) -> np.ndarray:
    """``S[t,p]``: for how many rounds of colour refinement (a node's colour, then the colours of its
    successors and predecessors; both diagrams coloured together) t and p keep the same colour."""
    col_t, col_p = np.zeros(len(out_t), dtype=np.int64), np.zeros(len(out_p), dtype=np.int64)
    similar = np.zeros((len(out_t), len(out_p)))
    for _ in range(REFINEMENT_ROUNDS):
        names: dict[tuple, int] = {}

        def refine(col: np.ndarray, out: list[np.ndarray], into: list[np.ndarray]) -> np.ndarray:
            return np.array([names.setdefault((int(col[i]), tuple(sorted(col[out[i]].tolist())),
                                               tuple(sorted(col[into[i]].tolist()))), len(names))
                             for i in range(len(col))], dtype=np.int64)

        col_t, col_p = refine(col_t, out_t, in_t), refine(col_p, out_p, in_p)
        same = col_t[:, None] == col_p[None, :]
        if not same.any():
            break
        similar += same
    return similar


def _flow_heuristic(te: np.ndarray, pe: np.ndarray, W: np.ndarray, X: np.ndarray,
                    closest: Callable[[np.ndarray], list[Optional[int]]],
                    value: Callable[[list[Optional[int]]], int], until: float) -> list[Optional[int]]:
    """A good text-optimal matching for the flow stage, fast and without proof (stops at the
    ``time.monotonic()`` value ``until``). From a few seed pairs (the most alike by
    :func:`_structural_similarity`), seed and extend: repeatedly match the free pair of ``X`` that
    preserves the most edges with the pairs already matched (ties: the more alike); then swap the
    partners of two true nodes while that preserves more edges. ``closest(A)`` turns pair weights
    into the text-optimal matching closest to them; ``value(m)`` is the number of edges a matching
    preserves, -1 off the text-cost face. Returns the best matching found."""
    nT, nP = X.shape
    out_t = [te[te[:, 0] == t, 1] for t in range(nT)]
    in_t = [te[te[:, 1] == t, 0] for t in range(nT)]
    out_p = [pe[pe[:, 0] == p, 1] for p in range(nP)]
    in_p = [pe[pe[:, 1] == p, 0] for p in range(nP)]
    alike = _structural_similarity(out_t, in_t, out_p, in_p) * (float(W.max()) + 1.0) + W
    alike = np.where(X, alike / (float(alike.max()) + 1.0), -1.0)  # below 1: ranks pairs of equal gain
    At = np.zeros((nT, nT))
    At[te[:, 0], te[:, 1]] = 1.0
    Ap = np.zeros((nP, nP))
    Ap[pe[:, 0], pe[:, 1]] = 1.0
    best: list[Optional[int]] = []
    best_count = -1
    for seed in np.argsort(-alike, axis=None, kind="stable")[:HEURISTIC_SEEDS].tolist():
        gain = alike.copy()
        gain.flat[seed] = 2.0 * len(te) + 2.0  # the seed goes first
        chosen = np.zeros((nT, nP))
        while True:
            t, p = divmod(int(np.argmax(gain)), nP)
            if gain[t, p] < 0:
                break
            chosen[t, p] = 1.0
            gain[t, :] = -1.0
            gain[:, p] = -1.0
            for mine, theirs in ((out_t[t], out_p[p]), (in_t[t], in_p[p])):
                block = gain[np.ix_(mine, theirs)]
                gain[np.ix_(mine, theirs)] = np.where(block >= 0, block + 1.0, block)
        current = closest(chosen)
        count = value(current)
        while time.monotonic() < until:  # swap descent
            Pm = np.zeros((nT, nP))
            rows = [t for t, p in enumerate(current) if p is not None]
            cols = [current[t] for t in rows]
            Pm[rows, cols] = 1.0
            # S[t,p]: edges at t preserved if t took p, the rest fixed; a swap's gain, roughly
            S = (At @ Pm @ Ap.T + At.T @ Pm @ Ap)[np.ix_(rows, cols)]
            own = np.diag(S)
            G = S + S.T - own[:, None] - own[None, :]
            G[~(X[np.ix_(rows, cols)] & X[np.ix_(rows, cols)].T)] = -1.0
            improved, touched = False, set()
            for k in np.argsort(-G, axis=None, kind="stable")[:SWAP_CANDIDATES].tolist():
                i, j = divmod(k, len(rows))
                if G[i, j] <= 0:
                    break
                if i in touched or j in touched:  # its estimate is stale
                    continue
                trial = list(current)
                trial[rows[i]], trial[rows[j]] = cols[j], cols[i]
                trial_count = value(trial)
                if trial_count > count:
                    current, count, improved = trial, trial_count, True
                    touched |= {i, j}
            if not improved:
                break
        if count > best_count:
            best, best_count = current, count
        if time.monotonic() >= until:
            break
    return best


def _model(C: np.ndarray, u: np.ndarray, v: np.ndarray, c_star: float, tol: float, keep: np.ndarray,
           te: np.ndarray, pe: np.ndarray, ei: np.ndarray, fi: np.ndarray, optimize: Any, sparse: Any
           ) -> tuple[list[Any], Any, int]:
    """The 0/1 model of §7.2 on the text-cost face: variables x (pairs), a (true unmatched), b (pred
    unmatched), y (preserved edge pairs ``ei``/``fi``); returns (constraints, bounds, y offset)."""
    nT, nP = C.shape
    nx, nE = nT * nP, len(ei)
    nvar = nx + nT + nP + nE
    a0, b0, y0 = nx, nx + nT, nx + nT + nP
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    # each true node matched once or unmatched
    rows += [np.repeat(np.arange(nT), nP), np.arange(nT)]
    cols += [np.arange(nx), a0 + np.arange(nT)]
    vals += [np.ones(nx), np.ones(nT)]
    # each pred node matched once or unmatched
    rows += [nT + np.tile(np.arange(nP), nT), nT + np.arange(nP)]
    cols += [np.arange(nx), b0 + np.arange(nP)]
    vals += [np.ones(nx), np.ones(nP)]
    # the text-cost face
    rows.append(np.full(y0, nT + nP))
    cols.append(np.arange(y0))
    vals.append(np.concatenate([C.ravel(), u, v]))
    lower = [np.ones(nT + nP), np.array([c_star - tol])]
    upper = [np.ones(nT + nP), np.array([c_star + tol])]
    r = nT + nP + 1
    if nE:
        more_rows, more_cols, more_vals, r_end = _link_rows(te, pe, ei, fi, nT, nP, y0, r)
        rows += more_rows
        cols += more_cols
        vals += more_vals
        lower.append(np.full(r_end - r, -np.inf))
        upper.append(np.zeros(r_end - r))
        r = r_end
    A = sparse.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, nvar))
    upper_bounds = np.ones(nvar)
    upper_bounds[:y0] = keep  # variables outside every text-optimal matching are fixed to 0
    return ([optimize.LinearConstraint(A, np.concatenate(lower), np.concatenate(upper))],
            optimize.Bounds(np.zeros(nvar), upper_bounds), y0)


def _lexicographic(C: np.ndarray, u: np.ndarray, v: np.ndarray, c_star: float, text_pairs: list[Optional[int]],
                   true_edges: list[tuple[int, int]], pred_edges: list[tuple[int, int]], flow: bool,
                   label_costs: Optional[Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]]], stem: str,
                   option_idx: int, time_limit: float) -> Optional[tuple[list[Optional[int]], list[Unproven]]]:
    """The stages of §7.2 after the text: the matching, and the stages not proven optimal within
    ``time_limit`` seconds (with their bounds); None when no stage applies (the text assignment stands).

    Each stage first tries what is cheap and exact when it succeeds: the flow stage checks the text
    assignment against a degree bound, the label stage takes the label assignment within the
    text-optimal support. The MILP (HiGHS, ``mip_rel_gap=0``, the time left) runs only when those
    leave a gap. For the flow stage a seed-and-extend heuristic runs before it on large models and
    after it on small ones that it did not prove; the better matching is kept."""
    run_flow = flow and bool(true_edges) and bool(pred_edges)
    if not run_flow and label_costs is None:
        return None
    deadline = time.monotonic() + time_limit
    optimize = require("scipy.optimize")
    sparse = require("scipy.sparse")
    nT, nP = C.shape
    nx = nT * nP
    keep = _text_optimal_support(C, u, v, optimize, sparse)
    X = keep[:nx].reshape(nT, nP)
    # With one text-optimal matching only, the later stages cannot change it: one solve of the fixed
    # model (zero objective) stands in for them, so a failing solver is still reported.
    unique = bool((X.sum(axis=1) + keep[nx:nx + nT] <= 1).all() and (X.sum(axis=0) + keep[nx + nT:] <= 1).all())
    labels = label_costs() if label_costs is not None and not unique else None
    te = np.array(true_edges, dtype=np.int64).reshape(-1, 2)
    pe = np.array(pred_edges, dtype=np.int64).reshape(-1, 2)
    ei = fi = np.zeros(0, dtype=np.int64)
    if run_flow:
        # y[e,f] can only be 1 when both endpoint pairs may be matched in some text-optimal matching
        usable = X[te[:, 0][:, None], pe[:, 0][None, :]] & X[te[:, 1][:, None], pe[:, 1][None, :]]
        ei, fi = np.nonzero(usable)
    nE = len(ei)
    tol = TIE_TOL * max(1.0, abs(c_star))

    def on_text_face(pairs: list[Optional[int]]) -> bool:
        return abs(_pair_cost(pairs, C, u, v) - c_star) <= tol

    def preserved(pairs: list[Optional[int]]) -> int:
        return _preserved(pairs, true_edges, pred_edges)

    built: list[Any] = []
    # HiGHS's presolve speeds small models up but can overrun the time limit several times on large ones
    presolve = int(keep.sum()) + nE <= PRESOLVE_MAX_VARIABLES

    def solve(stage: str, objective: Callable[[int], np.ndarray], share: float, at_least: Optional[int] = None,
              reserve: float = 0.0) -> tuple[Optional[list[Optional[int]]], Optional[float]]:
        """The stage's matching (None: none found in time) and, unless proven optimal, the solver's
        bound (-inf when it has none). ``at_least``: the preserved edges the matching must keep;
        ``share``: of the time left but ``reserve`` seconds."""
        if 3 * nx + 5 * nE > MILP_MAX_NONZEROS:  # too large to get anywhere within the time limit
            return None, -math.inf
        if not built:
            built.extend(_model(C, u, v, c_star, tol, keep, te, pe, ei, fi, optimize, sparse))
        constraints, bounds, y0 = built
        if at_least is not None:
            row = np.zeros(y0 + nE)
            row[y0:] = 1.0
            constraints = [*constraints, optimize.LinearConstraint(row.reshape(1, -1), at_least, np.inf)]
        limit = max(MIN_SOLVE_SECONDS, (deadline - reserve - time.monotonic()) * share)
        res = optimize.milp(objective(y0), constraints=constraints, integrality=np.ones(y0 + nE), bounds=bounds,
                            options={"mip_rel_gap": 0, "time_limit": limit, "presolve": presolve})
        if res.status not in (0, 1) or (res.status == 0 and (not res.success or res.x is None)):
            raise _milp_failure(stage, stem, option_idx, f"solver status {res.status}: {res.message}")
        pairs = None if res.x is None else _pairs_from(res.x, nT, nP, stage, stem, option_idx)
        if pairs is not None and not on_text_face(pairs):
            raise _milp_failure(stage, stem, option_idx,
                                f"the matching's text cost {_pair_cost(pairs, C, u, v)} is not the optimum {c_star}")
        if res.status == 0:
            return pairs, None
        bound = getattr(res, "mip_dual_bound", None)
        return pairs, float(bound) if bound is not None and math.isfinite(bound) else -math.inf

    def zeros(y0: int) -> np.ndarray:
        return np.zeros(y0 + nE)

    if unique or (nE == 0 and labels is None):  # nothing to improve; the solver still checks the model
        pairs, _ = solve("labels" if label_costs is not None else "flow", zeros, 1.0)
        return (pairs if pairs is not None else text_pairs), []
    pairs: list[Optional[int]] = text_pairs
    found: Optional[int] = None
    flow_bound: Optional[int] = None  # set when the flow stage is not proven

    def flow_gap(final: list[Optional[int]]) -> list[Unproven]:
        """The unproven flow stage, judged on the final matching (the label stage may keep more edges)."""
        if flow_bound is None or preserved(final) >= flow_bound:
            return []
        return [Unproven(option_idx=option_idx, stage="flow", found=preserved(final), bound=flow_bound)]
    if nE:
        W = _degree_overlap(te, pe, nT, nP)
        most = min(_flow_bound(W, X), len(np.unique(ei)), len(np.unique(fi)))

        def closest(weights: np.ndarray) -> list[Optional[int]]:
            # the text-optimal matching of the most weight: the weights, scaled, stay below half of
            # a whole text-cost step of the built-in distances (and the result is checked)
            scaled = weights * (0.5 / ((nT + nP + 1) * (float(weights.max()) + 1.0)))
            guess, _ = _assignment(C - scaled, u, v, allowed=keep)
            return guess if on_text_face(guess) else text_pairs

        def value(pairs: list[Optional[int]]) -> int:
            return preserved(pairs) if on_text_face(pairs) else -1

        def heuristic(until: float) -> None:
            nonlocal pairs, found
            guess = _flow_heuristic(te, pe, W, X, closest, value, until)
            if value(guess) > found:
                pairs, found = guess, value(guess)

        def gain(y0: int) -> np.ndarray:
            objective = zeros(y0)
            objective[y0:] = -1.0
            return objective

        found = preserved(pairs)
        # a small model goes to the solver first (exact, fast); a large one gets a good matching first
        small = nE <= SMALL_MODEL_EDGE_PAIRS
        if found < most and not small:
            heuristic(time.monotonic() + HEURISTIC_SHARE * time_limit)
        if found < most:
            reserve = HEURISTIC_SHARE * time_limit if small else 0.0
            solved, bound = solve("flow", gain, 0.5 if labels is not None else 1.0, reserve=reserve)
            if solved is not None and preserved(solved) > found:
                pairs, found = solved, preserved(solved)
            most = found if bound is None else min(most, math.floor(-bound + 1e-6)) if math.isfinite(bound) else most
            if found < most and small:  # the solver ran out of time: try the heuristic's matching too
                heuristic(time.monotonic() + reserve)
        if most > found:
            flow_bound = most
    if labels is not None:
        L, Lu, Lv = labels
        relaxed, least = _assignment(L, Lu, Lv, allowed=keep)  # labels alone: a lower bound, often the optimum
        if on_text_face(relaxed) and (found is None or preserved(relaxed) >= found):
            return relaxed, flow_gap(relaxed)

        def label_cost(y0: int) -> np.ndarray:
            objective = zeros(y0)
            objective[:y0] = np.concatenate([L.ravel(), Lu, Lv])
            return objective

        solved, bound = solve("labels", label_cost, 1.0, found)
        if solved is not None:
            pairs = solved
        if bound is not None:
            best = _pair_cost(pairs, L, Lu, Lv)
            least = max(least, bound)
            if best - least > TIE_TOL * max(1.0, abs(best)):
                return pairs, [*flow_gap(pairs),
                               Unproven(option_idx=option_idx, stage="labels", found=best, bound=least)]
    return pairs, flow_gap(pairs)


def _pairs_from(x: np.ndarray, nT: int, nP: int, stage: str, stem: str, option_idx: int) -> list[Optional[int]]:
    """The matching held by a solution vector: for each true row its pred column or None."""
    X = x[:nT * nP].reshape(nT, nP) > 0.5
    if (X.sum(axis=0) > 1).any() or (X.sum(axis=1) > 1).any():
        raise _milp_failure(stage, stem, option_idx, "the solver's solution is not a matching")
    return [int(np.argmax(row)) if row.any() else None for row in X]


def match_nodes_single_option(true_diagram: Diagram, pred_diagram: Diagram, distance_fn: Any,
                              option_idx: int, time_limit: float = TIME_LIMIT) -> NodeMatches:
    """The lexicographically best node matching of ``pred_diagram`` against one ground-truth option.

    The exact stages (flow, labels) of this option stop after ``time_limit`` seconds; a stage not
    proven optimal by then keeps the best matching found and is listed in ``unproven`` with its bound."""
    check_time_limit(time_limit)
    costs = as_costs(distance_fn)
    T = sorted(true_diagram.nodes or [], key=lambda n: n.node_number)
    P = sorted(pred_diagram.nodes or [], key=lambda n: n.node_number)
    C, u, v = costs.matrices([n.text for n in T], [n.text for n in P])
    pairs, c_star = _assignment(C, u, v)
    unproven: list[Unproven] = []
    flow, lab = pred_diagram.flow_done, pred_diagram.labels_done
    if (flow or lab) and T and P:
        labels = (lambda: _label_costs(T, P, costs)) if lab else None
        better = _lexicographic(C, u, v, c_star, pairs, _edges(T) if flow else [], _edges(P) if flow else [], flow,
                                labels, pred_diagram.parent_img_code, option_idx, time_limit)
        if better is not None:
            pairs, unproven = better
    matched, true_only, pred_only = _decode(pairs, len(P))
    records = []
    for t, p in enumerate(pairs):
        if p is None:
            records.append(NodeMatch(true_node=T[t], pred_node=None, node_text_cost=float(u[t])))
        else:
            records.append(NodeMatch(true_node=T[t], pred_node=P[p], node_text_cost=float(C[t, p])))
    for p in pred_only:
        records.append(NodeMatch(true_node=None, pred_node=P[p], node_text_cost=float(v[p])))
    return NodeMatches(matches=records, true_diagram_option_idx=option_idx, unproven=unproven)


def match_node_labels(node_matches: NodeMatches, distance_fn: Any) -> NodeMatches:
    """Fill every record's ``label_matches`` (mutates and returns ``node_matches``)."""
    costs = as_costs(distance_fn)
    for record in node_matches.matches:
        true_labels = record.true_node.labels if record.true_node is not None else []
        pred_labels = record.pred_node.labels if record.pred_node is not None else []
        if true_labels is None or pred_labels is None:
            raise ValueError("Label matching needs labels on every node.")
        record.label_matches = match_texts_lists(true_labels, pred_labels, costs)
    return node_matches


def match_additional_texts(true_diagram: Diagram, pred_diagram: Diagram, distance_fn: Any) -> TextListMatches:
    if true_diagram.additional_texts is None or pred_diagram.additional_texts is None:
        raise ValueError("Additional-text matching needs additional texts on both diagrams.")
    result = match_texts_lists(true_diagram.additional_texts, pred_diagram.additional_texts, distance_fn)
    for record in result.matches:
        record.parent_img_code = true_diagram.parent_img_code
        record.true_option_idx = true_diagram.true_option_idx
    return result


def match_nodes(true_diagram_options: DiagramOptions, pred_diagram: Diagram, distance_fn: Any,
                time_limit: float = TIME_LIMIT) -> NodeMatches:
    """Match against every ground-truth option and keep the best (text, flow Jaccard, labels, additional).

    ``time_limit`` applies to each option (:func:`match_nodes_single_option`); the result's
    ``unproven`` lists the unproven stages of every option, since they may have decided the choice."""
    costs = as_costs(distance_fn)
    options = true_diagram_options.options
    found = [match_nodes_single_option(opt, pred_diagram, costs, i, time_limit) for i, opt in enumerate(options)]
    candidates = list(range(len(found)))

    def keep(score: dict[int, float], best: float) -> list[int]:
        return [i for i in candidates if _tied(score[i], best)]

    if len(candidates) > 1:
        score = {i: found[i].total_node_text_cost for i in candidates}
        candidates = keep(score, min(score.values()))
    if len(candidates) > 1 and pred_diagram.flow_done:
        score = {i: found[i].flow_score.jaccard for i in candidates}
        candidates = keep(score, max(score.values()))
    if len(candidates) > 1 and pred_diagram.labels_done:
        score = {i: match_node_labels(found[i], costs).total_label_error_cost for i in candidates}
        candidates = keep(score, min(score.values()))
    if len(candidates) > 1 and pred_diagram.additional_texts_done:
        score = {i: match_additional_texts(options[i], pred_diagram, costs).total_cost for i in candidates}
        candidates = keep(score, min(score.values()))
    best = found[candidates[0]]
    best.unproven = [gap for nm in found for gap in nm.unproven]
    return best


def match_single_diagram(true_diagram_options: DiagramOptions, pred_diagram: Diagram,
                         distance_fn: Any, time_limit: float = TIME_LIMIT) -> DiagramMatch:
    costs = as_costs(distance_fn)
    nm = match_nodes(true_diagram_options, pred_diagram, costs, time_limit)
    true = true_diagram_options.options[nm.true_diagram_option_idx]
    match_node_labels(nm, costs)
    atm = match_additional_texts(true, pred_diagram, costs)
    return DiagramMatch(node_matches=nm, additional_text_matches=atm, pred_diagram=pred_diagram, true_diagram=true)


def match_diagrams(true_diagrams_options_list: Sequence[DiagramOptions], pred_diagrams: Sequence[Diagram],
                   distance_fn: Any, time_limit: float = TIME_LIMIT) -> list[DiagramMatch]:
    costs = as_costs(distance_fn)
    return [match_single_diagram(o, p, costs, time_limit) for o, p in zip(true_diagrams_options_list, pred_diagrams)]
