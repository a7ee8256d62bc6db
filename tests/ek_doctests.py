"""Running the reference kit's docstring examples against scorekit: each example of an ``ek`` module
runs with its source rewritten to import scorekit (``from ek.`` → ``from scorekit.``, ``import ek``
→ ``import scorekit as ek``) in the namespace of the matching scorekit module, and must print what
ek's docstring says. Shared by the tests of the modules that mirror ek's."""

from __future__ import annotations

import doctest
import re
from types import ModuleType

_REWRITES = ((re.compile(r"\bfrom ek\."), "from scorekit."),
             (re.compile(r"\bfrom ek import\b"), "from scorekit import"),
             (re.compile(r"\bimport ek\b(?!\.)"), "import scorekit as ek"))


def to_scorekit(source: str) -> str:
    """An example's source with its ek imports pointing at scorekit."""
    for pattern, replacement in _REWRITES:
        source = pattern.sub(replacement, source)
    return source


def run_ek_doctests(ek_module: ModuleType, scorekit_module: ModuleType, *,
                    optionflags: int = doctest.ELLIPSIS) -> dict[str, doctest.TestResults]:
    """Run every public docstring example of ``ek_module`` against ``scorekit_module``; returns the results
    per docstring (by its qualified name in ek), failures printed in doctest's usual report."""
    runner = doctest.DocTestRunner(optionflags=optionflags)
    results = {}
    for test in doctest.DocTestFinder().find(ek_module):
        if not test.examples or test.name.rsplit(".", 1)[-1].startswith("_"):  # private helpers are not API
            continue
        for example in test.examples:
            example.source = to_scorekit(example.source)
        test.globs = dict(vars(scorekit_module))
        results[test.name] = runner.run(test, clear_globs=True)
    return results
