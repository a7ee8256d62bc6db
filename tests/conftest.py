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

from scorekit._kernels import BACKENDS, use_backend

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("fuzz", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest):
    """Run the test with every kernel call dispatched to ``request.param``."""
    with use_backend(request.param):
        yield request.param
