"""Lazy imports of the ``flowcharts`` extra (pydantic, SciPy) with a clear install hint."""

from __future__ import annotations

import importlib
from typing import Any

from scorekit.registry import MissingExtraError, install_hint


def require(module: str) -> Any:
    """Import ``module`` or raise :class:`MissingExtraError` naming the ``flowcharts`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"the flowchart parsing benchmark needs {module.split('.')[0]}: {install_hint('flowcharts')}"
        ) from exc
