"""Score a Hugging Face OCR pages dataset against a folder of evaluation CSVs (the main command).

--dataset is a .parquet file, a folder saved by the datasets library (dataset_dict.json, or
state.json / dataset_info.json for one split), a folder of parquet shards (grouped into splits by
the file-name prefix: test-00000-of-00006.parquet is in split test) or a Hub dataset id (offline
once cached, with HF_HUB_OFFLINE=1). A path that does not exist is an error, never a Hub request:
owner/name whose owner is a local folder is such a path. Each row's annotations are the page's
boxes; <page_id>.csv in --predictions-dir is its evaluation CSV, or <page_id>.xml/.hocr/.html its
OCR file (PAGE-XML, ALTO or hOCR, detected by content); a page without one is scored as empty, or
skipped with --skip-missing. Each page is classified once and scored under every
--variant; accuracy_report_<variant>.json is written in --output-dir and one line
"<variant>: cer=… (N pages) -> PATH" printed per variant. The image column is never read. The
datasets library is optional (pip install scorekit[hf]): without it parquet inputs are read with
pyarrow. Exit 1 on an unreadable or malformed input or when no page is evaluated, 2 on a usage
error (an output that is one of the inputs included).
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence

from scorekit.errors import InvalidValueError
from scorekit.ocr_pages.box_grouping.group import load_predicted_rows
from scorekit.ocr_pages.box_grouping.loading import annotation_boxes_from_records
from scorekit.ocr_pages.box_grouping.ocr_files import page_config
from scorekit.ocr_pages.cli import (RunError, check_open, config_inputs, int_at_least, main_for, open_report, output_folder,
                                    prediction_files, read_config)
from scorekit.ocr_pages.config import PageKitConfig
from scorekit.ocr_pages.evaluation.generate_accuracy_report_variants import (add_variant_arguments,
                                                                             check_variant_outputs, page_images,
                                                                             score_variants, selected_variants,
                                                                             write_variant_reports)
from scorekit.ocr_pages.evaluation.reports import MAX_FAILURE_EXAMPLES
from scorekit.progress import progress_iter
from scorekit.registry import MissingExtraError, install_hint

# This module owns the dataset reading (load_hf_pages, HfPage) and the per-page work; scoring and
# report writing are shared with ocr-pages-variants (docs/ocr-pages.md).
__all__ = ["HfPage", "HfPages", "load_hf_pages", "main"]

PROG = "ocr-pages-evaluate-hf"
IMAGE_COLUMN = "image"
#: A shard's split is the file-name part before ``-<digits>``: ``test-00000-of-00006.parquet`` -> ``test``.
_SHARD_SPLIT = re.compile(r"^(?P<split>[^-]+)-\d")
#: What a Hub dataset id looks like (``name`` or ``owner/name``); anything else that does not exist is a bad path.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")
#: Splits or columns named, at most, in an error that lists them.
_MAX_LISTED = 20


@dataclass(frozen=True)
class HfPage:
    """One dataset row: the page id, its provenance and its raw ``annotations`` value (the
    ``image_*`` sizes are informational; nothing is clipped to them)."""

    page_id: str
    source: str
    split: Optional[str]
    image_width: Optional[int]
    image_height: Optional[int]
    annotations: Any


class HfPages(list):
    """The pages of :func:`load_hf_pages` (a plain list of :class:`HfPage`) plus ``hub_split``: the
    dataset split they were read from (``None`` for a folder holding one saved split)."""

    def __init__(self, pages: Iterable[HfPage] = (), hub_split: Optional[str] = None):
        super().__init__(pages)
        self.hub_split = hub_split


# ------------------------------------------------------------------------------ source resolution
def _parquet_groups(folder: Path, hub_split: str) -> dict[str, list[Path]]:
    groups: dict[str, list[Path]] = {}
    files = (p for p in folder.rglob("*.parquet") if p.is_file())
    for path in sorted(files, key=lambda p: (p.name, p.relative_to(folder).as_posix())):  # shard order
        match = _SHARD_SPLIT.match(path.name)
        groups.setdefault(match.group("split") if match else hub_split, []).append(path)
    return groups


def _resolve(src: str, hub_split: str) -> tuple[str, Any]:
    """``(kind, what)``: ``("parquet", {split: files})``, ``("disk", folder)`` or ``("hub", id)``."""
    path = Path(src)
    if path.is_file():
        if path.suffix.lower() != ".parquet":
            raise InvalidValueError(f"{src!r}: not a .parquet file (give a parquet file, a saved dataset folder, "
                                    "a folder of parquet files or a Hub dataset id)")
        return "parquet", {hub_split: [path]}
    if path.is_dir():
        if any((path / name).is_file() for name in ("dataset_dict.json", "state.json", "dataset_info.json")):
            return "disk", path
        groups = _parquet_groups(path, hub_split)
        if not groups:
            raise InvalidValueError(f"{src!r}: folder holds no dataset_dict.json, state.json, dataset_info.json "
                                    "or *.parquet file")
        return "parquet", groups
    if path.exists() or src.lower().endswith(".parquet") or not _HUB_ID.fullmatch(src) or ".." in src:
        raise InvalidValueError(f"{src!r}: not a parquet file, a dataset folder or a Hub dataset id")
    if "/" in src and path.parent.exists():  # owner/name whose owner is a local folder: a mistyped path
        raise InvalidValueError(f"{src!r}: no such file or folder ({str(path.parent)!r} exists here, so this is "
                                "read as a local path, not a Hub dataset id)")
    return "hub", src


def _pick_split(splits: Sequence[str], wanted: str, src: str) -> str:
    if wanted in splits:
        return wanted
    if len(splits) == 1:
        return splits[0]
    listed = ", ".join(map(repr, sorted(splits)[:_MAX_LISTED]))
    raise InvalidValueError(f"{src!r}: no split {wanted!r} (splits: {listed}); choose one with --hub-split")


def _has_datasets() -> bool:
    try:
        import datasets  # noqa: F401
    except ImportError:
        return False
    return True


def _rows_with_datasets(kind: str, what: Any, hub_split: str, src: str) -> tuple[list[str], Iterable[Mapping], Optional[str]]:
    import datasets

    try:
        if kind == "parquet":
            loaded = datasets.load_dataset("parquet", data_files={k: [str(p) for p in v] for k, v in what.items()})
        elif kind == "disk":
            loaded = datasets.load_from_disk(str(what))
        else:
            loaded = datasets.load_dataset(what)
    except Exception as exc:  # datasets raises many types (FileNotFoundError, DatasetNotFoundError, ArrowInvalid …)
        raise InvalidValueError(f"{src!r}: cannot load the dataset ({type(exc).__name__}: {exc})") from None
    split: Optional[str] = None
    if isinstance(loaded, Mapping):  # a DatasetDict
        split = _pick_split(list(loaded), hub_split, src)
        loaded = loaded[split]
    if IMAGE_COLUMN in loaded.column_names:
        loaded = loaded.remove_columns([IMAGE_COLUMN])  # no image is ever decoded
    return list(loaded.column_names), loaded, split


def _rows_with_pyarrow(groups: Mapping[str, list[Path]], hub_split: str, src: str) -> tuple[list[str], list[dict], str]:
    try:
        import pyarrow
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError(f"reading {src!r} needs the datasets or pyarrow package -- install them with:  "
                                f"{install_hint('hf')}") from None
    split = _pick_split(list(groups), hub_split, src)
    columns: list[str] = []
    rows: list[dict] = []
    for path in groups[split]:
        try:
            names = [n for n in pq.read_schema(path).names if n != IMAGE_COLUMN]
            rows.extend(pq.read_table(path, columns=names).to_pylist())
        except (OSError, ValueError, pyarrow.ArrowException) as exc:
            raise InvalidValueError(f"{str(path)!r}: not a readable parquet file ({exc})") from None
        columns += [n for n in names if n not in columns]
    return columns, rows, split


def _optional_int(value: Any, column: str, row: int, src: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise InvalidValueError(f"{src!r}: row {row}: {column} must be an integer, got {value!r}")
    return int(value)


def _page_id(value: Any, row: int, src: str) -> str:
    page_id = "" if value is None else str(value)
    if not page_id or page_id in (".", "..") or any(c in page_id for c in "/\\\0"):
        raise InvalidValueError(f"{src!r}: row {row}: page_id {value!r} cannot name a <page_id>.csv file")
    return page_id


def load_hf_pages(dataset: str, hub_split: str = "test", split_value: Optional[str] = None,
                  split_column: str = "split") -> HfPages:
    """The pages of an OCR pages dataset, in dataset order (the ``image`` column is never read).

    ``dataset`` is resolved, first match wins: a ``*.parquet`` file; a folder with
    ``dataset_dict.json`` (``datasets.load_from_disk``, split ``hub_split``); a folder with
    ``state.json`` or ``dataset_info.json`` (one saved split); a folder of ``**/*.parquet`` files
    grouped into splits by their name prefix (no prefix: ``hub_split``); else a Hub dataset id
    (``datasets.load_dataset``), unless it looks like a local path (not ``name`` or ``owner/name``,
    or an ``owner`` that is a local folder). When ``hub_split`` is absent and there is one split, that one is
    used. Without the ``datasets`` package, parquet inputs are read with ``pyarrow`` and the other
    sources raise :class:`~scorekit.registry.MissingExtraError`. ``split_value`` keeps the rows
    whose ``split_column`` equals it. Bad paths, unreadable files, missing columns, repeated page
    ids and ids that cannot name a file raise :class:`~scorekit.errors.InvalidValueError`.
    """
    kind, what = _resolve(dataset, hub_split)
    if _has_datasets():
        columns, rows, split = _rows_with_datasets(kind, what, hub_split, dataset)
    elif kind == "parquet":
        columns, rows, split = _rows_with_pyarrow(what, hub_split, dataset)
    else:
        source = "a saved dataset folder" if kind == "disk" else "a Hub dataset id"
        raise MissingExtraError(f"{dataset!r} is {source}, which needs the datasets package -- install it with:  "
                                f"{install_hint('hf')}")
    needed = ["page_id", "annotations"] + ([split_column] if split_value is not None else [])
    absent = [c for c in needed if c not in columns]
    if absent:
        listed = ", ".join(map(repr, columns[:_MAX_LISTED]))
        raise InvalidValueError(f"{dataset!r}: no column {absent[0]!r} (columns: {listed})")
    pages = HfPages(hub_split=split)
    seen: dict[str, int] = {}
    for k, row in enumerate(rows):
        raw_split = row.get(split_column)
        page_split = None if raw_split is None else str(raw_split)
        if split_value is not None and page_split != split_value:
            continue
        page_id = _page_id(row.get("page_id"), k, dataset)
        if page_id in seen:
            raise InvalidValueError(f"{dataset!r}: row {k}: page_id {page_id!r} repeats row {seen[page_id]}")
        seen[page_id] = k
        pages.append(HfPage(page_id, "" if row.get("source") is None else str(row["source"]), page_split,
                            _optional_int(row.get("image_width"), "image_width", k, dataset),
                            _optional_int(row.get("image_height"), "image_height", k, dataset),
                            row.get("annotations")))
    return pages


# ------------------------------------------------------------------------------------ scoring
@dataclass(frozen=True)
class _Settings:
    unit_level: str
    coverage_threshold: float
    variants: tuple[str, ...]
    max_examples: int
    unit: str
    config: PageKitConfig


def _score_page(settings: _Settings, task: tuple[HfPage, Optional[Path]]) -> dict[str, dict]:
    """Every variant's report of one page (run in a worker process when ``--workers`` > 1)."""
    page, csv_path = task
    boxes = annotation_boxes_from_records(page.annotations, source=f"page {page.page_id!r} annotations")
    config = page_config(csv_path, settings.config)
    rows, dropped = load_predicted_rows(csv_path, settings.unit_level, config=config) if csv_path is not None else ([], 0)
    return score_variants(boxes, rows, dropped, page_id=page.page_id, unit_level=settings.unit_level,
                          coverage_threshold=settings.coverage_threshold, variants=settings.variants,
                          has_predictions=csv_path is not None, max_examples=settings.max_examples,
                          unit=settings.unit, config=config)


def _score_pages(tasks: list[tuple[HfPage, Optional[Path]]], settings: _Settings, workers: int) -> Iterator[dict[str, dict]]:
    """The reports of ``tasks`` in task order, whatever order the workers finish in."""
    work = functools.partial(_score_page, settings)
    if workers <= 1 or len(tasks) <= 1:
        yield from map(work, tasks)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn: a forked child would inherit the parent's kernel thread pools in an unusable state
    with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            yield from pool.map(work, tasks)
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise


# ---------------------------------------------------------------------------------- arguments
def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", required=True, metavar="SRC",
                   help="a .parquet file, a saved dataset folder, a folder of parquet files or a Hub dataset id")
    p.add_argument("--predictions-dir", required=True,
                   help="folder of <page_id>.csv evaluation CSVs or <page_id>.xml/.hocr/.html OCR files")
    add_variant_arguments(p)
    p.add_argument("--dataset-split-column", default=None, metavar="VALUE",
                   help="keep only the rows whose split column equals VALUE (e.g. pilot)")
    p.add_argument("--split-column-name", default="split", metavar="NAME",
                   help="the column --dataset-split-column filters on (default split)")
    p.add_argument("--hub-split", default="test", metavar="NAME",
                   help="the dataset split to read (default test; a dataset with one split uses it)")
    p.add_argument("--skip-missing", action="store_true",
                   help="skip pages without a CSV (default: score them as empty predictions)")
    p.add_argument("--max-failure-examples", type=int_at_least(0), default=MAX_FAILURE_EXAMPLES, metavar="N",
                   help=f"failure examples kept per report (default {MAX_FAILURE_EXAMPLES})")
    p.add_argument("--workers", type=int_at_least(1), default=1, metavar="N",
                   help="score pages in N processes (default 1; the reports are the same)")


def _named(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:5])
    return shown + (", …" if len(ids) > 5 else "")


def _dataset_files(src: str) -> list[Path]:
    """The local files the dataset may be read from (each file of a folder: a hard link of one is
    refused as an output too)."""
    path = Path(src)
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []


def run(args: argparse.Namespace, prog: str = PROG) -> int:
    """The command; ``prog`` is the program name its warnings give."""
    config = read_config(args)
    variants = selected_variants(args, config)
    check_open(args)
    csvs = prediction_files(args.predictions_dir)
    images = page_images(args)
    inputs = _dataset_files(args.dataset) + list(csvs.values()) + config_inputs(args) + list(images.values())
    with output_folder(args.output_dir) as out:  # removed again when the run fails: it writes nothing
        check_variant_outputs(out, variants, args.html, inputs)
        return _evaluate(args, config, variants, csvs, images, out, inputs, prog)


def _evaluate(args: argparse.Namespace, config: PageKitConfig, variants: tuple[str, ...], csvs: Mapping[str, Path],
              images: Mapping[str, Path], out: Path, inputs: list[Any], prog: str) -> int:
    """Read the pages, score them and write the reports (the outputs are already checked)."""
    pages = load_hf_pages(args.dataset, args.hub_split, args.dataset_split_column, args.split_column_name)
    if not pages:
        where = (f" with {args.split_column_name} == {args.dataset_split_column!r}"
                 if args.dataset_split_column is not None else "")
        raise RunError(f"no page in {args.dataset!r}{where}")
    missing = [p.page_id for p in pages if p.page_id not in csvs]
    unmatched = sorted(set(csvs) - {p.page_id for p in pages})
    if missing:
        what = "skipped" if args.skip_missing else "scored as empty predictions"
        print(f"{prog}: warning: {len(missing)} pages have no predictions CSV ({what}): {_named(missing)}",
              file=sys.stderr)
    if unmatched:
        print(f"{prog}: warning: {len(unmatched)} predictions CSVs match no page: {_named(unmatched)}", file=sys.stderr)
    tasks = [(p, csvs.get(p.page_id)) for p in pages if p.page_id in csvs or not args.skip_missing]
    if not tasks:
        raise RunError(f"no page evaluated: none of the {len(pages)} pages has a CSV in {args.predictions_dir!r}")
    settings = _Settings(args.unit_level, args.coverage_threshold, variants, args.max_failure_examples, args.cer_unit,
                         config)
    per_variant: dict[str, list[dict]] = {v: [] for v in variants}
    for reports in progress_iter(_score_pages(tasks, settings, args.workers), args.progress, "pages", total=len(tasks)):
        for v in variants:
            per_variant[v].append(reports[v])
    run_info = dict(dataset=args.dataset, hub_split=pages.hub_split, split_filter=args.dataset_split_column,
                    predictions_dir=args.predictions_dir, missing_prediction_pages=missing,
                    unmatched_prediction_files=unmatched)
    by_id = {p.page_id: p for p in pages}
    write_variant_reports(out, per_variant, run_info=run_info, inputs=inputs, html=args.html,
                          max_examples=args.max_failure_examples, config=config, images=images,
                          boxes_of=lambda pid: annotation_boxes_from_records(
                              by_id[pid].annotations, source=f"page {pid!r} annotations"))
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
