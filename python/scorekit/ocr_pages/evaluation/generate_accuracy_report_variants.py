"""Score a folder of pages under each report variant and write one aggregate report per variant.

Pairs <stem>.csv in --predictions-dir (or an OCR file <stem>.xml, .hocr, .html: PAGE-XML, ALTO or
hOCR, detected by content) with <stem>.json in --annotations-dir by file name; only
matched pairs are evaluated (sorted by name) and the unmatched counts are reported on stderr.
Each page is classified once and then scored under every selected --variant (default: all four,
in the order listed under --variant). Writes accuracy_report_<variant>.json in --output-dir and
prints "<variant>: cer=… (N pages) -> PATH" per variant. --html writes the HTML report of the
first selected variant. Exit 1 when no pair matches or an input is unreadable or malformed, 2 on
a usage error (an output that is one of the inputs included).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from scorekit.ocr_pages.box_grouping.group import classify_rows, load_predicted_rows
from scorekit.ocr_pages.box_grouping.loading import AnnotationBox, PredictedRow, load_annotation_boxes
from scorekit.files import check_outputs, write_atomically
from scorekit.ocr_pages.cli import (IMAGE_SUFFIXES, RunError, UsageError, add_common, add_html, add_progress, check_open,
                                    config_inputs, files_by_stem, folder_outputs, main_for, open_report, output_folder,
                                    prediction_files, read_config, result_line, with_run_info)
from scorekit.ocr_pages.box_grouping.ocr_files import page_config
from scorekit.ocr_pages.config import PageKitConfig, resolve_config
from scorekit.ocr_pages.evaluation.prediction import evaluate_matches
from scorekit.ocr_pages.evaluation.reports import MAX_FAILURE_EXAMPLES, REPORT_VARIANTS, aggregate_reports, report_to_json
from scorekit.progress import progress_iter

__all__ = ["REPORT_VARIANTS", "add_variant_arguments", "check_variant_outputs", "main", "page_images", "score_variants",
           "selected_variants", "write_variant_reports"]

PROG = "ocr-pages-variants"


def score_variants(boxes: Sequence[AnnotationBox], rows: Sequence[PredictedRow], dropped_words: Any, *,
                   page_id: str, unit_level: str, coverage_threshold: float, variants: Sequence[str],
                   has_predictions: bool = True, max_examples: int = MAX_FAILURE_EXAMPLES,
                   unit: str = "char", config: Optional[PageKitConfig] = None) -> dict[str, dict]:
    """One page's report under each of ``variants`` (of ``config``), from a single classification
    of ``rows`` (equal to one ``evaluate_rows`` call per variant)."""
    config = resolve_config(config)
    matches = classify_rows(rows, boxes, coverage_threshold)
    return {v: evaluate_matches(boxes, matches, page_id=page_id, unit_level=unit_level,
                                filters=config.variant_map[v], coverage_threshold=coverage_threshold,
                                dropped_words=dropped_words, has_predictions=has_predictions,
                                max_examples=max_examples, unit=unit, config=config)
            for v in variants}


def _report_name(variant: str) -> str:
    return f"accuracy_report_{variant}.json"


def check_variant_outputs(out: Path, variants: Sequence[str], html: Optional[str], inputs: Iterable[Any]) -> None:
    """Check ``out/accuracy_report_<variant>.json`` of every variant and ``html`` against ``inputs``
    and each other (``scorekit.files.check_outputs``)."""
    check_outputs({"--html": html, **folder_outputs(out, map(_report_name, variants))}, list(inputs))


def write_variant_reports(out: Path, per_variant: Mapping[str, list[dict]], *, run_info: Mapping[str, Any],
                          inputs: Iterable[Any], html: Optional[str] = None,
                          max_examples: int = MAX_FAILURE_EXAMPLES, config: Optional[PageKitConfig] = None,
                          images: Optional[Mapping[str, Path]] = None,
                          boxes_of: Optional[Callable[[str], Sequence[AnnotationBox]]] = None) -> None:
    """Aggregate each variant's page reports, write ``out/accuracy_report_<variant>.json`` and print
    its result line; ``html`` gets the first variant's run report, with the boxes of the worst
    pages drawn over their scans when ``images`` (page id -> file; ``boxes_of(page_id)`` gives
    the boxes) is given. Every path is checked against ``inputs`` (see
    :func:`check_variant_outputs`) before anything is written."""
    inputs = list(inputs)
    check_variant_outputs(out, list(per_variant), html, inputs)
    reports = {v: with_run_info(aggregate_reports(pages, variant=v, max_examples=max_examples, config=config),
                                **run_info)
               for v, pages in per_variant.items()}
    if html and reports:
        from scorekit.ocr_pages.evaluation.html import page_overlays, write_run_report

        first = next(iter(reports))
        overlays = page_overlays(reports[first], images, boxes_of) if images and boxes_of else []
        write_run_report(html, reports[first], f"OCR pages: {first}", inputs, overlays)
    for v, report in reports.items():
        path = out / _report_name(v)
        write_atomically(path, report_to_json(report))
        print(result_line(v, report, path))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--predictions-dir", required=True,
                   help="folder of <page_id>.csv evaluation CSVs or <page_id>.xml/.hocr/.html OCR files")
    p.add_argument("--annotations-dir", required=True, help="folder of <page_id>.json annotation files")
    add_variant_arguments(p)


def add_variant_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of a command writing one aggregate per variant: ``--output-dir``, ``--unit-level``,
    ``--coverage-threshold``, ``--cer-unit``, ``--config``, ``--variant`` (``selected_variants`` reads it),
    ``--html``, ``--open``, ``--images-dir`` (``page_images``), ``--progress``."""
    p.add_argument("--output-dir", required=True, help="folder for accuracy_report_<variant>.json (created)")
    add_common(p)
    p.add_argument("--variant", action="append", default=None, metavar="NAME",
                   help=f"report variant (repeatable; default: every variant, by default {', '.join(REPORT_VARIANTS)}; "
                        "--config may define others)")
    add_html(p, "also write a self-contained HTML report (of the first selected variant) here")
    p.add_argument("--images-dir", default=None, metavar="DIR",
                   help="folder of <page_id>.png/.jpg/.gif page scans: the HTML report draws the boxes of the "
                        "worst pages over them, coloured by region CER (needs --html)")
    add_progress(p)


def page_images(args: argparse.Namespace) -> dict[str, Path]:
    """``--images-dir``'s scans by page id (none without it); without ``--html`` a ``UsageError``."""
    if args.images_dir is None:
        return {}
    if args.html is None:
        raise UsageError("--images-dir draws on the HTML report: give --html too")
    return files_by_stem(args.images_dir, IMAGE_SUFFIXES, "images")


def selected_variants(args: argparse.Namespace, config: Optional[PageKitConfig] = None) -> tuple[str, ...]:
    """``--variant`` in the order given, without repeats; every variant of ``config`` by default. A
    name ``config`` does not define is a ``UsageError``."""
    config = resolve_config(config)
    unknown = [v for v in args.variant or () if v not in config.variant_map]
    if unknown:
        raise UsageError(f"--variant: unknown variant {unknown[0]!r} (choose from {', '.join(config.variant_names)})")
    return tuple(dict.fromkeys(args.variant or config.variant_names))


def run(args: argparse.Namespace, prog: str = PROG) -> int:
    """The command; ``prog`` is the program name its warnings give."""
    config = read_config(args)
    variants = selected_variants(args, config)
    check_open(args)
    csvs = prediction_files(args.predictions_dir)
    jsons = files_by_stem(args.annotations_dir, (".json",), "annotations")
    pairs = sorted(set(csvs) & set(jsons))
    missing = sorted(set(jsons) - set(csvs))
    unmatched = sorted(set(csvs) - set(jsons))
    if missing:
        print(f"{prog}: warning: {len(missing)} annotation files have no predictions CSV", file=sys.stderr)
    if unmatched:
        print(f"{prog}: warning: {len(unmatched)} predictions CSVs match no annotation file", file=sys.stderr)
    if not pairs:
        raise RunError(f"no page has both {args.predictions_dir!r}/<id>.csv and {args.annotations_dir!r}/<id>.json")
    images = page_images(args)
    inputs = [csvs[s] for s in pairs] + [jsons[s] for s in pairs] + config_inputs(args) + list(images.values())
    with output_folder(args.output_dir) as out:
        check_variant_outputs(out, variants, args.html, inputs)
        per_variant: dict[str, list[dict]] = {v: [] for v in variants}
        for stem in progress_iter(pairs, args.progress, "pages"):
            scored_under = page_config(csvs[stem], config)
            rows, dropped = load_predicted_rows(csvs[stem], args.unit_level, config=scored_under)
            reports = score_variants(load_annotation_boxes(jsons[stem], stem), rows, dropped, page_id=stem,
                                     unit_level=args.unit_level, coverage_threshold=args.coverage_threshold,
                                     variants=variants, unit=args.cer_unit, config=scored_under)
            for v in variants:
                per_variant[v].append(reports[v])
        write_variant_reports(out, per_variant, inputs=inputs, html=args.html, config=config, images=images,
                              boxes_of=lambda stem: load_annotation_boxes(jsons[stem], stem),
                              run_info=dict(predictions_dir=args.predictions_dir, annotations_dir=args.annotations_dir,
                                            missing_prediction_pages=missing, unmatched_prediction_files=unmatched))
    open_report(args)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__)
    add_arguments(p)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    return main_for(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
