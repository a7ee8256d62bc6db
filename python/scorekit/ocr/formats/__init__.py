"""Reading OCR files: PAGE-XML, ALTO, hOCR and plain text, detected by content (docs/ocr-formats.md).

:func:`read` returns an :class:`OcrDocument`: the document text in reading order, extracted as
dinglehopper 0.11 extracts it (same joins, same whitespace, same normalisation), and the segments
of the requested text-equiv level with their ids, boxes, polygons and confidences. A file that
cannot be read as documented raises :class:`OcrFormatError` naming the file and the element;
never an empty text in its place. One module per format: :mod:`.page`, :mod:`.alto`,
:mod:`.hocr`, :mod:`.text`; XML is parsed as untrusted input (:mod:`.xml`).
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from scorekit.errors import InvalidValueError
from scorekit.ocr.formats.model import LEVELS, OcrDocument, OcrFormatError, Segment, check_level, read_bytes
from scorekit.ocr.formats.normalization import normalize_text

__all__ = ["FORMATS", "LEVELS", "OcrDocument", "OcrFormatError", "Segment", "detect", "normalize_text", "read"]

#: The formats :func:`read` knows, as :attr:`OcrDocument.format` names them.
FORMATS = ("page", "alto", "hocr", "text", "line-folder")


def _parse(path: Any, data: bytes) -> tuple[str, Any]:
    """The format of ``data`` and, for XML and HTML, its root element."""
    from scorekit.ocr.formats.xml import localname, looks_like_html, looks_like_markup, parse_html, parse_xml

    if not looks_like_markup(data):
        return "text", None
    try:
        root = parse_xml(path, data)
    except OcrFormatError:
        if looks_like_html(data):
            return "hocr", parse_html(path, data)
        raise
    name = localname(root)
    if name == "PcGts":
        return "page", root
    if name == "alto":
        return "alto", root
    if name.lower() == "html":
        return "hocr", root
    raise OcrFormatError(path, "is neither PAGE-XML (<PcGts>), ALTO (<alto>) nor hOCR (<html>)", root)


def detect(path: Union[str, os.PathLike]) -> str:
    """The format of ``path`` by its content (not its name): ``page``, ``alto``, ``hocr`` or
    ``text`` for a file, ``line-folder`` for a folder. A file that starts like markup but is not
    well-formed XML (nor HTML) is an :class:`OcrFormatError`, not text."""
    return "line-folder" if os.path.isdir(path) else _parse(path, read_bytes(path))[0]


def read(path: Union[str, os.PathLike], *, level: Optional[str] = None, format: Optional[str] = None,
         suffix: Optional[str] = None) -> OcrDocument:
    """The :class:`OcrDocument` of the OCR file ``path``.

    ``level`` is the text-equiv level (``region``, ``line``, ``word``, ``glyph``; dinglehopper's
    ``--textequiv-level``). For PAGE it chooses which ``TextEquiv`` the text comes from and
    defaults to ``region``, as dinglehopper's does; for ALTO, hOCR and text the text is the same
    at every level and ``level`` chooses the segments (default ``line``). ``format`` forces a
    format instead of detecting it from the content. A folder is a folder of line files
    (``line-folder``: every file ending in ``suffix``, by default the files' common suffix, such
    as ``.gt.txt``; see :func:`~scorekit.ocr.formats.text.read_line_folder`).
    """
    check_level(level)
    if format is not None and format not in FORMATS:
        raise InvalidValueError(f"must be one of {', '.join(FORMATS)} or None, got {format!r}", field="format")
    if os.path.isdir(path):
        if format not in (None, "line-folder"):
            raise OcrFormatError(path, f"is a folder, not a {format} file")
        from scorekit.ocr.formats.text import read_line_folder
        return read_line_folder(path, suffix)
    if format == "line-folder" or suffix is not None:
        raise OcrFormatError(path, "is a file; a suffix and the line-folder format are for folders of line files")
    data = read_bytes(path)
    detected, root = _parse(path, data) if format != "text" else ("text", None)
    if format is not None and detected != format:
        raise OcrFormatError(path, f"is {detected}, not {format}")
    if detected == "page":
        from scorekit.ocr.formats.page import read_page
        return read_page(path, root, level)
    if detected == "alto":
        from scorekit.ocr.formats.alto import read_alto
        return read_alto(path, root, level)
    if detected == "hocr":
        from scorekit.ocr.formats.hocr import read_hocr
        return read_hocr(path, root, level)
    from scorekit.ocr.formats.text import read_text_file
    return read_text_file(path, data, level)
