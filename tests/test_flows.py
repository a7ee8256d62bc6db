"""scorekit.flows: decomposition, FlowSim, TreeBLEU, Trigger/Component Match, evaluation and
the CLI logic, with worked examples computed by hand from the formulas of docs/flows.md; on both backends."""

from __future__ import annotations

import json
import math
import random
from dataclasses import astuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorekit._kernels import use_backend
from scorekit.errors import InvalidValueError
from scorekit.flows import (
    FlowFormatError,
    FlowItem,
    FlowReport,
    component_match,
    compute_metrics,
    decompose_to_tree,
    evaluate_flows,
    flows_command,
    flowsim,
    get_1_height_subtrees,
    one_height_subtrees,
    parse_flow,
    treebleu,
    trigger_match,
)
from scorekit.trees import tree_edit_distance


@pytest.fixture(params=["rust", "numba"])
def backend(request):
    with use_backend(request.param):
        yield request.param


REF = {
    "trigger": {"type": "record_create", "inputs": [{"name": "table", "value": "incident"}]},
    "components": [
        {"category": "action", "definition": "look_up_record", "order": 1},
        {"category": "flowlogic", "definition": "IF", "order": 2},
        {"category": "action", "definition": "update_record", "order": 3, "block": 2},
        {"category": "action", "definition": "send_email", "order": 4, "block": 2},
    ],
}
# The same IF written with inline children, missing the e-mail; the trigger as a bare string.
PRED = {
    "trigger": "record_create",
    "components": ["look_up_record", {"category": "flowlogic", "definition": "IF", "children": ["update_record"]}],
}
EMPTY = {"trigger": None, "components": []}


def test_decomposition() -> None:
    assert decompose_to_tree(REF).to_brackets() == (
        "{flow{trigger{record_create}}{components{action:look_up_record}"
        "{flowlogic:IF{action:update_record}{action:send_email}}}}"
    )
    assert decompose_to_tree(PRED).to_brackets() == (
        "{flow{trigger{record_create}}{components{action:look_up_record}{flowlogic:IF{action:update_record}}}}"
    )
    assert decompose_to_tree(EMPTY).to_brackets() == "{flow{trigger}{components}}"
    # block references and inline children give the same tree; JSON text is accepted too.
    inline = {"trigger": {"type": "record_create"}, "components": [
        {"category": "action", "definition": "look_up_record"},
        {"category": "flowlogic", "type": "IF", "children": [
            {"definition": "update_record"}, {"category": "action", "definition": "send_email"}]}]}
    assert decompose_to_tree(inline) == decompose_to_tree(REF) == decompose_to_tree(json.dumps(REF))


def test_worked_example(backend) -> None:
    # |F| = 7, |Fr| = 8, one deletion (send_email): FlowSim = 1 - 1/15.
    assert flowsim(PRED, REF) == pytest.approx(1 - 1 / 15)
    # S(pred) = {trigger->(record_create), components->(look_up, IF), IF->(update)}; the last is not in S(ref).
    assert treebleu(PRED, REF) == pytest.approx(2 / 3)
    # TreeBLEU is precision-like: the reference's 3 subtrees hold 2 of the prediction's.
    assert treebleu(REF, PRED) == pytest.approx(2 / 3)
    # StarFlow's pred['trigger'] == ref['trigger']: the string "record_create" is not the reference's
    # object; only their types are equal.
    assert trigger_match(PRED, REF) == 0.0 and trigger_match(PRED, REF, "type") == 1.0
    assert component_match(PRED, REF) == pytest.approx(3 / 4)
    metrics = compute_metrics(PRED, REF)
    fs, tb, tm, cm = metrics
    assert (fs, tb, tm, cm) == (metrics.flowsim, metrics.treebleu, metrics.trigger_match, metrics.component_match)
    assert metrics == (flowsim(PRED, REF), treebleu(PRED, REF), 0.0, 0.75)
    assert compute_metrics(PRED, REF, trigger_match="type") == (fs, tb, 1.0, 0.75)


def test_empty_flow_pitfall(backend) -> None:
    # The root's subtree (flow -> trigger, components) is shared by every flow: it must not count.
    assert ("flow", ("trigger", "components")) not in one_height_subtrees(REF)
    assert one_height_subtrees(EMPTY) == frozenset()
    assert treebleu(EMPTY, REF) == 0.0
    # FlowSim of the empty flow: 3 + 8 nodes, 5 insertions.
    assert compute_metrics(EMPTY, REF) == (pytest.approx(1 - 5 / 11), 0.0, 0.0, 0.0)
    # Two empty flows: identical trees, but no subtree and no component (StarFlow's 0 conventions, docs/flows.md).
    assert compute_metrics(EMPTY, EMPTY) == (1.0, 0.0, 1.0, 0.0)


def test_identical_flows_score_one(backend) -> None:
    assert compute_metrics(REF, REF) == (1.0, 1.0, 1.0, 1.0)


def test_component_match_is_order_agnostic_set_iou() -> None:
    a = {"trigger": "daily", "components": ["x", "y", "y", "z"]}
    b = {"trigger": "daily", "components": ["z", "x", "w"]}
    assert component_match(a, b) == pytest.approx(2 / 4)
    assert trigger_match(a, {"trigger": "weekly", "components": []}) == 0.0
    assert trigger_match({"components": []}, EMPTY) == 1.0  # two null triggers


def random_flow(rng: random.Random) -> dict:
    components = []
    for k in range(1, rng.randint(0, 12) + 1):
        logic = rng.random() < 0.3
        component = {"category": "flowlogic" if logic else "action",
                     "definition": rng.choice(["IF", "FOR_EACH"]) if logic else rng.choice("abcd"), "order": k}
        parents = [c["order"] for c in components if c["category"] == "flowlogic"]
        if parents and rng.random() < 0.5:
            component["block"] = rng.choice(parents)
        components.append(component)
    return {"trigger": rng.choice([None, "daily", {"type": "email"}]), "components": components}


def test_properties_on_random_flows(backend) -> None:
    rng = random.Random(4)
    flows = [random_flow(rng) for _ in range(60)]
    pairs = [(rng.choice(flows), rng.choice(flows)) for _ in range(300)]
    report = evaluate_flows(pairs)
    for (p, r), item in zip(pairs, report.items):
        assert 0.0 <= item.flowsim <= 1.0 and 0.0 <= item.treebleu <= 1.0
        tp, tr = decompose_to_tree(p), decompose_to_tree(r)
        assert item.flowsim == pytest.approx(1 - tree_edit_distance(tp, tr) / (len(tp) + len(tr)))
        assert tuple(compute_metrics(p, r)) == (item.flowsim, item.treebleu, item.trigger_match, item.component_match)
    for f in flows:
        assert flowsim(f, f) == 1.0
    assert report.means["flowsim"] == pytest.approx(sum(i.flowsim for i in report.items) / 300)


@pytest.mark.parametrize("bad, message", [
    ([1, 2], "JSON object"),
    ({"name": "x"}, "'trigger' or a 'components'"),
    ({"trigger": 5}, "trigger"),
    ({"trigger": {"kind": "x"}}, "type"),
    ({"components": "abc"}, "must be a list"),
    ({"components": [5]}, "string or an object"),
    ({"components": [{"category": "action"}]}, "definition"),
    ({"components": [{"definition": "a", "order": 1}, {"definition": "b", "order": 1}]}, "used twice"),
    ({"components": [{"definition": "a", "block": 9}]}, "names no component"),
    ({"components": [{"definition": "a", "order": 1, "block": 2}, {"definition": "b", "order": 2, "block": 1}]},
     "cycle"),
])
def test_not_a_workflow(bad, message) -> None:
    with pytest.raises(FlowFormatError, match=message):
        decompose_to_tree(bad)
    assert issubclass(FlowFormatError, ValueError)


def test_parse_flow_strips_code_fences() -> None:
    assert parse_flow('Here it is:\n```json\n{"trigger": "daily"}\n```\nDone.') == {"trigger": "daily"}
    assert parse_flow(b'{"components": []}') == {"components": []}
    with pytest.raises(FlowFormatError, match="JSON"):
        parse_flow("{oops")


def test_evaluate_pairs_is_lenient_on_predictions_only(backend) -> None:
    report = evaluate_flows({"good": (PRED, REF), "broken": ("{not json", REF), "shape": ([1], REF)})
    assert [i.id for i in report.items] == ["good", "broken", "shape"]
    good, broken, shape = report.items
    assert good.error is None and good.flowsim == pytest.approx(1 - 1 / 15)
    assert "JSON" in broken.error and "object" in shape.error
    empty = compute_metrics(EMPTY, REF)
    assert (broken.flowsim, broken.treebleu, broken.trigger_match, broken.component_match) == tuple(empty)
    assert report.means["trigger_match"] == 0.0  # no prediction's trigger equals REF's object
    typed = evaluate_flows({"good": (PRED, REF), "broken": ("{not json", REF)}, trigger_match="type")
    assert [i.trigger_match for i in typed.items] == [1.0, 0.0]
    with pytest.raises(ValueError, match="reference of item 'x'"):
        evaluate_flows({"x": (REF, {"trigger": 3})})
    assert math.isnan(evaluate_flows([]).means["flowsim"])


def write(folder, name, content) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(content if isinstance(content, str) else json.dumps(content))


def test_directories_and_command(tmp_path, capsys, backend) -> None:
    pred, ref = tmp_path / "pred", tmp_path / "ref"
    write(ref, "a.json", REF)
    write(ref, "b.json", REF)
    write(ref, "c.json", REF)
    write(pred, "a.json", "```json\n" + json.dumps(PRED) + "\n```")
    write(pred, "b.json", "I could not read the sketch.")
    write(pred, "extra.json", PRED)
    report = evaluate_flows(pred_dir=pred, ref_dir=ref)
    assert [i.id for i in report.items] == ["a", "b", "c"]
    assert report.items[0].flowsim == pytest.approx(1 - 1 / 15)
    assert "JSON" in report.items[1].error and report.items[2].error == "no prediction file"
    assert report.unmatched_predictions == ["extra"] and report.missing_predictions == ["c"]

    assert flows_command(pred, ref, True, trigger_match="type") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 3 and out["items"][2]["error"] == "no prediction file"
    assert out["means"]["trigger_match"] == pytest.approx(1 / 3) and out["trigger_match"] == "type"
    assert flows_command(str(pred), str(ref), False) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:2] == ["item", "flowsim"] and "mean" in text and "extra" in text

    write(ref, "d.json", "[1, 2]")
    with pytest.raises(ValueError, match="d.json"):
        evaluate_flows(pred_dir=pred, ref_dir=ref)
    assert flows_command(pred, ref, False) == 2
    assert "d.json" in capsys.readouterr().err
    assert flows_command(tmp_path / "nope", ref, True) == 2


def mutate(rng: random.Random, flow: dict):
    """Random damage and unusual-but-valid variants, to compare the compiled fast path with the
    Python decomposition on every branch of the format rules."""
    flow = json.loads(json.dumps(flow))
    comps = flow["components"]
    choice = rng.randrange(14)
    if choice == 0 and comps:
        comps[0]["block"] = comps[0].get("order", 99)  # a self-cycle
    elif choice == 1 and len(comps) > 1:
        comps[1]["order"] = comps[0].get("order")  # duplicate (or null) order
    elif choice == 2:
        flow["trigger"] = rng.choice([5, {"type": None}, {"kind": "x"}, ["a"], "", {"type": "email", "x": 1}])
    elif choice == 3 and comps:
        comps[-1] = rng.choice([5, None, ["x"], {"category": "action"}, {"definition": 3}, {"type": "t"},
                                {"definition": None, "type": "u"}, {"definition": "d", "category": None}])
    elif choice == 4 and comps:
        comps[0]["block"] = rng.choice([1.0, "1", True, [1], {"a": 1}, 12345])
    elif choice == 5 and comps:
        comps[0]["order"] = rng.choice([1.5, "one", True, [1], 2.0])
    elif choice == 6:
        flow = rng.choice([[flow], "x", 3, None, {"name": "no keys"}, {"trigger": "daily"}, {"components": None}])
    elif choice == 7 and comps:
        comps[0]["children"] = rng.choice([["a", {"definition": "b", "order": 1}, {"definition": "c", "block": 1}],
                                           "not a list", [], None, [[1]]])
    elif choice == 8:
        flow["components"] = {"a": 1}
    elif choice == 9 and comps:
        comps.append({"definition": "z", "order": 1000, "block": 1001})
        comps.append({"definition": "y", "order": 1001, "block": 1000})  # a two-cycle
    return flow


def test_compiled_fast_path_matches_python_path() -> None:
    rng = random.Random(21)
    flows = [random_flow(rng) for _ in range(80)]
    pairs = []
    for _ in range(600):
        pred = mutate(rng, rng.choice(flows)) if rng.random() < 0.6 else rng.choice(flows)
        pairs.append((pred, rng.choice(flows)))
    pairs.append(('```json\n{"trigger": "daily", "components": ["a"]}\n```', flows[0]))
    reports = {}
    for name in ("rust", "numba"):
        with use_backend(name):
            reports[name] = evaluate_flows(pairs).to_dict()
    assert reports["rust"] == reports["numba"]
    assert sum(item["error"] is not None for item in reports["rust"]["items"]) > 50
    # A reference the fast path rejects is still an error naming the item, on both backends.
    for name in ("rust", "numba"):
        with use_backend(name):
            with pytest.raises(ValueError, match="reference of item 1"):
                evaluate_flows([(flows[0], flows[1]), (flows[0], {"components": [{"definition": "a", "block": 3}]})])


def test_size_guard(backend) -> None:
    big = {"trigger": "daily", "components": [f"step{k}" for k in range(40)]}  # 44 tree nodes
    assert evaluate_flows([(big, REF)], max_nodes=44).n == 1
    with pytest.raises(ValueError, match="prediction of item '0' has 44 tree nodes, above max_nodes=43"):
        evaluate_flows([(big, REF)], max_nodes=43)
    with pytest.raises(ValueError, match="reference of item 'r' has 44 tree nodes"):
        evaluate_flows({"r": (REF, big)}, max_nodes=43)
    with pytest.raises(ValueError, match="max_nodes=10"):
        compute_metrics(big, REF, max_nodes=10)
    with pytest.raises(ValueError, match="max_nodes=10"):
        flowsim(REF, big, max_nodes=10)
    with pytest.raises(ValueError, match="max_nodes must be"):
        evaluate_flows([(REF, REF)], max_nodes=2)


def test_large_batches_match_python_path_on_every_route() -> None:
    # More pairs than one chunk of the compiled path (its pipelined route), documents parsed from
    # JSON text (keys are not interned strings), damaged ones, and components with non-str keys.
    rng = random.Random(5)
    flows = [json.loads(json.dumps(random_flow(rng))) for _ in range(120)]
    odd = {"trigger": "daily", "components": [{1: "x", "definition": "a"}, {"definition": "b", "inputs": []}]}
    pairs = []
    for k in range(2600):
        pred = mutate(rng, rng.choice(flows)) if rng.random() < 0.2 else rng.choice(flows)
        pairs.append((odd if k % 500 == 7 else pred, rng.choice(flows)))
    with use_backend("numba"):
        expected = evaluate_flows(pairs).to_dict()
    with use_backend("rust"):
        for threads in (None, 1, 2):
            assert evaluate_flows(pairs, threads=threads).to_dict() == expected


def test_report_items_are_built_on_access() -> None:
    pairs = {"a": (PRED, REF), "b": ("{oops", REF), "c": (REF, REF)}
    report = evaluate_flows(pairs)
    assert report.n == 3
    as_dict = report.to_dict()  # from the metric rows
    items = report.items
    assert report.items is items and [type(i) for i in items] == [FlowItem] * 3
    assert [i.id for i in items] == ["a", "b", "c"] and "JSON" in items[1].error and items[0].error is None
    assert (items[2].flowsim, items[2].treebleu, items[2].trigger_match, items[2].component_match) == (1, 1, 1, 1)
    assert report.to_dict() == as_dict  # from the items
    assert report.means["flowsim"] == pytest.approx(sum(i.flowsim for i in items) / 3)
    built = FlowReport(list(items), dict(report.means))
    assert built == report and built.n == 3 and built.unmatched_predictions == []
    assert built.to_dict() == as_dict
    built.items = items[:1]
    assert built.n == 1 and built != report
    assert "n=1" in repr(built)


def test_labels_from_shared_and_swapped_strings() -> None:
    # The compiled path remembers label ids by the addresses of the two strings: the same objects in
    # swapped roles, a bare string and its object form, and more labels than it remembers at once.
    a, b = "x" * 3, "y" * 3
    swapped = {"trigger": None, "components": [{"category": a, "definition": b}, {"category": b, "definition": a},
                                               b, {"definition": b}, {"category": "action", "definition": b}]}
    rng = random.Random(9)
    many = [{"trigger": "t", "components": [{"category": rng.choice("pq"), "definition": f"d{rng.randrange(900)}"}
                                            for _ in range(30)]} for _ in range(80)]
    pairs = [(swapped, swapped), (swapped, many[0])] + [(rng.choice(many), rng.choice(many)) for _ in range(300)]
    with use_backend("numba"):
        expected = evaluate_flows(pairs).to_dict()
    with use_backend("rust"):
        assert evaluate_flows(pairs).to_dict() == expected
    assert compute_metrics(swapped, swapped) == (1.0, 1.0, 1.0, 1.0)


# -- issue 30: one acceptance rule for the single-pair and the batch path (item 6) -------------------

#: `order` / `block` values around the edges of an exact int key: ints and floats near ±2**63 and
#: 9.2e18 (the compiled path once keyed floats as ints only below 9.2e18), NaN, infinities, -0.0,
#: bools, huge ints, strings and null.
HOSTILE_ORDERS = st.one_of(
    st.integers(-2**63 - 2, -2**63 + 2), st.integers(2**63 - 2, 2**63 + 2),
    st.integers(9200000000000000000 - 2, 9200000000000000000 + 2), st.integers(-3, 3),
    st.sampled_from([9.2e18, math.nextafter(9.2e18, math.inf), math.nextafter(9.2e18, 0), 2.0**63, -(2.0**63),
                     math.nextafter(2.0**63, 0), math.nextafter(-(2.0**63), 0), 2.0**64, 1e300, math.nan, math.inf,
                     -math.inf, -0.0, 0.0, 1.0, 0.5, True, False, 2**64, 10**400, "1", "9.2e18", "", None]),
)


def outcome_of(call):
    try:
        return ("ok", tuple(call()))
    except FlowFormatError as exc:
        return ("error", str(exc))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(HOSTILE_ORDERS, HOSTILE_ORDERS, st.booleans()), min_size=1, max_size=4))
def test_single_pair_and_batch_paths_accept_the_same_orders(specs) -> None:
    components = []
    for k, (order, block, has_block) in enumerate(specs):
        component = {"category": "flowlogic" if k % 2 else "action", "definition": f"d{k}", "order": order}
        if has_block and k:
            component["block"] = block
        components.append(component)
    doc = {"trigger": "daily", "components": components}
    good = {"trigger": "daily", "components": ["d0", {"category": "flowlogic", "definition": "d1"}]}
    results = []
    for name in ("rust", "numba"):
        with use_backend(name):
            single = outcome_of(lambda: compute_metrics(good, doc))
            batch = outcome_of(lambda: astuple(evaluate_flows([(good, doc)]).items[0])[1:5])
            if single[0] == "error":  # the batch path names the reference it rejects
                assert batch == ("error", f"reference of item 0 is not a workflow: {single[1]}")
            else:
                assert batch == single
            # As a prediction: rejected by the single path exactly when the batch path records an error.
            as_pred = evaluate_flows([(doc, good)]).items[0]
            single_pred = outcome_of(lambda: compute_metrics(doc, good))
            assert (as_pred.error is None) == (single_pred[0] == "ok")
            if as_pred.error is None:
                assert astuple(as_pred)[1:5] == single_pred[1]
            else:
                assert as_pred.error == single_pred[1]
            results.append((single, batch, astuple(as_pred)))
    assert results[0] == results[1]


def test_orders_equal_by_python_equality_near_2_63() -> None:
    # 9200000000000000000 == 9.2e18 in Python: the two orders are the same, on every path.
    for order in (9.2e18, 9200000000000000000.0, math.nextafter(2.0**63, 0)):
        doc = {"components": [{"definition": "a", "order": int(order)}, {"definition": "b", "order": order}]}
        for name in ("rust", "numba"):
            with use_backend(name):
                with pytest.raises(FlowFormatError, match="is used twice"):
                    compute_metrics(doc, doc)
                with pytest.raises(FlowFormatError, match="reference of item 0 is not a workflow: .*used twice"):
                    evaluate_flows([(EMPTY, doc)])
                assert "used twice" in evaluate_flows([(doc, EMPTY)]).items[0].error
    # A block naming an order written as the other number type nests under it on both paths.
    nested = {"components": [{"category": "flowlogic", "definition": "IF", "order": 9.2e18},
                             {"definition": "a", "block": 9200000000000000000}]}
    for name in ("rust", "numba"):
        with use_backend(name):
            assert decompose_to_tree(nested).to_brackets() == "{flow{trigger}{components{flowlogic:IF{action:a}}}}"
            assert evaluate_flows([(nested, nested)]).items[0].flowsim == 1.0


# -- issue 30: Trigger Match is StarFlow's pred['trigger'] == ref['trigger'] (item 10) ---------------

def trig(trigger) -> dict:
    return {"trigger": trigger, "components": ["a"]}


TRIGGER_CASES = [
    # (pred trigger, ref trigger, exact match, type match), computed by hand with Python's ==.
    ({"type": "t", "inputs": [{"name": "table", "value": "incident"}]},
     {"type": "t", "inputs": [{"name": "table", "value": "incident"}]}, 1.0, 1.0),
    ({"type": "t", "inputs": [{"name": "table", "value": "incident"}]},
     {"type": "t", "inputs": [{"name": "table", "value": "problem"}]}, 0.0, 1.0),
    ("t", {"type": "t"}, 0.0, 1.0),                      # a string is not an object of that type
    ({"type": "t"}, {"type": "t", "inputs": []}, 0.0, 1.0),  # an extra key
    ({"type": "t", "a": 1, "b": 2}, {"b": 2, "type": "t", "a": 1}, 1.0, 1.0),  # key order is not compared
    ({"type": "t", "x": ["a", "b"]}, {"type": "t", "x": ["b", "a"]}, 0.0, 1.0),  # list order is
    ({"type": "t", "n": 1}, {"type": "t", "n": 1.0}, 1.0, 1.0),   # 1 == 1.0
    ({"type": "t", "n": True}, {"type": "t", "n": 1}, 1.0, 1.0),  # True == 1
    ({"type": "t", "n": 0.1}, {"type": "t", "n": 0.10000000000000002}, 0.0, 1.0),
    ({"type": "t", "n": 2**70}, {"type": "t", "n": 2.0**70}, 1.0, 1.0),  # exact int == float
    ({"type": "t", "n": 2**70 + 1}, {"type": "t", "n": 2.0**70}, 0.0, 1.0),
    ("t", "t", 1.0, 1.0),
    ("t", "u", 0.0, 0.0),
    (None, None, 1.0, 1.0),
    (None, "t", 0.0, 0.0),
    ({"type": "u"}, {"type": "t"}, 0.0, 0.0),
]


@pytest.mark.parametrize("pred, ref, exact, by_type", TRIGGER_CASES)
def test_trigger_match_is_the_recipes_equality(backend, pred, ref, exact, by_type) -> None:
    p, r = trig(pred), trig(ref)
    assert (1.0 if p["trigger"] == r["trigger"] else 0.0) == exact  # the recipe's own expression
    assert trigger_match(p, r) == exact and trigger_match(p, r, "type") == by_type
    assert compute_metrics(p, r).trigger_match == exact
    assert compute_metrics(p, r, trigger_match="type").trigger_match == by_type
    # The batch path (the compiled one on Rust), from objects and from JSON text.
    pairs = [(p, r), (json.dumps(p), r), (p, json.dumps(r))]
    assert [i.trigger_match for i in evaluate_flows(pairs).items] == [exact] * 3
    assert [i.trigger_match for i in evaluate_flows(pairs, trigger_match="type").items] == [by_type] * 3


def test_trigger_match_details(backend) -> None:
    # A missing trigger is null. NaN: Python's json module reads every NaN as one shared float, and
    # == on containers tries identity first, so the recipe finds two parsed NaN triggers equal; NaNs
    # made separately are equal to nothing. Every path gives what the recipe's == gives.
    assert trigger_match({"components": []}, trig(None)) == 1.0
    nan = '{"trigger": {"type": "t", "v": NaN}, "components": []}'
    assert json.loads(nan)["trigger"] == json.loads(nan)["trigger"]
    assert trigger_match(nan, nan) == 1.0 and evaluate_flows([(nan, nan)]).items[0].trigger_match == 1.0
    own = [trig({"type": "t", "v": float("nan")}), trig({"type": "t", "v": float("nan")})]
    assert trigger_match(*own) == 0.0 and trigger_match(*own, "type") == 1.0
    assert evaluate_flows([own]).items[0].trigger_match == 0.0
    # Values outside plain JSON (a tuple, a str subclass) are compared by Python's == too.
    class Text(str):
        pass
    odd = [(trig({"type": "t", "x": (1, 2)}), trig({"type": "t", "x": (1, 2)})),
           (trig({"type": "t", "x": (1, 2)}), trig({"type": "t", "x": [1, 2]})),
           (trig({"type": "t", "x": Text("a")}), trig({"type": "t", "x": "a"}))]
    assert [i.trigger_match for i in evaluate_flows(odd).items] == [1.0, 0.0, 1.0]
    assert [compute_metrics(p, r).trigger_match for p, r in odd] == [1.0, 0.0, 1.0]
    with pytest.raises(InvalidValueError, match="trigger_match must be one of 'exact', 'type'"):
        compute_metrics(REF, REF, trigger_match="types")
    with pytest.raises(InvalidValueError, match="trigger_match"):
        evaluate_flows([(REF, REF)], trigger_match=None)
    with pytest.raises(InvalidValueError, match="trigger_match"):
        trigger_match(REF, REF, "Type")


def test_deep_triggers_are_compared_or_refused_by_name(backend) -> None:
    def deep(levels: int) -> dict:
        value: list = []
        for _ in range(levels - 2):
            value = [value]
        return trig({"type": "t", "x": value})

    # 600 levels: beyond the compiled path's limit, compared by Python on both paths.
    assert evaluate_flows([(deep(600), deep(600))]).items[0].trigger_match == 1.0
    assert compute_metrics(deep(600), deep(600)).trigger_match == 1.0
    with pytest.raises(FlowFormatError, match="triggers are nested too deeply to compare"):
        compute_metrics(deep(100_000), deep(100_000))
    with pytest.raises(FlowFormatError, match="item 'x': the triggers are nested too deeply to compare"):
        evaluate_flows({"x": (deep(100_000), deep(100_000))})


TRIGGER_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, 1.0, -0.0, 0.5, 2**53, 2.0**53,
                                                                             math.nan, math.inf]),
              st.sampled_from(["t", "u", ""])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["type", "x", "y"]), inner,
                                                                         max_size=3)),
    max_leaves=8)
TRIGGERS = st.one_of(st.none(), st.sampled_from(["t", "u"]),
                     st.builds(lambda kind, rest: {**rest, "type": kind}, st.sampled_from(["t", "u"]),
                               st.dictionaries(st.sampled_from(["x", "inputs"]), TRIGGER_VALUES, max_size=2)))


@settings(max_examples=200, deadline=None)
@given(TRIGGERS, TRIGGERS, st.booleans())
def test_trigger_match_property_every_path(pred, ref, shared) -> None:
    p, r = trig(pred), trig(pred if shared else ref)
    expected = 1.0 if p["trigger"] == r["trigger"] else 0.0
    for name in ("rust", "numba"):
        with use_backend(name):
            assert compute_metrics(p, r).trigger_match == expected
            assert evaluate_flows([(p, r), (p, p)]).items[0].trigger_match == expected


# -- issue 30: a missing prediction file scores 0 and is counted (item 9) ----------------------------

def test_missing_predictions_score_zero_and_are_counted(tmp_path, capsys, backend) -> None:
    pred, ref = tmp_path / "pred", tmp_path / "ref"
    small = {"trigger": None, "components": ["a"]}  # 4 nodes; the empty flow is 3: FlowSim 1 - 1/7
    write(ref, "a.json", small)
    write(ref, "b.json", small)
    write(pred, "a.json", small)
    report = evaluate_flows(pred_dir=pred, ref_dir=ref)
    assert report.missing_predictions == ["b"] and report.n == 2
    b = report.items[1]
    assert (b.flowsim, b.treebleu, b.trigger_match, b.component_match, b.error) == (0, 0, 0, 0, "no prediction file")
    assert report.means == {"flowsim": 0.5, "treebleu": 0.5, "trigger_match": 0.5, "component_match": 0.5}
    empty = evaluate_flows(pred_dir=pred, ref_dir=ref, missing_prediction="empty")
    b = empty.items[1]
    assert (b.flowsim, b.treebleu, b.trigger_match, b.component_match) == (1 - 1 / 7, 0.0, 1.0, 0.0)
    assert empty.missing_predictions == ["b"] and empty.means["flowsim"] == pytest.approx((1 + 6 / 7) / 2)

    assert flows_command(pred, ref, True) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["missing_predictions"] == ["b"] and out["missing_prediction"] == "zero"
    assert out["means"]["flowsim"] == 0.5 and out["items"][1]["flowsim"] == 0.0
    assert flows_command(pred, ref, False) == 0
    text = capsys.readouterr().out
    assert "missing predictions: 1 of 2 references have no prediction file, scored 0" in text
    assert flows_command(pred, ref, False, missing_prediction="empty") == 0
    assert "scored as the empty flow: b" in capsys.readouterr().out
    with pytest.raises(InvalidValueError, match="missing_prediction must be one of 'zero', 'empty'"):
        evaluate_flows(pred_dir=pred, ref_dir=ref, missing_prediction="skip")
    # Pairs have no files: a prediction that is not a workflow is scored as the empty flow, as before.
    assert evaluate_flows([(None, small)]).missing_predictions == []


def test_cli_missing_prediction_and_trigger_match_options(tmp_path, capsys) -> None:
    from scorekit.cli import main

    pred, ref = tmp_path / "pred", tmp_path / "ref"
    write(ref, "a.json", {"trigger": None, "components": ["a"]})
    write(ref, "b.json", REF)
    write(pred, "b.json", PRED)
    assert main(["flows", str(pred), str(ref), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [i["flowsim"] for i in out["items"]] == [0.0, pytest.approx(1 - 1 / 15)]
    assert [i["trigger_match"] for i in out["items"]] == [0.0, 0.0] and out["missing_predictions"] == ["a"]
    assert main(["flows", str(pred), str(ref), "--json", "--missing-prediction", "empty",
                 "--trigger-match", "type"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [i["flowsim"] for i in out["items"]] == [pytest.approx(1 - 1 / 7), pytest.approx(1 - 1 / 15)]
    assert [i["trigger_match"] for i in out["items"]] == [1.0, 1.0]
    assert main(["flows", str(pred), str(ref), "--missing-prediction", "skip"]) == 2
    assert "invalid choice: 'skip'" in capsys.readouterr().err


# -- issue 30: StarFlow's recipe names (small item) ----------------------------------------------------

def test_recipe_name_get_1_height_subtrees() -> None:
    import scorekit.flows as flows_module

    assert get_1_height_subtrees is one_height_subtrees and "get_1_height_subtrees" in flows_module.__all__
    assert get_1_height_subtrees(REF) == {("trigger", ("record_create",)),
                                          ("components", ("action:look_up_record", "flowlogic:IF")),
                                          ("flowlogic:IF", ("action:update_record", "action:send_email"))}
    # The seed's recipe, line by line, with scorekit's functions.
    pred_tree, ref_tree = decompose_to_tree(PRED), decompose_to_tree(REF)
    fs = 1.0 - tree_edit_distance(pred_tree, ref_tree) / (len(pred_tree) + len(ref_tree))
    pred_subtrees, ref_subtrees = get_1_height_subtrees(PRED), get_1_height_subtrees(REF)
    tb = len(pred_subtrees & ref_subtrees) / len(pred_subtrees) if pred_subtrees else 0.0
    tm = 1.0 if PRED["trigger"] == REF["trigger"] else 0.0
    assert compute_metrics(PRED, REF)[:3] == (fs, tb, tm)
