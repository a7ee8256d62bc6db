"""The README's examples run as pasted and print what the README says.

Every ```python block is a doctest; the blocks run in order in one namespace, as a reader pasting
them into one session would. Every ```sh block that calls ``scorekit`` runs line by line in a
temporary directory: ``scorekit`` lines through ``python -m scorekit`` (exit status 0, and the
printed value when the line's comment is a number), other lines (creating the example's input
files) through the shell.
"""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.S | re.M)


def _blocks(language: str) -> list[tuple[int, str]]:
    """``(line number, body)`` of every fenced block of ``language`` in the README."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(2))
            for m in FENCE.finditer(text) if m.group(1) == language]


def test_python_examples():
    blocks = _blocks("python")
    assert len(blocks) >= 5
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    namespace: dict = {"__name__": "readme"}
    for line, body in blocks:
        test = parser.get_doctest(body, namespace, f"README.md:{line}", str(README), line)
        assert test.examples, f"README.md:{line}: a python block without >>> examples is not checked"
        test.globs = namespace  # one session: later blocks see earlier definitions
        runner.run(test, clear_globs=False)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} README example(s) failed (output above)"


def _shell_lines() -> list[tuple[int, str]]:
    lines = []
    for start, body in _blocks("sh"):
        block = [(start + k, line) for k, line in enumerate(body.splitlines()) if line.strip()]
        if any(line.startswith("scorekit ") for _, line in block):
            lines.extend(block)
    return lines


def test_command_line_examples(tmp_path):
    lines = _shell_lines()
    assert sum(line.startswith("scorekit ") for _, line in lines) >= 6
    for number, line in lines:
        where = f"README.md:{number}: {line}"
        if not line.startswith("scorekit "):
            done = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True)
            assert done.returncode == 0, f"{where}\n{done.stderr}"
            continue
        command, _, comment = line.partition("  #")
        done = subprocess.run([sys.executable, "-m", "scorekit", *shlex.split(command)[1:]],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{where}\n{done.stderr}"
        assert done.stdout.strip(), where
        try:
            expected = float(comment.strip())
        except ValueError:
            continue  # the comment describes the output rather than stating it
        assert float(done.stdout) == expected, where


@pytest.mark.parametrize("link", sorted(set(re.findall(r"\]\(((?:docs|tests)/[^)#]+)", README.read_text("utf-8")))))
def test_linked_documents_exist(link):
    assert (README.parent / link).is_file(), link
