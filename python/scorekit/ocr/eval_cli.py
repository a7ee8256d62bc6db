"""``scorekit ocr-eval GT OCR [OCR …]``: OCR files or folders scored against ground truth.

Owns the command's options, its output paths check (``--json``/``--html`` against every input,
before any work), the progress line of a folder run and the printed summary. Scoring is
:mod:`scorekit.ocr.evaluate`'s, the page :mod:`scorekit.ocr.eval_report`'s. Errors (a missing or
unreadable file, an output that would overwrite an input) are one line and exit status 2, through
:func:`scorekit.cli.main`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["add_parser", "run"]

_LEVELS = ("region", "line", "word", "glyph")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "ocr-eval", help="CER/WER, bag-of-words WER and flexible character accuracy of OCR files or folders "
                         "(PAGE-XML, ALTO, hOCR, text) against ground truth; several OCR inputs are compared",
        epilog="Folders pair their files by name: the same file name, else the same stem (the name up to its "
               "first dot, so 0001.gt.xml pairs with 0001.tesseract.xml). Pages without a partner are listed. "
               "Totals are total edits over total length. See docs/ocr-eval.md.")
    p.add_argument("gt", metavar="GT", help="the ground truth: a file, or a folder of pages")
    p.add_argument("ocr", metavar="OCR", nargs="+",
                   help="the OCR output (a file, or a folder, as GT is); several: engines compared page by page")
    p.add_argument("--textequiv-level", choices=_LEVELS, default=None, metavar="LEVEL",
                   help="PAGE-XML level whose TextEquiv is read: region (the default, as dinglehopper), line, word "
                        "or glyph")
    p.add_argument("--metrics", default="cer,wer,bow",
                   help="comma-separated choice of cer, wer, bow (bag-of-words WER), fca (flexible character "
                        "accuracy, the costly one); default cer,wer,bow. CER and WER are always computed")
    p.add_argument("--json", metavar="FILE", default=None, help="write the figures as JSON to FILE")
    p.add_argument("--html", metavar="FILE", default=None, help="write the HTML report to FILE")
    p.add_argument("--open", action="store_true", help="open the HTML report in a web browser (needs --html)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress line on stderr for folders (auto: when stderr is a terminal)")
    p.set_defaults(handler=run)


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _print_summary(data: dict[str, Any]) -> None:
    engines = data.get("engines", [data])
    for e in engines:
        head = f"{e['ocr']}: " if len(engines) > 1 else ""
        parts = [f"CER {_fmt(e['cer'])} ({e['char_edits']:,} edits / {e['n_characters']:,} characters)",
                 f"WER {_fmt(e['wer'])} ({e['word_edits']:,} / {e['n_words']:,} words)"]
        if "bow_wer" in e:
            parts.append(f"bag-of-words WER {_fmt(e['bow_wer'])}")
        if "fca" in e:
            parts.append(f"FCA {_fmt(e['fca'])}")
        pages = f" over {len(e['pages']):,} pages" if "pages" in e else ""
        print(f"{head}{', '.join(parts)}{pages}")
    unpaired = data.get("unpaired")
    if unpaired:
        for item in unpaired["gt_only"]:
            print(f"unpaired: GT page {item['name']} has no partner in {', '.join(item['missing_in'])}")
        for engine, names in unpaired["ocr_only"].items():
            for name in names:
                print(f"unpaired: OCR page {name} in {engine} has no ground truth")
    for c in data.get("comparisons", ()):
        d = c["cer_difference"]
        if d is None:
            print(f"{c['a']} vs {c['b']}: no page with ground truth to compare")
            continue
        print(f"{c['a']} - {c['b']}: mean per-page CER difference {d['mean_diff']:+.4f} "
              f"(95% CI {d['ci_low']:+.4f} to {d['ci_high']:+.4f}) over {d['n']:,} pages; {c['a']} better on "
              f"{d['n_lower']:,}, {c['b']} better on {d['n_higher']:,}, equal on {d['n_equal']:,}; "
              f"sign test p = {d['p_value']:.4g}")
    if data.get("excluded_from_comparison"):
        print("left out of the comparison (empty ground truth): " + ", ".join(data["excluded_from_comparison"]))


def _no_blas_threads() -> None:
    """Keep NumPy's OpenBLAS from starting its thread pool on import: ocr-eval does no linear
    algebra, and on a 2-core machine the pool costs 0.06-0.09 s of CPU per process (measured in
    benches/RESULTS.md §16). Only before NumPy is loaded, and never over a count the user set."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def run(args: argparse.Namespace) -> int:
    _no_blas_threads()
    from scorekit.errors import InvalidValueError
    from scorekit.files import check_outputs, write_atomically
    from scorekit.ocr.evaluate import DIFFS_KEPT, evaluate, json_pieces, to_json
    from scorekit.progress import progress_printer

    if args.open and args.html is None:
        raise InvalidValueError("--open needs --html FILE (the report to open)")
    check_outputs({"--json": args.json, "--html": args.html}, inputs=[args.gt, *args.ocr])
    metrics = [m.strip() for m in args.metrics.split(",")]
    show = progress_printer(args.progress, "pages", rate=True)
    evaluation = evaluate(args.gt, args.ocr, level=args.textequiv_level, metrics=metrics,
                          keep_diffs=DIFFS_KEPT if args.html else 0, progress=show)
    data = to_json(evaluation)
    if args.json is not None:
        write_atomically(args.json, json_pieces(data))
    if args.html is not None:
        from scorekit.ocr.eval_report import build_report
        from scorekit.report import write_report

        write_report(args.html, build_report(evaluation), inputs=[args.gt, *args.ocr])
        if args.open:
            from scorekit.report import open_in_browser

            open_in_browser(args.html)
    _print_summary(data)
    sys.stdout.flush()
    return 0
