"""The question log (`serve-ask --question-log`) and `POST /api/feedback`, on a real uvicorn.

What is kept is read back from the SQLite file itself (not through the log's own reader),
so a column that should not exist, or an address that slipped into one, fails the test.
"""

import datetime as dt
import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import ThreadedUvicorn, ask_body, site, turn_submit, write_docs
from agentskit_web.protocol.content import decode_assistant_content
from agentskit_web.protocol.limits import FEEDBACK_COMMENT_MAX_CHARS, FEEDBACK_MAX_BODY_BYTES
from agentskit_web.server.ask_serve import AskServeConfig, StartupError, build_app
from agentskit_web.server.question_log import (
    QUESTION_LOG_TEXT_MAX_CHARS,
    QuestionLog,
    mask_personal,
)

ANSWERED = "How do I install the widget?"
NEAR_MISS = "How do I configure the content policy of nginx?"
DECLINED = "What is the capital of Mongolia?"
TOKEN = "s3cret-token-for-tests"


def config(tmp_path: Path, **changes: Any) -> AskServeConfig:
    site_file = tmp_path / "site.json"
    site_file.write_text(json.dumps(site()), encoding="utf-8")
    settings: dict[str, Any] = {
        "site": site_file,
        "docs": write_docs(tmp_path / "docs"),
        "pace_seconds": 0.0,
        "question_log": tmp_path / "questions.db",
        **changes,
    }
    return AskServeConfig(**settings)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ThreadedUvicorn]:
    with ThreadedUvicorn(build_app(config(tmp_path)), AskServeConfig()) as running:
        yield running


def ask(url: str, question: str, **headers: str) -> tuple[int, str | None]:
    """POST one question; the status and the answer's id (its cite event's)."""
    reply = httpx.post(
        f"{url}/api/ask",
        json=ask_body(question, sessionId="reader-session-1"),
        headers=headers,
        timeout=30,
    )
    answer_id = None
    if reply.status_code == 200:
        for line in reply.text.splitlines():
            event = json.loads(line)
            if event.get("name") == "cite":
                answer_id = event["id"]
    return reply.status_code, answer_id


def feedback(**changes: Any) -> dict[str, Any]:
    """A feedback body; a change to None leaves that field out."""
    body = {
        "answerId": "sources-req-x",
        "question": ANSWERED,
        "sources": [{"path": "/docs/install.html", "anchor": "install-the-widget"}],
        "vote": "down",
        "comment": "Wrong page",
        **changes,
    }
    return {key: value for key, value in body.items() if value is not None}


def settled(path: Path, done: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    """The rows once `done` holds: the backend writes just after its reply is sent."""
    deadline = time.monotonic() + 10
    found = rows(path) if path.exists() else []
    while not done(found) and time.monotonic() < deadline:
        time.sleep(0.02)
        found = rows(path) if path.exists() else []
    return found


def rows(path: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in db.execute("SELECT * FROM questions ORDER BY rowid")]
    finally:
        db.close()


def test_log_keeps_what_the_owner_needs_and_nothing_about_the_reader(
    server: ThreadedUvicorn, tmp_path: Path
) -> None:
    client_key = "client-key-7f3a9c"
    agent = "Mozilla/5.0 (TestReader)"
    headers = {"x-client-key": client_key, "user-agent": agent, "x-forwarded-for": "198.51.100.23"}
    status, answer_id = ask(server.url, ANSWERED, **headers)
    near_status, _ = ask(server.url, NEAR_MISS, **headers)
    declined_status, _ = ask(server.url, DECLINED, **headers)
    masked_status, _ = ask(server.url, "Mail me at reader@example.org or +1 555 0100 2345?")
    assert (status, near_status, declined_status, masked_status) == (200, 200, 422, 422)
    assert answer_id is not None
    sent = httpx.post(
        f"{server.url}/api/feedback",
        json=feedback(answerId=answer_id, comment="bad, write to me: a.b@example.com"),
        headers=headers,
    )
    assert sent.status_code == 204 and sent.content == b""

    logged = settled(
        tmp_path / "questions.db",
        lambda found: len(found) == 4 and found[0]["feedback"] is not None,
    )
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert set(logged[0]) == {
        "answer_id",
        "day",
        "corpus",
        "question",
        "verdict",
        "cited",
        "feedback",
        "comment",
    }
    assert [(r["question"], r["verdict"]) for r in logged] == [
        (ANSWERED, "answered"),
        (NEAR_MISS, "near miss"),
        (DECLINED, "declined"),
        ("Mail me at [email] or +[number]?", "declined"),
    ]
    assert {r["day"] for r in logged} == {today} and {r["corpus"] for r in logged} == {"docs"}
    first = logged[0]
    assert first["answer_id"] == answer_id
    assert json.loads(first["cited"])[0].startswith("/docs/install.html")
    assert (first["feedback"], first["comment"]) == ("down", "bad, write to me: [email]")
    assert json.loads(logged[2]["cited"]) == []
    # Nothing about who asked, anywhere in the file (the WAL included).
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("questions.db*"))
    for secret in (
        "127.0.0.1",
        "198.51.100.23",
        client_key,
        agent,
        "reader-session-1",
        "reader@example.org",
        "a.b@example.com",
        "555 0100 2345",
    ):
        assert secret.encode() not in raw, secret


def test_feedback_on_an_answer_not_logged_keeps_what_the_reader_saw(
    server: ThreadedUvicorn, tmp_path: Path
) -> None:
    """A static answer in the page has no logged question: its feedback is a row of its own."""
    reply = httpx.post(
        f"{server.url}/api/feedback", json=feedback(answerId="static-42", vote="up", comment=None)
    )
    assert reply.status_code == 204
    (row,) = settled(tmp_path / "questions.db", lambda found: len(found) == 1)
    assert (row["answer_id"], row["verdict"], row["feedback"]) == ("static-42", None, "up")
    assert json.loads(row["cited"]) == ["/docs/install.html#install-the-widget"]


def test_a_vote_and_its_comment_land_whatever_their_order(tmp_path: Path) -> None:
    """The widget sends the thumbs down at once and the comment in a second request; the two
    may be written in either order (seen in e2e/test_insight.py under load)."""
    log = QuestionLog(tmp_path / "q.db", days=30)
    today = dt.date(2026, 12, 4)
    log.record_question("a1", today, "docs", "q", "answered", [])
    log.record_feedback("a1", today, "docs", "q", [], "down", "too short")
    log.record_feedback("a1", today, "docs", "q", [], "down", None)  # the vote, written late
    (row,) = rows(tmp_path / "q.db")
    assert (row["feedback"], row["comment"]) == ("down", "too short")
    log.record_feedback("a1", today, "docs", "q", [], "up", None)  # a comment is a 👎's
    (row,) = rows(tmp_path / "q.db")
    assert (row["feedback"], row["comment"]) == ("up", None)
    log.close()


def test_a_vote_written_before_its_question_keeps_both(tmp_path: Path) -> None:
    """The vote can be written first (another instance took it, or it won the race): the
    question's write then fills in its verdict, text and pages and keeps the vote."""
    log = QuestionLog(tmp_path / "q.db", days=30)
    today = dt.date(2026, 12, 4)
    log.record_feedback("a1", today, "docs", "as the reader saw it", ["/x/"], "down", "wrong")
    log.record_question("a1", today, "docs", "How do I install?", "answered", ["/install/#a"])
    (row,) = rows(tmp_path / "q.db")
    assert (row["question"], row["verdict"], json.loads(row["cited"])) == (
        "How do I install?",
        "answered",
        ["/install/#a"],
    )
    assert (row["feedback"], row["comment"]) == ("down", "wrong")
    log.close()


def test_retention_is_enforced_on_write(tmp_path: Path) -> None:
    """Rows written on their own day; the next write drops each one past 30 days."""
    log = QuestionLog(tmp_path / "q.db", days=30)
    today = dt.date(2026, 12, 4)
    for age in (400, 30, 29, 1):
        day = today - dt.timedelta(days=age)
        log.record_question(f"a{age}", day, "docs", f"asked {age} days ago", "answered", [])
    assert [r["answer_id"] for r in rows(tmp_path / "q.db")] == ["a30", "a29", "a1"]
    # Today's write: 29 days old is the last day kept (30 days counting today), 30 goes.
    log.record_question("a0", today, "docs", "q", "answered", [])
    assert [r["answer_id"] for r in rows(tmp_path / "q.db")] == ["a29", "a1", "a0"]
    log.record_feedback("a0", today + dt.timedelta(days=29), "docs", "q", [], "up", None)
    assert [r["answer_id"] for r in rows(tmp_path / "q.db")] == ["a0"]
    log.close()


def test_retention_bounds(tmp_path: Path) -> None:
    with pytest.raises(StartupError, match="question-log-days"):
        build_app(config(tmp_path, question_log_days=0))
    QuestionLog(tmp_path / "one.db", days=1).close()


def test_masking_and_the_text_bound() -> None:
    assert mask_personal("call 0612345678 or 06-12-34-56-78") == "call [number] or [number]"
    assert mask_personal("version 2.14.4, port 8000, 12345") == "version 2.14.4, port 8000, 12345"
    assert (
        mask_personal("x" * (QUESTION_LOG_TEXT_MAX_CHARS + 5)) == "x" * QUESTION_LOG_TEXT_MAX_CHARS
    )


def test_no_log_by_default(tmp_path: Path) -> None:
    app = build_app(config(tmp_path, question_log=None))
    with ThreadedUvicorn(app, AskServeConfig()) as running:
        assert ask(running.url, ANSWERED)[0] == 200
        assert httpx.post(f"{running.url}/api/feedback", json=feedback()).status_code == 204
    assert not list(tmp_path.glob("*.db*"))


# --------------------------------------------------------------------------- refusals


def padded(size: int) -> bytes:
    """A valid feedback body of exactly `size` bytes (JSON whitespace takes the padding)."""
    data = json.dumps(feedback()).encode()
    return data + b" " * (size - len(data))


def test_feedback_body_at_the_limit_and_past_it(server: ThreadedUvicorn) -> None:
    sent = {"content-type": "application/json"}
    url = f"{server.url}/api/feedback"
    at = httpx.post(url, content=padded(FEEDBACK_MAX_BODY_BYTES), headers=sent)
    past = httpx.post(url, content=padded(FEEDBACK_MAX_BODY_BYTES + 1), headers=sent)
    assert at.status_code == 204
    assert past.status_code == 413 and past.json()["error"]["code"] == "ASK_INVALID_REQUEST"
    assert past.json()["error"]["message"] == "The feedback is larger than 8,192 bytes."


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        ({"comment": "c" * FEEDBACK_COMMENT_MAX_CHARS}, 204),
        ({"comment": "c" * (FEEDBACK_COMMENT_MAX_CHARS + 1)}, 400),
        ({"vote": "up"}, 400),  # a comment only comes with a thumbs down
        ({"vote": "up", "comment": None}, 204),
        ({"comment": None}, 204),
        ({"sources": []}, 204),
        ({"vote": "sideways", "comment": None}, 400),
        ({"question": " "}, 400),
        ({"sources": [{"path": "/a/"}] * 8}, 204),
        ({"sources": [{"path": "/a/"}] * 9}, 400),
        ({"siteId": "other-site"}, 400),
    ],
)
def test_feedback_is_parsed_strictly(
    server: ThreadedUvicorn, changes: dict[str, Any], status: int
) -> None:
    assert httpx.post(f"{server.url}/api/feedback", json=feedback(**changes)).status_code == status


@pytest.mark.parametrize("path", ["/api/ask", "/api/feedback"])
def test_unauthenticated_and_forged_origin_refused_like_ask(tmp_path: Path, path: str) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"reader {TOKEN}\n", encoding="utf-8")
    app = build_app(
        config(tmp_path, auth="bearer", tokens_file=tokens, cors_origins=["https://docs.example"])
    )
    body = ask_body(ANSWERED) if path == "/api/ask" else feedback()
    with ThreadedUvicorn(app, AskServeConfig()) as running:
        url = running.url + path
        anonymous = httpx.post(url, json=body)
        wrong = httpx.post(url, json=body, headers={"authorization": "Bearer nope"})
        good = {"authorization": f"Bearer {TOKEN}"}
        listed = httpx.post(url, json=body, headers={**good, "origin": "https://docs.example"})
        forged = httpx.post(url, json=body, headers={**good, "origin": "https://evil.example"})
        preflight = httpx.options(
            url, headers={"origin": "https://evil.example", "access-control-request-method": "POST"}
        )
        allowed = httpx.options(
            url, headers={"origin": "https://docs.example", "access-control-request-method": "POST"}
        )
    assert (anonymous.status_code, wrong.status_code) == (401, 401)
    assert anonymous.json()["error"]["code"] == "ASK_UNAUTHORIZED"
    assert listed.status_code in (200, 204)
    assert listed.headers["access-control-allow-origin"] == "https://docs.example"
    # A page on another origin: no CORS grant, so its browser never hands it the reply,
    # and its preflight (which a JSON POST needs) is refused.
    assert "access-control-allow-origin" not in forged.headers
    assert preflight.status_code == 405 and "access-control-allow-origin" not in preflight.headers
    assert allowed.status_code == 204


def test_feedback_spends_the_same_rate_bucket_as_ask(tmp_path: Path) -> None:
    capacity = 5  # refilled too slowly to matter while the test runs
    app = build_app(config(tmp_path, rate_capacity=capacity, rate_refill=0.001))
    with ThreadedUvicorn(app, AskServeConfig()) as running:
        statuses = [
            httpx.post(f"{running.url}/api/feedback", json=feedback()).status_code
            for _ in range(capacity)
        ]
        refused = httpx.post(f"{running.url}/api/ask", json=ask_body(ANSWERED))
        again = httpx.post(f"{running.url}/api/feedback", json=feedback())
    assert statuses == [204] * capacity
    assert refused.status_code == 429 and "retry-after" in refused.headers
    assert again.status_code == 429 and again.json()["error"]["code"] == "ASK_RATE_LIMITED"


# --------------------------------------------------------------------------- turn protocol


def turn(url: str, session_id: str, turn_id: str, question: str) -> dict[str, Any]:
    """One turn-protocol question; the last snapshot's answer message."""
    reply = httpx.post(
        f"{url}/api/turn", json=turn_submit(session_id, turn_id, question), timeout=30
    )
    assert reply.status_code == 200, reply.text
    last = json.loads(reply.text.strip().splitlines()[-1])
    assert last["payload"]["status"] == "complete"
    return last["payload"]["messages"][-1]


def source_list_id(answer: dict[str, Any]) -> str | None:
    """The id the widget sends feedback under: its source list's instance id."""
    decoded = decode_assistant_content(answer["content"])
    for part in decoded.parts:
        frame = part.get("frame") if part.get("kind") == "component" else None
        if isinstance(frame, dict) and frame.get("componentKey") == "source-list":
            return str(frame["instanceId"])
    return None


def test_turn_answers_are_logged_and_take_feedback(server: ThreadedUvicorn, tmp_path: Path) -> None:
    session_id = "TurnReaderSession0000000001"
    answered = turn(server.url, session_id, "t-1", ANSWERED)
    turn(server.url, session_id, "t-2", NEAR_MISS)
    turn(server.url, session_id, "t-3", DECLINED)
    answer_id = source_list_id(answered)
    assert answer_id == "sources-t-1"
    sent = httpx.post(
        f"{server.url}/api/feedback",
        json=feedback(answerId=answer_id, question=ANSWERED, comment="not what I asked"),
    )
    assert sent.status_code == 204
    logged = settled(
        tmp_path / "questions.db",
        lambda found: len(found) == 3 and found[0]["feedback"] is not None,
    )
    assert [(r["answer_id"], r["question"], r["verdict"]) for r in logged] == [
        ("sources-t-1", ANSWERED, "answered"),
        ("sources-t-2", NEAR_MISS, "near miss"),
        ("sources-t-3", DECLINED, "declined"),
    ]
    assert (logged[0]["feedback"], logged[0]["comment"]) == ("down", "not what I asked")
    assert json.loads(logged[0]["cited"])[0].startswith("/docs/install.html")
    assert session_id.encode() not in b"".join(
        p.read_bytes() for p in tmp_path.glob("questions.db*")
    )


def test_feedback_beside_a_turn_path_of_its_own(tmp_path: Path) -> None:
    """A turn endpoint mounted apart from the Ask one gets a feedback route beside it."""
    app = build_app(config(tmp_path, turn_path="/v1/chat/turn"))
    with ThreadedUvicorn(app, AskServeConfig()) as running:
        beside_turn = httpx.post(
            f"{running.url}/v1/chat/feedback", json=feedback(vote="up", comment=None)
        )
        beside_ask = httpx.post(
            f"{running.url}/api/feedback", json=feedback(vote="up", comment=None)
        )
    assert (beside_turn.status_code, beside_ask.status_code) == (204, 204)
