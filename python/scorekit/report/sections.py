"""Section builders of a report page: the values a template shows, already cleaned for display.

Every builder turns data into a :class:`Section` whose strings are plain text (the template escapes
them) and whose only pre-built markup is the SVG of a chart (built by :mod:`scorekit.report.charts`,
which escapes every label itself). :func:`display_text` is the one place that decides how a
character from data is shown. Sections nest: :func:`group` (a titled block of sections, one heading
level down) and :func:`details_block` (a ``<details>`` block, collapsed or open, that works
without script); :func:`note` and :func:`text_block` show a sentence or a preformatted text.
"""

from __future__ import annotations

import difflib
import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Sequence

from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError


def _display_table() -> dict[int, int]:
    table = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}   # C0 controls -> control pictures
    table[0x7F] = 0x2421                                                    # DEL -> its picture
    replacement = 0xFFFD
    for c in (*range(0x80, 0xA0), *range(0xD800, 0xE000), *range(0xFDD0, 0xFDF0)):
        table[c] = replacement                                              # C1, lone surrogates, noncharacters
    for plane in range(17):
        table[plane * 0x10000 + 0xFFFE] = replacement
        table[plane * 0x10000 + 0xFFFF] = replacement
    return table


_DISPLAY = _display_table()


def display_text(text: str) -> str:
    """``text`` as a report shows it: one character for each code point, so positions hold.

    Control characters (NUL, CR, …, except tab and line feed) become their visible Unicode
    "control picture" (NUL -> ␀, CR -> ␍); C1 controls, lone surrogates and noncharacters, which
    cannot be written as UTF-8 or shown, become U+FFFD. Bidirectional text is kept as is; the
    page's stylesheet isolates every piece of data so it cannot reorder its neighbours.

    >>> display_text("a\\x00b\\rc\\ud800")
    'a␀b␍c�'
    """
    return text.translate(_DISPLAY)


class Cell(NamedTuple):
    """One table cell: the shown text, whether it sorts as a number, and the number as sorted."""

    text: str
    numeric: bool
    value: str


def format_number(value: float) -> str:
    """How a report prints a number: integers exactly, floats with four decimals (``g`` for tiny
    or huge magnitudes), ``NaN`` and ``±inf`` by name.

    >>> [format_number(x) for x in (3, 2.0, 0.01234567, 1e-7, float("nan"))]
    ['3', '2.0000', '0.0123', '1e-07', 'NaN']
    """
    if isinstance(value, numbers.Integral):
        return str(int(value))
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0 or 1e-4 <= abs(value) < 1e9:
        return f"{value:.4f}"
    return f"{value:.4g}"


def number_cell(number: float, text: str) -> Cell:
    """A table cell that shows ``text`` and sorts as ``number`` (a score shown as ``"62.5%"``)."""
    if isinstance(number, bool) or not isinstance(number, numbers.Real):
        raise InvalidTypeError(f"must be a number, not {type(number).__name__}", field="number")
    sort = make_cell(number, field="number")
    return Cell(_label(text, "text"), True, sort.value)


def make_cell(value: Any, *, field: str, item: Optional[int] = None) -> Cell:
    """A cell from a string, a number (int, float, NumPy scalar), ``None`` (an empty cell) or a
    :func:`number_cell`."""
    if isinstance(value, Cell):
        return value
    if value is None:
        return Cell("", False, "")
    if isinstance(value, str):
        return Cell(display_text(value), False, "")
    if isinstance(value, bool):
        return Cell("true" if value else "false", False, "")
    if isinstance(value, numbers.Integral):
        return Cell(str(int(value)), True, str(int(value)))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            sort_key = "NaN"
        elif math.isinf(number):
            sort_key = "Infinity" if number > 0 else "-Infinity"
        else:
            sort_key = repr(number)
        return Cell(format_number(number), True, sort_key)
    raise InvalidTypeError(f"must be a string, a number or None, not {type(value).__name__}",
                           field=field, item=item)


def _label(value: Any, field: str, item: Optional[int] = None) -> str:
    if not isinstance(value, str):
        raise InvalidTypeError(f"must be a string, not {type(value).__name__}", field=field, item=item)
    return display_text(value)


class Segment(NamedTuple):
    """A run of one diff pane: ``op`` is ``eq``, ``sub``, ``del``, ``ins`` or ``gap`` (an empty
    marker where the other text has an insertion or deletion); ``index`` pairs it with the
    segment of the same index in the other pane. ``tip`` is shown on hover; an error of an
    :func:`aligned_diff` has an ``anchor`` (its id) and a ``link`` (the next error's)."""

    op: str
    index: int
    text: str
    tip: str = ""
    anchor: str = ""
    link: str = ""


class Pane(NamedTuple):
    label: str
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class Section:
    """One block of a report page. Build it with a section builder, not directly."""

    kind: str
    title: str
    rows: tuple = ()
    columns: tuple[str, ...] = ()
    sort_col: Optional[int] = None
    sort_dir: str = "ascending"
    panes: tuple[Pane, ...] = ()
    svg: Any = None
    children: tuple["Section", ...] = ()
    open: bool = False
    text: str = ""
    lines: tuple["DiffLine", ...] = ()
    anchor: str = ""


def _sections(children: Iterable[Any]) -> tuple[Section, ...]:
    out = tuple(children)
    for index, child in enumerate(out):
        if not isinstance(child, Section):
            raise InvalidTypeError(f"must be built by a section builder, not {type(child).__name__}",
                                   field="children", item=index)
    return out


def group(title: str, children: Iterable[Section]) -> Section:
    """A titled block of sections: its title is a heading, its children's titles one level below."""
    return Section("group", _label(title, "title"), children=_sections(children))


def details_block(summary: str, children: Iterable[Section], *, open: bool = False) -> Section:
    """A collapsible ``<details>`` block: ``summary`` is the line always shown, ``children`` the
    body (shown when ``open``, or when the reader clicks; no script needed; printed expanded)."""
    return Section("details", _label(summary, "summary"), children=_sections(children), open=bool(open))


def note(text: str) -> Section:
    """One paragraph of text (an empty state, a count of what was left out)."""
    return Section("note", "", text=_label(text, "text"))


def text_block(title: str, text: str) -> Section:
    """A preformatted text (an error message, a log), line breaks kept."""
    return Section("pre", _label(title, "title"), text=_label(text, "text"))


def summary_table(title: str, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Section:
    """A key/value table (corpus totals, run settings); values are strings, numbers or None."""
    pairs = list(items.items() if isinstance(items, Mapping) else items)
    rows = []
    for index, pair in enumerate(pairs):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise InvalidTypeError("must be a (key, value) pair", field="items", item=index)
        rows.append((_label(pair[0], "items key", index), make_cell(pair[1], field="items value", item=index)))
    return Section("summary", _label(title, "title"), rows=tuple(rows))


def data_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
               sort_by: Optional[int | str] = None, descending: bool = False) -> Section:
    """A table sortable by clicking a column header; ``sort_by`` (column index or name) is the
    order the page opens in. Numbers sort numerically (NaN last), text by character code."""
    names = tuple(_label(c, "columns", i) for i, c in enumerate(columns))
    if not names:
        raise InvalidValueError("must name at least one column", field="columns")
    table_rows = []
    for index, row in enumerate(rows):
        row = list(row)
        if len(row) != len(names):
            raise InvalidValueError(f"has {len(row)} cells, expected {len(names)} (one per column)",
                                    field="rows", item=index)
        table_rows.append(tuple(make_cell(v, field="rows", item=index) for v in row))
    sort_col = None
    if sort_by is not None:
        if isinstance(sort_by, str):
            if sort_by not in columns:
                raise InvalidValueError(f"{sort_by!r} is not one of the columns", field="sort_by")
            sort_col = list(columns).index(sort_by)
        elif isinstance(sort_by, numbers.Integral) and not isinstance(sort_by, bool) and 0 <= sort_by < len(names):
            sort_col = int(sort_by)
        else:
            raise InvalidValueError(f"must be a column name or an index below {len(names)}", field="sort_by")
    return Section("table", _label(title, "title"), rows=tuple(table_rows), columns=names,
                   sort_col=sort_col, sort_dir="descending" if descending else "ascending")


_OPS = {"replace": "sub", "delete": "del", "insert": "ins"}


def _diff_runs(gt: str, pred: str, ops: Iterable[Sequence[Any]]) -> list[tuple[str, str, str]]:
    """(op, gt text, pred text) runs of an edit script; checks the script really turns gt into pred."""
    runs: list[tuple[str, str, str]] = []

    def add(op: str, a: str, b: str) -> None:
        if runs and runs[-1][0] == op:
            runs[-1] = (op, runs[-1][1] + a, runs[-1][2] + b)
        else:
            runs.append((op, a, b))

    def equal_run(i_end: int, j_end: int, index: Any) -> None:
        if i_end > len(gt) or j_end > len(pred):
            raise InvalidValueError(f"position ({i_end}, {j_end}) is past the end of the texts",
                                    field="ops", item=index)
        if i_end - i != j_end - j or i_end < i:
            raise InvalidValueError(f"operation at ({i_end}, {j_end}) does not follow the previous one "
                                    f"(expected positions increasing in step)", field="ops", item=index)
        if gt[i:i_end] != pred[j:j_end]:
            raise InvalidValueError("leaves unequal characters unedited: not an edit script of these texts",
                                    field="ops", item=index)
        if i_end > i:
            add("eq", gt[i:i_end], pred[j:j_end])

    i = j = 0
    for index, op in enumerate(ops):
        if len(op) != 3 or op[0] not in _OPS or not all(
                isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in op[1:]):
            raise InvalidValueError("must be ('replace' | 'delete' | 'insert', gt_pos, pred_pos)",
                                    field="ops", item=index)
        name, p, q = _OPS[op[0]], int(op[1]), int(op[2])
        equal_run(p, q, index)
        if (name != "ins" and p >= len(gt)) or (name != "del" and q >= len(pred)):
            raise InvalidValueError(f"position ({p}, {q}) is past the end of the texts", field="ops", item=index)
        if name == "sub":
            add("sub", gt[p], pred[q])
            i, j = p + 1, q + 1
        elif name == "del":
            add("del", gt[p], "")
            i, j = p + 1, q
        else:
            add("ins", "", pred[q])
            i, j = p, q + 1
    equal_run(len(gt), len(pred), "end")
    return runs


def diff_view(title: str, gt: str, pred: str, ops: Iterable[Sequence[Any]], *,
              labels: tuple[str, str] = ("ground truth", "prediction")) -> Section:
    """Ground truth and prediction side by side, with every substitution, deletion and insertion
    highlighted, from an edit script ``ops`` of ``(op, gt_pos, pred_pos)`` triples as
    :func:`scorekit.batch.editops` (or ``rapidfuzz`` ``Levenshtein.editops(...).as_list()``)
    returns. The script is checked against the texts. Each pane's spans concatenate to
    ``display_text`` of its text; segment ``k`` of one pane corresponds to segment ``k`` of the
    other (the other side of a deletion or insertion is an empty ``gap`` marker)."""
    if not isinstance(gt, str) or not isinstance(pred, str):
        raise InvalidTypeError("ground truth and prediction must be strings", field="gt/pred")
    return _diff_section(title, [(op, a, b, "", "") for op, a, b in _diff_runs(gt, pred, ops)], labels, "")


def _diff_section(title: str, runs: Sequence[tuple[str, str, str, str, str]], labels: tuple[str, str],
                  anchor: str) -> Section:
    """The ``diff`` section of ``(op, gt text, pred text, gt tip, pred tip)`` runs; with an
    ``anchor`` prefix, every error run links to the next one (the last to the first)."""
    if len(labels) != 2:
        raise InvalidValueError("must be two labels (ground truth, prediction)", field="labels")
    errors = [index for index, run in enumerate(runs) if run[0] != "eq"]
    number = {index: k for k, index in enumerate(errors)}
    gt_segments, pred_segments = [], []
    for index, (op, a, b, a_tip, b_tip) in enumerate(runs):
        marks = [("", ""), ("", "")]
        if anchor and index in number:
            k = number[index]
            after = (k + 1) % len(errors)
            marks = [(f"{anchor}-{k}", f"{anchor}-{after}"), (f"{anchor}-{k}o", f"{anchor}-{after}o")]
        gt_segments.append(Segment("gap" if op == "ins" else op, index, display_text(a), display_text(a_tip),
                                   *marks[0]))
        pred_segments.append(Segment("gap" if op == "del" else op, index, display_text(b), display_text(b_tip),
                                     *marks[1]))
    panes = (Pane(_label(labels[0], "labels", 0), tuple(gt_segments)),
             Pane(_label(labels[1], "labels", 1), tuple(pred_segments)))
    first = f"{anchor}-0" if anchor and errors else ""
    return Section("diff", _label(title, "title"), panes=panes, anchor=first)


_ALIGNED_OPS = ("eq", "sub", "del", "ins")


def aligned_diff(title: str, runs: Iterable[Sequence[str]], *, anchor: str,
                 labels: tuple[str, str] = ("ground truth", "prediction")) -> Section:
    """Two aligned texts side by side from their runs ``(op, gt text, pred text, gt tip, pred
    tip)`` (``op``: ``eq``, ``sub``, ``del`` or ``ins``; a tip, such as the segment id a run lies
    in, is shown on hover). Every error run is a link to the next error (the last to the first),
    so a reader jumps from error to error without script; ``anchor`` (letters, digits and ``-``)
    prefixes their ids and must be unique on the page."""
    if not isinstance(anchor, str) or not anchor or not all(c.isascii() and (c.isalnum() or c == "-") for c in anchor):
        raise InvalidValueError("must be a non-empty id of ASCII letters, digits and '-'", field="anchor")
    checked = []
    for index, run in enumerate(runs):
        run = tuple(run)
        if len(run) != 5 or run[0] not in _ALIGNED_OPS or not (
                isinstance(run[1], str) and isinstance(run[2], str) and isinstance(run[3], str)
                and isinstance(run[4], str)):
            raise InvalidValueError("must be (op, gt text, pred text, gt tip, pred tip) with op one of "
                                    f"{', '.join(_ALIGNED_OPS)}", field="runs", item=index)
        if (run[0] == "eq" and run[1] != run[2]) or (run[0] == "ins" and run[1]) or (run[0] == "del" and run[2]):
            raise InvalidValueError(f"a {run[0]!r} run with these texts is not an alignment", field="runs", item=index)
        checked.append(run)
    return _diff_section(title, checked, labels, anchor)


class DiffLine(NamedTuple):
    """One row of a :func:`line_diff`: ``op`` is ``eq``, ``sub`` (the line changed), ``del``,
    ``ins`` or ``skip`` (``count`` unchanged lines left out); each side is its line number and
    its ``(op, text)`` segments (``eq`` or ``chg`` inside a changed line)."""

    op: str
    left_no: Optional[int]
    left: tuple[tuple[str, str], ...]
    right_no: Optional[int]
    right: tuple[tuple[str, str], ...]
    count: int = 0


#: Most lines per side, and most characters of one changed line pair diffed character by character.
MAX_DIFF_LINES = 5000
MAX_INLINE_DIFF_CHARS = 4000


def _inline(a: str, b: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    if len(a) + len(b) > MAX_INLINE_DIFF_CHARS:
        return ((("chg", display_text(a)),) if a else ()), ((("chg", display_text(b)),) if b else ())
    left: list[tuple[str, str]] = []
    right: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        op = "eq" if tag == "equal" else "chg"
        if i2 > i1:
            left.append((op, display_text(a[i1:i2])))
        if j2 > j1:
            right.append((op, display_text(b[j1:j2])))
    return tuple(left), tuple(right)


def line_diff(title: str, left: str, right: str, *, labels: tuple[str, str] = ("expected", "actual"),
              context: Optional[int] = 3) -> Section:
    """Two texts compared line by line, side by side with line numbers; inside a changed line,
    the characters that differ are highlighted. The raw texts are diffed and each piece is then
    shown as text, so no escape sequence is ever split. Runs of unchanged lines further than
    ``context`` lines from a change are collapsed into one "unchanged lines" row (``None``: all
    shown). Each side may have at most :data:`MAX_DIFF_LINES` lines."""
    if not isinstance(left, str) or not isinstance(right, str):
        raise InvalidTypeError("both texts must be strings", field="left/right")
    if len(labels) != 2:
        raise InvalidValueError("must be two labels", field="labels")
    if context is not None and (isinstance(context, bool) or not isinstance(context, numbers.Integral)
                                or context < 0):
        raise InvalidValueError("must be None or a non-negative integer", field="context")
    a, b = left.split("\n"), right.split("\n")
    if max(len(a), len(b)) > MAX_DIFF_LINES:
        raise InputTooLargeError(f"has {max(len(a), len(b))} lines; a line diff shows at most {MAX_DIFF_LINES}",
                                 field="left/right")
    rows: list[DiffLine] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows.extend(DiffLine("eq", i1 + k + 1, (("eq", display_text(a[i1 + k])),), j1 + k + 1,
                                 (("eq", display_text(b[j1 + k])),)) for k in range(i2 - i1))
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            l_seg, r_seg = _inline(a[i1 + k], b[j1 + k])
            rows.append(DiffLine("sub", i1 + k + 1, l_seg, j1 + k + 1, r_seg))
        rows.extend(DiffLine("del", i + 1, (("chg", display_text(a[i])),), None, ()) for i in range(i1 + paired, i2))
        rows.extend(DiffLine("ins", None, (), j + 1, (("chg", display_text(b[j])),)) for j in range(j1 + paired, j2))
    if context is not None:
        near = [False] * len(rows)
        for index, row in enumerate(rows):
            if row.op != "eq":
                for k in range(max(0, index - context), min(len(rows), index + context + 1)):
                    near[k] = True
        kept: list[DiffLine] = []
        for index, row in enumerate(rows):
            if near[index] or row.op != "eq":
                kept.append(row)
            elif kept and kept[-1].op == "skip":
                kept[-1] = kept[-1]._replace(count=kept[-1].count + 1)
            else:
                kept.append(DiffLine("skip", None, (), None, (), 1))
        rows = kept
    return Section("linediff", _label(title, "title"), columns=(_label(labels[0], "labels", 0),
                                                                _label(labels[1], "labels", 1)),
                   lines=tuple(rows))
