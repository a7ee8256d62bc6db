"""Running a Markdown page's examples: every ```python block is a doctest, the blocks run in
order in one namespace, as a reader pasting them into one session would. Shared by the tests of
the pages under docs/."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)


def blocks(page: str, language: str, *, section: str | None = None) -> list[tuple[int, str]]:
    """``(line, body)`` of every fenced block in ``language`` of ``docs/<page>``; with
    ``section``, only those under the ``## <section>`` heading (up to the next ``## ``)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    start, end = 0, len(text)
    if section is not None:
        start = text.index("\n## " + section)
        following = text.find("\n## ", start + 1)
        end = following if following >= 0 else end
    return [(text.count("\n", 0, m.start()) + 2, m.group(2)) for m in _FENCE.finditer(text, start, end)
            if m.group(1) == language]


def run_python_blocks(page: str, *, section: str | None = None, min_blocks: int = 1,
                      optionflags: int = doctest.ELLIPSIS) -> int:
    """Run the python blocks of ``docs/<page>`` (or of one ``section``); asserts that there are at
    least ``min_blocks``, that each has examples and that none fails. Returns the examples run."""
    found = blocks(page, "python", section=section)
    assert len(found) >= min_blocks, f"{page}: {len(found)} python blocks"
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=optionflags)
    namespace: dict = {"__name__": page.replace(".", "_").replace("-", "_")}
    for line, body in found:
        test = parser.get_doctest(body, namespace, f"{page}:{line}", str(DOCS / page), line)
        assert test.examples, f"{page}:{line}: a python block without >>> examples is not checked"
        test.globs = namespace
        runner.run(test, clear_globs=False)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) of {page} failed (output above)"
    return result.attempted
