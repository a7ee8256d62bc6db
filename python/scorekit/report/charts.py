"""Inline SVG charts (bar chart, grouped bar chart, histogram, heatmap, flow chart of a pipeline's
steps) built as strings, every label escaped here.

The SVG carries no style attributes and no external reference, so the page's strict
Content-Security-Policy holds: colours and positions are SVG presentation attributes. Each chart
is a :class:`~scorekit.report.sections.Section` of kind ``chart``; the template inserts its SVG
as is, which is safe because only this module builds it.
"""

from __future__ import annotations

import html
import math
import numbers
from typing import Any, NamedTuple, Optional, Sequence

from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.report.sections import Section, _label, display_text, format_number

#: Largest bar count and heatmap side a chart accepts (a chart is read by a person).
MAX_BARS = 500
MAX_HEATMAP_SIDE = 120
_LABEL_CHARS = 40
_FONT = 'font-family="sans-serif" font-size="12"'


class _Svg(str):
    """SVG markup built by this module; Jinja2 inserts objects with ``__html__`` unescaped."""

    def __html__(self) -> str:
        return str(self)


def _esc(text: str) -> str:
    return html.escape(display_text(text), quote=True)


def _short(text: str) -> str:
    return text if len(text) <= _LABEL_CHARS else text[:_LABEL_CHARS - 1] + "\u2026"


def _numbers(values: Sequence[Any], field: str, *, nonnegative: bool) -> list[float]:
    """Finite numbers, integers kept as ``int`` so that counts print as counts."""
    out: list[float] = []
    for index, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InvalidTypeError(f"must be a number, not {type(v).__name__}", field=field, item=index)
        if not math.isfinite(v) or (nonnegative and v < 0):
            raise InvalidValueError(f"must be a finite{' non-negative' if nonnegative else ''} number, not {v}",
                                    field=field, item=index)
        out.append(int(v) if isinstance(v, numbers.Integral) else float(v))
    return out


def _svg(title: str, width: float, height: float, body: list[str]) -> _Svg:
    return _Svg(f'<svg role="img" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
                f'height="{height:.0f}" {_FONT}><title>{_esc(title)}</title>{"".join(body)}</svg>')


def bar_chart(title: str, labels: Sequence[str], values: Sequence[float], *, width: int = 720) -> Section:
    """Horizontal bars, one per label, lengths proportional to the non-negative ``values``."""
    title = _label(title, "title")
    names = [_label(x, "labels", i) for i, x in enumerate(labels)]
    heights = _numbers(values, "values", nonnegative=True)
    if len(names) != len(heights):
        raise InvalidValueError(f"has {len(heights)} values for {len(names)} labels", field="values")
    if len(names) > MAX_BARS:
        raise InputTooLargeError(f"has {len(names)} bars; a bar chart shows at most {MAX_BARS}", field="labels")
    label_w = 14 + 8 * max((len(_short(n)) for n in names), default=1)
    value_w, bar_h, pad = 70, 20, 6
    plot_w = max(width - label_w - value_w, 100)
    top = max(heights, default=0.0) or 1.0
    body = []
    for row, (name, v) in enumerate(zip(names, heights)):
        y = pad + row * bar_h
        w = plot_w * v / top
        body.append(f'<g><title>{_esc(name)}: {format_number(v)}</title>'
                    f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{_esc(_short(name))}</text>'
                    f'<rect x="{label_w}" y="{y + 2}" width="{w:.2f}" height="{bar_h - 4}" fill="#4a78b5"/>'
                    f'<text x="{label_w + w + 4:.2f}" y="{y + 14}">{format_number(v)}</text></g>')
    return Section("chart", title, svg=_svg(title, label_w + plot_w + value_w, 2 * pad + bar_h * len(names), body))


def histogram(title: str, values: Sequence[float], *, bins: int = 10,
              range: Optional[tuple[float, float]] = None, width: int = 720, height: int = 240) -> Section:
    """Counts of ``values`` in ``bins`` equal-width bins over ``range`` (default: min to max);
    values outside ``range`` are left out, the last bin includes its upper edge."""
    title = _label(title, "title")
    data = _numbers(values, "values", nonnegative=False)
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or not 1 <= bins <= MAX_BARS:
        raise InvalidValueError(f"must be an integer from 1 to {MAX_BARS}", field="bins")
    if range is None:
        lo, hi = (min(data), max(data)) if data else (0.0, 1.0)
    else:
        lo, hi = _numbers(range, "range", nonnegative=False)
        if not lo < hi:
            raise InvalidValueError("must be (low, high) with low < high", field="range")
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    counts = [0] * bins
    for v in data:
        if lo <= v <= hi:
            counts[min(int((v - lo) / (hi - lo) * bins), bins - 1)] += 1
    left, bottom, top_pad = 50, 30, 10
    plot_w, plot_h = width - left - 40, height - bottom - top_pad
    peak = max(counts) or 1
    bar_w = plot_w / bins
    body = [f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="#555"/>',
            f'<text x="{left - 4}" y="{top_pad + 10}" text-anchor="end">{peak}</text>',
            f'<text x="{left - 4}" y="{top_pad + plot_h}" text-anchor="end">0</text>']
    for k, count in enumerate(counts):
        h = plot_h * count / peak
        x = left + k * bar_w
        a, b = lo + (hi - lo) * k / bins, lo + (hi - lo) * (k + 1) / bins
        body.append(f'<rect x="{x + 1:.2f}" y="{top_pad + plot_h - h:.2f}" width="{max(bar_w - 2, 0.5):.2f}" '
                    f'height="{h:.2f}" fill="#4a78b5"><title>[{format_number(a)}, {format_number(b)}'
                    f'{"]" if k == bins - 1 else ")"}: {count}</title></rect>')
    for x, v in ((left, lo), (left + plot_w, hi)):
        body.append(f'<text x="{x}" y="{height - 10}" text-anchor="middle">{format_number(v)}</text>')
    return Section("chart", title, svg=_svg(title, width, height, body))


def heatmap(title: str, row_labels: Sequence[str], col_labels: Sequence[str],
            matrix: Sequence[Sequence[float]]) -> Section:
    """A matrix of non-negative values as shaded cells (a confusion matrix: rows = ground truth,
    columns = prediction), each cell printed and titled ``row → column: value``."""
    title = _label(title, "title")
    rows = [_label(x, "row_labels", i) for i, x in enumerate(row_labels)]
    cols = [_label(x, "col_labels", i) for i, x in enumerate(col_labels)]
    if max(len(rows), len(cols)) > MAX_HEATMAP_SIDE:
        raise InputTooLargeError(f"is {len(rows)} x {len(cols)}; a heatmap shows at most "
                                 f"{MAX_HEATMAP_SIDE} per side", field="matrix")
    grid = [list(r) for r in matrix]
    if len(grid) != len(rows):
        raise InvalidValueError(f"has {len(grid)} rows for {len(rows)} row labels", field="matrix")
    values = []
    for i, r in enumerate(grid):
        if len(r) != len(cols):
            raise InvalidValueError(f"row has {len(r)} values for {len(cols)} column labels", field="matrix", item=i)
        values.append(_numbers(r, "matrix", nonnegative=True))
    cell = 30
    left = 14 + 8 * max((len(_short(n)) for n in rows), default=1)
    top = 10 + 5 * max((len(_short(n)) for n in cols), default=1)
    peak = max((v for r in values for v in r), default=0.0) or 1.0
    body = []
    for j, name in enumerate(cols):
        x, y = left + j * cell + cell / 2, top - 6
        body.append(f'<text x="{x}" y="{y}" transform="rotate(-45 {x} {y})">{_esc(_short(name))}</text>')
    for i, name in enumerate(rows):
        y = top + i * cell
        body.append(f'<text x="{left - 6}" y="{y + cell / 2 + 4}" text-anchor="end">{_esc(_short(name))}</text>')
        for j, v in enumerate(values[i]):
            x, level = left + j * cell, v / peak
            shade = round(255 - 200 * level)
            body.append(f'<g><title>{_esc(name)} \u2192 {_esc(cols[j])}: {format_number(v)}</title>'
                        f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="rgb({shade},{shade},255)" '
                        f'stroke="#fff"/><text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle" '
                        f'font-size="10" fill="{"#fff" if level > 0.6 else "#000"}">{format_number(v)}</text></g>')
    return Section("chart", title, svg=_svg(title, left + cell * len(cols) + 10, top + cell * len(rows) + 10, body))


#: Colours of the series of a report, in the order the series are first drawn.
PALETTE = ("#4a78b5", "#e08a2c", "#5aa469", "#b5564a", "#7a5ab5", "#8c8c8c", "#c2569b", "#3a9fa8")


class SeriesColours:
    """The colour of each named series (a pipeline, an engine, an agent version) of one report.

    The first name asked for gets ``PALETTE[0]``, the next new name ``PALETTE[1]``, and so on;
    past the palette, hues spaced by the golden angle, so no two names share a colour. Give one
    instance to every chart of a page and a series keeps its colour on all of them.

    >>> colours = SeriesColours()
    >>> colours("v2"), colours("v1"), colours("v2")
    ('#4a78b5', '#e08a2c', '#4a78b5')
    """

    def __init__(self) -> None:
        self._assigned: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        if name not in self._assigned:
            k = len(self._assigned)
            if k < len(PALETTE):
                self._assigned[name] = PALETTE[k]
            else:
                self._assigned[name] = f"hsl({(k - len(PALETTE)) * 137.508 % 360:.1f},55%,42%)"
        return self._assigned[name]


def grouped_bar_chart(title: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[Optional[float]]]], *,
                      texts: Optional[Sequence[Sequence[str]]] = None, width: int = 720,
                      colours: Optional[SeriesColours] = None) -> Section:
    """Horizontal bars in groups: one group per label, one bar per series (``(name, values)``,
    one value per label, a legend on top). Values may be negative (the bar goes left of the
    zero line); ``None`` is a gap marked "no value", never a zero. ``texts`` (same shape as the
    values) is what each bar is labelled with (default: the number). ``colours`` is the page's
    :class:`SeriesColours`, shared by its charts (default: a new one, so the series take the
    :data:`PALETTE` in order)."""
    title = _label(title, "title")
    names = [_label(x, "labels", i) for i, x in enumerate(labels)]
    rows: list[tuple[str, list[Optional[float]]]] = []
    for k, pair in enumerate(series):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise InvalidTypeError("must be a (name, values) pair", field="series", item=k)
        values = list(pair[1])
        if len(values) != len(names):
            raise InvalidValueError(f"has {len(values)} values for {len(names)} labels", field="series", item=k)
        present = _numbers([v for v in values if v is not None], "series", nonnegative=False)
        it = iter(present)
        rows.append((_label(pair[0], "series name", k), [None if v is None else next(it) for v in values]))
    if len(names) * max(len(rows), 1) > MAX_BARS:
        raise InputTooLargeError(f"has {len(names) * len(rows)} bars; a chart shows at most {MAX_BARS}", field="labels")
    if texts is None:
        shown = [[None if v is None else format_number(v) for v in values] for _, values in rows]
    else:
        shown = [[_label(t, "texts", k) for t in row] for k, row in enumerate(texts)]
        if len(shown) != len(rows) or any(len(r) != len(names) for r in shown):
            raise InvalidValueError("must have one text per value", field="texts")
    every = [v for _, values in rows for v in values if v is not None]
    lo, hi = min([0.0, *every]), max([0.0, *every])
    if hi == lo:
        hi = lo + 1.0
    bar_h, group_gap, legend_h = 16, 12, 24
    label_w = 14 + 8 * max((len(_short(n)) for n in names), default=1)
    value_w = 80
    plot_w = max(width - label_w - 2 * value_w, 120)
    x_zero = label_w + value_w + plot_w * (0.0 - lo) / (hi - lo)
    if colours is not None and not isinstance(colours, SeriesColours):
        raise InvalidTypeError(f"must be a SeriesColours or None, not {type(colours).__name__}", field="colours")
    colour_of = colours if colours is not None else SeriesColours()
    fills = [colour_of(name) for name, _ in rows]
    body = []
    x = label_w
    for (name, _), colour in zip(rows, fills):
        body.append(f'<rect x="{x}" y="6" width="12" height="12" fill="{colour}"/>'
                    f'<text x="{x + 16}" y="16">{_esc(_short(name))}</text>')
        x += 30 + 8 * len(_short(name))
    group_h = bar_h * max(len(rows), 1) + group_gap
    for row, label in enumerate(names):
        top = legend_h + row * group_h
        body.append(f'<text x="{label_w - 6}" y="{top + group_h / 2}" text-anchor="end">{_esc(_short(label))}</text>')
        for k, (name, values) in enumerate(rows):
            y, v, text = top + k * bar_h, values[row], shown[k][row]
            tip = f"{_esc(label)} \u00b7 {_esc(name)}: {_esc(text) if v is not None else 'no value'}"
            if v is None:
                body.append(f'<g><title>{tip}</title><text x="{x_zero + 4:.2f}" y="{y + 12}" fill="#777" '
                            f'font-size="10">no value</text></g>')
                continue
            w = plot_w * abs(v) / (hi - lo)
            left = x_zero - w if v < 0 else x_zero
            end, anchor = (left - 4, "end") if v < 0 else (left + w + 4, "start")
            body.append(f'<g><title>{tip}</title><rect x="{left:.2f}" y="{y + 1}" width="{w:.2f}" '
                        f'height="{bar_h - 2}" fill="{fills[k]}"/>'
                        f'<text x="{end:.2f}" y="{y + 12}" text-anchor="{anchor}" font-size="10">{_esc(text)}</text></g>')
    height = legend_h + group_h * len(names) + 4
    body.append(f'<line x1="{x_zero:.2f}" y1="{legend_h - 2}" x2="{x_zero:.2f}" y2="{height - 2}" stroke="#555"/>')
    return Section("chart", title, svg=_svg(title, label_w + plot_w + 2 * value_w, height, body))


class FlowNode(NamedTuple):
    """One box of a :func:`flow_chart`: its text lines (the first in bold), the boxes drawn side by
    side inside it (a parallel group's steps), and its tone: ``plain``, ``good``, ``fair``, ``poor``."""

    lines: tuple[str, ...]
    children: tuple["FlowNode", ...] = ()
    tone: str = "plain"


_TONES = {"plain": "#f2f2f2", "good": "#d7f0d2", "fair": "#fbe7b9", "poor": "#f6cccc"}
#: Most boxes and nesting depth of a flow chart.
MAX_FLOW_NODES = 1000
MAX_FLOW_DEPTH = 30
_CHAR_W, _LINE_H, _PAD, _GAP, _ARROW = 7, 16, 8, 16, 28


def _check_flow(nodes: Sequence[Any], depth: int, count: list[int]) -> None:
    if depth > MAX_FLOW_DEPTH:
        raise InputTooLargeError(f"nests deeper than {MAX_FLOW_DEPTH} levels", field="nodes")
    for index, node in enumerate(nodes):
        if not isinstance(node, FlowNode):
            raise InvalidTypeError(f"must be a FlowNode, not {type(node).__name__}", field="nodes", item=index)
        if not node.lines:
            raise InvalidValueError("must have at least one line of text", field="nodes", item=index)
        for k, line in enumerate(node.lines):
            _label(line, "lines", k)
        if node.tone not in _TONES:
            raise InvalidValueError(f"tone must be one of {', '.join(_TONES)}, not {node.tone!r}", field="nodes",
                                    item=index)
        count[0] += 1
        if count[0] > MAX_FLOW_NODES:
            raise InputTooLargeError(f"has more than {MAX_FLOW_NODES} boxes", field="nodes")
        _check_flow(node.children, depth + 1, count)


def _measure(node: FlowNode) -> tuple[float, float]:
    text_w = max(len(_short(display_text(line))) for line in node.lines) * _CHAR_W + 2 * _PAD
    text_h = len(node.lines) * _LINE_H + _PAD
    if not node.children:
        return max(text_w, 90.0), text_h + _PAD
    sizes = [_measure(c) for c in node.children]
    inner_w = sum(w for w, _ in sizes) + _GAP * (len(sizes) - 1)
    return max(text_w, inner_w + 2 * _PAD), text_h + max(h for _, h in sizes) + 2 * _PAD


def _draw(node: FlowNode, x: float, y: float, body: list[str]) -> None:
    w, h = _measure(node)
    group = bool(node.children)
    stroke = ' stroke-dasharray="5 3"' if group else ""
    body.append(f'<g><title>{_esc(" / ".join(node.lines))}</title><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" '
                f'height="{h:.1f}" rx="6" fill="{"#fff" if group else _TONES[node.tone]}" stroke="#555"{stroke}/>')
    for k, line in enumerate(node.lines):
        weight = ' font-weight="bold"' if k == 0 else ""
        body.append(f'<text x="{x + w / 2:.1f}" y="{y + _PAD + 12 + k * _LINE_H:.1f}" text-anchor="middle"{weight}>'
                    f'{_esc(_short(line))}</text>')
    if group and node.tone != "plain":
        body.append(f'<rect x="{x + 3:.1f}" y="{y + 3:.1f}" width="8" height="8" fill="{_TONES[node.tone]}" '
                    f'stroke="#555"/>')
    body.append("</g>")
    if group:
        sizes = [_measure(c) for c in node.children]
        inner_w = sum(cw for cw, _ in sizes) + _GAP * (len(sizes) - 1)
        cx, cy = x + (w - inner_w) / 2, y + len(node.lines) * _LINE_H + _PAD + _PAD
        for child, (cw, _) in zip(node.children, sizes):
            _draw(child, cx, cy, body)
            cx += cw + _GAP


def flow_chart(title: str, nodes: Sequence[FlowNode]) -> Section:
    """A pipeline's steps top to bottom, joined by arrows; a node with children is a dashed box
    around them, drawn side by side (steps that run in parallel). Every text is escaped; at most
    :data:`MAX_FLOW_NODES` boxes nested at most :data:`MAX_FLOW_DEPTH` deep."""
    title = _label(title, "title")
    nodes = list(nodes)
    _check_flow(nodes, 0, [0])
    sizes = [_measure(n) for n in nodes]
    margin = 10
    total_w = max((w for w, _ in sizes), default=100.0) + 2 * margin
    body: list[str] = []
    y = float(margin)
    for index, (node, (w, h)) in enumerate(zip(nodes, sizes)):
        _draw(node, (total_w - w) / 2, y, body)
        y += h
        if index + 1 < len(nodes):
            mid = total_w / 2
            body.append(f'<line x1="{mid:.1f}" y1="{y:.1f}" x2="{mid:.1f}" y2="{y + _ARROW - 6:.1f}" stroke="#555"/>'
                        f'<polygon points="{mid - 5:.1f},{y + _ARROW - 8:.1f} {mid + 5:.1f},{y + _ARROW - 8:.1f} '
                        f'{mid:.1f},{y + _ARROW:.1f}" fill="#555"/>')
            y += _ARROW
    return Section("chart", title, svg=_svg(title, total_w, y + margin, body))
