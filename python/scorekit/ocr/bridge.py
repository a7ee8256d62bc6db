"""The bridge to ``ocracy`` (extra ``[ocr]``): its engine fleet as ``image -> OcrResult`` callables.

ocracy is imported only when a function here is called; without it the call raises
:class:`~scorekit.registry.MissingExtraError` with the install hint. Nothing here depends on
ocracy's types: results are read by duck typing (``.text``, ``.blocks``, ``.mean_confidence`` …).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Optional

from scorekit.errors import InvalidTypeError
from scorekit.registry import requires_extra

__all__ = ["ocracy_backend", "read_text"]


def _check_backend(backend: Any) -> None:
    if backend is not None and not isinstance(backend, str):
        raise InvalidTypeError(f"must be an ocracy backend id str or None, got {type(backend).__name__}",
                               field="backend")


@requires_extra("ocr", packages=["ocracy"])
def ocracy_backend(backend: Optional[str] = None, **default_kwargs: Any) -> Callable[[Any], Any]:
    """An ``image -> OcrResult`` callable bound to one ocracy ``backend`` (``None``: ocracy's first
    installed one). ``default_kwargs`` go to ``ocracy.ocr`` on every call; per-call kwargs override them."""
    _check_backend(backend)
    ocracy = importlib.import_module("ocracy")

    def run(image: Any, **kwargs: Any) -> Any:
        return ocracy.ocr(image, backend=backend, **{**default_kwargs, **kwargs})

    run.__name__ = run.__qualname__ = f"ocracy[{backend or 'default'}]"
    return run


@requires_extra("ocr", packages=["ocracy"])
def read_text(image: Any, *, backend: Optional[str] = None, **kwargs: Any) -> str:
    """OCR ``image`` with ocracy and return only the recognised text."""
    _check_backend(backend)
    return importlib.import_module("ocracy").read_text(image, backend=backend, **kwargs)
