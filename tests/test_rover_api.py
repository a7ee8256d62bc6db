"""``scorekit.qe.rover`` on both backends: ek's documented examples and vectors, input shapes and errors, a
straightforward Python ROVER on random string hypotheses, and NIST SCTK's ROVER demo as an oracle."""

from __future__ import annotations

import doctest
import math
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

import scorekit.qe
import importlib
from reference_sequences import rover_units
from scorekit import _kernels, registry
from scorekit.base import Signal
from scorekit.qe import AgreementSignal, RoverConsensus, RoverSlot, rover
from scorekit.qe.rover import _as_units, rover_command

rover_module = importlib.import_module("scorekit.qe.rover")  # the attribute is the function

#: NIST SCTK's ROVER demo (inputs and output), copied into ``tests/data`` (see its README for source and licence).
SCTK = Path(__file__).resolve().parent / "data" / "sctk" / "rover_demo"


@pytest.fixture(params=["rust", "numba"])
def backend(request):
    with _kernels.use_backend(request.param):
        yield request.param


@dataclass
class Block:
    text: Optional[str]
    confidence: Optional[float] = None


@dataclass
class Ocr:
    text: Optional[str]
    mean_confidence: Optional[float] = None
    blocks: tuple = ()


def test_doctests(backend):
    assert doctest.testmod(rover_module, raise_on_error=False).failed == 0


def test_the_cat_sat(backend):
    c = rover(["the cat sat", "the cat sit", "the bat sat"])
    assert c.text == "the cat sat"
    assert [s.entries for s in c.slots] == [
        [("the", 1.0)] * 3, [("cat", 1.0), ("cat", 1.0), ("bat", 1.0)], [("sat", 1.0), ("sit", 1.0), ("sat", 1.0)]]
    assert [s.winner for s in c.slots] == ["the", "cat", "sat"]
    assert [s.score for s in c.slots] == [1.0, 0.8333333333333333, 0.8333333333333333]
    assert c.agreement == [1.0, 2 / 3, 2 / 3]
    assert c.mean_agreement == 0.7777777777777777
    assert c.n_engines == 3
    c = rover(["the cat sat", "the cat sit", "the bat sat"], use_confidence=False)
    assert c.text == "the cat sat" and c.slots[1].score == 2 / 3


def test_insertion_and_null_votes(backend):
    c = rover(["a b c", "a x b c", "a b c"])
    assert len(c.slots) == 4
    assert c.slots[1] == RoverSlot([(None, 0.0), ("x", 1.0), (None, 0.0)], None, 0.6833333333333333, 2 / 3)
    assert (c.text, c.agreement) == ("a b c", [1.0, 1.0, 1.0])
    c = rover(["a b c", "a x b c", "a b c"], null_conf=0.0)
    assert (c.slots[1].winner, c.slots[1].score, c.slots[1].vote_share) == ("x", 2 / 3, 1 / 3)
    assert (c.text, c.agreement, c.mean_agreement) == ("a x b c", [1.0, 1 / 3, 1.0, 1.0], 0.8333333333333333)


def test_confidence_weighting(backend):
    c = rover([[("cat", 0.9)], [("dog", 0.2)]])
    assert (c.text, c.slots[0].score, c.agreement) == ("cat", 0.7, [0.5])
    c = rover([[("cat", 0.9)], [("dog", 0.2)]], use_confidence=False)
    assert (c.text, c.slots[0].score) == ("cat", 0.5)
    hyps = [[("cat", 0.3)], [("cat", 0.3)], [("dog", 0.99)]]
    c = rover(hyps, conf_weight=0.0)
    assert (c.text, c.slots[0].score, c.slots[0].vote_share) == ("cat", 2 / 3, 2 / 3)
    c = rover(hyps, conf_weight=1.0)
    assert (c.text, c.slots[0].score, c.slots[0].vote_share) == ("dog", 0.99, 1 / 3)


def test_edge_vectors(backend):
    c = rover(["alpha", "beta", "gamma"])
    assert (c.text, c.slots[0].score, c.mean_agreement) == ("alpha", 2 / 3, 1 / 3)
    c = rover([])
    assert (c.n_engines, c.tokens, c.mean_agreement) == (0, [], 1.0)
    c = rover(["", ""])
    assert (c.slots, c.n_engines, c.mean_agreement) == ([], 2, 0.0)
    c = rover(["", "a"])
    assert c.slots == [RoverSlot([(None, 0.0), ("a", 1.0)], "a", 0.75, 0.5)]
    c = rover(["alpha beta gamma"])
    assert (c.agreement, c.mean_agreement) == ([1.0, 1.0, 1.0], 1.0)
    c = rover(["a b c", "a c"])
    assert (c.text, c.agreement) == ("a b c", [1.0, 0.5, 1.0])
    c = rover(["hello world", "hello word"])
    assert (c.text, c.agreement) == ("hello world", [1.0, 0.5])
    c = rover(["x", "y", "x y"])
    assert [s.entries for s in c.slots] == [
        [("x", 1.0), ("y", 1.0), ("x", 1.0)], [(None, 0.0), (None, 0.0), ("y", 1.0)]]
    assert [s.winner for s in c.slots] == ["x", None]
    assert (c.text, c.mean_agreement) == ("x", 2 / 3)
    assert RoverConsensus(tokens=[], agreement=[], n_engines=3).mean_agreement == 0.0
    assert RoverConsensus(tokens=[], agreement=[], n_engines=1).mean_agreement == 1.0


@pytest.mark.parametrize("order, text, agreement", [
    ((0, 1, 2), "a b c", [0.6667, 0.6667, 1.0]),
    ((0, 2, 1), "a b c", [0.6667, 0.6667, 1.0]),
    ((1, 0, 2), "a b c", [0.6667, 0.6667, 1.0]),
    ((2, 0, 1), "a b c", [0.6667, 0.6667, 1.0]),
    ((1, 2, 0), "a c", [0.6667, 1.0]),
    ((2, 1, 0), "b c", [0.6667, 1.0]),
])
def test_order_dependence(backend, order, text, agreement):
    base = ["a b c", "a c", "b c"]
    c = rover([base[i] for i in order])
    assert c.text == text
    assert [round(a, 4) for a in c.agreement] == agreement


def test_ocr_shaped_inputs(backend):
    c = rover([Ocr("the quick brown fox", 0.9), Ocr("the quick brown fox", 0.8), Ocr("the quick brawn fox", 0.4)])
    assert c.text == "the quick brown fox"
    assert rover([Ocr(None), Ocr("hello world"), Ocr("hello world")]).text == "hello world"
    a = Ocr("the cat sat", 0.9, (Block("the", 0.95), Block("cat", 0.95), Block("sat", 0.9)))
    b = Ocr("the cat sit", 0.9, (Block("the", 0.95), Block("cat", 0.95), Block("sit", 0.2)))
    assert rover([a, b], conf_weight=1.0).tokens == ["the", "cat", "sat"]
    # a block holding a space falls back to .text with .mean_confidence
    assert _as_units(Ocr("the cat", 0.6, (Block("the cat", 0.9),))) == [("the", 0.6), ("cat", 0.6)]
    assert _as_units(Ocr("x", None, (Block("x", None),))) == [("x", 1.0)]


def test_units():
    assert _as_units(["a", "b"]) == [("a", 1.0), ("b", 1.0)]
    assert _as_units([("a", None), ("b", 0.5)]) == [("a", 1.0), ("b", 0.5)]
    assert _as_units(None) == []
    assert _as_units("a\x1cb") == [("a", 1.0), ("b", 1.0)]  # Python str.split() whitespace


def test_guard(backend):
    long = " ".join(["a"] * 50)
    with pytest.raises(ValueError, match=r"max_tokens=10"):
        rover([long, long], max_tokens=10)
    assert rover([long, long], max_tokens=100).n_engines == 2
    assert rover([long, long], max_tokens=50).text == long
    assert rover([long], max_tokens=None).n_engines == 1


def test_bad_input(backend):
    with pytest.raises(ValueError, match=r"hypotheses\[1\] token 0 \('b'\) has a NaN confidence"):
        rover([[("a", 1.0)], [("b", math.nan)]])
    with pytest.raises(ValueError, match="NaN confidence"):
        rover([Ocr("a b", math.nan)])
    with pytest.raises(TypeError, match=r"hypotheses\[0\] must be a string"):
        rover([3])
    with pytest.raises(ValueError, match="reserved for the NULL vote"):
        rover(["a"], tokenize=lambda h: [(None, 1.0)])
    with pytest.raises(ValueError, match="conf_weight must be finite"):
        rover(["a"], conf_weight=math.nan)
    with pytest.raises(TypeError, match="max_tokens must be an int"):
        rover(["a"], max_tokens="5")


def test_custom_tokenize_and_non_string_tokens(backend):
    c = rover([[1, 2, 3], [1, 2, 4], [1, 5, 3]], tokenize=lambda h: [(t, 1.0) for t in h])
    assert c.tokens == [1, 2, 3]


def test_random_string_sets_match_the_python_algorithm(backend):
    rng = random.Random(99)
    words = ["the", "a", "cat", "sat", "on", "mat", "bat", "sit"]
    for _ in range(400):
        base = [rng.choice(words) for _ in range(rng.randrange(8))]
        hyps = [[(w if rng.random() > 0.2 else rng.choice(words), rng.choice([1.0, 0.8, 0.4]))
                 for w in base if rng.random() > 0.15] for _ in range(rng.randrange(1, 6))]
        cw, nc = rng.choice([0.0, 0.5, 1.0]), rng.choice([0.7, 0.0])
        c = rover(hyps, conf_weight=cw, null_conf=nc, max_tokens=None)
        assert [(s.entries, s.winner, s.score, s.vote_share) for s in c.slots] == rover_units(hyps, cw, nc)


def test_agreement_signal_and_registry(backend):
    assert round(AgreementSignal()(["the cat sat", "the cat sit", "the bat sat"]), 3) == 0.778
    assert AgreementSignal().cost_tier == 3
    assert isinstance(AgreementSignal(), Signal)
    assert registry.get("signals", "agreement") is AgreementSignal
    assert scorekit.qe.rover is rover  # the function shadows the submodule, as in the reference


def test_rover_command(backend):
    assert rover_command(["the cat sat", "the cat sit", "the bat sat"], True) == {
        "consensus": "the cat sat", "mean_agreement": 0.7778, "agreement": [1.0, 0.6667, 0.6667], "n_engines": 3}
    assert rover_command(["a b", "a c"], False)["agreement"] == [1.0, 0.5]


def _ctm_words(name):
    words = defaultdict(list)
    for line in (SCTK / name).read_text().splitlines():
        fields = line.split()
        words[fields[0]].append(fields[4])
    return words


def test_nist_sctk_rover_demo(backend):
    """SCTK's demo (3 systems, 6 files): frequency voting gives SCTK's output word for word on five
    files. On file1 SCTK's time-mediated alignment puts system 2's final ``g`` with the others'
    ``g``; our unit-cost alignment prefers the substitution ``f/g`` (diagonal first), so ``g``
    has one vote of three and NULL wins that slot."""
    systems = [_ctm_words(f"sys{i}.ctm") for i in (1, 2, 3)]
    expected = _ctm_words("rover.ctm")
    assert sorted(expected) == [f"file{i}" for i in range(1, 7)]
    for name in sorted(expected):
        c = rover([s[name] for s in systems], use_confidence=False)
        if name == "file1":
            assert c.tokens == expected[name][:-1] and expected[name][-1] == "g"
            assert c.slots[-2].entries == [("f", 1.0), ("g", 1.0), ("f", 1.0)]
            assert c.slots[-1].entries == [(None, 0.0), (None, 0.0), ("g", 1.0)]
        else:
            assert c.tokens == expected[name], name
