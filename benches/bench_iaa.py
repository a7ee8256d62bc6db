"""Side-by-side speed of scorekit's inter-annotator agreement statistics and the reference kit's.

Times ``scorekit.harness.krippendorff_alpha`` (interval, nominal, ordinal, ratio),
``cohen_kappa`` and ``percent_agreement`` against ``ek.harness`` (the test oracle, pure Python)
on the same Python lists, in one process, and prints a Markdown table. scorekit's time is the
median of several repeats; a reference call slower than a second runs once. Every row also
reports the relative difference between the two results.

    .venv/bin/python benches/bench_iaa.py                 # 2 x 50,000 ratings (about 1.5 minutes)
    .venv/bin/python benches/bench_iaa.py --items 5000    # a quick run
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time

import ek
import ek.harness as ek_harness
import numpy as np

from scorekit.harness import cohen_kappa, krippendorff_alpha, percent_agreement


def timed(fn, repeats: int) -> tuple[float, object]:
    """Median seconds of ``repeats`` calls (one call if the first takes over a second), and the result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        if times[0] > 1.0:
            break
    return statistics.median(times), result


def ratings(rnd: random.Random, items: int, distinct: int, *, step: float = 0.37, offset: float = 0.0):
    """Two raters on a grid of ``distinct`` values: the second agrees, or is one or two steps off."""
    first = [rnd.randrange(distinct) for _ in range(items)]
    second = [min(distinct - 1, max(0, v + rnd.choice((0, 0, 0, 1, -1, 2)))) for v in first]
    return [[offset + v * step for v in first], [offset + v * step for v in second]]


def cases(items: int, distinct: int):
    rnd = random.Random(2024)
    yield (f"alpha, interval, {distinct:,} distinct floats", "2 × {:,}".format(items),
           lambda d: krippendorff_alpha(d, level="interval"),
           lambda d: ek_harness.krippendorff_alpha(d, level="interval"),
           ratings(rnd, items, distinct, offset=-250.0))
    yield ("alpha, nominal, 1,000 labels", "2 × {:,}".format(items), krippendorff_alpha,
           ek_harness.krippendorff_alpha, [[int(v / 0.37 + 0.5) for v in row] for row in ratings(rnd, items, 1000)])
    five = [[rnd.randrange(10) if rnd.random() > 0.1 else None for _ in range(items // 5)] for _ in range(5)]
    yield ("alpha, nominal, 10 labels, 10% missing", "5 × {:,}".format(items // 5), krippendorff_alpha,
           ek_harness.krippendorff_alpha, five)
    yield ("alpha, ordinal, 300-point scale", "2 × {:,}".format(items),
           lambda d: krippendorff_alpha(d, level="ordinal"),
           lambda d: ek_harness.krippendorff_alpha(d, level="ordinal"),
           [[int(v / 0.37 + 0.5) for v in row] for row in ratings(rnd, items, 300)])
    yield ("alpha, ratio, 1,000 distinct values", "2 × {:,}".format(items),
           lambda d: krippendorff_alpha(d, level="ratio"),
           lambda d: ek_harness.krippendorff_alpha(d, level="ratio"),
           ratings(rnd, items, 1000, offset=1.0))
    labels_a = [rnd.randrange(5) for _ in range(2 * items)]
    labels_b = [a if rnd.random() < 0.7 else rnd.randrange(5) for a in labels_a]
    yield ("cohen_kappa, 5 labels", "2 × {:,}".format(2 * items), lambda d: cohen_kappa(*d),
           lambda d: ek_harness.cohen_kappa(*d), [labels_a, labels_b])
    words = ["yes", "no", "maybe", "n/a", "unsure"]
    yield ("cohen_kappa, 5 string labels", "2 × {:,}".format(2 * items), lambda d: cohen_kappa(*d),
           lambda d: ek_harness.cohen_kappa(*d), [[words[v] for v in labels_a], [words[v] for v in labels_b]])
    yield ("percent_agreement", "2 × {:,}".format(2 * items), lambda d: percent_agreement(*d),
           lambda d: ek_harness.percent_agreement(*d), [labels_a, labels_b])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50_000, help="items per rater (default 50,000)")
    parser.add_argument("--distinct", type=int, default=10_000,
                        help="distinct values of the interval case (default 10,000; ek's time grows as its square)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    print(f"Python {platform.python_version()}, NumPy {np.__version__}, ek {ek.__version__}; "
          f"median of {args.repeats} scorekit runs, reference runs once when slower than 1 s.\n")
    print("| statistic | ratings | ek | scorekit | ratio | rel. difference |")
    print("|---|---|---|---|---|---|")
    for name, size, ours, theirs, data in cases(args.items, args.distinct):
        ek_time, ek_value = timed(lambda: theirs(data), 3)
        sk_time, sk_value = timed(lambda: ours(data), args.repeats)
        diff = abs(sk_value - ek_value) / max(abs(ek_value), 1e-300)
        ratio = ek_time / sk_time
        shown = f"**{ratio:,.0f}×**" if ratio >= 10 else f"{ratio:.1f}×"
        print(f"| {name} | {size} | {ek_time * 1e3:,.1f} ms | {sk_time * 1e3:,.2f} ms | {shown} | {diff:.1e} |",
              flush=True)
    rnd = random.Random(7)
    spread = [[rnd.uniform(-100, 100) for _ in range(args.items)]]
    spread.append([v + rnd.gauss(0, 5) for v in spread[0]])
    for level in ("interval", "ordinal", "nominal", "ratio"):
        sk_time, _ = timed(lambda: krippendorff_alpha(spread, level=level), args.repeats)
        print(f"| alpha, {level}, every value distinct ({2 * args.items:,}) | 2 × {args.items:,} | not run | "
              f"{sk_time * 1e3:,.2f} ms | | |", flush=True)


if __name__ == "__main__":
    main()
