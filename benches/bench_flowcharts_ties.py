"""Node matching when every box has the same text (issue #30 item 16): time per flowchart.

Two kinds of diagrams, all texts "box", the prediction with flow and labels:
``copy``: a flowchart-like true graph (a chain with ~30 % skip edges) and a prediction that is a
noisy copy with shuffled node numbers (10 % of arrows dropped, 10 % of boxes with an extra arrow);
``random``: unrelated random graphs (1-3 arrows per box), the hard case of maximum common edge subgraph.
Each case runs in its own process (``--timeout`` seconds, ``--memory`` GB); run it against any
checkout with ``PYTHONPATH=<checkout>/python``, so the code before a change can be timed too.

    PYTHONPATH=python .venv/bin/python benches/bench_flowcharts_ties.py --sizes 8 12 14 50 300
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time


def diagrams(kind: str, n: int, seed: int = 0):
    from scorekit.flowcharts import Diagram, Node

    rng = random.Random(seed)
    if kind == "copy":
        true = [(i, [i + 1] if i < n else []) for i in range(1, n + 1)]
        true = [(i, pt + ([rng.randint(i + 2, n)] if rng.random() < 0.3 and i + 2 <= n else [])) for i, pt in true]
        perm = list(range(1, n + 1))
        rng.shuffle(perm)
        pred = sorted((perm[i - 1], sorted({perm[k - 1] for k in pt if rng.random() > 0.1}
                                            | ({rng.randint(1, n)} if rng.random() < 0.1 else set())))
                      for i, pt in true)
    else:
        true = [(i, sorted(rng.sample(range(1, n + 1), rng.randint(1, 3)))) for i in range(1, n + 1)]
        pred = [(i, sorted(rng.sample(range(1, n + 1), rng.randint(1, 3)))) for i in range(1, n + 1)]
    labels = ["yes", "no", "n=1"]

    def build(kind_, nodes):
        opt = 0 if kind_ == "true" else None
        return Diagram(nodes=[Node(node_number=i, text="box", points_to=pt, labels=rng.sample(labels, rng.randint(0, 1)),
                                   diagram_type=kind_, true_option_idx=opt, parent_img_code="tied")
                              for i, pt in nodes],
                       additional_texts=[], diagram_type=kind_, parent_img_code="tied", true_option_idx=opt)
    return build("true", true), build("pred", pred)


def one(kind: str, n: int) -> dict:
    from scorekit.flowcharts import match_node_labels, match_nodes_single_option
    from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import levenshtein_with_text_normalisation

    T, P = diagrams(kind, n)
    start = time.perf_counter()
    nm = match_nodes_single_option(T, P, levenshtein_with_text_normalisation, 0)
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 2), "preserved_edges": nm.flow_score.tp,
            "label_cost": match_node_labels(nm, levenshtein_with_text_normalisation).total_label_error_cost,
            "unproven": [g.describe() for g in getattr(nm, "unproven", [])]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 12, 14, 50, 300])
    ap.add_argument("--kinds", nargs="+", default=["copy", "random"])
    ap.add_argument("--timeout", type=float, default=150.0)
    ap.add_argument("--memory", type=float, default=2.0)
    ap.add_argument("--one", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return
    limit = int(args.memory * 2**30)
    for kind in args.kinds:
        for n in args.sizes:
            start = time.perf_counter()
            try:
                done = subprocess.run([sys.executable, __file__, "--one", kind, str(n)], capture_output=True, text=True,
                                      timeout=args.timeout,
                                      preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
                result = json.loads(done.stdout) if done.returncode == 0 else {
                    "failed": (done.stderr.strip().splitlines() or ["killed"])[-1][:120]}
            except subprocess.TimeoutExpired:
                result = {"failed": f"still running after {args.timeout:g} s, stopped"}
            print(f"{kind:6} {n:4}  wall {time.perf_counter() - start:6.1f} s  {json.dumps(result)}", flush=True)


if __name__ == "__main__":
    main()
