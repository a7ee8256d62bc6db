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
from typing import Any, Callable, Optional, Union

from scorekit.errors import InvalidValueError
from scorekit.ocr.formats import model
from scorekit.ocr.formats.model import LEVELS, OcrDocument, OcrFormatError, Segment, check_level, read_bytes
from scorekit.ocr.formats.normalization import normalize_text

__all__ = ["FORMATS", "LEVELS", "OcrDocument", "OcrFormatError", "Segment", "detect", "normalize_text", "read"]

#: The formats :func:`read` knows, as :attr:`OcrDocument.format` names them.
FORMATS = ("page", "alto", "hocr", "text", "line-folder")


class _Whole:
    """The reader of an XML file parsed whole, for a reader that needs its tree (hOCR as XHTML:
    ``read(root)`` gives the document); with ``read=None``, one that keeps nothing (the file is
    only detected, every element leaves the tree once it ends). ``format`` is the one its root
    names (``None``: none)."""

    kept: frozenset = frozenset()

    def __init__(self, path: Any, root: Any, format: Optional[str], read: Optional[Callable[[Any], OcrDocument]] = None,
                 ) -> None:
        self.root, self.format, self.read = root, format, read
        self.tags = self.releases = () if read is not None else None  # None: every element
        if read is not None and os.path.getsize(path) > model.MAX_FILE_BYTES:
            raise OcrFormatError(path, f"is larger than {model.MAX_FILE_BYTES:,} bytes "
                                       "(scorekit.ocr.formats.model.MAX_FILE_BYTES)")

    def start(self, element: Any) -> None:
        pass

    def end(self, element: Any) -> None:
        pass

    def leaving(self, element: Any) -> None:
        if self.read is not None:
            self.root = element  # the whole tree, once parsed

    def document(self) -> OcrDocument:
        assert self.read is not None  # only a reader that reads is asked for its document
        return self.read(self.root)


#: A PAGE file of more than this many parser chunks frees each text line once read (memory bounded
#: by a line); a smaller one frees each region once read (the whole region's lines at once: a
#: tenth of the per-element work of the streamed reader on an ordinary page; the same document).
LINE_RELEASES_FROM = 4


def _choose(path: Any, level: Optional[str], format: Optional[str], read: bool, root: Any, size: int) -> Any:
    """The reader of the XML file of ``size`` bytes whose root element is ``root``: with ``read``,
    the format's own reader, unless the root names none or another than ``format``; otherwise one
    that keeps nothing."""
    from scorekit.ocr.formats.xml import CHUNK_BYTES, localname

    name = localname(root)
    detected = {"PcGts": "page", "alto": "alto"}.get(name, "hocr" if name.lower() == "html" else None)
    if not read or detected is None or format not in (None, detected):
        return _Whole(path, root, detected)
    if detected == "page":
        from scorekit.ocr.formats.page import PageReader
        return PageReader(path, root, level, release_lines=size > LINE_RELEASES_FROM * CHUNK_BYTES)
    if detected == "alto":
        from scorekit.ocr.formats.alto import AltoReader
        return AltoReader(path, root, level)
    from scorekit.ocr.formats.hocr import read_hocr
    return _Whole(path, root, "hocr", lambda tree: read_hocr(path, tree, level))


def _read_markup(path: Any, head: bytes, level: Optional[str], format: Optional[str],
                 read: bool) -> tuple[str, Callable[[], OcrDocument]]:
    """The format of the markup file ``path`` (starting with ``head``), checked to be ``format``
    when one is given, and the function that gives its document. With ``read``, the file is
    read as that format while it is parsed; otherwise it is only parsed (to detect it). XML that
    is refused but starts like HTML is parsed as HTML (hOCR)."""
    from scorekit.ocr.formats.xml import looks_like_html, parse_html, stream_xml

    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            reader = stream_xml(path, handle, lambda root: _choose(path, level, format, read, root, size))
    except OcrFormatError:
        if not looks_like_html(head):
            raise
        from scorekit.ocr.formats.hocr import read_hocr
        root = parse_html(path, read_bytes(path))
        detected, document = "hocr", lambda: read_hocr(path, root, level)
    else:
        if reader.format is None:
            raise OcrFormatError(path, "is neither PAGE-XML (<PcGts>), ALTO (<alto>) nor hOCR (<html>)", reader.root)
        detected, document = reader.format, reader.document
    if format is not None and detected != format:
        raise OcrFormatError(path, f"is {detected}, not {format}")
    return detected, document


def _head(path: Any) -> bytes:
    """The first bytes of the file ``path`` (what detection looks at)."""
    from scorekit.ocr.formats.xml import HEAD_BYTES

    with open(path, "rb") as handle:
        return handle.read(HEAD_BYTES)


def detect(path: Union[str, os.PathLike]) -> str:
    """The format of ``path`` by its content (not its name): ``page``, ``alto``, ``hocr`` or
    ``text`` for a file, ``line-folder`` for a folder. A file that starts like markup but is not
    well-formed XML (nor HTML) is an :class:`OcrFormatError`, not text."""
    from scorekit.ocr.formats.xml import looks_like_markup

    if os.path.isdir(path):
        return "line-folder"
    head = _head(path)
    return _read_markup(path, head, None, None, read=False)[0] if looks_like_markup(head) else "text"


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
    if format != "text":
        from scorekit.ocr.formats.xml import looks_like_markup

        head = _head(path)
        if looks_like_markup(head):
            return _read_markup(path, head, level, format, read=True)[1]()
        if format is not None:
            raise OcrFormatError(path, f"is text, not {format}")
    from scorekit.ocr.formats.text import read_text_file
    return read_text_file(path, read_bytes(path), level)
