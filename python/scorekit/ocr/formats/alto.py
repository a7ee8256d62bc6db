"""ALTO v1 to v4: the document text as dinglehopper 0.11 extracts it, and the segments of one level.

The text is every ``TextLine`` in document order, joined by newlines; a line's text is the
``CONTENT`` of its ``String`` children joined by single spaces, normalised
(:func:`~scorekit.ocr.formats.normalization.normalize_text`). ``SP`` adds nothing beyond that
space; ``HYP`` and ``SUBS_CONTENT`` do not change the text (a hyphenated word stays in its two
written parts, without the hyphen): that is dinglehopper's reading, kept for parity
(docs/decisions.md#ocr-readers). An empty line stays in the text as an empty line.

The level only chooses the segments (the text is the same at every level): ``region`` gives the
``TextBlock`` elements, ``line`` (the default) the ``TextLine`` elements, ``word`` the ``String``
elements and ``glyph`` the ``Glyph`` elements (ALTO 3 and later). Boxes are ``HPOS``, ``VPOS``,
``HPOS + WIDTH``, ``VPOS + HEIGHT`` in the file's ``MeasurementUnit``; confidences are ``WC``
(words) and ``GC`` (glyphs).
"""

from __future__ import annotations

from typing import Any, Optional, Union

from scorekit.ocr.formats.model import OcrDocument, OcrFormatError, Segment, finite_number
from scorekit.ocr.formats.normalization import normalize_checked

__all__ = ["NAMESPACES", "AltoReader"]

#: The ALTO namespaces read, with the major version each names.
NAMESPACES = {
    "http://schema.ccs-gmbh.com/ALTO": "1",
    "http://www.loc.gov/standards/alto/ns-v2#": "2",
    "http://www.loc.gov/standards/alto/ns-v3#": "3",
    "http://www.loc.gov/standards/alto/ns-v4#": "4",
}
_ELEMENT = {"region": "TextBlock", "line": "TextLine", "word": "String", "glyph": "Glyph"}
_CONFIDENCE = {"word": "WC", "glyph": "GC"}



def _box(path: Any, element: Any) -> Optional[tuple[float, float, float, float]]:
    values = [finite_number(path, element, name, element.get(name)) for name in ("HPOS", "VPOS", "WIDTH", "HEIGHT")]
    if None in values:
        return None
    x, y, width, height = values
    return (x, y, x + width, y + height)


class AltoReader:
    """Reads one ALTO document as :func:`~scorekit.ocr.formats.xml.stream_xml` hands it over:
    each line's text when the line ends, each segment when its element ends (both kept in
    document order); :meth:`document` gives the :class:`OcrDocument`, or raises the first error
    a whole-tree read would raise (the first unreadable line, else the first unreadable segment).

    Words and glyphs are read from their line's subtree when the line ends (one parser event per
    word would cost more than the rest of the read). That is their document order when every
    ``String`` (``Glyph``) lies in a ``TextLine`` and lines do not nest, as ALTO's schema has it;
    a file where one does not is read again with ``by_event``: one event per word or glyph."""

    format = "alto"

    def __init__(self, path: Any, root: Any, level: Optional[str], by_event: bool = False) -> None:
        namespace = root.tag.partition("}")[0].lstrip("{") if root.tag.startswith("{") else None
        self.error = None if namespace in NAMESPACES else OcrFormatError(
            path, f"unknown ALTO namespace {namespace!r} (read: {', '.join(NAMESPACES)})", root)
        self.path, self.level, self.version = path, level or "line", NAMESPACES.get(namespace or "")
        ns = "{" + str(namespace) + "}"
        self.line_tag, self.segment_tag, self.string_tag = ns + "TextLine", ns + _ELEMENT[self.level], ns + "String"
        # lines and blocks leave the tree once read; strings stay until their line has read them
        self.releases, self.kept = frozenset((self.line_tag, ns + "TextBlock")), frozenset((self.string_tag,))
        self.from_lines = self.level in _CONFIDENCE and not by_event
        self.tags = sorted(self.releases | (set() if self.from_lines else {self.segment_tag}))
        self.read_line: Any = None  # the line whose words or glyphs were just read
        self.irregular = False  # a word or glyph outside a line, or lines in lines: read again by event
        self.lines: list[Union[str, OcrFormatError, None]] = []  # every line's text, in document order
        self.segments: list[Union[Segment, OcrFormatError, None]] = []  # every segment, in document order
        self.open_lines: list[int] = []  # the places of the open lines
        self.open_segments: list[tuple[int, int]] = []  # per open segment: its place, the number of lines before it

    def leaving(self, element: Any) -> None:
        if self.from_lines and element is not self.read_line and next(element.iter(self.segment_tag), None) is not None:
            self.irregular = True

    def start(self, element: Any) -> None:
        if self.error is not None:
            return
        if element.tag == self.segment_tag:
            self.open_segments.append((len(self.segments), len(self.lines)))
            self.segments.append(None)
        if element.tag == self.line_tag:
            self.open_lines.append(len(self.lines))
            self.lines.append(None)

    def end(self, element: Any) -> None:
        if self.error is not None:
            return
        if element.tag == self.line_tag:
            try:
                text: Union[str, OcrFormatError] = normalize_checked(self.path, element, " ".join(
                    s.get("CONTENT", "") for s in element.iterchildren(self.string_tag)))
            except OcrFormatError as error:
                text = error
            self.lines[self.open_lines.pop()] = text
            if self.from_lines:
                self.read_line = element
                if next(element.iterancestors(self.line_tag), None) is not None:
                    self.irregular = True
                self.segments.extend(self.segment(e, 0) for e in element.iter(self.segment_tag))
        if element.tag == self.segment_tag:
            place, lines_before = self.open_segments.pop()
            self.segments[place] = self.segment(element, lines_before)

    def segment(self, element: Any, lines_before: int) -> Union[Segment, OcrFormatError]:
        """The segment of ``element``, which ends now (``lines_before``: the lines before it); a
        block's or line's text is its lines' (which have ended: a line ends before its segment)."""
        level = self.level
        try:
            if level in _CONFIDENCE:
                text = normalize_checked(self.path, element, element.get("CONTENT", ""))
            else:
                lines = self.lines[lines_before:len(self.lines) if level == "region" else lines_before + 1]
                for line in lines:
                    if isinstance(line, OcrFormatError):
                        return line  # raised first anyway, as the line's error
                text = "\n".join(lines)  # type: ignore[arg-type]  # every line is a text
            confidence = finite_number(self.path, element, _CONFIDENCE[level], element.get(_CONFIDENCE[level])) \
                if level in _CONFIDENCE else None
            return Segment(element.get("ID"), level, text, _box(self.path, element), None, confidence)
        except OcrFormatError as error:
            return error

    def document(self) -> OcrDocument:
        """The document read (module docs); what cannot be read raises its error."""
        if self.error is not None:
            raise self.error
        if self.irregular:
            from scorekit.ocr.formats.xml import stream_xml

            with open(self.path, "rb") as handle:
                reader = stream_xml(self.path, handle, lambda root: AltoReader(self.path, root, self.level, True))
            return reader.document()
        for found in (self.lines, self.segments):
            for item in found:
                if isinstance(item, OcrFormatError):
                    raise item
        return OcrDocument(str(self.path), "alto", "\n".join(self.lines), tuple(self.segments),  # type: ignore
                           self.version)
