"""Flowchart parsing benchmark: scorekit's ParsingBenchmark against a straightforward pure-Python matcher.

    .venv/bin/python benches/bench_flowcharts.py [--diagrams 346] [--workers 2] [--seed 0] [--ref-limit N]

Writes 346 synthetic flowcharts (10-60 nodes, two ground-truth options each, noisy predicted texts,
flows and labels) to a temporary folder and times

1. text-only node matching of every diagram (``node_matches()`` on predictions holding only node text);
2. the full ``diagram_matches()`` (text, flow, labels, additional texts), diagrams spread over
   ``--workers`` processes;

each against the reference below: the spec's algorithm written plainly, calling
``levenshtein_with_text_normalisation`` (Python ``re`` normalisation + rapidfuzz) once per pair and the
same SciPy calls (``linear_sum_assignment``; ``milp`` on the full lexicographic model, without the
reduced-cost fixing). Both sides' totals are checked to agree.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import sys
import tempfile
import time
import unicodedata
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy import optimize, sparse

from scorekit.flowcharts import ParsingBenchmark, match_diagrams
from scorekit.flowcharts.parsing.text_distance_fns import normalise_text as _rules

#: Fresh worker processes: forking after the compiled core's thread pool has started can deadlock.
SPAWN = multiprocessing.get_context("spawn")

WORDS = ("Assessed", "eligibility", "Excluded", "Randomised", "Allocated", "intervention", "control", "Lost",
         "follow-up", "Analysed", "Declined", "participate", "Withdrew", "consent", "Received", "Discontinued",
         "Screened", "Enrolled", "Baseline", "Week", "Month", "smokers", "quit", "abstinent", "(n =", "n=")
LABELS = ("ITT", "Per protocol", "Arm A", "Arm B", "Declined", "Phase 1", "Phase 2")


# ------------------------------------------------------------------------------------------ data
def _text(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.randint(2, 5))
    return " ".join(words) + f" {rng.randint(1, 999)})"


def _noisy(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.choice((0, 0, 1, 2, 3))):
        i = rng.randrange(len(chars))
        op = rng.random()
        if op < 0.4:
            chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ")
        elif op < 0.7 and len(chars) > 1:
            del chars[i]
        else:
            chars.insert(i, rng.choice("aeiou ="))
    return "".join(chars) or "x"


def _edges(rng: random.Random, n: int) -> dict[int, list[int]]:
    out = {k: [] for k in range(1, n + 1)}
    for k in range(2, n + 1):   # a tree keeps every node in an edge
        out[rng.randint(max(1, k - 4), k - 1)].append(k)
    for _ in range(n // 5):
        a, b = rng.randint(1, n), rng.randint(1, n)
        if b not in out[a]:
            out[a].append(b)
    return out


def write_data(root: Path, n_diagrams: int, seed: int) -> dict[str, Path]:
    rng = random.Random(seed)
    dirs = {k: root / k for k in ("nodes", "labels", "flow", "additional_texts", "pred", "pred_text")}
    for d in dirs.values():
        d.mkdir(parents=True)
    for i in range(n_diagrams):
        stem = f"diagram_{i:03d}"
        n = rng.randint(10, 60)
        texts = [_text(rng) for _ in range(n)]
        labels = [rng.sample(LABELS, rng.choice((0, 0, 0, 1, 2))) for _ in range(n)]
        flow = _edges(rng, n)
        extra = [f"Figure {rng.randint(1, 9)}"] + (["Source: CONSORT"] if rng.random() < 0.5 else [])
        # option 1: the first two boxes read as one
        merged = [texts[0] + "\n" + texts[1]] + texts[2:]
        m_labels = [labels[0] + labels[1]] + labels[2:]
        remap = {k: max(1, k - 1) for k in range(1, n + 1)}
        m_flow: dict[int, list[int]] = {k: [] for k in range(1, n)}
        for a, targets in flow.items():
            for b in targets:
                ra, rb = remap[a], remap[b]
                if ra != rb and rb not in m_flow[ra]:
                    m_flow[ra].append(rb)
        targets = {b for ts in m_flow.values() for b in ts}
        for k in m_flow:
            if not m_flow[k] and k not in targets:
                m_flow[k].append(k)
        opts = [(texts, labels, flow), (merged, m_labels, m_flow)]
        dump = lambda d, obj: (dirs[d] / f"{stem}.json").write_text(json.dumps(obj))  # noqa: E731
        dump("nodes", {"options": [{"nodes": [{"node_number": k + 1, "text": t} for k, t in enumerate(o[0])]}
                                   for o in opts]})
        dump("labels", {"options": [{"nodes": [{"node_number": k + 1, "labels": lb} for k, lb in enumerate(o[1])]}
                                    for o in opts]})
        dump("flow", {"options": [{"nodes": [{"node_number": k, "points_to": ts} for k, ts in o[2].items()]}
                                  for o in opts]})
        dump("additional_texts", {"options": [{"additional_texts": extra} for _ in opts]})
        # the prediction: noisy texts, a few dropped/extra boxes, some flow and label mistakes, shuffled numbers
        keep = [k for k in range(1, n + 1) if rng.random() > 0.05]
        numbers = rng.sample(range(1, 999), len(keep) + 2)
        num = dict(zip(keep, numbers))
        nodes = []
        for k in keep:
            pts = [num[b] for b in flow[k] if b in num and rng.random() > 0.1]
            if rng.random() < 0.05:
                pts.append(num[rng.choice(keep)])
            lb = [lab for lab in labels[k - 1] if rng.random() > 0.1]
            nodes.append({"node_number": num[k], "text": _noisy(rng, texts[k - 1]), "labels": lb, "points_to": pts})
        for extra_number in numbers[len(keep):]:
            nodes.append({"node_number": extra_number, "text": _text(rng), "labels": [], "points_to": []})
        rng.shuffle(nodes)
        dump("pred", {"nodes": nodes, "additional_texts": [_noisy(rng, t) for t in extra]})
        dump("pred_text", {"nodes": [{"node_number": x["node_number"], "text": x["text"]} for x in nodes]})
    return dirs


# ----------------------------------------------------------------------------- the reference
def ref_normalise(text: str) -> str:
    """The spec's normalisation steps applied one after the other, every step on every text (the
    same compiled patterns as scorekit's, without its skipping of steps that cannot apply)."""
    text = unicodedata.normalize("NFC", text)
    for pattern, plain in _rules._ORDINALS:
        text = pattern.sub(plain, text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = _rules._BR_RUN.sub("<br>", text).translate(_rules._BULLETS)
    text = _rules._LETTER_O_BULLET.sub("\u2022 ", text).translate(_rules._CHAR_MAP)
    text = _rules._SPACES_AROUND_NEWLINE.sub("\n", _rules._SPACES.sub(" ", text))
    text = _rules._LINE_DASH.sub("- ", _rules._LINE_BULLET.sub("\u2022 ", text))
    text = _rules._SPACE_AFTER_OPEN.sub("", _rules._SPACE_BEFORE_PUNCT.sub("", text))
    text = _rules._PLUS.sub("+", _rules._EQUALS.sub(" = ", text))
    text = _rules._SPACES.sub(" ", _rules._WORD_HYPHEN.sub("-", text))
    return _rules._NEWLINES.sub("\n", text).strip()


def ref_distance(true_text, pred_text) -> int:
    return Levenshtein.distance(ref_normalise(true_text or ""), ref_normalise(pred_text or ""))


def ref_costs(T, P):
    C = np.array([[ref_distance(t, p) for p in P] for t in T], dtype=float).reshape(len(T), len(P))
    return C, np.array([ref_distance(t, None) for t in T], float), np.array([ref_distance(None, p) for p in P], float)


def ref_lsa(C, u, v):
    nT, nP = C.shape
    n = nT + nP
    top = max([0.0] + C.ravel().tolist() + u.tolist() + v.tolist())
    M = np.full((n, n), (top + 1) * (n + 1))
    M[:nT, :nP] = C
    for i in range(nT):
        M[i, nP + i] = u[i]
    for j in range(nP):
        M[nT + j, j] = v[j]
    M[nT:, nP:] = 0
    r, c = optimize.linear_sum_assignment(M)
    pairs = [None] * nT
    for i, j in zip(r, c):
        if i < nT and j < nP:
            pairs[i] = int(j)
    return pairs, float(M[r, c].sum())


def ref_text_list(T, P):
    if not T and not P:
        return 0.0
    C, u, v = ref_costs(T, P)
    pairs, total = ref_lsa(C, u, v)
    return total


def ref_edges(nodes):
    idx = {n["node_number"]: i for i, n in enumerate(nodes)}
    return list(dict.fromkeys((i, idx[k]) for i, n in enumerate(nodes) for k in n["points_to"]))


def ref_match_option(T, P):
    C, u, v = ref_costs([t["text"] for t in T], [p["text"] for p in P])
    pairs, c_star = ref_lsa(C, u, v)
    nT, nP = len(T), len(P)
    TE, PE = ref_edges(T), ref_edges(P)
    nx, nE = nT * nP, len(TE) * len(PE)
    nvar = nx + nT + nP + nE
    A, lo, hi = [], [], []
    for t in range(nT):
        row = np.zeros(nvar); row[t * nP:(t + 1) * nP] = 1; row[nx + t] = 1
        A.append(row); lo.append(1); hi.append(1)
    for p in range(nP):
        row = np.zeros(nvar); row[p:nx:nP] = 1; row[nx + nT + p] = 1
        A.append(row); lo.append(1); hi.append(1)
    row = np.concatenate([C.ravel(), u, v, np.zeros(nE)])
    A.append(row); tol = 1e-9 * max(1, abs(c_star)); lo.append(c_star - tol); hi.append(c_star + tol)
    for e, (s, d) in enumerate(TE):
        for f, (s2, d2) in enumerate(PE):
            y = nx + nT + nP + e * len(PE) + f
            for x in (s * nP + s2, d * nP + d2):
                row = np.zeros(nvar); row[y] = 1; row[x] = -1
                A.append(row); lo.append(-np.inf); hi.append(0)
            row = np.zeros(nvar); row[y] = 1; row[s * nP + s2] -= 1; row[d * nP + d2] -= 1
            A.append(row); lo.append(-1); hi.append(np.inf)
    cons = [optimize.LinearConstraint(sparse.csr_array(np.array(A)), lo, hi)]
    solve = lambda obj: optimize.milp(obj, constraints=cons, integrality=np.ones(nvar),  # noqa: E731
                                      bounds=optimize.Bounds(0, 1), options={"mip_rel_gap": 0}).x
    if TE and PE:
        obj = np.zeros(nvar); obj[nx + nT + nP:] = -1
        x = solve(obj)
        m = round(x[nx + nT + nP:].sum())
        row = np.zeros(nvar); row[nx + nT + nP:] = 1
        cons.append(optimize.LinearConstraint(row.reshape(1, -1), m, m))
    cache = {}

    def lab(a, b):
        key = (tuple(a), tuple(b))
        if key not in cache:
            cache[key] = ref_text_list(a, b)
        return cache[key]
    obj = np.zeros(nvar)
    obj[:nx] = [lab(t["labels"], p["labels"]) for t in T for p in P]
    obj[nx:nx + nT] = [lab(t["labels"], []) for t in T]
    obj[nx + nT:nx + nT + nP] = [lab([], p["labels"]) for p in P]
    x = solve(obj)
    X = x[:nx].reshape(nT, nP) > 0.5
    pairs = [int(np.flatnonzero(X[t])[0]) if X[t].any() else None for t in range(nT)]
    return pairs, c_star


def ref_flow_jaccard(T, P, pairs):
    tnum = {i: T[i]["node_number"] for i in range(len(T))}
    matched = {j: tnum[i] for i, j in enumerate(pairs) if j is not None}
    pnum = {p["node_number"]: j for j, p in enumerate(P)}
    ET = {(t["node_number"], k) for t in T for k in t["points_to"]}
    counter = 10000
    EP = set()
    for j, p in enumerate(P):
        for k in dict.fromkeys(p["points_to"]):
            s = matched.get(j)
            if s is None:
                s, counter = counter, counter + 1
            d = matched.get(pnum[k])
            if d is None:
                d, counter = counter, counter + 1
            EP.add((s, d))
    union = len(ET | EP)
    return len(ET & EP) / union if union else 1.0


def ref_labels_total(T, P, pairs):
    used = {j for j in pairs if j is not None}
    total = sum(ref_text_list(T[i]["labels"], P[j]["labels"] if j is not None else []) for i, j in enumerate(pairs))
    return total + sum(ref_text_list([], P[j]["labels"]) for j in range(len(P)) if j not in used)


def ref_diagram(stem, dirs, text_only=False):
    """(node text cost, label cost, additional cost, flow jaccard) of one flowchart."""
    load = lambda d: json.loads((dirs[d] / f"{stem}.json").read_text())  # noqa: E731
    pred = load("pred_text" if text_only else "pred")
    P = sorted(pred["nodes"], key=lambda n: n["node_number"])
    nodes, labels, flow, extra = (load(k)["options"] for k in ("nodes", "labels", "flow", "additional_texts"))
    results = []
    for i in range(len(nodes)):
        T = [{"node_number": a["node_number"], "text": a["text"], "labels": b["labels"], "points_to": c["points_to"]}
             for a, b, c in zip(*(sorted(o[i]["nodes"], key=lambda n: n["node_number"]) for o in (nodes, labels, flow)))]
        if text_only:
            C, u, v = ref_costs([t["text"] for t in T], [p["text"] for p in P])
            pairs, cost = ref_lsa(C, u, v)
            results.append((cost, 0.0, 0.0, 0.0, i))
            continue
        pairs, cost = ref_match_option(T, P)
        results.append((cost, ref_flow_jaccard(T, P, pairs), T, pairs, i))
    if text_only:
        best = min(results, key=lambda r: r[0])
        return best[0], 0.0, 0.0, 0.0
    low = min(r[0] for r in results)
    cands = [r for r in results if abs(r[0] - low) <= 1e-9 * max(1, low)]
    high = max(r[1] for r in cands)
    cands = [r for r in cands if abs(r[1] - high) <= 1e-9]
    if len(cands) > 1:
        scored = [(ref_labels_total(r[2], P, r[3]), r) for r in cands]
        low_l = min(s for s, _ in scored)
        cands = [r for s, r in scored if abs(s - low_l) <= 1e-9 * max(1, low_l)]
    if len(cands) > 1:
        scored = [(ref_text_list(extra[r[4]]["additional_texts"], pred["additional_texts"]), r) for r in cands]
        low_a = min(s for s, _ in scored)
        cands = [r for s, r in scored if abs(s - low_a) <= 1e-9 * max(1, low_a)]
    cost, jac, T, pairs, i = cands[0]
    return (cost, ref_labels_total(T, P, pairs),
            ref_text_list(extra[i]["additional_texts"], pred["additional_texts"]), jac)


def _ref_share(args):
    stems, dirs, text_only = args
    return [ref_diagram(s, dirs, text_only) for s in stems]


# ---------------------------------------------------------------------------------- scorekit
def _bench(dirs, n, pred="pred"):
    return ParsingBenchmark(dirs[pred], true_nodes_dir=dirs["nodes"], true_labels_dir=dirs["labels"],
                            true_additional_texts_dir=dirs["additional_texts"], true_flow_dir=dirs["flow"],
                            expected_num_diagrams=n)


def _full_share(args):
    dirs, n, start, step = args
    b = _bench(dirs, n)
    dms = match_diagrams(b.true_diagrams_options_list[start::step], b.pred_diagrams[start::step], b.distance_fn)
    return [(d.total_node_text_cost, d.total_label_error_cost, d.total_additional_text_cost, d.flow_score.jaccard)
            for d in dms]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--diagrams", type=int, default=346)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ref-limit", type=int, default=None,
                    help="run the reference on only the first N diagrams (per-diagram rates are compared)")
    args = ap.parse_args()
    n = args.diagrams
    with tempfile.TemporaryDirectory() as tmp:
        dirs = write_data(Path(tmp), n, args.seed)
        stems = sorted(p.stem for p in dirs["pred"].glob("*.json"))
        ref_stems = stems[:args.ref_limit] if args.ref_limit else stems
        nodes = [len(json.loads((dirs["pred"] / f"{s}.json").read_text())["nodes"]) for s in stems]
        print(f"{n} diagrams, {sum(nodes)} predicted nodes ({min(nodes)}-{max(nodes)} per diagram), "
              f"2 ground-truth options each; {args.workers} worker(s) for the full matching; "
              f"reference on {len(ref_stems)} diagrams", flush=True)

        # 1. text-only node matching, one process
        t0 = time.perf_counter()
        b = _bench(dirs, n, "pred_text")
        nms = b.node_matches()
        t_sk_text = time.perf_counter() - t0
        sk_text = [nm.total_node_text_cost for nm in nms]
        t0 = time.perf_counter()
        ref_text = [ref_diagram(s, dirs, text_only=True)[0] for s in ref_stems]
        t_ref_text = (time.perf_counter() - t0) * len(stems) / len(ref_stems)
        assert sk_text[:len(ref_text)] == ref_text, "text-only totals differ"
        print(f"text-only node matching: scorekit {t_sk_text:.2f} s, reference {t_ref_text:.2f} s"
              f"{' (extrapolated)' if len(ref_stems) < n else ''}, {t_ref_text / t_sk_text:.1f}x", flush=True)

        # 2. full diagram matching over workers
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.workers, mp_context=SPAWN) as pool:
            shares = list(pool.map(_full_share, [(dirs, n, k, args.workers) for k in range(args.workers)]))
        t_sk_full = time.perf_counter() - t0
        sk_full = [None] * n
        for k, share in enumerate(shares):
            sk_full[k::args.workers] = share
        print(f"full diagram_matches(): scorekit {t_sk_full:.2f} s on {args.workers} worker(s)", flush=True)
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.workers, mp_context=SPAWN) as pool:
            ref_shares = list(pool.map(_ref_share, [(ref_stems[k::args.workers], dirs, False)
                                                    for k in range(args.workers)]))
        t_ref_full = (time.perf_counter() - t0) * len(stems) / len(ref_stems)
        ref_full = [None] * len(ref_stems)
        for k, share in enumerate(ref_shares):
            ref_full[k::args.workers] = share
        for i, (a, r) in enumerate(zip(sk_full, ref_full)):
            assert all(math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12) for x, y in zip(a, r)), (stems[i], a, r)
        totals = np.array(sk_full).sum(axis=0)
        print(f"full diagram_matches(): scorekit {t_sk_full:.2f} s, reference {t_ref_full:.2f} s"
              f"{' (extrapolated)' if len(ref_stems) < n else ''}, {t_ref_full / t_sk_full:.1f}x; "
              f"totals: node text {totals[0]:.0f}, labels {totals[1]:.0f}, additional {totals[2]:.0f}, "
              f"mean flow Jaccard {totals[3] / n:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
