"""Backend benchmark: time to first byte / to done, and questions per second.

`run_ask_bench()` starts the reference backend as its own process
(`python -m agentskit_web.server.ask_serve`, uvicorn, one worker) on a free
127.0.0.1 port over the project's docs, with the extractive generator unpaced,
then measures from a client in this process:

- sequential: one client, one question at a time — the latency a lone reader
  sees (time to the response headers, time to the final `done`);
- concurrent: `concurrency` clients asking back to back — the same latencies
  under load, and completed questions per second.

Questions cycle through a fixed list about the demo docs, so runs compare.
`format_table(result)` renders the figures; `bench.py` (make bench) calls both.
"""

import argparse
import asyncio
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from ..protocol import AskEventDecoder

BENCH_QUESTIONS: Final = (
    "How do I embed the Ask widget?",
    "Does the widget load anything from a CDN?",
    "What happens when the backend is offline?",
    "Which Content-Security-Policy does the page need?",
    "What is the rate limit?",
    "How are conversations stored?",
    "How do I use bearer tokens?",
    "Which events are in the answer stream?",
)
_NODELAY: Final = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
PROJECT_ROOT: Final = Path(__file__).resolve().parents[3]


@dataclass(frozen=True, slots=True)
class Timing:
    ttfb_ms: float
    done_ms: float
    ok: bool


@dataclass(slots=True)
class Phase:
    """Latencies of one phase (ms) and its throughput."""

    name: str
    clients: int
    timings: list[Timing] = field(default_factory=list)
    wall_seconds: float = 0.0

    @property
    def completed(self) -> int:
        return sum(1 for t in self.timings if t.ok)

    @property
    def qps(self) -> float:
        return self.completed / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def stat(self, what: str, quantile: float) -> float:
        values = sorted(float(getattr(t, what)) for t in self.timings if t.ok)
        if not values:
            return float("nan")
        if quantile == 0.5:
            return float(statistics.median(values))
        return values[max(0, math.ceil(quantile * len(values)) - 1)]  # nearest rank


@dataclass(slots=True)
class AskBenchResult:
    phases: list[Phase]


async def _one(client: httpx.AsyncClient, url: str, question: str) -> Timing:
    body = {"messages": [{"role": "user", "content": question}]}
    decoder = AskEventDecoder()
    started = time.perf_counter()
    done = False
    async with client.stream("POST", url, json=body) as response:
        # httpx enters the stream once the status line and headers are in: that is the TTFB,
        # before any body byte (a server that sends headers early is not charged for them).
        headers = time.perf_counter()
        async for chunk in response.aiter_raw():
            for event in decoder.feed(chunk):
                done = done or event.get("type") == "done"
        for event in decoder.finish():
            done = done or event.get("type") == "done"
    finished = time.perf_counter()
    ok = response.status_code == 200 and done
    return Timing((headers - started) * 1000, (finished - started) * 1000, ok)


async def _phase(url: str, name: str, clients: int, total: int) -> Phase:
    phase = Phase(name, clients)
    questions = iter(range(total))
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    # TCP_NODELAY: without it the client's separate header/body writes meet the
    # server's delayed ACK and every request gains ~40 ms that is not the backend's.
    transport = httpx.AsyncHTTPTransport(limits=limits, socket_options=_NODELAY)
    async with httpx.AsyncClient(timeout=60, transport=transport) as client:

        async def worker() -> None:
            for index in questions:
                question = BENCH_QUESTIONS[index % len(BENCH_QUESTIONS)]
                phase.timings.append(await _one(client, url, question))

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        phase.wall_seconds = time.perf_counter() - started
    return phase


class _Backend:
    """The backend as a child process; the URL comes from its first stdout line."""

    def __init__(self, site: Path, docs: Path, *flags: str) -> None:
        command = [
            sys.executable, "-m", "agentskit_web.server.ask_serve",
            "--site", str(site), "--docs", str(docs), "--port", "0", "--pace", "0",
            "--rate-capacity", "1000000", "--rate-refill", "1000000",
            "--max-streams-per-client", "1000000", *flags,
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("Ask backend: "):
            self.stop()
            raise RuntimeError(f"Ask backend did not start: {line.strip()}")
        self.url = line.removeprefix("Ask backend: ").strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def run_ask_bench(
    *,
    concurrency: int = 10,
    questions: int = 400,
    sequential: int = 100,
    warmup: int = 20,
    site: Path | None = None,
    docs: Path | None = None,
) -> AskBenchResult:
    """Start a backend process, measure it, stop it; returns the figures."""
    site = site or PROJECT_ROOT / "docs" / "site.json"
    docs = docs or PROJECT_ROOT / "docs"
    backend = _Backend(site, docs)
    try:

        async def measure() -> list[Phase]:
            await _phase(backend.url, "warm-up", 1, warmup)
            lone = await _phase(backend.url, "1 client", 1, sequential)
            loaded = await _phase(backend.url, f"{concurrency} clients", concurrency, questions)
            return [lone, loaded]

        phases = asyncio.run(measure())
    finally:
        backend.stop()
    return AskBenchResult(phases)


def format_table(result: AskBenchResult) -> str:
    """A fixed-width table of the figures."""
    header = (
        f"{'Ask backend (1 uvicorn process)':<32}{'n':>5}{'TTFB p50':>10}{'TTFB p95':>10}"
        f"{'done p50':>10}{'done p95':>10}{'q/s':>8}"
    )
    rows = [header, "-" * len(header)]
    for phase in result.phases:
        rows.append(
            f"{phase.name:<32}{phase.completed:>5}"
            f"{phase.stat('ttfb_ms', 0.5):>8.1f}ms{phase.stat('ttfb_ms', 0.95):>8.1f}ms"
            f"{phase.stat('done_ms', 0.5):>8.1f}ms{phase.stat('done_ms', 0.95):>8.1f}ms"
            f"{phase.qps:>8.1f}"
        )
    failed = sum(len(p.timings) - p.completed for p in result.phases)
    rows.append(f"questions over the demo docs, extractive generator; failed: {failed}")
    return "\n".join(rows)


def backend_command(args: argparse.Namespace) -> int:
    result = run_ask_bench()
    print(format_table(result))
    return 0
