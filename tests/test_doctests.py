"""Run the examples in the public modules' docstrings."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["scorekit", "scorekit.facade", "scorekit.batch", "scorekit.text", "scorekit.metrics.strings",
           "scorekit.registry", "scorekit.canonicalize", "scorekit.base", "scorekit.errors", "scorekit.report",
           "scorekit.ocr_pages", "scorekit._graphemes", "scorekit.ocr_pages.evaluation.text_metrics",
           "scorekit.harness", "scorekit.stores", "scorekit.tools", "scorekit.agents.judge", "scorekit.agents.bridge",
           "scorekit.agents.metrics", "scorekit.agents.harness", "scorekit.agents.compare", "scorekit.agents.report"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(backend, name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
