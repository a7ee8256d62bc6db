"""Small-input paths (issue #31, item 7): each gives the same bits as the path it short-cuts, on
random inputs on both sides of its threshold, and the calls they serve stay cheap."""

from __future__ import annotations

import random

import pytest

import scorekit.harness as harness

LABEL_SETS = [
    "ab", "abcdefgh", "abcdefghijklmnop",        # strings: 2, 8 and 16 labels
    [0, 1], [0, 1, 2, 3, 4, 5, 6], [0, 9], [0, 3, 7, 11], [-5, 2**40], [True, False, 1, 2],
    [2**63, 1, 2], ["x", 1, 2.5, None], [0.5, 1.0, float("nan")],
]


def draw(rnd: random.Random, labels, n: int) -> list:
    return [rnd.choice(labels) for _ in range(n)]


def both_paths(monkeypatch, fn, *args, **kwargs):
    """``fn`` with its small-input path, then with it switched off."""
    small = fn(*args, **kwargs)
    with monkeypatch.context() as m:
        m.setattr(harness, "_SMALL_ITEMS", 0)
        full = fn(*args, **kwargs)
    return small, full


def same_bits(x: float, y: float) -> bool:
    return x == y and str(x) == str(y) or (x != x and y != y)


@pytest.mark.parametrize("labels", LABEL_SETS, ids=repr)
def test_kappa_small_path_same_bits(monkeypatch, labels):
    rnd = random.Random(31)
    for n in [1, 2, 3, 5, 8, 20, 63, 200, harness._SMALL_ITEMS - 1]:
        for _ in range(20):
            a, b = draw(rnd, labels, n), draw(rnd, labels, n)
            small, full = both_paths(monkeypatch, harness.cohen_kappa, a, b)
            assert same_bits(small, full), (labels, n, a, b, small, full)


@pytest.mark.parametrize("labels", LABEL_SETS, ids=repr)
@pytest.mark.parametrize("raters", [2, 3, 7])
def test_nominal_alpha_small_path_same_bits(monkeypatch, labels, raters):
    rnd = random.Random(7 * raters)
    choices = list(labels) + [None]
    for n in [1, 2, 3, 8, 20, 100, harness._SMALL_ITEMS - 1]:
        for _ in range(10):
            table = [draw(rnd, choices, n) for _ in range(raters)]
            small, full = both_paths(monkeypatch, harness.krippendorff_alpha, table)
            assert same_bits(small, full), (labels, n, table, small, full)


def test_small_paths_keep_errors():
    with pytest.raises(harness.InvalidTypeError):
        harness.cohen_kappa([[1]], [[1]])
    with pytest.raises(harness.InvalidValueError):
        harness.krippendorff_alpha([[1, 2], [1]])
    assert harness.krippendorff_alpha([["a", None], [None, "b"]]) == 1.0  # no pairable item
    assert harness.cohen_kappa([], []) == 1.0


class NoNumpy:
    """Stands in for ``numpy`` in a module: any use but an ``isinstance`` check fails the test."""

    ndarray = type("ndarray", (), {})

    def __getattr__(self, name):
        raise AssertionError(f"numpy.{name} used on a small input")


def test_small_kappa_and_alpha_skip_numpy(monkeypatch):
    monkeypatch.setattr(harness, "np", NoNumpy())
    assert harness.cohen_kappa([1, 1, 0, 0, 1], [1, 1, 0, 1, 1]) == 0.5454545454545455
    assert harness.cohen_kappa(list("abca"), list("abcb")) == 0.6363636363636364
    ratings = [[1, 2, 3, 3, None], [1, 2, 4, 3, 5], [2, 2, 4, 3, 5]]
    assert harness.krippendorff_alpha(ratings) == 0.6578947368421053
