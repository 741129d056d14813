"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

SessionSnapshot: Any = None
decode_session_snapshot: Any = None
