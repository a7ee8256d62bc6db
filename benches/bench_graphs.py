"""Side-by-side speed of scorekit's exact graph edit distance against networkx, measured in one run.

Prints a Markdown report for benches/RESULTS.md:

1. ``scorekit.graphs.graph_edit_distance`` vs ``networkx.graph_edit_distance`` on random labelled
   graphs (node and edge labels, ``node_match``/``edge_match``), per size up to 7 nodes: the
   median time per pair of each (median over the pairs of each pair's median over repeats), the
   ratio of the two medians, and whether every value is identical.
2. ``TypedGraphMetric`` on typed graphs (the metric's cost model through a grammar): prediction
   vs gold pairs that differ by a few edits, and unrelated random pairs, by node count and edge
   density; median and maximum time, and how many stayed exact within the default budget.
3. The typed metric against the reference's way (networkx with the same cost callables) at 6 nodes.

    .venv/bin/python benches/bench_graphs.py            # full run (a few minutes)
    .venv/bin/python benches/bench_graphs.py --quick    # fewer pairs and repeats
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import networkx as nx  # noqa: E402

from ged_cases import COSTS, ORACLE_GRAMMAR, model_costs, mutate, random_graph, random_typed_graph  # noqa: E402
from scorekit._kernels import use_backend  # noqa: E402
from scorekit.graphs import DEFAULT_BUDGET, graph_edit_distance, graph_edit_distance_batch  # noqa: E402
from scorekit.metrics.graphs import TypedGraphMetric  # noqa: E402


def timed(fn, repeats: int) -> tuple[float, object]:
    """Median wall time of ``repeats`` calls, and the last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}" if seconds < 0.01 else f"{seconds * 1e3:.1f}"


def labelled_vs_networkx(sizes, pairs_per_size: int, repeats: int) -> None:
    print("## 1. Drop-in `graph_edit_distance` vs networkx (random labelled graphs, node_match + edge_match)\n")
    print("Pairs: two independent random graphs with the given node count, 3 node labels, 2 edge labels, "
          "edge probability 0.35, half directed. Time per pair, median over pairs.\n")
    print("| nodes | pairs | networkx ms | scorekit rust ms | scorekit numba ms | rust speed-up | numba speed-up "
          "| identical values |")
    print("|---|---|---|---|---|---|---|---|")
    kw = COSTS["match"]
    for n in sizes:
        rng = random.Random(1000 + n)
        pairs = [(random_graph(rng, n, k % 2 == 0, 0.35), random_graph(rng, n, k % 2 == 0, 0.35))
                 for k in range(pairs_per_size)]
        t_nx, t_rust, t_numba, same = [], [], [], True
        for g1, g2 in pairs:
            t, want = timed(lambda: nx.graph_edit_distance(g1, g2, **kw), 1 if n >= 7 else repeats)
            t_nx.append(t)
            for backend, sink in (("rust", t_rust), ("numba", t_numba)):
                with use_backend(backend):
                    graph_edit_distance(g1, g2, **kw)  # warm-up (Numba compiles once)
                    t, got = timed(lambda: graph_edit_distance(g1, g2, **kw), repeats)
                sink.append(t)
                same &= got == want
        m_nx, m_r, m_n = (statistics.median(x) for x in (t_nx, t_rust, t_numba))
        print(f"| {n} | {len(pairs)} | {ms(m_nx)} | {ms(m_r)} | {ms(m_n)} | {m_nx / m_r:.0f}× | {m_nx / m_n:.0f}× "
              f"| {'yes' if same else 'NO'} |")
    print()


def typed_scaling(sizes, unrelated_up_to, densities, near_pairs: int, unrelated_pairs: int, repeats: int) -> None:
    print(f"## 2. `TypedGraphMetric` by size (default budget = {DEFAULT_BUDGET:,} expanded states, rust backend)\n")
    print("Typed graphs: 3 node types with 1–2 fields from a small value pool, 3 edge types, grammar with "
          "importances 0.5–10. *near-duplicate*: gold vs gold with 0–3 random edits (field change, edge or "
          "node removal), the metric's use case (median of repeats per pair); *unrelated*: two independent "
          f"random graphs, the worst case (one run per pair, only up to {unrelated_up_to} nodes).\n")
    print("| nodes | edge density | near-dup pairs | near-dup median ms | max ms | exact | unrelated pairs "
          "| unrelated median ms | max ms | exact | median expanded (unrelated) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    metric = TypedGraphMetric(grammar=ORACLE_GRAMMAR, max_nodes=None)
    for n in sizes:
        for density in densities:
            rng = random.Random(n * 100 + int(density * 100))
            times, exact = [], 0
            for _ in range(near_pairs):
                gold = random_typed_graph(rng, n, density)
                pred = mutate(rng, gold)
                t, s = timed(lambda: metric(pred, gold), repeats)
                times.append(t)
                exact += s.detail["exact"]
            row = f"| {n} | {density} | {near_pairs} | {ms(statistics.median(times))} | {ms(max(times))} | {exact}/{near_pairs} "
            if n <= unrelated_up_to:
                times, exact, expanded = [], 0, []
                for _ in range(unrelated_pairs):
                    gold, pred = random_typed_graph(rng, n, density), random_typed_graph(rng, n, density)
                    t, s = timed(lambda: metric(pred, gold), 1)
                    times.append(t)
                    exact += s.detail["exact"]
                    expanded.append(s.detail["expanded"])
                row += (f"| {unrelated_pairs} | {ms(statistics.median(times))} | {ms(max(times))} "
                        f"| {exact}/{unrelated_pairs} | {statistics.median(expanded):.0f} |")
            else:
                row += "| — | — | — | — | — |"
            print(row, flush=True)
    print()


def typed_vs_reference(n: int, pairs: int) -> None:
    print(f"## 3. `TypedGraphMetric` vs the reference's networkx call ({n}-node typed graphs, same costs)\n")
    rng = random.Random(7)
    metric = TypedGraphMetric(grammar=ORACLE_GRAMMAR)
    costs = model_costs(ORACLE_GRAMMAR)
    t_nx, t_us, agree = [], [], 0
    for k in range(pairs):
        gold = random_typed_graph(rng, n)
        pred = mutate(rng, gold) if k % 2 else random_typed_graph(rng, n)
        g1, g2 = pred.to_networkx(), gold.to_networkx()
        t, want = timed(lambda: nx.graph_edit_distance(g1, g2, **costs), 1)
        t_nx.append(t)
        t, s = timed(lambda: metric(pred, gold), 5)
        t_us.append(t)
        agree += s.detail["raw_distance"] == want
    m_nx, m_us = statistics.median(t_nx), statistics.median(t_us)
    print("| pairs | networkx median ms | scorekit median ms | speed-up | equal raw distance |")
    print("|---|---|---|---|---|")
    print(f"| {pairs} | {ms(m_nx)} | {ms(m_us)} | {m_nx / m_us:.0f}× | {agree}/{pairs} |")
    print("\n(Where they differ networkx reports more than the true minimum: networkx issue #8099.)\n")


def batch_throughput(n: int, count: int) -> None:
    print(f"## 4. Batch throughput ({count} near-duplicate labelled {n}-node pairs, `graph_edit_distance_batch`)\n")
    rng = random.Random(3)
    pairs = []
    for k in range(count):
        g = random_graph(rng, n, k % 2 == 0, 0.35)
        pairs.append((g, nx.relabel_nodes(g, {u: -1 - u for u in g})))
    print("| threads | seconds | pairs/s |")
    print("|---|---|---|")
    for threads in (1, 0):
        t, _ = timed(lambda: graph_edit_distance_batch(pairs, **COSTS["match"], threads=threads), 3)
        print(f"| {threads or os.cpu_count()} | {t:.3f} | {count / t:,.0f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer pairs and repeats")
    args = parser.parse_args()
    quick = args.quick
    print(f"# Graph edit distance benchmarks\n\nCommand: `.venv/bin/python benches/bench_graphs.py"
          f"{' --quick' if quick else ''}` on {os.cpu_count()} cores, networkx {nx.__version__}.\n")
    labelled_vs_networkx((5, 6, 7), 4 if quick else 12, 3 if quick else 5)
    typed_scaling((8, 12, 16, 30, 60) if quick else (6, 8, 10, 12, 14, 16, 20, 30, 40, 60),
                  12 if quick else 20, (0.3,) if quick else (0.15, 0.3), 4 if quick else 10,
                  3 if quick else 6, 1 if quick else 3)
    typed_vs_reference(6, 6 if quick else 20)
    batch_throughput(7, 200 if quick else 2000)


if __name__ == "__main__":
    main()
