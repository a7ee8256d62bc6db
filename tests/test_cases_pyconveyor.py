"""Differential test of scorekit.cases scoring against pyconveyor 1.10's scorer (a test oracle
only) on random documents built so that no numbered decision of docs/cases.md applies: no booleans
(20), no empty lists (14), every expected list record shares a field with every actual record so
that no best match scores 0 (15), no record with nothing to score (16), scalar lists of scalars
only (17), no NaN, comparators keyed by path only (19) and returning values in [0, 1] (18)."""

from __future__ import annotations

import random
import tempfile

import pyconveyor
import pytest

from scorekit.cases.scoring import score_step

REFERENCE = pyconveyor.BenchmarkRunner(tempfile.mkdtemp(), pipelines=[])

SCALARS = ["a", "b", "c", "A", 0, 1, 2, 1.0, 2.5, None, "1"]


def _scalar(rng):
    return rng.choice(SCALARS)


def _record(rng, shared: bool, depth=0):
    d = {"kind": "r"} if shared else {}
    for key in rng.sample(["x", "y", "z", "w"], rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.1:
            d[key] = "$ignore"
        elif roll < 0.2 and depth < 1:
            d[key] = _record(rng, False, depth + 1)
        elif roll < 0.28:
            d[key] = [_scalar(rng) for _ in range(rng.randint(1, 3))]
        else:
            d[key] = _scalar(rng)
    return d


def _value(rng, depth=0):
    roll = rng.random()
    if depth >= 2 or roll < 0.3:
        return _scalar(rng)
    if roll < 0.5:
        items = [_scalar(rng) for _ in range(rng.randint(1, 5))]
        if rng.random() < 0.2:
            items.insert(rng.randrange(len(items) + 1), "$ignore")
        return items
    if roll < 0.65:
        return [_record(rng, True) for _ in range(rng.randint(1, 5))]
    if roll < 0.75:
        return {"$ordered": [_scalar(rng) for _ in range(rng.randint(1, 4))]}
    return {k: _value(rng, depth + 1) for k in rng.sample(["p", "q", "r", "s"], rng.randint(1, 3))}


def _perturb(rng, value):
    """An actual output near ``value``: values changed, items dropped, added and shuffled."""
    if isinstance(value, dict):
        if list(value) == ["$ordered"]:
            return _perturb(rng, value["$ordered"])
        out = {k: _perturb(rng, v) for k, v in value.items() if rng.random() > 0.1}
        if rng.random() < 0.2:
            out["extra"] = _scalar(rng)
        return out
    if isinstance(value, list):
        records = bool(value) and isinstance(value[0], dict)
        out = [_perturb(rng, v) for v in value if rng.random() > 0.15]
        if records and rng.random() < 0.3:
            out.append(_record(rng, True))
        elif not records and rng.random() < 0.3:
            out.append(_scalar(rng))
        rng.shuffle(out)
        if records:
            out = [{**o, "kind": "r"} for o in out]
        return out
    if value == "$ignore":
        return _scalar(rng)
    return value if rng.random() < 0.7 else _scalar(rng)


def _ci(a, e):
    return 1.0 if str(a).lower() == str(e).lower() else 0.0


def test_random_documents_score_as_the_reference():
    rng = random.Random(2026)
    compared = 0
    for n in range(3000):
        expected = {k: _value(rng) for k in rng.sample(["t", "u", "v", "w"], rng.randint(1, 4))}
        actual = _perturb(rng, expected)
        # a comparator on an $ordered field gets the unwrapped list here (decision 19)
        ordered_u = isinstance(expected.get("u"), dict) and list(expected["u"]) == ["$ordered"]
        comparators = {"s.u": _ci} if n % 5 == 0 and not ordered_u else {}
        ref_score, ref_status, ref_fields = REFERENCE._score_step("s", actual, expected) if not comparators else \
            pyconveyor.BenchmarkRunner(tempfile.mkdtemp(), pipelines=[], comparators=comparators)._score_step(
                "s", actual, expected)
        ours = score_step(actual, expected, comparators=comparators, step_name="s")
        assert ours.score == pytest.approx(ref_score, abs=1e-12), (expected, actual)
        assert ours.status == ref_status
        assert [(f.field, f.status) for f in ours.field_scores] == [(f.field, f.status) for f in ref_fields]
        assert [f.score for f in ours.field_scores] == pytest.approx([f.score for f in ref_fields], abs=1e-12)
        compared += 1
    assert compared == 3000
