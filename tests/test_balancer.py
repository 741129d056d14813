"""Three real `serve-ask` instances behind a real haproxy, with Redis and PostgreSQL.

Every test starts its own cluster (`LocalCluster`: redis-server, three
instance processes sharing a fresh PostgreSQL database of the session's
server, haproxy with the configuration docs/deployment.md shows, all on
127.0.0.1) and stops it. Which instance answered a request is read from
the instances' own `/metrics` (the balancer is not asked), what the balancer
thinks of each instance from haproxy's admin socket.
"""

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentskit_web.bench.balancer import format_failover
from agentskit_web.bench.cluster import LocalCluster
from agentskit_web.bench.failover import kill_mid_answer, stored_session, streaming_instance
from agentskit_web.bench.local_postgres import LocalPostgres
from agentskit_web.chat.turn.adapter import build_submit, new_session_id
from agentskit_web.server.haproxy_config import HEALTH_CHECK_FALL, HEALTH_CHECK_INTERVAL_MS

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "site.json"
SITE_ID = json.loads(SITE.read_text(encoding="utf-8"))["siteId"]
QUESTION = "How do I configure rate limiting?"
RATE_CAPACITY = 6
SHORT_DEADLINE_SECONDS = 0.5
LEASE_SECONDS = 2.0
RESUMED_2XX = 'agentskit_http_responses_total{route="turn_resume",status_class="2xx"}'
RESUMED_4XX = 'agentskit_http_responses_total{route="turn_resume",status_class="4xx"}'
TURN_2XX = 'agentskit_http_responses_total{route="turn",status_class="2xx"}'


PACED = ("--pace", "0.04", "--turn-lease", str(LEASE_SECONDS), "--shutdown-deadline", "15")
"""Answers of a few seconds, a short lease, budgets far above the tests'."""


def _cluster(tmp_path: Path, sessions: str, *flags: str) -> LocalCluster:
    return LocalCluster(
        tmp_path / "cluster", site_file=SITE, docs=ROOT / "docs", sessions=sessions, flags=flags
    )


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: LocalPostgres
) -> Iterator[LocalCluster]:
    """One cluster for the tests that each take at most one instance out, by name.

    ask1 drains with a 15 s deadline, ask3 with one shorter than an answer (it ends answers
    as interrupted); the reload test uses whichever instances are still running.
    """
    cluster = _cluster(tmp_path_factory.mktemp("shared"), postgres_server.create_database(), *PACED)
    cluster.member_flags["ask3"] = ("--shutdown-deadline", str(SHORT_DEADLINE_SECONDS))
    # ask1's answers are slower (several seconds): still streaming when haproxy takes it out.
    cluster.member_flags["ask1"] = ("--pace", "0.08")
    with cluster as running:
        assert "--sessions" in running.store_flags()
        yield running


@pytest.fixture
def cluster(tmp_path: Path, postgres_url: str) -> Iterator[LocalCluster]:
    """A cluster of its own (for the test that kills whichever instance streams)."""
    with _cluster(tmp_path, postgres_url, *PACED) as running:
        yield running


def _per_instance(cluster: LocalCluster, sample: str) -> dict[str, float]:
    return {m.name: cluster.counters(m.name).get(sample, 0.0) for m in cluster.members if m.running}


def _submit_raw(
    client: httpx.Client, url: str, session_id: str, lineage: dict[str, str] | None = None
) -> list[str]:
    """One turn through `url`: the NDJSON lines of the answer as sent."""
    body = build_submit(session_id, "t-" + new_session_id()[:12], QUESTION, lineage)
    with client.stream("POST", url + "/api/turn", json=body) as response:
        assert response.status_code == 200, response.read()
        return [line for line in response.iter_lines() if line]


def _submit_lines(client: httpx.Client, url: str, session_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _submit_raw(client, url, session_id)]


def test_a_turn_resumed_on_reload_lands_on_the_other_instances_with_the_same_snapshot(
    shared: LocalCluster,
) -> None:
    cluster = shared
    running = sorted(m.name for m in cluster.members if m.running)
    assert len(running) >= 2
    session_id = new_session_id()
    with httpx.Client(timeout=60) as client:
        turns_before = _per_instance(cluster, TURN_2XX)
        raw = _submit_raw(client, cluster.url, session_id)
        assert json.loads(raw[-1])["payload"]["status"] == "complete"
        turns_after = _per_instance(cluster, TURN_2XX)
        (submitted_on,) = [n for n in turns_after if turns_after[n] > turns_before[n]]
        before = _per_instance(cluster, RESUMED_2XX)
        bodies = [client.get(f"{cluster.url}/api/turn/{session_id}") for _ in running]
    after = _per_instance(cluster, RESUMED_2XX)
    served = sorted(name for name in after if after[name] > before[name])
    # Round robin, no stickiness: one reload per instance reached every instance, the ones
    # that never ran the turn included, and each answered the snapshot the turn ended with.
    assert served == running and set(served) - {submitted_on}
    assert [response.status_code for response in bodies] == [200] * len(running)
    assert httpx.get(cluster.url + "/metrics", timeout=10).status_code == 403  # operators only
    assert [response.text.strip() for response in bodies] == [raw[-1]] * len(running)


def test_an_instance_killed_mid_answer_ends_the_turn_on_another_instance_after_its_lease(
    cluster: LocalCluster,
) -> None:
    seen = kill_mid_answer(cluster, SITE_ID, QUESTION, LEASE_SECONDS)
    (row,) = [r for r in format_failover([seen]).splitlines() if r.startswith("1 ")]
    assert row.split()[:4] == ["1", "2", "s", seen.killed] and " met " in row, row
    assert not cluster.member(seen.killed).running
    # The reader reconnected through the balancer to the live instances until the lease ran
    # out, then got the settled snapshot: an error the widget offers Retry for, never busy.
    assert seen.reconnects >= 1 and seen.resumed >= 1
    assert seen.status == "error" and seen.error_code == "CHAT_TURN_INTERRUPTED"
    assert seen.ended_after_kill >= seen.lease_end_after_kill
    assert seen.after_lease <= 2.5, seen
    users = [m for m in seen.messages if m["role"] == "user"]
    assert [m["content"] for m in users] == [QUESTION]  # stored once
    assert [m["status"] for m in seen.messages if m["role"] == "assistant"] == ["error"]
    # The health checks take the dead instance out.
    cluster.wait_states({seen.killed: "DOWN"}, 5)
    assert "activeTurn" not in stored_session(cluster, SITE_ID, seen.session_id)["envelope"]
    # Retry (what the widget's button sends) is answered in full by an instance that is up,
    # and the question is still stored once.
    question = next(m for m in seen.messages if m["role"] == "user")
    lineage = {
        "operation": "retry",
        "parentTurnId": question["metadata"]["turnId"],
        "sourceMessageId": question["id"],
    }
    with httpx.Client(timeout=60) as client:
        retried = _submit_raw(client, cluster.url, seen.session_id, lineage)
    final = json.loads(retried[-1])["payload"]
    assert final["status"] == "complete"
    assert [m["role"] for m in final["messages"]] == ["user", "assistant"]
    assert final["messages"][0]["content"] == QUESTION


def test_one_clients_budget_over_three_instances_is_the_budget_of_one(
    tmp_path: Path, postgres_url: str
) -> None:
    flags = ("--rate-capacity", str(RATE_CAPACITY), "--rate-refill", "0.001")
    with _cluster(tmp_path, postgres_url, *flags) as cluster:
        redis = cluster.redis
        assert redis is not None

        def allowed(url: str) -> int:
            """GETs of an unknown session (404 once the rate limit let it through) until 429."""
            with httpx.Client(timeout=30) as client:
                for count in range(RATE_CAPACITY * 4):
                    status = client.get(f"{url}/api/turn/{new_session_id()}").status_code
                    if status == 429:
                        return count
                    assert status == 404
            raise AssertionError("never throttled")

        alone = allowed(cluster.members[0].root)  # one instance, straight to it
        _flush(redis.port)
        spread = allowed(cluster.url)
        counts = _per_instance(cluster, RESUMED_4XX)
    assert alone == RATE_CAPACITY
    assert abs(spread - alone) <= 1
    # ...and the balancer did spread them: every instance answered some (404s and the 429).
    assert counts["ask1"] >= alone + 1 and counts["ask2"] >= 2 and counts["ask3"] >= 2, counts


def _flush(port: int) -> None:
    """FLUSHDB on the cluster's Redis: the buckets start full again."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"FLUSHDB\r\n")
        assert sock.recv(16).startswith(b"+OK")


def _sigterm_mid_answer(cluster: LocalCluster, name: str) -> tuple[list[dict[str, Any]], bool]:
    """An answer from instance `name` (alone in rotation until it streams), SIGTERM on it.

    Returns the answer's lines and whether it was still streaming when haproxy had the
    instance out; asserts that this took at most about `fall + 1` check intervals, that
    readers asking meanwhile reached the other instances, and that the instance exited 0.
    """
    session_id = new_session_id()
    lines: list[dict[str, Any]] = []
    with httpx.Client(timeout=60) as client:

        def read() -> None:
            lines.extend(_submit_lines(client, cluster.url, session_id))

        cluster.only(name)
        reader = threading.Thread(target=read)
        reader.start()
        give_up = time.monotonic() + 30
        while streaming_instance(cluster) != name and time.monotonic() < give_up:
            time.sleep(0.02)
        cluster.all_in()
        instance = cluster.member(name)
        instance.terminate()
        took_out = cluster.wait_states({name: "DOWN"}, 10)
        streaming_when_out = reader.is_alive()
        others = [client.get(cluster.url + "/readyz").status_code for _ in range(4)]
        reader.join(60)
        assert instance.wait(30) == 0
    assert others == [200, 200, 200, 200]  # readers asking meanwhile reach the others
    limit = (HEALTH_CHECK_FALL + 1) * HEALTH_CHECK_INTERVAL_MS / 1000 + 1
    assert took_out <= limit, took_out
    return lines, streaming_when_out


def test_sigterm_during_an_answer_lets_it_finish_and_the_health_check_takes_the_instance_out(
    shared: LocalCluster,
) -> None:
    lines, streaming_when_out = _sigterm_mid_answer(shared, "ask1")  # deadline 15 s
    assert streaming_when_out, "the answer ended before the instance was out: pace it slower"
    assert lines[-1]["payload"]["status"] == "complete"


def test_sigterm_past_its_deadline_ends_the_answer_interrupted_and_retry_answers(
    shared: LocalCluster,
) -> None:
    cluster = shared
    lines, _ = _sigterm_mid_answer(cluster, "ask3")  # deadline 0.5 s
    final = lines[-1]["payload"]
    assert final["status"] == "error"
    assert final["error"]["code"] == "CHAT_TURN_INTERRUPTED" and final["error"]["retryable"]
    session_id = lines[-1]["sessionId"]
    stored = stored_session(cluster, SITE_ID, session_id)
    assert "activeTurn" not in stored["envelope"]
    question = stored["messages"][0]
    lineage = {
        "operation": "retry",
        "parentTurnId": question["metadata"]["turnId"],
        "sourceMessageId": question["id"],
    }
    with httpx.Client(timeout=60) as client:
        retried = json.loads(_submit_raw(client, cluster.url, session_id, lineage)[-1])
    assert retried["payload"]["status"] == "complete"
    assert [m["content"] for m in retried["payload"]["messages"] if m["role"] == "user"] == [
        QUESTION
    ]
