"""Agent-evaluation data shapes: the task/tool grammar (Layer A) and episodes (Layer B).

This module owns plain data: tool and task specs and the grammar they induce (call weight = node
cost, argument importance = field cost), steps and trajectories, token cost tallies, the hidden run
variables, and episodes. It computes no score (see :mod:`scorekit.agents.toolcalls` and
:mod:`scorekit.agents.trajectory`).

>>> t = Trajectory([Step("search", {"q": "cat"}), Step("answer", {"a": "meow"})])
>>> len(t), t.tools
(2, ('search', 'answer'))
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from scorekit._weights import checked_weight
from scorekit.base import FieldSpec, GraphGrammar, NodeType, Provenance
from scorekit.errors import InvalidTypeError, InvalidValueError

__all__ = [
    "DEFAULT_TASK_VALUE",
    "DESTRUCTIVE_WEIGHT",
    "ToolSpec",
    "tool_grammar",
    "TaskSpec",
    "suite_grammar",
    "Step",
    "as_call",
    "Trajectory",
    "Cost",
    "RunProvenance",
    "Episode",
    "is_episode",
]

#: Default :attr:`TaskSpec.value`.
DEFAULT_TASK_VALUE = 1.0
#: Call weight of a destructive tool that declares no explicit importance.
DESTRUCTIVE_WEIGHT = 10.0


# --------------------------------------------------------------------------- Layer A: tools and tasks

@dataclass(frozen=True)
class ToolSpec:
    """A tool the agent may call: its name, argument specs (``importance`` = cost of a wrong
    argument), call-level importance (cost of a missing or spurious call) and whether it is destructive.
    Importances must be finite and ``>= 0`` (:class:`~scorekit.errors.InvalidValueError` otherwise).

    >>> ToolSpec("wipe", importance=3.0, destructive=True).weight
    3.0
    >>> ToolSpec("wipe", destructive=True).weight
    10.0
    """

    name: str
    params: Mapping[str, FieldSpec] = field(default_factory=dict)
    importance: Optional[float] = None
    destructive: bool = False

    def __post_init__(self) -> None:
        if self.importance is not None:
            checked_weight(self.importance, f"ToolSpec({self.name!r}).importance")
        for k, spec in self.params.items():
            checked_weight(getattr(spec, "importance", 1.0), f"ToolSpec({self.name!r}).params[{k!r}].importance")

    @property
    def weight(self) -> float:
        """Call weight: ``importance`` if given, else :data:`DESTRUCTIVE_WEIGHT` for a destructive
        tool, else ``1.0``."""
        if self.importance is not None:
            return self.importance
        return DESTRUCTIVE_WEIGHT if self.destructive else 1.0

    def to_node_type(self) -> NodeType:
        """The grammar node type of this tool (fields = params, importance = :attr:`weight`)."""
        return NodeType(self.name, fields=dict(self.params), importance=self.weight)


def tool_grammar(*tools: ToolSpec) -> GraphGrammar:
    """The grammar of a tool set: node cost = call weight, field cost = argument importance
    (a later tool with the same name wins).

    >>> from scorekit.base import FieldSpec
    >>> book = ToolSpec("book_flight", params={"flight": FieldSpec("flight", "string"),
    ...                                        "seat": FieldSpec("seat", "string")})
    >>> refund = ToolSpec("refund", params={"amount": FieldSpec("amount", "number",
    ...                                     importance=20.0)}, destructive=True)
    >>> g = tool_grammar(book, refund)
    >>> g.field_cost("refund", "amount")        # a wrong refund amount is expensive
    20.0
    >>> g.field_cost("book_flight", "seat")     # a wrong seat is not
    1.0
    >>> g = tool_grammar(ToolSpec("send", params={"to": FieldSpec("to")},
    ...                           destructive=True))
    >>> g.node_cost("send")
    10.0
    """
    return GraphGrammar(node_types={t.name: t.to_node_type() for t in tools})


@dataclass(frozen=True)
class TaskSpec:
    """One task of a suite: id (the k-trial grouping key), input, gold, value (task-level weight),
    the tools it offers, and an optional slice label."""

    task_id: str
    input: Any = None
    gold: Any = None
    value: float = DEFAULT_TASK_VALUE
    tools: Sequence[ToolSpec] = ()
    slice: Optional[str] = None

    def __post_init__(self) -> None:
        checked_weight(self.value, f"TaskSpec({self.task_id!r}).value")

    def grammar(self) -> GraphGrammar:
        """``tool_grammar(*self.tools)``."""
        return tool_grammar(*self.tools)


def suite_grammar(tasks: Iterable[TaskSpec]) -> GraphGrammar:
    """Union of all tasks' tool grammars, tasks then tools in order (a later tool name wins)."""
    node_types: dict[str, NodeType] = {}
    for task in tasks:
        for tool in task.tools:
            node_types[tool.name] = tool.to_node_type()
    return GraphGrammar(node_types=node_types)


# --------------------------------------------------------------------------- Layer B: episodes

def _args_dict(args: Any, tool: Any) -> dict:
    """``dict(args)`` (a fresh copy), with a clear error when the arguments are not a mapping
    (or a sequence of key/value pairs, which ``dict`` accepts as the reference does)."""
    if type(args) is dict or isinstance(args, Mapping):  # a plain dict skips the slow ABC check
        return dict(args)
    try:
        return dict(args)
    except (TypeError, ValueError):
        raise InvalidValueError(
            f"the arguments of tool call {tool!r} must be a mapping of argument names to values, "
            f"got {type(args).__name__}: {args!r:.60}"
        ) from None


@dataclass(frozen=True)
class Step:
    """One tool call of a trajectory; ``error`` is set when the call itself failed."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    observation: Any = None
    error: Optional[str] = None

    @property
    def call(self) -> tuple[str, dict]:
        """``(tool, args)`` with a fresh copy of the arguments."""
        return (self.tool, _args_dict(self.args, self.tool))


def as_call(x: Any) -> tuple[str, dict]:
    """Read ``(tool_name, args)`` from a :class:`Step`, a tool name, a ``{"tool"/"name"/"function":
    …, "args"/"arguments"/"parameters": …}`` mapping, or a ``(tool, args)`` sequence.

    >>> as_call(Step("search", {"q": "cat"}))
    ('search', {'q': 'cat'})
    >>> as_call(("search", {"q": "cat"}))
    ('search', {'q': 'cat'})
    >>> as_call({"tool": "search", "args": {"q": "cat"}})
    ('search', {'q': 'cat'})
    >>> as_call("search")
    ('search', {})

    As in the reference, a mapping's arguments go through ``dict(...)`` (so a JSON string raises
    ``ValueError``, here with a message naming the call) and a sequence's second item is used only
    if it is a mapping.
    """
    if type(x) is not dict:  # a plain dict (the common case) goes straight to the mapping branch
        if isinstance(x, Step):
            return x.call
        if isinstance(x, str):
            return (x, {})
    if type(x) is dict or isinstance(x, Mapping):
        name = x.get("tool", x.get("name", x.get("function", "")))
        args = x.get("args", x.get("arguments", x.get("parameters", {}))) or {}
        return (str(name), _args_dict(args, name))
    if isinstance(x, Sequence) and len(x) >= 1:
        args = x[1] if len(x) > 1 and isinstance(x[1], Mapping) else {}
        return (str(x[0]), dict(args))
    raise InvalidTypeError(
        f"Cannot read a tool call from {type(x).__name__}; pass a Step, a (tool, args) pair, "
        "or a {'tool':…, 'args':…} mapping."
    )


@dataclass(frozen=True)
class Trajectory:
    """The ordered tool calls of an episode (linear: scored by sequence edit distance)."""

    steps: Sequence[Step] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.steps))

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, i):
        return self.steps[i]

    @property
    def tools(self) -> tuple[str, ...]:
        """Tool names in order."""
        return tuple(s.tool for s in self.steps)

    @property
    def calls(self) -> tuple[tuple[str, dict], ...]:
        """``(tool, args)`` of every step, in order."""
        return tuple(s.call for s in self.steps)


@dataclass(frozen=True)
class Cost:
    """Provider-neutral token tally of a run (token kinds kept apart: they are priced differently).

    >>> a = Cost(input_tokens=100, output_tokens=50)
    >>> b = Cost(input_tokens=10, output_tokens=5, retries=1)
    >>> c = a + b
    >>> c.input_tokens, c.output_tokens, c.retries
    (110, 55, 1)
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    retries: int = 0
    latency_s: Optional[float] = None

    def __add__(self, other: Any) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        latency = None
        if self.latency_s is not None or other.latency_s is not None:
            latency = (self.latency_s or 0) + (other.latency_s or 0)
        return Cost(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.retries + other.retries,
            latency,
        )

    def __radd__(self, other: Any) -> Cost:
        if other is None or other == 0:  # so that builtin sum() works from its int 0 start
            return self
        return self.__add__(other)

    @property
    def total_tokens(self) -> int:
        """All token kinds summed (retries excluded): a size proxy, not a cost."""
        return self.input_tokens + self.output_tokens + self.cached_input_tokens + self.reasoning_tokens


@dataclass(frozen=True)
class RunProvenance:
    """The hidden variables of an evaluation run."""

    seed: Optional[int] = None
    temperature: Optional[float] = None
    model: str = ""
    simulator: str = ""
    suite_version: str = ""
    scaffold: str = ""

    def comparability_key(self) -> tuple[str, str, str]:
        """``(simulator, suite_version, scaffold)``: runs are comparable iff these agree (model,
        seed and temperature may vary)."""
        return (self.simulator, self.suite_version, self.scaffold)


@dataclass
class Episode:
    """One agent run on one task (mutable; :meth:`graded` returns a graded copy).

    A plain dataclass, as in the reference kit: anything else about a run belongs in ``meta`` (a
    subclass may add attributes of its own)."""

    task_id: str = ""
    trajectory: Trajectory = field(default_factory=Trajectory)
    output: Any = None
    final_state: Any = None
    cost: Optional[Cost] = None
    success: Optional[bool] = None
    run: Optional[RunProvenance] = None
    provenance: Optional[Provenance] = None
    meta: dict = field(default_factory=dict)

    @property
    def calls(self) -> tuple[tuple[str, dict], ...]:
        """``trajectory.calls``."""
        return self.trajectory.calls

    def graded(self, success: Optional[bool]) -> Episode:
        """A copy with ``success`` set (``meta`` shallow-copied); never mutates ``self``."""
        return dataclasses.replace(self, success=success, meta=dict(self.meta))


def copy_episode(episode: Episode) -> Episode:
    """A shallow copy of ``episode`` with its own ``meta`` dict: a plain :class:`Episode` through its
    constructor (faster than :func:`copy.copy`), a subclass by :func:`copy.copy`, with whatever
    attributes it adds."""
    if type(episode) is Episode:
        return Episode(episode.task_id, episode.trajectory, episode.output, episode.final_state, episode.cost,
                       episode.success, episode.run, episode.provenance, dict(episode.meta))
    copied = copy.copy(episode)
    copied.meta = dict(episode.meta)
    return copied


def is_episode(x: Any) -> bool:
    """An :class:`Episode`, or anything shaped like one (``trajectory``, ``task_id`` and ``cost``)."""
    return isinstance(x, Episode) or (
        hasattr(x, "trajectory") and hasattr(x, "task_id") and hasattr(x, "cost")
    )
