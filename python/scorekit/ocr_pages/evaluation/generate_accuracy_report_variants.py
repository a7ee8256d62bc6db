"""Score a folder of pages under each report variant and write one aggregate report per variant.

Pairs ``--predictions-dir/<stem>.csv`` with ``--annotations-dir/<stem>.json`` by file stem; only
matched pairs are evaluated (sorted by stem) and the unmatched counts go to stderr. Each page is
classified once and then scored under every selected ``--variant`` (default: all, in
``REPORT_VARIANTS`` order). Writes ``--output-dir/accuracy_report_<variant>.json`` and prints
``<variant>: cer=… (N pages) -> PATH`` per variant. ``--html`` writes the HTML report of the
first selected variant. Exit 1 when no pair matches or an input is unreadable or malformed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from scorekit.ocr_pages.box_grouping.group import classify_rows, load_predicted_rows
from scorekit.ocr_pages.box_grouping.loading import load_annotation_boxes
from scorekit.ocr_pages.cli import (RunError, add_common, add_progress, main_for, make_output_dir, progress,
                                    result_line, with_run_info, write_text_atomic)
from scorekit.ocr_pages.evaluation.prediction import evaluate_matches
from scorekit.ocr_pages.evaluation.reports import REPORT_VARIANTS, aggregate_reports, report_to_json

__all__ = ["REPORT_VARIANTS", "main"]

PROG = "ocr-pages-variants"


def _stems(folder: str, suffix: str, what: str) -> dict[str, Path]:
    path = Path(folder)
    if not path.is_dir():
        raise RunError(f"{what} folder {folder!r} does not exist")
    return {p.stem: p for p in sorted(path.glob(f"*{suffix}")) if p.is_file()}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--predictions-dir", required=True, help="folder of <page_id>.csv evaluation CSVs")
    p.add_argument("--annotations-dir", required=True, help="folder of <page_id>.json annotation files")
    p.add_argument("--output-dir", required=True, help="folder for accuracy_report_<variant>.json (created)")
    add_common(p)
    p.add_argument("--variant", action="append", choices=tuple(REPORT_VARIANTS), default=None,
                   help="report variant (repeatable; default: all four)")
    p.add_argument("--html", default=None, metavar="REPORT",
                   help="also write a self-contained HTML report (of the first selected variant) here")
    add_progress(p)


def run(args: argparse.Namespace) -> int:
    variants = list(dict.fromkeys(args.variant or REPORT_VARIANTS))
    csvs = _stems(args.predictions_dir, ".csv", "predictions")
    jsons = _stems(args.annotations_dir, ".json", "annotations")
    pairs = sorted(set(csvs) & set(jsons))
    missing = sorted(set(jsons) - set(csvs))
    unmatched = sorted(set(csvs) - set(jsons))
    if missing:
        print(f"{PROG}: warning: {len(missing)} annotation files have no predictions CSV", file=sys.stderr)
    if unmatched:
        print(f"{PROG}: warning: {len(unmatched)} predictions CSVs match no annotation file", file=sys.stderr)
    if not pairs:
        raise RunError(f"no page has both {args.predictions_dir!r}/<id>.csv and {args.annotations_dir!r}/<id>.json")
    out = make_output_dir(args.output_dir)
    per_variant: dict[str, list[dict]] = {v: [] for v in variants}
    for stem in progress(pairs, args.progress):
        boxes = load_annotation_boxes(jsons[stem])
        rows, dropped = load_predicted_rows(csvs[stem], args.unit_level)
        matches = classify_rows(rows, boxes, args.coverage_threshold)
        for v in variants:
            per_variant[v].append(evaluate_matches(
                boxes, matches, page_id=stem, unit_level=args.unit_level, filters=REPORT_VARIANTS[v],
                coverage_threshold=args.coverage_threshold, dropped_words=dropped))
    inputs = [csvs[s] for s in pairs] + [jsons[s] for s in pairs]
    for k, v in enumerate(variants):
        report = with_run_info(aggregate_reports(per_variant[v], variant=v),
                               predictions_dir=args.predictions_dir, annotations_dir=args.annotations_dir,
                               missing_prediction_pages=missing, unmatched_prediction_files=unmatched)
        path = out / f"accuracy_report_{v}.json"
        write_text_atomic(path, report_to_json(report), inputs=inputs)
        print(result_line(v, report, path))
        if k == 0 and args.html:
            from scorekit.ocr_pages.evaluation.html import write_run_report

            write_run_report(args.html, report, f"OCR pages: {v}", inputs)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__)
    add_arguments(p)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    return main_for(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
