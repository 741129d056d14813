"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

AskDoneEvent: Any = None
AskErrorEvent: Any = None
AskTextEvent: Any = None
AskToolEvent: Any = None
parse_ask_event: Any = None
