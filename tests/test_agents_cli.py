"""The agent commands `scorekit pass-k` and `scorekit cost-per-success` (and scorekit.tools behind
them): the reference kit's output, byte for byte, and clean errors."""

from __future__ import annotations

import doctest
import subprocess
import sys

import pytest

from scorekit import tools
from scorekit.cli import main


def test_doctests():
    assert doctest.testmod(tools).failed == 0


@pytest.mark.parametrize("argv", [
    ["pass-k", "10", "9", "--k", "8"],
    ["pass-k", "5", "2"],
    ["pass-k", "100", "90", "-k", "8"],
    ["cost-per-success", "12.50", "5", "--attempts", "20"],
    ["cost-per-success", "12.50", "0"],
    ["cost-per-success", "3", "4"],
])
def test_same_output_as_ek(argv, capsys):
    assert main(argv) == 0
    ours = capsys.readouterr().out
    theirs = subprocess.run([sys.executable, "-m", "ek", *argv], capture_output=True, text=True, check=True).stdout
    assert ours == theirs


def test_documented_values(capsys):
    assert main(["pass-k", "10", "9", "--k", "8"]) == 0
    assert capsys.readouterr().out == "{'n': 10, 'c': 9, 'k': 8, 'pass_at_k': 1.0, 'pass_hat_k': 0.2}\n"
    assert main(["cost-per-success", "12.50", "5", "--attempts", "20"]) == 0
    assert capsys.readouterr().out == (
        "{'total_dollars': 12.5, 'successes': 5, 'cost_per_success': 2.5, 'success_rate': 0.25}\n")


@pytest.mark.parametrize("argv, message", [
    (["pass-k", "2", "1", "--k", "3"], "need n >= k trials"),
    (["pass-k", "x", "1"], "n must be a whole number, got 'x'"),
    (["pass-k", "5", "9"], "successes c must be in"),
    (["pass-k", "5", "1", "--k", "0"], "k must be >= 1"),
    (["cost-per-success", "abc", "1"], "total_dollars must be a number"),
    (["cost-per-success", "nan", "1"], "total_dollars must be a number"),
    (["cost-per-success", "-1", "1"], "total_cost must be >= 0"),
    (["cost-per-success", "1", "1", "--attempts", "0"], "attempts must be >= 1"),
])
def test_errors_are_one_clean_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("scorekit: error: ") and message in err and "Traceback" not in err
