"""Reports: self-contained, offline HTML pages that every scorekit system (OCR pages, flowcharts,
case benchmarks) builds the same way.

This package owns the page template, its stylesheet and sorting script, the section builders
(:func:`summary_table`, :func:`data_table`, :func:`diff_view`, :func:`aligned_diff`, :func:`line_diff`, :func:`note`,
:func:`text_block`, the nesting blocks :func:`group` and :func:`details_block`, and the SVG charts
:func:`bar_chart`, :func:`grouped_bar_chart`, :func:`histogram`, :func:`heatmap`,
:func:`flow_chart`), rendering (:func:`render_page`) and the atomic file write
(:func:`write_report`), and :func:`open_in_browser` for the ``--open`` option of the commands that
write a report. Every page opens with a table of contents (a sidebar that stays in view) linking
to each section; :class:`SeriesColours` gives a series one colour on every chart of a page. The
rules every page keeps:

- no external URL and no network request: CSS, script and charts are inline; the only links
  are the contents' links to the page's own sections (``href="#s2-1"``);
- everything that comes from data is text, escaped by the template (Jinja2 with autoescape) or
  by the chart builders, and shown through :func:`display_text` (control characters made
  visible, lone surrogates replaced);
- a strict Content-Security-Policy in a ``<meta>`` tag: nothing is allowed by default, and the
  one inline ``<style>`` and one inline ``<script>`` are allowed by their SHA-256 hashes,
  computed here from the exact text inserted (no ``'unsafe-inline'``).

Jinja2 (``jinja2>=3``) is imported only when a page is rendered.

>>> from scorekit import report
>>> page = report.render_page("Run 1", [report.summary_table("Corpus", {"pages": 2, "CER": 0.05})])
>>> "Content-Security-Policy" in page and "<td class=\\"num\\">0.0500</td>" in page
True
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.files import check_outputs, write_atomically
from scorekit.report.charts import (FlowNode, SeriesColours, bar_chart, flow_chart, grouped_bar_chart, heatmap,
                                    histogram)
from scorekit.report.sections import (Section, aligned_diff, data_table, details_block, diff_view, display_text, group,
                                      line_diff, note, number_cell, summary_table, text_block)

__all__ = ["FlowNode", "Section", "SeriesColours", "aligned_diff", "bar_chart", "content_security_policy", "data_table",
           "details_block", "diff_view", "display_text", "flow_chart", "group", "grouped_bar_chart", "heatmap",
           "histogram", "line_diff", "note", "number_cell", "open_in_browser", "render_page", "summary_table",
           "text_block", "write_report"]

TEMPLATE_DIR = Path(__file__).parent / "templates"
_environment: Any = None


class _Trusted(str):
    """Text of this package's own files, inserted into the page as is (see ``_Svg``)."""

    def __html__(self) -> str:
        return str(self)


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(style: str, script: str) -> str:
    """The policy of a page whose only inline style and script are ``style`` and ``script``."""
    return (f"default-src 'none'; style-src {_sha256(style)}; script-src {_sha256(script)}; "
            "img-src data:; base-uri 'none'; form-action 'none'")


def _env() -> Any:
    global _environment
    if _environment is None:
        import jinja2

        _environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), autoescape=True,
                                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return _environment


def render_page(title: str, sections: Sequence[Section], *, template: str = "page.html",
                subtitle: str | None = None) -> str:
    """The HTML of one report page: ``title``, the ``subtitle`` line if any, then ``sections`` in order.

    ``template`` names a template file of this package's ``templates`` folder (not a path: a
    report never loads markup from elsewhere)."""
    if not isinstance(title, str):
        raise InvalidTypeError(f"must be a string, not {type(title).__name__}", field="title")
    if subtitle is not None and not isinstance(subtitle, str):
        raise InvalidTypeError(f"must be a string or None, not {type(subtitle).__name__}", field="subtitle")
    sections = list(sections)
    for index, section in enumerate(sections):
        if not isinstance(section, Section):
            raise InvalidTypeError(f"must be built by a section builder, not {type(section).__name__}",
                                   field="sections", item=index)
    if (not isinstance(template, str) or Path(template).name != template
            or not template.endswith(".html") or not (TEMPLATE_DIR / template).is_file()):
        raise InvalidValueError(f"{template!r} is not a template of scorekit.report", field="template")
    css = (TEMPLATE_DIR / "report.css").read_text(encoding="utf-8")
    script = (TEMPLATE_DIR / "report.js").read_text(encoding="utf-8")
    return _env().get_template(template).render(
        title=display_text(title), subtitle=display_text(subtitle) if subtitle else None, sections=sections,
        css=_Trusted(css), script=_Trusted(script),
        csp=content_security_policy(css, script))


def write_report(path: str | os.PathLike[str], html: str, *, inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Write ``html`` to ``path`` atomically and return the path.

    The page goes to a temporary file in the same folder, which is flushed and renamed over
    ``path``, so a reader sees the old file or the whole new one, never a part; on any error the
    temporary file is removed. Nothing else is written. ``inputs`` are the files the report was
    built from (one path or several): writing over one of them (same file, through any path or link) is refused, as is
    a ``path`` that is a folder or whose folder does not exist."""
    if not isinstance(html, str):
        raise InvalidTypeError(f"must be a string, not {type(html).__name__}", field="html")
    try:
        data = html.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidValueError(f"cannot be written as UTF-8 (character at {exc.start}); build pages "
                                "with render_page, which cleans text from data", field="html") from None
    name = "path"
    check_outputs({name: path}, inputs=[inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)
    return write_atomically(path, data)


def open_in_browser(path: str | os.PathLike[str]) -> None:
    """Show the written report ``path`` in the default web browser (a command's ``--open``), as a
    ``file://`` address; when no browser can be started, say so on stderr with the report's path
    (the report is written either way, so this is never an error)."""
    import webbrowser

    address = Path(path).resolve().as_uri()
    try:
        opened = webbrowser.open(address)
    except webbrowser.Error:
        opened = False
    if not opened:
        print(f"scorekit: note: no web browser could be started; the report is {address}", file=sys.stderr)
