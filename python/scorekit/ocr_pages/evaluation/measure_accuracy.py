"""Score one page against its annotations with one filter set; print or write the page report.

Reads the page's annotation JSON (a Label Studio task or export, or a list of boxes) and its
evaluation CSV (or OCR file: PAGE-XML, ALTO or hOCR, detected by content), and prints the page
report JSON, or with --output writes it and prints one line
"<variant>: cer=… (1 pages) -> PATH" ("custom" when the filters are not a report variant). From a
Label Studio export of several tasks, the task whose id or image file stem is the page id is read
(--page-id, else the CSV file name without .csv). --html also writes the page's HTML report;
with --page-image it draws the boxes over the page's scan, coloured by region CER.
Exit 1 on an unreadable or malformed input, 2 on a usage error (unknown filter, threshold outside
(0, 1], an output that is one of the inputs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from scorekit.ocr_pages.box_grouping.group import load_predicted_rows
from scorekit.ocr_pages.box_grouping.ocr_files import page_config
from scorekit.ocr_pages.box_grouping.loading import load_annotation_boxes
from scorekit.files import check_outputs, write_atomically
from scorekit.ocr_pages.cli import (RunError, UsageError, add_common, add_html, check_open, config_inputs, filters_of,
                                    main_for, open_report, read_config, result_line)
from scorekit.ocr_pages.evaluation.prediction import evaluate_rows
from scorekit.ocr_pages.evaluation.reports import report_to_json

PROG = "ocr-pages-measure"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--annotations-json", required=True, help="the page's annotation JSON (Label Studio task)")
    p.add_argument("--predictions-csv", required=True,
                   help="the page's evaluation CSV, or its OCR file (PAGE-XML, ALTO or hOCR, detected by content)")
    add_common(p)
    p.add_argument("--filter", default="", metavar="LIST",
                   help="comma-separated filters (by default non-armenian, graphics, photo, image, header, "
                        "image-header; --config may define others); empty = none")
    p.add_argument("--page-id", default=None,
                   help="page id in the report, and the task read from an export of several Label Studio "
                        "tasks (its id or image file stem; default: the CSV file stem)")
    p.add_argument("--output", default=None, help="write the page report JSON here instead of stdout")
    add_html(p, "also write a self-contained HTML report here")
    p.add_argument("--page-image", default=None, metavar="IMAGE",
                   help="the page's scan (PNG, JPEG or GIF, in the boxes' pixel coordinates): the HTML report draws "
                        "the boxes over it, coloured by region CER (needs --html)")


def run(args: argparse.Namespace, prog: str = PROG) -> int:
    """The command run as ``prog`` (it prints no warning that would name it)."""
    if args.page_image is not None and args.html is None:
        raise UsageError("--page-image draws on the HTML report: give --html too")
    check_open(args)
    inputs = [args.annotations_json, args.predictions_csv, *config_inputs(args),
              *([] if args.page_image is None else [args.page_image])]
    check_outputs({"--output": args.output, "--html": args.html}, inputs)
    config = page_config(args.predictions_csv, read_config(args))
    filters = filters_of(args.filter, config)
    page_id = args.page_id if args.page_id is not None else Path(args.predictions_csv).stem
    boxes = load_annotation_boxes(args.annotations_json, page_id)
    rows, dropped = load_predicted_rows(args.predictions_csv, args.unit_level, config=config)
    report = evaluate_rows(boxes, rows, page_id=page_id, unit_level=args.unit_level, filters=filters,
                           coverage_threshold=args.coverage_threshold, dropped_words=dropped, unit=args.cer_unit,
                           config=config)
    text = report_to_json(report)
    if args.html:
        from scorekit.ocr_pages.evaluation.html import page_overlay, write_run_report

        overlays = [] if args.page_image is None else [page_overlay(report, page_id, boxes, _read_image(args.page_image))]
        write_run_report(args.html, report, f"OCR page {page_id}", inputs, overlays)
        open_report(args)
    if args.output:
        write_atomically(args.output, text)
        print(result_line(report["summary"]["variant"], report, args.output))
    else:
        sys.stdout.write(text)
    return 0


def _read_image(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise RunError(f"{path}: cannot read the page image ({exc.strerror or exc})") from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__)
    add_arguments(p)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    return main_for(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
