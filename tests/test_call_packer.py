"""The compiled call reader (``_core.CallPacker``) against its pure-Python twin ``_Preparer``.

Both must intern the same tools, argument names and values in the same order, give every step the
same tool, mass and (sorted) arguments, and accept and reject the same inputs — on random
trajectories mixing every accepted call form, value type and canonicaliser.
"""

from __future__ import annotations

import math
import random
import string
import sys
import types
import unicodedata

import numpy as np
import pytest
from scorekit import _kernels
from scorekit.agents import Episode, Step, ToolSpec, Trajectory, TrajectoryMetric, tool_grammar
from scorekit.agents import trajectory as trajectory_module
from scorekit.agents.toolcalls import _Weights
from scorekit.agents.trajectory import _CompiledPacker, _Preparer
from scorekit.base import FieldSpec
from scorekit.canonicalize import Canonicalizer, builtin_steps, default_canonicalizer, lower, strip

pytestmark = pytest.mark.skipif(_kernels._core is None, reason="needs the compiled core")


class Label(str):
    """A str subclass (canonicalised like a str, but not read natively)."""


class Args(dict):
    """A dict subclass whose items() the readers must use."""


class SubStep(Step):
    """A Step subclass (read through ``as_call``, not through Step's slot layout)."""

    __slots__ = ()


def _values(rng: random.Random) -> list:
    letters = "".join(rng.choice("aAbB ,.-") for _ in range(rng.randrange(6)))
    return [
        "Cat", " cat  ", "CAT\t", "c a t", "cat!", "café", "CAFÉ", "cafe\u0301", "Straße", "STRASSE",
        "\u01c5", "x\u2003y", "\x1cq\x1f", "", " ", letters, letters.upper(), "\ud800", Label("Cat"),
        0, 1, 2, -1, 1.0, 2.0, -0.0, 0.0, 0.5, True, False, 2**70, float(2**70), 2**63, -(2**63),
        math.nan, math.inf, -math.inf, None, [1, "A"], (1, "a"), ("x",), [], {"k": [1]}, {"k": [1]},
        np.int64(1), np.float64(0.5), np.int64(2**40),
    ]


def _call(rng: random.Random, values: list):
    tool = rng.choice(["search", "open", "Search", "answer", 7])
    names = rng.sample(["q", "n", "m", "query", 1, ("t",)], rng.randrange(4))
    args = {k: rng.choice(values) for k in names}
    form = rng.randrange(12)
    if form == 6:
        return SubStep(tool, args)
    if form == 9:
        return [tool, args]
    if form == 10:
        return (tool, args, "ignored")
    if form == 11:
        return {"tool": tool, "name": "other", "args": args, "arguments": {"x": 1}}
    if form == 0:
        return (tool, args)
    if form == 1:
        return {"tool": tool, "args": args}
    if form == 2:
        return {"name": tool, "arguments": args}
    if form == 3:
        return str(tool)
    if form == 4:
        return Step(tool, Args(args))
    if form == 5:
        return Step(tool, types.MappingProxyType(args))
    return Step(tool, args)


def _trajectory(rng: random.Random, values: list):
    calls = [_call(rng, values) for _ in range(rng.randrange(8))]
    form = rng.randrange(5)
    if form == 0:
        return tuple(calls)
    if form == 1:
        return Trajectory(calls)
    if form == 2:
        return Episode(Trajectory(calls))
    return calls


def _compiled(canon, weights: _Weights) -> _CompiledPacker:
    return _CompiledPacker(_kernels._core, canon, weights, builtin_steps(canon))


def _same(x, y) -> bool:
    """Equal interned objects: ``==`` (NaN matches NaN; 2.0 read natively comes back as 2)."""
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return type(x) in (int, float, bool) and type(y) in (int, float, bool) and x == y or x == y


def _rows(table, ids) -> list:
    tools, mass, offsets, names, values, weights = table
    return [(int(tools[c]), float(mass[c]),
             [(int(names[t]), int(values[t]), float(weights[t])) for t in range(offsets[c], offsets[c + 1])])
            for c in ids.tolist()]


def _check_same_packing(canon, weights, batches) -> None:
    native, python = _compiled(canon, weights), _Preparer(canon, weights)
    packed = []
    for batch in batches:
        a, b = native.pack(batch), python.pack(batch)
        assert a[1].tolist() == b[1].tolist()
        assert a[2] == b[2]  # total masses, exactly
        assert a[3] == b[3]
        packed.append((a[0], b[0]))
    for ours, theirs in zip(native.interned(), python.interned()):
        assert len(ours) == len(theirs)
        assert all(_same(x, y) for x, y in zip(ours, theirs)), (ours, theirs)
    t_native, t_python = native.table(), python.table()
    for a_ids, b_ids in packed:
        assert _rows(t_native, a_ids) == _rows(t_python, b_ids)


CANONICALIZERS = {
    "default": default_canonicalizer(),
    "none": None,
    "empty": Canonicalizer([]),
    "nfkc+lower+strip+punct": Canonicalizer(["nfkc", "lower", "strip", "strip_punctuation"]),
    "lower": lower,
    "strip": strip,
    "custom": str.upper,
    "custom-in-pipeline": Canonicalizer(["nfc", str.swapcase]),
}


@pytest.mark.parametrize("name", CANONICALIZERS)
def test_random_trajectories_pack_identically(name):
    rng = random.Random(name)
    for _ in range(60):
        values = _values(rng)
        batches = [[_trajectory(rng, values) for _ in range(rng.randrange(1, 5))] for _ in range(2)]
        _check_same_packing(CANONICALIZERS[name], _Weights(None), batches)


def test_grammar_weights_pack_identically():
    rng = random.Random(5)
    g = tool_grammar(*(ToolSpec(t, importance=rng.choice([0.1, 0.5, 2.0, 3.0]),
                                params={k: FieldSpec(k, importance=rng.choice([0.3, 1.0, 7.0]))
                                        for k in ("q", "n", "m", "query")})
                       for t in ("search", "open", "Search", "answer")))
    for _ in range(60):
        values = _values(rng)
        batches = [[_trajectory(rng, values) for _ in range(3)] for _ in range(2)]
        _check_same_packing(default_canonicalizer(), _Weights(g), batches)


def test_ascii_rules_equal_the_python_steps():
    """Every built-in step and some pipelines on random ASCII text (all 128 characters)."""
    rng = random.Random(7)
    texts = ["".join(rng.choice(string.printable + "".join(map(chr, range(32))) + "\x7f")
                     for _ in range(rng.randrange(12))) for _ in range(3000)]
    texts += [chr(c) for c in range(128)]
    for steps in (["nfc"], ["nfkc"], ["lower"], ["strip"], ["collapse_whitespace"], ["strip_punctuation"],
                  ["strip_punctuation", "collapse_whitespace", "lower"], ["strip", "nfkc", "lower"]):
        canon = Canonicalizer(steps)
        native = _compiled(canon, _Weights(None))
        native.pack([[("t", {"v": t}) for t in texts]])
        expected: dict[str, None] = dict.fromkeys(canon(t) for t in texts)
        assert native.interned()[2] == list(expected), steps


def test_ascii_punctuation_is_unicode_category_p():
    canon = Canonicalizer(["strip_punctuation"])
    native = _compiled(canon, _Weights(None))
    native.pack([[("t", {"v": chr(c)}) for c in range(128)]])
    kept = [v for v in native.interned()[2] if v]
    assert kept == [chr(c) for c in range(128) if unicodedata.category(chr(c))[0] != "P"]


def test_values_equal_across_kinds_share_an_id():
    """A NumPy integer first, then the int and float equal to it; and the other way round."""
    for order in ([np.int64(3), 3, 3.0, True], [3, np.int64(3), 1, np.float64(1.0), True, None, (1,)]):
        _check_same_packing(None, _Weights(None), [[[("t", {"v": v}) for v in order]]])


@pytest.mark.parametrize("bad, error", [
    (3, TypeError), ([Step("s", "x")], ValueError), ([("s", {"q": "a"}), object()], TypeError),
    ([object.__new__(Step)], AttributeError),  # a Step whose slots were never set
    ([{"tool": "s", "args": "not a mapping"}], ValueError),
])
def test_bad_input_raises_like_the_twin(bad, error):
    for packer in (_compiled(None, _Weights(None)), _Preparer(None, _Weights(None))):
        with pytest.raises(error):
            packer.pack([bad])


def test_step_attributes_replaced_on_the_class_are_honoured(monkeypatch):
    """The compiled reader reads a Step's fields by attribute lookup, as the twin does: a property
    put on the class is honoured."""
    batch = [[Step("search", {"q": "Cat"}), Step("open", {})]]
    monkeypatch.setattr(Step, "tool", property(lambda step: "patched"), raising=False)
    _check_same_packing(default_canonicalizer(), _Weights(None), [batch])
    assert _compiled(None, _Weights(None)).interned()[0] == []
    packer = _compiled(None, _Weights(None))
    packer.pack(batch)
    assert packer.interned()[0] == ["patched"]


def test_metric_without_the_compiled_reader(monkeypatch):
    """With no compiled core the metric packs in Python, with the same results."""
    rng = random.Random(11)
    values = [v for v in _values(rng) if not (isinstance(v, float) and math.isnan(v))]
    preds = [[_call(rng, values) for _ in range(rng.randrange(6))] for _ in range(200)]
    golds = [[_call(rng, values) for _ in range(rng.randrange(6))] for _ in range(200)]
    metric = TrajectoryMetric()
    compiled = [s.detail["raw_distance"] for s in metric.score_batch(preds, golds)]
    monkeypatch.setattr(_kernels, "compiled", lambda: None)
    assert isinstance(trajectory_module._call_packer(None, _Weights(None)), _Preparer)
    assert [s.detail["raw_distance"] for s in metric.score_batch(preds, golds)] == compiled


@pytest.mark.parametrize("threads", [1, 2, 0])
def test_compiled_score_pairs_equals_the_array_path(threads):
    """The one-call Rust path (pack, sort, NW without arrays) equals packing to arrays and running
    each backend's kernel, on batches above and below the serial threshold."""
    rng = random.Random(threads)
    values = _values(rng)
    for n_pairs in (1, 5, 300):
        preds = [[_call(rng, values) for _ in range(rng.randrange(9))] for _ in range(n_pairs)]
        golds = [[_call(rng, values) for _ in range(rng.randrange(9))] for _ in range(n_pairs)]
        canon = default_canonicalizer()
        with _kernels.use_backend("rust"):
            fused = _compiled(canon, _Weights(None)).score_pairs(preds, golds, threads)
        for backend in ("rust", "numba"):
            with _kernels.use_backend(backend):
                via_arrays = trajectory_module._pack_and_score(_compiled(canon, _Weights(None)), preds, golds, threads)
                python = _Preparer(canon, _Weights(None)).score_pairs(preds, golds, threads)
            assert fused == via_arrays == python
    with pytest.raises(ValueError, match="same number of pairs"):
        _compiled(None, _Weights(None)).score_pairs([[]], [], threads)


def test_reused_packer_forgets_everything_between_calls():
    """Single-pair calls reuse one reset packer: every result equals a fresh Python twin's, also
    after a failed call and after the canonicaliser is swapped."""
    rng = random.Random(21)
    values = [v for v in _values(rng) if not (isinstance(v, float) and math.isnan(v))]
    metric = TrajectoryMetric()
    for k in range(300):
        if k == 150:
            with pytest.raises(ValueError):
                metric([Step("s", {"q": "a"}), Step("s", "not a mapping")], [])
            metric.canonicalizer = Canonicalizer(["strip"])
        p = [_call(rng, values) for _ in range(rng.randrange(6))]
        g = [_call(rng, values) for _ in range(rng.randrange(6))]
        expected = _Preparer(metric.canonicalizer, _Weights(None)).score_pairs([p], [g], 1)[0][0]
        assert metric(p, g).detail["raw_distance"] == expected
    assert len(metric._spare) == 1


@pytest.mark.parametrize("compensated", [False, True])
def test_a_calls_mass_sums_its_argument_weights_as_this_pythons_sum_does(monkeypatch, compensated):
    """A call's mass is ``w_tool + sum(argument weights)``: CPython 3.12 compensates that sum, so
    the compiled reader adds as ``bootstrap.COMPENSATED`` says (ten weights of 0.1: 1.0 compensated,
    0.9999999999999999 left to right); the Python twin uses this interpreter's ``sum`` itself."""
    from scorekit._kernels import bootstrap

    monkeypatch.setattr(bootstrap, "COMPENSATED", compensated)
    weights = types.SimpleNamespace(grammar=object(), tool=lambda tool: 0.0, arg=lambda tool, name: 0.1)
    call = ("t", {f"a{k}": k for k in range(10)})
    _, _, mass, _ = _compiled(None, weights).pack([[call]])
    assert mass == [1.0 if compensated else 0.9999999999999999]
    if compensated == (sys.version_info >= (3, 12)):  # the twin's sum is this interpreter's
        assert _Preparer(None, weights).pack([[call]])[2] == mass
