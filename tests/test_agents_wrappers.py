"""``scorekit.agents.wrappers``: ek's docstring examples, and each backend driven by fakes — injected
objects, and fake ``inspect_ai`` / ``uqlm`` / ``ragas`` / ``deepeval`` packages for the lazy-import
paths — compared with ek's wrappers on the same fakes; missing extras and bad input."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import textwrap
import types
import warnings
from types import SimpleNamespace as NS

import ek.agents.wrappers as ek_wrappers
import pytest

import scorekit.agents.wrappers as wrappers
from scorekit.agents import Episode, Step, Trajectory, reliability
from scorekit.agents.wrappers import (
    DEEPEVAL_KINDS, DEEPEVAL_TELEMETRY_ENV, DeepEvalMetric, RagasSignal, UqlmConsistencySignal, run_inspect,
)
from scorekit.base import Score
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.registry import MissingExtraError


def test_docstring_examples():
    import doctest
    assert doctest.testmod(wrappers, optionflags=doctest.ELLIPSIS).failed == 0


def test_public_constants_match_ek():
    for name in ["DEEPEVAL_KINDS", "DEEPEVAL_TELEMETRY_ENV", "DEFAULT_GEVAL_PARAMS", "DEFAULT_NUM_RESPONSES",
                 "DEFAULT_RAGAS_METRIC", "DEFAULT_SUCCESS_THRESHOLD", "DEFAULT_UQLM_SCORER",
                 "RAGAS_COLLECTION_METRICS", "RAGAS_METRICS"]:
        assert getattr(wrappers, name) == getattr(ek_wrappers, name), name
        assert name in wrappers.__all__


def test_importing_loads_no_backend():
    assert not {"inspect_ai", "uqlm", "ragas", "deepeval"} & set(sys.modules)


# --------------------------------------------------------------------------- Inspect AI

def sample(sample_id, epoch, value, **extra):
    return NS(id=sample_id, epoch=epoch, messages=extra.pop("messages", []),
              output=NS(completion="4", usage={"input_tokens": 10, "output_tokens": 2}),
              scores={} if value is None else {"match": NS(value=value)}, **extra)


class FakeInspect:
    """``inspect_ai.eval``-shaped: records its calls, returns the logs it was given."""

    def __init__(self, logs):
        self.logs, self.calls, self.log_dir_existed = logs, [], []

    def __call__(self, tasks, **kwargs):
        self.calls.append((tasks, kwargs))
        self.log_dir_existed.append(os.path.isdir(kwargs["log_dir"]))
        return self.logs


def two_task_logs():
    return [NS(status="success", eval=NS(model="mockllm/model", task_version=0, task="arith"),
               samples=[sample(1, 1, "C"), sample(1, 2, "I"), sample(2, 1, "C"), sample(2, 2, "C")]),
            NS(status="success", eval=NS(model="mockllm/model", task_version=3, task="geo"),
               samples=[sample(1, 1, 1.0), sample(1, 2, 0.0)])]


def test_run_inspect_epochs_are_trials():
    fake = FakeInspect(two_task_logs())
    episodes = run_inspect(["arith", "geo"], model="mockllm/model", epochs=2, eval_fn=fake, limit=5)
    (tasks, kwargs), = fake.calls
    assert tasks == ["arith", "geo"]
    assert kwargs["model"] == "mockllm/model" and kwargs["epochs"] == 2 and kwargs["limit"] == 5
    assert kwargs["display"] == "none" and fake.log_dir_existed == [True]
    assert "scorekit-inspect-" in kwargs["log_dir"] and not os.path.exists(kwargs["log_dir"])  # removed after
    assert [(e.task_id, e.meta["epoch"], e.success) for e in episodes] == [
        ("arith/1", 1, True), ("arith/1", 2, False), ("arith/2", 1, True), ("arith/2", 2, True),
        ("geo/1", 1, True), ("geo/1", 2, False)]
    assert episodes[4].run.suite_version == "3" and episodes[0].cost.input_tokens == 10
    report = reliability(episodes, k=2)
    assert (report.n_trials, report.n_success, report.pass_hat_k) == (6, 4, 1 / 3)


def test_run_inspect_matches_ek_on_a_fake_package(monkeypatch):
    r = random.Random(4)
    compared = 0
    for _ in range(60):
        logs = [NS(status="success", eval=NS(model="m", task_version=r.choice([0, None]), task=f"t{i}"),
                   samples=[sample(r.choice(["a", "b", 3]), e, r.choice(["C", "I", "P", 0.7, None]))
                            for e in (1, 2) for _ in range(r.randrange(3))])
                for i in range(r.randrange(1, 3))]
        monkeypatch.setitem(sys.modules, "inspect_ai", types.SimpleNamespace(eval=FakeInspect(logs)))
        kwargs = {"scorer": r.choice([None, "match"]), "success_threshold": r.choice([1.0, 0.5])}
        if any(len({(str(s.id), s.epoch) for s in log.samples}) < len(log.samples) for log in logs):
            continue  # ek pools a repeated sample into one task's trials; scorekit refuses (tested below)
        with warnings.catch_warnings(record=True) as mine_warned:
            warnings.simplefilter("always")
            try:
                mine = run_inspect("task", epochs=2, **kwargs)
            except ValueError as error:
                with pytest.raises(ValueError, match="no sample has a score named"):
                    ek_wrappers.run_inspect("task", epochs=2, **kwargs)
                assert "match" in str(error)
                continue
        with warnings.catch_warnings(record=True) as ek_warned:
            warnings.simplefilter("always")
            theirs = ek_wrappers.run_inspect("task", epochs=2, **kwargs)
        assert [(e.task_id, e.success, e.meta, e.output) for e in mine] == \
            [(e.task_id, e.success, e.meta, e.output) for e in theirs]
        assert [str(w.message) for w in mine_warned] == [str(w.message) for w in ek_warned]
        compared += 1
    assert compared > 15


def test_run_inspect_keeps_two_logs_of_one_task_name_apart(monkeypatch):
    def log(task, *samples):
        return NS(status="success", eval=NS(model="m", task_version=0, task=task), samples=list(samples))

    logs = [log("t", sample(1, 1, "C")), log("t", sample(1, 1, "I"))]
    episodes = run_inspect("t", eval_fn=FakeInspect(logs))
    assert [(e.task_id, e.success) for e in episodes] == [("t#0/1", True), ("t#1/1", False)]
    report = reliability(episodes, k=1)
    assert (report.n_tasks, report.success_rate) == (2, 0.5)
    monkeypatch.setitem(sys.modules, "inspect_ai", types.SimpleNamespace(eval=FakeInspect(logs)))
    assert [e.task_id for e in ek_wrappers.run_inspect("t")] == ["t#0/1", "t#1/1"]   # the kit's ids
    named = [log("a", sample(1, 1, "C")), log("a", sample(1, 1, "C")), log("b", sample(1, 1, "C")), log("", sample(2, 1, "C"))]
    assert [e.task_id for e in run_inspect("t", eval_fn=FakeInspect(named))] == ["a#0/1", "a#1/1", "b#2/1", "#3/2"]
    # distinct names that still meet on one id: the task "a" with sample "b/c" and the task "a/b" with sample "c"
    with pytest.raises(InvalidValueError, match=r"two logs give task id 'a/b/c' at epoch 1"):
        run_inspect("t", eval_fn=FakeInspect([log("a", sample("b/c", 1, "C")), log("a/b", sample("c", 1, "I"))]))
    # ... also at different epochs: two tasks' samples would count as trials of one (Hypothesis found it)
    with pytest.raises(InvalidValueError, match=r"two logs give task id 'a/b/c' at epoch 1"):
        run_inspect("t", eval_fn=FakeInspect([log("a", sample("b/c", 2, "C")), log("a/b", sample("c", 1, "I"))]))


def test_run_inspect_failures_and_warnings(tmp_path):
    failed = [NS(status="success", eval=NS(task="a"), samples=[sample(1, 1, "C")]),
              NS(status="error", eval=NS(task="b"), samples=[], error=NS(message="boom")),
              NS(status="cancelled", eval=NS(task="c"), samples=[])]
    with pytest.raises(RuntimeError, match=r"2 of 3 Inspect eval\(s\) did not succeed: \['boom', 'cancelled'\]"):
        run_inspect("t", eval_fn=FakeInspect(failed))
    with pytest.raises(RuntimeError, match="no status"):
        run_inspect("t", eval_fn=FakeInspect([NS(samples=[])]))
    with pytest.warns(UserWarning, match=r"0 episode\(s\), 0 ungraded"):
        assert run_inspect("t", eval_fn=FakeInspect([])) == []
    with pytest.warns(UserWarning, match=r"2 episode\(s\), 1 ungraded"):
        run_inspect("t", eval_fn=FakeInspect([NS(status="success", samples=[sample(1, 1, "C"), sample(2, 1, None)])]))
    fake = FakeInspect(NS(status="success", samples=[sample(1, 1, "C")]))   # a single log, not a list
    assert [e.task_id for e in run_inspect("t", log_dir=str(tmp_path), display="full", eval_fn=fake)] == ["1"]
    assert fake.calls[0][1]["log_dir"] == str(tmp_path) and fake.calls[0][1]["display"] == "full"
    assert tmp_path.is_dir() and "epochs" not in fake.calls[0][1]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"epochs": 0}, InvalidValueError, "epochs must be >= 1"),
    ({"epochs": 2.5}, InvalidTypeError, "epochs must be an int"),
    ({"success_threshold": float("nan")}, InvalidValueError, "success_threshold"),
    ({"success_threshold": "high"}, InvalidValueError, "success_threshold"),
    ({"eval_fn": "inspect_ai.eval"}, InvalidTypeError, "eval_fn"),
])
def test_run_inspect_bad_arguments(kwargs, error, match):
    kwargs.setdefault("eval_fn", FakeInspect([]))
    with pytest.raises(error, match=match):
        run_inspect("t", **kwargs)


def test_run_inspect_without_the_extra():
    with pytest.raises(MissingExtraError, match=r"inspect_ai.*pip install scorekit\[agents\]"):
        run_inspect("t")
    with pytest.raises(InvalidTypeError, match="not a list of Inspect logs"):
        run_inspect("t", eval_fn=lambda tasks, **kw: None)


# --------------------------------------------------------------------------- uqlm

class FixedScorer:
    def __init__(self, value):
        self.value, self.prompts = value, []

    def score(self, prompt):
        self.prompts.append(prompt)
        return self.value


class AsyncScorer(FixedScorer):
    async def score(self, prompt):
        self.prompts.append(prompt)
        return self.value


@pytest.mark.parametrize("value", [0.3, -1, 2, float("nan"), float("inf"), "0.5", True, 0, NS(value=0.25)])
def test_uqlm_clamps_like_ek(value):
    mine, theirs = FixedScorer(value), FixedScorer(value)
    if isinstance(value, NS):   # a result object: scorekit reads its .value, ek fails
        assert UqlmConsistencySignal(scorer=mine)("q") == 0.25
        return
    assert UqlmConsistencySignal(scorer=mine)({"prompt": "q"}) == \
        ek_wrappers.UqlmConsistencySignal(scorer=theirs)({"prompt": "q"})
    assert mine.prompts == theirs.prompts == ["{'prompt': 'q'}"]


def test_uqlm_async_scorer_and_attributes():
    signal = UqlmConsistencySignal(scorer=AsyncScorer(0.6), scorer_name="exact_match", num_responses=3)
    assert signal(42) == 0.6 and signal.scorer.prompts == ["42"]
    assert (signal.cost_tier, signal.scorer_name, signal.num_responses, signal.llm) == (3, "exact_match", 3, None)


@pytest.mark.parametrize("value, error", [(None, InvalidTypeError), ("x", InvalidValueError), ([1], InvalidTypeError)])
def test_uqlm_bad_backend_values(value, error):
    with pytest.raises(error, match="UqlmConsistencySignal: the backend returned"):
        UqlmConsistencySignal(scorer=FixedScorer(value))("q")


@pytest.mark.parametrize("kwargs, error, match", [
    ({"num_responses": 0}, InvalidValueError, "num_responses must be >= 1"),
    ({"num_responses": 2.5}, InvalidTypeError, "num_responses"),
    ({"cost_tier": -1}, InvalidValueError, "cost_tier"),
    ({"scorer": object()}, InvalidTypeError, "score"),
    ({"scorer_name": 3}, InvalidTypeError, "scorer_name"),
])
def test_uqlm_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        UqlmConsistencySignal(**kwargs)


def fake_uqlm(record):
    class BlackBoxUQ:
        def __init__(self, llm, scorers):
            record.append(("init", llm, scorers))

        async def generate_and_score(self, prompts, num_responses):
            record.append(("score", prompts, num_responses))
            return NS(data={"noncontradiction": [0.8], "exact_match": [0.4]})

    return types.SimpleNamespace(BlackBoxUQ=BlackBoxUQ)


def test_uqlm_lazy_backend(monkeypatch):
    with pytest.raises(MissingExtraError, match=r"uqlm.*pip install scorekit\[agreement\]"):
        UqlmConsistencySignal(llm=object())("q")
    record = []
    monkeypatch.setitem(sys.modules, "uqlm", fake_uqlm(record))
    with pytest.raises(InvalidValueError, match="needs scorer= .* or llm="):
        UqlmConsistencySignal()("q")
    llm = NS(temperature=1.0)
    signal = UqlmConsistencySignal(llm=llm, num_responses=3)
    assert signal("What is 2+2?") == 0.8 and signal("again") == 0.8
    assert record == [("init", llm, ["noncontradiction"]), ("score", ["What is 2+2?"], 3), ("score", ["again"], 3)]
    assert UqlmConsistencySignal(llm=llm, scorer_name="exact_match")("q") == 0.4


# --------------------------------------------------------------------------- Ragas

class Legacy:
    def __init__(self, value=0.5):
        self.value, self.samples = value, []

    async def single_turn_ascore(self, sample):
        self.samples.append(sample)
        return self.value


class LegacySync(Legacy):
    def single_turn_score(self, sample):
        self.samples.append(sample)
        return self.value

    single_turn_ascore = None


class Collections:
    def __init__(self, value=0.5):
        self.value, self.calls = value, []

    async def ascore(self, user_input, response, retrieved_contexts=None):
        self.calls.append((user_input, response, retrieved_contexts))
        return NS(value=self.value, reason="because")


class CollectionsNoContexts(Collections):
    def score(self, user_input, response):
        self.calls.append((user_input, response))
        return NS(value=self.value)

    ascore = None


RAG_SAMPLES = [{"question": "q", "answer": "a", "contexts": ["c"]},
               {"user_input": "q", "response": "a", "retrieved_contexts": ["c", "d"]},
               NS(question="q", answer="a", contexts=["c"]),
               {"user_input": None, "question": "q2", "answer": "a"}]


@pytest.mark.parametrize("value", [0.5, -0.5, 1.5, float("nan"), "0.3", True])
@pytest.mark.parametrize("rag", RAG_SAMPLES)
def test_ragas_legacy_matches_ek(value, rag):
    mine, theirs = Legacy(value), Legacy(value)
    assert RagasSignal(mine)(rag) == ek_wrappers.RagasSignal(theirs)(rag)
    assert mine.samples == theirs.samples   # the same fields, as a dict without Ragas installed


def test_ragas_collections_and_sync_apis():
    metric = Collections(0.7)
    assert RagasSignal(metric)(RAG_SAMPLES[0]) == 0.7
    assert metric.calls == [("q", "a", ["c"])]
    assert ek_wrappers.RagasSignal(Collections(0.7))(RAG_SAMPLES[0]) == 0.7
    metric = CollectionsNoContexts(2.0)           # keywords it does not take are not passed
    assert RagasSignal(metric)(RAG_SAMPLES[1]) == 1.0 and metric.calls == [("q", "a")]
    metric = LegacySync(0.25)
    assert RagasSignal(metric)({"question": "q", "contexts": "one context"}) == 0.25
    assert metric.samples == [{"user_input": "q", "retrieved_contexts": ["one context"]}]


def test_ragas_inside_a_running_event_loop():
    async def caller():
        return RagasSignal(Legacy(0.4))(RAG_SAMPLES[0]), UqlmConsistencySignal(scorer=AsyncScorer(0.9))("q")

    assert asyncio.run(caller()) == (0.4, 0.9)


@pytest.mark.parametrize("rag, error, match", [
    ("just text", InvalidTypeError, "must be a RAG sample"),
    (None, InvalidTypeError, "RAG sample"),
    ({"question": "q", "contexts": 5}, InvalidTypeError, "contexts must be a list"),
])
def test_ragas_bad_samples(rag, error, match):
    with pytest.raises(error, match=match):
        RagasSignal(Legacy())(rag)


def test_ragas_bad_arguments():
    with pytest.raises(ValueError, match=r"name must be one of \['answer_relevancy', 'context_precision', "
                                         r"'faithfulness'\], got 'bogus'"):
        RagasSignal(name="bogus")
    with pytest.raises(InvalidTypeError, match="not a Ragas metric"):
        RagasSignal(object())(RAG_SAMPLES[0])
    with pytest.raises(InvalidTypeError, match="RagasSignal: the backend returned None"):
        RagasSignal(Legacy(None))(RAG_SAMPLES[0])


def install_fake_ragas(monkeypatch, built):
    class InstructorBaseRagasLLM:
        pass

    def metric_class(api, cls_name):
        def build(llm, **kwargs):
            built.append((api, cls_name, llm, kwargs))
            return Legacy(0.9) if api == "legacy" else Collections(0.6)
        return build

    def module(name, **attrs):
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        monkeypatch.setitem(sys.modules, name, mod)

    module("ragas", SingleTurnSample=lambda **fields: ("SingleTurnSample", fields))
    module("ragas.llms", InstructorBaseRagasLLM=InstructorBaseRagasLLM)
    module("ragas.metrics", **{c: metric_class("legacy", c) for c in wrappers.RAGAS_METRICS.values()})
    module("ragas.metrics.collections",
           **{c: metric_class("collections", c) for c in wrappers.RAGAS_COLLECTION_METRICS.values()})
    return InstructorBaseRagasLLM


def test_ragas_lazy_metric(monkeypatch):
    with pytest.raises(MissingExtraError, match=r"ragas.*pip install scorekit\[agents\]"):
        RagasSignal(llm=object())(RAG_SAMPLES[0])
    built = []
    instructor = install_fake_ragas(monkeypatch, built)
    with pytest.raises(InvalidValueError, match="needs metric= .* or llm="):
        RagasSignal()(RAG_SAMPLES[0])
    legacy_llm = object()
    signal = RagasSignal(name="answer_relevancy", llm=legacy_llm, embeddings="emb")
    assert signal(RAG_SAMPLES[0]) == 0.9
    assert built == [("legacy", "ResponseRelevancy", legacy_llm, {"embeddings": "emb"})]
    assert signal.metric.samples == [("SingleTurnSample", {"user_input": "q", "response": "a",
                                                            "retrieved_contexts": ["c"]})]
    assert signal(RAG_SAMPLES[0]) == 0.9 and len(built) == 1       # built once
    modern_llm = instructor()
    assert RagasSignal(name="context_precision", llm=modern_llm)(RAG_SAMPLES[0]) == 0.6
    assert built[-1] == ("collections", "ContextPrecisionWithoutReference", modern_llm, {})


# --------------------------------------------------------------------------- DeepEval

class FakeDeepEval:
    def __init__(self, value=0.5, reason=None, returned=None):
        self.value, self.reason, self.returned, self.cases = value, reason, returned, []

    def measure(self, case):
        self.cases.append(case)
        if self.value is not None:
            self.score = self.value
        return self.returned


class AsyncDeepEval:
    def __init__(self, value):
        self.value = value

    async def a_measure(self, case):
        self.score = self.value


def episode():
    return Episode("t1", Trajectory([Step("search", {"q": "cats"}, observation="3 cats"), Step("answer", {})]),
                   output="meow")


GOLDS = ["meow", None, {"expected_output": "meow", "expected_tools": ["search", ("answer", {"a": 1}), Step("z")]},
         {"expected_output": None, "expected_tools": None}, {}, ["search"], 5]


@pytest.mark.parametrize("kind", sorted(DEEPEVAL_KINDS))
@pytest.mark.parametrize("gold", GOLDS)
@pytest.mark.parametrize("value", [0.75, 1.5, -0.2, float("nan"), "0.4"])
def test_deepeval_matches_ek(kind, gold, value):
    mine, theirs = FakeDeepEval(value, reason="because"), FakeDeepEval(value, reason="because")
    a = DeepEvalMetric(kind, metric=mine)(episode(), gold)
    b = ek_wrappers.DeepEvalMetric(kind, metric=theirs)(episode(), gold)
    assert (a.value, a.metric, a.detail["reason"], a.detail["higher_is_better"], a.detail["backend"]) == \
        (b.value, b.metric, b.detail["reason"], b.detail["higher_is_better"], b.detail["backend"])
    assert ("flavor" in a.detail) == ("flavor" in b.detail) == (kind == "tool_correctness")
    assert mine.cases == theirs.cases      # the same LLMTestCase fields (a dict without DeepEval installed)


def test_deepeval_score_details():
    metric = DeepEvalMetric(metric=FakeDeepEval(None, returned=0.9))     # no .score: the returned value
    s = metric(episode(), "meow", grammar=None)
    assert isinstance(s, Score) and s.value == 0.9 and "reason" not in s.detail
    assert "recall" in s.detail["flavor"] and "not F1" in s.detail["flavor"]
    assert DeepEvalMetric(metric=FakeDeepEval(0.2, returned=0.9))(episode(), "x").value == 0.2  # .score wins
    assert DeepEvalMetric("geval", metric=AsyncDeepEval(0.3))(episode(), "x").value == 0.3
    assert metric.aggregate([Score(0.5), Score(1.0)]) == 0.75 and metric.aggregate([0.25, 0.75]) == 0.5
    assert metric.aggregate([]) == 0.0
    assert [DeepEvalMetric(k, metric=FakeDeepEval()).name for k in DEEPEVAL_KINDS] == [
        "deepeval_tool_correctness", "deepeval_task_completion", "deepeval_geval"]


def test_deepeval_gold_input_and_tool_names():
    fake = FakeDeepEval()
    DeepEvalMetric("geval", metric=fake)(episode(), {"input": "Say meow", "expected_tools": "search"})
    assert fake.cases[0]["input"] == "Say meow"
    assert fake.cases[0]["expected_tools"] == ["search"]          # ek: ['s', 'e', 'a', 'r', 'c', 'h']
    DeepEvalMetric(metric=fake)(episode(), {"expected_tools": [{"name": "lookup", "args": {"k": 1}}]})
    assert fake.cases[1]["expected_tools"] == ["lookup"]          # ek: the dict's str()


@pytest.mark.parametrize("pred, gold, error, match", [
    ("a string", "g", InvalidTypeError, "scores an Episode"),
    (None, "g", InvalidTypeError, "pred"),
    (Episode("t"), {"expected_tools": [5]}, InvalidTypeError, r"gold\['expected_tools'\]\[0\]"),
    (Episode("t"), {"expected_tools": 5}, InvalidTypeError, r"gold\['expected_tools'\] must be a list"),
])
def test_deepeval_bad_input(pred, gold, error, match):
    with pytest.raises(error, match=match):
        DeepEvalMetric(metric=FakeDeepEval())(pred, gold)


def test_deepeval_bad_arguments():
    with pytest.raises(ValueError, match=r"kind must be one of \['geval', 'task_completion', "
                                         r"'tool_correctness'\], got 'bogus'"):
        DeepEvalMetric("bogus", metric=FakeDeepEval())
    with pytest.raises(InvalidTypeError, match="not a DeepEval metric"):
        DeepEvalMetric(metric=object())(episode(), "g")
    with pytest.raises(InvalidTypeError, match="DeepEvalMetric: the backend returned None"):
        DeepEvalMetric(metric=FakeDeepEval(None))(episode(), "g")


FAKE_DEEPEVAL = {
    "deepeval/__init__.py": """
        import os
        TELEMETRY_AT_IMPORT = os.environ.get("DEEPEVAL_TELEMETRY_OPT_OUT")
    """,
    "deepeval/test_case.py": """
        import enum

        class LLMTestCaseParams(enum.Enum):
            INPUT = "input"
            ACTUAL_OUTPUT = "actual_output"
            EXPECTED_OUTPUT = "expected_output"

        class ToolCall:
            def __init__(self, name, input_parameters=None):
                self.name, self.input_parameters = name, input_parameters

        class LLMTestCase:
            def __init__(self, **fields):
                self.__dict__.update(fields)
    """,
    "deepeval/metrics.py": """
        BUILT = []

        class _Metric:
            def __init__(self, **kwargs):
                BUILT.append((type(self).__name__, kwargs))

            def measure(self, case):
                self.case = case
                self.score = len({t.name for t in case.tools_called} & {t.name for t in case.expected_tools}) \\
                    / len(case.expected_tools)
                self.reason = "recall of expected tools"
                return self.score

        class ToolCorrectnessMetric(_Metric): pass
        class TaskCompletionMetric(_Metric): pass
        class GEval(_Metric): pass
    """,
}


@pytest.fixture
def fake_deepeval(tmp_path, monkeypatch):
    for path, source in FAKE_DEEPEVAL.items():
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(DEEPEVAL_TELEMETRY_ENV, raising=False)
    yield
    for name in [n for n in sys.modules if n == "deepeval" or n.startswith("deepeval.")]:
        del sys.modules[name]


def test_deepeval_lazy_metric_with_telemetry_off(fake_deepeval):
    metric = DeepEvalMetric("tool_correctness", model="judge-model")
    s = metric(episode(), {"expected_output": "meow", "expected_tools": ["search", "book"]})
    import deepeval
    import deepeval.metrics
    assert deepeval.TELEMETRY_AT_IMPORT == "YES"            # opted out before the first import
    assert s.value == 0.5 and s.detail["reason"] == "recall of expected tools"
    case = metric.metric.case                               # a real (fake-package) LLMTestCase with ToolCalls
    assert [(t.name, t.input_parameters) for t in case.tools_called] == [("search", {"q": "cats"}), ("answer", {})]
    assert (case.input, case.actual_output, case.expected_output) == ("t1", "meow", "meow")
    DeepEvalMetric("geval", criteria="is it a cat?", evaluation_params=["input", "ACTUAL_OUTPUT"], model="m")(
        episode(), {"expected_tools": ["search"]})
    params = deepeval.test_case.LLMTestCaseParams
    assert deepeval.metrics.BUILT == [
        ("ToolCorrectnessMetric", {"model": "judge-model"}),
        ("GEval", {"criteria": "is it a cat?", "evaluation_params": [params.INPUT, params.ACTUAL_OUTPUT],
                   "model": "m", "name": "scorekit_geval"})]
    DeepEvalMetric("geval", model="m")(episode(), {"expected_tools": ["search"]})
    assert deepeval.metrics.BUILT[-1][1]["evaluation_params"] == [params.INPUT, params.ACTUAL_OUTPUT]


def test_deepeval_telemetry_choice_is_kept(fake_deepeval, monkeypatch):
    monkeypatch.setenv(DEEPEVAL_TELEMETRY_ENV, "NO")
    wrappers.disable_deepeval_telemetry()
    assert os.environ[DEEPEVAL_TELEMETRY_ENV] == "NO"
    monkeypatch.delenv(DEEPEVAL_TELEMETRY_ENV)
    wrappers.disable_deepeval_telemetry()
    assert os.environ[DEEPEVAL_TELEMETRY_ENV] == "YES"


def test_deepeval_without_the_extra():
    with pytest.raises(MissingExtraError, match=r"deepeval.*pip install scorekit\[agents\]"):
        DeepEvalMetric()(episode(), "g")
    assert "deepeval" not in sys.modules



def test_backends_are_registered_under_the_kits_names_without_importing_them():
    """The kit's names resolve; importing scorekit and resolving them never even looks for deepeval,
    ragas or uqlm (a meta-path probe in a fresh interpreter records every lookup of them)."""
    script = textwrap.dedent("""
        import sys
        HEAVY = {"deepeval", "ragas", "uqlm", "inspect_ai"}
        looked_up = []

        class Probe:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in HEAVY:
                    looked_up.append(name)
                return None

        sys.meta_path.insert(0, Probe())
        import scorekit
        from scorekit.agents import DeepEvalMetric, RagasSignal, UqlmConsistencySignal
        from scorekit.registry import get, names
        tool, task = get("metrics", "deepeval_tool_correctness"), get("metrics", "deepeval_task_completion")
        assert isinstance(tool, DeepEvalMetric) and tool.kind == "tool_correctness" and tool.metric is None
        assert isinstance(task, DeepEvalMetric) and task.kind == "task_completion"
        assert get("signals", "ragas_faithfulness") is RagasSignal
        assert get("signals", "uqlm_consistency") is UqlmConsistencySignal
        assert "agreement" in names("signals")          # the qe signals are still there
        print(looked_up)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


def test_registered_deepeval_metric_needs_the_extra_only_when_used():
    from scorekit.registry import get

    with pytest.raises(MissingExtraError, match="agents"):
        get("metrics", "deepeval_tool_correctness")(Episode(task_id="t"), None)
    assert get("metrics", "deepeval_tool_correctness").metric is None
