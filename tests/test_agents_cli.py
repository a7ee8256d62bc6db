"""The agent commands `scorekit pass-k` and `scorekit cost-per-success` (and scorekit.tools behind
them): the reference kit's output, byte for byte, and clean errors."""

from __future__ import annotations

import doctest
import math
import subprocess
import sys

import pytest

from scorekit import tools
from scorekit.cli import main
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError


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
    (["cost-per-success", "nan", "1"], "total_dollars must be finite and >= 0, got 'nan'"),
    (["cost-per-success", "inf", "1"], "total_dollars must be finite and >= 0, got 'inf'"),
    (["cost-per-success", "-1", "1"], "total_dollars must be finite and >= 0, got '-1'"),
    (["cost-per-success", "1", "1", "--attempts", "0"], "attempts must be >= 1"),
    (["cost-per-success", "10", "-1"], "successes must be >= 0, got -1"),
    (["cost-per-success", "10", "2", "-a", "1"], "successes (2) cannot exceed attempts (1)"),
    (["cost-per-success", "10", "2", "-a", "-3"], "attempts must be >= 1, got -3"),
    (["cost-per-success", "10", "2.5"], "successes must be a whole number, got '2.5'"),
    (["cost-per-success", "10", "2", "-a", ""], "attempts must be a whole number, got ''"),
    (["pass-k", "10.9", "5"], "n must be a whole number, got '10.9'"),
    (["pass-k", "100001", "50000", "-k", "25000"], "n=100,001 trials is above MAX_TRIALS=100,000"),
    (["pass-k", "9" * 5000, "5"], "n must be a whole number, got '999999"),
    (["pass-k", "10", "5", "-k", "2.0"], "k must be a whole number, got '2.0'"),
])
def test_errors_are_one_clean_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("scorekit: error: ") and message in err and "Traceback" not in err


def test_tools_refuse_what_they_would_truncate_or_misreport():
    with pytest.raises(InvalidValueError, match=r"n must be a whole number, got 10\.9"):
        tools.pass_k(10.9, 5)
    for bad in (math.nan, math.inf, "5.5"):
        with pytest.raises(InvalidValueError, match="c must be a whole number"):
            tools.pass_k(10, bad)
    for bad in (True, None, [3]):
        with pytest.raises(InvalidTypeError, match="k must be a whole number"):
            tools.pass_k(10, 5, k=bad)
    with pytest.raises(InputTooLargeError, match=r"n=an integer of 16610 bits trials is above MAX_TRIALS=100,000"):
        tools.pass_k(10**5000, 5)
    assert tools.pass_k(10.0, "9", k=8) == tools.pass_k(10, 9, k=8) == {
        "n": 10, "c": 9, "k": 8, "pass_at_k": 1.0, "pass_hat_k": 0.2}
    with pytest.raises(InvalidValueError, match=r"attempts must be >= 1, got 0"):
        tools.cost_per_success(10, 0, attempts=0)   # 0 is an attempts count, not "no attempts given"
    with pytest.raises(InvalidValueError, match=r"successes \(3\) cannot exceed attempts \(2\)"):
        tools.cost_per_success(10, 3, attempts=2)
    assert tools.cost_per_success(10, 2, attempts=2) == {
        "total_dollars": 10.0, "successes": 2, "cost_per_success": 5.0, "success_rate": 1.0}


def test_pass_k_help_shows_one_percent_sign(capsys):
    assert main(["pass-k", "--help"]) == 0
    out = capsys.readouterr().out
    assert "a 90%-reliable agent" in out and "%%" not in out
