"""Flowchart parsing: ``ParsingBenchmark`` on files (spec vectors E1-E5 and every construction rule)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest


from scorekit.flowcharts import ParsingBenchmark  # noqa: E402
from scorekit.flowcharts.parsing.text_distance_fns.levenshtein_fn import levenshtein_fn  # noqa: E402

TRUE = {
    "nodes": {
        "trial_A": {"options": [
            {"nodes": [{"node_number": 1, "text": "Assessed for eligibility (n=120)"},
                       {"node_number": 2, "text": "Excluded (n=20)"},
                       {"node_number": 3, "text": "Randomised (n=100)"},
                       {"node_number": 4, "text": "Analysed (n=95)"}]},
            {"nodes": [{"node_number": 1, "text": "Assessed for eligibility (n=120)\nExcluded (n=20)"},
                       {"node_number": 2, "text": "Randomised (n=100)"},
                       {"node_number": 3, "text": "Analysed (n=95)"}]}]},
        "trial_B": {"options": [{"nodes": [{"node_number": 1, "text": "Enrolled (n=50)"},
                                           {"node_number": 2, "text": "Completed (n=45)"}]}]},
    },
    "labels": {
        "trial_A": {"options": [
            {"nodes": [{"node_number": 1, "labels": []}, {"node_number": 2, "labels": ["Declined"]},
                       {"node_number": 3, "labels": []}, {"node_number": 4, "labels": ["ITT"]}]},
            {"nodes": [{"node_number": 1, "labels": []}, {"node_number": 2, "labels": []},
                       {"node_number": 3, "labels": ["ITT"]}]}]},
        "trial_B": {"options": [{"nodes": [{"node_number": 1, "labels": []}, {"node_number": 2, "labels": []}]}]},
    },
    "flow": {
        "trial_A": {"options": [
            {"nodes": [{"node_number": 1, "points_to": [2, 3]}, {"node_number": 2, "points_to": []},
                       {"node_number": 3, "points_to": [4]}, {"node_number": 4, "points_to": []}]},
            {"nodes": [{"node_number": 1, "points_to": [2]}, {"node_number": 2, "points_to": [3]},
                       {"node_number": 3, "points_to": []}]}]},
        "trial_B": {"options": [{"nodes": [{"node_number": 1, "points_to": [2]},
                                           {"node_number": 2, "points_to": []}]}]},
    },
    "additional_texts": {
        "trial_A": {"options": [{"additional_texts": ["Figure 1"]}, {"additional_texts": ["Figure 1"]}]},
        "trial_B": {"options": [{"additional_texts": []}]},
    },
}

PRED = {
    "trial_A": {"nodes": [
        {"node_number": 1, "text": "Assessed for eligibility (n = 120)", "labels": [], "points_to": [2, 3]},
        {"node_number": 2, "text": "Excluded (n=20)", "labels": ["Declined"], "points_to": [4]},
        {"node_number": 3, "text": "Randomized (n=100)", "labels": [], "points_to": [4]},
        {"node_number": 4, "text": "Analysed (n=95)", "labels": ["ITT"], "points_to": []}],
        "additional_texts": ["Figure 1.", "Source: CONSORT"]},
    "trial_B": {"nodes": [
        {"node_number": 1, "text": "Enrolled (n=50)", "labels": [], "points_to": [2]},
        {"node_number": 2, "text": "Completed (n=44)", "labels": [], "points_to": []}],
        "additional_texts": []},
}


def write(folder: Path, files: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for stem, data in files.items():
        (folder / f"{stem}.json").write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return folder


@pytest.fixture
def truth(tmp_path):
    return {f"true_{k}_dir": write(tmp_path / f"gt_{k}", v) for k, v in TRUE.items()}


def bench(tmp_path, truth, preds=None, name="preds", **kw):
    pred_dir = write(tmp_path / name, PRED if preds is None else preds)
    kw.setdefault("expected_num_diagrams", 2)
    return ParsingBenchmark(pred_dir, **truth, **kw)


def recs(nm):
    return [(m.true_node.node_number if m.true_node else None, m.pred_node.node_number if m.pred_node else None,
             m.node_text_cost) for m in nm.matches]


def test_e1_default_distance(tmp_path, truth):
    b = bench(tmp_path, truth)
    nms = b.node_matches()
    assert [nm.true_diagram_option_idx for nm in nms] == [0, 0]
    assert recs(nms[0]) == [(1, 1, 0), (2, 2, 0), (3, 3, 1), (4, 4, 0)] and recs(nms[1]) == [(1, 1, 0), (2, 2, 1)]
    assert b.total_node_text_cost() == 2.0 and b.total_label_cost() == 0.0
    atm = b.additional_text_matches()
    assert [(m.true_index, m.pred_index, m.cost) for m in atm[0].matches] == [(0, 0, 1.0), (None, 1, 15.0)]
    assert all(m.parent_img_code == "trial_A" and m.true_option_idx == 0 for m in atm[0].matches)
    assert atm[1].matches == [] and b.total_additional_text_cost() == 16.0
    fs = b.all_flow_scores()[0]
    assert (fs.tp, fs.fp, fs.fn, fs.precision, fs.recall, fs.jaccard) == (3, 1, 0, 0.75, 1.0, 0.75)
    assert fs.f1 == pytest.approx(6 / 7) and fs.extra_edges == {(2, 4)}
    assert b.all_flow_jaccard_scores() == [0.75, 1.0] and b.avg_flow_jaccard() == 0.875
    assert [nm.total_numbers_only_node_text_cost for nm in nms] == [0.0, 1.0]
    dm = b.diagram_matches()
    assert dm[0].total_text_cost == 17.0 and dm[0].flow_score.jaccard == 0.75
    assert b.capabilities.diagram_matches and b.pred_structure.describe() == "additional_texts, flow, labels, node_text"
    assert [d.parent_img_code for d in b.pred_diagrams] == ["trial_A", "trial_B"]
    assert len(b.node_matches((1, None))) == 1 and b.node_matches((5, 9)) == []
    with pytest.raises(TypeError):
        b.node_matches([0, 1])
    assert all(m.label_matches is not None for nm in b.node_and_label_matches() for m in nm.matches)


def test_e2_raw_levenshtein(tmp_path, truth):
    b = bench(tmp_path, truth, distance_fn=levenshtein_fn)
    assert b.total_node_text_cost() == 4.0 and b.total_label_cost() == 0.0
    assert b.total_additional_text_cost() == 16.0 and b.avg_flow_jaccard() == 0.875


def test_e3_missing_predictions(tmp_path, truth):
    only_b = {"trial_B": PRED["trial_B"]}
    with pytest.raises(ValueError, match="Expected 2 prediction files, found 1"):
        bench(tmp_path, truth, only_b)
    b = bench(tmp_path, truth, only_b, name="p2", allow_missing_pred_diagrams=True)
    assert [o.parent_img_code for o in b.true_diagrams_options_list] == ["trial_B"]
    assert b.total_node_text_cost() == 1.0 and b.avg_flow_jaccard() == 1.0


def test_e4_text_and_flow_only(tmp_path, truth):
    preds = {s: {"nodes": [{k: n[k] for k in ("node_number", "text", "points_to")} for n in d["nodes"]]}
             for s, d in PRED.items()}
    b = bench(tmp_path, truth, preds)
    assert b.capabilities.available_methods == (
        "node_matches", "total_node_text_cost", "node_matches_with_flow", "all_flow_scores",
        "all_flow_jaccard_scores", "avg_flow_jaccard")
    for method in (b.total_label_cost, b.additional_text_matches, b.diagram_matches):
        with pytest.raises(ValueError, match="is unavailable for predicted diagrams containing flow, node_text. "
                                             "Missing required components"):
            method()
    assert b.avg_flow_jaccard() == 0.875


def test_split_prediction_folders(tmp_path, truth):
    text = {s: {"nodes": [{"node_number": n["node_number"], "text": n["text"]} for n in d["nodes"]]}
            for s, d in PRED.items()}
    flow = {s: {"nodes": [{"node_number": n["node_number"], "points_to": n["points_to"]} for n in d["nodes"]]}
            for s, d in PRED.items()}
    labels = {s: {"nodes": [{"node_number": n["node_number"], "labels": n["labels"]} for n in d["nodes"]]}
              for s, d in PRED.items()}
    extra = {s: {"additional_texts": d["additional_texts"]} for s, d in PRED.items()}
    dirs = [write(tmp_path / k, v) for k, v in (("t", text), ("f", flow), ("l", labels), ("a", extra))]
    b = ParsingBenchmark(dirs, **truth, expected_num_diagrams=2)
    assert b.total_node_text_cost() == 2.0 and b.diagram_matches()[0].total_text_cost == 17.0
    with pytest.raises(ValueError, match="twice"):
        ParsingBenchmark([dirs[0], dirs[0]], **truth, expected_num_diagrams=2)
    with pytest.raises(ValueError, match="Predicted node text is required"):
        ParsingBenchmark(dirs[1:], **truth, expected_num_diagrams=2)
    with pytest.raises(ValueError, match="supplied by both"):
        ParsingBenchmark([dirs[0], dirs[1], write(tmp_path / "f2", flow)], **truth, expected_num_diagrams=2)
    with pytest.raises(ValueError, match="at least one"):
        ParsingBenchmark([], **truth, expected_num_diagrams=2)
    moved = json.loads(json.dumps(flow))
    moved["trial_B"]["nodes"][1]["node_number"] = 3
    moved["trial_B"]["nodes"][0]["points_to"] = [3]
    with pytest.raises(ValueError, match="node numbers differ"):
        ParsingBenchmark([dirs[0], write(tmp_path / "f3", moved)], **truth, expected_num_diagrams=2)
    with pytest.raises(ValueError, match="different stems"):
        ParsingBenchmark([dirs[0], write(tmp_path / "f4", {"trial_A": flow["trial_A"]})], **truth,
                         expected_num_diagrams=2)


def _pred_with(change):
    preds = json.loads(json.dumps(PRED))
    change(preds)
    return preds


def _set(path, value):
    def change(preds):
        target = preds
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


@pytest.mark.parametrize("change, error, message", [
    (_set(("trial_A", "nodes", 0, "text"), ""), ValueError, "non-empty string"),
    (_set(("trial_A", "nodes", 0, "node_number"), 1000), ValueError, "must be below 1000"),
    (_set(("trial_A", "nodes", 0, "node_number"), 2), ValueError, "appears twice"),
    (_set(("trial_A", "nodes", 0, "node_number"), "1"), TypeError, "should be an integer"),
    (_set(("trial_A", "nodes", 0, "points_to"), [True]), TypeError, "should be an integer"),
    (_set(("trial_A", "nodes", 0, "points_to"), [9]), ValueError, "points to missing node 9"),
    (_set(("trial_A", "nodes", 0, "labels"), "ITT"), TypeError, "should be a list"),
    (_set(("trial_A", "nodes", 0, "labels"), [""]), ValueError, "non-empty string"),
    (_set(("trial_A", "nodes"), []), ValueError, "must not be empty"),
    (_set(("trial_A", "nodes"), {}), TypeError, "should be a list"),
    (_set(("trial_A", "nodes", 0, "colour"), "red"), ValueError, "a node needs node_number"),
    (_set(("trial_A", "nodes", 0), {"node_number": 1}), ValueError, "a node needs node_number"),
    (_set(("trial_B", "nodes", 0), {"node_number": 1, "text": "x", "labels": []}), ValueError,
     "every predicted node in a folder"),
    (_set(("trial_A", "other"), 1), ValueError, "top-level keys"),
    (_set(("trial_A", "additional_texts"), [3]), TypeError, "should be a string"),
    (lambda p: p["trial_B"].pop("additional_texts"), ValueError, "needs the top-level keys"),
    (_set(("trial_A",), []), TypeError, "should be an object"),
])
def test_prediction_file_rules(tmp_path, truth, change, error, message):
    with pytest.raises(error, match=message):
        bench(tmp_path, truth, _pred_with(change))


def test_prediction_files_errors_name_the_file(tmp_path, truth):
    with pytest.raises(ValueError, match=r"trial_A\.json: malformed JSON"):
        bench(tmp_path, truth, {**PRED, "trial_A": "{not json"})
    with pytest.raises(ValueError, match=r"trial_B\.json: not UTF-8"):
        pred = write(tmp_path / "bad", PRED)
        (pred / "trial_B.json").write_bytes(b'{"nodes": "\xff"}')
        ParsingBenchmark(pred, **truth, expected_num_diagrams=2)
    with pytest.raises(ValueError, match=r"The prediction folder '.*nowhere' does not exist"):
        ParsingBenchmark(tmp_path / "nowhere", **truth, expected_num_diagrams=2)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="No prediction files"):
        ParsingBenchmark(tmp_path / "empty", **truth, expected_num_diagrams=2)
    with pytest.raises(ValueError, match="expected_num_diagrams|Expected 3 ground-truth files"):
        bench(tmp_path, truth, expected_num_diagrams=3)
    for allow in (False, True):
        with pytest.raises(ValueError):
            bench(tmp_path, truth, {**PRED, "trial_C": PRED["trial_B"]}, name=f"c{allow}",
                  allow_missing_pred_diagrams=allow)
    with pytest.raises(TypeError):
        bench(tmp_path, truth, distance_fn="levenshtein")
    # a non-JSON file and a sub-folder are ignored
    pred = write(tmp_path / "mixed", PRED)
    (pred / "notes.txt").write_text("x")
    (pred / "sub.json").mkdir()
    assert ParsingBenchmark(str(pred), **truth, expected_num_diagrams=2).total_node_text_cost() == 2.0


def _truth_with(tmp_path, truth, kind, stem, data):
    folder = tmp_path / f"gt2_{kind}"
    write(folder, {**TRUE[kind], stem: data})
    return {**truth, f"true_{kind}_dir": folder}


def _flow_b(nodes):
    return {"options": [{"nodes": nodes}]}


@pytest.mark.parametrize("kind, data, error, message", [
    ("nodes", {"options": [{"nodes": [{"node_number": 1, "text": "a"}, {"node_number": 3, "text": "b"}]}]},
     ValueError, "exactly 1..2"),
    ("flow", _flow_b([{"node_number": 1, "points_to": [2, 2]}, {"node_number": 2, "points_to": []}]),
     ValueError, "repeats a target"),
    ("flow", _flow_b([{"node_number": 1, "points_to": [1]}, {"node_number": 2, "points_to": []}]),
     ValueError, "node 2 is in no edge"),
    ("flow", _flow_b([{"node_number": 1, "points_to": [5]}, {"node_number": 2, "points_to": []}]),
     ValueError, "points to missing node 5"),
    ("flow", {"options": [{"nodes": [{"node_number": 1, "points_to": [2]}, {"node_number": 2, "points_to": []}]},
                          {"nodes": [{"node_number": 1, "points_to": [2]}, {"node_number": 2, "points_to": []}]}]},
     ValueError, "different numbers of options"),
    ("labels", _flow_b([{"node_number": 1, "labels": []}]), ValueError, "node numbers of the nodes, labels"),
    ("labels", _flow_b([{"node_number": 1, "labels": []}, {"node_number": 2, "labels": "ITT"}]),
     TypeError, "should be a list"),
    ("nodes", _flow_b([{"node_number": "1", "text": "a"}, {"node_number": 2, "text": "b"}]), TypeError,
     "should be an integer"),
    ("nodes", _flow_b([{"node_number": 1, "text": "a", "x": 1}, {"node_number": 2, "text": "b"}]), ValueError,
     "expected exactly the keys"),
    ("nodes", {"options": []}, ValueError, "options must not be empty"),
    ("nodes", {"options": [], "x": 1}, ValueError, "exactly one key"),
    ("nodes", [], TypeError, "should be an object"),
    ("additional_texts", {"options": [{"additional_texts": [""]}]}, ValueError, "non-empty string"),
    ("additional_texts", {"options": [{"texts": []}]}, ValueError, "additional_texts"),
])
def test_ground_truth_rules(tmp_path, truth, kind, data, error, message):
    with pytest.raises(error, match=message):
        bench(tmp_path, _truth_with(tmp_path, truth, kind, "trial_B", data))


def test_ground_truth_stems_must_agree(tmp_path, truth):
    folder = write(tmp_path / "gt3", {"trial_A": TRUE["flow"]["trial_A"], "trial_Z": TRUE["flow"]["trial_B"]})
    with pytest.raises(ValueError, match="different stems"):
        bench(tmp_path, {**truth, "true_flow_dir": folder})


def test_custom_distance_errors_from_every_scoring_method(tmp_path, truth):
    for bad in (-1, math.nan, "3"):
        b = bench(tmp_path, truth, distance_fn=lambda *, true_text, pred_text, v=bad: v, name=f"p{bad!r}")
        for method in (b.total_node_text_cost, b.total_label_cost, b.total_additional_text_cost, b.avg_flow_jaccard,
                       b.diagram_matches):
            with pytest.raises(ValueError, match="finite, non-negative costs"):
                method()


def test_solver_failure_with_flow_not_text_only(tmp_path, truth, monkeypatch):
    import scipy.optimize

    class Failed:
        status, success, x, message = 4, False, None, "numerical trouble"

    b = bench(tmp_path, truth)
    text_only = bench(tmp_path, truth, {s: {"nodes": [{"node_number": n["node_number"], "text": n["text"]}
                                                      for n in d["nodes"]]} for s, d in PRED.items()}, name="t")
    monkeypatch.setattr(scipy.optimize, "milp", lambda *a, **k: Failed())
    with pytest.raises(RuntimeError, match="Could not establish an optimal node matching.*trial_A"):
        b.node_matches()
    assert text_only.total_node_text_cost() == 2.0


def test_files_are_read_once_and_never_written(tmp_path, truth):
    b = bench(tmp_path, truth)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.json")}
    (tmp_path / "preds" / "trial_A.json").write_text("{broken")
    assert b.total_node_text_cost() == 2.0
    (tmp_path / "preds" / "trial_A.json").write_bytes(before[tmp_path / "preds" / "trial_A.json"])
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.json")} == before


def test_range_indices_are_a_slice(tmp_path, truth):
    b = bench(tmp_path, truth)
    assert [nm.parent_img_code for nm in b.node_matches((-1, None))] == ["trial_B"]
    assert [nm.parent_img_code for nm in b.node_matches((None, 1))] == ["trial_A"]
    assert b.node_matches((1, 1)) == []
    with pytest.raises(TypeError):
        b.node_matches((0, 1, 2))


def test_a_missing_ground_truth_folder_is_named(tmp_path, truth):
    """A missing folder is an error naming it, not an empty folder (which gave "Expected 2
    ground-truth files in …, found 0" or, with 0 expected, a count of prediction files)."""
    truth = dict(truth, true_flow_dir=tmp_path / "no_flow")
    with pytest.raises(ValueError, match=r"The ground-truth flow folder '.*no_flow' does not exist"):
        bench(tmp_path, truth)
    with pytest.raises(ValueError, match=r"The ground-truth flow folder '.*no_flow' does not exist"):
        bench(tmp_path, truth, expected_num_diagrams=0, allow_missing_pred_diagrams=True)


def test_time_limit_is_checked_and_used(tmp_path, truth):
    with pytest.raises(ValueError, match="time_limit must be a positive finite number of seconds"):
        bench(tmp_path, truth, time_limit=0)
    b = bench(tmp_path, truth, time_limit=0.5)
    assert b.time_limit == 0.5 and all(nm.unproven == [] for nm in b.node_matches())
