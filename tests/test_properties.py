"""Property tests (hypothesis) of the Levenshtein family on both backends: identity, symmetry,
triangle inequality, and the count identities S+D+H = |ref|, S+I+H = |hyp|."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorekit import batch

TEXT = st.text(alphabet=st.sampled_from(list("abը的😀\u0301 ")), max_size=40)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(a=TEXT, b=TEXT, c=TEXT)
def test_metric_axioms(backend, a, b, c):
    d = batch.levenshtein([a, b, a, a], [b, a, c, a]).tolist()
    ab, ba, ac, aa = d
    bc = batch.levenshtein([b], [c])[0]
    assert aa == 0
    assert ab == ba
    assert (ab == 0) == (a == b)
    assert ac <= ab + bc
    assert abs(len(a) - len(b)) <= ab <= max(len(a), len(b))


@SETTINGS
@given(ref=TEXT, hyp=TEXT)
def test_count_identities(backend, ref, hyp):
    for r in (batch.cer([hyp], [ref]), batch.wer([hyp], [ref])):
        s, d, i, h = (int(x[0]) for x in (r.substitutions, r.deletions, r.insertions, r.hits))
        hyp_len = len(hyp) if r.metric == "cer" else len(hyp.split())
        assert s + d + h == r.ref_len[0]
        assert s + i + h == hyp_len
        assert min(s, d, i, h) >= 0
    assert batch.cer([hyp], [ref]).edits[0] == batch.levenshtein([hyp], [ref])[0]
