"""Static answers: the page answers from the site's own split index, with no backend.

A site built with the MkDocs plugin or the Sphinx extension publishes its index
split into content-hashed files beside the widget's assets (a manifest and
parts, `answering.split_index`). This adapter answers a question in the page
with the same search and extractive answer the backend runs (one
implementation, in `answering/`), and produces the same Ask events the backend
would stream (text deltas, one `cite` tool event, `done`). They go through the
same `AskBodyReader` as a backend's NDJSON body, so the widget's path from events
to the DOM is the one every answer takes.

One question:
1. the manifest is fetched once per page (the loader starts that fetch while the
   runtime boots, so this one is usually a cache hit), through the transport
   port's `get_static` (any cache may answer: the names carry content hashes);
2. the parts holding the question's words (`StaticSearch.parts_for`) that this
   page has not loaded yet are fetched, each bounded in size and time;
3. the search runs; no passage means the backend's "no grounded sources" path
   (the source records the same 422 `ASK_NO_GROUNDED_SOURCES` failure, so the
   reader sees the same "not found" answer); otherwise the extractive answer
   (for a near miss, the backend's CLOSEST_MESSAGE) streams as text deltas,
   then the sources, then `done`.

Failures are the stream's one error chunk, as with the backend: a part that
cannot be fetched (offline, with the part not cached) says so and offers Retry;
an index that does not parse says to rebuild the site. Nothing is fetched from
another folder than the manifest's: a part name is a plain file name.

`FallbackAdapter` puts the backend first and this adapter behind it: when the
backend cannot be reached (network error, timeout, 5xx) before anything
streamed, the same question is answered here, and the answer says so. A 4xx
(refused, rate-limited, not found in the docs) is the backend's answer and
is shown as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncGenerator, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar
from urllib.parse import urljoin

from ..answering.chunk import Found, Passage
from ..answering.decline import CLOSEST_MESSAGE, NOT_FOUND_MESSAGE
from ..answering.static_index import STATIC_MANIFEST_MAX_BYTES, STATIC_PART_MAX_BYTES
from ..protocol.text_metrics import split_text
from ..protocol.wire_json import dump_json
from ..transports import AskTransportResponse, StaticFileTransport, default_transport
from .ask.adapter import (
    INTERRUPTED_MESSAGE,
    NETWORK_MESSAGE,
    REUSED_MESSAGE,
    TIMEOUT_MESSAGE,
    AskAdapter,
    build_ask_request,
    status_message,
)
from .ask.warm_up import answer_path_steps
from .once_source import OnceSource, StreamChunk

if TYPE_CHECKING:
    from .ask.failure import AskFailure

InPage = Literal["static", "fallback"]
"""How an answer was made in the page: `static` (no backend configured) or `fallback`
(the backend could not be reached)."""

STATIC_PARTS_PER_QUESTION_MAX: Final = 64
"""Most parts one question may fetch; a question needing more is refused with a note."""
STATIC_FETCH_ROUNDS_MAX: Final = 8
"""Most rounds of fetches one question may take (the engine needs two, rarely three: its
words' parts, then the text of the passages it ranks)."""
STATIC_FETCH_DEADLINE_SECONDS: Final = 30.0
"""Time allowed for one index file, headers and body."""
STATIC_FIRST_PAINT_PAUSE_SECONDS: Final = 0.016
"""Pause after an answer's first words (one frame at 60 Hz): Python holds the page's only
thread until the answer is rendered, so without it the first words paint only with the
whole answer."""
STATIC_ANSWER_MAX_SOURCES: Final = 4
"""Passages quoted and cited per answer: the reference backend's default `maxSources`."""
STATIC_PART_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
"""A part name is a plain file name (no folder, no `..`): it resolves beside the manifest."""
STATIC_PART_NAME_MAX_CHARS: Final = 128
NDJSON: Final = "application/x-ndjson"

INDEX_UNREACHABLE_MESSAGE: Final = (
    "This question needs a part of this site's search index that this browser has not "
    "stored, and the site cannot be reached. Ask again once you are online."
)
INDEX_MISSING_MESSAGE: Final = (
    "This site's search index is incomplete on the server (a file is missing); "
    "the site needs to be published again."
)
INDEX_INVALID_MESSAGE: Final = (
    "This site's search index could not be read; the site needs to be built again."
)
INDEX_CHANGING_MESSAGE: Final = (
    "A file of this site's search index is not the one the index names; the site may be "
    "being published. Ask again in a moment."
)
"""A part that fails its proof (a host's SPA fallback answering 200 + HTML during a deploy):
the next question fetches it again (the offline worker keeps only parts that hold their
name), so this is a wait, not a rebuild."""
QUESTION_TOO_WIDE_MESSAGE: Final = (
    "This question touches too much of the index at once; ask it in fewer words."
)
GENERATION_FAILED_MESSAGE: Final = "The answer could not be generated."
WARM_UP_QUESTION: Final = "How does the page warm up its answers?"
WARM_UP_TEXT: Final = (
    "The page warms up its answers while the reader types. It runs one made-up answer."
)
"""The made-up answer `StaticAnswersAdapter.warm` runs before the first question."""
UNREACHABLE_MESSAGES: Final = frozenset({NETWORK_MESSAGE, TIMEOUT_MESSAGE, INTERRUPTED_MESSAGE})
"""Backend errors that mean "not reached" (nothing was answered), so the page may answer."""

_T = TypeVar("_T")


class StaticSearchLike(Protocol):
    """What the adapter needs of `answering.static_index.StaticSearch` (one per page)."""

    def parts_for(self, question: str, limit: int) -> list[str]: ...

    def add_part(self, name: str, data: bytes) -> object: ...

    def find(self, question: str, limit: int) -> Found: ...


SearchFactory = Callable[[bytes], StaticSearchLike]
Compose = Callable[[str, Sequence[Passage]], str]


def _default_engine() -> tuple[SearchFactory, Compose]:
    """The project's own engine, imported on the first question (it costs boot time)."""
    from ..answering.extractive import compose_extractive_answer
    from ..answering.static_index import StaticSearch

    return StaticSearch, compose_extractive_answer


class _Failure(Exception):
    """Ends a stream with one error chunk carrying `message`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Aborted(Exception):
    """The host called abort() while we were waiting."""


def _valid_part_name(name: object) -> bool:
    return (
        isinstance(name, str)
        and len(name) <= STATIC_PART_NAME_MAX_CHARS
        and STATIC_PART_NAME.fullmatch(name) is not None
    )


def question_of(messages: Sequence[object]) -> str | None:
    """The question the backend would answer: the last message of the bounded request,
    when it is the reader's."""
    request = build_ask_request(messages)
    wire = request["messages"]
    if not wire or wire[-1]["role"] != "user":
        return None
    content: str = wire[-1]["content"]
    return content if content.strip() else None


def answer_events(answer: str, passages: Sequence[Passage], tool_id: str) -> list[dict[str, Any]]:
    """The Ask events the backend streams for `answer` and its `passages` (text, cite, done).

    The text goes out as the backend's first delta (`split_deltas`: a few words), then
    the rest at once: the stream leaves the page a frame after the first one, so those
    words are painted before the rest is rendered, as they are when the backend
    streams; the rest in one delta spares the page a render per word group (the
    backend's deltas only pace a network stream). Joined, the deltas are the answer."""
    from ..answering.citation import cited_sources
    from ..answering.extractive import split_deltas
    from ..protocol.limits import ASK_TEXT_DELTA_MAX_CHARS

    pieces = split_deltas(answer)
    head = pieces[0] if pieces else ""
    texts = [head, answer[len(head) :]] if head else [answer]
    events: list[dict[str, Any]] = [
        {"type": "text", "delta": piece}
        for text in texts
        if text
        for piece in split_text(text, ASK_TEXT_DELTA_MAX_CHARS)
    ]
    sources = cited_sources(passages)
    events.append({"type": "tool", "id": tool_id, "name": "cite", "args": {"sources": sources}})
    events.append({"type": "done"})
    return events


class StaticAnswerSource(OnceSource):
    """One answer from the static index: iterate it (once) for chunks; `abort()` stops it."""

    reused_message = REUSED_MESSAGE

    def __init__(self, adapter: StaticAnswersAdapter, question: str | None) -> None:
        super().__init__()
        self._adapter = adapter
        self._question = question
        self.failure: AskFailure | None = None
        self.answered_by: InPage | None = "static"

    async def _stream_once(self) -> AsyncGenerator[StreamChunk, None]:
        try:
            async for chunk in self._chunks():
                yield chunk
        except _Failure as failure:
            if not self.aborted:
                yield {"type": "error", "content": failure.message}
        except _Aborted:
            return

    async def _chunks(self) -> AsyncGenerator[StreamChunk, None]:
        question = self._question
        if question is None:
            raise _Failure(status_message(400))
        adapter = self._adapter
        search = await self._guarded(adapter.index())
        fetched = 0
        for _round in range(STATIC_FETCH_ROUNDS_MAX + 1):
            try:
                wanted = search.parts_for(question, STATIC_ANSWER_MAX_SOURCES)
            except Exception:  # the engine's own trouble with its manifest
                raise _Failure(INDEX_INVALID_MESSAGE) from None
            if not wanted:
                break
            fetched += len(wanted)
            if fetched > STATIC_PARTS_PER_QUESTION_MAX:
                raise _Failure(QUESTION_TOO_WIDE_MESSAGE)
            if _round == STATIC_FETCH_ROUNDS_MAX:
                # Every part added passed its proof: a search still asking for more is a
                # question reaching into too much of the index (a 400-word paste), not an
                # index to rebuild.
                raise _Failure(QUESTION_TOO_WIDE_MESSAGE)
            await self._guarded(adapter.load_parts(search, wanted))
            if self.aborted:
                return
        try:
            found = search.find(question, STATIC_ANSWER_MAX_SOURCES)
        except Exception:
            raise _Failure(INDEX_INVALID_MESSAGE) from None
        passages = list(found.passages)
        if not passages:
            self.failure = _not_found()
            raise _Failure(status_message(422))
        try:
            # A near miss says so and shows the closest sections, as the backend does.
            answer = adapter.compose(question, passages) if found.grounded else CLOSEST_MESSAGE
        except Exception:  # no quotable text: the backend's ASK_GENERATION_FAILED
            raise _Failure(GENERATION_FAILED_MESSAGE) from None
        from .ask.body import AskBodyReader

        reader = AskBodyReader(NDJSON)
        events = answer_events(answer, passages, adapter.next_tool_id())
        body = "".join(dump_json(event) + "\n" for event in events).encode("utf-8")
        first_text = True
        for chunk in reader.feed(body):
            yield chunk
            if self.aborted:
                return
            if first_text and chunk.get("type") == "text":
                # Leave the page one frame, as a network body's gaps do: the browser paints
                # the first words before the rest of the answer is rendered.
                first_text = False
                await asyncio.sleep(STATIC_FIRST_PAINT_PAUSE_SECONDS)
                if self.aborted:  # stopped during the pause: nothing more
                    return
        for chunk in reader.finish():
            yield chunk

    async def _guarded(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Await `work` as a task `abort()` can cancel; raises _Aborted when it did."""
        if self.aborted:
            work.close()
            raise _Aborted
        task = asyncio.ensure_future(work)
        self._pending = task
        try:
            return await task
        except asyncio.CancelledError:
            if self.aborted:
                raise _Aborted from None
            task.cancel()
            raise
        finally:
            self._pending = None


def _not_found() -> AskFailure:
    from .ask.failure import NO_GROUNDED_SOURCES, AskFailure, ErrorEnvelope

    return AskFailure(422, ErrorEnvelope(NO_GROUNDED_SOURCES, NOT_FOUND_MESSAGE, False))


class StaticAnswersAdapter:
    """Answers from the static index at `manifest_url`; one search index per adapter (page).

    `transport` needs only `get_static`; `engine` (tests) replaces the project's
    `StaticSearch` and `compose_extractive_answer`.
    """

    capabilities: Final = {"streaming": True, "structuredOutput": True, "local": True}
    """`local`: the conversation asks this adapter even offline (cached parts may answer)."""
    answers: Final = "static"
    """What the widget shows as `data-answers` (any other adapter is a backend)."""

    def __init__(
        self,
        manifest_url: str,
        transport: StaticFileTransport | None = None,
        engine: tuple[SearchFactory, Compose] | None = None,
    ) -> None:
        self.manifest_url = manifest_url
        self._transport = transport
        self._engine = engine
        self._search: StaticSearchLike | None = None
        self._loaded: set[str] = set()
        self._tool_ids = 0
        self.fetched: list[str] = []
        """Every URL this adapter fetched, in order (tests and the bench read it)."""

    @property
    def transport(self) -> StaticFileTransport:
        if self._transport is None:
            self._transport = default_transport()
        return self._transport

    def _engine_parts(self) -> tuple[SearchFactory, Compose]:
        if self._engine is None:
            self._engine = _default_engine()
        return self._engine

    def compose(self, question: str, passages: Sequence[Passage]) -> str:
        return self._engine_parts()[1](question, passages)

    def next_tool_id(self) -> str:
        self._tool_ids += 1
        return f"sources-static-{self._tool_ids}"

    def create_source(
        self, messages: Sequence[object], session_id: str | None = None, escalation: object = None
    ) -> StaticAnswerSource:
        """A source answering the last question of `messages` from the static index."""
        return StaticAnswerSource(self, question_of(messages))

    send = create_source

    async def read_manifest_early(self, fetch_manifest: bool) -> bool:
        """Read the manifest now when `fetch_manifest` (the reader showed intent, so the
        loader fetched it into the HTTP cache): the page calls this once `warm_up_steps`
        have run. True when it is read; a failure is left for the first question."""
        if fetch_manifest:
            with contextlib.suppress(_Failure):
                await self.index()
        return self._search is not None

    def warm_up_steps(self) -> list[Callable[[], object]]:
        """A made-up answer run through what a real one runs, in steps that each end where
        the next begins: the engine's modules, its first search and quote (regular
        expressions compiled on first use), the Ask events' models, which pydantic builds
        on their first validation, and the body reader's (about 100 ms in CPython, several
        times that in Pyodide, otherwise paid by the reader's first question). Run back to
        back they were one main-thread task of 240 ms at 4x CPU; a step fails (and those
        after it, which need its result) only at the cost of the first answer."""
        made: dict[str, Any] = {}

        def search() -> None:
            from ..answering.chunk import Chunk
            from ..answering.ranking import SearchIndex

            chunk = Chunk("/", "warm-up", "Warm-up", "Warming up", WARM_UP_TEXT)
            made["passages"] = SearchIndex.from_chunks([chunk]).search(WARM_UP_QUESTION, 1)

        def compose() -> None:
            made["answer"] = self.compose(WARM_UP_QUESTION, made["passages"])

        def events() -> None:
            events = answer_events(made["answer"], made["passages"], "warm-up")
            made["body"] = "".join(dump_json(event) + "\n" for event in events).encode("utf-8")

        def read() -> None:
            from .ask.body import AskBodyReader

            reader = AskBodyReader(NDJSON)
            reader.feed(made["body"])
            reader.finish()

        # The body reader's imports and each event model it validates are steps of their
        # own (in one step they were 80 ms in CPython, 180-290 ms at 4x in Pyodide).
        return [self._engine_parts, search, compose, events, *answer_path_steps(), read]

    async def index(self) -> StaticSearchLike:
        """The search index, its manifest fetched on first use (a failure is not kept)."""
        if self._search is None:
            data = await self._fetch(self.manifest_url, STATIC_MANIFEST_MAX_BYTES)
            try:
                search = self._engine_parts()[0](data)
            except Exception:  # a manifest the engine refuses: rebuild the site
                raise _Failure(INDEX_INVALID_MESSAGE) from None
            if self._search is None:
                self._search = search
        return self._search

    async def load_parts(self, search: StaticSearchLike, names: Sequence[str]) -> None:
        """Fetch and add the parts not loaded yet, in parallel; all or a failure."""
        missing = [name for name in dict.fromkeys(names) if name not in self._loaded]
        if not all(_valid_part_name(name) for name in missing):
            raise _Failure(INDEX_INVALID_MESSAGE)
        urls = [urljoin(self.manifest_url, name) for name in missing]
        fetched = await asyncio.gather(
            *(self._fetch(url, STATIC_PART_MAX_BYTES) for url in urls), return_exceptions=True
        )
        failures = [result for result in fetched if isinstance(result, BaseException)]
        if failures:
            for failure in failures:
                if isinstance(failure, asyncio.CancelledError):
                    raise failure
            # Unreachable first: offline, a missing part is the likelier explanation.
            messages = [f.message for f in failures if isinstance(f, _Failure)]
            for message in (INDEX_UNREACHABLE_MESSAGE, INDEX_MISSING_MESSAGE):
                if message in messages:
                    raise _Failure(message)
            raise _Failure(INDEX_INVALID_MESSAGE)
        for name, data in zip(missing, fetched, strict=True):
            assert isinstance(data, bytes)
            try:
                refused = search.add_part(name, data)  # a diagnostic: not what was promised
            except Exception:
                refused = True
            if refused is not None:
                retryable = getattr(refused, "retryable", False) is True
                raise _Failure(INDEX_CHANGING_MESSAGE if retryable else INDEX_INVALID_MESSAGE)
            self._loaded.add(name)

    async def _fetch(self, url: str, limit: int) -> bytes:
        """One index file, whole, within `limit` bytes and the deadline."""
        self.fetched.append(url)
        response: AskTransportResponse | None = None
        try:
            async with asyncio.timeout(STATIC_FETCH_DEADLINE_SECONDS):
                try:
                    response = await self.transport.get_static(url)
                except Exception:
                    raise _Failure(INDEX_UNREACHABLE_MESSAGE) from None
                if response.status == 404 or response.status == 410:
                    raise _Failure(INDEX_MISSING_MESSAGE)
                if not 200 <= response.status < 300:
                    raise _Failure(INDEX_UNREACHABLE_MESSAGE)
                body = bytearray()
                try:
                    async for data in response.chunks():
                        body.extend(data)
                        if len(body) > limit:
                            raise _Failure(INDEX_INVALID_MESSAGE)
                except _Failure:
                    raise
                except Exception:
                    raise _Failure(INDEX_UNREACHABLE_MESSAGE) from None
                return bytes(body)
        except TimeoutError:
            raise _Failure(INDEX_UNREACHABLE_MESSAGE) from None
        finally:
            if response is not None:
                with contextlib.suppress(Exception):  # cancel is best effort by contract
                    await response.cancel()


def create_static_answers_adapter(
    *,
    manifest_url: str,
    transport: StaticFileTransport | None = None,
    engine: tuple[SearchFactory, Compose] | None = None,
) -> StaticAnswersAdapter:
    """An adapter answering from the static index whose manifest is at `manifest_url`
    (absolute, or relative for tools on CPython). Raises ValueError for a blank URL."""
    if not isinstance(manifest_url, str) or not manifest_url.strip():
        raise ValueError("manifest_url must be a non-empty URL")
    return StaticAnswersAdapter(manifest_url, transport, engine)


# -- the backend first, the static index behind it -----------------------------------------


def backend_unreachable(failure: AskFailure | None, message: object) -> bool:
    """True when a backend error before any text means it was not reached or broke
    (network error, timeout, a body cut off, a 5xx); a 4xx is an answer, kept."""
    if failure is not None:
        return failure.status >= 500
    return message in UNREACHABLE_MESSAGES


class FallbackSource(OnceSource):
    """The backend's answer, or, when the backend cannot be reached before anything
    streamed, the static index's answer to the same question."""

    reused_message = REUSED_MESSAGE

    def __init__(self, primary: Any, fallback: Callable[[], StaticAnswerSource]) -> None:
        super().__init__()
        self._primary = primary
        self._make_fallback = fallback
        self._active: Any = primary
        self.answered_by: InPage | None = None

    @property
    def failure(self) -> AskFailure | None:
        """The failure of the source that answered (the conversation reads it)."""
        found: AskFailure | None = getattr(self._active, "failure", None)
        return found

    def _on_abort(self) -> None:
        """Stop whichever source is answering."""
        self._active.abort()

    async def _stream_once(self) -> AsyncGenerator[StreamChunk, None]:
        streamed = False
        switch = False
        primary = self._primary.__aiter__()
        try:
            async for chunk in primary:
                if (
                    not streamed
                    and not self.aborted
                    and chunk.get("type") == "error"
                    and backend_unreachable(self._primary.failure, chunk.get("content"))
                ):
                    switch = True
                    break
                streamed = streamed or chunk.get("type") == "text"
                yield chunk
        finally:
            await primary.aclose()
        if not switch or self.aborted:
            return
        fallback = self._make_fallback()
        fallback.answered_by = "fallback"
        self._active = fallback
        self.answered_by = "fallback"
        async for chunk in fallback:
            yield chunk


class FallbackAdapter:
    """The backend (`primary`) first, the static index (`static`) when it cannot be reached."""

    def __init__(self, primary: AskAdapter, static: StaticAnswersAdapter) -> None:
        self.primary = primary
        self.static = static
        # `local`: offline, the backend fails at once and the static index answers what it can.
        self.capabilities = {**primary.capabilities, "local": True}

    def create_source(
        self, messages: Sequence[object], session_id: str | None = None, escalation: object = None
    ) -> FallbackSource:
        first = self.primary.create_source(messages, session_id, escalation)
        return FallbackSource(
            first, lambda: self.static.create_source(messages, session_id, escalation)
        )

    send = create_source
