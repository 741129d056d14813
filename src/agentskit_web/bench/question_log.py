"""`make bench` section `question-log`: what `serve-ask --question-log` costs per question.

Three backends in this process, built by `ask_serve.build_app` from the same docs (ours,
docs/ with docs/site.json) and the same settings: one with a question log in a temporary
SQLite file and two without (the second is the noise floor: the same backend measured
twice), each on a real uvicorn on loopback. The same questions (answered, near misses,
declined) are asked of all three, one by one, the order rotated every round, so machine
noise falls on each alike. Printed: the request time (POST to the last byte) p50 and p90 of
each; the median of the per-round differences (log on - log off, and log off again - log
off: what a difference of nothing looks like on this machine now); then the log's write
alone (`QuestionLog.record_question`) p50 and p90.
The extractive answer is sent unpaced (`pace_seconds=0`): what is measured is the work.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path
from typing import Final

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


def _quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def question_log_command(args: argparse.Namespace) -> int:
    import httpx

    from ..server.ask_serve import AskServeConfig, build_app
    from ..server.question_log import QuestionLog
    from ..server.static import AppServer

    root = Path(__file__).resolve().parents[3]
    smoke = bool(getattr(args, "smoke", False))
    rounds = SMOKE_ROUNDS if smoke else max(args.runs, 1) * ROUNDS_PER_RUN
    with tempfile.TemporaryDirectory(prefix="agentskit-bench-log-") as folder:
        log_path = Path(folder) / "questions.db"

        def backend(question_log: Path | None) -> AppServer:
            config = AskServeConfig(
                docs=root / "docs",
                exclude=["design/*"],
                pace_seconds=0.0,
                rate_capacity=1_000_000,
                rate_refill=1_000_000.0,
                question_log=question_log,
            )
            return AppServer(build_app(config)).start()

        servers = {
            "log off": backend(None),
            "log on": backend(log_path),
            "log off again": backend(None),
        }
        timings: dict[str, list[float]] = {name: [] for name in servers}
        try:
            with httpx.Client(timeout=30) as client:
                for index in range(WARMUP_ROUNDS + rounds):
                    question = QUESTIONS[index % len(QUESTIONS)]
                    names = list(servers)
                    shift = index % len(names)
                    order = names[shift:] + names[:shift]
                    for name in order:
                        body = {"messages": [{"role": "user", "content": question}]}
                        started = time.perf_counter()
                        response = client.post(f"{servers[name].url}/api/ask", json=body)
                        response.read()
                        elapsed = (time.perf_counter() - started) * 1000
                        if response.status_code not in (200, 422):
                            raise RuntimeError(f"{name}: {response.status_code}")
                        if index >= WARMUP_ROUNDS:
                            timings[name].append(elapsed)
        finally:
            for server in servers.values():
                server.stop()
        logged = QuestionLog(log_path)
        writes: list[float] = []
        today = dt.date.today()
        for n in range(SMOKE_ROUNDS if smoke else max(args.runs, 1) * WRITES_PER_RUN):
            started = time.perf_counter()
            logged.record_question(
                f"bench-{n}", today, "docs", QUESTIONS[n % 6], "answered", [CITED]
            )
            writes.append((time.perf_counter() - started) * 1000)
        logged.close()

    print(f"question log: {rounds} questions to each backend, interleaved (ms, POST to last byte)")
    for name, values in timings.items():
        print(f"  {name:13}  p50 {_quantile(values, 0.5):6.2f}  p90 {_quantile(values, 0.9):6.2f}")
    off = timings["log off"]
    cost = statistics.median(a - b for a, b in zip(timings["log on"], off, strict=True))
    floor = statistics.median(a - b for a, b in zip(timings["log off again"], off, strict=True))
    print(f"  cost per question, median of paired differences: {cost:+.2f} ms (target <= +2 ms)")
    print(f"  noise floor (log off again - log off), same run:   {floor:+.2f} ms")
    print(
        f"  the write alone (record_question, WAL, synchronous=NORMAL): "
        f"p50 {_quantile(writes, 0.5):.3f} ms  p90 {_quantile(writes, 0.9):.3f} ms"
    )
    return 0
