"""`make bench` section `question-log`: what `serve-ask --question-log` costs per question.

Four backends in this process, built by `ask_serve.build_app` from the same docs (ours,
docs/ with docs/site.json) and the same settings: one with the SQLite log (a temporary
file), one with the PostgreSQL log (a database on a `LocalPostgres` started for the run,
durable settings as in production: the writer thread's batches commit with fsync), and two
without (the second is the noise floor: the same backend measured twice), each on a real
uvicorn on loopback. The same questions (answered, near misses, declined) are asked of all
four, one by one, the order rotated every round, so machine noise falls on each alike.
Printed: the request time (POST to the last byte) p50 and p90 of each; per log, the median
of the per-round differences (log on - log off) beside the noise floor's (log off again -
log off: what a difference of nothing looks like on this machine now); then the write alone
as the request sees it: SQLite's `record_question` (the write itself) and PostgreSQL's
(queueing the row), p50 and p90, with the PostgreSQL writer's rows written, failed and
dropped.
The extractive answer is sent unpaced (`pace_seconds=0`): what is measured is the work.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Final

QUESTIONS: Final = (
    "How do I embed the Ask widget on my site?",
    "Which attributes does the agentskit-ask element accept?",
    "How do I deploy the backend behind haproxy?",
    "What does the question log keep?",
    "How do I configure the content policy of nginx for the mirror?",
    "What is the capital of Mongolia?",
)
CITED: Final = "/docs/embedding.html#embed-the-widget-the-html-snippet"
ROUNDS_PER_RUN: Final = 60
"""Questions per backend per `--runs` unit (5 runs: 300 requests to each)."""
SMOKE_ROUNDS: Final = 6
"""`--smoke` (make bench-smoke): one question of each kind, to show the section runs."""
WARMUP_ROUNDS: Final = 10
WRITES_PER_RUN: Final = 400
WRITES_BETWEEN_SETTLES: Final = 200


def _quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def question_log_command(args: argparse.Namespace) -> int:
    import httpx

    from ..server.ask_serve import AskServeConfig, build_app
    from ..server.question_log import QuestionLog, QuestionRecorder
    from ..server.question_log_postgres import PostgresQuestionLog
    from ..server.static import AppServer
    from .local_postgres import LocalPostgres

    root = Path(__file__).resolve().parents[3]
    smoke = bool(getattr(args, "smoke", False))
    rounds = SMOKE_ROUNDS if smoke else max(args.runs, 1) * ROUNDS_PER_RUN
    postgres = LocalPostgres(durable=True).start()
    try:
        with tempfile.TemporaryDirectory(prefix="agentskit-bench-log-") as folder:
            log_path = Path(folder) / "questions.db"
            log_url = postgres.create_database()
            servers: dict[str, AppServer] = {}

            def backend(question_log: Path | str | None) -> AppServer:
                config = AskServeConfig(
                    docs=root / "docs",
                    exclude=["design/*"],
                    pace_seconds=0.0,
                    rate_capacity=1_000_000,
                    rate_refill=1_000_000.0,
                    question_log=question_log,
                )
                return AppServer(build_app(config)).start()

            try:
                servers["log off"] = backend(None)
                servers["SQLite log"] = backend(log_path)
                servers["PostgreSQL log"] = backend(log_url)
                servers["log off again"] = backend(None)
                timings = _interleaved(httpx, servers, rounds)
                pg_app: Any = servers["PostgreSQL log"].app
                pg_log: PostgresQuestionLog = pg_app.state.ask.question_log
                pg_log.close()  # what it queued is written before the counts are read
                pg_counts = (pg_log.written, pg_log.failed, pg_log.dropped)
            finally:
                for server in servers.values():
                    server.stop()
            writes_count = SMOKE_ROUNDS if smoke else max(args.runs, 1) * WRITES_PER_RUN
            writes: dict[str, list[float]] = {}
            alone: dict[str, QuestionRecorder] = {
                "SQLite (the write)": QuestionLog(log_path),
                "PostgreSQL (queueing it)": PostgresQuestionLog(log_url),
            }
            for name, logged in alone.items():
                writes[name] = _writes(logged, writes_count)
                logged.close()
    finally:
        postgres.stop()

    print(f"question log: {rounds} questions to each backend, interleaved (ms, POST to last byte)")
    for name, values in timings.items():
        print(f"  {name:14}  p50 {_quantile(values, 0.5):6.2f}  p90 {_quantile(values, 0.9):6.2f}")
    off = timings["log off"]
    floor = statistics.median(a - b for a, b in zip(timings["log off again"], off, strict=True))
    print("  cost per question, median of paired differences (target <= +2 ms):")
    for name in ("SQLite log", "PostgreSQL log"):
        cost = statistics.median(a - b for a, b in zip(timings[name], off, strict=True))
        print(f"    {name:14}  {cost:+.2f} ms")
    print(f"    noise floor (log off again - log off), same run: {floor:+.2f} ms")
    written, failed, dropped = pg_counts
    print(f"  PostgreSQL writer: {written} rows written, {failed} failed, {dropped} dropped")
    print("  the write alone, as the request sees it:")
    for name, values in writes.items():
        print(
            f"    {name:25}  p50 {_quantile(values, 0.5):.3f} ms  "
            f"p90 {_quantile(values, 0.9):.3f} ms"
        )
    return 0


def _interleaved(httpx: Any, servers: dict[str, Any], rounds: int) -> dict[str, list[float]]:
    """Each question to every backend in turn, the order rotated every round (ms each)."""
    timings: dict[str, list[float]] = {name: [] for name in servers}
    with httpx.Client(timeout=30) as client:
        for index in range(WARMUP_ROUNDS + rounds):
            question = QUESTIONS[index % len(QUESTIONS)]
            names = list(servers)
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                body = {"messages": [{"role": "user", "content": question}]}
                started = time.perf_counter()
                response = client.post(f"{servers[name].url}/api/ask", json=body)
                response.read()
                elapsed = (time.perf_counter() - started) * 1000
                if response.status_code not in (200, 422):
                    raise RuntimeError(f"{name}: {response.status_code}")
                if index >= WARMUP_ROUNDS:
                    timings[name].append(elapsed)
    return timings


def _writes(logged: Any, count: int) -> list[float]:
    """`record_question` timed `count` times (ms each); the PostgreSQL writer is let catch up
    (untimed) every `WRITES_BETWEEN_SETTLES` rows, so its queue's bound never drops one."""
    today = dt.date.today()
    writes: list[float] = []
    for n in range(count):
        queued = getattr(logged, "_queue", None)
        if queued is not None and n % WRITES_BETWEEN_SETTLES == 0:
            while not queued.empty():
                time.sleep(0.005)
        started = time.perf_counter()
        logged.record_question(
            f"bench-{n}", today, "docs", QUESTIONS[n % len(QUESTIONS)], "answered", [CITED]
        )
        writes.append((time.perf_counter() - started) * 1000)
    return writes
