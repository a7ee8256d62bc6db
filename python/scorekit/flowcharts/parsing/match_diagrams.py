"""Matching predicted flowcharts to their ground truth (docs/flowcharts-parsing.md).

Text lists are matched by one ``linear_sum_assignment`` on a padded square matrix. Nodes are
matched lexicographically: minimal total node text cost first (the same assignment problem),
then, among those matchings, the most preserved directed edges (when the prediction has flow),
then the least label cost (when it has labels), each stage a 0/1 MILP solved exactly by HiGHS
with the earlier optima as hard constraints. SciPy is imported on first use.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from scorekit.flowcharts.parsing._costs import Costs, as_costs
from scorekit.flowcharts.parsing._deps import require
from scorekit.flowcharts.parsing.parsing_bench_types import (
    Diagram, DiagramMatch, DiagramOptions, NodeMatch, NodeMatches, TextListMatch, TextListMatches,
)

__all__ = ["match_texts_lists", "match_nodes_single_option", "match_nodes", "match_node_labels",
           "match_additional_texts", "match_single_diagram", "match_diagrams"]

#: Relative tolerance of a cost tie and of the text-cost face of the MILP.
TIE_TOL = 1e-9


def _tied(a: float, b: float) -> bool:
    return abs(a - b) <= TIE_TOL * max(1.0, abs(a), abs(b))


def _padded(C: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The (nT+nP) square matrix: pairs, true-unmatched diagonal, pred-unmatched diagonal, free dummies."""
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
    M[nT:, nP:] = 0.0
    return M


def _assignment(C: np.ndarray, u: np.ndarray, v: np.ndarray) -> tuple[list[Optional[int]], float]:
    """For each true row its pred column (None: unmatched), and the minimal total cost."""
    linear_sum_assignment = require("scipy.optimize").linear_sum_assignment
    nT, nP = C.shape
    M = _padded(C, u, v)
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


def _lexicographic(C: np.ndarray, u: np.ndarray, v: np.ndarray, c_star: float,
                   true_edges: list[tuple[int, int]], pred_edges: list[tuple[int, int]], flow: bool,
                   label_costs: Optional[Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]]], stem: str,
                   option_idx: int) -> Optional[list[Optional[int]]]:
    """The MILP stages of §7.2; None when no stage applies or can change anything (the text assignment stands)."""
    run_flow = flow and bool(true_edges) and bool(pred_edges)
    if not run_flow and label_costs is None:
        return None
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
    ei = fi = np.zeros(0, dtype=np.int64)
    if run_flow:
        te = np.array(true_edges, dtype=np.int64)
        pe = np.array(pred_edges, dtype=np.int64)
        # y[e,f] can only be 1 when both endpoint pairs may be matched in some text-optimal matching
        usable = X[te[:, 0][:, None], pe[:, 0][None, :]] & X[te[:, 1][:, None], pe[:, 1][None, :]]
        ei, fi = np.nonzero(usable)
    nE = len(ei)
    nvar = nx + nT + nP + nE
    a0, b0, y0 = nx, nx + nT, nx + nT + nP

    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    lo: list[np.ndarray] = []
    hi: list[np.ndarray] = []
    r = 0
    # each true node matched once or unmatched
    t_idx = np.repeat(np.arange(nT), nP)
    rows += [t_idx + r, np.arange(nT) + r]
    cols += [np.arange(nx), a0 + np.arange(nT)]
    vals += [np.ones(nx), np.ones(nT)]
    r += nT
    # each pred node matched once or unmatched
    p_idx = np.tile(np.arange(nP), nT)
    rows += [p_idx + r, np.arange(nP) + r]
    cols += [np.arange(nx), b0 + np.arange(nP)]
    vals += [np.ones(nx), np.ones(nP)]
    r += nP
    lo.append(np.ones(nT + nP))
    hi.append(np.ones(nT + nP))
    # the text-cost face
    tol = TIE_TOL * max(1.0, abs(c_star))
    rows.append(np.full(nvar - nE, r))
    cols.append(np.arange(nvar - nE))
    vals.append(np.concatenate([C.ravel(), u, v]))
    lo.append(np.array([c_star - tol]))
    hi.append(np.array([c_star + tol]))
    r += 1
    if nE:
        y = y0 + np.arange(nE)
        xs = te[ei, 0] * nP + pe[fi, 0]   # x[s, s']
        xd = te[ei, 1] * nP + pe[fi, 1]   # x[d, d']
        k = np.arange(nE)
        # y - x[s,s'] <= 0 ; y - x[d,d'] <= 0 ; y - x[s,s'] - x[d,d'] >= -1
        for block, (extra_cols, extra_vals, low, high) in enumerate((
                ([xs], [-1.0], -np.inf, 0.0), ([xd], [-1.0], -np.inf, 0.0), ([xs, xd], [-1.0, -1.0], -1.0, np.inf))):
            base = r + k
            rows.append(base)
            cols.append(y)
            vals.append(np.ones(nE))
            for ec, ev in zip(extra_cols, extra_vals):
                rows.append(base)
                cols.append(ec)
                vals.append(np.full(nE, ev))
            lo.append(np.full(nE, low))
            hi.append(np.full(nE, high))
            r += nE
    A = sparse.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, nvar))
    lower, upper = np.concatenate(lo), np.concatenate(hi)
    constraints = [optimize.LinearConstraint(A, lower, upper)]
    integrality = np.ones(nvar)
    upper_bounds = np.ones(nvar)
    upper_bounds[:y0] = keep  # variables outside every text-optimal matching are fixed to 0
    bounds = optimize.Bounds(np.zeros(nvar), upper_bounds)

    def solve(stage: str, objective: np.ndarray) -> np.ndarray:
        res = optimize.milp(objective, constraints=constraints, integrality=integrality, bounds=bounds,
                            options={"mip_rel_gap": 0})
        if res.status != 0 or not res.success or res.x is None:
            raise _milp_failure(stage, stem, option_idx, f"solver status {res.status}: {res.message}")
        return res.x

    x = None
    if unique:
        x = solve("labels" if label_costs is not None else "flow", np.zeros(nvar))
        run_flow = False
    elif run_flow and nE == 0:  # no edge can be preserved by any text-optimal matching
        run_flow = False
        if labels is None:
            x = solve("flow", np.zeros(nvar))
    if run_flow:
        objective = np.zeros(nvar)
        objective[y0:] = -1.0
        x = solve("flow", objective)
        m_star = float(round(x[y0:].sum()))
        row = np.zeros(nvar)
        row[y0:] = 1.0
        constraints.append(optimize.LinearConstraint(row.reshape(1, -1), m_star, m_star))
    if labels is not None:
        L, Lu, Lv = labels
        objective = np.zeros(nvar)
        objective[:y0] = np.concatenate([L.ravel(), Lu, Lv])
        x = solve("labels", objective)
    assert x is not None
    X = x[:nx].reshape(nT, nP) > 0.5
    pairs: list[Optional[int]] = []
    for t in range(nT):
        hit = np.flatnonzero(X[t])
        pairs.append(int(hit[0]) if hit.size else None)
    total = sum(float(C[t, p]) if p is not None else float(u[t]) for t, p in enumerate(pairs))
    used = {p for p in pairs if p is not None}
    total += sum(float(v[p]) for p in range(nP) if p not in used)
    if not math.isclose(total, c_star, rel_tol=1e-9, abs_tol=1e-9):
        raise _milp_failure("labels" if labels is not None else "flow", stem, option_idx,
                            f"the matching's text cost {total} is not the optimum {c_star}")
    return pairs


def match_nodes_single_option(true_diagram: Diagram, pred_diagram: Diagram, distance_fn: Any,
                              option_idx: int) -> NodeMatches:
    """The lexicographically best node matching of ``pred_diagram`` against one ground-truth option."""
    costs = as_costs(distance_fn)
    T = sorted(true_diagram.nodes or [], key=lambda n: n.node_number)
    P = sorted(pred_diagram.nodes or [], key=lambda n: n.node_number)
    C, u, v = costs.matrices([n.text for n in T], [n.text for n in P])
    pairs, c_star = _assignment(C, u, v)
    flow, lab = pred_diagram.flow_done, pred_diagram.labels_done
    if (flow or lab) and T and P:
        labels = (lambda: _label_costs(T, P, costs)) if lab else None
        better = _lexicographic(C, u, v, c_star, _edges(T) if flow else [], _edges(P) if flow else [], flow,
                                labels, pred_diagram.parent_img_code, option_idx)
        if better is not None:
            pairs = better
    matched, true_only, pred_only = _decode(pairs, len(P))
    records = []
    for t, p in enumerate(pairs):
        if p is None:
            records.append(NodeMatch(true_node=T[t], pred_node=None, node_text_cost=float(u[t])))
        else:
            records.append(NodeMatch(true_node=T[t], pred_node=P[p], node_text_cost=float(C[t, p])))
    for p in pred_only:
        records.append(NodeMatch(true_node=None, pred_node=P[p], node_text_cost=float(v[p])))
    return NodeMatches(matches=records, true_diagram_option_idx=option_idx)


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


def match_nodes(true_diagram_options: DiagramOptions, pred_diagram: Diagram, distance_fn: Any) -> NodeMatches:
    """Match against every ground-truth option and keep the best (text, flow Jaccard, labels, additional)."""
    costs = as_costs(distance_fn)
    options = true_diagram_options.options
    found = [match_nodes_single_option(opt, pred_diagram, costs, i) for i, opt in enumerate(options)]
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
    return found[candidates[0]]


def match_single_diagram(true_diagram_options: DiagramOptions, pred_diagram: Diagram,
                         distance_fn: Any) -> DiagramMatch:
    costs = as_costs(distance_fn)
    nm = match_nodes(true_diagram_options, pred_diagram, costs)
    true = true_diagram_options.options[nm.true_diagram_option_idx]
    match_node_labels(nm, costs)
    atm = match_additional_texts(true, pred_diagram, costs)
    return DiagramMatch(node_matches=nm, additional_text_matches=atm, pred_diagram=pred_diagram, true_diagram=true)


def match_diagrams(true_diagrams_options_list: Sequence[DiagramOptions], pred_diagrams: Sequence[Diagram],
                   distance_fn: Any) -> list[DiagramMatch]:
    costs = as_costs(distance_fn)
    return [match_single_diagram(o, p, costs) for o, p in zip(true_diagrams_options_list, pred_diagrams)]
