"""Fuzzing the flowchart node matcher with tied inputs (the pattern "tied inputs to exact optimisers",
docs/fuzzing.md): diagrams whose boxes share a text. Tiny ones must give the brute-force optimum of
every stage; larger ones must finish within the time limit and, when a stage is not proven optimal,
say so with a bound that holds for the matching returned.
"""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scorekit.flowcharts import match_node_labels, match_nodes_single_option

from test_flowcharts_parsing_match import R, _MATCHINGS, _key, diagram, oracle



def slow_ok(max_examples: int) -> settings:
    return settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=max_examples)


@st.composite
def tied_diagrams(draw, max_nodes: int, texts: tuple[str, ...]):
    """(true nodes, pred nodes, flow, labels): node tuples (number, text, points_to, labels), texts
    drawn from a few (often one) strings, so that many matchings tie on text cost."""
    vocab = draw(st.sampled_from([texts[:1], texts]))
    nT, nP = draw(st.integers(1, max_nodes)), draw(st.integers(1, max_nodes))
    label_lists = st.lists(st.sampled_from(["x", "y", "xy"]), max_size=2, unique=True)

    def nodes(n):
        return [(k, draw(st.sampled_from(vocab)), sorted(draw(st.sets(st.integers(1, n), max_size=2))),
                 draw(label_lists)) for k in range(1, n + 1)]
    t_nodes, p_nodes = nodes(nT), nodes(nP)
    targets = {k for _, _, pt, _ in t_nodes for k in pt}
    t_nodes = [(k, text, pt if pt or k in targets else [k], lb) for k, text, pt, lb in t_nodes]  # each in an edge
    return t_nodes, p_nodes, draw(st.booleans()), draw(st.booleans())


@slow_ok(150)
@given(tied_diagrams(4, ("box", "bx")))
def test_tiny_tied_diagrams_reach_the_brute_force_optimum(case):
    t_nodes, p_nodes, flow, lab = case
    T = diagram("true", t_nodes, labels=True)
    P = diagram("pred", p_nodes, flow=flow, labels=lab)
    nm = match_nodes_single_option(T, P, R, 0)
    assert nm.unproven == []
    where = {m.true_node.node_number - 1: m.pred_node.node_number - 1 for m in nm.matches
             if m.true_node and m.pred_node}
    got = tuple(where.get(t) for t in range(len(t_nodes)))
    C, u, v, TE, PE, L_, Lu, Lv = oracle(t_nodes, p_nodes)
    best = min(_key(m, C, u, v, TE, PE, L_, Lu, Lv, flow, lab) for m in _MATCHINGS[(len(t_nodes), len(p_nodes))])
    assert _key(got, C, u, v, TE, PE, L_, Lu, Lv, flow, lab) == best


@slow_ok(12)
@given(tied_diagrams(40, ("box", "boxes")), st.sampled_from([0.2, 0.5]))
def test_larger_tied_diagrams_finish_in_time_and_report_what_is_unproven(case, time_limit):
    t_nodes, p_nodes, flow, lab = case
    T = diagram("true", t_nodes, labels=True)
    P = diagram("pred", p_nodes, flow=flow, labels=lab)
    start = time.monotonic()
    nm = match_nodes_single_option(T, P, R, 0, time_limit=time_limit)
    assert time.monotonic() - start < 5 + 10 * time_limit  # the limit plus set-up, on a loaded machine
    for gap in nm.unproven:
        assert gap.option_idx == 0
        if gap.stage == "flow":
            assert flow and gap.found == nm.flow_score.tp < gap.bound
        else:
            assert lab and gap.bound < gap.found == match_node_labels(nm, R).total_label_error_cost


def test_three_hundred_boxes_of_one_text_finish_in_seconds():
    """Was: 300 boxes reading "box" ran the solver out of memory (killed at 1.5 GB). Now well under
    10 s with the default time limit, and what is not proven says so with a bound that holds."""
    import random

    rng = random.Random(7)
    n = 300
    true = [(i, "box", [i + 1] + ([rng.randint(i + 2, n)] if rng.random() < 0.3 and i + 2 <= n else [])
             if i < n else [1], ["yes"] if i % 3 else []) for i in range(1, n + 1)]
    perm = list(range(1, n + 1))
    rng.shuffle(perm)
    pred = sorted((perm[i - 1], "box", sorted({perm[k - 1] for k in pt if rng.random() > 0.1}), lb)
                  for i, _, pt, lb in true)
    T = diagram("true", true, labels=True)
    P = diagram("pred", pred, labels=True)
    start = time.monotonic()
    nm = match_nodes_single_option(T, P, R, 0)
    assert time.monotonic() - start < 10
    assert nm.total_node_text_cost == 0.0 and len(nm.matches) == n
    kept = len({(s, d) for s, _, pt, _ in pred for d in pt})  # every pred arrow is a true one: the optimum
    for gap in nm.unproven:
        if gap.stage == "flow":
            assert gap.found == nm.flow_score.tp < gap.bound
        else:
            assert gap.bound < gap.found == match_node_labels(nm, R).total_label_error_cost
    # on a quiet machine the optimum is found and proven (344 arrows, 1.5 s); never far from it
    assert nm.flow_score.tp == kept if not nm.unproven else nm.flow_score.tp >= 0.9 * kept
