"""Start-up cost of scorekit: ``import scorekit`` plus the first ``ek.score`` in fresh processes.

Each run starts a new interpreter that times, in-process, ``import scorekit as ek`` followed by
``ek.score("hello wrld", "hello world")``, and reports that time, the CPU time of the whole process
(less sensitive than wall time to other load on the machine), the whole process's wall time, and
which of NumPy, Numba, SciPy and pydantic were loaded. Usage::

    python benches/startup.py [--runs 21] [--python PATH]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

CHILD = """
import sys, time
t0 = time.perf_counter()
import scorekit as ek
ek.score("hello wrld", "hello world")
t1 = time.perf_counter()
import json
heavy = sorted(m for m in ("numpy", "numba", "scipy", "pydantic", "llvmlite") if m in sys.modules)
print(json.dumps({"in_process_ms": (t1 - t0) * 1e3, "heavy": heavy}))
"""


def one_run(python: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([python, "-c", CHILD], check=True, capture_output=True, text=True).stdout
    wall = (time.perf_counter() - start) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    return {**json.loads(out), "process_wall_ms": wall, "process_cpu_ms": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--python", default=sys.executable, help="interpreter to measure (default: this one)")
    args = parser.parse_args()
    one_run(args.python)  # warm the file-system cache
    runs = [one_run(args.python) for _ in range(args.runs)]
    for key in ("in_process_ms", "process_cpu_ms", "process_wall_ms"):
        values = sorted(r[key] for r in runs)
        print(f"{key:16s} median {statistics.median(values):7.1f}   min {values[0]:7.1f}   max {values[-1]:7.1f}")
    print("loaded by the first score:", sorted({m for r in runs for m in r["heavy"]}) or "none of numpy, numba, scipy, pydantic")


if __name__ == "__main__":
    main()
