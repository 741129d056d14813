"""Turns that outlive their instance: real `serve-ask` processes sharing one PostgreSQL.

Each test starts backend processes on loopback with `--sessions` pointing at a
fresh database on the session's PostgreSQL server (`_postgres_server.py`),
submits a turn to one, and then kills it (SIGKILL) or stops it (SIGTERM) while
the answer is still streaming (`--pace` spaces the extractive answer's deltas).
Another instance must then show the turn as interrupted, retryable, with the
question stored once, and take the Retry.
"""

import threading
import time
from pathlib import Path
from typing import Any

import httpx

from _ask_helpers import QUESTION
from _ask_helpers import turn_submit as submit_body
from _backend_process import BackendProcess, write_backend_files
from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.protocol.turn import SnapshotTurnEvent, decode_turn_event

LEASE_SECONDS = 1.0
SETTLE_LIMIT_SECONDS = 15.0
"""How long a test waits for another instance to end the orphaned turn (it takes ~1 s)."""


def snapshot_of(line: str) -> SnapshotTurnEvent:
    result = decode_turn_event(line)
    assert result.ok and isinstance(result.event, SnapshotTurnEvent), line[:200]
    return result.event


def turn_url(backend: BackendProcess) -> str:
    return backend.root + "/api/turn"


def start_turn_until_text(backend: BackendProcess, session: str) -> tuple[Any, Any, Any]:
    """POST a turn and read until a snapshot carries answer text; the stream stays open."""
    client = httpx.Client(timeout=30)
    context = client.stream("POST", turn_url(backend), json=submit_body(session, "t1"))
    response = context.__enter__()
    assert response.status_code == 200
    lines = response.iter_lines()
    for line in lines:
        if not line:
            continue
        snapshot = snapshot_of(line)
        answer = snapshot.payload.messages[-1]
        if answer.role == "assistant" and len(answer.content) > 40:
            return client, context, lines
    raise AssertionError("the answer never started")


def resume(backend: BackendProcess, session: str) -> list[SnapshotTurnEvent]:
    """Every snapshot one resume GET streams (another instance's turn is followed to its end)."""
    response = httpx.get(f"{turn_url(backend)}/{session}", timeout=SETTLE_LIMIT_SECONDS)
    assert response.status_code == 200, response.text
    return [snapshot_of(line) for line in response.text.splitlines() if line]


def latest(backend: BackendProcess, session: str) -> SnapshotTurnEvent:
    return resume(backend, session)[-1]


def assert_interrupted(snapshot: SnapshotTurnEvent) -> None:
    payload = snapshot.payload
    assert payload.status == "error"
    assert payload.error is not None
    assert payload.error.code == "CHAT_TURN_INTERRUPTED" and payload.error.retryable is True
    roles = [(m.role, m.status) for m in payload.messages]
    assert roles == [("user", "complete"), ("assistant", "error")]
    assert payload.messages[0].content == QUESTION


def retry(backend: BackendProcess, session: str, settled: SnapshotTurnEvent) -> SnapshotTurnEvent:
    """The widget's Retry: a `retry` lineage naming the interrupted turn's question."""
    question = settled.payload.messages[0]
    lineage = {"operation": "retry", "parentTurnId": "t1", "sourceMessageId": question.id}
    response = httpx.post(
        turn_url(backend), json=submit_body(session, "t2", lineage=lineage), timeout=60
    )
    assert response.status_code == 200, response.text
    return snapshot_of([line for line in response.text.splitlines() if line][-1])


def test_a_killed_instance_turn_ends_interrupted_elsewhere_and_retry_answers_once(
    tmp_path: Path, postgres_url: str
) -> None:
    site_file, docs = write_backend_files(tmp_path)
    flags = ("--sessions", postgres_url, "--turn-lease", str(LEASE_SECONDS), "--pace", "0.4")
    a, b, c = BackendProcess.start_many(site_file, docs, [flags, flags, flags])
    try:
        session = new_session_id()
        client, context, _lines = start_turn_until_text(a, session)
        a.kill()  # SIGKILL: no final save, the lease stays in the row
        killed = time.monotonic()
        context.__exit__(None, None, None)
        client.close()
        # B and C are asked at the same moment, while the dead instance's lease is still
        # live: each follows the stored session and, when the lease is over, one ends it.
        results: dict[str, list[SnapshotTurnEvent]] = {}
        gate = threading.Barrier(2)

        def ask(name: str, backend: BackendProcess) -> None:
            gate.wait()
            results[name] = resume(backend, session)

        threads = [threading.Thread(target=ask, args=item) for item in (("b", b), ("c", c))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        after_kill = time.monotonic() - killed
        for seen in results.values():
            assert seen[0].payload.status == "streaming"  # the answer as far as it was saved
        settled = results["b"][-1]
        assert_interrupted(settled)
        assert results["c"][-1].sequence == settled.sequence  # one settling write, seen by both
        # The goal: the reader sees the end within 2 s of the lease expiring.
        assert after_kill < LEASE_SECONDS + 2.0, f"settled {after_kill:.2f} s after the kill"
        answer = retry(c, session, settled)
        assert answer.payload.status == "complete"
        messages = answer.payload.messages
        assert [m.content for m in messages if m.role == "user"] == [QUESTION]  # stored once
        assert [(m.role, m.status) for m in messages] == [
            ("user", "complete"),
            ("assistant", "complete"),
        ]  # the interrupted answer was replaced, not kept beside the new one
    finally:
        for backend in (a, b, c):
            backend.kill()


def test_a_resume_on_another_instance_follows_the_answer_to_its_end(
    tmp_path: Path, postgres_url: str
) -> None:
    site_file, docs = write_backend_files(tmp_path)
    flags = ("--sessions", postgres_url, "--pace", "0.3")
    a, b = BackendProcess.start_many(site_file, docs, [flags, flags])
    try:
        session = new_session_id()
        client, context, lines = start_turn_until_text(a, session)
        followed = resume(b, session)  # while A still writes the answer
        direct = [snapshot_of(line) for line in lines if line]  # A's own stream, to its end
        context.__exit__(None, None, None)
        client.close()
        assert followed[-1].payload.status == "complete"
        assert followed[-1].sequence == direct[-1].sequence
        assert followed[-1].payload.messages == direct[-1].payload.messages
        sequences = [s.sequence for s in followed]
        assert len(sequences) > 2 and sequences == sorted(set(sequences))  # it went on, live
    finally:
        for backend in (a, b):
            backend.kill()


def test_sigterm_ends_a_running_turn_as_interrupted_at_the_deadline(
    tmp_path: Path, postgres_url: str
) -> None:
    site_file, docs = write_backend_files(tmp_path)
    deadline = 1.0
    flags = ("--sessions", postgres_url, "--pace", "1.0", "--shutdown-deadline", str(deadline))
    a, b = BackendProcess.start_many(site_file, docs, [flags, ("--sessions", postgres_url)])
    try:
        session = new_session_id()
        client, context, lines = start_turn_until_text(a, session)
        a.terminate()
        signalled = time.monotonic()
        last = None
        for line in lines:  # the open stream gets the final snapshot, then ends
            if line:
                last = snapshot_of(line)
        stream_ended = time.monotonic() - signalled
        context.__exit__(None, None, None)
        client.close()
        assert last is not None
        assert_interrupted(last)
        assert deadline - 0.2 <= stream_ended < deadline + 2.0
        assert a.wait(15) == 0
        stored = latest(b, session)  # saved, so every instance shows it at once
        assert stored.sequence == last.sequence
        assert_interrupted(stored)
        answer = retry(b, session, stored)  # no lease left: no SESSION_BUSY
        assert answer.payload.status == "complete"
    finally:
        for backend in (a, b):
            backend.kill()


def test_sigterm_ends_a_turn_whose_reader_left_before_the_process_exits(
    tmp_path: Path, postgres_url: str
) -> None:
    site_file, docs = write_backend_files(tmp_path)
    flags = ("--sessions", postgres_url, "--pace", "1.0", "--shutdown-deadline", "1")
    a, b = BackendProcess.start_many(site_file, docs, [flags, ("--sessions", postgres_url)])
    try:
        session = new_session_id()
        client, context, _lines = start_turn_until_text(a, session)
        context.__exit__(None, None, None)  # the reader goes away: no connection holds the turn
        client.close()
        a.terminate()
        assert a.wait(15) == 0
        stored = latest(b, session)
        assert_interrupted(stored)
    finally:
        for backend in (a, b):
            backend.kill()
