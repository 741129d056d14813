"""Feedback on one answer: the body of `POST /api/feedback` (docs/protocol.md, "Feedback").

    {"answerId": "sources-req-…", "question": "How do I…?",
     "sources": [{"path": "/guide/setup/", "anchor": "install"}],
     "vote": "down", "comment": "It cites the old page."}

`answerId` is the id of the answer's `cite` event (what the log keys a question by);
`question` and `sources` are what the reader saw, so feedback on an answer the backend
never logged (a static answer in the page) still says what it was about. `comment` is
optional and only with `down`: the widget asks for it after a thumbs down. Strict like the
Ask request: an unknown field, a wrong type or a bound passed is invalid.
"""

from typing import Annotated, Any, Final, Literal

from pydantic import Field, model_validator

from .diagnostics import DecodeResult, Diagnostic
from .identifiers import js_chars
from .limits import (
    ASK_TOOL_ID_MAX_CHARS,
    FEEDBACK_COMMENT_MAX_CHARS,
    FEEDBACK_MAX_BODY_BYTES,
    FEEDBACK_MAX_SOURCES,
    FEEDBACK_QUESTION_MAX_CHARS,
    FEEDBACK_SOURCE_ANCHOR_MAX_CHARS,
    FEEDBACK_SOURCE_PATH_MAX_CHARS,
)
from .text_metrics import js_is_blank, utf8_length
from .wire_fields import NOT_NULL
from .wire_json import JSON_INVALID, parse_json
from .wire_model import StrictWireModel

FEEDBACK_INVALID: Final = Diagnostic("ASK_INVALID_REQUEST", "The feedback is invalid.")
Vote = Literal["up", "down"]


class FeedbackSource(StrictWireModel):
    """One cited section as the reader saw it."""

    path: Annotated[str, js_chars(1, FEEDBACK_SOURCE_PATH_MAX_CHARS)]
    anchor: Annotated[str | None, NOT_NULL, js_chars(1, FEEDBACK_SOURCE_ANCHOR_MAX_CHARS)] = None


class FeedbackRequest(StrictWireModel):
    """A reader's thumbs up or down on one answer."""

    answer_id: Annotated[str, js_chars(1, ASK_TOOL_ID_MAX_CHARS)] = Field(alias="answerId")
    question: Annotated[str, js_chars(1, FEEDBACK_QUESTION_MAX_CHARS)]
    sources: Annotated[list[FeedbackSource], Field(max_length=FEEDBACK_MAX_SOURCES)] = Field(
        default_factory=list
    )
    vote: Vote
    comment: Annotated[str | None, NOT_NULL, js_chars(0, FEEDBACK_COMMENT_MAX_CHARS)] = None

    @model_validator(mode="after")
    def _comment_only_on_down(self) -> "FeedbackRequest":
        if js_is_blank(self.question):
            raise ValueError("blank question")
        if self.comment is not None and self.vote != "down":
            raise ValueError("a comment comes only with a thumbs down")
        return self


def parse_feedback(data: str | bytes | bytearray) -> DecodeResult:
    """Decode an untrusted feedback body; `.value` is a `FeedbackRequest`. Never raises."""
    try:
        size = utf8_length(data) if isinstance(data, str) else len(data)
        if size > FEEDBACK_MAX_BODY_BYTES:
            return DecodeResult.failure(FEEDBACK_INVALID)
        candidate: Any = parse_json(data)
        if candidate is JSON_INVALID or type(candidate) is not dict:
            return DecodeResult.failure(FEEDBACK_INVALID)
        return DecodeResult.success(FeedbackRequest.model_validate(candidate))
    except Exception:  # a decoder never raises
        return DecodeResult.failure(FEEDBACK_INVALID)
