"""Flowchart benchmarks: image classification and rotation over saved label files, and the text
distances flowchart texts are compared with (docs/flowcharts.md).

Every public name of the subpackages is importable from here. Each import below is one line, so
that systems adding names (the parsing benchmark) merge without touching the others.
"""

from scorekit.flowcharts.classification.classification_bench_types import SingleClassificationResult
from scorekit.flowcharts.classification.classification_benchmark import BinaryClassificationBenchmark
from scorekit.flowcharts.classification.classification_benchmark import ClassificationBenchmark
from scorekit.flowcharts.classification.classification_benchmark import MulticlassClassificationBenchmark
from scorekit.flowcharts.classification.classification_benchmark import check_generic_classification_benchmark_data
from scorekit.flowcharts.classification.classification_benchmark import load_classification_benchmark_results
from scorekit.flowcharts.rotation.rotation_benchmark import RotationBenchmark
from scorekit.flowcharts.rotation.rotation_benchmark import RotationLabel
from scorekit.flowcharts.parsing.text_distance_fns.distance_fn_protocol import DistanceFnProtocol
from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import levenshtein_fn
from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import levenshtein_with_text_normalisation
from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import number_only_levenshtein
from scorekit.flowcharts.parsing.text_distance_fns.normalise_text import nfc_and_space_normalise
from scorekit.flowcharts.parsing.text_distance_fns.normalise_text import numbers_only_normalise

__all__ = [
    "SingleClassificationResult",
    "BinaryClassificationBenchmark",
    "ClassificationBenchmark",
    "MulticlassClassificationBenchmark",
    "check_generic_classification_benchmark_data",
    "load_classification_benchmark_results",
    "RotationBenchmark",
    "RotationLabel",
    "DistanceFnProtocol",
    "levenshtein_fn",
    "levenshtein_with_text_normalisation",
    "number_only_levenshtein",
    "nfc_and_space_normalise",
    "numbers_only_normalise",
]
