"""Per-engine OCR capability profiles: what each engine claims to emit (priors, not ground truth).

Fields of every profile: ``confidence_grain`` (the finest grain with a confidence: "symbol" >
"word" > "line" > "none"), ``has_real_provenance`` (real geometry rather than model-guessed boxes
or character offsets), ``calibrated`` and ``tables`` (emits scoreable table cells).

>>> profile("tesseract")["confidence_grain"]
'symbol'
>>> profile("claude-vision")["has_real_provenance"]
False
>>> profile("google_vision")["confidence_grain"]   # underscore form also accepted
'symbol'
>>> profile("totally-unknown-engine")["confidence_grain"]
'unknown'
"""

from __future__ import annotations

from scorekit.errors import InvalidTypeError

__all__ = ["DEFAULT_PROFILE", "ENGINE_PROFILES", "profile"]

DEFAULT_PROFILE: dict = {"calibrated": False, "confidence_grain": "unknown", "has_real_provenance": False,
                         "tables": False}
"""The profile of an engine nobody has described: claims nothing."""


def _profile(grain: str, real_provenance: bool, calibrated: bool, tables: bool) -> dict:
    return {"calibrated": calibrated, "confidence_grain": grain, "has_real_provenance": real_provenance,
            "tables": tables}


#: Capability claims keyed by ocracy's canonical hyphenated engine ids.
ENGINE_PROFILES: dict[str, dict] = {
    "tesseract": _profile("symbol", True, False, False),
    "google-vision": _profile("symbol", True, False, False),
    "aws-textract": _profile("word", True, False, True),
    "azure-document-intelligence": _profile("word", True, False, True),
    "mathpix": _profile("word", True, True, False),
    "paddleocr": _profile("line", True, False, True),
    "easyocr": _profile("line", True, False, False),
    "rapidocr": _profile("line", True, False, False),
    "ocrmac": _profile("line", True, False, False),
    "doctr": _profile("word", True, False, False),
    "ocr-space": _profile("none", False, False, False),
    "gpt-4o-vision": _profile("none", False, False, False),
    "claude-vision": _profile("none", False, False, False),
    "mistral-ocr": _profile("none", False, False, False),
    "pix2tex-latex-ocr": _profile("none", False, False, False),
    "trocr": _profile("none", False, False, False),
    "trocr-handwritten": _profile("none", False, False, False),
}

# The same dicts keyed by the lower-case underscore spelling, so "Google-Vision" and "GOOGLE_VISION" resolve.
_BY_UNDERSCORE = {key.replace("-", "_"): value for key, value in ENGINE_PROFILES.items()}


def profile(engine: str) -> dict:
    """The capability profile of ``engine`` (hyphenated or underscore id, any case), else
    :data:`DEFAULT_PROFILE`. The shared dicts are returned, as the reference kit does: do not mutate them."""
    if not isinstance(engine, str):
        raise InvalidTypeError(f"must be an engine id str, got {type(engine).__name__}", field="engine")
    found = ENGINE_PROFILES.get(engine)
    if found is None:
        found = _BY_UNDERSCORE.get(engine.lower().replace("-", "_"), DEFAULT_PROFILE)
    return found
