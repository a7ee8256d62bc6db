"""What the fail-closed checks cost on the sub-microsecond calls of the small-end sweep (issue #31,
item 7): each call, the reference kit's call, and scorekit's own arithmetic with its checks taken
out, interleaved, best of the rounds. Prints the markdown table of benches/RESULTS.md ("Small end").
``--parts``: the parts of ``pass_at_k``, ``pass_hat_k`` and ``cost_of_pass`` (the fifth round's table).

    PYTHONPATH=python .venv/bin/python benches/bench_check_cost.py [--parts]
"""

from __future__ import annotations

import math
import random
import sys
import time
import warnings

import ek
import ek.agents as ek_agents
import scorekit as sk
import scorekit.agents as sk_agents
from scorekit.agents import Cost


def per_call(fn, arg, number: int, clock=time.perf_counter) -> float:
    start = clock()
    for _ in range(number):
        fn(arg)
    return (clock() - start) / number * 1e6


def row(name: str, arg, ours, kit, bare, number: int = 20000, rounds: int = 15) -> None:
    """One line: best µs per call of the kit, scorekit and scorekit's arithmetic alone."""
    o, k, b = [], [], []
    for _ in range(rounds):
        k.append(per_call(kit, arg, number))
        o.append(per_call(ours, arg, number))
        b.append(per_call(bare, arg, number))
    o, k, b = min(o), min(k), min(b)
    print(f"| {name} | {k:.3f} µs | {o:.3f} µs | {b:.3f} µs | {o - b:.3f} µs | {k / o:.2f}× | {k / b:.2f}× |", flush=True)


def quantile(scores: list, alpha: float = 0.1) -> float:
    k = math.ceil((len(scores) + 1) * (1 - alpha))
    return math.inf if k > len(scores) else sorted(scores)[k - 1]


def pass_at(a: tuple) -> float:
    n, c, k = a
    return 1.0 if n - c < k else 1 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat(a: tuple) -> float:
    n, c, k = a
    return 0.0 if c < k else math.comb(c, k) / math.comb(n, k)


def main() -> None:
    warnings.simplefilter("ignore")
    print("| call | ek | scorekit | scorekit's arithmetic without its checks | the checks | ek / scorekit "
          "| ek / the bare arithmetic |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rnd = random.Random(1)
    for n in (1, 20, 2000):
        d = {f"f{i}": rnd.random() for i in range(n)}
        number = 20000 if n < 2000 else 300
        row(f"mean_probability, {n} values", d, sk.mean_probability, ek.mean_probability,
            lambda d: sum(d.values()) / len(d), number)
        row(f"min_probability, {n} values", d, sk.min_probability, ek.min_probability,
            lambda d: min(d.values()), number)
    for n in (1, 20):
        s = [rnd.random() for _ in range(n)]
        row(f"split_conformal_quantile, {n} scores", s, lambda s: sk.split_conformal_quantile(s, 0.1),
            lambda s: ek.split_conformal_quantile(s, 0.1), quantile)
    for n in (20, 20000):
        a = (n, n // 2, 5)
        row(f"pass_at_k, n = {n}", a, lambda a: sk_agents.pass_at_k(n=a[0], c=a[1], k=a[2]),
            lambda a: ek_agents.pass_at_k(n=a[0], c=a[1], k=a[2]), pass_at)
        row(f"pass_hat_k, n = {n}", a, lambda a: sk_agents.pass_hat_k(n=a[0], c=a[1], k=a[2]),
            lambda a: ek_agents.pass_hat_k(n=a[0], c=a[1], k=a[2]), pass_hat)
    row("cost_of_pass (one task)", (3.5, 3), lambda a: sk_agents.cost_of_pass(*a), lambda a: ek_agents.cost_of_pass(*a),
        lambda a: a[0] / a[1] if a[1] else math.inf)
    price, kit_price = sk_agents.per_million(3, 15), ek_agents.per_million(3, 15)
    cost, kit_cost = Cost(input_tokens=1200, output_tokens=300), ek_agents.Cost(input_tokens=1200, output_tokens=300)

    def bare_dollars(c):
        return (c.input_tokens * price.input + c.output_tokens * price.output + c.cached_input_tokens * price.cached_rate
                + c.reasoning_tokens * price.reasoning_rate) * 1.0

    row("dollars (one cost)", cost, lambda c: sk_agents.dollars(c, price), lambda c: ek_agents.dollars(kit_cost, kit_price),
        bare_dollars)


def timed_parts(calls: dict, arg, number: int = 2000, rounds: int = 150) -> dict:
    """Best µs per call of each of ``calls`` on ``arg`` (the process's CPU time, short interleaved
    rounds: the machine is shared), less a lambda doing nothing."""
    calls = {"empty": lambda a: None, **calls}
    best = {name: math.inf for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            best[name] = min(best[name], per_call(fn, arg, number, time.process_time))
    return {name: t - best["empty"] for name, t in best.items()}


def parts() -> None:
    """The parts of the three calls left below the kit: each part is a function of the call's
    signature doing only that part, less one doing nothing (the call itself)."""
    from scorekit.agents.reliability import MAX_TRIALS
    top, comb, inf = sys.modules["scorekit"], math.comb, math.inf
    kit_check = sys.modules[ek_agents.pass_at_k.__module__]._check  # the kit's private check

    def nothing(*, n, c, k):
        return 0.0

    def types(*, n, c, k):
        if type(n) is int and type(c) is int and type(k) is int:
            return 0.0

    def bounds(*, n, c, k):
        if 0 <= c and n <= MAX_TRIALS and k <= n - c and k > 0:
            return 0.0

    def formula_at(*, n, c, k):
        return 1.0 - comb(n - c, k) / comb(n, k)

    def formula_hat(*, n, c, k):
        return comb(c, k) / comb(n, k)

    print("| call | ek | scorekit | `ek.pass_at_k`; `scorekit.pass_at_k` (the load) | the call | three exact type "
          "tests | four bounds | the formula | the kit's `_check(n, c, k)` |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in ("pass_at_k", "pass_hat_k"):
        kit, ours = getattr(ek, name), getattr(top, name)
        formula = formula_at if name == "pass_at_k" else formula_hat
        for n in (20, 20000):
            t = timed_parts({
                "kit_load": lambda a: ek.pass_at_k, "our_load": lambda a: top.pass_at_k,
                "kit_direct": lambda a: kit(n=a[0], c=a[1], k=a[2]), "our_direct": lambda a: ours(n=a[0], c=a[1], k=a[2]),
                "nothing": lambda a: nothing(n=a[0], c=a[1], k=a[2]), "types": lambda a: types(n=a[0], c=a[1], k=a[2]),
                "bounds": lambda a: bounds(n=a[0], c=a[1], k=a[2]), "formula": lambda a: formula(n=a[0], c=a[1], k=a[2]),
                "kit_check": lambda a: kit_check(*a)}, (n, n // 2, 5))
            print(f"| {name}, n = {n} | {t['kit_direct']:.3f} µs | {t['our_direct']:.3f} µs | {t['kit_load']:.3f}; "
                  f"{t['our_load']:.3f} µs | {t['nothing']:.3f} µs | {t['types'] - t['nothing']:.3f} µs | "
                  f"{t['bounds'] - t['nothing']:.3f} µs | {t['formula'] - t['nothing']:.3f} µs | {t['kit_check']:.3f} µs |",
                  flush=True)

    def nothing2(total_cost, n_success):
        return 0.0

    def types2(total_cost, n_success):
        if type(total_cost) is float and type(n_success) is int:
            return 0.0

    def bounds2(total_cost, n_success):
        if 0.0 <= total_cost < inf and n_success >= 0:
            return 0.0

    def kit_body(total_cost, n_success):
        if n_success <= 0:
            return inf
        return total_cost / n_success

    t = timed_parts({"ek": lambda a: ek_agents.cost_of_pass(*a), "sk": lambda a: sk_agents.cost_of_pass(*a),
                     "nothing": lambda a: nothing2(*a), "types": lambda a: types2(*a), "bounds": lambda a: bounds2(*a),
                     "body": lambda a: kit_body(*a)}, (3.5, 3))
    print("\n| call | ek | scorekit | the call | two exact type tests | three bounds | the kit's body |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(f"| cost_of_pass(3.5, 3) | {t['ek']:.3f} µs | {t['sk']:.3f} µs | {t['nothing']:.3f} µs | "
          f"{t['types'] - t['nothing']:.3f} µs | {t['bounds'] - t['nothing']:.3f} µs | {t['body'] - t['nothing']:.3f} µs |")


if __name__ == "__main__":
    parts() if "--parts" in sys.argv else main()
