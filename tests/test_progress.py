"""The progress line shared by every command and harness (``scorekit.progress``)."""

from __future__ import annotations

import re

import pytest

from scorekit.progress import progress_iter, progress_printer, wanted


def test_modes(capsys):
    assert wanted("always") and not wanted("never")
    assert not wanted("auto")  # stderr is captured, not a terminal
    assert progress_printer("never", "x") is None and progress_printer("auto", "x") is None
    with pytest.raises(ValueError, match="progress must be 'auto', 'always' or 'never', got 'loud'"):
        progress_printer("loud", "x")
    assert capsys.readouterr().err == ""


def test_bar_known_total(capsys):
    show = progress_printer("always", "cases", every=0.0)
    show(4, 10)
    show(10, 10)
    assert capsys.readouterr().err == (f"\r[{'#' * 12:<30}]  40.0% 4/10 cases"
                                       f"\r[{'#' * 30}] 100.0% 10/10 cases\n")


def test_unknown_total_and_rate(capsys):
    show = progress_printer("always", "pairs", rate=True, every=0.0)
    show(65_536, None)
    show(70_000, 70_000)
    err = capsys.readouterr().err
    assert re.fullmatch(r"\r65,536 pairs [\d,]+/s\r\[#{30}\] 100\.0% 70,000/70,000 pairs [\d,]+/s\n", err), err


def test_updates_are_throttled_but_the_end_is_always_drawn(capsys):
    show = progress_printer("always", "x", every=3600.0)
    for done in range(1, 6):
        show(done, 5)
    assert capsys.readouterr().err == f"\r[{'#' * 6:<30}]  20.0% 1/5 x\r[{'#' * 30}] 100.0% 5/5 x\n"


def test_progress_iter_yields_everything(capsys):
    assert list(progress_iter(iter("abc"), "always", "pages", total=3)) == ["a", "b", "c"]
    assert capsys.readouterr().err.endswith("100.0% 3/3 pages\n")
    assert list(progress_iter([1, 2], "never", "pages")) == [1, 2]
    assert capsys.readouterr().err == ""
