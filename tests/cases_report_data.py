"""Benchmark summaries built by hand for the cases report tests, and a parser of the page.

``multi()`` is the two-pipeline setup of the spec's §4.3 (cases c1, c2 expecting extract{t,u},
classify, summarize): p1 extract 0.75, classify 0.5, summarize 0 (missing in every case); p1b
extract 0.25, classify 0 (missing), summarize 0.5.
"""

from __future__ import annotations

import copy
from html.parser import HTMLParser
from typing import Any, Optional

from scorekit.cases.results import (BenchmarkSummary, CaseResult, DagNode, FieldScore, ListMatch,
                                    PipelineBenchmarkResult, SkippedCase, StepScore, aggregate_pipeline)

EXPECTED = {"extract": {"t": "T", "u": "U"}, "classify": "bio", "summarize": "short"}


def case(name: str, steps: list[StepScore], actuals: dict[str, Any], expecteds: Optional[dict[str, Any]] = None, *,
         error: Optional[str] = None, logs: Optional[list[dict[str, Any]]] = None) -> CaseResult:
    """A case scored as the runner scores it: the overall score is the mean of the scored steps."""
    scored = [s.score for s in steps if s.status == "scored"]
    if error is not None:
        return CaseResult(name, "p.yaml", "error", [], None, RuntimeError(error), error, 0.1, logs or [],
                          actuals, expecteds or EXPECTED)
    return CaseResult(name, "p.yaml", "success", steps, sum(scored) / len(scored) if scored else None, None, None,
                      0.1, logs or [], actuals, EXPECTED if expecteds is None else expecteds)


def fields(step: str, pairs: dict[str, tuple[Any, Any]]) -> StepScore:
    """A dict step scored field by field: ``{field: (actual, expected)}``, equal values score 1."""
    scores = [FieldScore(f"{step}.{k}", a, e, 1.0 if a == e else 0.0) for k, (a, e) in pairs.items()]
    return StepScore(step, sum(f.score for f in scores) / len(scores), "scored", scores)


def value(step: str, actual: Any, expected: Any) -> StepScore:
    return StepScore(step, 1.0 if actual == expected else 0.0, "scored",
                     [FieldScore("<value>", actual, expected, 1.0 if actual == expected else 0.0)])


def missing(step: str) -> StepScore:
    return StepScore(step, 0.0, "missing")


def pipeline(path: str, cases: list[CaseResult], dag: Optional[list[DagNode]] = None, threshold: float = 1.0,
             name: str = "") -> PipelineBenchmarkResult:
    return aggregate_pipeline(PipelineBenchmarkResult(path, cases, dag=dag or [], name=name), threshold)


def p1() -> PipelineBenchmarkResult:
    return pipeline("never/read/p1.yaml", [
        case("c1", [fields("extract", {"t": ("T", "T"), "u": ("U", "U")}), value("classify", "bio", "bio"),
                    missing("summarize")], {"extract": {"t": "T", "u": "U"}, "classify": "bio"}),
        case("c2", [fields("extract", {"t": ("T", "T"), "u": ("x", "U")}), value("classify", "chem", "bio"),
                    missing("summarize")], {"extract": {"t": "T", "u": "x"}, "classify": "chem"}),
    ], [DagNode("extract", "llm", {"model": "small-1"}), DagNode("classify", "transform", {"fn": "pick"})])


def p1b() -> PipelineBenchmarkResult:
    return pipeline("elsewhere/p1b.yaml", [
        case("c1", [fields("extract", {"t": ("X", "T"), "u": ("U", "U")}), missing("classify"),
                    value("summarize", "short", "short")], {"extract": {"t": "X", "u": "U"}, "summarize": "short"}),
        case("c2", [fields("extract", {"t": ("X", "T"), "u": ("y", "U")}), missing("classify"),
                    value("summarize", "long", "short")], {"extract": {"t": "X", "u": "y"}, "summarize": "long"}),
    ], [DagNode("extract", "llm"),
        DagNode("fanout", "parallel", {}, [DagNode("summarize", "llm", {"model": "big-2"}),
                                           DagNode("tidy", "transform")])])


def multi(*pipelines: PipelineBenchmarkResult) -> BenchmarkSummary:
    return BenchmarkSummary(list(pipelines) or [p1(), p1b()], ["c1", "c2"], 1.0, created="2026-12-01 10:00 UTC")


def renamed(p: PipelineBenchmarkResult, name: str) -> PipelineBenchmarkResult:
    out = copy.deepcopy(p)
    out.name = name
    return out


def disjoint(second: dict[str, float]) -> BenchmarkSummary:
    """Two summaries' pipelines built by hand from step means alone (no cases): ``{a, b}`` against ``second``."""
    first = PipelineBenchmarkResult("one.yaml", [], {"a": 0.5, "b": 1.0}, {"a": 0.0, "b": 1.0}, {"a": 0, "b": 0},
                                    0.75, 0.75, 0.5)
    other = PipelineBenchmarkResult("two.yaml", [], dict(second), {k: 0.0 for k in second}, {k: 0 for k in second},
                                    0.6, 0.6, 0.0)
    return BenchmarkSummary([first, other], [], 1.0, created="2026-12-01 11:00 UTC")


def detailed() -> BenchmarkSummary:
    """One pipeline whose cases show every part of a case block: an error, a case without scored
    steps, a list match, a null output next to a missing one, a runner status, attempt logs."""
    match = ListMatch("greedy", 3, 3, [(0, 1, 1.0), (1, 0, 0.5)], 0, 0.5, 0.5, 0.5)
    exp_list = [{"n": "A"}, {"n": "B", "r": 1}, {"n": "C"}]
    act_list = [{"n": "B", "r": 2}, {"n": "A"}, {"n": "Z"}]
    people = StepScore("people", 0.5, "scored", [FieldScore("people.au", act_list, exp_list, 0.5, match=match)])
    cases = [
        case("ok", [value("classify", "bio", "bio")], {"classify": "bio"}, {"classify": "bio"},
             logs=[{"step": "classify", "attempt": 1, "status": "success", "prompt_tokens": 12,
                    "completion_tokens": 3, "elapsed": 0.25, "stderr": "warning: slow\nline 2"}]),
        case("lists", [people, StepScore("note", 1.0, "scored", [FieldScore("<value>", None, None, 1.0)],
                                         runner_status="skipped"), missing("ghost")],
             {"people": act_list, "note": None}, {"people": exp_list, "note": None, "ghost": {"x": 1}}),
        case("crash", [], {}, {"classify": "bio"}, error="ValueError: pipeline exploded"),
        case("empty", [StepScore("classify", 0.0, "ignored", [FieldScore("<value>", "x", "$ignore", 0.0, "ignored")])],
             {"classify": "x"}, {"classify": "$ignore"}),
    ]
    p = pipeline("solo.py", cases, [DagNode("classify", "callable")])
    return BenchmarkSummary([p], [c.case_name for c in cases], 1.0, skipped=[SkippedCase(".git", "dot-directory")],
                            created="2026-12-01 12:00 UTC")


class Page(HTMLParser):
    """The parts of a report page the tests read: h2 texts, every table (its heading and rows of
    cell texts), the summary line and open flag of every ``<details>``, paragraphs, ``<pre>``
    texts, SVG ``<title>`` texts, and every tag and attribute."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.h2: list[str] = []
        self.headings: list[str] = []
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.details: list[tuple[str, bool]] = []
        self.notes: list[str] = []
        self.pres: list[str] = []
        self.svg_titles: list[str] = []
        self.tags: list[str] = []
        self.attrs: list[tuple[str, Optional[str]]] = []
        self.text: list[str] = []
        self._stack: list[str] = []
        self._buffer: Optional[list[str]] = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag in ("meta",):
            return
        self._stack.append(tag)
        if tag == "table":
            self.tables.append((self.headings[-1] if self.headings else "", []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._buffer = []
        elif tag == "details":
            self.details.append(("", dict(attrs).get("open", "no") is None))
        elif tag in ("h2", "h3", "h4", "h5", "h6", "summary", "p", "pre", "title"):
            self._buffer = []

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_endtag(self, tag):
        while self._stack and self._stack[-1] != tag:
            self._stack.pop()
        if self._stack:
            self._stack.pop()
        text = "".join(self._buffer) if self._buffer is not None else None
        if text is None:
            return
        if tag in ("td", "th") and self.tables and self.tables[-1][1]:
            self.tables[-1][1][-1].append(text)
        elif tag == "h2":
            self.h2.append(text)
            self.headings.append(text)
        elif tag in ("h3", "h4", "h5", "h6"):
            self.headings.append(text)
        elif tag == "summary":
            self.details[-1] = (text, self.details[-1][1])
        elif tag == "p":
            self.notes.append(text)
        elif tag == "pre":
            self.pres.append(text)
        elif tag == "title" and "svg" in self._stack:
            self.svg_titles.append(text)
        if tag in ("td", "th", "h2", "h3", "h4", "h5", "h6", "summary", "p", "pre", "title"):
            self._buffer = None

    def handle_data(self, data):
        if self._stack and self._stack[-1] in ("style", "script"):
            return
        self.text.append(data)
        if self._buffer is not None:
            self._buffer.append(data)

    def table(self, heading: str) -> list[list[str]]:
        """The rows (header row first) of the first table under ``heading``."""
        for title, rows in self.tables:
            if title == heading:
                return rows
        raise AssertionError(f"no table under {heading!r}; tables: {[t for t, _ in self.tables]}")

    def row(self, heading: str, first: str) -> list[str]:
        for r in self.table(heading):
            if r and r[0] == first:
                return r
        raise AssertionError(f"no row {first!r} in {heading!r}: {self.table(heading)}")
