"""Table structure and content metrics: TEDS (tree edit distance) and GriTS (grid similarity).

This module owns the table model (:class:`Cell`, :class:`Table` with its HTML and grid readers,
docs/decisions.md#tables), :class:`TedsMetric`, :class:`GritsMetric`, and :func:`teds_html`, which scores
full HTML table trees the way table-recognition papers report TEDS. Tree edit distances run on the
compiled Zhang–Shasha kernel (``scorekit._kernels.tree``) with node texts compared inside the kernel;
GriTS's alignments run as NumPy array operations over blocks of row (or column) pairs.

Hostile input gets a named error (``scorekit.errors``), never an unbounded run:

* a cell's ``rowspan`` must be an int in ``[1, MAX_ROWSPAN]`` and its ``colspan`` in
  ``[1, MAX_COLSPAN]`` (the bounds HTML itself uses; the HTML readers clamp larger values to them),
  and its text must be a ``str`` without lone surrogates;
* a table's dense grid (spans expanded) may hold at most :data:`MAX_GRID_POSITIONS` positions;
* GriTS compares every position of one grid with every position of the other, so it refuses pairs
  whose position counts multiply to more than :data:`MAX_GRITS_WORK`, or whose row (column) counts
  multiply to more than :data:`MAX_GRITS_ALIGN` (the traceback matrices); its working memory is
  bounded by blocks of :data:`_BLOCK` entries whatever the table sizes;
* TEDS trees are limited to :data:`MAX_NODES` nodes (O(n1·n2) memory and time).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Optional

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist, cpdist

from scorekit._kernels import tree as _tree_kernels
from scorekit.base import GraphGrammar, Score
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.trees import postorder_with_leftmost

__all__ = ["Cell", "GritsMetric", "Table", "TedsMetric", "teds_html"]

#: Largest tree (nodes) a TEDS computation accepts: O(n1·n2) memory and time beyond it.
MAX_NODES = 10000
#: Largest ``rowspan`` / ``colspan`` of a cell (HTML's own limits).
MAX_ROWSPAN, MAX_COLSPAN = 65534, 1000
#: Largest dense grid (rows × columns, spans expanded) of one table.
MAX_GRID_POSITIONS = 1 << 20
#: Largest product of the two grids' position counts GriTS compares (about a minute of work).
MAX_GRITS_WORK = 1 << 28
#: Largest product of the two tables' row counts (and of their column counts) GriTS aligns.
MAX_GRITS_ALIGN = 1 << 22
#: Entries of one GriTS working block (float64): bounds its memory at a few times 8 MB.
_BLOCK = 1 << 20


@dataclass(frozen=True)
class Cell:
    """One logical cell: its text and spans (``rowspan`` in ``[1, MAX_ROWSPAN]``, ``colspan`` in
    ``[1, MAX_COLSPAN]``; anything else is an :class:`~scorekit.errors.InvalidValueError`)."""

    text: str = ""
    rowspan: int = 1
    colspan: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise InvalidTypeError(f"must be a str, got {type(self.text).__name__}", field="text")
        for name, limit in (("rowspan", MAX_ROWSPAN), ("colspan", MAX_COLSPAN)):
            value = getattr(self, name)
            try:
                number = operator.index(value) if not isinstance(value, bool) else None
            except TypeError:
                number = None
            if number is None or not 1 <= number <= limit:
                raise InvalidValueError(f"must be an int in [1, {limit}], got {value!r:.40}", field=name)
            object.__setattr__(self, name, int(number))


def _lone_surrogate(text: str) -> Optional[int]:
    """Index of the first lone surrogate in ``text``, or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def _pos_int(value: Optional[str], limit: int) -> int:
    """An HTML span attribute: ``int(value)`` clamped to ``limit``, or 1 when missing, unparsable or
    below 1 (as browsers read it)."""
    if value is None:
        return 1
    try:
        number = int(value)
    except ValueError:
        return 1
    return min(number, limit) if number >= 1 else 1


def _spans(attrs: dict[str, Optional[str]]) -> tuple[int, int]:
    return _pos_int(attrs.get("rowspan"), MAX_ROWSPAN), _pos_int(attrs.get("colspan"), MAX_COLSPAN)


class _CellReader(HTMLParser):
    """Reads the logical cells of the outermost tables of an HTML string (docs/decisions.md#tables)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.saw_table = False
        self.rows: list[tuple[Cell, ...]] = []
        self.row: Optional[list[Cell]] = None
        self.cell: Optional[tuple[list[str], dict[str, Optional[str]]]] = None

    def _flush_cell(self) -> None:
        if self.cell is not None:
            parts, attrs = self.cell
            cell = Cell("".join(parts).strip(), *_spans(attrs))
            if self.row is None:
                self.row = []
            self.row.append(cell)
            self.cell = None

    def _flush_row(self) -> None:
        self._flush_cell()
        if self.row:
            self.rows.append(tuple(self.row))
        self.row = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        if tag == "table":
            self.depth += 1
            self.saw_table = True
        elif self.depth == 1 and tag == "tr":
            self._flush_row()
            self.row = []
        elif self.depth == 1 and tag in ("td", "th"):
            self._flush_cell()
            if self.row is None:
                self.row = []
            self.cell = ([], dict(attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            if self.depth == 1:
                self._flush_row()
            self.depth = max(self.depth - 1, 0)
        elif self.depth == 1 and tag == "tr":
            self._flush_row()
        elif self.depth == 1 and tag in ("td", "th"):
            self._flush_cell()

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell[0].append(data)


@dataclass(frozen=True)
class Table:
    """Ordered rows of logical :class:`Cell` objects in reading order; spans live on the cells.

    ``rows`` is stored as a tuple of tuples; a row that is not an iterable of cells, or a cell
    text with a lone surrogate, is an error naming the cell (``rows[r][c]``).
    """

    rows: tuple[tuple[Cell, ...], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", _checked_rows(self.rows, "rows"))

    @classmethod
    def coerce(cls, obj: Any, argument: str = "table") -> "Table":
        """A Table as is; a ``str`` through :meth:`from_html`; anything else through :meth:`from_grid`.

        Metrics read their inputs here, so it is strict where the readers are lenient: a non-blank
        ``str`` without a ``<table>`` element is an :class:`~scorekit.errors.InvalidValueError` and a
        value that is not rows of cells an :class:`~scorekit.errors.InvalidTypeError`, both naming
        ``argument``. A blank ``str`` (a failed prediction) is the empty table.
        """
        if isinstance(obj, Table):
            return obj
        if isinstance(obj, str):
            if not obj.strip():
                return cls()
            reader = _read_cells(obj)
            if not reader.saw_table:
                raise InvalidValueError(f"is not a table: a str must hold a <table> element, got {obj[:40]!r}",
                                        field=argument)
            return cls(_checked_rows(reader.rows, argument))
        if isinstance(obj, (bytes, bytearray, Cell)) or obj is None or isinstance(obj, (int, float)):
            raise InvalidTypeError(f"must be a Table, an HTML str or rows of cell values, got {type(obj).__name__}",
                                   field=argument)
        return cls._from_grid(obj, argument)

    @classmethod
    def from_grid(cls, grid: Iterable[Iterable[Any]]) -> "Table":
        """Rows of cell values; ``None`` (a spanned-over position) is dropped, other values become
        ``Cell(str(v))`` with spans of 1. A ``str`` row is iterated character by character."""
        return cls._from_grid(grid, "grid")

    @classmethod
    def _from_grid(cls, grid: Iterable[Iterable[Any]], argument: str) -> "Table":
        out = []
        for r, row in enumerate(_iterate(grid, argument)):
            out.append(tuple(Cell(str(v)) for v in _iterate(row, f"{argument}[{r}]") if v is not None))
        return cls(_checked_rows(out, argument))

    @classmethod
    def from_html(cls, html: str) -> "Table":
        """Cells of the outermost ``<table>`` elements (several are merged), with ``rowspan`` /
        ``colspan`` (a value that is not an integer >= 1 reads as 1, a larger one than the bound is
        clamped to it); ``th`` is read as ``td``, nested tables' text flows into the enclosing cell,
        rows without cells are dropped, and a row still open at the end of the input is lost. A string
        without a table gives the empty table."""
        if not isinstance(html, str):
            raise InvalidTypeError(f"must be a str, got {type(html).__name__}", field="html")
        return cls(tuple(_read_cells(html).rows))

    def as_grid(self) -> list[list[Optional[Cell]]]:
        """The dense grid: spans expanded (a spanned position repeats the same Cell), rows padded
        with ``None`` to the widest row. A grid of more than :data:`MAX_GRID_POSITIONS` positions is
        an :class:`~scorekit.errors.InputTooLargeError`, raised before it is built beyond the guard."""
        grid: list[list[Optional[Cell]]] = []
        built = 0  # positions allocated so far

        def grow(line: list[Optional[Cell]], length: int) -> None:
            nonlocal built
            if length > len(line):
                built += length - len(line)
                if built > MAX_GRID_POSITIONS:
                    _grid_too_large(len(grid), length)
                line.extend([None] * (length - len(line)))

        for r, row in enumerate(self.rows):
            while len(grid) <= r:
                grid.append([])
            col = 0
            for cell in row:
                while col < len(grid[r]) and grid[r][col] is not None:
                    col += 1
                for dr in range(cell.rowspan):
                    while len(grid) <= r + dr:
                        grid.append([])
                    line = grid[r + dr]
                    grow(line, col + cell.colspan)
                    line[col:col + cell.colspan] = [cell] * cell.colspan
                col += cell.colspan
        width = max((len(line) for line in grid), default=0)
        if len(grid) * width > MAX_GRID_POSITIONS:
            _grid_too_large(len(grid), width)
        for line in grid:
            line.extend([None] * (width - len(line)))
        return grid


def _grid_too_large(rows: int, columns: int) -> None:
    raise InputTooLargeError(f"needs at least {rows} rows x {columns} columns, above the "
                             f"{MAX_GRID_POSITIONS}-position guard (MAX_GRID_POSITIONS)", field="table grid")


def _checked_rows(rows: Any, argument: str) -> tuple[tuple[Cell, ...], ...]:
    """``rows`` as a tuple of tuples of cells; a non-cell or a lone surrogate in a cell's text is an
    error naming the cell (``argument[r][c]``)."""
    out = []
    for r, row in enumerate(_iterate(rows, argument)):
        cells = tuple(_iterate(row, f"{argument}[{r}]"))
        for c, cell in enumerate(cells):
            if not isinstance(cell, Cell):
                raise InvalidTypeError(f"must be a Cell, got {type(cell).__name__}", field=f"{argument}[{r}][{c}]")
            at = _lone_surrogate(cell.text)
            if at is not None:
                raise InvalidValueError(f"holds a lone surrogate {cell.text[at]!r} at character {at}",
                                        field=f"{argument}[{r}][{c}].text")
        out.append(cells)
    return tuple(out)


def _iterate(value: Any, field: str) -> Iterable[Any]:
    """``iter(value)``, or an InvalidTypeError naming ``field``."""
    try:
        return iter(value)
    except TypeError:
        raise InvalidTypeError(f"must be iterable, got {type(value).__name__}", field=field) from None


def _read_cells(html: str) -> _CellReader:
    reader = _CellReader()
    reader.feed(html)
    reader.close()
    return reader


# -- tree edit distance on packed (label, tokens, children) trees -------------------------------------

# A node for the kernel: (label, content tokens as code points / token ids, children).
_Node = tuple[str, Sequence[int], list]


def _text_tokens(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _node_children(node: _Node) -> list:
    return node[2]


def _pack(root: _Node, intern: dict[str, int]) -> tuple[list[int], list[int], list[Sequence[int]]]:
    labels: list[int] = []
    lld: list[int] = []
    texts: list[Sequence[int]] = []
    for node, left in postorder_with_leftmost(root, _node_children):
        label = node[0]
        label_id = intern.get(label)
        if label_id is None:
            label_id = intern[label] = len(intern)
        labels.append(label_id)
        lld.append(left)
        texts.append(node[1])
    return labels, lld, texts


def _tree_distance(a: _Node, b: _Node, what: str) -> tuple[float, int, int]:
    """Unit delete/insert; rename 1 on different labels, else normalised Levenshtein of the tokens."""
    intern: dict[str, int] = {}
    l1, d1, t1 = _pack(a, intern)
    l2, d2, t2 = _pack(b, intern)
    for size in (len(l1), len(l2)):
        if size > MAX_NODES:
            raise InputTooLargeError(f"a table tree has {size} nodes, above the {MAX_NODES}-node guard "
                                     "(TEDS needs O(n1*n2) memory and time)", field=f"{what}:")

    def texts(parts: list[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        offsets = np.zeros(len(parts) + 1, np.int64)
        np.cumsum([len(p) for p in parts], out=offsets[1:])
        values = np.concatenate([np.asarray(p, np.uint32) for p in parts]) if parts else np.zeros(0, np.uint32)
        return values, offsets

    (v1, o1), (v2, o2) = texts(t1), texts(t2)
    distance = _tree_kernels.distance_batch(
        l1, d1, [0, len(l1)], l2, d2, [0, len(l2)], rename_mode=_tree_kernels.RENAME_TEXT,
        text1_values=v1, text1_offsets=o1, text2_values=v2, text2_offsets=o2, label_mismatch=1.0, threads=1,
    )[0]
    return float(distance), len(l1), len(l2)


def _table_tree(table: Table, structure_only: bool) -> _Node:
    empty: Sequence[int] = ()
    rows = [
        ("tr", empty, [(f"td:{c.rowspan}x{c.colspan}", empty if structure_only else _text_tokens(c.text), [])
                       for c in row])
        for row in table.rows
    ]
    return ("table", empty, rows)


class TedsMetric:
    """Tree-Edit-Distance-based Similarity (Zhong et al., PubTabNet) over :class:`Table` trees.

    The tree is ``table`` → one ``tr`` per row → one ``td:{rowspan}x{colspan}`` node per cell, the
    cell text riding on the node (empty with ``structure_only=True``, TEDS-Struct). Insertions and
    deletions cost 1; a rename costs 1 between different labels, else ``lev(t1, t2) / max(len)``
    (code points, case-sensitive; 0 for equal texts). ``TEDS = 1 − dist / max(|Tp|, |Tg|)``.
    ``aggregate`` is the mean of per-table values (PubTabNet convention); NaN for no scores.

    >>> a = "<table><tr><td>a</td><td>b</td></tr></table>"
    >>> b = "<table><tr><td>a</td><td>c</td></tr></table>"
    >>> round(TedsMetric()(a, b).value, 3)
    0.75
    >>> TedsMetric(structure_only=True)(a, b).value
    1.0
    """

    name = "teds"

    def __init__(self, *, structure_only: bool = False) -> None:
        self.structure_only = bool(structure_only)

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        p, g = Table.coerce(pred, "pred"), Table.coerce(gold, "gold")
        distance, size_p, size_g = _tree_distance(
            _table_tree(p, self.structure_only), _table_tree(g, self.structure_only), "TedsMetric")
        denom = max(size_p, size_g)
        return Score(
            value=1.0 - distance / denom,
            metric="teds_struct" if self.structure_only else "teds",
            detail={"edit_distance": distance, "max_nodes": denom, "structure_only": self.structure_only,
                    "higher_is_better": True},
        )

    def aggregate(self, scores: Sequence[Score]) -> float:
        if not scores:
            return math.nan
        return math.fsum(float(s.value) for s in scores) / len(scores)


class GritsMetric:
    """Grid Table Similarity (Smock et al.) with a factored 2D-MSS (docs/decisions.md#tables).

    Position similarity: 0 when either position is empty; GriTS-Top (``structure_only=True``) 1 when
    the (rowspan, colspan) are equal; GriTS-Con ``0.5·[spans equal] + 0.5·(1 − lev/max(len))``.
    Rows are aligned by the best monotone column alignment of each row pair, columns likewise, and
    the overlap sums the position similarities over the aligned rows × aligned columns; precision and
    recall divide it by the occupied positions of each grid. ``aggregate`` pools the overlaps and
    position counts of all tables before dividing (never a mean of F1s); 1.0 for no scores.

    Cost: time grows with the product of the two grids' position counts (refused above
    ``MAX_GRITS_WORK`` with an :class:`~scorekit.errors.InputTooLargeError`); memory stays within a
    few working blocks and the two alignment matrices (rows × rows, columns × columns, each at most
    ``MAX_GRITS_ALIGN`` entries), whatever the table sizes.
    """

    name = "grits"

    def __init__(self, *, structure_only: bool = False) -> None:
        self.structure_only = bool(structure_only)

    @staticmethod
    def _align_values(sim: "_PositionSimilarity", transpose: bool) -> np.ndarray:
        """Best monotone alignment value of every (pred row, gold row) pair — of every column pair
        with ``transpose`` — where aligning position i of one line with position j of the other
        scores their similarity; shape (lines_pred, lines_gold).

        The DP over positions runs one pred position at a time over a block of pred lines × every
        gold line × every gold position: ``current[j] = max(current[j-1], previous[j],
        previous[j-1] + m[i, j])``, the ``current[j-1]`` term being a running maximum along j.
        """
        ip, ig = (sim.ip.T, sim.ig.T) if transpose else (sim.ip, sim.ig)
        n_a, n = ip.shape
        n_b, k = ig.shape
        values = np.zeros((n_a, n_b))
        block = max(1, _BLOCK // max(n_b * (k + 1), sim.n_gold_cells + 1))
        for a0 in range(0, n_a, block):
            rows = ip[a0:a0 + block]
            previous = np.zeros((rows.shape[0], n_b, k + 1))
            pick = np.arange(rows.shape[0])[:, None, None]
            for i in range(n):
                m = sim.rows(rows[:, i])[pick, ig[None, :, :]]  # (block, n_b, k)
                current = np.zeros_like(previous)
                current[:, :, 1:] = np.maximum.accumulate(
                    np.maximum(previous[:, :, 1:], previous[:, :, :-1] + m), axis=2)
                previous = current
            values[a0:a0 + block] = previous[:, :, k]
        return values

    @staticmethod
    def _align_pairs(s: np.ndarray) -> list[tuple[int, int]]:
        """Traceback of the same DP over a full similarity matrix (docs/decisions.md#tables), ascending pairs."""
        n_a, n_b = s.shape
        dp = np.zeros((n_a + 1, n_b + 1))
        for i in range(1, n_a + 1):  # dp[i, j] = max(dp[i-1, j], dp[i, j-1], dp[i-1, j-1] + s[i-1, j-1])
            dp[i, 1:] = np.maximum.accumulate(np.maximum(dp[i - 1, 1:], dp[i - 1, :-1] + s[i - 1]))
        pairs = []
        i, j = n_a, n_b
        while i > 0 and j > 0:
            diagonal = dp[i - 1, j - 1] + s[i - 1, j - 1]
            if dp[i, j] == diagonal and diagonal >= dp[i - 1, j] and diagonal >= dp[i, j - 1]:
                pairs.append((i - 1, j - 1))
                i, j = i - 1, j - 1
            elif dp[i, j] == dp[i - 1, j]:
                i -= 1
            else:
                j -= 1
        return pairs[::-1]

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        gp, gg = Table.coerce(pred, "pred").as_grid(), Table.coerce(gold, "gold").as_grid()
        n_pred = sum(cell is not None for line in gp for cell in line)
        n_gold = sum(cell is not None for line in gg for cell in line)
        overlap = 0.0
        if n_pred and n_gold:
            shape_p, shape_g = (len(gp), len(gp[0])), (len(gg), len(gg[0]))
            _grits_guard(shape_p, shape_g)
            sim = _PositionSimilarity(gp, gg, self.structure_only)
            row_pairs = self._align_pairs(self._align_values(sim, transpose=False))
            col_pairs = self._align_pairs(self._align_values(sim, transpose=True))
            if row_pairs and col_pairs:
                rp, rg = (np.array(x) for x in zip(*row_pairs))
                cp, cg = (np.array(x) for x in zip(*col_pairs))
                overlap = math.fsum(sim.pairs(sim.ip[rp[:, None], cp[None, :]].ravel(),
                                              sim.ig[rg[:, None], cg[None, :]].ravel()).tolist())
        precision, recall, f1 = _rates(overlap, n_pred, n_gold)
        return Score(
            value=f1, precision=precision, recall=recall, f1=f1,
            metric="grits_top" if self.structure_only else "grits_con",
            detail={"overlap": overlap, "n_pred": n_pred, "n_gold": n_gold, "structure_only": self.structure_only,
                    "higher_is_better": True},
        )

    def aggregate(self, scores: Sequence[Score]) -> float:
        overlap = math.fsum(float(s.detail["overlap"]) for s in scores)
        n_pred = sum(int(s.detail["n_pred"]) for s in scores)
        n_gold = sum(int(s.detail["n_gold"]) for s in scores)
        if n_pred == 0 and n_gold == 0:
            return 1.0
        return _rates(overlap, n_pred, n_gold)[2]


def _rates(overlap: float, n_pred: int, n_gold: int) -> tuple[float, float, float]:
    precision = overlap / n_pred if n_pred > 0 else (1.0 if n_gold == 0 else 0.0)
    recall = overlap / n_gold if n_gold > 0 else (1.0 if n_pred == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def _grits_guard(shape_p: tuple[int, int], shape_g: tuple[int, int]) -> None:
    work = shape_p[0] * shape_p[1] * shape_g[0] * shape_g[1]
    if work > MAX_GRITS_WORK:
        raise InputTooLargeError(
            f"grids of {shape_p[0]}x{shape_p[1]} and {shape_g[0]}x{shape_g[1]} positions need {work} position "
            f"comparisons, above the {MAX_GRITS_WORK} guard (MAX_GRITS_WORK)", field="GritsMetric")
    for what, a, b in (("rows", shape_p[0], shape_g[0]), ("columns", shape_p[1], shape_g[1])):
        if (a + 1) * (b + 1) > MAX_GRITS_ALIGN:
            raise InputTooLargeError(f"aligning {a} x {b} {what} is above the {MAX_GRITS_ALIGN}-entry guard "
                                     "(MAX_GRITS_ALIGN)", field="GritsMetric")


def _distinct(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts in first-seen order and the index of each text among them."""
    index: dict[str, int] = {}
    which = np.fromiter((index.setdefault(t, len(index)) for t in texts), dtype=np.int64, count=len(texts))
    return list(index), which


class _PositionSimilarity:
    """GriTS position similarities of two dense grids, computed on demand.

    ``ip`` / ``ig`` map each grid position to its cell's index among the grid's distinct cells (-1 for
    an empty position). The similarity of a pred cell and a gold cell is ``[spans equal]`` for
    GriTS-Top, ``0.5·[spans equal] + 0.5·(1 − lev/max(len))`` for GriTS-Con; an empty position scores 0.
    When the full cell-by-cell matrix fits in :data:`_BLOCK` entries it is computed once; otherwise
    the rows a caller asks for are computed each time, so memory never grows with the table sizes.
    """

    def __init__(self, gp: list[list[Optional[Cell]]], gg: list[list[Optional[Cell]]], structure_only: bool) -> None:
        self.structure_only = structure_only
        self.cells_p: list[Cell] = []
        self.cells_g: list[Cell] = []
        self.ip = self._index(gp, self.cells_p)
        self.ig = self._index(gg, self.cells_g)
        self.n_gold_cells = len(self.cells_g)
        self.spans_g = np.array([(c.rowspan, c.colspan) for c in self.cells_g])
        # Texts are compared once per distinct pair of texts (tables repeat "", numbers, units ...).
        self.texts_g, self.text_of_g = _distinct([c.text for c in self.cells_g])
        self.full: Optional[np.ndarray] = None
        if (len(self.cells_p) + 1) * (len(self.cells_g) + 1) <= _BLOCK:
            self.full = self._compute(np.arange(len(self.cells_p)))

    @staticmethod
    def _index(grid: list[list[Optional[Cell]]], cells: list[Cell]) -> np.ndarray:
        seen: dict[int, int] = {}
        out = np.full((len(grid), len(grid[0]) if grid else 0), -1, np.int64)
        for r, line in enumerate(grid):
            for c, cell in enumerate(line):
                if cell is not None:
                    k = seen.get(id(cell))
                    if k is None:
                        k = seen[id(cell)] = len(cells)
                        cells.append(cell)
                    out[r, c] = k
        return out

    def _compute(self, ids: np.ndarray) -> np.ndarray:
        """Similarities of pred cells ``ids`` (>= 0) with every gold cell, plus a zero column for
        the empty position and a zero last row (so that ``-1`` indexes zeros)."""
        out = np.zeros((len(ids) + 1, self.n_gold_cells + 1))
        if len(ids) and self.n_gold_cells:
            cells = [self.cells_p[k] for k in ids.tolist()]
            spans = np.array([(c.rowspan, c.colspan) for c in cells])
            same = (spans[:, None, 0] == self.spans_g[None, :, 0]) & (spans[:, None, 1] == self.spans_g[None, :, 1])
            if self.structure_only:
                out[:-1, :-1] = same
            else:
                texts, text_of = _distinct([c.text for c in cells])
                text = cdist(texts, self.texts_g, scorer=Levenshtein.normalized_similarity, dtype=np.float64)
                out[:-1, :-1] = 0.5 * same + 0.5 * text[text_of[:, None], self.text_of_g[None, :]]
        return out

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """Similarity of each pred cell in ``ids`` (-1 = empty) with every gold cell (column -1 = empty)."""
        if self.full is not None:
            return self.full[ids]
        present, where = np.unique(ids[ids >= 0], return_inverse=True)
        table = self._compute(present)
        index = np.full(len(ids), len(present), np.int64)
        index[ids >= 0] = where
        return table[index]

    def pairs(self, ids_p: np.ndarray, ids_g: np.ndarray) -> np.ndarray:
        """Similarity of each (pred cell, gold cell) pair, element-wise (-1 = empty, scoring 0)."""
        if self.full is not None:
            return self.full[ids_p, ids_g]
        out = np.zeros(len(ids_p))
        both = np.flatnonzero((ids_p >= 0) & (ids_g >= 0))
        if both.size:
            cp = [self.cells_p[k] for k in ids_p[both].tolist()]
            cg = [self.cells_g[k] for k in ids_g[both].tolist()]
            same = np.array([(a.rowspan, a.colspan) == (b.rowspan, b.colspan) for a, b in zip(cp, cg)])
            if self.structure_only:
                out[both] = same
            else:
                text = cpdist([c.text for c in cp], [c.text for c in cg], scorer=Levenshtein.normalized_similarity,
                              dtype=np.float64)
                out[both] = 0.5 * same + 0.5 * text
        return out


# -- full HTML table trees (the papers' TEDS) -------------------------------------------------------

_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
                   "track", "wbr"})
# Opening one of these implicitly closes an open element of the listed tags (HTML's optional end tags),
# up to the nearest enclosing table.
_IMPLIED_CLOSE = {
    "td": ("td", "th"), "th": ("td", "th"),
    "tr": ("td", "th", "tr"),
    "thead": ("td", "th", "tr", "thead", "tbody", "tfoot"),
    "tbody": ("td", "th", "tr", "thead", "tbody", "tfoot"),
    "tfoot": ("td", "th", "tr", "thead", "tbody", "tfoot"),
}


class _Element:
    __slots__ = ("tag", "attrs", "children", "text", "tail")

    def __init__(self, tag: str, attrs: dict[str, Optional[str]]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[_Element] = []
        self.text = ""  # character data before the first child
        self.tail = ""  # character data after this element's end, inside its parent


class _DomReader(HTMLParser):
    """A small, forgiving HTML element tree (comments dropped, optional end tags implied).

    ``open`` is the stack of open elements; ``where[tag]`` lists the stack positions of the open
    elements of each tag, so finding the innermost open element of a tag is O(1) and every element is
    pushed and popped once: reading is linear in the input however deep the nesting.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Element("#document", {})
        self.open: list[_Element] = [self.root]
        self.where: dict[str, list[int]] = {}

    def _innermost(self, tag: str) -> int:
        """Stack position of the innermost open ``tag`` element, 0 if none."""
        positions = self.where.get(tag)
        return positions[-1] if positions else 0

    def _close_from(self, k: int) -> None:
        """Close the open elements at stack positions ``k`` and above."""
        while len(self.open) > k:
            self.where[self.open.pop().tag].pop()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        implied = _IMPLIED_CLOSE.get(tag)
        if implied:  # the innermost open one of them inside the current table, if any
            k = max(self._innermost(t) for t in implied)
            if k > self._innermost("table"):
                self._close_from(k)
        element = _Element(tag, dict(attrs))
        self.open[-1].children.append(element)
        if tag not in _VOID:
            self.where.setdefault(tag, []).append(len(self.open))
            self.open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self._close_from(len(self.open) - 1)

    def handle_endtag(self, tag: str) -> None:
        k = self._innermost(tag)
        if k:
            self._close_from(k)
        # A stray end tag closes nothing.

    def handle_data(self, data: str) -> None:
        parent = self.open[-1]
        if parent.children:
            parent.children[-1].tail += data
        else:
            parent.text += data


def _first_table(html: str, argument: str) -> _Element:
    if not isinstance(html, str):
        raise InvalidTypeError(f"must be a str, got {type(html).__name__}", field=argument)
    at = _lone_surrogate(html)
    if at is not None:
        raise InvalidValueError(f"holds a lone surrogate {html[at]!r} at character {at}", field=argument)
    reader = _DomReader()
    reader.feed(html)
    reader.close()
    stack = [reader.root]
    while stack:
        element = stack.pop()
        if element.tag == "table":
            return element
        stack.extend(reversed(element.children))
    raise InvalidValueError(f"contains no <table> element: {html[:60]!r}", field=argument)


def _cell_tokens(td: _Element, tag_ids: dict[str, int]) -> list[int]:
    """A cell's content: its characters, with ``<tag>``/``</tag>`` tokens for nested elements."""
    tokens: list[int] = [ord(ch) for ch in td.text]

    def tag_token(token: str) -> int:
        return tag_ids.setdefault(token, 0x110000 + len(tag_ids))

    stack: list[tuple[_Element, bool]] = [(child, False) for child in reversed(td.children)]
    while stack:
        element, closing = stack.pop()
        if closing:
            tokens.append(tag_token(f"</{element.tag}>"))
            tokens.extend(ord(ch) for ch in element.tail)
            continue
        tokens.append(tag_token(f"<{element.tag}>"))
        tokens.extend(ord(ch) for ch in element.text)
        stack.append((element, True))
        stack.extend((child, False) for child in reversed(element.children))
    return tokens


def _html_tree(table: _Element, structure_only: bool, tag_ids: dict[str, int]) -> tuple[_Node, int]:
    """The TEDS tree of a parsed table and its PubTabNet node count (elements below ``<table>``)."""
    def label(e: _Element) -> str:
        rowspan, colspan = _spans(e.attrs)
        return f"{e.tag}|{rowspan}|{colspan}"

    empty: Sequence[int] = ()
    count = -1  # the table itself is not counted
    root: _Node = (label(table), empty, [])
    stack: list[tuple[_Element, _Node]] = [(table, root)]
    while stack:
        element, node = stack.pop()
        count += 1
        if element.tag == "td":
            below = [element.children[:]]
            while below:  # inline elements inside a cell count, but are content, not tree nodes
                level = below.pop()
                count += len(level)
                below.extend(child.children for child in level if child.children)
            continue
        for child in element.children:
            content = empty if structure_only or child.tag != "td" else _cell_tokens(child, tag_ids)
            child_node: _Node = (label(child), content, [])
            node[2].append(child_node)
            stack.append((child, child_node))
    return root, count


def teds_html(pred_html: str, true_html: str, *, structure_only: bool = False) -> float:
    """TEDS between two HTML tables as published table-recognition results compute it.

    Follows the PubTabNet reference definition (Zhong et al., 2020): the first ``<table>`` of each
    string becomes a tree of its elements (``thead``/``tbody``/``tr``/``td``...; a node's label is its
    tag with ``rowspan`` and ``colspan``); a ``td`` is a leaf whose content is its characters plus
    ``<tag>``/``</tag>`` tokens for inline elements (``<b>``, ``<br>``...). Renames cost 1 when tag or
    spans differ, else (for ``td``) the normalised Levenshtein distance of the contents, 0 for other
    tags; insertions and deletions cost 1. ``structure_only=True`` empties the contents (TEDS-Struct).
    Span attributes are read as browsers read them: a value that is not an integer >= 1 is 1, and
    values above ``MAX_ROWSPAN`` / ``MAX_COLSPAN`` are clamped to them.

    **Normalisation**: ``1 − dist / max(n_pred, n_true)`` where ``n`` counts every element *below*
    ``<table>`` — including inline tags inside cells, excluding ``<table>`` itself — which is what
    PubTabNet's ``len(table.xpath(".//*"))`` counts. It is used because the numbers reported on
    PubTabNet, FinTabNet and OmniDocBench come from that code; dividing by the tree size instead (as
    ``table-recognition-metric`` does) gives slightly different values. Because the edit distance can
    exceed that count when the two trees differ more in shape than in size (three empty rows against
    one row of two cells: distance 4, count 3), the reference formula can go below 0; the value is
    clipped to 0 there, so it always lies in [0, 1]. ``TedsMetric`` scores the simplified
    ``table/tr/td`` tree of ek instead. An empty ``pred_html`` (a failed prediction) scores 0.0; a
    non-empty string without a ``<table>`` is an :class:`~scorekit.errors.InvalidValueError`, and so
    is a lone surrogate; a tree above ``MAX_NODES`` nodes is an
    :class:`~scorekit.errors.InputTooLargeError`.

    >>> teds_html("<table><tr><td>a</td></tr></table>", "<table><tr><td>b</td></tr></table>")
    0.5
    """
    if isinstance(pred_html, str) and not pred_html.strip():
        return 0.0
    tag_ids: dict[str, int] = {}
    tree_p, n_p = _html_tree(_first_table(pred_html, "pred_html"), structure_only, tag_ids)
    tree_t, n_t = _html_tree(_first_table(true_html, "true_html"), structure_only, tag_ids)
    distance, _, _ = _tree_distance(tree_p, tree_t, "teds_html")
    denom = max(n_p, n_t)
    if denom == 0:
        return 1.0 if distance == 0 else 0.0
    return max(0.0, 1.0 - distance / denom)
