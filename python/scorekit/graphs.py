"""A drop-in for ``networkx.graph_edit_distance``: same signature, same value, exact and fast.

This module owns the translation of networkx graphs and networkx-style cost callables into the
cost tables of the GED kernel (:mod:`scorekit._kernels.ged`). Each callable is called once per
node pair / edge pair (or once per node / edge), never inside the search. It does not import
networkx: any object with networkx's ``Graph``/``DiGraph`` interface is accepted.

Differences from networkx, all deliberate:

* A positive ``timeout`` is accepted and does not cut the search short. The search is bounded by
  ``budget``, a number of expanded search states, so the result never depends on the machine or
  its load: where networkx returns ``None`` because a tiny timeout fired before any edit path was
  complete, this returns the distance. When the budget runs out the best edit path found is
  returned, as networkx does when its timeout fires (:func:`graph_edit_distance_batch` also
  reports ``exact`` and a proven lower bound). A ``timeout`` of 0 or less raises what networkx
  raises (``networkx.NetworkXError``), and unknown ``roots`` raise ``networkx.NodeNotFound``.
* The result is always the true minimum. networkx 3.6 can return more in two corner cases:
  when a node substitution costs exactly its deletion plus insertion it may miss the edit path
  that substitutes (networkx issue #8099), and it lets a self-loop substitute an ordinary edge
  (issues #5400, #8188), which the edit-distance model does not allow.
* Multigraphs, and a directed graph against an undirected one, raise ``ValueError``.
* Costs must be finite, non-negative numbers: a cost function returning anything else raises
  :class:`~scorekit.errors.InvalidValueError` (a negative, NaN, infinite or too large number) or
  :class:`~scorekit.errors.InvalidTypeError` (not a number, e.g. a ``str``), naming the cost
  function; a cost or match argument that is not callable, or a match function returning no truth
  value (a NumPy array, say), raises :class:`~scorekit.errors.InvalidTypeError`.

networkx's exceptions are raised without importing networkx at load time: when networkx is
installed the error is a subclass of both the networkx exception and
:class:`~scorekit.errors.InvalidValueError`; without networkx it is an ``InvalidValueError``.

>>> import networkx as nx
>>> from scorekit.graphs import graph_edit_distance
>>> graph_edit_distance(nx.path_graph(6), nx.cycle_graph(6))
1.0
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple, Optional

import numbers

import numpy as np

from scorekit._kernels import ged as _ged
from scorekit._weights import checked_weight
from scorekit.errors import InvalidTypeError, InvalidValueError, describe

__all__ = ["DEFAULT_BUDGET", "GedBatchResult", "graph_edit_distance", "graph_edit_distance_batch"]

#: Expanded search states allowed per graph pair unless ``budget=`` says otherwise (``None``:
#: unlimited). A visited state costs one assignment over the undecided nodes: tens of µs at 12
#: nodes, about 0.3 ms at 60, so an exhausted budget means well under a second at 12 nodes and
#: about 15 s at 60 on one core.
DEFAULT_BUDGET = 50_000

Match = Optional[Callable[[dict, dict], bool]]
SubstCost = Optional[Callable[[dict, dict], float]]
UnitCost = Optional[Callable[[dict], float]]


class GedBatchResult(NamedTuple):
    """Per-pair results of :func:`graph_edit_distance_batch` (NumPy arrays of length n)."""

    distance: np.ndarray
    lower_bound: np.ndarray
    exact: np.ndarray
    expanded: np.ndarray


def _check_graph(g: Any, argument: str) -> None:
    for attr in ("nodes", "edges", "is_directed", "is_multigraph"):
        if not hasattr(g, attr):
            raise InvalidTypeError(f"must be a networkx Graph or DiGraph, got {type(g).__name__}", field=argument)
    if g.is_multigraph():
        raise InvalidValueError("is a multigraph; only simple graphs (Graph, DiGraph) are supported", field=argument)


def _check_callables(**functions: Any) -> None:
    """Every match/cost argument must be None or callable."""
    for name, f in functions.items():
        if f is not None and not callable(f):
            raise InvalidTypeError(f"must be a callable or None, got {describe(f)}", field=name)


#: The scorekit subclasses of networkx exceptions made so far (see :func:`_networkx_error`).
_NX_ERRORS: dict[str, type] = {}


def _networkx_error(name: str, message: str, field: str) -> Exception:
    """The error networkx raises (``networkx.<name>``) as an :class:`InvalidValueError` too;
    just an ``InvalidValueError`` when networkx is not installed (networkx is never required)."""
    try:
        import networkx
    except ImportError:
        return InvalidValueError(message, field=field)
    cls = _NX_ERRORS.get(name)
    if cls is None:
        cls = _NX_ERRORS[name] = type(name, (InvalidValueError, getattr(networkx, name)),
                                      {"__module__": __name__})
    return cls(message, field=field)


def _subst_table(attrs1: list, attrs2: list, subst: SubstCost, match: Match, kind: str) -> np.ndarray:
    """Substitution costs of ``kind`` (``"node"``/``"edge"``): ``{kind}_subst_cost``, else 0/1 from
    ``{kind}_match``, else 0."""
    table = np.zeros((len(attrs1), len(attrs2)))
    if subst is not None:
        for i, a in enumerate(attrs1):
            for j, b in enumerate(attrs2):
                table[i, j] = checked_weight(subst(a, b), f"{kind}_subst_cost")
    elif match is not None:
        for i, a in enumerate(attrs1):
            for j, b in enumerate(attrs2):
                table[i, j] = 0.0 if _truth(match(a, b), f"{kind}_match") else 1.0
    return table


def _truth(value: Any, what: str) -> bool:
    """``bool(value)``, or a named error when the match function ``what`` returned something
    without a truth value (a NumPy array of several elements, say)."""
    try:
        return bool(value)
    except Exception as exc:
        raise InvalidTypeError(f"must return a truth value, got {describe(value)} ({exc})", field=what) from None


def _unit_table(attrs: list, cost: UnitCost, name: str) -> np.ndarray:
    if cost is None:
        return np.ones(len(attrs))
    return np.array([checked_weight(cost(a), name) for a in attrs], dtype=np.float64)


def _problem(G1: Any, G2: Any, node_match: Match, edge_match: Match, node_subst_cost: SubstCost,
             node_del_cost: UnitCost, node_ins_cost: UnitCost, edge_subst_cost: SubstCost,
             edge_del_cost: UnitCost, edge_ins_cost: UnitCost,
             roots: Optional[tuple[Hashable, Hashable]]) -> tuple:
    """The kernel problem tuple for one graph pair (see :mod:`scorekit._kernels.ged`)."""
    _check_graph(G1, "G1")
    _check_graph(G2, "G2")
    directed = G1.is_directed()
    if G2.is_directed() != directed:
        raise InvalidValueError("G1 and G2 must both be directed or both be undirected")
    nodes1, nodes2 = list(G1.nodes), list(G2.nodes)
    index1 = {u: i for i, u in enumerate(nodes1)}
    index2 = {v: j for j, v in enumerate(nodes2)}
    node_attrs1 = [G1.nodes[u] for u in nodes1]
    node_attrs2 = [G2.nodes[v] for v in nodes2]
    node_sub = _subst_table(node_attrs1, node_attrs2, node_subst_cost, node_match, "node")
    node_del = _unit_table(node_attrs1, node_del_cost, "node_del_cost")
    node_ins = _unit_table(node_attrs2, node_ins_cost, "node_ins_cost")

    edge_list1 = list(G1.edges(data=True))
    edge_list2 = list(G2.edges(data=True))
    if edge_subst_cost is None and edge_match is None and edge_del_cost is None and edge_ins_cost is None:
        # Unit edge costs: every edge is of the one class (substitution free, del/ins 1).
        edges1 = [(index1[s], index1[d], 0) for s, d, _ in edge_list1]
        edges2 = [(index2[s], index2[d], 0) for s, d, _ in edge_list2]
        edge_sub, edge_del, edge_ins = np.zeros((1, 1)), np.ones(1), np.ones(1)
    else:
        # One class per edge: an explicit edge cost table.
        edges1 = [(index1[s], index1[d], k) for k, (s, d, _) in enumerate(edge_list1)]
        edges2 = [(index2[s], index2[d], k) for k, (s, d, _) in enumerate(edge_list2)]
        attrs1 = [a for _, _, a in edge_list1]
        attrs2 = [a for _, _, a in edge_list2]
        edge_sub = _subst_table(attrs1, attrs2, edge_subst_cost, edge_match, "edge")
        edge_del = _unit_table(attrs1, edge_del_cost, "edge_del_cost")
        edge_ins = _unit_table(attrs2, edge_ins_cost, "edge_ins_cost")

    if roots is not None:
        node_sub, node_del, node_ins = _force_roots(roots, index1, index2, node_sub, node_del, node_ins,
                                                    edge_del, edge_ins, len(edges1), len(edges2))
    return (node_sub, node_del, node_ins, edges1, edges2, edge_sub, edge_del, edge_ins, directed)


def _force_roots(roots, index1, index2, node_sub, node_del, node_ins, edge_del, edge_ins, m1, m2):
    """Make every edit path that does not substitute ``roots[0]`` by ``roots[1]`` cost more than
    one that does (the forced path deleting and inserting everything else is cheaper than the
    penalty), so the optimum is networkx's ``roots``-constrained optimum, with the same value."""
    try:
        r1, r2 = roots
    except (TypeError, ValueError):
        raise InvalidValueError(f"must be a pair (node of G1, node of G2), got {roots!r:.60}",
                                field="roots") from None
    if r1 not in index1 or r2 not in index2:
        which = "roots[0] is not a node of G1" if r1 not in index1 else "roots[1] is not a node of G2"
        raise _networkx_error("NodeNotFound", f"{roots!r}: {which}", "roots")
    i, j = index1[r1], index2[r2]
    edge_total = float(edge_del.max(initial=0.0)) * m1 + float(edge_ins.max(initial=0.0)) * m2
    penalty = 1.0 + node_sub[i, j] + node_del.sum() + node_ins.sum() + edge_total
    root_cost = node_sub[i, j]
    node_sub, node_del, node_ins = node_sub.copy(), node_del.copy(), node_ins.copy()
    node_sub[i, :] = penalty
    node_sub[:, j] = penalty
    node_sub[i, j] = root_cost
    node_del[i] = penalty
    node_ins[j] = penalty
    return node_sub, node_del, node_ins


def graph_edit_distance(G1: Any, G2: Any, node_match: Match = None, edge_match: Match = None,
                        node_subst_cost: SubstCost = None, node_del_cost: UnitCost = None,
                        node_ins_cost: UnitCost = None, edge_subst_cost: SubstCost = None,
                        edge_del_cost: UnitCost = None, edge_ins_cost: UnitCost = None,
                        roots: Optional[tuple[Hashable, Hashable]] = None,
                        upper_bound: Optional[float] = None, timeout: Optional[float] = None, *,
                        budget: Optional[int] = DEFAULT_BUDGET) -> Optional[float]:
    """Graph edit distance between ``G1`` and ``G2``, as ``networkx.graph_edit_distance``.

    The arguments up to ``timeout`` mean what they mean in networkx: ``node_match``/``edge_match``
    give 0/1 substitution costs unless ``*_subst_cost`` is given; deletions and insertions cost 1
    unless ``*_del_cost``/``*_ins_cost`` is given; ``roots=(u, v)`` forces ``u`` to be substituted
    by ``v``; the result is ``None`` if it exceeds ``upper_bound``.

    One difference: a positive ``timeout`` never cuts a search short (networkx returns ``None``
    when a tiny timeout fires before an edit path is complete; this returns the distance), so the
    result does not depend on the machine. ``timeout`` must still be a positive number, as in
    networkx (``networkx.NetworkXError`` otherwise). ``budget`` caps the expanded search states
    (``None``: no cap), and when it runs out the cost of the best edit path found is returned.
    """
    if timeout is not None:
        if not isinstance(timeout, numbers.Real):
            raise InvalidTypeError(f"must be a number or None, got {describe(timeout)}", field="timeout")
        if not timeout > 0:
            raise _networkx_error("NetworkXError", f"must be greater than 0, got {timeout!r}", "timeout")
    _check_callables(node_match=node_match, edge_match=edge_match, node_subst_cost=node_subst_cost,
                     node_del_cost=node_del_cost, node_ins_cost=node_ins_cost,
                     edge_subst_cost=edge_subst_cost, edge_del_cost=edge_del_cost,
                     edge_ins_cost=edge_ins_cost)
    problem = _problem(G1, G2, node_match, edge_match, node_subst_cost, node_del_cost, node_ins_cost,
                       edge_subst_cost, edge_del_cost, edge_ins_cost, roots)
    distance = _ged.graph_edit_distance_pair(*problem, budget=budget).distance
    if upper_bound is not None and distance > upper_bound:
        return None
    return distance


def graph_edit_distance_batch(pairs: Sequence[tuple[Any, Any]], node_match: Match = None,
                              edge_match: Match = None, node_subst_cost: SubstCost = None,
                              node_del_cost: UnitCost = None, node_ins_cost: UnitCost = None,
                              edge_subst_cost: SubstCost = None, edge_del_cost: UnitCost = None,
                              edge_ins_cost: UnitCost = None, *, budget: Optional[int] = DEFAULT_BUDGET,
                              threads: int = 0) -> GedBatchResult:
    """:func:`graph_edit_distance` of every ``(G1, G2)`` in ``pairs`` with the same cost functions,
    solved in parallel on ``threads`` threads (0 = all cores; results do not depend on it).

    Returns arrays: ``distance`` (the best edit path's cost), ``lower_bound`` (proven),
    ``exact`` (the search completed within ``budget``) and ``expanded`` (search states).
    """
    _check_callables(node_match=node_match, edge_match=edge_match, node_subst_cost=node_subst_cost,
                     node_del_cost=node_del_cost, node_ins_cost=node_ins_cost,
                     edge_subst_cost=edge_subst_cost, edge_del_cost=edge_del_cost,
                     edge_ins_cost=edge_ins_cost)
    problems = []
    for k, pair in enumerate(pairs):
        try:
            G1, G2 = pair
        except (TypeError, ValueError):
            raise InvalidValueError("must be a (G1, G2) pair", field=f"pairs[{k}]") from None
        problems.append(_problem(G1, G2, node_match, edge_match, node_subst_cost, node_del_cost,
                                 node_ins_cost, edge_subst_cost, edge_del_cost, edge_ins_cost, None))
    return GedBatchResult(*_ged.graph_edit_distance_batch(problems, budget=budget, threads=threads))
