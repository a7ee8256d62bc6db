"""An image with shapes drawn over it (:func:`image_overlay`): a scanned page with its boxes,
each filled with the colour of a value (an error rate) and titled with its label. A section
builder of :mod:`scorekit.report` like the charts (imported from this module).

The image is embedded as a ``data:`` URI (the page's Content-Security-Policy allows images from
``data:`` and nothing else), its format and size read from its own header (PNG, JPEG or GIF; a
file that is none of these is refused, as is SVG, which could carry script). Shapes are given in
the image's pixel coordinates; the drawing scales to the page. Every label is escaped here, and
colours and positions are SVG presentation attributes built from numbers, as in
:mod:`scorekit.report.charts`.
"""

from __future__ import annotations

import base64
import math
import numbers
import struct
from typing import Any, NamedTuple, Optional, Sequence

from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError
from scorekit.report.charts import _esc, _FONT, _Svg
from scorekit.report.sections import Section, _label, format_number

__all__ = ["OverlayShape", "image_overlay", "image_size", "MAX_IMAGE_BYTES", "MAX_SHAPES"]

#: Largest embedded image and most shapes an overlay accepts.
MAX_IMAGE_BYTES = 32 * 1024 * 1024
MAX_SHAPES = 20_000
_LEGEND_H = 28
_NONE_COLOUR = "#8c8c8c"


class OverlayShape(NamedTuple):
    """One shape over the image: a polygon (at least three ``(x, y)`` points, image pixels), the
    value its colour shows (``None``: no value, drawn grey and dashed) and its hover label."""

    points: Sequence[tuple[float, float]]
    value: Optional[float]
    label: str


def image_size(data: bytes) -> tuple[str, int, int]:
    """``(MIME type, width, height)`` of a PNG, JPEG or GIF image, from its header; anything else
    is an ``InvalidValueError``."""
    if not isinstance(data, (bytes, bytearray)):
        raise InvalidTypeError(f"must be bytes, not {type(data).__name__}", field="image")
    data = bytes(data)
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24 and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return "image/png", width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return "image/gif", width, height
    if data.startswith(b"\xff\xd8"):
        return ("image/jpeg", *_jpeg_size(data))
    raise InvalidValueError("is not a PNG, JPEG or GIF image", field="image")


def _jpeg_size(data: bytes) -> tuple[int, int]:
    """Width and height from the first start-of-frame marker of a JPEG."""
    k = 2
    while k + 4 <= len(data):
        if data[k] != 0xFF:
            break
        marker = data[k + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            k += 2
            continue
        (length,) = struct.unpack(">H", data[k + 2:k + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC) and k + 9 <= len(data):
            height, width = struct.unpack(">HH", data[k + 5:k + 9])
            return width, height
        k += 2 + length
    raise InvalidValueError("is a JPEG without a readable frame header", field="image")


def value_colour(value: Optional[float], scale_max: float) -> str:
    """The fill of a value: green at 0, through yellow, to red at ``scale_max`` and above; grey
    for ``None``."""
    if value is None:
        return _NONE_COLOUR
    level = min(max(value / scale_max, 0.0), 1.0)
    red = round(255 * min(1.0, 2 * level))
    green = round(200 * min(1.0, 2 * (1 - level)))
    return f"rgb({red},{green},0)"


def _point(p: Any, field: str, item: int) -> tuple[float, float]:
    if not isinstance(p, (tuple, list)) or len(p) != 2:
        raise InvalidValueError(f"points must be (x, y) pairs, got {p!r}", field=field, item=item)
    for v in p:
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise InvalidValueError(f"coordinates must be finite numbers, got {p!r}", field=field, item=item)
    return float(p[0]), float(p[1])


def image_overlay(title: str, image: bytes, shapes: Sequence[OverlayShape], *, scale_max: float = 1.0,
                  value_name: str = "value", width: int = 900) -> Section:
    """The ``image`` (PNG, JPEG or GIF bytes) with ``shapes`` drawn over it, each filled with the
    colour of its value (green 0 → red ``scale_max`` and above; grey and dashed without a value)
    and titled with its label and value; a legend above names ``value_name``. Shown at most
    ``width`` pixels wide."""
    title = _label(title, "title")
    value_name = _label(value_name, "value_name")
    mime, img_w, img_h = image_size(image)
    if len(image) > MAX_IMAGE_BYTES:
        raise InputTooLargeError(f"is {len(image)} bytes; an overlay embeds at most {MAX_IMAGE_BYTES}", field="image")
    if img_w <= 0 or img_h <= 0:
        raise InvalidValueError(f"has no pixels ({img_w} x {img_h})", field="image")
    if isinstance(scale_max, bool) or not isinstance(scale_max, numbers.Real) or not math.isfinite(scale_max) \
            or scale_max <= 0:
        raise InvalidValueError(f"must be a finite number > 0, got {scale_max!r}", field="scale_max")
    shapes = list(shapes)
    if len(shapes) > MAX_SHAPES:
        raise InputTooLargeError(f"has {len(shapes)} shapes; an overlay draws at most {MAX_SHAPES}", field="shapes")
    body = []
    for k, shape in enumerate(shapes):
        if not isinstance(shape, OverlayShape):
            raise InvalidTypeError(f"must be an OverlayShape, not {type(shape).__name__}", field="shapes", item=k)
        points = [_point(p, "shapes", k) for p in shape.points]
        if len(points) < 3:
            raise InvalidValueError(f"needs at least 3 points, got {len(points)}", field="shapes", item=k)
        value = shape.value
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                                  or not math.isfinite(value)):
            raise InvalidValueError(f"value must be a finite number or None, got {value!r}", field="shapes", item=k)
        label = _label(shape.label, "shapes label", k)
        shown = "no value" if value is None else format_number(value)
        colour = value_colour(value, float(scale_max))
        dash = ' stroke-dasharray="8 6"' if value is None else ""
        body.append(f'<polygon points="{" ".join(f"{x:.2f},{y:.2f}" for x, y in points)}" fill="{colour}" '
                    f'fill-opacity="0.3" stroke="{colour}" stroke-width="{max(img_w, img_h) / 400:.2f}"{dash}>'
                    f'<title>{_esc(label)} \u00b7 {_esc(value_name)} {shown}</title></polygon>')
    shown_w = min(width, img_w)
    shown_h = img_h * shown_w / img_w
    legend = [f'<text x="0" y="18">{_esc(value_name)}:</text>']
    x = 12 + 8 * len(value_name)
    for value, text in ((0.0, "0"), (scale_max / 2, format_number(scale_max / 2)),
                        (float(scale_max), f"\u2265 {format_number(scale_max)}"), (None, "no value")):
        legend.append(f'<rect x="{x}" y="6" width="14" height="14" fill="{value_colour(value, float(scale_max))}"/>'
                      f'<text x="{x + 18}" y="18">{_esc(text)}</text>')
        x += 30 + 8 * len(text)
    encoded = base64.b64encode(bytes(image)).decode("ascii")
    svg = (f'<svg role="img" viewBox="0 0 {shown_w:.0f} {shown_h + _LEGEND_H:.0f}" width="{shown_w:.0f}" '
           f'height="{shown_h + _LEGEND_H:.0f}" {_FONT}><title>{_esc(title)}</title>{"".join(legend)}'
           f'<svg x="0" y="{_LEGEND_H}" width="{shown_w:.0f}" height="{shown_h:.0f}" viewBox="0 0 {img_w} {img_h}">'
           f'<image href="data:{mime};base64,{encoded}" x="0" y="0" width="{img_w}" height="{img_h}"/>'
           f'{"".join(body)}</svg></svg>')
    return Section("chart", title, svg=_Svg(svg))
