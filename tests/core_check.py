"""Runs of the suite that prove the backend switch: ``SCOREKIT_CORE_CHECK=poison`` puts a recorder
in place of the compiled module (every attribute taken from it is recorded; the run fails if any
was), ``SCOREKIT_CORE_CHECK=blocked`` makes importing it fail. Both are meant for a representative
slice of the suite under ``SCOREKIT_BACKEND=numba`` (the Makefile's ``core-check``): then nothing
may call ``scorekit._core``. Installed by conftest.py before scorekit is imported."""

from __future__ import annotations

import sys
import types

MODES = ("poison", "blocked")

#: Every ``name`` taken from the poisoned module, in order.
touched: list[str] = []


class _Poisoned(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # import machinery and introspection probe dunders
        touched.append(name)

        def poisoned(*args, **kwargs):
            raise RuntimeError(f"scorekit._core.{name} was called under the Numba backend")

        return poisoned


def install(mode: str) -> None:
    """Replace ``scorekit._core`` as ``mode`` says (before anything imports scorekit)."""
    if mode not in MODES:
        raise ValueError(f"SCOREKIT_CORE_CHECK must be one of {MODES}, got {mode!r}")
    if "scorekit" in sys.modules:
        raise RuntimeError("SCOREKIT_CORE_CHECK must be installed before scorekit is imported")
    sys.modules["scorekit._core"] = _Poisoned("scorekit._core") if mode == "poison" else None  # type: ignore[assignment]
