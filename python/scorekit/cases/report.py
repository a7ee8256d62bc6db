"""The HTML report of a case benchmark (docs/cases-report.md), built with :mod:`scorekit.report`.

:func:`report_sections` turns a :class:`~scorekit.cases.results.BenchmarkSummary` into the page's
sections, in the documented order (:data:`SECTIONS`); :func:`generate_report` writes the page
atomically, and a PDF copy through WeasyPrint when asked (:func:`require_pdf_support` checks for
it before anything runs). Everything comes from the summary alone, so a saved summary renders
the same page anywhere. Rules kept on every page: nothing loaded from a URL, every value from
the data shown as escaped text, charts and the pipeline graph as inline SVG, ``<details>`` for
the collapsible case blocks.

Scores print with one decimal, rounded down, so ``100.0%`` only ever means a perfect score;
values print as JSON (``null``, ``true``), and a step with no output says ``missing``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from scorekit import report as rp
from scorekit.cases.results import (BenchmarkSummary, CaseResult, DagNode, FieldScore, PipelineBenchmarkResult,
                                    jsonable)
from scorekit.errors import InputTooLargeError
from scorekit.cases.formatting import format_delta, format_score
from scorekit.files import check_outputs
from scorekit.report.charts import MAX_BARS, MAX_FLOW_DEPTH
from scorekit.report.pdf import PdfSupportError, require_pdf_support, write_pdf

__all__ = ["DEFAULT_SECTIONS", "MAX_CASE_DETAILS", "SECTIONS", "PdfSupportError", "format_delta", "format_score",
           "generate_report", "report_sections", "require_pdf_support"]

#: Every section, in the order of the page.
SECTIONS = ("overall_summary", "per_step_accuracy", "per_field_accuracy", "pipeline_comparison", "mermaid_graph",
            "plots", "per_case_breakdown", "attempt_logs")
#: The sections shown when none are named: all but the attempt logs.
DEFAULT_SECTIONS = SECTIONS[:-1]
_HEADINGS = {"overall_summary": "Overall summary", "per_step_accuracy": "Per-step accuracy",
             "per_field_accuracy": "Per-field accuracy",
             "pipeline_comparison": "Pipeline comparison", "mermaid_graph": "Pipeline graph",
             "plots": "Accuracy plots", "per_case_breakdown": "Per-case breakdown",
             "attempt_logs": "Attempt logs"}
#: Cases per pipeline shown in full (failed first); the others are listed in one table.
MAX_CASE_DETAILS = 200
#: Rows of the table of cases not shown in full, and of the attempt log table.
MAX_LISTED_ROWS = 5000
#: Characters of a value shown in a table cell (the output diff shows the whole value).
MAX_CELL_CHARS = 300
#: Attempts whose stderr text is shown.
MAX_STDERR_BLOCKS = 200
_MISSING = object()


def _tenths(score: float) -> float:
    """The percentage :func:`format_score` shows, as a number (the bar length matches the label)."""
    return float(format_score(score)[:-1])


def _json_text(value: Any, indent: Optional[int] = None) -> str:
    """``value`` as JSON text (NaN and infinities by name); what JSON cannot hold (an object, a
    key that is not text, a cycle) as :func:`~scorekit.cases.results.jsonable` stores it."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=True, default=jsonable)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(jsonable(value), ensure_ascii=False, indent=indent)


def _short(text: str, limit: int = MAX_CELL_CHARS) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _value_cell(value: Any) -> str:
    return "missing" if value is _MISSING else _short(_json_text(value))


def _score_cell(score: Optional[float]) -> Any:
    return rp.number_cell(score, format_score(score)) if score is not None and math.isfinite(score) else "\u2014"


def _delta_cell(delta: Optional[float]) -> Any:
    return rp.number_cell(delta, format_delta(delta)) if delta is not None else "\u2014"


def _selected(sections: Optional[Iterable[str]]) -> list[str]:
    if sections is None:
        return list(DEFAULT_SECTIONS)
    if isinstance(sections, str):
        raise ValueError(f"sections must be a list of section names, not the string {sections!r}")
    names = list(sections)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown report section{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}; the sections are {', '.join(SECTIONS)}")
    return [s for s in SECTIONS if s in names]


class _Steps:
    """Per pipeline: which steps it has a mean for, and which it really produced (a step missing
    from every case it was scored in was never produced: no bar, no Δ, "—" in the comparison)."""

    def __init__(self, summary: BenchmarkSummary) -> None:
        self.pipelines = summary.pipelines
        self.names: list[str] = []
        for p in summary.pipelines:
            for s in p.step_mean_accuracy:
                if s not in self.names:
                    self.names.append(s)
        self.scored: list[dict[str, int]] = []
        for p in summary.pipelines:
            counts: dict[str, int] = {}
            for case in p.cases:
                if case.status == "success":
                    for step in case.step_scores:
                        if step.status != "ignored":
                            counts[step.step_name] = counts.get(step.step_name, 0) + 1
            self.scored.append(counts)

    def mean(self, k: int, step: str) -> Optional[float]:
        return self.pipelines[k].step_mean_accuracy.get(step)

    def produced(self, k: int, step: str) -> Optional[float]:
        """The step's mean for pipeline ``k`` if the pipeline produced it at least once, else None."""
        p = self.pipelines[k]
        if step not in p.step_mean_accuracy:
            return None
        count = self.scored[k].get(step, 0)
        if count and p.step_missing_count.get(step, 0) >= count:
            return None
        return p.step_mean_accuracy[step]

    def missing_text(self, k: int, step: str) -> Any:
        missing = self.pipelines[k].step_missing_count.get(step)
        if missing is None or step not in self.pipelines[k].step_mean_accuracy:
            return "\u2014"
        count = self.scored[k].get(step, 0)
        return rp.number_cell(missing, f"{missing} of {count}" if count else str(missing))


def _delta(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else b - a


def _overall(summary: BenchmarkSummary) -> list[rp.Section]:
    t = summary.pass_threshold
    parts: list[rp.Section] = []
    if not summary.case_names and not any(p.cases for p in summary.pipelines):
        parts.append(rp.note("No cases found: the benchmark folder has no case directory (a folder with an "
                             "input and an expected file)."))
    rule = "scored 0" if summary.missing_steps == "fail" else "left out of the case score"
    passed_missing = summary.passed_with_missing_steps
    if passed_missing:
        parts.append(rp.note(f"{passed_missing} case{'s' if passed_missing != 1 else ''} passed with missing "
                             f"steps: a step the pipeline gave no output for is {rule} "
                             "(the rule is --missing-steps; the per-case blocks count them)."))
    parts.append(rp.summary_table("", [("cases", len(summary.case_names)), ("pipelines", len(summary.pipelines)),
                                       ("pass threshold", format_score(t)), ("list matching", summary.matching),
                                       ("missing steps", rule)]))
    rows = []
    for p in summary.pipelines:
        passed = sum(1 for c in p.cases if c.passed(t))
        rows.append([p.name, len(p.cases), p.error_count, p.unscored_count, _score_cell(p.overall_mean_accuracy),
                     _score_cell(p.ok_mean_accuracy), passed, _score_cell(p.overall_pass_rate),
                     p.missing_step_count, p.passed_with_missing_steps])
    if rows:
        parts.append(rp.data_table("Pipelines", ["pipeline", "cases", "errors", "no scored steps",
                                                 "mean accuracy (errors as 0)", "mean of successful cases",
                                                 "passed", f"pass rate (score \u2265 {format_score(t)})",
                                                 "missing steps", "passed with missing steps"], rows))
    if summary.skipped:
        parts.append(rp.data_table(f"Skipped directories ({len(summary.skipped)})", ["directory", "reason"],
                                   [[s.name, s.reason] for s in summary.skipped]))
    return parts


def _per_step(summary: BenchmarkSummary, steps: _Steps) -> list[rp.Section]:
    if not steps.names:
        return [rp.note("No step was scored in any case.")]
    ps = summary.pipelines
    columns = ["step"]
    for p in ps:
        columns += [p.name, f"{p.name} pass rate", f"{p.name} missing"]
    columns += [f"\u0394 {p.name} vs {ps[0].name}" for p in ps[1:]]
    rows = []
    for s in steps.names:
        row: list[Any] = [s]
        for k, p in enumerate(ps):
            row += [_score_cell(steps.mean(k, s)), _score_cell(p.step_pass_rate.get(s)), steps.missing_text(k, s)]
        row += [_delta_cell(_delta(steps.produced(0, s), steps.produced(k, s))) for k in range(1, len(ps))]
        rows.append(row)
    return [rp.data_table("", columns, rows),
            rp.note("Missing: cases in which the pipeline gave no output for the step (counted as 0 in the "
                    "step's accuracy). \u0394 is in percentage points, shown only when both pipelines produced "
                    "the step.")]


def _per_field(summary: BenchmarkSummary) -> list[rp.Section]:
    """Per pipeline, every field path's mean score and count over the cases, worst first."""
    parts: list[rp.Section] = []
    for p in summary.pipelines:
        if not p.fields:
            parts.append(rp.group(p.name, [rp.note("No field was scored.")]))
            continue
        rows = [[f["field"], _score_cell(f["mean"]), f["count"], f["comparator"] or "default rules"]
                for f in p.fields[:MAX_LISTED_ROWS]]
        body = [rp.data_table("", ["field", "mean score", "cases", "comparator"], rows)]
        if len(p.fields) > len(rows):
            body.append(rp.note(f"{len(p.fields) - len(rows)} more fields not listed (the best scoring)."))
        parts.append(rp.group(p.name, body))
    if not parts:
        return [rp.note("No pipeline.")]
    parts.append(rp.note("A field's score averaged over the successful cases that score it (a list is one field, "
                         "its items matched as documented); fields of a missing or ignored step are not counted."))
    return parts


def _comparison(summary: BenchmarkSummary, steps: _Steps) -> list[rp.Section]:
    ps = summary.pipelines
    if len(ps) < 2:
        return [rp.note("One pipeline only: nothing to compare (run two or more pipelines to compare them).")]
    base = ps[0]
    parts = [rp.note(f"Baseline: {base.name}. \u0394 = pipeline \u2212 baseline, in percentage points.")]
    columns = ["measure", base.name]
    for p in ps[1:]:
        columns += [p.name, f"\u0394 {p.name}"]
    overall = []
    for label, attr in (("mean accuracy", "overall_mean_accuracy"), ("pass rate", "overall_pass_rate")):
        row: list[Any] = [label, _score_cell(getattr(base, attr))]
        for p in ps[1:]:
            row += [_score_cell(getattr(p, attr)), _delta_cell(getattr(p, attr) - getattr(base, attr))]
        overall.append(row)
    parts.append(rp.data_table("Overall", columns, overall))
    shared = [s for s in steps.names if steps.produced(0, s) is not None
              and any(steps.produced(k, s) is not None for k in range(1, len(ps)))]
    unshared = [s for s in steps.names if s not in shared]
    if shared:
        rows = []
        for s in shared:
            row = [s, _score_cell(steps.produced(0, s))]
            for k in range(1, len(ps)):
                mine = steps.produced(k, s)
                row += [_score_cell(mine), _delta_cell(_delta(steps.produced(0, s), mine))]
            rows.append(row)
        parts.append(rp.data_table("Shared steps", ["step", *columns[1:]], rows))
    else:
        parts.append(rp.note("No step is produced by the baseline and another pipeline: only the overall "
                             "accuracy is compared."))
    if unshared:
        parts.append(rp.data_table("Steps not shared with the baseline", ["step", *[p.name for p in ps]],
                                   [[s, *[_score_cell(steps.produced(k, s)) for k in range(len(ps))]]
                                    for s in unshared]))
        parts.append(rp.note("\u2014: the pipeline has no output for that step in any case."))
    return parts


def _tone(score: Optional[float]) -> str:
    if score is None:
        return "plain"
    return "good" if score >= 0.9 else "fair" if score >= 0.6 else "poor"


def _flow(node: DagNode, p: PipelineBenchmarkResult, depth: int = 0) -> rp.FlowNode:
    """The chart box of a step. Nesting stops one level past what a flow chart draws, so a
    deeper graph gets the chart's "too deep" error (shown as a note), never a cut drawing."""
    lines = [node.name, node.kind]
    lines += [f"{key}: {value}" for key, value in node.details.items()]
    score = p.step_mean_accuracy.get(node.name)
    if score is not None:
        lines.append(f"accuracy: {format_score(score)}")
    children = tuple(_flow(c, p, depth + 1) for c in node.children) if depth <= MAX_FLOW_DEPTH else ()
    return rp.FlowNode(tuple(str(x) for x in lines), children, _tone(score))


def _graph(summary: BenchmarkSummary) -> list[rp.Section]:
    if not summary.pipelines:
        return [rp.note("No pipeline.")]
    parts = []
    for p in summary.pipelines:
        if not p.dag:
            parts.append(rp.group(p.name, [rp.note("No graph was recorded for this pipeline.")]))
            continue
        try:
            parts.append(rp.flow_chart(p.name, [_flow(n, p) for n in p.dag]))
        except InputTooLargeError as exc:
            parts.append(rp.group(p.name, [rp.note(f"The graph is too large to draw ({exc}).")]))
    return parts


def _plots(summary: BenchmarkSummary, steps: _Steps, colours: rp.SeriesColours) -> list[rp.Section]:
    ps = summary.pipelines
    if not steps.names or not ps:
        return [rp.note("No step scores to plot.")]
    limit = MAX_BARS // len(ps)
    names = steps.names[:limit]
    parts = []
    if len(names) < len(steps.names):
        parts.append(rp.note(f"The charts show the first {len(names)} of {len(steps.names)} steps."))
    values = [[None if steps.produced(k, s) is None else _tenths(steps.produced(k, s)) for s in names]  # type: ignore[arg-type]
              for k in range(len(ps))]
    parts.append(rp.grouped_bar_chart("Accuracy per step (%)", names, [(p.name, v) for p, v in zip(ps, values)],
                                      texts=[["" if x is None else f"{x:.1f}%" for x in v] for v in values],
                                      colours=colours))
    if len(ps) > 1:
        deltas = [[_delta(steps.produced(0, s), steps.produced(k, s)) for s in names] for k in range(1, len(ps))]
        parts.append(rp.grouped_bar_chart(
            f"\u0394 accuracy per step vs {ps[0].name} (percentage points)", names,
            [(p.name, [None if d is None else float(format_delta(d)) for d in row]) for p, row in zip(ps[1:], deltas)],
            texts=[["" if d is None else format_delta(d) for d in row] for row in deltas], colours=colours))
    parts.append(rp.note("A step a pipeline never produced has no bar (it is not drawn as 0)."))
    return parts


def _case_state(case: CaseResult, threshold: float) -> str:
    if case.status == "error":
        return "ERROR"
    if case.overall_score is None:
        return "NO SCORED STEPS"
    return "PASS" if case.passed(threshold) else "FAIL"


def _match_table(fs: FieldScore) -> rp.Section:
    m = fs.match
    assert m is not None
    expected = fs.expected if isinstance(fs.expected, list) else []
    actual = fs.actual if isinstance(fs.actual, list) else []

    def item(items: list[Any], index: int) -> str:
        return _short(_json_text(items[index])) if 0 <= index < len(items) else "\u2014"

    pair_of = {e: (a, score) for e, a, score in m.pairs}
    rows: list[list[Any]] = []
    for e in range(m.expected_len):
        if e in pair_of:
            a, score = pair_of[e]
            rows.append([e, item(expected, e), a, item(actual, a), _score_cell(score)])
        elif e < len(expected) and expected[e] == "$ignore":
            rows.append([e, item(expected, e), None, "wildcard", "\u2014"])
        else:
            rows.append([e, item(expected, e), None, "unpaired", _score_cell(0.0)])
    paired_actual = {a for _, a, _ in m.pairs}
    for a in range(m.actual_len):
        if a not in paired_actual:
            rows.append([None, "extra item" if m.wildcards == 0 else "extra item or $ignore slot", a,
                         item(actual, a), "\u2014"])
    title = (f"List {fs.field}: {m.method} matching, precision {format_score(m.precision)}, "
             f"recall {format_score(m.recall)}, F1 {format_score(m.f1)}"
             + (f", {m.wildcards} $ignore slot{'s' if m.wildcards != 1 else ''} filled" if m.wildcards else ""))
    return rp.data_table(title, ["expected #", "expected item", "actual #", "actual item", "score"], rows)


def _case_block(case: CaseResult, threshold: float) -> rp.Section:
    state = _case_state(case, threshold)
    score = "" if case.overall_score is None or case.status == "error" else f" \u00b7 {format_score(case.overall_score)}"
    missing = case.missing_step_count
    if missing:
        score += f" \u00b7 {missing} step{'s' if missing != 1 else ''} missing"
    parts: list[rp.Section] = []
    if case.status == "error":
        parts.append(rp.text_block("Error", case.error_message or (str(case.error) if case.error else "error")))
    elif case.overall_score is None:
        parts.append(rp.note("No scored steps: every step was ignored or missing, so this case has no score."))
    rows = []
    for step in case.step_scores:
        status = step.status + (f" (runner: {step.runner_status})" if step.runner_status else "")
        actual = case.actuals.get(step.step_name, _MISSING)
        expected = case.expecteds.get(step.step_name, _MISSING)
        rows.append([step.step_name, status, _score_cell(step.score) if step.status == "scored" else "\u2014",
                     _value_cell(actual), "\u2014" if expected is _MISSING else _value_cell(expected)])
    if rows:
        parts.append(rp.data_table("Steps", ["step", "status", "score", "actual", "expected"], rows))
    for step in case.step_scores:
        if len(step.field_scores) > 1:
            parts.append(rp.data_table(
                f"Fields of {step.step_name}", ["field", "status", "score", "actual", "expected"],
                [[f.field, f.status, _score_cell(f.score) if f.status == "scored" else "\u2014",
                  _value_cell(f.actual), _value_cell(f.expected)] for f in step.field_scores]))
        parts.extend(_match_table(f) for f in step.field_scores if f.match is not None)
    if case.status == "success":
        for step in case.step_scores:
            if step.status != "scored" or step.step_name not in case.actuals:
                continue
            expected = case.expecteds.get(step.step_name)
            if expected is None:
                continue
            left, right = _json_text(expected, 2), _json_text(case.actuals[step.step_name], 2)
            if left == right:
                continue
            try:
                parts.append(rp.line_diff(f"Output diff of {step.step_name}", left, right))
            except InputTooLargeError:
                parts.append(rp.note(f"Output diff of {step.step_name} left out: more than "
                                     f"{rp.sections.MAX_DIFF_LINES} lines."))
    return rp.details_block(f"{state} \u00b7 {case.case_name}{score}", parts, open=state != "PASS")


def _per_case(summary: BenchmarkSummary, max_case_details: int) -> list[rp.Section]:
    t = summary.pass_threshold
    if not any(p.cases for p in summary.pipelines):
        return [rp.note("No benchmark results to display.")]
    parts = []
    for p in summary.pipelines:
        if not p.cases:
            parts.append(rp.group(p.name, [rp.note("No cases for this pipeline.")]))
            continue
        failed = [c for c in p.cases if not c.passed(t)]
        ordered = failed + [c for c in p.cases if c.passed(t)]
        body = [rp.note(f"{len(p.cases)} case{'s' if len(p.cases) != 1 else ''}: {len(failed)} not passing "
                        f"({p.error_count} errors, {p.unscored_count} without scored steps), "
                        f"{len(p.cases) - len(failed)} passing at {format_score(t)}. Failures first."
                        + (" All cases passed." if not failed else ""))]
        shown = ordered[:max_case_details]
        body.extend(_case_block(c, t) for c in shown)
        rest = ordered[len(shown):]
        if rest:
            listed = rest[:MAX_LISTED_ROWS]
            body.append(rp.note(f"{len(rest)} more case{'s' if len(rest) != 1 else ''} not shown in full "
                                f"(the first {len(shown)} are; the limit is {max_case_details})"
                                + (f"; {len(rest) - len(listed)} of them are not listed either." if
                                   len(listed) < len(rest) else ".")))
            body.append(rp.data_table("Cases not shown in full", ["case", "state", "score"],
                                      [[c.case_name, _case_state(c, t), _score_cell(c.overall_score)
                                        if c.status == "success" else "\u2014"] for c in listed]))
        parts.append(rp.group(p.name, body))
    return parts


_LOG_KEYS = ("step", "attempt", "status", "prompt_tokens", "completion_tokens", "elapsed")


def _log_cell(value: Any) -> Any:
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        return value
    return _short(value if isinstance(value, str) else _json_text(value))


def _attempt_logs(summary: BenchmarkSummary) -> list[rp.Section]:
    rows, stderr, total = [], [], 0
    for p in summary.pipelines:
        for case in p.cases:
            for log in case.attempt_logs:
                total += 1
                if len(rows) >= MAX_LISTED_ROWS:
                    continue
                log = log if isinstance(log, dict) else {"entry": log}
                other = {k: v for k, v in log.items() if k not in _LOG_KEYS and k != "stderr"}
                rows.append([p.name, case.case_name, *[_log_cell(log.get(k)) for k in _LOG_KEYS],
                             _short(_json_text(other)) if other else None])
                text = log.get("stderr")
                if text and len(stderr) < MAX_STDERR_BLOCKS:
                    stderr.append(rp.details_block(
                        f"stderr \u00b7 {p.name} \u00b7 {case.case_name} \u00b7 {log.get('step', '')} "
                        f"\u00b7 attempt {log.get('attempt', '')}", [rp.text_block("", str(text))]))
    if not total:
        return [rp.note("No attempt logs recorded.")]
    parts = [rp.data_table("", ["pipeline", "case", "step", "attempt", "status", "prompt tokens",
                                "completion tokens", "elapsed (s)", "other"], rows)]
    if len(rows) < total:
        parts.append(rp.note(f"{total - len(rows)} more attempts not listed (the first {len(rows)} are)."))
    return parts + stderr


def report_sections(summary: BenchmarkSummary, sections: Optional[Iterable[str]] = None, *,
                    previous: Optional[BenchmarkSummary] = None,
                    max_case_details: int = MAX_CASE_DETAILS,
                    colours: Optional[rp.SeriesColours] = None) -> list[rp.Section]:
    """The page's sections for ``summary``: the named ``sections`` (default
    :data:`DEFAULT_SECTIONS`) in the order of :data:`SECTIONS`, each a titled group; an unknown
    name raises ``ValueError``. With ``previous`` (the summary of an earlier run), a section
    "Changes since the previous run" follows the overall summary. ``max_case_details`` cases per
    pipeline are shown in full (failures first). ``colours`` gives each pipeline its colour on
    every chart (pass the page's own when these sections join others; default: a new one)."""
    if not isinstance(summary, BenchmarkSummary):
        raise TypeError(f"summary must be a BenchmarkSummary, not {type(summary).__name__}")
    if isinstance(max_case_details, bool) or not isinstance(max_case_details, int) or max_case_details < 0:
        raise ValueError(f"max_case_details must be a non-negative integer, not {max_case_details!r}")
    names = _selected(sections)
    steps = _Steps(summary)
    colours = colours if colours is not None else rp.SeriesColours()
    build = {"overall_summary": lambda: _overall(summary),
             "per_step_accuracy": lambda: _per_step(summary, steps),
             "per_field_accuracy": lambda: _per_field(summary),
             "pipeline_comparison": lambda: _comparison(summary, steps),
             "mermaid_graph": lambda: _graph(summary),
             "plots": lambda: _plots(summary, steps, colours),
             "per_case_breakdown": lambda: _per_case(summary, max_case_details),
             "attempt_logs": lambda: _attempt_logs(summary)}
    out = [rp.group(_HEADINGS[name], build[name]()) for name in names]
    if previous is not None:
        from scorekit.cases.compare import compare_summaries, comparison_section

        at = 1 if names and names[0] == "overall_summary" else 0
        out.insert(at, comparison_section(compare_summaries(previous, summary)))
    return out


def generate_report(summary: BenchmarkSummary, output: "str | os.PathLike[str]" = "benchmark_report.html",
                    sections: Optional[Iterable[str]] = None, title: str = "Benchmark Report", pdf: bool = False, *,
                    previous: Optional[BenchmarkSummary] = None, max_case_details: int = MAX_CASE_DETAILS,
                    inputs: Sequence["str | os.PathLike[str]"] = ()) -> Path:
    """Write the report of ``summary`` to ``output`` (atomically; never over one of ``inputs``)
    and return its path. With ``pdf``, also ``Path(output).with_suffix(".pdf")`` through
    WeasyPrint; WeasyPrint (:func:`require_pdf_support`) and both paths
    (:func:`scorekit.files.check_outputs`) are checked before anything is written."""
    if pdf:
        require_pdf_support()
    check_outputs({"output": output, "pdf": Path(output).with_suffix(".pdf") if pdf else None}, inputs)
    page = rp.render_page(title, report_sections(summary, sections, previous=previous,
                                                  max_case_details=max_case_details),
                          subtitle=f"Generated: {summary.created}")
    path = rp.write_report(output, page, inputs=inputs)
    if pdf:
        write_pdf(path.with_suffix(".pdf"), page)
    return path
