"""Side-by-side speed of scorekit's calibration fits and the reference kit's (``ek.qe.calibrate``).

Fits Platt, isotonic and temperature calibrators, and measures the ECE, on the same synthetic
calibration sets of growing size (an overconfident engine: scores uniform in [0, 1), a row correct
with probability score²), in one process, and prints a Markdown table. ek gets Python lists (what
it iterates); scorekit gets NumPy arrays, its natural input at this scale, and one extra row per
fit shows it reading the same Python lists. scorekit's time is the median of five repeats; an ek
call slower than a second runs once. Every row says how far the two results are apart.

    .venv/bin/python benches/bench_calibrate.py                      # up to 1,000,000 rows (about 2 minutes)
    .venv/bin/python benches/bench_calibrate.py --sizes 10000 30000  # a quick run
"""

from __future__ import annotations

import argparse
import platform
import warnings

import ek
import ek.qe.calibrate as ek_cal
import numpy as np

import scorekit.qe.calibrate as sk_cal
from bench_iaa import timed  # median of repeats, one run when a call takes over a second


def dataset(n: int, *, decimals: int | None = None, seed: int = 2026) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scores = rng.random(n)
    correct = rng.random(n) < scores**2
    return (np.round(scores, decimals) if decimals is not None else scores), correct


def platt_gap(ours, theirs) -> str:
    return f"{max(abs(ours.a - theirs.a), abs(ours.b - theirs.b)) / max(1.0, abs(theirs.a), abs(theirs.b)):.1e}"


def isotonic_gap(ours, theirs) -> str:
    return "identical" if ours.x == theirs.x and ours.y == theirs.y else "DIFFERENT"


def temperature_gap(ours, theirs) -> str:
    return f"{abs(ours.T - theirs.T) / theirs.T:.1e}"


def ece_gap(ours, theirs) -> str:
    return "identical" if ours == theirs else f"{abs(ours - theirs):.1e}"


def cases(sizes: list[int], temperature_sizes: list[int]):
    """(operation, size, scorekit call on arrays, ek call on lists, how to compare, also time from lists?)."""
    for n in sizes:
        x, c = dataset(n)
        yield ("PlattCalibrator.fit", n, x, c, lambda x, c: sk_cal.PlattCalibrator().fit(x, c),
               lambda x, c: ek_cal.PlattCalibrator().fit(x, c), platt_gap)
    for n in sizes:
        x, c = dataset(n)
        yield ("IsotonicCalibrator.fit", n, x, c, lambda x, c: sk_cal.IsotonicCalibrator().fit(x, c),
               lambda x, c: ek_cal.IsotonicCalibrator().fit(x, c), isotonic_gap)
    for n in sizes:
        x, c = dataset(n, decimals=3)
        yield ("IsotonicCalibrator.fit, scores rounded to 3 decimals", n, x, c,
               lambda x, c: sk_cal.IsotonicCalibrator().fit(x, c),
               lambda x, c: ek_cal.IsotonicCalibrator().fit(x, c), isotonic_gap)
    for n in temperature_sizes:
        x, c = dataset(n)
        z = np.log(x) - np.log1p(-x)  # the scores as logits
        yield ("TemperatureCalibrator.fit", n, z, c, lambda z, c: sk_cal.TemperatureCalibrator().fit(z, c),
               lambda z, c: ek_cal.TemperatureCalibrator().fit(z, c), temperature_gap)
    for n in sizes:
        x, c = dataset(n)
        yield ("expected_calibration_error", n, x, c, sk_cal.expected_calibration_error,
               ek_cal.expected_calibration_error, ece_gap)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--temperature-sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000],
                        help="ek's temperature fit takes ~75 s per million rows; it runs on these sizes only")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore", sk_cal.SmallCalibrationWarning)

    print(f"ek {ek.__version__} vs scorekit, Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{platform.machine()}\n")
    print("| operation | rows | ek | scorekit | ratio | scorekit from lists | ratio | results |")
    print("|---|---|---|---|---|---|---|---|")
    for name, n, x, c, ours, theirs, gap in cases(args.sizes, args.temperature_sizes):
        xs, cs = x.tolist(), c.tolist()
        t_ek, r_ek = timed(lambda: theirs(xs, cs), args.repeats)
        t_sk, r_sk = timed(lambda: ours(x, c), args.repeats)
        t_list, _ = timed(lambda: ours(xs, cs), args.repeats)
        print(f"| `{name}` | {n:,} | {fmt(t_ek)} | {fmt(t_sk)} | **{t_ek / t_sk:,.0f}×** | {fmt(t_list)} | "
              f"{t_ek / t_list:,.0f}× | {gap(r_sk, r_ek)} |", flush=True)


def fmt(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1e3:,.1f} ms"


if __name__ == "__main__":
    main()
