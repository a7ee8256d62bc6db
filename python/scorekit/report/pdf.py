"""PDF copies of report pages, through WeasyPrint (the optional ``pdf`` extra).

The page prints as it shows: its charts and graphs are inline SVG, and every ``<details>`` block
prints expanded. WeasyPrint runs no script and is given a URL fetcher that refuses every URL, so
printing loads nothing either. :func:`require_pdf_support` says, before any work starts, whether
PDFs can be written here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["PdfSupportError", "pdf_bytes", "require_pdf_support", "write_pdf"]

INSTALL_HINT = "pip install 'scorekit[pdf]'"


class PdfSupportError(ImportError):
    """WeasyPrint (or the system libraries it loads: Pango, HarfBuzz, fontconfig) is not available."""


def require_pdf_support() -> Any:
    """The ``weasyprint`` module, or :class:`PdfSupportError` naming the install command."""
    try:
        import weasyprint
    except ImportError as exc:
        raise PdfSupportError(f"PDF export needs WeasyPrint: install it with {INSTALL_HINT} "
                              f"(import failed: {exc})") from None
    except OSError as exc:   # WeasyPrint found, but not the Pango library it loads
        raise PdfSupportError(f"PDF export needs WeasyPrint and the Pango library (Debian: apt-get install "
                              f"libpango-1.0-0 libpangoft2-1.0-0); loading it failed: {exc}") from None
    return weasyprint


def pdf_bytes(html: str) -> bytes:
    """The PDF of a report page's HTML (nothing fetched: every URL is refused)."""
    weasyprint = require_pdf_support()

    class _NoFetch(weasyprint.URLFetcher):
        def fetch(self, url: str, headers: Any = None) -> Any:
            raise ValueError(f"a report loads nothing, not even {url!r}")

    return weasyprint.HTML(string=html, url_fetcher=_NoFetch()).write_pdf()


def write_pdf(path: str | os.PathLike[str], html: str) -> Path:
    """Write the PDF of ``html`` to ``path`` atomically (a temporary file renamed over it)."""
    from scorekit.files import write_atomically

    return write_atomically(Path(path), pdf_bytes(html))
