"""What every OCR format reader returns: :class:`OcrDocument` (the document text in reading order
and its segments) and :class:`Segment`, the error :class:`OcrFormatError`, the text-equiv levels,
and the geometry parsing the readers share."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from scorekit.errors import InvalidValueError

__all__ = ["LEVELS", "MAX_FILE_BYTES", "Segment", "OcrDocument", "OcrFormatError", "check_level",
           "describe_element", "bounding_box", "finite_number", "read_bytes"]

#: The text-equiv levels, coarsest first (dinglehopper's ``--textequiv-level``).
LEVELS = ("region", "line", "word", "glyph")

#: Files read whole (plain text, hOCR) larger than this are refused before they are read (a parsed
#: tree takes several times its file's size in memory; one page, even with every glyph, is a few
#: megabytes). PAGE-XML and ALTO are streamed, in the memory of what is read from them, at any size.
MAX_FILE_BYTES = 256 * 1024 * 1024

Box = tuple[float, float, float, float]
Polygon = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Segment:
    """One text unit of a document at one level: its id in the file (``None`` when it has none),
    the level, its text (normalised as the document text is), its bounding box ``(x0, y0, x1, y1)``
    and polygon in the file's coordinates where the file gives them, and its confidence (0 to 1)
    where the file gives one."""

    id: Optional[str]
    level: str
    text: str
    box: Optional[Box] = None
    polygon: Optional[Polygon] = None
    confidence: Optional[float] = None


@dataclass(frozen=True)
class OcrDocument:
    """A read OCR file: its path, its format (``page``, ``alto``, ``hocr`` or ``text``), the
    document text in reading order (joined as dinglehopper 0.11 joins it for that format and
    level), the segments of the requested level in reading order, the schema version (PAGE's
    namespace date, ALTO's major version; ``None`` for hOCR and text) and ``omitted``: the ids of
    PAGE text regions with text that the reading order leaves out (their text is not in
    :attr:`text`, as in dinglehopper)."""

    path: str
    format: str
    text: str
    segments: tuple[Segment, ...]
    version: Optional[str] = None
    omitted: tuple[str, ...] = ()


class OcrFormatError(InvalidValueError):
    """An OCR file that cannot be read as documented (malformed XML, an unknown namespace, a
    reading order naming a missing region, refused XML constructs, bad geometry …). The message
    names the file and, where there is one, the element (its line and id); both are also kept as
    the attributes ``path`` and ``element``."""

    def __init__(self, path: Any, message: str, element: Any = None) -> None:
        self.path = str(path)
        self.element = describe_element(element) if element is not None and not isinstance(element, str) else element
        where = f"{self.path}: " + (f"{self.element}: " if self.element else "")
        super().__init__(where + message)


def describe_element(element: Any) -> str:
    """``line 12 <TextRegion id="r1">``: where an element is, for error messages."""
    tag = element.tag if isinstance(element.tag, str) else "node"
    name = tag.rpartition("}")[2]
    ident = element.get("id") or element.get("ID") if isinstance(element.tag, str) else None
    label = f'<{name} id="{ident}">' if ident else f"<{name}>"
    return f"line {element.sourceline} {label}" if element.sourceline else label


def check_level(level: Optional[str]) -> Optional[str]:
    """``level`` itself when it is one of :data:`LEVELS` or ``None``; otherwise the error."""
    if level is not None and level not in LEVELS:
        raise InvalidValueError(f"must be one of {', '.join(LEVELS)} or None, got {level!r}", field="level")
    return level


def finite_number(path: Any, element: Any, name: str, text: Optional[str]) -> Optional[float]:
    """The attribute ``name``'s value ``text`` as a finite float (``None`` when absent); anything
    else is an :class:`OcrFormatError` naming the element."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise OcrFormatError(path, f"{name}={text!r} is not a finite number", element)
    return value


def bounding_box(points: Polygon) -> Box:
    """The axis-aligned box ``(x0, y0, x1, y1)`` around ``points``."""
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    return (min(xs), min(ys), max(xs), max(ys))


def read_bytes(path: Any) -> bytes:
    """The content of the file ``path``, read whole; a file larger than :data:`MAX_FILE_BYTES` is an
    :class:`OcrFormatError`."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise OcrFormatError(path, f"is larger than {MAX_FILE_BYTES:,} bytes (scorekit.ocr.formats.model.MAX_FILE_BYTES)")
    return data
