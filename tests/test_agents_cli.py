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


# ------------------------------------------------------------------ scorekit agents score / gate
import json as _json  # noqa: E402
import webbrowser  # noqa: E402
from math import comb  # noqa: E402
from pathlib import Path  # noqa: E402

from scorekit.agents.harness import run_document, score_episodes  # noqa: E402
from scorekit.demo_report import AGENTS_SAMPLE, score_agents_sample  # noqa: E402

SAMPLE_EPISODES, SAMPLE_TASKS, SAMPLE_PRICES = (str(AGENTS_SAMPLE / name)
                                                for name in ("episodes.jsonl", "tasks.json", "prices.json"))
FIGURES = ("k", "n_tasks", "n_trials", "n_success", "success_rate", "success_ci", "pass_at_k", "pass_hat_k",
           "pass_hat_k_ci", "pass_hat_k_sd", "cost_per_success", "cost_ci", "total_dollars", "per_slice", "per_task")


def agents(capsys, *argv):
    code = main(["agents", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def hand_pass(n, c, k):
    """pass@k and pass^k of c successes in n trials, by the formulas (HumanEval's unbiased
    estimator; the all-k-succeed analogue)."""
    return 1 - comb(n - c, k) / comb(n, k), comb(c, k) / comb(n, k)


def test_score_bundled_sample_equals_the_python_api_and_hand_figures(capsys, tmp_path):
    """The sample's v1 transcripts: the --json record equals what run_suite reports when it replays
    them (the demo), and the headline numbers equal a hand count over the JSONL."""
    out_json = tmp_path / "run.json"
    code, out, err = agents(capsys, "score", SAMPLE_EPISODES, "--tasks", SAMPLE_TASKS, "--prices", SAMPLE_PRICES,
                            "--agent-version", "v1", "--json", out_json)
    assert (code, err) == (0, "")
    ours = _json.loads(out_json.read_text())
    replayed = run_document(score_agents_sample()["runs"]["v1"])
    assert {f: ours[f] for f in FIGURES} == {f: replayed[f] for f in FIGURES}
    # by hand: success = the last assistant text equals the answer (case and spacing aside)
    answers = {t["task_id"]: t["answer"] for t in _json.loads(Path(SAMPLE_TASKS).read_text())}
    prices = _json.loads(Path(SAMPLE_PRICES).read_text())
    wins, dollars = {}, 0.0
    for line in Path(SAMPLE_EPISODES).read_text().splitlines():
        row = _json.loads(line)
        if row["version"] != "v1":
            continue
        final = [m["content"] for m in row["messages"] if m["role"] == "assistant" and m.get("content")][-1]
        wins.setdefault(row["task_id"], []).append(" ".join(final.split()).casefold()
                                                   == " ".join(answers[row["task_id"]].split()).casefold())
        rate = prices[row["model"]]
        dollars += row["usage"]["prompt_tokens"] * rate["input_cost_per_token"] \
            + row["usage"]["completion_tokens"] * rate["output_cost_per_token"]
    successes = sum(map(sum, wins.values()))
    assert (ours["n_trials"], ours["n_success"], ours["k"]) == (40, successes, 4)
    assert ours["total_dollars"] == pytest.approx(dollars, rel=1e-12)
    assert ours["cost_per_success"] == pytest.approx(dollars / successes, rel=1e-12)
    for task, outcomes in wins.items():
        at, hat = hand_pass(len(outcomes), sum(outcomes), 4)
        assert ours["per_task"][task]["pass_at_k"] == pytest.approx(at)
        assert ours["per_task"][task]["pass_hat_k"] == pytest.approx(hat)
    assert ours["pass_hat_k"] == pytest.approx(sum(hand_pass(len(o), sum(o), 4)[1] for o in wins.values()) / 10)
    assert f"  success rate      {successes / 40:.4f}" in out and f"({successes}/40)" in out
    assert f"  cost per success  {dollars / successes:.6f}" in out
    assert "  flight-quito" in out and "3/4" in out


def _trajectory_record(task, trial, ok, tokens=(1000, 100), model="m"):
    return {"task_id": task, "trial": trial, "model": model, "output": "yes" if ok else "no",
            "trajectory": [{"tool": "look", "args": {"q": task}, "observation": "seen"}],
            "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}, "latency_s": 0.5}


def _write_jsonl(path, records):
    path.write_text("".join(_json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def suite(tmp_path):
    """A built suite: task a (5 trials, 3 successes), task b (5 trials, 1 success), in the kit's
    own JSONL (trajectory steps) with one model priced at $1 / $10 per million tokens."""
    tasks = tmp_path / "tasks.json"
    tasks.write_text(_json.dumps([{"task_id": "a", "answer": "yes", "slice": "easy"},
                                  {"task_id": "b", "answer": "YES", "slice": "hard"}]))
    outcomes = {"a": [1, 0, 1, 1, 0], "b": [0, 0, 0, 1, 0]}
    episodes = _write_jsonl(tmp_path / "episodes.jsonl",
                            [_trajectory_record(t, i, ok) for t, oks in outcomes.items() for i, ok in enumerate(oks)])
    prices = tmp_path / "prices.json"
    prices.write_text(_json.dumps({"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-5}}))
    return tmp_path, tasks, episodes, prices


def test_score_built_suite_by_hand(capsys, suite):
    """pass@3 / pass^3 of 5 trials per task and cost per success, against the formulas."""
    folder, tasks, episodes, prices = suite
    code, out, err = agents(capsys, "score", episodes, "--tasks", tasks, "--prices", prices, "--k", "3",
                            "--json", folder / "run.json")
    assert (code, err) == (0, "")
    run = _json.loads((folder / "run.json").read_text())
    a_at, a_hat = hand_pass(5, 3, 3)
    b_at, b_hat = hand_pass(5, 1, 3)
    assert (a_at, a_hat, b_at, b_hat) == (1.0, 0.1, 0.6, 0.0)
    assert run["per_task"] == {"a": {"n": 5, "c": 3, "pass_at_k": 1.0, "pass_hat_k": 0.1},
                               "b": {"n": 5, "c": 1, "pass_at_k": 0.6, "pass_hat_k": 0.0}}
    assert run["pass_at_k"] == pytest.approx(0.8) and run["pass_hat_k"] == pytest.approx(0.05)
    assert (run["n_success"], run["n_trials"], run["success_rate"]) == (4, 10, 0.4)
    per_episode = 1000 * 1e-6 + 100 * 1e-5           # $0.002 each, ten episodes, four successes
    assert run["total_dollars"] == pytest.approx(10 * per_episode)
    assert run["cost_per_success"] == pytest.approx(10 * per_episode / 4)
    assert run["per_slice"]["hard"]["pass_at_k"] == 0.6
    assert "  pass@3            0.8000" in out and "  cost per success  0.005000" in out
    # without --k the tasks' 5 trials are k; without --prices nothing is priced
    code, out, _ = agents(capsys, "score", episodes, "--tasks", tasks)
    assert code == 0 and "k=5" in out and "  pass^5            0.0000" in out and "not priced" in out


def test_score_episodes_pools_files_and_reads_chat_and_inspect(capsys, tmp_path):
    """Trials split over a chat JSONL and an Inspect JSON log (graded by its scorer, --check
    recorded) are one run; the figures equal score_episodes on the same outcomes."""
    tasks = tmp_path / "tasks.jsonl"
    _write_jsonl(tasks, [{"task_id": "1"}, {"task_id": "2"}])
    chat = _write_jsonl(tmp_path / "chat.jsonl", [
        {"task_id": "1", "trial": 9, "success": True, "messages": [{"role": "assistant", "content": "4"}]},
        {"task_id": "2", "trial": 9, "success": False, "messages": [{"role": "assistant", "content": "5"}]}])

    def sample(i, epoch, grade):
        return {"id": i, "epoch": epoch, "messages": [], "scores": {"match": {"value": grade}},
                "output": {"completion": "x", "usage": {"input_tokens": 3, "output_tokens": 1}}}

    log = tmp_path / "log.json"
    log.write_text(_json.dumps({"eval": {"model": "mockllm/model", "task_version": 0},
                                "samples": [sample(1, 1, "C"), sample(1, 2, "I"), sample(2, 1, "C"), sample(2, 2, "C")]}))
    code, _, err = agents(capsys, "score", chat, log, "--tasks", tasks, "--check", "recorded")
    assert code == 2 and "recorded under 2 suite_version values (['', '0'])" in err  # Inspect's task_version 0
    _write_jsonl(chat, [{**r, "run": {"suite_version": "0"}} for r in map(_json.loads, chat.read_text().splitlines())])
    code, out, err = agents(capsys, "score", chat, log, "--tasks", tasks, "--check", "recorded", "--json",
                            tmp_path / "run.json")
    assert (code, err) == (0, "")
    run = _json.loads((tmp_path / "run.json").read_text())
    assert hand_pass(3, 2, 3) == (1.0, 0.0)
    assert run["per_task"] == {"1": {"n": 3, "c": 2, "pass_at_k": 1.0, "pass_hat_k": 0.0},
                               "2": {"n": 3, "c": 2, "pass_at_k": 1.0, "pass_hat_k": 0.0}}
    assert run["provenance"]["model"] == "unknown, mockllm/model" and run["success_rate"] == 4 / 6
    from scorekit.agents import Episode, TaskSpec

    same = score_episodes([Episode(t, success=s) for t, s in (("1", True), ("2", False), ("1", True), ("1", False),
                                                              ("2", True), ("2", True))],
                          [TaskSpec("1"), TaskSpec("2")], check="recorded")
    assert {f: run[f] for f in FIGURES} == {f: run_document(same)[f] for f in FIGURES}


def _baseline(capsys, suite, **change):
    folder, tasks, episodes, _ = suite
    base = folder / "base.json"
    code, _, _ = agents(capsys, "score", episodes, "--tasks", tasks, "--save-baseline", base)
    assert code == 0
    record = _json.loads(base.read_text())
    for key, value in change.items():
        if value is KeyError:
            del record[key]
        else:
            record[key] = value
    base.write_text(_json.dumps(record).replace('"__nan__"', "NaN"))
    return base


def test_gate_exit_status(capsys, suite):
    """0 against its own baseline; 1 with the reason after a regression; 2 on bad input."""
    folder, tasks, episodes, _ = suite
    base = _baseline(capsys, suite)
    code, out, _ = agents(capsys, "gate", episodes, "--tasks", tasks, "--baseline", base)
    assert code == 0 and "gate: passed" in out
    worse = _write_jsonl(folder / "worse.jsonl", [_trajectory_record(t, i, False) for t in "ab" for i in range(5)])
    strong = _write_jsonl(folder / "strong.jsonl", [_trajectory_record(t, i, True) for t in "ab" for i in range(5)])
    strong_base = folder / "strong-base.json"
    assert agents(capsys, "score", strong, "--tasks", tasks, "--save-baseline", strong_base)[0] == 0
    code, out, _ = agents(capsys, "gate", worse, "--tasks", tasks, "--baseline", strong_base)
    assert code == 1 and "gate: FAILED" in out and "success rate regressed: 0.000 vs baseline 1.000" in out
    for argv, message in (
            (("--baseline", folder / "missing.json"), "baseline file not found"),
            (("--baseline", base, "--tolerance", "nan"), "--tolerance must be a finite number >= 0"),
            (("--baseline", base, "--k", "6"), "fewer than k=6 episodes")):
        code, out, err = agents(capsys, "gate", episodes, "--tasks", tasks, *argv)
        assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err, (argv, err)


@pytest.mark.parametrize("change, message", [
    ({"pass_hat_k": "__nan__"}, "NaN is not valid JSON"),
    ({"success_rate": "__nan__"}, "NaN is not valid JSON"),
    ({"n_trials": KeyError}, "no 'n_trials' key"),
    ({"n_trials": 0}, "ZERO trials"),
    ({"k": 2}, "pass^5 could not be compared: the baseline ran k=2"),
    ({"per_task": {"a": {}, "c": {}}}, "not the same suite"),
    ({"provenance": {"suite_version": "other"}}, "different evaluation conditions"),
    ({"total_dollars": 1.0, "cost_per_success": 0.5, "cost_ci": [0.4, 0.6]}, "the baseline has dollar figures"),
    ({"kind": "metric", "metric": "cer"}, "is a metric baseline"),
])
def test_gate_fails_closed_on_baselines_it_cannot_compare(capsys, suite, change, message):
    """A baseline with NaN, a missing or zero count, another k, other tasks, other conditions,
    other pricing or of another kind: exit 1 with the reason, never a pass."""
    folder, tasks, episodes, _ = suite
    base = _baseline(capsys, suite, **change)
    code, out, err = agents(capsys, "gate", episodes, "--tasks", tasks, "--baseline", base)
    assert code == 1 and "gate: FAILED" in out and message in out, (out, err)


def test_gate_refuses_a_baseline_that_is_not_a_record(capsys, suite):
    folder, tasks, episodes, _ = suite
    for text in ("[1, 2]", "not json", ""):
        (folder / "bad.json").write_text(text)
        code, out, _ = agents(capsys, "gate", episodes, "--tasks", tasks, "--baseline", folder / "bad.json")
        assert code == 1 and "cannot be compared with the baseline" in out, text


def test_outputs_never_overwrite_inputs(capsys, suite):
    folder, tasks, episodes, prices = suite
    before = {p: p.read_bytes() for p in (tasks, episodes, prices)}
    for option, target in (("--json", tasks), ("--html", episodes), ("--save-baseline", prices)):
        code, out, err = agents(capsys, "score", episodes, "--tasks", tasks, "--prices", prices, option, target)
        assert (code, out) == (2, "") and "is an input of this run" in err and option in err
    code, _, err = agents(capsys, "score", episodes, "--tasks", tasks, "--json", folder / "x.json",
                          "--save-baseline", folder / "x.json")
    assert code == 2 and "each output needs its own path" in err
    assert {p: p.read_bytes() for p in before} == before
    assert not (folder / "x.json").exists()


@pytest.mark.parametrize("records, tasks_rows, argv, message", [
    ([{"task_id": "a", "usgae": {}}], None, (), "has unknown keys ['usgae']"),
    ([{"task_id": "z", "output": "yes"}], None, (), "episode 0 is of task 'z', which is not a task of the suite"),
    (None, None, ("--k", "9"), "2 task(s) have fewer than k=9 episodes"),
    ([_trajectory_record("a", 0, True), _trajectory_record("a", 1, True), _trajectory_record("b", 0, True)], None, (),
     "different numbers of trials (1 for 'b', 2 for 'a')"),
    ([_trajectory_record("a", 0, True), _trajectory_record("a", 0, False)], None, (), "repeats trial 0 of task 'a'"),
    (None, [{"task_id": "a"}, {"task_id": "b", "answer": "yes"}], (), "checked by 'output', which compares with its 'answer'"),
    (None, [{"task_id": "a", "answer": "yes", "gold": 1}], (), "unknown keys ['gold']"),
    (None, [{"task_id": "a", "answer": "yes"}, {"task_id": "a", "answer": "no"}], (),
     "score_episodes: task 1 (id 'a') repeats the task id of task 0"),
    (None, [{"task_id": "a", "answer": "yes", "check": "no-such-checker"}], (), "no-such-checker"),
    ([{**_trajectory_record("a", 0, True), "version": "v1"}, {**_trajectory_record("b", 0, True), "version": "v2"}],
     None, (), "the episodes are of 2 agent versions ('v1', 'v2')"),
    (None, None, ("--agent-version", "v9"), "no episode has the version 'v9'"),
    ([{"task_id": "a", "output": "yes"}, {"task_id": "b", "output": "yes"}], None, ("--prices", "PRICES"),
     "has no token usage, so --prices would count it as free"),
    (None, None, ("--open",), "--open opens the HTML report: give --html FILE too"),
    (None, None, ("--k", "0"), "score_episodes: k must be >= 1, got 0"),
])
def test_bad_input_is_one_clean_line(capsys, suite, records, tasks_rows, argv, message):
    folder, tasks, episodes, prices = suite
    if records is not None:
        episodes = _write_jsonl(folder / "bad.jsonl", records)
    if tasks_rows is not None:
        tasks.write_text(_json.dumps(tasks_rows))
    argv = [prices if a == "PRICES" else a for a in argv]
    code, out, err = agents(capsys, "score", episodes, "--tasks", tasks, *argv)
    assert (code, out) == (2, "")
    assert err.startswith("scorekit: error: ") and message in err and err.count("\n") == 1, err


def _inspect_log(status="success"):
    def sample(i, epoch, grade):
        return {"id": i, "epoch": epoch, "scores": {"match": {"value": grade, "answer": "x"}},
                "messages": [{"role": "user", "content": "q"},
                             {"role": "assistant", "content": [{"type": "text", "text": "x"}],
                              "tool_calls": [{"id": "c", "function": "look", "arguments": {"q": i}}]},
                             {"role": "tool", "content": "seen", "error": None},
                             {"role": "assistant", "content": "x"}],
                "output": {"completion": "x", "usage": {"input_tokens": 30, "output_tokens": 4}}}

    grades = {(1, 1): "C", (1, 2): "I", (1, 3): "C", (2, 1): "C", (2, 2): "C", (2, 3): "P"}
    return {"version": 2, "status": status, "eval": {"model": "mockllm/model", "task_version": 0},
            "samples": [sample(i, e, g) for (i, e), g in grades.items()]}


def _write_eval(path, log, *, header=True):
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        if header:
            archive.writestr("header.json", _json.dumps({k: v for k, v in log.items() if k != "samples"}))
        for sample in reversed(log["samples"]):  # written as they finish: not in id order
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", _json.dumps(sample))
    return path


def test_inspect_eval_log_reads_as_its_json_form(capsys, tmp_path):
    """A .eval log (a zip of header.json and samples/*.json) scores as the same log in JSON: the
    epochs are the trials, graded by the log's scorer (P, partial, is not a success)."""
    tasks = _write_jsonl(tmp_path / "tasks.jsonl", [{"task_id": "1", "check": "recorded"},
                                                    {"task_id": "2", "check": "recorded"}])
    (tmp_path / "log.json").write_text(_json.dumps(_inspect_log()))
    _write_eval(tmp_path / "log.eval", _inspect_log())
    runs = []
    for log in ("log.json", "log.eval"):
        out_json = tmp_path / f"{log}.out.json"
        code, out, err = agents(capsys, "score", tmp_path / log, "--tasks", tasks, "--json", out_json)
        assert (code, err) == (0, ""), err
        runs.append(_json.loads(out_json.read_text()))
    assert runs[0] == runs[1]
    assert runs[0]["per_task"] == {"1": {"n": 3, "c": 2, "pass_at_k": 1.0, "pass_hat_k": 0.0},
                                   "2": {"n": 3, "c": 2, "pass_at_k": 1.0, "pass_hat_k": 0.0}}
    assert runs[0]["provenance"]["model"] == "mockllm/model"


def test_inspect_and_unknown_logs_are_clean_errors(capsys, suite):
    folder, tasks, _, _ = suite
    (folder / "broken.eval").write_bytes(b"PK\x03\x04 not a zip")
    (folder / "list.json").write_text("[]")
    (folder / "failed.json").write_text(_json.dumps(_inspect_log(status="error")))
    _write_eval(folder / "failed.eval", _inspect_log(status="cancelled"))
    _write_eval(folder / "running.eval", _inspect_log(), header=False)
    for name, message in (("broken.eval", "cannot read this Inspect .eval log (File is not a zip file); convert it "
                                          "with 'inspect log convert --to json'"),
                          ("list.json", "not an Inspect log"),
                          ("failed.json", "the Inspect eval ended with status 'error', not 'success'"),
                          ("failed.eval", "ended with status 'cancelled'"),
                          ("running.eval", "no header.json in this .eval log")):
        code, _, err = agents(capsys, "score", folder / name, "--tasks", tasks, "--check", "recorded")
        assert code == 2 and message in err and err.count("\n") == 1, (name, err)


def test_html_report_and_open(capsys, suite, monkeypatch):
    """--html writes the suite report (suite_report's page); --open shows it through webbrowser."""
    folder, tasks, episodes, _ = suite
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    page = folder / "report.html"
    code, out, _ = agents(capsys, "score", episodes, "--tasks", tasks, "--html", page, "--open", "--title", "Nightly")
    assert code == 0 and f"report: {page}" in out
    html = page.read_text()
    assert "<title>Nightly</title>" in html and "pass^5" in html and "Content-Security-Policy" in html
    assert opened == [page.resolve().as_uri()]


def test_suite_report_writes_what_it_returns(tmp_path):
    from scorekit.agents import reliability
    from scorekit.agents.report import suite_report
    from scorekit.files import OutputPathError

    runs = {"v1": reliability({"t1": [True, True], "t2": [True, False]}, k=2)}
    page = suite_report(runs, title="Nightly", path=tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == page and "pass^2" in page
    source = tmp_path / "episodes.jsonl"
    source.write_text("{}\n")
    with pytest.raises(OutputPathError, match="is an input of this run"):
        suite_report(runs, path=source, inputs=[source])
    assert source.read_text() == "{}\n"


def test_docs_examples(tmp_path):
    """docs/agents.md: the python block of "Scoring recorded episodes" runs as pasted; the shell
    block of "On the command line" runs as one script (its last gate exits 1, as the page says),
    printing the page's text block and writing the files it names."""
    import os

    from doc_examples import blocks, run_python_blocks

    import scorekit

    assert run_python_blocks("agents.md", section="Scoring recorded episodes", optionflags=0) > 0
    ((_, script),) = blocks("agents.md", "sh", section="On the command line")
    ((_, shown),) = blocks("agents.md", "text", section="On the command line")
    prelude = f'set -e\nscorekit() {{ "{sys.executable}" -m scorekit "$@"; }}\npython() {{ "{sys.executable}" "$@"; }}\n'
    env = {**os.environ, "PYTHONPATH": str(Path(scorekit.__file__).parents[1])}
    done = subprocess.run(["bash", "-c", prelude + script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(shown)
    assert "gate: passed against 'baseline.json'" in done.stdout and done.stdout.endswith("gate exit status 1\n")
    assert all((tmp_path / name).is_file() for name in ("baseline.json", "v1.json", "v1.html"))


def test_agents_without_a_command_is_a_usage_error(capsys):
    code, out, err = agents(capsys)
    assert (code, out) == (2, "") and err.endswith("scorekit: error: the following arguments are required: COMMAND\n")


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=7), min_size=1, max_size=6), st.integers(1, 7),
       st.randoms(use_true_random=False))
def test_score_episodes_is_the_formula_over_any_interleaving(outcomes, k, rng):
    """Any outcomes, episodes in any order: each task's pass@k and pass^k are the formulas over its
    n trials, the headline figures their means; too few trials for k is refused."""
    from scorekit.agents import Episode, TaskSpec
    from scorekit.errors import InvalidValueError

    tasks = [TaskSpec(f"t{i}", gold="ok") for i in range(len(outcomes))]
    episodes = [Episode(f"t{i}", output="ok" if ok else "no") for i, oks in enumerate(outcomes) for ok in oks]
    rng.shuffle(episodes)
    if k > min(map(len, outcomes)):
        with pytest.raises(InvalidValueError, match=f"fewer than k={k} episodes"):
            score_episodes(episodes, tasks, k=k)
        return
    report = score_episodes(episodes, tasks, k=k)
    for i, oks in enumerate(outcomes):
        at, hat = hand_pass(len(oks), sum(oks), k)
        row = report.per_task[f"t{i}"]
        assert (row["n"], row["c"]) == (len(oks), sum(oks))
        assert row["pass_at_k"] == pytest.approx(at, abs=1e-12) and row["pass_hat_k"] == pytest.approx(hat, abs=1e-12)
    assert report.pass_hat_k == pytest.approx(sum(hand_pass(len(o), sum(o), k)[1] for o in outcomes) / len(outcomes))
    assert report.n_success == sum(map(sum, outcomes))
