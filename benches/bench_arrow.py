"""The Arrow/Parquet path and Dask against the Python-list ``evaluate`` on the same Parquet file.

The corpus is ``corpus.make_pairs`` (OCR-like Latin, Armenian and CJK lines with their noisy
predictions, the script as slice), written once to a Parquet file outside the repository
(``--make``; row groups of 262,144 rows). Each contender runs in its own subprocess, so that its
time includes reading the file and its peak RSS (``ru_maxrss``) is its own:

* ``list``: ``pyarrow.parquet.read_table`` + ``to_pylist`` of the three columns, then
  ``scorekit.evaluate`` over the ``(pred, gold, slice)`` tuples (the Python-list path);
* ``arrow``: ``scorekit.arrow.evaluate_arrow`` on the file (row group by row group);
* ``dask``: ``scorekit.dask.evaluate`` on ``dask.dataframe.read_parquet`` with a
  ``LocalCluster`` of 2 worker processes, 1 thread each, started before the clock (its start-up is
  reported apart).

Every contender's totals (edits, reference length, S/D/I per slice) are asserted identical. The
memory bandwidth is a NumPy copy of a 1 GiB array (bytes read + written per second). Prints a
markdown table.

With ``--rounds N`` every contender runs N times (the rounds interleaved, so that a change in the
machine's load falls on all of them), and the table gives each one's best and median round.

    .venv/bin/python benches/bench_arrow.py --make /tmp/pairs.parquet --rows 10000000
    .venv/bin/python benches/bench_arrow.py /tmp/pairs.parquet [--skip list] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROW_GROUP = 1 << 18


def make(path: str, rows: int, seed: int = 7) -> None:
    """Write ``rows`` (pred, gold, slice) pairs to ``path`` in chunks (bounded memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from corpus import make_pairs

    schema = pa.schema([("pred", pa.string()), ("gold", pa.string()), ("slice", pa.string())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, ROW_GROUP):
            pairs = make_pairs(min(ROW_GROUP, rows - start), seed=seed + start)
            writer.write_table(pa.table([list(c) for c in zip(*pairs)], schema=schema), row_group_size=ROW_GROUP)


def _totals(report) -> dict:
    slices = {str(k): [report.per_slice[k]] for k in report.per_slice}
    return {"n": report.n, "detail": report.detail, "per_slice": slices}


def run_list(path: str) -> dict:
    import pyarrow.parquet as pq

    import scorekit

    table = pq.read_table(path, columns=["pred", "gold", "slice"])
    cases = list(zip(*(table.column(c).to_pylist() for c in ("pred", "gold", "slice"))))
    del table
    return _totals(scorekit.evaluate(cases, metric="cer"))


def run_arrow(path: str) -> dict:
    from scorekit.arrow import evaluate_arrow

    return _totals(evaluate_arrow(path, slice="slice", metric="cer"))


def run_dask(path: str) -> dict:
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    import scorekit.dask

    started = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        startup = time.perf_counter() - started
        begin = time.perf_counter()
        ddf = dd.read_parquet(path, columns=["pred", "gold", "slice"], split_row_groups=True)
        out = _totals(scorekit.dask.evaluate(ddf, pred="pred", gold="gold", slice="slice", metric="cer"))
        out["seconds"] = time.perf_counter() - begin
        out["startup"] = startup
        return out


RUNNERS = {"list": run_list, "arrow": run_arrow, "dask": run_dask}


def child(name: str, path: str) -> None:
    start = time.perf_counter()
    out = RUNNERS[name](path)
    out.setdefault("seconds", time.perf_counter() - start)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["peak_rss_mb"] = usage.ru_maxrss / 1024
    out["cpu_seconds"] = usage.ru_utime + usage.ru_stime  # this process only (not Dask's workers)
    print(json.dumps(out))


def measure(name: str, path: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", name, path], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{name} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def memory_bandwidth() -> float:
    """Bytes per second of a 1 GiB NumPy copy (read + write), best of 3."""
    import numpy as np

    a = np.ones(1 << 27, dtype=np.float64)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - start)
    return 2 * a.nbytes / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path")
    parser.add_argument("--make", action="store_true", help="only write the corpus (--rows pairs) to PATH")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--skip", action="append", default=[], choices=sorted(RUNNERS))
    parser.add_argument("--rounds", type=int, default=1, help="runs of each contender (best and median reported)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.path)
        return
    if args.make:
        make(args.path, args.rows)
        return
    # The contenders run first, while this process is small: a child's peak RSS counts the pages it
    # shares with its parent at fork time (Linux carries the high-water mark across exec).
    names = [name for name in RUNNERS if name not in args.skip]
    rounds = [{name: measure(name, args.path) for name in names} for _ in range(max(1, args.rounds))]
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(args.path).metadata
    chars = sum(pc.sum(pc.utf8_length(pq.read_table(args.path, columns=[c]).column(c))).as_py()
                for c in ("pred", "gold"))
    size = Path(args.path).stat().st_size
    reference = rounds[0][names[0]]
    for results in rounds:
        for name, r in results.items():
            assert {k: r[k] for k in ("n", "detail", "per_slice")} == \
                {k: reference[k] for k in ("n", "detail", "per_slice")}, f"{name} differs"
    bandwidth = memory_bandwidth()
    print(f"{meta.num_rows:,} pairs, {meta.num_row_groups} row groups, {size / 2**20:,.0f} MiB Parquet, "
          f"{chars:,} characters (both sides); CER {reference['detail']['edits'] / reference['detail']['ref_len']:.6f}; "
          f"memory bandwidth (NumPy copy, read + write) {bandwidth / 1e9:.1f} GB/s; {len(rounds)} round(s)\n")
    for k, results in enumerate(rounds, 1):
        line = ", ".join(f"{name} {r['seconds']:.2f} s ({r['cpu_seconds']:.1f} CPU s, {r['peak_rss_mb']:,.0f} MB)"
                         for name, r in results.items())
        print(f"round {k}: {line}")
    print("\n| path | round | seconds | CPU s (this process) | pairs/s | characters/s | vs list | peak RSS (MB) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for pick, choose in (("best", min), ("median", statistics.median_low)):
        times = {name: choose([results[name]["seconds"] for results in rounds]) for name in names}
        for name in names:
            r = next(results[name] for results in rounds if results[name]["seconds"] == times[name])
            ratio = f"{times['list'] / times[name]:.1f}x" if "list" in times else "n/a"
            print(f"| {name} | {pick} | {r['seconds']:.2f} | {r['cpu_seconds']:.1f} | {meta.num_rows / r['seconds']:,.0f} | "
                  f"{chars / r['seconds']:,.0f} | {ratio} | {r['peak_rss_mb']:,.0f} |")
    if "dask" in names:
        startup = statistics.median_low([results["dask"]["startup"] for results in rounds])
        line = f"\nDask cluster start-up (not in the times above, median): {startup:.1f} s"
        if "arrow" in names:
            ratios = sorted(results["dask"]["seconds"] / results["arrow"]["seconds"] for results in rounds)
            line += f"; dask / arrow time per round: {', '.join(f'{x:.2f}' for x in ratios)}"
        print(line)
    if "arrow" in names:
        best = min(results["arrow"]["seconds"] for results in rounds)
        print(f"arrow (best): {chars / best / 1e6:,.0f} M characters/s; the Parquet file streams at "
              f"{size / best / 1e9:.2f} GB/s, {size / best / bandwidth:.1%} of the memory bandwidth")


if __name__ == "__main__":
    main()
