"""Every docstring example of the reference kit's ``ek.agents`` (the installed ``ek`` 0.1.15, a test
oracle) runs against scorekit, with ``ek`` imports rewritten to scorekit's, and prints what ek's
docstring says."""

from __future__ import annotations

import importlib

import pytest

from ek_doctests import run_ek_doctests

MODULES = ["agents", "agents.base", "agents.bridge", "agents.cost", "agents.harness", "agents.judge",
           "agents.metrics", "agents.reliability", "agents.toolcalls", "agents.trajectory", "agents.wrappers"]


@pytest.mark.parametrize("name", MODULES)
def test_ek_docstring_examples_run_on_scorekit(name):
    ek_module = importlib.import_module(f"ek.{name}")
    ours = importlib.import_module(f"scorekit.{name}")
    results = run_ek_doctests(ek_module, ours)
    assert results, f"ek.{name} has no docstring examples"
    failed = {test: r.failed for test, r in results.items() if r.failed}
    assert not failed, f"examples failing under scorekit (report above): {failed}"
    assert sum(r.attempted for r in results.values()) > 0
