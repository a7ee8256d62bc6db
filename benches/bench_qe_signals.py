"""Side-by-side speed of scorekit's verifiers and intrinsic signals and the reference kit's.

Times ``scorekit.qe.verifiers`` (the checksums, the validators, ``VerifierSignal``,
``totals_consistent``) and ``scorekit.qe.signals`` (the log-probability aggregators,
``IntrinsicConfidenceSignal``) against ``ek.qe`` (the test oracle, pure Python) on the same inputs,
in one process, and prints a Markdown table. Each side's time is the median of several repeats of
the whole batch (one run past a second); every row also says whether the two kits' results are identical.

    .venv/bin/python benches/bench_qe_signals.py              # 100,000 values per row (about 30 s)
    .venv/bin/python benches/bench_qe_signals.py --n 10000    # a quick run
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import string

import ek
import ek.base
import ek.qe.signals as ek_signals
import ek.qe.verifiers as ek_verifiers

import scorekit.qe.signals as sk_signals
import scorekit.qe.verifiers as sk_verifiers
from bench_iaa import timed  # median of repeats (one call past a second)
from scorekit.base import FieldSpec


def luhn_numbers(rnd: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        digits = [rnd.randrange(10) for _ in range(16)]
        text = "".join(map(str, digits))
        out.append(" ".join(text[i:i + 4] for i in range(0, 16, 4)))
    return out


def ibans(rnd: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        bban = "".join(rnd.choice(string.ascii_uppercase) for _ in range(4)) + \
            "".join(rnd.choice(string.digits) for _ in range(14))
        moved = bban + "GB00"
        check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
        out.append(f"GB{check:02d}{bban}")
    return out


def isbns(rnd: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        body = "978" + "".join(rnd.choice(string.digits) for _ in range(9))
        check = -sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(body)) % 10
        out.append(f"{body[:3]}-{body[3]}-{body[4:7]}-{body[7:]}-{check}")
    return out


def as_tuples(findings) -> list[tuple]:
    return [(f.field, f.layer, f.severity.value, f.message) for f in findings]


def cases(n: int):
    """``(operation, size, scorekit fn, ek fn)``; each fn runs the whole batch and returns its results."""
    rnd = random.Random(16)
    cards, accounts, books = luhn_numbers(rnd, n), ibans(rnd, n), isbns(rnd, n)
    for name, values in (("luhn_check", cards), ("iban_check", accounts), ("isbn_check", books)):
        ours, theirs = sk_verifiers.CHECKSUMS[name[:-6]], ek_verifiers.CHECKSUMS[name[:-6]]
        yield (f"`{name}`", f"{n:,} values", lambda v=values, f=ours: list(map(f, v)),
               lambda v=values, f=theirs: list(map(f, v)))
    long_number = " ".join(cards)
    yield ("`luhn_check`, one long string", f"{len(long_number):,} chars",
           lambda: sk_verifiers.luhn_check(long_number), lambda: ek_verifiers.luhn_check(long_number))

    values = [rnd.choice([c, str(rnd.randint(-10, 200)), "abc", None]) for c in cards]
    ours_sig = sk_verifiers.VerifierSignal([sk_verifiers.checksum_validator("luhn"),
                                            sk_verifiers.regex_validator(r"[\d ]+"),
                                            sk_verifiers.range_validator(0, 100),
                                            sk_verifiers.enum_validator(["abc", "42"])])
    theirs_sig = ek_verifiers.VerifierSignal([ek_verifiers.checksum_validator("luhn"),
                                              ek_verifiers.regex_validator(r"[\d ]+"),
                                              ek_verifiers.range_validator(0, 100),
                                              ek_verifiers.enum_validator(["abc", "42"])])
    yield ("`VerifierSignal`, 4 validators", f"{n:,} values", lambda: [ours_sig(v) for v in values],
           lambda: [theirs_sig(v) for v in values])

    spec_args = [("amount", "number", (0.0, 100.0)), ("zip", "string", (r"\d{5}",)),
                 ("status", "enum", ("open", "closed", "void"))]
    specs = [(FieldSpec(*a[:2], domain=a[2]), ek.base.FieldSpec(*a[:2], domain=a[2])) for a in spec_args]
    pairs = [(rnd.choice(["50", "150", "12345", "1234x", "open", "pending", None]), rnd.choice(specs))
             for _ in range(n)]
    yield ("`schema_validator`, 3 kinds of spec", f"{n:,} values",
           lambda: [as_tuples(sk_verifiers.schema_validator(v, spec=s[0])) for v, s in pairs],
           lambda: [as_tuples(ek_verifiers.schema_validator(v, spec=s[1])) for v, s in pairs])

    records = [{"total": rnd.choice([30, 30.004, 31]), "a": 10, "b": 20, "c": rnd.choice([0, "x"])} for _ in range(n)]
    yield ("`totals_consistent`, 3 items", f"{n:,} records",
           lambda: [as_tuples(sk_verifiers.totals_consistent(r, total_key="total", item_keys=["a", "b", "c"]))
                    for r in records],
           lambda: [as_tuples(ek_verifiers.totals_consistent(r, total_key="total", item_keys=["a", "b", "c"]))
                    for r in records])

    fields = [[math.log(rnd.random() or 1e-300) for _ in range(50)] for _ in range(n // 10)]
    for name in ("geo_mean", "length_normalized", "min_prob", "mean_prob"):
        ours, theirs = getattr(sk_signals, name), getattr(ek_signals, name)
        yield (f"`{name}`", f"{n // 10:,} fields × 50 tokens", lambda f=ours: [f(x) for x in fields],
               lambda f=theirs: [f(x) for x in fields])
    confidences = [[rnd.random() for _ in range(50)] for _ in range(n // 10)]
    ours_pool, theirs_pool = sk_signals.IntrinsicConfidenceSignal("geo_mean"), ek_signals.IntrinsicConfidenceSignal("geo_mean")
    yield ("`IntrinsicConfidenceSignal(pool=\"geo_mean\")`", f"{n // 10:,} fields × 50 units",
           lambda: [ours_pool(c) for c in confidences], lambda: [theirs_pool(c) for c in confidences])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="values per row (default 100,000)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, ek {ek.__version__}, {platform.machine()}\n")
    print("| operation | size | ek | scorekit | ratio | identical |")
    print("|---|---|---|---|---|---|")
    for label, size, ours, theirs in cases(args.n):
        t_ours, r_ours = timed(ours, args.repeats)
        t_theirs, r_theirs = timed(theirs, args.repeats)
        print(f"| {label} | {size} | {t_theirs * 1e3:,.1f} ms | {t_ours * 1e3:,.1f} ms | "
              f"**{t_theirs / t_ours:.1f}×** | {'yes' if r_ours == r_theirs else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
