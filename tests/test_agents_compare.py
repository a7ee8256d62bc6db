"""``scorekit.agents.compare``: a five-task example worked by hand, the paired bootstrap against an
independent resampling loop and the reference kit's ``bootstrap_ci`` (the test oracle), the exact
sign test against SciPy's ``binomtest``, symmetry properties, the three input forms, and bad input."""

from __future__ import annotations

import doctest
import importlib
import math
import random
import warnings
from fractions import Fraction

import ek.agents
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from doc_examples import run_python_blocks
from scorekit.agents import Episode, reliability
from scorekit.agents.compare import AgentComparison, compare_agents, sign_test
from scorekit.errors import InputTooLargeError

compare_module = importlib.import_module("scorekit.agents.compare")

T, F = True, False
# Five tasks worked by hand (three trials each), plus one task each side ran alone.
A = {"t1": [T, T, T], "t2": [T, T, F], "t3": [F, F, F], "t4": [T, F, F], "t5": [T, T, T], "only_a": [T]}
B = {"t1": [T, T, T], "t2": [F, F, F], "t3": [T, F, F], "t4": [F, F, F], "t5": [F, F, F], "only_b": [F]}


def test_doctests():
    assert doctest.testmod(compare_module).failed == 0


def test_docs_section():
    assert run_python_blocks("agents-beyond.md", section="Comparing two agents") >= 8


def test_five_tasks_by_hand():
    cmp = compare_agents(A, B, k=2)
    assert isinstance(cmp, AgentComparison)
    assert cmp.n_tasks == 5 and list(cmp.per_task) == ["t1", "t2", "t3", "t4", "t5"]
    assert (cmp.only_in_a, cmp.only_in_b, cmp.skipped) == (("only_a",), ("only_b",), ())
    # rates a: 1, 2/3, 0, 1/3, 1; b: 1, 0, 1/3, 0, 0  ->  a - b: 0, 2/3, -1/3, 1/3, 1
    assert [cmp.per_task[t]["diff"] for t in cmp.per_task] == [0.0, 2 / 3, -1 / 3, 1 / 3, 1.0]
    assert cmp.per_task["t2"] == {"n_a": 3, "c_a": 2, "n_b": 3, "c_b": 0, "rate_a": 2 / 3, "rate_b": 0.0,
                                  "diff": 2 / 3, "pass_hat_k_a": 1 / 3, "pass_hat_k_b": 0.0,
                                  "pass_hat_k_diff": 1 / 3}
    # means over tasks: a (1 + 2/3 + 0 + 1/3 + 1) / 5 = 3/5, b (1 + 0 + 1/3 + 0 + 0) / 5 = 4/15,
    # difference (0 + 2/3 - 1/3 + 1/3 + 1) / 5 = 1/3
    assert cmp.mean_a == pytest.approx(3 / 5, abs=1e-15)
    assert cmp.mean_b == pytest.approx(4 / 15, abs=1e-15)
    assert cmp.mean_diff == pytest.approx(1 / 3, abs=1e-15)
    # improved t2, t4, t5; regressed t3; tied t1. Sign test: 4 untied tasks, 3 up, 1 down:
    # p = 2 * (C(4,0) + C(4,1)) / 2^4 = 10/16.
    assert (cmp.improved, cmp.regressed, cmp.tied) == (("t2", "t4", "t5"), ("t3",), ("t1",))
    assert cmp.sign_test_p == 0.625
    # t5: a solved all three trials, b none. No task went the other way (t3 is 0/3 vs 1/3).
    assert (cmp.only_a_solves, cmp.only_b_solves) == (("t5",), ())
    # pass^2 = C(c,2)/C(3,2): a 1, 1/3, 0, 0, 1 (mean 7/15); b 1, 0, 0, 0, 0 (mean 1/5); diff 4/15
    assert cmp.pass_hat_k_a == pytest.approx(7 / 15, abs=1e-15)
    assert cmp.pass_hat_k_b == pytest.approx(1 / 5, abs=1e-15)
    assert cmp.pass_hat_k_diff == pytest.approx(4 / 15, abs=1e-15)
    assert cmp.summary() == (
        "a vs b on 5 paired task(s) (k=2):\n"
        "  success rate: a 0.600, b 0.267, difference +0.333 (95% CI -0.067 to +0.733)\n"
        "  pass^2: a 0.467, b 0.200, difference +0.267 (95% CI +0.000 to +0.667)\n"
        "  3 improved, 1 regressed, 1 tied; sign test p = 0.625 (exact, two-sided, ties dropped)\n"
        "  solved in every trial by a and in none by b: t5; the reverse: none\n"
        "  not paired: only in a: only_a; only in b: only_b; fewer than k trials: none")


def resampled_ci(values, resamples=2000, alpha=0.05, seed=0):
    """The percentile bootstrap of the mean written out (ek-agents §3.7): tasks drawn with
    ``random.Random(seed).randrange``."""
    rng = random.Random(seed)
    stats = sorted(sum(values[rng.randrange(len(values))] for _ in values) / len(values)
                   for _ in range(resamples))
    return stats[int(alpha / 2 * resamples)], stats[min(resamples - 1, int((1 - alpha / 2) * resamples))]


def test_paired_bootstrap_resamples_tasks():
    rng = random.Random(11)
    for _ in range(30):
        tasks = [f"t{i}" for i in range(rng.randrange(1, 25))]
        a = {t: [rng.random() < 0.6 for _ in range(rng.randrange(2, 6))] for t in tasks}
        b = {t: [rng.random() < 0.5 for _ in range(rng.randrange(2, 6))] for t in tasks}
        seed, alpha = rng.randrange(100), rng.choice([0.05, 0.1])
        cmp = compare_agents(a, b, k=2, resamples=300, alpha=alpha, seed=seed)
        diffs = [row["diff"] for row in cmp.per_task.values()]
        assert cmp.diff_ci == resampled_ci(diffs, 300, alpha, seed)
        assert cmp.diff_ci == ek.agents.bootstrap_ci(diffs, lambda v: sum(v) / len(v), resamples=300,
                                                     alpha=alpha, seed=seed)
        hats = [row["pass_hat_k_diff"] for row in cmp.per_task.values()]
        assert cmp.pass_hat_k_diff_ci == resampled_ci(hats, 300, alpha, seed)
        assert cmp.diff_ci[0] <= cmp.diff_ci[1] and cmp.confidence == 1 - alpha
    # deterministic by seed
    assert compare_agents(A, B).diff_ci == compare_agents(A, B).diff_ci


# ------------------------------------------------------------------ the sign test


def test_sign_test_by_hand():
    assert sign_test(0, 0) == 1.0
    assert sign_test(3, 1) == sign_test(1, 3) == 0.625
    assert sign_test(2, 2) == 1.0                     # 2 * 11/16 capped at 1
    assert sign_test(10, 0) == 2 / 1024
    assert sign_test(5, 1) == 2 * 7 / 64              # 2 * (1 + 6) / 2^6
    # exact even where the tail is far below float64's smallest normal number
    assert sign_test(2000, 0) == float(Fraction(2, 2 ** 2000)) == 0.0
    assert sign_test(1070, 0) == float(Fraction(2, 2 ** 1070)) > 0.0


def test_sign_test_is_bounded():
    assert sign_test(50_000, 50_000) == 1.0            # MAX_SIGNS itself, in about a second
    for plus, minus in ((50_001, 50_000), (2**62, 2**62), (0, 10**5000)):
        with pytest.raises(InputTooLargeError, match="n_plus \\+ n_minus is above MAX_SIGNS=100,000 signs"):
            sign_test(plus, minus)


def test_sign_test_against_scipy():
    rng = random.Random(3)
    for _ in range(400):
        n = rng.choice([rng.randrange(1, 30), rng.randrange(30, 400)])
        plus = rng.randrange(n + 1)
        expected = binomtest(plus, n, 0.5, alternative="two-sided").pvalue
        assert sign_test(plus, n - plus) == pytest.approx(expected, rel=1e-9, abs=1e-300)


# ------------------------------------------------------------------ properties

outcomes = st.lists(st.booleans(), min_size=2, max_size=5)
sides = st.dictionaries(st.sampled_from([f"t{i}" for i in range(8)]), outcomes, min_size=1)


@settings(max_examples=200)
@given(sides, sides, st.sampled_from([None, 1, 2]))
def test_swapping_a_and_b(a, b, k):
    if not set(a) & set(b):
        with pytest.raises(ValueError, match="no task in common"):
            compare_agents(a, b, k=k)
        return
    ab, ba = compare_agents(a, b, k=k), compare_agents(b, a, k=k)
    assert set(ab.per_task) == set(ba.per_task)
    for t, row in ab.per_task.items():
        assert ba.per_task[t]["diff"] == -row["diff"]
        if k is not None:
            assert ba.per_task[t]["pass_hat_k_diff"] == -row["pass_hat_k_diff"]
    assert set(ab.improved) == set(ba.regressed) and set(ab.regressed) == set(ba.improved)
    assert set(ab.tied) == set(ba.tied)
    assert set(ab.only_a_solves) == set(ba.only_b_solves) and set(ab.only_b_solves) == set(ba.only_a_solves)
    assert (ab.only_in_a, ab.only_in_b) == (ba.only_in_b, ba.only_in_a)
    assert ab.sign_test_p == ba.sign_test_p
    assert 0.0 <= ab.sign_test_p <= 1.0
    assert ab.mean_diff == pytest.approx(-ba.mean_diff, abs=1e-12)
    assert ab.mean_diff == pytest.approx(ab.mean_a - ab.mean_b, abs=1e-12)
    assert len(ab.improved) + len(ab.regressed) + len(ab.tied) == ab.n_tasks
    # the sign test over improved vs regressed tasks
    assert ab.sign_test_p == sign_test(len(ab.improved), len(ab.regressed))


@settings(max_examples=100)
@given(sides)
def test_no_difference(a):
    cmp = compare_agents(a, {t: list(v) for t, v in a.items()}, k=2)
    assert cmp.sign_test_p == 1.0 and cmp.mean_diff == 0.0 and cmp.diff_ci == (0.0, 0.0)
    assert cmp.improved == cmp.regressed == cmp.only_a_solves == cmp.only_b_solves == ()
    assert cmp.tied == tuple(a) and cmp.pass_hat_k_diff == 0.0


def test_the_three_input_forms_agree():
    episodes_a = [Episode(task_id=t, success=s) for t, v in A.items() for s in v]
    episodes_b = [Episode(task_id=t, success=s) for t, v in B.items() for s in v]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # only_a / only_b have fewer than 2 trials
        report_a, report_b = reliability(A, k=2), reliability(B, k=2)
    expected = compare_agents(A, B, k=2)
    assert compare_agents(episodes_a, episodes_b, k=2) == expected
    from_reports = compare_agents(report_a, report_b)      # k from the reports
    assert from_reports.k == 2 and from_reports.per_task == expected.per_task
    # the reports dropped the one-trial tasks, so nothing is unpaired there
    assert from_reports.only_in_a == from_reports.only_in_b == ()
    mixed = compare_agents(report_a, episodes_b)
    assert mixed.per_task == expected.per_task and mixed.only_in_b == ("only_b",)


def test_skipped_tasks_warn():
    with pytest.warns(UserWarning, match=r"1 shared task\(s\) have fewer than 3 trial\(s\)"):
        cmp = compare_agents({"x": [T, T, T], "y": [T, T]}, {"x": [F, F, F], "y": [T, F, T]}, k=3)
    assert cmp.skipped == ("y",) and list(cmp.per_task) == ["x"]
    assert "fewer than k trials: y" in cmp.summary()


def test_summary_without_k_and_custom_names():
    text = compare_agents({"a": [T]}, {"a": [F]}, names=("v2", "v1")).summary()
    assert text.splitlines()[0] == "v2 vs v1 on 1 paired task(s):"
    assert "pass^" not in text and "not paired" not in text
    assert "solved in every trial by v2 and in none by v1: a; the reverse: none" in text
    many = compare_agents({f"t{i}": [T] for i in range(8)}, {f"t{i}": [F] for i in range(8)})
    assert "t0, t1, t2, t3, t4 and 3 more" in many.summary()


# ------------------------------------------------------------------ bad input


def test_no_common_task():
    with pytest.raises(ValueError, match=r"no task in common .*a has 1 task\(s\), b has 1"):
        compare_agents({"x": [T]}, {"y": [T]})
    with pytest.raises(ValueError, match=r"no task in common .*1 shared, 1 of them with fewer than 2 trial"):
        compare_agents({"x": [T]}, {"x": [T]}, k=2)        # every shared task too short
    with pytest.raises(ValueError, match=r"1 of them with fewer than 1 trial"):
        compare_agents({"x": []}, {"x": [T]})
    with pytest.raises(ValueError, match="no task in common"):
        compare_agents({}, [])


def test_ungraded_episodes_same_message_as_reliability():
    with pytest.raises(ValueError) as ours:
        compare_agents([Episode(task_id="t1")], {"t1": [T]})
    with pytest.raises(ValueError) as theirs:
        reliability([Episode(task_id="t1")])
    assert str(ours.value) == str(theirs.value)
    assert "ungraded (success is None)" in str(ours.value)


def test_mismatched_k():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r2, r3 = reliability(A, k=2), reliability(A, k=3)
    with pytest.raises(ValueError, match=r"mismatched k: a is a ReliabilityReport at k=2, but k=3 was asked for"):
        compare_agents(r2, B, k=3)
    with pytest.raises(ValueError, match=r"mismatched k: b is a ReliabilityReport at k=3, but the other side "
                                         r"is a ReliabilityReport at k=2"):
        compare_agents(r2, r3)
    assert compare_agents(r3, r3).k == 3
    with pytest.raises(ValueError, match=r"k must be >= 1, got 0"):
        compare_agents(A, B, k=0)
    with pytest.raises(TypeError, match=r"k must be an integer or None"):
        compare_agents(A, B, k=1.5)


def test_bad_sources():
    with pytest.raises(TypeError, match=r"a must be Episodes, a \{task_id: \[bool, \.\.\.\]\} mapping"):
        compare_agents(3, B)
    with pytest.raises(TypeError, match=r"b must be Episodes"):
        compare_agents(A, "t1")
    with pytest.raises(TypeError, match=r"b must be Episodes.*item of type int"):
        compare_agents(A, [1, 2])
    with pytest.raises(TypeError, match=r"a\['t1'\] must be a sequence of bools"):
        compare_agents({"t1": True}, B)
    with pytest.raises(TypeError, match=r"names must be a pair of strings"):
        compare_agents(A, B, names=("a",))
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
        compare_agents(A, B, alpha=2)
    with pytest.raises(TypeError, match=r"n_plus must be an integer"):
        sign_test(1.5, 2)
    with pytest.raises(ValueError, match=r"n_minus must be >= 0"):
        sign_test(1, -1)
    assert math.isfinite(compare_agents(A, B).mean_diff)
