"""Optional backends as scorekit strategies: Inspect AI, uqlm, Ragas and DeepEval.

:mod:`scorekit.agents` scores episodes in plain Python; this module owns the batteries-included
layer for teams who already run these libraries. Each adapter imports its backend **lazily**, at
call time and only when no backend object was injected (guarded by
:func:`~scorekit.registry.requires_extra`, whose error names the extra to install), so
``import scorekit`` stays light; and each takes an injectable backend, so it runs — in tests and
in use — without network access or the extra. The dependency direction is ``scorekit -> backend``,
never the reverse. Inspect AI, Ragas and DeepEval come with the ``agents`` extra, uqlm (heavy:
torch, transformers) with ``agreement``.

- :func:`run_inspect` — run an Inspect AI eval and get graded :class:`~scorekit.agents.Episode` s
  (Inspect's ``epochs`` are scorekit's trials, ready for ``reliability``).
- :class:`UqlmConsistencySignal` — uqlm's black-box sample-and-vote self-consistency, a ``[0, 1]``
  :class:`~scorekit.base.Signal`.
- :class:`RagasSignal` — a reference-free Ragas metric (faithfulness, answer relevancy, context
  precision) as a :class:`~scorekit.base.Signal` over a RAG sample.
- :class:`DeepEvalMetric` — DeepEval's ``ToolCorrectnessMetric`` / ``TaskCompletionMetric`` /
  ``GEval`` as a scorekit metric over episodes; Confident-AI telemetry is switched off before
  DeepEval is imported.

Example (a fake backend, no extra needed):

>>> class FakeUQ:
...     def score(self, prompt):
...         return 0.75
>>> UqlmConsistencySignal(scorer=FakeUQ())("What is 2+2?")
0.75
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import math
import numbers
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from scorekit.agents.base import as_call, is_episode
from scorekit.agents.bridge import DEFAULT_SUCCESS_THRESHOLD, episodes_from_inspect_log
from scorekit.base import GraphGrammar, Score
from scorekit.errors import InvalidTypeError, InvalidValueError, describe
from scorekit.registry import requires_extra

__all__ = [
    "run_inspect",
    "UqlmConsistencySignal",
    "RagasSignal",
    "DeepEvalMetric",
    "disable_deepeval_telemetry",
    "DEEPEVAL_KINDS",
    "DEEPEVAL_TELEMETRY_ENV",
    "DEFAULT_GEVAL_PARAMS",
    "DEFAULT_NUM_RESPONSES",
    "DEFAULT_RAGAS_METRIC",
    "DEFAULT_SUCCESS_THRESHOLD",
    "DEFAULT_UQLM_SCORER",
    "RAGAS_COLLECTION_METRICS",
    "RAGAS_METRICS",
]

#: ``DeepEvalMetric(kind=...)`` → the ``deepeval.metrics`` class it builds.
DEEPEVAL_KINDS = {"tool_correctness": "ToolCorrectnessMetric", "task_completion": "TaskCompletionMetric",
                  "geval": "GEval"}
#: The environment variable DeepEval reads to opt out of Confident-AI telemetry.
DEEPEVAL_TELEMETRY_ENV = "DEEPEVAL_TELEMETRY_OPT_OUT"
#: The ``LLMTestCaseParams`` a GEval judge sees unless ``evaluation_params=`` says otherwise.
DEFAULT_GEVAL_PARAMS = ("input", "actual_output")
#: Generations uqlm samples per prompt.
DEFAULT_NUM_RESPONSES = 5
#: The Ragas metric :class:`RagasSignal` builds by default.
DEFAULT_RAGAS_METRIC = "faithfulness"
#: The uqlm scorer column :class:`UqlmConsistencySignal` reads by default.
DEFAULT_UQLM_SCORER = "noncontradiction"
#: ``RagasSignal(name=...)`` → class of ``ragas.metrics.collections`` (the API that survives Ragas 1.0).
RAGAS_COLLECTION_METRICS = {"faithfulness": "Faithfulness", "answer_relevancy": "AnswerRelevancy",
                            "context_precision": "ContextPrecisionWithoutReference"}
#: ``RagasSignal(name=...)`` → class of the legacy ``ragas.metrics`` (deprecated since Ragas 0.4).
RAGAS_METRICS = {"faithfulness": "Faithfulness", "answer_relevancy": "ResponseRelevancy",
                 "context_precision": "LLMContextPrecisionWithoutReference"}

_TOOL_CORRECTNESS_FLAVOR = "recall: divides by len(expected_tools), not F1"
# RAG sample fields, each with the spellings it may arrive under (first non-None one wins).
_RAG_FIELDS = (("user_input", ("user_input", "question")), ("response", ("response", "answer")),
               ("retrieved_contexts", ("retrieved_contexts", "contexts")))


# --------------------------------------------------------------------------- shared helpers

def _resolve(value: Any) -> Any:
    """``value``, awaited first when it is awaitable — on a fresh event loop, or on a worker
    thread's when this thread already runs one (a notebook, an async caller)."""
    if not inspect.isawaitable(value):
        return value

    async def wait() -> Any:
        return await value

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, wait()).result()


def _unit_score(raw: Any, who: str) -> float:
    """A backend's score as a float clamped to ``[0, 1]`` (NaN, a backend's "could not judge",
    reads as 0.0). Unwraps a result object's ``.value``; numeric strings are read."""
    if not isinstance(raw, (numbers.Real, str)) and hasattr(raw, "value"):
        raw = raw.value
    if isinstance(raw, numbers.Real):
        number = float(raw)
    elif isinstance(raw, str):
        try:
            number = float(raw)
        except ValueError:
            raise InvalidValueError(f"{who}: the backend returned {describe(raw)}, not a number") from None
    else:
        raise InvalidTypeError(f"{who}: the backend returned {describe(raw)}, not a number")
    if math.isnan(number):
        return 0.0
    return min(1.0, max(0.0, number))


def _checked_int(value: Any, field: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidTypeError(f"must be an int, got {describe(value)}", field=field)
    if value < minimum:
        raise InvalidValueError(f"must be >= {minimum}, got {value}", field=field)
    return int(value)


def _checked_threshold(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise InvalidValueError(f"must be a number, got {describe(value)}", field="success_threshold")
    return float(value)


def _installed(package: str) -> bool:
    """Whether ``package`` can be imported, without importing it."""
    if package in sys.modules:
        return sys.modules[package] is not None
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def _method(backend: Any, names: tuple[str, ...]) -> Optional[tuple[str, Callable]]:
    for name in names:
        method = getattr(backend, name, None)
        if callable(method):
            return name, method
    return None


# --------------------------------------------------------------------------- Inspect AI

@requires_extra("agents", packages=["inspect_ai"])
def _inspect_eval() -> Callable:
    return importlib.import_module("inspect_ai").eval


def _failure(log: Any) -> Optional[str]:
    """Why an Inspect log did not succeed (its error message, else its status), or None."""
    status = getattr(log, "status", None)
    if status == "success":
        return None
    error = getattr(log, "error", None)
    if error is not None:
        return str(getattr(error, "message", None) or error)
    return "no status" if status is None else str(status)


def _task_prefixes(logs: list) -> list[str]:
    """The task-id prefix of each log's samples: none for a single log; else each log's task
    name, numbered ``name#0``, ``name#1`` … (every log) when two logs share a name, as the
    reference kit does, so two tasks never pool into one."""
    if len(logs) < 2:
        return [""] * len(logs)
    names = [str(getattr(getattr(log, "eval", None), "task", "") or "") for log in logs]
    if len(set(names)) < len(names):
        names = [f"{name}#{index}" for index, name in enumerate(names)]
    return names


def _refuse_pooled_ids(per_log: list) -> None:
    """Refuse a task id that two logs both produce, at any epochs: their samples would count as
    trials of one task (a trial repeated within one log is refused when the log is read)."""
    owner: dict = {}
    for index, log_episodes in enumerate(per_log):
        for episode in log_episodes:
            if owner.setdefault(episode.task_id, index) != index:
                raise InvalidValueError(
                    f"run_inspect: two logs give task id {episode.task_id!r} at epoch {episode.meta['epoch']!r} (their "
                    "task names and sample ids spell one id, e.g. 'a' + 'b/c' and 'a/b' + 'c'); rename a task so that "
                    "their samples do not pool")


def run_inspect(tasks: Any, *, model: Any = None, epochs: Optional[int] = None, scorer: Optional[str] = None,
                success_threshold: float = DEFAULT_SUCCESS_THRESHOLD, log_dir: Optional[str] = None,
                eval_fn: Optional[Callable] = None, **eval_kwargs: Any) -> list:
    """Run an Inspect AI eval and return its samples as graded :class:`~scorekit.agents.Episode` s.

    ``inspect_ai.eval`` + :func:`~scorekit.agents.bridge.episodes_from_inspect_log`: one episode
    per sample per epoch, graded by the sample's score (``scorer``, else its first) reaching
    ``success_threshold``. With ``epochs=k`` the result is a k-trial run for
    :func:`~scorekit.agents.reliability` (pass^k) or :func:`~scorekit.agents.cost_report`. When the
    eval returns several logs, task ids are prefixed with each log's task name (``"t/1"``), numbered
    when two logs share a name (``"t#0/1"``, ``"t#1/1"``), so two tasks never count as trials of one.

    Args:
        tasks: Anything ``inspect_ai.eval`` accepts (a ``Task``, a task function, a registry name, a list).
        model: The model under test (``"mockllm/model"`` runs offline); None lets Inspect use
            ``INSPECT_EVAL_MODEL``.
        epochs: Trials per sample (``>= 1``); None keeps the task's own setting.
        scorer: Which scorer's value grades success (default: each sample's first score).
        success_threshold: A sample succeeds when its score value is ``>=`` this.
        log_dir: Where Inspect writes its logs; None uses a temporary directory removed once the
            episodes are read.
        eval_fn: An ``inspect_ai.eval``-shaped callable (tests, a wrapped runner); None imports
            ``inspect_ai.eval`` (the ``agents`` extra).
        **eval_kwargs: Passed to the eval (``limit=``, ``solver=``, ...); ``display`` defaults to ``"none"``.

    Raises ``RuntimeError`` if any eval did not finish with status ``success`` (a partial run is
    not a k-trial run), and warns (``UserWarning``) when there are no episodes or some are ungraded.

    >>> from types import SimpleNamespace as NS
    >>> def fake_eval(tasks, **kwargs):          # two epochs of one sample
    ...     samples = [NS(id="q1", epoch=e, messages=[], output=NS(completion="4", usage=None),
    ...                   scores={"match": NS(value=v)}) for e, v in ((1, "C"), (2, "I"))]
    ...     return [NS(status="success", samples=samples, eval=NS(model=kwargs["model"], task="t"))]
    >>> [(e.task_id, e.meta["epoch"], e.success)
    ...  for e in run_inspect("t", model="mockllm/model", epochs=2, eval_fn=fake_eval)]
    [('q1', 1, True), ('q1', 2, False)]

    ``inspect_ai.eval`` is synchronous and refuses to run inside an event loop; from async code,
    call ``inspect_ai.eval_async`` and pass each log to ``episodes_from_inspect_log``.
    """
    if epochs is not None:
        eval_kwargs["epochs"] = _checked_int(epochs, "epochs", 1)
    threshold = _checked_threshold(success_threshold)
    if eval_fn is not None and not callable(eval_fn):
        raise InvalidTypeError(f"must be an inspect_ai.eval-shaped callable, got {describe(eval_fn)}",
                               field="eval_fn")
    run = eval_fn if eval_fn is not None else _inspect_eval()
    eval_kwargs.setdefault("display", "none")
    temporary = tempfile.mkdtemp(prefix="scorekit-inspect-") if log_dir is None else None
    try:
        logs = run(tasks, model=model, log_dir=temporary if log_dir is None else log_dir, **eval_kwargs)
        if hasattr(logs, "samples"):
            logs = [logs]
        elif isinstance(logs, Iterable):
            logs = list(logs)
        else:
            raise InvalidTypeError(f"the eval returned {describe(logs)}, not a list of Inspect logs")
        failures = [reason for reason in map(_failure, logs) if reason is not None]
        if failures:
            raise RuntimeError(f"run_inspect: {len(failures)} of {len(logs)} Inspect eval(s) did not "
                               f"succeed: {failures}")
        per_log = [list(episodes_from_inspect_log(log, scorer=scorer, success_threshold=threshold, task_prefix=prefix))
                   for log, prefix in zip(logs, _task_prefixes(logs))]
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
    _refuse_pooled_ids(per_log)
    episodes = [episode for log_episodes in per_log for episode in log_episodes]
    ungraded = sum(episode.success is None for episode in episodes)
    if not episodes or ungraded:
        warnings.warn(f"run_inspect: {len(episodes)} episode(s), {ungraded} ungraded (no scalar score). "
                      "Check log_samples / fail_on_error / the scorer before trusting a success rate.",
                      UserWarning, stacklevel=2)
    return episodes


# --------------------------------------------------------------------------- uqlm

class _BlackBoxScorer:
    """uqlm's ``BlackBoxUQ`` behind the ``score(prompt) -> float`` interface of an injected scorer."""

    def __init__(self, uq: Any, column: str, num_responses: int) -> None:
        self.uq, self.column, self.num_responses = uq, column, num_responses

    def score(self, prompt: str) -> Any:
        result = _resolve(self.uq.generate_and_score(prompts=[prompt], num_responses=self.num_responses))
        data = getattr(result, "data", None)
        if isinstance(data, Mapping) and self.column in data:
            return data[self.column][0]
        return result.to_df()[self.column].iloc[0]


@requires_extra("agreement", packages=["uqlm"])
def _uqlm_scorer(llm: Any, scorer_name: str, num_responses: int) -> _BlackBoxScorer:
    if llm is None:
        raise InvalidValueError("UqlmConsistencySignal needs scorer= (a backend with score(prompt)) or "
                                "llm= (a LangChain chat model with a temperature)")
    uqlm = importlib.import_module("uqlm")
    return _BlackBoxScorer(uqlm.BlackBoxUQ(llm=llm, scorers=[scorer_name]), scorer_name, num_responses)


class UqlmConsistencySignal:
    """Self-consistency confidence in ``[0, 1]`` from uqlm's black-box scorers.

    Samples ``num_responses`` generations for the prompt (``str(extractor_output)``) and measures
    how much they agree (non-contradiction, exact match, semantic negentropy, ...). Raw and
    **uncalibrated**: calibrate before gating on it. Out-of-range scores are clamped, NaN reads 0.0.

    Args:
        scorer: A backend with ``score(prompt) -> float`` (may be async), or None to build uqlm's
            ``BlackBoxUQ`` from ``llm`` on first use (the ``agreement`` extra).
        llm: A LangChain chat model (uqlm reads its ``temperature``), needed when ``scorer`` is None.
        scorer_name: The uqlm scorer column to read (``"noncontradiction"`` downloads an NLI model on
            first use; ``"exact_match"`` needs none).
        num_responses: Samples per prompt (``>= 1``).
        cost_tier: ``3`` — it pays for ``num_responses`` extra generations.

    >>> class Fake:
    ...     def score(self, prompt): return 2.0   # out-of-range is clamped
    >>> UqlmConsistencySignal(scorer=Fake())("q")
    1.0
    """

    def __init__(self, scorer: Any = None, *, llm: Any = None, scorer_name: str = DEFAULT_UQLM_SCORER,
                 num_responses: int = DEFAULT_NUM_RESPONSES, cost_tier: int = 3) -> None:
        if scorer is not None and not callable(getattr(scorer, "score", None)):
            raise InvalidTypeError(f"must have a score(prompt) method, got {describe(scorer)}", field="scorer")
        if not isinstance(scorer_name, str):
            raise InvalidTypeError(f"must be a str, got {describe(scorer_name)}", field="scorer_name")
        self.scorer = scorer
        self.llm = llm
        self.scorer_name = scorer_name
        self.num_responses = _checked_int(num_responses, "num_responses", 1)
        self.cost_tier = _checked_int(cost_tier, "cost_tier", 0)

    def __call__(self, extractor_output: Any) -> float:
        if self.scorer is None:
            self.scorer = _uqlm_scorer(self.llm, self.scorer_name, self.num_responses)
        return _unit_score(_resolve(self.scorer.score(str(extractor_output))), "UqlmConsistencySignal")


# --------------------------------------------------------------------------- Ragas

def _rag_fields(sample: Any) -> dict:
    """The Ragas fields of a RAG sample (mapping or object); contexts become a list of strings."""
    if sample is None or isinstance(sample, (str, bytes, numbers.Number)):
        raise InvalidTypeError("must be a RAG sample (a mapping or object with user_input/question, "
                               f"response/answer, retrieved_contexts/contexts), got {describe(sample)}",
                               field="RagasSignal input")
    read = {}
    for field, spellings in _RAG_FIELDS:
        for spelling in spellings:
            value = sample.get(spelling) if isinstance(sample, Mapping) else getattr(sample, spelling, None)
            if value is not None:
                read[field] = value
                break
    contexts = read.get("retrieved_contexts")
    if isinstance(contexts, str):
        read["retrieved_contexts"] = [contexts]
    elif contexts is not None:
        if isinstance(contexts, Mapping) or not isinstance(contexts, Iterable):
            raise InvalidTypeError(f"must be a list of strings, got {describe(contexts)}",
                                   field="RagasSignal input's contexts")
        read["retrieved_contexts"] = list(contexts)
    return read


def _single_turn_sample(fields: dict) -> Any:
    """Ragas's ``SingleTurnSample`` when Ragas is installed, else the plain dict (for fakes)."""
    if not _installed("ragas"):
        return fields
    return importlib.import_module("ragas").SingleTurnSample(**fields)


def _accepted(method: Callable, fields: dict) -> dict:
    """The ``fields`` that ``method`` takes as keywords (collections metrics differ: answer
    relevancy takes no contexts)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return fields
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return fields
    names = {p.name for p in parameters}
    return {key: value for key, value in fields.items() if key in names}


@requires_extra("agents", packages=["ragas"])
def _ragas_metric(name: str, llm: Any, metric_kwargs: dict) -> Any:
    if llm is None:
        raise InvalidValueError("RagasSignal needs metric= (a Ragas metric) or llm= (the judge)")
    instructor_llm = getattr(importlib.import_module("ragas.llms"), "InstructorBaseRagasLLM", None)
    if instructor_llm is not None and isinstance(llm, instructor_llm):
        cls = getattr(importlib.import_module("ragas.metrics.collections"), RAGAS_COLLECTION_METRICS[name])
    else:
        cls = getattr(importlib.import_module("ragas.metrics"), RAGAS_METRICS[name])
    return cls(llm=llm, **metric_kwargs)


class RagasSignal:
    """A reference-free Ragas metric as a :class:`~scorekit.base.Signal` over a RAG sample.

    The sample is a mapping or object with ``user_input`` (or ``question``), ``response`` (or
    ``answer``) and ``retrieved_contexts`` (or ``contexts``; a lone string is one context). The
    score is clamped to ``[0, 1]`` (NaN — Ragas's "could not parse the judge" — reads 0.0).

    Both Ragas metric APIs are accepted, sync or async: the legacy one
    (``single_turn_ascore(SingleTurnSample)`` / ``single_turn_score``; deprecated since Ragas 0.4)
    and the collections one (``ascore(**fields)`` / ``score(**fields)`` returning a ``MetricResult``;
    ``ragas.metrics.collections``, the one that survives Ragas 1.0), tried in that order.

    Args:
        metric: A Ragas metric object (either API), or None to build ``name`` from ``llm``.
        name: ``faithfulness`` | ``answer_relevancy`` | ``context_precision``.
        llm: The judge, used when ``metric`` is None: an ``InstructorBaseRagasLLM`` (from
            ``ragas.llms.llm_factory``) builds the collections metric, any other Ragas LLM wrapper
            the legacy one (the ``agents`` extra).
        cost_tier: ``3`` — an LLM call per sample.
        **metric_kwargs: Passed to the Ragas constructor (e.g. ``embeddings=`` for ``answer_relevancy``).

    >>> class Fake:
    ...     async def single_turn_ascore(self, sample): return 0.5
    >>> RagasSignal(Fake())({"question": "q", "answer": "a", "contexts": ["c"]})
    0.5
    """

    def __init__(self, metric: Any = None, *, name: str = DEFAULT_RAGAS_METRIC, llm: Any = None,
                 cost_tier: int = 3, **metric_kwargs: Any) -> None:
        if name not in RAGAS_METRICS:
            raise InvalidValueError(f"name must be one of {sorted(RAGAS_METRICS)}, got {name!r}")
        self.metric = metric
        self.name = name
        self.llm = llm
        self.cost_tier = _checked_int(cost_tier, "cost_tier", 0)
        self.metric_kwargs = metric_kwargs

    def __call__(self, extractor_output: Any) -> float:
        fields = _rag_fields(extractor_output)
        if self.metric is None:
            self.metric = _ragas_metric(self.name, self.llm, self.metric_kwargs)
        found = _method(self.metric, ("single_turn_ascore", "single_turn_score", "ascore", "score"))
        if found is None:
            raise InvalidTypeError(f"RagasSignal: {describe(self.metric)} has none of single_turn_ascore, "
                                   "single_turn_score, ascore, score (not a Ragas metric)", field="metric")
        name, method = found
        if name.startswith("single_turn"):
            raw = method(_single_turn_sample(fields))
        else:
            raw = method(**_accepted(method, fields))
        return _unit_score(_resolve(raw), "RagasSignal")


# --------------------------------------------------------------------------- DeepEval

def disable_deepeval_telemetry() -> None:
    """Opt out of DeepEval's Confident-AI telemetry (idempotent; an explicit choice in the
    environment is never overridden). Called before scorekit imports DeepEval."""
    os.environ.setdefault(DEEPEVAL_TELEMETRY_ENV, "YES")


def _geval_params(params: Iterable, enum: Any) -> list:
    """GEval's ``evaluation_params``, strings read as ``LLMTestCaseParams`` (by value or by name)."""
    read = []
    for param in params:
        if isinstance(param, str):
            try:
                param = enum(param)
            except ValueError:
                param = enum[param.upper()]
        read.append(param)
    return read


@requires_extra("agents", packages=["deepeval"])
def _deepeval_metric(kind: str, metric_kwargs: dict) -> Any:
    kwargs = dict(metric_kwargs)
    cls = getattr(importlib.import_module("deepeval.metrics"), DEEPEVAL_KINDS[kind])
    if kind == "geval":
        kwargs.setdefault("name", "scorekit_geval")
        params = kwargs.get("evaluation_params", DEFAULT_GEVAL_PARAMS)
        kwargs["evaluation_params"] = _geval_params(
            params, importlib.import_module("deepeval.test_case").LLMTestCaseParams)
    return cls(**kwargs)


def _calls(tools: Any, field: str) -> list[tuple[str, dict]]:
    """``(name, args)`` of each tool (a name, a Step, a ``(tool, args)`` pair, a mapping)."""
    if isinstance(tools, str):
        tools = [tools]
    if isinstance(tools, Mapping) or not isinstance(tools, Iterable):
        raise InvalidTypeError(f"must be a list of tool calls, got {describe(tools)}", field=field)
    calls = []
    for index, tool in enumerate(tools):
        try:
            calls.append(as_call(tool))
        except (TypeError, ValueError) as error:
            raise InvalidTypeError(str(error), field=f"{field}[{index}]") from None
    return calls


def _case_fields(pred: Any, gold: Any) -> dict:
    if not is_episode(pred):
        raise InvalidTypeError(f"DeepEvalMetric scores an Episode (or an Episode-shaped object), got "
                               f"{describe(pred)}", field="pred")
    output, task_id = getattr(pred, "output", None), getattr(pred, "task_id", None)
    trajectory = getattr(pred, "trajectory", None)
    fields = {"input": "" if task_id is None else str(task_id),
              "actual_output": "" if output is None else str(output),
              "tools_called": _calls(() if trajectory is None else trajectory, "pred.trajectory")}
    if isinstance(gold, Mapping):
        if gold.get("input") is not None:
            fields["input"] = str(gold["input"])
        if "expected_output" in gold:
            fields["expected_output"] = gold["expected_output"]
        if "expected_tools" in gold:
            fields["expected_tools"] = _calls(gold["expected_tools"] or (), "gold['expected_tools']")
    elif gold is not None:
        fields["expected_output"] = str(gold)
    return fields


def _test_case(fields: dict) -> Any:
    """DeepEval's ``LLMTestCase`` (with ``ToolCall`` s) when DeepEval is installed; else the plain
    dict, tools by name, for an injected fake."""
    tool_fields = [key for key in ("tools_called", "expected_tools") if key in fields]
    if not _installed("deepeval"):
        return {**fields, **{key: [name for name, _ in fields[key]] for key in tool_fields}}
    disable_deepeval_telemetry()
    test_case = importlib.import_module("deepeval.test_case")
    return test_case.LLMTestCase(**{**fields, **{
        key: [test_case.ToolCall(name=name, input_parameters=args) for name, args in fields[key]]
        for key in tool_fields}})


class DeepEvalMetric:
    """A DeepEval metric as a scorekit metric over an :class:`~scorekit.agents.base.Episode`.

    ``metric(episode, gold)`` builds a DeepEval ``LLMTestCase`` from the episode (``input`` = its
    task id, ``actual_output``, ``tools_called``) and ``gold`` — the expected output string, or a
    mapping with ``expected_output`` / ``expected_tools`` (and optionally ``input``, the task's input
    text, which a GEval judge sees) — measures it, and returns DeepEval's score, clamped to
    ``[0, 1]``, as a :class:`~scorekit.base.Score` labelled ``deepeval_<kind>``.

    ``tool_correctness`` is **recall-flavoured** (it divides by ``len(expected_tools)``), not F1:
    ``detail["flavor"]`` says so (compare scorekit's cost-aware ``tool_call``).

    Args:
        kind: ``tool_correctness`` | ``task_completion`` | ``geval``.
        metric: An injected DeepEval-shaped metric (``measure(case)`` or async ``a_measure(case)``,
            then ``.score``); None builds the real one on first use (telemetry switched off first;
            the ``agents`` extra).
        **metric_kwargs: Passed to the DeepEval constructor (``criteria=`` for GEval; ``model=`` — a
            model name or a ``DeepEvalBaseLLM`` — for any: DeepEval >= 4 builds its default OpenAI
            judge at construction, so without it ``OPENAI_API_KEY`` is needed even for
            ``tool_correctness``). For GEval, ``name`` defaults to ``"scorekit_geval"`` and
            ``evaluation_params`` to :data:`DEFAULT_GEVAL_PARAMS` (strings are accepted).

    >>> from scorekit.agents import Episode, Step, Trajectory
    >>> class Fake:
    ...     def measure(self, case):
    ...         self.score = 0.5
    >>> ep = Episode("t1", Trajectory([Step("search", {"q": "cats"})]), output="meow")
    >>> s = DeepEvalMetric(metric=Fake())(ep, {"expected_tools": ["search", "answer"]})
    >>> s.value, s.metric, s.detail["flavor"]
    (0.5, 'deepeval_tool_correctness', 'recall: divides by len(expected_tools), not F1')
    """

    def __init__(self, kind: str = "tool_correctness", *, metric: Any = None, **metric_kwargs: Any) -> None:
        if kind not in DEEPEVAL_KINDS:
            raise InvalidValueError(f"kind must be one of {sorted(DEEPEVAL_KINDS)}, got {kind!r}")
        self.kind = kind
        self.name = f"deepeval_{kind}"
        self.metric = metric
        self.metric_kwargs = metric_kwargs

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        case = _test_case(_case_fields(pred, gold))
        if self.metric is None:
            disable_deepeval_telemetry()  # before the extras guard, whose probe imports deepeval
            self.metric = _deepeval_metric(self.kind, self.metric_kwargs)
        found = _method(self.metric, ("measure", "a_measure"))
        if found is None:
            raise InvalidTypeError(f"DeepEvalMetric: {describe(self.metric)} has neither measure nor "
                                   "a_measure (not a DeepEval metric)", field="metric")
        returned = _resolve(found[1](case))
        measured = getattr(self.metric, "score", None)
        if callable(measured):  # a method, not DeepEval's measured value
            measured = None
        value = _unit_score(returned if measured is None else measured, "DeepEvalMetric")
        detail: dict[str, Any] = {"higher_is_better": True, "backend": "deepeval"}
        if self.kind == "tool_correctness":
            detail["flavor"] = _TOOL_CORRECTNESS_FLAVOR
        reason = getattr(self.metric, "reason", None)
        if reason is not None:
            detail["reason"] = reason
        return Score(value=value, metric=self.name, detail=detail)

    def aggregate(self, scores: Iterable[Any]) -> float:
        """Mean of the per-episode scores (DeepEval scores are per case, not counts); 0.0 for none."""
        values = [float(score) for score in scores]
        return sum(values) / len(values) if values else 0.0
