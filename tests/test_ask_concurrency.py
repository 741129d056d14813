"""Concurrency: one real uvicorn process answers 50 questions at once; CAS loses no turn."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import ScriptedGenerator, ThreadedUvicorn, decode_stream, site, write_docs
from agentskit_web.server.ask_app import MESSAGES, create_ask_app
from agentskit_web.server.persistence import (
    PersistenceConflict,
    SessionKey,
    SessionRecord,
    SessionStore,
)

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "How do I embed the Ask widget?",
    "Does the widget load anything from a CDN?",
    "What happens when the backend is offline?",
    "Which Content-Security-Policy does the page need?",
    "What is the rate limit?",
    "How are conversations stored?",
    "How do I use bearer tokens?",
    "What does ASK_NO_GROUNDED_SOURCES mean?",
    "Which events are in the answer stream?",
    "How do I run the demo?",
]


@pytest.fixture(scope="module")
def backend_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`python -m agentskit_web.server.ask_serve` on a free port, over the project's docs."""
    metrics = tmp_path_factory.mktemp("metrics") / "metrics.jsonl"
    command = [
        sys.executable,
        "-m",
        "agentskit_web.server.ask_serve",
        "--site",
        str(ROOT / "docs" / "site.json"),
        "--docs",
        str(ROOT / "docs"),
        "--port",
        "0",
        "--pace",
        "0",
        "--rate-capacity",
        "1000",
        "--max-streams-per-client",
        "50",
        "--metrics-file",
        str(metrics),
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("Ask backend: "):
        process.kill()
        raise RuntimeError(f"backend did not start: {line!r} {process.stderr.read()!r}")
    url = line.removeprefix("Ask backend: ").strip()
    try:
        yield url, metrics
    finally:
        process.send_signal(signal.SIGINT)
        try:
            assert process.wait(timeout=15) == 0  # Ctrl-C stops it cleanly
        finally:
            if process.poll() is None:
                process.kill()


def test_fifty_concurrent_questions_all_complete_with_valid_streams(
    backend_process: tuple[str, Path],
) -> None:
    url, metrics_file = backend_process

    async def ask(client: httpx.AsyncClient, question: str) -> tuple[int, str, bytes]:
        body = {"messages": [{"role": "user", "content": question}]}
        response = await client.post(url + "?corpus=docs&persona=guide", json=body)
        return response.status_code, response.headers["content-type"], response.content

    async def run() -> list[tuple[int, str, bytes]]:
        limits = httpx.Limits(max_connections=50)
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            return await asyncio.gather(
                *(ask(client, QUESTIONS[i % len(QUESTIONS)]) for i in range(50))
            )

    replies = asyncio.run(run())
    assert len(replies) == 50
    cite_ids = set()
    for status, content_type, body in replies:
        assert status == 200
        assert content_type == "application/x-ndjson; charset=utf-8"
        events = decode_stream(body, step=5)
        kinds = [e["type"] for e in events]
        assert kinds[-2:] == ["tool", "done"] and set(kinds[:-2]) == {"text"}
        cite = events[-2]
        assert cite["name"] == "cite" and cite["args"]["sources"]
        cite_ids.add(cite["id"])
        for source in cite["args"]["sources"]:
            assert source["path"].startswith("/docs/") and source["path"].endswith(".html")
    assert len(cite_ids) == 50  # one request id each
    lines = metrics_file.read_text().splitlines()
    totals = [json.loads(line) for line in lines if '"request.total_ms"' in line]
    assert sum(1 for m in totals if m["outcome"] == "ok") >= 50
    assert not any(q.lower()[:12] in metrics_file.read_text().lower() for q in QUESTIONS)


def test_the_process_refuses_errors_over_the_wire(backend_process: tuple[str, Path]) -> None:
    url, _ = backend_process
    with httpx.Client(timeout=10) as client:
        assert client.get(url).status_code == 405
        reply = client.post(url, json={"messages": [{"role": "user", "content": "zebra quasar"}]})
        assert reply.status_code == 422
        assert reply.json()["error"]["code"] == "ASK_NO_GROUNDED_SOURCES"
        forbidden = client.post(url + "?corpus=other", json={"messages": []})
        assert forbidden.status_code == 403


def test_bad_config_stops_start_up_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "site.json"
    bad.write_text(json.dumps(site(limits__maxSources=0)))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentskit_web.server.ask_serve",
            "--site",
            str(bad),
            "--docs",
            str(ROOT / "docs"),
            "--port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "limits.maxSources" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- CAS under contention

KEY = SessionKey("site", "alice", "busy-session")


def test_concurrent_saves_with_retry_lose_no_turn(tmp_path: Path) -> None:
    """20 writers on 20 threads (two connections to one file): every turn lands exactly once."""
    database = tmp_path / "sessions.sqlite"
    stores = [SessionStore(database), SessionStore(database)]
    conflicts = 0
    lock = threading.Lock()
    start = threading.Barrier(20)

    def writer(index: int) -> None:
        nonlocal conflicts
        store = stores[index % 2]
        start.wait()
        while True:
            record = store.load_sync(KEY)
            try:
                store.append_turn_sync(KEY, record, f"q{index}", f"a{index}")
                return
            except PersistenceConflict:
                with lock:
                    conflicts += 1

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    record = stores[0].load_sync(KEY)
    assert record.revision == 20
    questions = [m.content for m in record.messages if m.role == "user"]
    assert sorted(questions) == sorted(f"q{i}" for i in range(20))
    for position in range(0, 40, 2):  # every answer directly follows its own question
        assert record.messages[position + 1].content == "a" + record.messages[position].content[1:]


def test_concurrent_saves_from_one_revision_have_exactly_one_winner() -> None:
    store = SessionStore()
    snapshot = SessionRecord(0)
    outcomes: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(16)

    def writer(index: int) -> None:
        start.wait()
        try:
            store.append_turn_sync(KEY, snapshot, f"q{index}", "a")
            result = "saved"
        except PersistenceConflict:
            result = "conflict"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("saved") == 1 and outcomes.count("conflict") == 15
    assert len(store.load_sync(KEY).messages) == 2


def test_concurrent_answers_on_one_session_never_overwrite(tmp_path: Path) -> None:
    """10 questions on one session through a real server: each is saved or reports a conflict."""
    docs = write_docs(tmp_path / "docs")
    store = SessionStore()
    generator = ScriptedGenerator(pieces=("part ", "answer"), delay=0.02)
    app = create_ask_app(
        site(persistence__mode="required"),
        docs,
        generator=generator,
        session_store=store,
        max_streams_per_client=10,  # ten at once from one address
    )
    with ThreadedUvicorn(app) as server:

        async def ask(client: httpx.AsyncClient, index: int) -> dict[str, Any]:
            body = {
                "sessionId": "one",
                "messages": [{"role": "user", "content": f"widget {index}"}],
            }
            response = await client.post(f"{server.url}/api/ask", json=body)
            return decode_stream(response.content)[-1]

        async def run() -> list[dict[str, Any]]:
            async with httpx.AsyncClient(timeout=30) as client:
                return await asyncio.gather(*(ask(client, i) for i in range(10)))

        endings = asyncio.run(run())
    saved = [e for e in endings if e["type"] == "done"]
    conflicts = [e for e in endings if e["type"] == "error"]
    assert len(saved) + len(conflicts) == 10 and saved
    assert all(e["code"] == "ASK_PERSISTENCE_CONFLICT" for e in conflicts)
    assert all(e["message"] == MESSAGES["conflict"] for e in conflicts)
    record = store.load_sync(SessionKey("test-site", "anonymous", "one"))
    assert record.revision == len(saved)
    assert len(record.messages) == 2 * len(saved)


def test_a_reader_leaving_stops_generation_on_a_real_server(tmp_path: Path) -> None:
    """Through uvicorn: the client closes mid-answer, the generator is cancelled promptly."""
    from agentskit_web.server.metrics import MemoryMetrics

    docs = write_docs(tmp_path / "docs")
    generator = ScriptedGenerator(pieces=["tick "] * 2_000, delay=0.01)
    metrics = MemoryMetrics()
    app = create_ask_app(site(), docs, generator=generator, metrics=metrics)
    with ThreadedUvicorn(app) as server:

        async def read_a_little_then_leave() -> int:
            body = {"messages": [{"role": "user", "content": "install widget"}]}
            url = f"{server.url}/api/ask"
            async with (
                httpx.AsyncClient(timeout=10) as client,
                client.stream("POST", url, json=body) as reply,
            ):
                received = 0
                async for chunk in reply.aiter_raw():
                    received += len(chunk)
                    if received > 200:
                        break
                return reply.status_code

        assert asyncio.run(read_a_little_then_leave()) == 200

        async def wait_for_cancel() -> None:
            for _ in range(200):
                if generator.closed and metrics.count("cancellation.count"):
                    return
                await asyncio.sleep(0.01)

        asyncio.run(wait_for_cancel())
    assert generator.closed == [True]
    assert len(generator.requests) == 1
    assert metrics.count("cancellation.count", "cancelled") == 1
    assert metrics.count("stream.events", "cancelled") == 1
