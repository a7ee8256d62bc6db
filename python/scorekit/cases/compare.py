"""What changed between two runs of a case benchmark (``--compare PREVIOUS_SUMMARY.json``).

:func:`compare_summaries` matches the pipelines of two :class:`BenchmarkSummary` objects by name
(the k-th pipeline of a name with the k-th of the same name; never by position: a pipeline whose
name is only in one run is listed as new or gone), then their cases by name, then each
case's steps by name, and gives each a kind of change (:data:`KINDS`):

- ``new`` / ``gone``: only in the current / only in the previous run;
- ``fixed`` / ``broken``: the case went from error to success / from success to error;
- ``better`` / ``worse``: the score went up / down;
- ``changed``: same score, but the output (or the status, or the error message) differs;
- ``same``: nothing differs.

A step's score is its step score (a ``missing`` step counts 0, as in the step's mean); a step
whose status goes to or from ``ignored`` is ``changed``. A case's score is its overall score; a
case with no scored steps on one side only is ``changed``.

Per pair of pipelines, :class:`Significance` says whether the change is more than noise: the
paired bootstrap interval of the mean case-score difference (current − previous) and the exact
sign test over the cases whose score changed, both from :func:`scorekit.stats.paired_difference`.
The cases paired are those in both runs with a score in both (an error case scores 0, as in the
mean accuracy); the cases only one run has, or without a score in one run, are listed, never
dropped silently. :meth:`RunComparison.to_dict` is strict JSON; :func:`comparison_section` is
the report's "Changes since the previous run".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from scorekit.cases.formatting import format_delta, format_score
from scorekit.cases.results import BenchmarkSummary, CaseResult, PipelineBenchmarkResult, StepScore, jsonable
from scorekit.stats import DEFAULT_BOOTSTRAP_RESAMPLES, PairedDifference, paired_difference

__all__ = ["KINDS", "CaseChange", "RunComparison", "Significance", "StepChange", "compare_summaries",
           "comparison_section"]

#: Kinds of change, worst first (the order of the report's table).
KINDS = ("broken", "worse", "gone", "changed", "new", "better", "fixed", "same")
#: Two scores closer than this are equal (summation noise, not a change).
SCORE_TOLERANCE = 1e-9
#: Rows of the report's change table.
MAX_CHANGE_ROWS = 2000


@dataclass
class StepChange:
    """One step of one case in the two runs (``None``: not there)."""

    step: str
    kind: str
    previous_score: Optional[float]
    current_score: Optional[float]
    previous_status: Optional[str]
    current_status: Optional[str]

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "kind": self.kind, "previous_score": self.previous_score,
                "current_score": self.current_score, "previous_status": self.previous_status,
                "current_status": self.current_status}


@dataclass
class CaseChange:
    """One case of one pipeline in the two runs; ``steps`` has every step of either run."""

    pipeline: str
    case: str
    kind: str
    previous_score: Optional[float]
    current_score: Optional[float]
    previous_status: Optional[str]
    current_status: Optional[str]
    steps: list[StepChange] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"pipeline": self.pipeline, "case": self.case, "kind": self.kind,
                "previous_score": self.previous_score, "current_score": self.current_score,
                "previous_status": self.previous_status, "current_status": self.current_status,
                "steps": [s.to_dict() for s in self.steps]}


@dataclass
class Significance:
    """One pipeline compared across the two runs, case by case (module docstring). ``difference``
    is ``None`` when no case has a score in both runs."""

    pipeline: str
    difference: Optional[PairedDifference]
    seed: Any
    only_in_current: list[str]
    only_in_previous: list[str]
    without_score: list[str]

    def to_dict(self) -> dict[str, Any]:
        d = self.difference
        numbers = (dict.fromkeys(("cases", "mean_previous", "mean_current", "mean_diff", "ci_low", "ci_high",
                                  "n_better", "n_worse", "n_equal", "p_value", "confidence", "resamples"))
                   if d is None else
                   {"cases": d.n, "mean_previous": d.mean_b, "mean_current": d.mean_a, "mean_diff": d.mean_diff,
                    "ci_low": d.ci_low, "ci_high": d.ci_high, "n_better": d.n_higher, "n_worse": d.n_lower,
                    "n_equal": d.n_equal, "p_value": d.p_value, "confidence": d.confidence,
                    "resamples": d.resamples})
        return {"pipeline": self.pipeline, **numbers, "seed": self.seed,
                "only_in_current": list(self.only_in_current), "only_in_previous": list(self.only_in_previous),
                "without_score": list(self.without_score)}

    def left_out(self) -> list[tuple[str, list[str]]]:
        """``(why, case names)`` of the cases not in the test, for each reason that has some."""
        return [(why, names) for why, names in (("only in this run", self.only_in_current),
                                                ("only in the previous run", self.only_in_previous),
                                                ("without a score in one run", self.without_score)) if names]

    def text(self) -> str:
        """One line for the console: the difference, its interval, the counts, the p-value and how
        many cases the test left out."""
        d = self.difference
        if d is None:
            line = f"{self.pipeline}: no case has a score in both runs, nothing to test"
        else:
            line = (f"{self.pipeline}: mean case score {format_delta(d.mean_diff)} points "
                    f"({d.confidence:.0%} CI {format_delta(d.ci_low)} to {format_delta(d.ci_high)}), "
                    f"{d.n_higher} better, {d.n_lower} worse, {d.n_equal} same of {d.n} cases, "
                    f"sign test p = {d.p_value:.3g}")
        left = self.left_out()
        return line + (f"; not in the test: {', '.join(f'{len(n)} {why}' for why, n in left)}" if left else "")


def _paired_score(case: CaseResult) -> Optional[float]:
    """A case's score in the paired test: its overall score, 0 for an error, ``None`` for none."""
    return 0.0 if case.status == "error" else case.overall_score


def _significance(old: PipelineBenchmarkResult, new: PipelineBenchmarkResult, resamples: int, alpha: float,
                  seed: Any) -> Significance:
    old_cases = {c.case_name: c for c in old.cases}
    new_cases = {c.case_name: c for c in new.cases}
    paired, unscored = [], []
    for name, case in new_cases.items():
        if name not in old_cases:
            continue
        scores = (_paired_score(case), _paired_score(old_cases[name]))
        if None in scores:
            unscored.append(name)
        else:
            paired.append(scores)
    difference = None
    if paired:
        current, previous = zip(*paired)
        difference = paired_difference(current, previous, resamples=resamples, alpha=alpha, seed=seed)
    return Significance(new.name, difference, seed, [n for n in new_cases if n not in old_cases],
                        [n for n in old_cases if n not in new_cases], unscored)


@dataclass
class RunComparison:
    """Every case change of the pipelines both runs have, and the pipelines only one run has.

    ``compared`` says which pipeline was compared with which: ``(name, previous path, current
    path)`` per pair, in the current run's order."""

    previous_created: str
    current_created: str
    pipelines: list[str]
    new_pipelines: list[str]
    gone_pipelines: list[str]
    cases: list[CaseChange]
    compared: list[tuple[str, str, str]] = field(default_factory=list)
    significance: list[Significance] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Cases per kind of change (every kind, 0 included)."""
        out = dict.fromkeys(KINDS, 0)
        for c in self.cases:
            out[c.kind] += 1
        return out

    def step_counts(self) -> dict[str, int]:
        """Steps per kind of change, over every compared case (every kind, 0 included)."""
        out = dict.fromkeys(KINDS, 0)
        for c in self.cases:
            for s in c.steps:
                out[s.kind] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"previous_created": self.previous_created, "current_created": self.current_created,
                "pipelines": list(self.pipelines),
                "compared": [{"name": n, "previous_path": old, "current_path": new} for n, old, new in self.compared],
                "new_pipelines": list(self.new_pipelines),
                "gone_pipelines": list(self.gone_pipelines), "counts": self.counts(),
                "step_counts": self.step_counts(), "significance": [s.to_dict() for s in self.significance],
                "cases": [c.to_dict() for c in self.cases]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, indent=1)


def _same_value(a: Any, b: Any) -> bool:
    return json.dumps(jsonable(a), sort_keys=True) == json.dumps(jsonable(b), sort_keys=True)


def _by_score(previous: Optional[float], current: Optional[float]) -> Optional[str]:
    if previous is None or current is None:
        return None if previous is current else "changed"
    if current > previous + SCORE_TOLERANCE:
        return "better"
    if current < previous - SCORE_TOLERANCE:
        return "worse"
    return None


def _step_change(name: str, before: Optional[StepScore], after: Optional[StepScore], old: CaseResult,
                 new: CaseResult) -> StepChange:
    if before is None or after is None:
        kind = "new" if before is None else "gone"
    elif (before.status == "ignored") != (after.status == "ignored"):
        kind = "changed"
    else:
        kind = _by_score(before.score, after.score) or (
            "same" if before.status == after.status and before.runner_status == after.runner_status
            and (name in old.actuals) == (name in new.actuals)
            and _same_value(old.actuals.get(name), new.actuals.get(name)) else "changed")
    return StepChange(name, kind, before.score if before else None, after.score if after else None,
                      before.status if before else None, after.status if after else None)


def _case_change(pipeline: str, old: Optional[CaseResult], new: Optional[CaseResult]) -> CaseChange:
    if old is None or new is None:
        case = new if old is None else old
        assert case is not None
        return CaseChange(pipeline, case.case_name, "new" if old is None else "gone",
                          old.overall_score if old else None, new.overall_score if new else None,
                          old.status if old else None, new.status if new else None)
    names = [s.step_name for s in new.step_scores]
    names += [s.step_name for s in old.step_scores if s.step_name not in names]
    steps = [_step_change(n, old.step_score(n), new.step_score(n), old, new) for n in names]
    if old.status != new.status:
        kind = "fixed" if old.status == "error" else "broken"
    elif new.status == "error":
        kind = "same" if old.error_message == new.error_message else "changed"
    else:
        kind = _by_score(old.overall_score, new.overall_score) or (
            "same" if all(s.kind == "same" for s in steps) else "changed")
    return CaseChange(pipeline, new.case_name, kind, old.overall_score, new.overall_score, old.status, new.status,
                      steps)


def _keyed(names: list[str]) -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        out.append((n, seen.get(n, 0)))
        seen[n] = seen.get(n, 0) + 1
    return out


def compare_summaries(previous: BenchmarkSummary, current: BenchmarkSummary, *,
                      resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES, alpha: float = 0.05, seed: Any = 0) -> RunComparison:
    """The changes from ``previous`` to ``current`` (module docstring), cases in the current
    run's order, then the cases that are gone; per pipeline pair its :class:`Significance`
    (``resamples``, ``alpha`` and ``seed`` of the bootstrap)."""
    for name, value in (("previous", previous), ("current", current)):
        if not isinstance(value, BenchmarkSummary):
            raise TypeError(f"{name} must be a BenchmarkSummary, not {type(value).__name__}")
    old_keys = dict(zip(_keyed([p.name for p in previous.pipelines]), previous.pipelines))
    new_keys = dict(zip(_keyed([p.name for p in current.pipelines]), current.pipelines))
    pairs = [(key, old_keys[key], pipe) for key, pipe in new_keys.items() if key in old_keys]
    paired_new, paired_old = {id(new) for _, _, new in pairs}, {id(old) for _, old, _ in pairs}
    cases: list[CaseChange] = []
    for _, old_pipe, pipe in pairs:
        old_cases = {c.case_name: c for c in old_pipe.cases}
        new_cases = {c.case_name: c for c in pipe.cases}
        cases += [_case_change(pipe.name, old_cases.get(c.case_name), c) for c in pipe.cases]
        cases += [_case_change(pipe.name, c, None) for c in old_pipe.cases if c.case_name not in new_cases]
    return RunComparison(previous.created, current.created, [new.name for _, _, new in pairs],
                         [p.name for p in current.pipelines if id(p) not in paired_new],
                         [p.name for p in previous.pipelines if id(p) not in paired_old], cases,
                         [(new.name, old.pipeline_path, new.pipeline_path) for _, old, new in pairs],
                         [_significance(old, new, resamples, alpha, seed) for _, old, new in pairs])


def comparison_section(comparison: RunComparison) -> Any:
    """The report section "Changes since the previous run": counts per kind, then every case that
    changed, worst first (broken, worse, gone, changed, new, better, fixed)."""
    from scorekit import report as rp

    def score(value: Optional[float], status: Optional[str]) -> str:
        if status is None:
            return "\u2014"
        return "error" if status == "error" else format_score(value)

    parts = [rp.note(f"Previous run: {comparison.previous_created}; this run: {comparison.current_created}.")]
    if comparison.compared:
        parts.append(rp.data_table("Pipelines compared (paired by name)",
                                   ["pipeline", "previous run's pipeline", "this run's pipeline"],
                                   [list(pair) for pair in comparison.compared]))
    else:
        parts.append(rp.note("No pipeline name is in both runs: nothing compared."))
    if comparison.new_pipelines or comparison.gone_pipelines:
        parts.append(rp.note("Pipelines only in this run: " + (", ".join(comparison.new_pipelines) or "none")
                             + ". Only in the previous run: " + (", ".join(comparison.gone_pipelines) or "none")
                             + "."))
    counts, step_counts = comparison.counts(), comparison.step_counts()
    parts.append(rp.data_table("Changes per kind", ["kind", "cases", "steps"],
                               [[k, counts[k], step_counts[k]] for k in KINDS]))
    if comparison.significance:
        parts.extend(_significance_parts(comparison.significance))
    changed = sorted((c for c in comparison.cases if c.kind != "same"), key=lambda c: KINDS.index(c.kind))
    if not changed:
        parts.append(rp.note("No case changed."))
        return rp.group("Changes since the previous run", parts)
    rows = []
    for c in changed[:MAX_CHANGE_ROWS]:
        delta = (c.current_score - c.previous_score
                 if c.current_score is not None and c.previous_score is not None else None)
        detail = "; ".join(f"{s.step} {s.kind}" + (f" {format_score(s.previous_score)} \u2192 "
                                                   f"{format_score(s.current_score)}"
                                                   if s.kind in ("better", "worse") else "")
                           for s in c.steps if s.kind != "same")
        rows.append([c.pipeline, c.case, c.kind, score(c.previous_score, c.previous_status),
                     score(c.current_score, c.current_status), format_delta(delta), detail])
    parts.append(rp.data_table("Cases that changed (worst first)",
                               ["pipeline", "case", "change", "previous", "current", "\u0394", "steps changed"], rows))
    if len(changed) > MAX_CHANGE_ROWS:
        parts.append(rp.note(f"{len(changed) - MAX_CHANGE_ROWS} more changed cases not listed."))
    return rp.group("Changes since the previous run", parts)


def _significance_parts(tests: list[Significance]) -> list[Any]:
    """The table "More than noise?" (one row per pipeline pair) and the cases each test left out."""
    from scorekit import report as rp

    rows, left_out = [], []
    for t in tests:
        d = t.difference
        if d is None:
            rows.append([t.pipeline, 0] + ["\u2014"] * 8)
        else:
            rows.append([t.pipeline, d.n, format_score(d.mean_b), format_score(d.mean_a),
                         rp.number_cell(d.mean_diff, format_delta(d.mean_diff)),
                         f"{format_delta(d.ci_low)} to {format_delta(d.ci_high)}", d.n_higher, d.n_lower, d.n_equal,
                         rp.number_cell(d.p_value, f"{d.p_value:.3g}")])
        for label, names in t.left_out():
            left_out.append(f"{t.pipeline}: {len(names)} case{'s' * (len(names) != 1)} {label}, not in the "
                            f"test: {', '.join(names[:50])}" + (" \u2026" if len(names) > 50 else "") + ".")
    confidence = next((t.difference.confidence for t in tests if t.difference is not None), 0.95)
    parts = [rp.data_table("More than noise? Mean case score, this run \u2212 previous run",
                           ["pipeline", "cases paired", "previous", "this run", "\u0394 (points)",
                            f"{confidence:.0%} interval of \u0394", "better", "worse", "same", "sign test p"], rows),
             rp.note("Cases are paired by name (an error case scores 0). The interval is a paired percentile "
                     "bootstrap of the mean difference; p is the exact two-sided sign test over the cases whose "
                     "score changed (scorekit.stats, docs/statistics.md).")]
    parts.extend(rp.note(text) for text in left_out)
    return parts
