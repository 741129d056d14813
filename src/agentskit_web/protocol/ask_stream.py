"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

AskEventDecoder: Any = None
decode_ask_events: Any = None
