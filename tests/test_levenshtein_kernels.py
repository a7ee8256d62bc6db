"""Levenshtein kernel family, on both backends (the ``backend`` fixture of conftest.py).

Oracles: rapidfuzz (distance, editops, opcodes), jiwer (character and word counts), Python's
``str.split()`` (word boundaries) and a plain O(n·m) DP of docs/decisions.md#schwa-forgiving-distance written below.
"""

from __future__ import annotations

import random
import sys

import jiwer
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import LCSseq, Levenshtein

from scorekit._kernels import levenshtein as lev
from scorekit._kernels import levenshtein_numba

ALPHABETS = {
    "latin": "abcdefghij ",
    "armenian": "աբգդեզէըթժիլ Ըև",
    "cjk": "的一是不了人我在有他",
    "combining": "eaou\u0301\u0308\u0302\u0327 ",
    "emoji": "😀😃🎉👍🏽\u200d❤x",
    "mixed": "aբ的😀\u0301 Ը",
}
SCHWA = "ըԸ"
SCHWA_ALPHABET = "աըԸ- b"
# Hypothesis runs whole examples inside one backend context; the fixture needs no reset between them.
PROPERTY_SETTINGS = settings(max_examples=150, deadline=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture])


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------

def pack(strs):
    """Python strings -> (uint32 code points, int64 offsets)."""
    values = np.frombuffer("".join(strs).encode("utf-32-le"), dtype=np.uint32)
    offsets = np.zeros(len(strs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in strs], out=offsets[1:])
    return values, offsets


def pack_ints(lists):
    values = np.array([v for xs in lists for v in xs], dtype=np.int64)
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(xs) for xs in lists], out=offsets[1:])
    return values, offsets


def code_points(s):
    return np.frombuffer(s.encode("utf-32-le"), dtype=np.uint32)


def mutate(rng, text, alphabet, edits):
    """``edits`` random insertions, deletions and substitutions of a string (or a list of words)."""
    chars = list(text)
    for _ in range(edits):
        op = rng.randrange(3)
        pos = rng.randrange(len(chars) + 1)
        if op == 0:
            chars.insert(pos, rng.choice(alphabet))
        elif pos < len(chars):
            if op == 1:
                del chars[pos]
            else:
                chars[pos] = rng.choice(alphabet)
    return "".join(chars) if isinstance(text, str) else chars


def random_pairs(rng, count, max_len):
    """Mix of related pairs (few edits) and unrelated pairs, including empty strings."""
    alphabets = tuple(ALPHABETS.values())
    pairs = []
    for k in range(count):
        alphabet = rng.choice(alphabets)
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len)))
        if k % 3 == 0:
            b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, max_len)))
        else:
            b = mutate(rng, a, alphabet, rng.randint(0, max(1, len(a) // 4)))
        pairs.append((a, b) if k % 2 else (b, a))
    return pairs


def rapidfuzz_counts(ref, hyp):
    """(hits, substitutions, deletions, insertions) of rapidfuzz's opcodes."""
    counts = [0, 0, 0, 0]
    for op in Levenshtein.opcodes(ref, hyp):
        if op.tag == "equal":
            counts[0] += op.src_end - op.src_start
        elif op.tag == "replace":
            counts[1] += op.src_end - op.src_start
        elif op.tag == "delete":
            counts[2] += op.src_end - op.src_start
        else:
            counts[3] += op.dest_end - op.dest_start
    return counts


RAPIDFUZZ_OP = {"replace": lev.OP_SUBSTITUTE, "delete": lev.OP_DELETE, "insert": lev.OP_INSERT}


def rapidfuzz_editops(ref, hyp):
    return [[RAPIDFUZZ_OP[e.tag], e.src_pos, e.dest_pos] for e in Levenshtein.editops(ref, hyp)]


def distances(pairs, threads=0):
    return lev.distance_batch(*pack([a for a, _ in pairs]), *pack([b for _, b in pairs]), threads=threads)


def alignments(pairs, threads=0):
    return lev.alignment_batch(*pack([a for a, _ in pairs]), *pack([b for _, b in pairs]), threads=threads)


def word_alignments(pairs, threads=0):
    return lev.word_alignment_batch(*pack([a for a, _ in pairs]), *pack([b for _, b in pairs]), threads=threads)


def schwa_distances(cases, threads=0):
    """``cases``: (gt, pred, gt_joins, pred_joins) tuples."""
    return lev.schwa_distance_batch(
        *pack([c[0] for c in cases]), *pack([c[1] for c in cases]),
        *pack_ints([sorted(c[2]) for c in cases]), *pack_ints([sorted(c[3]) for c in cases]),
        code_points(SCHWA), threads=threads,
    )


def schwa_reference(g, p, jg, jp):
    """The schwa-forgiving distance, literally: full O(n·m) table."""
    n, m = len(g), len(p)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 and j == 0:
                continue
            best = sys.maxsize
            if i > 0:
                free = g[i - 1] in SCHWA and (i - 1 in jg or i in jg or j in jp)
                best = min(best, d[i - 1][j] + (0 if free else 1))
            if j > 0:
                free = p[j - 1] in SCHWA and (j - 1 in jp or j in jp or i in jg)
                best = min(best, d[i][j - 1] + (0 if free else 1))
            if i > 0 and j > 0:
                best = min(best, d[i - 1][j - 1] + (0 if g[i - 1] == p[j - 1] else 1))
            d[i][j] = best
    return d[n][m]


def random_schwa_case(rng, max_len=40):
    g = "".join(rng.choice(SCHWA_ALPHABET) for _ in range(rng.randint(0, max_len)))
    p = mutate(rng, g, SCHWA_ALPHABET, rng.randint(0, 8)) if rng.random() < 0.7 else \
        "".join(rng.choice(SCHWA_ALPHABET) for _ in range(rng.randint(0, max_len)))
    jg = {k for k in range(len(g) + 1) if rng.random() < 0.15}
    jp = {k for k in range(len(p) + 1) if rng.random() < 0.15}
    return g, p, jg, jp


# --------------------------------------------------------------------------------------------------
# longest common subsequence
# --------------------------------------------------------------------------------------------------

def test_lcs_length_matches_rapidfuzz(backend):
    """Short and long pairs (one block and many, block edges), low and wide alphabets (dense and
    sparse masks), large uint32 values, empty sides and affixes."""
    rng = random.Random(32)
    pairs = (random_pairs(rng, 2000, 30) + random_pairs(rng, 300, 300) + random_pairs(rng, 20, 3000)
             + [("", ""), ("abc", ""), ("", "xyz"), ("a" * 64, "a" * 65), ("ab" * 100, "ba" * 100)])
    for alphabet in ("ab", ALPHABETS["mixed"]):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(5_000, 6_000)))
        pairs += [(a, mutate(rng, a, alphabet, 2000)), (a[:3000], a)]
    # 40,000 symbols of 20,000 kinds: a dense mask table would take ~100 MB, so the masks are sparse.
    wide = "".join(chr(0x4E00 + rng.randrange(20_000)) for _ in range(40_000))
    pairs.append((wide, "".join(chr(0x4E00 + rng.randrange(20_000)) for _ in range(30_000))))
    got = lev.lcs_length_batch(*pack([a for a, _ in pairs]), *pack([b for _, b in pairs]))
    assert got.tolist() == [LCSseq.similarity(a, b) for a, b in pairs]
    ids = np.array([0, 2**32 - 1, 5, 2**31, 0, 7] * 30, dtype=np.uint32)
    other = np.array([2**32 - 1, 0, 7, 5, 2**31, 1] * 25, dtype=np.uint32)
    got = lev.lcs_length_batch(ids, np.array([0, 180]), other, np.array([0, 150]))
    assert got.tolist() == [LCSseq.similarity(ids.tolist(), other.tolist())]


# --------------------------------------------------------------------------------------------------
# distance
# --------------------------------------------------------------------------------------------------

def test_distance_known_values(backend):
    pairs = [("kitten", "sitting"), ("", ""), ("", "աբ"), ("աբգ", ""), ("flaw", "lawn"), ("a" * 64, "b" * 64),
             ("a" * 65, "a" * 64 + "b"), ("x" * 300, "y" * 10)]
    assert distances(pairs).tolist() == [3, 0, 2, 3, 2, 64, 1, 300]


def test_distance_random_pairs_match_rapidfuzz(backend):
    rng = random.Random(1)
    pairs = random_pairs(rng, 3000, 30) + random_pairs(rng, 600, 200) + random_pairs(rng, 40, 1500)
    assert distances(pairs).tolist() == [Levenshtein.distance(a, b) for a, b in pairs]


def test_distance_long_strings_match_rapidfuzz(backend):
    rng = random.Random(2)
    pairs = []
    for alphabet in ("ab", "abcdefgh", ALPHABETS["armenian"], ALPHABETS["mixed"]):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(10_000, 12_000)))
        pairs.append((a, mutate(rng, a, alphabet, 50)))
        pairs.append((a, mutate(rng, a, alphabet, 3000)))
        pairs.append((a, "".join(rng.choice(alphabet) for _ in range(rng.randint(100, 11_000)))))
    assert distances(pairs).tolist() == [Levenshtein.distance(a, b) for a, b in pairs]


def test_distance_large_code_points_and_token_ids(backend):
    # values are any uint32 (token ids), not only code points
    a = np.array([0, 1, 2**32 - 1, 0x10FFFF, 2**31, 7] * 20, dtype=np.uint32)
    b = np.array([0, 2**32 - 1, 1, 0x10FFFF, 2**31 + 1, 7] * 20, dtype=np.uint32)
    offsets = np.array([0, 120], dtype=np.int64)
    expected = Levenshtein.distance(a.tolist(), b.tolist())
    assert lev.distance_batch(a, offsets, b, offsets).tolist() == [expected]
    assert lev.distance_batch(a[:30], np.array([0, 30]), b[:30], np.array([0, 30])).tolist() == [
        Levenshtein.distance(a[:30].tolist(), b[:30].tolist())]


def test_results_do_not_depend_on_thread_count(backend):
    rng = random.Random(3)
    pairs = random_pairs(rng, 500, 120)
    cases = [random_schwa_case(rng) for _ in range(300)]
    for threads in (1, 2, 3, 0):
        assert distances(pairs, threads).tolist() == distances(pairs, 1).tolist()
        assert alignments(pairs, threads).tolist() == alignments(pairs, 1).tolist()
        assert word_alignments(pairs, threads).tolist() == word_alignments(pairs, 1).tolist()
        assert schwa_distances(cases, threads).tolist() == schwa_distances(cases, 1).tolist()


def test_empty_batch(backend):
    empty = pack([])
    assert lev.distance_batch(*empty, *empty).shape == (0,)
    assert lev.alignment_batch(*empty, *empty).shape == (0, 4)
    assert lev.word_alignment_batch(*empty, *empty).shape == (0, 6)


def test_bad_arguments_are_rejected(backend):
    values, offsets = pack(["abc"])
    with pytest.raises(TypeError):
        lev.distance_batch(values.astype(np.int64), offsets, values, offsets)
    for bad_offsets in ([0, 4], [1, 3], [0, 2], [0, 3, 2], []):  # Arrow-style: 0 .. len(values)
        with pytest.raises(ValueError):
            lev.distance_batch(values, np.array(bad_offsets, dtype=np.int64), values, offsets)
    with pytest.raises(ValueError):
        lev.distance_batch(values, offsets, *pack(["a", "b"]))


# --------------------------------------------------------------------------------------------------
# alignment
# --------------------------------------------------------------------------------------------------

def test_editops_known_vector(backend):
    ops = lev.editops(code_points("qabxcd"), code_points("abycdf"))
    assert ops.dtype == np.int64
    assert ops.tolist() == [[lev.OP_DELETE, 0, 0], [lev.OP_SUBSTITUTE, 3, 2], [lev.OP_INSERT, 6, 5]]
    assert lev.editops(code_points(""), code_points("")).shape == (0, 3)


def test_alignment_counts_match_jiwer_characters(backend):
    rng = random.Random(4)
    pairs = [(a.strip(), b.strip()) for a, b in random_pairs(rng, 800, 60)]
    pairs = [(a, b) for a, b in pairs if a]  # jiwer needs a non-empty reference
    got = alignments(pairs)
    for (ref, hyp), row in zip(pairs, got.tolist()):
        out = jiwer.process_characters(ref, hyp)
        assert row == [out.hits, out.substitutions, out.deletions, out.insertions], (ref, hyp)


def test_alignment_counts_and_editops_match_rapidfuzz(backend):
    rng = random.Random(5)
    pairs = random_pairs(rng, 1500, 40) + random_pairs(rng, 300, 300) + [("", "abc"), ("abc", ""), ("", "")]
    got = alignments(pairs).tolist()
    for (ref, hyp), row in zip(pairs, got):
        assert row == rapidfuzz_counts(ref, hyp), (ref, hyp)
    for ref, hyp in pairs[::10]:
        assert lev.editops(code_points(ref), code_points(hyp)).tolist() == rapidfuzz_editops(ref, hyp), (ref, hyp)


def long_alignment_pairs():
    """2,000-5,000 characters over small alphabets, small and large distances: these exercise the
    Hirschberg splitting (and the cases where it is not applied) of rapidfuzz's editops."""
    rng = random.Random(6)
    pairs = []
    for k in range(24):
        alphabet = ("ab", "abcd", "abcdefgh", ALPHABETS["armenian"])[k % 4]
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(2000, 5000)))
        edits = (5, 40, 300, 1500, None)[k % 5]
        b = mutate(rng, a, alphabet, edits) if edits else \
            "".join(rng.choice(alphabet) for _ in range(rng.randint(2000, 5000)))
        pairs.append((a, b))
    # the best split row is 0 (everything left of the middle column is inserted)
    pairs.append(("b" * 3000 + "d", "a" * 3000 + "b" * 3000 + "e"))
    pairs.append(("a" * 3000 + "b" * 3000 + "e", "b" * 3000 + "d"))
    # long common affixes around a large problem, and a long ref against a short hyp
    pairs.append(("x" * 500 + pairs[3][0] + "y" * 500, "x" * 500 + pairs[3][1] + "y" * 500))
    pairs.append((pairs[0][0] * 3, "ba" * 4))
    return pairs


def test_long_alignments_match_rapidfuzz_editops(backend):
    pairs = long_alignment_pairs()
    for ref, hyp in pairs:
        assert lev.editops(code_points(ref), code_points(hyp)).tolist() == rapidfuzz_editops(ref, hyp)
    assert alignments(pairs).tolist() == [rapidfuzz_counts(ref, hyp) for ref, hyp in pairs]


def page_pairs_with_ties(rng, count):
    """Page-length pairs as OCR makes them: 2,000-20,000 characters (log-uniform, so most are short
    and a few long), 1-10 % errors, Latin or Armenian text broken by stretches over two or three
    letters (runs and alternations, where many optimal scripts tie and only rapidfuzz's rule and
    split points pick one), plus a few very unequal lengths (dropped or doubled lines)."""
    pairs = []
    for k in range(count):
        length = int(2_000 * 10 ** rng.uniform(0, 1))
        alphabet = (ALPHABETS["latin"], ALPHABETS["armenian"])[k % 2]
        small = alphabet[:3]
        chunks, total = [], 0
        while total < length:
            if rng.random() < 0.1:
                x, y = rng.choice(small), rng.choice(small)
                chunk = "".join((x, y)[i % 2] if rng.random() < 0.5 else x for i in range(rng.randint(5, 80)))
            else:
                chunk = "".join(rng.choice(alphabet) for _ in range(rng.randint(20, 120)))
            chunks.append(chunk)
            total += len(chunk)
        ref = "".join(chunks)[:length]
        hyp = mutate(rng, ref, small if k % 3 == 0 else alphabet, int(len(ref) * rng.uniform(0.01, 0.10)))
        if k % 25 == 7:
            hyp = hyp[: len(hyp) // 2]  # half the page missing
        elif k % 25 == 13:
            hyp = hyp + hyp[len(hyp) // 3:]  # lines repeated
        pairs.append((ref, hyp))
    return pairs


def test_page_length_alignments_match_rapidfuzz_editops(backend):
    """Page-length, low-error, tie-prone pairs: the counts of every pair and the edit operations
    of every fifth equal rapidfuzz's ``editops`` (whose Hirschberg splits decide among ties), on
    one thread and on several."""
    rng = random.Random(12)
    pairs = page_pairs_with_ties(rng, 200 if backend == "rust" else 40)
    expected = [rapidfuzz_counts(ref, hyp) for ref, hyp in pairs]
    assert alignments(pairs, threads=1).tolist() == expected
    assert alignments(pairs, threads=2).tolist() == expected
    for ref, hyp in pairs[::5]:
        assert lev.editops(code_points(ref), code_points(hyp)).tolist() == rapidfuzz_editops(ref, hyp)


# --------------------------------------------------------------------------------------------------
# words
# --------------------------------------------------------------------------------------------------

def test_whitespace_constant_is_python_isspace(backend):
    assert list(levenshtein_numba.WHITESPACE_CODE_POINTS) == [c for c in range(0x110000) if chr(c).isspace()]


def test_word_split_matches_str_split_for_every_code_point(backend):
    # "a<c>b" for every code point c (surrogates included, as plain numbers): one word, or two when
    # c is whitespace for str.split().
    n = 0x110000
    cps = np.arange(n, dtype=np.uint32)
    values = np.empty(3 * n, dtype=np.uint32)
    values[0::3] = ord("a")
    values[1::3] = cps
    values[2::3] = ord("b")
    offsets = np.arange(0, 3 * n + 1, 3, dtype=np.int64)
    got = lev.word_alignment_batch(values, offsets, values, offsets)
    expected = np.array([2 if chr(c).isspace() else 1 for c in range(n)])
    assert np.array_equal(got[:, 4], expected)
    assert np.array_equal(got[:, 0], expected)  # each text against itself: every word is a hit


def test_word_alignment_matches_jiwer(backend):
    rng = random.Random(7)
    vocab = ["բառ", "նոր", "a", "ab", "b", "的", "😀", "e\u0301", "é", "x1"]
    spaces = [" ", "  ", "\t", "\n", "\u00a0", "\u3000", "\u2028", " \u200a "]
    pairs, jiwer_pairs = [], []
    for _ in range(600):
        ref_words = [rng.choice(vocab) for _ in range(rng.randint(1, 25))]
        hyp_words = [rng.choice(vocab) for _ in range(rng.randint(0, 25))] if rng.random() < 0.3 else \
            mutate(rng, ref_words, vocab, rng.randint(0, 6))

        def join(words):
            text = "".join(w + rng.choice(spaces) for w in words)
            return rng.choice(["", " ", "\n"]) + text

        ref, hyp = join(ref_words), join(hyp_words)
        pairs.append((ref, hyp))
        jiwer_pairs.append((" ".join(ref.split()), " ".join(hyp.split())))
    got = word_alignments(pairs).tolist()
    for (ref, hyp), (jref, jhyp), row in zip(pairs, jiwer_pairs, got):
        out = jiwer.process_words(jref, jhyp)
        assert row == [out.hits, out.substitutions, out.deletions, out.insertions,
                       len(ref.split()), len(hyp.split())], (ref, hyp)


def test_word_alignment_long_sequences_match_rapidfuzz(backend):
    rng = random.Random(8)
    vocab = [f"w{k}" for k in range(5)]
    pairs = []
    for edits in (10, 400, None):
        ref = [rng.choice(vocab) for _ in range(3000)]
        hyp = mutate(rng, ref, vocab, edits) if edits else [rng.choice(vocab) for _ in range(2500)]
        pairs.append((ref, hyp))
    got = word_alignments([(" ".join(r), " ".join(h)) for r, h in pairs]).tolist()
    assert got == [rapidfuzz_counts(r, h) + [len(r), len(h)] for r, h in pairs]


def test_word_alignment_edge_cases(backend):
    pairs = [("", ""), ("   ", "a"), ("a b", ""), ("a  b\t", " a b "), ("a b", "a\u200bb")]
    assert word_alignments(pairs).tolist() == [
        [0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 0, 1], [0, 0, 2, 0, 2, 0], [2, 0, 0, 0, 2, 2], [0, 1, 1, 0, 2, 1],
    ]


# --------------------------------------------------------------------------------------------------
# schwa-forgiving distance
# --------------------------------------------------------------------------------------------------

def test_schwa_spec_vectors(backend):
    cases = [("մըտնել", "մտնել", {2}, set()), ("մըտնել", "մտնել", set(), set()),
             ("մըտնել", "մտնել", {1}, set()), ("մտնել", "մըտնել", set(), {2}),
             ("մտնել", "մըտնել", {1}, set()), ("գրաըկան", "գրական", set(), {3}),
             ("գրաական", "գրական", set(), {3}), ("", "", set(), set()), ("ը", "", {0}, set())]
    assert schwa_distances(cases).tolist() == [0, 1, 0, 0, 0, 0, 1, 0, 0]


def test_schwa_distance_matches_reference_dp(backend):
    rng = random.Random(9)
    cases = [random_schwa_case(rng) for _ in range(2500)]
    cases += [random_schwa_case(rng, 150) for _ in range(15)]
    assert schwa_distances(cases).tolist() == [schwa_reference(*c) for c in cases]


def test_schwa_distance_properties(backend):
    rng = random.Random(10)
    cases = [random_schwa_case(rng) for _ in range(3000)]
    forgiving = schwa_distances(cases)
    swapped = schwa_distances([(p, g, jp, jg) for g, p, jg, jp in cases])
    no_joins = schwa_distances([(g, p, set(), set()) for g, p, _, _ in cases])
    strict = np.array([Levenshtein.distance(g, p) for g, p, _, _ in cases])
    assert np.array_equal(forgiving, swapped)
    assert np.all(forgiving <= strict)
    assert np.array_equal(no_joins, strict)
    assert np.any(forgiving < strict)


def test_schwa_long_texts_equal_strict_without_joins(backend):
    rng = random.Random(11)
    a = "".join(rng.choice(SCHWA_ALPHABET + "բգդ") for _ in range(5000))
    cases = [(a, mutate(rng, a, SCHWA_ALPHABET, 200), set(), set())]
    assert schwa_distances(cases).tolist() == [Levenshtein.distance(cases[0][0], cases[0][1])]


def test_schwa_join_out_of_range_is_rejected(backend):
    with pytest.raises(ValueError):
        schwa_distances([("աը", "ա", {3}, set())])


# --------------------------------------------------------------------------------------------------
# properties (hypothesis)
# --------------------------------------------------------------------------------------------------

texts = st.text(alphabet="abcաըԸ的😀\u0301 ", max_size=90)


@PROPERTY_SETTINGS
@given(a=texts, b=texts, c=texts)
def test_distance_metric_properties(backend, a, b, c):
    d = distances([(a, a), (a, b), (b, a), (b, c), (a, c)]).tolist()
    assert d[0] == 0
    assert d[1] == d[2] == Levenshtein.distance(a, b)
    assert d[4] <= d[1] + d[3]


@PROPERTY_SETTINGS
@given(ref=texts, hyp=texts)
def test_alignment_count_identities(backend, ref, hyp):
    (hits, subs, dels, ins), (self_hits, *self_edits) = alignments([(ref, hyp), (ref, ref)]).tolist()
    assert subs + dels + hits == len(ref)
    assert subs + ins + hits == len(hyp)
    assert subs + dels + ins == Levenshtein.distance(ref, hyp)
    assert self_hits == len(ref) and self_edits == [0, 0, 0]
    words = word_alignments([(ref, hyp)])[0].tolist()
    assert words[0] + words[1] + words[2] == words[4] == len(ref.split())
    assert words[0] + words[1] + words[3] == words[5] == len(hyp.split())
