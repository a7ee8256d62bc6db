"""Shared fixtures: ``backend`` runs a test once per kernel backend (Rust core and Numba twin)."""

from __future__ import annotations

import pytest

from scorekit._kernels import BACKENDS, use_backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest):
    """Run the test with every kernel call dispatched to ``request.param``."""
    with use_backend(request.param):
        yield request.param
