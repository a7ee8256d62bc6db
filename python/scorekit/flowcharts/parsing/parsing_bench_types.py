"""The parsing benchmark's data model: nodes, diagrams, ground-truth options and match records.

Every model is a strict pydantic v2 model (no coercion, unknown fields refused, assignments
validated); computed values are plain properties, so they stay out of ``model_dump()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, Optional, Union

from scorekit.flowcharts.parsing._deps import require

require("pydantic")

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator  # noqa: E402

__all__ = [
    "Node", "Diagram", "DiagramOptions", "TextListMatch", "TextListMatches", "NodeMatch", "NodeMatches",
    "FlowScores", "DiagramMatch", "PredDiagramStructure", "Unproven", "FIRST_GENERATED_NODE_ID", "MAX_NODE_NUMBER",
]

#: Node numbers must stay below this; ids drawn for unmatched flow endpoints start at 10000.
MAX_NODE_NUMBER = 1000
FIRST_GENERATED_NODE_ID = 10000

NonEmptyStr = Annotated[str, Field(min_length=1)]
DiagramType = Literal["pred", "true"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True)


def _check_option_idx(diagram_type: str, true_option_idx: Optional[int], what: str) -> None:
    if diagram_type == "true" and true_option_idx is None:
        raise ValueError(f"A true {what} needs a true_option_idx.")
    if diagram_type == "pred" and true_option_idx is not None:
        raise ValueError(f"A pred {what} cannot have a true_option_idx.")


class Node(_Model):
    """One predicted or ground-truth node."""

    node_number: int
    text: NonEmptyStr
    labels: Optional[list[NonEmptyStr]] = None
    points_to: Optional[list[int]] = None
    diagram_type: DiagramType
    true_option_idx: Optional[int] = None
    parent_img_code: str

    @field_validator("node_number")
    @classmethod
    def _below_generated_ids(cls, value: int) -> int:
        if value >= MAX_NODE_NUMBER:
            raise ValueError(f"node_number must be below {MAX_NODE_NUMBER}, found {value}.")
        return value

    @model_validator(mode="after")
    def _option_idx(self) -> "Node":
        _check_option_idx(self.diagram_type, self.true_option_idx, "node")
        return self

    @property
    def text_done(self) -> bool:
        return True

    @property
    def labels_done(self) -> bool:
        return self.labels is not None

    @property
    def flow_done(self) -> bool:
        return self.points_to is not None

    @property
    def is_complete(self) -> bool:
        return self.labels_done and self.flow_done


class Diagram(_Model):
    """One predicted diagram or one ground-truth option of a flowchart."""

    nodes: Optional[Annotated[list[Node], Field(min_length=1)]] = None
    additional_texts: Optional[list[NonEmptyStr]] = None
    parent_img_code: str
    diagram_type: DiagramType
    true_option_idx: Optional[int] = None

    @property
    def text_done(self) -> bool:
        return self.nodes is not None

    @property
    def labels_done(self) -> bool:
        return self.nodes is not None and all(n.labels_done for n in self.nodes)

    @property
    def flow_done(self) -> bool:
        return self.nodes is not None and all(n.flow_done for n in self.nodes)

    @property
    def additional_texts_done(self) -> bool:
        return self.additional_texts is not None

    @property
    def is_complete(self) -> bool:
        return self.nodes is not None and all(n.is_complete for n in self.nodes) and self.additional_texts_done

    @model_validator(mode="after")
    def _consistent(self) -> "Diagram":
        if not (self.text_done or self.additional_texts_done):
            raise ValueError("A diagram needs nodes or additional texts.")
        _check_option_idx(self.diagram_type, self.true_option_idx, "diagram")
        nodes = self.nodes or []
        numbers = [n.node_number for n in nodes]
        if len(set(numbers)) != len(numbers):
            raise ValueError(f"Node numbers must be unique in diagram {self.parent_img_code!r}.")
        for n in nodes:
            if (n.diagram_type, n.parent_img_code, n.true_option_idx) != (
                    self.diagram_type, self.parent_img_code, self.true_option_idx):
                raise ValueError(f"Node {n.node_number} does not belong to diagram {self.parent_img_code!r} "
                                 "(diagram_type, parent_img_code and true_option_idx must match).")
        if nodes:
            if len({n.labels_done for n in nodes}) > 1:
                raise ValueError(f"Either every node or no node has labels in {self.parent_img_code!r}.")
            if len({n.flow_done for n in nodes}) > 1:
                raise ValueError(f"Either every node or no node has points_to in {self.parent_img_code!r}.")
        if self.flow_done:
            known = set(numbers)
            for n in nodes:
                for k in n.points_to or ():
                    if k not in known:
                        raise ValueError(f"Node {n.node_number} points to missing node {k} "
                                         f"in {self.parent_img_code!r}.")
        if self.diagram_type == "true":
            if not self.is_complete:
                raise ValueError(f"A true diagram must be complete ({self.parent_img_code!r}).")
            if numbers != list(range(1, len(numbers) + 1)):
                raise ValueError(f"True node numbers must be 1..n in order in {self.parent_img_code!r}.")
            targets = {k for n in nodes for k in n.points_to or ()}
            for n in nodes:
                if not n.points_to and n.node_number not in targets:
                    raise ValueError(f"True node {n.node_number} of {self.parent_img_code!r} is in no edge.")
        return self


class DiagramOptions(_Model):
    """Every accepted ground-truth interpretation (option) of one flowchart."""

    options: Annotated[list[Diagram], Field(min_length=1)]
    parent_img_code: str
    parent_nodes_path: Path
    parent_labels_path: Path
    parent_additional_texts_path: Path
    parent_flow_path: Path

    @model_validator(mode="after")
    def _consistent(self) -> "DiagramOptions":
        paths = (self.parent_nodes_path, self.parent_labels_path, self.parent_additional_texts_path,
                 self.parent_flow_path)
        if {p.stem for p in paths} != {self.parent_img_code}:
            raise ValueError(f"The four ground-truth paths must share the stem {self.parent_img_code!r}.")
        for i, option in enumerate(self.options):
            if option.true_option_idx != i:
                raise ValueError(f"Option {i} of {self.parent_img_code!r} has true_option_idx "
                                 f"{option.true_option_idx}.")
        return self


class TextListMatch(_Model):
    """One paired or unmatched string of a text-list matching."""

    true_index: Optional[int] = None
    pred_index: Optional[int] = None
    true_text: Optional[NonEmptyStr] = None
    pred_text: Optional[NonEmptyStr] = None
    parent_img_code: Optional[str] = None
    true_option_idx: Optional[int] = None
    cost: float

    @field_validator("cost")
    @classmethod
    def _as_float(cls, value: float) -> float:
        return float(value)

    @model_validator(mode="after")
    def _sides(self) -> "TextListMatch":
        if (self.true_index is None) != (self.true_text is None):
            raise ValueError("true_index and true_text must be given together.")
        if (self.pred_index is None) != (self.pred_text is None):
            raise ValueError("pred_index and pred_text must be given together.")
        if self.true_index is None and self.pred_index is None:
            raise ValueError("A text match needs a true or a pred side.")
        return self

    @property
    def match_type(self) -> str:
        if self.true_index is not None and self.pred_index is not None:
            return "match"
        return "unmatched_true" if self.true_index is not None else "unmatched_pred"


class TextListMatches(_Model):
    matches: list[TextListMatch]

    @property
    def total_cost(self) -> float:
        return float(sum(m.cost for m in self.matches))


def _number_only_distance(true_text: Optional[str], pred_text: Optional[str]) -> float:
    from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import number_only_levenshtein

    return float(number_only_levenshtein(true_text=true_text, pred_text=pred_text))


class NodeMatch(_Model):
    """One paired or unmatched node with its text cost (and, once matched, its labels)."""

    true_node: Optional[Node]
    pred_node: Optional[Node]
    node_text_cost: Union[int, float]
    label_matches: Optional[TextListMatches] = None

    @model_validator(mode="after")
    def _sides(self) -> "NodeMatch":
        if self.true_node is None and self.pred_node is None:
            raise ValueError("A node match needs a true or a pred node.")
        if (self.true_node is not None and self.pred_node is not None
                and self.true_node.parent_img_code != self.pred_node.parent_img_code):
            raise ValueError("Matched nodes must come from the same flowchart.")
        return self

    @property
    def match_type(self) -> str:
        if self.true_node is not None and self.pred_node is not None:
            return "match"
        return "unmatched_true" if self.true_node is not None else "unmatched_pred"

    @property
    def parent_img_code(self) -> str:
        node = self.true_node if self.true_node is not None else self.pred_node
        return node.parent_img_code  # type: ignore[union-attr]

    @property
    def numbers_only_node_text_cost(self) -> float:
        return _number_only_distance(self.true_node.text if self.true_node is not None else None,
                                     self.pred_node.text if self.pred_node is not None else None)


class FlowScores(_Model):
    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float
    jaccard: float
    missing_edges: set[tuple[int, int]]
    extra_edges: set[tuple[int, int]]


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


class Unproven(_Model):
    """A stage of a node matching not proven optimal within the time limit: the best value found and
    the solver's bound on the optimum (flow: at most ``bound`` preserved edges; labels: a label cost
    of at least ``bound``)."""

    option_idx: int
    stage: Literal["flow", "labels"]
    found: float
    bound: float

    def describe(self) -> str:
        if self.stage == "flow":
            return (f"option {self.option_idx}: {self.found:g} preserved edges found, "
                    f"at most {self.bound:g} possible")
        return f"option {self.option_idx}: label cost {self.found:g} found, at least {self.bound:g} possible"


class NodeMatches(_Model):
    """The node matching of one flowchart against its selected ground-truth option.

    ``unproven`` is empty when the matching is proven lexicographically optimal; otherwise it lists
    each stage (of any option compared) that the time limit left unproven, with its bound."""

    matches: list[NodeMatch]
    true_diagram_option_idx: int
    unproven: list[Unproven] = []

    @model_validator(mode="after")
    def _unique(self) -> "NodeMatches":
        for side in ("true_node", "pred_node"):
            numbers = [getattr(m, side).node_number for m in self.matches if getattr(m, side) is not None]
            if len(set(numbers)) != len(numbers):
                raise ValueError(f"A {side.split('_')[0]} node appears in more than one node match.")
        return self

    def add(self, true_node: Optional[Node], pred_node: Optional[Node], node_text_cost: Union[int, float],
            label_matches: Optional[TextListMatches] = None) -> None:
        record = NodeMatch(true_node=true_node, pred_node=pred_node, node_text_cost=node_text_cost,
                           label_matches=label_matches)
        self.matches = [*self.matches, record]

    @property
    def parent_img_code(self) -> str:
        if not self.matches:
            raise ValueError("An empty NodeMatches has no parent_img_code.")
        return self.matches[0].parent_img_code

    @property
    def true_nodes(self) -> list[Node]:
        return [m.true_node for m in self.matches if m.true_node is not None]

    @property
    def pred_nodes(self) -> list[Node]:
        return [m.pred_node for m in self.matches if m.pred_node is not None]

    @property
    def total_node_text_cost(self) -> float:
        return float(sum(m.node_text_cost for m in self.matches))

    @property
    def total_numbers_only_node_text_cost(self) -> float:
        return float(sum(m.numbers_only_node_text_cost for m in self.matches))

    @property
    def total_label_error_cost(self) -> float:
        total = 0.0
        for m in self.matches:
            if m.label_matches is None:
                raise ValueError("Labels have not been matched for every node match.")
            total += m.label_matches.total_cost
        return float(total)

    def get_matched_true_node(self, pred_node_number: int, allow_fake_pred_node: bool = False) -> Optional[Node]:
        for m in self.matches:
            if m.pred_node is not None and m.pred_node.node_number == pred_node_number:
                return m.true_node
        if allow_fake_pred_node:
            return None
        raise ValueError(f"No pred node numbered {pred_node_number} in these node matches.")

    def get_matched_pred_node(self, true_node_number: int) -> Optional[Node]:
        for m in self.matches:
            if m.true_node is not None and m.true_node.node_number == true_node_number:
                return m.pred_node
        raise ValueError(f"No true node numbered {true_node_number} in these node matches.")

    @property
    def flow_score(self) -> FlowScores:
        for node in (*self.true_nodes, *self.pred_nodes):
            if node.points_to is None:
                raise ValueError("Flow scores need points_to on every node.")
        true_edges = {(t.node_number, k) for t in self.true_nodes for k in t.points_to}  # type: ignore[union-attr]
        paired = {m.pred_node.node_number: (m.true_node.node_number if m.true_node is not None else None)
                  for m in self.matches if m.pred_node is not None}
        counter = FIRST_GENERATED_NODE_ID
        pred_edges: set[tuple[int, int]] = set()
        for m in self.matches:
            p = m.pred_node
            if p is None:
                continue
            for k in dict.fromkeys(p.points_to):  # type: ignore[arg-type]
                source = m.true_node.node_number if m.true_node is not None else None
                if source is None:
                    source, counter = counter, counter + 1
                target = paired.get(k)
                if target is None:
                    target, counter = counter, counter + 1
                pred_edges.add((source, target))
        tp = len(pred_edges & true_edges)
        precision = _ratio(tp, len(pred_edges))
        recall = _ratio(tp, len(true_edges))
        union = len(pred_edges | true_edges)
        return FlowScores(
            tp=tp, fp=len(pred_edges - true_edges), fn=len(true_edges - pred_edges),
            precision=precision, recall=recall,
            f1=2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            jaccard=tp / union if union else 1.0,
            missing_edges=true_edges - pred_edges, extra_edges=pred_edges - true_edges)


class DiagramMatch(_Model):
    """The full matching of one flowchart: nodes (with labels and flow) and additional texts."""

    node_matches: NodeMatches
    additional_text_matches: TextListMatches
    pred_diagram: Diagram
    true_diagram: Diagram

    @model_validator(mode="after")
    def _consistent(self) -> "DiagramMatch":
        if not (self.pred_diagram.is_complete and self.true_diagram.is_complete):
            raise ValueError("DiagramMatch needs complete pred and true diagrams.")
        if self.pred_diagram.diagram_type != "pred" or self.true_diagram.diagram_type != "true":
            raise ValueError("DiagramMatch needs a pred diagram and a true diagram.")
        if self.pred_diagram.parent_img_code != self.true_diagram.parent_img_code:
            raise ValueError("The pred and true diagrams come from different flowcharts.")
        key = lambda n: n.node_number  # noqa: E731
        if sorted(self.node_matches.true_nodes, key=key) != self.true_diagram.nodes:
            raise ValueError("The node matches do not cover exactly the true diagram's nodes.")
        if sorted(self.node_matches.pred_nodes, key=key) != sorted(self.pred_diagram.nodes or [], key=key):
            raise ValueError("The node matches do not cover exactly the pred diagram's nodes.")
        records = self.additional_text_matches.matches
        if sorted(m.pred_text for m in records if m.pred_text is not None) != sorted(
                self.pred_diagram.additional_texts or []):
            raise ValueError("The additional-text matches do not cover the pred diagram's additional texts.")
        if sorted(m.true_text for m in records if m.true_text is not None) != sorted(
                self.true_diagram.additional_texts or []):
            raise ValueError("The additional-text matches do not cover the true diagram's additional texts.")
        return self

    @property
    def total_node_text_cost(self) -> float:
        return self.node_matches.total_node_text_cost

    @property
    def total_label_error_cost(self) -> float:
        return self.node_matches.total_label_error_cost

    @property
    def total_additional_text_cost(self) -> float:
        return self.additional_text_matches.total_cost

    @property
    def total_text_cost(self) -> float:
        return float(self.total_node_text_cost + self.total_label_error_cost + self.total_additional_text_cost)

    @property
    def flow_score(self) -> FlowScores:
        return self.node_matches.flow_score


@dataclass(frozen=True)
class PredDiagramStructure:
    """Which parts the predictions carry."""

    node_text: bool
    labels: bool
    flow: bool
    additional_texts: bool

    @property
    def parts(self) -> frozenset:
        return frozenset(name for name in ("node_text", "labels", "flow", "additional_texts") if getattr(self, name))

    @property
    def has_nodes(self) -> bool:
        return self.node_text or self.labels or self.flow

    def describe(self) -> str:
        return ", ".join(sorted(self.parts)) if self.parts else "no parsing components"
