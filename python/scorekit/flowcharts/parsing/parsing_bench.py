"""``ParsingBenchmark``: predicted flowcharts (node text, labels, flow, additional texts) against ground truth."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from scorekit.flowcharts.parsing import match_diagrams as _match
from scorekit.flowcharts.parsing._costs import Costs
from scorekit.flowcharts.parsing.check_parsing_bench_data import (
    N_DIAGRAMS_IN_BENCHMARK, check_pred_dirs, check_true_dirs,
)
from scorekit.flowcharts.parsing.parsing_bench_types import (
    Diagram, DiagramMatch, DiagramOptions, FlowScores, Node, NodeMatches, PredDiagramStructure, TextListMatches,
)

from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import levenshtein_with_text_normalisation

__all__ = ["ParsingBenchmark", "ParsingBenchmarkCapabilities"]

_DATA = Path("./experiment_data/parsing/training-smoking-cessation/")


@dataclass(frozen=True)
class ParsingBenchmarkCapabilities:
    """Which benchmark methods the predictions' parts allow."""

    node_matches: bool
    node_matches_with_flow: bool
    node_and_label_matches: bool
    additional_text_matches: bool
    flow_scores: bool
    diagram_matches: bool

    @classmethod
    def from_structure(cls, s: PredDiagramStructure) -> "ParsingBenchmarkCapabilities":
        return cls(node_matches=s.node_text, node_matches_with_flow=s.node_text and s.flow,
                   node_and_label_matches=s.node_text and s.labels,
                   additional_text_matches=s.node_text and s.additional_texts,
                   flow_scores=s.node_text and s.flow,
                   diagram_matches=s.node_text and s.labels and s.flow and s.additional_texts)

    @property
    def available_methods(self) -> tuple[str, ...]:
        groups = (
            (self.node_matches, ("node_matches", "total_node_text_cost")),
            (self.node_matches_with_flow, ("node_matches_with_flow",)),
            (self.node_and_label_matches, ("node_and_label_matches", "total_label_cost")),
            (self.additional_text_matches, ("additional_text_matches", "total_additional_text_cost")),
            (self.flow_scores, ("all_flow_scores", "all_flow_jaccard_scores", "avg_flow_jaccard")),
            (self.diagram_matches, ("diagram_matches",)),
        )
        return tuple(name for enabled, names in groups if enabled for name in names)


_PART_OF = {"text": "node_text", "labels": "labels", "points_to": "flow", "additional_texts": "additional_texts"}


class ParsingBenchmark:
    """Load predictions and ground truth once, check them, and score on request (nothing is cached)."""

    def __init__(self, pred_diagrams_dir: Union[Path, Sequence[Path]], distance_fn: Any = levenshtein_with_text_normalisation,
                 allow_missing_pred_diagrams: bool = False,
                 true_nodes_dir: Path = _DATA / "ground-truth-nodes-texts-numbers-row-major-column/",
                 true_labels_dir: Path = _DATA / "ground-truth-labels-attempt-2/",
                 true_additional_texts_dir: Path = _DATA / "ground-truth-additional-texts/",
                 true_flow_dir: Path = _DATA / "ground-truth-flow/",
                 expected_num_diagrams: int = N_DIAGRAMS_IN_BENCHMARK, time_limit: float = _match.TIME_LIMIT):
        if not callable(distance_fn):
            raise TypeError(f"distance_fn must be callable, got {type(distance_fn).__name__}.")
        if isinstance(pred_diagrams_dir, (str, os.PathLike)):
            pred_dirs = [Path(pred_diagrams_dir)]
        else:
            pred_dirs = [Path(d) for d in pred_diagrams_dir]
        _match.check_time_limit(time_limit)
        self.distance_fn = distance_fn
        #: Seconds the exact stages of one flowchart's matching against one option may take
        #: (``NodeMatches.unproven`` lists what the limit left unproven).
        self.time_limit = time_limit
        self.allow_missing_pred_diagrams = allow_missing_pred_diagrams
        stems, joined, _, parts = check_pred_dirs(pred_dirs)
        true_dirs = {"nodes": Path(true_nodes_dir), "labels": Path(true_labels_dir),
                     "flow": Path(true_flow_dir), "additional_texts": Path(true_additional_texts_dir)}
        kept, paths, true_parsed = check_true_dirs(true_dirs, expected_num_diagrams, stems,
                                                   allow_missing_pred_diagrams)
        self.pred_structure = PredDiagramStructure(**{_PART_OF[p]: p in parts for p in _PART_OF})
        self.capabilities = ParsingBenchmarkCapabilities.from_structure(self.pred_structure)
        try:
            self.pred_diagrams = [_pred_diagram(stem, joined[stem]) for stem in stems]
            self.true_diagrams_options_list = [_true_options(stem, paths[stem], true_parsed[stem]) for stem in kept]
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise ValueError(f"Could not build the diagrams: {exc}") from exc

    # -------------------------------------------------------------------------------- guard
    def _require(self, operation: str, *parts: str) -> None:
        missing = [p for p in parts if p not in self.pred_structure.parts]
        if missing:
            raise ValueError(f"{operation} is unavailable for predicted diagrams containing "
                             f"{self.pred_structure.describe()}. Missing required components: {', '.join(missing)}.")

    def _pairs(self, range_indices: Optional[tuple] = None) -> list[tuple[DiagramOptions, Diagram]]:
        pairs = list(zip(self.true_diagrams_options_list, self.pred_diagrams))
        if range_indices is None:
            return pairs
        if not isinstance(range_indices, tuple) or len(range_indices) != 2:
            raise TypeError(f"range_indices must be None or a (start, stop) tuple, got {range_indices!r}.")
        return pairs[slice(*range_indices)]

    # ------------------------------------------------------------------------------ methods
    def node_matches(self, range_indices: Optional[tuple[Optional[int], Optional[int]]] = None) -> list[NodeMatches]:
        self._require("Node matching", "node_text")
        costs = Costs(self.distance_fn)
        return [_match.match_nodes(o, p, costs, self.time_limit) for o, p in self._pairs(range_indices)]

    def node_matches_with_flow(self) -> list[NodeMatches]:
        self._require("Node matching with flow", "node_text", "flow")
        return self.node_matches()

    def node_and_label_matches(self) -> list[NodeMatches]:
        self._require("Node and label matching", "node_text", "labels")
        costs = Costs(self.distance_fn)
        return [_match.match_node_labels(_match.match_nodes(o, p, costs, self.time_limit), costs)
                for o, p in self._pairs()]

    def additional_text_matches(self) -> list[TextListMatches]:
        self._require("Additional-text matching", "node_text", "additional_texts")
        costs = Costs(self.distance_fn)
        out = []
        for options, pred in self._pairs():
            nm = _match.match_nodes(options, pred, costs, self.time_limit)
            out.append(_match.match_additional_texts(options.options[nm.true_diagram_option_idx], pred, costs))
        return out

    def diagram_matches(self) -> list[DiagramMatch]:
        self._require("Diagram matching", "node_text", "labels", "flow", "additional_texts")
        costs = Costs(self.distance_fn)
        return [_match.match_single_diagram(o, p, costs, self.time_limit) for o, p in self._pairs()]

    def total_node_text_cost(self) -> float:
        self._require("Node text cost", "node_text")
        return float(sum(nm.total_node_text_cost for nm in self.node_matches()))

    def total_label_cost(self) -> float:
        self._require("Label cost", "node_text", "labels")
        return float(sum(nm.total_label_error_cost for nm in self.node_and_label_matches()))

    def total_additional_text_cost(self) -> float:
        self._require("Additional-text cost", "node_text", "additional_texts")
        return float(sum(m.total_cost for m in self.additional_text_matches()))

    def all_flow_scores(self) -> list[FlowScores]:
        self._require("Flow scoring", "node_text", "flow")
        return [nm.flow_score for nm in self.node_matches_with_flow()]

    def all_flow_jaccard_scores(self) -> list[float]:
        self._require("Flow scoring", "node_text", "flow")
        return [fs.jaccard for fs in self.all_flow_scores()]

    def avg_flow_jaccard(self) -> float:
        self._require("Flow scoring", "node_text", "flow")
        scores = self.all_flow_jaccard_scores()
        if not scores:
            raise ValueError("No flowchart was evaluated, so there is no average flow Jaccard.")
        return float(sum(scores) / len(scores))


def _pred_diagram(stem: str, joined: dict) -> Diagram:
    nodes = None
    if joined["nodes"] is not None:
        nodes = [Node(node_number=n, diagram_type="pred", parent_img_code=stem,
                      **{k: (list(v) if isinstance(v, list) else v) for k, v in entry.items()})
                 for n, entry in sorted(joined["nodes"].items())]
    additional = joined["additional_texts"]
    return Diagram(nodes=nodes, additional_texts=None if additional is None else list(additional),
                   parent_img_code=stem, diagram_type="pred")


def _true_options(stem: str, paths: dict[str, Path], parsed: dict[str, list]) -> DiagramOptions:
    options = []
    for i in range(len(parsed["nodes"])):
        nodes = [Node(node_number=n, text=text, labels=list(parsed["labels"][i][n]),
                      points_to=list(parsed["flow"][i][n]), diagram_type="true", true_option_idx=i,
                      parent_img_code=stem)
                 for n, text in parsed["nodes"][i].items()]
        options.append(Diagram(nodes=nodes, additional_texts=list(parsed["additional_texts"][i]),
                               parent_img_code=stem, diagram_type="true", true_option_idx=i))
    return DiagramOptions(options=options, parent_img_code=stem, parent_nodes_path=paths["nodes"],
                          parent_labels_path=paths["labels"], parent_additional_texts_path=paths["additional_texts"],
                          parent_flow_path=paths["flow"])
