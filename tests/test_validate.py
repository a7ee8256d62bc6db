"""scorekit.validate: the FLAG-vs-CORRECT pipeline and its layers — the spec's vectors, the reference
kit's docstring examples, differential tests against ``ek.validate`` on random inputs for every
factory (the lexicon corrector on thousands of values, ties included), properties and bad input."""

from __future__ import annotations

import copy
import doctest
import math
import random
import string
from decimal import Decimal
from fractions import Fraction

import ek.base as ek_base
import ek.validate as ek_validate
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import distance, fuzz, process

from doc_examples import run_python_blocks
from ek_doctests import run_ek_doctests
from scorekit import base as sk_base
from scorekit import validate as sv
from scorekit.base import FieldSpec, Finding, Severity
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.validate import (BENFORD_EXPECTED, Corrector, LexiconCorrector, ValidationResult, benford_findings,
                               canonicalize_corrector, cross_field_validator, lexicon_corrector, llm_corrector,
                               lm_surprisal_validator, ordering_validator, stop_on_correction, stop_on_flag, validate,
                               validation_pipeline, zscore_anomaly_findings)


def rows(findings) -> list[tuple]:
    """Findings of either kit as comparable tuples."""
    return [(f.field, f.layer, f.severity.value, f.message, f.suggestion) for f in findings]


def outcome(result) -> tuple:
    return result.original, result.value, rows(result.findings), result.corrected, result.flagged, result.clean


# --------------------------------------------------------------------------------------------
# Examples: this module's doctests, the reference kit's, the docs page
# --------------------------------------------------------------------------------------------


def test_doctests():
    assert doctest.testmod(sv).failed == 0


def test_ek_docstring_examples_run_on_scorekit():
    results = run_ek_doctests(ek_validate, sv)
    assert sum(r.attempted for r in results.values()) >= 5
    assert not {name: r.failed for name, r in results.items() if r.failed}


def test_docs_page():
    assert run_python_blocks("validate.md", min_blocks=5) >= 25


def test_constants():
    assert BENFORD_EXPECTED == ek_validate.BENFORD_EXPECTED
    assert BENFORD_EXPECTED[1] == 0.3010299956639812 and BENFORD_EXPECTED[9] == 0.04575749056067514
    assert (sv.DEFAULT_LEXICON_THRESHOLD, sv.DEFAULT_BENFORD_TOL, sv.DEFAULT_BENFORD_MIN_N,
            sv.DEFAULT_ZSCORE_THRESHOLD) == (0.8, 0.15, 30, 3.5)


# --------------------------------------------------------------------------------------------
# The spec's vectors (ek-core §9.2)
# --------------------------------------------------------------------------------------------


def test_lexicon_vectors():
    fix = validation_pipeline(lexicon_corrector(["France", "Germany", "Spain"]))
    r = fix("Frnace")
    assert (r.value, r.corrected) == ("France", True)
    assert rows(r.findings) == [("", "lexicon", "correct", "'Frnace' -> 'France' (lexicon match 0.83)", "France")]
    r = fix("Atlantis")
    assert r.flagged and not r.corrected and r.findings[0].severity is Severity.FLAG
    assert fix("France").clean
    assert validation_pipeline(lexicon_corrector(["France"], flag_unmatched=False))("Atlantis").clean
    assert fix("Atlantis", spec=FieldSpec(name="country", type="string")).findings[0].field == "country"


def test_canonicalize_then_lexicon_and_apply_corrections_off():
    r = validation_pipeline(canonicalize_corrector("lower"), lexicon_corrector(["france", "germany"]))("FRNACE")
    assert r.value == "france"
    assert [f.layer for f in r.findings] == ["canonicalize", "lexicon"]
    assert all(f.severity is Severity.CORRECT for f in r.findings)
    r = validation_pipeline(lexicon_corrector(["France"]), apply_corrections=False)("Frnace")
    assert (r.value, r.corrected, r.findings[0].suggestion) == ("Frnace", False, "France")


def test_stop_policies():
    seen = []

    def spy(value, *, spec=None):
        seen.append(value)
        return []

    validation_pipeline(lexicon_corrector(["France"]), spy, stop_when=stop_on_correction)("Frnace")
    validation_pipeline(lexicon_corrector(["France"]), spy, stop_when=stop_on_flag)("Atlantis")
    assert seen == []
    validation_pipeline(lexicon_corrector(["France"]), spy)("Atlantis")
    assert seen == ["Atlantis"]


def test_record_vectors():
    order = ordering_validator(["start", "end"])
    assert order({"start": 1, "end": 5}) == [] and order({"start": 1}) == []
    assert len(order({"start": 5, "end": 1})) == 1 and len(order({"start": 1, "end": 1})) == 1
    assert ordering_validator(["start", "end"], strict=False)({"start": 1, "end": 1}) == []
    check = cross_field_validator(lambda r: r["received"] <= r["pledged"], message="received exceeds pledged",
                                  fields=("received", "pledged"))
    assert check({"received": 5, "pledged": 10}) == [] and check({"received": 5}) == []
    (f,) = check({"received": 20, "pledged": 10})
    assert "exceeds" in f.message and f.field == "received,pledged" and f.severity is Severity.FLAG


def test_record_validators_run_inside_a_pipeline():
    # The reference's record validators take no spec= and fail inside its own pipeline (ek-core §10.2).
    record = {"start": 5, "end": 1}
    with pytest.raises(TypeError):
        ek_validate.validation_pipeline(ek_validate.ordering_validator(["start", "end"]))(record)
    r = validation_pipeline(ordering_validator(["start", "end"]),
                            cross_field_validator(lambda r: r["end"] > 0, message="end"))(record)
    assert [f.layer for f in r.findings] == ["cross_field"] and r.flagged and r.value is record


def test_benford_vectors():
    (f,) = benford_findings(list(range(100, 300)), field="amount")
    assert (f.field, f.layer, f.severity) == ("amount", "anomaly", Severity.FLAG)
    assert f.message.endswith("(max deviation 0.324 > 0.15) over 200 values")
    rnd = random.Random(0)
    assert benford_findings([10 ** (rnd.random() * 5) for _ in range(500)]) == []
    assert benford_findings([100, 200, 300]) == []
    assert len(benford_findings([None, "x", 0, float("inf")] + list(range(100, 300)))) == 1


def test_zscore_vectors():
    (f,) = zscore_anomaly_findings([100 + (i % 5) for i in range(49)] + [10000])
    assert f.message.startswith("value 10000.0 at index 49 ")
    assert zscore_anomaly_findings([100 + (i % 7) for i in range(60)]) == []
    assert zscore_anomaly_findings([1, 2, 3]) == [] and zscore_anomaly_findings([5] * 60) == []
    (f,) = zscore_anomaly_findings([100] * 49 + [-99999])
    assert "|z|=39.9 > 3.5" in f.message
    assert zscore_anomaly_findings([100] * 50) == []


def test_verifiers_are_re_exported_and_run_in_a_pipeline():
    import scorekit.qe as qe
    for name in ("checksum_validator", "regex_validator", "range_validator", "enum_validator", "schema_validator",
                 "totals_consistent"):
        assert getattr(sv, name) is getattr(qe, name) and name in sv.__all__
    luhn = validation_pipeline(sv.checksum_validator("luhn"))
    assert luhn("79927398713").clean
    r = luhn("79927398710")
    assert r.flagged and [f.layer for f in r.findings] == ["checksum"] and r.value == "79927398710"
    stack = validation_pipeline(canonicalize_corrector("strip"), sv.regex_validator(r"\d{4}"),
                                lexicon_corrector(["2024", "2025"]))
    assert outcome(stack(" 2O24 ")) == outcome(ek_validate.validation_pipeline(
        ek_validate.canonicalize_corrector("strip"), ek_validate.regex_validator(r"\d{4}"),
        ek_validate.lexicon_corrector(["2024", "2025"]))(" 2O24 "))


def test_validate_lm_and_llm_vectors():
    assert validate("Frnace", layers=[lexicon_corrector(["France"])]).value == "France"
    lm = lm_surprisal_validator(len, threshold=5.0)
    assert lm("ok") == [] and lm("") == [] and lm("a very long string")[0].layer == "lm_prior"
    prob = lm_surprisal_validator(lambda s: 0.1 if s == "junk" else 0.9, threshold=0.5, higher_is_worse=False)
    assert len(prob("junk")) == 1 and prob("good") == []
    calls = []

    def upper(v):
        calls.append(v)
        return v.upper()

    fix = validation_pipeline(lexicon_corrector(["alpha"]), llm_corrector(upper))
    r = fix("zzzzz")
    assert r.value == "ZZZZZ" and r.findings[-1].layer == "llm_correct"
    assert fix("alpha").clean and calls == ["zzzzz"]
    assert validation_pipeline(llm_corrector(lambda v: v + "!", only_flagged=False))("x").value == "x!"


def test_types():
    r = ValidationResult("a", "a")
    assert (r.findings, r.corrected, r.flagged, r.clean) == ((), False, False, True)
    with pytest.raises(AttributeError):
        r.value = "b"
    assert r == ValidationResult("a", "a", ())
    for layer in (lexicon_corrector(["a"]), canonicalize_corrector("lower"), llm_corrector(str.upper)):
        assert isinstance(layer, Corrector)
    assert not isinstance(len, Corrector)
    assert llm_corrector(str.upper).wants_findings is True
    assert [lexicon_corrector(["a"], layer="L2").layer, ordering_validator(["a"]).layer,
            cross_field_validator(bool, message="m").layer] == ["L2", "cross_field", "cross_field"]


# --------------------------------------------------------------------------------------------
# The lexicon corrector against ek (one extractOne per value) and rapidfuzz
# --------------------------------------------------------------------------------------------


def random_words(rnd: random.Random, n: int, alphabet: str, lo: int = 0, hi: int = 8) -> list[str]:
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(lo, hi))) for _ in range(n)]


def test_lexicon_matches_ek_on_thousands_of_random_values_with_ties():
    rnd = random.Random(16)
    compared = ties = 0
    for trial in range(160):
        alphabet = "ab" if trial % 2 else "abcde"       # a two-letter alphabet makes many ties
        vocabulary = random_words(rnd, rnd.randint(1, 40), alphabet)
        values = random_words(rnd, 30, alphabet) + [rnd.choice(vocabulary), 7, None]
        threshold = rnd.choice([0.8, 0.5, 0.0, 1.0, rnd.random()])
        flag_unmatched = rnd.random() < 0.8
        ours = lexicon_corrector(vocabulary, threshold=threshold, flag_unmatched=flag_unmatched, field_name="f")
        theirs = ek_validate.lexicon_corrector(vocabulary, threshold=threshold, flag_unmatched=flag_unmatched,
                                               field_name="f")
        expected = [rows(theirs(v)) for v in values]
        assert [rows(ours(v)) for v in values] == expected
        assert [rows(found) for found in ours.many(values)] == expected
        compared += len(values)
        for v in values:
            if isinstance(v, str) and v not in vocabulary:
                scores = [fuzz.ratio(v, w) for w in vocabulary]
                ties += scores.count(max(scores)) > 1
    assert compared > 5000 and ties > 1000


@pytest.mark.parametrize("scorer", [fuzz.WRatio, fuzz.partial_ratio, fuzz.token_sort_ratio, fuzz.QRatio,
                                    distance.Levenshtein.distance, distance.Levenshtein.normalized_similarity,
                                    distance.JaroWinkler.similarity])
def test_lexicon_matches_ek_with_other_scorers(scorer):
    rnd = random.Random(hash(scorer.__name__) % 1000)
    for _ in range(25):
        vocabulary = random_words(rnd, rnd.randint(1, 30), "abc d")
        values = random_words(rnd, 20, "abc d")
        ours = lexicon_corrector(vocabulary, scorer=scorer, threshold=0.01)
        theirs = ek_validate.lexicon_corrector(vocabulary, scorer=scorer, threshold=0.01)
        expected = [rows(theirs(v)) for v in values]
        assert [rows(ours(v)) for v in values] == expected
        assert [rows(found) for found in ours.many(values)] == expected


def test_lexicon_python_scorer_and_length_pruning_agree_with_extract_one():
    rnd = random.Random(5)
    vocabulary = random_words(rnd, 3000, string.ascii_lowercase, 1, 16)
    values = [w[:2] + "x" + w[3:] for w in rnd.sample(vocabulary, 150)] + random_words(rnd, 100, "aeiou", 0, 20)
    matches, scores = lexicon_corrector(vocabulary).nearest(values)
    expected = [process.extractOne(v, vocabulary, scorer=fuzz.ratio)[:2] for v in values]
    assert list(zip(matches, scores.tolist())) == expected
    custom = lexicon_corrector(vocabulary[:200], scorer=lambda a, b, **kw: float(len(set(a) & set(b))))
    matches, scores = custom.nearest(values[:20])
    expected = [process.extractOne(v, vocabulary[:200], scorer=lambda a, b, **kw: float(len(set(a) & set(b))))[:2]
                for v in values[:20]]
    assert list(zip(matches, scores.tolist())) == expected


def test_lexicon_threads_and_duplicates_do_not_change_results():
    rnd = random.Random(9)
    vocabulary = random_words(rnd, 500, "abcd", 1, 10)
    values = random_words(rnd, 400, "abcd", 0, 12)
    one = lexicon_corrector(vocabulary + vocabulary[:50], threads=1).many(values)
    assert lexicon_corrector(vocabulary, threads=None).many(values) == one
    assert lexicon_corrector(vocabulary, threads=2).many(values) == one
    assert [lexicon_corrector(vocabulary)(v) for v in values] == one


def test_lexicon_accepts_any_iterable_and_keeps_its_order():
    words = (w for w in ["ba", "ab"])
    fix = lexicon_corrector(words)
    assert fix("aa")[0].message == "'aa' not in vocabulary (nearest 'ba' @ 0.50)"
    assert fix("aa") == fix("aa")                       # the generator was read once, at construction
    assert lexicon_corrector(["ab", "ba"])("aa")[0].message.endswith("(nearest 'ab' @ 0.50)")
    assert lexicon_corrector([])("anything") == [] and lexicon_corrector([]).many(["a", "b"]) == [[], []]
    assert rows(lexicon_corrector(["", "x"])("")) == []
    assert rows(lexicon_corrector([""])("a")) == rows(ek_validate.lexicon_corrector([""])("a"))


# --------------------------------------------------------------------------------------------
# The other factories and the pipeline against ek on random inputs
# --------------------------------------------------------------------------------------------


def random_text(rnd: random.Random) -> str:
    return "".join(rnd.choice("aAbB  \t\u00e9e\u0301,.") for _ in range(rnd.randint(0, 8)))


def test_canonicalize_corrector_matches_ek():
    rnd = random.Random(3)
    steps = ["nfc", "nfkc", "lower", "strip", "collapse_whitespace", "strip_punctuation"]
    for _ in range(300):
        normalize = rnd.choice([rnd.choice(steps), rnd.sample(steps, rnd.randint(1, 3)), str.upper, None])
        name = rnd.choice(["", "city"])
        spec = rnd.choice([None, FieldSpec("spec_name")])
        ek_spec = None if spec is None else ek_base.FieldSpec("spec_name")
        value = rnd.choice([random_text(rnd), 3, None])
        ours = canonicalize_corrector(normalize, field_name=name)(value, spec=spec)
        assert rows(ours) == rows(ek_validate.canonicalize_corrector(normalize, field_name=name)(value, spec=ek_spec))


def random_record(rnd: random.Random) -> dict:
    pool = [1, 2, 2, 3, 1.5, "a", "b", None, float("nan")]
    return {k: rnd.choice(pool) for k in "abc" if rnd.random() < 0.8}


def test_record_validators_match_ek():
    rnd = random.Random(4)
    for _ in range(1500):
        record = random_record(rnd)
        snapshot = copy.deepcopy(record)
        keys = rnd.sample("abcd", rnd.randint(0, 4))
        strict = rnd.random() < 0.5
        assert rows(ordering_validator(keys, strict=strict)(record)) == \
            rows(ek_validate.ordering_validator(keys, strict=strict)(record))
        predicate = rnd.choice([lambda r: r["a"] <= r["b"], lambda r: r["a"] + 1 > 0, lambda r: len(r) > 1])
        assert rows(cross_field_validator(predicate, message="m", fields=keys)(record)) == \
            rows(ek_validate.cross_field_validator(predicate, message="m", fields=keys)(record))
        assert repr(record) == repr(snapshot)


def test_lm_and_llm_layers_match_ek():
    rnd = random.Random(6)
    for _ in range(400):
        value = rnd.choice([random_text(rnd), 5, None])
        threshold = rnd.choice([2, 3.5, 0.25, -1])
        higher = rnd.random() < 0.5
        scorer = rnd.choice([len, lambda s: 1 / (1 + len(s)), lambda s: s.count("a") * 0.7])
        assert rows(lm_surprisal_validator(scorer, threshold=threshold, higher_is_worse=higher)(value)) == \
            rows(ek_validate.lm_surprisal_validator(scorer, threshold=threshold, higher_is_worse=higher)(value))
        fn = rnd.choice([str.upper, str.strip, lambda s: None, lambda s: s])
        only = rnd.random() < 0.5
        flags = rnd.choice([(), ("flag",), ("correct",), ("correct", "flag")])
        ours = llm_corrector(fn, only_flagged=only)(
            value, findings=tuple(Finding("x", "y", Severity(s), suggestion="s") for s in flags))
        theirs = ek_validate.llm_corrector(fn, only_flagged=only)(
            value, findings=tuple(ek_base.Finding("x", "y", ek_base.Severity(s), suggestion="s") for s in flags))
        assert rows(ours) == rows(theirs)


def build_stacks(kit, base, rnd_choices):
    """The same random stack of layers in either kit; ``rnd_choices`` fixes the draw."""
    layers = []
    for kind, arg in rnd_choices:
        if kind == "canon":
            layers.append(kit.canonicalize_corrector(arg))
        elif kind == "lexicon":
            layers.append(kit.lexicon_corrector(arg[0], threshold=arg[1]))
        elif kind == "lm":
            layers.append(kit.lm_surprisal_validator(len, threshold=arg))
        elif kind == "llm":
            layers.append(kit.llm_corrector(arg))
        elif kind == "raw":
            def raw(value, *, spec=None, _sev=arg):    # a hand-written layer emitting one finding
                return [base.Finding("raw", "raw", base.Severity(_sev), "raw",
                                     (value + "?") if _sev == "correct" and isinstance(value, str) else None)]
            layers.append(raw)
    return layers


def test_pipeline_matches_ek_on_random_stacks():
    rnd = random.Random(7)
    for _ in range(300):
        draw = []
        for _ in range(rnd.randint(0, 4)):
            kind = rnd.choice(["canon", "lexicon", "lm", "llm", "raw"])
            arg = {"canon": lambda: rnd.choice(["lower", ["strip", "lower"]]),
                   "lexicon": lambda: (random_words(rnd, 6, "abAB"), rnd.choice([0.5, 0.8])),
                   "lm": lambda: rnd.choice([2, 4]),
                   "llm": lambda: rnd.choice([str.upper, lambda s: s[::-1]]),
                   "raw": lambda: rnd.choice(["flag", "correct"])}[kind]()
            draw.append((kind, arg))
        apply = rnd.random() < 0.8
        stop = rnd.choice(["never", "correction", "flag"])
        ours = validation_pipeline(*build_stacks(sv, sk_base, draw), apply_corrections=apply,
                                   **({} if stop == "never" else {"stop_when": getattr(sv, f"stop_on_{stop}")}))
        theirs = ek_validate.validation_pipeline(
            *build_stacks(ek_validate, ek_base, draw), apply_corrections=apply,
            **({} if stop == "never" else {"stop_when": getattr(ek_validate, f"stop_on_{stop}")}))
        values = [random_text(rnd) for _ in range(6)] + random_words(rnd, 4, "abAB") + [None, 12]
        expected = [outcome(theirs(v)) for v in values]
        assert [outcome(ours(v)) for v in values] == expected
        assert [outcome(r) for r in ours.many(values)] == expected


# --------------------------------------------------------------------------------------------
# Column checks against ek
# --------------------------------------------------------------------------------------------


def random_column(rnd: random.Random, n: int) -> list:
    kind = rnd.choice(["benford", "uniform", "ints", "mixed"])
    out = []
    for _ in range(n):
        if kind == "benford":
            out.append(10 ** (rnd.random() * rnd.randint(1, 9)))
        elif kind == "uniform":
            out.append(rnd.uniform(-1e6, 1e6))
        elif kind == "ints":
            out.append(rnd.randint(-5000, 99999))
        else:
            out.append(rnd.choice([0, None, "x", "123.5", float("inf"), float("nan"), True, Decimal("42.1"),
                                   Fraction(7, 3), rnd.uniform(0.01, 1e8), rnd.randint(1, 10 ** 12)]))
    return out


def test_benford_matches_ek():
    rnd = random.Random(8)
    for _ in range(400):
        column = random_column(rnd, rnd.randint(0, 120))
        tol = rnd.choice([0.15, 0.05, 0.3, rnd.random() / 2])
        min_n = rnd.choice([30, 0, 10, 100])
        ours = rows(benford_findings(column, tol=tol, min_n=min_n, field="f", layer="L"))
        try:
            theirs = rows(ek_validate.benford_findings(column, tol=tol, min_n=min_n, field="f", layer="L"))
        except ZeroDivisionError:           # ek with min_n=0 and no usable value; scorekit finds nothing
            theirs = []
        assert ours == theirs


def test_benford_threshold_boundary_matches_ek():
    # tol equal to the largest deviation itself: not flagged by either (flags need worst > tol).
    rnd = random.Random(10)
    for _ in range(100):
        column = [rnd.randint(1, 9) for _ in range(rnd.randint(30, 80))]
        n = len(column)
        worst = max(abs(column.count(d) / n - e) for d, e in BENFORD_EXPECTED.items())
        for tol in (worst, math.nextafter(worst, 0)):
            assert rows(benford_findings(column, tol=tol)) == rows(ek_validate.benford_findings(column, tol=tol))


def test_benford_reads_the_written_first_digit_where_ek_miscounts():
    # Scaling 0.0003 by 10 four times gives 2.9999999999999996: ek counts a 2, scorekit the 3 it was written with.
    column = [0.0003] * 40
    assert "max deviation 0.875" in benford_findings(column)[0].message           # 1 - P(3)
    assert "max deviation 0.824" in ek_validate.benford_findings(column)[0].message    # 1 - P(2)
    tiny = [1e-300, 2e-310, 3e-11, 7e25, 5e-324]
    assert np.array_equal(sv._first_digits(np.array(tiny)), [1, 2, 3, 7, 5])
    assert benford_findings([10 ** 400] * 40) == []     # too large for a float: skipped (ek raises OverflowError)


def test_zscore_matches_ek_to_the_last_bit():
    rnd = random.Random(11)
    checked = 0
    for trial in range(250):
        n = rnd.randint(25, 90)
        if trial % 2:               # MAD = 0: most values equal, a few spread (the mean-deviation fallback)
            column = [100.0] * (n - 8) + [100.0 + rnd.uniform(-1e3, 1e3) * rnd.choice([1e-3, 1, 1e3])
                                           for _ in range(8)]
        else:
            column = [rnd.gauss(100, 10) for _ in range(n)]
            column[rnd.randrange(n)] = rnd.uniform(200, 1e4)
        rnd.shuffle(column)
        column += rnd.choice([[], [None, "x", float("nan"), "12.5", True]])
        for threshold in (3.5, 0.0, 1.0):
            assert rows(zscore_anomaly_findings(column, threshold=threshold, min_n=20)) == \
                rows(ek_validate.zscore_anomaly_findings(column, threshold=threshold, min_n=20))
        # A threshold exactly at one value's |z| separates the last bit of the arithmetic.
        xs = [float(x) for x in column if isinstance(x, float) and math.isfinite(x)]
        s = sorted(xs)
        med = s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2.0
        devs = [abs(x - med) for x in xs]
        d = sorted(devs)
        mad = d[len(d) // 2] if len(d) % 2 else (d[len(d) // 2 - 1] + d[len(d) // 2]) / 2.0
        scale = 0.6745 / mad if mad > 0 else 1 / (1.253314 * (sum(devs) / len(devs)))
        z = abs(scale * (max(xs, key=lambda x: abs(x - med)) - med))
        for threshold in (z, math.nextafter(z, 0), math.nextafter(z, math.inf)):
            ours = rows(zscore_anomaly_findings(column, threshold=threshold, min_n=20))
            assert ours == rows(ek_validate.zscore_anomaly_findings(column, threshold=threshold, min_n=20))
            checked += bool(ours)
    assert checked > 300


def test_column_checks_take_numpy_arrays():
    rnd = np.random.default_rng(0)
    column = np.concatenate([rnd.normal(100, 5, 200), [np.inf, np.nan, 5000.0]])
    assert rows(zscore_anomaly_findings(column)) == rows(zscore_anomaly_findings(column.tolist()))
    assert rows(benford_findings(column)) == rows(ek_validate.benford_findings(column.tolist()))
    ints = np.arange(100, 300)
    assert rows(benford_findings(ints)) == rows(benford_findings(list(range(100, 300))))


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

texts = st.text(alphabet="abcAB é.", max_size=8)


@settings(max_examples=60)
@given(values=st.lists(st.one_of(texts, st.integers(), st.none()), max_size=6),
       vocabulary=st.lists(texts, max_size=6), threshold=st.floats(0, 1), pattern=st.integers(0, 7))
def test_flags_never_change_the_value_and_corrections_carry_suggestions(values, vocabulary, threshold, pattern):
    flag_only = [lexicon_corrector(vocabulary, threshold=2.0), lm_surprisal_validator(len, threshold=3),
                 cross_field_validator(lambda r: False, message="never")]
    pipe = validation_pipeline(*[layer for k, layer in enumerate(flag_only) if pattern >> k & 1])
    fixing = validation_pipeline(canonicalize_corrector("lower"), lexicon_corrector(vocabulary, threshold=threshold),
                                 llm_corrector(str.strip))
    snapshot = copy.deepcopy(values)
    for v, r in zip(values, pipe.many(values)):
        assert r.value is v and not r.corrected
        assert all(f.severity is Severity.FLAG and f.suggestion is None for f in r.findings)
    results = fixing.many(values)
    assert results == [fixing(v) for v in values]
    for v, r in zip(values, results):
        assert r.original is v
        assert all(f.suggestion is not None for f in r.findings if f.severity is Severity.CORRECT)
        corrections = [f.suggestion for f in r.findings if f.severity is Severity.CORRECT]
        assert r.value == (corrections[-1] if corrections else v)
    assert values == snapshot


@settings(max_examples=40)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 6, 10 ** 6)),
                max_size=80))
def test_column_checks_never_mutate_and_flag_only(column):
    snapshot = list(column)
    for found in (benford_findings(column, min_n=5), zscore_anomaly_findings(column, min_n=5)):
        assert all(f.severity is Severity.FLAG and f.suggestion is None for f in found)
    assert repr(column) == repr(snapshot)
    assert rows(zscore_anomaly_findings(column, min_n=5)) == rows(ek_validate.zscore_anomaly_findings(column, min_n=5))


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


def test_bad_lexicon_arguments():
    with pytest.raises(InvalidTypeError, match="vocabulary must be an iterable of str"):
        lexicon_corrector("France")
    with pytest.raises(InvalidTypeError, match="vocabulary"):
        lexicon_corrector(None)
    with pytest.raises(InvalidTypeError, match="vocabulary entry 1 must be a str"):
        lexicon_corrector(["France", 3])
    with pytest.raises(InvalidValueError, match="threshold must not be NaN"):
        lexicon_corrector(["France"], threshold=float("nan"))
    with pytest.raises(InvalidTypeError, match="threshold must be a real number"):
        lexicon_corrector(["France"], threshold="0.8")
    with pytest.raises(InvalidTypeError, match="scorer must be a callable"):
        lexicon_corrector(["France"], scorer="ratio")
    with pytest.raises(InvalidTypeError, match="flag_unmatched must be a bool"):
        lexicon_corrector(["France"], flag_unmatched="no")
    with pytest.raises(InvalidValueError, match="threads"):
        lexicon_corrector(["France"], threads=-1)
    with pytest.raises(InvalidTypeError, match=r"values\[1\] must be a str"):
        LexiconCorrector(["France"]).nearest(["a", 2])
    with pytest.raises(InvalidValueError, match="scorer gave no usable score for 'x'"):
        lexicon_corrector(["a", "b"], scorer=lambda a, b, **kw: float("nan"))("x")


def test_bad_pipeline_and_layer_output():
    with pytest.raises(InvalidTypeError, match=r"layers\[1\] must be callable"):
        validation_pipeline(lexicon_corrector(["a"]), 3)
    with pytest.raises(InvalidTypeError, match="stop_when must be a callable"):
        validation_pipeline(stop_when=True)
    with pytest.raises(InvalidTypeError, match="apply_corrections must be a bool"):
        validation_pipeline(apply_corrections=stop_on_flag)
    with pytest.raises(InvalidTypeError, match="layers must be a sequence"):
        validate("x", layers=lexicon_corrector(["a"]).layer)
    def returns_none(value, *, spec=None):
        return None

    returns_none.layer = "none"
    with pytest.raises(InvalidTypeError, match="layer 'none' must return an iterable of Finding"):
        validation_pipeline(returns_none)("x")
    with pytest.raises(InvalidTypeError, match="must yield scorekit.base.Finding objects"):
        validation_pipeline(lambda value, *, spec=None: ["a finding"])("x")
    with pytest.raises(InvalidTypeError, match="values must be an iterable"):
        validation_pipeline().many("abc")


def test_bad_arguments_of_the_other_factories():
    with pytest.raises(KeyError, match="nope"):
        canonicalize_corrector("nope")
    with pytest.raises(InvalidTypeError, match="normalize must return a str"):
        canonicalize_corrector(lambda s: None)("x")
    with pytest.raises(InvalidTypeError, match="keys must be a sequence of keys"):
        ordering_validator("start")
    with pytest.raises(InvalidTypeError, match="record must be a mapping"):
        ordering_validator(["a", "b"])(None)
    with pytest.raises(InvalidTypeError, match="fields must be a sequence"):
        cross_field_validator(bool, message="m", fields="ab")
    with pytest.raises(InvalidTypeError, match="predicate must be a callable"):
        cross_field_validator(None, message="m")
    with pytest.raises(ZeroDivisionError):                 # only partial-record errors are swallowed
        cross_field_validator(lambda r: 1 / 0, message="m")({})
    with pytest.raises(InvalidValueError, match="threshold must not be NaN"):
        lm_surprisal_validator(len, threshold=float("nan"))
    with pytest.raises(InvalidValueError, match="scorer returned NaN for 'abc'"):
        lm_surprisal_validator(lambda s: float("nan"), threshold=1)("abc")
    with pytest.raises(InvalidTypeError, match="scorer must return a number, got 'x'"):
        lm_surprisal_validator(lambda s: "x", threshold=1)("abc")
    with pytest.raises(InvalidTypeError, match="correct_fn must return a str or None"):
        llm_corrector(lambda s: 5, only_flagged=False)("abc")
    with pytest.raises(InvalidTypeError, match="correct_fn must be a callable"):
        llm_corrector("gpt")


@pytest.mark.parametrize("check", [benford_findings, zscore_anomaly_findings])
def test_bad_column_arguments(check):
    with pytest.raises(InvalidTypeError, match="numbers must be an iterable of numbers"):
        check("12345")
    with pytest.raises(InvalidTypeError, match="numbers must be an iterable"):
        check(None)
    with pytest.raises(InvalidValueError, match="one-dimensional"):
        check(np.ones((40, 2)))
    with pytest.raises(InvalidTypeError, match="min_n must be an int"):
        check([1, 2], min_n=2.5)
    with pytest.raises(InvalidValueError, match="min_n must be >= 0"):
        check([1, 2], min_n=-1)
    bad_param = {"tol": float("nan")} if check is benford_findings else {"threshold": float("nan")}
    with pytest.raises(InvalidValueError, match="must not be NaN"):
        check([1.0] * 40, **bad_param)
    # NaN and infinite values in the data are skipped, not errors.
    assert check([float("nan")] * 40) == [] and check([1.0] * 20 + [float("inf")] * 20, min_n=30) == []
    assert check([], min_n=0) == []
