"""The scorekit data model and strategy contracts (stdlib only, no logic beyond cost lookups).

This module owns the vocabulary every other part of scorekit speaks:

* **Enums** — :class:`Decision` (accept / flag / block) and :class:`Severity` (flag / correct).
  Both subclass ``str`` so they serialise to JSON as their plain values.
* **Layer A, the schema** — :class:`FieldSpec`, :class:`NodeType`, :class:`EdgeType`,
  :class:`TypeRef` and :class:`GraphGrammar`. Frozen descriptions of what is extracted and how
  much an error on each element costs. Anything the grammar does not declare costs ``1.0``, so a
  partial grammar is always usable.
* **Layer B, per-extraction metadata** — :class:`NodePath`, :class:`Finding`,
  :class:`Provenance`, :class:`FieldEstimate` and :class:`AnnotatedExtraction`. They ride
  alongside a grammar (held by reference) and never modify it.
* **Results** — :class:`Score` (one comparison), :class:`Report` (a corpus) and
  :class:`QualityReport` (a reference-free estimate).
* **Strategy protocols** — :class:`Metric`, :class:`Validator`, :class:`Calibrator`,
  :class:`DecisionPolicy` and :class:`Signal`: structural, runtime-checkable contracts that
  implementations satisfy by shape, plus the aliases :data:`Normalizer`,
  :data:`ConfidenceSource`, :data:`CostWeight` and :data:`OcrBackend`.

It must stay cheap to import: only the standard library, no NumPy, no compiled core, and no
behaviour beyond the grammar's cost lookups.

>>> g = GraphGrammar(
...     node_types={"donation": NodeType(
...         "donation",
...         fields={
...             "amount": FieldSpec("amount", "number", importance=10.0),
...             "city": FieldSpec("city", "string", importance=1.0),
...         },
...     )},
... )
>>> g.field_cost("donation", "amount")
10.0
>>> g.field_cost("donation", "city")
1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional, Protocol, runtime_checkable

__all__ = [
    "Decision",
    "Severity",
    "FieldSpec",
    "NodeType",
    "EdgeType",
    "TypeRef",
    "GraphGrammar",
    "default_cost_weight",
    "NodePath",
    "Finding",
    "Provenance",
    "FieldEstimate",
    "AnnotatedExtraction",
    "Score",
    "Report",
    "QualityReport",
    "Metric",
    "Validator",
    "Calibrator",
    "DecisionPolicy",
    "Signal",
    "Normalizer",
    "ConfidenceSource",
    "CostWeight",
    "OcrBackend",
]


# --------------------------------------------------------------------------------------------
# Enums
# --------------------------------------------------------------------------------------------


class Decision(str, Enum):
    """The action a selective-prediction gate takes on a value; by severity ``BLOCK > FLAG > ACCEPT``."""

    ACCEPT = "accept"
    FLAG = "flag"
    BLOCK = "block"


class Severity(str, Enum):
    """Whether a :class:`Finding` only flags a value (``FLAG``) or also proposes a fix (``CORRECT``)."""

    CORRECT = "correct"
    FLAG = "flag"


# --------------------------------------------------------------------------------------------
# Layer A: the schema
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldSpec:
    """One attribute of a node type.

    ``type`` is a free-form tag (``"string"``, ``"number"``, ``"date"`` …) that metrics and
    validators may dispatch on. ``importance`` is the cost of getting the field wrong.
    ``domain`` (an enum tuple, a ``(lo, hi)`` range or a one-element regex tuple) is read by
    validators only, never by metrics. ``normalizer`` names a registered normalizer (namespace
    ``"normalizers"``) applied to this field before comparison; it wins over a metric-wide one.
    """

    name: str
    type: str = "string"
    importance: float = 1.0
    domain: tuple[Any, ...] = ()
    normalizer: Optional[str] = None


@dataclass(frozen=True)
class NodeType:
    """A kind of node in the extracted graph (an invoice, a line item …) with its fields."""

    name: str
    fields: Mapping[str, FieldSpec] = field(default_factory=dict)
    importance: float = 1.0


@dataclass(frozen=True)
class EdgeType:
    """A directed relation kind from node type ``src`` to node type ``dst``."""

    name: str
    src: str
    dst: str
    importance: float = 1.0


@dataclass(frozen=True)
class TypeRef:
    """Points into a grammar so a cost function can look a weight up.

    ``kind`` is ``"node"``, ``"edge"`` or ``"field"``; for a field, ``name`` is the node-type
    name and ``field`` the field name.
    """

    kind: str
    name: str
    field: Optional[str] = None


@dataclass(frozen=True)
class GraphGrammar:
    """The frozen schema: node and edge types with their importance weights.

    The cost lookups never raise: an undeclared node type, edge type or field costs ``1.0``.
    """

    node_types: Mapping[str, NodeType] = field(default_factory=dict)
    edge_types: Mapping[str, EdgeType] = field(default_factory=dict)

    def node_cost(self, name: str) -> float:
        """Importance of node type ``name`` (``1.0`` when undeclared)."""
        node_type = self.node_types.get(name)
        return 1.0 if node_type is None else float(node_type.importance)

    def edge_cost(self, name: str) -> float:
        """Importance of edge type ``name`` (``1.0`` when undeclared)."""
        edge_type = self.edge_types.get(name)
        return 1.0 if edge_type is None else float(edge_type.importance)

    def field_cost(self, node: str, field_name: str) -> float:
        """Importance of field ``field_name`` on node type ``node`` (``1.0`` if either is undeclared)."""
        node_type = self.node_types.get(node)
        if node_type is None:
            return 1.0
        spec = node_type.fields.get(field_name)
        return 1.0 if spec is None else float(spec.importance)

    def cost(self, ref: TypeRef) -> float:
        """Importance of the element ``ref`` points at; an unknown ``ref.kind`` costs ``1.0``."""
        if ref.kind == "node":
            return self.node_cost(ref.name)
        if ref.kind == "edge":
            return self.edge_cost(ref.name)
        if ref.kind == "field":
            return self.field_cost(ref.name, ref.field or "")
        return 1.0


def default_cost_weight(grammar: GraphGrammar, ref: TypeRef) -> float:
    """The default :data:`CostWeight`: the importance the grammar declares for ``ref``."""
    return grammar.cost(ref)


# --------------------------------------------------------------------------------------------
# Layer B: per-extraction metadata
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodePath:
    """Addresses a node, or one field of it, in an extracted graph; hashable, so it keys Layer B."""

    node_id: str
    node_type: str
    field: Optional[str] = None


@dataclass(frozen=True)
class Finding:
    """One validator observation about a value.

    ``suggestion`` is set exactly when the producing layer can correct the value (severity
    ``CORRECT``). A finding never changes the value it describes.
    """

    field: str
    layer: str
    severity: Severity = Severity.FLAG
    message: str = ""
    suggestion: Any = None


@dataclass
class Provenance:
    """Where a value came from, for audit and click-to-source review.

    ``bbox`` is untyped so the core never depends on an OCR package; OCR code stores normalised
    ``[0, 1]`` geometry with a top-left origin.
    """

    engine: str = ""
    source_span: Optional[tuple[Any, ...]] = None
    bbox: Any = None
    raw_transcripts: Sequence[str] = ()


@dataclass
class FieldEstimate:
    """One extracted value with its reference-free verification metadata."""

    value: Any
    raw_signals: dict[str, float] = field(default_factory=dict)
    confidence: Optional[float] = None
    findings: tuple[Finding, ...] = ()
    provenance: Optional[Provenance] = None
    decision: Optional[Decision] = None


@dataclass
class AnnotatedExtraction:
    """Layer B for a whole extraction: a :class:`FieldEstimate` per :class:`NodePath`.

    ``grammar`` is held by reference and never modified.
    """

    grammar: GraphGrammar
    estimates: Mapping[NodePath, FieldEstimate] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass
class Score:
    """The outcome of comparing one prediction with one reference.

    ``value`` is the headline (higher is better unless the metric says otherwise, which it
    records in ``detail["higher_is_better"]``). ``detail`` carries the raw counts a metric's
    corpus aggregator sums, so corpus numbers are exact rather than means of ratios.
    ``float(score)`` is ``value``.
    """

    value: float
    precision: Optional[float] = None
    recall: Optional[float] = None
    f1: Optional[float] = None
    metric: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        return float(self.value)


class LazyScores(Sequence[Score]):
    """A read-only sequence of :class:`Score` objects built on access from count arrays (so a
    corpus keeps no object per item): subclasses give ``__len__`` and ``_item(k)`` for
    ``0 <= k < len``. Indexes and slices like a list and compares equal to any sequence of equal
    scores."""

    def _item(self, k: int) -> Score:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._item(k) for k in range(*index.indices(len(self)))]
        k = index.__index__()
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(f"score index {index} out of range for {len(self)} scores")
        return self._item(k)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


@dataclass
class Report:
    """A corpus of scores with the metric's own aggregate and optional per-slice aggregates.

    ``scores`` may be any sequence — a list, or a lazy sequence that builds :class:`Score`
    objects on access. ``float(report)`` is ``aggregate``, or NaN when there is none.
    """

    metric: str = ""
    aggregate: Optional[float] = None
    n: int = 0
    scores: Sequence[Score] = field(default_factory=list)
    per_slice: dict[Any, float] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        return math.nan if self.aggregate is None else float(self.aggregate)


@dataclass(slots=True)  # slots: a corpus batch builds 100,000s of these
class QualityReport:
    """A reference-free quality estimate.

    For a single value the scalar fields carry the verdict. For an :class:`AnnotatedExtraction`,
    ``per_field`` maps each :class:`NodePath` to its updated :class:`FieldEstimate`, and the
    scalars summarise: the weakest confidence and the most severe decision. ``provenance`` is a
    plain dict describing how the estimate was made.
    """

    calibrated_confidence: Optional[float] = None
    decision: Optional[Decision] = None
    findings: tuple[Finding, ...] = ()
    raw_signals: dict[str, float] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    per_field: Optional[Mapping[NodePath, FieldEstimate]] = None


# --------------------------------------------------------------------------------------------
# Strategy protocols and aliases
# --------------------------------------------------------------------------------------------


@runtime_checkable
class Metric(Protocol):
    """Compares one prediction with one gold reference, ``(pred, gold)`` in that order.

    Optional extras a metric may offer: ``aggregate(scores) -> float`` and a ``name`` label.
    """

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score: ...


@runtime_checkable
class Validator(Protocol):
    """A reference-free check of one value, yielding zero or more findings."""

    def __call__(self, value: Any, *, spec: Optional[FieldSpec] = None) -> Iterable[Finding]: ...


@runtime_checkable
class Calibrator(Protocol):
    """Maps a raw score to a probability once fitted on labelled outcomes.

    Group-conditional (Mondrian) calibrators additionally accept a ``group=`` keyword.
    """

    def fit(self, scores: Sequence[float], correct: Sequence[bool]) -> Calibrator: ...

    def __call__(self, raw_score: float) -> float: ...


@runtime_checkable
class DecisionPolicy(Protocol):
    """Turns a calibrated probability into a :class:`Decision` (Mondrian ones accept ``group=``)."""

    def __call__(self, confidence: float) -> Decision: ...


@runtime_checkable
class Signal(Protocol):
    """A reference-free quality signal; ``cost_tier`` orders signals cheap-first (lower is cheaper)."""

    cost_tier: int

    def __call__(self, extractor_output: Any) -> float: ...


Normalizer = Callable[[str], str]
"""Canonicalises a string before comparison."""

ConfidenceSource = Callable[[FieldEstimate], Mapping[str, float]]
"""Reads named raw signals off a :class:`FieldEstimate`."""

CostWeight = Callable[[GraphGrammar, TypeRef], float]
"""Cost of an edit on a typed element; :func:`default_cost_weight` reads the grammar's importance."""

OcrBackend = Callable[[Any], Any]
"""Turns an image (path, bytes or array) into an object with ``.text`` and ``.blocks``."""
