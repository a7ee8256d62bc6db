"""Prices and Cost-of-Pass: what an agent run cost in dollars, and what one success costs.

Rates are always injected — scorekit ships no built-in price table (rates go stale). Give a
:class:`ModelPrice` (USD **per token**; :func:`per_million` converts list prices), a
``{model: ModelPrice}`` mapping, or a catalog read by :func:`load_prices` from a local copy of
LiteLLM's ``model_prices_and_context_window.json`` (the data file only; nothing is fetched).
Cost-of-Pass is total spend over successes: failed runs' spend stays in the numerator.

For many episodes, :func:`cost_report` and :func:`episode_dollars_array` read them column by column
(a compiled reader takes each attribute once; NumPy prices the columns) and give the same figures,
bit for bit, as pricing one episode at a time. A :class:`RecordedEpisodes` (the episodes of a
:func:`~scorekit.agents.run_suite` run, which cannot change) keeps the columns read when it was
made, and its reports read those instead of the episodes.

>>> from scorekit.agents.base import Cost
>>> round(dollars(Cost(input_tokens=1_000_000, output_tokens=200_000), per_million(1.0, 5.0)), 4)
2.0
>>> cost_of_pass(10.0, 4), cost_of_pass(10.0, 0)
(2.5, inf)
"""

from __future__ import annotations

import copy
import json
import math
import numbers
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from scorekit import _kernels
from scorekit.agents.base import Cost, Episode, RunProvenance, copy_episode
from scorekit.errors import InvalidTypeError, InvalidValueError

__all__ = [
    "DEFAULT_CACHE_DISCOUNT", "DEFAULT_BATCH_DISCOUNT", "UnknownModelPrice", "ModelPrice",
    "per_million", "dollars", "price_of", "load_prices", "cost_of_pass", "episode_dollars",
    "cost_report", "episode_dollars_array", "RecordedEpisodes",
]

DEFAULT_CACHE_DISCOUNT = 0.1
"""Cached input is billed at this fraction of the input rate when no cached rate is declared."""
DEFAULT_BATCH_DISCOUNT = 0.5
"""Multiplier of batch-API runs (applied only with ``batch=True``)."""


class UnknownModelPrice(KeyError):
    """No rate for a model in the injected catalog."""


def _rate(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"ModelPrice.{name} must be a real number of USD per token, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise InvalidValueError(f"ModelPrice.{name} must be finite and >= 0 (USD per token), got {value!r}")
    return value


@dataclass(frozen=True)
class ModelPrice:
    """Rates of one model in **USD per token** (``cached_input``/``reasoning`` optional).

    >>> p = ModelPrice(input=2e-6, output=8e-6)
    >>> p.cached_rate == 0.1 * 2e-6, p.reasoning_rate
    (True, 8e-06)
    """

    input: float = 0.0
    output: float = 0.0
    cached_input: Optional[float] = None
    reasoning: Optional[float] = None
    #: set by __post_init__ (below); ``None`` here for an instance made without it (e.g. unpickled
    #: from an older version): dollars() then takes its full path
    _float_rates = None

    def __post_init__(self) -> None:
        _rate("input", self.input)
        _rate("output", self.output)
        if self.cached_input is not None:
            _rate("cached_input", self.cached_input)
        if self.reasoning is not None:
            _rate("reasoning", self.reasoning)
        # the four rates dollars() multiplies by, worked out once when all are floats (the common
        # case, which dollars() takes in a few tests); not a field: not compared, shown or copied
        rates = (self.input, self.output, self.cached_rate, self.reasoning_rate)
        object.__setattr__(self, "_float_rates", rates if all(type(r) is float for r in rates) else None)

    @property
    def cached_rate(self) -> float:
        """``cached_input``, else ``DEFAULT_CACHE_DISCOUNT * input``."""
        return self.cached_input if self.cached_input is not None else DEFAULT_CACHE_DISCOUNT * self.input

    @property
    def reasoning_rate(self) -> float:
        """``reasoning``, else the ``output`` rate (reasoning is billed as output)."""
        return self.reasoning if self.reasoning is not None else self.output


def per_million(input: float, output: float, *, cached_input: Optional[float] = None,
                reasoning: Optional[float] = None) -> ModelPrice:
    """A :class:`ModelPrice` from list prices in USD per **million** tokens.

    >>> p = per_million(3.0, 15.0)
    >>> round(p.input, 9), round(p.output, 9)
    (3e-06, 1.5e-05)
    """
    for name, v in (("input", input), ("output", output), ("cached_input", cached_input),
                    ("reasoning", reasoning)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
            raise InvalidTypeError(f"per_million: {name} must be a real number of USD per 1M tokens, got {v!r}")
    return ModelPrice(
        input=input * 1e-6,
        output=output * 1e-6,
        cached_input=None if cached_input is None else cached_input * 1e-6,
        reasoning=None if reasoning is None else reasoning * 1e-6,
    )


def price_of(model: str, *, prices: Optional[Mapping[str, ModelPrice]] = None) -> ModelPrice:
    """``prices[model]``; :class:`UnknownModelPrice` when absent (no rate is ever guessed)."""
    if prices and model in prices:
        return prices[model]
    raise UnknownModelPrice(
        f"No price for model {model!r}. scorekit ships no built-in price table (rates go stale). "
        "Pass prices={'<model>': ModelPrice(...)} (see scorekit.agents.per_million), or load a "
        "catalog with scorekit.agents.load_prices(<path to LiteLLM "
        "model_prices_and_context_window.json>)."
    )


def dollars(cost: Cost, price: Union[ModelPrice, str], *,
            prices: Optional[Mapping[str, ModelPrice]] = None, batch: bool = False) -> float:
    """USD of one :class:`Cost` at ``price`` (a :class:`ModelPrice`, or a model name looked up in
    ``prices``); ``batch=True`` applies ``DEFAULT_BATCH_DISCOUNT``. Retries and latency are free.

    >>> dollars(Cost(input_tokens=1000), "m", prices={"m": per_million(1, 1)})
    0.001
    """
    # the common case (float rates, int counts) in a few tests; anything else takes _checked_dollars' checks
    if type(price) is ModelPrice and type(cost) is Cost:
        rates = price._float_rates
        tokens = cost.input_tokens  # (one by one: four at once would build a tuple)
        out = cost.output_tokens
        cached = cost.cached_input_tokens
        reasoning = cost.reasoning_tokens
        if (rates is not None and type(tokens) is int and type(out) is int and type(cached) is int
                and type(reasoning) is int and tokens >= 0 and out >= 0 and cached >= 0 and reasoning >= 0):
            # the float rate first (float * int converts the count at once; the same product either
            # way round); a zero count's term is +0.0 onto a float sum >= +0.0: left out, as is * 1.0
            total = rates[0] * tokens + rates[1] * out
            if cached:
                total += rates[2] * cached
            if reasoning:
                total += rates[3] * reasoning
            return total * DEFAULT_BATCH_DISCOUNT if batch else total
    return _checked_dollars(cost, price, prices, batch)


def _checked_dollars(cost: Any, price: Any, prices: Optional[Mapping[str, ModelPrice]], batch: bool) -> float:
    """:func:`dollars` with every check (a name looked up, the types, the token counts)."""
    if isinstance(price, str):
        price = price_of(price, prices=prices)
    elif not isinstance(price, ModelPrice):
        raise InvalidTypeError(f"dollars: price must be a ModelPrice or a model name, got {price!r}")
    if not isinstance(cost, Cost):
        raise InvalidTypeError(f"dollars: cost must be a Cost, got {cost!r}")
    inf = math.inf
    try:  # False for NaN too; spelled out, as a generator costs more than these four tests
        ok = (0 <= cost.input_tokens < inf and 0 <= cost.output_tokens < inf
              and 0 <= cost.cached_input_tokens < inf and 0 <= cost.reasoning_tokens < inf)
    except TypeError:
        raise InvalidTypeError(f"dollars: token counts must be numbers, got {cost!r}") from None
    if not ok:
        raise InvalidValueError(f"dollars: token counts must be finite and >= 0, got {cost!r}")
    total = (cost.input_tokens * price.input + cost.output_tokens * price.output
             + cost.cached_input_tokens * price.cached_rate + cost.reasoning_tokens * price.reasoning_rate)
    return total * (DEFAULT_BATCH_DISCOUNT if batch else 1.0)


def _opt_float(model: str, key: str, v: Any) -> Optional[float]:
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        raise InvalidValueError(f"load_prices: model {model!r} has a non-numeric {key}: {v!r}") from None


def load_prices(source: Union[str, os.PathLike, Mapping, None] = None) -> dict[str, ModelPrice]:
    """``{model: ModelPrice}`` from a LiteLLM ``model_prices_and_context_window.json`` (a path, or
    the already parsed mapping). Non-mapping entries (``sample_spec``) and entries with neither an
    input nor an output rate (embeddings, unpriced) are skipped. There is no default table: the
    reference kit's ``load_prices()`` reads a bundled snapshot, scorekit's raises
    :class:`~scorekit.errors.InvalidTypeError` saying where to get the file.

    >>> table = load_prices({"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}})
    >>> table["m"].output
    2e-06
    """
    if isinstance(source, Mapping):
        data = source
    elif isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as e:
                raise InvalidValueError(f"load_prices: {os.fspath(source)!r} is not valid JSON ({e})") from None
        if not isinstance(data, Mapping):
            raise InvalidValueError(f"load_prices: {os.fspath(source)!r} must hold a JSON object of "
                             f"{{model: entry}}, got {type(data).__name__}")
    elif source is None:
        raise InvalidTypeError(
            "load_prices needs a source: a path to a local copy of LiteLLM's model_prices_and_context_window.json "
            "(https://github.com/BerriAI/litellm) or the parsed mapping. scorekit ships no price table, unlike the "
            "reference kit's load_prices(): a stale default would price a run wrongly without a sign")
    else:
        raise InvalidTypeError(f"load_prices: source must be a path or a mapping, got {type(source).__name__}")
    table: dict[str, ModelPrice] = {}
    for model, entry in data.items():
        if not isinstance(entry, Mapping):
            continue
        inp = _opt_float(model, "input_cost_per_token", entry.get("input_cost_per_token"))
        out = _opt_float(model, "output_cost_per_token", entry.get("output_cost_per_token"))
        if inp is None and out is None:
            continue
        try:
            table[model] = ModelPrice(
                input=inp or 0.0, output=out or 0.0,
                cached_input=_opt_float(model, "cache_read_input_token_cost",
                                        entry.get("cache_read_input_token_cost")),
                reasoning=_opt_float(model, "output_cost_per_reasoning_token",
                                     entry.get("output_cost_per_reasoning_token")),
            )
        except ValueError as e:
            raise InvalidValueError(f"load_prices: model {model!r}: {e}") from None
    return table


def cost_of_pass(total_cost: float, n_success: int) -> float:
    """Total spend / successes (``inf`` when nothing succeeded). The spend is finite and ``>= 0``,
    the successes a count ``>= 0`` (a negative count is an error, not ``inf``).

    >>> cost_of_pass(10.0, 4), cost_of_pass(10.0, 0)
    (2.5, inf)
    """
    # a float spend and an int count in one test (the checks below, for exactly these types)
    if not (type(total_cost) is float and type(n_success) is int and 0.0 <= total_cost < math.inf and n_success >= 0):
        if type(total_cost) not in (float, int) and (isinstance(total_cost, bool)
                                                     or not isinstance(total_cost, numbers.Real)):
            raise InvalidTypeError(f"cost_of_pass: total_cost must be a number, got {total_cost!r}")
        if not (math.isfinite(total_cost) and total_cost >= 0):
            raise InvalidValueError(f"cost_of_pass: total_cost must be finite and >= 0, got {total_cost!r}")
        if type(n_success) is not int and (isinstance(n_success, bool)
                                           or not isinstance(n_success, numbers.Integral)):
            raise InvalidTypeError(f"cost_of_pass: n_success must be an integer count, got {n_success!r}")
        if n_success < 0:
            raise InvalidValueError(f"cost_of_pass: n_success must be >= 0, got {n_success}")
    if n_success == 0:
        return math.inf
    try:
        return total_cost / n_success
    except OverflowError:  # a count beyond the float range
        raise InvalidValueError("cost_of_pass: n_success is beyond the float range (an integer of "
                                f"{n_success.bit_length()} bits)") from None


def episode_dollars(episode: Any, *, prices: Optional[Mapping[str, ModelPrice]] = None,
                    price: Optional[ModelPrice] = None, batch: bool = False) -> float:
    """USD of one episode: ``0.0`` without a cost; else at ``price``, or at the rate of its
    ``run.model`` in ``prices``."""
    cost = episode.cost
    if cost is None:
        return 0.0
    if price is None:
        model = (episode.run.model if episode.run else "") or ""
        # a dict that has the model: price_of's lookup without the call; otherwise price_of (its error)
        price = prices[model] if type(prices) is dict and model in prices else price_of(model, prices=prices)
    return dollars(cost, price, batch=batch)


def _plain_rates(price: Any) -> Optional[tuple[float, float, float, float]]:
    """The four per-token rates of ``price`` that :func:`dollars` multiplies by, or ``None`` when
    the column path cannot reproduce it (not a :class:`ModelPrice`; an int rate, which Python
    multiplies exactly)."""
    if not isinstance(price, ModelPrice):
        return None
    rates = (price.input, price.output, price.cached_rate, price.reasoning_rate)
    return rates if all(type(r) is float for r in rates) else None


_INT64_MAX = 2**63 - 1
#: Reports of at most this many episodes are totalled in one Python loop (:func:`_cost_report_small`).
SMALL_REPORT = 96


@dataclass
class _Columns:
    """What a cost report needs of a list of episodes, read once, column by column."""

    outcomes: np.ndarray           # per episode: 0 failed, 1 passed, 2 ungraded
    counts: np.ndarray             # (episodes with a cost, 4) int64 token counts, in Cost's field order
    latencies: list                # the costs' latencies that are not None, in episode order
    dollars: Optional[np.ndarray]  # per-episode dollars (0.0 without a cost), when priced


def _columns(eps: list, prices: Optional[Mapping[str, ModelPrice]], price: Any) -> Optional[_Columns]:
    """The episodes' outcomes, counts, latencies and (when priced) dollars, read by the compiled
    reader (``rust/bindings/src/episodes.rs``) and priced column-wise with the same floating-point
    operations, in the same order, as :func:`episode_dollars` on each episode. ``None`` without the
    compiled backend, or when an episode, count, model or rate needs the one-episode-at-a-time path
    (which raises the reference's errors, in its order): an outcome other than ``True``/``False``/
    ``None``, a cost that is not exactly a :class:`Cost`, a count that is not an ``int`` in
    ``[0, 2**63)``, a latency that is not a ``float``, a rate that is not a ``float``, an unknown model."""
    core = _kernels.compiled()
    if core is None:
        return None
    priced = price is not None or prices is not None
    by_model: Optional[dict] = {} if priced and price is None else None
    read = core.cost_columns(eps, Cost, by_model)
    if read is None:
        return None
    outcomes, costed, counts, latencies, model_ids = read
    counts = counts.reshape(len(costed), 4)
    dollars = None
    if priced:
        rates = _rate_rows(model_ids, by_model, prices, price)
        if rates is None or (counts.size and counts.min() < 0):
            return None
        dollars = _dollars(len(eps), costed, counts, rates)
    return _Columns(outcomes, counts, latencies.tolist(), dollars)


def _dollars(n: int, costed: np.ndarray, counts: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """Per-episode dollars of ``n`` episodes (0.0 without a cost): the ``costed`` ones' counts
    times their rates (one row for all, or one per costed episode), with the operations of
    :func:`dollars`, in its order: ((in + out) + cached) + reasoning."""
    out = np.zeros(n, dtype=np.float64)
    out[costed] = (counts[:, 0] * rates[:, 0] + counts[:, 1] * rates[:, 1]
                   + counts[:, 2] * rates[:, 2] + counts[:, 3] * rates[:, 3])
    return out


def _rate_rows(model_ids: np.ndarray, by_model: Optional[Iterable], prices: Optional[Mapping[str, ModelPrice]],
               price: Any) -> Optional[np.ndarray]:
    """The rates each costed episode is priced at (one row, or one per episode), or ``None`` (see
    :func:`_columns`); ``by_model``: each model the reader met, in id order (``None``: at ``price``)."""
    if by_model is None:
        plain = _plain_rates(price)
        return None if plain is None else np.array([plain], dtype=np.float64)
    table = []
    try:
        for model in by_model:  # in id order
            plain = _plain_rates(prices[model]) if prices and model in prices else None
            if plain is None:
                return None
            table.append(plain)
    except Exception:  # a hostile mapping: the one-by-one path raises it where the reference does
        return None
    return np.array(table, dtype=np.float64).reshape(len(table), 4)[model_ids]


def _token_total(counts: np.ndarray) -> int:
    """The exact sum of the counts (an int64 sum when it cannot overflow, else Python's)."""
    if not counts.size:
        return 0
    if int(counts.max()) <= _INT64_MAX // counts.size:
        return int(counts.sum())
    return sum(int(x) for x in counts.ravel())


@dataclass(frozen=True, eq=False, repr=False)
class _Recorded:
    """The cost columns of a :class:`RecordedEpisodes`, and each total that needs no rate."""

    costed: np.ndarray        # the indices of the episodes with a cost
    counts: np.ndarray        # (costed episodes, 4) int64 token counts, in Cost's field order
    model_ids: np.ndarray     # per costed episode, the index of its model in ``models``
    models: tuple             # the models met (exact ``str``), in id order
    n_success: int
    mean_latency: Optional[float]
    tokens: int
    negative: bool            # a count < 0: a priced report takes the list path, which refuses it


def _record(episodes: tuple) -> Optional[_Recorded]:
    """The columns of ``episodes`` (the record's own copies), or ``None`` without the compiled
    backend or when an episode needs the list path (see :func:`_columns`), is ungraded, or holds
    something that could change once read: an episode not exactly an :class:`Episode`, a run not
    exactly a :class:`RunProvenance`, a model not exactly a ``str`` (a cost is exactly a frozen
    :class:`Cost` with ``int`` counts and a ``float`` latency, as :func:`_columns` requires). The
    totals that need no rate are computed here, as :func:`cost_report` computes them."""
    core = _kernels.compiled()
    if core is None:
        return None
    models: dict = {}
    read = core.cost_columns(list(episodes), Cost, models, (Episode, RunProvenance))
    if read is None:
        return None
    outcomes, costed, counts, latencies, model_ids = read
    if np.any(outcomes == 2):
        return None
    counts = counts.reshape(len(costed), 4)
    for column in (costed, counts, model_ids):
        column.flags.writeable = False
    latencies = latencies.tolist()
    return _Recorded(costed, counts, model_ids, tuple(models), n_success=int(np.count_nonzero(outcomes == 1)),
                     mean_latency=sum(latencies) / len(latencies) if latencies else None,
                     tokens=_token_total(counts), negative=bool(counts.size and counts.min() < 0))


def _detached(episode: Episode, runs: Optional[dict] = None) -> Episode:
    """A copy of ``episode`` that shares no object a cost report reads with it:
    :func:`~scorekit.agents.base.copy_episode`, and for a plain :class:`Episode` a copy of its cost
    (exactly a :class:`Cost`) and of its run (exactly a :class:`RunProvenance`) too, which even
    ``object.__setattr__`` on the originals cannot reach. ``runs``: ``{id(run): (run, copy)}`` of
    the runs met so far (episodes that shared a run share its copy; holding the run keeps its id
    its own)."""
    copied = copy_episode(episode)
    if type(copied) is Episode:
        cost = copied.cost
        if type(cost) is Cost:  # its constructor: twice as fast as copy.copy
            copied.cost = Cost(cost.input_tokens, cost.output_tokens, cost.cached_input_tokens, cost.reasoning_tokens,
                               cost.retries, cost.latency_s)
        run = copied.run
        if type(run) is RunProvenance:
            if runs is None:
                copied.run = copy.copy(run)
            else:
                if id(run) not in runs:
                    runs[id(run)] = (run, copy.copy(run))
                copied.run = runs[id(run)][1]
    return copied


class RecordedEpisodes(Sequence):
    """The episodes of a run, in order, as an immutable sequence that keeps their cost columns:
    ``report.episodes`` of :func:`~scorekit.agents.run_suite` and
    :func:`~scorekit.agents.harness.score_episodes`.

    It holds its own copies of the episodes it is given, taken once, and hands out a fresh copy
    each time one is read (:func:`_detached`: the episode, its cost and its run): changing an
    episode read from it, or one it was made from, does not change it. So the cost columns read
    from its copies when it is made stay what reading them gives, and :func:`cost_report` and
    :func:`episode_dollars_array`, given exactly a ``RecordedEpisodes``, use them instead of
    reading every episode. Columns are kept on the compiled backend, for graded episodes that are
    exactly :class:`Episode` objects whose run is ``None`` or exactly a :class:`RunProvenance`
    with a ``str`` model and whose cost the column reader takes (see :func:`cost_report`);
    otherwise the reports read its copies one by one.

    >>> eps = RecordedEpisodes([Episode("a", cost=Cost(input_tokens=10**6), success=True)])
    >>> len(eps), eps[0].task_id, cost_report(eps, price=per_million(2, 0))["total_dollars"]
    (1, 'a', 2.0)
    >>> eps[0].success = False          # a copy: the record is unchanged
    >>> eps[0].success
    True
    """

    __slots__ = ("_episodes", "_recorded")

    def __init__(self, episodes: Iterable[Episode] = ()) -> None:
        items: list = []
        runs: dict = {}
        for i, episode in enumerate(episodes):
            if not isinstance(episode, Episode):
                raise InvalidTypeError(f"RecordedEpisodes holds Episodes, got {type(episode).__name__} at position {i}")
            items.append(_detached(episode, runs))
        object.__setattr__(self, "_episodes", tuple(items))
        object.__setattr__(self, "_recorded", _record(self._episodes))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("RecordedEpisodes is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("RecordedEpisodes is immutable")

    def __reduce__(self) -> tuple:
        return (RecordedEpisodes, (self._episodes,))

    def __len__(self) -> int:
        return len(self._episodes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            runs: dict = {}
            return tuple(_detached(e, runs) for e in self._episodes[i])
        return _detached(self._episodes[i])

    def __iter__(self) -> Iterator[Episode]:
        runs: dict = {}
        return (_detached(e, runs) for e in self._episodes)

    def __repr__(self) -> str:
        return f"RecordedEpisodes(<{len(self._episodes)} episodes>)"

    def _priced(self, prices: Optional[Mapping[str, ModelPrice]], price: Any) -> Optional[tuple]:
        """``(columns, per-episode dollars, or None when unpriced)``, or ``None`` when the columns
        cannot give them (none kept, another backend now, a rate the columns do not take)."""
        recorded = self._recorded
        if recorded is None or _kernels.compiled() is None:
            return None
        if price is None and prices is None:
            return recorded, None
        if recorded.negative:
            return None
        rates = _rate_rows(recorded.model_ids, None if price is not None else recorded.models, prices, price)
        if rates is None:
            return None
        return recorded, _dollars(len(self._episodes), recorded.costed, recorded.counts, rates)


def episode_dollars_array(episodes: Iterable[Any], *, prices: Optional[Mapping[str, ModelPrice]] = None,
                          price: Optional[ModelPrice] = None) -> np.ndarray:
    """:func:`episode_dollars` of every episode, as a float64 array (bit-identical values, the same
    errors), computed column-wise for plain episodes.

    >>> from scorekit.agents.base import Episode, RunProvenance
    >>> eps = [Episode(cost=Cost(input_tokens=10**6), run=RunProvenance(model="m")), Episode()]
    >>> episode_dollars_array(eps, prices={"m": per_million(3, 15)})
    array([3., 0.])
    """
    if type(episodes) is RecordedEpisodes:
        recorded = None if price is None and prices is None else episodes._priced(prices, price)
        if recorded is not None:
            return recorded[1]
        eps = list(episodes._episodes)  # its own copies, read as any list (not copied once more)
    else:
        eps = episodes if type(episodes) is list else list(episodes)
    columns = None if price is None and prices is None else _columns(eps, prices, price)
    if columns is not None and columns.dollars is not None:
        return columns.dollars
    return np.array([episode_dollars(e, prices=prices, price=price) for e in eps], dtype=np.float64)


def cost_report(episodes: Iterable[Any], *, prices: Optional[Mapping[str, ModelPrice]] = None,
                price: Optional[ModelPrice] = None) -> dict:
    """Success rate, dollars, Cost-of-Pass, mean latency and tokens of graded episodes.

    Without rates (``price`` and ``prices`` both None) the dollar figures are ``None``, never 0.0.
    Sums run left to right in episode order, as the reference's ``sum`` does. Given exactly a
    :class:`RecordedEpisodes`, it uses the cost columns recorded with it when it has them.

    >>> from scorekit.agents.base import Episode
    >>> eps = [Episode(task_id="a", cost=Cost(input_tokens=1_000_000), success=True),
    ...        Episode(task_id="b", cost=Cost(input_tokens=1_000_000), success=False)]
    >>> r = cost_report(eps, price=per_million(1.0, 1.0))
    >>> r["success_rate"], round(r["cost_per_success"], 2)
    (0.5, 2.0)
    >>> cost_report(eps)["cost_per_success"] is None
    True
    """
    if type(episodes) is RecordedEpisodes:
        recorded = episodes._priced(prices, price)
        if recorded is not None:
            columns, dollars_each = recorded
            total = None if dollars_each is None else sum(dollars_each.tolist(), 0.0)
            return _report(len(episodes), columns.n_success, total, columns.mean_latency, columns.tokens,
                           dollars_each is not None)
        eps = list(episodes._episodes)  # its own copies, read as any list (not copied once more)
    else:
        eps = episodes if type(episodes) is list else list(episodes)
    if len(eps) <= SMALL_REPORT:
        report = _cost_report_small(eps, prices, price)
        return report if report is not None else _cost_report_one_by_one(eps, prices, price)
    columns = _columns(eps, prices, price)
    if columns is None:
        return _cost_report_one_by_one(eps, prices, price)
    ungraded = np.flatnonzero(columns.outcomes == 2)
    if ungraded.size:
        _raise_ungraded([eps[i].task_id for i in ungraded.tolist()])
    n_success = int(np.count_nonzero(columns.outcomes == 1))
    # summed as the reference sums them: Python's sum over the per-episode floats, in order
    total = None if columns.dollars is None else sum(columns.dollars.tolist(), 0.0)
    latencies = columns.latencies
    return _report(len(eps), n_success, total, sum(latencies) / len(latencies) if latencies else None,
                   _token_total(columns.counts), columns.dollars is not None)


def _cost_report_small(eps: list, prices: Optional[Mapping[str, ModelPrice]], price: Any) -> Optional[dict]:
    """:func:`cost_report` of a few plain episodes in one Python loop (the compiled reader's fixed
    cost exceeds the work): the operations of :func:`episode_dollars`, in its order, and Python's
    ``sum`` over the dollars. ``None`` for anything the one-episode-at-a-time path must read (an
    ungraded or non-bool outcome, a cost not exactly a :class:`Cost`, a count not an ``int`` >= 0, a
    latency not a ``float``, a rate not a ``float``, an unknown model): it raises the reference's
    error."""
    priced = price is not None or prices is not None
    plain = _plain_rates(price) if price is not None else None
    if price is not None and plain is None:
        return None
    known: dict = {}
    n_success = tokens = 0
    dollars_each: list[float] = []
    latencies: list[float] = []
    try:
        for e in eps:
            success, cost = e.success, e.cost
            if type(success) is not bool:
                return None
            n_success += success
            if cost is None:
                dollars_each.append(0.0)
                continue
            if type(cost) is not Cost:
                return None
            i, o, c, r, latency = (cost.input_tokens, cost.output_tokens, cost.cached_input_tokens,
                                   cost.reasoning_tokens, cost.latency_s)
            if not (type(i) is int and type(o) is int and type(c) is int and type(r) is int
                    and i >= 0 and o >= 0 and c >= 0 and r >= 0):
                return None
            if latency is not None:
                if type(latency) is not float:
                    return None
                latencies.append(latency)
            tokens += i + o + c + r
            if not priced:
                continue
            rates = plain
            if rates is None:
                model = (e.run.model if e.run else "") or ""
                if model not in known:
                    known[model] = _plain_rates(prices[model]) if prices and model in prices else None
                rates = known[model]
                if rates is None:
                    return None
            dollars_each.append((i * rates[0] + o * rates[1] + c * rates[2] + r * rates[3]) * 1.0)
    except Exception:  # an attribute missing, a hostile model or mapping: the reference path says what
        return None
    total = sum(dollars_each, 0.0) if priced else None
    return _report(len(eps), n_success, total, sum(latencies) / len(latencies) if latencies else None,
                   tokens, priced)


def _report(n: int, n_success: int, total: Optional[float], mean_latency: Optional[float],
            total_tokens: int, priced: bool) -> dict:
    return {
        "n": n,
        "n_success": n_success,
        "success_rate": n_success / n if n else 0.0,
        "total_dollars": total,
        "cost_per_success": None if total is None else cost_of_pass(total, n_success),
        "mean_latency_s": mean_latency,
        "total_tokens": total_tokens,
        "priced": priced,
    }


def _raise_ungraded(task_ids: list) -> None:
    raise InvalidValueError(
        f"cost_report: {len(task_ids)} episode(s) are ungraded (success is None), e.g. "
        f"{task_ids[:3]}. Grade them with a checker first -- an ungraded episode is not a failed "
        "one, and silently treating it as one reports an infinite cost-of-pass."
    )


def _cost_report_one_by_one(eps: list, prices: Optional[Mapping[str, ModelPrice]],
                            price: Any) -> dict:
    """:func:`cost_report` one episode at a time: any episode, rate or count the columns do not
    take, with the reference's errors."""
    try:
        ungraded = [e.task_id for e in eps if e.success is None]
        costs = [e.cost for e in eps if e.cost is not None]
    except AttributeError:
        raise InvalidTypeError(f"cost_report: expected Episodes, got {[type(e).__name__ for e in eps][:3]}") from None
    if ungraded:
        _raise_ungraded(ungraded)
    n = len(eps)
    n_success = sum(1 for e in eps if e.success)
    priced = price is not None or prices is not None
    total = sum((episode_dollars(e, prices=prices, price=price) for e in eps), 0.0) if priced else None
    latencies = [c.latency_s for c in costs if c.latency_s is not None]
    return _report(n, n_success, total, sum(latencies) / len(latencies) if latencies else None,
                   sum(c.total_tokens for c in costs), priced)
