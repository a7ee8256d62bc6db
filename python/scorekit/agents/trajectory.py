"""Cost-weighted sequence edit distance between trajectories (docs/decisions.md#trajectory-cost-model).

This module owns :data:`SCHEMES` and :class:`TrajectoryMetric`: the cost model (a call's *mass* is
its tool weight plus its argument weights; a substitution between different tools costs both
masses, between calls of the same tool the weights of the arguments that differ or are missing on
one side) and the four schemes; ``any_order`` and ``superset`` pair calls greedily (the reference's
rule) or, with ``pairing="optimal"``, by the assignment of least distance (docs/agents-beyond.md).
``in_order`` runs the Needleman–Wunsch kernel (:mod:`scorekit._kernels.align`) on calls read,
canonicalised and interned by the compiled call reader (``_core.CallPacker``,
``rust/bindings/src/calls.rs``) or, without the compiled core, by its pure-Python twin
:class:`_Preparer`; both give identical ids, masses and weights. Argument values are equal under
the exact, transitive rule of :mod:`scorekit._interning` (numbers by exact value, whatever their
type), so a pair's score depends neither on the rest of the batch, nor on ``threads``, the backend
or the reader; a value that cannot be compared (recursive, too deeply nested) raises a named error
giving the pair, step and argument.

Decision (ek leaves it open; docs/decisions.md#trajectory-cost-model): a same-tool substitution sums the weights of the
differing arguments in sorted argument-name order (string names by code point, then numbers by
value, then other names by type and repr; the reference iterates a set), so a result depends
neither on the run, the backend, nor the other pairs of a batch. A call's mass is ``w_tool + sum(argument weights)``. Kept for
parity [quirk]: an unreadable ``pred``/``gold`` raises the TypeError that names ToolCallMetric.

>>> from scorekit.agents.base import Step
>>> gold = [Step("search", {"q": "cat"}), Step("answer", {"a": "meow"})]
>>> TrajectoryMetric()(gold, gold).value                      # identical -> distance 0
0.0
>>> detour = [Step("search", {"q": "cat"}), Step("search", {"q": "cat"}),
...           Step("answer", {"a": "meow"})]
>>> round(TrajectoryMetric()(detour, gold).value, 3) > 0      # a needless extra step costs
True
>>> TrajectoryMetric(scheme="superset")(detour, gold).value   # but it IS a superset of gold
0.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from scorekit._interning import ValueInterner, exact_key
from scorekit import _kernels
from scorekit._kernels import resolve_threads
from scorekit._kernels import align as align_kernels
from scorekit._kernels import bootstrap
from scorekit.agents.base import Step, as_call
from scorekit.agents.toolcalls import (
    Gain, _assign, _call_matches, _Weights, calls_of, check_pairing, norm_value, value_error,
)
from scorekit.base import GraphGrammar, Score
from scorekit.canonicalize import builtin_steps, default_canonicalizer, resolve_canonicalizer
from scorekit.errors import InvalidValueError, ScorekitError

__all__ = ["SCHEMES", "TrajectoryMetric"]

#: The trajectory schemes; they disagree, so choose deliberately.
SCHEMES = ("in_order", "exact", "any_order", "superset")

Call = tuple[str, dict]
#: Raw argument values (and tools, names) a call may be memoised by: their ``==`` and hash are
#: exact, so equal raw calls are equal under the interning rule (a NumPy scalar equal to one of
#: these by its own ``==`` hashes differently unless their exact values agree).
_MEMO_TYPES = frozenset({str, int, float, bool, type(None)})
#: Types of the keys of real numbers (mutually comparable by value).
_REAL_KEYS = frozenset({int, float, bool, Fraction, Decimal})
#: ``(distances, pred total masses, pred lengths, gold total masses, gold lengths)``.
ScoredPairs = tuple[list[float], list[float], list[int], list[float], list[int]]


def _name_key(name: Any) -> tuple:
    """Order of argument names: strings in code-point order, then numbers by value, then other
    names by type and repr (of their :func:`~scorekit._interning.exact_key`, so that equal names
    of different types, which share an id, sort the same whichever of them was met first)."""
    if isinstance(name, str):
        return (0, name, "")
    key = exact_key(name)
    if type(key) in _REAL_KEYS and key == key:
        return (1, "", key)
    return (2, type(key).__name__, repr(key))


class _Prepared:
    """The calls of one trajectory: raw calls, normalised arguments and masses."""

    __slots__ = ("calls", "norm", "mass")

    def __init__(self, calls: list[Call], norm: list[dict], mass: list[float]) -> None:
        self.calls, self.norm, self.mass = calls, norm, mass


class _Preparer:
    """Reads calls, canonicalises string values (memoised) and weighs calls, for one metric call.

    Besides :meth:`prepare` (the Python-side schemes), :meth:`pack` and :meth:`table` write the
    kernel's call ids and call table.
    """

    def __init__(self, canon: Optional[Callable[[str], str]], weights: _Weights) -> None:
        self.weights = weights
        self._canon = canon
        self._folded: dict[str, str] = {}
        # ids shared by every pack() of this preparer (pred and gold sides must agree)
        self._tool_ids, self._name_ids, self._value_ids = ValueInterner(), ValueInterner(), ValueInterner()
        self._memo: dict[tuple, int] = {}
        self._t_tools: list[int] = []
        self._t_mass: list[float] = []
        self._t_offsets = [0]
        self._t_names: list[int] = []
        self._t_values: list[int] = []
        self._t_weights: list[float] = []

    def _fold(self, s: str) -> str:
        f = self._folded.get(s)
        if f is None:
            f = self._folded[s] = self._canon(s) if self._canon else s
        return f

    def _norm(self, v: Any) -> Any:
        if type(v) is str:
            return self._fold(v)
        return norm_value(v, self._fold)

    def prepare(self, x: Any, item: Any = None) -> _Prepared:
        calls = [as_call(c) for c in calls_of(x)]
        norm = []
        for step, (_, args) in enumerate(calls):
            normed = {}
            for k, v in args.items():
                try:
                    normed[k] = self._norm(v)
                except ScorekitError as exc:
                    raise value_error(exc, item, step, k) from None
            norm.append(normed)
        mass = [self.weights.mass(c) for c in calls]
        return _Prepared(calls, norm, mass)

    def pack(self, trajectories: Iterable[Any], first_item: int = 0
             ) -> tuple[np.ndarray, np.ndarray, list[float], list[int]]:
        """``(call_ids, offsets, total_mass, n_steps)`` of many trajectories, for the NW kernel.

        Each distinct call (same tool, equal raw arguments, all of :data:`_MEMO_TYPES` and free of
        NaN) is read, canonicalised and weighed once and gets one row of the shared call table
        (:meth:`table`); other calls get a row per occurrence. A bad argument value raises its
        named error with the item (``first_item`` + position), step and argument.
        """
        w = self.weights
        unit = w.grammar is None
        tool_id, tool_lookup = self._tool_ids.id, self._tool_ids.lookup
        value_id, value_lookup = self._value_ids.id_shared, self._value_ids.lookup
        name_id, name_lookup = self._name_ids.id, self._name_ids.lookup
        norm, fold, folded = self._norm, self._fold, self._folded.get
        memo = self._memo
        t_tools, t_mass, t_offsets = self._t_tools, self._t_mass, self._t_offsets
        t_names, t_values, t_weights = self._t_names, self._t_values, self._t_weights
        ids: list[int] = []
        offsets = [0]
        totals: list[float] = []
        lengths: list[int] = []
        for item, x in enumerate(trajectories, first_item):
            total = 0
            for step, c in enumerate(calls_of(x)):
                if type(c) is Step and isinstance(c.args, dict):
                    tool, args = c.tool, c.args
                else:
                    tool, args = as_call(c)
                try:
                    key: Optional[tuple] = (tool, *args.items())
                    cid = memo.get(key)
                except TypeError:  # unhashable argument values: a row per occurrence
                    key, cid = None, None
                if cid is None:
                    m = 1.0 + float(len(args)) if unit else w.tool(tool) + sum(w.arg(tool, a) for a in args)
                    if type(tool) not in _MEMO_TYPES:
                        key = None
                    for k, v in args.items():
                        nid = name_lookup(k) if type(k) is str else None
                        if nid is None:
                            nid = name_id(k)
                            if type(k) not in _MEMO_TYPES:
                                key = None
                        if type(v) is str:  # the common case, inlined
                            nv = folded(v)
                            if nv is None:
                                nv = fold(v)
                            vid = value_lookup(nv)
                            if vid is None:
                                vid = value_id(nv)[0]
                        else:
                            # an int, float, bool or None is its own key (a NaN is never found)
                            vid = value_lookup(v) if type(v) in _MEMO_TYPES else None
                            if vid is None:
                                try:
                                    vid, shared = value_id(norm(v))
                                except ScorekitError as exc:
                                    raise value_error(exc, item, step, k) from None
                                if not shared or type(v) not in _MEMO_TYPES:  # NaN: never shared
                                    key = None
                        t_names.append(nid)
                        t_values.append(vid)
                        t_weights.append(1.0 if unit else w.arg(tool, k))
                    cid = len(t_tools)
                    tid = tool_lookup(tool) if type(tool) is str else None
                    t_tools.append(tool_id(tool) if tid is None else tid)
                    t_mass.append(m)
                    t_offsets.append(len(t_names))
                    if key is not None:
                        memo[key] = cid
                ids.append(cid)
                total += t_mass[cid]
            lengths.append(len(ids) - offsets[-1])
            offsets.append(len(ids))
            totals.append(total)
        return np.array(ids, dtype=np.uint32), np.array(offsets, dtype=np.int64), totals, lengths

    def score_pairs(self, preds: Sequence[Any], golds: Sequence[Any], threads: int) -> ScoredPairs:
        """``(distances, pred total masses, pred lengths, gold total masses, gold lengths)`` of
        every pair: both sides packed, then the NW kernel of the current backend."""
        return _pack_and_score(self, preds, golds, threads)

    def interned(self) -> tuple[list, list, list]:
        """``(tools, names, values)``: the interned objects in id order."""
        return self._tool_ids.values, self._name_ids.values, self._value_ids.values

    def table(self) -> tuple[np.ndarray, ...]:
        """The call table of everything packed so far (see :mod:`scorekit._kernels.align`).

        Name ids are renumbered in :func:`_name_key` order and every call's arguments sorted by
        them, so the kernel sums differing arguments in an order that depends on the names only
        (not on the rest of the batch).
        """
        names = self._name_ids.values
        rank = {nid: r for r, nid in enumerate(sorted(range(len(names)), key=lambda k: _name_key(names[k])))}
        offsets, t_names, t_values, t_weights = self._t_offsets, self._t_names, self._t_values, self._t_weights
        names: list[int] = []
        values: list[int] = []
        weights: list[float] = []
        for k in range(len(offsets) - 1):
            lo, hi = offsets[k], offsets[k + 1]
            if hi - lo == 1:
                names.append(rank[t_names[lo]])
                values.append(t_values[lo])
                weights.append(t_weights[lo])
            elif hi > lo:
                for r, v, wt in sorted((rank[t_names[t]], t_values[t], t_weights[t]) for t in range(lo, hi)):
                    names.append(r)
                    values.append(v)
                    weights.append(wt)
        return (
            np.array(self._t_tools, dtype=np.uint32),
            np.array(self._t_mass, dtype=np.float64),
            np.array(offsets, dtype=np.int64),
            np.array(names, dtype=np.uint32),
            np.array(values, dtype=np.uint32),
            np.array(weights, dtype=np.float64),
        )


class _CompiledPacker:
    """:meth:`_Preparer.pack`, :meth:`_Preparer.table` and :meth:`_Preparer.score_pairs` done by the
    compiled ``_core.CallPacker`` (the same ids, masses and weights; table rows may be numbered
    differently)."""

    def __init__(self, core: Any, canon: Optional[Callable[[str], str]], weights: _Weights,
                 ascii_steps: Optional[list[str]]) -> None:
        unit = weights.grammar is None
        self._packer = core.CallPacker(
            Step, calls_of, as_call, lambda v: norm_value(v, canon), _named_value_error, ValueInterner, canon,
            ascii_steps, None if unit else weights.tool, None if unit else weights.arg, bootstrap.COMPENSATED)
        self.pack = self._packer.pack
        self.interned = self._packer.interned

    def table(self) -> tuple[np.ndarray, ...]:
        return self._packer.table(_name_key)

    def score_pairs(self, preds: Sequence[Any], golds: Sequence[Any], threads: int) -> ScoredPairs:
        """:meth:`_Preparer.score_pairs`; on the Rust backend in one compiled call (no arrays)."""
        if _kernels.compiled() is not None:
            return self._packer.score_pairs(preds, golds, _name_key, threads)
        self._packer.reset()  # a reused packer starts empty, as the fused path does
        return _pack_and_score(self, preds, golds, threads)


def _named_value_error(exc: BaseException, item: int, step: int, name: Any) -> BaseException:
    """The error the compiled reader raises when reading argument ``name`` of a step raised
    ``exc``: the twin's (:func:`~scorekit.agents.toolcalls.value_error`) for a named error."""
    return value_error(exc, item, step, name) if isinstance(exc, ScorekitError) else exc


def _pack_and_score(packer: Any, preds: Sequence[Any], golds: Sequence[Any], threads: int) -> ScoredPairs:
    """``score_pairs`` through arrays: pack both sides, then the NW kernel of the current backend."""
    a, a_off, p_mass, p_len = packer.pack(preds)
    b, b_off, g_mass, g_len = packer.pack(golds)
    raws = align_kernels.calls_distance_batch(packer.table(), a, a_off, b, b_off, threads).tolist()
    return raws, p_mass, p_len, g_mass, g_len


def _call_packer(canon: Optional[Callable[[str], str]], weights: _Weights,
                 ascii_steps: Optional[list[str]] = None) -> Any:
    """The compiled call reader when the core is built, else the pure-Python :class:`_Preparer`.
    ``ascii_steps``: ``builtin_steps(canon)``, which the caller may have cached."""
    core = _kernels.compiled()
    if core is None:
        return _Preparer(canon, weights)
    return _CompiledPacker(core, canon, weights, ascii_steps)


def _sub(p_tool: str, g_tool: str, pn: dict, gn: dict, p_mass: float, g_mass: float, w: _Weights) -> float:
    """Substitution cost of the cost model (argument names in :func:`_name_key` order)."""
    if p_tool != g_tool:
        return p_mass + g_mass
    cost = 0.0
    for name in sorted(set(pn) | set(gn), key=_name_key):
        if name not in pn or name not in gn or pn[name] != gn[name]:
            cost += w.arg(g_tool, name)
    return cost


class TrajectoryMetric:
    """Normalised cost-weighted edit distance between a predicted and a gold trajectory (lower is better).

    ``scheme``: ``"in_order"`` (Needleman–Wunsch: order matters, gaps allowed), ``"exact"`` (0 iff
    identical, else the full mass), ``"any_order"`` (multiset distance over matched calls),
    ``"superset"`` (0 iff every gold call occurs in the prediction; extra calls are free).
    ``grammar`` supplies call and argument weights (a per-call ``grammar=`` wins);
    ``canonicalizer`` folds string values (default: NFC, casefold, collapse whitespace).
    ``pairing`` (``any_order`` and ``superset`` only): ``"greedy"`` (the reference's rule) or
    ``"optimal"`` (per tool name, the pairs of least raw distance; never larger; needs SciPy).
    """

    name = "trajectory"

    def __init__(self, scheme: str = "in_order", *, grammar: Optional[GraphGrammar] = None,
                 canonicalizer: Any = None, pairing: str = "greedy") -> None:
        if scheme not in SCHEMES:
            raise InvalidValueError(f"must be one of {SCHEMES}, got {scheme!r}", field="scheme")
        self.scheme = scheme
        self.pairing = check_pairing(pairing)
        self.grammar = grammar
        self.canonicalizer = (resolve_canonicalizer(canonicalizer) if canonicalizer is not None
                              else default_canonicalizer())
        self._ascii_steps: tuple[Any, Optional[list[str]]] = (None, None)
        self._spare: list[tuple[Any, _CompiledPacker]] = []

    def _packer(self, weights: _Weights) -> Any:
        """A call packer for one metric call (the canonicaliser's built-in steps looked up once)."""
        canon = self.canonicalizer
        if self._ascii_steps[0] is not canon:
            self._ascii_steps = (canon, builtin_steps(canon))
        return _call_packer(canon, weights, self._ascii_steps[1])

    def _score_in_order(self, preds: Sequence[Any], golds: Sequence[Any],
                        grammar: Optional[GraphGrammar], threads: int) -> ScoredPairs:
        """``in_order`` distances. Unweighted calls reuse a compiled packer, which starts every chunk
        of pairs from empty tables; it is taken from and given back to ``_spare``, so concurrent
        calls never share one."""
        reusable = _kernels.compiled() is not None and grammar is None
        packer = None
        if reusable and self._spare:
            try:
                canon, packer = self._spare.pop()
            except IndexError:  # another thread took it
                packer = None
            else:
                if canon is not self.canonicalizer:
                    packer = None
        if packer is None:
            packer = self._packer(_Weights(grammar))
        result = packer.score_pairs(preds, golds, threads)
        if reusable:
            self._spare.append((self.canonicalizer, packer))
        return result

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        if self.scheme != "in_order":
            return self.score_batch([pred], [gold], grammar=grammar)[0]
        raws, p_mass, p_len, g_mass, g_len = self._score_in_order(
            [pred], [gold], grammar if grammar is not None else self.grammar, 0)
        return self._score(raws[0], p_mass[0], g_mass[0], p_len[0], g_len[0])

    def score_batch(self, preds: Sequence[Any], golds: Sequence[Any], *,
                    grammar: Optional[GraphGrammar] = None, threads: Optional[int] = None) -> list[Score]:
        """Scores of many ``(preds[k], golds[k])`` pairs at once; ``in_order`` runs one parallel
        kernel call over all pairs (``threads``: ``None``/0 = all cores; results do not depend on it)."""
        n_threads = resolve_threads(threads)
        if len(preds) != len(golds):
            raise InvalidValueError(f"must have the same length, got {len(preds)} and {len(golds)}",
                                    field="preds and golds")
        grammar = grammar if grammar is not None else self.grammar
        if self.scheme == "in_order":
            raws, p_mass, p_len, g_mass, g_len = self._score_in_order(preds, golds, grammar, n_threads)
        else:
            prep = _Preparer(self.canonicalizer, _Weights(grammar))
            p_prep = [prep.prepare(x, k) for k, x in enumerate(preds)]
            g_prep = [prep.prepare(x, k) for k, x in enumerate(golds)]
            raws = [self._raw(p, g, prep.weights) for p, g in zip(p_prep, g_prep)]
            p_mass, g_mass = [sum(p.mass) for p in p_prep], [sum(g.mass) for g in g_prep]
            p_len, g_len = [len(p.calls) for p in p_prep], [len(g.calls) for g in g_prep]
        return list(map(self._score, raws, p_mass, g_mass, p_len, g_len, range(len(raws))))

    def _score(self, raw: float, p_mass: float, g_mass: float, p_len: int, g_len: int, item: int = 0) -> Score:
        """The :class:`Score` of pair ``item`` from its raw distance, total masses and lengths."""
        denom = g_mass if self.scheme == "superset" else p_mass + g_mass
        if not (math.isfinite(denom) and math.isfinite(raw)):
            raise InvalidValueError("the grammar weights are too large: the trajectories' total weight exceeds "
                                    "the float64 range", item=item)
        value = 0.0 if denom == 0 else min(1.0, raw / denom)
        return Score(
            value=value, metric="trajectory",
            detail={"raw_distance": raw, "denom": denom, "similarity": 1.0 - value,
                    "scheme": self.scheme, "n_pred_steps": p_len, "n_gold_steps": g_len,
                    "higher_is_better": False, "exact": True},
        )

    def _raw(self, p: _Prepared, g: _Prepared, w: _Weights) -> float:
        """Raw distance of the Python-side schemes (``exact``, ``any_order``, ``superset``)."""
        if self.scheme == "exact":
            same = len(p.calls) == len(g.calls) and all(
                pc[0] == gc[0] and _call_matches(pn, gn)
                for pc, gc, pn, gn in zip(p.calls, g.calls, p.norm, g.norm))
            return 0.0 if same else sum(p.mass) + sum(g.mass)
        pn, gn = p.norm, g.norm
        pairs = _assign(p.calls, g.calls, pn, gn, self._gain(p, g, w))
        used_p = {i for i, _ in pairs}
        used_g = {j for _, j in pairs}
        missed = sum(g.mass[j] for j in range(len(g.calls)) if j not in used_g)
        if self.scheme == "superset":
            return missed + sum(g.mass[j] for i, j in pairs if not _call_matches(pn[i], gn[j]))
        subs = sum(_sub(p.calls[i][0], g.calls[j][0], pn[i], gn[j], p.mass[i], g.mass[j], w) for i, j in pairs)
        extra = sum(p.mass[i] for i in range(len(p.calls)) if i not in used_p)
        return subs + extra + missed

    def _gain(self, p: _Prepared, g: _Prepared, w: _Weights) -> Optional[Gain]:
        """What ``pairing="optimal"`` maximises (``None``: greedy). ``any_order``: a pair saves its
        two masses (no longer unpaired) less its substitution cost; ``superset``: an exact pair
        saves its gold call's mass. The raw distance is the total mass (all gold mass for
        ``superset``) less the savings. Terms are single weights, so their exact sum does not
        depend on the order of the substitution's additions."""
        if self.pairing == "greedy":
            return None
        pn, gn = p.norm, g.norm
        if self.scheme == "superset":
            return lambda i, j: (g.mass[j],) if _call_matches(pn[i], gn[j]) else ()

        def saving(i: int, j: int) -> tuple:  # same tool: the substitution sums the differing arguments
            a, b, tool = pn[i], gn[j], g.calls[j][0]
            differing = [-w.arg(tool, k) for k in b if k not in a or a[k] != b[k]]
            differing += [-w.arg(tool, k) for k in a if k not in b]
            return (p.mass[i], g.mass[j], *differing)

        return saving

    def aggregate(self, scores: Iterable[Score]) -> float:
        """Σ raw distance / Σ denominator over all scores (0.0 when the denominators sum to 0)."""
        raw = denom = 0.0
        for s in scores:
            raw += s.detail["raw_distance"]
            denom += s.detail["denom"]
        return 0.0 if denom == 0 else raw / denom
