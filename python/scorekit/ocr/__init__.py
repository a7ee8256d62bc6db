"""OCR evaluation in the reference kit's shape (``ek.ocr``): the ocracy bridge, engine capability
profiles, table recovery from OCR results and the offline benchmark; and the OCR file readers
(:func:`read`: PAGE-XML, ALTO, hOCR and text, :mod:`scorekit.ocr.formats`).

Importing it needs no OCR engine, SDK or credentials (ocracy is imported only when the bridge is
called); :func:`scorekit.registry.check_requirements` reports at call time what an engine lacks.

>>> import scorekit as ek
>>> ek.ocr.profile("mathpix")["calibrated"]
True
>>> ek.ocr.engine_yields_tables("aws-textract")
True
"""

from scorekit.ocr.benchmark import add_gold_item, evaluate_ocr
from scorekit.ocr.bridge import ocracy_backend, read_text
from scorekit.ocr.formats import OcrDocument, OcrFormatError, Segment, read
from scorekit.ocr.profiles import DEFAULT_PROFILE, ENGINE_PROFILES, profile
from scorekit.ocr.tables import engine_yields_tables, has_table_structure, resolve_table_parser, table_from_ocr

__all__ = [
    "ocracy_backend", "read_text", "evaluate_ocr", "add_gold_item", "profile", "ENGINE_PROFILES",
    "DEFAULT_PROFILE", "table_from_ocr", "has_table_structure", "resolve_table_parser", "engine_yields_tables",
    "read", "OcrDocument", "Segment", "OcrFormatError",
]
