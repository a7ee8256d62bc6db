"""Side-by-side benchmarks of the tree family against the peers users would otherwise run.

* TED on random 200-node trees (5 labels): scorekit vs apted (Python) and zss.
* TedsMetric on a 40×10 table (20% of cells edited, last row dropped) vs a TEDS of the same
  definition computed with apted.
* FlowSim (+ TreeBLEU, TM, CM) over 100k workflow pairs of 30 nodes, end to end from parsed JSON.

Each timing is the median of several repeats, peers measured in the same run: CPU time of the
process for the single-threaded comparisons, wall time for the parallel flow batch. Usage:

    python benches/bench_trees.py [--quick] [--append benches/RESULTS_trees.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from datetime import datetime, timezone

import apted
import zss
from rapidfuzz.distance import Levenshtein

from scorekit._kernels import use_backend
from scorekit.flows import evaluate_flows
from scorekit.metrics.tables import Table, TedsMetric
from scorekit.trees import Tree, tree_edit_distance


def timed(fn, repeats: int, clock=time.process_time) -> float:
    """Median time of ``fn()`` over ``repeats`` runs, in seconds. Single-threaded comparisons use the
    process's CPU time (the machine is shared, so wall time swings with other jobs); parallel batches
    pass ``clock=time.perf_counter`` (wall time)."""
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)


# -- TED on random trees -----------------------------------------------------------------------------

def random_tree(rng: random.Random, size: int, alphabet: str = "abcde") -> Tree:
    labels = [rng.choice(alphabet) for _ in range(size)]
    children: list[list[int]] = [[] for _ in range(size)]
    for k in range(1, size):
        children[rng.randrange(k)].append(k)
    built: list[Tree | None] = [None] * size
    for k in reversed(range(size)):
        built[k] = Tree(labels[k], [built[c] for c in children[k]])
    return built[0]  # type: ignore[return-value]


def to_zss(t: Tree) -> zss.Node:
    return zss.Node(t.label, [to_zss(c) for c in t.children])


def to_apted(t: Tree) -> apted.helpers.Tree:
    return apted.helpers.Tree.from_text(t.to_brackets())


def bench_ted(n_pairs: int, peer_pairs: int) -> list[tuple[str, float, str]]:
    rng = random.Random(200)
    pairs = [(random_tree(rng, 200), random_tree(rng, 200)) for _ in range(n_pairs)]
    ours = {}
    for backend in ("rust", "numba"):
        with use_backend(backend):
            tree_edit_distance(*pairs[0])  # warm-up (Numba compiles on first use)
            ours[backend] = statistics.median(timed(lambda a=a, b=b: tree_edit_distance(a, b), 7) for a, b in pairs)
    check = [tree_edit_distance(a, b) for a, b in pairs[:peer_pairs]]
    apted_times, zss_times = [], []
    for (a, b), d in zip(pairs[:peer_pairs], check):
        ta, tb = to_apted(a), to_apted(b)
        start = time.process_time()
        assert apted.APTED(ta, tb).compute_edit_distance() == d
        apted_times.append(time.process_time() - start)
        za, zb = to_zss(a), to_zss(b)
        start = time.process_time()
        assert zss.simple_distance(za, zb) == d
        zss_times.append(time.process_time() - start)
    t_apted, t_zss = statistics.median(apted_times), statistics.median(zss_times)
    rust = ours["rust"]
    return [
        ("TED, random 200-node trees: scorekit (rust)", rust * 1e3, "ms/pair"),
        ("TED, random 200-node trees: scorekit (numba)", ours["numba"] * 1e3, "ms/pair"),
        ("TED, random 200-node trees: apted (Python)", t_apted * 1e3, f"ms/pair → **{t_apted / rust:.0f}×** (target ≥ 100×)"),
        ("TED, random 200-node trees: zss", t_zss * 1e3, f"ms/pair → **{t_zss / rust:.0f}×** (target ≥ 200×)"),
    ]


# -- TEDS on a 40×10 table ---------------------------------------------------------------------------

class _TedsConfig(apted.Config):
    """The TedsMetric definition on apted: rename 1 across labels, else normalised Levenshtein
    (rapidfuzz's C++ distance, so the peer is not slowed by a Python edit distance)."""

    def rename(self, a, b):
        if a.name != b.name:
            return 1.0
        if a.text == b.text:
            return 0.0
        return Levenshtein.distance(a.text, b.text) / max(len(a.text), len(b.text))

    def children(self, node):
        return node.kids


class _Node:
    def __init__(self, name, text="", kids=()):
        self.name, self.text, self.kids = name, text, list(kids)


def apted_teds(pred: Table, gold: Table, structure_only: bool) -> float:
    def tree(t: Table) -> _Node:
        return _Node("table", "", [
            _Node("tr", "", [_Node(f"td:{c.rowspan}x{c.colspan}", "" if structure_only else c.text) for c in row])
            for row in t.rows])

    size = lambda t: 1 + len(t.rows) + sum(len(r) for r in t.rows)  # noqa: E731
    return 1 - apted.APTED(tree(pred), tree(gold), _TedsConfig()).compute_edit_distance() / max(size(pred), size(gold))


def bench_teds(peer_repeats: int) -> list[tuple[str, float, str]]:
    rng = random.Random(40)
    gold = [["".join(rng.choice("abcdefgh0123456789 ") for _ in range(rng.randint(3, 12))) for _ in range(10)]
            for _ in range(40)]
    pred = [[c if rng.random() > 0.2 else c[::-1] for c in row] for row in gold[:-1]]
    pred_t, gold_t = Table.coerce(pred), Table.coerce(gold)
    rows = []
    for structure_only in (False, True):
        metric = TedsMetric(structure_only=structure_only)
        value = metric(pred_t, gold_t).value
        ours = timed(lambda: metric(pred_t, gold_t), 7)
        start_values = []
        peer = timed(lambda: start_values.append(apted_teds(pred_t, gold_t, structure_only)), peer_repeats)
        assert abs(start_values[0] - value) < 1e-12, (start_values[0], value)
        name = "TEDS-Struct" if structure_only else "TEDS"
        rows.append((f"{name}, 40×10 table: TedsMetric (rust)", ours * 1e3, "ms"))
        rows.append((f"{name}, 40×10 table: apted, same definition", peer * 1e3,
                     f"ms → **{peer / ours:.0f}×** (target ≥ 100×)"))
    return rows


# -- FlowSim batch -----------------------------------------------------------------------------------

ACTIONS = ["look_up_record", "update_record", "create_record", "send_email", "log", "ask_for_approval", "wait"]


def random_flow(rng: random.Random, n_components: int = 26) -> dict:
    """A StarFlow-shaped flow: 26 components (30 tree nodes), a quarter of them flow logic with
    about half of the components nested under one through ``block``."""
    components = []
    for k in range(1, n_components + 1):
        logic = rng.random() < 0.25
        component = {"category": "flowlogic" if logic else "action",
                     "definition": rng.choice(["IF", "FOR_EACH", "ELSE"]) if logic else rng.choice(ACTIONS),
                     "order": k}
        parents = [c["order"] for c in components if c["category"] == "flowlogic"]
        if parents and rng.random() < 0.5:
            component["block"] = rng.choice(parents)
        components.append(component)
    return {"trigger": {"type": rng.choice(["record_create", "record_update", "daily", "email"])},
            "components": components}


def bench_flows(n_pairs: int) -> list[tuple[str, float, str]]:
    rng = random.Random(30)
    pairs = [(random_flow(rng), random_flow(rng)) for _ in range(n_pairs)]
    evaluate_flows(pairs[:100])  # warm-up
    seconds = timed(lambda: evaluate_flows(pairs), 3, clock=time.perf_counter)
    cpu = timed(lambda: evaluate_flows(pairs), 1)  # CPU time of all threads: load-independent cost
    small = pairs[: max(n_pairs // 20, 100)]
    with use_backend("numba"):
        evaluate_flows(small[:10])
        python_path = timed(lambda: evaluate_flows(small), 1, clock=time.perf_counter)
    return [
        (f"FlowSim+TreeBLEU+TM+CM, {n_pairs} pairs of 30-node flows: evaluate_flows (rust)", n_pairs / seconds,
         "pairs/s, wall (target ≥ 50,000)"),
        ("same, CPU time per pair (all threads)", cpu / n_pairs * 1e6, "µs"),
        ("same, Python decomposition + Numba TED (fallback path)", len(small) / python_path, "pairs/s"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer pairs and repeats")
    parser.add_argument("--append", metavar="FILE", help="append the results table to this markdown file")
    args = parser.parse_args()
    rows = []
    rows += bench_ted(n_pairs=3 if args.quick else 5, peer_pairs=2 if args.quick else 3)
    rows += bench_teds(peer_repeats=1 if args.quick else 2)
    rows += bench_flows(n_pairs=20_000 if args.quick else 100_000)
    load = os.getloadavg()
    lines = [
        f"### {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC — `python benches/bench_trees.py"
        f"{' --quick' if args.quick else ''}`",
        "",
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}",
        "",
        "| benchmark | value | unit / ratio |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {value:,.2f} | {unit} |" for name, value, unit in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.append:
        with open(args.append, "a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
