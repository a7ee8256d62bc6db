"""Hostile sizes and arguments for the Levenshtein kernels, on both backends (issue #11, section 3).

Memory must stay linear in the input: a million-character reference, 300,000 distinct characters,
300,000-character edit scripts and 300,000-word WER all complete under an 8 GB address-space limit
with rapidfuzz's results; an allocation that cannot succeed is a ``MemoryError``, not an abort.
``threads`` is capped at the machine's cores, and distinct values do not pile up thread pools.

The memory cases run in a subprocess with ``RLIMIT_AS`` set, so a regression fails the test instead
of killing pytest. Oracles: rapidfuzz (distance and edit scripts, also over word lists), computed
once per module: rapidfuzz's own edit script of 300,000 symbols takes several seconds.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

import scorekit
from scorekit import _kernels, batch
from scorekit._kernels import levenshtein as lev
from scorekit.errors import InvalidTypeError, InvalidValueError

ADDRESS_SPACE = 8 << 30
PACKAGE_ROOT = str(Path(scorekit.__file__).resolve().parents[1])


def run_limited(backend: str, *body: str, limit: int = ADDRESS_SPACE, timeout: float = 180, **env: str):
    """Run the code ``body`` (its parts are dedented one by one) in a fresh interpreter on
    ``backend`` with the address space capped at ``limit`` bytes and ``env`` added to the
    environment; it leaves a JSON-able ``result``, which is returned."""
    prelude = textwrap.dedent(f"""
        import json, resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
        from scorekit import _kernels, batch
        from scorekit._kernels import levenshtein as lev
        _kernels.set_backend({backend!r})
    """)
    code = prelude + "".join(textwrap.dedent(part) for part in body) + "\nprint(json.dumps(result))\n"
    env = dict(os.environ, **env, PYTHONPATH=os.pathsep.join([PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def mutate(seq: list, edits: int, rng: random.Random, alphabet: list) -> list:
    """``seq`` with ``edits`` random substitutions, deletions and insertions."""
    seq = list(seq)
    for _ in range(edits):
        k = rng.randrange(len(seq))
        op = rng.randrange(3)
        if op == 0:
            seq[k] = rng.choice(alphabet)
        elif op == 1:
            del seq[k]
        else:
            seq.insert(k, rng.choice(alphabet))
    return seq


def write_pair(directory: Path, ref: str, hyp: str) -> tuple[str, str]:
    paths = (directory / "ref.txt", directory / "hyp.txt")
    for path, text in zip(paths, (ref, hyp)):
        path.write_text(text, encoding="utf-8")
    return str(paths[0]), str(paths[1])


def distance_oracle(ref: str, hyp: str, bound: int) -> int:
    """rapidfuzz's distance, exact because it is at most ``bound`` (the cutoff makes it fast)."""
    d = Levenshtein.distance(ref, hyp, score_cutoff=bound)
    assert d <= bound
    return d


READ_PAIR = """
    ref = open({ref!r}, encoding="utf-8").read()
    hyp = open({hyp!r}, encoding="utf-8").read()
"""

DISTANCE_AND_CER = """
    distance = int(batch.levenshtein([ref], [hyp], threads=1)[0])
    c = batch.cer([hyp], [ref], threads=1)
    result = [distance, int(c.ref_len[0]), int(c.substitutions[0]), int(c.deletions[0]),
              int(c.insertions[0])]
"""


def check_distance_and_cer(result: list, ref: str, hyp: str, edits: int) -> None:
    distance, ref_len, subs, dels, ins = result
    expected = distance_oracle(ref, hyp, 2 * edits)
    assert distance == expected
    assert (ref_len, subs + dels + ins) == (len(ref), expected)
    assert ref_len - dels + ins == len(hyp)  # hits + substitutions + insertions = len(hyp)


def test_million_character_reference_stays_within_8_gb(backend, tmp_path):
    rng = random.Random(11)
    alphabet = list("abcdefghijklmnopqrstuvwxyz ,.") + list("ԱԲԳըԸ的😀")
    ref = "".join(rng.choices(alphabet, k=1_000_000))
    hyp = "".join(mutate(list(ref), 150, rng, alphabet))
    r, h = write_pair(tmp_path, ref, hyp)
    check_distance_and_cer(run_limited(backend, READ_PAIR.format(ref=r, hyp=h), DISTANCE_AND_CER), ref, hyp, 150)


def test_300k_distinct_characters_stay_within_8_gb(backend, tmp_path):
    rng = random.Random(12)
    code_points = [c for c in range(0x100, 0x100 + 310_000) if not 0xD800 <= c <= 0xDFFF][:300_000]
    ref = "".join(map(chr, code_points))
    hyp = "".join(mutate(list(ref), 100, rng, list(ref[:5000])))
    r, h = write_pair(tmp_path, ref, hyp)
    check_distance_and_cer(run_limited(backend, READ_PAIR.format(ref=r, hyp=h), DISTANCE_AND_CER), ref, hyp, 100)


@pytest.fixture(scope="module")
def long_editops(tmp_path_factory):
    """A 300,000-character pair (files) and rapidfuzz's edit script."""
    rng = random.Random(13)
    alphabet = list("abcdefgh")
    ref = "".join(rng.choices(alphabet, k=300_000))
    hyp = "".join(mutate(list(ref), 300, rng, alphabet))
    return write_pair(tmp_path_factory.mktemp("editops"), ref, hyp), Levenshtein.editops(ref, hyp).as_list()


def test_300k_character_editops_equal_rapidfuzz(backend, long_editops):
    (r, h), expected = long_editops
    ops = run_limited(backend, READ_PAIR.format(ref=r, hyp=h), "result = batch.editops(ref, hyp)\n")
    assert [tuple(op) for op in ops] == expected


@pytest.fixture(scope="module")
def long_wer(tmp_path_factory):
    """A 300,000-word pair (files) and its counts from rapidfuzz's edit script over the words."""
    rng = random.Random(14)
    vocabulary = [f"w{k}" for k in range(247)] + ["ըմպել", "的的", "😀x"]
    ref_words = rng.choices(vocabulary, k=300_000)
    hyp_words = mutate(ref_words, 300, rng, vocabulary)
    paths = write_pair(tmp_path_factory.mktemp("wer"), " ".join(ref_words), "  ".join(hyp_words))
    # rapidfuzz on one character per word, below 256 (its fastest path; on lists it is quadratic)
    ids = {word: chr(k) for k, word in enumerate(vocabulary)}
    tags = [op[0] for op in Levenshtein.editops("".join(ids[w] for w in ref_words),
                                                "".join(ids[w] for w in hyp_words)).as_list()]
    return paths, [len(ref_words), tags.count("replace"), tags.count("delete"), tags.count("insert")]


def test_300k_word_wer_equals_rapidfuzz_on_words(backend, long_wer):
    (r, h), expected = long_wer
    got = run_limited(backend, READ_PAIR.format(ref=r, hyp=h), """
    w = batch.wer([hyp], [ref], threads=1)
    result = [int(w.ref_len[0]), int(w.substitutions[0]), int(w.deletions[0]), int(w.insertions[0])]
    """)
    assert got == expected


IMPOSSIBLE_ALLOCATION = """
    import numpy as np
    # 4M symbols of 500 distinct ones: the inputs take 32 MB, the pattern masks (linear, but
    # 64 bytes per symbol) 250 MB, beyond the limit set below. A few substitutions (none at the
    # ends): were the limit not enforced, the distance would still be quick.
    n = 4_000_000
    rng = np.random.default_rng(0)
    a = rng.integers(1000, 1500, n, dtype=np.uint32)
    b = a.copy()
    b[[0, n // 3, n // 2, n - 1]] = 7
    offsets = np.array([0, n], dtype=np.int64)
    small = np.array([0, 3], dtype=np.int64)
    lev.distance_batch(a[:3], small, b[:3], small, threads=1)  # warm up: pools, compiled code
    size = int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmSize:"))) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + (150 << 20), size + (150 << 20)))
    try:
        lev.distance_batch(a, offsets, b, offsets, threads=1)
        result = "no error"
    except MemoryError as e:
        result = ["MemoryError", str(e)]
"""


def test_impossible_allocation_is_a_memory_error(backend):
    # The core's allocator (mimalloc) reserves address space in 1 GiB arenas by default, which would
    # hide the limit; smaller arenas make the limit bite at the allocation itself.
    result = run_limited(backend, IMPOSSIBLE_ALLOCATION, MIMALLOC_ARENA_RESERVE="64MiB")
    assert result[0] == "MemoryError"
    if backend == "rust":
        assert result[1].startswith("item 0: out of memory")


# --------------------------------------------------------------------------------------------------
# threads
# --------------------------------------------------------------------------------------------------

def _pairs(n: int, length: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    refs = ["".join(rng.choices("abcdeա ", k=length)) for _ in range(n)]
    hyps = ["".join(mutate(list(r), 5, rng, list("abcdeա "))) for r in refs]
    return refs, hyps


@pytest.mark.parametrize("threads", [2**62, 10**9, 10**6, _kernels.available_cores() + 1])
def test_huge_thread_counts_mean_all_cores(backend, threads):
    refs, hyps = _pairs(300, 60, 1)
    assert _kernels.resolve_threads(threads) == _kernels.available_cores()
    expected = batch.cer(hyps, refs, threads=1)
    got = batch.cer(hyps, refs, threads=threads)
    assert np.array_equal(got.edits, expected.edits)
    assert np.array_equal(batch.levenshtein(refs, hyps, threads=threads),
                          [Levenshtein.distance(r, h) for r, h in zip(refs, hyps)])


@pytest.mark.parametrize(("threads", "error"), [
    (-1, InvalidValueError), (True, InvalidTypeError), (1.5, InvalidTypeError), ("2", InvalidTypeError),
])
def test_bad_thread_values_are_named_errors(backend, threads, error):
    with pytest.raises(error, match="^threads "):
        batch.cer(["a"], ["b"], threads=threads)
    with pytest.raises(error, match="^threads "):
        lev.distance_batch(np.zeros(1, np.uint32), np.array([0, 1]), np.zeros(1, np.uint32), np.array([0, 1]),
                           threads=threads)


def test_compiled_core_caps_threads_itself():
    """The core is also called directly (e.g. by other bindings): it caps ``threads`` without the
    Python resolver."""
    refs, hyps = _pairs(100, 40, 2)
    a = lev.distance_batch(*_pack(refs), *_pack(hyps), threads=1)
    for threads in (2**62, 2**64 - 1, 10**9):
        got = _kernels._core.levenshtein_distance_batch(*_pack(refs), *_pack(hyps), threads)
        assert np.array_equal(got, a)


def _pack(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    values = np.array([ord(c) for t in texts for c in t], dtype=np.uint32)
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in texts])]).astype(np.int64)
    return values, offsets


def _thread_count() -> int:
    return len(os.listdir("/proc/self/task"))


SPAWN_REFUSED = """
    import numpy as np
    from scorekit._packing import pack_texts
    a = np.random.default_rng(0).integers(97, 110, 20_000, dtype=np.uint32)
    b = a[::-1].copy()
    offsets = np.arange(0, 20_001, 1000, dtype=np.int64)
    pack_texts(["warm up the allocator"] * 100, "x")
    if _kernels.current_backend() == "numba":  # compile (serial: no worker thread is started)
        lev.distance_batch(a[:10], offsets[:2] // 100, b[:10], offsets[:2] // 100, threads=1)
    # No room left for a thread stack: the OS refuses every new thread.
    size = int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmSize:"))) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 20), size + (1 << 20)))
    try:
        result = ["ok", lev.distance_batch(a, offsets, b, offsets, threads=0).tolist()]
    except RuntimeError as e:
        result = ["RuntimeError", str(e)]
"""


def test_a_refused_thread_is_a_runtime_error(backend):
    result = run_limited(backend, SPAWN_REFUSED, MIMALLOC_ARENA_RESERVE="64MiB")
    if backend == "rust":  # the core starts its pool on first use, whatever the core count
        assert result[0] == "RuntimeError" and re.match(r"cannot start \d+ worker threads", result[1])
    elif _kernels.available_cores() > 1:
        assert result[0] == "RuntimeError"
    else:  # one core: the Numba twin runs the batch on the calling thread
        assert result[0] == "ok"


def test_distinct_thread_values_leave_a_bounded_thread_count(backend):
    refs, hyps = _pairs(40, 300, 3)  # enough work for both backends to use their pools
    expected = batch.cer(hyps, refs, threads=1).edits
    before = _thread_count()
    for threads in range(1, 201):
        assert np.array_equal(batch.cer(hyps, refs, threads=threads).edits, expected)
    cores = _kernels.available_cores()
    # at most one pool per worker count from 1 to the number of cores
    assert _thread_count() - before <= cores * (cores + 1)


# --------------------------------------------------------------------------------------------------
# schwa-forgiving distance: banded on both backends (the full table of a long pair would not finish)
# --------------------------------------------------------------------------------------------------

def test_long_schwa_pair_with_joins(backend):
    """200,000 characters; a schwa inserted at each of 100 gt joins (free) and 50 substitutions
    (never free): the distance is exactly 50 (the strict distance 150 minus the 100 free schwas is
    a lower bound, and this alignment reaches it)."""
    rng = random.Random(15)
    gt = [rng.choice("աբգդեզ ") for _ in range(200_000)]
    joins = sorted(rng.sample(range(1, 200_000, 2), 100))
    pred = list(gt)
    substituted = rng.sample(sorted(set(range(200_000)) - set(joins) - {j - 1 for j in joins}), 50)
    for k in substituted:
        pred[k] = "ժ"
    for k in reversed(joins):
        pred.insert(k, "ը")
    (gv, go), (pv, po) = _pack(["".join(gt)]), _pack(["".join(pred)])
    got = lev.schwa_distance_batch(
        gv, go, pv, po, np.array(joins, dtype=np.int64), np.array([0, len(joins)], dtype=np.int64),
        np.zeros(0, dtype=np.int64), np.array([0, 0], dtype=np.int64),
        np.array([ord("ը"), ord("Ը")], dtype=np.uint32), threads=1,
    )
    assert Levenshtein.distance("".join(gt), "".join(pred), score_cutoff=300) == 150
    assert got.tolist() == [50]
