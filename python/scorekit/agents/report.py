"""The HTML report of agent suite runs: reliability, cost, slices, tasks and the regression gate.

This module owns the choice and order of the sections that show one or more named runs
(:class:`~scorekit.agents.ReliabilityReport` s, e.g. two agent versions on the same suite), the
gate's verdict between two of them and their paired comparison. Rendering, escaping and the
page's safety rules are :mod:`scorekit.report`'s.

>>> from scorekit.agents import reliability
>>> runs = {"v1": reliability({"t1": [True, True], "t2": [True, False]}, k=2)}
>>> "pass^2" in suite_report(runs, title="Nightly suite")
True
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from typing import Any, Optional, Union

from scorekit import report
from scorekit.agents.reliability import ReliabilityReport
from scorekit.errors import InvalidTypeError, InvalidValueError

__all__ = ["report_sections", "suite_report"]

#: Tasks drawn one bar each; a larger suite shows its slices and the per-task table only.
MAX_TASK_BARS = 40


def _interval(ci: Any) -> Optional[str]:
    if not ci or ci[0] is None or ci[1] is None:
        return None
    return f"[{_num(ci[0])}, {_num(ci[1])}]"


def _num(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return report.sections.format_number(x)


def _money(x: Any) -> Any:
    """Dollars for a table cell: ``None`` stays empty, ``inf`` (no success) says so."""
    if x is None:
        return None
    if math.isinf(x):
        return "∞ (no success)"
    return round(float(x), 6)


def _check_runs(runs: Mapping[str, ReliabilityReport]) -> list[tuple[str, ReliabilityReport]]:
    if not isinstance(runs, Mapping) or not runs:
        raise InvalidValueError("must be a non-empty {name: ReliabilityReport} mapping", field="runs")
    out = []
    for name, run in runs.items():
        if not isinstance(run, ReliabilityReport):
            raise InvalidTypeError(f"run {name!r} is a {type(run).__name__}, not a ReliabilityReport", field="runs")
        out.append((str(name), run))
    return out


def _overview(runs: list[tuple[str, ReliabilityReport]]) -> Any:
    rows = []
    for name, r in runs:
        cost = r.cost or {}
        rows.append([name, r.n_tasks, r.k, r.n_trials, r.success_rate, _interval(r.success_ci), r.pass_at_k, r.pass_hat_k,
                     _interval(r.pass_hat_k_ci), _money(cost.get("total_dollars")),
                     _money(cost.get("cost_per_success")), _interval(cost.get("cost_ci")),
                     cost.get("mean_latency_s"), cost.get("total_tokens")])
    k = runs[0][1].k
    return report.data_table("Runs", ["run", "tasks", "k", "trials", "success rate", "success 95% CI", f"pass@{k}",
                                      f"pass^{k}", f"pass^{k} 95% CI", "dollars", "dollars per success",
                                      "dollars per success 95% CI", "mean latency (s)", "tokens"], rows)


def _per_slice(runs: list[tuple[str, ReliabilityReport]], colours: report.SeriesColours) -> list[Any]:
    labels = list(dict.fromkeys(label for _, r in runs for label in r.per_slice))
    if not labels:
        return []
    k = runs[0][1].k
    series = [(name, [r.per_slice.get(s, {}).get("pass_hat_k") for s in labels]) for name, r in runs]
    rows = [[s, name, r.per_slice[s]["n_tasks"], r.per_slice[s]["success_rate"], r.per_slice[s]["pass_at_k"],
             r.per_slice[s]["pass_hat_k"]] for s in labels for name, r in runs if s in r.per_slice]
    return [report.grouped_bar_chart(f"pass^{k} per slice", [str(s) for s in labels], series, colours=colours),
            report.data_table("Per slice", ["slice", "run", "tasks", "success rate", f"pass@{k}", f"pass^{k}"], rows)]


def _per_task(runs: list[tuple[str, ReliabilityReport]], colours: report.SeriesColours) -> list[Any]:
    tasks = list(dict.fromkeys(t for _, r in runs for t in r.per_task))
    if not tasks:
        return [report.note("No task had k trials, so nothing per task can be shown.")]
    k = runs[0][1].k
    out = []
    if len(tasks) <= MAX_TASK_BARS:
        series = [(name, [r.per_task.get(t, {}).get("pass_hat_k") for t in tasks]) for name, r in runs]
        out.append(report.grouped_bar_chart(f"pass^{k} per task", [str(t) for t in tasks], series, colours=colours))
    columns = ["task"] + [f"{name} {what}" for name, _ in runs for what in ("successes", f"pass^{k}")]
    rows = []
    for t in tasks:
        row: list[Any] = [t]
        for _, r in runs:
            cell = r.per_task.get(t)
            row += [f"{cell['c']}/{cell['n']}" if cell else None, cell["pass_hat_k"] if cell else None]
        rows.append(row)
    out.append(report.data_table("Per task", columns, rows, sort_by=2))
    return out


def _metrics(runs: list[tuple[str, ReliabilityReport]]) -> list[Any]:
    rows = [[name, metric, m["aggregate"], m["n"], m["n_excluded"]]
            for name, r in runs for metric, m in (r.detail.get("metrics") or {}).items()]
    if not rows:
        return []
    return [report.data_table("Extra metrics", ["run", "metric", "aggregate", "episodes scored", "tasks without gold"],
                              rows)]


def _gate(gate: Any, current: str, baseline: str) -> list[Any]:
    verdict = "passed" if gate.passed else "FAILED"
    items = {"verdict": verdict, "current run": current, "baseline": baseline,
             "success rate (current / baseline)": f"{_num(gate.success_rate)} / {_num(gate.success_rate_baseline)}",
             "pass^k (current / baseline)": f"{_num(gate.pass_hat_k)} / {_num(gate.pass_hat_k_baseline)}",
             "dollars per success (current / baseline)":
                 f"{_num(gate.cost_per_success)} / {_num(gate.cost_per_success_baseline)}",
             "underpowered": "yes: worse, but not significantly" if gate.underpowered else "no"}
    out = [report.summary_table(f"Regression gate: {current} against {baseline}", items)]
    if gate.reasons:
        out.append(report.data_table("Why the gate failed", ["reason"], [[r] for r in gate.reasons]))
    else:
        out.append(report.note("No confident regression: the upper end of every interval for the change is above "
                               "the tolerance."))
    return out


def _comparison(c: Any) -> list[Any]:
    a, b = c.names
    items = {"paired tasks": c.n_tasks,
             f"success rate ({a} / {b})": f"{_num(c.mean_a)} / {_num(c.mean_b)}",
             f"difference {a} − {b} ({100 * c.confidence:g}% CI)": f"{c.mean_diff:+.4f} {_interval(c.diff_ci)}"}
    if c.k is not None:
        items[f"pass^{c.k} difference ({100 * c.confidence:g}% CI)"] = \
            f"{c.pass_hat_k_diff:+.4f} {_interval(c.pass_hat_k_diff_ci)}"
    items.update({"improved / regressed / tied tasks": f"{len(c.improved)} / {len(c.regressed)} / {len(c.tied)}",
                  "sign test p (exact, two-sided)": c.sign_test_p,
                  f"solved every time by {a}, never by {b}": ", ".join(map(str, c.only_a_solves)) or "none",
                  f"solved every time by {b}, never by {a}": ", ".join(map(str, c.only_b_solves)) or "none"})
    return [report.summary_table(f"Paired comparison: {a} against {b}", items)]


def report_sections(runs: Mapping[str, ReliabilityReport], *, gate: Any = None,
                    gate_runs: Optional[tuple[str, str]] = None, comparison: Any = None,
                    colours: Optional[report.SeriesColours] = None) -> list[Any]:
    """The report's sections for the named ``runs`` (all with the same k), plus the regression
    ``gate`` result (an :class:`~scorekit.agents.AgentGateResult`) between ``gate_runs =
    (current, baseline)`` and a paired ``comparison`` (an
    :class:`~scorekit.agents.AgentComparison`) when given. ``colours`` gives each run its colour
    on every chart (pass the page's own when these sections join others; default: a new one)."""
    pairs = _check_runs(runs)
    if len({r.k for _, r in pairs}) > 1:
        raise InvalidValueError("all runs must use the same k to share a report", field="runs")
    colours = colours if colours is not None else report.SeriesColours()
    sections = [_overview(pairs), *_per_slice(pairs, colours), *_per_task(pairs, colours), *_metrics(pairs)]
    if gate is not None:
        current, baseline = gate_runs if gate_runs else ("current", "baseline")
        sections += _gate(gate, current, baseline)
    if comparison is not None:
        sections += _comparison(comparison)
    return sections


def suite_report(runs: Mapping[str, ReliabilityReport], *, title: str = "Agent suite report", gate: Any = None,
                 gate_runs: Optional[tuple[str, str]] = None, comparison: Any = None,
                 path: Optional[Union[str, os.PathLike]] = None,
                 inputs: Iterable[Union[str, os.PathLike]] = ()) -> str:
    """A self-contained HTML page of :func:`report_sections`; with ``path``, also written there by
    :func:`scorekit.report.write_report` (atomically; refused when ``path`` is one of the
    ``inputs`` the runs were read from, a folder, or in a folder that does not exist)."""
    page = report.render_page(title, report_sections(runs, gate=gate, gate_runs=gate_runs, comparison=comparison))
    if path is not None:
        report.write_report(path, page, inputs=inputs)
    return page
