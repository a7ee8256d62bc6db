"""``scorekit cases``: benchmark pipelines over a folder of cases, or re-render a saved summary.

``scorekit cases DIR -p PIPELINE [-p …]`` runs every case of ``DIR`` through each pipeline
(:func:`~scorekit.cases.pipelines.resolve_pipeline` names them), prints per pipeline one line per
step (``Step '<s>'  accuracy: X%  pass rate: Y% (threshold: Z%)``) and ``Overall accuracy: X%``,
writes the HTML report (``Report written to: <path>``) and, with ``--json``, the summary.
``scorekit cases --from-summary S.json`` renders the report of a saved summary instead.

Exit status: 0 when the run completes, whatever the scores; 1 for configuration problems (all of
them listed, no traceback), for "no cases found" and when PDF support is missing (checked before
the run); 2 for usage errors (a threshold outside [0, 1], an unknown section, conflicting options)
and for a bad ``--comparators`` file (an unknown name or option, a path that matches nothing).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from pathlib import Path
from typing import Any, Optional, TextIO

from scorekit.files import check_outputs, write_atomically
from scorekit.progress import progress_printer

__all__ = ["add_parser", "format_percent", "missing_steps_text", "print_summary"]

DEFAULT_REPORT = "benchmark_report.html"
DEFAULT_TITLE = "Pipeline Benchmark Report"
#: Skipped directories listed on stderr (the rest are counted; --json and the report list all).
MAX_SKIPPED_SHOWN = 20


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def add_parser(sub: Any) -> None:
    """Register ``scorekit cases``."""
    p = sub.add_parser(
        "cases", help="benchmark extraction pipelines over a folder of cases (per-step accuracy, HTML report)",
        description="Run every case of DIR (one sub-folder per case with input.json|yaml and expected.json|yaml) "
                    "through each pipeline, score every step, print the accuracy and write an HTML report; "
                    "or render the report of a saved summary (--from-summary).",
        epilog="Pipelines: py:module:function (a Python callable), cmd:COMMAND (a program reading the input JSON on "
               "stdin and writing a JSON object of step outputs on stdout; no shell), sh:COMMAND (the same through "
               "/bin/sh), saved:DIR (DIR/<case>.json per case), pyconveyor:FILE.yaml. Without a prefix: a folder is "
               "saved outputs, a .yaml/.yml file a pyconveyor pipeline, an executable file a command, and "
               "module:function a Python callable. Exit status: 0 when the run completes, 1 for configuration "
               "problems or no cases, 2 for usage errors.")
    p.add_argument("benchmark_dir", nargs="?", metavar="DIR", help="the benchmark folder: one sub-folder per case")
    p.add_argument("-p", "--pipeline", action="append", dest="pipelines", metavar="PIPELINE", default=[],
                   help="a pipeline to run; repeat for several (the first is the baseline)")
    p.add_argument("--from-summary", metavar="SUMMARY.json", default=None,
                   help="render the report of a summary saved with --json instead of running (no DIR, no -p)")
    p.add_argument("-r", "--report", default=DEFAULT_REPORT, metavar="PATH",
                   help=f"the HTML report to write (default {DEFAULT_REPORT}; overwritten)")
    p.add_argument("--pdf", action="store_true", help="also write the report as PDF beside it (needs WeasyPrint)")
    p.add_argument("--open", action="store_true", help="open the HTML report in the web browser once it is written")
    p.add_argument("--pass-threshold", type=_threshold, default=None, metavar="T",
                   help="score a case needs to pass, in [0, 1] (default 1.0; with --from-summary: the saved one)")
    p.add_argument("--sections", nargs="+", default=None, metavar="SECTION",
                   help="report sections, space- or comma-separated (default: all but attempt_logs)")
    p.add_argument("--title", default=DEFAULT_TITLE, help=f"the report's title (default {DEFAULT_TITLE!r})")
    p.add_argument("--matching", choices=("greedy", "optimal"), default="greedy",
                   help="pairing of the items of dict lists: greedy (default, the documented order) or optimal")
    p.add_argument("--missing-steps", choices=("exclude", "fail"), default=None,
                   help="a step the pipeline gave no output for: left out of its case's score (exclude, the "
                        "default) or scored 0 (fail); counted either way (with --from-summary: the saved rule)")
    p.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                   help="worker processes running cases in parallel (default 1: in this process)")
    p.add_argument("--timeout", type=_seconds, default=None, metavar="S",
                   help="seconds one case's pipeline run may take; a case running longer is an error")
    p.add_argument("--json", metavar="PATH", default=None,
                   help="also write the summary as JSON to PATH ('-': standard output, the console text going to stderr)")
    p.add_argument("--compare", metavar="PREVIOUS.json", default=None,
                   help="a summary saved by an earlier run: the report marks what got better, worse or changed")
    p.add_argument("--comparators", metavar="FILE", default=None,
                   help="a YAML or JSON file mapping field paths (extract.total; * for any key or list position: "
                        "extract.line_items.*.qty) to a comparator: exact, casefold, fuzzy, numeric, date, set, or a "
                        "mapping with options such as {name: numeric, abs: 0.01}")
    p.add_argument("--allow-external-files", action="store_true",
                   help="let $file references leave their case folder (off: refused as a configuration error)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress line on stderr (auto: when stderr is a terminal)")
    p.set_defaults(handler=run_command)


def format_percent(value: Optional[float]) -> str:
    """A score as a percentage with one decimal, rounded down (``99.95%`` shows ``99.9%``, so
    ``100.0%`` only ever means a perfect score); ``—`` for no score."""
    if value is None:
        return "—"
    return f"{math.floor(value * 1000 + 1e-9) / 10:.1f}%"


def _threshold_text(threshold: float) -> str:
    return f"{threshold * 100:g}%"


def print_summary(summary: Any, out: TextIO) -> None:
    """The console lines of a summary: per pipeline, its steps and its overall accuracy."""
    t = summary.pass_threshold
    cases = len(summary.case_names)
    passed_missing = summary.passed_with_missing_steps
    print(f"Benchmark complete \u2014 {cases} case{'s' * (cases != 1)}, {len(summary.pipelines)} "
          f"pipeline{'s' * (len(summary.pipelines) != 1)}"
          + (f" \u2014 {_passed_with_missing(passed_missing)}" if passed_missing else ""), file=out)
    for p in summary.pipelines:
        print(f"\nPipeline: {p.name}", file=out)
        for step, accuracy in p.step_mean_accuracy.items():
            print(f"  Step '{step}'  accuracy: {format_percent(accuracy)}  "
                  f"pass rate: {format_percent(p.step_pass_rate.get(step))} (threshold: {_threshold_text(t)})", file=out)
        print(f"  Overall accuracy: {format_percent(p.overall_mean_accuracy)}", file=out)
        passed = sum(1 for c in p.cases if c.passed(t))
        counted = len(p.cases) - p.unscored_count
        extra = f", {p.unscored_count} with no scored steps" if p.unscored_count else ""
        print(f"  Pass rate: {format_percent(p.overall_pass_rate)} ({passed}/{counted} cases)  "
              f"errors: {p.error_count}/{len(p.cases)}{extra}", file=out)
        if p.missing_step_count:
            print(f"  {missing_steps_text(p, summary.missing_steps)}", file=out)


def _passed_with_missing(count: int) -> str:
    return f"{count} case{'s' * (count != 1)} passed with missing steps"


def missing_steps_text(p: Any, rule: str) -> str:
    """The line that counts a pipeline's missing steps (the console's and the report's)."""
    steps, cases = p.missing_step_count, p.cases_with_missing_steps
    how = "scored 0 in" if rule == "fail" else "left out of"
    return (f"Missing steps: {steps} step{'s' * (steps != 1)} in {cases} case{'s' * (cases != 1)} "
            f"({how} the case scores), {_passed_with_missing(p.passed_with_missing_steps)}")


def _sections(values: Optional[list[str]]) -> Optional[list[str]]:
    if values is None:
        return None
    from scorekit.cases.report import SECTIONS
    from scorekit.cli import CliError

    names = [n for v in values for n in v.replace(",", " ").split()]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        raise CliError(f"unknown report section {unknown[0]!r} (the sections are {', '.join(SECTIONS)})")
    return names


def _config_error(message: str, status: int = 1) -> int:
    print(f"scorekit cases: {message}", file=sys.stderr)
    return status


def _check_usage(args: argparse.Namespace) -> None:
    from scorekit.cli import CliError

    if args.from_summary is not None:
        if args.benchmark_dir is not None or args.pipelines:
            raise CliError("--from-summary renders a saved summary: give no DIR and no -p")
        for flag, default in (("jobs", 1), ("timeout", None), ("matching", "greedy"), ("allow_external_files", False),
                              ("comparators", None)):
            if getattr(args, flag) != default:
                raise CliError(f"--{flag.replace('_', '-')} applies to a run, not to --from-summary")
    elif args.benchmark_dir is None:
        raise CliError("give the benchmark folder DIR (or --from-summary SUMMARY.json)")
    elif not args.pipelines:
        raise CliError("give at least one pipeline with -p PIPELINE")
    report_dir = Path(args.report).parent
    if not report_dir.is_dir():
        raise CliError(f"--report {args.report!r}: folder {str(report_dir)!r} does not exist")
    if args.json not in (None, "-") and not Path(args.json).parent.is_dir():
        raise CliError(f"--json {args.json!r}: folder {str(Path(args.json).parent)!r} does not exist")


def _rescore(summary: Any, threshold: Optional[float], missing_steps: Optional[str]) -> None:
    """A saved summary under another pass threshold or missing-step rule (``None``: the saved one)."""
    from scorekit.cases.results import aggregate_pipeline, case_score

    if missing_steps is not None and missing_steps != summary.missing_steps:
        summary.missing_steps = missing_steps
        summary.comparison = None  # it compared the case scores this rule changes
        for p in summary.pipelines:
            for case in p.cases:
                if case.status == "success":
                    case.overall_score = case_score(case.step_scores, missing_steps)
    elif threshold is None or threshold == summary.pass_threshold:
        return
    if threshold is not None:
        summary.pass_threshold = threshold
    for p in summary.pipelines:
        aggregate_pipeline(p, summary.pass_threshold)


def run_command(args: argparse.Namespace) -> int:
    """Run ``scorekit cases`` (module docstring); the exit status."""
    from scorekit.cases.errors import CasesConfigError, ComparatorConfigError
    from scorekit.cases.results import BenchmarkSummary

    _check_usage(args)
    sections = _sections(args.sections)
    if args.pdf:
        from scorekit.cases.report import require_pdf_support

        try:
            require_pdf_support()
        except ImportError as exc:
            return _config_error(str(exc))
    previous = None
    if args.compare is not None:
        try:
            previous = BenchmarkSummary.from_json(args.compare)
        except (OSError, ValueError) as exc:
            return _config_error(f"--compare {args.compare!r}: {getattr(exc, 'strerror', None) or exc}")
    out = sys.stderr if args.json == "-" else sys.stdout
    inputs: list["str | Path"] = [args.compare] if args.compare else []
    runner = None
    if args.from_summary is not None:
        try:
            summary = BenchmarkSummary.from_json(args.from_summary)
        except (OSError, ValueError) as exc:
            return _config_error(f"--from-summary {args.from_summary!r}: {getattr(exc, 'strerror', None) or exc}")
        inputs.append(args.from_summary)
        _rescore(summary, args.pass_threshold, args.missing_steps)
    else:
        from scorekit.cases.comparators import load_comparators
        from scorekit.cases.runner import BenchmarkRunner

        comparators = None
        if args.comparators is not None:
            try:
                comparators = load_comparators(args.comparators)
            except ComparatorConfigError as exc:
                return _config_error(str(exc), 2)
            inputs.append(args.comparators)
        if os.getcwd() not in sys.path:  # module:function pipelines from the current folder, as `python -m` finds them
            sys.path.insert(0, os.getcwd())
        threshold = 1.0 if args.pass_threshold is None else args.pass_threshold
        discovery_log = logging.getLogger("scorekit.cases.discovery")
        was_disabled, discovery_log.disabled = discovery_log.disabled, True  # the skips are printed below, once
        try:
            runner = BenchmarkRunner(args.benchmark_dir, args.pipelines, comparators, pass_threshold=threshold,
                                     matching=args.matching, jobs=args.jobs, timeout=args.timeout,
                                     allow_external_files=args.allow_external_files,
                                     missing_steps=args.missing_steps or "exclude",
                                     progress=progress_printer(args.progress, "cases"))
        except CasesConfigError as exc:
            return _config_error(str(exc), 2 if isinstance(exc, ComparatorConfigError) else 1)
        finally:
            discovery_log.disabled = was_disabled
        for skipped in runner.skipped[:MAX_SKIPPED_SHOWN]:
            print(f"scorekit cases: warning: skipped {skipped.name!r}: {skipped.reason}", file=sys.stderr)
        if len(runner.skipped) > MAX_SKIPPED_SHOWN:
            print(f"scorekit cases: warning: … and {len(runner.skipped) - MAX_SKIPPED_SHOWN} more skipped directories",
                  file=sys.stderr)
        if not runner.cases:
            return _config_error(f"no cases found in {args.benchmark_dir!r} (a case is a sub-folder with "
                                 "input.json|yaml|yml and expected.json|yaml|yml)")
        inputs.extend(runner.input_paths())
    # every output against everything the run reads and against each other, before any case runs
    check_outputs({"--report": args.report, "--pdf": Path(args.report).with_suffix(".pdf") if args.pdf else None,
                   "--json": None if args.json == "-" else args.json}, inputs)
    if runner is not None:
        summary = runner.run()
    comparison = None
    if previous is not None:
        from scorekit.cases.compare import compare_summaries

        comparison = compare_summaries(previous, summary)
        summary.comparison = comparison.to_dict()
    print_summary(summary, out)
    if args.json is not None:
        text = summary.to_json()
        if args.json == "-":
            print(text)
        else:
            write_atomically(args.json, text + "\n")
    from scorekit.cases.report import generate_report

    written = generate_report(summary, args.report, sections, title=args.title, pdf=args.pdf, previous=previous,
                              inputs=inputs)
    if comparison is not None:
        counts = comparison.counts()
        changes = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n and kind != "same") or "no change"
        if not comparison.pipelines:
            changes = "no pipeline in common, nothing compared"
        for label, names in (("only in this run", comparison.new_pipelines),
                             ("only in the previous run", comparison.gone_pipelines)):
            if names:
                changes += f"; {label}: {', '.join(names)}"
        print(f"\nSince {args.compare}: {changes}", file=out)
        for test in comparison.significance:
            print(f"  {test.text()}", file=out)
    print(f"\nReport written to: {written}", file=out)
    if args.pdf:
        print(f"PDF written to:    {Path(written).with_suffix('.pdf')}", file=out)
    if args.open:
        from scorekit.report import open_in_browser

        open_in_browser(written)
    return 0
