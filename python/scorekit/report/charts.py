"""Inline SVG charts (bar chart, histogram, heatmap) built as strings, every label escaped here.

The SVG carries no style attributes and no external reference, so the page's strict
Content-Security-Policy holds: colours and positions are SVG presentation attributes. Each chart
is a :class:`~scorekit.report.sections.Section` of kind ``chart``; the template inserts its SVG
as is, which is safe because only this module builds it.
"""

from __future__ import annotations

import html
import math
import numbers
from typing import Any, Optional, Sequence

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
