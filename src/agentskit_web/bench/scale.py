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

A second table times the limiter decision alone (`take`, alternating blocks)
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
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from ..protocol import AskEventDecoder
from .backend import _NODELAY, BENCH_QUESTIONS, PROJECT_ROOT, _Backend
from .balancer import THROUGHPUT_CLIENTS, format_failover, format_throughput, run_balancer_bench
from .local_redis import LocalRedis

SCALE_QUESTIONS: Final = 200
"""Questions per backend (after the warm-up); p50 over 200 samples is stable to ~0.1 ms."""
SCALE_WARMUP: Final = 20
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


def run_scale_bench(
    questions: int = SCALE_QUESTIONS,
    warmup: int = SCALE_WARMUP,
    limiter_calls: int = LIMITER_CALLS,
    spaced_calls: int = LIMITER_SPACED_CALLS,
) -> tuple[list[Series], list[Series]]:
    site = PROJECT_ROOT / "docs" / "site.json"
    docs = PROJECT_ROOT / "docs"
    with tempfile.TemporaryDirectory(prefix="agentskit-scale-") as folder:
        redis = LocalRedis(Path(folder))
        redis.start()
        backends: list[_Backend] = []
        try:
            backends.append(_Backend(site, docs))
            backends.append(_Backend(site, docs, "--rate-limit", redis.url))
            urls = {
                "in-process limiter (default)": backends[0].url,
                "Redis limiter (--rate-limit)": backends[1].url,
            }
            answers = asyncio.run(_measure(urls, questions, warmup))
            return answers, _time_limiters(redis.url, limiter_calls, spaced_calls)
        finally:
            for backend in backends:
                backend.stop()
            redis.stop()


def format_scale(series: list[Series], title: str, note: str) -> str:
    baseline = series[0]
    header = f"{title:<38}{'n':>5}{'p50':>10}{'p95':>10}{'Δp50':>10}"
    rows = [header, "-" * len(header)]
    for one in series:
        delta = one.quantile(0.5) - baseline.quantile(0.5)
        shown = "baseline" if one is baseline else f"{delta:+.3f}ms"
        rows.append(
            f"{one.name:<38}{len(one.samples_ms):>5}"
            f"{one.quantile(0.5):>8.3f}ms{one.quantile(0.95):>8.3f}ms{shown:>10}"
        )
    failed = sum(one.failed for one in series)
    rows.append(f"{note}; failed: {failed}")
    return "\n".join(rows)


def scale_command(args: argparse.Namespace) -> int:
    del args
    answers, limiters = run_scale_bench()
    print(
        format_scale(
            answers,
            "question -> first token, 1 instance",
            "alternating questions over the demo docs, extractive generator unpaced, "
            "redis-server on loopback",
        )
    )
    print()
    print(format_scale(limiters, "limiter decision alone", "ms per take(), alternating blocks"))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average during the run: {load} on {os.cpu_count()} CPUs")
    print()
    throughput, failovers = run_balancer_bench()
    print(format_throughput(throughput, THROUGHPUT_CLIENTS))
    print()
    print(format_failover(failovers))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average after the balancer runs: {load} on {os.cpu_count()} CPUs")
    failed = sum(one.failed for one in answers) + sum(one.failed for one in throughput)
    return 0 if failed == 0 else 1
