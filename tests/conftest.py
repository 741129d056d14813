"""Shared test helpers: where the fixtures live and how to load them."""

import json
from pathlib import Path
from typing import Any

import agentskit_web.chat.conformance_subjects  # noqa: F401 - registers the chat-level subjects

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def load_fixture(name: str) -> dict[str, Any]:
    """Parse one conformance fixture document from `fixtures/`."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def read_fixture_bytes(relative: str) -> bytes:
    """Bytes of a recorded file under `fixtures/` (the conformance loader)."""
    return (FIXTURES / relative).read_bytes()
