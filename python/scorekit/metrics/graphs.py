"""Cost-weighted typed-graph edit distance: :class:`TypedGraphMetric` and its graph types.

This module owns the typed-graph data model (:class:`TypedNode`, :class:`TypedEdge`,
:class:`TypedGraph`) and the metric's cost model (docs/decisions.md#typed-graph-costs): per-edit
costs come from the :class:`~scorekit.base.GraphGrammar` importance weights (or a ``weights``
callable), so "two extra digits on a monetary amount outweigh a misspelled city". It turns a pair
of graphs into cost tables once and hands them to the exact GED kernel
(:mod:`scorekit._kernels.ged`); it never searches itself.

Cost model, with ``nc``/``ec``/``fc`` the node-type, edge-type and field weights:

* ``mass(n) = nc(type) + Σ fc(type, f)`` over the fields present on ``n``; deleting or inserting
  a node costs its mass;
* substituting nodes of different types costs both masses; of the same type, the weights of the
  fields (union of both sides' keys) whose values differ (a missing field differs from any value;
  ``str`` values are normalised first; ``100 != "100"``);
* deleting or inserting an edge costs ``ec(type)``; substituting costs 0 for equal types, else
  ``max`` of the two weights; edges are directed, so a reversed edge is a deletion plus an
  insertion;
* ``raw_distance`` = exact GED(pred → gold) under these costs, ``denom`` = the cost of deleting
  all of gold plus inserting all of pred, ``value = min(1, raw / denom)`` (lower is better).

Decisions where ek is doubtful (docs/decisions.md#typed-graph-costs and #ged):

* ``exact`` says whether the search completed within ``budget`` expanded states; it never depends
  on time. ``timeout`` is accepted and reported as ``detail["timeout_s"]`` for compatibility but
  does not limit anything. When the budget runs out, ``raw_distance`` is the best edit path found
  (never more than ``denom``) and ``detail["lower_bound"]`` the proven lower bound.
* Duplicate node ids and edges naming unknown nodes raise ``ValueError`` (the reference collapses
  the former and fails with ``KeyError('type')`` on the latter). Duplicate ``(src, dst)`` edges
  collapse, the last type winning, as in the reference.
* ``raw_distance`` is the exact minimum of the cost model. The reference's networkx search can
  report more when a node of another type is substituted (that costs exactly a deletion plus an
  insertion, the tie of networkx issue #8099); ek's documented vectors are unaffected.
* The metric does not need networkx; only :meth:`TypedGraph.to_networkx` does.

>>> from scorekit.base import GraphGrammar, NodeType, FieldSpec
>>> g = GraphGrammar(node_types={"donation": NodeType("donation", fields={
...     "amount": FieldSpec("amount", "number", importance=10.0),
...     "city": FieldSpec("city", "string", importance=1.0)})})
>>> gold = TypedGraph([TypedNode("d1", "donation", {"amount": "100", "city": "Paris"})])
>>> wrong_amount = TypedGraph([TypedNode("d1", "donation", {"amount": "900", "city": "Paris"})])
>>> wrong_city = TypedGraph([TypedNode("d1", "donation", {"amount": "100", "city": "Lyon"})])
>>> m = TypedGraphMetric(grammar=g)
>>> m(wrong_amount, gold).detail["raw_distance"]
10.0
>>> m(wrong_city, gold).detail["raw_distance"]
1.0
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from scorekit._kernels import ged as _ged
from scorekit._weights import checked_weight, grammar_weight
from scorekit.base import CostWeight, GraphGrammar, Score, TypeRef
from scorekit.canonicalize import resolve_canonicalizer
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.metrics.fields import values_equal
from scorekit.graphs import DEFAULT_BUDGET

__all__ = ["DEFAULT_BUDGET", "DEFAULT_MAX_NODES", "TypedEdge", "TypedGraph", "TypedGraphMetric", "TypedNode"]

#: Default ceiling on the node count of either graph; larger pairs are rejected, not searched.
DEFAULT_MAX_NODES = 60

TextNormalizer = Callable[[str], str]
_MISSING = object()  # a field absent from a node: equal only to itself


@dataclass(frozen=True)
class TypedNode:
    """A node: an id (irrelevant to matching), a node-type tag and its field values."""

    node_id: Hashable
    node_type: str
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TypedEdge:
    """A directed, typed relation between two node ids."""

    src: Hashable
    dst: Hashable
    edge_type: str = ""


@dataclass(frozen=True)
class TypedGraph:
    """Typed nodes plus directed typed edges."""

    nodes: Sequence[TypedNode] = ()
    edges: Sequence[TypedEdge] = ()

    def to_networkx(self) -> Any:
        """A ``networkx.DiGraph``: node attributes ``type`` and ``fields``, edge attribute ``type``.

        Like the reference, a repeated node id or ``(src, dst)`` pair keeps the last one, and an
        edge to an unknown id creates an attribute-less node. Needs networkx.
        """
        import networkx as nx

        g = nx.DiGraph()
        for n in self.nodes:
            g.add_node(n.node_id, type=n.node_type, fields=dict(n.fields))
        for e in self.edges:
            g.add_edge(e.src, e.dst, type=e.edge_type)
        return g


class _Costs:
    """The weights of one call: node/edge/field costs looked up once per type, field equality."""

    def __init__(self, grammar: GraphGrammar, weights: Optional[CostWeight],
                 canonicalizer: Optional[TextNormalizer]) -> None:
        self.grammar = grammar
        self.weights = weights
        self.canonicalizer = canonicalizer
        self.field_norms: dict[tuple[str, str], TextNormalizer] = {}
        for type_name, node_type in grammar.node_types.items():
            for field_name, spec in node_type.fields.items():
                if spec.normalizer:
                    self.field_norms[(type_name, field_name)] = resolve_canonicalizer(spec.normalizer)
        self._cache: dict[tuple[str, str, Optional[str]], float] = {}

    def _weight(self, kind: str, name: str, field_name: Optional[str] = None) -> float:
        key = (kind, name, field_name)
        cost = self._cache.get(key)
        if cost is None:
            ref = TypeRef(kind, name, field_name)
            what = f"the cost weight of {ref}"
            if self.weights is not None:
                cost = checked_weight(self.weights(self.grammar, ref), what)
            elif kind == "node":
                cost = grammar_weight(self.grammar.node_cost, (name,), what)
            elif kind == "edge":
                cost = grammar_weight(self.grammar.edge_cost, (name,), what)
            else:
                cost = grammar_weight(self.grammar.field_cost, (name, field_name or ""), what)
            self._cache[key] = cost
        return cost

    def node(self, t: str) -> float:
        return self._weight("node", t)

    def edge(self, t: str) -> float:
        return self._weight("edge", t)

    def field(self, t: str, f: str) -> float:
        return self._weight("field", t, f)

    def mass(self, n: TypedNode) -> float:
        total = self.node(n.node_type)
        for f in n.fields:
            total += self.field(n.node_type, f)
        return total

    def _norm(self, t: str, f: str, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        norm = self.field_norms.get((t, f), self.canonicalizer)
        return value if norm is None else norm(value)

    def substitution(self, a: TypedNode, b: TypedNode, mass_a: float, mass_b: float) -> float:
        t = a.node_type
        if t != b.node_type:
            return mass_a + mass_b
        total = 0.0
        for f in list(a.fields) + [f for f in b.fields if f not in a.fields]:
            va = self._norm(t, f, a.fields.get(f, _MISSING))
            vb = self._norm(t, f, b.fields.get(f, _MISSING))
            if not (va is vb or (va is not _MISSING and vb is not _MISSING
                                 and values_equal(va, vb, f"field {f!r} of nodes {a.node_id!r}/{b.node_id!r}"))):
                total += self.field(t, f)
        return total


def _checked(graph: Any, argument: str) -> tuple[list[TypedNode], dict[tuple[int, int], str]]:
    """Nodes and the collapsed edge map ``(src index, dst index) -> type`` of a valid graph."""
    if not isinstance(graph, TypedGraph):
        raise InvalidTypeError(f"must be a TypedGraph, got {type(graph).__name__}", field=argument)
    nodes = list(graph.nodes)
    index: dict[Hashable, int] = {}
    for i, n in enumerate(nodes):
        if not isinstance(n, TypedNode):
            raise InvalidTypeError(f"must be a TypedNode, got {type(n).__name__}", field=f"{argument}.nodes[{i}]")
        if n.node_id in index:
            raise InvalidValueError(f"has duplicate node id {n.node_id!r}", field=argument)
        index[n.node_id] = i
    edges: dict[tuple[int, int], str] = {}
    for k, e in enumerate(graph.edges):
        if not isinstance(e, TypedEdge):
            raise InvalidTypeError(f"must be a TypedEdge, got {type(e).__name__}", field=f"{argument}.edges[{k}]")
        for end in (e.src, e.dst):
            if end not in index:
                raise InvalidValueError(f"refers to unknown node id {end!r}", field=f"{argument}.edges[{k}]")
        edges[(index[e.src], index[e.dst])] = e.edge_type
    return nodes, edges


class TypedGraphMetric:
    """Normalised cost-weighted graph edit distance between two :class:`TypedGraph`, ``(pred, gold)``.

    ``grammar`` supplies the weights (a non-None per-call ``grammar`` overrides it); ``weights``,
    a :data:`~scorekit.base.CostWeight`, replaces all of them and is called with the active grammar
    (or an empty one). ``canonicalizer`` normalises ``str`` field values unless the grammar gives
    that field its own normalizer. ``max_nodes`` (``None``: no guard) rejects larger graphs with
    ``ValueError``. ``budget`` caps the search in expanded states (``None``: unlimited), which
    makes ``detail["exact"]`` reproducible; ``timeout`` is kept for compatibility only.
    """

    name = "graph"

    def __init__(self, grammar: Optional[GraphGrammar] = None, weights: Optional[CostWeight] = None, *,
                 canonicalizer: Optional[TextNormalizer] = None, timeout: Optional[float] = 10.0,
                 max_nodes: Optional[int] = DEFAULT_MAX_NODES, budget: Optional[int] = DEFAULT_BUDGET) -> None:
        if grammar is not None and not isinstance(grammar, GraphGrammar):
            raise InvalidTypeError(f"must be a GraphGrammar or None, got {type(grammar).__name__}", field="grammar")
        if weights is not None and not callable(weights):
            raise InvalidTypeError(f"must be a callable (grammar, TypeRef) -> float or None, got {weights!r:.60}",
                                   field="weights")
        if canonicalizer is not None and not callable(canonicalizer):
            raise InvalidTypeError(f"must be a callable str -> str or None, got {canonicalizer!r:.60}",
                                   field="canonicalizer")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not timeout > 0):
            raise InvalidValueError(f"must be a positive number of seconds or None, got {timeout!r:.60}", field="timeout")
        if max_nodes is not None and (isinstance(max_nodes, bool) or not isinstance(max_nodes, int)
                                      or max_nodes < 0):
            raise InvalidValueError(f"must be a non-negative int or None, got {max_nodes!r:.60}", field="max_nodes")
        self.grammar = grammar
        self.weights = weights
        self.canonicalizer = canonicalizer
        self.timeout = timeout
        self.max_nodes = max_nodes
        self.budget = _ged.check_budget(budget)

    def __repr__(self) -> str:
        return (f"TypedGraphMetric(grammar={self.grammar!r}, weights={self.weights!r}, "
                f"max_nodes={self.max_nodes!r}, budget={self.budget!r})")

    def __call__(self, pred: TypedGraph, gold: TypedGraph, *, grammar: Optional[GraphGrammar] = None) -> Score:
        prepared = self._prepare(pred, gold, grammar)
        if isinstance(prepared, Score):
            return prepared
        problem, denom = prepared
        result = _ged.graph_edit_distance_pair(*problem, budget=self.budget)
        return self._score(result.distance, result.lower_bound, result.exact, result.expanded, denom)

    def score_batch(self, pairs: Sequence[tuple[TypedGraph, TypedGraph]], *,
                    grammar: Optional[GraphGrammar] = None, threads: int = 0) -> list[Score]:
        """``[self(pred, gold, grammar=grammar) for pred, gold in pairs]``, with the searches run in
        parallel on ``threads`` threads (0 = all cores; results do not depend on it)."""
        prepared = []
        for k, pair in enumerate(pairs):
            try:
                pred, gold = pair
            except (TypeError, ValueError):
                raise InvalidValueError("must be a (pred, gold) pair of TypedGraph", field=f"pairs[{k}]") from None
            prepared.append(self._prepare(pred, gold, grammar))
        todo = [p for p in prepared if not isinstance(p, Score)]
        distance, lower, exact, expanded = _ged.graph_edit_distance_batch(
            [problem for problem, _ in todo], budget=self.budget, threads=threads)
        scores, k = [], 0
        for p in prepared:
            if isinstance(p, Score):
                scores.append(p)
            else:
                scores.append(self._score(float(distance[k]), float(lower[k]), bool(exact[k]), int(expanded[k]), p[1]))
                k += 1
        return scores

    def _prepare(self, pred: Any, gold: Any, grammar: Optional[GraphGrammar]) -> Any:
        """The kernel problem and ``denom`` of one pair, or its final Score when ``denom == 0``."""
        if grammar is not None and not isinstance(grammar, GraphGrammar):
            raise InvalidTypeError(f"must be a GraphGrammar or None, got {type(grammar).__name__}", field="grammar")
        active = grammar if grammar is not None else self.grammar
        costs = _Costs(active if active is not None else GraphGrammar(), self.weights, self.canonicalizer)
        pred_nodes, pred_edges = _checked(pred, "pred")
        gold_nodes, gold_edges = _checked(gold, "gold")

        pred_mass = np.array([costs.mass(n) for n in pred_nodes], dtype=np.float64)
        gold_mass = np.array([costs.mass(n) for n in gold_nodes], dtype=np.float64)
        denom = (float(sum(gold_mass.tolist())) + sum(costs.edge(t) for t in gold_edges.values())
                 + float(sum(pred_mass.tolist())) + sum(costs.edge(t) for t in pred_edges.values()))
        if denom == 0:
            return Score(0.0, metric="graph", detail={
                "raw_distance": 0.0, "denom": 0.0, "similarity": 1.0, "higher_is_better": False, "exact": True})
        n = max(len(pred_nodes), len(gold_nodes))
        if self.max_nodes is not None and n > self.max_nodes:
            raise InputTooLargeError(
                f"TypedGraphMetric: {n} nodes exceeds max_nodes={self.max_nodes}. Graph edit distance is "
                "NP-hard; raise max_nodes only if you accept the cost, or pre-reduce the graphs.")

        node_sub = np.empty((len(pred_nodes), len(gold_nodes)))
        for i, a in enumerate(pred_nodes):
            for j, b in enumerate(gold_nodes):
                node_sub[i, j] = costs.substitution(a, b, pred_mass[i], gold_mass[j])
        edge_types = list(dict.fromkeys([*pred_edges.values(), *gold_edges.values()]))
        cls = {t: k for k, t in enumerate(edge_types)}
        edge_cost = np.array([costs.edge(t) for t in edge_types], dtype=np.float64).reshape(-1)
        edge_sub = np.maximum.outer(edge_cost, edge_cost)
        np.fill_diagonal(edge_sub, 0.0)
        if not edge_types:  # no edges at all: one unused class keeps the tables well-formed
            edge_cost, edge_sub = np.ones(1), np.zeros((1, 1))
        problem = (node_sub, pred_mass, gold_mass,
                   [(s, d, cls[t]) for (s, d), t in pred_edges.items()],
                   [(s, d, cls[t]) for (s, d), t in gold_edges.items()],
                   edge_sub, edge_cost, edge_cost, True)
        return problem, denom

    def _score(self, distance: float, lower_bound: float, exact: bool, expanded: int, denom: float) -> Score:
        raw = min(distance, denom)
        normalized = min(1.0, raw / denom)
        return Score(value=normalized, metric="graph", detail={
            "raw_distance": raw, "denom": denom, "similarity": 1.0 - normalized, "higher_is_better": False,
            "exact": exact, "timeout_s": self.timeout, "lower_bound": min(lower_bound, raw), "expanded": expanded})

    def aggregate(self, scores: Sequence[Score]) -> float:
        """Corpus distance: Σ raw_distance / Σ denom (missing keys count 0; 0.0 when Σ denom = 0)."""
        raw = sum(float(s.detail.get("raw_distance", 0.0)) for s in scores)
        denom = sum(float(s.detail.get("denom", 0.0)) for s in scores)
        return raw / denom if denom else 0.0
