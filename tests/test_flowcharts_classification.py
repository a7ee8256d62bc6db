"""Flowchart classification and rotation benchmarks (docs/flowcharts.md): the spec's vectors
C1-C9, every validation rule in its order with its message (naming the file and the entry), and
the metrics against scikit-learn on thousands of random label files."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from pathlib import Path

import pytest

from scorekit.errors import InvalidTypeError, InvalidValueError, ScorekitError
from scorekit.flowcharts import (
    BinaryClassificationBenchmark,
    ClassificationBenchmark,
    MulticlassClassificationBenchmark,
    RotationBenchmark,
    SingleClassificationResult,
    check_generic_classification_benchmark_data,
    load_classification_benchmark_results,
)
from scorekit.flowcharts.classification import classification_benchmark as cb_module
from scorekit.flowcharts.classification import classification_bench_types
from scorekit.flowcharts.rotation import rotation_benchmark as rot_module


def write(path: Path, value) -> Path:
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def files(tmp_path: Path, trues, preds, *, true_dir="data/imgs", pred_dir="out", names=None):
    names = names or [f"paper_{k}_0.png" for k in range(max(len(trues), len(preds)))]
    t = write(tmp_path / "true.json", [{"img_path": f"{true_dir}/{names[k]}", "label": v} for k, v in enumerate(trues)])
    p = write(tmp_path / "pred.json", [{"img_path": f"{pred_dir}/{names[k]}", "label": v} for k, v in enumerate(preds)])
    return {"true_path": t, "pred_path": p}


def test_module_paths_and_types():
    assert cb_module.SingleClassificationResult is classification_bench_types.SingleClassificationResult
    assert rot_module.RotationBenchmark is RotationBenchmark
    r = SingleClassificationResult(img_path="a.png", pred=1, true=1)
    assert r == SingleClassificationResult(img_path="a.png", pred=1, true=1) and hash(r) == hash(
        SingleClassificationResult(img_path="a.png", pred=1, true=1))
    assert [f.name for f in dataclasses.fields(r)] == ["img_path", "pred", "true"]
    with pytest.raises(TypeError):
        SingleClassificationResult("a.png", 1, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.pred = 0


def test_c1_binary(tmp_path):
    b = BinaryClassificationBenchmark(**files(tmp_path, [1, 1, 0, 0, 1], [1, 0, 1, 0, 1]))
    assert (b.num_tp, b.num_fp, b.num_fn, b.num_tn) == (2, 1, 1, 1)
    assert b.accuracy == 0.6
    assert b.precision == b.recall == b.f1_score == b.tpr == pytest.approx(2 / 3)
    assert b.fpr == b.specificity == b.tnr == 0.5
    assert b.tp == (b.result_list[0], b.result_list[4])
    assert b.tp[0].img_path == "data/imgs/paper_0_0.png"
    assert len(b) == 5 and type(b.num_tp) is int


def test_c2_c3_binary_zero_denominators(tmp_path):
    b = BinaryClassificationBenchmark(**files(tmp_path, [0, 0], [0, 0]))
    assert (b.accuracy, b.precision, b.recall, b.f1_score, b.fpr, b.specificity) == (1.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    b = BinaryClassificationBenchmark(**files(tmp_path, [1], [0]))
    assert [b.accuracy, b.precision, b.recall, b.f1_score, b.tpr, b.fpr, b.specificity, b.tnr] == [0.0] * 8
    b = BinaryClassificationBenchmark(**files(tmp_path, [], []))
    assert len(b) == 0 and [b.accuracy, b.precision, b.recall, b.f1_score, b.fpr, b.specificity] == [0.0] * 6


@pytest.mark.parametrize("label, error, message", [
    (True, InvalidTypeError, "expects integer labels"), ("1", TypeError, "expects integer labels"),
    (2, InvalidValueError, "expects only 0 and 1 labels"), (-1, ValueError, "expects only 0 and 1 labels"),
])
def test_c4_binary_label_rules(tmp_path, label, error, message):
    with pytest.raises(error, match=message) as info:
        BinaryClassificationBenchmark(**files(tmp_path, [0, label], [0, 1]))
    assert "true.json" in str(info.value) and "entry 1" in str(info.value) and "paper_1_0.png" in str(info.value)
    with pytest.raises(error, match=message) as info:
        BinaryClassificationBenchmark(**files(tmp_path, [0, 1], [0, label]))
    assert "pred.json" in str(info.value)


def test_binary_checks_records_in_order(tmp_path):
    # record 0 has a bad value, record 1 a bad type: the first record's error wins
    with pytest.raises(ValueError, match="only 0 and 1"):
        BinaryClassificationBenchmark(**files(tmp_path, [5, "x"], [0, 1]))


C5_LABELS = ("flowchart", "table", "other", "photo")


def test_c5_multiclass(tmp_path):
    m = MulticlassClassificationBenchmark(**files(tmp_path, ["flowchart", "flowchart", "table", "other"],
                                                  ["flowchart", "table", "table", "flowchart"]), labels=C5_LABELS)
    assert m.accuracy == 0.5
    assert m.confusion_matrix == {
        "flowchart": {"flowchart": 1, "table": 1, "other": 0, "photo": 0},
        "table": {"flowchart": 0, "table": 1, "other": 0, "photo": 0},
        "other": {"flowchart": 1, "table": 0, "other": 0, "photo": 0},
        "photo": {"flowchart": 0, "table": 0, "other": 0, "photo": 0}}
    assert list(m.confusion_matrix) == list(C5_LABELS) and list(m.confusion_matrix["other"]) == list(C5_LABELS)
    assert m.per_class_accuracy == {"flowchart": 0.5, "table": 1.0, "other": 0.0, "photo": 0.0}
    assert m.num_per_true_class == {"flowchart": 2, "table": 1, "other": 1, "photo": 0}
    assert m.num_per_pred_class == {"flowchart": 2, "table": 2, "other": 0, "photo": 0}
    assert m.confusion_matrix is not m.confusion_matrix  # a fresh dict per access
    m.confusion_matrix["table"]["table"] = 99
    assert m.confusion_matrix["table"]["table"] == 1


def test_multiclass_labels_coerced_and_empty_files(tmp_path):
    m = MulticlassClassificationBenchmark(**files(tmp_path, [], []), labels=["a", "b"])
    assert m.labels == ("a", "b")
    assert m.confusion_matrix == {"a": {"a": 0, "b": 0}, "b": {"a": 0, "b": 0}}
    assert m.per_class_accuracy == {"a": 0.0, "b": 0.0} and m.accuracy == 0.0
    assert m.num_per_true_class == m.num_per_pred_class == {"a": 0, "b": 0}


def test_c6_multiclass_label_rules(tmp_path):
    kw = files(tmp_path, [0, 270], [0, 0])
    with pytest.raises(ValueError, match="labels cannot be empty."):
        MulticlassClassificationBenchmark(**kw, labels=())
    for labels in ((0, 90, 90), (1, True), (0, False, 270)):
        with pytest.raises(ValueError, match="labels must be unique."):
            MulticlassClassificationBenchmark(**kw, labels=labels)
    with pytest.raises(TypeError, match="hashable"):
        MulticlassClassificationBenchmark(**kw, labels=([0], [270]))
    with pytest.raises(ValueError, match="True label 270") as info:
        MulticlassClassificationBenchmark(**kw, labels=(0, 90, 180))
    assert "entry 1 of" in str(info.value) and "true.json" in str(info.value)
    with pytest.raises(ValueError, match="Predicted label 'x' for image 'data/imgs/paper_1_0.png'") as info:
        MulticlassClassificationBenchmark(**files(tmp_path, ["a", "a"], ["a", "x"]), labels=("a",))
    assert "pred.json" in str(info.value)
    with pytest.raises(TypeError):
        MulticlassClassificationBenchmark(**kw)  # labels is required


def test_multiclass_true_before_pred_and_records_in_order(tmp_path):
    with pytest.raises(ValueError, match="True label 'y'"):
        MulticlassClassificationBenchmark(**files(tmp_path, ["y"], ["x"]), labels=("a",))
    with pytest.raises(ValueError, match="Predicted label 'x'"):
        MulticlassClassificationBenchmark(**files(tmp_path, ["a", "y"], ["x", "a"]), labels=("a",))


def test_multiclass_python_equality_between_bool_and_int(tmp_path):
    m = MulticlassClassificationBenchmark(**files(tmp_path, [True, 0], [1, False]), labels=(1, 0))
    assert m.accuracy == 1.0
    assert m.confusion_matrix == {1: {1: 1, 0: 0}, 0: {1: 0, 0: 1}}


def test_c7_rotation(tmp_path):
    r = RotationBenchmark(**files(tmp_path, [0, 90, 270, 90], [0, 180, 270, 90]))
    assert r.labels == (0, 90, 180, 270)
    assert r.accuracy == 0.75
    assert r.confusion_matrix[90][180] == 1 and r.confusion_matrix[90][90] == 1
    assert r.per_class_accuracy == {0: 1.0, 90: 0.5, 180: 0.0, 270: 1.0}
    assert r.num_per_true_class == {0: 1, 90: 2, 180: 0, 270: 1}
    assert r.num_per_pred_class == {0: 1, 90: 1, 180: 1, 270: 1}
    for bad in (45, 360, "90", -90):
        with pytest.raises(InvalidValueError, match="not in labels"):
            RotationBenchmark(**files(tmp_path, [0, bad], [0, 0]))
    for bad in (False, True):
        with pytest.raises(InvalidTypeError, match="booleans") as info:
            RotationBenchmark(**files(tmp_path, [0, 0], [0, bad]))
        assert "pred.json" in str(info.value) and "entry 1" in str(info.value)
    with pytest.raises(TypeError):
        RotationBenchmark(**files(tmp_path, [0], [0]), labels=(0, 90))


def test_c8_generic_python_equality(tmp_path):
    c = ClassificationBenchmark(**files(tmp_path, ["yes", 1, True], ["yes", True, 1]))
    assert c.accuracy == 1.0
    assert c.trues == ("yes", 1, True) and c.preds == ("yes", True, 1)
    assert c.img_paths == ("data/imgs/paper_0_0.png", "data/imgs/paper_1_0.png", "data/imgs/paper_2_0.png")
    assert c.incorrect_predictions == () and len(c.correct_predictions) == 3
    g = ClassificationBenchmark[int](**files(tmp_path, [1, 0], [1, 1]))  # generic subscription works
    assert g.accuracy == 0.5 and [r.img_path for r in g.incorrect_predictions] == ["data/imgs/paper_1_0.png"]
    m = MulticlassClassificationBenchmark[str](**files(tmp_path, ["a"], ["a"]), labels=("a",))
    assert m.accuracy == 1.0
    assert ClassificationBenchmark(**files(tmp_path, [], [])).accuracy == 0.0


def test_c9_lengths_paths_and_label_types(tmp_path):
    with pytest.raises(ValueError, match="True and pred classifications should have the same length. "
                                         "Found 2 and 3.") as info:
        ClassificationBenchmark(**files(tmp_path, [1, 0], [1, 0, 1]))
    assert "pred.json" in str(info.value) and "entry 2 ('out/paper_2_0.png')" in str(info.value)
    c = ClassificationBenchmark(**files(tmp_path, [1], [1], true_dir="a", pred_dir="b", names=["x.png"]))
    assert c.img_paths == ("a/x.png",)
    kw = {"true_path": write(tmp_path / "t.json", [{"img_path": "a/x.png", "label": 1}]),
          "pred_path": write(tmp_path / "p.json", [{"img_path": "a/x.jpg", "label": 1}])}
    with pytest.raises(ValueError, match="Image paths should match between true and pred classifications. "
                                         "Found a/x.jpg and a/x.png."):
        ClassificationBenchmark(**kw)
    with pytest.raises(TypeError, match=r"True label should be a string, integer, or boolean. "
                                        r"Found <class 'float'>\."):
        ClassificationBenchmark(**files(tmp_path, [1.5], [1]))


def test_windows_paths_and_case(tmp_path):
    kw = {"true_path": write(tmp_path / "t.json", [{"img_path": "data/imgs/x.png", "label": 1}]),
          "pred_path": write(tmp_path / "p.json", [{"img_path": "C:\\out\\x.png", "label": 1}])}
    assert ClassificationBenchmark(**kw).img_paths == ("data/imgs/x.png",)
    write(tmp_path / "p.json", [{"img_path": "out/X.png", "label": 1}])
    with pytest.raises(ValueError, match="Image paths should match"):
        ClassificationBenchmark(**kw)


# ------------------------------------------------------------------ validation order and messages
def test_validation_order_and_messages(tmp_path):
    t, p = tmp_path / "true.json", tmp_path / "pred.json"
    ok = [{"img_path": "x.png", "label": 1}]

    def fails(true, pred, error, message):
        write(t, true)
        write(p, pred)
        with pytest.raises(error, match=message) as info:
            ClassificationBenchmark(true_path=t, pred_path=p)
        assert isinstance(info.value, (ScorekitError, OSError))
        return str(info.value)

    # 1. JSON: true before pred
    assert "true.json" in fails("[", "[", ValueError, "not valid JSON")
    assert "pred.json" in fails(ok, "{nope", ValueError, "not valid JSON")
    # 2. lists
    assert "true.json" in fails({"a": 1}, {"a": 1}, TypeError, "True classifications should be a list.")
    assert "pred.json" in fails(ok, "3", TypeError, "Pred classifications should be a list.")
    # 3. lengths before entries
    fails([5], [5, 6], ValueError, "same length")
    # 4. every true entry, then every pred entry: dicts, then keys
    assert "Entry 1" in fails([{"img_path": "x.png", "label": 1}, 3], [[], 4], TypeError,
                              "Items in .*true.json should be dictionaries.")
    assert "pred.json" in fails(ok, [[1]], TypeError, "Items in .*pred.json should be dictionaries.")
    msg = fails([{"img_path": "x.png"}], ok, ValueError, "Found wrong keys in .*true.json.")
    assert "['img_path']" in msg
    fails(ok, [{"img_path": "x.png", "label": 1, "score": 0.9}], ValueError, "Found wrong keys in .*pred.json.")
    fails([{"img_path": "x.png", "label": 1}, {"img": "y", "label": 1}], [1, 2], ValueError, "wrong keys in .*true")
    # 5. per position: pred before true in each step, img_path type, then label types, then names
    assert "pred.json" in fails([{"img_path": 1, "label": 1}], [{"img_path": 2, "label": 1}], TypeError,
                                "Image path should be a string. Found <class 'int'>.")
    assert "true.json" in fails([{"img_path": None, "label": None}], [{"img_path": "x.png", "label": None}],
                                TypeError, "Image path should be a string. Found <class 'NoneType'>.")
    fails([{"img_path": "x.png", "label": None}], [{"img_path": "y.png", "label": [1]}], TypeError,
          "Predicted label should be a string, integer, or boolean. Found <class 'list'>.")
    for bad in (None, 1.0, {"a": 1}, [1]):
        fails([{"img_path": "x.png", "label": bad}], [{"img_path": "y.png", "label": 1}], TypeError,
              "True label should be a string, integer, or boolean.")
    fails([{"img_path": "x.png", "label": 1}], [{"img_path": "y.png", "label": 1}], ValueError,
          "Image paths should match")
    # a later position's type error comes after an earlier position's name mismatch
    fails([{"img_path": "x.png", "label": 1}, {"img_path": "z.png", "label": 1.5}],
          [{"img_path": "y.png", "label": 1}, {"img_path": "z.png", "label": 1}], ValueError, "Image paths")


def test_file_errors(tmp_path):
    good = write(tmp_path / "good.json", [])
    with pytest.raises(FileNotFoundError):
        ClassificationBenchmark(true_path=tmp_path / "missing.json", pred_path=good)
    with pytest.raises(OSError):
        ClassificationBenchmark(true_path=good, pred_path=tmp_path)
    (tmp_path / "latin1.json").write_bytes(b'[{"img_path": "\xe9.png", "label": 1}]')
    with pytest.raises(ValueError, match="latin1.json is not valid UTF-8"):
        ClassificationBenchmark(true_path=tmp_path / "latin1.json", pred_path=good)
    write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="deep.json is not valid JSON"):
        ClassificationBenchmark(true_path=tmp_path / "deep.json", pred_path=good)
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf[]')
    assert len(ClassificationBenchmark(true_path=tmp_path / "bom.json", pred_path=str(good))) == 0


def test_inputs_are_read_once_and_never_written(tmp_path):
    kw = files(tmp_path, [1, 0], [1, 1])
    before = {k: (v.read_bytes(), v.stat().st_mtime_ns) for k, v in kw.items()}
    b = BinaryClassificationBenchmark(**kw)
    assert {k: (v.read_bytes(), v.stat().st_mtime_ns) for k, v in kw.items()} == before
    write(kw["pred_path"], [])  # later edits do not change the benchmark
    assert b.num_tp == 1 and b.true_path == kw["true_path"]
    assert sorted(os.listdir(tmp_path)) == ["pred.json", "true.json"]


def test_keyword_only_and_frozen(tmp_path):
    kw = files(tmp_path, [1], [1])
    with pytest.raises(TypeError):
        ClassificationBenchmark(kw["true_path"], kw["pred_path"])
    b = ClassificationBenchmark(**kw)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.true_path = kw["pred_path"]


def test_helpers(tmp_path):
    kw = files(tmp_path, ["a", "b"], ["a", "c"])
    assert check_generic_classification_benchmark_data(**kw) is None
    results = load_classification_benchmark_results(**kw)
    assert results == (SingleClassificationResult(img_path="data/imgs/paper_0_0.png", pred="a", true="a"),
                       SingleClassificationResult(img_path="data/imgs/paper_1_0.png", pred="c", true="b"))
    write(kw["pred_path"], [])
    with pytest.raises(ValueError, match="same length"):
        check_generic_classification_benchmark_data(**kw)


# ------------------------------------------------------------------ scikit-learn as the oracle
import sklearn.metrics as sklearn_metrics  # noqa: E402  (a test oracle of the test extra)


@pytest.mark.filterwarnings("ignore:A single label was found")
def test_binary_against_scikit_learn(tmp_path):
    rng = random.Random(20261201)
    for _trial in range(1500):
        n = rng.choice((0, 1, 2, 3, rng.randrange(4, 60)))
        bias = rng.random()
        trues = [int(rng.random() < bias) for _ in range(n)]
        preds = [t if rng.random() < 0.6 else int(rng.random() < 0.5) for t in trues]
        b = BinaryClassificationBenchmark(**files(tmp_path, trues, preds))
        if n == 0:
            assert [b.accuracy, b.precision, b.recall, b.f1_score, b.fpr, b.specificity] == [0.0] * 6
            continue
        kw = {"y_true": trues, "y_pred": preds, "zero_division": 0.0}
        assert b.accuracy == pytest.approx(sklearn_metrics.accuracy_score(trues, preds), abs=1e-12)
        assert b.precision == pytest.approx(sklearn_metrics.precision_score(**kw), abs=1e-12)
        assert b.recall == pytest.approx(sklearn_metrics.recall_score(**kw), abs=1e-12)
        assert b.f1_score == pytest.approx(sklearn_metrics.f1_score(**kw), abs=1e-12)
        (tn, fp), (fn, tp) = sklearn_metrics.confusion_matrix(trues, preds, labels=[0, 1])
        assert (b.num_tn, b.num_fp, b.num_fn, b.num_tp) == (tn, fp, fn, tp)
        negatives = sklearn_metrics.recall_score(**kw, pos_label=0)  # specificity = recall of class 0
        assert b.specificity == b.tnr == pytest.approx(negatives, abs=1e-12)
        assert b.fpr == pytest.approx(fp / (fp + tn) if fp + tn else 0.0, abs=1e-12)


@pytest.mark.filterwarnings("ignore:A single label was found")
@pytest.mark.parametrize("kind", ["multiclass", "rotation"])
def test_multiclass_against_scikit_learn(tmp_path, kind):
    rng = random.Random(13 if kind == "rotation" else 31)
    pool = ["flowchart", "table", "other", "photo", "", "ä", 7, True] if kind == "multiclass" else [0, 90, 180, 270]
    for _trial in range(1000):
        if kind == "multiclass":
            labels = tuple(rng.sample(pool, rng.randrange(1, len(pool) + 1)))
        else:
            labels = (0, 90, 180, 270)
        used = list(labels) if rng.random() < 0.8 else list(labels[: max(1, len(labels) // 2)])
        n = rng.choice((0, 1, rng.randrange(2, 80)))
        trues = [rng.choice(used) for _ in range(n)]
        preds = [t if rng.random() < 0.5 else rng.choice(used) for t in trues]
        kw = files(tmp_path, trues, preds)
        m = RotationBenchmark(**kw) if kind == "rotation" else MulticlassClassificationBenchmark(**kw, labels=labels)
        # scikit-learn keys on the labels' values; map each to its index so 7, True and "" compare cleanly
        index = {label: k for k, label in enumerate(labels)}
        yt, yp = [index[t] for t in trues], [index[p] for p in preds]
        ks = list(range(len(labels)))
        cm = sklearn_metrics.confusion_matrix(yt, yp, labels=ks) if n else [[0] * len(ks) for _ in ks]
        assert [list(row.values()) for row in m.confusion_matrix.values()] == [list(map(int, r)) for r in cm]
        assert list(m.num_per_true_class.values()) == [int(sum(r)) for r in cm]
        assert list(m.num_per_pred_class.values()) == [int(sum(col)) for col in zip(*cm)]
        if n:
            assert m.accuracy == pytest.approx(sklearn_metrics.accuracy_score(yt, yp), abs=1e-12)
            # per-class accuracy of a ground-truth class is that class's recall
            recalls = sklearn_metrics.recall_score(yt, yp, labels=ks, average=None, zero_division=0.0)
            assert list(m.per_class_accuracy.values()) == pytest.approx(list(recalls), abs=1e-12)
        else:
            assert m.accuracy == 0.0 and set(m.per_class_accuracy.values()) == {0.0}


# ------------------------------------------------------------------ hostile files
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=False, allow_infinity=False),
                     st.sampled_from(["a/x.png", "b\\x.png", "x.png", "y.png", "", "\ud800", "0", "90"]))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["img_path", "label", "extra"]), inner, max_size=3), max_leaves=8)
_entries = st.one_of(st.fixed_dictionaries({"img_path": st.sampled_from(["a/x.png", "b/x.png", "x.jpg", 3]),
                                            "label": _scalars}), _values)
_documents = st.one_of(st.lists(_entries, max_size=4), _values)


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_documents, _documents, st.sampled_from(["generic", "binary", "multiclass", "rotation"]))
def test_random_documents_raise_only_documented_errors(tmp_path, true_doc, pred_doc, kind):
    t, p = write(tmp_path / "t.json", json.dumps(true_doc)), write(tmp_path / "p.json", json.dumps(pred_doc))
    cls = {"generic": ClassificationBenchmark, "binary": BinaryClassificationBenchmark,
           "rotation": RotationBenchmark}.get(kind)
    try:
        if kind == "multiclass":
            b = MulticlassClassificationBenchmark(true_path=t, pred_path=p, labels=(0, 1, "a/x.png", "x.png"))
        else:
            b = cls(true_path=t, pred_path=p)
    except (InvalidValueError, InvalidTypeError) as exc:
        assert str(exc)
        return
    assert len(b) == len(true_doc) == len(pred_doc)
    assert 0.0 <= b.accuracy <= 1.0
    assert all(type(r.true) in (str, int, bool) and type(r.pred) in (str, int, bool) for r in b.result_list)
