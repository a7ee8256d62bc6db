"""Run the examples in the docstrings of every module of the package, on both backends."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import scorekit

#: Every module of the package (importing ``scorekit.__main__`` runs nothing).
MODULES = ["scorekit"] + sorted(m.name for m in pkgutil.walk_packages(scorekit.__path__, "scorekit."))


def test_every_module_is_found():
    assert len(MODULES) > 120
    assert {"scorekit.tools", "scorekit.metrics.anls", "scorekit.qe.calibrate", "scorekit.__main__"} <= set(MODULES)


# Docstring examples calibrate on a handful of rows, which scorekit warns about (tested in test_qe_calibrate).
@pytest.mark.filterwarnings("ignore::scorekit.qe.decide.SmallCalibrationWarning")
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(backend, name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
