"""Hostile input to tables, trees, text joins and flows (issue #11, section 3): every defect found by
fuzzing is a regression test here, with real expected values from an oracle written in this file
(obvious, slow reference implementations) or from the other backend; plus Hypothesis properties
asserting "a named scorekit error or a valid score in [0, 1]"."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorekit as ek
from scorekit import flows
from scorekit._kernels import use_backend
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError, ScorekitError
from scorekit.metrics import tables
from scorekit.metrics.tables import Cell, GritsMetric, Table, TedsMetric, teds_html
from scorekit.text import HYPHEN_CHARS, JoinedText, join_lines_with_hyphenation
from scorekit.trees import Tree, tree_edit_distance, tree_edit_distance_batch

TABLE_METRICS = ["teds", "teds_struct", "grits", "grits_con", "grits_top"]
ONE = "<table><tr><td>a</td></tr></table>"
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- 1. table input is validated ------------------------------------------------------------------

@pytest.mark.parametrize("metric", TABLE_METRICS)
def test_non_table_input_is_a_named_error(metric) -> None:
    with pytest.raises(InvalidValueError, match="^pred is not a table"):
        ek.score("hello", "world", metric=metric)
    with pytest.raises(InvalidValueError, match="^gold is not a table"):
        ek.score(ONE, "world", metric=metric)
    with pytest.raises(InvalidTypeError, match="^pred must be a Table"):
        ek.score(5, ONE, metric=metric)
    with pytest.raises(InvalidTypeError, match=r"^gold\[0\] must be iterable"):
        ek.score(ONE, [3], metric=metric)
    # A blank prediction is the empty table (a failed prediction), scored against the gold table.
    expected = 1 / 3 if metric.startswith("teds") else 0.0  # TEDS: 1 - 2 insertions / 3 nodes
    assert ek.score("", ONE, metric=metric).value == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("field, value", [("colspan", -1), ("colspan", 0), ("rowspan", 0), ("rowspan", True),
                                          ("colspan", 1001), ("rowspan", 65535), ("rowspan", 2.0),
                                          ("colspan", "2"), ("rowspan", 10**8)])
def test_cell_spans_are_validated(field, value) -> None:
    with pytest.raises(InvalidValueError, match=f"^{field} must be an int in"):
        Cell("a", **{field: value})


def test_cell_span_bounds_and_integer_types() -> None:
    cell = Cell("a", rowspan=np.int64(65534), colspan=np.int32(1000))
    assert (cell.rowspan, cell.colspan) == (65534, 1000) and type(cell.rowspan) is int
    with pytest.raises(InvalidTypeError, match="^text must be a str"):
        Cell(5)


def test_lone_surrogates_name_the_cell(backend) -> None:
    with pytest.raises(InvalidValueError, match=r"^rows\[1\]\[0\]\.text holds a lone surrogate '\\ud800' at "
                                                r"character 2"):
        Table(((Cell("a"),), (Cell("ab\ud800"),)))
    with pytest.raises(InvalidValueError, match=r"^pred\[0\]\[1\]\.text holds a lone surrogate"):
        TedsMetric()([["a", "b\udfff"]], [["a"]])
    with pytest.raises(InvalidValueError, match=r"^gold\[0\]\[0\]\.text"):
        GritsMetric()([["a"]], "<table><tr><td>\ud800</td></tr></table>")
    with pytest.raises(InvalidValueError, match="^true_html holds a lone surrogate '\\\\udc00' at character 15"):
        teds_html(ONE, "<table><tr><td>\udc00</td></tr></table>")
    # Paired surrogates written as one code point are ordinary text.
    assert TedsMetric()([["\U0001F600"]], [["\U0001F600"]]).value == 1.0


def test_html_spans_are_read_as_browsers_read_them(backend) -> None:
    def one(attrs: str) -> str:
        return f"<table><tr><td{attrs}>a</td><td>b</td></tr></table>"

    plain = one("")
    other = "<table><tr><td>a</td></tr><tr><td colspan='2'>b</td></tr></table>"
    for bad in (" rowspan='-1'", " colspan='0'", " rowspan='x'", " colspan='1e8'", " rowspan"):
        assert teds_html(one(bad), other) == teds_html(plain, other)
        assert Table.from_html(one(bad)) == Table.from_html(plain)
    # Above the HTML bounds a span is clamped to them, so the huge value never reaches a grid.
    assert Table.from_html(one(" rowspan='99999999' colspan='5000'")).rows[0][0] == Cell("a", 65534, 1000)
    assert teds_html(one(" colspan='5000'"), other) == teds_html(one(" colspan='1000'"), other)


def test_teds_html_is_clipped_to_zero_where_the_reference_formula_is_negative(backend) -> None:
    three_empty_rows = "<table><tr></tr><tr></tr><tr></tr></table>"
    two_cells = "<table><tr><td>b</td><td>a</td></tr></table>"
    tag_ids: dict = {}
    tree_p, n_p = tables._html_tree(tables._first_table(three_empty_rows, "p"), False, tag_ids)
    tree_t, n_t = tables._html_tree(tables._first_table(two_cells, "t"), False, tag_ids)
    distance = tables._tree_distance(tree_p, tree_t, "x")[0]
    assert (distance, max(n_p, n_t)) == (4.0, 3)  # keep one tr, delete two, insert two tds
    assert 1 - distance / 3 < 0
    assert teds_html(three_empty_rows, two_cells) == 0.0


# -- 2. GriTS: bounded memory, guards, same exact values --------------------------------------------

def reference_grits(pred: Table, gold: Table, structure_only: bool) -> tuple[float, float]:
    """The factored 2D-MSS written out with loops: (overlap, f1)."""
    gp, gg = pred.as_grid(), gold.as_grid()

    def sim(a, b) -> float:
        if a is None or b is None:
            return 0.0
        same = float((a.rowspan, a.colspan) == (b.rowspan, b.colspan))
        if structure_only:
            return same
        from rapidfuzz.distance import Levenshtein
        return 0.5 * same + 0.5 * Levenshtein.normalized_similarity(a.text, b.text)

    def dp_table(s):
        n_a, n_b = len(s), len(s[0]) if s else 0
        dp = [[0.0] * (n_b + 1) for _ in range(n_a + 1)]
        for i in range(1, n_a + 1):
            for j in range(1, n_b + 1):
                dp[i][j] = max(dp[i - 1][j], dp[i][j - 1], dp[i - 1][j - 1] + s[i - 1][j - 1])
        return dp

    def best(line_a, line_b) -> float:
        return dp_table([[sim(x, y) for y in line_b] for x in line_a])[-1][-1]

    def traceback(s):
        dp, pairs = dp_table(s), []
        i, j = len(s), len(s[0])
        while i > 0 and j > 0:
            diagonal = dp[i - 1][j - 1] + s[i - 1][j - 1]
            if dp[i][j] == diagonal and diagonal >= dp[i - 1][j] and diagonal >= dp[i][j - 1]:
                pairs.append((i - 1, j - 1))
                i, j = i - 1, j - 1
            elif dp[i][j] == dp[i - 1][j]:
                i -= 1
            else:
                j -= 1
        return pairs[::-1]

    n_pred = sum(c is not None for line in gp for c in line)
    n_gold = sum(c is not None for line in gg for c in line)
    overlap = 0.0
    if n_pred and n_gold:
        cols_p = [list(col) for col in zip(*gp)]
        cols_g = [list(col) for col in zip(*gg)]
        rows = traceback([[best(a, b) for b in gg] for a in gp])
        cols = traceback([[best(a, b) for b in cols_g] for a in cols_p])
        overlap = math.fsum(sim(gp[rp][cp], gg[rg][cg]) for rp, rg in rows for cp, cg in cols)
    precision = overlap / n_pred if n_pred else (1.0 if n_gold == 0 else 0.0)
    recall = overlap / n_gold if n_gold else (1.0 if n_pred == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return overlap, f1


def random_table(rng: random.Random, max_rows: int = 5, max_cols: int = 4) -> Table:
    return Table(tuple(
        tuple(Cell("".join(rng.choice("ab c") for _ in range(rng.randint(0, 4))), rng.choice([1, 1, 1, 2, 3]),
                   rng.choice([1, 1, 2])) for _ in range(rng.randint(0, max_cols)))
        for _ in range(rng.randint(0, max_rows))))


@pytest.mark.parametrize("block", [1, 5, tables._BLOCK])
def test_grits_blocks_give_the_reference_values_exactly(monkeypatch, block) -> None:
    monkeypatch.setattr(tables, "_BLOCK", block)  # 1 and 5 force the recomputed (uncached) paths
    rng = random.Random(block)
    for _ in range(60):
        p, g = random_table(rng), random_table(rng)
        for structure_only in (False, True):
            score = GritsMetric(structure_only=structure_only)(p, g)
            overlap, f1 = reference_grits(p, g, structure_only)
            assert (score.detail["overlap"], score.value) == (overlap, f1)


def test_grits_memory_is_bounded_by_blocks() -> None:
    # 40x40 against 40x40 distinct cells: the former all-positions array alone was 40**4 * 8 = 20 MB.
    g1 = [[f"c{r}_{c}" for c in range(40)] for r in range(40)]
    g2 = [[f"c{r}_{c}x" if (r + c) % 3 else f"c{r}_{c}" for c in range(40)] for r in range(40)]
    tracemalloc.start()
    try:
        score = GritsMetric()(g1, g2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, peak
    # Rows and columns align on the diagonal; the changed cells keep 0.5 + 0.5 * lev similarity.
    changed = sum(1 for r in range(40) for c in range(40) if (r + c) % 3)
    expected = math.fsum([1.0] * (1600 - changed) + [0.5 + 0.5 * (1 - 1 / len(f"c{r}_{c}x"))
                                                     for r in range(40) for c in range(40) if (r + c) % 3])
    assert score.detail["overlap"] == pytest.approx(expected, rel=1e-12)


def test_grid_and_grits_guards(monkeypatch) -> None:
    huge = Table(((Cell("a", rowspan=65534, colspan=1000),),))
    with pytest.raises(InputTooLargeError, match=f"above the {tables.MAX_GRID_POSITIONS}-position guard"):
        huge.as_grid()
    with pytest.raises(InputTooLargeError, match="MAX_GRID_POSITIONS"):
        GritsMetric()(huge, [["a"]])
    # A span within the grid guard is scored (65534 rows x 1 column against one cell).
    tall = Table(((Cell("a", rowspan=65534),),))
    score = GritsMetric(structure_only=True)(tall, [["a"]])
    assert (score.detail["n_pred"], score.detail["overlap"]) == (65534, 0.0)  # spans differ
    monkeypatch.setattr(tables, "MAX_GRITS_WORK", 15)
    assert GritsMetric()([["a", "b"]], [["a", "b"]]).value == 1.0  # 2 x 2 = 4 comparisons
    with pytest.raises(InputTooLargeError, match="need 16 position comparisons, above the 15 guard"):
        GritsMetric()([["a", "b"], ["c", "d"]], [["a"], ["b"], ["c"], ["d"]])
    monkeypatch.setattr(tables, "MAX_GRITS_WORK", 1 << 28)
    monkeypatch.setattr(tables, "MAX_GRITS_ALIGN", 24)
    with pytest.raises(InputTooLargeError, match="aligning 4 x 4 rows"):
        GritsMetric()([["a"]] * 4, [["a"]] * 4)


# -- 3. teds_html: linear, iterative reading --------------------------------------------------------

def test_teds_html_deep_nesting() -> None:
    n = 20000
    inline = "<table><tr><td>" + "<b>" * n + "x" + "</b>" * n + "</td></tr></table>"
    assert teds_html(inline, inline) == 1.0
    # The cell's content is 2n + 1 tokens (n <b>, x, n </b>), so one differing character renames it
    # for 1 / (2n + 1); the n inline tags count below <table> (n + 2 elements).
    assert teds_html(inline, inline.replace("x", "y")) == pytest.approx(1 - 1 / (2 * n + 1) / (n + 2), abs=1e-15)
    with pytest.raises(InputTooLargeError, match="20003 nodes, above the 10000-node guard"):
        teds_html("<table>" + "<div>" * n + "<tr><td>x</td></tr>" + "</div>" * n + "</table>", ONE)
    deep = "<table><tr><td>" + "<i>" * 30000 + "</table>"
    assert teds_html(deep, deep) == 1.0


def test_teds_html_stray_end_tags_are_linear() -> None:
    # Each stray end tag used to scan every open element: 20k of them under 20k open divs took 129 s.
    def parse(n: int) -> float:
        html = "<table>" + "<div>" * n + "</p>" * n + "<tr><td>a</td></tr></table>"
        start = time.perf_counter()
        table = tables._first_table(html, "pred_html")
        assert table.tag == "table"
        return time.perf_counter() - start

    assert parse(20000) < 20.0


# -- 4. tree batches with a rename-cost mapping -----------------------------------------------------

def random_tree(rng: random.Random, alphabet: list[str], size: int) -> Tree:
    nodes = [Tree(rng.choice(alphabet))]
    for _ in range(size - 1):
        parent = rng.choice(nodes)
        child = Tree(rng.choice(alphabet))
        parent.children = parent.children + (child,)
        nodes.append(child)
    return nodes[0]


def test_rename_tables_per_block_give_the_same_distances(backend, monkeypatch) -> None:
    import scorekit.trees as trees

    rng = random.Random(7)
    pairs = []
    for k in range(40):  # each pair has its own labels plus a few shared ones
        alphabet = [f"p{k}_{i}" for i in range(5)] + ["x", "y"]
        pairs.append((random_tree(rng, alphabet, rng.randint(1, 9)), random_tree(rng, alphabet, rng.randint(1, 9))))
    mapping = {(f"p{k}_{i}", f"p{k}_{j}"): rng.choice([0.25, 0.5, 2.0]) for k in range(40)
               for i in range(5) for j in range(5)}
    mapping[("x", "y")] = 0.125

    def callable_cost(a: str, b: str) -> float:
        return 0.0 if a == b else 0.5 + 0.25 * (a[0] != b[0])

    for cost in (mapping, callable_cost):
        monkeypatch.setattr(trees, "RENAME_TABLE_ENTRIES", 1 << 40)  # one table for the whole batch
        whole = tree_edit_distance_batch(pairs, rename_cost=cost)
        monkeypatch.setattr(trees, "RENAME_TABLE_ENTRIES", 1)  # one table per pair
        per_pair = tree_edit_distance_batch(pairs, rename_cost=cost)
        monkeypatch.setattr(trees, "RENAME_TABLE_ENTRIES", 150)  # blocks of a few pairs
        blocks = tree_edit_distance_batch(pairs, rename_cost=cost)
        single = [tree_edit_distance(a, b, rename_cost=cost) for a, b in pairs]
        assert whole.tolist() == per_pair.tolist() == blocks.tolist() == single
    other = "rust" if backend == "numba" else "numba"
    mine = tree_edit_distance_batch(pairs, rename_cost=mapping)
    with use_backend(other):
        theirs = tree_edit_distance_batch(pairs, rename_cost=mapping)
    assert mine.tolist() == theirs.tolist()


def test_rename_table_memory_follows_the_largest_pair(backend) -> None:
    # 60 pairs of 2 x 101 distinct labels: one batch-wide table would be 12120**2 * 8 bytes = 1.1 GB.
    pairs = [(Tree(f"r{2 * k}", [Tree(f"n{2 * k}_{i}") for i in range(100)]),
              Tree(f"r{2 * k + 1}", [Tree(f"n{2 * k + 1}_{i}") for i in range(100)])) for k in range(60)]
    mapping = {("n0_1", "n1_1"): 0.5, ("r0", "r1"): 0.25}
    tracemalloc.start()
    try:
        out = tree_edit_distance_batch(pairs, rename_cost=mapping)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20, peak
    # Pair 0 renames its root (0.25), one child (0.5) and 99 children (1 each); the others rename all.
    assert out.tolist() == [99.75] + [101.0] * 59


def test_tree_costs_are_named_errors() -> None:
    a, b = Tree.from_brackets("{a{b}}"), Tree.from_brackets("{a{c}}")
    with pytest.raises(InvalidValueError, match="finite non-negative"):
        tree_edit_distance(a, b, delete_cost=10**400)
    with pytest.raises(InvalidTypeError, match="must give numbers"):
        tree_edit_distance(a, b, rename_cost={("b", "c"): "1"})
    with pytest.raises(InvalidValueError, match=r"^rename_cost mapping keys must be"):
        tree_edit_distance(a, b, rename_cost={"b": 1.0})
    with pytest.raises(InvalidTypeError, match=r"^item 1: pairs\[1\] holds a str"):
        tree_edit_distance_batch([(a, b), (a, "b")], rename_cost={("b", "c"): 0.5})
    with pytest.raises(InputTooLargeError, match=r"^item 0: pairs\[0\] has a tree of 2 nodes, above max_nodes=1"):
        tree_edit_distance_batch([(a, b)], max_nodes=1)


def test_finite_costs_whose_sum_overflows_are_named_errors(backend) -> None:
    """Found by tests/test_fuzz_structures.py: three insertions of 9e307 summed to inf."""
    small, big = Tree("a"), Tree.from_brackets("{b{a{a}{a}}}")
    with pytest.raises(InvalidValueError, match=r"^item 1: costs make the distance exceed the float64 range"):
        tree_edit_distance_batch([(small, small), (small, big)], insert_cost=8.98846567431158e307)
    assert tree_edit_distance(small, big, insert_cost=1e307) == 3e307


# -- 5. the linear join -----------------------------------------------------------------------------

def reference_join(text_or_lines) -> JoinedText:
    """The obvious (quadratic) join: the oracle of the linear one."""
    if isinstance(text_or_lines, str):
        lines = text_or_lines.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    else:
        lines = list(text_or_lines)
    kept = [line.strip() for line in lines if line.strip()]
    if not kept:
        return JoinedText("", ())
    out, joins = kept[0], []
    for nxt in kept[1:]:
        if len(out) >= 2 and out[-1] in HYPHEN_CHARS and not out[-2].isspace():
            stem = out[:-1]
            if stem.endswith("\u0565") and nxt[0] in ("\u057e", "\u0582"):
                out = stem[:-1] + "\u0587"
                joins.append(len(out))
                out += nxt[1:]
            else:
                joins.append(len(stem))
                out = stem + nxt
        else:
            out = out + " " + nxt
    return JoinedText(out, tuple(joins))


JOIN_ALPHABET = ["a", "b", " ", "\t", "-", "\u058a", "\u2014", "\u0565", "\u057e", "\u0582", "\n", "\n", "\r"]


def test_linear_join_equals_the_reference_on_random_inputs() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        text = "".join(rng.choice(JOIN_ALPHABET) for _ in range(rng.randint(0, 40)))
        assert join_lines_with_hyphenation(text) == reference_join(text), repr(text)
        lines = text.split("\n")
        assert join_lines_with_hyphenation(lines) == reference_join(lines)


@FAST
@given(st.lists(st.lists(st.sampled_from(JOIN_ALPHABET + ["\u0565-", "\u057e"]), max_size=8).map("".join),
                max_size=12))
def test_linear_join_property(lines) -> None:
    assert join_lines_with_hyphenation(lines) == reference_join(lines)


def test_join_of_a_million_lines() -> None:
    joined = join_lines_with_hyphenation("ab\n" * 10**6)
    assert joined.text == " ".join(["ab"] * 10**6) and joined.joins == ()
    joined = join_lines_with_hyphenation("ab-\n" * 10**5)
    assert joined.text == "ab" * 10**5 + "-" and joined.joins == tuple(range(2, 2 * 10**5, 2))


# -- 6. the flows reader ----------------------------------------------------------------------------

def deep_json(depth: int) -> str:
    return '{"trigger": null, "components": [], "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_flow_json_depth_guard(backend, tmp_path) -> None:
    ok = deep_json(flows.MAX_JSON_DEPTH)
    assert flows.compute_metrics(ok, {"components": []}) == (1.0, 0.0, 1.0, 0.0)
    too_deep = deep_json(flows.MAX_JSON_DEPTH + 1)
    with pytest.raises(flows.FlowFormatError, match="JSON nested 513 levels deep, above the 512-level guard"):
        flows.parse_flow(too_deep)
    hostile = '{"components": ' + "[" * 100000 + "]" * 100000 + "}"
    report = flows.evaluate_flows([(hostile, {"components": [{"definition": "a"}]})])
    assert report.items[0].error.startswith("JSON nested 100001 levels deep")
    assert report.items[0].flowsim == pytest.approx(1 - 1 / 7)  # scored as the empty flow: 1 insertion
    with pytest.raises(flows.FlowFormatError, match="reference of item 0 is not a workflow: JSON nested"):
        flows.evaluate_flows([({"components": []}, hostile)])
    (tmp_path / "p").mkdir()
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "a.json").write_text(hostile)
    with pytest.raises(flows.FlowFormatError, match="a.json.*JSON nested 100001 levels"):
        flows.evaluate_flows(pred_dir=tmp_path / "p", ref_dir=tmp_path / "r")
    assert (tmp_path / "r" / "a.json").read_text() == hostile  # input files are never modified


def test_flow_deep_children_and_missing_keys(backend) -> None:
    doc: dict = {"components": []}
    level = doc["components"]
    for _ in range(5000):
        child = {"definition": "x", "children": []}
        level.append(child)
        level = child["children"]
    ref = {"components": [{"definition": "a"}]}
    report = flows.evaluate_flows([(doc, ref)])
    assert "nested more than 200 levels deep" in report.items[0].error
    assert report.items[0].error.startswith("components[0]" + ".children[0]" * 200)
    with pytest.raises(flows.FlowFormatError, match=r"reference of item 0 is not a workflow: components\[0\]"):
        flows.evaluate_flows([(ref, doc)])
    for bad, key in (({}, "'trigger' or a 'components' key"), ({"components": [{}]}, "'definition'"),
                     ({"trigger": {}}, "'type'"), ({"components": [{"definition": "a", "children": [{}]}]},
                                                   r"components\[0\]\.children\[0\] needs a string 'definition'")):
        with pytest.raises(flows.FlowFormatError, match=key):
            flows.compute_metrics(bad, ref)
        with pytest.raises(flows.FlowFormatError, match=key):
            flows.evaluate_flows([(ref, bad)])
        assert flows.evaluate_flows([(bad, ref)]).items[0].error is not None


# -- 7. trees from deep or huge input ----------------------------------------------------------------

def test_deep_and_huge_trees() -> None:
    n = 30000  # far beyond Python's recursion limit
    text = "{a" * n + "}" * n
    deep = Tree.from_brackets(text)
    assert len(deep) == n and deep.to_brackets() == text and deep == Tree.from_brackets(text)
    nested: list = []
    level = nested
    for _ in range(n):
        level.append([])
        level = level[0]
    assert len(Tree.from_json(nested)) == n + 1
    wide = Tree.from_brackets("{r" + "{x}" * n + "}")
    assert len(wide) == n + 1
    with pytest.raises(InvalidValueError, match="never closed"):
        Tree.from_brackets("{a" * n)
    with pytest.raises(InvalidValueError, match="position 3 after the root closed"):
        Tree.from_brackets("{a}}{b}")
    with pytest.raises(InvalidTypeError):
        Tree.from_brackets(b"{a}")
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(InvalidValueError, match="cycle"):
        Tree.from_json(cyclic)
    with pytest.raises(InputTooLargeError, match="max_nodes"):
        tree_edit_distance(deep, deep)


# -- 8. properties: a named error or a valid score ---------------------------------------------------

HOSTILE_TEXT = st.lists(st.sampled_from(["a", "b", " ", "\u0565", "\ud800", "\udfff", "\U0001F600", "&amp;", "<",
                                         ">"]), max_size=6).map("".join)
SPAN = st.sampled_from(["", " rowspan='-1'", " colspan='0'", " rowspan='3'", " colspan='2'", " rowspan='x'",
                        " colspan='99999999'", " rowspan='70000'"])
TAG = st.sampled_from(["table", "tr", "td", "th", "thead", "tbody", "b", "div", "br"])


@st.composite
def hostile_html(draw) -> str:
    parts = ["<table>"]
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            parts.append(f"<{draw(TAG)}{draw(SPAN)}>")
        elif kind == 1:
            parts.append(f"</{draw(TAG)}>")
        else:
            parts.append(draw(HOSTILE_TEXT))
    return "".join(parts)


def valid_or_named(call) -> None:
    try:
        value = call()
    except ScorekitError:
        return
    assert 0.0 <= value <= 1.0, value


@FAST
@given(hostile_html(), hostile_html(), st.booleans())
def test_teds_html_property(pred, true, structure_only) -> None:
    valid_or_named(lambda: teds_html(pred, true, structure_only=structure_only))


@st.composite
def hostile_table(draw):
    spans = st.one_of(st.integers(-2, 4), st.sampled_from([0, 65534, 65535, 10**8, True, 1.5]))
    rows = draw(st.lists(st.lists(st.tuples(HOSTILE_TEXT, spans, spans), max_size=4), max_size=4))
    return rows


@FAST
@given(hostile_table(), hostile_table(), st.sampled_from(TABLE_METRICS))
def test_table_metrics_property(pred_rows, gold_rows, metric) -> None:
    def build(rows):
        return Table(tuple(tuple(Cell(text, rowspan, colspan) for text, rowspan, colspan in row) for row in rows))

    def score():
        return ek.score(build(pred_rows), build(gold_rows), metric=metric).value

    valid_or_named(score)


def flow_values():
    leaf = st.one_of(st.none(), st.text(max_size=3), st.integers(-2, 2), st.booleans())
    keys = st.sampled_from(["trigger", "components", "definition", "type", "category", "order", "block",
                            "children", "x"])
    return st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(keys, inner, max_size=4)), max_leaves=20)


@FAST
@given(flow_values(), flow_values())
def test_flows_property_both_backends_agree(pred, ref) -> None:
    ref_doc = {"components": [{"definition": "a"}]}
    results = []
    for backend in ("rust", "numba"):
        with use_backend(backend):
            try:
                metrics = flows.compute_metrics(pred, ref)
                assert all(0.0 <= m <= 1.0 for m in metrics)
                results.append(tuple(metrics))
            except flows.FlowFormatError as exc:
                results.append(str(exc))
            report = flows.evaluate_flows([(pred, ref_doc), (json.dumps(pred), ref_doc)])
            results.append(json.dumps(report.to_dict(), sort_keys=True))
            try:
                results.append(dataclasses.astuple(flows.evaluate_flows([(ref_doc, ref)]).items[0]))
            except flows.FlowFormatError as exc:
                results.append(str(exc))
    assert results[:3] == results[3:]
