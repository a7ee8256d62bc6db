"""The small end: every public function of the reference kit that scorekit mirrors, at n = 1, 20,
2,000 and 20,000, against the kit (``ek``) side by side in one process (issue #31, item 7).

n is the natural size of the input: pairs for ``score``/``evaluate`` and the string tools (a loop of
n calls for the single-pair ones), labels or items for the statistics and calibrators, episodes for
the agent reports, numbers or log-probabilities for the signals, and the n of ``pass_at_k``-style
formulas. Calls that take one scalar case are timed as a loop of n calls, as a user writes them.

Rounds are interleaved (kit, scorekit, kit, scorekit, ...); each time is the best over the rounds
and each round's ratio is kit time / scorekit time, so the table gives both the ratio of the best
times and the median of the per-round ratios (the machine is shared and loaded). Before timing,
each row checks that both sides give the same result and the table says so.

    .venv/bin/python benches/bench_small_end.py                   # every row, n = 1, 20, 2,000, 20,000
    .venv/bin/python benches/bench_small_end.py --sizes 1 20 --only kappa platt
"""

from __future__ import annotations

import argparse
import gc
import math
import random
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import ek
import ek.agents as ek_agents
import ek.qe as ek_qe
import ek.tools as ek_tools
import scorekit as sk
import scorekit.agents as sk_agents
import scorekit.qe as sk_qe
import scorekit.tools as sk_tools

SIZES = (1, 20, 2_000, 20_000)
WORDS = ["the", "invoice", "total", "amount", "due", "date", "customer", "account", "number", "paid", "net", "tax"]


class Row(NamedTuple):
    """One function: ``make(n)`` builds the input once; ``kit``/``ours`` run on it; ``key`` turns a
    result into plain values to compare, to a relative ``rel``; ``limit`` is the largest n the row
    runs at."""

    name: str
    make: Callable[[int], Any]
    kit: Callable[[Any], Any]
    ours: Callable[[Any], Any]
    key: Callable[[Any], Any] = lambda r: r
    limit: int = SIZES[-1]
    rel: float = 1e-9


def pairs(n: int) -> list[tuple[str, str]]:
    rnd = random.Random(n)
    out = []
    for _ in range(n):
        gold = " ".join(rnd.choice(WORDS) for _ in range(rnd.randrange(2, 6)))
        chars = list(gold)
        chars[rnd.randrange(len(chars))] = rnd.choice("xyz")
        out.append(("".join(chars), gold))
    return out


def raters(n: int, count: int = 2, labels: str = "abc") -> list[list[str]]:
    rnd = random.Random(n)
    first = [rnd.choice(labels) for _ in range(n)]
    return [first] + [[x if rnd.random() < 0.7 else rnd.choice(labels) for x in first] for _ in range(count - 1)]


def scored(n: int) -> tuple[list[float], list[bool]]:
    rnd = random.Random(n)
    xs = [rnd.random() for _ in range(n)]
    return xs, [rnd.random() < x for x in xs]


def logps(n: int) -> list[float]:
    rnd = random.Random(n)
    return [-rnd.expovariate(4.0) for _ in range(n)]


def numbers(n: int) -> list[float]:
    rnd = random.Random(n)
    return [round(math.exp(rnd.uniform(0.0, 9.0)), 2) for _ in range(n)]


def hypotheses(n: int) -> list[str]:
    rnd = random.Random(n)
    base = [rnd.choice(WORDS) for _ in range(n)]
    out = []
    for _ in range(3):
        words = [w if rnd.random() < 0.9 else rnd.choice(WORDS) for w in base]
        out.append(" ".join(words))
    return out


def episodes(kit: Any, n: int) -> list[Any]:
    rnd = random.Random(n)
    tasks = max(1, n // 5)
    return [kit.Episode(task_id=f"t{i % tasks}", success=rnd.random() < 0.6,
                        cost=kit.Cost(input_tokens=rnd.randrange(100, 5000), output_tokens=rnd.randrange(10, 800)),
                        run=kit.RunProvenance(model="gpt-4o"))
            for i in range(n)]


def costs(kit: Any, n: int) -> list[Any]:
    rnd = random.Random(n)
    return [kit.Cost(input_tokens=rnd.randrange(100, 5000), output_tokens=rnd.randrange(10, 800),
                     cached_input_tokens=rnd.randrange(0, 50)) for _ in range(n)]


def outcomes(n: int) -> dict[str, list[bool]]:
    rnd = random.Random(n)
    attempts = min(n, 5)
    return {f"t{i}": [rnd.random() < 0.6 for _ in range(attempts)] for i in range(max(1, n // attempts))}


def both(build: Callable[[Any, int], Any]) -> Callable[[int], tuple[Any, Any]]:
    """An input built once for each side (for objects of each kit's own classes)."""
    return lambda n: (build(ek_agents, n), build(sk_agents, n))


def calibrated(kind: str) -> Callable[[int], tuple[Any, Any, list[float]]]:
    def make(n: int) -> tuple[Any, Any, list[float]]:
        xs, cs = scored(max(n, 20))
        return getattr(ek_qe, kind)().fit(xs, cs), getattr(sk_qe, kind)().fit(xs, cs), scored(n)[0]
    return make


def ek_price() -> Any:
    return ek_agents.per_million(2.5, 10.0, cached_input=1.25)


def sk_price() -> Any:
    return sk_agents.per_million(2.5, 10.0, cached_input=1.25)


def report_key(r: Any) -> Any:
    return r.aggregate, r.n


def reliability_key(r: Any) -> Any:
    return r.pass_at_k, r.pass_hat_k, r.success_ci, r.n_success, r.n_trials


def findings_key(r: Any) -> Any:
    return [(f.message, f.path) if hasattr(f, "path") else f.message for f in r]


def platt_key(c: Any) -> Any:
    return c.a, c.b


def isotonic_key(c: Any) -> Any:
    return list(c.to_dict()["x"]), list(c.to_dict()["y"])


def rows() -> list[Row]:
    both_labels = lambda n: raters(n)
    kit_price, our_price = ek_price(), sk_price()
    table = {"gpt-4o": kit_price}
    our_table = {"gpt-4o": our_price}
    return [
        Row("score (loop over pairs)", pairs,
            lambda ps: [ek.score(p, g).value for p, g in ps],
            lambda ps: [sk.score(p, g).value for p, g in ps]),
        Row("evaluate", pairs, ek.evaluate, sk.evaluate, report_key),
        Row("tools.cer (loop over pairs)", pairs,
            lambda ps: [ek_tools.cer(p, g) for p, g in ps], lambda ps: [sk_tools.cer(p, g) for p, g in ps]),
        Row("tools.wer (loop over pairs)", pairs,
            lambda ps: [ek_tools.wer(p, g) for p, g in ps], lambda ps: [sk_tools.wer(p, g) for p, g in ps]),
        Row("cohen_kappa", both_labels, lambda r: ek.cohen_kappa(*r), lambda r: sk.cohen_kappa(*r)),
        Row("percent_agreement", both_labels,
            lambda r: ek.percent_agreement(*r), lambda r: sk.percent_agreement(*r)),
        Row("krippendorff_alpha (3 raters, nominal)", lambda n: raters(n, 3),
            ek.krippendorff_alpha, sk.krippendorff_alpha),
        Row("krippendorff_alpha (3 raters, interval)", lambda n: [[ord(x) for x in r] for r in raters(n, 3)],
            lambda d: ek.krippendorff_alpha(d, level="interval"),
            lambda d: sk.krippendorff_alpha(d, level="interval")),
        Row("agents.judge_validation", both_labels,
            lambda r: ek_agents.judge_validation(*r), lambda r: sk_agents.judge_validation(*r),
            lambda d: {k: v for k, v in d.items() if k != "detail"}),
        Row("PlattCalibrator.fit", scored,
            lambda d: ek_qe.PlattCalibrator().fit(*d), lambda d: sk_qe.PlattCalibrator().fit(*d), platt_key),
        Row("PlattCalibrator() (loop over items)", calibrated("PlattCalibrator"),
            lambda d: [d[0](x) for x in d[2]], lambda d: [d[1](x) for x in d[2]]),
        Row("IsotonicCalibrator.fit", scored,
            lambda d: ek_qe.IsotonicCalibrator().fit(*d), lambda d: sk_qe.IsotonicCalibrator().fit(*d),
            isotonic_key),
        Row("IsotonicCalibrator() (loop over items)", calibrated("IsotonicCalibrator"),
            lambda d: [d[0](x) for x in d[2]], lambda d: [d[1](x) for x in d[2]]),
        Row("TemperatureCalibrator.fit", lambda n: ([math.log(x / (1 - x)) for x in scored(n)[0]], scored(n)[1]),
            lambda d: ek_qe.TemperatureCalibrator().fit(*d).T, lambda d: sk_qe.TemperatureCalibrator().fit(*d).T,
            rel=1e-6),  # a golden-section search on a likelihood summed in another order
        Row("expected_calibration_error", scored,
            lambda d: ek.expected_calibration_error(*d), lambda d: sk.expected_calibration_error(*d)),
        Row("reliability_curve", scored, lambda d: ek.reliability_curve(*d), lambda d: sk.reliability_curve(*d)),
        Row("risk_coverage_curve", scored,
            lambda d: ek.risk_coverage_curve(*d), lambda d: sk.risk_coverage_curve(*d)),
        Row("split_conformal_quantile", lambda n: scored(n)[0],
            lambda s: ek.split_conformal_quantile(s, 0.1), lambda s: sk.split_conformal_quantile(s, 0.1)),
        Row("ConformalGate.fit", scored,
            lambda d: ek.ConformalGate(alpha=0.1).fit(*d).q, lambda d: sk.ConformalGate(alpha=0.1).fit(*d).q),
        Row("RiskControlGate.fit", scored,
            lambda d: ek.RiskControlGate(target=0.1).fit(*d).lam, lambda d: sk.RiskControlGate(target=0.1).fit(*d).lam),
        Row("mean_probability", lambda n: {f"f{i}": p for i, p in enumerate(scored(n)[0])},
            ek.mean_probability, sk.mean_probability),
        Row("min_probability", lambda n: {f"f{i}": p for i, p in enumerate(scored(n)[0])},
            ek.min_probability, sk.min_probability),
        Row("qe.geo_mean", logps, ek_qe.geo_mean, sk_qe.geo_mean),
        Row("qe.length_normalized", logps, ek_qe.length_normalized, sk_qe.length_normalized),
        Row("qe.min_prob", logps, ek_qe.min_prob, sk_qe.min_prob),
        Row("qe.mean_prob", logps, ek_qe.mean_prob, sk_qe.mean_prob),
        Row("benford_findings", numbers, ek.benford_findings, sk.benford_findings, findings_key),
        Row("zscore_anomaly_findings", numbers, ek.zscore_anomaly_findings, sk.zscore_anomaly_findings,
            findings_key),
        Row("rover (3 hypotheses of n words)", hypotheses,
            lambda h: ek.rover(h).tokens, lambda h: list(sk.rover(h).tokens), limit=2_000),
        Row("tools.rover (3 hypotheses of n words)", hypotheses,
            lambda h: ek_tools.rover(*h), lambda h: sk_tools.rover(*h), limit=2_000),
        Row("pass_at_k", lambda n: n,
            lambda n: ek.pass_at_k(n=n, c=n // 2, k=min(n, 5)), lambda n: sk.pass_at_k(n=n, c=n // 2, k=min(n, 5))),
        Row("pass_hat_k", lambda n: n,
            lambda n: ek.pass_hat_k(n=n, c=n // 2, k=min(n, 5)), lambda n: sk.pass_hat_k(n=n, c=n // 2, k=min(n, 5))),
        Row("tools.pass_k", lambda n: n,
            lambda n: ek_tools.pass_k(n, n // 2, min(n, 5)), lambda n: sk_tools.pass_k(n, n // 2, min(n, 5))),
        Row("agents.reliability (outcomes by task)", outcomes,
            lambda o: ek_agents.reliability(o, k=min(len(next(iter(o.values()))), 5), warn_deterministic=False),
            lambda o: sk_agents.reliability(o, k=min(len(next(iter(o.values()))), 5), warn_deterministic=False),
            reliability_key),
        Row("agents.reliability (episodes)", both(episodes),
            lambda e: ek_agents.reliability(e[0], k=1, warn_deterministic=False),
            lambda e: sk_agents.reliability(e[1], k=1, warn_deterministic=False), reliability_key),
        Row("agents.wilson_interval", lambda n: n,
            lambda n: ek_agents.wilson_interval(n // 3, n), lambda n: sk_agents.wilson_interval(n // 3, n)),
        Row("agents.newcombe_difference", lambda n: n,
            lambda n: ek_agents.newcombe_difference(n // 3, n, n // 2, n),
            lambda n: sk_agents.newcombe_difference(n // 3, n, n // 2, n)),
        Row("agents.mean_standard_error", lambda n: n,
            lambda n: ek_agents.mean_standard_error(0.4, 0.2, n), lambda n: sk_agents.mean_standard_error(0.4, 0.2, n)),
        Row("agents.bootstrap_ci (mean, 200 resamples)", lambda n: scored(n)[0],
            lambda v: ek_agents.bootstrap_ci(v, lambda s: sum(s) / len(s), resamples=200),
            lambda v: sk_agents.bootstrap_ci(v, "mean", resamples=200), limit=2_000),
        Row("agents.dollars (loop over costs)", both(costs),
            lambda c: [ek_agents.dollars(x, kit_price) for x in c[0]],
            lambda c: [sk_agents.dollars(x, our_price) for x in c[1]]),
        Row("agents.episode_dollars (loop over episodes)", both(episodes),
            lambda e: [ek_agents.episode_dollars(x, prices=table) for x in e[0]],
            lambda e: [sk_agents.episode_dollars(x, prices=our_table) for x in e[1]]),
        Row("agents.cost_of_pass (loop over tasks)", lambda n: [(0.01 * i, i % 7) for i in range(n)],
            lambda ts: [ek_agents.cost_of_pass(t, s) for t, s in ts],
            lambda ts: [sk_agents.cost_of_pass(t, s) for t, s in ts]),
        Row("tools.cost_per_success (loop over tasks)", lambda n: [(0.01 * i, i % 7 + 1) for i in range(n)],
            lambda ts: [ek_tools.cost_per_success(t, s) for t, s in ts],
            lambda ts: [sk_tools.cost_per_success(t, s) for t, s in ts]),
        Row("agents.cost_report (priced)", both(episodes),
            lambda e: ek_agents.cost_report(e[0], prices=table), lambda e: sk_agents.cost_report(e[1], prices=our_table)),
        Row("agents.match_calls", lambda n: [{"name": f"tool{i % 9}", "arguments": {"x": i}} for i in range(n)],
            lambda c: ek_agents.match_calls(c, list(reversed(c))), lambda c: sk_agents.match_calls(c, list(reversed(c))),
            limit=2_000),
        Row("luhn_check (loop over numbers)", lambda n: [str(4000_0000_0000_0000 + 7 * i) for i in range(n)],
            lambda ns: [ek.luhn_check(x) for x in ns], lambda ns: [sk.luhn_check(x) for x in ns]),
        Row("isbn_check (loop over numbers)", lambda n: [f"978030640615{i % 10}" for i in range(n)],
            lambda ns: [ek.isbn_check(x) for x in ns], lambda ns: [sk.isbn_check(x) for x in ns]),
        Row("iban_check (loop over numbers)", lambda n: [f"GB82WEST1234569876543{i % 10}" for i in range(n)],
            lambda ns: [ek.iban_check(x) for x in ns], lambda ns: [sk.iban_check(x) for x in ns]),
    ]


def plain(value: Any) -> Any:
    """A result as plain Python values, so both kits' results compare with ``same``."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def same(a: Any, b: Any, rel: float = 1e-9) -> bool:
    """Equal, floats to ``rel`` relative (a different summation order may move the last bits)."""
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], rel) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, rel) for x, y in zip(a, b))
    return a == b


#: The clock of every timing: wall time, or with ``--cpu-time`` this process's CPU time (a round
#: preempted by another process on a loaded machine is not counted against the side it interrupted).
CLOCK = time.perf_counter


def timed(fn: Callable[[], Any], number: int) -> float:
    start = CLOCK()
    for _ in range(number):
        fn()
    return (CLOCK() - start) / number


def compare(row: Row, n: int, budget: float) -> dict:
    """Check both sides agree, then time them in interleaved rounds within about ``budget`` seconds."""
    data = row.make(n)
    kit = lambda: row.kit(data)
    ours = lambda: row.ours(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            agree = same(plain(row.key(kit())), plain(row.key(ours())), row.rel)
        except (TypeError, ValueError, AttributeError) as error:  # reported, not hidden
            agree = f"error: {type(error).__name__}"
        first = max(timed(kit, 1), timed(ours, 1), 1e-7)
        number = max(1, int(2e-3 / first))  # each timing at least ~2 ms long
        rounds = int(min(60, max(3, budget / (2 * first * number))))
        kit_times, our_times = [], []
        gc.collect()
        for _ in range(rounds):
            kit_times.append(timed(kit, number))
            our_times.append(timed(ours, number))
    return {"function": row.name, "n": n, "kit": min(kit_times), "ours": min(our_times),
            "median": statistics.median(k / o for k, o in zip(kit_times, our_times)),
            "rounds": rounds, "same": agree}


def seconds(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    if t < 1.0:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--only", nargs="+", default=None, help="rows whose name holds one of these words")
    parser.add_argument("--budget", type=float, default=0.3, help="about this many seconds a row and size")
    parser.add_argument("--cpu-time", action="store_true", help="time with this process's CPU time (loaded machine)")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.cpu_time else time.perf_counter
    selected = [r for r in rows() if not args.only or any(w.lower() in r.name.lower() for w in args.only)]
    print("| function | n | ek | scorekit | ek / scorekit (best) | median of per-round ratios | rounds | same result |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for row in selected:
        for n in args.sizes:
            if n > row.limit:
                continue
            r = compare(row, n, args.budget)
            flag = " **<1**" if min(r["kit"] / r["ours"], r["median"]) < 1.0 else ""
            print(f"| {r['function']} | {n:,} | {seconds(r['kit'])} | {seconds(r['ours'])} | "
                  f"{r['kit'] / r['ours']:.2f}×{flag} | {r['median']:.2f}× | {r['rounds']} | "
                  f"{'yes' if r['same'] is True else r['same'] or 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
