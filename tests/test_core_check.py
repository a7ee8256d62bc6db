"""The core check itself (tests/core_check.py, ``make core-check``) can fail: a poisoned run in
which a test reaches the compiled module fails and names what it took."""

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
ONE_TEST = str(HERE / "test_facade.py") + "::test_the_short_pair_path_gives_what_the_metric_gives"


def _run(**env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("SCOREKIT_BACKEND", "SCOREKIT_CORE_CHECK")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", ONE_TEST],
                          capture_output=True, text=True, cwd=HERE.parent, env={**base, **env}, timeout=600)


def test_a_poisoned_run_fails_when_the_compiled_module_is_reached():
    reached = _run(SCOREKIT_CORE_CHECK="poison")   # the compiled backend, on a recorder
    assert reached.returncode == 1
    assert "scorekit._core was used under the Numba backend: ['text_pair_counts']" in reached.stdout


def test_a_poisoned_run_under_numba_passes():
    clean = _run(SCOREKIT_CORE_CHECK="poison", SCOREKIT_BACKEND="numba")
    assert clean.returncode == 0, clean.stdout[-2000:]
    assert "1 passed" in clean.stdout
