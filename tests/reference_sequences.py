"""Straightforward pure-Python implementations of the sequence algorithms, written from their definitions.

They are the test oracles (and the benchmarks' pure-Python peers) for the NW trajectory kernel
and for ROVER (both in docs/decisions.md). Deliberately naive: full tables, Python
objects, no interning; they must not share code with scorekit.
"""

from __future__ import annotations

_MISSING = object()


# --------------------------------------------------------------------------- trajectories

def norm_value(v, canon):
    """Strings canonicalised, lists/tuples element-wise to tuples, rest as is."""
    if isinstance(v, str):
        return canon(v) if canon else v
    if isinstance(v, (list, tuple)):
        return tuple(norm_value(e, canon) for e in v)
    return v


def call_mass(call, w_tool, w_arg):
    tool, args = call
    total = w_tool(tool)
    for name in args:
        total += w_arg(tool, name)
    return total


def call_sub(p, g, w_tool, w_arg, canon):
    """Substitution cost; argument names are visited in sorted order (scorekit's documented order)."""
    if p[0] != g[0]:
        return call_mass(p, w_tool, w_arg) + call_mass(g, w_tool, w_arg)
    cost = 0.0
    for name in sorted(set(p[1]) | set(g[1])):
        a = norm_value(p[1][name], canon) if name in p[1] else _MISSING
        b = norm_value(g[1][name], canon) if name in g[1] else _MISSING
        if a is _MISSING or b is _MISSING or a != b:
            cost += w_arg(g[0], name)
    return cost


def nw_distance(pred, gold, w_tool=lambda t: 1.0, w_arg=lambda t, a: 1.0, canon=None):
    """Plain O(n·m) Needleman–Wunsch over calls ``(tool, args)`` with the trajectory cost model."""
    n, m = len(pred), len(gold)
    d = [[0.0] * (m + 1) for _ in range(n + 1)]
    for j in range(1, m + 1):
        d[0][j] = d[0][j - 1] + call_mass(gold[j - 1], w_tool, w_arg)
    for i in range(1, n + 1):
        d[i][0] = d[i - 1][0] + call_mass(pred[i - 1], w_tool, w_arg)
        for j in range(1, m + 1):
            d[i][j] = min(
                d[i - 1][j - 1] + call_sub(pred[i - 1], gold[j - 1], w_tool, w_arg, canon),
                d[i - 1][j] + call_mass(pred[i - 1], w_tool, w_arg),
                d[i][j - 1] + call_mass(gold[j - 1], w_tool, w_arg),
            )
    return d[n][m]


# --------------------------------------------------------------------------- ROVER

def _majority(slot):
    counts, first = {}, {}
    for k, (tok, _) in enumerate(slot):
        if tok is None:
            continue
        counts[tok] = counts.get(tok, 0) + 1
        first.setdefault(tok, k)
    if not counts:
        return None
    return max(counts, key=lambda t: (counts[t], -first[t]))


def _align(spine, hyp):
    s, t = len(spine), len(hyp)
    dp = [[0] * (t + 1) for _ in range(s + 1)]
    for i in range(s + 1):
        dp[i][0] = i
    for j in range(t + 1):
        dp[0][j] = j
    for i in range(1, s + 1):
        for j in range(1, t + 1):
            sub = 0 if spine[i - 1] == hyp[j - 1] else 1
            dp[i][j] = min(dp[i - 1][j - 1] + sub, dp[i - 1][j] + 1, dp[i][j - 1] + 1)
    ops = []
    i, j = s, t
    while i > 0 or j > 0:
        if i > 0 and j > 0 and dp[i][j] == dp[i - 1][j - 1] + (0 if spine[i - 1] == hyp[j - 1] else 1):
            ops.append(("match", i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and dp[i][j] == dp[i - 1][j] + 1:
            ops.append(("del", i - 1, -1))
            i -= 1
        else:
            ops.append(("ins", -1, j - 1))
            j -= 1
    ops.reverse()
    return ops


def _vote(entries, n, cw, null_conf):
    votes, conf_sum, first = {}, {}, {}
    for k, (tok, conf) in enumerate(entries):
        votes[tok] = votes.get(tok, 0) + 1
        conf_sum[tok] = conf_sum.get(tok, 0.0) + (null_conf if tok is None else conf)
        first.setdefault(tok, k)

    def score(t):
        return (1 - cw) * (votes[t] / n) + cw * (conf_sum[t] / votes[t])

    winner = max(votes, key=lambda t: (score(t), t is not None, votes[t], -first[t]))
    return winner, score(winner), votes[winner] / n


def rover_units(units, cw=0.5, null_conf=0.7):
    """ROVER over hypotheses given as lists of ``(token, conf)``; returns ``[(entries, winner,
    score, vote_share)]`` per slot."""
    n = len(units)
    if n == 0:
        return []
    slots = [[u] for u in units[0]]
    for i in range(1, n):
        spine = [_majority(s) for s in slots]
        ops = _align(spine, [tok for tok, _ in units[i]])
        new = []
        for op, s, h in ops:
            if op == "match":
                new.append(slots[s] + [units[i][h]])
            elif op == "del":
                new.append(slots[s] + [(None, 0.0)])
            else:
                new.append([(None, 0.0)] * i + [units[i][h]])
        slots = new
    return [(slot, *_vote(slot, n, cw, null_conf)) for slot in slots]
