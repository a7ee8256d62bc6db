"""The Zhang–Shasha kernel on both backends: APTED's correctness cases, random trees against zss and
apted, custom costs against a direct O(n²m²) forest DP, mappings, metric properties and bad input."""

from __future__ import annotations

import functools
import json
import math
import random
from importlib import resources

import apted
import numpy as np
import pytest
import zss

from scorekit._kernels import tree as kernels
from scorekit._kernels import use_backend
from scorekit.trees import Tree, tree_edit_distance, tree_edit_distance_batch, tree_edit_mapping


@pytest.fixture(params=["rust", "numba"])
def backend(request):
    with use_backend(request.param):
        yield request.param


# -- oracles ---------------------------------------------------------------------------------------

def apted_cases() -> list[dict]:
    text = resources.files(apted).joinpath("resources/correctness_test_cases.json").read_text()
    return json.loads(text)


def zss_distance(a: Tree, b: Tree) -> float:
    def convert(t: Tree) -> zss.Node:
        return zss.Node(t.label, [convert(c) for c in t.children])

    return float(zss.simple_distance(convert(a), convert(b)))


def apted_distance(a: Tree, b: Tree) -> float:
    return float(apted.APTED(apted.helpers.Tree.from_text(a.to_brackets()),
                             apted.helpers.Tree.from_text(b.to_brackets())).compute_edit_distance())


def random_tree(rng: random.Random, size: int, alphabet: str = "abcde") -> Tree:
    """A random ordered tree of ``size`` nodes: each new node hangs under a random earlier node."""
    labels = [rng.choice(alphabet) for _ in range(size)]
    children: list[list[int]] = [[] for _ in range(size)]
    for k in range(1, size):
        children[rng.randrange(k)].append(k)

    def build(k: int) -> Tree:
        return Tree(labels[k], [build(c) for c in children[k]], text="".join(rng.choice("xyz") for _ in range(rng.randrange(4))))

    return build(0)


def postorder(t: Tree) -> tuple[list[Tree], list[int]]:
    nodes = list(t.iter_postorder())
    index = {id(n): k for k, n in enumerate(nodes)}
    lld = []
    for n in nodes:
        while n.children:
            n = n.children[0]
        lld.append(index[id(n)])
    return nodes, lld


def direct_ted(a: Tree, b: Tree, delete, insert, rename) -> float:
    """Forest distance by the textbook recursion on the rightmost roots, memoised over post-order
    ranges: O(n²m²) states. ``delete``/``insert`` map node -> cost, ``rename(x, y)`` node pair -> cost."""
    n1, lld1 = postorder(a)
    n2, lld2 = postorder(b)

    @functools.lru_cache(maxsize=None)
    def forest(l1: int, r1: int, l2: int, r2: int) -> float:
        if r1 < l1 and r2 < l2:
            return 0.0
        if r2 < l2:
            return forest(l1, r1 - 1, l2, r2) + delete(n1[r1])
        if r1 < l1:
            return forest(l1, r1, l2, r2 - 1) + insert(n2[r2])
        return min(
            forest(l1, r1 - 1, l2, r2) + delete(n1[r1]),
            forest(l1, r1, l2, r2 - 1) + insert(n2[r2]),
            forest(l1, lld1[r1] - 1, l2, lld2[r2] - 1)
            + forest(lld1[r1], r1 - 1, lld2[r2], r2 - 1)
            + rename(n1[r1], n2[r2]),
        )

    return forest(0, len(n1) - 1, 0, len(n2) - 1)


def lev(x: str, y: str) -> int:
    row = list(range(len(y) + 1))
    for i, cx in enumerate(x, 1):
        prev, row[0] = row[0], i
        for j, cy in enumerate(y, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (cx != cy))
    return row[-1]


def mapping_cost(mapping, delete, insert, rename) -> float:
    total = 0.0
    for x, y in mapping:
        total += delete(x) if y is None else insert(y) if x is None else rename(x, y)
    return total


def check_mapping(a: Tree, b: Tree, mapping) -> None:
    """Every node once; mapped pairs keep ancestry and left-to-right order (a valid TED mapping)."""
    n1, _ = postorder(a)
    n2, _ = postorder(b)
    left = [x for x, _ in mapping if x is not None]
    right = [y for _, y in mapping if y is not None]
    assert sorted(map(id, left)) == sorted(map(id, n1)) and sorted(map(id, right)) == sorted(map(id, n2))
    i1 = {id(n): k for k, n in enumerate(n1)}
    i2 = {id(n): k for k, n in enumerate(n2)}
    _, lld1 = postorder(a)
    _, lld2 = postorder(b)
    pairs = [(i1[id(x)], i2[id(y)]) for x, y in mapping if x is not None and y is not None]
    for p, q in pairs:
        for r, s in pairs:
            anc1 = lld1[r] <= p < r  # p is a proper descendant of r
            anc2 = lld2[s] <= q < s
            assert anc1 == anc2
            assert (p < r) == (q < s) or (p == r and q == s)


# -- APTED correctness cases ------------------------------------------------------------------------

def test_apted_correctness_cases(backend) -> None:
    cases = apted_cases()
    assert len(cases) == 77
    pairs = [(Tree.from_brackets(c["t1"]), Tree.from_brackets(c["t2"])) for c in cases]
    for (a, b), case in zip(pairs, cases):
        assert a.to_brackets() == case["t1"]
        assert tree_edit_distance(a, b) == case["d"], case["testID"]
        assert tree_edit_distance(b, a) == case["d"], case["testID"]
        distance, mapping = tree_edit_mapping(a, b)
        assert distance == case["d"]
        assert mapping_cost(mapping, lambda x: 1, lambda y: 1, lambda x, y: float(x.label != y.label)) == case["d"]
        check_mapping(a, b, mapping)
    batch = tree_edit_distance_batch(pairs)
    assert batch.tolist() == [float(c["d"]) for c in cases]


# -- random trees against zss and apted -------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def random_pairs_with_oracles() -> tuple[list[tuple[Tree, Tree]], list[float], list[float]]:
    rng = random.Random(20240605)
    pairs = [(random_tree(rng, rng.randint(1, 14)), random_tree(rng, rng.randint(1, 14))) for _ in range(2000)]
    by_zss = [zss_distance(a, b) for a, b in pairs]
    by_apted = [apted_distance(a, b) for a, b in pairs[:600]]
    return pairs, by_zss, by_apted


def test_random_trees_match_zss_and_apted(backend) -> None:
    pairs, by_zss, by_apted = random_pairs_with_oracles()
    ours = tree_edit_distance_batch(pairs)
    assert ours.tolist() == by_zss
    assert ours[: len(by_apted)].tolist() == by_apted
    # Single-thread and all-core runs agree.
    assert tree_edit_distance_batch(pairs[:200], threads=1).tolist() == ours[:200].tolist()


def test_larger_random_trees_match_apted(backend) -> None:
    rng = random.Random(7)
    for _ in range(6):
        a, b = random_tree(rng, rng.randint(30, 60), "ab"), random_tree(rng, rng.randint(30, 60), "abc")
        assert tree_edit_distance(a, b) == apted_distance(a, b)


# -- general costs against the direct DP --------------------------------------------------------------

def random_costs(rng: random.Random):
    per_label_delete = {c: rng.choice([0.0, 0.5, 1.0, 2.0, 3.25]) for c in "abcde"}
    per_label_insert = {c: rng.choice([0.0, 0.75, 1.0, 1.5]) for c in "abcde"}
    table = {(x, y): (0.0 if x == y and rng.random() < 0.7 else rng.choice([0.25, 0.5, 1.0, 2.5, 4.0]))
             for x in "abcde" for y in "abcde"}
    return per_label_delete, per_label_insert, table


def test_custom_costs_match_direct_dp(backend) -> None:
    rng = random.Random(99)
    for _ in range(150):
        a, b = random_tree(rng, rng.randint(1, 8)), random_tree(rng, rng.randint(1, 8))
        dele, ins, table = random_costs(rng)
        expected = direct_ted(a, b, lambda x: dele[x.label], lambda y: ins[y.label],
                              lambda x, y: table[(x.label, y.label)])
        got = tree_edit_distance(a, b, delete_cost=dele, insert_cost=ins, rename_cost=table)
        assert got == pytest.approx(expected, abs=1e-12)
        # A callable rename cost builds the same table.
        got_callable = tree_edit_distance(a, b, delete_cost=lambda x: dele[x.label],
                                          insert_cost=lambda y: ins[y.label],
                                          rename_cost=lambda x, y: table[(x, y)])
        assert got_callable == got
        distance, mapping = tree_edit_mapping(a, b, delete_cost=dele, insert_cost=ins, rename_cost=table)
        assert distance == got
        cost = mapping_cost(mapping, lambda x: dele[x.label], lambda y: ins[y.label],
                            lambda x, y: table[(x.label, y.label)])
        assert cost == pytest.approx(distance, abs=1e-12)
        check_mapping(a, b, mapping)


def test_text_rename_matches_direct_dp(backend) -> None:
    rng = random.Random(5)

    def rename(x: Tree, y: Tree) -> float:
        if x.label != y.label:
            return 1.0
        tx, ty = x.text or "", y.text or ""
        return 0.0 if tx == ty else lev(tx, ty) / max(len(tx), len(ty))

    for _ in range(150):
        a, b = random_tree(rng, rng.randint(1, 8), "ab"), random_tree(rng, rng.randint(1, 8), "ab")
        expected = direct_ted(a, b, lambda x: 1.0, lambda y: 1.0, rename)
        assert tree_edit_distance(a, b, rename_cost="text") == pytest.approx(expected, abs=1e-12)
        distance, mapping = tree_edit_mapping(a, b, rename_cost="text")
        assert mapping_cost(mapping, lambda x: 1.0, lambda y: 1.0, rename) == pytest.approx(distance, abs=1e-12)


def test_backends_are_bit_identical() -> None:
    rng = random.Random(3)
    pairs = [(random_tree(rng, rng.randint(1, 20)), random_tree(rng, rng.randint(1, 20))) for _ in range(300)]
    dele, ins, table = random_costs(rng)
    results = {}
    for name in ("rust", "numba"):
        with use_backend(name):
            results[name] = (
                tree_edit_distance_batch(pairs, delete_cost=dele, insert_cost=ins, rename_cost=table),
                tree_edit_distance_batch(pairs, rename_cost="text"),
                [tree_edit_mapping(a, b, rename_cost="text")[1] for a, b in pairs[:30]],
            )
    rust, numba = results["rust"], results["numba"]
    assert rust[0].tobytes() == numba[0].tobytes()
    assert rust[1].tobytes() == numba[1].tobytes()
    for m1, m2 in zip(rust[2], numba[2]):
        assert [(id(x), id(y)) for x, y in m1] == [(id(x), id(y)) for x, y in m2]


# -- properties -------------------------------------------------------------------------------------

def test_unit_cost_ted_is_a_metric(backend) -> None:
    rng = random.Random(11)
    trees = [random_tree(rng, rng.randint(1, 10), "abc") for _ in range(25)]
    pairs = [(x, y) for x in trees for y in trees]
    d = tree_edit_distance_batch(pairs).reshape(len(trees), len(trees))
    assert np.all(np.diag(d) == 0)
    assert np.array_equal(d, d.T)
    off_diagonal = ~np.eye(len(trees), dtype=bool)
    distinct = np.array([[x.to_brackets() != y.to_brackets() for y in trees] for x in trees])
    assert np.all(d[off_diagonal & distinct] > 0)
    for k in range(len(trees)):
        assert np.all(d <= d[:, [k]] + d[[k], :] + 1e-12)


def test_empty_kernel_trees_and_sizes(backend) -> None:
    # Kernel level: an empty tree is all deletions or insertions.
    out = kernels.distance_batch([], [], [0, 0], [0, 1, 2], [0, 1, 0], [0, 3], insert_costs=[0.5, 0.25, 2.0])
    assert out.tolist() == [2.75]
    distance, rows = kernels.mapping([0], [0], [], [])
    assert distance == 1.0 and rows.tolist() == [[0, -1]]


# -- bad input --------------------------------------------------------------------------------------

def test_kernel_rejects_bad_arrays(backend) -> None:
    with pytest.raises(ValueError, match="post-order tree"):
        kernels.distance_batch([0, 0], [0, 1], [0, 2], [0], [0], [0, 1])  # two roots
    with pytest.raises(ValueError, match="post-order tree"):
        kernels.distance_batch([0], [1], [0, 1], [0], [0], [0, 1])
    with pytest.raises(ValueError, match="offsets"):
        kernels.distance_batch([0], [0], [0, 2], [0], [0], [0, 1])
    with pytest.raises(ValueError, match="items"):
        kernels.distance_batch([0], [0], [0, 1], [0, 0], [0, 0], [0, 1, 2])
    with pytest.raises(ValueError, match="finite non-negative"):
        kernels.distance_batch([0], [0], [0, 1], [0], [0], [0, 1], delete_costs=[-1.0])
    with pytest.raises(ValueError, match="finite non-negative"):
        kernels.distance_batch([0], [0], [0, 1], [0], [0], [0, 1], insert_costs=[math.nan])
    with pytest.raises(ValueError, match="rename table|rename_table"):
        kernels.distance_batch([3], [0], [0, 1], [0], [0], [0, 1], rename_mode=kernels.RENAME_TABLE,
                               rename_table=[0.0], n_labels=1)
    with pytest.raises(ValueError, match="rename_mode"):
        kernels.distance_batch([0], [0], [0, 1], [0], [0], [0, 1], rename_mode=7)


def test_api_rejects_bad_costs_and_big_trees(backend) -> None:
    a, b = Tree.from_brackets("{a{b}}"), Tree.from_brackets("{a}")
    with pytest.raises(ValueError, match="delete_cost"):
        tree_edit_distance(a, b, delete_cost=-1)
    with pytest.raises(ValueError, match="insert_cost"):
        tree_edit_distance(a, b, insert_cost=float("nan"))
    with pytest.raises(ValueError, match="rename_cost"):
        tree_edit_distance(a, b, rename_cost={("a", "b"): -0.5})
    with pytest.raises(ValueError, match="rename_cost"):
        tree_edit_distance(a, b, rename_cost="words")
    with pytest.raises(ValueError, match="rename_cost"):
        tree_edit_distance(a, b, rename_cost=lambda x, y: math.inf)
    big = Tree("r", [Tree("x") for _ in range(30)])
    with pytest.raises(ValueError, match="max_nodes=10"):
        tree_edit_distance(big, a, max_nodes=10)
    assert tree_edit_distance(big, a, max_nodes=31) == 31.0  # 29 deletions, r -> a, x -> b
    with pytest.raises(TypeError):
        tree_edit_distance("{a}", a)  # type: ignore[arg-type]


def test_text_rename_long_and_unicode_texts(backend) -> None:
    # Texts past one 64-bit word, non-ASCII code points and empty texts, against the direct DP.
    rng = random.Random(8)
    alphabet = "ab€😀 "
    for _ in range(20):
        def text() -> str:
            return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 3, 63, 64, 65, 130])))

        a = Tree("r", [Tree("c", text=text()) for _ in range(3)], text=text())
        b = Tree("r", [Tree("c", text=text()) for _ in range(2)], text=text())

        def rename(x: Tree, y: Tree) -> float:
            tx, ty = x.text or "", y.text or ""
            return 1.0 if x.label != y.label else 0.0 if tx == ty else lev(tx, ty) / max(len(tx), len(ty))

        expected = direct_ted(a, b, lambda x: 1.0, lambda y: 1.0, rename)
        assert tree_edit_distance(a, b, rename_cost="text") == pytest.approx(expected, abs=1e-12)
