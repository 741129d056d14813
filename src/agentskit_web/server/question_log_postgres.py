"""The question log in PostgreSQL (`serve-ask --question-log postgresql://...`).

For backends that already keep their turn sessions in PostgreSQL (`--sessions
postgresql://...`): several instances behind a balancer write one log, which `agentskit-web
report postgresql://...` reads. The rows are the SQLite log's (question_log.py), with its
masking (applied before a row is queued) and its retention (rows older than `days` deleted
with every batch written); the day is a `DATE`, the cited sections the same JSON text.

Writes never hold up an answer. `record_question` and `record_feedback` only put the row on
a bounded queue (`QUESTION_LOG_QUEUE_MAX_ROWS`) and return; one writer thread per instance
drains it in batches over its own connection, with 2 s connect and statement timeouts. Past
the bound (the database is down or slow and the queue is full) a row is dropped and counted
(`dropped`); a batch the database refuses or times out is dropped and counted too
(`failed`), the connection is opened again for the next one, and the first of each is said
once on the `agentskit_web` logger with the URL's password hidden. The log is for the owner;
a reader's answer never waits for it, and a database that stalls costs at most the queue's
memory (1,000 rows of at most a few KiB).

A thumbs up can reach one instance before the question's row is written by another (or by
the same one, the answer and the vote racing in the queue): both writes are upserts on the
answer id. The question's write fills the question, verdict and cited pages and keeps a vote
already there; the vote's write keeps the question already there.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

import psycopg

from .question_log import (
    QUESTION_LOG_DEFAULT_DAYS,
    QUESTION_LOG_MAX_CITED,
    LoggedQuestion,
    check_retention,
    mask_personal,
)
from .turn_session_port import SECRET_QUERY_KEY, redacted

QUESTION_LOG_QUEUE_MAX_ROWS: Final = 1_000
"""Rows waiting for the writer at most; past it a row is dropped (and counted)."""
QUESTION_LOG_TIMEOUT_SECONDS: Final = 2.0
"""Connect and statement timeout of the writer: a stalled database fails a batch, not waits."""
QUESTION_LOG_BATCH_MAX_ROWS: Final = 100
"""Rows written in one transaction (the retention delete runs once per batch)."""
QUESTION_LOG_CLOSE_SECONDS: Final = 5.0
"""How long closing waits for the writer to write what is queued."""
_SCHEMA_LOCK_KEY: Final = 0x61676B71  # "agkq": instances starting together create it in turn

_SCHEMA: Final = (
    """
    CREATE TABLE IF NOT EXISTS questions (
        answer_id TEXT PRIMARY KEY,
        day DATE NOT NULL,
        corpus TEXT NOT NULL,
        question TEXT NOT NULL,
        verdict TEXT,
        cited TEXT NOT NULL,
        feedback TEXT,
        comment TEXT,
        seq BIGINT GENERATED ALWAYS AS IDENTITY
    )
    """,
    "CREATE INDEX IF NOT EXISTS questions_day ON questions (day)",
)
"""`seq` only orders rows of one day as they arrived (SQLite's rowid); it says nothing more."""

_QUESTION_SQL: Final = (
    "INSERT INTO questions (answer_id, day, corpus, question, verdict, cited) "
    "VALUES (%s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (answer_id) DO UPDATE SET day = excluded.day, corpus = excluded.corpus, "
    "question = excluded.question, verdict = excluded.verdict, cited = excluded.cited"
)
_FEEDBACK_SQL: Final = (
    "INSERT INTO questions (answer_id, day, corpus, question, verdict, cited, feedback, comment) "
    "VALUES (%s, %s, %s, %s, NULL, %s, %s, %s) "
    "ON CONFLICT (answer_id) DO UPDATE SET feedback = excluded.feedback, "
    "comment = CASE WHEN excluded.feedback = 'up' THEN NULL "
    "ELSE COALESCE(excluded.comment, questions.comment) END"
)
_log = logging.getLogger("agentskit_web")


@dataclass(frozen=True, slots=True)
class _Row:
    sql: str
    params: tuple[object, ...]
    today: dt.date


def _secrets_of(url: str) -> list[str]:
    """The password and secret query values of a URL: what an error message must not show."""
    try:
        parts = urlsplit(url)
        found = [parts.password] if parts.password else []
        found += [v for n, v in parse_qsl(parts.query) if SECRET_QUERY_KEY.search(n) and v]
    except ValueError:
        return []
    return found


def scrubbed(message: str, url: str) -> str:
    """An error message with the URL's secrets hidden (libpq may echo parts of its conninfo)."""
    for secret in _secrets_of(url):
        message = message.replace(secret, "***")
    return message


def _connect(url: str, timeout: float) -> psycopg.Connection[Any]:
    return psycopg.connect(
        url,
        autocommit=True,
        connect_timeout=max(1, round(timeout)),
        options=f"-c statement_timeout={int(timeout * 1000)}",
    )


class PostgresQuestionLog:
    """The log's PostgreSQL writer: a bounded queue and one thread (see the module doc)."""

    def __init__(
        self,
        url: str,
        *,
        days: int = QUESTION_LOG_DEFAULT_DAYS,
        timeout_seconds: float = QUESTION_LOG_TIMEOUT_SECONDS,
        max_queued: int = QUESTION_LOG_QUEUE_MAX_ROWS,
    ) -> None:
        check_retention(days)
        self.days = days
        self.where = redacted(url)
        self._url = url
        self._timeout = timeout_seconds
        self._queue: queue.Queue[_Row | None] = queue.Queue(maxsize=max_queued)
        self._count_lock = threading.Lock()
        self.dropped = 0
        """Rows refused because the queue was full."""
        self.failed = 0
        """Rows of batches the database refused or did not write in time."""
        self.written = 0
        self._warned: set[str] = set()
        try:
            with _connect(url, timeout_seconds) as db, db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
                for statement in _SCHEMA:
                    db.execute(statement)
        except psycopg.Error as error:
            reason = scrubbed(str(error).strip().splitlines()[0] if str(error) else "", url)
            raise ValueError(f"Question log at {self.where} is not reachable: {reason}") from None
        self._db: psycopg.Connection[Any] | None = None
        self._thread = threading.Thread(
            target=self._drain, name="agentskit-question-log", daemon=True
        )
        self._thread.start()

    # -- the request side: queue and return -----------------------------------

    def record_question(
        self,
        answer_id: str,
        today: dt.date,
        corpus: str,
        question: str,
        verdict: str,
        cited: Sequence[str],
    ) -> None:
        """Queue one searched question (dropped and counted when the queue is full)."""
        cited_text = json.dumps(list(cited[:QUESTION_LOG_MAX_CITED]), ensure_ascii=False)
        params = (answer_id, today, corpus, mask_personal(question), verdict, cited_text)
        self._put(_Row(_QUESTION_SQL, params, today))

    def record_feedback(
        self,
        answer_id: str,
        today: dt.date,
        corpus: str,
        question: str,
        cited: Sequence[str],
        vote: str,
        comment: str | None,
    ) -> None:
        """Queue a vote on an answer (a row of its own when its question is not logged)."""
        cited_text = json.dumps(list(cited[:QUESTION_LOG_MAX_CITED]), ensure_ascii=False)
        masked_comment = mask_personal(comment) if comment else None
        params = (answer_id, today, corpus, mask_personal(question), cited_text, vote)
        self._put(_Row(_FEEDBACK_SQL, (*params, masked_comment), today))

    def _put(self, row: _Row) -> None:
        try:
            self._queue.put_nowait(row)
        except queue.Full:
            with self._count_lock:
                self.dropped += 1
            self._warn("full", f"question log queue full ({self._queue.maxsize} rows): dropping")

    # -- the writer thread ----------------------------------------------------

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            _log.warning("%s (answers go on)", scrubbed(message, self._url))

    def _drain(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                break
            batch = [first]
            stop = False
            while len(batch) < QUESTION_LOG_BATCH_MAX_ROWS:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            self._write(batch)
            if stop:
                break
        if self._db is not None:
            self._db.close()

    def _write(self, batch: list[_Row]) -> None:
        try:
            if self._db is None or self._db.closed:
                self._db = _connect(self._url, self._timeout)
            db = self._db
            newest = max(row.today for row in batch)
            cutoff = newest - dt.timedelta(days=self.days - 1)
            with db.transaction():
                for row in batch:
                    db.execute(row.sql, row.params)
                db.execute("DELETE FROM questions WHERE day < %s", (cutoff,))
        except psycopg.Error as error:
            with self._count_lock:
                self.failed += len(batch)
            first_line = str(error).strip().splitlines()[0] if str(error) else type(error).__name__
            self._warn("write", f"question log write to {self.where} failed: {first_line}")
            if self._db is not None:
                self._db.close()
                self._db = None
            return
        with self._count_lock:
            self.written += len(batch)

    def close(self) -> None:
        """Write what is queued (up to `QUESTION_LOG_CLOSE_SECONDS`), then stop the writer."""
        try:
            self._queue.put(None, timeout=QUESTION_LOG_CLOSE_SECONDS)
        except queue.Full:
            return  # the writer is stuck on a database that does not answer: it is a daemon
        self._thread.join(QUESTION_LOG_CLOSE_SECONDS)
        if self.dropped or self.failed:
            _log.warning(
                "question log: %d rows dropped (queue full), %d not written (database)",
                self.dropped,
                self.failed,
            )


def read_postgres_question_log(
    url: str, *, since: dt.date | None = None, corpus: str | None = None
) -> list[LoggedQuestion]:
    """Every row of a PostgreSQL log, oldest day first; ValueError (password hidden) if none."""
    where, args = ["TRUE"], list[object]()
    if since is not None:
        where.append("day >= %s")
        args.append(since)
    if corpus is not None:
        where.append("corpus = %s")
        args.append(corpus)
    try:
        with _connect(url, QUESTION_LOG_TIMEOUT_SECONDS * 5) as db:
            rows = db.execute(
                "SELECT answer_id, day, corpus, question, verdict, cited, feedback, comment "
                f"FROM questions WHERE {' AND '.join(where)} ORDER BY day, seq",
                args,
            ).fetchall()
    except psycopg.Error as error:
        reason = scrubbed(str(error).strip().splitlines()[0] if str(error) else "", url)
        raise ValueError(f"Question log at {redacted(url)}: {reason}") from None
    return [
        LoggedQuestion(
            answer_id=row[0],
            day=row[1],
            corpus=row[2],
            question=row[3],
            verdict=row[4],
            cited=tuple(json.loads(row[5])),
            feedback=row[6],
            comment=row[7],
        )
        for row in rows
    ]


__all__ = [
    "QUESTION_LOG_QUEUE_MAX_ROWS",
    "QUESTION_LOG_TIMEOUT_SECONDS",
    "PostgresQuestionLog",
    "read_postgres_question_log",
]
