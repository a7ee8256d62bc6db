"""Every docstring example of the installed reference kit (``ek`` 0.1.15, a test oracle), in every one
of its modules, runs against scorekit, with ``ek`` imports rewritten to scorekit's, and prints what
ek's docstring says."""

from __future__ import annotations

import importlib
import pkgutil

import ek
import pytest

from ek_doctests import run_ek_doctests

#: Every module of the reference kit but its ``__main__`` (running it would parse pytest's argv).
#: Names relative to the package ("" is the package itself).
MODULES = [""] + sorted(m.name.removeprefix("ek.") for m in pkgutil.walk_packages(ek.__path__, "ek.")
                        if not m.name.endswith("__main__"))


def _module(prefix: str, name: str):
    return importlib.import_module(f"{prefix}.{name}" if name else prefix)


def test_the_whole_kit_is_covered():
    assert len(MODULES) >= 38 and {"agents.harness", "qe.decide", "metrics.anls", "metrics.spans", "tools",
                                   "stores", "validate"} <= set(MODULES)


# ek's calibration examples fit on a handful of rows, which scorekit warns about (tested in test_qe_calibrate).
@pytest.mark.filterwarnings("ignore::scorekit.qe.decide.SmallCalibrationWarning")
@pytest.mark.parametrize("name", MODULES)
def test_ek_docstring_examples_run_on_scorekit(name):
    ek_module, ours = _module("ek", name), _module("scorekit", name)
    results = run_ek_doctests(ek_module, ours)
    failed = {test: r.failed for test, r in results.items() if r.failed}
    assert not failed, f"examples failing under scorekit (report above): {failed}"



def test_every_public_name_of_the_kit_is_on_scorekit():
    """``ek.X`` for every public X of the reference kit's package (what its docs use) is ``scorekit.X``."""
    import scorekit

    missing = [name for name in dir(ek) if not name.startswith("_") and not hasattr(scorekit, name)]
    assert missing == []
    assert set(ek.__all__) <= set(scorekit.__all__)


def test_all_lists_every_lazy_name():
    import scorekit

    assert set(scorekit._LAZY) | set(scorekit._SUBMODULES) <= set(scorekit.__all__)
