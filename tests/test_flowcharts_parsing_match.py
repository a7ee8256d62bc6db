"""Flowchart parsing: the data model and the exact matcher (spec vectors M, N, O, T31; brute force)."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from rapidfuzz.distance import Levenshtein


from scorekit.flowcharts import (  # noqa: E402
    Diagram, DiagramOptions, Node, NodeMatch, NodeMatches, TextListMatch, TextListMatches, Unproven,
    match_node_labels, match_nodes, match_nodes_single_option, match_texts_lists,
)
from scorekit.flowcharts.parsing import _costs  # noqa: E402
from scorekit.flowcharts.parsing.text_distance_fns.normalise_text import nfc_and_space_normalise as N  # noqa: E402
from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import (  # noqa: E402
    levenshtein_fn as R, levenshtein_with_text_normalisation as L,
    number_only_levenshtein as NOL,
)


def diagram(kind, nodes, *, flow=True, labels=False, additional=None, idx=0, stem="x"):
    """nodes: (number, text, points_to, labels) tuples."""
    opt = idx if kind == "true" else None
    built = [Node(node_number=n, text=t, points_to=list(pt) if flow else None,
                  labels=list(lb) if labels else None, diagram_type=kind, true_option_idx=opt, parent_img_code=stem)
             for n, t, pt, lb in nodes]
    if kind == "true" and additional is None:
        additional = []
    return Diagram(nodes=built, additional_texts=additional, diagram_type=kind, parent_img_code=stem,
                   true_option_idx=opt)


def options(*diagrams, stem="x"):
    return DiagramOptions(options=list(diagrams), parent_img_code=stem,
                          parent_nodes_path=__import__("pathlib").Path(f"n/{stem}.json"),
                          parent_labels_path=__import__("pathlib").Path(f"l/{stem}.json"),
                          parent_additional_texts_path=__import__("pathlib").Path(f"a/{stem}.json"),
                          parent_flow_path=__import__("pathlib").Path(f"f/{stem}.json"))


def recs(nm):
    return [(m.true_node.node_number if m.true_node else None, m.pred_node.node_number if m.pred_node else None,
             m.node_text_cost) for m in nm.matches]


def text_recs(tm):
    return [(m.true_index, m.pred_index, m.cost) for m in tm.matches]


# ------------------------------------------------------------------- the private text distances
def test_private_distances_follow_the_spec():
    assert L("n=10", "n = 10") == 0 and R("n=10", "n = 10") == 2
    assert L(None, " ABC ") == 3 and R(None, " ABC ") == 5
    assert L("Excluded (n = 24)", "Excluded (n=25)") == 1
    assert L("Follow\u2013up", "Follow-up") == 0 and L("e\u0301", "\u00e9") == 0
    assert N("Allocated  \n\n\t n  =  50") == "Allocated\nn = 50"
    assert N("o\no x") == "\u2022 \u2022 x" and N("-5 kg") == "- 5 kg" and N("a==b") == "a = = b"
    assert N("x <BR /> <br>\ny") == "x <br>y" and L("5 - 10", "5-10") == 0
    assert NOL("45.5% (n = 10)", "45,5% (n = 10)") == 1 and NOL(None, "n = 12") == 2
    with pytest.raises(ValueError, match="Both true_text and pred_text cannot be None."):
        L(None, None)


# ----------------------------------------------------------------------------- text lists (M)
def test_m1_to_m4():
    m1 = match_texts_lists(["Figure 1", "Source: trial"], ["Source trial", "Figure 1", "Notes"], R)
    assert text_recs(m1) == [(0, 1, 0.0), (1, 0, 1.0), (None, 2, 5.0)] and m1.total_cost == 6.0
    assert text_recs(match_texts_lists(["b", "a"], ["a"], R)) == [(0, None, 1.0), (1, 0, 0.0)]
    assert text_recs(match_texts_lists(["Arm A", "Arm B"], ["Arm B", "Arm A"], R)) == [(0, 1, 0.0), (1, 0, 0.0)]
    assert [(m.true_index, m.pred_index) for m in match_texts_lists(["x", "x"], ["x", "x"], R).matches] == [
        (0, 0), (1, 1)]
    empty = match_texts_lists([], [], L)
    assert empty.matches == [] and empty.total_cost == 0.0
    assert text_recs(match_texts_lists(["CONSORT diagram"], [], L)) == [(0, None, 15.0)]
    assert text_recs(match_texts_lists([], ["Fig. 2"], L)) == [(None, 0, 6.0)]
    assert all(isinstance(m.cost, float) for m in m1.matches)


# ------------------------------------------------------------------------------ nodes (N)
def test_n1_flow_breaks_a_text_tie():
    T = diagram("true", [(1, "Randomised", [2], []), (2, "Analysed", [3], []), (3, "Analysed", [], [])], labels=True)
    P = diagram("pred", [(1, "Analysed", [], []), (2, "Randomised", [3], []), (3, "Analysed", [1], [])])
    nm = match_nodes_single_option(T, P, L, 0)
    assert recs(nm) == [(1, 2, 0), (2, 3, 0), (3, 1, 0)]
    fs = nm.flow_score
    assert (fs.tp, fs.fp, fs.fn, fs.jaccard) == (2, 0, 0, 1.0)
    text_only = diagram("pred", [(1, "Analysed", [], []), (2, "Randomised", [3], []), (3, "Analysed", [1], [])],
                        flow=False)
    assert recs(match_nodes_single_option(T, text_only, L, 0)) == [(1, 2, 0), (2, 1, 0), (3, 3, 0)]


def test_n2_labels_break_a_text_tie():
    T = diagram("true", [(1, "Follow-up", [2], ["Arm A"]), (2, "Follow-up", [], ["Arm B"])], labels=True)
    P = diagram("pred", [(1, "Follow-up", [], ["Arm B"]), (2, "Follow-up", [], ["Arm A"])], flow=False, labels=True)
    nm = match_nodes_single_option(T, P, L, 0)
    assert recs(nm) == [(1, 2, 0), (2, 1, 0)]
    assert match_node_labels(nm, L).total_label_error_cost == 0.0


def test_n3_flow_outranks_labels():
    T = diagram("true", [(1, "Screened", [2], []), (2, "Excluded", [3], ["Arm A"]), (3, "Excluded", [], ["Arm B"])],
                labels=True)
    spec = [(1, "Screened", [2], []), (2, "Excluded", [3], ["Arm B"]), (3, "Excluded", [], ["Arm A"])]
    nm = match_nodes_single_option(T, diagram("pred", spec, labels=True), L, 0)
    assert [r[:2] for r in recs(nm)] == [(1, 1), (2, 2), (3, 3)]
    assert nm.flow_score.jaccard == 1.0 and match_node_labels(nm, L).total_label_error_cost == 2.0
    nm = match_nodes_single_option(T, diagram("pred", spec, labels=True, flow=False), L, 0)
    assert [r[:2] for r in recs(nm)] == [(1, 1), (2, 3), (3, 2)]
    assert match_node_labels(nm, L).total_label_error_cost == 0.0


def test_n4_text_outranks_flow():
    T = diagram("true", [(1, "Start", [2], []), (2, "End", [], [])], labels=True)
    P = diagram("pred", [(1, "End", [2], []), (2, "Start", [], [])])
    nm = match_nodes_single_option(T, P, L, 0)
    assert recs(nm) == [(1, 2, 0), (2, 1, 0)]
    fs = nm.flow_score
    assert (fs.tp, fs.fp, fs.fn, fs.precision, fs.recall, fs.f1, fs.jaccard) == (0, 1, 1, 0.0, 0.0, 0.0, 0.0)
    assert fs.missing_edges == {(1, 2)} and fs.extra_edges == {(2, 1)}


def test_n5_generated_ids():
    T = diagram("true", [(1, "Enrolled", [2], []), (2, "Allocated", [], [])], labels=True)
    P = diagram("pred", [(1, "Enrolled", [2], []), (2, "Allocated", [3], []), (3, "Extra box", [1], [])])
    nm = match_nodes_single_option(T, P, L, 0)
    assert recs(nm) == [(1, 1, 0), (2, 2, 0), (None, 3, 9)]
    fs = nm.flow_score
    assert (fs.tp, fs.fp, fs.fn) == (1, 2, 0)
    assert fs.precision == pytest.approx(1 / 3) and fs.recall == 1.0 and fs.f1 == pytest.approx(0.5)
    assert fs.jaccard == pytest.approx(1 / 3)
    assert fs.missing_edges == set() and fs.extra_edges == {(2, 10000), (10001, 1)}


def test_n6_unmatched_true_and_arbitrary_pred_numbers():
    T = diagram("true", [(1, "Enrolled", [2], []), (2, "Allocated", [3], []), (3, "Analysed", [], [])], labels=True)
    P = diagram("pred", [(5, "Enrolled", [7], []), (7, "Analysed", [], [])])
    nm = match_nodes_single_option(T, P, L, 0)
    assert recs(nm) == [(1, 5, 0), (2, None, 9), (3, 7, 0)]
    fs = nm.flow_score
    assert (fs.tp, fs.fp, fs.fn, fs.jaccard) == (0, 1, 2, 0.0)
    assert fs.missing_edges == {(1, 2), (2, 3)} and fs.extra_edges == {(1, 3)}


def test_n7_empty_node_matches():
    nm = NodeMatches(matches=[], true_diagram_option_idx=0)
    assert nm.total_node_text_cost == 0.0 and nm.flow_score.jaccard == 1.0 and nm.total_label_error_cost == 0.0
    with pytest.raises(ValueError):
        nm.parent_img_code


def test_t31_numbers_only_cost_of_an_unmatched_pred():
    P = diagram("pred", [(1, "Extra box (n=7)", None, None)], flow=False)
    record = NodeMatch(true_node=None, pred_node=P.nodes[0], node_text_cost=15)
    assert record.numbers_only_node_text_cost == 1.0 and isinstance(record.numbers_only_node_text_cost, float)


def test_duplicate_pred_targets_are_one_edge():
    T = diagram("true", [(1, "A", [2], []), (2, "B", [], [])], labels=True)
    P = diagram("pred", [(1, "A", [2, 2], []), (2, "B", [], [])])
    fs = match_nodes_single_option(T, P, L, 0).flow_score
    assert (fs.tp, fs.fp, fs.fn) == (1, 0, 0)


# --------------------------------------------------------------------------- options (O)
def _three(edges, idx):
    texts = {1: "Screened", 2: "Excluded", 3: "Included"}
    return diagram("true", [(n, texts[n], edges.get(n, []), []) for n in (1, 2, 3)], labels=True, idx=idx)


def test_o1_text_decides():
    o0 = diagram("true", [(1, "Screened", [2], []), (2, "Included", [], [])], labels=True, idx=0)
    o1 = diagram("true", [(1, "Screened", [2], []), (2, "Included (n=40)", [], [])], labels=True, idx=1)
    P = diagram("pred", [(1, "Screened", [2], []), (2, "Included (n = 40)", [], [])], labels=True, additional=[])
    nm = match_nodes(options(o0, o1), P, L)
    assert nm.true_diagram_option_idx == 1 and nm.total_node_text_cost == 0.0


def test_o2_o3_o6_flow_jaccard_decides_only_with_flow():
    opts = options(_three({1: [2, 3]}, 0), _three({1: [2], 2: [3]}, 1))
    with_flow = diagram("pred", [(1, "Screened", [2], []), (2, "Excluded", [3], []), (3, "Included", [], [])])
    assert match_nodes(opts, with_flow, L).true_diagram_option_idx == 1
    opts3 = options(_three({1: [2, 3], 2: [3]}, 0), _three({1: [2], 2: [3]}, 1))
    assert match_nodes(opts3, with_flow, L).true_diagram_option_idx == 1   # Jaccard 2/3 vs 1, TP 2 both
    text_only = diagram("pred", [(1, "Screened", [], []), (2, "Excluded", [], []), (3, "Included", [], [])],
                        flow=False)
    assert match_nodes(opts, text_only, L).true_diagram_option_idx == 0


def test_o4_labels_decide_and_are_kept():
    o0 = diagram("true", [(1, "A", [2], ["Phase 1"]), (2, "B", [], [])], labels=True, idx=0)
    o1 = diagram("true", [(1, "A", [2], []), (2, "B", [], ["Phase 1"])], labels=True, idx=1)
    P = diagram("pred", [(1, "A", [2], []), (2, "B", [], ["Phase 1"])], labels=True)
    nm = match_nodes(options(o0, o1), P, L)
    assert nm.true_diagram_option_idx == 1
    assert all(m.label_matches is not None for m in nm.matches) and nm.total_label_error_cost == 0.0
    # the label cost of option 0 is 14 (the label moved to another node)
    nm0 = match_node_labels(match_nodes_single_option(o0, P, L, 0), L)
    assert nm0.total_label_error_cost == 14.0


def test_o5_additional_texts_decide():
    o0 = diagram("true", [(1, "A", [2], []), (2, "B", [], [])], labels=True, idx=0, additional=["Figure 1"])
    o1 = diagram("true", [(1, "A", [2], []), (2, "B", [], [])], labels=True, idx=1, additional=["Figure 2"])
    P = diagram("pred", [(1, "A", [2], []), (2, "B", [], [])], additional=["Figure 2"])
    assert match_nodes(options(o0, o1), P, L).true_diagram_option_idx == 1
    P = diagram("pred", [(1, "A", [2], []), (2, "B", [], [])], additional=[])
    assert match_nodes(options(o0, o1), P, L).true_diagram_option_idx == 0


# --------------------------------------------------------------------------- model rules
def test_model_rules():
    import pydantic

    with pytest.raises(pydantic.ValidationError):
        Node(node_number=1000, text="a", diagram_type="pred", parent_img_code="x")
    with pytest.raises(pydantic.ValidationError):
        Node(node_number="1", text="a", diagram_type="pred", parent_img_code="x")
    with pytest.raises(pydantic.ValidationError):
        Node(node_number=True, text="a", diagram_type="pred", parent_img_code="x")
    with pytest.raises(pydantic.ValidationError):
        Node(node_number=1, text="", diagram_type="pred", parent_img_code="x")
    with pytest.raises(pydantic.ValidationError):
        Node(node_number=1, text="a", diagram_type="true", parent_img_code="x")
    with pytest.raises(pydantic.ValidationError):
        Node(node_number=1, text="a", diagram_type="pred", true_option_idx=0, parent_img_code="x")
    assert Node(node_number=-3, text="a", diagram_type="pred", parent_img_code="x").node_number == -3
    with pytest.raises(pydantic.ValidationError):   # labels all-or-none
        Diagram(nodes=[Node(node_number=1, text="a", labels=[], diagram_type="pred", parent_img_code="x"),
                       Node(node_number=2, text="b", diagram_type="pred", parent_img_code="x")],
                diagram_type="pred", parent_img_code="x")
    with pytest.raises(pydantic.ValidationError):   # dangling target
        diagram("pred", [(1, "a", [5], [])])
    with pytest.raises(pydantic.ValidationError):   # true node in no edge
        diagram("true", [(1, "a", [], []), (2, "b", [], [])], labels=True)
    with pytest.raises(pydantic.ValidationError):   # true numbers not 1..n
        diagram("true", [(1, "a", [3], []), (3, "b", [], [])], labels=True)
    with pytest.raises(pydantic.ValidationError):
        Diagram(diagram_type="pred", parent_img_code="x")
    with pytest.raises(pydantic.ValidationError):
        TextListMatch(true_index=0, cost=1.0)
    with pytest.raises(pydantic.ValidationError):
        TextListMatch(cost=1.0)
    assert TextListMatch(true_index=0, true_text="a", cost=2).cost == 2.0
    assert TextListMatches(matches=[]).total_cost == 0.0
    a = diagram("pred", [(1, "a", [], [])], stem="a").nodes[0]
    b = diagram("pred", [(1, "b", [], [])], stem="b").nodes[0]
    with pytest.raises(pydantic.ValidationError):
        NodeMatch(true_node=None, pred_node=None, node_text_cost=0)
    with pytest.raises(pydantic.ValidationError):
        NodeMatch(true_node=a.model_copy(update={"diagram_type": "true", "true_option_idx": 0}), pred_node=b,
                  node_text_cost=0)
    with pytest.raises(pydantic.ValidationError):
        NodeMatches(matches=[NodeMatch(true_node=None, pred_node=a, node_text_cost=0)] * 2, true_diagram_option_idx=0)
    nm = NodeMatches(matches=[], true_diagram_option_idx=0)
    nm.add(None, a, 1)
    assert nm.get_matched_true_node(1) is None and nm.get_matched_true_node(9, allow_fake_pred_node=True) is None
    with pytest.raises(ValueError):
        nm.get_matched_true_node(9)
    with pytest.raises(ValueError):
        nm.get_matched_pred_node(1)
    with pytest.raises(ValueError):
        nm.total_label_error_cost
    with pytest.raises(ValueError):   # flow score needs points_to
        NodeMatches(matches=[NodeMatch(true_node=None, pred_node=diagram("pred", [(1, "a", None, [])], flow=False)
                                       .nodes[0], node_text_cost=0)], true_diagram_option_idx=0).flow_score
    assert "text_done" not in nm.model_dump()


# ------------------------------------------------------------------------ custom distances
def test_custom_distance_values_are_checked():
    T = diagram("true", [(1, "A", [2], []), (2, "B", [], [])], labels=True)
    P = diagram("pred", [(1, "A", [2], []), (2, "C", [], [])])
    for bad in (-1, float("nan"), float("inf"), "3", True, None):
        with pytest.raises(ValueError, match="finite, non-negative costs"):
            match_nodes_single_option(T, P, lambda *, true_text, pred_text, v=bad: v, 0)
    import numpy as np

    nm = match_nodes_single_option(T, P, lambda *, true_text, pred_text: np.int64(0 if true_text == pred_text else 2), 0)
    assert nm.total_node_text_cost == 2.0 and all(isinstance(m.node_text_cost, float) for m in nm.matches)


def test_builtin_distance_batches_match_per_pair_calls():
    texts_t = ["Assessed (n = 120)", "Excluded\u2013 x", "o Smokers", "", "Randomised"][:4]
    texts_p = ["Assessed (n=120)", "Excluded-x", "\u2022 Smokers", "Randomized (n=100)", "Extra"]
    texts_t = [t for t in texts_t if t]
    C, u, v = _costs.Costs(L).matrices(texts_t, texts_p)
    slow = _costs.Costs(lambda *, true_text, pred_text: L(true_text, pred_text))
    assert slow.normalise is None
    C2, u2, v2 = slow.matrices(texts_t, texts_p)
    assert (C == C2).all() and (u == u2).all() and (v == v2).all()


# flow (1 -> 2 kept straight) and labels (crossed) disagree: the label stage needs the solver
_CROSSED_T = diagram("true", [(1, "A", [2], ["x"]), (2, "A", [], ["y"])], labels=True, stem="trial_Z")
_CROSSED_P = diagram("pred", [(1, "A", [2], ["y"]), (2, "A", [], ["x"])], labels=True, stem="trial_Z")


def test_solver_failure_is_a_runtime_error(monkeypatch):
    import scipy.optimize

    nm = match_nodes_single_option(_CROSSED_T, _CROSSED_P, L, 0)
    assert recs(nm) == [(1, 1, 0.0), (2, 2, 0.0)] and nm.flow_score.tp == 1 and nm.unproven == []
    assert match_node_labels(nm, L).total_label_error_cost == 2.0

    class Failed:
        status, success, x, message, mip_dual_bound = 4, False, None, "numerical trouble", None

    monkeypatch.setattr(scipy.optimize, "milp", lambda *a, **k: Failed())
    with pytest.raises(RuntimeError, match=r"Could not establish an optimal node matching.*trial_Z.*option 0"):
        match_nodes_single_option(_CROSSED_T, _CROSSED_P, L, 0)
    text_only = diagram("pred", [(1, "A", [], []), (2, "A", [], [])], flow=False, stem="trial_Z")
    assert len(match_nodes_single_option(_CROSSED_T, text_only, L, 0).matches) == 2


def test_a_stage_stopped_by_the_time_limit_is_reported_with_its_bound(monkeypatch):
    """The solver stops at the time limit without a matching: the best one found so far stands (here
    the flow stage's) and ``unproven`` says which stage, what was found and the bound."""
    import scipy.optimize

    class TimedOut:
        status, success, x, message, mip_dual_bound = 1, False, None, "Time limit reached", None

    monkeypatch.setattr(scipy.optimize, "milp", lambda *a, **k: TimedOut())
    nm = match_nodes(options(_CROSSED_T, stem="trial_Z"), _CROSSED_P, L)
    assert recs(nm) == [(1, 1, 0.0), (2, 2, 0.0)] and nm.flow_score.tp == 1
    assert nm.unproven == [Unproven(option_idx=0, stage="labels", found=2.0, bound=0.0)]
    assert nm.unproven[0].describe() == "option 0: label cost 2 found, at least 0 possible"


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, True, "5"])
def test_time_limit_must_be_positive_seconds(bad):
    with pytest.raises(ValueError, match="time_limit must be a positive finite number of seconds"):
        match_nodes_single_option(_CROSSED_T, _CROSSED_P, L, 0, time_limit=bad)


# ------------------------------------------------------------------------------ brute force
def _all_matchings(nT, nP):
    """Every partial matching as a tuple: for each true index its pred index or None."""
    out = []

    def go(t, used, acc):
        if t == nT:
            out.append(tuple(acc))
            return
        go(t + 1, used, acc + [None])
        for p in range(nP):
            if p not in used:
                go(t + 1, used | {p}, acc + [p])
    go(0, frozenset(), [])
    return out


_MATCHINGS = {(a, b): _all_matchings(a, b) for a in range(1, 6) for b in range(1, 6)}


def oracle(t_nodes, p_nodes):
    """Independent costs of two diagrams given as node tuples (number, text, points_to, labels): text
    costs C, u, v (raw Levenshtein), edges TE, PE by index, label-list costs L_, Lu, Lv."""
    C = [[Levenshtein.distance(a[1], b[1]) for b in p_nodes] for a in t_nodes]
    u, v = [len(a[1]) for a in t_nodes], [len(b[1]) for b in p_nodes]
    TE = list(dict.fromkeys((n - 1, k - 1) for n, _, pt, _ in t_nodes for k in pt))
    PE = list(dict.fromkeys((n - 1, k - 1) for n, _, pt, _ in p_nodes for k in pt))

    def lc(a, b):
        return match_texts_lists(a, b, R).total_cost
    L_ = [[lc(a[3], b[3]) for b in p_nodes] for a in t_nodes]
    return C, u, v, TE, PE, L_, [lc(a[3], []) for a in t_nodes], [lc([], b[3]) for b in p_nodes]


def _key(pairs, C, u, v, TE, PE, L_, Lu, Lv, flow, lab):
    used = {p for p in pairs if p is not None}
    nP = len(v)
    text = sum(C[t][p] if p is not None else u[t] for t, p in enumerate(pairs)) + sum(
        v[p] for p in range(nP) if p not in used)
    tp = 0
    if flow:
        where = {t: p for t, p in enumerate(pairs) if p is not None}
        pe = set(PE)
        tp = sum(1 for s, d in TE if s in where and d in where and (where[s], where[d]) in pe)
    lab_cost = 0.0
    if lab:
        lab_cost = sum(L_[t][p] if p is not None else Lu[t] for t, p in enumerate(pairs)) + sum(
            Lv[p] for p in range(nP) if p not in used)
    return (text, -tp, lab_cost)


def test_brute_force_agrees_with_the_matcher():
    rng = random.Random(1234)
    vocab = ["A", "B", "AB", "BA", "C"]
    label_vocab = ["x", "y", "xy"]
    cases = 0
    n_cases = 2000
    for case in range(n_cases):
        nT, nP = rng.randint(1, 4 if case % 3 else 5), rng.randint(1, 4 if case % 3 else 5)
        flow, lab = rng.random() < 0.75, rng.random() < 0.5
        t_nodes = []
        for n in range(1, nT + 1):
            t_nodes.append([n, rng.choice(vocab), sorted(rng.sample(range(1, nT + 1), rng.randint(0, min(2, nT)))),
                            rng.sample(label_vocab, rng.randint(0, 2))])
        targets = {k for _, _, pt, _ in t_nodes for k in pt}
        for node in t_nodes:   # every true node in some edge
            if not node[2] and node[0] not in targets:
                node[2] = [node[0]]
        p_nodes = [(n, rng.choice(vocab), rng.sample(range(1, nP + 1), rng.randint(0, min(2, nP))),
                    rng.sample(label_vocab, rng.randint(0, 2))) for n in range(1, nP + 1)]
        T = diagram("true", t_nodes, labels=True)
        P = diagram("pred", p_nodes, flow=flow, labels=lab)
        nm = match_nodes_single_option(T, P, R, 0)
        # the matcher's own key
        pmap = {m.pred_node.node_number - 1: m.true_node.node_number - 1 for m in nm.matches
                if m.pred_node and m.true_node}
        got = [None] * nT
        for p, t in pmap.items():
            got[t] = p
        C, u, v, TE, PE, L_, Lu, Lv = oracle(t_nodes, p_nodes)
        best = min(_key(m, C, u, v, TE, PE, L_, Lu, Lv, flow, lab) for m in _MATCHINGS[(nT, nP)])
        mine = _key(tuple(got), C, u, v, TE, PE, L_, Lu, Lv, flow, lab)
        assert mine == best, (case, t_nodes, p_nodes, flow, lab, mine, best)
        assert mine[0] == nm.total_node_text_cost
        if flow:
            assert -mine[1] == nm.flow_score.tp
        if lab:
            assert mine[2] == match_node_labels(nm, R).total_label_error_cost
        cases += 1
    assert cases == n_cases


def test_missing_extra_names_the_install_command():
    import subprocess
    import sys

    code = ("import sys; sys.modules['pydantic'] = None\n"
            "import scorekit.flowcharts\n"
            "try:\n    from scorekit.flowcharts import ParsingBenchmark\nexcept ImportError as exc:\n"
            "    from scorekit.registry import MissingExtraError\n"
            "    assert isinstance(exc, MissingExtraError), type(exc)\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install scorekit[flowcharts]" in out
    code = ("import sys; sys.modules['scipy'] = None; sys.modules['scipy.optimize'] = None\n"
            "from scorekit.flowcharts import match_texts_lists\n"
            "from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import levenshtein_fn\n"
            "try:\n    match_texts_lists(['a'], ['b'], levenshtein_fn)\nexcept ImportError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install scorekit[flowcharts]" in out


def test_variable_fixing_keeps_the_optimum_on_larger_tied_diagrams(monkeypatch):
    """The reduced MILP (support of the text-optimal matchings) against the full model, 8-11 nodes a side."""
    import numpy as np

    from scorekit.flowcharts.parsing import match_diagrams as md

    rng = random.Random(99)
    cases = []
    for _ in range(8):
        nT, nP = rng.randint(8, 11), rng.randint(8, 11)
        vocab = ["Excluded", "Analysed", "Lost", "Excluded (n=1)"]
        t_nodes = [[n, rng.choice(vocab), [k for k in (n + 1, rng.randint(1, nT)) if k <= nT][:rng.randint(1, 2)],
                    rng.sample(["x", "y", "z"], rng.randint(0, 2))] for n in range(1, nT + 1)]
        t_nodes[-1][2] = t_nodes[-1][2] or [1]
        p_nodes = [(n, rng.choice(vocab), rng.sample(range(1, nP + 1), rng.randint(0, 2)),
                    rng.sample(["x", "y", "z"], rng.randint(0, 2))) for n in range(1, nP + 1)]
        cases.append((diagram("true", [tuple(x) for x in t_nodes], labels=True),
                      diagram("pred", p_nodes, labels=True)))

    def key(nm):
        return (nm.total_node_text_cost, nm.flow_score.tp, match_node_labels(nm, R).total_label_error_cost)

    reduced = [key(match_nodes_single_option(T, P, R, 0)) for T, P in cases]
    monkeypatch.setattr(md, "_text_optimal_support",
                        lambda C, u, v, *a: np.ones(C.size + len(u) + len(v), dtype=bool))
    full = [key(match_nodes_single_option(T, P, R, 0)) for T, P in cases]
    assert reduced == full


# ------------------------------------------------------------------------ ties: old model vs new
def _old_model_key(C, u, v, TE, PE, L_, Lu, Lv, flow, lab):
    """The lexicographic key (text cost, -preserved edges, label cost) from the formulation the matcher
    used before the tie work, written plainly: every x, a, b and edge-pair y, y <= x[s,s'],
    y <= x[d,d'], y >= x[s,s'] + x[d,d'] - 1, each stage's optimum pinned for the next, no time limit."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    nT, nP = len(u), len(v)
    nx, nE = nT * nP, len(TE) * len(PE) if flow else 0
    y0 = nx + nT + nP
    nvar = y0 + nE
    rows = []
    for t in range(nT):  # each true node matched once or unmatched
        r = np.zeros(nvar)
        r[t * nP:(t + 1) * nP] = 1
        r[nx + t] = 1
        rows.append((r, 1, 1))
    for p in range(nP):
        r = np.zeros(nvar)
        r[p:nx:nP] = 1
        r[nx + nT + p] = 1
        rows.append((r, 1, 1))
    if nE:
        for k, ((s, d), (s2, d2)) in enumerate(itertools.product(TE, PE)):
            for cols, lo, hi in (([s * nP + s2], -np.inf, 0), ([d * nP + d2], -np.inf, 0),
                                 ([s * nP + s2, d * nP + d2], -1, np.inf)):
                r = np.zeros(nvar)
                r[y0 + k] = 1
                for c in cols:
                    r[c] -= 1
                rows.append((r, lo, hi))
    text = np.zeros(nvar)
    text[:y0] = np.concatenate([np.array(C, dtype=float).ravel(), u, v])
    objectives = [text]
    if nE:
        gain = np.zeros(nvar)
        gain[y0:] = -1
        objectives.append(gain)
    if lab:
        labels = np.zeros(nvar)
        labels[:y0] = np.concatenate([np.array(L_, dtype=float).ravel(), Lu, Lv])
        objectives.append(labels)
    key = []
    for objective in objectives:
        A = np.array([r for r, _, _ in rows])
        res = milp(objective, constraints=[LinearConstraint(A, [lo for _, lo, _ in rows], [hi for _, _, hi in rows])],
                   integrality=np.ones(nvar), bounds=Bounds(0, 1), options={"mip_rel_gap": 0})
        assert res.status == 0
        key.append(round(res.fun, 9))
        rows.append((objective, res.fun - 1e-9 * max(1, abs(res.fun)), res.fun + 1e-9 * max(1, abs(res.fun))))
    text_cost, tp, label_cost = key[0], (key[1] if nE else 0.0), (key[-1] if lab else 0.0)
    return (text_cost, tp, label_cost)


def _tied_case(rng, nT, nP, vocab, flow, lab):
    """Random diagrams (number, text, points_to, labels) whose texts come from a small, tied vocabulary."""
    t_nodes = [[n, rng.choice(vocab), sorted(rng.sample(range(1, nT + 1), rng.randint(0, min(2, nT)))),
                rng.sample(["x", "y", "xy"], rng.randint(0, 2))] for n in range(1, nT + 1)]
    targets = {k for _, _, pt, _ in t_nodes for k in pt}
    for node in t_nodes:  # every true node in some edge
        if not node[2] and node[0] not in targets:
            node[2] = [node[0] % nT + 1]
            targets.add(node[0] % nT + 1)
    p_nodes = [(n, rng.choice(vocab), rng.sample(range(1, nP + 1), rng.randint(0, min(2, nP))),
                rng.sample(["x", "y", "xy"], rng.randint(0, 2))) for n in range(1, nP + 1)]
    return t_nodes, p_nodes


def _new_key(t_nodes, p_nodes, flow, lab):
    T = diagram("true", [tuple(x) for x in t_nodes], labels=True)
    P = diagram("pred", p_nodes, flow=flow, labels=lab)
    nm = match_nodes_single_option(T, P, R, 0)
    assert nm.unproven == []
    tp = nm.flow_score.tp if flow else 0
    return nm, (nm.total_node_text_cost, -float(tp), match_node_labels(nm, R).total_label_error_cost if lab else 0.0)


def test_tied_diagrams_score_as_with_the_old_model():
    """Differential: random 4-7 node diagrams, texts all equal or from two texts, with and without
    flow and labels: the new stages (heuristic, bounds, label assignment, aggregated MILP) give the
    old full model's optimum in every stage."""
    rng = random.Random(2024)
    for case in range(40):
        nT, nP = rng.randint(4, 7), rng.randint(4, 7)
        vocab = ["box"] if case % 2 else ["box", "boxes"]
        flow, lab = case % 4 != 3, case % 3 != 0
        t_nodes, p_nodes = _tied_case(rng, nT, nP, vocab, flow, lab)
        C, u, v, TE, PE, L_, Lu, Lv = oracle(t_nodes, p_nodes)
        _, mine = _new_key(t_nodes, p_nodes, flow, lab)
        old = _old_model_key(C, u, v, TE, PE, L_, Lu, Lv, flow and bool(PE), lab)
        assert mine == pytest.approx(old, abs=1e-6), (case, t_nodes, p_nodes, flow, lab)
