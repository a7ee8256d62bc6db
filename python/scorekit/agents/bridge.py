"""One-way adapters: whatever an agent already emits, turned into a scorekit :class:`Episode`.

This module owns the readers of foreign shapes: chat transcripts (OpenAI- and Anthropic-style),
provider ``usage`` records, Inspect AI samples and logs, DeepEval test cases, and the episode
records of an episodes JSONL file (:func:`episode_from_record`). It **imports none
of those packages**: it reads only the shape of what they emit (keys of dicts, attributes of
objects), so scoring their output never pulls them in. Running those harnesses is the business of
:mod:`scorekit.agents.wrappers`.

:func:`trajectory_from_messages` is the workhorse: each assistant tool call becomes a
:class:`Step`, and the next tool/function/user message becomes its observation.

>>> messages = [
...     {"role": "user", "content": "weather in Paris?"},
...     {"role": "assistant", "tool_calls": [
...         {"function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
...     {"role": "tool", "content": "18C"},
...     {"role": "assistant", "content": "It is 18C in Paris."},
... ]
>>> traj = trajectory_from_messages(messages)
>>> traj.tools
('get_weather',)
>>> traj.steps[0].args, traj.steps[0].observation
({'city': 'Paris'}, '18C')
"""

from __future__ import annotations

import json
import math
import numbers
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Optional

from scorekit.agents.base import Cost, Episode, RunProvenance, Step, TaskSpec, Trajectory, as_call
from scorekit.errors import InvalidTypeError, InvalidValueError, describe

__all__ = [
    "as_agent",
    "trajectory_from_messages",
    "episode_from_messages",
    "cost_from_usage",
    "from_inspect_sample",
    "episodes_from_inspect_log",
    "inspect_score_value",
    "from_deepeval_test_case",
    "episode_from_record",
    "RECORD_KEYS",
    "INSPECT_SCORE_VALUES",
    "DEFAULT_SUCCESS_THRESHOLD",
]

#: Inspect's letter and word grades as numbers (C = correct, I = incorrect, P = partial, N = no answer).
INSPECT_SCORE_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0,
                        "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
#: An Inspect sample succeeds when its score value is ``>=`` this.
DEFAULT_SUCCESS_THRESHOLD = 1.0

#: Roles whose message answers the oldest pending tool call (Anthropic results arrive as ``user``).
RESULT_ROLES = ("tool", "function", "user")

# Spellings of each token kind in provider usage records (first present, non-None one wins).
_INPUT_KEYS = ("input_tokens", "prompt_tokens")
_OUTPUT_KEYS = ("output_tokens", "completion_tokens")
_CACHED_KEYS = ("cache_read_input_tokens", "cached_tokens", "cache_read_tokens", "cached_input_tokens")
_REASONING_KEYS = ("reasoning_tokens",)
# OpenAI nests the cached and reasoning counts, which are *included* in the prompt/completion counts.
_INPUT_DETAILS = ("prompt_tokens_details", "input_tokens_details")
_OUTPUT_DETAILS = ("completion_tokens_details", "output_tokens_details")


def _is_mapping(value: Any) -> bool:
    # the exact-type test first: transcripts are mostly plain dicts, and the ABC check is slow
    return type(value) is dict or isinstance(value, Mapping)


def _field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a mapping, ``obj.name`` otherwise; ``default`` when absent."""
    if _is_mapping(obj):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _is_block_list(content: Any) -> bool:
    return type(content) is list or (isinstance(content, Sequence) and not isinstance(content, str))


def _items(value: Any, field: str) -> list:
    """The items of a list-valued field (None counts as empty); a clear error for a non-list."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise InvalidTypeError(f"must be a list, got {describe(value)}", field=field)
    return list(value)


# --------------------------------------------------------------------------- tool calls

def _decode_arguments(raw: Any) -> dict:
    """Tool-call arguments as a dict: a mapping is copied; a JSON string is parsed (an object becomes
    the dict, any other JSON value ``{"_": value}``, an unparsable payload ``{"_malformed": raw}`` —
    an evaluable failure, not a crash); anything else (None, blank, other types) is ``{}``."""
    if _is_mapping(raw):
        return dict(raw)
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):  # JSONDecodeError, over-long integers, deep nesting
            return {"_malformed": raw}
        return dict(parsed) if isinstance(parsed, Mapping) else {"_": parsed}
    return {}


def _read_call(call: Any, where: str) -> Optional[tuple[str, dict]]:
    """``(name, args)`` of one entry of ``tool_calls``, or None when it names no tool.

    Dicts: OpenAI wire ``{"function": {"name", "arguments"}}`` or flat ``{"name"|"function",
    "arguments"|"args"|"input"}``. Objects: the OpenAI SDK's ``call.function.name/.arguments``, or
    Inspect's ``ToolCall(function="name", arguments={...})``.
    """
    if _is_mapping(call):
        fn = call.get("function", call)
        if _is_mapping(fn):
            name = fn.get("name") or ""
            raw = fn.get("arguments", fn.get("args", fn.get("input", {})))
        else:
            name = fn if isinstance(fn, str) else call.get("name", "")
            raw = call.get("arguments", call.get("args", call.get("input", {})))
    elif call is None or isinstance(call, (str, bytes, numbers.Number)):
        raise InvalidTypeError(f"must be a tool call (a mapping or an object), got {describe(call)}",
                               field=where)
    else:
        fn = getattr(call, "function", None)
        if fn is not None and not isinstance(fn, str):
            name = getattr(fn, "name", None) or ""
            raw = getattr(fn, "arguments", getattr(fn, "args", {}))
        else:
            name = fn if isinstance(fn, str) else getattr(call, "name", None) or ""
            raw = getattr(call, "arguments", getattr(call, "args", getattr(call, "input", {})))
    if not name:
        return None
    return str(name), _decode_arguments(raw)


def _tool_use(block: Any) -> Optional[tuple[str, dict]]:
    """``(name, args)`` of an Anthropic ``tool_use`` content block (dict or object), else None."""
    if _field(block, "type") != "tool_use":
        return None
    name = _field(block, "name")
    if not name:
        return None
    return str(name), _decode_arguments(_field(block, "input", {}))


def _calls_of(message: Mapping, index: int) -> Iterator[tuple[str, dict]]:
    """The calls of an assistant message: its ``tool_calls``, then its ``tool_use`` content blocks."""
    tool_calls = _items(message.get("tool_calls") or None, f"messages[{index}]['tool_calls']")
    for position, call in enumerate(tool_calls):
        read = _read_call(call, f"messages[{index}]['tool_calls'][{position}]")
        if read is not None:
            yield read
    content = message.get("content")
    if _is_block_list(content):
        for block in content:
            read = _tool_use(block)
            if read is not None:
                yield read


# --------------------------------------------------------------------------- results and text

def _text_of(content: Any) -> str:
    """A content's text: a string itself; a block list, the ``text`` of its ``"text"`` blocks
    joined (blocks whose text is not a string are skipped); anything else ``""``."""
    if isinstance(content, str):
        return content
    if _is_block_list(content):
        parts = (_field(block, "text") for block in content if _field(block, "type") == "text")
        return "".join(part for part in parts if isinstance(part, str))
    return ""


def _observation(content: Any) -> Any:
    """What a result carries: its text when it has some, else the raw content."""
    return _text_of(content) or content


def _results_of(message: Mapping) -> Iterator[tuple[Any, bool]]:
    """``(observation, failed)`` for each tool result a result message carries.

    A content list holding Anthropic ``tool_result`` blocks yields one result per block (its
    ``content``, failed when the block or the message has ``is_error``); any other message is
    one result: its whole content, failed when the message has ``is_error``.
    """
    message_failed = bool(message.get("is_error"))
    content = message.get("content")
    if _is_block_list(content):
        blocks = [block for block in content if _field(block, "type") == "tool_result"]
        if blocks:
            for block in blocks:
                yield _observation(_field(block, "content")), message_failed or bool(_field(block, "is_error"))
            return
    yield _observation(content), message_failed


# --------------------------------------------------------------------------- transcripts

def _object_message(message: Any) -> dict:
    """A message object (OpenAI SDK, Inspect AI) read as a dict. Inspect marks a failed tool call
    with ``error`` (a ``ToolCallError``) rather than in the content: it sets ``is_error``, and its
    ``message`` stands in for an empty content."""
    content = getattr(message, "content", "")
    read = {"role": getattr(message, "role", ""), "content": content,
            "tool_calls": getattr(message, "tool_calls", None),
            "is_error": bool(getattr(message, "is_error", False))}
    error = getattr(message, "error", None)
    if error is not None:
        read["is_error"] = True
        if not _text_of(content):
            read["content"] = getattr(error, "message", None) or str(error)
    return read


def _messages(messages: Any) -> list[Mapping]:
    """Validate a transcript and read its message objects as dicts."""
    if messages is None or isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidTypeError(f"must be a list of chat messages, got {describe(messages)}", field="messages")
    read: list[Mapping] = []
    for index, message in enumerate(messages):
        if _is_mapping(message):
            read.append(message)
        elif hasattr(message, "role") and not isinstance(message, (str, bytes)):
            read.append(_object_message(message))
        else:
            raise InvalidTypeError(
                f"must be a chat message (a mapping, or an object with a 'role'), got {describe(message)}",
                field=f"messages[{index}]")
    return read


def _trajectory(messages: list[Mapping]) -> Trajectory:
    steps: list[Step] = []
    pending: deque[tuple[str, dict]] = deque()  # calls awaiting a result, oldest first
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            pending.extend(_calls_of(message, index))
        elif pending and role in RESULT_ROLES:  # tuple membership: == only, so any role value is safe
            for observation, failed in _results_of(message):
                if not pending:
                    break  # more results than calls: the rest answer nothing
                tool, args = pending.popleft()
                steps.append(Step(tool, args, observation, str(observation) if failed else None))
    steps.extend(Step(tool, args) for tool, args in pending)  # calls that never got a result
    return Trajectory(steps)


def trajectory_from_messages(messages: Sequence[Mapping]) -> Trajectory:
    """Parse a chat transcript into a :class:`~scorekit.agents.base.Trajectory`.

    Each assistant tool call (OpenAI ``tool_calls`` — dicts or SDK objects — then Anthropic
    ``tool_use`` content blocks) becomes a :class:`~scorekit.agents.base.Step`. The next ``tool``,
    ``function`` or ``user`` message answers the oldest unanswered call and becomes its
    ``observation``; ``is_error`` on it marks the step as errored (``error`` = the observation as
    text). A user message holding Anthropic ``tool_result`` blocks answers one call per block.
    Results with no call pending are ignored; calls never answered end the trajectory with
    ``observation=None``. Arguments that are not valid JSON become ``{"_malformed": raw}``.

    >>> t = trajectory_from_messages([
    ...     {"role": "assistant", "content": [{"type": "tool_use", "name": "search", "input": {"q": "cats"}}]},
    ...     {"role": "user", "content": [{"type": "tool_result", "content": "no cats", "is_error": True}]},
    ... ])
    >>> t.steps[0]
    Step(tool='search', args={'q': 'cats'}, observation='no cats', error='no cats')
    """
    return _trajectory(_messages(messages))


def episode_from_messages(messages: Sequence[Mapping], *, task_id: str = "", usage: Any = None,
                          output: Any = None, final_state: Any = None,
                          latency_s: Optional[float] = None) -> Episode:
    """Build a full :class:`~scorekit.agents.base.Episode` from a transcript (+ optional usage/state).

    ``output`` defaults to the last non-empty assistant text — the agent's final answer; ``cost``
    is read from ``usage`` with :func:`cost_from_usage` (None without usage).

    >>> ep = episode_from_messages([{"role": "assistant", "content": "final answer"}], task_id="t1",
    ...                            usage={"prompt_tokens": 10, "completion_tokens": 3})
    >>> ep.output, ep.cost.input_tokens, ep.cost.output_tokens
    ('final answer', 10, 3)
    """
    read = _messages(messages)
    if output is None:
        output = _final_text(read)
    cost = cost_from_usage(usage, latency_s=latency_s) if usage is not None else None
    return Episode(task_id=task_id, trajectory=_trajectory(read), output=output,
                   final_state=final_state, cost=cost)


def _final_text(messages: list[Mapping]) -> Optional[str]:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            text = _text_of(message.get("content"))
            if text:
                return text
    return None


# --------------------------------------------------------------------------- usage

def _lookup(record: Any, names: tuple[str, ...]) -> tuple[Optional[str], Any]:
    """``(name, value)`` of the first of ``names`` present in ``record`` with a non-None value."""
    for name in names:
        value = _field(record, name)
        if value is not None:
            return name, value
    return None, None


def _token_count(value: Any, name: str) -> int:
    """A token count as an int: whole, finite and ``>= 0`` (integral floats and digit strings pass)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise InvalidTypeError(f"must be a whole number of tokens, got {describe(value)}", field=f"usage[{name!r}]")
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise InvalidValueError(f"must be a whole number of tokens, got {describe(value)}",
                                    field=f"usage[{name!r}]") from None
    elif not isinstance(value, numbers.Integral):
        number = float(value)
        if not math.isfinite(number) or not number.is_integer():
            raise InvalidValueError(f"must be a whole, finite number of tokens, got {value!r}",
                                    field=f"usage[{name!r}]")
        value = number
    count = int(value)
    if count < 0:
        raise InvalidValueError(f"must be >= 0, got {count}", field=f"usage[{name!r}]")
    return count


def _count(record: Any, names: tuple[str, ...]) -> tuple[Optional[str], int]:
    name, value = _lookup(record, names)
    return name, (0 if name is None else _token_count(value, name))


def _split_detail(usage: Any, total_key: Optional[str], total: int, details: tuple[str, ...],
                  part: str) -> tuple[int, int]:
    """``(total - part, part)`` where ``part`` is read from a nested OpenAI ``*_details`` record
    (whose count is included in ``total``); ``(total, 0)`` when there is none."""
    detail_key, record = _lookup(usage, details)
    if record is None:
        return total, 0
    _, value = _count(record, (part,))
    if value > total:
        raise InvalidValueError(f"{detail_key}.{part} ({value}) exceeds {total_key or 'the total'} ({total})",
                                field="usage")
    return total - value, value


def cost_from_usage(usage: Any, *, latency_s: Optional[float] = None) -> Cost:
    """Build a :class:`~scorekit.agents.base.Cost` from a provider ``usage`` object or dict.

    Understands the OpenAI (``prompt_tokens`` / ``completion_tokens``, with the nested
    ``prompt_tokens_details.cached_tokens`` and ``completion_tokens_details.reasoning_tokens``
    split out of the counts that include them) and Anthropic (``input_tokens`` / ``output_tokens``
    / ``cache_read_input_tokens``) spellings. Counts must be whole numbers ``>= 0``.

    >>> c = cost_from_usage({"prompt_tokens": 100, "completion_tokens": 20})
    >>> c.input_tokens, c.output_tokens
    (100, 20)
    >>> c = cost_from_usage({"prompt_tokens": 100, "completion_tokens": 20,
    ...                      "prompt_tokens_details": {"cached_tokens": 80}})
    >>> c.input_tokens, c.cached_input_tokens, c.total_tokens
    (20, 80, 120)
    """
    if usage is None or isinstance(usage, (str, bytes, numbers.Number)) or (
            isinstance(usage, Sequence) and not isinstance(usage, Mapping)):
        raise InvalidTypeError(f"must be a usage mapping or object, got {describe(usage)}", field="usage")
    if latency_s is not None and (isinstance(latency_s, bool) or not isinstance(latency_s, numbers.Real)):
        raise InvalidTypeError(f"must be a number of seconds or None, got {describe(latency_s)}", field="latency_s")
    if latency_s is not None and not (math.isfinite(latency_s) and latency_s >= 0):
        raise InvalidValueError(f"must be finite and >= 0, got {latency_s!r}", field="latency_s")
    input_key, input_tokens = _count(usage, _INPUT_KEYS)
    output_key, output_tokens = _count(usage, _OUTPUT_KEYS)
    cached_key, cached = _count(usage, _CACHED_KEYS)
    reasoning_key, reasoning = _count(usage, _REASONING_KEYS)
    if cached_key is None:
        input_tokens, cached = _split_detail(usage, input_key, input_tokens, _INPUT_DETAILS, "cached_tokens")
    if reasoning_key is None:
        output_tokens, reasoning = _split_detail(usage, output_key, output_tokens, _OUTPUT_DETAILS,
                                                 "reasoning_tokens")
    return Cost(input_tokens=input_tokens, output_tokens=output_tokens, cached_input_tokens=cached,
                reasoning_tokens=reasoning, retries=0, latency_s=latency_s)


# --------------------------------------------------------------------------- Inspect AI

def _sample_id(sample: Any) -> str:
    sample_id = _field(sample, "id")
    return "" if sample_id is None else str(sample_id)


def from_inspect_sample(sample: Any, *, task_id: str = "") -> Episode:
    """Adapt an Inspect AI ``EvalSample``-shaped object (or its JSON dict) into an :class:`Episode`.

    Reads ``.messages`` (Inspect's ``ToolCall`` has the tool *name* in ``.function``; a tool
    message's ``.error`` marks the step as errored), ``.output.completion`` (the output; the last
    assistant text when it is None), ``.output.usage`` (the cost) and ``.id`` (the task id unless
    ``task_id`` is given) — no ``inspect_ai`` import.

    >>> from types import SimpleNamespace as NS
    >>> sample = NS(id=1, messages=[
    ...     {"role": "assistant", "tool_calls": [NS(function="get_weather", arguments={"city": "Paris"})]},
    ...     NS(role="tool", content="", error=NS(message="timed out"))],
    ...     output=NS(completion="sorry", usage={"input_tokens": 40, "output_tokens": 9}))
    >>> ep = from_inspect_sample(sample)
    >>> ep.task_id, ep.output, ep.trajectory.steps[0].error, ep.cost.input_tokens
    ('1', 'sorry', 'timed out', 40)
    """
    messages = _field(sample, "messages") or []
    output = _field(sample, "output")
    completion = None if output is None else _field(output, "completion")
    usage = None if output is None else _field(output, "usage")
    return episode_from_messages(messages, task_id=task_id or _sample_id(sample), usage=usage,
                                 output=completion)


def inspect_score_value(value: Any) -> Optional[float]:
    """An Inspect ``Score.value`` as a float, or ``None`` when it is not a finite scalar grade.

    Letter grades (``C``/``I``/``P``/``N``), ``yes``/``no``/``true``/``false`` (any case), numeric
    strings, bools and numbers are read; mappings, lists and non-finite numbers are not.

    >>> inspect_score_value("C"), inspect_score_value("P"), inspect_score_value(0.25)
    (1.0, 0.5, 0.25)
    >>> inspect_score_value({"accuracy": 1.0}) is None   # a multi-value score: no scalar
    True
    """
    if isinstance(value, str):
        text = value.strip()
        grade = INSPECT_SCORE_VALUES.get(text, INSPECT_SCORE_VALUES.get(text.lower()))
        if grade is not None:
            return grade
        try:
            number = float(text)
        except ValueError:
            return None
    elif isinstance(value, (bool, int, float)):
        try:
            number = float(value)
        except OverflowError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _scores_of(sample: Any, index: int) -> Mapping:
    scores = _field(sample, "scores")
    if scores is None:
        return {}
    if not isinstance(scores, Mapping):
        raise InvalidTypeError(f"must be a mapping of scorer name to score, got {describe(scores)}",
                               field=f"log.samples[{index}].scores")
    return scores


def episodes_from_inspect_log(log: Any, *, scorer: Optional[str] = None,
                              success_threshold: float = DEFAULT_SUCCESS_THRESHOLD,
                              task_prefix: str = "") -> Iterator[Episode]:
    """One graded :class:`Episode` per sample *per epoch* of an Inspect ``EvalLog``.

    Inspect's ``epochs`` are scorekit's *trials*: a run with ``epochs=k`` gives k episodes per
    ``task_id`` (the sample id, prefixed ``"<task_prefix>/"`` when one is given — needed when
    pooling logs whose ids collide), ready for :func:`~scorekit.agents.reliability`. Each episode
    is graded ``success = value >= success_threshold`` from its score (``scorer``, else the
    sample's first) read with :func:`inspect_score_value`; no scalar score leaves it ungraded
    (``None``). ``meta`` records ``epoch``, ``score`` and ``scorer``; ``run`` the model and task
    version. A ``scorer`` that no sample has raises ``ValueError`` at once (a typo would otherwise
    leave every episode ungraded), and so do two samples with one id and epoch (they would pool
    into one task's trials). Duck-typed: reads ``log.samples`` and ``log.eval``.

    >>> from types import SimpleNamespace as NS
    >>> sample = NS(id="q1", epoch=1, messages=[], output=NS(completion="4", usage=None),
    ...             scores={"match": NS(value="C")})
    >>> log = NS(samples=[sample], eval=NS(model="mockllm/model", task_version=0))
    >>> [(e.task_id, e.success, e.meta["epoch"]) for e in episodes_from_inspect_log(log)]
    [('q1', True, 1)]
    """
    if isinstance(success_threshold, bool) or not isinstance(success_threshold, numbers.Real) \
            or math.isnan(success_threshold):
        raise InvalidValueError(f"must be a number, got {describe(success_threshold)}", field="success_threshold")
    samples = _items(_field(log, "samples"), "log.samples")
    scores = [_scores_of(sample, index) for index, sample in enumerate(samples)]
    if scorer is not None and samples and not any(scorer in by_name for by_name in scores):
        known = sorted({str(name) for by_name in scores for name in by_name})
        raise InvalidValueError(
            f"episodes_from_inspect_log: no sample has a score named {scorer!r} (scorers in this log: "
            f"{known}) -- every episode would be ungraded.")
    _refuse_pooled_samples(samples)
    header = _field(log, "eval")
    model = None if header is None else _field(header, "model")
    version = None if header is None else _field(header, "task_version")
    run = RunProvenance(model="" if model is None else str(model),
                        suite_version="" if version is None else str(version))
    return _graded_episodes(samples, scores, scorer, success_threshold, task_prefix, run)


def _repeated_trial(keys: Iterable[tuple[str, Any]]) -> Optional[tuple[int, int]]:
    """The positions ``(first, again)`` of the first ``(task id, epoch)`` pair seen twice (epochs
    compared by their ``repr``, so any value can be one), or None: two records of one trial are
    two tasks (or one record twice), never two trials of one task."""
    seen: dict = {}
    for index, (task_id, epoch) in enumerate(keys):
        first = seen.setdefault((task_id, repr(epoch)), index)
        if first != index:
            return first, index
    return None


def _refuse_pooled_samples(samples: list) -> None:
    """Refuse two samples of one id and epoch (``1`` and ``"1"`` are one id, as are a missing
    id and ``""``): their episodes would pool into one task's trials."""
    repeat = _repeated_trial((_sample_id(sample), _field(sample, "epoch")) for sample in samples)
    if repeat is not None:
        first, again = repeat
        raise InvalidValueError(
            f"repeats the id {_sample_id(samples[again])!r} and epoch {_field(samples[again], 'epoch')!r} of "
            f"log.samples[{first}]: two samples of one trial would count as two trials of one task",
            field=f"log.samples[{again}]")


def _graded_episodes(samples: list, scores: list[Mapping], scorer: Optional[str], threshold: float,
                     task_prefix: str, run: RunProvenance) -> Iterator[Episode]:
    for sample, by_name in zip(samples, scores):
        name = scorer if scorer is not None else next(iter(by_name), None)
        score = by_name.get(name) if name is not None else None
        value = None if score is None else inspect_score_value(_field(score, "value", score))
        sample_id = _sample_id(sample)
        episode = from_inspect_sample(sample, task_id=f"{task_prefix}/{sample_id}" if task_prefix else sample_id)
        episode.success = None if value is None else value >= threshold
        episode.run = run
        episode.meta = {"epoch": _field(sample, "epoch"), "score": value, "scorer": name}
        yield episode


# --------------------------------------------------------------------------- DeepEval

def from_deepeval_test_case(case: Any, *, task_id: str = "") -> Episode:
    """Adapt a DeepEval ``LLMTestCase``-shaped object into an :class:`Episode` (duck-typed).

    Reads ``.actual_output`` (the output) and ``.tools_called`` (each a ``ToolCall`` with ``.name``
    and ``.input_parameters``, a dict of the same, or a bare tool name). DeepEval phones home
    (Confident-AI telemetry) by default; scorekit never imports it here, and
    :mod:`scorekit.agents.wrappers` opts out before it does.

    >>> from types import SimpleNamespace as NS
    >>> ep = from_deepeval_test_case(NS(actual_output="meow", tools_called=[
    ...     NS(name="search", input_parameters={"q": "cats"})]), task_id="d1")
    >>> ep.output, ep.trajectory.calls
    ('meow', (('search', {'q': 'cats'}),))
    """
    steps = []
    for index, tool in enumerate(_items(_field(case, "tools_called"), "case.tools_called")):
        name = tool if isinstance(tool, str) else _field(tool, "name")
        if not name:
            raise InvalidValueError(f"names no tool: {describe(tool)}", field=f"case.tools_called[{index}]")
        parameters = None if isinstance(tool, str) else _field(tool, "input_parameters")
        if parameters is not None and not isinstance(parameters, Mapping):
            raise InvalidTypeError(f"must be a mapping, got {describe(parameters)}",
                                   field=f"case.tools_called[{index}].input_parameters")
        steps.append(Step(str(name), dict(parameters or {})))
    return Episode(task_id=task_id, trajectory=Trajectory(steps), output=_field(case, "actual_output"))


# --------------------------------------------------------------------------- episode records

#: The keys of an episode record (one line of an episodes JSONL file); any other key is refused.
RECORD_KEYS = ("task_id", "messages", "trajectory", "output", "final_state", "usage", "latency_s", "success",
               "model", "run", "trial", "version", "meta")
_RUN_TEXT = ("model", "simulator", "suite_version", "scaffold")


def _recorded_step(item: Any, where: str) -> Step:
    """A step of a record's ``trajectory``: ``{"tool", "args", "observation", "error"}`` (or a
    ``(tool, args)`` pair, or a tool name)."""
    try:
        tool, args = as_call(item)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(str(exc), field=where) from None
    if not tool:
        raise InvalidValueError(f"names no tool: {describe(item)}", field=where)
    if not _is_mapping(item):
        return Step(tool, args)
    error = item.get("error")
    if error is not None and not isinstance(error, str):
        raise InvalidTypeError(f"must be a string or null, got {describe(error)}", field=f"{where}['error']")
    return Step(tool, args, item.get("observation"), error)


def _recorded_run(record: Mapping) -> Optional[RunProvenance]:
    """The record's ``run`` (a mapping of :class:`RunProvenance` fields), with ``model`` from the
    record's own ``model`` when the run does not name another."""
    run = record.get("run")
    if run is not None and not _is_mapping(run):
        raise InvalidTypeError(f"must be a mapping of run fields, got {describe(run)}", field="run")
    fields = dict(run or {})
    unknown = sorted(map(str, set(fields) - {"seed", "temperature", *_RUN_TEXT}))
    if unknown:
        raise InvalidValueError(f"has unknown fields {unknown} (known: seed, temperature, {', '.join(_RUN_TEXT)})",
                                field="run")
    model = record.get("model")
    if model is not None:
        if fields.get("model", model) != model:
            raise InvalidValueError(f"names the model {fields['model']!r} and the record {model!r}", field="run")
        fields["model"] = model
    for name in _RUN_TEXT:
        if not isinstance(fields.get(name, ""), str):
            raise InvalidTypeError(f"must be a string, got {describe(fields[name])}", field=f"run[{name!r}]")
    seed, temperature = fields.get("seed"), fields.get("temperature")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InvalidTypeError(f"must be a whole number or null, got {describe(seed)}", field="run['seed']")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, numbers.Real)
                                    or not math.isfinite(temperature)):
        raise InvalidValueError(f"must be a finite number or null, got {describe(temperature)}",
                                field="run['temperature']")
    return RunProvenance(**fields) if fields else None


def episode_from_record(record: Mapping) -> Episode:
    """One recorded episode, as a line of an episodes JSONL file holds it, as an :class:`Episode`.

    ``task_id`` (a non-empty string) names the task; what the agent did is a chat transcript
    (``messages``, read by :func:`episode_from_messages`: OpenAI or Anthropic style) or scorekit's
    own steps (``trajectory``: ``{"tool", "args", "observation", "error"}`` each), not both;
    ``usage`` is a provider usage record or scorekit's token counts (:func:`cost_from_usage`), with
    ``latency_s``; ``output`` (default: the transcript's last assistant text), ``final_state`` and
    a recorded ``success`` (``true``/``false``/``null``) are taken as they are; ``model`` and
    ``run`` (:class:`RunProvenance` fields) say how it was run; ``trial``, ``version`` and ``meta``
    go to :attr:`Episode.meta`. Any other key is refused (a misspelt ``usage`` would otherwise
    price the episode at nothing), as are values of the wrong type.

    >>> ep = episode_from_record({"task_id": "t1", "model": "m", "trial": 0,
    ...                           "trajectory": [{"tool": "search", "args": {"q": "cats"}}],
    ...                           "output": "3 cats", "usage": {"input_tokens": 12, "output_tokens": 3}})
    >>> ep.task_id, ep.calls, ep.output, ep.cost.total_tokens, ep.run.model, ep.meta
    ('t1', (('search', {'q': 'cats'}),), '3 cats', 15, 'm', {'trial': 0})
    """
    if not _is_mapping(record):
        raise InvalidTypeError(f"must be a JSON object, got {describe(record)}", field="record")
    unknown = [str(key) for key in record if key not in RECORD_KEYS]
    if unknown:
        raise InvalidValueError(f"has unknown keys {unknown} (an episode record has {', '.join(RECORD_KEYS)}; put "
                                "anything else under 'meta')", field="record")
    task_id = record.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise InvalidValueError(f"must be a non-empty string, got {describe(task_id)}", field="task_id")
    if "messages" in record and "trajectory" in record:
        raise InvalidValueError("has both 'messages' and 'trajectory'; give one account of what the agent did",
                                field="record")
    usage, latency = record.get("usage"), record.get("latency_s")
    if latency is not None and usage is None:
        raise InvalidValueError("'latency_s' without 'usage': give the token counts too (an episode without "
                                "them is priced at nothing)", field="record")
    success = record.get("success")
    if success is not None and not isinstance(success, bool):
        raise InvalidTypeError(f"must be true, false or null, got {describe(success)}", field="success")
    trial = record.get("trial")
    if trial is not None and (isinstance(trial, bool) or not isinstance(trial, int) or trial < 0):
        raise InvalidValueError(f"must be a whole number >= 0 or null, got {describe(trial)}", field="trial")
    version = record.get("version")
    if version is not None and not isinstance(version, str):
        raise InvalidTypeError(f"must be a string or null, got {describe(version)}", field="version")
    meta = record.get("meta")
    if meta is not None and not _is_mapping(meta):
        raise InvalidTypeError(f"must be a mapping, got {describe(meta)}", field="meta")
    if "messages" in record:
        episode = episode_from_messages(record["messages"], task_id=task_id, usage=usage, output=record.get("output"),
                                        final_state=record.get("final_state"), latency_s=latency)
    else:
        steps = [_recorded_step(item, f"trajectory[{i}]")
                 for i, item in enumerate(_items(record.get("trajectory"), "trajectory"))]
        cost = None if usage is None else cost_from_usage(usage, latency_s=latency)
        episode = Episode(task_id=task_id, trajectory=Trajectory(steps), output=record.get("output"),
                          final_state=record.get("final_state"), cost=cost)
    episode.success = success
    episode.run = _recorded_run(record)
    episode.meta = {**(meta or {}), **{key: record[key] for key in ("trial", "version") if record.get(key) is not None}}
    return episode


# --------------------------------------------------------------------------- plain functions

def as_agent(fn: Callable) -> Callable[[TaskSpec], Episode]:
    """Wrap a plain ``input -> answer`` function into the harness's ``TaskSpec -> Episode`` shape.

    The trivial agent should not have to learn the Episode type.

    >>> from scorekit.agents.base import TaskSpec
    >>> agent = as_agent(str.upper)
    >>> agent(TaskSpec("t1", input="hi")).output
    'HI'
    """
    if not callable(fn):
        raise InvalidTypeError(f"must be a callable input -> answer, got {describe(fn)}", field="fn")

    def run(task: TaskSpec) -> Episode:
        return Episode(task_id=task.task_id, output=fn(task.input))

    run.__name__ = getattr(fn, "__name__", "agent")
    return run
