"""Workflow-tree metrics (StarFlow, Bechard et al. 2025): FlowSim, TreeBLEU, Trigger Match and Component Match.

This module owns the workflow JSON format (documented with examples in ``docs/flows.md``), its
decomposition into an ordered tree, the four metrics, and their evaluation over pairs or over two
directories of JSON files (plus the ``scorekit flows`` command's logic, :func:`flows_command`).
Tree edit distances run on the Zhang–Shasha kernel (``scorekit._kernels.tree``), all pairs of an
evaluation in one parallel batch. With the Rust backend, :func:`evaluate_flows` decomposes and scores
plain-JSON pairs in compiled code (``_core.flow_metrics_batch``, ``rust/bindings/src/flows.rs``);
this module stays the reference for the format rules and scores every pair that path flags
(invalid or unusual documents), so both backends return identical reports.

The tree of a flow (unit costs; ``|F|`` counts every node)::

    flow
    ├── trigger
    │   └── <trigger type>                 (absent when the trigger is null)
    └── components
        └── <category>:<definition>        (one per top-level component, in order)
            └── <category>:<definition>    (nested components: block / children)

* FlowSim = 1 − TED(F, Fr) / (|F| + |Fr|).
* TreeBLEU = |S(F) ∩ S(Fr)| / |S(F)|, S = the set of 1-height subtrees (a node's label with the
  tuple of its children's labels) of every node that has children, **except the root**: the
  flow→trigger and flow→components edges are excluded, so an empty flow has S = ∅ and scores 0.
* Trigger Match = 1 if the predicted trigger equals the reference trigger under Python's ``==`` on
  the parsed JSON (StarFlow's ``pred['trigger'] == ref['trigger']``; a missing trigger is null, so two
  null triggers match), else 0. ``trigger_match="type"`` compares only the trigger types.
* Component Match = |C ∩ Cr| / |C ∪ Cr| over the sets of component labels at every depth (order and
  repetition ignored); 0 when both sets are empty, as in StarFlow's scoring recipe.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

import numpy as np

from scorekit import _kernels
from scorekit._kernels import tree as _tree_kernels
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.trees import MAX_NODES, Tree, postorder_with_leftmost

__all__ = [
    "FlowFormatError",
    "FlowItem",
    "FlowMetrics",
    "FlowReport",
    "component_match",
    "compute_metrics",
    "decompose_to_tree",
    "evaluate_flows",
    "flows_command",
    "flowsim",
    "get_1_height_subtrees",
    "one_height_subtrees",
    "parse_flow",
    "treebleu",
    "trigger_match",
]

FLOW, TRIGGER, COMPONENTS = "flow", "trigger", "components"
METRIC_NAMES = ("flowsim", "treebleu", "trigger_match", "component_match")
#: How Trigger Match compares triggers: ``exact`` (the whole trigger, StarFlow's recipe) or ``type``.
TRIGGER_MATCHES = ("exact", "type")
#: How a reference without a prediction file is scored: ``zero`` (0 on every metric) or ``empty`` (as
#: the empty flow).
MISSING_PREDICTIONS = ("zero", "empty")

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')

#: Deepest nesting of arrays and objects a workflow's JSON text may have. Inline ``children`` are
#: limited to 200 levels (two JSON levels each), so no workflow needs more; deeper text is refused
#: before it is parsed, so reading never depends on Python's recursion limit.
MAX_JSON_DEPTH = 512

# A node of a decomposed flow: (label, children).
_Node = tuple[str, list]


class FlowFormatError(InvalidValueError):
    """A document is not valid JSON or not a workflow in the documented format."""


# -- parsing and decomposition ----------------------------------------------------------------------


def parse_flow(text: Union[str, bytes]) -> Any:
    """Parse a workflow from JSON text. A Markdown code fence (```` ```json ... ``` ````) around the
    document, as language models often emit, is removed first. Raises :class:`FlowFormatError`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise InvalidTypeError(f"parse_flow needs str or bytes, got {type(text).__name__}")
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    depth = _json_depth(body)
    if depth > MAX_JSON_DEPTH:
        raise FlowFormatError(f"JSON nested {depth} levels deep, above the {MAX_JSON_DEPTH}-level guard "
                              "(MAX_JSON_DEPTH)")
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise FlowFormatError(f"not valid JSON: {exc}") from None
    except RecursionError:  # only when the caller is itself deep in the stack
        raise FlowFormatError("JSON nested too deeply for the reader") from None


def _json_depth(body: str) -> int:
    """Deepest nesting of ``[`` / ``{`` in JSON text, string literals skipped (linear, vectorised)."""
    if "[" not in body and "{" not in body:
        return 0
    skeleton = _JSON_STRING.sub("", body).encode("utf-8", "surrogatepass")
    codes = np.frombuffer(skeleton, np.uint8)
    steps = (np.isin(codes, (0x5B, 0x7B)).astype(np.int64) - np.isin(codes, (0x5D, 0x7D)))
    return int(np.cumsum(steps).max(initial=0))


def _is_object(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _trigger_type(trigger: Any) -> Optional[str]:
    if trigger is None or type(trigger) is str or isinstance(trigger, str):
        return trigger
    if _is_object(trigger):
        kind = trigger.get("type")
        if isinstance(kind, str):
            return kind
        raise FlowFormatError(f"the trigger object needs a string 'type', got {kind!r:.60}")
    raise FlowFormatError(f"trigger must be null, a string or an object with 'type', got {type(trigger).__name__}")


def _component_label(component: Any, where: str, k: int) -> str:
    if type(component) is str:
        return "action:" + component
    if not _is_object(component):
        if isinstance(component, str):
            return "action:" + component
        raise FlowFormatError(f"{where}[{k}] must be a string or an object, got {type(component).__name__}")
    definition = component.get("definition")
    if definition is None:
        definition = component.get("type")
    if type(definition) is not str and not isinstance(definition, str):
        raise FlowFormatError(f"{where}[{k}] needs a string 'definition' (or 'type'), got {definition!r:.60}")
    category = component.get("category", "action")
    if type(category) is not str and not isinstance(category, str):
        raise FlowFormatError(f"{where}[{k}]: 'category' must be a string, got {category!r:.60}")
    return category + ":" + definition


def _component_forest(components: Any, where: str, depth: int = 0) -> list[_Node]:
    """The ordered forest of one component list: ``block`` references resolved inside the list,
    inline ``children`` lists decomposed as their own scope."""
    if type(components) is not list:
        raise FlowFormatError(f"{where} must be a list, got {type(components).__name__}")
    if depth > 200:
        raise FlowFormatError(f"{where}: components nested more than 200 levels deep")
    nodes: list[_Node] = []
    by_order: dict[Any, int] = {}
    blocks: list[tuple[int, Any]] = []
    for k, component in enumerate(components):
        children: list[_Node] = []
        if type(component) is dict or (type(component) is not str and isinstance(component, Mapping)):
            order = component.get("order")
            if order is not None:
                if isinstance(order, bool) or not isinstance(order, (int, float, str)):
                    raise FlowFormatError(f"{where}[{k}]: 'order' must be a number or a string, got {order!r:.60}")
                if order in by_order:
                    raise FlowFormatError(f"{where}[{k}]: order {order!r} is used twice")
                by_order[order] = k
            block = component.get("block")
            if block is not None:
                blocks.append((k, block))
            nested = component.get("children")
            if nested is not None:
                children = _component_forest(nested, f"{where}[{k}].children", depth + 1)
        nodes.append((_component_label(component, where, k), children))
    if not blocks:
        return nodes
    parent_of: dict[int, int] = {}
    for k, block in blocks:
        parent = by_order.get(block) if not isinstance(block, (list, dict, bool)) else None
        if parent is None:
            raise FlowFormatError(f"{where}[{k}]: 'block' {block!r:.60} names no component's 'order'")
        parent_of[k] = parent
    for k, _ in blocks:  # every block chain must reach a top-level component
        seen, at = {k}, parent_of[k]
        while at in parent_of:
            if at in seen:
                raise FlowFormatError(f"{where}[{k}]: 'block' references form a cycle")
            seen.add(at)
            at = parent_of[at]
    for k, _ in blocks:
        nodes[parent_of[k]][1].append(nodes[k])
    return [node for k, node in enumerate(nodes) if k not in parent_of]


def _flow_root(flow: Any) -> tuple[Any, Optional[str], _Node]:
    """The trigger (None when missing), its type and the decomposed tree of a parsed flow (raises
    :class:`FlowFormatError`)."""
    if isinstance(flow, (str, bytes)):
        flow = parse_flow(flow)
    if not _is_object(flow):
        raise FlowFormatError(f"a workflow must be a JSON object, got {type(flow).__name__}")
    if TRIGGER not in flow and COMPONENTS not in flow:
        raise FlowFormatError("a workflow needs a 'trigger' or a 'components' key")
    trigger = flow.get(TRIGGER)
    kind = _trigger_type(trigger)
    components = flow.get(COMPONENTS)
    forest = _component_forest([] if components is None else components, COMPONENTS)
    trigger_node: _Node = (TRIGGER, [] if kind is None else [(kind, [])])
    return trigger, kind, (FLOW, [trigger_node, (COMPONENTS, forest)])


def _empty_root() -> _Node:
    return (FLOW, [(TRIGGER, []), (COMPONENTS, [])])


def _to_tree(node: _Node) -> Tree:
    built: dict[int, Tree] = {}
    stack: list[tuple[_Node, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if expanded:
            built[id(current)] = Tree(current[0], [built.pop(id(c)) for c in current[1]])
        else:
            stack.append((current, True))
            stack.extend((c, False) for c in current[1])
    return built[id(node)]


def decompose_to_tree(flow: Any) -> Tree:
    """The ordered tree of a workflow (a parsed JSON object, or JSON text), as drawn in the module
    documentation. Raises :class:`FlowFormatError` for anything that is not a workflow."""
    return _to_tree(_flow_root(flow)[2])


class _Analysed(NamedTuple):
    """Everything the four metrics need from one flow: the trigger and its type, the tree in
    post-order (labels and leftmost-leaf indices), S(F) and the component label set."""

    trigger: Any
    trigger_type: Optional[str]
    labels: list
    lld: list
    subtrees: frozenset
    components: frozenset


def _node_children(node: _Node) -> list:
    return node[1]


def _analyse_root(trigger: Any, trigger_type: Optional[str], root: _Node) -> _Analysed:
    labels: list[str] = []
    lld: list[int] = []
    subtrees = set()
    for node, left in postorder_with_leftmost(root, _node_children):
        label, children = node
        labels.append(label)
        lld.append(left)
        if children and node is not root:  # every subtree but the root's
            subtrees.add((label, tuple(c[0] for c in children)))
    # Post-order ends with the components subtree, then the root: its nodes are components.
    components = frozenset(labels[lld[-2]:-2])
    return _Analysed(trigger, trigger_type, labels, lld, frozenset(subtrees), components)


def _analyse(flow: Any) -> _Analysed:
    if isinstance(flow, _Analysed):
        return flow
    return _analyse_root(*_flow_root(flow))


_EMPTY = _analyse_root(None, None, _empty_root())


def one_height_subtrees(flow: Any) -> frozenset:
    """S(F): the ``(label, (child labels...))`` of every node with children, except the root flow
    node, so the flow→trigger and flow→components edges never count."""
    return _analyse(flow).subtrees


#: StarFlow's recipe name for :func:`one_height_subtrees`.
get_1_height_subtrees = one_height_subtrees


def _treebleu(p: _Analysed, r: _Analysed) -> float:
    return len(p.subtrees & r.subtrees) / len(p.subtrees) if p.subtrees else 0.0


def _check_trigger_match(mode: Any) -> str:
    if not isinstance(mode, str) or mode not in TRIGGER_MATCHES:
        raise InvalidValueError(f"trigger_match must be one of {', '.join(map(repr, TRIGGER_MATCHES))}, "
                                f"got {mode!r:.60}")
    return mode


def _trigger_match(p: _Analysed, r: _Analysed, mode: str) -> float:
    if mode == "type":
        return 1.0 if p.trigger_type == r.trigger_type else 0.0
    try:
        return 1.0 if p.trigger == r.trigger else 0.0  # StarFlow's recipe: pred['trigger'] == ref['trigger']
    except RecursionError:
        raise FlowFormatError("the triggers are nested too deeply to compare") from None


def _component_match(p: _Analysed, r: _Analysed) -> float:
    union = p.components | r.components
    return len(p.components & r.components) / len(union) if union else 0.0


def treebleu(pred: Any, ref: Any) -> float:
    """|S(pred) ∩ S(ref)| / |S(pred)|, and 0 when the prediction has no 1-height subtree."""
    return _treebleu(_analyse(pred), _analyse(ref))


def trigger_match(pred: Any, ref: Any, mode: str = "exact") -> float:
    """1.0 when the triggers are equal under Python's ``==`` (StarFlow's recipe; a missing trigger is
    null, so two null triggers match), else 0.0. ``mode="type"`` compares only the trigger types."""
    return _trigger_match(_analyse(pred), _analyse(ref), _check_trigger_match(mode))


def component_match(pred: Any, ref: Any) -> float:
    """Intersection over union of the component label sets (every depth; order ignored)."""
    return _component_match(_analyse(pred), _analyse(ref))


def _pack(flows: Sequence[_Analysed], intern: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Post-order label ids, leftmost-leaf indices and node offsets of many analysed flows."""
    sizes = np.fromiter((len(f.labels) for f in flows), dtype=np.int64, count=len(flows))
    offsets = np.zeros(len(flows) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    total = int(offsets[-1])
    setdefault = intern.setdefault
    labels = np.fromiter((setdefault(label, len(intern)) for f in flows for label in f.labels),
                         dtype=np.uint32, count=total)
    lld = np.fromiter(chain.from_iterable(f.lld for f in flows), dtype=np.uint32, count=total)
    return labels, lld, offsets


def _flowsims(preds: Sequence[_Analysed], refs: Sequence[_Analysed], threads: Optional[int]) -> np.ndarray:
    intern: dict[str, int] = {}
    l1, d1, o1 = _pack(preds, intern)
    l2, d2, o2 = _pack(refs, intern)
    ted = _tree_kernels.distance_batch(l1, d1, o1, l2, d2, o2, threads=threads or 0)
    sizes = np.diff(o1) + np.diff(o2)
    return 1.0 - ted / sizes


def _check_size(flow: _Analysed, what: str, max_nodes: int) -> _Analysed:
    if len(flow.labels) > max_nodes:
        raise InputTooLargeError(f"{what} has {len(flow.labels)} tree nodes, above max_nodes={max_nodes}: the "
                                 "tree edit distance needs O(n1*n2) memory and time; pass a larger max_nodes "
                                 "to allow it")
    return flow


def flowsim(pred: Any, ref: Any, *, max_nodes: int = MAX_NODES) -> float:
    """1 − TED(F, Fr) / (|F| + |Fr|) with unit costs (Zhang–Shasha), in [0, 1]. Flows of more than
    ``max_nodes`` tree nodes are a ``ValueError`` (the size guard)."""
    p = _check_size(_analyse(pred), "the prediction", max_nodes)
    r = _check_size(_analyse(ref), "the reference", max_nodes)
    return float(_flowsims([p], [r], 1)[0])


class FlowMetrics(NamedTuple):
    """The four metrics of one (prediction, reference) pair; unpacks like StarFlow's 4-tuple."""

    flowsim: float
    treebleu: float
    trigger_match: float
    component_match: float


def compute_metrics(pred: Any, ref: Any, *, max_nodes: int = MAX_NODES, trigger_match: str = "exact") -> FlowMetrics:
    """FlowSim, TreeBLEU, Trigger Match and Component Match of one pair (parsed JSON or JSON text).

    Both sides must be workflows (else :class:`FlowFormatError`); :func:`evaluate_flows` is the lenient
    entry point that scores a malformed prediction as an empty flow. Flows of more than ``max_nodes``
    tree nodes are a ``ValueError`` (the size guard). ``trigger_match="type"`` compares only the
    trigger types (the default, ``"exact"``, is StarFlow's whole-trigger ``==``).
    """
    mode = _check_trigger_match(trigger_match)
    p = _check_size(_analyse(pred), "the prediction", max_nodes)
    r = _check_size(_analyse(ref), "the reference", max_nodes)
    return FlowMetrics(float(_flowsims([p], [r], 1)[0]), _treebleu(p, r), _trigger_match(p, r, mode),
                       _component_match(p, r))


# -- evaluation over many pairs ---------------------------------------------------------------------


@dataclass(slots=True)
class FlowItem:
    """One scored pair; ``error`` records why the prediction was scored as an empty flow."""

    id: str
    flowsim: float
    treebleu: float
    trigger_match: float
    component_match: float
    error: Optional[str] = None


_ITEM_FIELDS = ("id", *METRIC_NAMES, "error")


class FlowReport:
    """Per-item records and the mean of each metric over the items (NaN for an empty corpus).

    ``missing_predictions`` lists the items whose prediction file does not exist (they are items,
    scored 0 or as the empty flow, see :func:`evaluate_flows`); ``unmatched_predictions`` the
    prediction files without a reference (not items).

    ``items`` is a list of :class:`FlowItem`. A report made by :func:`evaluate_flows` keeps the
    metrics as one array and builds that list on first access, so a large corpus scored only for
    its means never pays for (or garbage-collects) one Python object per pair.
    """

    __slots__ = ("_items", "_ids", "_rows", "_errors", "means", "unmatched_predictions", "missing_predictions")

    def __init__(self, items: list[FlowItem], means: dict[str, float],
                 unmatched_predictions: Optional[list[str]] = None,
                 missing_predictions: Optional[list[str]] = None) -> None:
        self._items: Optional[list[FlowItem]] = items
        self._ids: list[str] = []
        self._rows: Optional[np.ndarray] = None
        self._errors: dict[int, str] = {}
        self.means = means
        self.unmatched_predictions = [] if unmatched_predictions is None else unmatched_predictions
        self.missing_predictions = [] if missing_predictions is None else missing_predictions

    @classmethod
    def _from_rows(cls, ids: list[str], rows: np.ndarray, errors: dict[int, str],
                   means: dict[str, float]) -> "FlowReport":
        """A report over ``rows`` (float64[n, 4], metric columns) with ``errors[k]`` for item k."""
        report = cls([], means)
        report._items, report._ids, report._rows, report._errors = None, ids, rows, errors
        return report

    @property
    def items(self) -> list[FlowItem]:
        if self._items is None:
            columns = self._rows.T.tolist() if len(self._ids) else [[]] * 4
            errors = [None] * len(self._ids)
            for k, error in self._errors.items():
                errors[k] = error
            self._items = list(map(FlowItem, self._ids, *columns, errors))
            self._ids, self._rows, self._errors = [], None, {}
        return self._items

    @items.setter
    def items(self, items: list[FlowItem]) -> None:
        self._items, self._ids, self._rows, self._errors = items, [], None, {}

    @property
    def n(self) -> int:
        return len(self._items) if self._items is not None else len(self._ids)

    def to_dict(self) -> dict[str, Any]:
        if self._items is None:
            errors = self._errors.get
            records = [dict(zip(_ITEM_FIELDS, (i, *row, errors(k)))) for k, (i, row) in
                       enumerate(zip(self._ids, self._rows.tolist()))]
        else:
            records = [{name: getattr(item, name) for name in _ITEM_FIELDS} for item in self._items]
        return {
            "n": self.n,
            "means": dict(self.means),
            "items": records,
            "unmatched_predictions": list(self.unmatched_predictions),
            "missing_predictions": list(self.missing_predictions),
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FlowReport):
            return NotImplemented
        return (self.items, self.means, self.unmatched_predictions, self.missing_predictions) == (
            other.items, other.means, other.unmatched_predictions, other.missing_predictions)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"FlowReport(n={self.n}, means={self.means!r}, "
                f"unmatched_predictions={self.unmatched_predictions!r}, "
                f"missing_predictions={self.missing_predictions!r})")


#: Stands for a reference file's prediction that does not exist.
_MISSING = object()

#: The empty flow, as a document (what a malformed prediction is scored as).
_EMPTY_DOCUMENT = {TRIGGER: None, COMPONENTS: []}


def _parsed_prediction(pred: Any) -> tuple[Any, Optional[str]]:
    """A prediction as a parsed document, or the empty flow and the reason it could not be read."""
    if type(pred) is dict:
        return pred, None
    if pred is _MISSING:
        return _EMPTY_DOCUMENT, "no prediction file"
    if isinstance(pred, (str, bytes)):
        try:
            return parse_flow(pred), None
        except FlowFormatError as exc:
            return _EMPTY_DOCUMENT, str(exc)
    return pred, None


def _score(ids: list[str], preds: list[Any], refs: list[Any], ref_name: Callable[[int], str],
           threads: Optional[int], max_nodes: int, trigger_match: str, missing_prediction: str) -> FlowReport:
    """Score parsed references against raw predictions (``ref_name(k)`` names reference k in
    errors; a missing prediction file scores 0, or as the empty flow when ``missing_prediction`` is
    ``"empty"``). With the Rust backend the compiled fast path decomposes and scores every
    plain-JSON pair; the pairs it flags (unusual or invalid documents) and every pair on the Numba
    backend go through the Python decomposition here."""
    documents, errors, missing = preds, {}, []
    if any(t is not dict for t in set(map(type, preds))):
        documents = list(preds)
        for k, pred in enumerate(preds):
            if type(pred) is not dict:
                if pred is _MISSING:
                    missing.append(k)
                documents[k], error = _parsed_prediction(pred)
                if error is not None:
                    errors[k] = error
    n = len(ids)
    core = _kernels.compiled()
    if n and core is not None:
        rows, status = core.flow_metrics_batch(documents, refs, max_nodes,
                                                         _kernels.resolve_threads(threads),
                                                         trigger_match == "exact")
    else:
        rows, status = np.full((n, 4), math.nan), np.full(n, 3, np.uint8)
    slow = np.flatnonzero(status).tolist()
    if slow:
        ref_flows, pred_flows = [], []
        for k in slow:
            try:
                ref_flows.append(_check_size(_analyse(refs[k]), ref_name(k), max_nodes))
            except FlowFormatError as exc:
                raise FlowFormatError(f"{ref_name(k)} is not a workflow: {exc}") from None
            try:
                pred_flows.append(_check_size(_analyse(documents[k]), f"the prediction of item {ids[k]!r}",
                                              max_nodes))
            except FlowFormatError as exc:
                pred_flows.append(_EMPTY)
                errors[k] = str(exc)
        sims = _flowsims(pred_flows, ref_flows, threads)
        for k, s, p, r in zip(slow, sims.tolist(), pred_flows, ref_flows):
            try:
                tm = _trigger_match(p, r, trigger_match)
            except FlowFormatError as exc:
                raise FlowFormatError(f"item {ids[k]!r}: {exc}") from None
            rows[k] = (s, _treebleu(p, r), tm, _component_match(p, r))
    if missing_prediction == "zero":
        rows[missing] = 0.0
    # fsum is exactly rounded, so the column order of the additions does not matter.
    means = {name: (math.fsum(rows[:, c].tolist()) / n if n else math.nan) for c, name in enumerate(METRIC_NAMES)}
    report = FlowReport._from_rows(ids, rows, errors, means)
    report.missing_predictions = [ids[k] for k in missing]
    return report


def _read_dir(path: Union[str, Path], argument: str) -> dict[str, Path]:
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"{argument} is not a directory: {str(path)!r}")
    files: dict[str, Path] = {}
    for file in sorted(folder.glob("*.json")):
        files[file.stem] = file
    return files


def _reference(key: Any, ref: Any) -> Any:
    """The reference of item ``key`` as a parsed document (JSON text is parsed; ValueError if not JSON)."""
    if isinstance(ref, (str, bytes)):
        try:
            return parse_flow(ref)
        except FlowFormatError as exc:
            raise FlowFormatError(f"reference of item {key!r} is not a workflow: {exc}") from None
    return ref


def evaluate_flows(
    pairs: Union[None, Mapping[str, tuple[Any, Any]], Iterable[tuple[Any, Any]]] = None,
    *,
    pred_dir: Union[None, str, Path] = None,
    ref_dir: Union[None, str, Path] = None,
    threads: Optional[int] = None,
    max_nodes: int = MAX_NODES,
    trigger_match: str = "exact",
    missing_prediction: str = "zero",
) -> FlowReport:
    """Score many workflow pairs: ``pairs`` (a mapping ``id -> (pred, ref)`` or a sequence of
    ``(pred, ref)``, ids ``"0"``, ``"1"``...), or two directories of ``*.json`` files matched by
    filename stem (every reference is an item; predictions without a reference are listed in
    ``unmatched_predictions``).

    A prediction that is not valid JSON or not a workflow is scored as an empty flow, with the reason
    in the item's ``error``. A reference whose prediction file does not exist is listed in
    ``missing_predictions`` and scores 0 on every metric (``missing_prediction="empty"``: as the empty
    flow), with the error ``"no prediction file"``. A reference that is not a workflow is a
    ``ValueError`` naming the item or the file, and so is a flow (either side) of more than
    ``max_nodes`` tree nodes (the size guard). ``trigger_match`` is as in :func:`compute_metrics`.
    """
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 3:
        raise ValueError(f"max_nodes must be an int >= 3 (the empty flow has 3 nodes), got {max_nodes!r}")
    trigger_match = _check_trigger_match(trigger_match)
    if not isinstance(missing_prediction, str) or missing_prediction not in MISSING_PREDICTIONS:
        raise InvalidValueError(f"missing_prediction must be one of {', '.join(map(repr, MISSING_PREDICTIONS))}, "
                                f"got {missing_prediction!r:.60}")
    if (pairs is None) == (pred_dir is None and ref_dir is None):
        raise ValueError("pass either pairs or both pred_dir and ref_dir")
    if pairs is not None:
        if isinstance(pairs, Mapping):
            keys, values = list(pairs.keys()), list(pairs.values())
        else:
            values = list(pairs)
            keys = range(len(values))
        if set(map(type, values)) <= {tuple, list} and set(map(len, values)) <= {2}:
            preds = [pair[0] for pair in values]
            refs = [pair[1] for pair in values]
            if any(issubclass(t, (str, bytes)) for t in set(map(type, refs))):
                refs = [_reference(key, ref) for key, ref in zip(keys, refs)]
        else:  # some entry is not a plain pair: check them in order
            preds, refs = [], []
            for key, pair in zip(keys, values):
                if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                    raise ValueError(f"pair {key!r} must be a (pred, ref) pair")
                preds.append(pair[0])
                refs.append(_reference(key, pair[1]))
        return _score(list(map(str, keys)), preds, refs, lambda k: f"reference of item {keys[k]!r}", threads,
                      max_nodes, trigger_match, missing_prediction)
    if pred_dir is None or ref_dir is None:
        raise ValueError("pass both pred_dir and ref_dir")
    pred_files, ref_files = _read_dir(pred_dir, "pred_dir"), _read_dir(ref_dir, "ref_dir")
    ids, preds, refs, names = [], [], [], []
    for stem, file in ref_files.items():
        try:
            refs.append(parse_flow(file.read_bytes()))
        except FlowFormatError as exc:
            raise FlowFormatError(f"reference file {str(file)!r} is not a workflow: {exc}") from None
        ids.append(stem)
        names.append(f"reference file {str(file)!r}")
        pred_file = pred_files.get(stem)
        preds.append(pred_file.read_bytes() if pred_file is not None else _MISSING)
    report = _score(ids, preds, refs, names.__getitem__, threads, max_nodes, trigger_match, missing_prediction)
    report.unmatched_predictions = sorted(set(pred_files) - set(ref_files))
    return report



def _json_safe(value: Any) -> Any:
    """NaN (an empty corpus's means) becomes null so the output stays valid JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def flows_command(pred_dir: Union[str, Path], ref_dir: Union[str, Path], as_json: bool, *,
                  trigger_match: str = "exact", missing_prediction: str = "zero") -> int:
    """``scorekit flows PRED_DIR REF_DIR [--json] [--trigger-match M] [--missing-prediction M]``: score
    two directories of workflow JSON files (the options as in :func:`evaluate_flows`).

    Prints one line per reference file, the means and the references without a prediction file (or,
    with ``as_json``, the report and the options as JSON) on stdout; returns the exit status: 0 on
    success, 2 when a directory or a reference is unusable (the message goes to stderr).
    """
    try:
        report = evaluate_flows(pred_dir=pred_dir, ref_dir=ref_dir, trigger_match=trigger_match,
                                missing_prediction=missing_prediction)
    except ValueError as exc:
        print(f"scorekit: error: {exc}", file=sys.stderr)
        return 2
    if as_json:
        out = {**report.to_dict(), "trigger_match": trigger_match, "missing_prediction": missing_prediction}
        print(json.dumps(_json_safe(out), indent=2, ensure_ascii=False))
        return 0
    width = max([len("item")] + [len(item.id) for item in report.items])
    header = f"{'item':<{width}}  flowsim  treebleu  trigger  components  error"
    print(header)
    for item in report.items:
        print(f"{item.id:<{width}}  {item.flowsim:7.4f}  {item.treebleu:8.4f}  {item.trigger_match:7.4f}  "
              f"{item.component_match:10.4f}  {item.error or ''}".rstrip())
    means = report.means
    print(f"{'mean':<{width}}  {means['flowsim']:7.4f}  {means['treebleu']:8.4f}  {means['trigger_match']:7.4f}  "
          f"{means['component_match']:10.4f}  (n={report.n})")
    missing = report.missing_predictions
    if missing:
        how = "as the empty flow" if missing_prediction == "empty" else "0 (--missing-prediction empty: as the empty flow)"
        print(f"missing predictions: {len(missing)} of {report.n} references have no prediction file, scored {how}: "
              f"{', '.join(missing)}")
    if report.unmatched_predictions:
        print(f"predictions without a reference: {', '.join(report.unmatched_predictions)}")
    return 0
