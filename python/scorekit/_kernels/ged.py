"""Graph edit distance kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract for exact GED of small simple graphs given as cost tables; it does not
look at node ids or attributes (``scorekit.graphs`` and ``scorekit.metrics.graphs`` turn graphs
into tables).

One problem is the tuple ``(node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del,
edge_ins, directed)``:

* ``node_sub``: ``float64[n1, n2]``; ``node_del``: ``float64[n1]``; ``node_ins``: ``float64[n2]``;
* ``edges1``/``edges2``: ``int64[m, 3]`` rows ``(source, target, class)`` over node indices, at
  most one edge per ordered pair (unordered when undirected), self-loops allowed;
* ``edge_sub``: ``float64[c1, c2]`` class substitution costs, ``edge_del``: ``float64[c1]``,
  ``edge_ins``: ``float64[c2]`` (one class per edge gives an explicit per-edge table);
* every cost finite and non-negative, and all of them together at most :data:`MAX_TOTAL_COST`
  (the search adds and subtracts costs; sums beyond the float64 range would give ``inf - inf``).

The distance is the minimum over partial injective node maps of node costs plus induced edge
costs, where a mapped edge costs ``min(edge_sub, edge_del + edge_ins)`` — the value of
``networkx.graph_edit_distance`` with the same costs. ``budget`` caps the expanded search states
(``None``: no cap); when it runs out the result is the best path found with ``exact=False`` and a
proven lower bound. Both backends run the same search and return identical results.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from scorekit import _kernels
from scorekit.errors import InvalidValueError

#: Budget standing for "no limit" (more expansions than any search can make).
UNLIMITED = 2**62
#: Guard on the sum of every cost of one problem: far below the float64 maximum, so that no sum or
#: difference the search forms can overflow.
MAX_TOTAL_COST = 1e305


class GedOutcome(NamedTuple):
    """Result of :func:`graph_edit_distance_pair`."""

    distance: float
    lower_bound: float
    exact: bool
    expanded: int
    #: ``mapping[u]`` = graph-2 node index of graph-1 node ``u``, or -1 when ``u`` is deleted.
    mapping: np.ndarray


def _impl():
    return _kernels.implementation("ged")


def check_budget(budget: int | None) -> int | None:
    """Validate a search budget: ``None`` (unlimited) or an int >= 0."""
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise TypeError(f"budget must be an int or None, got {type(budget).__name__}")
    if budget < 0:
        raise ValueError(f"budget must be >= 0 expanded states (or None), got {budget}")
    return min(int(budget), UNLIMITED)


def _arrays(problem: Sequence, item: int | None = None) -> tuple:
    if len(problem) != 9:
        raise ValueError(f"a GED problem has 9 parts (see scorekit._kernels.ged), got {len(problem)}")
    ns, nd, ni, e1, e2, es, ed, ei, directed = problem
    f = np.float64

    def edges(e) -> np.ndarray:
        a = np.asarray(e, dtype=np.int64)
        return np.ascontiguousarray(a.reshape(0, 3) if a.size == 0 else a)

    arrays = (
        np.ascontiguousarray(ns, dtype=f), np.ascontiguousarray(nd, dtype=f), np.ascontiguousarray(ni, dtype=f),
        edges(e1), edges(e2),
        np.ascontiguousarray(es, dtype=f), np.ascontiguousarray(ed, dtype=f), np.ascontiguousarray(ei, dtype=f),
        bool(directed),
    )
    costs = (arrays[0], arrays[1], arrays[2], arrays[5], arrays[6], arrays[7])
    # Entries that are not finite are left to the kernels' checks, which name the array.
    if all(np.isfinite(c).all() for c in costs):
        with np.errstate(over="ignore"):
            total = sum(float(np.sum(c)) for c in costs)
        if not total <= MAX_TOTAL_COST:
            raise InvalidValueError(f"sum to {total:g}, above the graph edit distance's guard of "
                                    f"{MAX_TOTAL_COST:g} (scorekit._kernels.ged.MAX_TOTAL_COST)",
                                    field="the costs", item=item)
    return arrays


def graph_edit_distance_pair(node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins,
                             directed: bool, budget: int | None = None) -> GedOutcome:
    """Exact GED of one problem (see the module docs for the arrays)."""
    arrays = _arrays((node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins, directed))
    d, lb, exact, expanded, mapping = _impl().graph_edit_distance_pair(*arrays, check_budget(budget))
    return GedOutcome(float(d), float(lb), bool(exact), int(expanded), np.asarray(mapping, dtype=np.int64))


def graph_edit_distance_batch(problems: Sequence[Sequence], budget: int | None = None, threads: int = 0):
    """Exact GED of every problem; returns ``(distance float64[n], lower_bound float64[n],
    exact bool[n], expanded uint64[n])``. ``threads``: 0 = all cores; results do not depend on it."""
    packed = [_arrays(p, k) for k, p in enumerate(problems)]
    return _impl().graph_edit_distance_batch(packed, check_budget(budget), _kernels.resolve_threads(threads))
