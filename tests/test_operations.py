"""/healthz, /readyz and /metrics of the configured backend (`build_app`), in process.

The metrics test asks real questions through the real app and then reads the
exposition with prometheus-client's own parser; the privacy test checks that no
word of a question reaches it.
"""

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from _ask_helpers import ask_body
from _backend_process import write_backend_files
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.server.ask_serve import AskServeConfig, build_app
from agentskit_web.server.operations import READY_CHECK_TIMEOUT_SECONDS, Probe
from agentskit_web.server.retrieval import IndexRetriever

SECRET_QUESTION = "How do I install the widget next to my quixotic-marmalade-7731 sandbox?"
UNANSWERABLE = "Does zyzzyva plover fjord tolerate krypton?"


def _app(tmp_path: Path, **config: Any) -> Any:
    site_file, docs = write_backend_files(tmp_path, persistence__mode="required")
    return build_app(AskServeConfig(site=site_file, docs=docs, pace_seconds=0, **config))


def _requests(app: Any, *calls: tuple[str, str, Any]) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 4000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            replies = []
            for method, path, body in calls:
                if body is None:
                    replies.append(await client.request(method, path))
                else:
                    replies.append(await client.request(method, path, json=body))
            return replies

    return asyncio.run(run())


def _samples(exposition: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    found = {}
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def _value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_healthz_answers_while_the_process_serves(tmp_path: Path) -> None:
    (reply,) = _requests(_app(tmp_path), ("GET", "/healthz", None))
    assert (reply.status_code, reply.text) == (200, "ok\n")
    assert reply.headers["cache-control"] == "no-store"


def test_readyz_is_ready_with_index_sessions_and_limiter(tmp_path: Path) -> None:
    (reply,) = _requests(_app(tmp_path), ("GET", "/readyz", None))
    assert reply.status_code == 200
    assert reply.json() == {
        "ready": True,
        "draining": False,
        "checks": {"index": True, "sessions": True, "limiter": True},
        "degraded": [],
    }


def test_readyz_is_503_while_draining(tmp_path: Path) -> None:
    app = _app(tmp_path)
    app.state.operations.drain.draining = True
    (reply,) = _requests(app, ("GET", "/readyz", None))
    assert reply.status_code == 503
    assert reply.json()["draining"] is True and reply.json()["ready"] is False


def test_readyz_is_503_without_an_index(tmp_path: Path) -> None:
    app = _app(tmp_path)
    app.state.ask.retriever = IndexRetriever(SearchIndex.from_chunks([]))  # nothing indexed
    (reply,) = _requests(app, ("GET", "/readyz", None))
    assert reply.status_code == 503
    assert reply.json()["checks"]["index"] is False


def test_readyz_is_503_when_the_session_store_fails(tmp_path: Path) -> None:
    app = _app(tmp_path)
    app.state.ask.session_store.close()  # every later query raises
    (reply,) = _requests(app, ("GET", "/readyz", None))
    assert reply.status_code == 503
    body = reply.json()
    assert body["checks"]["sessions"] is False
    assert "sqlite" not in json.dumps(body).lower()  # names and booleans, never error text


def test_a_probe_slower_than_the_bound_counts_as_failed(tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def slow() -> bool:
        await asyncio.sleep(READY_CHECK_TIMEOUT_SECONDS + 1)
        return True

    operations = app.state.operations
    probes = [*operations.probes, Probe("slow", slow)]
    object.__setattr__(operations, "probes", probes)
    (reply,) = _requests(app, ("GET", "/readyz", None))
    assert reply.status_code == 503 and reply.json()["checks"]["slow"] is False


def test_metrics_count_outcomes_first_tokens_durations_limits_and_declines(
    tmp_path: Path,
) -> None:
    app = _app(tmp_path, rate_capacity=2, rate_refill=0.001)
    replies = _requests(
        app,
        ("POST", "/api/ask", ask_body(sessionId="ops-session-1")),
        ("POST", "/api/ask", ask_body(UNANSWERABLE, sessionId="ops-session-2")),
        ("POST", "/api/ask", ask_body(sessionId="ops-session-3")),  # bucket spent: 429
        ("GET", "/metrics", None),
    )
    assert [r.status_code for r in replies] == [200, 422, 429, 200]
    assert replies[-1].headers["content-type"].startswith("text/plain; version=")
    samples = _samples(replies[-1].text)
    assert _value(samples, "agentskit_ask_requests_total", outcome="ok") == 1
    assert _value(samples, "agentskit_ask_requests_total", outcome="rejected") == 2
    assert _value(samples, "agentskit_first_token_seconds_count") == 1
    assert _value(samples, "agentskit_answer_duration_seconds_count", outcome="ok") == 1
    assert _value(samples, "agentskit_declined_questions_total") == 1
    assert _value(samples, "agentskit_rate_limited_requests_total", route="ask") == 1
    assert _value(samples, "agentskit_http_responses_total", route="ask", status_class="4xx") == 2
    assert _value(samples, "agentskit_active_streams", route="ask") == 0


def test_active_streams_counts_a_stream_while_it_runs(tmp_path: Path) -> None:
    app = _app(tmp_path)
    gauge = app.state.operations.metrics.active_streams.labels("ask")
    during: list[float] = []

    class Watching:
        model = None

        async def stream(self, _request: Any) -> AsyncIterator[str]:
            during.append(gauge._value.get())  # read while the answer streams
            yield "Install it with pip."

    app.state.ask.generator = Watching()
    (reply,) = _requests(app, ("POST", "/api/ask", ask_body(sessionId="live-1")))
    assert reply.status_code == 200
    assert during == [1.0] and gauge._value.get() == 0


def test_no_word_of_a_question_reaches_the_metrics(tmp_path: Path) -> None:
    app = _app(tmp_path)
    (fresh,) = _requests(_app(tmp_path / "fresh"), ("GET", "/metrics", None))
    *_, after = _requests(
        app,
        ("POST", "/api/ask", ask_body(SECRET_QUESTION, sessionId="privacy-1")),
        ("POST", "/api/ask", ask_body(SECRET_QUESTION, sessionId="privacy-1")),
        ("POST", "/api/turn", None),
        ("GET", "/metrics", None),
    )
    assert "agentskit_ask_requests_total" in after.text
    words = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", SECRET_QUESTION)}
    exposed = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", after.text)}
    vocabulary = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", fresh.text)}
    # Whatever question words appear were already in an unused app's exposition
    # (help texts such as "the"); nothing new came from the question.
    assert (words & exposed) <= vocabulary
    # Whole words: the exposition's timestamps are long runs of digits that may hold
    # "7731" by chance (a CI run's creation time did).
    for marker in ("quixotic", "marmalade", "7731", "sandbox", "privacy"):
        assert marker not in exposed


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
def test_operations_routes_answer_get_and_head_only(tmp_path: Path, path: str) -> None:
    head, post = _requests(_app(tmp_path), ("HEAD", path, None), ("POST", path, {}))
    assert head.status_code == 200 and post.status_code == 405


def test_operations_flags_map_onto_the_config() -> None:
    from agentskit_web.server.ask_serve import _parser, config_from_args

    args = _parser().parse_args(
        ["--rate-limit", "redis://127.0.0.1:6390/2", "--shutdown-deadline", "7.5"]
    )
    config = config_from_args(args)
    assert (config.rate_limit, config.shutdown_deadline) == ("redis://127.0.0.1:6390/2", 7.5)
    defaults = config_from_args(_parser().parse_args([]))
    assert (defaults.rate_limit, defaults.shutdown_deadline) == ("memory", 20.0)


@pytest.mark.parametrize("where", ["memcached://127.0.0.1:11211", "redis", "REDIS://x", ""])
def test_an_unknown_rate_limit_store_is_a_start_up_error(tmp_path: Path, where: str) -> None:
    from agentskit_web.server.ask_serve import StartupError

    with pytest.raises(StartupError, match="--rate-limit"):
        _app(tmp_path, rate_limit=where)


def test_the_app_serves_answers_from_one_event_loop_after_another(tmp_path: Path) -> None:
    # uvicorn runs one loop, but tests and embedders may run several in turn: the
    # drain watcher must not tie the app to the first loop it ran in.
    app = _app(tmp_path)
    for session in ("loop-1", "loop-2"):
        (reply,) = _requests(app, ("POST", "/api/ask", ask_body(sessionId=session)))
        assert reply.status_code == 200
        assert json.loads(reply.text.splitlines()[-1]) == {"type": "done"}


def test_the_drain_wakes_every_waiter_at_the_deadline() -> None:
    from agentskit_web.server.operations import Drain

    drain = Drain()

    async def run() -> list[float]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        woke: list[float] = []

        async def waiter() -> None:
            await drain.wait_expired()
            woke.append(loop.time() - started)

        tasks = [asyncio.create_task(waiter()) for _ in range(3)]
        await asyncio.sleep(0)
        drain.begin(0.2)
        assert drain.draining and not drain.expired
        await asyncio.gather(*tasks)
        await drain.wait_expired()  # after the deadline: returns at once
        return woke

    woke = asyncio.run(run())
    assert len(woke) == 3 and all(0.15 <= t < 1.0 for t in woke)


def test_the_drain_may_expire_from_another_thread() -> None:
    import threading

    from agentskit_web.server.operations import Drain

    drain = Drain()

    async def run() -> bool:
        waiting = asyncio.create_task(drain.wait_expired())
        await asyncio.sleep(0.05)
        threading.Timer(0.05, drain.expire).start()
        await asyncio.wait_for(waiting, timeout=5)
        return drain.expired

    assert asyncio.run(run())
