"""Side-by-side speed of scorekit's decision gates (``scorekit.qe.decide``) and the reference kit's.

Times ``ConformalGate.fit``, ``RiskControlGate.fit``, ``risk_coverage_curve`` and a conformal
``fit`` followed by ``p_value`` of every calibration item against ``ek.qe.decide`` (the test
oracle, pure Python) on the same Python lists, in one process, and checks that the results are
identical. The reference's risk-control fit and curve are quadratic (every candidate threshold
rescans the calibration set) and its ``p_value`` is linear per call, so it runs on the sizes it can
finish; its time at 1,000,000 items is extrapolated from the largest measured size as n^2 (marked
"extrapolated"; the growth measured between the sizes it ran is printed below each operation).
scorekit runs at every size, on lists and on NumPy arrays.

Calibration data: ``p ~ Beta(4, 1.5)`` (a confident model), ``correct ~ Bernoulli(p)`` (calibrated),
every probability distinct; ``alpha = 0.1``, ``target = 0.05``.

    .venv/bin/python benches/bench_decide.py                       # about three minutes
    .venv/bin/python benches/bench_decide.py --ek-sizes 1000 3000  # a quick run
    .venv/bin/python benches/bench_decide.py --only "ConformalGate(alpha=0.1).fit"  # one operation
"""

from __future__ import annotations

import argparse
import math
import platform
import warnings

import ek
import ek.qe.decide as ek_decide
import numpy as np
from bench_iaa import timed  # median of repeats, one run when the first is over a second

from scorekit.qe import decide

BIG = 1_000_000


def calibration_set(n: int, seed: int = 16):
    rng = np.random.default_rng(seed)
    p = rng.beta(4.0, 1.5, n)
    return p, rng.random(n) < p


def conformal_fit(module):
    return lambda p, c: module.ConformalGate(alpha=0.1).fit(p, c)


def conformal_p_values(module):
    def run(p, c):
        gate = module.ConformalGate(alpha=0.1).fit(p, c)
        return [gate.p_value(x) for x in p]
    return run


def risk_fit(module):
    return lambda p, c: module.RiskControlGate(target=0.05).fit(p, c)


def curve(module):
    return lambda p, c: module.risk_coverage_curve(p, c)


def fingerprint(result):
    """What must be identical between the two kits."""
    if hasattr(result, "q"):
        return result.q, result._cal
    if hasattr(result, "lam"):
        return result.lam
    return result


#: (operation, scorekit call, ek call, how ek's time grows when it is not measured at 1M)
OPERATIONS = [
    ("`ConformalGate(alpha=0.1).fit`", conformal_fit(decide), conformal_fit(ek_decide), None),
    ("`RiskControlGate(target=0.05).fit`", risk_fit(decide), risk_fit(ek_decide), 2),
    ("`risk_coverage_curve` (every distinct threshold)", curve(decide), curve(ek_decide), 2),
    ("`ConformalGate.fit` + `p_value` of every item", conformal_p_values(decide), conformal_p_values(ek_decide), 2),
]


def fmt(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:,.1f} h"
    if seconds >= 1:
        return f"{seconds:,.2f} s"
    return f"{seconds * 1e3:,.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ek-sizes", type=int, nargs="+", default=[1000, 3000, 10000, 30000],
                        help="sizes the reference runs at (its quadratic operations grow as n^2)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", metavar="TEXT", help="run the operations whose name contains TEXT")
    args = parser.parse_args()
    warnings.simplefilter("ignore", decide.SmallCalibrationWarning)

    print(f"Python {platform.python_version()}, NumPy {np.__version__}, ek {ek.__version__}; median of "
          f"{args.repeats} runs (one when a run takes over 1 s); inputs are Python lists unless marked.\n")
    print("| operation | n | ek | scorekit (lists) | ratio | scorekit (NumPy) | ratio | identical |")
    print("|---|---|---|---|---|---|---|---|")
    for name, ours, theirs, growth in OPERATIONS:
        if args.only and args.only not in name:
            continue
        measured = []
        for n in args.ek_sizes + [BIG]:
            p, c = calibration_set(n)
            pl, cl = p.tolist(), c.tolist()
            sk_time, sk_result = timed(lambda: ours(pl, cl), args.repeats)
            np_time, _ = timed(lambda: ours(p, c), args.repeats)
            if n != BIG or growth is None:
                ek_time, ek_result = timed(lambda: theirs(pl, cl), 3)
                measured.append((n, ek_time))
                same = "yes" if fingerprint(sk_result) == fingerprint(ek_result) else "**NO**"
                shown = fmt(ek_time)
            else:  # extrapolated from the largest measured size with the algorithm's growth
                n_last, t_last = measured[-1]
                ek_time = t_last * (n / n_last) ** growth
                same = "not run"
                shown = f"≈ {fmt(ek_time)} (extrapolated as n^{growth})"
            ratio = f"**{ek_time / sk_time:,.0f}×**" if ek_time / sk_time >= 10 else f"{ek_time / sk_time:.1f}×"
            np_ratio = f"**{ek_time / np_time:,.0f}×**" if ek_time / np_time >= 10 else f"{ek_time / np_time:.1f}×"
            print(f"| {name} | {n:,} | {shown} | {fmt(sk_time)} | {ratio} | {fmt(np_time)} | {np_ratio} | {same} |",
                  flush=True)
        if len(measured) >= 2:  # log-log slope between consecutive sizes
            exponents = [math.log(b[1] / a[1]) / math.log(b[0] / a[0]) for a, b in zip(measured, measured[1:])]
            print(f"| ↳ ek's growth between measured sizes | | {', '.join(f'n^{e:.2f}' for e in exponents)} "
                  "| | | | | |", flush=True)


if __name__ == "__main__":
    main()
