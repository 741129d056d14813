"""Privacy-safe backend metrics (`agentskit.chat.backend-metric` v1) as JSON lines.

A metric carries only ids of the deployment and the request (site, corpus and
a random server-made request id), a name from a closed list, a finite
non-negative value, its unit, an outcome and a time. There is deliberately no
field where a prompt, an answer, a source, a credential, a subject or a session
id could go: `Metric` validates every field against closed patterns, so a
mistaken caller cannot smuggle text into the log.
"""

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal, Protocol, TextIO, get_args

from ..protocol.identifiers import is_safe_id
from ..protocol.wire_json import dump_json

METRIC_PROTOCOL: Final = "agentskit.chat.backend-metric"
METRIC_VERSION: Final = 1

MetricName = Literal[
    "request.total_ms",
    "stream.first_event_ms",
    "stream.first_token_ms",
    "stream.bytes",
    "stream.events",
    "stream.snapshots",
    "deterministic.fallback",
    "retrieval.total_ms",
    "retrieval.documents",
    "persistence.total_ms",
    "cancellation.count",
    "conflict.count",
    "error.count",
    "usage.input_tokens",
    "usage.output_tokens",
    "usage.total_tokens",
    "cost.usd",
]
METRIC_NAMES: Final = frozenset(get_args(MetricName))
Unit = Literal["ms", "bytes", "count", "tokens", "usd"]
UNITS: Final = frozenset(get_args(Unit))
Outcome = Literal["ok", "rejected", "cancelled", "error"]
OUTCOMES: Final = frozenset(get_args(Outcome))

_REQUEST_ID = re.compile(r"^req-[0-9a-f]{32}$")


@dataclass(frozen=True, slots=True)
class Metric:
    """One validated metric record; construction fails on anything outside the contract."""

    name: str
    site_id: str
    corpus_id: str
    request_id: str
    value: float
    unit: str
    outcome: str
    emitted_at: str

    def __post_init__(self) -> None:
        if self.name not in METRIC_NAMES or self.unit not in UNITS or self.outcome not in OUTCOMES:
            raise ValueError("Metric name, unit or outcome outside the contract.")
        if not (is_safe_id(self.site_id) and is_safe_id(self.corpus_id)):
            raise ValueError("Metric site/corpus ids must be safe ids.")
        if not _REQUEST_ID.match(self.request_id):
            raise ValueError("Metric request id must be a server-made request id.")
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise ValueError("Metric value must be a finite non-negative number.")
        if value == float("inf"):
            raise ValueError("Metric value must be a finite non-negative number.")

    def to_wire(self) -> dict[str, object]:
        return {
            "protocol": METRIC_PROTOCOL,
            "version": METRIC_VERSION,
            "name": self.name,
            "siteId": self.site_id,
            "corpusId": self.corpus_id,
            "requestId": self.request_id,
            "value": self.value,
            "unit": self.unit,
            "outcome": self.outcome,
            "emittedAt": self.emitted_at,
        }


class MetricsSink(Protocol):
    """Where metrics go. `emit` must not raise into the request path."""

    def emit(self, metric: Metric) -> None: ...


def utc_timestamp(seconds: float) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmmZ` for a POSIX time."""
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class MemoryMetrics:
    """Keeps metrics in a list: for tests and the bench (countable by name/outcome)."""

    def __init__(self) -> None:
        self.records: list[Metric] = []
        self._lock = threading.Lock()

    def emit(self, metric: Metric) -> None:
        with self._lock:
            self.records.append(metric)

    def count(self, name: str, outcome: str | None = None) -> int:
        return sum(
            1 for m in self.records if m.name == name and (outcome is None or m.outcome == outcome)
        )

    def lines(self) -> list[str]:
        return [dump_json(m.to_wire()) for m in self.records]


class JsonLinesMetrics:
    """Appends one JSON line per metric to a file or text stream (flushed per line)."""

    def __init__(self, target: str | Path | TextIO) -> None:
        self._lock = threading.Lock()
        if isinstance(target, str | Path):
            self._stream: TextIO = open(target, "a", encoding="utf-8")  # noqa: SIM115
            self._owned = True
        else:
            self._stream = target
            self._owned = False

    def emit(self, metric: Metric) -> None:
        line = dump_json(metric.to_wire()) + "\n"
        try:
            with self._lock:
                self._stream.write(line)
                self._stream.flush()
        except (OSError, ValueError):
            pass  # metrics must never break an answer

    def close(self) -> None:
        if self._owned:
            with self._lock:
                self._stream.close()


class NullMetrics:
    """Discards metrics."""

    def emit(self, metric: Metric) -> None:
        return None


class MetricRecorder:
    """Per-request helper: fills in the ids and the time, swallows sink failures."""

    def __init__(
        self,
        sink: MetricsSink,
        *,
        site_id: str,
        corpus_id: str,
        request_id: str,
        wall_clock: Callable[[], float],
    ) -> None:
        self._sink = sink
        self._ids = (site_id, corpus_id, request_id)
        self._wall = wall_clock

    @property
    def request_id(self) -> str:
        """The server-made request id (also used for the cite tool id)."""
        return self._ids[2]

    def record(self, name: MetricName, value: float, unit: Unit, outcome: Outcome) -> None:
        site_id, corpus_id, request_id = self._ids
        try:
            metric = Metric(
                name,
                site_id,
                corpus_id,
                request_id,
                round(float(value), 3),
                unit,
                outcome,
                utc_timestamp(self._wall()),
            )
            self._sink.emit(metric)
        except Exception:
            return
