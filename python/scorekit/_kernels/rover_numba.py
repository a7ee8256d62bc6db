"""Numba twin of the ``rover`` kernel: same signatures and results as ``scorekit._core.rover_align_vote``
and ``scorekit._core.rover_mean_agreements`` (the batch runs its items one after the other).

Spine majorities, the bit-parallel unit-cost alignment with its traceback preference (diagonal,
then deletion, then insertion), the slot rebuild and the vote arithmetic are those of
``rust/kernels/src/rover/mod.rs``; see ``scorekit._kernels.rover`` for the contract. Validation
and the ``max_tokens`` guard happen here in Python, with the Rust messages.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scorekit._kernels import rover as _contract
from scorekit._kernels.bootstrap_numba import _sum
from scorekit._kernels.rover import too_long_message

NULL = np.uint32(_contract.NULL)
OP_MATCH, OP_DELETE, OP_INSERT = 0, 1, 2


def _arrays(tokens, confs, *offsets):
    """The arguments as contiguous 1-D arrays of the kernel's dtypes (``offsets``: name, array pairs)."""
    checks = ((tokens, np.uint32, "tokens"), (confs, np.float64, "confs"),
              *((arr, np.int64, name) for name, arr in offsets))
    out = []
    for arr, dtype, name in checks:
        arr = np.ascontiguousarray(arr)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a contiguous 1-D array")
        if arr.dtype != dtype:
            raise TypeError(f"{name} must be a {np.dtype(dtype).name} array, got {arr.dtype}")
        out.append(arr)
    if len(out[1]) != len(out[0]):
        raise ValueError(f"confs must have one value per token ({len(out[0])}), got {len(out[1])}")
    return out


def _check_offsets(offsets, end, name, what):
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != end:
        raise ValueError(f"{name} must run from 0 to the number of {what} ({end})")
    if np.any(np.diff(offsets) < 0):
        raise ValueError(f"{name} must be non-decreasing")


def _value_errors(tokens, confs):
    """The message of the first problem of these tokens (NULL id, NaN, outside [0, 1]), or None."""
    if np.any(tokens == NULL):
        return f"tokens must be below {int(NULL)} (the NULL id)"
    nan = np.flatnonzero(np.isnan(confs))
    if len(nan):
        return f"confs must not be NaN (token {nan[0]})"
    outside = np.flatnonzero((confs < 0.0) | (confs > 1.0))
    if len(outside):
        return f"confs must be within [0, 1] (token {outside[0]})"
    return None


def _too_long(offsets, max_tokens):
    """The guard's message for these hypotheses, or None."""
    if max_tokens is not None and len(offsets) > 1:
        longest = int(np.diff(offsets).max())
        if longest > max_tokens:
            return too_long_message(longest, max_tokens)
    return None


def _check_weights(conf_weight, null_conf):
    for name, value in (("conf_weight", conf_weight), ("null_conf", null_conf)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be within [0, 1]")


def _validate(tokens, confs, offsets, max_tokens):
    tokens, confs, offsets = _arrays(tokens, confs, ("offsets", offsets))
    _check_offsets(offsets, len(tokens), "offsets", "tokens")
    message = _value_errors(tokens, confs) or _too_long(offsets, max_tokens)
    if message:
        raise ValueError(message)
    return tokens, confs, offsets


def _validate_batch(tokens, confs, engine_offsets, item_offsets, conf_weight, null_conf, max_tokens):
    """The checks of ``RoverBatch::new``: the layout, the weights, then the first item with a bad
    token or a hypothesis beyond ``max_tokens`` (its message counts tokens within the item)."""
    tokens, confs, engine_offsets, item_offsets = _arrays(
        tokens, confs, ("engine_offsets", engine_offsets), ("item_offsets", item_offsets))
    _check_offsets(engine_offsets, len(tokens), "engine_offsets", "tokens")
    _check_offsets(item_offsets, len(engine_offsets) - 1, "item_offsets", "hypotheses")
    _check_weights(conf_weight, null_conf)
    bad_tokens = (tokens == NULL) | np.isnan(confs) | (confs < 0.0) | (confs > 1.0)
    hyp_of_bad = np.searchsorted(engine_offsets, np.flatnonzero(bad_tokens)[:1], side="right") - 1
    lengths = np.diff(engine_offsets)
    long_hyps = np.flatnonzero(lengths > max_tokens)[:1] if max_tokens is not None else hyp_of_bad[:0]
    first_hyps = np.concatenate((hyp_of_bad, long_hyps))
    if len(first_hyps):
        k = int(np.searchsorted(item_offsets, first_hyps.min(), side="right") - 1)
        hyps = engine_offsets[item_offsets[k]:item_offsets[k + 1] + 1]
        lo, hi = hyps[0], hyps[-1]
        raise ValueError(f"item {k}: {_value_errors(tokens[lo:hi], confs[lo:hi]) or _too_long(hyps, max_tokens)}")
    return tokens, confs, engine_offsets, item_offsets


@njit(cache=True)
def _majority(row):
    best = NULL
    best_count = 0
    for k in range(len(row)):
        t = row[k]
        if t == NULL:
            continue
        seen = False
        for q in range(k):
            if row[q] == t:
                seen = True
                break
        if seen:
            continue
        count = 0
        for q in range(k, len(row)):
            if row[q] == t:
                count += 1
        if count > best_count:
            best = t
            best_count = count
    return best


@njit(cache=True)
def _align_ops(spine, hyp):
    """Bit-parallel unit-cost alignment (Myers/Hyyrö), keeping per cell the bits D0
    ("D[i][j] == D[i-1][j-1]") and VP ("D[i][j] == D[i-1][j] + 1") for the traceback:
    diagonal iff the tokens match or D0 is clear, else deletion iff VP is set, else insertion."""
    s_len, t_len = len(spine), len(hyp)
    words = (s_len + 63) // 64
    one, zero64, all_ones = np.uint64(1), np.uint64(0), ~np.uint64(0)
    uniq = np.unique(spine)
    peq = np.zeros((len(uniq), words), dtype=np.uint64)
    for i in range(s_len):
        t = spine[i]
        if t != NULL:
            k = np.searchsorted(uniq, t)
            peq[k, i // 64] |= one << np.uint64(i % 64)
    no_match = np.zeros(words, dtype=np.uint64)
    cols_d0 = np.empty((t_len, words), dtype=np.uint64)
    cols_vp = np.empty((t_len, words), dtype=np.uint64)
    vp = np.full(words, all_ones, dtype=np.uint64)
    vn = np.zeros(words, dtype=np.uint64)
    for j in range(t_len):
        h = hyp[j]
        k = np.searchsorted(uniq, h)
        eq = peq[k] if (h != NULL and k < len(uniq) and uniq[k] == h) else no_match
        add_carry, hp_carry, hn_carry = zero64, one, zero64
        for w in range(words):
            e, p, n = eq[w], vp[w], vn[w]
            x = e | n
            s1 = (e & p) + p
            s2 = s1 + add_carry
            add_carry = one if (s1 < p or s2 < s1) else zero64
            d0 = (s2 ^ p) | x
            hp = n | ~(d0 | p)
            hn = p & d0
            hp_shifted = (hp << one) | hp_carry
            hn_shifted = (hn << one) | hn_carry
            hp_carry = hp >> np.uint64(63)
            hn_carry = hn >> np.uint64(63)
            vp[w] = hn_shifted | ~(d0 | hp_shifted)
            vn[w] = hp_shifted & d0
            cols_d0[j, w] = d0
            cols_vp[j, w] = vp[w]
    ops = np.empty((s_len + t_len, 3), dtype=np.int64)
    k = 0
    i, j = s_len, t_len
    while i > 0 or j > 0:
        if i == 0:
            choice = OP_INSERT
        elif j == 0:
            choice = OP_DELETE
        else:
            a = spine[i - 1]
            word, shift = (i - 1) // 64, np.uint64((i - 1) % 64)
            if (a != NULL and a == hyp[j - 1]) or ((cols_d0[j - 1, word] >> shift) & one) == zero64:
                choice = OP_MATCH
            elif ((cols_vp[j - 1, word] >> shift) & one) == one:
                choice = OP_DELETE
            else:
                choice = OP_INSERT
        if choice == OP_MATCH:
            ops[k, 0], ops[k, 1], ops[k, 2] = OP_MATCH, i - 1, j - 1
            i -= 1
            j -= 1
        elif choice == OP_DELETE:
            ops[k, 0], ops[k, 1], ops[k, 2] = OP_DELETE, i - 1, -1
            i -= 1
        else:
            ops[k, 0], ops[k, 1], ops[k, 2] = OP_INSERT, -1, j - 1
            j -= 1
        k += 1
    return ops[:k][::-1].copy()


@njit(cache=True)
def _vote(tokens, confs, conf_weight, null_conf):
    n = len(tokens)
    best_t = NULL
    best_s = 0.0
    best_v = 0
    have = False
    for k in range(n):
        t = tokens[k]
        seen = False
        for q in range(k):
            if tokens[q] == t:
                seen = True
                break
        if seen:
            continue
        votes = 0
        conf_sum = 0.0
        for q in range(k, n):
            if tokens[q] == t:
                votes += 1
                conf_sum += null_conf if t == NULL else confs[q]
        v = float(votes)
        score = (1.0 - conf_weight) * (v / n) + conf_weight * (conf_sum / v)
        if not have:
            better = True
        elif score > best_s:
            better = True
        elif score == best_s:
            real, best_real = (1 if t != NULL else 0), (1 if best_t != NULL else 0)
            better = real > best_real or (real == best_real and votes > best_v)
        else:
            better = False
        if better:
            best_t, best_s, best_v, have = t, score, votes, True
    return best_t, best_s, best_v / n


@njit(cache=True)
def _rover(tokens, confs, offsets, conf_weight, null_conf):
    n_engines = len(offsets) - 1
    width = 1
    ent_tok = tokens[offsets[0]:offsets[1]].copy().reshape((-1, 1))
    ent_conf = confs[offsets[0]:offsets[1]].copy().reshape((-1, 1))
    for i in range(1, n_engines):
        h_tok = tokens[offsets[i]:offsets[i + 1]]
        h_conf = confs[offsets[i]:offsets[i + 1]]
        spine = np.empty(ent_tok.shape[0], dtype=np.uint32)
        for s in range(ent_tok.shape[0]):
            spine[s] = _majority(ent_tok[s])
        ops = _align_ops(spine, h_tok)
        new_tok = np.empty((len(ops), width + 1), dtype=np.uint32)
        new_conf = np.empty((len(ops), width + 1), dtype=np.float64)
        for r in range(len(ops)):
            op, s, h = ops[r, 0], ops[r, 1], ops[r, 2]
            if op == OP_INSERT:
                new_tok[r, :width] = NULL
                new_conf[r, :width] = 0.0
            else:
                new_tok[r, :width] = ent_tok[s]
                new_conf[r, :width] = ent_conf[s]
            if op == OP_DELETE:
                new_tok[r, width] = NULL
                new_conf[r, width] = 0.0
            else:
                new_tok[r, width] = h_tok[h]
                new_conf[r, width] = h_conf[h]
        ent_tok, ent_conf = new_tok, new_conf
        width += 1
    n_slots = ent_tok.shape[0]
    winners = np.empty(n_slots, dtype=np.uint32)
    scores = np.empty(n_slots, dtype=np.float64)
    shares = np.empty(n_slots, dtype=np.float64)
    for s in range(n_slots):
        winners[s], scores[s], shares[s] = _vote(ent_tok[s], ent_conf[s], conf_weight, null_conf)
    return ent_tok, ent_conf, winners, scores, shares


def rover_align_vote(tokens, confs, offsets, conf_weight, null_conf, max_tokens=None):
    """Twin of ``_core.rover_align_vote``: ``(slot_tokens uint32[S, N], slot_confs float64[S, N],
    winners uint32[S], scores float64[S], vote_shares float64[S])``."""
    tokens, confs, offsets = _validate(tokens, confs, offsets, max_tokens)
    _check_weights(conf_weight, null_conf)
    if len(offsets) == 1:
        empty = np.empty(0)
        return (np.empty((0, 0), np.uint32), np.empty((0, 0)), empty.astype(np.uint32), empty, empty.copy())
    return _rover(tokens, confs, offsets, float(conf_weight), float(null_conf))


@njit(cache=True)
def _mean_agreements(tokens, confs, engine_offsets, item_offsets, conf_weight, null_conf, compensated):
    n = len(item_offsets) - 1
    out = np.empty(n, dtype=np.float64)
    for k in range(n):
        lo, hi = item_offsets[k], item_offsets[k + 1]
        if hi == lo:
            out[k] = 1.0
            continue
        _, _, winners, _, shares = _rover(tokens, confs, engine_offsets[lo:hi + 1], conf_weight, null_conf)
        consensus = shares[winners != NULL]
        if len(consensus):
            out[k] = _sum(consensus, compensated) / len(consensus)
        else:
            out[k] = 0.0 if hi - lo >= 2 else 1.0
    return out


def rover_mean_agreements(tokens, confs, engine_offsets, item_offsets, conf_weight, null_conf, max_tokens,
                          compensated, threads=0):
    """Twin of ``_core.rover_mean_agreements``: ``float64[n_items]`` (``threads`` is accepted for the
    same signature; the items run one after the other)."""
    tokens, confs, engine_offsets, item_offsets = _validate_batch(
        tokens, confs, engine_offsets, item_offsets, conf_weight, null_conf, max_tokens)
    return _mean_agreements(tokens, confs, engine_offsets, item_offsets, float(conf_weight), float(null_conf),
                            bool(compensated))
