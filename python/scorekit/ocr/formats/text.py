"""Plain text files: UTF-8 (a byte-order mark is dropped), one segment per line; and folders of
line files (one text file per line, as OCR-D and Calamari keep ground truth: ``*.gt.txt``).

As dinglehopper 0.11 reads them: line breaks are ``\\n``, ``\\r\\n`` or ``\\r``; each line is
stripped of leading and trailing white space and normalised; the lines are joined by newlines (a
final line break adds no empty line). dinglehopper guesses the encoding of a file from its first
kilobyte; scorekit reads UTF-8 only and names the first byte that is not (docs/decisions.md#ocr-readers).
The segments are the lines (ids ``line 1``, ``line 2`` …, no geometry) at every level.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from scorekit.ocr.formats.model import OcrDocument, OcrFormatError, Segment, read_bytes
from scorekit.ocr.formats.normalization import normalize_checked

__all__ = ["read_text_file", "read_line_folder"]


def read_text_file(path: Any, data: bytes, level: Optional[str]) -> OcrDocument:
    """The :class:`OcrDocument` of the plain text ``data`` read from ``path`` (``level`` does not
    change it)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise OcrFormatError(path, f"is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()
    segments = tuple(Segment(f"line {number}", "line", normalize_checked(path, f"line {number}", line.strip()))
                     for number, line in enumerate(lines, 1))
    return OcrDocument(str(path), "text", "\n".join(s.text for s in segments), segments)


def _common_suffix(names: list[str]) -> str:
    """The longest suffix every name ends with that starts at a dot (``.gt.txt`` of ``1.gt.txt``
    and ``11.gt.txt``, where dinglehopper's character-wise suffix is ``1.gt.txt``)."""
    shortest = min(names, key=len)
    for start in range(len(shortest)):
        candidate = shortest[start:]
        if candidate.startswith(".") and all(name.endswith(candidate) and len(name) > len(candidate) for name in names):
            return candidate
    return ""


def read_line_folder(path: Any, suffix: Optional[str]) -> OcrDocument:
    """The :class:`OcrDocument` of the folder ``path`` of line files: every file (in sub-folders
    too, hidden ones skipped) whose name ends in ``suffix`` (``None``: the suffix all file names
    share, from a dot on; none shared is an error), in the order of their paths. Each file is
    read as a text file; its segment's id is its path in the folder without the suffix (what
    pairs it with the other side's file, as ``dinglehopper-line-dirs`` pairs them) and its text
    the file's text. The document text joins the files' texts by newlines."""
    found = []
    for folder, subfolders, files in os.walk(path):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        found.extend(os.path.relpath(os.path.join(folder, name), path) for name in files if not name.startswith("."))
    if suffix is None:
        suffix = _common_suffix([os.path.basename(f) for f in found]) if found else ""
        if not suffix:
            raise OcrFormatError(path, "holds no line files with a common suffix (such as .gt.txt); give the suffix")
    chosen = sorted(f for f in found if f.endswith(suffix) and len(os.path.basename(f)) > len(suffix))
    if not chosen:
        raise OcrFormatError(path, f"holds no line file ending in {suffix!r}")
    segments = []
    for name in chosen:
        file = os.path.join(path, name)
        text = read_text_file(file, read_bytes(file), None).text
        segments.append(Segment(name[: -len(suffix)].replace(os.sep, "/"), "line", text))
    return OcrDocument(str(path), "line-folder", "\n".join(s.text for s in segments), tuple(segments))
