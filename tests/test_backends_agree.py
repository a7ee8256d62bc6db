"""The Rust core and the Numba twin return identical arrays (values, dtype, shape) on the same batch."""

from __future__ import annotations

import random

import numpy as np

from scorekit._kernels import levenshtein as lev
from scorekit._kernels import use_backend
from scorekit._packing import pack_positions, pack_texts
from tests._textgen import long_pairs, random_pairs


def run_all_kernels():
    pairs = random_pairs(21, 1500) + long_pairs(22, 2, length=3000)
    a, b = zip(*pairs)
    av, ao = pack_texts(a, "a")
    bv, bo = pack_texts(b, "b")
    rng = random.Random(3)
    joins_a = [sorted({rng.randint(0, len(x)) for _ in range(rng.randint(0, 2))}) for x in a]
    joins_b = [sorted({rng.randint(0, len(x)) for _ in range(rng.randint(0, 2))}) for x in b]
    jav, jao = pack_positions(joins_a, np.diff(ao), "ja")
    jbv, jbo = pack_positions(joins_b, np.diff(bo), "jb")
    schwa = pack_texts(["ըԸ"], "s")[0]
    return {
        "distance": lev.distance_batch(av, ao, bv, bo, 0),
        "alignment": lev.alignment_batch(av, ao, bv, bo, 0),
        "words": lev.word_alignment_batch(av, ao, bv, bo, 0),
        "schwa": lev.schwa_distance_batch(av, ao, bv, bo, jav, jao, jbv, jbo, schwa, 0),
        "editops": lev.editops(pack_texts([a[-1]], "a")[0], pack_texts([b[-1]], "b")[0]),
    }


def test_backends_return_identical_arrays():
    with use_backend("rust"):
        rust = run_all_kernels()
    with use_backend("numba"):
        numba = run_all_kernels()
    for name in rust:
        assert rust[name].dtype == numba[name].dtype == np.int64, name
        assert rust[name].shape == numba[name].shape, name
        np.testing.assert_array_equal(rust[name], numba[name], err_msg=name)
