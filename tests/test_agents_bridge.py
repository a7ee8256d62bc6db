"""``scorekit.agents.bridge``: ek's docstring examples and spec vectors, differential tests against
ek on thousands of random transcripts / usage records / Inspect logs / DeepEval cases (with the
documented deviations modelled exactly), bad input, and the linear-time pending-call queue."""

from __future__ import annotations

import doctest
import json
import math
import random
import time
from types import SimpleNamespace as NS

import ek.agents.bridge as ek_bridge
import pytest

import scorekit.agents.bridge as bridge
from doc_examples import run_python_blocks
from scorekit.agents.base import Cost, Step, TaskSpec
from scorekit.agents.bridge import (
    INSPECT_SCORE_VALUES, as_agent, cost_from_usage, episode_from_messages, episodes_from_inspect_log,
    from_deepeval_test_case, from_inspect_sample, inspect_score_value, trajectory_from_messages,
)
from scorekit.errors import InvalidTypeError, InvalidValueError


def fields(steps):
    """Steps as comparable tuples (``repr`` so that NaN arguments compare equal)."""
    return repr([(s.tool, s.args, s.observation, s.error) for s in steps])


def cost_fields(cost):
    return None if cost is None else (cost.input_tokens, cost.output_tokens, cost.cached_input_tokens,
                                      cost.reasoning_tokens, cost.retries, cost.latency_s)


# --------------------------------------------------------------------------- examples

def test_docstring_examples():
    assert doctest.testmod(bridge, optionflags=doctest.ELLIPSIS).failed == 0


def test_docs_page():
    assert run_python_blocks("agents-bridges.md", min_blocks=5) >= 20


def test_exports_and_constants():
    assert set(bridge.__all__) >= {"as_agent", "trajectory_from_messages", "episode_from_messages",
                                   "cost_from_usage", "from_inspect_sample", "from_deepeval_test_case",
                                   "episodes_from_inspect_log", "inspect_score_value"}
    assert INSPECT_SCORE_VALUES == ek_bridge.INSPECT_SCORE_VALUES
    assert bridge.DEFAULT_SUCCESS_THRESHOLD == ek_bridge.DEFAULT_SUCCESS_THRESHOLD == 1.0


# --------------------------------------------------------------------------- spec vectors (§9)

def test_spec_doc_example():
    messages = [
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "content": "18C"},
        {"role": "assistant", "content": "It is 18C in Paris."},
    ]
    traj = trajectory_from_messages(messages)
    assert traj.tools == ("get_weather",)
    assert (traj.steps[0].args, traj.steps[0].observation) == ({"city": "Paris"}, "18C")
    assert episode_from_messages(messages).output == "It is 18C in Paris."


def test_spec_anthropic_tool_use():
    traj = trajectory_from_messages([
        {"role": "assistant", "content": [{"type": "tool_use", "name": "search", "input": {"q": "cats"}}]},
        {"role": "user", "content": "results..."}])
    assert traj.tools == ("search",)
    assert traj.steps[0] == Step("search", {"q": "cats"}, "results...", None)


def test_spec_malformed_arguments():
    traj = trajectory_from_messages([{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": "{not json"}}]}])
    assert traj.steps[0].args == {"_malformed": "{not json"}


def test_spec_openai_sdk_objects():
    call = NS(id="c1", type="function", function=NS(name="search", arguments='{"q": "cats"}'))
    traj = trajectory_from_messages([{"role": "assistant", "tool_calls": [call]}])
    assert traj.tools == ("search",) and traj.steps[0].args == {"q": "cats"}


def test_spec_mixed_batch():
    messages = [
        {"role": "assistant", "tool_calls": [
            {"function": {"name": "f", "arguments": "[1,2]"}},
            {"function": {"name": "g", "arguments": ""}},
            {"function": {"name": "", "arguments": "{}"}},
            {"name": "h", "arguments": {"x": 1}},
            {"function": "i", "arguments": {"y": 2}}]},
        {"role": "tool", "content": "r1", "is_error": True},
        {"role": "tool", "content": "r2"},
    ]
    assert trajectory_from_messages(messages).steps == (
        Step("f", {"_": [1, 2]}, "r1", error="r1"), Step("g", {}, "r2", None),
        Step("h", {"x": 1}, None, None), Step("i", {"y": 2}, None, None))


def test_spec_one_result_for_two_calls():
    traj = trajectory_from_messages([
        {"role": "assistant", "tool_calls": [{"name": "a"}, {"name": "b"}]},
        {"role": "tool", "content": "ra"}])
    assert traj.steps == (Step("a", {}, "ra", None), Step("b", {}, None, None))


def test_spec_tool_result_block_deviation():
    # ek leaves the raw block list as the observation and ignores the block's is_error; scorekit
    # reads each tool_result block (documented decision).
    block = {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "42"}]}
    messages = [
        {"role": "assistant", "content": [{"type": "text", "text": "let me look"},
                                          {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}]},
        {"role": "user", "content": [block]}]
    assert ek_bridge.trajectory_from_messages(messages).steps[0].observation == [block]
    assert trajectory_from_messages(messages).steps == (Step("lookup", {}, "42", None),)


def test_spec_cost_from_usage():
    c = cost_from_usage({"prompt_tokens": 100, "completion_tokens": 20})
    assert (c.input_tokens, c.output_tokens) == (100, 20)
    c = cost_from_usage({"input_tokens": 40, "output_tokens": 9, "cache_read_input_tokens": 5,
                         "reasoning_tokens": 3}, latency_s=1.5)
    assert c == Cost(40, 9, 5, 3, retries=0, latency_s=1.5)


def test_spec_episode_from_messages():
    ep = episode_from_messages([{"role": "assistant", "content": "final answer"}], task_id="t1",
                               usage={"prompt_tokens": 10, "completion_tokens": 3})
    assert (ep.task_id, ep.output, ep.cost.input_tokens, ep.cost.output_tokens) == ("t1", "final answer", 10, 3)
    assert ep.success is None and ep.final_state is None
    ep = episode_from_messages([
        {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": ""}])
    assert ep.output == "ab" and ep.cost is None
    assert episode_from_messages([], output="given", final_state={"x": 1}).final_state == {"x": 1}


def test_spec_from_inspect_sample():
    tool_call = NS(id="c1", function="get_weather", arguments={"city": "Paris"})
    sample = NS(id="s1", messages=[
        NS(role="user", content="weather?", tool_calls=None),
        NS(role="assistant", content="", tool_calls=[tool_call]),
        NS(role="tool", content="18C", tool_calls=None),
        NS(role="assistant", content="It is 18C.", tool_calls=None)],
        output=NS(completion="It is 18C.", usage={"input_tokens": 40, "output_tokens": 9}))
    ep = from_inspect_sample(sample)
    assert ep.trajectory.tools == ("get_weather",)
    assert ep.trajectory.steps[0].args == {"city": "Paris"} and ep.trajectory.steps[0].observation == "18C"
    assert (ep.output, ep.cost.input_tokens, ep.task_id) == ("It is 18C.", 40, "s1")
    assert from_inspect_sample(sample, task_id="mine").task_id == "mine"


def test_spec_from_deepeval_test_case():
    case = NS(tools_called=[NS(name="search", input_parameters={"q": "cats"})], actual_output="meow")
    ep = from_deepeval_test_case(case, task_id="d1")
    assert (ep.task_id, ep.output, ep.trajectory.tools, ep.trajectory.steps[0].args) == (
        "d1", "meow", ("search",), {"q": "cats"})
    assert ep.cost is None


def test_spec_as_agent():
    agent = as_agent(str.upper)
    assert agent(TaskSpec("t1", input="hi")).output == "HI" and agent.__name__ == "upper"
    ep = as_agent(lambda x: x * 2)(TaskSpec("t2", input=3))
    assert (ep.task_id, ep.output, ep.trajectory.steps) == ("t2", 6, ())
    assert as_agent(lambda x: x).__name__ == "<lambda>"
    with pytest.raises(InvalidTypeError, match="callable"):
        as_agent("not a function")


# --------------------------------------------------------------------------- decided deviations

def test_inspect_tool_error_marks_the_step():
    messages = [NS(role="assistant", content="", tool_calls=[NS(function="f", arguments={})]),
                NS(role="tool", content="", tool_calls=None, error=NS(type="timeout", message="timed out")),
                NS(role="assistant", content="", tool_calls=[NS(function="g", arguments={})]),
                NS(role="tool", content="partial output", tool_calls=None, error=NS(message="exit 1"))]
    steps = from_inspect_sample(NS(id=1, messages=messages, output=None)).trajectory.steps
    assert steps == (Step("f", {}, "timed out", "timed out"), Step("g", {}, "partial output", "partial output"))


def test_sample_id_zero_is_kept():
    sample = NS(id=0, messages=[], output=None)
    assert ek_bridge.from_inspect_sample(sample).task_id == ""     # ek: `id or ""`
    assert from_inspect_sample(sample).task_id == "0"


def test_openai_nested_usage_details():
    usage = {"prompt_tokens": 1000, "completion_tokens": 300, "total_tokens": 1300,
             "prompt_tokens_details": {"cached_tokens": 800},
             "completion_tokens_details": {"reasoning_tokens": 200}}
    c = cost_from_usage(usage)
    assert cost_fields(c) == (200, 100, 800, 200, 0, None) and c.total_tokens == 1300
    # ek reads top-level keys only
    assert cost_fields(ek_bridge.cost_from_usage(usage)) == (1000, 300, 0, 0, 0, None)
    # the Responses API spelling, SDK-style objects, and details set to None
    responses = NS(input_tokens=50, output_tokens=10, input_tokens_details=NS(cached_tokens=20),
                   output_tokens_details=NS(reasoning_tokens=None))
    assert cost_fields(cost_from_usage(responses)) == (30, 10, 20, 0, 0, None)
    assert cost_fields(cost_from_usage({"prompt_tokens": 5, "prompt_tokens_details": None})) == (5, 0, 0, 0, 0, None)
    # a top-level spelling wins and nothing is subtracted (as ek)
    assert cost_fields(cost_from_usage({"prompt_tokens": 10, "cached_tokens": 4,
                                        "prompt_tokens_details": {"cached_tokens": 9}})) == (10, 0, 4, 0, 0, None)
    with pytest.raises(InvalidValueError, match="exceeds"):
        cost_from_usage({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 11}})


def test_real_openai_sdk_shapes():
    chat = pytest.importorskip("openai.types.chat")
    completion = pytest.importorskip("openai.types.completion_usage")
    call = chat.ChatCompletionMessageToolCall(
        id="c1", type="function", function={"name": "search", "arguments": '{"q": "cats"}'})
    message = chat.ChatCompletionMessage(role="assistant", content=None, tool_calls=[call])
    traj = trajectory_from_messages([{"role": "user", "content": "find cats"}, message,
                                     {"role": "tool", "tool_call_id": "c1", "content": "3 cats"}])
    assert traj.steps == (Step("search", {"q": "cats"}, "3 cats", None),)
    usage = completion.CompletionUsage(prompt_tokens=100, completion_tokens=20, total_tokens=120,
                                       prompt_tokens_details={"cached_tokens": 60})
    assert cost_fields(cost_from_usage(usage)) == (40, 20, 60, 0, 0, None)


# --------------------------------------------------------------------------- random transcripts

NAMES = ["search", "get_weather", "book", "refund", "", "lookup"]
PAYLOADS = ['{"q": "cats"}', '{"a": {"b": [1, 2]}, "c": null}', "[1, 2]", '"text"', "3", "null", "true",
            "{not json", "", "   ", "\u00a0", "NaN", '{"a": 1, "a": 2}', "[", "1e999", None, 7, [1, 2]]


def payload(r):
    if r.random() < 0.3:
        return {"q": r.choice(["cats", "dogs", 1, None]), "n": r.randrange(3)}
    return r.choice(PAYLOADS)


def tool_call(r):
    name, args = r.choice(NAMES), payload(r)
    return r.choice([
        lambda: {"id": f"c{r.randrange(99)}", "type": "function", "function": {"name": name, "arguments": args}},
        lambda: {"function": {"name": name, "args": args}},
        lambda: {"function": {"name": name, "input": args}},
        lambda: {"name": name, "arguments": args},
        lambda: {"function": name, "args": args},
        lambda: {"name": name, "input": args},
        lambda: {"function": None, "name": name, "arguments": args},
        lambda: NS(id="c", type="function", function=NS(name=name, arguments=args)),
        lambda: NS(function=NS(name=name, args=args)),
        lambda: NS(function=name, arguments=args),
        lambda: NS(function=name, input=args),
        lambda: NS(name=name, args=args),
    ])()


def text_block(r):
    text = r.choice(["", "a", "bc", "It is 18C."])
    return {"type": "text", "text": text} if r.random() < 0.6 else NS(type="text", text=text)


def tool_use_block(r):
    name, args = r.choice(NAMES), payload(r)
    return {"type": "tool_use", "id": "t", "name": name, "input": args} if r.random() < 0.6 else \
        NS(type="tool_use", id="t", name=name, input=args)


def result_content(r):
    return r.choice([
        lambda: r.choice(["18C", "", "error: boom", "ok"]),
        lambda: [text_block(r) for _ in range(r.randrange(3))],
        lambda: None,
        lambda: [{"type": "image", "source": {}}],
        lambda: {"json": 1},
    ])()


def message(r, *, tool_results=False):
    role = r.choice(["assistant"] * 4 + ["tool"] * 3 + ["user"] * 2 + ["function", "system", None])
    if role == "assistant":
        m = {"role": "assistant"}
        if r.random() < 0.6:
            m["tool_calls"] = [tool_call(r) for _ in range(r.randrange(4))]
        if r.random() < 0.6:
            m["content"] = r.choice([
                lambda: r.choice(["", "thinking", "It is 18C in Paris."]),
                lambda: [r.choice([text_block, tool_use_block])(r) for _ in range(r.randrange(4))],
                lambda: None])()
        return m
    m = {"role": role, "content": result_content(r)}
    if tool_results and role == "user" and r.random() < 0.7:
        m["content"] = [tool_result_block(r) for _ in range(r.randrange(1, 4))] + \
            [text_block(r) for _ in range(r.randrange(2))]
    if r.random() < 0.3:
        m["is_error"] = r.choice([True, False, 1, 0, ""])
    return m


def tool_result_block(r):
    block = {"type": "tool_result", "tool_use_id": "t", "content": result_content(r)}
    if r.random() < 0.4:
        block["is_error"] = r.choice([True, False])
    return block if r.random() < 0.7 else NS(**block)


def transcript(r, **kw):
    return [message(r, **kw) for _ in range(r.randrange(12))]


def test_differential_trajectories_against_ek():
    r = random.Random(1915)
    kinds = set()
    for _ in range(3000):
        messages = transcript(r)
        mine, theirs = trajectory_from_messages(messages), ek_bridge.trajectory_from_messages(messages)
        assert fields(mine.steps) == fields(theirs.steps), messages
        kinds.update((s.error is not None, s.observation is None, "_malformed" in s.args) for s in mine.steps)
        usage = {"prompt_tokens": r.randrange(100), "completion_tokens": r.randrange(50)} if r.random() < 0.5 else None
        task_id = r.choice(["", "t1"])
        ep, ek_ep = (module.episode_from_messages(messages, task_id=task_id, usage=usage, latency_s=0.5)
                     for module in (bridge, ek_bridge))
        assert (ep.task_id, ep.output, ep.final_state, cost_fields(ep.cost)) == \
            (ek_ep.task_id, ek_ep.output, ek_ep.final_state, cost_fields(ek_ep.cost))
        assert fields(ep.trajectory.steps) == fields(ek_ep.trajectory.steps)
    assert len(kinds) == 8  # errored / unanswered / malformed steps all occurred, in every combination


def expand_tool_results(messages):
    """ek's reading of scorekit's tool_result rule: each tool_result block as its own user message."""
    expanded = []
    for m in messages:
        content = m.get("content")
        blocks = [b for b in content if bridge._field(b, "type") == "tool_result"] \
            if isinstance(content, list) else []
        if not blocks:
            expanded.append(m)
            continue
        for b in blocks:
            expanded.append({"role": m["role"], "content": bridge._field(b, "content"),
                             "is_error": bool(m.get("is_error")) or bool(bridge._field(b, "is_error"))})
    return expanded


def test_differential_tool_result_blocks_against_ek():
    r = random.Random(77)
    answered = 0
    for _ in range(2000):
        messages = transcript(r, tool_results=True)
        mine = trajectory_from_messages(messages)
        assert fields(mine.steps) == fields(ek_bridge.trajectory_from_messages(expand_tool_results(messages)).steps)
        answered += sum(s.observation is not None for s in mine.steps)
    assert answered > 1000


def as_object(m):
    return NS(role=m["role"], content=m.get("content"), tool_calls=m.get("tool_calls"),
              is_error=m.get("is_error", False))


def test_differential_message_objects_against_ek():
    r = random.Random(5)
    for _ in range(1000):
        messages = transcript(r)
        mixed = [as_object(m) if r.random() < 0.5 else m for m in messages]
        assert fields(trajectory_from_messages(mixed).steps) == \
            fields(ek_bridge.trajectory_from_messages(messages).steps)
        assert episode_from_messages(mixed).output == ek_bridge.episode_from_messages(messages).output


# --------------------------------------------------------------------------- usage

USAGE_KEYS = ["input_tokens", "prompt_tokens", "output_tokens", "completion_tokens", "cache_read_input_tokens",
              "cached_tokens", "cache_read_tokens", "reasoning_tokens", "total_tokens", "cache_creation_input_tokens"]


def test_differential_cost_from_usage_against_ek():
    r = random.Random(3)
    for _ in range(3000):
        record = {k: r.choice([None, 0, r.randrange(10**6), r.randrange(10**12), 12.0, str(r.randrange(99))])
                  for k in r.sample(USAGE_KEYS, r.randrange(len(USAGE_KEYS) + 1))}
        usage = record if r.random() < 0.5 else NS(**record)
        latency = r.choice([None, 0.0, 1.5, 30])
        assert cost_fields(cost_from_usage(usage, latency_s=latency)) == \
            cost_fields(ek_bridge.cost_from_usage(usage, latency_s=latency)), record


@pytest.mark.parametrize("usage, error, match", [
    ({"prompt_tokens": float("nan")}, InvalidValueError, r"usage\['prompt_tokens'\].*finite"),
    ({"prompt_tokens": float("inf")}, InvalidValueError, "finite"),
    ({"prompt_tokens": -3}, InvalidValueError, r"usage\['prompt_tokens'\] must be >= 0"),
    ({"completion_tokens": 2.7}, InvalidValueError, r"usage\['completion_tokens'\].*whole"),
    ({"input_tokens": "abc"}, InvalidValueError, "whole number"),
    ({"input_tokens": [1]}, InvalidTypeError, "whole number"),
    ({"reasoning_tokens": True}, InvalidTypeError, r"usage\['reasoning_tokens'\]"),
    ({"cached_tokens": "-1"}, InvalidValueError, ">= 0"),
    (NS(output_tokens=-1), InvalidValueError, r"usage\['output_tokens'\]"),
    ("100 tokens", InvalidTypeError, "usage must be a usage mapping or object"),
    (None, InvalidTypeError, "usage"),
    (5, InvalidTypeError, "usage"),
    ([{"prompt_tokens": 1}], InvalidTypeError, "usage"),
])
def test_bad_usage(usage, error, match):
    with pytest.raises(error, match=match):
        cost_from_usage(usage)


@pytest.mark.parametrize("latency, error", [(float("nan"), InvalidValueError), (-1.0, InvalidValueError),
                                            (float("inf"), InvalidValueError), ("1s", InvalidTypeError),
                                            (True, InvalidTypeError)])
def test_bad_latency(latency, error):
    with pytest.raises(error, match="latency_s"):
        cost_from_usage({"prompt_tokens": 1}, latency_s=latency)
    with pytest.raises(error, match="latency_s"):
        episode_from_messages([], usage={}, latency_s=latency)


def test_lenient_usage_values_kept_from_ek():
    # whole floats, digit strings and numpy integers are counts; None falls through to the next spelling
    np = pytest.importorskip("numpy")
    usage = {"prompt_tokens": 12.0, "completion_tokens": " 7 ", "cached_tokens": np.int64(3),
             "input_tokens": None}
    expected = (12, 7, 3, 0, 0, None)
    assert cost_fields(cost_from_usage(usage)) == cost_fields(ek_bridge.cost_from_usage(usage)) == expected
    assert cost_fields(cost_from_usage(NS())) == (0, 0, 0, 0, 0, None)   # no known field: nothing counted


# --------------------------------------------------------------------------- Inspect scores and logs

SCORE_VALUES = ["C", "I", "P", "N", "c", "n", "yes", "YES", "No", " true ", "False", "0.5", " 0.25 ", "1e3", "nan",
                "inf", "x", "", "Correct", "１", "1_0", "0x10", True, False, 0, 1, 2.5, -1, float("nan"),
                float("inf"), None, {"accuracy": 1.0}, [1], 3 + 0j, b"C"]


def test_inspect_score_value_against_ek():
    for value in SCORE_VALUES:
        mine, theirs = inspect_score_value(value), ek_bridge.inspect_score_value(value)
        assert repr(mine) == repr(theirs), value
    assert inspect_score_value(10**400) is None   # ek: OverflowError
    assert inspect_score_value("9" * 5000) is None


def random_sample(r, scorers):
    names = r.sample(scorers, r.randrange(len(scorers) + 1))
    scores = {n: r.choice([NS(value=r.choice(SCORE_VALUES[:30])), r.choice([1.0, 0]), None]) for n in names}
    usage = r.choice([None, {"input_tokens": r.randrange(100), "output_tokens": r.randrange(20)}])
    return NS(id=r.choice(["q1", "q2", 3, None]), epoch=r.choice([1, 2, None]), messages=transcript(r),
              output=r.choice([None, NS(completion=r.choice([None, "", "4"]), usage=usage)]),
              scores=r.choice([scores, scores, None]))


def test_differential_inspect_logs_against_ek():
    r = random.Random(11)
    graded = pooled = 0
    for _ in range(600):
        scorers = ["match", "model_graded", "includes"]
        log = NS(samples=[random_sample(r, scorers) for _ in range(r.randrange(5))],
                 eval=r.choice([NS(model="mockllm/model", task_version=r.choice([0, 2, None]), task="t"), None]))
        kwargs = {"scorer": r.choice([None, None, "match", "includes"]),
                  "success_threshold": r.choice([1.0, 0.5, 0.0]), "task_prefix": r.choice(["", "T"])}
        try:
            theirs = list(ek_bridge.episodes_from_inspect_log(log, **kwargs))
        except ValueError as error:
            with pytest.raises(ValueError, match="no sample has a score named") as mine:
                list(episodes_from_inspect_log(log, **kwargs))
            assert str(mine.value) == str(error)
            continue
        trials = [("" if s.id is None else str(s.id), repr(s.epoch)) for s in log.samples]
        if len(set(trials)) < len(trials):  # ek pools them into one task's trials; scorekit refuses
            with pytest.raises(InvalidValueError, match=r"log.samples\[\d+\] repeats the id .* of log.samples"):
                episodes_from_inspect_log(log, **kwargs)
            pooled += 1
            continue
        mine = list(episodes_from_inspect_log(log, **kwargs))
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            assert (a.task_id, a.success, a.meta, a.output, cost_fields(a.cost)) == \
                (b.task_id, b.success, b.meta, b.output, cost_fields(b.cost))
            assert (a.run.model, a.run.suite_version, a.run.seed) == (b.run.model, b.run.suite_version, b.run.seed)
            assert fields(a.trajectory.steps) == fields(b.trajectory.steps)
            graded += a.success is not None
    assert graded > 200 and pooled > 50


def test_inspect_samples_of_one_trial_never_pool_into_one_task():
    def log(*ids_and_epochs):
        return NS(samples=[NS(id=i, epoch=e, messages=[], output=None, scores={"m": NS(value="C")})
                           for i, e in ids_and_epochs])

    # the same id at two epochs: two trials of one task, as before
    assert [e.task_id for e in episodes_from_inspect_log(log(("q", 1), ("q", 2)))] == ["q", "q"]
    for samples, shown in [((("q", 1), ("q", 1)), "'q' and epoch 1"), (((1, 1), ("1", 1)), "'1' and epoch 1"),
                           (((None, None), ("", None)), "'' and epoch None")]:
        with pytest.raises(InvalidValueError, match=rf"log.samples\[1\] repeats the id {shown} of log.samples\[0\]"):
            episodes_from_inspect_log(log(*samples))
    assert len(list(ek_bridge.episodes_from_inspect_log(log(("q", 1), ("q", 1))))) == 2   # the kit pools them


def test_inspect_log_json_dicts_and_bad_shapes():
    # a log read from JSON: dicts all the way down (ek reads attributes only)
    log = {"eval": {"model": "m", "task_version": 1},
           "samples": [{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}},
                        "messages": [{"role": "assistant", "content": "4"}],
                        "output": {"completion": "4", "usage": {"input_tokens": 3}}}]}
    [ep] = episodes_from_inspect_log(log)
    assert (ep.task_id, ep.success, ep.output, ep.cost.input_tokens, ep.run.model) == ("1", True, "4", 3, "m")
    with pytest.raises(InvalidTypeError, match=r"log.samples\[0\].scores"):
        episodes_from_inspect_log(NS(samples=[NS(id=1, scores=[NS(value=1)])]))
    with pytest.raises(InvalidTypeError, match="log.samples must be a list"):
        episodes_from_inspect_log(NS(samples=5))
    with pytest.raises(InvalidValueError, match="success_threshold"):
        episodes_from_inspect_log(NS(samples=[]), success_threshold=float("nan"))
    # the scorer check is eager (ek's fires on the first next())
    with pytest.raises(ValueError, match=r"no sample has a score named 'q' \(scorers in this log: \['m'\]\)"):
        episodes_from_inspect_log(NS(samples=[NS(id=1, scores={"m": NS(value=1)})]), scorer="q")
    assert list(episodes_from_inspect_log(NS(samples=[]), scorer="q")) == []


# --------------------------------------------------------------------------- DeepEval cases

def test_differential_deepeval_cases_against_ek():
    r = random.Random(8)
    for _ in range(1000):
        tools = [r.choice([lambda: NS(name=r.choice(NAMES[:4]), input_parameters=r.choice([None, {}, {"q": 1}])),
                           lambda: r.choice(NAMES[:4])])() for _ in range(r.randrange(4))]
        case = NS(actual_output=r.choice([None, "meow", 3]), tools_called=r.choice([tools, None]))
        task_id = r.choice(["", "d1"])
        mine = from_deepeval_test_case(case, task_id=task_id)
        theirs = ek_bridge.from_deepeval_test_case(case, task_id=task_id)
        assert (mine.task_id, mine.output, fields(mine.trajectory.steps)) == \
            (theirs.task_id, theirs.output, fields(theirs.trajectory.steps))


def test_deepeval_case_dicts_and_bad_tools():
    ep = from_deepeval_test_case({"actual_output": "o", "tools_called": [{"name": "s", "input_parameters": {"a": 1}}]})
    assert (ep.output, ep.trajectory.calls) == ("o", (("s", {"a": 1}),))
    with pytest.raises(InvalidValueError, match=r"case.tools_called\[1\] names no tool"):
        from_deepeval_test_case(NS(tools_called=["s", NS(name=None)]))
    with pytest.raises(InvalidTypeError, match=r"case.tools_called\[0\].input_parameters must be a mapping"):
        from_deepeval_test_case(NS(tools_called=[NS(name="s", input_parameters="q=1")]))
    with pytest.raises(InvalidTypeError, match="case.tools_called must be a list"):
        from_deepeval_test_case(NS(tools_called="search"))


# --------------------------------------------------------------------------- bad transcripts

@pytest.mark.parametrize("messages, error, match", [
    (None, InvalidTypeError, "messages must be a list of chat messages"),
    ("user: hi", InvalidTypeError, "messages must be a list"),
    ({"role": "assistant"}, InvalidTypeError, r"messages must be a list.*dict"),
    (42, InvalidTypeError, "messages must be a list"),
    ([{"role": "user", "content": "hi"}, "assistant: hello"], InvalidTypeError,
     r"messages\[1\] must be a chat message"),
    ([None], InvalidTypeError, r"messages\[0\]"),
    ([{"role": "assistant"}, ["assistant", "hi"]], InvalidTypeError, r"messages\[1\]"),
    ([NS(content="no role")], InvalidTypeError, r"messages\[0\]"),
    ([{"role": "assistant", "tool_calls": {"name": "a"}}], InvalidTypeError,
     r"messages\[0\]\['tool_calls'\] must be a list"),
    ([{}, {"role": "assistant", "tool_calls": "search"}], InvalidTypeError, r"messages\[1\]\['tool_calls'\]"),
    ([{"role": "assistant", "tool_calls": [{"name": "a"}, None]}], InvalidTypeError,
     r"messages\[0\]\['tool_calls'\]\[1\] must be a tool call"),
    ([{"role": "assistant", "tool_calls": ["search"]}], InvalidTypeError, r"\['tool_calls'\]\[0\]"),
])
def test_bad_transcripts(messages, error, match):
    with pytest.raises(error, match=match):
        trajectory_from_messages(messages)
    with pytest.raises(error, match=match):
        episode_from_messages(messages)


def test_hostile_but_readable_transcripts():
    deep = "[" * 100_000 + "]" * 100_000          # ek: RecursionError
    huge = "1" * 5000                             # Python refuses int strings this long
    traj = trajectory_from_messages([{"role": "assistant", "tool_calls": [
        {"name": "a", "arguments": deep}, {"name": "b", "arguments": huge}]}])
    assert traj.steps[0].args == {"_malformed": deep} and traj.steps[1].args == {"_malformed": huge}
    # text blocks whose text is not a string are skipped (ek: TypeError from str.join)
    traj = trajectory_from_messages([{"role": "assistant", "tool_calls": [{"name": "a"}]},
                                     {"role": "tool", "content": [{"type": "text", "text": None},
                                                                  {"type": "text", "text": "ok"}]}])
    assert traj.steps[0].observation == "ok"
    # unhashable or odd roles are ignored, generators and tuples are transcripts
    calls = ({"role": "assistant", "tool_calls": ({"name": "a"},)}, {"role": ["tool"], "content": "x"})
    assert trajectory_from_messages(m for m in calls).steps == (Step("a"),)
    # results with no pending call, and surplus tool_result blocks, answer nothing
    traj = trajectory_from_messages([
        {"role": "tool", "content": "orphan"},
        {"role": "assistant", "tool_calls": [{"name": "a"}]},
        {"role": "user", "content": [{"type": "tool_result", "content": "1"}, {"type": "tool_result", "content": "2"}]},
        {"role": "tool", "content": "late"}])
    assert traj.steps == (Step("a", {}, "1", None),)


def test_many_outstanding_calls_are_linear():
    n = 20_000
    answered = [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": {"i": i}} for i in range(n)]}]
    answered += [{"role": "tool", "content": str(i)} for i in range(n)]
    unanswered = [{"role": "assistant", "tool_calls": [{"name": "g"}] * n}]
    start = time.perf_counter()
    traj = trajectory_from_messages(answered)
    rest = trajectory_from_messages(unanswered)
    elapsed = time.perf_counter() - start
    assert len(traj) == len(rest) == n
    assert traj.steps[-1] == Step("f", {"i": n - 1}, str(n - 1), None)   # FIFO: the oldest call answered first
    assert elapsed < 1.0, elapsed


def test_json_argument_roundtrip_property():
    from hypothesis import given, strategies as st
    leaves = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
    values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)

    @given(st.dictionaries(st.text(max_size=5), values, max_size=4))
    def check(args):
        encoded = json.dumps(args)
        traj = trajectory_from_messages([{"role": "assistant", "tool_calls": [
            {"function": {"name": "f", "arguments": encoded}}, {"name": "g", "arguments": args}]}])
        assert traj.steps[0].args == args == traj.steps[1].args
        assert traj.steps[1].args is not args          # a copy, never the caller's dict

    check()
    assert math.isnan(trajectory_from_messages([{"role": "assistant", "tool_calls": [
        {"name": "f", "arguments": "NaN"}]}]).steps[0].args["_"])
