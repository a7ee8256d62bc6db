"""Flowchart benchmarks: classification, rotation and parsing (docs/flowcharts-parsing.md)."""

from scorekit.flowcharts.benchmarks.parsing.check_parsing_bench_data import N_DIAGRAMS_IN_BENCHMARK
from scorekit.flowcharts.benchmarks.parsing.match_diagrams import (
    match_additional_texts, match_diagrams, match_node_labels, match_nodes, match_nodes_single_option,
    match_single_diagram, match_texts_lists,
)
from scorekit.flowcharts.benchmarks.parsing.parsing_bench import ParsingBenchmark, ParsingBenchmarkCapabilities
from scorekit.flowcharts.benchmarks.parsing.parsing_bench_types import (
    Diagram, DiagramMatch, DiagramOptions, FlowScores, Node, NodeMatch, NodeMatches, PredDiagramStructure,
    TextListMatch, TextListMatches,
)
