"""Shared fixtures: ``backend`` runs a test once per kernel backend (Rust core and Numba twin).

Hypothesis profiles (see ``docs/fuzzing.md``): ``dev`` (the default: 100 examples, no deadline),
``ci`` (loaded when the ``CI`` environment variable is set: few examples, reproducible) and
``fuzz`` (``pytest --hypothesis-profile=fuzz``: long runs). Tests that pin ``max_examples`` in
their own ``@settings`` keep it under every profile.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import core_check

CORE_CHECK = os.environ.get("SCOREKIT_CORE_CHECK", "")
if CORE_CHECK:
    core_check.install(CORE_CHECK)

from scorekit._kernels import BACKENDS, use_backend  # noqa: E402  (after the compiled module is replaced)

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("fuzz", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


#: The backends the ``backend`` fixture runs each test on: only Numba in a core check.
TESTED_BACKENDS = ("numba",) if CORE_CHECK else BACKENDS


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A poisoned run fails when anything took a name from the compiled module."""
    if core_check.touched:
        names = sorted(set(core_check.touched))
        session.config.get_terminal_writer().line(f"scorekit._core was used under the Numba backend: {names}", red=True)
        session.exitstatus = 1


@pytest.fixture(params=TESTED_BACKENDS)
def backend(request: pytest.FixtureRequest):
    """Run the test with every kernel call dispatched to ``request.param``."""
    with use_backend(request.param):
        yield request.param
