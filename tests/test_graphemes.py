"""``unit="grapheme"``: CER over extended grapheme clusters (docs/decisions.md#grapheme-clusters).

Hand-computed vectors, the compiled reader (``_core.GraphemePacker``) against its Python twin
(``regex``'s ``\\X``) on thousands of random strings from combining-heavy alphabets, exact corpus
figures, equality with code-point CER on text without multi-code-point clusters, errors, the
per-chunk interning of ``evaluate``, the OCR pages text metrics and the command line.
"""

from __future__ import annotations

import json
import random
import sys

import numpy as np
import pytest
import scorekit as ek
from scorekit import _graphemes, _kernels, batch, facade, text
from scorekit._graphemes import FIRST_CLUSTER_ID, PythonGraphemePacker, check_unit, grapheme_packer
from scorekit._kernels import _core
from scorekit._kernels import levenshtein as lev
from scorekit._packing import pack_texts
from scorekit.cli import main
from scorekit.errors import InvalidTypeError, InvalidValueError
from scorekit.ocr_pages.evaluation.text_metrics import compute_text_metrics, compute_text_metrics_batch
from scorekit.registry import MissingExtraError

needs_core = pytest.mark.skipif(_core is None, reason="needs the compiled core")

#: Both packers (the compiled one only when the core is built).
PACKERS = [pytest.param(PythonGraphemePacker, id="python")]
if _core is not None:
    PACKERS.insert(0, pytest.param(_core.GraphemePacker, id="compiled"))

FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"  # man ZWJ woman ZWJ girl: 5 code points, 1 cluster
HAN_GUL_JAMO = "\u1112\u1161\u11ab\u1100\u1173\u11af"   # 한글 spelled in conjoining jamo: 6 code points

# (pred, ref, code-point counts, grapheme counts); counts are (ref_len, S, D, I).
VECTORS = [
    # न म स्ते: the conjunct with its vowel sign is one letter; dropping the sign substitutes it.
    ("नमस्त", "नमस्ते", (6, 0, 1, 0), (3, 1, 0, 0)),
    # Hangul jamo: 글 (ᄀ ᅳ ᆯ) read as 그 (ᄀ ᅳ): one letter substituted, not one jamo deleted.
    ("\u1112\u1161\u11ab\u1100\u1173", HAN_GUL_JAMO, (6, 0, 1, 0), (2, 1, 0, 0)),
    # Flags are pairs of regional indicators: Armenia read as Argentina is one wrong symbol.
    ("\U0001F1E6\U0001F1F7", "\U0001F1E6\U0001F1F2", (2, 1, 0, 0), (1, 1, 0, 0)),
    ("\U0001F1E6\U0001F1F2\U0001F1EB", "\U0001F1E6\U0001F1F2\U0001F1EB\U0001F1F7", (4, 0, 1, 0), (2, 1, 0, 0)),
    # A ZWJ family missing its last member: one substitution over clusters, two deletions over code points.
    ("hi\U0001F468\u200d\U0001F469", "hi" + FAMILY, (7, 0, 2, 0), (3, 1, 0, 0)),
    # e + combining acute against precomposed é: different clusters (NFC is a separate normaliser).
    ("cafe\u0301", "caf\u00e9", (4, 1, 0, 1), (4, 1, 0, 0)),
    # CR LF is one cluster.
    ("a\nb", "a\r\nb", (4, 0, 1, 0), (3, 1, 0, 0)),
    # Armenian with a combining mark dropped by the OCR: one letter substituted.
    ("բարև", "բա\u0308րև", (5, 0, 1, 0), (4, 1, 0, 0)),
    # Vietnamese in decomposed form (ế = e + circumflex + acute): two letters wrong, not three marks.
    ("Tieng Viet", "Tie\u0302\u0301ng Vie\u0323\u0302t", (14, 0, 4, 0), (10, 2, 0, 0)),
    # A skin-tone modifier belongs to its emoji.
    ("\U0001F44D", "\U0001F44D\U0001F3FD", (2, 0, 1, 0), (1, 1, 0, 0)),
    ("", "नमस्ते", (6, 0, 6, 0), (3, 0, 3, 0)),
    ("नमस्ते", "", (0, 0, 0, 6), (0, 0, 0, 3)),
    ("", "", (0, 0, 0, 0), (0, 0, 0, 0)),
]


def _counts(score) -> tuple[int, int, int, int]:
    d = score.detail
    return (d["ref_len"], d.get("substitutions", 0), d.get("deletions", 0), d.get("insertions", d["edits"]))


# --------------------------------------------------------------------------- hand-computed vectors

@pytest.mark.parametrize("pred, ref, by_char, by_grapheme", VECTORS)
def test_hand_computed_vectors(backend, pred, ref, by_char, by_grapheme):
    assert _counts(ek.score(pred, ref, metric="cer")) == by_char
    assert _counts(ek.score(pred, ref, metric="cer", unit="grapheme")) == by_grapheme
    res = batch.cer([pred], [ref], unit="grapheme")
    assert (int(res.ref_len[0]), int(res.substitutions[0]), int(res.deletions[0]), int(res.insertions[0])) == by_grapheme
    assert batch.levenshtein([pred], [ref], unit="grapheme").tolist() == [sum(by_grapheme[1:])]
    report = ek.evaluate([(pred, ref)], metric="cer", unit="grapheme")
    assert (report.detail["ref_len"], report.detail["edits"]) == (by_grapheme[0], sum(by_grapheme[1:]))


def test_namaste_values(backend):
    s = ek.score("नमस्त", "नमस्ते", unit="grapheme")
    assert (s.value, s.detail["hits"]) == (1 / 3, 2)
    assert ek.score("नमस्त", "नमस्ते").value == 1 / 6


def test_nfc_is_a_separate_normaliser(backend):
    assert ek.score("cafe\u0301", "caf\u00e9", unit="grapheme").value == 0.25
    assert ek.score("cafe\u0301", "caf\u00e9", unit="grapheme", normalize="nfc").value == 0.0


def test_editops_positions_are_cluster_indices():
    assert batch.editops("नमस्ते", "नमस्त", unit="grapheme") == [("replace", 2, 2)]
    assert batch.editops("a" + FAMILY + "b", "ab", unit="grapheme") == [("delete", 1, 1)]
    assert batch.editops("a" + FAMILY + "b", "ab") == [("delete", k, 1) for k in range(1, 6)]


@pytest.mark.parametrize("packer", PACKERS)
def test_ids(packer):
    p = packer()
    values, offsets = p.pack_texts(["नमस्ते", "abc", "a\r\n", FAMILY, "नमस्ते"], "t")
    assert offsets.tolist() == [0, 3, 6, 8, 9, 12]
    v = values.tolist()
    assert v[:2] == [ord("न"), ord("म")] and v[2] >= FIRST_CLUSTER_ID
    assert v[3:6] == [97, 98, 99]
    assert v[6] == 97 and v[7] >= FIRST_CLUSTER_ID
    assert v[9:12] == v[0:3]                    # equal clusters, equal ids, across items
    assert p.distinct_clusters == 3             # स्ते, CR LF, the family
    assert values.dtype == np.uint32 and offsets.dtype == np.int64


@needs_core
def test_virama_without_a_consonant_follows_uax29():
    """GB9c joins a linker to the next consonant only after a consonant: a virama an OCR engine left
    at the start of a word is a cluster of its own. (regex's ``\\X`` joins it: see decisions.md.)"""
    assert _core.GraphemePacker().pack_texts(["\u094dक", "क\u094dत"], "t")[1].tolist() == [0, 2, 3]


# --------------------------------------------------------------------------- compiled vs Python twin

DEVANAGARI_CONSONANTS = "कखगचजटडतदनपबमयरलवसह"
DEVANAGARI_SIGNS = "ािीुूेैोौृ"


def _devanagari_syllable(rng: random.Random) -> str:
    """A syllable where every virama follows a consonant (see decisions.md for the other case)."""
    if rng.random() < 0.15:
        return rng.choice("अआइउए०१२ ।")
    s = rng.choice(DEVANAGARI_CONSONANTS) + ("\u093c" if rng.random() < 0.1 else "")
    for _ in range(rng.choice((0, 0, 1, 2))):
        s += "\u094d" + rng.choice(DEVANAGARI_CONSONANTS)
    r = rng.random()
    if r < 0.5:
        s += rng.choice(DEVANAGARI_SIGNS)
    elif r < 0.6:
        s += "\u094d"  # a half form (at a word end, or fused with the next consonant)
    if rng.random() < 0.15:
        s += rng.choice("ंँः")
    return s


def _armenian_piece(rng: random.Random) -> str:
    s = rng.choice("աբգդեըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆԱԲԳԸ և,.-:")
    while rng.random() < 0.3:
        s += chr(rng.choice((0x300, 0x301, 0x303, 0x307, 0x308, 0x323, 0x302)))
    return s


def _vietnamese_piece(rng: random.Random) -> str:
    s = rng.choice("aăâeêioôơuưyAĐđ ếộ")
    while rng.random() < 0.4:
        s += rng.choice("\u0300\u0301\u0303\u0309\u0323\u0302\u0306")
    return s


EMOJI = ["\U0001F600", "\U0001F44D", "\U0001F468", "\U0001F469", "\U0001F467", "\u2764", "\U0001F525", "\u263a"]


def _emoji_piece(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.3:
        return rng.choice(EMOJI) + rng.choice(("", "\ufe0f", "\U0001F3FB", "\U0001F3FD"))
    if r < 0.5:
        return "\u200d".join(rng.choice(EMOJI) for _ in range(rng.randint(2, 4)))
    if r < 0.8:  # regional indicators, in runs of any length (pairs from the start)
        return "".join(chr(0x1F1E6 + rng.randrange(26)) for _ in range(rng.randint(1, 3)))
    return rng.choice(("\u200d", "x", " ", "\ufe0f"))


def _hangul_piece(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.6:  # conjoining jamo L V T in any order and number
        return "".join(chr(rng.choice((0x1100 + rng.randrange(19), 0x1161 + rng.randrange(21),
                                       0x11A8 + rng.randrange(27)))) for _ in range(rng.randint(1, 3)))
    return rng.choice(("\uac00", "\ud55c", "\uae00", " ", "\uac01"))


def _control_piece(rng: random.Random) -> str:
    return rng.choice(("\r", "\n", "\r\n", "\t", " ", "a", "\u200c", "\u00ad"))


PIECES = {
    "devanagari": _devanagari_syllable,
    "armenian": _armenian_piece,
    "vietnamese": _vietnamese_piece,
    "emoji": _emoji_piece,
    "hangul": _hangul_piece,
    "control": _control_piece,
}


def _pieces(rng: random.Random, kinds: list[str], n: int) -> list[str]:
    return [PIECES[rng.choice(kinds)](rng) for _ in range(n)]


def _pair(rng: random.Random, kinds: list[str], max_len: int = 12) -> tuple[str, str]:
    """(pred, ref): the prediction drops, inserts and substitutes whole pieces of the reference."""
    ref = _pieces(rng, kinds, rng.randint(0, max_len))
    pred = []
    for p in ref:
        r = rng.random()
        if r < 0.1:
            continue
        if r < 0.2:
            pred.extend(_pieces(rng, kinds, 1))
        elif r < 0.25:
            pred.extend([p, *_pieces(rng, kinds, 1)])
        else:
            pred.append(p)
    return "".join(pred), "".join(ref)


def _random_corpus(seed: int, n: int, kinds: list[str] | None = None) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    every = list(PIECES)
    pairs = [_pair(rng, kinds or rng.sample(every, rng.randint(1, 3))) for _ in range(n)]
    return [p for p, _ in pairs], [r for _, r in pairs]


def _counts_with(packer, preds, refs) -> np.ndarray:
    hyp, ref = packer.pack_texts(preds, "preds"), packer.pack_texts(refs, "refs")
    raw = lev.alignment_batch(ref[0], ref[1], hyp[0], hyp[1], 1)
    return np.column_stack([np.diff(ref[1]), np.diff(hyp[1]), raw[:, 1:]])


@needs_core
@pytest.mark.parametrize("seed", range(4))
def test_compiled_and_python_packers_count_the_same(backend, seed):
    preds, refs = _random_corpus(seed, 1500)
    compiled = _counts_with(_core.GraphemePacker(), preds, refs)
    python = _counts_with(PythonGraphemePacker(), preds, refs)
    assert np.array_equal(compiled, python)
    # and the public path agrees with both
    res = batch.cer(preds, refs, unit="grapheme")
    assert np.array_equal(res.ref_len, compiled[:, 0])
    assert np.array_equal(res.edits, compiled[:, 2:].sum(axis=1))


@needs_core
def test_public_api_without_the_core_uses_the_python_twin(monkeypatch, backend):
    preds, refs = _random_corpus(11, 800)
    expected = batch.cer(preds, refs, unit="grapheme")
    single = [ek.score(p, r, unit="grapheme").detail["edits"] for p, r in zip(preds[:50], refs[:50])]
    monkeypatch.setattr(_kernels, "compiled", lambda: None)
    assert not isinstance(grapheme_packer(), _core.GraphemePacker)
    got = batch.cer(preds, refs, unit="grapheme")
    for field in ("ref_len", "substitutions", "deletions", "insertions"):
        assert np.array_equal(getattr(got, field), getattr(expected, field))
    report = ek.evaluate(zip(preds, refs), metric="cer", unit="grapheme")
    assert report.detail["edits"] == int(expected.edits.sum())
    if backend == "numba":  # the single-pair path packs too (the compiled one segments in Rust)
        assert [ek.score(p, r, unit="grapheme").detail["edits"] for p, r in zip(preds[:50], refs[:50])] == single


@pytest.mark.parametrize("packer", PACKERS)
def test_joins_become_cluster_boundaries(packer):
    items = [text.JoinedText("ab\u0301c", (0, 1, 2, 3, 4)), "x", text.JoinedText("abc", (3, 1)),
             text.JoinedText("क\u094dत", (2,))]
    (values, offsets), joins, join_offsets = packer().pack_joined(items, "gts", "gt_joins")
    assert offsets.tolist() == [0, 3, 4, 7, 8]
    # ab́c: boundaries 0 | a | b́ | c; the join at 2 (inside b́) moves to the start of b́
    assert joins.tolist() == [0, 1, 1, 2, 3, 3, 1, 0]
    assert join_offsets.tolist() == [0, 5, 5, 7, 8]


@needs_core
def test_joins_agree_between_packers_on_random_text():
    rng = random.Random(5)
    _, refs = _random_corpus(6, 600)
    items = [text.JoinedText(t, tuple(sorted(rng.sample(range(len(t) + 1), min(3, len(t) + 1))))) for t in refs]
    a = _core.GraphemePacker().pack_joined(items, "g", "gj")
    b = PythonGraphemePacker().pack_joined(items, "g", "gj")
    assert np.array_equal(a[0][1], b[0][1]) and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])


# --------------------------------------------------------------------------- corpus figures

def test_corpus_figure_is_total_edits_over_total_clusters(backend, monkeypatch):
    preds, refs = _random_corpus(21, 700)
    singles = [ek.score(p, r, unit="grapheme").detail for p, r in zip(preds, refs)]
    edits, ref_len = sum(d["edits"] for d in singles), sum(d["ref_len"] for d in singles)
    monkeypatch.setattr(facade, "CHUNK_SIZE", 64)  # many chunks, each with its own interning table
    report = ek.evaluate(((p, r, k % 3) for k, (p, r) in enumerate(zip(preds, refs))), metric="cer", unit="grapheme")
    assert (report.detail["edits"], report.detail["ref_len"]) == (edits, ref_len)
    assert report.aggregate == edits / ref_len
    assert [s.detail["edits"] for s in report.scores] == [d["edits"] for d in singles]
    res = batch.cer(preds, refs, unit="grapheme")
    assert res.corpus_rate == edits / ref_len
    for label in range(3):
        e = sum(d["edits"] for k, d in enumerate(singles) if k % 3 == label)
        n = sum(d["ref_len"] for k, d in enumerate(singles) if k % 3 == label)
        assert report.per_slice[label] == e / n


def test_evaluate_interns_per_chunk(monkeypatch):
    made = []

    def counting_packer():
        p = grapheme_packer()
        made.append(p)
        return p

    monkeypatch.setattr(_graphemes, "grapheme_packer", counting_packer)
    monkeypatch.setattr(facade, "CHUNK_SIZE", 100)
    # every pair has its own distinct cluster: one table for the corpus would hold all 1,000
    cases = [(f"x{chr(0x4E00 + k)}\u0301", f"{chr(0x4E00 + k)}\u0301") for k in range(1000)]
    report = ek.evaluate(cases, metric="cer", unit="grapheme")
    assert report.detail == {"edits": 1000, "ref_len": 1000, "substitutions": 0, "deletions": 0,
                             "insertions": 1000, "hits": 1000}
    assert len(made) == 10
    assert max(p.distinct_clusters for p in made) == 100


# --------------------------------------------------------------------------- no multi-code-point clusters

@pytest.mark.parametrize("alphabet", ["abcdeé XYZ,.", "աբգըԸեւվ -", "的一是在不了 ", "абвгд ", "\t\n ab"])
def test_grapheme_equals_code_point_cer_without_clusters(backend, alphabet):
    rng = random.Random(alphabet)
    refs = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(500)]
    preds = ["".join(c for c in r if rng.random() > 0.1) + rng.choice(alphabet) for r in refs]
    by_char, by_grapheme = batch.cer(preds, refs), batch.cer(preds, refs, unit="grapheme")
    for field in ("ref_len", "substitutions", "deletions", "insertions"):
        assert np.array_equal(getattr(by_char, field), getattr(by_grapheme, field))
    for packer in [p.values[0] for p in PACKERS]:
        values, offsets = packer().pack_texts(refs, "refs")
        expected = pack_texts(refs, "refs")
        assert np.array_equal(values, expected[0]) and np.array_equal(offsets, expected[1])


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("packer", PACKERS)
def test_packer_errors_match_the_code_point_reader(packer):
    with pytest.raises(ValueError, match=r"refs\[1\] contains a lone surrogate U\+D800 at position 1"):
        packer().pack_texts(["ok", "a\ud800b"], "refs")
    with pytest.raises(TypeError, match=r"refs\[1\] must be str, got int"):
        packer().pack_texts(["ok", 3], "refs")
    with pytest.raises(TypeError, match=r"pred\[0\] is not str"):
        packer().pack_pairs([(None, "x")])
    with pytest.raises(ValueError, match=r"gj\[0\] position 5 is outside 0..3"):
        packer().pack_joined([text.JoinedText("abc", (5,))], "g", "gj")


def test_api_errors(backend):
    with pytest.raises(ValueError, match=r"preds\[1\] contains a lone surrogate"):
        batch.cer(["a", "\udc00"], ["a", "b"], unit="grapheme")
    with pytest.raises(ValueError, match=r"cases\[1\] gold contains a lone surrogate"):
        ek.evaluate([("a", "b"), ("a", "x\udfff")], metric="cer", unit="grapheme")
    with pytest.raises(ValueError, match="lone surrogate"):
        ek.score("a\ud800", "a", unit="grapheme")
    with pytest.raises(InvalidValueError, match="unit must be 'char' or 'grapheme', got 'glyph'"):
        ek.score("a", "b", unit="glyph")
    with pytest.raises(InvalidValueError, match="applies to metric 'cer' only"):
        ek.score("a b", "a c", metric="wer", unit="grapheme")
    with pytest.raises(InvalidValueError, match="applies to metric 'cer' only"):
        ek.evaluate([], metric="wer", unit="grapheme")
    with pytest.raises(InvalidValueError, match="applies to metric 'cer' only"):
        check_unit("grapheme", "wer")
    with pytest.raises(InvalidValueError, match="applies to metric 'cer' only"):
        ek.score({"a": 1}, {"a": 1}, unit="grapheme")
    with pytest.raises(InvalidValueError):
        batch.levenshtein(["a"], ["b"], unit=None)
    # the default metric of two strings is CER, so unit= works without metric=
    assert ek.score("नमस्त", "नमस्ते", unit="grapheme").detail["ref_len"] == 3


def test_missing_regex_without_the_core(monkeypatch):
    monkeypatch.setattr(_kernels, "compiled", lambda: None)
    monkeypatch.setattr(_graphemes, "_regex", None)
    monkeypatch.setitem(sys.modules, "regex", None)  # makes `import regex` fail
    with pytest.raises(MissingExtraError, match=r"pip install scorekit\[graphemes\]"):
        batch.cer(["a"], ["b"], unit="grapheme")
    with pytest.raises(ImportError):
        ek.evaluate([("a", "b")], unit="grapheme")
    assert batch.cer(["a"], ["b"]).edits.tolist() == [1]  # code points need no extra


# --------------------------------------------------------------------------- OCR pages text metrics

def test_text_metrics_vectors(backend):
    m = compute_text_metrics("नमस्ते", "नमस्त", unit="grapheme")
    assert (m.gt_char_count, m.pred_char_count, m.char_edit_distance, m.cer) == (3, 3, 1, 1 / 3)
    m = compute_text_metrics("नमस्ते", "नमस्त")
    assert (m.gt_char_count, m.pred_char_count, m.char_edit_distance) == (6, 5, 1)
    # the schwa at a hyphen join is still forgiven over clusters
    gt = text.join_lines_with_hyphenation(["բ-", "արև"])
    for unit in ("char", "grapheme"):
        m = compute_text_metrics(gt, "բըարև", unit=unit)
        assert (m.char_edit_distance, m.char_edit_distance_strict, m.schwa_forgiven) == (0, 1, 1)
    # a schwa carrying a combining mark is another letter: never free
    m = compute_text_metrics(gt, "բը\u0307արև", unit="grapheme")
    assert (m.char_edit_distance, m.char_edit_distance_strict) == (1, 1)


def test_text_metrics_join_inside_a_cluster(backend):
    """gt ``բ̈արև`` with a join at code point 1 (between բ and its mark, inside the cluster ``բ̈``):
    over clusters the join sits at the start of ``բ̈``, so a schwa written before it is forgiven and
    one written after it is not."""
    gt = text.JoinedText("բ\u0308արև", (1,))
    assert compute_text_metrics(gt, "ըբ\u0308արև", unit="grapheme").char_edit_distance == 0
    assert compute_text_metrics(gt, "բ\u0308ըարև", unit="grapheme").char_edit_distance == 1
    assert compute_text_metrics(gt, "ըբ\u0308արև").char_edit_distance == 1  # code points: join after բ
    assert compute_text_metrics(gt, "բըարև").char_edit_distance == 1


def _joined_corpus(seed: int, n: int) -> tuple[list, list]:
    rng = random.Random(seed)
    gts, preds = [], []
    for _ in range(n):
        words = [_armenian_piece(rng) + "".join(rng.choice("աբըԸեւվ") for _ in range(rng.randint(0, 4)))
                 for _ in range(rng.randint(1, 4))]
        lines = [w + ("-" if rng.random() < 0.6 else "") for w in words]
        gt = text.join_lines_with_hyphenation(lines)
        pred = "".join(c + ("ը" if rng.random() < 0.1 else "") for c in gt.text if rng.random() > 0.05)
        gts.append(gt)
        preds.append(pred)
    return gts, preds


def test_text_metrics_batch_equals_single_over_clusters(backend):
    gts, preds = _joined_corpus(3, 300)
    for schwa_forgiving in (True, False):
        got = compute_text_metrics_batch(gts, preds, unit="grapheme", schwa_forgiving=schwa_forgiving)
        assert got == [compute_text_metrics(g, p, unit="grapheme", schwa_forgiving=schwa_forgiving)
                       for g, p in zip(gts, preds)]


def test_text_metrics_grapheme_equals_char_without_clusters(backend):
    rng = random.Random(9)
    gts, preds = [], []
    for _ in range(300):
        lines = ["".join(rng.choice("աբըԸեւվոր") for _ in range(rng.randint(1, 6))) + rng.choice(("-", "", " "))
                 for _ in range(rng.randint(1, 3))]
        gt = text.join_lines_with_hyphenation(lines)
        gts.append(gt)
        preds.append("".join(c + ("ը" if rng.random() < 0.15 else "") for c in gt.text if rng.random() > 0.05))
    assert compute_text_metrics_batch(gts, preds, unit="grapheme") == compute_text_metrics_batch(gts, preds)


def test_text_metrics_errors():
    with pytest.raises(InvalidValueError, match="unit"):
        compute_text_metrics("a", "b", unit="graphemes")
    with pytest.raises(InvalidValueError, match="lone surrogate"):
        compute_text_metrics_batch(["a", "\ud800"], ["a", "b"], unit="grapheme")
    with pytest.raises(InvalidTypeError):
        compute_text_metrics_batch([None], ["a"], unit="grapheme")


def test_schwa_cer_over_clusters(backend):
    gt = text.join_lines_with_hyphenation(["բ-", "արև"])
    d, n = batch.schwa_cer([gt, "नमस्ते"], ["բըարև", "नमस्त"], unit="grapheme")
    assert (d.tolist(), n.tolist()) == ([0, 1], [4, 3])
    assert text.schwa_distance("բարև", "բըարև", gt_joins=(1,), unit="grapheme") == 0
    assert text.schwa_distance("բ\u0308արև", "բ\u0308ըարև", gt_joins=(1,)) == 1
    # explicit joins (not JoinedText) take the validated path
    assert text.schwa_distance_batch(["բարև"], ["բըարև"], gt_joins=[[1]], unit="grapheme").tolist() == [0]
    with pytest.raises(ValueError, match=r"gt_joins\[0\] position 9"):
        text.schwa_distance_batch(["բարև"], ["բըարև"], gt_joins=[[9]], unit="grapheme")


# --------------------------------------------------------------------------- command line

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_cer_unit(capsys):
    assert run(capsys, "cer", "नमस्त", "नमस्ते", "--unit", "grapheme") == (0, f"{1 / 3}\n", "")
    assert run(capsys, "cer", "नमस्त", "नमस्ते") == (0, f"{1 / 6}\n", "")
    assert run(capsys, "cer", "नमस्त", "नमस्ते", "--unit", "char") == (0, f"{1 / 6}\n", "")
    code, _, err = run(capsys, "cer", "a", "b", "--unit", "glyph")
    assert code == 2 and "invalid choice" in err
    code, _, err = run(capsys, "wer", "a", "b", "--unit", "grapheme")
    assert code == 2 and "unrecognized arguments" in err


def test_cli_eval_text_unit(tmp_path, capsys):
    pred, gold = tmp_path / "pred.txt", tmp_path / "gold.txt"
    pred.write_text("नमस्त\nhi\U0001F468\u200d\U0001F469\n", encoding="utf-8")
    gold.write_text(f"नमस्ते\nhi{FAMILY}\n", encoding="utf-8")
    code, out, _ = run(capsys, "eval-text", str(pred), str(gold), "--unit", "grapheme", "--json")
    report = json.loads(out)
    assert code == 0
    assert (report["unit"], report["totals"]["edits"], report["totals"]["ref_len"]) == ("grapheme", 2, 6)
    code, out, _ = run(capsys, "eval-text", str(pred), str(gold), "--json")
    assert (json.loads(out)["unit"], json.loads(out)["totals"]["ref_len"]) == ("char", 13)
    code, out, _ = run(capsys, "eval-text", str(pred), str(gold), "--unit", "grapheme")
    assert code == 0 and out.startswith("CER (grapheme clusters) over 2 pairs: 0.3333")
    code, out, err = run(capsys, "eval-text", str(pred), str(gold), "--unit", "grapheme", "--metric", "wer")
    assert (code, out) == (2, "") and err == "scorekit: error: --unit grapheme applies to --metric cer only\n"
    code, out, _ = run(capsys, "eval-text", str(pred), str(gold), "--metric", "wer", "--json")
    assert code == 0 and json.loads(out)["unit"] is None


#: Code points on which the crate's and regex's tables differ (decisions.md#grapheme-clusters), BMP part.
_TABLES_DIFFER = {*range(0x5C8, 0x5CA), *range(0xB53, 0xB55), *range(0x1ADE, 0x1AE0), *range(0x1AEC, 0x1AF1)}


@needs_core
def test_every_bmp_code_point_in_context():
    """The compiled reader reads strings of code points that cannot join a neighbour without
    segmenting them (a table generated by build.rs); every BMP code point, in contexts that join
    or separate it, gives the clusters of regex's ``\\X``."""
    contexts = ["a{}", "{}a", "{}\u0301", "\u1100{}", "{}\u1161", "\r{}", "{}\n", "क{}", "क\u094d{}",
                "{}\u200d\u2764", "\U0001F1E6{}"]
    texts = [c.format(chr(cp)) for cp in range(0x10000)
             if not 0xD800 <= cp <= 0xDFFF and cp not in _TABLES_DIFFER for c in contexts]
    texts += [chr(cp) * 3 for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF and cp not in _TABLES_DIFFER]
    compiled = _core.GraphemePacker().pack_texts(texts, "t")[1]
    python = PythonGraphemePacker().pack_texts(texts, "t")[1]
    bad = np.flatnonzero(np.diff(compiled) != np.diff(python))
    assert [texts[k] for k in bad[:5]] == []


def test_evaluate_coerces_and_normalises_over_clusters(backend):
    cases = [("cafe\u0301", "caf\u00e9"), (None, "नमस्ते"), ("hi", FAMILY)]
    report = ek.evaluate(cases, metric="cer", unit="grapheme")
    assert (report.detail["edits"], report.detail["ref_len"]) == (1 + 3 + 2, 4 + 3 + 1)
    report = ek.evaluate(cases, metric="cer", unit="grapheme", normalize="nfc")
    assert (report.detail["edits"], report.detail["ref_len"]) == (0 + 3 + 2, 4 + 3 + 1)
    assert ek.evaluate(cases, metric="cer", normalize="nfc").detail["ref_len"] == 4 + 6 + 5
