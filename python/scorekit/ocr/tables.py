"""Recover a scoreable :class:`~scorekit.metrics.tables.Table` from an OCR result.

OCR results have no common table type: the structure survives only in the engine's ``.raw``
payload, in ``.meta``, or as HTML inside ``.markdown``. This module reads those three attributes by
duck typing (it never imports ocracy or an engine) and returns the existing ``Table``, or ``None``
when nothing table-shaped is there. Per-engine extractors are registered under the
``"table_parsers"`` namespace and chosen with ``parser=``.

>>> class R:  # a minimal OcrResult-shaped object carrying a 2-D grid in .raw
...     raw = {"tables": [[["a", "b"], ["c", "d"]]]}
>>> t = table_from_ocr(R())
>>> [[c.text for c in row] for row in t.rows]
[['a', 'b'], ['c', 'd']]
>>> has_table_structure(R())
True
>>> class Empty:  # no table anywhere in the result
...     raw = {"text": "just prose"}
>>> table_from_ocr(Empty()) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from scorekit.errors import InvalidTypeError
from scorekit.metrics.tables import Table
from scorekit.ocr.profiles import profile
from scorekit.registry import resolve

__all__ = ["TABLE_PARSERS_NAMESPACE", "table_from_ocr", "has_table_structure", "resolve_table_parser",
           "engine_yields_tables"]

TABLE_PARSERS_NAMESPACE = "table_parsers"
"""Registry namespace of the per-engine table extractors (``raw -> Table | grid | html | None``)."""

#: Keys of a ``.raw`` / ``.meta`` dict searched for a table, in this order.
_TABLE_KEYS = ("tables", "table", "cells", "grid", "html")


def _is_html_table(value: Any) -> bool:
    return isinstance(value, str) and "<table" in value.lower()


def _is_row(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))


def _is_grid(value: Any) -> bool:
    """A non-empty sequence (not a str) whose items are all non-str sequences (empty rows allowed)."""
    return _is_row(value) and len(value) > 0 and all(_is_row(row) for row in value)


def _as_table(value: Any) -> Optional[Table]:
    """``value`` read as a table when it plainly is one (a Table, HTML with ``<table``, a 2-D grid), else None."""
    if isinstance(value, Table):
        return value
    if _is_html_table(value):
        return Table.from_html(value)
    if _is_grid(value):
        return Table.from_grid(value)
    return None


def _nonempty(table: Optional[Table]) -> Optional[Table]:
    return table if table is not None and any(table.rows) else None


def _search_dict(payload: Any) -> Optional[Table]:
    """The first non-empty table under :data:`_TABLE_KEYS` of a plain ``dict`` payload."""
    if type(payload) is not dict:
        return None
    for key in _TABLE_KEYS:
        if key not in payload:
            continue
        value = payload[key]
        many = _is_row(value) and len(value) > 0 and all(
            isinstance(v, Table) or _is_html_table(v) or _is_grid(v) for v in value)
        for candidate in (value if many else (value,)):
            table = _nonempty(_as_table(candidate))
            if table is not None:
                return table
    return None


def _markdown_of(result: Any) -> Optional[str]:
    markdown = getattr(result, "markdown", None)
    if isinstance(markdown, str):
        return markdown
    meta = getattr(result, "meta", None)
    if isinstance(meta, dict) and isinstance(meta.get("markdown"), str):
        return meta["markdown"]
    return None


def _heuristics(result: Any) -> Optional[Table]:
    raw = getattr(result, "raw", None)
    direct = _as_table(raw)
    if direct is not None:  # a table-shaped .raw decides, even when it is empty
        return direct
    found = _search_dict(raw)
    if found is None:
        found = _search_dict(getattr(result, "meta", None))
    if found is None:
        markdown = _markdown_of(result)
        if markdown is not None and _is_html_table(markdown):
            found = Table.from_html(markdown)
    return found


def resolve_table_parser(ref: Any) -> Any:
    """A registered parser's name → the parser; a callable (or anything else, ``None`` included) unchanged."""
    return resolve(TABLE_PARSERS_NAMESPACE, ref)


def table_from_ocr(ocr_result: Any, *, parser: Any = None) -> Optional[Table]:
    """The table carried by ``ocr_result``, or ``None`` when it carries none (an empty table is ``None``).

    ``parser=None`` tries safe heuristics in order: ``.raw`` itself as a Table, an HTML ``<table>``
    string or a 2-D grid; a plain-dict ``.raw`` then ``.meta`` holding one under ``tables``,
    ``table``, ``cells``, ``grid`` or ``html`` (a list of tables is tried item by item); HTML in
    ``.markdown`` (or ``meta["markdown"]``). Pipe-style markdown tables are not parsed.

    A ``str`` parser is looked up under ``"table_parsers"``; a callable receives ``.raw`` (the result
    itself when it has none) and may return a Table, a grid, an HTML string or ``None``.

    >>> from scorekit.registry import register
    >>> @register("table_parsers", "demo")
    ... def _demo(raw):
    ...     return raw.get("cells")  # this engine stores a grid under raw['cells']
    >>> class D:
    ...     raw = {"cells": [["x"]]}
    >>> table_from_ocr(D(), parser="demo").rows[0][0].text
    'x'
    """
    if parser is None:
        return _nonempty(_heuristics(ocr_result))
    fn = resolve_table_parser(parser)
    if not callable(fn):
        raise InvalidTypeError(f"must be None, a registered parser name or a callable, got {type(fn).__name__}",
                               field="parser")
    raw = getattr(ocr_result, "raw", None)
    out = fn(raw if raw is not None else ocr_result)
    if out is None:
        return None
    if isinstance(out, str):  # HTML without a table is "no table", not an error
        return _nonempty(Table.from_html(out))
    return _nonempty(Table.coerce(out, "parser result"))


def has_table_structure(ocr_result: Any, *, parser: Any = None) -> bool:
    """Whether :func:`table_from_ocr` recovers a table with at least one cell."""
    return table_from_ocr(ocr_result, parser=parser) is not None


def engine_yields_tables(engine: str) -> bool:
    """Whether ``engine``'s profile claims scoreable table cells (a prior to check with :func:`table_from_ocr`)."""
    return bool(profile(engine).get("tables", False))
