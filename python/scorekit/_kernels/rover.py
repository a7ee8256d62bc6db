"""ROVER kernel family: dispatch to the Rust core or the Numba twin.

Owns the kernel contract of ROVER (docs/decisions.md#rover; ``rust/kernels/src/rover/mod.rs``):
hypothesis ``i`` is ``tokens[offsets[i]:offsets[i+1]]`` (``uint32`` token ids, never
:data:`NULL`) with ``float64`` confidences alongside. Hypothesis 0 opens one slot per token; each
later hypothesis is aligned (unit-cost edit distance; traceback prefers the diagonal, then a
deletion, then an insertion) against the spine of slot majorities and merged; every slot then
votes with ``score = (1 - cw) * votes/N + cw * conf_sum/votes`` (a NULL entry contributes
``null_conf``), ties going to a real token over NULL, then more votes, then the earliest candidate.
Confidences, ``conf_weight`` and ``null_conf`` must lie in ``[0, 1]`` (``ValueError`` otherwise):
outside it a single engine's confidence could outvote any majority, and ±inf gives NaN scores.
It does not tokenise text or build Python result objects (that is ``scorekit.qe.rover``).

:func:`mean_agreements` runs many independent problems from one packed input (item ``k`` is the
hypotheses ``item_offsets[k]:item_offsets[k+1]``, hypothesis ``h`` the tokens
``engine_offsets[h]:engine_offsets[h+1]``) and returns each one's ``RoverConsensus.mean_agreement``:
the consensus tokens' vote shares added left to right as this interpreter's ``sum`` adds floats
(:data:`scorekit._kernels.bootstrap.COMPENSATED`), divided by their count; with no consensus token
0.0 for two or more engines and 1.0 for one or none.
"""

from __future__ import annotations

from scorekit import _kernels
from scorekit._kernels.bootstrap import COMPENSATED

#: Token id of a NULL entry.
NULL = 0xFFFFFFFF


def too_long_message(longest: int, max_tokens: int) -> str:
    """The ``max_tokens`` guard's error message, the same text as the Rust kernel's."""
    return (
        f"ROVER hypothesis has {longest} tokens (> max_tokens={max_tokens}); the O(N*l*L*L') aligner is "
        "designed for a handful of short-to-medium sequences. Pass max_tokens=<larger> (or None) to "
        "override deliberately."
    )


def _impl():
    return _kernels.implementation("rover")


def align_vote(tokens, confs, offsets, conf_weight: float, null_conf: float, max_tokens: int | None = None):
    """Slot network and votes: ``(slot_tokens uint32[S, N], slot_confs float64[S, N],
    winners uint32[S], scores float64[S], vote_shares float64[S])``.

    ``conf_weight`` is the effective confidence weight (0.0 = frequency only). A hypothesis longer
    than ``max_tokens`` raises ``ValueError`` (``None`` disables the guard).
    """
    return _impl().rover_align_vote(tokens, confs, offsets, conf_weight, null_conf, max_tokens)


def mean_agreements(tokens, confs, engine_offsets, item_offsets, conf_weight: float, null_conf: float,
                    max_tokens: int | None = None, threads: int | None = 0):
    """Mean agreement of every item, ``float64[n_items]``; ``threads`` 0/None = every core (results
    do not depend on it). A bad item raises ``ValueError`` naming it."""
    return _impl().rover_mean_agreements(tokens, confs, engine_offsets, item_offsets, conf_weight, null_conf,
                                         max_tokens, COMPENSATED, _kernels.resolve_threads(threads))
