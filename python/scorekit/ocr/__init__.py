"""OCR evaluation in the reference kit's shape (``ek.ocr``): the ocracy bridge, engine capability
profiles, table recovery from OCR results and the offline benchmark; the OCR file readers
(:func:`read`: PAGE-XML, ALTO, hOCR and text, :mod:`scorekit.ocr.formats`); and the text metrics of
a ground-truth page against an OCR page (dinglehopper's CER and WER, ``bow_wer``, the flexible
character accuracy: :mod:`scorekit.ocr.metrics`, :mod:`scorekit.ocr.fca`, docs/ocr-metrics.md).

Importing it needs no OCR engine, SDK or credentials (ocracy is imported only when the bridge is
called); :func:`scorekit.registry.check_requirements` reports at call time what an engine lacks.

>>> import scorekit as ek
>>> ek.ocr.profile("mathpix")["calibrated"]
True
>>> ek.ocr.engine_yields_tables("aws-textract")
True
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the submodule defining it, imported on first use: importing ``scorekit.ocr`` (or
#: its readers, ``scorekit.ocr.formats``) stays cheap, and a command that reads OCR files does not
#: load the table metrics and numpy.
_LAZY = {
    "ocracy_backend": "bridge", "read_text": "bridge", "evaluate_ocr": "benchmark", "add_gold_item": "benchmark",
    "profile": "profiles", "ENGINE_PROFILES": "profiles", "DEFAULT_PROFILE": "profiles",
    "table_from_ocr": "tables", "has_table_structure": "tables", "resolve_table_parser": "tables",
    "engine_yields_tables": "tables",
    "read": "formats", "OcrDocument": "formats", "Segment": "formats", "OcrFormatError": "formats",
    "compare_texts": "metrics", "TextComparison": "metrics", "bow_wer": "metrics", "words": "metrics",
    "flexible_character_accuracy": "fca",
}
_SUBMODULES = ("benchmark", "bridge", "profiles", "tables", "formats", "metrics", "fca")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"scorekit.ocr.{_LAZY[name]}"), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"scorekit.ocr.{name}")
    else:
        raise AttributeError(f"module 'scorekit.ocr' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))


__all__ = [
    "ocracy_backend", "read_text", "evaluate_ocr", "add_gold_item", "profile", "ENGINE_PROFILES",
    "DEFAULT_PROFILE", "table_from_ocr", "has_table_structure", "resolve_table_parser", "engine_yields_tables",
    "read", "OcrDocument", "Segment", "OcrFormatError",
    "compare_texts", "TextComparison", "bow_wer", "flexible_character_accuracy", "words",
]
