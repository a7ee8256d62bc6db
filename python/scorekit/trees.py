"""Ordered labelled trees and their exact tree edit distance (Zhang–Shasha, on the compiled core).

This module owns the :class:`Tree` value type, its text forms (bracket notation, nested tuples, JSON
documents), and the user-facing distance functions :func:`tree_edit_distance`,
:func:`tree_edit_mapping` and :func:`tree_edit_distance_batch`. It turns trees and cost options into
the packed post-order arrays of ``scorekit._kernels.tree`` and never loops over DP cells itself.

Costs (all finite and >= 0, else ``ValueError``):

* ``delete_cost`` / ``insert_cost``: ``None`` (1 per node), a number (the same for every node), a
  mapping ``label -> cost`` (labels not in it cost 1), or a callable ``node -> cost``.
* ``rename_cost``: ``None`` (0 for equal labels, else 1), a mapping ``(label_a, label_b) -> cost``
  (pairs not in it: 0 for equal labels, else 1), a callable ``(label_a, label_b) -> cost`` (called
  once per label pair of a block of tree pairs, see below), or ``"text"``: 1 when the labels differ,
  else the normalised Levenshtein distance ``lev(a.text, b.text) / max(len)`` between the nodes'
  texts (0 when equal).

A mapping or callable ``rename_cost`` becomes a label-by-label cost table. A batch builds it per
block of consecutive pairs, over the labels of that block only, closing a block before its table
would pass :data:`RENAME_TABLE_ENTRIES` entries (a single pair larger than that gets a table of its
own labels): memory follows the largest pair, never the number of distinct labels in the batch.

Size guard: a distance needs O(n1·n2) memory (16 bytes per node pair), so trees above ``max_nodes``
nodes (default :data:`MAX_NODES`) are refused with an ``InputTooLargeError`` (a ``ValueError``)
instead of an unbounded run. Tree constructors and readers are iterative: any depth works.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Optional, Union

import numpy as np

from scorekit._kernels import tree as _tree_kernels
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError

__all__ = [
    "MAX_NODES",
    "Tree",
    "tree_edit_distance",
    "tree_edit_distance_batch",
    "tree_edit_mapping",
]

#: Default size guard: the largest tree (in nodes) a distance accepts.
MAX_NODES = 5000
#: Entries of one label-by-label rename table of a batch (8 MB of float64); see the module docs.
RENAME_TABLE_ENTRIES = 1 << 20

NodeCost = Union[None, float, int, Mapping[str, float], Callable[["Tree"], float]]
RenameCost = Union[None, str, Mapping[tuple[str, str], float], Callable[[str, str], float]]


class Tree:
    """One node of an ordered labelled tree: a ``label``, ordered ``children`` and an optional ``text``.

    ``text`` is node content used only by ``rename_cost="text"`` (table cells, for instance); it is
    not part of the bracket notation. Trees compare equal when labels, texts and children are equal.

    >>> t = Tree.from_brackets("{a{b}{c}}")
    >>> len(t), t.to_brackets()
    (3, '{a{b}{c}}')
    >>> Tree.from_nested(("a", [("b", []), ("c", [])])) == t
    True
    """

    __slots__ = ("label", "children", "text")

    def __init__(self, label: str, children: Iterable["Tree"] = (), text: Optional[str] = None) -> None:
        if not isinstance(label, str):
            raise InvalidTypeError(f"label must be a str, got {type(label).__name__}")
        if text is not None and not isinstance(text, str):
            raise InvalidTypeError(f"text must be a str or None, got {type(text).__name__}")
        kids = tuple(children)
        for child in kids:
            if not isinstance(child, Tree):
                raise InvalidTypeError(f"children must be Tree nodes, got {type(child).__name__}")
        self.label = label
        self.children = kids
        self.text = text

    # -- traversal ---------------------------------------------------------------------------

    def iter_postorder(self) -> Iterator["Tree"]:
        """Every node, children before their parent, left to right (iterative: any depth)."""
        stack: list[tuple[Tree, int]] = [(self, 0)]
        while stack:
            node, k = stack.pop()
            if k < len(node.children):
                stack.append((node, k + 1))
                stack.append((node.children[k], 0))
            else:
                yield node

    def __len__(self) -> int:
        return sum(1 for _ in self.iter_postorder())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        pending = [(self, other)]
        while pending:
            a, b = pending.pop()
            if a.label != b.label or a.text != b.text or len(a.children) != len(b.children):
                return False
            pending.extend(zip(a.children, b.children))
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable-looking value type: not hashable

    def __repr__(self) -> str:
        return f"Tree.from_brackets({self.to_brackets()!r})"

    # -- bracket notation --------------------------------------------------------------------

    @classmethod
    def from_brackets(cls, text: str) -> "Tree":
        """Parse bracket notation, ``{label{child}...}``, as used by APTED's test cases.

        A backslash escapes ``{``, ``}`` and ``\\`` inside labels; whitespace around the outermost
        braces is ignored, whitespace inside labels is kept. Anything else is a ``ValueError``
        naming the position.
        """
        if not isinstance(text, str):
            raise InvalidTypeError(f"from_brackets needs a str, got {type(text).__name__}")
        s = text.strip()
        if not s.startswith("{"):
            raise InvalidValueError(f"bracket notation must start with '{{', got {text[:20]!r}")
        # Open nodes: [label characters, children, label finished?]
        stack: list[tuple[list[str], list[Tree]]] = []
        root: Optional[Tree] = None
        in_label = False
        i = 0
        while i < len(s):
            ch = s[i]
            if root is not None:
                raise InvalidValueError(f"unexpected {ch!r} at position {i} after the root closed")
            if ch == "\\":
                if not in_label or i + 1 >= len(s) or s[i + 1] not in "{}\\":
                    raise InvalidValueError(
                        f"bad escape at position {i}: only \\{{, \\}} and \\\\ are allowed in labels")
                stack[-1][0].append(s[i + 1])
                i += 2
                continue
            if ch == "{":
                stack.append(([], []))
                in_label = True
            elif ch == "}":
                if not stack:
                    raise InvalidValueError(f"unbalanced '}}' at position {i}")
                chars, kids = stack.pop()
                node = cls("".join(chars), kids)
                if stack:
                    stack[-1][1].append(node)
                else:
                    root = node
                in_label = False
            elif in_label:
                stack[-1][0].append(ch)
            else:
                raise InvalidValueError(f"unexpected {ch!r} at position {i}: text between sibling nodes")
            i += 1
        if root is None:
            raise InvalidValueError(f"unbalanced '{{': {len(stack)} node(s) never closed")
        return root

    def to_brackets(self) -> str:
        """Bracket notation of this tree (labels escaped); the inverse of :meth:`from_brackets`."""
        out: list[str] = []
        stack: list[tuple[Tree, int]] = [(self, 0)]
        while stack:
            node, k = stack.pop()
            if k == 0:
                out.append("{" + node.label.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}"))
            if k < len(node.children):
                stack.append((node, k + 1))
                stack.append((node.children[k], 0))
            else:
                out.append("}")
        return "".join(out)

    # -- other constructors ------------------------------------------------------------------

    @classmethod
    def from_nested(cls, obj: Any) -> "Tree":
        """Build from ``(label, [children...])`` tuples (a bare ``str`` is a leaf), e.g.
        ``("a", [("b", []), ("c", [])])``. A third element, if present, is the node's ``text``.
        A cyclic structure is a ``ValueError``."""
        return _build(obj, _nested_node)

    @classmethod
    def from_json(cls, obj: Any) -> "Tree":
        """Decompose a parsed JSON document into a tree, deterministically:

        * an object becomes a node labelled ``{}`` with one child per key, in sorted key order; each
          child is labelled with the key and has one child, the decomposition of the value;
        * an array becomes a node labelled ``[]`` with one child per element, in order;
        * a scalar becomes a leaf labelled with its JSON text (``"abc"`` with quotes, ``1``,
          ``1.5``, ``true``, ``null``), so the string ``"1"`` and the number ``1`` differ.

        Keys must be strings; NaN/infinite numbers, non-JSON types and cycles are a ``ValueError``.

        >>> Tree.from_json({"b": [1, "x"], "a": None}).to_brackets()
        '{\\\\{\\\\}{a{null}}{b{[]{1}{"x"}}}}'
        """
        return _build(obj, _json_node)


def _nested_node(obj: Any) -> tuple[str, Sequence[Any], Optional[str]]:
    if isinstance(obj, str):
        return obj, (), None
    if not isinstance(obj, (tuple, list)) or len(obj) not in (2, 3):
        raise InvalidValueError(f"from_nested expects (label, children[, text]) or a str, got {obj!r:.60}")
    label, children = obj[0], obj[1]
    text = obj[2] if len(obj) == 3 else None
    if not isinstance(label, str):
        raise InvalidValueError(f"from_nested: a label must be a str, got {label!r:.60}")
    if not isinstance(children, (list, tuple)):
        raise InvalidValueError(
            f"from_nested: children of {label!r} must be a list or tuple, got {type(children).__name__}")
    return label, children, text


class _Keyed:
    """An object member during JSON decomposition: a node labelled with the key over its value."""

    __slots__ = ("key", "value")

    def __init__(self, key: str, value: Any) -> None:
        self.key, self.value = key, value


def _json_node(obj: Any) -> tuple[str, Sequence[Any], Optional[str]]:
    if isinstance(obj, _Keyed):
        return obj.key, (obj.value,), None
    if isinstance(obj, Mapping):
        for key in obj:
            if not isinstance(key, str):
                raise InvalidValueError(f"from_json: object keys must be str, got {key!r:.60}")
        return "{}", [_Keyed(k, obj[k]) for k in sorted(obj)], None
    if isinstance(obj, (list, tuple)):
        return "[]", obj, None
    if obj is None or isinstance(obj, (str, bool, int)):
        return json.dumps(obj, ensure_ascii=False), (), None
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise InvalidValueError(f"from_json: {obj} is not a JSON number")
        return json.dumps(obj), (), None
    raise InvalidValueError(f"from_json: {type(obj).__name__} is not a JSON value")


def _build(obj: Any, describe: Callable[[Any], tuple[str, Sequence[Any], Optional[str]]]) -> Tree:
    """Iterative construction with cycle detection over containers on the current path."""
    label, children, text = describe(obj)
    # Frames: [label, text, child sources, next child index, built children, id of the source]
    stack: list[list[Any]] = [[label, text, children, 0, [], id(obj)]]
    on_path = {id(obj)}
    result: Optional[Tree] = None
    while stack:
        frame = stack[-1]
        if frame[3] < len(frame[2]):
            source = frame[2][frame[3]]
            frame[3] += 1
            container = isinstance(source, (list, tuple, Mapping))
            if container and id(source) in on_path:
                raise InvalidValueError("the structure contains a cycle; a tree cannot contain itself")
            child_label, child_kids, child_text = describe(source)
            stack.append([child_label, child_text, child_kids, 0, [], id(source) if container else None])
            if container:
                on_path.add(id(source))
            continue
        stack.pop()
        if frame[5] is not None:
            on_path.discard(frame[5])
        node = Tree(frame[0], frame[4], frame[1])
        if stack:
            stack[-1][4].append(node)
        else:
            result = node
    assert result is not None
    return result


# -- packing and costs -------------------------------------------------------------------------


def postorder_with_leftmost(root: Any, children_of: Callable[[Any], Sequence[Any]]) -> Iterator[tuple[Any, int]]:
    """``(node, leftmost)`` for every node of the tree under ``root`` in post-order, ``leftmost``
    being the post-order index of the node's leftmost leaf (the layout of the tree kernels).
    Iterative, so deep trees do not hit the recursion limit; ``children_of`` reads a node's children.

    >>> t = Tree.from_brackets("{a{b}{c{d}}}")
    >>> [(n.label, left) for n, left in postorder_with_leftmost(t, lambda n: n.children)]
    [('b', 0), ('d', 1), ('c', 1), ('a', 0)]
    """
    # Frames: [node, its children, next child index, leftmost leaf of the first child or -1]
    stack: list[list[Any]] = [[root, children_of(root), 0, -1]]
    k = 0
    while stack:
        frame = stack[-1]
        node, children = frame[0], frame[1]
        if frame[2] < len(children):
            child = children[frame[2]]
            frame[2] += 1
            stack.append([child, children_of(child), 0, -1])
            continue
        stack.pop()
        left = frame[3] if frame[3] >= 0 else k
        yield node, left
        k += 1
        if stack and stack[-1][3] < 0:
            stack[-1][3] = left


def _flatten(tree: Tree, intern: dict[str, int], labels: list[int], lld: list[int], nodes: list[Tree]) -> None:
    """Append ``tree`` in post-order: label ids, leftmost-leaf indices (relative) and the nodes."""
    for node, left in postorder_with_leftmost(tree, _children):
        label_id = intern.get(node.label)
        if label_id is None:
            label_id = intern[node.label] = len(intern)
        labels.append(label_id)
        lld.append(left)
        nodes.append(node)


def _children(node: Tree) -> Sequence[Tree]:
    return node.children


def _check_cost(value: Any, argument: str) -> float:
    if isinstance(value, (str, bytes)):
        raise InvalidTypeError(f"{argument} must give numbers, got {value!r:.60}")
    try:
        cost = float(value)
    except OverflowError:
        cost = math.inf
    except (TypeError, ValueError):
        raise InvalidTypeError(f"{argument} must give numbers, got {value!r:.60}") from None
    if not (math.isfinite(cost) and cost >= 0):
        raise InvalidValueError(f"{argument} must give finite non-negative costs, got {value!r:.60}")
    return cost


def _node_costs(spec: NodeCost, nodes: list[Tree], argument: str) -> Optional[np.ndarray]:
    if spec is None:
        return None
    if isinstance(spec, bool):
        raise InvalidValueError(f"{argument} must be None, a number, a mapping label -> cost or a callable, got a bool")
    if isinstance(spec, (int, float)):
        cost = _check_cost(spec, argument)
        return np.full(len(nodes), cost, dtype=np.float64)
    if isinstance(spec, Mapping):
        checked = {label: _check_cost(v, argument) for label, v in spec.items()}
        return np.fromiter((checked.get(n.label, 1.0) for n in nodes), dtype=np.float64, count=len(nodes))
    if callable(spec):
        return np.fromiter((_check_cost(spec(n), argument) for n in nodes), dtype=np.float64, count=len(nodes))
    raise InvalidValueError(
        f"{argument} must be None, a number, a mapping label -> cost or a callable, got {spec!r:.60}")


def _checked_rename(spec: RenameCost) -> RenameCost:
    """A mapping ``rename_cost`` as a dict of checked float costs (validated once per call); other
    specifications unchanged."""
    if not isinstance(spec, Mapping):
        return spec
    checked: dict[tuple[str, str], float] = {}
    for key, value in spec.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise InvalidValueError(f"mapping keys must be (label_a, label_b) pairs, got {key!r:.60}",
                                    field="rename_cost")
        checked[key] = _check_cost(value, "rename_cost")
    return checked


def _rename_table(spec: RenameCost, intern: dict[str, int]) -> np.ndarray:
    """The ``len(intern)²`` cost table of a checked mapping or a callable over the labels of ``intern``."""
    names = sorted(intern, key=intern.__getitem__)
    n = len(names)
    table = 1.0 - np.eye(n, dtype=np.float64)
    if isinstance(spec, Mapping):
        if len(spec) <= n * n:
            for (name_a, name_b), cost in spec.items():
                a, b = intern.get(name_a), intern.get(name_b)
                if a is not None and b is not None:
                    table[a, b] = cost
        else:
            for a, name_a in enumerate(names):
                for b, name_b in enumerate(names):
                    cost = spec.get((name_a, name_b))
                    if cost is not None:
                        table[a, b] = cost
    else:
        for a, name_a in enumerate(names):
            for b, name_b in enumerate(names):
                table[a, b] = _check_cost(spec(name_a, name_b), "rename_cost")  # type: ignore[misc, operator]
    return table.ravel()


def _checked_pair(pair: Any, k: int) -> tuple[Tree, Tree]:
    if not (isinstance(pair, tuple) and len(pair) == 2):
        raise InvalidTypeError(f"must be a (tree, tree) tuple, got {type(pair).__name__}", field=f"pairs[{k}]",
                               item=k)
    for t in pair:
        if not isinstance(t, Tree):
            raise InvalidTypeError(f"holds a {type(t).__name__}, not a Tree", field=f"pairs[{k}]", item=k)
    return pair


def _table_blocks(pairs: Sequence[tuple[Tree, Tree]]) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` blocks of consecutive pairs whose distinct labels, squared, stay within
    :data:`RENAME_TABLE_ENTRIES` (a block holds at least one pair)."""
    start, labels = 0, set()
    for k, pair in enumerate(pairs):
        own = {node.label for t in _checked_pair(pair, k) for node in t.iter_postorder()}
        grown = len(labels) + len(own - labels)
        if k > start and grown * grown > RENAME_TABLE_ENTRIES:
            yield start, k
            start, labels = k, own
        else:
            labels |= own
    if start < len(pairs):
        yield start, len(pairs)


def _texts(nodes: list[Tree]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [np.frombuffer((n.text or "").encode("utf-32-le"), dtype=np.uint32) for n in nodes]
    offsets = np.zeros(len(nodes) + 1, dtype=np.int64)
    if encoded:
        np.cumsum([e.size for e in encoded], out=offsets[1:])
    values = np.concatenate(encoded) if encoded else np.zeros(0, np.uint32)
    return values, offsets


class _Packed:
    """Both sides of a batch of tree pairs, packed for the kernel, with the cost arrays."""

    def __init__(self, pairs: Sequence[tuple[Tree, Tree]], delete_cost: NodeCost, insert_cost: NodeCost,
                 rename_cost: RenameCost, max_nodes: int, first: int = 0) -> None:
        """``pairs`` are items ``first``, ``first + 1``... of the caller's batch (for error messages);
        a mapping ``rename_cost`` has been through :func:`_checked_rename`."""
        intern: dict[str, int] = {}
        sides: list[tuple[list[int], list[int], list[int], list[Tree]]] = [([], [], [0], []), ([], [], [0], [])]
        for k, pair in enumerate(pairs, first):
            for side, t in zip(sides, _checked_pair(pair, k)):
                labels, lld, offsets, nodes = side
                _flatten(t, intern, labels, lld, nodes)
                size = len(labels) - offsets[-1]
                if size > max_nodes:
                    raise InputTooLargeError(
                        f"has a tree of {size} nodes, above max_nodes={max_nodes}: the distance needs "
                        f"O(n1*n2) memory and time; pass a larger max_nodes to allow it", field=f"pairs[{k}]", item=k)
                offsets.append(len(labels))
        self.arrays = [
            (np.asarray(labels, np.uint32), np.asarray(lld, np.uint32), np.asarray(offsets, np.int64))
            for labels, lld, offsets, _ in sides
        ]
        self.nodes = [side[3] for side in sides]
        self.costs: dict[str, Any] = {
            "delete_costs": _node_costs(delete_cost, self.nodes[0], "delete_cost"),
            "insert_costs": _node_costs(insert_cost, self.nodes[1], "insert_cost"),
        }
        if rename_cost is None:
            self.costs["rename_mode"] = _tree_kernels.RENAME_UNIT
        elif isinstance(rename_cost, str):
            if rename_cost != "text":
                raise InvalidValueError(
                    f"rename_cost must be None, 'text', a mapping or a callable, got {rename_cost!r}")
            (v1, o1), (v2, o2) = _texts(self.nodes[0]), _texts(self.nodes[1])
            self.costs.update(rename_mode=_tree_kernels.RENAME_TEXT, text1_values=v1, text1_offsets=o1,
                              text2_values=v2, text2_offsets=o2, label_mismatch=1.0)
        elif isinstance(rename_cost, Mapping) or callable(rename_cost):
            self.costs.update(rename_mode=_tree_kernels.RENAME_TABLE,
                              rename_table=_rename_table(rename_cost, intern), n_labels=len(intern))
        else:
            raise InvalidValueError(
                f"rename_cost must be None, 'text', a mapping or a callable, got {rename_cost!r:.60}")


def tree_edit_distance_batch(
    pairs: Iterable[tuple[Tree, Tree]],
    *,
    delete_cost: NodeCost = None,
    insert_cost: NodeCost = None,
    rename_cost: RenameCost = None,
    max_nodes: int = MAX_NODES,
    threads: Optional[int] = None,
) -> np.ndarray:
    """Tree edit distance of every ``(t1, t2)`` pair (``float64`` array), computed in parallel.

    Costs as in the module documentation; node-cost callables and mappings apply to the first
    tree's nodes for deletions and the second tree's for insertions. ``threads``: ``None``/0 = all
    cores; the result does not depend on it.
    """
    pairs = list(pairs)
    _check_max_nodes(max_nodes)
    rename_cost = _checked_rename(rename_cost)
    tabled = isinstance(rename_cost, Mapping) or callable(rename_cost)
    blocks = _table_blocks(pairs) if tabled else [(0, len(pairs))]
    out = np.empty(len(pairs), np.float64)
    for start, stop in blocks:
        packed = _Packed(pairs[start:stop], delete_cost, insert_cost, rename_cost, max_nodes, first=start)
        (l1, d1, o1), (l2, d2, o2) = packed.arrays
        out[start:stop] = _tree_kernels.distance_batch(l1, d1, o1, l2, d2, o2, threads=threads or 0,
                                                       **packed.costs)
    overflowed = np.flatnonzero(~np.isfinite(out))
    if overflowed.size:
        raise InvalidValueError("make the distance exceed the float64 range (too large)",
                                field="costs", item=int(overflowed[0]))
    return out


def _check_max_nodes(max_nodes: Any) -> None:
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise InvalidValueError(f"must be a positive int, got {max_nodes!r:.60}", field="max_nodes")


def tree_edit_distance(
    t1: Tree,
    t2: Tree,
    *,
    delete_cost: NodeCost = None,
    insert_cost: NodeCost = None,
    rename_cost: RenameCost = None,
    max_nodes: int = MAX_NODES,
) -> float:
    """Exact ordered tree edit distance between ``t1`` and ``t2`` (Zhang–Shasha).

    >>> tree_edit_distance(Tree.from_brackets("{a{b}{c}}"), Tree.from_brackets("{a{c}}"))
    1.0
    """
    return float(tree_edit_distance_batch([(t1, t2)], delete_cost=delete_cost, insert_cost=insert_cost,
                                          rename_cost=rename_cost, max_nodes=max_nodes, threads=1)[0])


def tree_edit_mapping(
    t1: Tree,
    t2: Tree,
    *,
    delete_cost: NodeCost = None,
    insert_cost: NodeCost = None,
    rename_cost: RenameCost = None,
    max_nodes: int = MAX_NODES,
) -> tuple[float, list[tuple[Optional[Tree], Optional[Tree]]]]:
    """The distance and one optimal edit mapping: ``(node_a, node_b)`` pairs where ``(a, None)``
    deletes ``a``, ``(None, b)`` inserts ``b`` and ``(a, b)`` keeps or renames ``a`` into ``b``.
    Every node of both trees appears once; the pairs' costs add up to the distance."""
    _check_max_nodes(max_nodes)
    packed = _Packed([(t1, t2)], delete_cost, insert_cost, _checked_rename(rename_cost), max_nodes)
    (l1, d1, _), (l2, d2, _) = packed.arrays
    distance, rows = _tree_kernels.mapping(l1, d1, l2, d2, **packed.costs)
    n1, n2 = packed.nodes
    return distance, [(n1[a] if a >= 0 else None, n2[b] if b >= 0 else None) for a, b in rows.tolist()]
