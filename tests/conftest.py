"""Test isolation: no shared DSPy cache or settings between tests, offline LiteLLM."""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("DSPY_CACHEDIR", tempfile.mkdtemp(prefix="madspy-test-dspy-cache-"))

import dspy
import pytest

from madspy.testing import register_provider, register_script

register_provider()  # scripted/<name> models: the tests' deterministic, offline backend
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
_names = itertools.count()


@pytest.fixture(autouse=True)
def isolated_dspy():
    """Each test gets fresh in-memory-free DSPy caching and default settings."""
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    with dspy.context(lm=None, adapter=None, track_usage=False):
        yield


@pytest.fixture
def scripted():
    """Register a script under a fresh name; returns its model string."""

    def make(script, latency_s: float = 0.0) -> str:
        return register_script(f"test{next(_names)}", script, latency_s=latency_s)

    return make


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server's URL for the session (see ``tests/postgres.py``); skips where none is installed."""
    import postgres

    if os.environ.get(postgres.ENV):
        yield os.environ[postgres.ENV]
        return
    if postgres.server_bin() is None:
        pytest.skip("PostgreSQL is not installed here (.ci/run installs Debian's postgresql)")
    with postgres.throwaway_cluster() as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of an empty database of its own for one test."""
    import postgres

    return postgres.fresh_database(postgres_server, f"t{next(_names)}")
