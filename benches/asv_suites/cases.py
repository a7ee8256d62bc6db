"""asv suite: case benchmark scoring (``scorekit.cases``): invoice-like documents with lists of
records (the documents of ``benches/bench_cases.py``), greedy and optimal matching, the record
kernels alone; the small end (single steps of ordinary extraction documents, issue #33) beside
pyconveyor 1.10's scorer when it is installed; ``track_*`` pins the mean case score of a fixed
sample."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_cases import SMALL_KINDS, build, small_documents  # noqa: E402
from scorekit._kernels import cases as kernels  # noqa: E402
from scorekit.cases import score_case, score_step  # noqa: E402


class ScoreCases:
    params = [(5, 15), (36, 50), (500, 500)]
    param_names = ["records"]

    def setup(self, records):
        self.cases = build(200 if records[1] <= 50 else 5, 0, records)
        score_case(*self.cases[0])

    def time_greedy(self, records):
        for expected, actual in self.cases:
            score_case(expected, actual)

    def time_optimal(self, records):
        for expected, actual in self.cases:
            score_case(expected, actual, matching="optimal")


class _SmallDocuments:
    """200 single steps of each small kind."""

    params = [list(SMALL_KINDS)]
    param_names = ["document"]

    def setup(self, document):
        self.docs = small_documents(document, 200, 0)


class ScoreSmallDocuments(_SmallDocuments):
    def time_scorekit(self, document):
        for expected, actual in self.docs:
            score_step(actual, expected)


class PyconveyorSmallDocuments(_SmallDocuments):
    """The same steps scored by pyconveyor 1.10 (skipped where it is not installed)."""

    def setup(self, document):
        try:
            from pyconveyor import BenchmarkRunner
        except ImportError:
            raise NotImplementedError("pyconveyor is not installed") from None
        import tempfile

        super().setup(document)
        self.reference = BenchmarkRunner(tempfile.mkdtemp(), pipelines=[])

    def time_pyconveyor(self, document):
        for expected, actual in self.docs:
            self.reference._score_step("step", actual, expected)


class RecordKernels:
    def setup(self):
        expected, actual = build(1, 3, (50, 50))[0]
        self.expected = expected["extract"]["line_items"]
        self.actual = actual["extract"]["line_items"]
        self.matrix = kernels.record_score_matrix(self.expected, self.actual)[0]

    def time_record_matrix(self):
        kernels.record_score_matrix(self.expected, self.actual)

    def time_greedy_pairs(self):
        kernels.greedy_pairs(self.matrix)


def track_mean_case_score():
    cases = build(50, 0, (5, 50))
    steps = [score_case(expected, actual) for expected, actual in cases]
    return sum(sum(s.score for s in case if s.status == "scored") / 2 for case in steps) / len(steps)


track_mean_case_score.unit = "score"
