"""The trusted Ask backend (PROTOCOL.md section 6) as a Starlette ASGI app.

One request runs these steps in this exact order, and stops at the first that
fails (errors before the stream are JSON `{"error": {code, message, retryable}}`):

1. method POST, else 405;
2. content-type `application/json` (charset, if given, utf-8), else 415;
3. authenticate the request *head* and resolve the site (the body is not read
   yet), else 401 ASK_UNAUTHORIZED (403 if the credential may not use the site).
   Failed authentications are counted per client address (the socket's, IPv6
   per /64) in a limiter of their own; an address that spent it gets 429
   before its credential is even checked, so tokens cannot be guessed at speed;
4. `corpus`/`persona` query hints equal the site's corpus id / assistant id,
   else 403 ASK_FORBIDDEN;
5. the caller has fewer than `max_streams_per_client` requests in flight and a
   token in its rate-limit bucket, else 429 ASK_RATE_LIMITED (retryable,
   `retry-after`);
6. the body, bounded to 64 KiB (413) and to `body_timeout` seconds (408
   ASK_TIMEOUT: a client that stalls mid-body is not waited for), parsed
   strictly with `parse_ask_request` (400 ASK_INVALID_REQUEST: a client-sent
   siteId/corpus is rejected there);
7. retrieval with its deadline: 408 ASK_TIMEOUT, 502 ASK_RETRIEVAL_FAILED,
   422 ASK_NO_GROUNDED_SOURCES when nothing matched;
8. 200 `application/x-ndjson`: text deltas, one `cite` tool event, `done`;
   for a near miss (the retriever's `Found` not grounded) the text is
   CLOSEST_MESSAGE alone and the sources are the closest sections, with no
   generator asked. After the headers a failure is an in-stream `error` event
   (ASK_GENERATION_FAILED, ASK_TIMEOUT, ASK_PERSISTENCE_CONFLICT); a client
   that goes away stops generation (ASK_CANCELLED, counted in metrics).

A refusal sent before the body was read whole carries `connection: close`, so
the server drops the connection instead of reading (or waiting for) a body
nobody will use.
"""

import contextlib
import datetime as dt
import secrets
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final, Protocol

import anyio
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.datastructures import Headers, QueryParams
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from ..answering.chunk import Found, Passage
from ..answering.citation import cited_sources
from ..answering.decline import CLOSEST_MESSAGE, NOT_FOUND_MESSAGE
from ..answering.outcome import section_label, verdict_of
from ..docs_text import page_path_for
from ..protocol import SiteConfig, parse_ask_request, parse_site_config
from ..protocol.limits import ASK_REQUEST_MAX_BODY_BYTES, ASK_TEXT_DELTA_MAX_CHARS
from ..protocol.text_metrics import js_is_blank, js_length, js_slice, split_text
from ..protocol.wire_json import JSON_INVALID, dump_json, parse_json
from .auth import Authenticator, Principal, RequestHead, anonymous
from .generators import ChatTurn, ExtractiveGenerator, GenerationRequest, Generator
from .metrics import MetricRecorder, MetricsSink, NullMetrics, Outcome
from .persistence import (
    PersistenceConflict,
    PersistenceError,
    SessionKey,
    SessionRecord,
    SessionStore,
)
from .question_log import QuestionRecorder
from .rate_limit import (
    AUTH_FAILURE_CAPACITY,
    AUTH_FAILURE_REFILL_PER_SECOND,
    RateLimiter,
    TokenBucketLimiter,
    client_rate_key,
)
from .retrieval import IndexRetriever, Retriever, index_folder

SITE_PROTOCOL: Final = "agentskit.chat.backend-site"
NDJSON_CONTENT_TYPE: Final = "application/x-ndjson; charset=utf-8"
DEFAULT_PATH: Final = "/api/ask"
ASK_BACKEND_ANSWER_MAX_CHARS: Final = 65_536
"""Server policy, not a wire bound: an answer longer than this is stopped with
ASK_GENERATION_FAILED, well inside the client's 262,144-byte content bound."""
ASK_BODY_TIMEOUT_SECONDS: Final = 10.0
"""Server policy: the whole body (at most 64 KiB) must arrive within this many
seconds of the app starting to read it, else 408. A browser sends it at once;
a client trickling bytes to hold a connection open is cut off."""
ASK_MAX_STREAMS_PER_CLIENT: Final = 4
"""Server policy: requests one client (rate key) may have in flight at once,
from admission to the end of its stream; the next one gets 429."""

# Fixed, user-presentable messages: never any part of the request in them.
MESSAGES: Final = {
    "method": "Ask requests must use POST.",
    "media": "Ask requests must be JSON (content-type application/json).",
    "unauthorized": "Authentication is required to ask this site.",
    "site_forbidden": "This credential may not ask this site.",
    "hint_forbidden": "The corpus or persona does not belong to this site.",
    "rate": "Too many questions at once; wait a moment and ask again.",
    "streams": "Too many of your questions are being answered at once; wait for one to finish.",
    "auth_rate": "Too many failed authentications from this address; wait and try again.",
    "body_timeout": "The Ask request body arrived too slowly.",
    "too_large": "The Ask request is larger than 65,536 bytes.",
    "feedback_too_large": "The feedback is larger than 8,192 bytes.",
    "feedback_invalid": "The feedback is invalid.",
    "invalid": "The Ask request is invalid.",
    "no_question": "The last message must be a non-blank user question.",
    "no_session": "This site saves conversations and needs a sessionId.",
    "retrieval_timeout": "Searching the documentation took too long.",
    "retrieval_failed": "Searching the documentation failed.",
    "no_sources": NOT_FOUND_MESSAGE,
    "generation_failed": "The answer could not be generated.",
    "generation_timeout": "The answer took too long and was stopped.",
    "too_long": "The answer exceeded its size limit and was stopped.",
    "conflict": (
        "This conversation was changed elsewhere, so this answer was not saved. "
        "Reload the conversation and ask again."
    ),
    "internal": "The Ask service failed unexpectedly.",
    "shutdown": "The Ask service restarted before the answer finished; ask again.",
}


class SiteConfigError(ValueError):
    """A site config that fails strict validation: the app refuses to start."""


class Clock(Protocol):
    """Time source: `monotonic()` for durations and buckets, `wall()` for metric times."""

    def monotonic(self) -> float: ...

    def wall(self) -> float: ...


class ShutdownWatch(Protocol):
    """The graceful-shutdown deadline (`operations.Drain`): returns when answers must end."""

    async def wait_expired(self) -> None: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()


# --------------------------------------------------------------------------- site config


@dataclass(frozen=True, slots=True)
class SiteSettings:
    """The parts of a validated `agentskit.chat.backend-site` v1 config the app uses."""

    site_id: str
    assistant_id: str
    assistant_name: str
    corpus_id: str
    max_sources: int
    request_timeout: float
    retrieval_timeout: float
    generation_timeout: float
    persistence_required: bool
    wire: Mapping[str, Any] = field(repr=False, default_factory=dict)
    synonyms: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> "SiteSettings":
        limits = wire["limits"]
        return cls(
            site_id=wire["siteId"],
            assistant_id=wire["assistant"]["id"],
            assistant_name=wire["assistant"]["name"],
            corpus_id=wire["corpus"]["id"],
            max_sources=int(limits["maxSources"]),
            request_timeout=limits["requestTimeoutMs"] / 1000,
            retrieval_timeout=limits["retrievalTimeoutMs"] / 1000,
            generation_timeout=limits["generationTimeoutMs"] / 1000,
            persistence_required=wire["persistence"]["mode"] == "required",
            wire=wire,
            synonyms=tuple(tuple(group) for group in wire.get("search", {}).get("synonyms", ())),
        )


def _wire_of(value: Any) -> Any:
    return value.to_wire() if hasattr(value, "to_wire") else value


def _field_locations(document: Any) -> str:
    """Where a trusted config is wrong (field paths only, never values), best effort."""
    try:
        SiteConfig.model_validate(document)
    except ValidationError as error:
        places = sorted(
            {".".join(str(p) for p in issue["loc"]) or "(top)" for issue in error.errors()}
        )
        return "; check " + ", ".join(places[:8])
    except Exception:
        return ""
    return ""


def load_site_config(source: "SiteConfig | Mapping[str, Any] | str | Path") -> SiteSettings:
    """Validate a site config strictly (file path, mapping or model); raise SiteConfigError."""
    where = "Site config"
    document: Any = source
    if isinstance(source, str | Path):
        path = Path(source)
        where = f"Site config {path}"
        try:
            raw = path.read_bytes()
        except OSError as error:
            raise SiteConfigError(f"{where} cannot be read: {error.strerror}.") from error
        document = parse_json(raw)
        if document is JSON_INVALID:
            raise SiteConfigError(f"{where} is not valid JSON (strict: no duplicate keys, no NaN).")
    elif hasattr(source, "to_wire"):
        document = source.to_wire()
    result = parse_site_config(document)
    if not result.ok:
        diagnostic = result.diagnostic
        detail = f"{diagnostic.code}: {diagnostic.message}" if diagnostic else "invalid"
        raise SiteConfigError(
            f"{where} is not a valid {SITE_PROTOCOL} v1 document ({detail})"
            f"{_field_locations(document)}."
        )
    return SiteSettings.from_wire(_wire_of(result.config))


# --------------------------------------------------------------------------- errors


class _Reject(Exception):
    """A pre-stream refusal: status + diagnostic (+ extra headers)."""

    def __init__(
        self,
        status: int,
        code: str,
        message_key: str,
        *,
        retryable: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(code)
        self.status = status
        self.code = code
        self.message = MESSAGES[message_key]
        self.retryable = retryable
        self.headers = dict(headers or {})


class _ClientGone(Exception):
    """The client disconnected before the stream started."""


@dataclass(slots=True)
class _Admission:
    """What one request holds while it is admitted: its stream slot, whether its body was read."""

    slot: str | None = None
    body_read: bool = False
    searched: tuple[str, Found] | None = None
    """The question and what its search found, logged once the response is sent."""


@dataclass(frozen=True, slots=True)
class _Question:
    """A parsed, admitted request."""

    question: str
    history: tuple[ChatTurn, ...]
    session_id: str | None
    escalated: bool


@dataclass(slots=True)
class _Plan:
    principal: Principal
    question: _Question
    passages: Sequence[Passage]
    grounded: bool
    """False for a near miss: the passages are the closest sections, which no answer quotes."""
    session_key: SessionKey | None
    record: SessionRecord | None
    deadline: float


@dataclass(slots=True)
class _StreamStats:
    events: int = 0
    bytes: int = 0
    first_event: float | None = None
    first_token: float | None = None
    answer_chars: int = 0
    answer: list[str] = field(default_factory=list)
    cancelled: bool = False
    interrupted: bool = False
    outcome: Outcome = "ok"


def _security_headers() -> dict[str, str]:
    return {"cache-control": "no-store", "x-content-type-options": "nosniff"}


def _is_json_media(content_type: str | None) -> bool:
    if not content_type:
        return False
    media, *params = (part.strip() for part in content_type.split(";"))
    if media.lower() != "application/json":
        return False
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() != "utf-8":
            return False
    return True


# --------------------------------------------------------------------------- the endpoint


class AskEndpoint:
    """The raw ASGI endpoint. Build it with `create_ask_app`, which wires the defaults."""

    def __init__(
        self,
        site: SiteSettings,
        *,
        retriever: Retriever,
        generator: Generator,
        authenticate: Authenticator,
        rate_limiter: RateLimiter,
        session_store: SessionStore | None,
        metrics: MetricsSink,
        clock: Clock,
        cors_origins: Sequence[str] = (),
        request_ids: Callable[[], str] | None = None,
        auth_failure_limiter: RateLimiter | None = None,
        max_streams_per_client: int = ASK_MAX_STREAMS_PER_CLIENT,
        body_timeout: float = ASK_BODY_TIMEOUT_SECONDS,
        question_log: QuestionRecorder | None = None,
    ) -> None:
        if site.persistence_required and session_store is None:
            raise ValueError("The site requires persistence but no session store was given.")
        self.site = site
        self.retriever = retriever
        self.generator = generator
        self.authenticate = authenticate
        self.rate_limiter = rate_limiter
        self.session_store = session_store
        self.metrics = metrics
        self.clock = clock
        self.cors_origins = frozenset(cors_origins)
        self._request_ids = request_ids or (lambda: "req-" + secrets.token_hex(16))
        if max_streams_per_client < 1 or body_timeout <= 0:
            raise ValueError("max_streams_per_client must be >= 1 and body_timeout > 0.")
        # `is None`, not `or`: an empty in-process table has len() 0 and is falsy.
        self.auth_failures: RateLimiter = (
            TokenBucketLimiter(
                AUTH_FAILURE_CAPACITY, AUTH_FAILURE_REFILL_PER_SECOND, clock=clock.monotonic
            )
            if auth_failure_limiter is None
            else auth_failure_limiter
        )
        self.max_streams_per_client = max_streams_per_client
        self.body_timeout = body_timeout
        self._in_flight: dict[str, int] = {}
        self._in_flight_lock = threading.Lock()
        self.shutdown: ShutdownWatch | None = None
        """Set by the server (`operations.Drain`): at its deadline running streams end."""
        self.question_log = question_log
        """The owner's log of what readers ask (question_log.py); None: nothing is kept."""

    # -- ASGI -----------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        started = self.clock.monotonic()
        recorder = MetricRecorder(
            self.metrics,
            site_id=self.site.site_id,
            corpus_id=self.site.corpus_id,
            request_id=self._request_ids(),
            wall_clock=self.clock.wall,
        )
        headers = Headers(scope=scope)
        cors = self._cors_headers(headers)
        if self._is_preflight(scope, headers, cors):
            await self._send_preflight(send, cors)
            return
        admission = _Admission()
        try:
            try:
                plan = await self._admit(scope, receive, headers, recorder, started, admission)
            except _Reject as reject:
                if not admission.body_read:
                    reject.headers.setdefault("connection", "close")
                await self.send_error(send, reject, cors)
                outcome: Outcome = "rejected" if reject.status < 500 else "error"
                recorder.record("error.count", 1, "count", outcome)
                recorder.record("request.total_ms", self._ms_since(started), "ms", outcome)
                return
            except _ClientGone:
                recorder.record("cancellation.count", 1, "count", "cancelled")
                recorder.record("request.total_ms", self._ms_since(started), "ms", "cancelled")
                return
            await self._stream(plan, receive, send, recorder, started, cors)
        finally:
            self._release_slot(admission)
            if admission.searched is not None:
                self._log_question(*admission.searched, recorder.request_id)

    def _ms_since(self, start: float) -> float:
        return max(0.0, (self.clock.monotonic() - start) * 1000)

    # -- CORS (only for origins the operator listed) ---------------------------

    def _cors_headers(self, headers: Headers) -> dict[str, str]:
        origin = headers.get("origin")
        if origin is None or origin not in self.cors_origins:
            return {}
        return {"access-control-allow-origin": origin, "vary": "origin"}

    @staticmethod
    def _is_preflight(scope: Scope, headers: Headers, cors: Mapping[str, str]) -> bool:
        return (
            bool(cors)
            and scope["method"] == "OPTIONS"
            and headers.get("access-control-request-method") == "POST"
        )

    @staticmethod
    async def _send_preflight(send: Send, cors: Mapping[str, str]) -> None:
        headers = {
            **cors,
            "access-control-allow-methods": "POST",
            "access-control-allow-headers": "authorization, content-type",
            "access-control-max-age": "600",
            **_security_headers(),
        }
        await send({"type": "http.response.start", "status": 204, "headers": _raw(headers)})
        await send({"type": "http.response.body", "body": b""})

    # -- admission: steps 1-7 --------------------------------------------------

    async def _admit(
        self,
        scope: Scope,
        receive: Receive,
        headers: Headers,
        recorder: MetricRecorder,
        started: float,
        admission: _Admission,
    ) -> _Plan:
        principal = await self.admit_head(scope, headers)
        self._take_slot(principal.rate_key, admission)
        await self.take_rate_token(principal)
        body = await self.read_body(receive, headers)
        admission.body_read = True
        question = self._parse(body)
        if question.escalated:
            recorder.record("deterministic.fallback", 1, "count", "ok")
        key, record = await self._load_session(principal, question, recorder)
        deadline = started + self.site.request_timeout
        try:
            found = await self._retrieve(question.question, recorder, deadline)
        except _Reject as reject:
            if reject.code == "ASK_NO_GROUNDED_SOURCES":
                admission.searched = (question.question, Found())
            raise
        admission.searched = (question.question, found)
        return _Plan(principal, question, found.passages, found.grounded, key, record, deadline)

    async def admit_head(self, scope: Scope, headers: Headers) -> Principal:
        """Steps 1-4 on the request head, shared with the feedback endpoint: method,
        media type, authentication (with its failure limiter) and the query hints."""
        if scope["method"] != "POST":
            raise _Reject(405, "ASK_INVALID_REQUEST", "method", headers={"allow": "POST"})
        if not _is_json_media(headers.get("content-type")):
            raise _Reject(415, "ASK_INVALID_REQUEST", "media")
        query = QueryParams(scope.get("query_string", b""))
        principal = await self._authenticate(scope, headers, query)
        self._check_hints(query)
        return principal

    async def take_rate_token(self, principal: Principal) -> None:
        """Step 5's bucket: one token per request, Ask and feedback alike (429 when empty);
        awaited, so a slow shared limiter never blocks the loop."""
        decision = await self.rate_limiter.take_async(principal.rate_key)
        if not decision.allowed:
            raise _rate_limited("rate", decision.retry_after_seconds)

    def today(self) -> dt.date:
        """The UTC day by the app's clock (the question log keeps days, no times)."""
        return dt.datetime.fromtimestamp(self.clock.wall(), dt.UTC).date()

    def _log_question(self, question: str, found: Found, request_id: str) -> None:
        """Runs after the response is sent (the reader never waits for it), on the loop:
        the write is about 0.03 ms (WAL, no fsync per commit), cheaper than a thread hop
        (the PostgreSQL log only queues the row for its writer thread)."""
        self.log_question(question, found, answer_id_of(request_id))

    def log_question(self, question: str, found: Found, answer_id: str) -> None:
        """One searched question in the owner's log, if one is kept (the turn runner's too,
        under the id its answer's source list carries, which the widget's feedback names)."""
        log = self.question_log
        if log is None:
            return
        cited = [section_label(p.path, p.anchor) for p in found.passages]
        log.record_question(
            answer_id,
            self.today(),
            self.site.corpus_id,
            question,
            verdict_of(found),
            cited,
        )

    async def _authenticate(self, scope: Scope, headers: Headers, query: QueryParams) -> Principal:
        client = scope.get("client")
        client_host = client[0] if client else None
        # Checked before the hook runs: once an address has spent its failures,
        # even a right credential is refused, so a guess cannot be confirmed.
        address = client_rate_key(client_host)
        failures = await self.auth_failures.peek_async(address)
        if not failures.allowed:
            raise _rate_limited("auth_rate", failures.retry_after_seconds)
        head = RequestHead(
            method=scope["method"],
            path=scope.get("path", ""),
            query=query,
            headers=headers,
            client_host=client_host,
        )
        try:
            principal = await self.authenticate(head)
        except Exception as error:
            raise _Reject(500, "ASK_INTERNAL", "internal", retryable=True) from error
        if principal is None:
            await self.auth_failures.take_async(address)
            raise _Reject(
                401, "ASK_UNAUTHORIZED", "unauthorized", headers={"www-authenticate": "Bearer"}
            )
        if not principal.may_use(self.site.site_id):
            raise _Reject(403, "ASK_FORBIDDEN", "site_forbidden")
        return principal

    def _check_hints(self, query: QueryParams) -> None:
        for name, expected in (
            ("corpus", self.site.corpus_id),
            ("persona", self.site.assistant_id),
        ):
            values = query.getlist(name)
            if values and (len(values) != 1 or values[0] != expected):
                raise _Reject(403, "ASK_FORBIDDEN", "hint_forbidden")

    def _take_slot(self, key: str, admission: _Admission) -> None:
        """Count this request against its client's in-flight cap, or refuse it (429)."""
        with self._in_flight_lock:
            active = self._in_flight.get(key, 0)
            if active >= self.max_streams_per_client:
                raise _rate_limited("streams", 1)
            self._in_flight[key] = active + 1
        admission.slot = key

    def _release_slot(self, admission: _Admission) -> None:
        key = admission.slot
        if key is None:
            return
        admission.slot = None
        with self._in_flight_lock:
            left = self._in_flight.get(key, 1) - 1
            if left > 0:
                self._in_flight[key] = left
            else:
                self._in_flight.pop(key, None)

    def in_flight(self, key: str) -> int:
        """Requests `key` has in flight now (tests, monitoring)."""
        with self._in_flight_lock:
            return self._in_flight.get(key, 0)

    async def read_body(
        self,
        receive: Receive,
        headers: Headers,
        max_bytes: int = ASK_REQUEST_MAX_BODY_BYTES,
        too_large: str = "too_large",
    ) -> bytes:
        """The whole body within `body_timeout` seconds (408 otherwise) and `max_bytes` (413)."""
        try:
            with anyio.fail_after(self.body_timeout):
                return await self._receive_body(receive, headers, max_bytes, too_large)
        except TimeoutError as error:
            raise _Reject(408, "ASK_TIMEOUT", "body_timeout", retryable=True) from error

    @staticmethod
    async def _receive_body(
        receive: Receive, headers: Headers, max_bytes: int, too_large: str
    ) -> bytes:
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.isascii() or not declared.isdigit():
                raise _Reject(400, "ASK_INVALID_REQUEST", "invalid")
            if int(declared) > max_bytes:
                raise _Reject(413, "ASK_INVALID_REQUEST", too_large)
        chunks: list[bytes] = []
        size = 0
        while True:
            message: Message = await receive()
            if message["type"] == "http.disconnect":
                raise _ClientGone()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > max_bytes:
                raise _Reject(413, "ASK_INVALID_REQUEST", too_large)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _parse(self, body: bytes) -> _Question:
        result = parse_ask_request(body)
        if not result.ok:
            raise _Reject(400, "ASK_INVALID_REQUEST", "invalid")
        wire = _wire_of(result.request)
        messages = [ChatTurn(m["role"], m["content"]) for m in wire["messages"]]
        last = messages[-1]
        if last.role != "user" or js_is_blank(last.content):
            raise _Reject(400, "ASK_INVALID_REQUEST", "no_question")
        session_id = wire.get("sessionId")
        if self.site.persistence_required and session_id is None:
            raise _Reject(400, "ASK_INVALID_REQUEST", "no_session")
        return _Question(
            question=last.content,
            history=tuple(messages[:-1]),
            session_id=session_id,
            escalated=wire.get("deterministic") is not None,
        )

    async def _load_session(
        self, principal: Principal, question: _Question, recorder: MetricRecorder
    ) -> tuple[SessionKey | None, SessionRecord | None]:
        if not self.site.persistence_required or self.session_store is None:
            return None, None
        assert question.session_id is not None
        key = SessionKey(self.site.site_id, principal.subject, question.session_id)
        started = self.clock.monotonic()
        try:
            record = await self.session_store.load(key)
        except PersistenceError as error:
            recorder.record("persistence.total_ms", self._ms_since(started), "ms", "error")
            raise _Reject(500, "ASK_INTERNAL", "internal", retryable=True) from error
        recorder.record("persistence.total_ms", self._ms_since(started), "ms", "ok")
        return key, record

    async def _retrieve(self, question: str, recorder: MetricRecorder, deadline: float) -> Found:
        """The passages (at most the site's max sources) and whether they answer the
        question; 422 when there are none. A retriever may return a plain sequence (it
        answers) or a `Found` (which may be a near miss)."""
        started = self.clock.monotonic()
        budget = min(self.site.retrieval_timeout, deadline - started)
        outcome: Outcome = "error"
        try:
            with anyio.fail_after(max(budget, 0.0)):
                retrieved = await self.retriever.retrieve(question, self.site.max_sources)
            grounded = retrieved.grounded if isinstance(retrieved, Found) else True
            found = list(retrieved.passages if isinstance(retrieved, Found) else retrieved)
            # A near miss streams, but its retrieval grounded nothing: counted as declined.
            outcome = "ok" if found and grounded else "rejected"
        except TimeoutError as error:
            raise _Reject(408, "ASK_TIMEOUT", "retrieval_timeout", retryable=True) from error
        except Exception as error:
            raise _Reject(
                502, "ASK_RETRIEVAL_FAILED", "retrieval_failed", retryable=True
            ) from error
        finally:
            recorder.record("retrieval.total_ms", self._ms_since(started), "ms", outcome)
        passages = [p for p in found if isinstance(p, Passage)][: self.site.max_sources]
        recorder.record("retrieval.documents", len(passages), "count", "ok")
        if not passages:
            raise _Reject(422, "ASK_NO_GROUNDED_SOURCES", "no_sources")
        return Found(tuple(passages), grounded)

    # -- responses ---------------------------------------------------------------

    @staticmethod
    async def send_error(send: Send, reject: "_Reject", cors: Mapping[str, str]) -> None:
        body = dump_json(
            {
                "error": {
                    "code": reject.code,
                    "message": reject.message,
                    "retryable": reject.retryable,
                }
            }
        ).encode()
        headers = {
            "content-type": "application/json; charset=utf-8",
            "content-length": str(len(body)),
            **_security_headers(),
            **reject.headers,
            **cors,
        }
        await send(
            {"type": "http.response.start", "status": reject.status, "headers": _raw(headers)}
        )
        await send({"type": "http.response.body", "body": body})

    async def _stream(
        self,
        plan: _Plan,
        receive: Receive,
        send: Send,
        recorder: MetricRecorder,
        started: float,
        cors: Mapping[str, str],
    ) -> None:
        headers = {"content-type": NDJSON_CONTENT_TYPE, **_security_headers(), **cors}
        await send({"type": "http.response.start", "status": 200, "headers": _raw(headers)})
        stats = _StreamStats()

        async def emit(event: Mapping[str, Any]) -> None:
            line = (dump_json(event) + "\n").encode()
            now = self.clock.monotonic()
            if stats.first_event is None:
                stats.first_event = now
            if stats.first_token is None and event.get("type") == "text":
                stats.first_token = now
            stats.events += 1
            stats.bytes += len(line)
            await send({"type": "http.response.body", "body": line, "more_body": True})

        async with anyio.create_task_group() as group:

            async def watch_disconnect() -> None:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        stats.cancelled = True
                        group.cancel_scope.cancel()
                        return

            async def watch_shutdown(shutdown: ShutdownWatch) -> None:
                await shutdown.wait_expired()
                stats.interrupted = True
                group.cancel_scope.cancel()

            group.start_soon(watch_disconnect)
            if self.shutdown is not None:
                group.start_soon(watch_shutdown, self.shutdown)
            try:
                await self._produce(plan, emit, stats, recorder, recorder.request_id)
            except OSError:
                stats.cancelled = True
            except Exception:
                stats.outcome = "error"
                with contextlib.suppress(Exception):
                    await emit(_error_event("ASK_INTERNAL", "internal", False))
            finally:
                group.cancel_scope.cancel()

        if stats.interrupted and not stats.cancelled:
            # The server is going away: the reader gets a retryable error, not a cut stream.
            stats.outcome = "error"
            with contextlib.suppress(Exception):
                await emit(_error_event("ASK_INTERNAL", "shutdown", True))
        if stats.cancelled:
            stats.outcome = "cancelled"
            recorder.record("cancellation.count", 1, "count", "cancelled")
        else:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        self._record_stream(recorder, stats, started)

    def _record_stream(self, recorder: MetricRecorder, stats: _StreamStats, started: float) -> None:
        outcome = stats.outcome
        if stats.first_event is not None:
            recorder.record(
                "stream.first_event_ms", (stats.first_event - started) * 1000, "ms", outcome
            )
        if stats.first_token is not None:
            recorder.record(
                "stream.first_token_ms", (stats.first_token - started) * 1000, "ms", outcome
            )
        recorder.record("stream.bytes", stats.bytes, "bytes", outcome)
        recorder.record("stream.events", stats.events, "count", outcome)
        if outcome == "error":
            recorder.record("error.count", 1, "count", "error")
        recorder.record("request.total_ms", self._ms_since(started), "ms", outcome)

    async def _produce(
        self,
        plan: _Plan,
        emit: Callable[[Mapping[str, Any]], Awaitable[None]],
        stats: _StreamStats,
        recorder: MetricRecorder,
        request_id: str,
    ) -> None:
        if plan.grounded:
            error = await self._generate(plan, emit, stats)
        else:
            error = None
            await self._say_closest(emit, stats)
        if error is not None:
            stats.outcome = "error"
            await emit(_error_event(*error))
            return
        await emit(self._cite_event(plan.passages, request_id))
        if plan.session_key is not None and plan.record is not None:
            error = await self._save(plan, stats, recorder)
            if error is not None:
                stats.outcome = "error"
                await emit(_error_event(*error))
                return
        done: dict[str, Any] = {"type": "done"}
        model = self.generator.model
        if model and plan.grounded:  # a near miss's text is ours, not the model's
            done["model"] = js_slice(model, 256)
        await emit(done)

    @staticmethod
    async def _say_closest(
        emit: Callable[[Mapping[str, Any]], Awaitable[None]], stats: _StreamStats
    ) -> None:
        """A near miss's whole text: the generator is not asked, since nothing found
        answers the question and no model may be handed passages to answer it from."""
        stats.answer.append(CLOSEST_MESSAGE)
        stats.answer_chars += js_length(CLOSEST_MESSAGE)
        for piece in split_text(CLOSEST_MESSAGE, ASK_TEXT_DELTA_MAX_CHARS):
            await emit({"type": "text", "delta": piece})

    async def _generate(
        self,
        plan: _Plan,
        emit: Callable[[Mapping[str, Any]], Awaitable[None]],
        stats: _StreamStats,
    ) -> tuple[str, str, bool] | None:
        """Stream text deltas; return (code, message key, retryable) on failure."""
        history = plan.question.history
        if plan.record is not None:
            history = tuple(ChatTurn(m.role, m.content) for m in plan.record.messages)
        request = GenerationRequest(plan.question.question, tuple(plan.passages), history)
        budget = min(self.site.generation_timeout, plan.deadline - self.clock.monotonic())
        try:
            with anyio.fail_after(max(budget, 0.0)):
                stream: AsyncIterator[str] = self.generator.stream(request)
                try:
                    async for delta in stream:
                        if not isinstance(delta, str) or not delta:
                            continue
                        stats.answer_chars += js_length(delta)
                        if stats.answer_chars > ASK_BACKEND_ANSWER_MAX_CHARS:
                            return ("ASK_GENERATION_FAILED", "too_long", False)
                        stats.answer.append(delta)
                        for piece in split_text(delta, ASK_TEXT_DELTA_MAX_CHARS):
                            await emit({"type": "text", "delta": piece})
                finally:
                    await _close_quietly(stream)
        except TimeoutError:
            return ("ASK_TIMEOUT", "generation_timeout", True)
        except OSError:
            raise
        except Exception:
            return ("ASK_GENERATION_FAILED", "generation_failed", True)
        if not stats.answer:
            return ("ASK_GENERATION_FAILED", "generation_failed", True)
        return None

    async def _save(
        self, plan: _Plan, stats: _StreamStats, recorder: MetricRecorder
    ) -> tuple[str, str, bool] | None:
        assert self.session_store is not None
        assert plan.session_key is not None and plan.record is not None
        started = self.clock.monotonic()
        try:
            await self.session_store.append_turn(
                plan.session_key, plan.record, plan.question.question, "".join(stats.answer)
            )
        except PersistenceConflict:
            recorder.record("persistence.total_ms", self._ms_since(started), "ms", "error")
            recorder.record("conflict.count", 1, "count", "error")
            return ("ASK_PERSISTENCE_CONFLICT", "conflict", True)
        except PersistenceError:
            recorder.record("persistence.total_ms", self._ms_since(started), "ms", "error")
            return ("ASK_INTERNAL", "internal", True)
        recorder.record("persistence.total_ms", self._ms_since(started), "ms", "ok")
        return None

    @staticmethod
    def _cite_event(passages: Sequence[Passage], request_id: str) -> dict[str, Any]:
        return {
            "type": "tool",
            "id": answer_id_of(request_id),
            "name": "cite",
            "args": {"sources": cited_sources(passages)},
        }


def answer_id_of(request_id: str) -> str:
    """An answer's id: its `cite` event's, which feedback and the question log key on."""
    return f"sources-{request_id}"


async def _close_quietly(stream: AsyncIterator[str]) -> None:
    """Close a generator's stream even while being cancelled (releases its connection)."""
    aclose = getattr(stream, "aclose", None)
    if aclose is None:
        return
    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
        await aclose()


def _rate_limited(message_key: str, retry_after_seconds: int) -> _Reject:
    return _Reject(
        429,
        "ASK_RATE_LIMITED",
        message_key,
        retryable=True,
        headers={"retry-after": str(retry_after_seconds)},
    )


def _error_event(code: str, message_key: str, retryable: bool) -> dict[str, Any]:
    return {"type": "error", "message": MESSAGES[message_key], "code": code, "retryable": retryable}


def _raw(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


# --------------------------------------------------------------------------- factory


def create_ask_endpoint(
    site_config: "SiteConfig | Mapping[str, Any] | str | Path | SiteSettings",
    docs_dir: str | Path | None = None,
    *,
    retriever: Retriever | None = None,
    generator: Generator | None = None,
    authenticate: Authenticator | None = None,
    rate_limiter: RateLimiter | None = None,
    session_store: SessionStore | None = None,
    metrics: MetricsSink | None = None,
    clock: Clock | None = None,
    page_path: Callable[[PurePosixPath], str] = page_path_for,
    docs_exclude: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
    request_ids: Callable[[], str] | None = None,
    auth_failure_limiter: RateLimiter | None = None,
    max_streams_per_client: int = ASK_MAX_STREAMS_PER_CLIENT,
    body_timeout: float = ASK_BODY_TIMEOUT_SECONDS,
    question_log: QuestionRecorder | None = None,
) -> AskEndpoint:
    """Validate the config, build the index and defaults; raise a clear error if anything is off."""
    site = site_config if isinstance(site_config, SiteSettings) else load_site_config(site_config)
    clock = SystemClock() if clock is None else clock
    if retriever is None:
        if docs_dir is None:
            raise ValueError("create_ask_app needs docs_dir (or a retriever).")
        index = index_folder(docs_dir, page_path, docs_exclude, synonyms=site.synonyms)
        retriever = IndexRetriever(index)
    if site.persistence_required and session_store is None:
        session_store = SessionStore()
    return AskEndpoint(
        site,
        retriever=retriever,
        generator=ExtractiveGenerator() if generator is None else generator,
        authenticate=anonymous() if authenticate is None else authenticate,
        rate_limiter=(
            TokenBucketLimiter(clock=clock.monotonic) if rate_limiter is None else rate_limiter
        ),
        session_store=session_store,
        metrics=NullMetrics() if metrics is None else metrics,
        clock=clock,
        cors_origins=cors_origins,
        request_ids=request_ids,
        auth_failure_limiter=auth_failure_limiter,
        max_streams_per_client=max_streams_per_client,
        body_timeout=body_timeout,
        question_log=question_log,
    )


def create_ask_app(
    site_config: "SiteConfig | Mapping[str, Any] | str | Path | SiteSettings",
    docs_dir: str | Path | None = None,
    *,
    path: str = DEFAULT_PATH,
    **options: Any,
) -> Starlette:
    """A Starlette app answering Ask requests at `path` (default `/api/ask`), and feedback
    on its answers beside it (`/api/feedback`: feedback_app.py).

    `options` are those of `create_ask_endpoint`: `retriever`, `generator`,
    `authenticate` (default anonymous), `rate_limiter`, `session_store`,
    `metrics`, `clock`, `page_path`, `docs_exclude` (glob
    patterns relative to `docs_dir`), `cors_origins`, `auth_failure_limiter`,
    `max_streams_per_client`, `body_timeout`.
    The endpoint is reachable as `app.state.ask` (tests, bench).
    """
    from .feedback_app import feedback_route

    endpoint = create_ask_endpoint(site_config, docs_dir, **options)
    app = Starlette(routes=[ask_route(endpoint, path), feedback_route(endpoint, path)])
    app.state.ask = endpoint
    return app


def ask_route(endpoint: AskEndpoint, path: str = DEFAULT_PATH) -> Route:
    """A route for mounting the Ask endpoint inside another Starlette app (e.g. the demo server).

    The route accepts every method so the endpoint itself answers 405 with the
    contract's JSON error body.
    """
    return Route(path, endpoint=endpoint)
