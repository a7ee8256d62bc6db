"""``evaluate_arrow`` on an in-memory Arrow table against the batch CER kernel on ready-made Python
lists of the same pairs (issue #31's bar: within 10 %), side by side in one process.

Four contenders, in interleaved rounds, every one checked to give the same S/D/I totals:

* ``arrow``: ``scorekit.evaluate_arrow(table)`` (the table already in memory, no file read);
* ``lists``: ``count_errors(preds, golds, "cer")`` on the two ready-made ``list[str]`` (packing the
  strings into code points, then the alignment kernel): the batch CER call on lists;
* ``packed``: the same alignment kernel on the sides already packed (no Python strings at all);
* ``utf8``: the kernel the Arrow path counts with (``_kernels.utf8.pair_counts``) on the table's
  UTF-8 buffers, without ``evaluate_arrow``'s glue.

The pairs are the first ``--rows`` of a file written by ``bench_arrow.py --make``.

    PYTHONPATH=python .venv/bin/python benches/bench_arrow_kernel.py /tmp/pairs2m.parquet --rows 1000000 --threads 1
"""

from __future__ import annotations

import argparse
import statistics
import time

import pyarrow.parquet as pq

import scorekit
from scorekit._graphemes import pack_units
from scorekit._kernels import utf8
from scorekit.arrow import _buffers
from scorekit.metrics.strings import count_errors, count_packed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=0, help="kernel threads (0: every core)")
    args = parser.parse_args()
    threads = args.threads
    table = pq.read_table(args.path, columns=["pred", "gold"]).slice(0, args.rows).combine_chunks()
    preds, golds = table.column("pred").to_pylist(), table.column("gold").to_pylist()
    hyp, ref = pack_units(preds, "preds", "char", None), pack_units(golds, "refs", "char", None)
    pred_buffers, gold_buffers = _buffers(table.column("pred").chunk(0)), _buffers(table.column("gold").chunk(0))

    def arrow() -> list:
        d = scorekit.evaluate_arrow(table, threads=threads or None).detail
        return [d["substitutions"], d["deletions"], d["insertions"]]

    contenders = {
        "arrow": arrow,
        "lists": lambda: count_errors(preds, golds, "cer", threads=threads)[:, 1:].sum(axis=0).tolist(),
        "packed": lambda: count_packed(hyp, ref, "cer", threads=threads)[:, 1:].sum(axis=0).tolist(),
        "utf8": lambda: utf8.pair_counts(pred_buffers, gold_buffers, "cer", (), threads)[:, 1:4].sum(axis=0).tolist(),
    }
    totals = {name: fn() for name, fn in contenders.items()}
    assert len({tuple(t) for t in totals.values()}) == 1, totals
    print(f"{table.num_rows:,} pairs, {sum(map(len, golds)):,} reference characters, S/D/I {totals['arrow']}, "
          f"threads {threads or 'all'}")
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(args.rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    print("| contender | best | median | arrow / contender: best; median of per-round ratios |")
    print("|---|---:|---:|---:|")
    for name, ts in times.items():
        ratios = [a / t for a, t in zip(times["arrow"], ts)]
        print(f"| {name} | {min(ts) * 1e3:.1f} ms | {statistics.median(ts) * 1e3:.1f} ms | "
              f"{min(times['arrow']) / min(ts):.3f}; {statistics.median(ratios):.3f} |")


if __name__ == "__main__":
    main()
