"""Agent evaluation: episodes, success and cost, reliability over k trials, tool calls, trajectories.

This package module owns the public re-exports of ``scorekit.agents`` (mirroring the reference
kit's ``ek.agents``) and the registration of the agent metrics under the ``"metrics"`` namespace
(``"task_success"``, ``"cost_per_success"``, ``"tool_call"`` and ``"trajectory"``,
default-configured instances; the checkers register themselves in :mod:`scorekit.agents.metrics`)
and of the optional backends under the reference kit's names (``"deepeval_tool_correctness"`` and
``"deepeval_task_completion"`` metrics, ``"ragas_faithfulness"`` and ``"uqlm_consistency"``
signals, the classes as the kit registers them; nothing of the backends is imported until used).
Nothing here computes a score.
"""

from __future__ import annotations

from scorekit.agents.base import (
    DEFAULT_TASK_VALUE,
    DESTRUCTIVE_WEIGHT,
    Cost,
    Episode,
    RunProvenance,
    Step,
    TaskSpec,
    ToolSpec,
    Trajectory,
    as_call,
    is_episode,
    suite_grammar,
    tool_grammar,
)
from scorekit.agents.bridge import (
    as_agent,
    cost_from_usage,
    episode_from_messages,
    episodes_from_inspect_log,
    from_deepeval_test_case,
    from_inspect_sample,
    inspect_score_value,
    trajectory_from_messages,
)
from scorekit.agents.compare import AgentComparison, compare_agents, sign_test
from scorekit.agents.cost import (
    ModelPrice,
    RecordedEpisodes,
    UnknownModelPrice,
    cost_of_pass,
    cost_report,
    dollars,
    episode_dollars,
    load_prices,
    per_million,
    price_of,
)
from scorekit.agents.harness import (
    AgentGateResult,
    agent_regression_gate,
    load_agent_baseline,
    run_suite,
    save_agent_baseline,
)
from scorekit.agents.judge import JudgeMetric, JudgeSignal, judge_validation, pairwise_judge
from scorekit.agents.metrics import (
    Checker,
    CostPerSuccessMetric,
    TaskSuccessMetric,
    final_state_match,
    output_match,
    recorded_success,
)
from scorekit.agents.reliability import (
    ReliabilityReport,
    bootstrap_ci,
    difference_upper_bound,
    mean_standard_error,
    newcombe_difference,
    pass_at_k,
    pass_hat_k,
    reliability,
    wilson_interval,
)
from scorekit.agents.toolcalls import CallOutcome, ToolCallMetric, explain_calls, match_calls
from scorekit.agents.trajectory import SCHEMES, TrajectoryMetric
from scorekit.agents.wrappers import DeepEvalMetric, RagasSignal, UqlmConsistencySignal, run_inspect
from scorekit.registry import register

__all__ = [
    "TaskSpec", "ToolSpec", "tool_grammar", "suite_grammar", "DEFAULT_TASK_VALUE", "DESTRUCTIVE_WEIGHT",
    "Episode", "Trajectory", "Step", "Cost", "RunProvenance", "as_call", "is_episode",
    "ToolCallMetric", "TrajectoryMetric", "SCHEMES", "match_calls",
    "pass_at_k", "pass_hat_k", "reliability", "ReliabilityReport", "wilson_interval", "bootstrap_ci",
    "mean_standard_error",
    "newcombe_difference", "difference_upper_bound",
    "ModelPrice", "per_million", "dollars", "episode_dollars", "cost_of_pass", "cost_report", "RecordedEpisodes",
    "load_prices", "price_of", "UnknownModelPrice",
    "TaskSuccessMetric", "CostPerSuccessMetric", "Checker", "output_match", "final_state_match", "recorded_success",
    "run_suite", "save_agent_baseline", "load_agent_baseline", "agent_regression_gate", "AgentGateResult",
    "as_agent", "trajectory_from_messages", "episode_from_messages", "cost_from_usage", "from_inspect_sample",
    "from_deepeval_test_case", "episodes_from_inspect_log", "inspect_score_value",
    "run_inspect", "UqlmConsistencySignal", "RagasSignal", "DeepEvalMetric",
    "compare_agents", "AgentComparison", "sign_test", "CallOutcome", "explain_calls",
    "JudgeMetric", "JudgeSignal", "judge_validation", "pairwise_judge",
]

register("metrics", "task_success", TaskSuccessMetric())
register("metrics", "cost_per_success", CostPerSuccessMetric())
register("metrics", "tool_call", ToolCallMetric())
register("metrics", "trajectory", TrajectoryMetric())
# The optional backends under the reference kit's names; each builds (and imports) its backend on
# first use, so registering them imports none of deepeval, ragas or uqlm.
register("metrics", "deepeval_tool_correctness", DeepEvalMetric("tool_correctness"))
register("metrics", "deepeval_task_completion", DeepEvalMetric("task_completion"))
register("signals", "ragas_faithfulness", RagasSignal)
register("signals", "uqlm_consistency", UqlmConsistencySignal)
