"""The OCR-page command line, shared by the five entry-point modules and ``scorekit ocr-pages``.

Owns what every OCR-page command does the same way: the exit codes (0 ok; 1 a runtime error,
such as an unreadable or malformed file, or nothing evaluated; 2 a usage error, from argparse, or
an output path refused), one ``<prog>: error: …`` line on stderr naming the file, the progress
line of multi-page runs (on stderr, only when it is a terminal or with ``--progress always``),
the output folder of a run (removed again when a failed run leaves it empty), the aggregate's
``run_info``, and the registration of ``scorekit ocr-pages
convert|measure|variants|overall|evaluate-hf``. Every command checks all its outputs against all
its inputs with ``scorekit.files.check_outputs`` before any work and writes through
``scorekit.files.write_atomically``. Inputs are only read; outputs go only where the user points.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from scorekit.errors import ScorekitError
from scorekit.files import OutputPathError


#: ``scorekit ocr-pages <name>`` -> the module that implements it.
COMMANDS: dict[str, str] = {
    "convert": "scorekit.ocr_pages.convert_predictions_to_evaluation_csv",
    "measure": "scorekit.ocr_pages.evaluation.measure_accuracy",
    "variants": "scorekit.ocr_pages.evaluation.generate_accuracy_report_variants",
    "overall": "scorekit.ocr_pages.evaluation.measure_overall_accuracy",
    "evaluate-hf": "scorekit.ocr_pages.evaluate_from_hf",
}


class RunError(Exception):
    """A runtime failure reported as one line, exit status 1."""


class UsageError(Exception):
    """A usage error found after parsing (a bad --config, a filter or variant it does not define,
    --open without --html), reported as one line, exit status 2."""


def error_line(prog: str, message: Any) -> str:
    text = str(message).replace("\r", "\\r").replace("\n", "\\n")
    return f"{prog}: error: {text}"


def run_guarded(prog: str, body: Callable[[], int]) -> int:
    """``body()``'s status, or one error line and 1 when it raises a file or data error, 2 when an
    output path is refused."""
    try:
        return body()
    except KeyboardInterrupt:
        return 130
    except (OutputPathError, UsageError) as exc:
        print(error_line(prog, exc), file=sys.stderr)
        return 2
    except (RunError, ScorekitError, ValueError, TypeError) as exc:
        print(error_line(prog, exc), file=sys.stderr)
    except OSError as exc:
        where = f" {exc.filename!r}" if exc.filename else ""
        print(error_line(prog, f"{exc.strerror or exc}:{where}"), file=sys.stderr)
    except RecursionError:
        print(error_line(prog, "input nested too deeply"), file=sys.stderr)
    return 1


def main_for(prog: str, parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace, str], int],
             argv: Optional[Sequence[str]]) -> int:
    """Parse ``argv`` (usage errors: argparse's message, status 2) and run under ``prog``."""
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    return run_guarded(prog, lambda: run(args, prog))


# ------------------------------------------------------------------------------ argument types
def threshold_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return value


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer ``>= minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=None, metavar="FILE",
                   help="YAML or JSON file of corpus rules: watermark phrases, filters, variants, text rules "
                        "(default: the built-in ones; docs/ocr-pages.md)")


def read_config(args: argparse.Namespace) -> Any:
    """The ``PageKitConfig`` of ``--config`` (the default without it); a bad file is a ``UsageError``."""
    from scorekit.ocr_pages.config import DEFAULT_CONFIG, load_config

    if args.config is None:
        return DEFAULT_CONFIG
    try:
        return load_config(args.config)
    except ScorekitError as exc:
        raise UsageError(f"--config: {exc}") from None


def config_inputs(args: argparse.Namespace) -> list[str]:
    """The configuration file, as an input of the run (empty without ``--config``)."""
    return [] if args.config is None else [args.config]


def filters_of(text: str, config: Any) -> tuple[str, ...]:
    """``--filter``'s comma-separated names in ``config``'s canonical order; an unknown name is a ``UsageError``."""
    from scorekit.ocr_pages.evaluation.reports import canonical_filters

    try:
        return canonical_filters(text, config)
    except ValueError as exc:
        raise UsageError(f"--filter: {exc}") from None


def add_common(p: argparse.ArgumentParser, *, threshold: bool = True) -> None:
    """``--unit-level``, and for the commands that score pages (``threshold``) ``--coverage-threshold``,
    ``--cer-unit`` and ``--config``."""
    p.add_argument("--unit-level", choices=("word", "line"), default="word",
                   help="build rows from single words or from group_row lines (default word)")
    if threshold:
        p.add_argument("--coverage-threshold", type=threshold_arg, default=1.0,
                       help="share of a row's word centres a box must hold, in (0, 1] (default 1.0)")
        p.add_argument("--cer-unit", choices=("char", "grapheme"), default="char",
                       help="count CERs and lengths in code points (char, default) or in extended "
                            "grapheme clusters (grapheme)")
        add_config(p)


def add_html(p: argparse.ArgumentParser, help: str) -> None:
    """``--html REPORT`` (described by ``help``) and ``--open``; :func:`check_open` checks them."""
    p.add_argument("--html", default=None, metavar="REPORT", help=help)
    p.add_argument("--open", action="store_true", help="open the --html report in the web browser once it is written")


def check_open(args: argparse.Namespace) -> None:
    """Refuse ``--open`` without ``--html`` (there is no report to open), before any work."""
    if args.open and not args.html:
        raise UsageError("--open needs --html REPORT: there is no report to open")


def open_report(args: argparse.Namespace) -> None:
    """With ``--open``, show the ``--html`` report just written in the web browser."""
    if args.open:
        from scorekit.report import open_in_browser

        open_in_browser(args.html)


def add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress line on stderr (auto: when stderr is a terminal)")


# -------------------------------------------------------------------------------------- input
#: File name endings of a page's predictions in a folder: the evaluation CSV, or an OCR file
#: (PAGE-XML, ALTO, hOCR; the format is detected by content, not by the name).
PREDICTION_SUFFIXES = (".csv", ".xml", ".hocr", ".html", ".htm")
#: File name endings of a page's scan in ``--images-dir``.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".PNG", ".JPG", ".JPEG", ".GIF")


def files_by_stem(folder: str, suffixes: Sequence[str], what: str) -> dict[str, Path]:
    """``{page id: file}`` of the files ``<page id><suffix>`` in ``folder`` (``suffixes`` as
    written, in name order); a missing folder, or two files for one page id, is a ``RunError``
    naming them."""
    path = Path(folder)
    if not path.is_dir():
        raise RunError(f"{what} folder {folder!r} does not exist")
    found: dict[str, Path] = {}
    for p in sorted(path.iterdir()):
        if p.suffix in suffixes and p.is_file():
            if p.stem in found:
                raise RunError(f"page {p.stem!r} has two files in the {what} folder, {found[p.stem].name!r} and "
                               f"{p.name!r}; keep one")
            found[p.stem] = p
    return found


def prediction_files(folder: str) -> dict[str, Path]:
    """``{page id: file}`` of the predictions in ``folder`` (see ``PREDICTION_SUFFIXES``)."""
    return files_by_stem(folder, PREDICTION_SUFFIXES, "predictions")


# ------------------------------------------------------------------------------------- output
@contextlib.contextmanager
def output_folder(path: str) -> Iterator[Path]:
    """``path`` as the folder of a run's outputs: created (with its missing parents) when absent and
    removed again, while empty, when the run fails, so that a failed run leaves nothing behind."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutputPathError(f"output folder {path!r} is a file")
    created = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"cannot create output folder {path!r}: {exc.strerror or exc}") from None
    try:
        yield out
    except BaseException:
        for folder in created:  # the leaf first
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def folder_outputs(folder: Path, names: Iterable[str]) -> dict[str, Path]:
    """``{path text: path}`` of the files named ``names`` inside ``folder``, as ``check_outputs`` takes them."""
    return {str(folder / name): folder / name for name in names}


def with_run_info(report: dict[str, Any], **info: Any) -> dict[str, Any]:
    """``report`` with ``run_info`` placed right after ``kind`` (the schema's key order)."""
    import scorekit

    run_info = {"dataset": None, "hub_split": None, "split_filter": None, "predictions_dir": None,
                "annotations_dir": None, "package_version": scorekit.__version__,
                "missing_prediction_pages": [], "unmatched_prediction_files": []}
    run_info.update(info)
    run_info["missing_prediction_pages"] = sorted(run_info["missing_prediction_pages"])
    run_info["unmatched_prediction_files"] = sorted(run_info["unmatched_prediction_files"])[:1000]
    out: dict[str, Any] = {}
    for key, value in report.items():
        if key != "run_info":
            out[key] = value
        if key == "kind":
            out["run_info"] = run_info
    return out


def result_line(variant: Optional[str], report: dict[str, Any], path: Any) -> str:
    cer = report["summary"]["ocr_region_cer"]
    shown = "n/a" if cer is None else f"{cer:.4f}"
    return f"{variant or 'custom'}: cer={shown} ({report['summary']['page_count']} pages) -> {path}"


# ------------------------------------------------------------------------------ scorekit hook
def add_parser(sub: Any) -> None:
    """Register ``scorekit ocr-pages <command>``; each command module supplies its arguments."""
    p = sub.add_parser("ocr-pages", help="OCR page evaluation: convert, measure, variants, overall, evaluate-hf")
    commands = p.add_subparsers(dest="ocr_command", required=True)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        c = commands.add_parser(name, help=module.__doc__.splitlines()[0], description=module.__doc__)
        module.add_arguments(c)
        c.set_defaults(handler=_handler(f"scorekit ocr-pages {name}", module.run))


def _handler(prog: str, run: Callable[[argparse.Namespace, str], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` under ``prog``, the name the user typed, in its errors and warnings."""
    return lambda args: run_guarded(prog, lambda: run(args, prog))
