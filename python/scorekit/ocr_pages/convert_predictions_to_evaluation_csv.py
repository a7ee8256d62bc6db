"""Convert per-page prediction JSON files into evaluation CSVs (columns x1,y1,x2,y2,group_row,text).

Every *.json file of --predictions-dir (not recursive, sorted by name) becomes <stem>.csv in
--output-dir: one row per usable item in input order, group_row the running number of the written
rows (no spatial grouping), the box corners put in min/max order. Items without a usable box are
skipped and counted. A malformed file is reported on stderr and skipped; the exit status is then
1, as it is when no *.json file is found. An output that is one of the inputs (or a link to one)
is refused with status 2 before anything is written. --unit-level is accepted and has no effect.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path
from typing import Optional, Sequence

from scorekit.files import check_outputs, write_atomically
from scorekit.ocr_pages.box_grouping.loading import load_prediction_items
from scorekit.ocr_pages.cli import RunError, add_common, error_line, folder_outputs, main_for, output_folder

PROG = "ocr-pages-convert"
HEADER = ("x1", "y1", "x2", "y2", "group_row", "text")


def _number(v: float) -> str:
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


def convert_file(json_path: str | Path, csv_path: str | Path) -> tuple[int, int]:
    """Write the evaluation CSV of one prediction JSON (never over it); returns ``(items written,
    items skipped)``."""
    check_outputs({"csv_path": csv_path}, inputs=[json_path])
    items, skipped = load_prediction_items(json_path)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for k, it in enumerate(items):
        writer.writerow([_number(it.x1), _number(it.y1), _number(it.x2), _number(it.y2), str(k), it.text])
    write_atomically(csv_path, buffer.getvalue())
    return len(items), skipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--predictions-dir", required=True, help="folder of <page_id>.json prediction files")
    p.add_argument("--output-dir", required=True, help="folder for the <page_id>.csv files (created)")
    add_common(p, threshold=False)


def run(args: argparse.Namespace, prog: str = PROG) -> int:
    src = Path(args.predictions_dir)
    if not src.is_dir():
        raise RunError(f"predictions folder {args.predictions_dir!r} does not exist")
    files = sorted(p for p in src.glob("*.json") if p.is_file())
    if not files:
        raise RunError(f"no *.json files in {args.predictions_dir!r}")
    with output_folder(args.output_dir) as out:
        check_outputs(folder_outputs(out, (f"{path.stem}.csv" for path in files)), inputs=files)
        n_files = n_items = n_skipped = 0
        failed = False
        for path in files:
            try:
                written, skipped = convert_file(path, out / f"{path.stem}.csv")
            except (ValueError, TypeError, OSError, RunError) as exc:
                print(error_line(prog, exc), flush=True, file=sys.stderr)
                failed = True
                continue
            n_files += 1
            n_items += written
            n_skipped += skipped
    print(f"converted {n_files} files ({n_items} items, {n_skipped} skipped) -> {args.output_dir}")
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__)
    add_arguments(p)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    return main_for(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
