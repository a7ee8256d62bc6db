"""Aggregate page or aggregate report JSONs into one corpus report.

The --reports files are merged (they must agree on unit level, filters and coverage threshold,
share no page id and have been scored under --config, the built-in rules without it); the result,
with its run_info, is written to --output and one line "<variant>: cer=… (N pages) -> PATH" is
printed. --html also writes the HTML report. Exit 1 on an unreadable, malformed or inconsistent
report, 2 on a usage error (an output that is one of the reports included, a bad --config).
"""

from __future__ import annotations

import argparse
from typing import Any, Optional, Sequence

from scorekit.files import check_outputs, strict_json_loads, write_atomically
from scorekit.ocr_pages.cli import (RunError, add_config, add_html, add_progress, check_open, config_inputs, main_for,
                                    open_report, read_config, result_line,
                                    with_run_info)
from scorekit.ocr_pages.evaluation.reports import aggregate_reports, report_to_json
from scorekit.progress import progress_iter

PROG = "ocr-pages-overall"


def read_report(path: str) -> dict[str, Any]:
    """One report JSON; a malformed file raises ``RunError`` naming it."""
    try:
        with open(path, "rb") as fh:
            data = strict_json_loads(fh.read().decode("utf-8-sig"))
    except OSError as exc:
        raise RunError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise RunError(f"{path}: malformed report JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") not in ("page", "aggregate") or "summary" not in data:
        raise RunError(f"{path}: not a page or aggregate report")
    return data


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reports", nargs="+", required=True, metavar="FILE", help="page or aggregate report JSONs")
    p.add_argument("--output", required=True, help="where to write the aggregate report JSON")
    add_html(p, "also write a self-contained HTML report here")
    add_config(p)
    add_progress(p)


def run(args: argparse.Namespace, prog: str = PROG) -> int:
    """The command run as ``prog`` (it prints no warning that would name it)."""
    check_open(args)
    check_outputs({"--output": args.output, "--html": args.html}, [*args.reports, *config_inputs(args)])
    config = read_config(args)
    reports = [read_report(path) for path in progress_iter(args.reports, args.progress, "reports")]
    try:
        report = aggregate_reports(reports, config=config)
    except ValueError as exc:
        raise RunError(f"reports {', '.join(args.reports)} cannot be merged: {exc}") from None
    report = with_run_info(report)
    write_atomically(args.output, report_to_json(report))
    variant = report["summary"]["variant"]
    print(result_line(variant, report, args.output))
    if args.html:
        from scorekit.ocr_pages.evaluation.html import write_run_report

        write_run_report(args.html, report, f"OCR pages: {variant or 'custom'}", args.reports)
        open_report(args)
    return 0 if report["summary"]["page_count"] else 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__)
    add_arguments(p)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    return main_for(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
