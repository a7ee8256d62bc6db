"""Result objects of a case benchmark, their aggregation, and their JSON form.

The public shapes follow the seed's documented contract (docs/cases.md): ``CaseResult.status`` is
``"success"`` or ``"error"``, ``step_scores`` is a list in expected-file order (``step_score(name)``
finds one), ``error`` is the exception and ``error_message`` its text. The extra fields
(``StepScore.status``, ``FieldScore.status``, ``CaseResult.actuals``/``expecteds``/``pipeline_path``)
are kept.

Aggregation (:func:`aggregate_pipeline`) is the decided rule of docs/cases.md:

- a case's ``overall_score`` is the mean of its ``scored`` steps (:func:`case_score`; with
  ``missing_steps="fail"`` each ``missing`` step joins the mean as 0); ``None`` when no step is
  scored ("no scored steps"), and such a case counts neither in the means nor in the pass rate;
- missing steps are counted per case (``CaseResult.missing_step_count``) and per pipeline
  (``missing_step_count``, ``cases_with_missing_steps``, ``passed_with_missing_steps``), so a
  case that passes only because a step it never produced is left out is never silent;
- ``overall_mean_accuracy`` counts error cases as 0 (``ok_mean_accuracy`` leaves them out);
- ``overall_pass_rate`` = passing cases / cases that have a score or an error;
- ``step_mean_accuracy[s]`` averages the step over the successful cases where it is not
  ``ignored``; a ``missing`` step counts 0 there (and is counted in ``step_missing_count``).

A :class:`BenchmarkSummary` saves to strict JSON (:meth:`BenchmarkSummary.to_json`) and loads back
(:meth:`BenchmarkSummary.from_json`), so a report can be rendered later, anywhere, from the file
alone. Values that JSON cannot hold are stored by :func:`jsonable` (tuples as lists, other objects
as their ``repr`` text, non-finite floats as strings).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from scorekit.files import strict_json_loads, write_atomically

__all__ = [
    "BenchmarkSummary", "CaseResult", "DagNode", "FieldScore", "ListMatch", "MISSING_STEPS", "PipelineBenchmarkResult",
    "SkippedCase", "StepScore", "aggregate_pipeline", "case_score", "field_rollup", "jsonable", "SUMMARY_FORMAT",
]

#: Version tag of the saved-summary JSON; loading refuses any other.
SUMMARY_FORMAT = "scorekit.cases.summary/1"
#: What a missing step does to its case's score: left out (the seed's rule) or scored 0.
MISSING_STEPS = ("exclude", "fail")


@dataclass
class ListMatch:
    """How the items of one expected list were paired with the actual list's items.

    ``pairs`` holds ``(expected_index, actual_index, score)`` for every paired item, in expected
    order; ``wildcards`` is how many ``$ignore`` slots were filled by leftover actual items.
    ``precision`` counts extra actual items against the list, ``recall`` is the list's score.
    """

    method: str
    expected_len: int
    actual_len: int
    pairs: list[tuple[int, int, float]]
    wildcards: int
    precision: float
    recall: float
    f1: float

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "expected_len": self.expected_len, "actual_len": self.actual_len,
                "pairs": [list(p) for p in self.pairs], "wildcards": self.wildcards,
                "precision": self.precision, "recall": self.recall, "f1": self.f1}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ListMatch":
        return cls(d["method"], d["expected_len"], d["actual_len"],
                   [(int(e), int(a), float(s)) for e, a, s in d["pairs"]], d["wildcards"],
                   d["precision"], d["recall"], d["f1"])


@dataclass
class FieldScore:
    """One scored leaf: a dotted ``field`` path (``"<value>"`` for a whole step), the values, the score.

    A list counts as one leaf; ``match`` then tells how its items were paired (dict lists and
    lists of mixed items; ``None`` for scalar lists scored as multisets and ``$ordered`` lists).
    ``comparator`` is the label of the comparator that scored the leaf (or its list's items), set
    by the runner (:func:`scorekit.cases.comparators.label_fields`); ``None``: the default rules.
    """

    field: str
    actual: Any
    expected: Any
    score: float
    status: str = "scored"
    match: Optional[ListMatch] = None
    comparator: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "actual": jsonable(self.actual), "expected": jsonable(self.expected),
                "score": self.score, "status": self.status,
                "match": self.match.to_dict() if self.match else None, "comparator": self.comparator}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "FieldScore":
        return cls(d["field"], d["actual"], d["expected"], d["score"], d["status"],
                   ListMatch.from_dict(d["match"]) if d.get("match") else None, d.get("comparator"))


@dataclass
class StepScore:
    """The score of one step of one case.

    ``status`` is ``scored``, ``ignored`` or ``missing``; ``runner_status`` is what the pipeline
    said of the step when it ran but gave no output (``"skipped"``, ``"failed"``), else ``None``.
    """

    step_name: str
    score: float
    status: str = "scored"
    field_scores: list[FieldScore] = field(default_factory=list)
    runner_status: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        return {"step_name": self.step_name, "score": self.score, "status": self.status,
                "field_scores": [f.to_dict() for f in self.field_scores], "runner_status": self.runner_status}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "StepScore":
        return cls(d["step_name"], d["score"], d["status"], [FieldScore.from_dict(f) for f in d["field_scores"]],
                   d.get("runner_status"))


@dataclass
class CaseResult:
    """One case run through one pipeline and scored."""

    case_name: str
    pipeline_path: str
    status: str
    step_scores: list[StepScore] = field(default_factory=list)
    overall_score: Optional[float] = None
    error: Optional[BaseException] = None
    error_message: Optional[str] = None
    elapsed_seconds: float = 0.0
    attempt_logs: list[dict[str, Any]] = field(default_factory=list)
    actuals: dict[str, Any] = field(default_factory=dict)
    expecteds: dict[str, Any] = field(default_factory=dict)

    def step_score(self, name: str) -> Optional[StepScore]:
        """The :class:`StepScore` of step ``name``, or ``None`` if the case has none."""
        for step in self.step_scores:
            if step.step_name == name:
                return step
        return None

    def passed(self, threshold: float) -> bool:
        """A successful case with a score of at least ``threshold`` (raw floats, no epsilon)."""
        return self.status == "success" and self.overall_score is not None and self.overall_score >= threshold

    @property
    def missing_step_count(self) -> int:
        """How many expected steps the pipeline gave no output for."""
        return sum(1 for s in self.step_scores if s.status == "missing")

    def to_dict(self) -> dict[str, Any]:
        return {"case_name": self.case_name, "pipeline_path": self.pipeline_path, "status": self.status,
                "step_scores": [s.to_dict() for s in self.step_scores], "overall_score": self.overall_score,
                "missing_steps": self.missing_step_count,
                "error_type": type(self.error).__name__ if self.error is not None else None,
                "error_message": self.error_message, "elapsed_seconds": self.elapsed_seconds,
                "attempt_logs": jsonable(self.attempt_logs), "actuals": jsonable(self.actuals),
                "expecteds": jsonable(self.expecteds)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CaseResult":
        message = d.get("error_message")
        error = RuntimeError(message) if d.get("status") == "error" else None
        return cls(d["case_name"], d["pipeline_path"], d["status"], [StepScore.from_dict(s) for s in d["step_scores"]],
                   d["overall_score"], error, message, d.get("elapsed_seconds", 0.0), d.get("attempt_logs", []),
                   d.get("actuals", {}), d.get("expecteds", {}))


@dataclass
class DagNode:
    """One step of a pipeline's graph: its name, kind (``llm``, ``transform``, ``parallel``, ``step`` …),
    short details shown on the node (``{"model": …}``), and the steps nested in it."""

    name: str
    kind: str = "step"
    details: dict[str, str] = field(default_factory=dict)
    children: list["DagNode"] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "details": dict(self.details),
                "children": [c.to_dict() for c in self.children]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DagNode":
        return cls(d["name"], d.get("kind", "step"), dict(d.get("details", {})),
                   [DagNode.from_dict(c) for c in d.get("children", [])])


@dataclass
class PipelineBenchmarkResult:
    """Every case run through one pipeline, and the pipeline's aggregates (module docstring)."""

    pipeline_path: str
    cases: list[CaseResult] = field(default_factory=list)
    step_mean_accuracy: dict[str, float] = field(default_factory=dict)
    step_pass_rate: dict[str, float] = field(default_factory=dict)
    step_missing_count: dict[str, int] = field(default_factory=dict)
    overall_mean_accuracy: float = 0.0
    ok_mean_accuracy: Optional[float] = None
    overall_pass_rate: float = 0.0
    error_count: int = 0
    unscored_count: int = 0
    dag: list[DagNode] = field(default_factory=list)
    name: str = ""
    missing_step_count: int = 0
    cases_with_missing_steps: int = 0
    passed_with_missing_steps: int = 0
    fields: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = Path(self.pipeline_path).name or self.pipeline_path

    def to_dict(self) -> dict[str, Any]:
        return {"pipeline_path": self.pipeline_path, "name": self.name, "cases": [c.to_dict() for c in self.cases],
                "step_mean_accuracy": self.step_mean_accuracy, "step_pass_rate": self.step_pass_rate,
                "step_missing_count": self.step_missing_count, "overall_mean_accuracy": self.overall_mean_accuracy,
                "ok_mean_accuracy": self.ok_mean_accuracy, "overall_pass_rate": self.overall_pass_rate,
                "error_count": self.error_count, "unscored_count": self.unscored_count,
                "missing_step_count": self.missing_step_count,
                "cases_with_missing_steps": self.cases_with_missing_steps,
                "passed_with_missing_steps": self.passed_with_missing_steps, "fields": self.fields,
                "dag": [n.to_dict() for n in self.dag]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PipelineBenchmarkResult":
        return cls(d["pipeline_path"], [CaseResult.from_dict(c) for c in d["cases"]], dict(d["step_mean_accuracy"]),
                   dict(d["step_pass_rate"]), dict(d.get("step_missing_count", {})), d["overall_mean_accuracy"],
                   d.get("ok_mean_accuracy"), d["overall_pass_rate"], d.get("error_count", 0),
                   d.get("unscored_count", 0), [DagNode.from_dict(n) for n in d.get("dag", [])], d.get("name", ""))


@dataclass
class SkippedCase:
    """A child directory of the benchmark that is not a case, and why (a warning, not an error)."""

    name: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "reason": self.reason}


@dataclass
class BenchmarkSummary:
    """The whole run: one :class:`PipelineBenchmarkResult` per pipeline, baseline first."""

    pipelines: list[PipelineBenchmarkResult]
    case_names: list[str]
    pass_threshold: float = 1.0
    skipped: list[SkippedCase] = field(default_factory=list)
    matching: str = "greedy"
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    missing_steps: str = "exclude"
    #: What ``--compare`` found (:meth:`scorekit.cases.compare.RunComparison.to_dict`), when given.
    comparison: Optional[dict[str, Any]] = None

    @property
    def passed_with_missing_steps(self) -> int:
        """Passing cases with a missing step, over every pipeline (the headline's count)."""
        return sum(p.passed_with_missing_steps for p in self.pipelines)

    def to_dict(self) -> dict[str, Any]:
        return {"format": SUMMARY_FORMAT, "created": self.created, "pass_threshold": self.pass_threshold,
                "matching": self.matching, "missing_steps": self.missing_steps,
                "passed_with_missing_steps": self.passed_with_missing_steps, "case_names": list(self.case_names),
                "skipped": [s.to_dict() for s in self.skipped], "pipelines": [p.to_dict() for p in self.pipelines],
                **({"comparison": self.comparison} if self.comparison is not None else {})}

    def to_json(self, path: "str | Path | None" = None) -> str:
        """The summary as strict JSON text; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, indent=1)
        if path is not None:
            write_atomically(path, text + "\n")
        return text

    @classmethod
    def from_dict(cls, d: Any) -> "BenchmarkSummary":
        """The summary of a saved dict; a ``ValueError`` ("malformed scorekit cases summary:
        <path inside the JSON>: …") for anything :meth:`to_dict` does not write."""
        if not isinstance(d, dict) or d.get("format") != SUMMARY_FORMAT:
            raise ValueError(f"not a saved scorekit cases summary (expected \"format\": \"{SUMMARY_FORMAT}\")")
        try:
            _SUMMARY(d, "")
            _check_unique_case_names(d["pipelines"])
        except _Malformed as exc:
            raise ValueError(f"malformed scorekit cases summary: {exc}") from None
        except RecursionError:
            raise ValueError("malformed scorekit cases summary: nested too deeply") from None
        summary = cls([PipelineBenchmarkResult.from_dict(p) for p in d["pipelines"]], list(d["case_names"]),
                      float(d["pass_threshold"]), [SkippedCase(s["name"], s["reason"]) for s in d.get("skipped", [])],
                      d.get("matching", "greedy"), d.get("created", ""), d.get("missing_steps", "exclude"))
        for pipeline in summary.pipelines:  # counted from the cases, whatever the file says
            _count_missing_steps(pipeline, summary.pass_threshold)
            pipeline.fields = field_rollup(pipeline.cases)
        summary.comparison = d.get("comparison")
        return summary

    @classmethod
    def from_json(cls, source: "str | Path") -> "BenchmarkSummary":
        """Load a summary saved by :meth:`to_json` from a file path (strict JSON: no NaN)."""
        path = Path(source)
        try:
            data = strict_json_loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        except RecursionError:
            raise ValueError(f"{path}: not valid JSON (nested too deeply)") from None
        return cls.from_dict(data)


# ------------------------------------------------------------------ checking a saved summary
class _Malformed(Exception):
    """A value of a saved summary that :meth:`BenchmarkSummary.to_dict` does not write."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where or 'the summary'}: {message}")


_Check = Callable[[Any, str], None]
_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null"}


def _kind(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise _Malformed(where, f"expected a string, got {_kind(value)}")


def _any(value: Any, where: str) -> None:
    pass


def _number(low: float = -math.inf, high: float = math.inf, whole: bool = False) -> _Check:
    wanted = "a whole number" if whole else "a number"
    bounds = f" in [{low:g}, {high:g}]" if math.isfinite(high) else f" >= {low:g}" if math.isfinite(low) else ""

    def check(value: Any, where: str) -> None:
        if type(value) not in ((int,) if whole else (int, float)) or not math.isfinite(value) or not low <= value <= high:
            got = repr(value) if type(value) in (int, float) else _kind(value)
            raise _Malformed(where, f"expected {wanted}{bounds}, got {got}")
    return check


def _one_of(*choices: str) -> _Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, str) or value not in choices:
            raise _Malformed(where, f"expected one of {', '.join(map(repr, choices))}, got {value!r:.60}")
    return check


def _nullable(inner: _Check) -> _Check:
    def check(value: Any, where: str) -> None:
        if value is not None:
            inner(value, where)
    return check


def _list_of(item: _Check, length: Optional[int] = None) -> _Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise _Malformed(where, f"expected an array, got {_kind(value)}")
        if length is not None and len(value) != length:
            raise _Malformed(where, f"expected {length} items, got {len(value)}")
        for index, entry in enumerate(value):
            item(entry, f"{where}[{index}]")
    return check


def _items(*items: _Check) -> _Check:
    """An array of ``len(items)`` values, each checked by its own check."""
    def check(value: Any, where: str) -> None:
        _list_of(_any, len(items))(value, where)
        for index, (item, entry) in enumerate(zip(items, value)):
            item(entry, f"{where}[{index}]")
    return check


def _map_of(item: _Check) -> _Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _Malformed(where, f"expected an object, got {_kind(value)}")
        for key, entry in value.items():
            item(entry, f"{where}[{json.dumps(key, ensure_ascii=False)}]")
    return check


def _record(required: dict[str, _Check], optional: Optional[dict[str, _Check]] = None) -> _Check:
    """An object with the ``required`` keys and any of the ``optional`` ones (others are ignored)."""
    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _Malformed(where, f"expected an object, got {_kind(value)}")
        for key in required:
            if key not in value:
                raise _Malformed(where, f"the key {key!r} is missing")
        for key, item in {**required, **(optional or {})}.items():
            if key in value:
                item(value[key], f"{where}.{key}" if where else key)
    return check


_SCORE = _number(0.0, 1.0)
_COUNT = _number(0, math.inf, whole=True)
_LIST_MATCH = _record({"method": _text, "expected_len": _COUNT, "actual_len": _COUNT,
                       "pairs": _list_of(_items(_COUNT, _COUNT, _SCORE)), "wildcards": _COUNT, "precision": _SCORE,
                       "recall": _SCORE, "f1": _SCORE})
_FIELD = _record({"field": _text, "actual": _any, "expected": _any, "score": _SCORE,
                  "status": _one_of("scored", "ignored")}, {"match": _nullable(_LIST_MATCH),
                                                             "comparator": _nullable(_text)})
_STEP = _record({"step_name": _text, "score": _SCORE, "status": _one_of("scored", "ignored", "missing"),
                 "field_scores": _list_of(_FIELD)}, {"runner_status": _nullable(_text)})
_CASE = _record({"case_name": _text, "pipeline_path": _text, "status": _one_of("success", "error"),
                 "step_scores": _list_of(_STEP), "overall_score": _nullable(_SCORE)},
                {"missing_steps": _COUNT,
                 "error_type": _nullable(_text), "error_message": _nullable(_text),
                 "elapsed_seconds": _number(0.0), "attempt_logs": _list_of(_any), "actuals": _map_of(_any),
                 "expecteds": _map_of(_any)})


def _check_unique_case_names(pipelines: list[dict[str, Any]]) -> None:
    """A case name once per pipeline: cases are compared and shown by name, so a repeated one
    would hide the other case."""
    for k, pipeline in enumerate(pipelines):
        seen: dict[str, int] = {}
        for index, case in enumerate(pipeline["cases"]):
            first = seen.setdefault(case["case_name"], index)
            if first != index:
                raise _Malformed(f"pipelines[{k}].cases[{index}].case_name",
                                 f"{case['case_name']!r} is already the name of pipelines[{k}].cases[{first}]")


def _dag_node(value: Any, where: str) -> None:
    _record({"name": _text}, {"kind": _text, "details": _map_of(_text), "children": _list_of(_dag_node)})(value, where)


_PIPELINE = _record({"pipeline_path": _text, "cases": _list_of(_CASE), "step_mean_accuracy": _map_of(_SCORE),
                     "step_pass_rate": _map_of(_SCORE), "overall_mean_accuracy": _SCORE,
                     "overall_pass_rate": _SCORE},
                    {"name": _text, "step_missing_count": _map_of(_COUNT), "ok_mean_accuracy": _nullable(_SCORE),
                     "error_count": _COUNT, "unscored_count": _COUNT, "dag": _list_of(_dag_node),
                     "missing_step_count": _COUNT, "cases_with_missing_steps": _COUNT,
                     "passed_with_missing_steps": _COUNT})
_SUMMARY = _record({"pipelines": _list_of(_PIPELINE), "case_names": _list_of(_text), "pass_threshold": _SCORE},
                   {"created": _text, "matching": _one_of("greedy", "optimal"), "missing_steps": _one_of(*MISSING_STEPS),
                    "passed_with_missing_steps": _COUNT, "comparison": _nullable(_map_of(_any)),
                    "skipped": _list_of(_record({"name": _text, "reason": _text}))})


def jsonable(value: Any, _depth: int = 0) -> Any:
    """``value`` as strict-JSON data: dicts (keys as text), lists (also tuples and sets, sorted by
    repr), finite numbers, text, booleans and null; anything else becomes its ``repr`` text
    (a Pydantic model its ``model_dump()``)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if _depth > 200:
        return "…"
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, _depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return [jsonable(v, _depth + 1) for v in sorted(value, key=repr)]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return jsonable(dump(), _depth + 1)
        except Exception:
            pass
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__} object>"


def _mean(values: list[float]) -> Optional[float]:
    return math.fsum(values) / len(values) if values else None


def case_score(steps: list[StepScore], missing_steps: str = "exclude") -> Optional[float]:
    """A case's score: the mean of its ``scored`` steps, with each ``missing`` step as 0 when
    ``missing_steps="fail"``; ``None`` when there is nothing to average."""
    if missing_steps not in MISSING_STEPS:
        raise ValueError(f"missing_steps must be 'exclude' or 'fail', got {missing_steps!r}")
    counted = ("scored", "missing") if missing_steps == "fail" else ("scored",)
    scores = [s.score if s.status == "scored" else 0.0 for s in steps if s.status in counted]
    return math.fsum(scores) / len(scores) if scores else None


def aggregate_pipeline(result: PipelineBenchmarkResult, threshold: float) -> PipelineBenchmarkResult:
    """Fill ``result``'s aggregates from its cases (rules in the module docstring); returns it."""
    counted = [c for c in result.cases if c.status == "error" or c.overall_score is not None]
    ok_scores = [c.overall_score for c in result.cases if c.status == "success" and c.overall_score is not None]
    result.error_count = sum(1 for c in result.cases if c.status == "error")
    result.unscored_count = sum(1 for c in result.cases if c.status == "success" and c.overall_score is None)
    result.overall_mean_accuracy = _mean([c.overall_score if c.status == "success" else 0.0  # type: ignore[misc]
                                          for c in counted]) or 0.0
    result.ok_mean_accuracy = _mean(ok_scores)  # type: ignore[arg-type]
    result.overall_pass_rate = (sum(1 for c in counted if c.passed(threshold)) / len(counted)) if counted else 0.0
    per_step: dict[str, list[float]] = {}
    missing: dict[str, int] = {}
    for case in result.cases:
        if case.status != "success":
            continue
        for step in case.step_scores:
            if step.status == "ignored":
                continue
            per_step.setdefault(step.step_name, []).append(step.score)
            if step.status == "missing":
                missing[step.step_name] = missing.get(step.step_name, 0) + 1
    result.step_mean_accuracy = {s: math.fsum(v) / len(v) for s, v in per_step.items()}
    result.step_pass_rate = {s: sum(1 for x in v if x >= threshold) / len(v) for s, v in per_step.items()}
    result.step_missing_count = {s: missing.get(s, 0) for s in per_step}
    _count_missing_steps(result, threshold)
    result.fields = field_rollup(result.cases)
    return result


def field_rollup(cases: list[CaseResult]) -> list[dict[str, Any]]:
    """Per field path, the mean score and count of its ``scored`` leaves over the successful
    cases, worst first (then by path): ``[{"field", "mean", "count", "comparator"}]``. A whole
    step's leaf (``<value>``) is under the step's name; ``comparator`` lists the labels that
    scored the field (``None``: the default rules)."""
    scores: dict[str, list[float]] = {}
    labels: dict[str, list[str]] = {}
    for case in cases:
        if case.status != "success":
            continue
        for step in case.step_scores:
            for fs in step.field_scores:
                if fs.status != "scored":
                    continue
                path = step.step_name if fs.field == "<value>" else fs.field
                scores.setdefault(path, []).append(fs.score)
                names = labels.setdefault(path, [])
                if fs.comparator and fs.comparator not in names:
                    names.append(fs.comparator)
    rows = [{"field": path, "mean": math.fsum(v) / len(v), "count": len(v),
             "comparator": " | ".join(labels[path]) or None} for path, v in scores.items()]
    return sorted(rows, key=lambda row: (row["mean"], row["field"]))


def _count_missing_steps(result: PipelineBenchmarkResult, threshold: float) -> None:
    """Fill ``result``'s missing-step counts from its cases (also for a summary saved before
    they were recorded)."""
    with_missing = [c for c in result.cases if c.status == "success" and c.missing_step_count]
    result.missing_step_count = sum(c.missing_step_count for c in with_missing)
    result.cases_with_missing_steps = len(with_missing)
    result.passed_with_missing_steps = sum(1 for c in with_missing if c.passed(threshold))
