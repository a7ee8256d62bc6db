"""``scorekit eval-table``: corpus CER/WER of two text columns of a Parquet file, or of a folder or
glob of Parquet shards read as one pyarrow dataset (docs/arrow-dask.md).

Owns the command's arguments, finding the shards (:func:`parquet_shards`), its checks of the
input (missing, not Parquet, no rows, no shards) and its output (a summary line per slice, the rows
in no slice and the null cells, or ``--json``; a NaN or infinite slice label is shown as its JSON
text, ``"NaN"``, in both); the scoring is :func:`scorekit.arrow.evaluate_arrow`, read row group by
row group (file by file) with a progress bar on stderr. Registered by ``scorekit.cli`` through
:func:`add_parser`; pyarrow (the ``arrow`` extra) is imported only when the command runs.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import sys
import time
from typing import Any, Optional

from scorekit.cli import _add_normalize, _finite, _normalize_arg
from scorekit.errors import InvalidValueError

__all__ = ["add_parser", "parquet_shards", "run"]


def add_parser(sub: Any) -> None:
    """Register ``scorekit eval-table FILE.parquet --pred COL --gold COL …``."""
    p = sub.add_parser("eval-table", help="corpus CER/WER of two text columns of a Parquet file, folder or glob",
                       epilog="The input is read row group by row group and never modified; a folder or glob of "
                              "Parquet shards is read as one dataset, files in natural order. With --json, an aggregate "
                              "with no reference unit is null, per_slice is a list of {slice, aggregate, n, "
                              "...counts} in first-appearance order (a NaN or infinite label is the text \"NaN\", "
                              "\"Infinity\" or \"-Infinity\", as the text report shows it), and unsliced counts "
                              "the rows whose slice label is null.")
    p.add_argument("file", metavar="FILE",
                   help="a Parquet file, a folder of Parquet shards (*.parquet, *.parq, *.pq at any depth) or a glob "
                        "pattern of files (quote it: 'shards/part-*.parquet')")
    p.add_argument("--pred", required=True, metavar="COL", help="column of predictions (string or binary)")
    p.add_argument("--gold", required=True, metavar="COL", help="column of references (string or binary)")
    p.add_argument("--slice", metavar="COL", default=None,
                   help="column grouping the rows into slices (a row whose label is null is in no slice)")
    p.add_argument("--metric", choices=("cer", "wer"), default="cer")
    _add_normalize(p)
    p.add_argument("--nulls", choices=("error", "count"), default="error",
                   help="a null cell is an error naming its row (default), or counted and scored as empty text")
    p.add_argument("--threads", type=int, default=None, help="kernel threads (default: all cores)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress bar over row groups on stderr (auto: when stderr is a terminal)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=run)


def _label_text(label: Any) -> str:
    """How a slice label is shown: its JSON text (``"en"``, ``1.0``, ``NaN``)."""
    return json.dumps(label, ensure_ascii=False, default=str)


def _json_label(label: Any) -> Any:
    """A slice label in ``--json``: itself, but a NaN or infinite float as its text (strict JSON)."""
    return _label_text(label) if isinstance(label, float) and not math.isfinite(label) else label


#: File names a folder's Parquet shards end with (Dask's ``parquet_file_extension``).
PARQUET_EXTENSIONS = (".parquet", ".parq", ".pq")


def _natural_key(path: str) -> list:
    """Sort key putting ``part.2`` before ``part.10``, the order Dask reads a folder's shards in."""
    return [int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", path)]


def _hidden(relative: str) -> bool:
    """A name pyarrow's dataset discovery skips (``_metadata``, ``.crc`` files, ``_temporary/``)."""
    return any(part.startswith(("_", ".")) for part in relative.split(os.sep))


def parquet_shards(source: str) -> list[str]:
    """The Parquet files ``source`` names, in reading order: a folder's files ending in
    :data:`PARQUET_EXTENSIONS`, at any depth (hidden and ``_``-prefixed names skipped), or the files
    a glob pattern matches, both in natural order; an error when there are none."""
    if os.path.isdir(source):
        found = [os.path.join(root, name) for root, _dirs, names in os.walk(source) for name in names
                 if name.lower().endswith(PARQUET_EXTENSIONS)
                 and not _hidden(os.path.relpath(os.path.join(root, name), source))]
        if not found:
            raise InvalidValueError(f"{source!r} is a folder holding no Parquet files (names ending in "
                                    f"{', '.join(PARQUET_EXTENSIONS)})", field="FILE")
    else:
        found = [path for path in glob.glob(source, recursive=True) if os.path.isfile(path)]
        if not found:
            raise InvalidValueError(f"{source!r} matches no file", field="FILE")
    return sorted(found, key=_natural_key)


def _open_parquet(path: str, slice: Optional[str]) -> tuple[Any, int, int]:
    """``path`` opened for :func:`~scorekit.arrow.evaluate_arrow` (a Parquet file, or a folder or
    glob of shards as one dataset), with its file and row group counts."""
    from scorekit.arrow import open_parquet, open_parquet_dataset, require_pyarrow

    pa = require_pyarrow()
    single = os.path.isfile(path) or (not os.path.isdir(path) and not glob.has_magic(path))
    if single and not os.path.exists(path):
        raise InvalidValueError(f"not found: {path!r}", field="FILE")
    shards = [path] if single else parquet_shards(path)
    where = path if single else f"{len(shards)} Parquet file{'s' * (len(shards) > 1)} of {path!r}"
    try:
        if single:
            parquet = open_parquet(path, slice)
            rows, groups = parquet.metadata.num_rows, parquet.num_row_groups
        else:
            parquet = open_parquet_dataset(shards, slice)
            fragments = list(parquet.get_fragments())
            rows = sum(fragment.metadata.num_rows for fragment in fragments)
            groups = sum(fragment.num_row_groups for fragment in fragments)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidValueError(f"{path!r} is not a readable Parquet file ({exc})" if single else
                                f"{where}: not all readable as Parquet ({exc})", field="FILE") from None
    if rows == 0:
        raise InvalidValueError(f"{path!r} has no rows" if single else f"{where}: no rows", field="FILE")
    return parquet, len(shards), groups


def run(args: Any) -> int:
    """The command: score, then print the report (exit status 0; bad input raises)."""
    from scorekit.arrow import NullCellError, evaluate_arrow, require_pyarrow
    from scorekit.progress import progress_printer

    pa = require_pyarrow()
    normalize = _normalize_arg(args.normalize)
    parquet, files, row_groups = _open_parquet(args.file, args.slice)
    progress = progress_printer(args.progress, "row groups" if files == 1 else "files")
    start = time.perf_counter()
    try:
        report = evaluate_arrow(parquet, pred=args.pred, gold=args.gold, slice=args.slice, metric=args.metric,
                                normalize=normalize, nulls=args.nulls, threads=args.threads, progress=progress)
    except NullCellError as exc:
        raise exc.advise("pass --nulls count") from None
    except (pa.ArrowException, OSError) as exc:  # a damaged page, an unsupported encoding, a read error
        raise InvalidValueError(f"{args.file!r} could not be read ({exc})", field="FILE") from None
    seconds = time.perf_counter() - start
    unsliced = None if args.slice is None else report.n - sum(c["n"] for c in report.slice_counts.values())
    if args.json:
        out = {
            "metric": report.metric,
            "n": report.n,
            "aggregate": _finite(report.aggregate),
            "totals": report.detail,
            "nulls": report.nulls,
            "per_slice": [{"slice": _json_label(label), "aggregate": _finite(report.per_slice[label]), **counts}
                          for label, counts in report.slice_counts.items()],
            "unsliced": unsliced,
            "files": files,
            "row_groups": row_groups,
            "seconds": round(seconds, 6),
            "pairs_per_second": round(report.n / seconds) if seconds > 0 else None,
        }
        print(json.dumps(out, ensure_ascii=False, indent=2, allow_nan=False, default=str))
        return 0
    d = report.detail
    shown = "n/a" if _finite(report.aggregate) is None else f"{report.aggregate:.4f}"
    over = "" if files == 1 else f" in {files:,} files"
    print(f"{report.metric.upper()} over {report.n:,} pairs{over}: {shown}  (edits {d['edits']:,} / reference "
          f"{d['ref_len']:,}; S {d['substitutions']:,}  D {d['deletions']:,}  I {d['insertions']:,}  H {d['hits']:,})")
    if any(report.nulls.values()):
        print("  null cells (scored as empty text): " + ", ".join(f"{k} {v:,}" for k, v in report.nulls.items()))
    if report.slice_counts:
        names = {label: _label_text(label) for label in report.slice_counts}
        width = max(map(len, names.values()))
        for label, counts in report.slice_counts.items():
            rate = _finite(report.per_slice[label])
            print(f"  {names[label]:<{width}}  {'n/a' if rate is None else f'{rate:.4f}'}  (n={counts['n']:,})")
    if unsliced:
        print(f"  rows in no slice (null label in {args.slice!r}): {unsliced:,}")
    if seconds > 0:
        print(f"  {report.n / seconds:,.0f} pairs/s ({seconds:.3f} s)", file=sys.stdout)
    return 0
