"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

ASSISTANT_CONTENT_PREFIX: Any = None
AssistantContentEncoder: Any = None
decode_assistant_content: Any = None
