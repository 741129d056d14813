"""Shared test helpers: where the fixtures live and how to load them."""

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

import agentskit_web.chat.conformance_subjects  # noqa: F401 - registers the chat-level subjects
from _postgres_server import postgres_server, postgres_url  # noqa: F401 - real PostgreSQL, loopback
from _redis_server import redis_server  # noqa: F401 - a real redis-server per test, on loopback

# Properties assert correctness, never speed: on a loaded 2-core CI machine a per-example
# deadline or the too-slow health check would fail a correct decoder at random.
settings.register_profile(
    "agentskit", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("agentskit")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    """Parse one conformance fixture document from `fixtures/`."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def read_fixture_bytes(relative: str) -> bytes:
    """Bytes of a recorded file under `fixtures/` (the conformance loader)."""
    return (FIXTURES / relative).read_bytes()
