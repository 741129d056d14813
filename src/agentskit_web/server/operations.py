"""What an operator's load balancer and monitoring read: health, readiness, metrics, draining.

- `GET /healthz` answers 200 while the process serves at all (a liveness probe).
- `GET /readyz` answers 200 only when the search index is loaded and the session
  stores answer a probe within `READY_CHECK_TIMEOUT_SECONDS`, and 503 while the
  instance drains after SIGTERM, so a balancer stops sending it readers before it
  goes away. The rate limiter is probed and reported too, but it does not gate:
  the shared limiter fails open to local buckets, and a Redis outage that marked
  every instance unready would turn that choice into a full outage at the balancer
  (docs/deployment.md). The body names each check and whether it passed, never an
  error's text (which could hold a connection string).
- `GET /metrics` is the Prometheus text format from the official `prometheus-client`,
  with a registry of this app's own (no process-global state between apps).

`PrometheusMetrics` is a `MetricsSink`: the Ask endpoint already emits privacy-safe
records (ids, a closed list of names, a number, an outcome), and the sink turns
them into counters and histograms, so nothing from a question's text can reach
the exposition. `OperationsMiddleware` adds what only the HTTP layer sees:
streams in flight and 429 answers, labelled by route (ask, turn, turn_resume).

`Drain` is the graceful-shutdown state: SIGTERM stops uvicorn accepting, marks
the instance not ready, and gives running answers `SHUTDOWN_DEADLINE_SECONDS`
to finish; at the deadline every Ask stream still running ends with a retryable
in-stream error (`shutdown`), and `SHUTDOWN_FLUSH_SECONDS` later uvicorn cancels
whatever is left.
"""

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, Final

import anyio
import uvicorn
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .metrics import Metric, MetricsSink

HEALTH_PATH: Final = "/healthz"
READY_PATH: Final = "/readyz"
METRICS_PATH: Final = "/metrics"
READY_CHECK_TIMEOUT_SECONDS: Final = 1.0
"""A readiness probe that takes longer than this counts as failed (balancers time out at ~2 s)."""
SHUTDOWN_DEADLINE_SECONDS: Final = 20.0
"""After SIGTERM, running answers get this long to finish before they end as interrupted."""
SHUTDOWN_FLUSH_SECONDS: Final = 1.0
"""After the deadline, time for the interrupted events to be sent before uvicorn cancels tasks."""

FIRST_TOKEN_BUCKETS: Final = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds from the request to the first text delta (the widget's perceived latency)."""
DURATION_BUCKETS: Final = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
"""Seconds a whole Ask request took (an answer may stream for up to the site's timeout)."""


# --------------------------------------------------------------------------- metrics


class PrometheusMetrics:
    """A `MetricsSink` that keeps Prometheus counters and histograms (and may tee records on).

    Only record names, outcomes and numbers are read, so the exposition holds
    nothing a reader typed. `also` receives every record too (the JSON-lines file).
    """

    def __init__(self, also: MetricsSink | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._also = also
        registry = self.registry
        self.requests = Counter(
            "agentskit_ask_requests",
            "Ask requests by outcome (ok, rejected, cancelled, error).",
            ["outcome"],
            registry=registry,
        )
        self.first_token = Histogram(
            "agentskit_first_token_seconds",
            "Time from an Ask request to its first text delta.",
            buckets=FIRST_TOKEN_BUCKETS,
            registry=registry,
        )
        self.duration = Histogram(
            "agentskit_answer_duration_seconds",
            "Time an Ask request took, by outcome.",
            ["outcome"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.declined = Counter(
            "agentskit_declined_questions",
            "Questions declined because the docs held no grounded source (Ask and turn).",
            registry=registry,
        )
        self.active_streams = Gauge(
            "agentskit_active_streams",
            "Ask and turn requests being answered or followed now, by route.",
            ["route"],
            registry=registry,
        )
        self.rate_limited = Counter(
            "agentskit_rate_limited_requests",
            "Requests refused with 429 (rate, in-flight or failed-authentication limit), by route.",
            ["route"],
            registry=registry,
        )
        self.responses = Counter(
            "agentskit_http_responses",
            "Responses of the Ask and turn routes by route and status class (2xx, 4xx, 5xx).",
            ["route", "status_class"],
            registry=registry,
        )

    def emit(self, metric: Metric) -> None:
        if metric.name == "request.total_ms":
            self.requests.labels(metric.outcome).inc()
            self.duration.labels(metric.outcome).observe(metric.value / 1000)
        elif metric.name == "stream.first_token_ms":
            self.first_token.observe(metric.value / 1000)
        elif metric.name == "retrieval.total_ms" and metric.outcome == "rejected":
            self.declined.inc()
        if self._also is not None:
            self._also.emit(metric)

    def watch_question_log(self, log: object) -> None:
        """Expose a PostgreSQL question log's writer counts (rows written, failed, dropped)
        as `agentskit_question_log_rows{state=...}`, read when scraped; a log without them
        (the SQLite one writes in the request) adds nothing."""
        states = [name for name in ("written", "failed", "dropped") if hasattr(log, name)]
        if not states:
            return
        gauge = Gauge(
            "agentskit_question_log_rows",
            "Question log rows since start by state: written, failed (the database refused "
            "or timed out their batch), dropped (the writer's queue was full).",
            ["state"],
            registry=self.registry,
        )

        def reader(state: str) -> Callable[[], float]:
            return lambda: float(getattr(log, state))

        for state in states:
            gauge.labels(state).set_function(reader(state))

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)


class OperationsMiddleware:
    """Counts streams in flight, 429s and status classes on the routes it is told about.

    `routes` maps an exact path to its label; `prefixes` maps a path prefix
    (the turn resume path, `/api/turn/`) to its label. Other paths pass untouched.
    """

    def __init__(
        self,
        app: ASGIApp,
        metrics: PrometheusMetrics,
        routes: Mapping[str, str],
        prefixes: Mapping[str, str] | None = None,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = dict(routes)
        self.prefixes = dict(prefixes or {})

    def _route(self, path: str) -> str | None:
        if path in self.routes:
            return self.routes[path]
        for prefix, label in self.prefixes.items():
            if path.startswith(prefix):
                return label
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self._route(scope.get("path", "")) if scope["type"] == "http" else None
        if route is None:
            await self.app(scope, receive, send)
            return
        metrics = self.metrics

        async def counted_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                metrics.responses.labels(route, f"{status // 100}xx").inc()
                if status == 429:
                    metrics.rate_limited.labels(route).inc()
            await send(message)

        active = metrics.active_streams.labels(route)
        active.inc()
        try:
            await self.app(scope, receive, counted_send)
        finally:
            active.dec()


# --------------------------------------------------------------------------- draining


class Drain:
    """Graceful-shutdown state shared by the server, `/readyz` and the Ask streams.

    `begin` marks the instance as draining (not ready) and arms the deadline;
    `wait_expired` returns once it has passed. Each waiter gets an event of its
    own, made in the loop it waits in, and `expire` sets each one through its
    loop, so the object is tied to no loop and `expire` may come from any thread.
    """

    def __init__(self) -> None:
        self.draining = False
        self.expired = False
        self.deadline_at: float | None = None
        """When running answers must end (the event loop's clock), once draining."""
        self.background: list[Callable[[], Awaitable[None]]] = []
        """Work that outlives its connection (detached turns): awaited before the process exits."""
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._lock = threading.Lock()

    def begin(self, deadline_seconds: float) -> None:
        """Stop being ready now; end running answers `deadline_seconds` from now."""
        if self.draining:
            return
        self.draining = True
        loop = asyncio.get_running_loop()
        self.deadline_at = loop.time() + max(0.0, deadline_seconds)
        loop.call_later(max(0.0, deadline_seconds), self.expire)

    def expire(self) -> None:
        """The deadline has passed: wake every waiter (safe from any thread)."""
        with self._lock:
            self.draining = True
            self.expired = True
            waiters = list(self._waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed meanwhile
                loop.call_soon_threadsafe(event.set)

    async def wait_expired(self) -> None:
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            if self.expired:
                return
            self._waiters.add(waiter)
        try:
            await waiter[1].wait()
        finally:
            with self._lock:
                self._waiters.discard(waiter)


class DrainingServer(uvicorn.Server):
    """uvicorn's server with SIGTERM as a drain: stop accepting, let answers finish, then end.

    uvicorn already stops accepting and waits for connections on a signal; this
    adds the not-ready state and the deadline after which running answers end as
    interrupted, and it does not re-raise SIGTERM afterwards (uvicorn would, and
    the process would then die by the signal instead of exiting 0 after a clean drain).
    """

    def __init__(self, config: uvicorn.Config, drain: Drain, deadline_seconds: float) -> None:
        super().__init__(config)
        self.drain = drain
        self.deadline_seconds = deadline_seconds

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown, then the drain's background work (bounded by the deadline).

        A turn whose reader went away holds no connection, so uvicorn would
        exit under it; waiting here lets it finish, or end as interrupted at
        the deadline, and be saved either way.
        """
        await super().shutdown(sockets)
        if self.drain.background:
            now = asyncio.get_running_loop().time()
            left = max(0.0, (self.drain.deadline_at or now) - now) + SHUTDOWN_FLUSH_SECONDS
            with anyio.move_on_after(left):
                for work in self.drain.background:
                    await work()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGTERM:
            if not self.drain.draining:
                self.drain.begin(self.deadline_seconds)
            self.should_exit = True
            return
        super().handle_exit(sig, frame)


# --------------------------------------------------------------------------- health routes

ReadyCheck = Callable[[], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class Probe:
    """One readiness check; a failed `gating` one makes `/readyz` answer 503."""

    name: str
    check: ReadyCheck
    gating: bool = True


@dataclass(frozen=True, slots=True)
class Operations:
    """What the operations routes read: the sink, the drain, and named readiness checks."""

    metrics: PrometheusMetrics
    drain: Drain
    probes: Sequence[Probe]


async def _run_check(check: ReadyCheck) -> bool:
    try:
        with anyio.fail_after(READY_CHECK_TIMEOUT_SECONDS):
            return bool(await check())
    except Exception:
        return False


def operations_routes(operations: Operations) -> list[Route]:
    """`/healthz`, `/readyz` and `/metrics` (GET and HEAD)."""

    async def healthz(_request: Request) -> Response:
        return PlainTextResponse("ok\n", headers={"cache-control": "no-store"})

    async def readyz(_request: Request) -> Response:
        results: dict[str, bool] = {}
        for probe in operations.probes:
            results[probe.name] = await _run_check(probe.check)
        failed = [p.name for p in operations.probes if not results[p.name]]
        gating = {p.name for p in operations.probes if p.gating}
        ready = not (gating & set(failed)) and not operations.drain.draining
        body: dict[str, Any] = {
            "ready": ready,
            "draining": operations.drain.draining,
            "checks": results,
            "degraded": [name for name in failed if name not in gating],
        }
        return JSONResponse(
            body, status_code=200 if ready else 503, headers={"cache-control": "no-store"}
        )

    async def metrics(_request: Request) -> Response:
        return Response(
            operations.metrics.exposition(),
            media_type=CONTENT_TYPE_LATEST,
            headers={"cache-control": "no-store"},
        )

    methods = ["GET", "HEAD"]
    return [
        Route(HEALTH_PATH, healthz, methods=methods),
        Route(READY_PATH, readyz, methods=methods),
        Route(METRICS_PATH, metrics, methods=methods),
    ]


def mount_operations(
    app: Starlette,
    operations: Operations,
    *,
    routes: Mapping[str, str],
    prefixes: Mapping[str, str] | None = None,
) -> None:
    """Add the operations routes and the counting middleware to a built app."""
    app.router.routes.extend(operations_routes(operations))
    app.add_middleware(
        OperationsMiddleware, metrics=operations.metrics, routes=routes, prefixes=prefixes
    )
    app.state.operations = operations
