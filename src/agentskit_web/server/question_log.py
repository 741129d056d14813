"""The question log an owner turns on (`serve-ask --question-log PATH`): what readers ask.

One SQLite row per question the Ask endpoint or the turn runner searched, keyed by its
answer id (the id of the answer's `cite` event; a turn answer's source-list instance id),
which feedback names:

- `day`: the UTC day it was asked (`2026-12-04`), no time of day;
- `corpus`: the site's corpus id;
- `question`: the question, e-mail addresses and long digit runs masked, cut to 500
  characters;
- `verdict`: `answered`, `near miss` or `declined` (answering/outcome.py); empty for
  feedback on an answer this backend did not log (a static answer in the page);
- `cited`: the cited sections (`path#anchor`), first first, as a JSON list;
- `feedback`: `up` or `down` once the reader gives it (the last one given);
- `comment`: the reader's comment on a thumbs down, masked and bounded like the question.

Nothing else: no IP address, client key, credential, session id, user agent, time of
day or answer text. Rows older than `days` (default 90) are deleted on every write, so the
retention holds without a cron job. The answer id is a random token the backend minted; it
links the feedback to its question and identifies nobody.

The Ask and feedback endpoints write once their response is sent (the turn runner once
the turn's last snapshot is sent), so no reader waits for the file; the write runs on the
event loop (about 0.03 ms: WAL, no fsync per commit), since handing it to a worker thread
cost more than the write (+3.7 ms p50 per question in `make bench`, a queue and a writer
thread +0.7 to +1.3 ms: the GIL changing hands). A write that
fails (disk full, a locked file) is reported once on the `agentskit_web` logger and never
fails an answer: the log is for the owner, the answer is for the reader.

Several instances share one log in PostgreSQL instead (question_log_postgres.py: the same
rows, written from a bounded queue by a thread); `open_question_log` picks by the name,
`read_question_log` reads either, and the endpoints see both as a `QuestionRecorder`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

QUESTION_LOG_DEFAULT_DAYS: Final = 90
QUESTION_LOG_MAX_DAYS: Final = 3_650
QUESTION_LOG_TEXT_MAX_CHARS: Final = 500
"""A question (or comment) is kept up to this many characters: enough to read, not a dump."""
QUESTION_LOG_MAX_CITED: Final = 8
EMAIL_MASK: Final = "[email]"
NUMBER_MASK: Final = "[number]"
_EMAIL: Final = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.UNICODE)
_LONG_DIGITS: Final = re.compile(r"\d(?:[ .\-/]?\d){5,}")
"""Six digits or more, single separators allowed: phone, card, account and order numbers
(a version such as 2.14.4 has too few digits to match)."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS questions (
    answer_id TEXT PRIMARY KEY,
    day TEXT NOT NULL,
    corpus TEXT NOT NULL,
    question TEXT NOT NULL,
    verdict TEXT,
    cited TEXT NOT NULL,
    feedback TEXT,
    comment TEXT
);
CREATE INDEX IF NOT EXISTS questions_day ON questions (day);
"""
_log = logging.getLogger("agentskit_web")


def mask_personal(text: str) -> str:
    """E-mail addresses and long digit runs masked, then cut to the log's bound."""
    masked = _LONG_DIGITS.sub(NUMBER_MASK, _EMAIL.sub(EMAIL_MASK, text))
    return masked[:QUESTION_LOG_TEXT_MAX_CHARS]


@dataclass(frozen=True, slots=True)
class LoggedQuestion:
    """One row of the log, as the report reads it."""

    answer_id: str
    day: dt.date
    corpus: str
    question: str
    verdict: str | None
    cited: tuple[str, ...]
    feedback: str | None
    comment: str | None


def check_retention(days: int) -> None:
    """ValueError unless `days` is a retention the log accepts (1 to 3,650)."""
    if not 1 <= days <= QUESTION_LOG_MAX_DAYS:
        raise ValueError(f"--question-log-days must be 1 to {QUESTION_LOG_MAX_DAYS}.")


class QuestionRecorder(Protocol):
    """What the Ask, turn and feedback endpoints write to: the SQLite log or the PostgreSQL
    one (question_log_postgres.py), which take the same rows."""

    days: int

    def record_question(
        self,
        answer_id: str,
        today: dt.date,
        corpus: str,
        question: str,
        verdict: str,
        cited: Sequence[str],
    ) -> None: ...

    def record_feedback(
        self,
        answer_id: str,
        today: dt.date,
        corpus: str,
        question: str,
        cited: Sequence[str],
        vote: str,
        comment: str | None,
    ) -> None: ...

    def close(self) -> None: ...


def open_question_log(
    where: str | Path, *, days: int = QUESTION_LOG_DEFAULT_DAYS
) -> QuestionRecorder:
    """The log `--question-log` names: a `postgresql://` URL, else an SQLite file."""
    from .turn_session_port import is_postgres_url

    if isinstance(where, str) and is_postgres_url(where):
        from .question_log_postgres import PostgresQuestionLog

        return PostgresQuestionLog(where, days=days)
    return QuestionLog(where, days=days)


class QuestionLog:
    """The log's writer: one connection, one lock (the Ask app writes from worker threads)."""

    def __init__(self, path: str | Path, *, days: int = QUESTION_LOG_DEFAULT_DAYS) -> None:
        check_retention(days)
        self.days = days
        self._lock = threading.Lock()
        self._warned = False

        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as error:
            raise ValueError(f"Question log {path}: {error}") from error

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            _log.warning("%s (answers go on)", message)

    def _cutoff(self, today: dt.date) -> str:
        return (today - dt.timedelta(days=self.days - 1)).isoformat()

    def record_question(
        self,
        answer_id: str,
        today: dt.date,
        corpus: str,
        question: str,
        verdict: str,
        cited: Sequence[str],
    ) -> None:
        """Log one searched question, then drop rows past the retention.

        An upsert: when the reader's vote was written first (it came through another
        instance, or its write won the race), the row it made gets the question's own
        text, verdict and cited pages, and keeps the vote and its comment."""
        row = (
            answer_id,
            today.isoformat(),
            corpus,
            mask_personal(question),
            verdict,
            json.dumps(list(cited[:QUESTION_LOG_MAX_CITED]), ensure_ascii=False),
        )
        self._write(
            "INSERT INTO questions (answer_id, day, corpus, question, verdict, cited) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (answer_id) DO UPDATE SET day = excluded.day, corpus = excluded.corpus, "
            "question = excluded.question, verdict = excluded.verdict, cited = excluded.cited",
            row,
            today,
        )

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
        """Attach a vote to its question; feedback on an answer not logged here gets a row of
        its own (no verdict), holding what the reader saw."""
        masked_comment = mask_personal(comment) if comment else None
        self._write(
            "INSERT INTO questions "
            "(answer_id, day, corpus, question, verdict, cited, feedback, comment) "
            "VALUES (?, ?, ?, ?, NULL, ?, ?, ?) "
            # The vote and its comment come in two requests that may be written in either
            # order: a vote without a comment keeps the one already there (a thumbs up drops
            # it: a comment belongs to a thumbs down).
            "ON CONFLICT (answer_id) DO UPDATE SET feedback = excluded.feedback, "
            "comment = CASE WHEN excluded.feedback = 'up' THEN NULL "
            "ELSE COALESCE(excluded.comment, questions.comment) END",
            (
                answer_id,
                today.isoformat(),
                corpus,
                mask_personal(question),
                json.dumps(list(cited[:QUESTION_LOG_MAX_CITED]), ensure_ascii=False),
                vote,
                masked_comment,
            ),
            today,
        )

    def _write(self, sql: str, row: tuple[object, ...], today: dt.date) -> None:
        with self._lock:
            try:
                self._db.execute("BEGIN")
                self._db.execute(sql, row)
                self._db.execute("DELETE FROM questions WHERE day < ?", (self._cutoff(today),))
                self._db.execute("COMMIT")
            except sqlite3.Error as error:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                self._warn(f"question log write failed: {error}")


def read_question_log(
    where: Path | str, *, since: dt.date | None = None, corpus: str | None = None
) -> list[LoggedQuestion]:
    """Every row of a log (read-only), oldest day first; ValueError when it is not a log.

    `where` is an SQLite file or a `postgresql://` URL (question_log_postgres.py)."""
    from .turn_session_port import is_postgres_url

    if isinstance(where, str) and is_postgres_url(where):
        from .question_log_postgres import read_postgres_question_log

        return read_postgres_question_log(where, since=since, corpus=corpus)
    path = Path(where)
    if not path.is_file():
        raise ValueError(f"Question log {path} does not exist.")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise ValueError(f"Question log {path}: {error}") from error
    try:
        clauses, args = ["1 = 1"], []
        if since is not None:
            clauses.append("day >= ?")
            args.append(since.isoformat())
        if corpus is not None:
            clauses.append("corpus = ?")
            args.append(corpus)
        rows = db.execute(
            "SELECT answer_id, day, corpus, question, verdict, cited, feedback, comment "
            f"FROM questions WHERE {' AND '.join(clauses)} ORDER BY day, rowid",
            args,
        ).fetchall()
    except sqlite3.Error as error:
        raise ValueError(f"Question log {path} is not a question log: {error}") from error
    finally:
        db.close()
    return [
        LoggedQuestion(
            answer_id=row[0],
            day=dt.date.fromisoformat(row[1]),
            corpus=row[2],
            question=row[3],
            verdict=row[4],
            cited=tuple(json.loads(row[5])),
            feedback=row[6],
            comment=row[7],
        )
        for row in rows
    ]
