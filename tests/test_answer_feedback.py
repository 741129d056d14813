"""chat/answer_feedback.py: where the widget sends a vote, and what it sends (pure logic;
the browser path is e2e/test_insight.py)."""

from typing import Any

import pytest

from agentskit_web.chat.answer_feedback import FeedbackSender, feedback_body, feedback_url
from agentskit_web.chat.ask.projection import source_list_frame
from agentskit_web.chat.message import ChatMessage
from agentskit_web.chat.widget_config import config_from_attributes
from agentskit_web.protocol.content import encode_assistant_content
from agentskit_web.protocol.feedback import parse_feedback
from agentskit_web.protocol.limits import (
    FEEDBACK_COMMENT_MAX_CHARS,
    FEEDBACK_MAX_SOURCES,
    FEEDBACK_QUESTION_MAX_CHARS,
)
from agentskit_web.protocol.wire_json import dump_json


@pytest.mark.parametrize(
    ("attributes", "url"),
    [
        ({"endpoint": "/api/ask"}, "/api/feedback"),
        ({"endpoint": "/docs/x/ask?corpus=docs#top"}, "/docs/x/feedback"),
        ({"endpoint": "https://ask.example/v1/ask"}, "https://ask.example/v1/feedback"),
        ({"endpoint": "/api/ask", "feedback-endpoint": "/owner/votes"}, "/owner/votes"),
        # Static answers (no endpoint): only to the endpoint the owner names.
        ({}, None),
        ({"feedback-endpoint": "/api/feedback"}, "/api/feedback"),
        ({"feedback-endpoint": "  "}, None),
        # The turn protocol's endpoint too: the backend answers feedback beside it.
        ({"protocol": "turn", "endpoint": "/api/turn"}, "/api/feedback"),
        ({"protocol": "turn", "endpoint": "/v1/chat/turn"}, "/v1/chat/feedback"),
        ({"protocol": "turn"}, None),
    ],
)
def test_feedback_url(attributes: dict[str, str], url: str | None) -> None:
    assert feedback_url(config_from_attributes(attributes)) == url


def message(id: str, role: Any, content: str) -> ChatMessage:
    return ChatMessage(id, role, content, "complete", "2026-01-01T00:00:00Z")


def answer(sources: list[dict[str, str]]) -> str:
    frame = source_list_frame("sources-req-abc", {"sources": sources})
    parts: list[Any] = [{"kind": "text", "text": "The answer."}]
    if frame is not None:
        parts.append({"kind": "component", "frame": frame})
    return encode_assistant_content(parts)


def test_body_is_what_the_reader_saw_and_parses_on_the_server() -> None:
    sources = [
        {"title": "Install", "path": "/guide/setup/", "anchor": "install"},
        {"title": "Home", "path": "/"},
    ]
    messages = [
        message("u1", "user", "How do I install it?"),
        message("a1", "assistant", answer(sources)),
    ]
    body = feedback_body(messages, "a1", "down", "  Old page.  ")
    assert body == {
        "answerId": "sources-req-abc",
        "question": "How do I install it?",
        "sources": [{"path": "/guide/setup/", "anchor": "install"}, {"path": "/"}],
        "vote": "down",
        "comment": "Old page.",
    }
    assert parse_feedback(dump_json(body)).ok
    up = feedback_body(messages, "a1", "up", "ignored on up")
    assert up is not None and "comment" not in up and parse_feedback(dump_json(up)).ok


def test_bounds_are_applied_before_sending() -> None:
    sources = [{"title": f"S{n}", "path": f"/p{n}/"} for n in range(FEEDBACK_MAX_SOURCES + 3)]
    messages = [
        message("u1", "user", "q" * (FEEDBACK_QUESTION_MAX_CHARS + 10)),
        message("a1", "assistant", answer(sources)),
    ]
    body = feedback_body(messages, "a1", "down", "c" * (FEEDBACK_COMMENT_MAX_CHARS + 10))
    assert body is not None
    assert len(body["question"]) == FEEDBACK_QUESTION_MAX_CHARS
    assert len(body["comment"]) == FEEDBACK_COMMENT_MAX_CHARS
    assert len(body["sources"]) == FEEDBACK_MAX_SOURCES
    assert parse_feedback(dump_json(body)).ok


def test_no_body_without_an_answer_or_a_question() -> None:
    plain = message("a1", "assistant", "Plain text answer, no sources.")
    assert feedback_body([plain], "a1", "up") is None  # no question before it
    messages = [message("u1", "user", "Why?"), plain]
    assert feedback_body(messages, "u1", "up") is None  # a question is not an answer
    assert feedback_body(messages, "nope", "up") is None
    body = feedback_body(messages, "a1", "up")
    assert body == {"answerId": "a1", "question": "Why?", "sources": [], "vote": "up"}


class Response:
    def __init__(self, status: int) -> None:
        self.status = status
        self.headers: dict[str, str] = {}
        self.cancelled = False

    async def cancel(self) -> None:
        self.cancelled = True


class Transport:
    def __init__(self, status: int | None) -> None:
        self.status = status
        self.sent: list[tuple[str, dict[str, str], bytes]] = []
        self.response: Response | None = None

    async def post(self, url: str, headers: Any, body: bytes) -> Response:
        self.sent.append((url, dict(headers), body))
        if self.status is None:
            raise OSError("offline")
        self.response = Response(self.status)
        return self.response


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "sent"), [(204, True), (429, False), (None, False)])
async def test_sender_is_best_effort(status: int | None, sent: bool) -> None:
    transport = Transport(status)
    sender = FeedbackSender("/api/feedback", transport)
    assert await sender.send({"vote": "up"}) is sent
    assert transport.sent == [
        ("/api/feedback", {"content-type": "application/json"}, b'{"vote":"up"}')
    ]
    if transport.response is not None:
        assert transport.response.cancelled


def test_plugins_write_the_feedback_endpoint_attribute() -> None:
    from agentskit_web.integrations.embed import EmbedConfigError, element_tag, embed_options

    options = embed_options({"endpoint": None, "feedback_endpoint": "/api/feedback"})
    tag = element_tag(options, lambda path: "../" + path)
    assert 'feedback-endpoint="/api/feedback"' in tag and "endpoint=" not in tag.replace(
        "feedback-endpoint=", ""
    )
    assert "feedback-endpoint" not in element_tag(embed_options({}), lambda path: path)
    with pytest.raises(EmbedConfigError, match="feedback_endpoint"):
        embed_options({"feedback_endpoint": '/x" onclick="y'})


def test_the_testing_kit_records_feedback() -> None:
    import httpx

    from agentskit_web.testing.scripted_server import AskServer

    with AskServer() as server:
        reply = httpx.post(f"{server.url}/api/feedback", json={"vote": "up"})
        assert reply.status_code == 204
        assert server.feedback == [{"vote": "up"}]
