"""A reader's thumbs up or down, sent to the backend's feedback endpoint (docs/protocol.md).

Where it goes (`feedback_url`):

- the element's `feedback-endpoint`, when the owner names one (a site that answers in the
  page from its static index has no backend of its own: this is how its feedback reaches
  one);
- else, with an `endpoint`, the `feedback` beside it (`/api/ask` -> `/api/feedback`; a
  turn-protocol endpoint alike, `/api/turn` -> `/api/feedback`, where the reference backend
  answers feedback on turn answers too);
- else nowhere: the thumbs stay in the reader's browser, as before.

What is sent (`feedback_body`) is what the reader saw: the answer's id (the id of its
`cite` event, which the backend's question log keys on; the message id for an answer made
in the page), the question it answered, the sections it cited, the vote and, on a thumbs
down, the optional comment. Every field is cut to the wire bounds first, so a long
question never makes the request invalid. Sending is best effort: a failure is not the
reader's problem, and nothing is retried.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..protocol.content import decode_assistant_content
from ..protocol.limits import (
    ASK_TOOL_ID_MAX_CHARS,
    FEEDBACK_COMMENT_MAX_CHARS,
    FEEDBACK_MAX_SOURCES,
    FEEDBACK_QUESTION_MAX_CHARS,
    FEEDBACK_SOURCE_ANCHOR_MAX_CHARS,
    FEEDBACK_SOURCE_PATH_MAX_CHARS,
)
from ..protocol.text_metrics import js_is_blank, js_slice, js_trim
from ..protocol.wire_json import dump_json
from ..transports.port import AskTransport
from .message import ChatMessage, Feedback
from .widget_config import WidgetConfig

FEEDBACK_NAME: Final = "feedback"
SOURCE_LIST_KEY: Final = "source-list"


def feedback_url(config: WidgetConfig) -> str | None:
    """Where this element sends feedback, or None (kept in the browser only)."""
    if config.feedback_endpoint is not None:
        return config.feedback_endpoint
    if not config.endpoint_set:
        return None
    endpoint = config.endpoint.split("#", 1)[0].split("?", 1)[0]
    return endpoint.rsplit("/", 1)[0] + "/" + FEEDBACK_NAME


def _source_list(content: str) -> Mapping[str, Any] | None:
    decoded = decode_assistant_content(content)
    if not decoded.ok:
        return None
    for part in decoded.parts:
        frame = part.get("frame") if part.get("kind") == "component" else None
        if isinstance(frame, Mapping) and frame.get("componentKey") == SOURCE_LIST_KEY:
            return frame
    return None


def _cited(frame: Mapping[str, Any] | None) -> list[dict[str, str]]:
    if frame is None:
        return []
    cited: list[dict[str, str]] = []
    for source in frame.get("props", {}).get("sources", [])[:FEEDBACK_MAX_SOURCES]:
        url = source.get("url") if isinstance(source, Mapping) else None
        if not isinstance(url, str) or not url:
            continue
        path, _, anchor = url.partition("#")
        entry = {"path": js_slice(path, FEEDBACK_SOURCE_PATH_MAX_CHARS) or "/"}
        if anchor:
            entry["anchor"] = js_slice(anchor, FEEDBACK_SOURCE_ANCHOR_MAX_CHARS)
        cited.append(entry)
    return cited


def feedback_body(
    messages: Sequence[ChatMessage], message_id: str, vote: Feedback, comment: str | None = None
) -> dict[str, Any] | None:
    """The wire body for feedback on `message_id`, or None (no such answer, no question)."""
    index = next((i for i, m in enumerate(messages) if m.id == message_id), None)
    if index is None or messages[index].role != "assistant":
        return None
    question = next((m.content for m in reversed(messages[:index]) if m.role == "user"), None)
    if question is None or js_is_blank(question):
        return None
    answer = messages[index]
    frame = _source_list(answer.content)
    instance = frame.get("instanceId") if frame is not None else None
    answer_id = instance if isinstance(instance, str) and instance else answer.id
    body: dict[str, Any] = {
        "answerId": js_slice(answer_id, ASK_TOOL_ID_MAX_CHARS),
        "question": js_slice(question, FEEDBACK_QUESTION_MAX_CHARS),
        "sources": _cited(frame),
        "vote": vote,
    }
    if vote == "down" and comment is not None and not js_is_blank(comment):
        body["comment"] = js_slice(js_trim(comment), FEEDBACK_COMMENT_MAX_CHARS)
    return body


class FeedbackSender:
    """Posts feedback bodies to one URL over the widget's transport."""

    def __init__(self, url: str, transport: AskTransport) -> None:
        self.url = url
        self.transport = transport

    async def send(self, body: Mapping[str, Any]) -> bool:
        """POST one body; True when the backend took it (2xx). Never raises."""
        try:
            response = await self.transport.post(
                self.url, {"content-type": "application/json"}, dump_json(body).encode("utf-8")
            )
        except Exception:  # offline, refused: the vote is still kept in the browser
            return False
        status = response.status
        await response.cancel()
        return 200 <= status < 300
