"""Scale bench: question -> first token with the Redis rate limiter vs the in-process default.

Two backend processes over the project's docs, started in the same run: one
with the default in-process limiter (the baseline), one with `--rate-limit
redis://...` against a `redis-server` this bench starts on loopback. Both have
budgets far above what the bench asks, so every question is answered and the
only difference is where the bucket lives (one Lua round trip to Redis per
question). Questions alternate between the two, one at a time, so both see the
same machine load (the order flips every question); each figure is the time from
sending the question to the
first text delta of the answer, every sample kept.

A second table is the turn protocol's question -> first token (`POST /api/turn`,
a new session per question, until the first snapshot whose answer holds text:
the first save that creates the session and takes the lease, retrieval, the
first streaming save) with the default SQLite (in memory) store and in-process
limiter beside `--sessions postgresql://...` against a PostgreSQL server this
bench starts (initdb + pg_ctl on loopback, server defaults), alone
and with the Redis limiter. Questions rotate over the three backends.

A third table times the limiter decision alone (`take`, alternating blocks)
against the same Redis, back to back and spaced 20 ms apart like questions (a
sleeping redis-server has to be woken for each; on a loaded machine that wait
dominates). A question makes two limiter calls: the failed-authentication
check and the rate take. The load average is printed with the figures.

Then the balancer part (balancer.py): turns per second through haproxy with
one and with three instances, and failover when the instance streaming an
answer is killed.
"""

import argparse
import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from ..chat.turn.adapter import new_session_id
from ..protocol import AskEventDecoder
from ..protocol.content import ASSISTANT_CONTENT_PREFIX
from .backend import _NODELAY, BENCH_QUESTIONS, PROJECT_ROOT, _Backend
from .balancer import THROUGHPUT_CLIENTS, format_failover, format_throughput, run_balancer_bench
from .local_postgres import LocalPostgres
from .local_redis import LocalRedis

SCALE_QUESTIONS: Final = 200
"""Questions per backend (after the warm-up); p50 over 200 samples is stable to ~0.1 ms."""
SCALE_WARMUP: Final = 20
TURN_QUESTIONS: Final = 200
"""Turn questions per backend (after the warm-up), each in a new session."""
TURN_OVERHEAD_GOAL_MS: Final = 5.0
"""Issue 24's goal: shared stores cost at most this much question -> first token (p50)."""
LIMITER_CALLS: Final = 2000
"""`take` calls per limiter in the decision-only table (in 4 alternating blocks)."""
LIMITER_SPACED_CALLS: Final = 200
LIMITER_SPACING_SECONDS: Final = 0.02
"""Spaced like questions (one every ~20 ms): Redis must be woken for each, as in the app."""


@dataclass(slots=True)
class Series:
    """Samples of one setup in milliseconds, every one kept."""

    name: str
    samples_ms: list[float] = field(default_factory=list)
    failed: int = 0

    def quantile(self, q: float) -> float:
        ordered = sorted(self.samples_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _first_token(client: httpx.AsyncClient, url: str, question: str) -> float | None:
    """Milliseconds from sending `question` to its first text delta (None: no text came)."""
    body = {"messages": [{"role": "user", "content": question}]}
    decoder = AskEventDecoder()
    started = time.perf_counter()
    first: float | None = None
    async with client.stream("POST", url, json=body) as response:
        async for chunk in response.aiter_raw():
            for event in decoder.feed(chunk):
                if first is None and event.get("type") == "text":
                    first = time.perf_counter()
        decoder.finish()
    if response.status_code != 200 or first is None:
        return None
    return (first - started) * 1000


def _submit(session_id: str, question: str) -> dict[str, object]:
    return {
        "protocol": "agentskit.chat.turn",
        "version": 1,
        "eventId": "e-bench",
        "sessionId": session_id,
        "turnId": "t-bench",
        "sequence": 0,
        "emittedAt": "2026-01-01T00:00:00Z",
        "event": "client.turn.submit",
        "payload": {"input": question},
    }


async def _first_turn_token(client: httpx.AsyncClient, url: str, question: str) -> float | None:
    """Milliseconds from submitting a new session's question to the first snapshot with text."""
    started = time.perf_counter()
    first: float | None = None
    async with client.stream("POST", url, json=_submit(new_session_id(), question)) as response:
        async for line in response.aiter_lines():
            if first is not None or not line:
                continue
            event = json.loads(line)
            messages = event.get("payload", {}).get("messages") or [{}]
            content = messages[-1].get("content", "")
            if messages[-1].get("role") == "assistant" and len(content) > len(
                ASSISTANT_CONTENT_PREFIX
            ):
                first = time.perf_counter()
    if response.status_code != 200 or first is None:
        return None
    return (first - started) * 1000


async def _measure_turns(urls: dict[str, str], questions: int, warmup: int) -> list[Series]:
    series = {name: Series(name) for name in urls}
    transport = httpx.AsyncHTTPTransport(socket_options=_NODELAY)
    async with httpx.AsyncClient(timeout=60, transport=transport) as client:
        order = list(urls.items())
        for index in range(warmup + questions):
            question = BENCH_QUESTIONS[index % len(BENCH_QUESTIONS)]
            shift = index % len(order)  # each backend goes first, second, third in turn
            for name, url in order[shift:] + order[:shift]:
                value = await _first_turn_token(client, url, question)
                if index < warmup:
                    continue
                if value is None:
                    series[name].failed += 1
                else:
                    series[name].samples_ms.append(value)
    return list(series.values())


async def _measure(urls: dict[str, str], questions: int, warmup: int) -> list[Series]:
    series = {name: Series(name) for name in urls}
    transport = httpx.AsyncHTTPTransport(socket_options=_NODELAY)
    async with httpx.AsyncClient(timeout=60, transport=transport) as client:
        for index in range(warmup + questions):
            question = BENCH_QUESTIONS[index % len(BENCH_QUESTIONS)]
            # A B, then B A: whichever goes second shares the machine with the first's
            # after-answer work, so the order flips every question.
            order = list(urls.items())
            for name, url in order if index % 2 == 0 else order[::-1]:
                value = await _first_token(client, url, question)
                if index < warmup:
                    continue
                if value is None:
                    series[name].failed += 1
                else:
                    series[name].samples_ms.append(value)
    return list(series.values())


def _time_limiters(redis_url: str, calls: int, spaced_calls: int) -> list[Series]:
    """Milliseconds per `take`: in process, Redis back to back, Redis spaced like questions."""
    from ..server.rate_limit import TokenBucketLimiter
    from ..server.redis_rate_limit import RedisRateLimiter, redis_client

    budget = (10**9, 10**9)
    redis_limiter = RedisRateLimiter(redis_client(redis_url), "bench", *budget)
    setups: dict[str, tuple[TokenBucketLimiter | RedisRateLimiter, float]] = {
        "in-process take()": (TokenBucketLimiter(*budget), 0.0),
        "Redis take() back to back": (redis_limiter, 0.0),
        f"Redis take() {LIMITER_SPACING_SECONDS * 1000:.0f} ms apart": (
            redis_limiter,
            LIMITER_SPACING_SECONDS,
        ),
    }
    series = {name: Series(name) for name in setups}
    for _block in range(4):
        for name, (limiter, spacing) in setups.items():
            count = calls // 4 if spacing == 0 else spaced_calls // 4
            for _ in range(count):
                started = time.perf_counter()
                limiter.take("ip:192.0.2.1")
                series[name].samples_ms.append((time.perf_counter() - started) * 1000)
                time.sleep(spacing)
    return list(series.values())


@dataclass(slots=True)
class ScaleResult:
    answers: list[Series]
    """Ask: question -> first token, in-process vs Redis limiter."""
    turns: list[Series]
    """Turn protocol: question -> first token, SQLite + memory vs PostgreSQL (+ Redis)."""
    limiters: list[Series]


def run_scale_bench(
    questions: int = SCALE_QUESTIONS,
    warmup: int = SCALE_WARMUP,
    limiter_calls: int = LIMITER_CALLS,
    spaced_calls: int = LIMITER_SPACED_CALLS,
    turn_questions: int = TURN_QUESTIONS,
) -> ScaleResult:
    site = PROJECT_ROOT / "docs" / "site.json"
    docs = PROJECT_ROOT / "docs"
    with tempfile.TemporaryDirectory(prefix="agentskit-scale-") as folder:
        redis = LocalRedis(Path(folder))
        redis.start()
        postgres = LocalPostgres(durable=True)
        backends: list[_Backend] = []
        try:
            postgres.start()
            backends.append(_Backend(site, docs))
            backends.append(_Backend(site, docs, "--rate-limit", redis.url))
            urls = {
                "in-process limiter (default)": backends[0].url,
                "Redis limiter (--rate-limit)": backends[1].url,
            }
            answers = asyncio.run(_measure(urls, questions, warmup))
            backends.append(_Backend(site, docs, "--sessions", postgres.create_database()))
            shared = ("--sessions", postgres.create_database(), "--rate-limit", redis.url)
            backends.append(_Backend(site, docs, *shared))
            turn_urls = {
                "SQLite + memory limiter (default)": backends[0].url,
                "PostgreSQL sessions": backends[2].url,
                "PostgreSQL + Redis limiter": backends[3].url,
            }
            turn_urls = {name: _turn_url(url) for name, url in turn_urls.items()}
            turns = asyncio.run(_measure_turns(turn_urls, turn_questions, warmup))
            limiters = _time_limiters(redis.url, limiter_calls, spaced_calls)
            return ScaleResult(answers, turns, limiters)
        finally:
            for backend in backends:
                backend.stop()
            redis.stop()
            postgres.stop()


def _turn_url(ask_url: str) -> str:
    """The turn endpoint beside an Ask URL (`serve-ask`'s default paths)."""
    return ask_url.rsplit("/api/ask", 1)[0] + "/api/turn"


def paired_delta(one: Series, baseline: Series) -> float | None:
    """Median of the per-question differences to the baseline (None unless every question
    of both setups was answered, so the i-th samples are the same round).

    The questions of one round run back to back, so a machine whose load drifts
    during the run moves both samples of a round alike; the median of the
    differences shows the setup's cost where the difference of the medians
    also carries the drift (this machine is shared by several people)."""
    if one.failed or baseline.failed or len(one.samples_ms) != len(baseline.samples_ms):
        return None
    differences = sorted(b - a for a, b in zip(baseline.samples_ms, one.samples_ms, strict=True))
    return differences[len(differences) // 2] if differences else None


def format_scale(series: list[Series], title: str, note: str) -> str:
    baseline = series[0]
    header = f"{title:<38}{'n':>5}{'p50':>10}{'p95':>10}{'Δp50':>10}{'Δpaired':>10}"
    rows = [header, "-" * len(header)]
    for one in series:
        delta = one.quantile(0.5) - baseline.quantile(0.5)
        paired = paired_delta(one, baseline)
        shown = "baseline" if one is baseline else f"{delta:+.3f}ms"
        pairs = "" if one is baseline else "n/a" if paired is None else f"{paired:+.3f}ms"
        rows.append(
            f"{one.name:<38}{len(one.samples_ms):>5}"
            f"{one.quantile(0.5):>8.3f}ms{one.quantile(0.95):>8.3f}ms{shown:>10}{pairs:>10}"
        )
    failed = sum(one.failed for one in series)
    rows.append(f"{note}; Δpaired: median of per-round differences; failed: {failed}")
    return "\n".join(rows)


SMOKE_QUESTIONS: Final = 12
"""Questions per series under `--smoke` (and a tenth of the limiter calls): it only shows
the section runs, end to end, with every server it starts."""


def scale_command(args: argparse.Namespace) -> int:
    if args.smoke:
        result = run_scale_bench(
            SMOKE_QUESTIONS, 2, LIMITER_CALLS // 10, LIMITER_SPACED_CALLS // 10, SMOKE_QUESTIONS
        )
    else:
        result = run_scale_bench()
    print(
        format_scale(
            result.answers,
            "Ask: question -> first token, 1 instance",
            "alternating questions over the demo docs, extractive generator unpaced, "
            "redis-server on loopback",
        )
    )
    print()
    print(
        format_scale(
            result.turns,
            "turn: question -> first token",
            "1 instance each, a new session per question, rotating order; PostgreSQL "
            "(initdb + pg_ctl, server defaults; the store commits with synchronous_commit=off) "
            f"on loopback; goal: within "
            f"+{TURN_OVERHEAD_GOAL_MS:.0f} ms of the default",
        )
    )
    print()
    print(
        format_scale(result.limiters, "limiter decision alone", "ms per take(), alternating blocks")
    )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average during the run: {load} on {os.cpu_count()} CPUs")
    print()
    if args.smoke:
        throughput, failovers = run_balancer_bench(
            turns=SMOKE_QUESTIONS * 2, warmup=2, trials=1, default_lease_trials=0
        )
    else:
        throughput, failovers = run_balancer_bench()
    print(format_throughput(throughput, THROUGHPUT_CLIENTS))
    print()
    print(format_failover(failovers))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average after the balancer runs: {load} on {os.cpu_count()} CPUs")
    failed = any(one.failed for one in result.answers + result.turns) or any(
        one.failed for one in throughput
    )
    return 1 if failed else 0
