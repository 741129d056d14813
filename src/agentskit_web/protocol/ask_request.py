"""PLACEHOLDER: being written; replace this whole file."""

from typing import Any

AnswerEscalation: Any = None
AskRequest: Any = None
normalize_knowledge_key: Any = None
parse_answer_envelope: Any = None
parse_ask_request: Any = None
