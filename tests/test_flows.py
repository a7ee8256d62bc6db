"""scorekit.flows: decomposition, FlowSim, TreeBLEU, Trigger/Component Match, evaluation and
the CLI logic, with worked examples computed by hand from the formulas of docs/flows.md; on both backends."""

from __future__ import annotations

import json
import math
import random

import pytest

from scorekit._kernels import use_backend
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
    assert trigger_match(PRED, REF) == 1.0
    assert component_match(PRED, REF) == pytest.approx(3 / 4)
    metrics = compute_metrics(PRED, REF)
    fs, tb, tm, cm = metrics
    assert (fs, tb, tm, cm) == (metrics.flowsim, metrics.treebleu, metrics.trigger_match, metrics.component_match)
    assert metrics == (flowsim(PRED, REF), treebleu(PRED, REF), 1.0, 0.75)


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
    assert report.means["trigger_match"] == pytest.approx(1 / 3)
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
    assert report.unmatched_predictions == ["extra"]

    assert flows_command(pred, ref, True) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 3 and out["items"][2]["error"] == "no prediction file"
    assert out["means"]["trigger_match"] == pytest.approx(1 / 3)
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
