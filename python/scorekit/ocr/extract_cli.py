"""``scorekit ocr-extract FILE [--textequiv-level L]``: print the text scorekit reads from an OCR
file (PAGE-XML, ALTO, hOCR or text), as ``dinglehopper-extract`` prints it, so a user sees what
is scored (docs/ocr-formats.md).

Registered by ``scorekit.cli`` through :func:`add_parser`. A file that cannot be read is one error
line and exit status 2 (``scorekit.cli`` prints it); PAGE text regions that the reading order
leaves out are named in a note on stderr.
"""

from __future__ import annotations

import sys
from typing import Any

from scorekit.ocr.formats.model import LEVELS

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``scorekit ocr-extract``."""
    p = sub.add_parser("ocr-extract", help="print the text of a PAGE-XML, ALTO, hOCR or text file in reading order",
                       epilog="The format is detected from the content. The text is what dinglehopper-extract "
                              "prints: the same reading order, joins and normalisation.")
    p.add_argument("file", metavar="FILE", help="an OCR file (PAGE-XML, ALTO, hOCR or UTF-8 text)")
    p.add_argument("--textequiv-level", choices=LEVELS, default="region", metavar="LEVEL",
                   help="PAGE TextEquiv level to read: region (the default, as dinglehopper), line, word or glyph; "
                        "ALTO, hOCR and text read the same at every level")
    p.set_defaults(handler=run)


def run(args: Any) -> int:
    """Print the file's text (exit status 0; an unreadable file raises)."""
    from scorekit.ocr.formats import read

    document = read(args.file, level=args.textequiv_level)
    if document.omitted:
        print(f"scorekit: note: {args.file}: the reading order leaves out text region(s) "
              f"{', '.join(document.omitted)}; their text is not extracted", file=sys.stderr)
    print(document.text)
    return 0
