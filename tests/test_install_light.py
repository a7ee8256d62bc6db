"""Numba is optional: scoring through the compiled core never imports it, and without either
backend the first kernel call says what to install. A first ``score`` loads neither NumPy (one
pair goes to the core as two ``str``, :func:`~scorekit.metrics.strings.count_pair`) nor SciPy.

Each test runs a fresh interpreter (module caches and the backend choice are per process). Numba
is made unimportable by a meta-path finder that refuses it and records every attempt, so "never
imported" is checked directly, not just inferred from ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scorekit as ek
from scorekit import _kernels
from scorekit._kernels import BACKENDS, use_backend
from scorekit.metrics.strings import StringMetric, count_errors, count_pair

PYTHON_DIR = Path(ek.__file__).resolve().parent.parent

#: Child prelude: refuse ``numba``/``llvmlite`` (recording attempts) and, when asked, the core.
BLOCKER = """
import importlib.abc, json, sys
attempts = []
class Refuse(importlib.abc.MetaPathFinder):
    def __init__(self, names):
        self.names = names
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names or name in self.names:
            attempts.append(name)
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None
sys.meta_path.insert(0, Refuse(set(sys.argv[1].split(","))))
"""

#: The same calls the parent makes in-process: text, trees, ROVER, trajectories, tables, graphs.
WORKLOAD = """
import scorekit as ek
from scorekit import batch
from scorekit.agents import TrajectoryMetric
from scorekit.qe import rover
from scorekit.trees import Tree, tree_edit_distance
values = {
    "cer": ek.score("hello wrld", "hello world").value,
    "wer": ek.score("hello wrld", "hello world", metric="wer").value,
    "corpus": ek.evaluate([("ct", "cat"), ("dg", "dog")], metric="cer").aggregate,
    "levenshtein": batch.levenshtein(["kitten", "flaw"], ["sitting", "lawn"]).tolist(),
    "tree": tree_edit_distance(Tree.from_brackets("{a{b}{c}}"), Tree.from_brackets("{a{b}{d}{e}}")),
    "rover": rover(["the cat sat", "the cat sit", "the bat sat"]).text,
    "trajectory": TrajectoryMetric()([("search", {"q": "x"}), ("open", {"id": 1})],
                                     [("search", {"q": "y"}), ("open", {"id": 1})]).value,
    "teds": ek.TedsMetric()("<table><tr><td>a</td><td>b</td></tr></table>",
                            "<table><tr><td>a</td><td>c</td></tr></table>").value,
}
"""


def run_child(code: str, blocked: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` after :data:`BLOCKER` in a fresh interpreter that refuses the ``blocked`` modules."""
    child_env = {k: v for k, v in os.environ.items() if k != "SCOREKIT_BACKEND"}
    child_env.update({"PYTHONPATH": str(PYTHON_DIR), **(env or {})})
    return subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", BLOCKER + code, blocked],
                          capture_output=True, text=True, env=child_env, timeout=300)


def parent_values() -> dict:
    """The workload's values computed here, on the compiled core (Numba is installed here)."""
    scope: dict = {}
    exec(WORKLOAD, scope)
    return scope["values"]


def test_first_score_imports_neither_numba_nor_scipy_nor_numpy() -> None:
    code = """
import scorekit as ek
bare = sorted(m for m in ("numpy", "numba", "scipy", "pydantic", "rapidfuzz") if m in sys.modules)
score = ek.score("hello wrld", "hello world")
wer = ek.score("hello wrld", "hello world", metric="wer")
heavy = sorted(m for m in ("numpy", "numba", "llvmlite", "scipy", "pydantic") if m in sys.modules)
print(json.dumps({"bare": bare, "heavy": heavy, "values": [score.value, wer.value],
                  "backend": ek._kernels.current_backend()}))
"""
    out = run_child(code, blocked="")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got == {"bare": [], "heavy": [], "values": [1 / 11, 0.5], "backend": "rust"}


TEXT = st.text(alphabet=st.sampled_from("ab c\tdé\u00a0\u3000x"), max_size=30)


@settings(max_examples=200, deadline=None)
@given(pred=TEXT, gold=TEXT, mode=st.sampled_from(["cer", "wer"]))
def test_pair_counts_equal_the_batch_kernels_on_both_backends(pred: str, gold: str, mode: str) -> None:
    """One pair through ``_core.text_pair_counts`` counts what the batch kernels count."""
    expected = [int(v) for v in count_errors([pred], [gold], mode, threads=1)[0]]
    assert list(_kernels._core.text_pair_counts(gold, pred, mode)) == expected
    for backend in BACKENDS:
        with use_backend(backend):
            assert list(count_pair(pred, gold, mode)) == expected


def test_pair_counts_reject_what_the_batch_path_rejects() -> None:
    for pred, gold, bad in (("a\ud800", "b", "pred[0]"), ("a", "b\udc00", "gold[0]"), ("\ud800", "\udc00", "pred[0]")):
        for backend in BACKENDS:
            with use_backend(backend), pytest.raises(ValueError, match=rf"^{re.escape(bad)} contains a lone surrogate"):
                StringMetric("cer")(pred, gold)
    with pytest.raises(ValueError, match="mode must be 'cer' or 'wer', got 'xer'"):
        _kernels._core.text_pair_counts("a", "b", "xer")
    with pytest.raises(TypeError):
        _kernels._core.text_pair_counts(b"a", "b", "cer")


def test_compiled_core_scores_everything_without_numba() -> None:
    code = WORKLOAD + """
print(json.dumps({"values": values, "attempts": attempts, "loaded": "numba" in sys.modules}))
"""
    out = run_child(code, blocked="numba,llvmlite")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["attempts"] == [] and got["loaded"] is False
    assert got["values"] == json.loads(json.dumps(parent_values()))
    assert got["values"]["cer"] == 1 / 11 and got["values"]["rover"] == "the cat sat"


def test_choosing_numba_without_numba_says_what_to_install() -> None:
    code = """
from scorekit import _kernels
from scorekit.registry import MissingExtraError
try:
    _kernels.set_backend("numba")
except MissingExtraError as exc:
    print(json.dumps({"message": str(exc), "backend": _kernels.current_backend()}))
"""
    out = run_child(code, blocked="numba")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["backend"] == "rust"
    assert got["message"].startswith("the numba backend: Numba cannot be imported")
    assert "pip install scorekit[numba]" in got["message"]

    out = run_child("import scorekit as ek\nek.score('a', 'b')\n", blocked="numba", env={"SCOREKIT_BACKEND": "numba"})
    assert out.returncode == 1
    assert "MissingExtraError: SCOREKIT_BACKEND=numba: Numba cannot be imported" in out.stderr
    assert "pip install scorekit[numba]" in out.stderr


def test_without_core_and_numba_the_first_kernel_call_says_what_to_install() -> None:
    code = """
import scorekit as ek
from scorekit.errors import ScorekitError
from scorekit.registry import MissingExtraError
result = {"version": isinstance(ek.__version__, str)}
try:
    ek.score("hello wrld", "hello world")
except MissingExtraError as exc:
    result["message"] = str(exc)
    result["kinds"] = [isinstance(exc, ImportError), isinstance(exc, ScorekitError)]
try:
    ek._kernels.set_backend("rust")
except MissingExtraError as exc:
    result["rust"] = str(exc)
print(json.dumps(result))
"""
    out = run_child(code, blocked="numba,llvmlite,scorekit._core")
    assert out.returncode == 0, out.stderr  # -W error::RuntimeWarning: no "using Numba" warning either
    got = json.loads(out.stdout)
    assert got["version"] is True and got["kinds"] == [True, True]
    message = got["message"]
    assert message.startswith("the levenshtein kernels: the compiled core is not available")
    assert "Numba cannot be imported" in message
    assert "pip install scorekit[numba]" in message and "build the core (`make build`" in message
    assert got["rust"].startswith("the rust backend: scorekit._core failed to import")


def test_parent_values_are_real_results() -> None:
    """The workload compared above computes real results: known values, and the Numba backend agrees."""
    values = parent_values()
    assert values["cer"] == 1 / 11 and values["wer"] == 0.5 and values["corpus"] == 1 / 3
    assert values["levenshtein"] == [3, 2] and values["tree"] == 2.0 and values["rover"] == "the cat sat"
    assert values["teds"] == 1 - 1 / 4  # one renamed cell text among the four nodes table, tr, td, td
    with use_backend("numba"):
        assert parent_values() == values
