"""ANLS and ANLS* (nested-JSON answers): :class:`AnlsMetric` and the batch :func:`anls_scores`.

This module owns the native ANLS* algorithm (Peer et al. 2024, arXiv 2402.03848) as the ``anls_star``
package 1.0.1 computes it: a gold and a predicted answer become trees (strings, numbers and booleans
are leaves, tuples in the gold are alternatives, lists are matched item to item, dicts key by key,
``None`` is "no answer"), and the score is the sum of the per-leaf similarities over the size of
the larger side. It also owns the optimal pairing of list items (:func:`assign`, a shortest
augmenting path Hungarian method that breaks ties as the pure-Python solver of ``munkres`` 3 does).

Leaf distances come from the Levenshtein kernels: a batch first collects every leaf pair of every
item, computes all their distances in one kernel call, then assembles each item's score (a call
with only a few pairs, such as one ``AnlsMetric`` call, uses RapidFuzz's Levenshtein instead: the
same distances without the cost of a kernel call). On the Rust backend the compiled reader and
scorer (``_core.AnlsBatch``, ``rust/kernels/src/anls.rs``) read the batch's answers into one arena
and score them once the similarities are known (the normalisation of texts stays here); the items
it hands back (unusual types, errors) and every item on the Numba backend go through the Python
trees below, its twin, where the common shapes (two plain answers, alternatives against one
answer, two lists or two dicts of plain answers) skip the trees. The threshold is a plain
argument, so concurrent calls with different thresholds never interfere.

>>> m = AnlsMetric()
>>> round(m("Hello Wrld", "Hello World").value, 3)      # one-character slip
0.909
>>> m({"items": ["dog", "cat"]}, {"items": ["cat", "dog"]}).value   # lists ignore order
1.0
>>> anls_scores(["Paris", ["a"]], [("paris", "Paris, France"), ["a", "b"]]).tolist()
[1.0, 0.5]
"""

from __future__ import annotations

import itertools
import math
import reprlib
import warnings
from typing import Any, Iterable, Optional, Sequence

from scorekit import _kernels
from scorekit._gc import cyclic_gc_paused
from scorekit.base import GraphGrammar, Score
from scorekit.errors import InputTooLargeError, InvalidTypeError, InvalidValueError

__all__ = ["AnlsMetric", "anls_scores", "assign", "MAX_DEPTH", "MAX_LIST_CELLS"]

#: Deepest nesting of lists, dicts and tuples accepted in one answer (deeper, or a structure that
#: contains itself, raises :class:`~scorekit.errors.InputTooLargeError`).
MAX_DEPTH = 200
#: Largest gold-items × predicted-items product of one list-against-list comparison.
MAX_LIST_CELLS = 4_000_000

# Node kinds. A node is a tuple whose first element is its kind:
#   (LEAF, obj, raw)             raw: the raw id of obj (see _Reader)
#   (NONE, None)
#   (LIST, obj, children, size)
#   (DICT, obj, {key: child}, size)
#   (TUPLE, obj, options, size)  gold only
LEAF, NONE, LIST, DICT, TUPLE = range(5)
_NONE_NODE = (NONE, None)
_LEAF_TYPES = (str, int, float)  # bool is an int
_INF = math.inf
_TUPLE_IN_PRED = "Tuples are reserved for 1-of-n ground truths. Use lists as containers in predictions."
_EMPTY_TUPLE = "Expected at least 1 valid ground truth option"
_COMPAT_WARNING = ("Treating ground truth as a list of options. This is a compatibility mode for "
                   "ST-VQA-like datasets.")
#: A call comparing at most this many leaf pairs scores them one by one (RapidFuzz's Levenshtein,
#: no NumPy); more go to the batch kernel in one call.
_SMALL_PAIRS = 64
#: Batches of at least this many items pause the cyclic garbage collector while they run (their
#: hundreds of thousands of small tuples would otherwise trigger full collections over and over).
_PAUSE_GC_FROM = 1_000


def _size(node: tuple) -> int:
    return node[3] if node[0] >= LIST else 1


def _noney(node: tuple) -> bool:
    """Whether a node is an empty answer: ``None``, ``""``, ``[]`` or ``{}``."""
    kind = node[0]
    if kind == NONE:
        return True
    if kind == LEAF:
        return isinstance(node[1], str) and node[1] == ""
    return not node[2]


class _Reader:
    """Reads answers into trees and lists every leaf pair a score will compare.

    Every distinct leaf gets a raw id (its index in ``raws``, which holds ``str(leaf)``): a ``str``
    by value, any other leaf (a number, a boolean, a ``str`` subclass) by identity, the batch's
    answers keeping it alive. Compared pairs are listed by position: pair ``i`` is gold leaf
    ``left[i]`` against predicted leaf ``right[i]`` (raw ids). :meth:`similarities` normalises
    every raw text once (lower-cased, whitespace runs folded to one space) and scores the pairs.
    """

    __slots__ = ("threshold", "read", "others", "raws", "left", "right")

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.read: dict = {}  # str -> raw id
        self.others: dict = {}  # id() of any other leaf -> raw id
        self.raws: list = []  # raw id -> str(leaf)
        self.left: list = []
        self.right: list = []

    def text(self, obj: Any) -> int:
        """The raw id of a leaf."""
        if type(obj) is str:
            known = self.read.get(obj)
            if known is None:
                known = self.read[obj] = len(self.raws)
                self.raws.append(obj)
            return known
        known = self.others.get(id(obj))
        if known is None:
            try:
                raw = str(obj)
            except ValueError as exc:  # an int beyond Python's digit limit for str()
                raise InvalidValueError(f"cannot be turned into text: {exc}", field="leaf") from None
            known = self.others[id(obj)] = len(self.raws)
            self.raws.append(raw)
        return known

    def texts(self, values: Iterable) -> list:
        """The raw ids of plain answers (:meth:`text` of each)."""
        read, text = self.read.get, self.text
        return [known if (known := read(x)) is not None and type(x) is str else text(x)
                for x in values]

    def build(self, obj: Any, is_gold: bool, depth: int = 0) -> tuple:
        """The tree of one answer, raising the reference's errors for what it cannot take."""
        if isinstance(obj, _LEAF_TYPES):
            return (LEAF, obj, self.text(obj))
        if obj is None:
            return _NONE_NODE
        if depth >= MAX_DEPTH:
            raise InputTooLargeError(f"nests deeper than {MAX_DEPTH} levels (or contains itself)",
                                     field="answer")
        depth += 1
        if isinstance(obj, dict):
            values, size = self.children(obj.values(), is_gold, depth)
            return (DICT, obj, dict(zip(obj.keys(), values)), size)
        if isinstance(obj, list):
            return (LIST, obj, *self.children(obj, is_gold, depth))
        if isinstance(obj, tuple):
            if not is_gold:
                raise InvalidValueError(_TUPLE_IN_PRED)
            if not obj:
                raise InvalidValueError(_EMPTY_TUPLE)
            options = self.children(obj, is_gold, depth)[0]
            return (TUPLE, obj, options, max(map(_size, options)))
        raise InvalidValueError(
            f"Found unsupported type {type(obj)} for {reprlib.repr(obj)} while creating ANLS tree")

    def children(self, values: Iterable, is_gold: bool, depth: int) -> tuple:
        """The trees of a container's items and the sum of their sizes."""
        read, text, build = self.read.get, self.text, self.build
        nodes, size = [], 0
        append = nodes.append
        for x in values:
            if type(x) is str:  # the usual leaf, first
                known = read(x)
                append((LEAF, x, text(x) if known is None else known))
                size += 1
            elif x is None:
                append(_NONE_NODE)
                size += 1
            elif isinstance(x, _LEAF_TYPES):
                append((LEAF, x, text(x)))
                size += 1
            else:
                node = build(x, is_gold, depth)
                append(node)
                size += node[3]
        return nodes, size

    def collect(self, g: tuple, p: tuple) -> None:
        """List every leaf pair that scoring ``g`` against ``p`` compares."""
        kind = g[0]
        if kind == LEAF:
            if p[0] == LEAF:
                self.left.append(g[2])
                self.right.append(p[2])
        elif kind == TUPLE:
            for option in g[2]:
                self.collect(option, p)
        elif kind == LIST:
            if p[0] == LIST:
                for gc in g[2]:
                    for pc in p[2]:
                        if gc[0] != LEAF:
                            self.collect(gc, pc)
                        elif pc[0] == LEAF:
                            self.left.append(gc[2])
                            self.right.append(pc[2])
        elif kind == DICT and p[0] == DICT:
            pd = p[2]
            for key, gc in g[2].items():
                pc = pd.get(key)
                if pc is None:
                    continue
                if gc[0] != LEAF:
                    self.collect(gc, pc)
                elif pc[0] == LEAF:
                    self.left.append(gc[2])
                    self.right.append(pc[2])

    def similarities(self, threads: Optional[int], first: Optional[tuple] = None):
        """The thresholded similarity of every listed pair, by position (a ``float64`` array),
        after those of ``first`` (``(gold raw ids, predicted raw ids)`` arrays) when given.

        Pairs of equal texts score 1.0 and a pair whose lengths alone put it below the threshold
        (one side empty, or even the best alignment too far off) 0.0 without a distance; the
        others' distances are one batch, each distinct text packed once.
        """
        import numpy as np

        threshold, left, right = self.threshold, self.left, self.right
        strings, ids = _normalise(self.raws)
        same = 0.0 if 1.0 < threshold else 1.0
        if first is not None:
            left = np.concatenate([first[0], np.array(left, dtype=np.int64)])
            right = np.concatenate([first[1], np.array(right, dtype=np.int64)])
        if len(left) <= _SMALL_PAIRS:  # a kernel call costs more than these few distances
            from rapidfuzz.distance import Levenshtein

            sims = []
            for i, j in zip(left, right):
                i, j = ids[i], ids[j]
                a, b = strings[i], strings[j]
                la, lb = len(a), len(b)
                longest = la if la > lb else lb
                if i == j:
                    sims.append(same)
                elif la == 0 or lb == 0 or 1 - abs(la - lb) / longest < threshold:
                    sims.append(0.0)
                else:
                    nls = 1 - Levenshtein.distance(a, b) / longest
                    sims.append(0.0 if nls < threshold else nls)
            return np.array(sims, dtype=np.float64)

        from scorekit._kernels import levenshtein as lev

        values, offsets = _pack(strings)
        lengths = np.diff(offsets)
        ids = np.array(ids, dtype=np.int64)
        gi = ids[np.asarray(left, dtype=np.int64)]
        pi = ids[np.asarray(right, dtype=np.int64)]
        la, lb = lengths[gi], lengths[pi]
        longest = np.maximum(la, lb)
        with np.errstate(divide="ignore", invalid="ignore"):
            reachable = (gi != pi) & (la > 0) & (lb > 0) & ~(1 - np.abs(la - lb) / longest < threshold)
        todo = np.flatnonzero(reachable)
        a_values, a_offsets = _gather(values, offsets, gi[todo])
        b_values, b_offsets = _gather(values, offsets, pi[todo])
        distances = lev.distance_batch(a_values, a_offsets, b_values, b_offsets,
                                       _kernels.resolve_threads(threads))
        nls = 1 - distances / longest[todo]
        sims = np.where(gi == pi, same, 0.0)
        sims[todo] = np.where(nls < threshold, 0.0, nls)
        return sims


def _normalise(raws: list) -> tuple:
    """The distinct normalised texts of ``raws`` (lower-cased, whitespace runs folded to one
    space), and for each raw text the index of its normalised text among them.

    >>> _normalise(["A  b", "x", " a B"])
    (['a b', 'x'], [0, 1, 0])
    """
    ids: dict = {}
    of_raw = [ids.setdefault(" ".join(raw.lower().split()), len(ids)) for raw in raws]
    return list(ids), of_raw


def _gather(values, offsets, rows):
    """Items ``rows`` (any order, repeats allowed) of a packed side, packed again."""
    import numpy as np

    starts, lengths = offsets[rows], offsets[rows + 1] - offsets[rows]
    new_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    positions = np.arange(new_offsets[-1], dtype=np.int64) + np.repeat(starts - new_offsets[:-1], lengths)
    return values[positions], new_offsets


def _pack(texts: list) -> tuple:
    """Code points and offsets of ``texts``; lone surrogates (valid in a Python ``str``) are kept."""
    import numpy as np

    from scorekit._packing import offsets_of, pack_texts

    try:
        return pack_texts(texts, "leaf")
    except ValueError:
        encoded = "".join(texts).encode("utf-32-le", "surrogatepass")
        return np.frombuffer(encoded, dtype=np.uint32), offsets_of(map(len, texts), len(texts))


class _Scorer:
    """Scores (gold tree, predicted tree) pairs once the leaf similarities are known."""

    __slots__ = ("sims", "n", "same")

    def __init__(self, threshold: float, sims: dict, n: int) -> None:
        self.sims = sims  # gold raw id * n + predicted raw id -> thresholded similarity
        self.n = n  # the number of raw ids
        self.same = 0.0 if 1.0 < threshold else 1.0  # two equal texts

    def pair(self, g: tuple, p: tuple) -> tuple:
        """``(similarities, size, exact)`` of gold ``g`` against prediction ``p``: the leaf
        similarities in the reference's order, the pairwise size they are averaged over, and
        whether the gold resolved against ``p`` equals the prediction (the tie-breaker): 1 if
        ``resolved == prediction``, 2 if they are only the same object (a NaN leaf: equal inside a
        list or dict, not on its own), else 0."""
        kind, pkind = g[0], p[0]
        if kind == LEAF:
            if pkind == LEAF:
                a, b = g[2], p[2]
                sim = self.same if a == b else self.sims[a * self.n + b]
                a, b = g[1], p[1]
                return [sim], 1, 1 if a == b else (2 if a is b else 0)
            return [0.0], max(1, _size(p)), False
        if kind == NONE:  # resolves to the prediction itself when that is an empty answer
            empty = _noney(p)
            return [1.0 if empty else 0.0], max(1, _size(p)), empty
        if kind == TUPLE:
            return self.choose(g[2], p)
        if kind == LIST and pkind == LIST:
            return self.lists(g[2], p[2])
        if kind == DICT and pkind == DICT:
            return self.dicts(g[2], p[2])
        return [0.0], max(g[3], _size(p)), False

    def choose(self, options: list, p: tuple) -> tuple:
        """The result of the option of a gold tuple with the best average (ties: the one equal to
        the prediction, then the first)."""
        return self.chosen(options, p)[0]

    def chosen(self, options: list, p: tuple) -> tuple:
        """``(result, option)`` of :meth:`choose`."""
        best = best_avg = best_exact = chosen = None
        for option in options:
            result = self.pair(option, p)
            sims, size, exact = result
            avg = sum(sims) / size if size else 1.0
            if best is None or avg > best_avg or (avg == best_avg and exact == 1 and best_exact != 1):
                best, best_avg, best_exact, chosen = result, avg, exact, option
        return best, chosen

    def resolves_empty(self, g: tuple) -> bool:
        """Whether gold ``g``, resolved against a missing answer, is itself an empty answer."""
        while g[0] == TUPLE:
            g = self.chosen(g[2], _NONE_NODE)[1]
        return g[0] == NONE or _noney(g)

    def lists(self, gs: list, ps: list) -> tuple:
        k, m = len(gs), len(ps)
        if k == 0 or m == 0:
            return [], sum(map(_size, gs)) + sum(map(_size, ps)), k == m
        _check_cells(k, m)
        pair, dicts, nextafter = self.pair, self.dicts, math.nextafter
        results, profits = [], []
        for g in gs:
            row, prow = [], []
            for p in ps:
                # pair() inlined for two dicts, the usual list items
                result = dicts(g[2], p[2]) if g[0] == DICT and p[0] == DICT else pair(g, p)
                row.append(result)
                sims, size, exact = result
                avg = sum(sims) / size if size else 1.0
                prow.append(nextafter(avg, _INF) if exact == 1 else avg)
            results.append(row)
            profits.append(prow)
        top = max(map(max, profits))
        pairs = assign([[top - x for x in row] for row in profits])
        sims, size = [], 0
        exact = k == m  # the resolved list is in prediction order, unpaired gold items last
        for i, j in pairs:
            r_sims, r_size, r_exact = results[i][j]
            sims += r_sims
            size += r_size
            exact = exact and r_exact > 0
        if k != m:  # the unpaired items count with their whole size
            size += (sum(map(_size, gs)) + sum(map(_size, ps))
                     - sum(_size(gs[i]) + _size(ps[j]) for i, j in pairs))
        return sims, size, exact

    def dicts(self, gd: dict, pd: dict) -> tuple:
        sims, size = [], 0
        exact = True
        pair, by_ids, same, n = self.pair, self.sims, self.same, self.n
        for key, gc in gd.items():
            pc = pd.get(key)
            if pc is None:  # a missing key is an empty answer; the resolved gold keeps it unless empty
                r_sims, r_size, _ = pair(gc, _NONE_NODE)
                exact = exact and self.resolves_empty(gc)
            elif gc[0] == LEAF and pc[0] == LEAF:  # pair() inlined for the common case
                a, b = gc[2], pc[2]
                sims.append(same if a == b else by_ids[a * n + b])
                size += 1
                a, b = gc[1], pc[1]
                exact = exact and (a == b or a is b)
                continue
            else:
                r_sims, r_size, r_exact = pair(gc, pc)
                exact = exact and r_exact > 0
            sims += r_sims
            size += r_size
        for key, pc in pd.items():
            if key in gd:
                continue
            exact = False
            size += max(1, _size(pc))
            if not _noney(pc):
                sims.append(0.0)
        return sims, size, exact


def _check_cells(k: int, m: int) -> None:
    if k * m > MAX_LIST_CELLS:
        raise InputTooLargeError(f"pairs {k} gold items with {m} predicted items, more than "
                                 f"{MAX_LIST_CELLS} comparisons", field="list")


def _check_threshold(threshold: Any) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise InvalidTypeError(f"must be a real number, got {type(threshold).__name__}", field="threshold")
    if math.isnan(threshold):
        raise InvalidValueError("must be a number, got NaN", field="threshold")
    return float(threshold)


def _flat(values: Iterable) -> bool:
    """Whether a list or dict holds only plain answers (strings, numbers, booleans)."""
    return all(map(isinstance, values, itertools.repeat(_LEAF_TYPES)))


def _plans(reader: _Reader, preds: Sequence, golds: Sequence, todo: Iterable[int], compat: int = 0) -> list:
    """What to score for items ``todo`` (indices, in order), their leaf pairs listed in ``reader``;
    errors name the item. ``compat`` items were already read in the compatibility mode (one
    warning covers them all).

    The common shapes skip the trees; with ``k`` the item and ``at`` the position of its first
    leaf pair: ``(k, LEAF, at, None)`` for two plain answers, ``(k, TUPLE, at, end)`` for
    alternatives against one answer, ``(k, LIST, at, (gold, pred))`` for two lists of plain
    answers (pairs row by row) and ``(k, DICT, at, (shared keys, size))`` for two dicts of plain
    answers. Anything else is ``(k, None, at, (gold tree, predicted tree, end))``.
    """
    plans = []
    build, text, left, right = reader.build, reader.text, reader.left, reader.right
    for k in todo:
        pred, gold = preds[k], golds[k]
        at = len(left)
        try:
            if isinstance(pred, _LEAF_TYPES):
                if isinstance(gold, _LEAF_TYPES):
                    left.append(text(gold))
                    right.append(text(pred))
                    plans.append((k, LEAF, at, None))
                    continue
                if (isinstance(gold, list) and isinstance(pred, str)
                        and all(map(isinstance, gold, itertools.repeat(str)))):
                    gold = tuple(gold)  # the reference's compatibility mode (VQA answer lists)
                    compat += 1
                if isinstance(gold, tuple) and gold and _flat(gold):
                    left += reader.texts(gold)
                    right += [text(pred)] * len(gold)
                    plans.append((k, TUPLE, at, len(left)))
                    continue
            elif isinstance(pred, list):
                if isinstance(gold, list) and _flat(gold) and _flat(pred):
                    _check_cells(len(gold), len(pred))
                    ga, pb = reader.texts(gold), reader.texts(pred)
                    for a in ga:
                        left += [a] * len(pb)
                        right += pb
                    plans.append((k, LIST, at, (gold, pred)))
                    continue
            elif isinstance(pred, dict):
                if isinstance(gold, dict) and _flat(gold.values()) and _flat(pred.values()):
                    shared = 0
                    for key, x in gold.items():
                        if key in pred:
                            left.append(text(x))
                            right.append(text(pred[key]))
                            shared += 1
                    size = len(gold) + sum(1 for key in pred if key not in gold)
                    plans.append((k, DICT, at, (shared, size)))
                    continue
            g = build(gold, True)
            p = build(pred, False)
        except (InvalidValueError, InputTooLargeError) as exc:
            if len(golds) == 1:
                raise
            raise type(exc)(exc.message, field=exc.field, item=k) from None
        reader.collect(g, p)
        plans.append((k, None, at, (g, p, len(left))))
    if compat:
        warnings.warn(_COMPAT_WARNING, UserWarning, stacklevel=4)
    return plans


def _anls_values(preds: Sequence, golds: Sequence, threshold: float, threads: Optional[int]):
    with cyclic_gc_paused(len(golds) >= _PAUSE_GC_FROM):
        return _batch_values(preds, golds, threshold, threads)


def _compiled_batch(preds: Sequence, golds: Sequence):
    """The batch read by the compiled reader (``_core.AnlsBatch``) on the Rust backend, else
    ``None`` (every item then goes through the Python trees, its twin)."""
    core = _kernels.compiled()
    if core is None:
        return None
    return core.AnlsBatch(preds, golds, MAX_DEPTH, MAX_LIST_CELLS)


def _batch_values(preds: Sequence, golds: Sequence, threshold: float, threads: Optional[int]):
    """The ANLS* of every item (a list, or an array on the compiled path). The compiled reader
    takes the items it can; the rest go through :func:`_plans`. Its leaf pairs come first in the
    one similarity batch (its raw ids too), and errors are raised in item order either way."""
    batch = _compiled_batch(preds, golds)
    reader = _Reader(threshold)
    if batch is None:
        todo, compat, first, n_first = range(len(golds)), 0, None, 0
    else:
        todo, compat, first = batch.fallback, batch.compat, batch.pairs()
        reader.raws.extend(batch.raws)
        n_first = len(first[0])
    plans = _plans(reader, preds, golds, todo, compat)
    all_sims = reader.similarities(threads, first)
    sims = all_sims[n_first:].tolist()
    stop, error = len(golds), None
    if batch is None:
        values: Any = [0.0] * len(golds)
    else:
        from scorekit._kernels.bootstrap import COMPENSATED

        values, error = batch.score(all_sims[:n_first], 0.0 if 1.0 < threshold else 1.0, COMPENSATED)
        if error is not None:
            stop = error[0]
    # the trees look their leaf pairs up by raw ids (a pair scores the same wherever it occurs)
    by_ids: dict = {}
    left, right, n = reader.left, reader.right, len(reader.raws)
    for _, kind, at, data in plans:
        if kind is None:
            end = data[2]
            by_ids.update(zip([a * n + b for a, b in zip(left[at:end], right[at:end])], sims[at:end]))
    scorer = _Scorer(threshold, by_ids, n)
    for k, kind, at, data in plans:
        if k > stop:
            break
        if kind == LEAF:
            values[k] = sims[at]
        elif kind == TUPLE:  # every option has size 1: the best similarity
            values[k] = max(sims[at:data])
        elif kind == LIST:
            values[k] = _flat_lists(sims, at, *data)
        elif kind == DICT:  # a missing or extra key adds 0 to the sum and 1 to the size
            shared, size = data
            values[k] = sum(sims[at:at + shared]) / size if size else 1.0
        else:
            leaf_sims, size, _ = scorer.pair(data[0], data[1])
            values[k] = sum(leaf_sims) / size if size else 1.0
    if error is not None:  # the compiled item's list comparison is too large
        _check_cells(error[1], error[2])
    return values


def _flat_lists(sims: list, at: int, gold: list, pred: list) -> float:
    """ANLS* of two lists of plain answers whose similarities are ``sims[at:]``, row by row."""
    k, m = len(gold), len(pred)
    if k == 0 or m == 0:
        return 1.0 if k == m else 0.0
    if k == 1 or m == 1:  # the pairing takes the first best pair: an exact match scores the best
        return max(sims[at:at + k * m]) / (k if k > m else m)
    rows = [sims[at + i * m:at + (i + 1) * m] for i in range(k)]
    nextafter = math.nextafter
    profits = [[nextafter(x, _INF) if g == p else x for x, p in zip(row, pred)] if g in pred else row
               for row, g in zip(rows, gold)]
    top = max(map(max, profits))
    costs = [[top - x for x in row] for row in profits]
    pairs = _distinct_cheapest(costs) or assign(costs)
    return sum([rows[i][j] for i, j in pairs]) / (k if k > m else m)


def _distinct_cheapest(costs: list) -> Optional[list]:
    """The pairing :func:`assign` returns, found without it when it is obvious: along the shorter
    side (rows, or columns for a matrix with more rows than columns) each line has one strictly
    cheapest entry and no two lines share the other index. Their sum is then a lower bound that
    no other pairing reaches, so the optimum is unique. ``None`` otherwise."""
    n_rows, n_cols = len(costs), len(costs[0])
    lines = costs if n_rows <= n_cols else [list(col) for col in zip(*costs)]
    picks = []
    for line in lines:
        low = min(line)
        if line.count(low) != 1:
            return None
        picks.append(line.index(low))
    if len(set(picks)) != len(picks):
        return None
    if n_rows <= n_cols:
        return list(enumerate(picks))
    return sorted((i, j) for j, i in enumerate(picks))


def anls_scores(preds: Iterable[Any], golds: Iterable[Any], *, threshold: float = 0.5,
                threads: Optional[int] = None):
    """ANLS* of every (prediction, gold) pair, as a ``float64`` NumPy array.

    Equal to ``[AnlsMetric(threshold=threshold)(p, g).value for p, g in zip(preds, golds)]``, but
    every leaf distance of the whole batch is computed in one kernel call (``threads=None`` uses
    every core). Bad input raises the error :class:`AnlsMetric` raises, naming the item.

    >>> anls_scores(["cat", {"a": "x"}], ["cats", {"a": "x", "b": "y"}]).tolist()
    [0.75, 0.5]
    """
    import numpy as np

    from scorekit._packing import check_same_length

    threshold = _check_threshold(threshold)
    preds, golds = _answers(preds, "preds"), _answers(golds, "golds")
    check_same_length(preds, golds, "preds", "golds")
    return np.asarray(_anls_values(preds, golds, threshold, threads), dtype=np.float64)


def _answers(items: Iterable[Any], name: str) -> Sequence:
    if isinstance(items, (str, bytes, dict)):
        raise InvalidTypeError(f"must be a sequence of answers, not a single {type(items).__name__}",
                               field=name)
    if isinstance(items, (list, tuple)):
        return items
    try:
        return list(items)
    except TypeError:
        raise InvalidTypeError(f"must be an iterable of answers, got {type(items).__name__}",
                               field=name) from None


class AnlsMetric:
    """ANLS / ANLS* similarity as a metric: a bare string (classic ANLS) or any nested
    dict/list/tuple/``None`` answer (ANLS*); higher is better, 1.0 is a perfect answer.

    A per-leaf similarity below ``threshold`` counts as 0 (equal to it is kept). Gold tuples are
    alternatives (the best one counts); lists are paired optimally, and missing or extra items
    and keys count against the score. ``aggregate`` is the mean of the per-item values.

    >>> m = AnlsMetric(threshold=0.9)
    >>> m("Helo Wrld", "Hello World").value
    0.0
    >>> m.aggregate([m("cat", "cat"), m("dog", "dog")])
    1.0
    """

    name = "anls"

    def __init__(self, *, threshold: float = 0.5) -> None:
        self.threshold = _check_threshold(threshold)

    def __call__(self, pred: Any, gold: Any, *, grammar: Optional[GraphGrammar] = None) -> Score:
        value = float(_anls_values((pred,), (gold,), self.threshold, 1)[0])
        return Score(value, metric="anls",
                     detail={"anls": value, "threshold": self.threshold, "higher_is_better": True})

    def aggregate(self, scores: Sequence[Score]) -> float:
        """Corpus ANLS: the mean of the per-item values (NaN for no items)."""
        values = [s.detail.get("anls", s.value) for s in scores]
        if not values:
            return math.nan
        return sum(values) / len(values)

    def __repr__(self) -> str:
        return f"AnlsMetric(threshold={self.threshold!r})"


def assign(costs: list) -> list:
    """Minimum-cost pairing of the rows and columns of a rectangular cost matrix (a list of rows of
    floats): ``min(rows, columns)`` pairs ``(row, column)``, sorted by row.

    Exact ties between equally cheap pairings are broken as the pure-Python solver of ``munkres``
    3 breaks them: rows (or columns, for a matrix with more rows than columns) are taken in order,
    each first takes the first free column at its minimum, and the rest are added by shortest
    augmenting paths over the columns in index order.

    >>> assign([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
    [(0, 1), (1, 0), (2, 2)]
    >>> assign([[1, 1], [1, 1], [0, 0]])
    [(0, 1), (2, 0)]
    """
    n_rows = len(costs)
    n_cols = len(costs[0]) if n_rows else 0
    if n_rows == 0 or n_cols == 0:
        return []
    transposed = n_rows > n_cols
    rows = [list(col) for col in zip(*costs)] if transposed else costs
    n, m = len(rows), len(rows[0])
    u = [0.0] * n  # row potentials
    v = [0.0] * m  # column potentials
    row_of = [-1] * m
    col_of = [-1] * n
    for i, row in enumerate(rows):  # each row takes its first free cheapest column
        low = u[i] = min(row)
        j = row.index(low)
        while row_of[j] >= 0:
            try:
                j = row.index(low, j + 1)
            except ValueError:
                break
        else:
            row_of[j], col_of[i] = i, j
    for i in range(n):
        if col_of[i] < 0:
            _augment(rows, u, v, row_of, col_of, i)
    pairs = [(col_of[i], i) for i in range(n)] if transposed else list(enumerate(col_of))
    return sorted(pairs)


def _augment(rows: list, u: list, v: list, row_of: list, col_of: list, start: int) -> None:
    """Add row ``start`` to the pairing along a shortest augmenting path (Dijkstra over reduced
    costs, columns scanned in index order, the first column at the minimum taken)."""
    m = len(v)
    dist = [_INF] * m
    via = [-1] * m  # the column through which each column was best reached (-1: from start)
    done = [False] * m
    seen_rows, seen_cols = [start], []
    row, came_from = start, -1
    while True:
        costs, ur = rows[row], u[row]
        delta, nxt = _INF, -1
        for j in range(m):
            if not done[j]:
                reduced = costs[j] - ur - v[j]
                if reduced < dist[j]:
                    dist[j] = reduced
                    via[j] = came_from
                if dist[j] < delta:
                    delta, nxt = dist[j], j
        for r in seen_rows:
            u[r] += delta
        for j in seen_cols:
            v[j] -= delta
        for j in range(m):
            if not done[j]:
                dist[j] -= delta
        done[nxt] = True
        seen_cols.append(nxt)
        if row_of[nxt] < 0:
            break
        row, came_from = row_of[nxt], nxt
        seen_rows.append(row)
    j = nxt
    while True:
        back = via[j]
        r = start if back < 0 else row_of[back]
        row_of[j], col_of[r] = r, j
        if back < 0:
            return
        j = back
