"""scorekit.trees: the Tree value type and its text forms (brackets, nested tuples, JSON)."""

from __future__ import annotations

import pytest

from scorekit.trees import Tree, tree_edit_distance


def test_brackets_round_trip_and_escapes() -> None:
    t = Tree.from_brackets("  {a{b{c}}{d e}}  ")
    assert [n.label for n in t.iter_postorder()] == ["c", "b", "d e", "a"]
    assert t.to_brackets() == "{a{b{c}}{d e}}"
    odd = Tree("x{y}", [Tree("back\\slash"), Tree("")])
    assert Tree.from_brackets(odd.to_brackets()) == odd
    assert odd.to_brackets() == "{x\\{y\\}{back\\\\slash}{}}"
    assert len(odd) == 3


@pytest.mark.parametrize("bad", ["", "a", "{a", "{a}}", "{a}{b}", "{a}b", "{a{b}c{d}}", "{a\\q}", "}"])
def test_malformed_brackets(bad: str) -> None:
    with pytest.raises(ValueError):
        Tree.from_brackets(bad)


def test_deep_trees_do_not_recurse() -> None:
    depth = 20000
    text = "{n" * depth + "}" * depth
    t = Tree.from_brackets(text)
    assert len(t) == depth and t.to_brackets() == text
    assert t == Tree.from_brackets(text)


def test_from_nested() -> None:
    t = Tree.from_nested(("a", [("b", []), "c", ("d", [], "cell text")]))
    assert t == Tree.from_brackets("{a{b}{c}{d}}") or t.children[2].text == "cell text"
    assert t.children[2].text == "cell text" and t.to_brackets() == "{a{b}{c}{d}}"
    with pytest.raises(ValueError):
        Tree.from_nested(("a", "bc"))
    with pytest.raises(ValueError):
        Tree.from_nested((1, []))
    kids: list = []
    node = ("a", kids)
    kids.append(node)
    with pytest.raises(ValueError, match="cycle"):
        Tree.from_nested(node)


def test_from_json_rules() -> None:
    t = Tree.from_json({"b": [1, "x", True, None, 2.5], "a": {}})
    assert t.to_brackets() == '{\\{\\}{a{\\{\\}}}{b{[]{1}{"x"}{true}{null}{2.5}}}}'
    # Key order does not matter; the string "1" differs from the number 1.
    assert Tree.from_json({"x": 1, "y": 2}) == Tree.from_json({"y": 2, "x": 1})
    assert tree_edit_distance(Tree.from_json(["1"]), Tree.from_json([1])) == 1.0
    shared = [1, 2]
    assert len(Tree.from_json({"p": shared, "q": shared})) == 1 + 2 * (1 + 1 + 2)
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="cycle"):
        Tree.from_json(loop)
    with pytest.raises(ValueError, match="keys"):
        Tree.from_json({1: "a"})
    with pytest.raises(ValueError, match="JSON number"):
        Tree.from_json([float("nan")])
    with pytest.raises(ValueError, match="not a JSON value"):
        Tree.from_json({"s": {1, 2}})


def test_tree_validation() -> None:
    with pytest.raises(TypeError):
        Tree(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Tree("a", ["b"])  # type: ignore[list-item]
    assert Tree("a", text="t") != Tree("a")
