"""Workflow-tree metrics (seed 004, StarFlow): FlowSim, TreeBLEU, Trigger Match and Component Match.

This module owns the workflow JSON format (documented with examples in ``docs/flows.md``), its
decomposition into an ordered tree, the four metrics, and their evaluation over pairs or over two
directories of JSON files (plus the ``scorekit flows`` command's logic, :func:`flows_command`).
Tree edit distances run on the compiled Zhang–Shasha kernel through ``scorekit._kernels.tree``,
all pairs of an evaluation in one parallel batch.

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
* Trigger Match = 1 if the trigger types are equal (two null triggers match), else 0.
* Component Match = |C ∩ Cr| / |C ∪ Cr| over the sets of component labels at every depth (order and
  repetition ignored); 0 when both sets are empty, as in the seed's recipe.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

import numpy as np

from scorekit._kernels import tree as _tree_kernels
from scorekit.trees import Tree

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
    "one_height_subtrees",
    "parse_flow",
    "treebleu",
    "trigger_match",
]

FLOW, TRIGGER, COMPONENTS = "flow", "trigger", "components"
METRIC_NAMES = ("flowsim", "treebleu", "trigger_match", "component_match")

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)

# A node of a decomposed flow: (label, children).
_Node = tuple[str, list]


class FlowFormatError(ValueError):
    """A document is not valid JSON or not a workflow in the documented format."""


# -- parsing and decomposition ----------------------------------------------------------------------


def parse_flow(text: Union[str, bytes]) -> Any:
    """Parse a workflow from JSON text. A Markdown code fence (```` ```json ... ``` ````) around the
    document, as language models often emit, is removed first. Raises :class:`FlowFormatError`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise TypeError(f"parse_flow needs str or bytes, got {type(text).__name__}")
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise FlowFormatError(f"not valid JSON: {exc}") from None


def _trigger_type(trigger: Any) -> Optional[str]:
    if trigger is None or isinstance(trigger, str):
        return trigger
    if isinstance(trigger, Mapping):
        kind = trigger.get("type")
        if isinstance(kind, str):
            return kind
        raise FlowFormatError(f"the trigger object needs a string 'type', got {kind!r:.60}")
    raise FlowFormatError(f"trigger must be null, a string or an object with 'type', got {type(trigger).__name__}")


def _component_label(component: Any, where: str) -> str:
    if isinstance(component, str):
        return "action:" + component
    if not (isinstance(component, dict) or isinstance(component, Mapping)):
        raise FlowFormatError(f"{where} must be a string or an object, got {type(component).__name__}")
    definition = component.get("definition", component.get("type"))
    if not isinstance(definition, str):
        raise FlowFormatError(f"{where} needs a string 'definition' (or 'type'), got {definition!r:.60}")
    category = component.get("category", "action")
    if not isinstance(category, str):
        raise FlowFormatError(f"{where}: 'category' must be a string, got {category!r:.60}")
    return f"{category}:{definition}"


def _component_forest(components: Any, where: str, depth: int = 0) -> list[_Node]:
    """The ordered forest of one component list: ``block`` references resolved inside the list,
    inline ``children`` lists decomposed as their own scope."""
    if not isinstance(components, list):
        raise FlowFormatError(f"{where} must be a list, got {type(components).__name__}")
    if depth > 200:
        raise FlowFormatError(f"{where}: components nested more than 200 levels deep")
    nodes: list[_Node] = []
    by_order: dict[Any, int] = {}
    blocks: list[Any] = []
    for k, component in enumerate(components):
        here = f"{where}[{k}]"
        children: list[_Node] = []
        block = None
        if isinstance(component, dict) or isinstance(component, Mapping):
            order, block = component.get("order"), component.get("block")
            if order is not None:
                if isinstance(order, bool) or not isinstance(order, (int, float, str)):
                    raise FlowFormatError(f"{here}: 'order' must be a number or a string, got {order!r:.60}")
                if order in by_order:
                    raise FlowFormatError(f"{here}: order {order!r} is used twice")
                by_order[order] = k
            if "children" in component and component["children"] is not None:
                children = _component_forest(component["children"], f"{here}.children", depth + 1)
        nodes.append((_component_label(component, here), children))
        blocks.append(block)
    roots: list[_Node] = []
    parent_of: list[Optional[int]] = [None] * len(nodes)
    for k, block in enumerate(blocks):
        if block is None:
            roots.append(nodes[k])
            continue
        parent = by_order.get(block) if not isinstance(block, (list, dict, bool)) else None
        if parent is None:
            raise FlowFormatError(f"{where}[{k}]: 'block' {block!r:.60} names no component's 'order'")
        parent_of[k] = parent
        nodes[parent][1].append(nodes[k])
    for k in range(len(nodes) if len(roots) < len(nodes) else 0):  # block chains must reach the top level
        seen, at = set(), k
        while parent_of[at] is not None:
            if at in seen:
                raise FlowFormatError(f"{where}[{k}]: 'block' references form a cycle")
            seen.add(at)
            at = parent_of[at]  # type: ignore[assignment]
    return roots


def _flow_root(flow: Any) -> tuple[Optional[str], _Node]:
    """The trigger type and the decomposed tree of a parsed flow (raises :class:`FlowFormatError`)."""
    if isinstance(flow, (str, bytes)):
        flow = parse_flow(flow)
    if not isinstance(flow, Mapping):
        raise FlowFormatError(f"a workflow must be a JSON object, got {type(flow).__name__}")
    if TRIGGER not in flow and COMPONENTS not in flow:
        raise FlowFormatError("a workflow needs a 'trigger' or a 'components' key")
    trigger = _trigger_type(flow.get(TRIGGER))
    components = flow.get(COMPONENTS)
    forest = _component_forest([] if components is None else components, COMPONENTS)
    trigger_node: _Node = (TRIGGER, [] if trigger is None else [(trigger, [])])
    return trigger, (FLOW, [trigger_node, (COMPONENTS, forest)])


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
    return _to_tree(_flow_root(flow)[1])


class _Analysed(NamedTuple):
    """Everything the four metrics need from one flow."""

    trigger: Optional[str]
    root: _Node
    size: int
    subtrees: frozenset
    components: frozenset


def _analyse_root(trigger: Optional[str], root: _Node) -> _Analysed:
    size = 0
    subtrees = set()
    stack: list[tuple[_Node, bool]] = [(root, True)]
    while stack:
        (label, children), is_root = stack.pop()
        size += 1
        if children:
            if not is_root:
                subtrees.add((label, tuple(c[0] for c in children)))
            stack.extend((c, False) for c in children)
    components = set()
    pending = list(root[1][1][1])  # below the "components" node
    while pending:
        label, children = pending.pop()
        components.add(label)
        pending.extend(children)
    return _Analysed(trigger, root, size, frozenset(subtrees), frozenset(components))


def _analyse(flow: Any) -> _Analysed:
    if isinstance(flow, _Analysed):
        return flow
    return _analyse_root(*_flow_root(flow))


_EMPTY = _analyse_root(None, _empty_root())


def one_height_subtrees(flow: Any) -> frozenset:
    """S(F): the ``(label, (child labels...))`` of every node with children, except the root flow
    node, so the flow→trigger and flow→components edges never count."""
    return _analyse(flow).subtrees


def _treebleu(p: _Analysed, r: _Analysed) -> float:
    return len(p.subtrees & r.subtrees) / len(p.subtrees) if p.subtrees else 0.0


def _trigger_match(p: _Analysed, r: _Analysed) -> float:
    return 1.0 if p.trigger == r.trigger else 0.0


def _component_match(p: _Analysed, r: _Analysed) -> float:
    union = p.components | r.components
    return len(p.components & r.components) / len(union) if union else 0.0


def treebleu(pred: Any, ref: Any) -> float:
    """|S(pred) ∩ S(ref)| / |S(pred)|, and 0 when the prediction has no 1-height subtree."""
    return _treebleu(_analyse(pred), _analyse(ref))


def trigger_match(pred: Any, ref: Any) -> float:
    """1.0 when the trigger types are equal (two null triggers match), else 0.0."""
    return _trigger_match(_analyse(pred), _analyse(ref))


def component_match(pred: Any, ref: Any) -> float:
    """Intersection over union of the component label sets (every depth; order ignored)."""
    return _component_match(_analyse(pred), _analyse(ref))


def _pack(flows: Sequence[_Analysed], intern: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Post-order label ids, leftmost-leaf indices and node offsets of many decomposed flows."""
    labels: list[int] = []
    lld: list[int] = []
    offsets = [0]
    for flow in flows:
        base = len(labels)
        # Frames: [node, next child, leftmost leaf of the first child or -1]
        stack: list[list[Any]] = [[flow.root, 0, -1]]
        while stack:
            frame = stack[-1]
            children = frame[0][1]
            if frame[1] < len(children):
                frame[1] += 1
                stack.append([children[frame[1] - 1], 0, -1])
                continue
            stack.pop()
            k = len(labels) - base
            left = frame[2] if frame[2] >= 0 else k
            label = frame[0][0]
            label_id = intern.get(label)
            if label_id is None:
                label_id = intern[label] = len(intern)
            labels.append(label_id)
            lld.append(left)
            if stack and stack[-1][2] < 0:
                stack[-1][2] = left
        offsets.append(len(labels))
    return np.asarray(labels, np.uint32), np.asarray(lld, np.uint32), np.asarray(offsets, np.int64)


def _flowsims(preds: Sequence[_Analysed], refs: Sequence[_Analysed], threads: Optional[int]) -> np.ndarray:
    intern: dict[str, int] = {}
    l1, d1, o1 = _pack(preds, intern)
    l2, d2, o2 = _pack(refs, intern)
    ted = _tree_kernels.distance_batch(l1, d1, o1, l2, d2, o2, threads=threads or 0)
    sizes = np.diff(o1) + np.diff(o2)
    return 1.0 - ted / sizes


def flowsim(pred: Any, ref: Any) -> float:
    """1 − TED(F, Fr) / (|F| + |Fr|) with unit costs (Zhang–Shasha), in [0, 1]."""
    return float(_flowsims([_analyse(pred)], [_analyse(ref)], 1)[0])


class FlowMetrics(NamedTuple):
    """The four metrics of one (prediction, reference) pair; unpacks like the seed's 4-tuple."""

    flowsim: float
    treebleu: float
    trigger_match: float
    component_match: float


def compute_metrics(pred: Any, ref: Any) -> FlowMetrics:
    """FlowSim, TreeBLEU, Trigger Match and Component Match of one pair (parsed JSON or JSON text).

    Both sides must be workflows (else :class:`FlowFormatError`); :func:`evaluate_flows` is the lenient
    entry point that scores a malformed prediction as an empty flow.
    """
    p, r = _analyse(pred), _analyse(ref)
    return FlowMetrics(float(_flowsims([p], [r], 1)[0]), _treebleu(p, r), _trigger_match(p, r), _component_match(p, r))


# -- evaluation over many pairs ---------------------------------------------------------------------


@dataclass
class FlowItem:
    """One scored pair; ``error`` records why the prediction was scored as an empty flow."""

    id: str
    flowsim: float
    treebleu: float
    trigger_match: float
    component_match: float
    error: Optional[str] = None


@dataclass
class FlowReport:
    """Per-item records and the mean of each metric over the items (NaN for an empty corpus)."""

    items: list[FlowItem]
    means: dict[str, float]
    unmatched_predictions: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.items)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "means": dict(self.means),
            "items": [vars(item).copy() for item in self.items],
            "unmatched_predictions": list(self.unmatched_predictions),
        }


#: Stands for a reference file's prediction that does not exist.
_MISSING = object()


def _lenient(pred: Any) -> tuple[_Analysed, Optional[str]]:
    if pred is _MISSING:
        return _EMPTY, "no prediction file"
    try:
        return _analyse(pred), None
    except FlowFormatError as exc:
        return _EMPTY, str(exc)


def _score(ids: list[str], preds: list[Any], refs: list[_Analysed], threads: Optional[int]) -> FlowReport:
    analysed = [_lenient(p) for p in preds]
    flows = [a for a, _ in analysed]
    sims = _flowsims(flows, refs, threads).tolist() if flows else []
    items = [
        FlowItem(i, s, _treebleu(p, r), _trigger_match(p, r), _component_match(p, r), error)
        for i, s, (p, error), r in zip(ids, sims, analysed, refs)
    ]
    means = {
        name: (math.fsum(getattr(item, name) for item in items) / len(items) if items else math.nan)
        for name in METRIC_NAMES
    }
    return FlowReport(items, means)


def _read_dir(path: Union[str, Path], argument: str) -> dict[str, Path]:
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"{argument} is not a directory: {str(path)!r}")
    files: dict[str, Path] = {}
    for file in sorted(folder.glob("*.json")):
        files[file.stem] = file
    return files


def evaluate_flows(
    pairs: Union[None, Mapping[str, tuple[Any, Any]], Iterable[tuple[Any, Any]]] = None,
    *,
    pred_dir: Union[None, str, Path] = None,
    ref_dir: Union[None, str, Path] = None,
    threads: Optional[int] = None,
) -> FlowReport:
    """Score many workflow pairs: ``pairs`` (a mapping ``id -> (pred, ref)`` or a sequence of
    ``(pred, ref)``, ids ``"0"``, ``"1"``...), or two directories of ``*.json`` files matched by
    filename stem (every reference is an item; predictions without a reference are listed in
    ``unmatched_predictions``).

    A prediction that is not valid JSON or not a workflow (or a missing prediction file) is scored as
    an empty flow, with the reason in the item's ``error``. A reference that is not a workflow is a
    ``ValueError`` naming the item or the file.
    """
    if (pairs is None) == (pred_dir is None and ref_dir is None):
        raise ValueError("pass either pairs or both pred_dir and ref_dir")
    if pairs is not None:
        entries = list(pairs.items()) if isinstance(pairs, Mapping) else list(enumerate(pairs))
        ids, preds, refs = [], [], []
        for key, pair in entries:
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise ValueError(f"pair {key!r} must be a (pred, ref) pair")
            try:
                refs.append(_analyse(pair[1]))
            except FlowFormatError as exc:
                raise ValueError(f"reference of item {key!r} is not a workflow: {exc}") from None
            ids.append(str(key))
            preds.append(pair[0])
        return _score(ids, preds, refs, threads)
    if pred_dir is None or ref_dir is None:
        raise ValueError("pass both pred_dir and ref_dir")
    pred_files, ref_files = _read_dir(pred_dir, "pred_dir"), _read_dir(ref_dir, "ref_dir")
    ids, preds, refs = [], [], []
    for stem, file in ref_files.items():
        try:
            refs.append(_analyse(parse_flow(file.read_bytes())))
        except FlowFormatError as exc:
            raise ValueError(f"reference file {str(file)!r} is not a workflow: {exc}") from None
        ids.append(stem)
        pred_file = pred_files.get(stem)
        preds.append(pred_file.read_bytes() if pred_file is not None else _MISSING)
    report = _score(ids, preds, refs, threads)
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


def flows_command(pred_dir: Union[str, Path], ref_dir: Union[str, Path], as_json: bool) -> int:
    """``scorekit flows PRED_DIR REF_DIR [--json]``: score two directories of workflow JSON files.

    Prints one line per reference file and the means (or, with ``as_json``, the report as JSON) on
    stdout; returns the exit status: 0 on success, 2 when a directory or a reference is unusable
    (the message goes to stderr).
    """
    try:
        report = evaluate_flows(pred_dir=pred_dir, ref_dir=ref_dir)
    except ValueError as exc:
        print(f"scorekit flows: {exc}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(_json_safe(report.to_dict()), indent=2, ensure_ascii=False))
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
    if report.unmatched_predictions:
        print(f"predictions without a reference: {', '.join(report.unmatched_predictions)}")
    return 0
