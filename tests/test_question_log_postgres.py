"""The question log in PostgreSQL (`--question-log postgresql://...`), on a real server.

Rows are read back with plain SQL, not through the log's reader, so a column that should not
exist, or an address that slipped into one, fails the test. The writer's queue is filled
against a table another connection holds locked, which is how a slow or stalled database
looks from the backend.
"""

import datetime as dt
import json
import logging
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from _ask_helpers import ThreadedUvicorn, ask_body, site, write_docs
from agentskit_web.bench.cluster import LocalCluster
from agentskit_web.bench.local_postgres import LocalPostgres
from agentskit_web.cli import main as cli_main
from agentskit_web.server.ask_app import create_ask_app
from agentskit_web.server.ask_serve import AskServeConfig, StartupError, build_app
from agentskit_web.server.question_log import read_question_log
from agentskit_web.server.question_log_postgres import (
    QUESTION_LOG_QUEUE_MAX_ROWS,
    PostgresQuestionLog,
)
from test_question_log import ANSWERED, DECLINED, NEAR_MISS, ask, feedback

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "pw-Zq81-never-shown"
TODAY = dt.date(2026, 12, 4)


def config(tmp_path: Path, url: str, **changes: Any) -> AskServeConfig:
    site_file = tmp_path / "site.json"
    site_file.write_text(json.dumps(site()), encoding="utf-8")
    settings: dict[str, Any] = {
        "site": site_file,
        "docs": write_docs(tmp_path / "docs"),
        "pace_seconds": 0.0,
        "question_log": url,
        **changes,
    }
    return AskServeConfig(**settings)


def rows(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url) as db:
        cursor = db.execute("SELECT * FROM questions ORDER BY day, seq")
        names = [column.name for column in cursor.description or []]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def settled(url: str, done: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    """The rows once `done` holds (the writer thread writes a moment after the reply)."""
    deadline = time.monotonic() + 20
    found = rows(url)
    while not done(found) and time.monotonic() < deadline:
        time.sleep(0.05)
        found = rows(url)
    return found


def with_password(postgres: LocalPostgres, url: str) -> str:
    """`url` as a role with a password reaches it (trust authentication: it is not checked,
    but the URL carries it, which is what must never be printed)."""
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(  # roles are the cluster's: the first test's database makes it
            "DO $$ BEGIN CREATE ROLE logger LOGIN PASSWORD '" + PASSWORD + "'; "
            "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        )
        db.execute("GRANT ALL ON SCHEMA public TO logger")
    return url.replace("agentskit@", f"logger:{PASSWORD}@")


def closed_port_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"postgresql://logger:{PASSWORD}@127.0.0.1:{port}/questions"


@pytest.fixture
def log_url(postgres_server: LocalPostgres, postgres_url: str) -> str:
    return with_password(postgres_server, postgres_url)


@pytest.fixture
def server(tmp_path: Path, log_url: str) -> Iterator[ThreadedUvicorn]:
    with ThreadedUvicorn(build_app(config(tmp_path, log_url)), AskServeConfig()) as running:
        yield running


class Locked:
    """The log's table locked against writes by another connection (reads still pass): the
    writer's next batch waits on it, as on a stalled database."""

    def __init__(self, url: str) -> None:
        self.db = psycopg.connect(url)
        self.db.execute("LOCK TABLE questions IN EXCLUSIVE MODE")

    def release(self) -> None:
        self.db.rollback()
        self.db.close()


def lock_waiters(url: str) -> int:
    """Sessions of the database waiting for a lock (the writer, once its batch is blocked)."""
    with psycopg.connect(url) as db:
        row = db.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(row[0]) if row else 0


def wait_until(check: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


# --------------------------------------------------------------------------- rows


def test_the_same_rows_as_the_sqlite_log_and_nothing_about_the_reader(
    server: ThreadedUvicorn, log_url: str, tmp_path: Path
) -> None:
    client_key = "client-key-7f3a9c"
    agent = "Mozilla/5.0 (TestReader)"
    headers = {"x-client-key": client_key, "user-agent": agent, "x-forwarded-for": "198.51.100.23"}
    status, answer_id = ask(server.url, ANSWERED, **headers)
    assert ask(server.url, NEAR_MISS, **headers)[0] == 200
    assert ask(server.url, DECLINED, **headers)[0] == 422
    assert ask(server.url, "Mail me at reader@example.org or +1 555 0100 2345?")[0] == 422
    assert status == 200 and answer_id is not None
    sent = httpx.post(
        f"{server.url}/api/feedback",
        json=feedback(answerId=answer_id, comment="bad, write to me: a.b@example.com"),
        headers=headers,
    )
    assert sent.status_code == 204

    logged = settled(log_url, lambda found: len(found) == 4 and found[0]["feedback"] is not None)
    today = dt.datetime.now(dt.UTC).date()
    assert set(logged[0]) == {
        "answer_id", "day", "corpus", "question", "verdict", "cited", "feedback", "comment", "seq",
    }  # fmt: skip
    assert [(r["question"], r["verdict"]) for r in logged] == [
        (ANSWERED, "answered"),
        (NEAR_MISS, "near miss"),
        (DECLINED, "declined"),
        ("Mail me at [email] or +[number]?", "declined"),
    ]
    assert {r["day"] for r in logged} == {today} and {r["corpus"] for r in logged} == {"docs"}
    assert logged[0]["answer_id"] == answer_id
    assert json.loads(logged[0]["cited"])[0].startswith("/docs/install.html")
    assert (logged[0]["feedback"], logged[0]["comment"]) == ("down", "bad, write to me: [email]")
    every_value = json.dumps(logged, default=str)
    for secret in (
        "127.0.0.1", "198.51.100.23", client_key, agent, "reader-session-1",
        "reader@example.org", "a.b@example.com", "555 0100 2345",
    ):  # fmt: skip
        assert secret not in every_value, secret
    # The report reads the same rows from the URL (its password hidden in what it prints).
    read = read_question_log(log_url)
    assert [(r.question, r.verdict, r.feedback) for r in read] == [
        (r["question"], r["verdict"], r["feedback"]) for r in logged
    ]
    shown = subprocess.run(
        [sys.executable, "-m", "agentskit_web.cli", "report", log_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "4 questions" in shown.stdout and PASSWORD not in shown.stdout + shown.stderr
    page = tmp_path / "report.html"
    assert cli_main(["report", log_url, "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "What readers asked: PostgreSQL t_" in html and PASSWORD not in html


def test_a_vote_written_before_its_question_keeps_both(log_url: str) -> None:
    log = PostgresQuestionLog(log_url, days=30)
    log.record_feedback("a1", TODAY, "docs", "as the reader saw it", ["/x/"], "down", "wrong")
    log.record_question("a1", TODAY, "docs", "How do I install?", "answered", ["/install/#a"])
    log.record_question("a2", TODAY, "docs", "q", "answered", [])
    log.record_feedback("a2", TODAY, "docs", "q", [], "down", "too short")
    log.record_feedback("a2", TODAY, "docs", "q", [], "down", None)  # the vote, written late
    log.close()
    first, second = rows(log_url)
    assert (first["question"], first["verdict"], json.loads(first["cited"])) == (
        "How do I install?",
        "answered",
        ["/install/#a"],
    )
    assert (first["feedback"], first["comment"]) == ("down", "wrong")
    assert (second["feedback"], second["comment"]) == ("down", "too short")


def test_retention_is_enforced_on_write(log_url: str) -> None:
    log = PostgresQuestionLog(log_url, days=30)
    for age in (400, 30, 29, 1):
        day = TODAY - dt.timedelta(days=age)
        log.record_question(f"a{age}", day, "docs", f"asked {age} days ago", "answered", [])
    log.close()
    # Each batch deletes what its newest day no longer keeps (30 days counting that day):
    # however the four were batched, the last batch held a1, which keeps a30.
    assert [r["answer_id"] for r in rows(log_url)] == ["a30", "a29", "a1"]
    log = PostgresQuestionLog(log_url, days=30)
    log.record_question("a0", TODAY, "docs", "q", "answered", [])
    log.close()
    assert [r["answer_id"] for r in rows(log_url)] == ["a29", "a1", "a0"]
    with pytest.raises(ValueError, match="question-log-days"):
        PostgresQuestionLog(log_url, days=0)


# --------------------------------------------------------------------------- the queue


def test_the_queue_holds_its_bound_and_drops_and_counts_past_it(log_url: str) -> None:
    log = PostgresQuestionLog(log_url, timeout_seconds=60)  # the lock outlasts the test
    locked = Locked(log_url)
    try:
        log.record_question("first", TODAY, "docs", "q", "answered", [])
        wait_until(lambda: lock_waiters(log_url) == 1)  # the writer holds it, blocked
        for n in range(QUESTION_LOG_QUEUE_MAX_ROWS):
            log.record_question(f"q{n}", TODAY, "docs", "q", "answered", [])
        assert log.dropped == 0  # at the bound: every row queued
        log.record_question("one-too-many", TODAY, "docs", "q", "answered", [])
        log.record_feedback("q1", TODAY, "docs", "q", [], "up", None)
        assert log.dropped == 2  # past it: dropped and counted, the caller never waits
    finally:
        locked.release()
    log.close()
    kept = {r["answer_id"] for r in rows(log_url)}
    assert len(kept) == QUESTION_LOG_QUEUE_MAX_ROWS + 1 and "one-too-many" not in kept
    assert (log.failed, log.written) == (0, QUESTION_LOG_QUEUE_MAX_ROWS + 1)


def test_a_stalled_database_never_holds_an_answer(tmp_path: Path, log_url: str) -> None:
    """The table locked against writes: the writer waits on it (its statement timeout set
    far past the test), the answers do not. A write on the event loop, or one the response
    awaited, would hold these requests past the client's timeout."""
    log = PostgresQuestionLog(log_url, timeout_seconds=120)
    app = create_ask_app(site(), write_docs(tmp_path / "docs"), question_log=log)
    with ThreadedUvicorn(app, AskServeConfig()) as running:
        assert ask(running.url, "warm up: How do I install the widget?")[0] == 200
        settled(log_url, lambda found: len(found) == 1)
        locked = Locked(log_url)
        try:
            statuses = [
                httpx.post(
                    f"{running.url}/api/ask", json=ask_body(ANSWERED), timeout=30
                ).status_code
                for _ in range(5)
            ]
            assert statuses == [200] * 5
            wait_until(lambda: lock_waiters(log_url) == 1)
            assert len(rows(log_url)) == 1  # nothing written while the database stalls
        finally:
            locked.release()
        assert len(settled(log_url, lambda found: len(found) == 6)) == 6
    log.close()
    assert (log.failed, log.dropped) == (0, 0)


def test_the_2_second_statement_timeout_fails_a_batch_and_the_writer_goes_on(
    log_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentskit_web")
    log = PostgresQuestionLog(log_url)
    locked = Locked(log_url)
    try:
        log.record_question("stalled", TODAY, "docs", "q", "answered", [])
        wait_until(lambda: log.failed == 1)  # the server cancelled it after 2 s
    finally:
        locked.release()
    log.record_question("after", TODAY, "docs", "q", "answered", [])
    log.close()
    assert [r["answer_id"] for r in rows(log_url)] == ["after"]
    assert (log.failed, log.written, log.dropped) == (1, 1, 0)
    warned = " ".join(record.getMessage() for record in caplog.records)
    assert "statement timeout" in warned and "logger:***@" in warned and PASSWORD not in warned


def log_rows(url: str) -> dict[str, float]:
    """The instance's `agentskit_question_log_rows` samples by state, from its /metrics."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    found = re.findall(r'^agentskit_question_log_rows\{state="(\w+)"\} (\S+)$', text, re.M)
    return {state: float(value) for state, value in found}


def test_the_writer_counts_are_on_the_metrics_page(tmp_path: Path, log_url: str) -> None:
    with ThreadedUvicorn(build_app(config(tmp_path, log_url)), AskServeConfig()) as running:
        assert ask(running.url, ANSWERED)[0] == 200
        wait_until(lambda: log_rows(running.url).get("written") == 1)
        locked = Locked(log_url)
        try:
            assert ask(running.url, NEAR_MISS)[0] == 200
            wait_until(lambda: log_rows(running.url).get("failed") == 1)  # after its 2 s
        finally:
            locked.release()
        assert log_rows(running.url) == {"written": 1.0, "failed": 1.0, "dropped": 0.0}


# --------------------------------------------------------------------------- refusals


def test_an_unreachable_log_stops_start_up_with_the_password_hidden(tmp_path: Path) -> None:
    url = closed_port_url()
    with pytest.raises(StartupError) as refused:
        build_app(config(tmp_path, url))
    message = str(refused.value)
    assert "logger:***@127.0.0.1" in message and "not reachable" in message
    assert PASSWORD not in message
    # And through the command line: exit 2, one line, no password.
    done = subprocess.run(
        [sys.executable, "-m", "agentskit_web.cli", "serve-ask", "--docs", str(ROOT / "docs"),
         "--question-log", url, "--port", "0"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and PASSWORD not in done.stdout + done.stderr
    assert "--question-log" not in done.stderr or "***" in done.stderr
    report = subprocess.run(
        [sys.executable, "-m", "agentskit_web.cli", "report", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert report.returncode == 2 and PASSWORD not in report.stdout + report.stderr
    assert "logger:***@" in report.stderr


def test_an_unknown_log_scheme_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StartupError, match="Unknown --question-log 'mysql://u:\\*\\*\\*@"):
        build_app(config(tmp_path, f"mysql://u:{PASSWORD}@host/db"))


# --------------------------------------------------------------------------- two instances


def test_two_instances_behind_haproxy_write_one_log(tmp_path: Path, log_url: str) -> None:
    with LocalCluster(
        tmp_path / "cluster",
        instances=2,
        site_file=ROOT / "docs" / "site.json",
        docs=ROOT / "docs",
        sessions=log_url,
        flags=("--pace", "0", "--question-log", log_url),
    ) as cluster:
        cluster.only("ask1")
        status, answer_id = ask(cluster.url, "How do I configure rate limiting?")
        assert status == 200 and answer_id is not None
        cluster.only("ask2")  # the vote reaches the other instance
        vote = feedback(answerId=answer_id, vote="up", comment=None)
        assert httpx.post(f"{cluster.url}/api/feedback", json=vote).status_code == 204
        status, second = ask(cluster.url, "How do I deploy the backend behind haproxy?")
        assert status == 200 and second is not None
        cluster.all_in()
        for _ in range(4):
            assert ask(cluster.url, "What is the capital of Mongolia?")[0] == 422
        logged = settled(
            log_url, lambda found: len(found) == 6 and found[0]["feedback"] is not None
        )
    by_id = {r["answer_id"]: r for r in logged}
    assert (by_id[answer_id]["verdict"], by_id[answer_id]["feedback"]) == ("answered", "up")
    assert by_id[second]["verdict"] in ("answered", "near miss")
    assert [r["verdict"] for r in logged].count("declined") == 4
    assert len(logged) == 6
