"""scorekit.metrics.tables: the table model, TEDS / GriTS vectors of ek,
random tables against a reference TEDS written here on top of apted, and teds_html; both backends."""

from __future__ import annotations

import math
import random

import apted
import pytest

from scorekit._kernels import use_backend
from scorekit.metrics.tables import Cell, GritsMetric, Table, TedsMetric, teds_html


@pytest.fixture(params=["rust", "numba"])
def backend(request):
    with use_backend(request.param):
        yield request.param


def H(rows) -> str:
    return "<table>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows) + "</table>"


A = "<table><tr><td>a</td><td>b</td></tr></table>"
B = "<table><tr><td>a</td><td>c</td></tr></table>"
SPAN_A = "<table><tr><td colspan='2'>a</td></tr></table>"
G3 = [list("abc"), list("def"), list("ghi")]
G2 = [["a", "b"], ["c", "d"]]
G2_CHANGED = [["a", "b"], ["c", "x"]]


# -- the table model --------------------------------------------------------------------------------

def test_from_html() -> None:
    t = Table.from_html("<table><tr><td colspan='2'>a</td></tr><tr><td>b</td><td>c</td></tr></table>")
    assert t.rows[0][0] == Cell("a", 1, 2) and [c.text for c in t.rows[1]] == ["b", "c"]
    t = Table.from_html("<table><tr><td>a<td>b<tr><td>c<td>d</table>")
    assert [[c.text for c in r] for r in t.rows] == [["a", "b"], ["c", "d"]]
    nested = Table.from_html("<table><tr><td>outer<table><tr><td>inner</td></tr></table></td><td>z</td></tr></table>")
    assert [[c.text for c in r] for r in nested.rows] == [["outerinner", "z"]]
    t = Table.from_html("<table><tr><th rowspan=' 3 '>x\n  y</th><td colspan='2.0'>a<br>b &amp; c</td>"
                        "<td rowspan='0' colspan>q</td></tr><tr></tr></table>")
    assert t.rows == ((Cell("x\n  y", 3, 1), Cell("ab & c", 1, 1), Cell("q", 1, 1)),)
    assert Table.from_html("no table here") == Table(())
    assert Table.from_html("<table><tr><td>a") == Table(())
    assert len(Table.from_html(A + B).rows) == 2
    assert Table.from_html("<table><td>a</td></table>").rows == ((Cell("a"),),)


def test_grids_and_coerce() -> None:
    assert Table.from_grid([["a", None, "b"], [], [2.5]]).rows == ((Cell("a"), Cell("b")), (), (Cell("2.5"),))
    assert Table.from_grid(["ab", "cd"]).rows == ((Cell("a"), Cell("b")), (Cell("c"), Cell("d")))
    t = Table(rows=((Cell("a", rowspan=2), Cell("b")), (Cell("c"),)))
    assert Table.coerce(t) is t
    assert [[c.text for c in r] for r in t.as_grid()] == [["a", "b"], ["a", "c"]]
    grid = Table(((Cell("a", colspan=2), Cell("b")), (Cell("c"), Cell("d"), Cell("e"), Cell("f")))).as_grid()
    assert [[c.text if c else None for c in r] for r in grid] == [["a", "a", "b", None], ["c", "d", "e", "f"]]
    grid = Table(((Cell("a", rowspan=2, colspan=2),), (Cell("x"),))).as_grid()
    assert [[c.text if c else None for c in r] for r in grid] == [["a", "a", None], ["a", "a", "x"]]
    assert grid[0][0] is grid[1][1]
    with pytest.raises(TypeError):
        Table.coerce(5)


# -- TEDS vectors -----------------------------------------------------------------------------------

TEDS_VECTORS = [
    (A, B, False, 0.75, 1.0, 4),
    (A, B, True, 1.0, 0.0, 4),
    (H([["tahle"]]), H([["table"]]), False, 1 - 0.2 / 3, 0.2, 3),
    (H([["tahle"]]), H([["zzzzz"]]), False, 2 / 3, 1.0, 3),
    (H(G2), H([["a", "b"]]), False, 1 - 3 / 7, 3, 7),
    (H([["a"]]), H([["a", "b"]]), True, 0.75, 1, 4),
    (SPAN_A, H([["a", "b"]]), False, 0.5, 2, 4),
    (SPAN_A, H([["a", "b"]]), True, 0.5, 2, 4),
    (Table(), Table(), False, 1.0, 0, 1),
    (Table(), [["a"]], False, 1 / 3, 2, 3),
    ([["A"]], [["a"]], False, 2 / 3, 1, 3),
    (G2_CHANGED, G2, False, 1 - 1 / 7, 1, 7),
]


@pytest.mark.parametrize("pred, gold, structure_only, value, distance, max_nodes", TEDS_VECTORS)
def test_teds_vectors(backend, pred, gold, structure_only, value, distance, max_nodes) -> None:
    score = TedsMetric(structure_only=structure_only)(pred, gold)
    assert score.value == pytest.approx(value, abs=1e-12)
    assert score.detail == {"edit_distance": distance, "max_nodes": max_nodes, "structure_only": structure_only,
                            "higher_is_better": True}
    assert score.metric == ("teds_struct" if structure_only else "teds")
    assert score.precision is None and score.recall is None and score.f1 is None


def test_teds_doctest_and_aggregate(backend) -> None:
    assert round(TedsMetric()(A, B).value, 3) == 0.75
    m = TedsMetric()
    scores = [m([["a", "b"]], [["a", "z"]]), m([["a", "b", "c"]], [["a", "b", "x"]])]
    assert [s.value for s in scores] == [0.75, 0.8]
    assert m.aggregate(scores) == pytest.approx(0.775)
    assert math.isnan(m.aggregate([]))
    assert TedsMetric.name == TedsMetric(structure_only=True).name == "teds"


# -- TEDS against a reference built on apted ------------------------------------------------------------

class _Config(apted.Config):
    def rename(self, a, b):
        if a.name != b.name:
            return 1.0
        if a.text == b.text:
            return 0.0
        return lev(a.text, b.text) / max(len(a.text), len(b.text))

    def children(self, node):
        return node.kids


class _Node:
    def __init__(self, name, text="", kids=()):
        self.name, self.text, self.kids = name, text, list(kids)


def lev(x: str, y: str) -> int:
    row = list(range(len(y) + 1))
    for i, cx in enumerate(x, 1):
        prev, row[0] = row[0], i
        for j, cy in enumerate(y, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (cx != cy))
    return row[-1]


def reference_teds(pred: Table, gold: Table, structure_only: bool) -> float:
    def tree(t: Table) -> _Node:
        return _Node("table", "", [
            _Node("tr", "", [_Node(f"td:{c.rowspan}x{c.colspan}", "" if structure_only else c.text) for c in row])
            for row in t.rows])

    size = lambda t: 1 + len(t.rows) + sum(len(r) for r in t.rows)  # noqa: E731
    distance = apted.APTED(tree(pred), tree(gold), _Config()).compute_edit_distance()
    return 1 - distance / max(size(pred), size(gold))


def random_table(rng: random.Random) -> Table:
    rows = []
    for _ in range(rng.randint(0, 5)):
        rows.append(tuple(Cell("".join(rng.choice("abc ") for _ in range(rng.randint(0, 5))),
                               rng.choice([1, 1, 1, 2]), rng.choice([1, 1, 2]))
                          for _ in range(rng.randint(0, 4))))
    return Table(tuple(rows))


def test_random_tables_match_reference_teds(backend) -> None:
    rng = random.Random(12)
    for _ in range(120):
        p, g = random_table(rng), random_table(rng)
        for structure_only in (False, True):
            expected = reference_teds(p, g, structure_only)
            assert TedsMetric(structure_only=structure_only)(p, g).value == pytest.approx(expected, abs=1e-12)


# -- GriTS vectors ----------------------------------------------------------------------------------

GRITS_VECTORS = [
    (A, B, False, 0.75, {"overlap": 1.5, "n_pred": 2, "n_gold": 2}),
    (A, B, True, 1.0, {"overlap": 2.0}),
    ([["cat"]], [["car"]], False, 0.5 + 0.5 * (2 / 3), {}),
    ([["cat"]], [["dog"]], True, 1.0, {}),
    ([["", "", ""]] + G3, G3, False, 2 * 9 / (9 + 12), {"overlap": 9, "n_pred": 12, "n_gold": 9}),
    ([[""] + r for r in G3], G3, False, 2 * 9 / (9 + 12), {}),
    (G3[1:] + G3[:1], G3, False, 2 / 3, {"overlap": 6}),
    (Table(), Table(), False, 1.0, {}),
    (Table(), [["a"]], False, 0.0, {}),
    ([["a"]], Table(), False, 0.0, {}),
    (SPAN_A, [["a", "b"]], True, 0.0, {}),
    (SPAN_A, [["a", "b"]], False, 0.25, {"overlap": 0.5}),
    (G2_CHANGED, G2, False, 0.875, {"overlap": 3.5}),
    ([["a", "c"], ["b", "d"]], G2, False, 0.75, {}),
]


@pytest.mark.parametrize("pred, gold, structure_only, value, detail", GRITS_VECTORS)
def test_grits_vectors(pred, gold, structure_only, value, detail) -> None:
    score = GritsMetric(structure_only=structure_only)(pred, gold)
    assert score.value == pytest.approx(value, abs=1e-12) and score.f1 == score.value
    for key, expected in detail.items():
        assert score.detail[key] == pytest.approx(expected)
    assert score.metric == ("grits_top" if structure_only else "grits_con")


def test_grits_precision_recall_and_aggregate() -> None:
    top = GritsMetric(structure_only=True)
    s = top([["a", "b"]], G2)
    assert (s.precision, s.recall) == (1.0, 0.5) and s.value == pytest.approx(2 / 3)
    scores = [top(G2, G2), top([["a", "b"]], G2)]
    assert top.aggregate(scores) == pytest.approx(2 * 1.0 * 0.75 / 1.75)  # overlap 6, n_pred 6, n_gold 8
    assert top.aggregate([]) == 1.0
    assert GritsMetric.name == "grits" and round(GritsMetric(structure_only=True)(A, B).value, 3) == 1.0


# -- teds_html --------------------------------------------------------------------------------------

def test_teds_html(backend) -> None:
    one = "<table><tr><td>a</td></tr></table>"
    assert teds_html(one, "<table><tr><td>b</td></tr></table>") == 0.5  # 2 elements below <table>
    assert teds_html(one, "<table><tr><td>b</td></tr></table>", structure_only=True) == 1.0
    rich = ("<table><thead><tr><td><b>Name</b></td><td>x</td></tr></thead>"
            "<tbody><tr><td>1<br>2</td></tr></tbody></table>")
    plain = "<table><thead><tr><td><b>Name</b></td><td>x</td></tr></thead><tbody><tr><td>12</td></tr></tbody></table>"
    # Cell tokens 1,<br>,</br>,2 vs 1,2: 2/4; 9 elements below the first table (b and br included).
    assert teds_html(rich, plain) == pytest.approx(1 - 0.5 / 9)
    assert teds_html(rich, rich) == 1.0
    # A dropped row: its tr and td are two insertions over max(5, 3) elements.
    two = "<table><tbody><tr><td>a</td></tr><tr><td>b</td></tr></tbody></table>"
    assert teds_html("<table><tbody><tr><td>a</td></tr></tbody></table>", two) == pytest.approx(1 - 2 / 5)
    # Colspan changes cost a full rename; optional end tags are implied; comments are ignored.
    assert teds_html("<table><tr><td colspan=2>a<td>b</table>", "<table><tr><td>a</td><td>b</td></tr></table>") \
        == pytest.approx(1 - 1 / 3)
    assert teds_html("<table><!-- c --><tr><td>a</td></tr></table>", one) == 1.0
    assert teds_html("", one) == 0.0
    with pytest.raises(ValueError, match="pred_html"):
        teds_html("<p>no table</p>", one)
    with pytest.raises(ValueError, match="true_html"):
        teds_html(one, "plain text")


def test_size_guard(monkeypatch) -> None:
    import scorekit.metrics.tables as tables

    monkeypatch.setattr(tables, "MAX_NODES", 6)
    assert TedsMetric()([["a"]], [["b", "c"]]).value == 0.5  # 3 and 4 nodes
    with pytest.raises(ValueError, match="7 nodes, above the 6-node guard"):
        TedsMetric()(G2, [["a"]])  # 1 table + 2 rows + 4 cells
    with pytest.raises(ValueError, match="teds_html"):
        teds_html(H(G2), H(G2))
