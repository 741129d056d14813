"""`bench scale`, the balancer part: throughput with 1 and 3 instances, and failover.

Both run real processes on loopback (`LocalCluster`: Redis, `serve-ask`
instances sharing one PostgreSQL database (`LocalPostgres`, durable settings),
haproxy with the configuration docs/deployment.md shows).

Throughput: one cluster of three unpaced instances; clients each submit turns
(a new session each, read to the end) through the balancer for a fixed number
of turns, in alternating blocks with all three instances in rotation and with
two taken out through haproxy's admin socket (maintenance mode), so both
figures come from the same processes under the same machine load. The
one-instance figure is the baseline.

Failover: clusters with paced answers, one with a short lease
(`FAILOVER_TRIALS` kills) and one with the default lease (one kill); in each
trial the reader (the page's turn adapter over httpx, see `failover`) asks,
the instance streaming the answer is SIGKILLed, and the time until the
reader's answer is final is measured from the kill and from the moment the
turn's lease ran out (read from the shared store). The goal: final within
`FAILOVER_GOAL_SECONDS` of the lease's expiry.
"""

import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from ..chat.turn.adapter import (
    build_submit,
    new_session_id,
)
from ..server.turn_app import TURN_LEASE_SECONDS
from ..server.turn_resume import TURN_REMOTE_POLL_SECONDS
from .backend import _NODELAY, BENCH_QUESTIONS, PROJECT_ROOT
from .cluster import LocalCluster
from .failover import Failover, kill_mid_answer
from .local_postgres import LocalPostgres

THROUGHPUT_TURNS: Final = 240
"""Turns per setup (over all blocks), after the warm-up."""
THROUGHPUT_WARMUP: Final = 12
THROUGHPUT_CLIENTS: Final = 6
"""Clients submitting at once: enough to keep three instances busy."""
THROUGHPUT_BLOCKS: Final = 4
"""Alternating blocks per setup (3, 1, 1, 3, 3, 1, ...)."""
FAILOVER_TRIALS: Final = 2
"""Kills per run (a cluster of three keeps one instance after two)."""
FAILOVER_LEASE_SECONDS: Final = 2.0
FAILOVER_PACE_SECONDS: Final = 0.05
"""Seconds between extractive deltas: an answer lasts seconds, long enough to kill mid-way."""
FAILOVER_GOAL_SECONDS: Final = 2.0
FAILOVER_QUESTION: Final = "How do I configure rate limiting?"


@dataclass(slots=True)
class Throughput:
    """Turns answered through the balancer by one setup: wall time and per-turn latency."""

    name: str
    instances: int
    seconds: float = 0.0
    samples_ms: list[float] = field(default_factory=list)
    failed: int = 0

    @property
    def per_second(self) -> float:
        return len(self.samples_ms) / self.seconds if self.seconds else 0.0

    def quantile(self, q: float) -> float:
        ordered = sorted(self.samples_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def _one_turn(client: httpx.AsyncClient, url: str, question: str) -> float | None:
    """Milliseconds for one whole turn (submit to final snapshot); None unless complete."""
    body = build_submit(new_session_id(), "t-" + new_session_id()[:16], question)
    started = time.perf_counter()
    last = b""
    async with client.stream("POST", url, json=body) as response:
        async for line in response.aiter_lines():
            if line:
                last = line.encode()
    if response.status_code != 200 or b'"status":"complete"' not in last:
        return None
    return (time.perf_counter() - started) * 1000


async def _block(url: str, turns: int, clients: int, into: Throughput | None) -> None:
    queue = list(range(turns))
    transport = httpx.AsyncHTTPTransport(socket_options=_NODELAY)
    async with httpx.AsyncClient(timeout=60, transport=transport) as client:

        async def worker() -> None:
            while queue:
                index = queue.pop()
                value = await _one_turn(client, url, BENCH_QUESTIONS[index % len(BENCH_QUESTIONS)])
                if into is None:
                    continue
                if value is None:
                    into.failed += 1
                else:
                    into.samples_ms.append(value)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        if into is not None:
            into.seconds += time.perf_counter() - started


def measure_throughput(
    cluster: LocalCluster, turns: int, clients: int, warmup: int, blocks: int = THROUGHPUT_BLOCKS
) -> list[Throughput]:
    """1 instance (baseline) and all of them, alternating blocks on the same processes."""
    url = cluster.url + "/api/turn"
    single = Throughput("1 instance behind haproxy", 1)
    every = Throughput(f"{len(cluster.members)} instances behind haproxy", len(cluster.members))
    asyncio.run(_block(url, warmup, clients, None))
    others = [m.name for m in cluster.members[1:]]
    for index in range(blocks * 2):
        # 3, 1, 1, 3, 3, 1...: each setup goes first as often as second.
        setup = (single, every)[(index + index // 2) % 2]
        for name in others:
            cluster.set_in_rotation(name, setup is every)
        asyncio.run(_block(url, turns // blocks, clients, setup))
    for name in others:
        cluster.set_in_rotation(name, True)
    return [single, every]


def run_balancer_bench(
    turns: int = THROUGHPUT_TURNS,
    clients: int = THROUGHPUT_CLIENTS,
    warmup: int = THROUGHPUT_WARMUP,
    trials: int = FAILOVER_TRIALS,
    default_lease_trials: int = 1,
) -> tuple[list[Throughput], list[Failover]]:
    site = PROJECT_ROOT / "docs" / "site.json"
    docs = PROJECT_ROOT / "docs"
    site_id = _site_id(site)
    with (
        tempfile.TemporaryDirectory(prefix="agentskit-balancer-") as folder,
        LocalPostgres(durable=True) as postgres,
    ):
        unpaced = ("--pace", "0", "--rate-capacity", "1000000", "--rate-refill", "1000000",
                   "--max-streams-per-client", "1000000")  # fmt: skip
        place = Path(folder)

        def cluster(name: str, flags: tuple[str, ...]) -> LocalCluster:
            return LocalCluster(
                place / name,
                site_file=site,
                docs=docs,
                flags=flags,
                sessions=postgres.create_database(),
            )

        with cluster("throughput", unpaced) as c:
            throughput = measure_throughput(c, turns, clients, warmup)
        failovers: list[Failover] = []
        leases = [(FAILOVER_LEASE_SECONDS, trials), (TURN_LEASE_SECONDS, default_lease_trials)]
        for lease, count in leases:
            if not count:
                continue
            paced = ("--pace", str(FAILOVER_PACE_SECONDS), "--turn-lease", str(lease))
            with cluster(f"failover-{lease:g}", paced) as c:
                for _ in range(count):
                    failovers.append(kill_mid_answer(c, site_id, FAILOVER_QUESTION, lease))
    return throughput, failovers


def _site_id(site: Path) -> str:
    return str(json.loads(site.read_text(encoding="utf-8"))["siteId"])


def format_throughput(series: list[Throughput], clients: int) -> str:
    baseline = series[0]
    header = f"{'turns through haproxy, ' + str(clients) + ' clients':<34}{'n':>5}"
    header += f"{'turns/s':>10}{'p50':>11}{'p95':>11}{'ratio':>9}"
    rows = [header, "-" * len(header)]
    for one in series:
        ratio = "baseline" if one is baseline else f"{one.per_second / baseline.per_second:.2f}x"
        rows.append(
            f"{one.name:<34}{len(one.samples_ms):>5}{one.per_second:>10.1f}"
            f"{one.quantile(0.5):>9.1f}ms{one.quantile(0.95):>9.1f}ms{ratio:>9}"
        )
    failed = sum(one.failed for one in series)
    rows.append(
        "unpaced extractive answers, a new session per turn, PostgreSQL sessions and Redis\n"
        f"limits shared, alternating blocks; failed: {failed}"
    )
    rows.append(
        f"Not scaling: this machine has {os.cpu_count()} CPUs, shared by every process here\n"
        "(the instances, haproxy, PostgreSQL, Redis, the clients) and by other work. Three\n"
        "instances get no more CPU than one (one instance's event loop uses one core, three can\n"
        "spread over both), so the ratio shows the balancer's and the extra processes' cost\n"
        "against that, not what more machines would give."
    )
    return "\n".join(rows)


def format_failover(trials: list[Failover]) -> str:
    rows = [
        "failover: the instance streaming an answer is killed (kill -9); the reader (the page's "
        "turn\nadapter) resumes through haproxy; the instance it reaches follows the session in "
        f"the store\n(every {TURN_REMOTE_POLL_SECONDS:g} s) and ends the turn when the lease runs "
        f"out; default --turn-lease {TURN_LEASE_SECONDS:g} s",
    ]
    header = (
        f"{'trial':<7}{'lease':>7}{'killed':>8}{'lease ends':>12}{'reader final':>14}"
        f"{'after lease':>13}{'goal':>8}  {'status':<7}{'code':<23}{'resumes':>7}"
    )
    rows += [header, "-" * len(header)]
    for number, one in enumerate(trials, 1):
        met = "met" if one.after_lease <= FAILOVER_GOAL_SECONDS else "MISSED"
        lease = f"{one.lease_seconds:g} s"
        rows.append(
            f"{number:<7}{lease:>7}{one.killed:>8}{one.lease_end_after_kill:>10.2f} s"
            f"{one.ended_after_kill:>12.2f} s{one.after_lease:>11.2f} s{met:>8}  "
            f"{one.status:<7}{one.error_code or '-':<23}{one.resumed:>7}"
        )
    rows.append(
        "times after the kill; goal: the reader's answer final (interrupted, with Retry) <= "
        f"{FAILOVER_GOAL_SECONDS:g} s\nafter the lease ran out"
    )
    return "\n".join(rows)


__all__ = [
    "Throughput",
    "format_failover",
    "format_throughput",
    "measure_throughput",
    "run_balancer_bench",
]
