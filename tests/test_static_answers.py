"""Static answers (chat/static_answers.py): the adapter's event sequence on CPython.

The transport is scripted (a dict of URL -> reply); the conversation, the body
reader, the projection and the content decoding are the real ones, so what the
widget would show is what these tests read. `FakeEngine` stands in for
`answering.StaticSearch` where a test needs a part to be broken on purpose; the
tests at the end run the project's own engine when it is installed.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from itertools import count
from typing import Any

import pytest

from agentskit_web.answering.chunk import Chunk, Found, Passage
from agentskit_web.answering.decline import NOT_FOUND_MESSAGE
from agentskit_web.answering.extractive import split_deltas
from agentskit_web.answering.site_index import SiteIndex
from agentskit_web.answering.static_index import STATIC_PART_MAX_BYTES, split_index
from agentskit_web.chat import create_ask_adapter, define_chat
from agentskit_web.chat.ask.failure import NO_GROUNDED_SOURCES
from agentskit_web.chat.conversation import Conversation
from agentskit_web.chat.message import ChatMessage, message_parts
from agentskit_web.chat.static_answers import (
    INDEX_CHANGING_MESSAGE,
    INDEX_INVALID_MESSAGE,
    INDEX_MISSING_MESSAGE,
    INDEX_UNREACHABLE_MESSAGE,
    QUESTION_TOO_WIDE_MESSAGE,
    STATIC_FETCH_ROUNDS_MAX,
    STATIC_FIRST_PAINT_PAUSE_SECONDS,
    STATIC_PARTS_PER_QUESTION_MAX,
    FallbackAdapter,
    StaticAnswersAdapter,
    answer_events,
    backend_unreachable,
    create_static_answers_adapter,
)

NOW = datetime(2026, 7, 13, 12, tzinfo=UTC)
MANIFEST = "http://site.test/agentskit/index/manifest.abc.json"
FOLDER = "http://site.test/agentskit/index/"
PAGES = {
    "lantern": Passage(
        "/guide/lantern/",
        "charge-the-battery",
        "Lantern",
        "Charge the battery",
        "The lantern charges its battery in four hours over USB.",
    ),
    "tent": Passage("/guide/tent/", None, "Tent", "Tent", "The tent sleeps two people."),
}


class Reply:
    def __init__(self, status: int, body: bytes, *, broken: bool = False) -> None:
        self.status = status
        self.headers: dict[str, str] = {}
        self._body = body
        self._broken = broken
        self.cancelled = False

    async def chunks(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self._body), 1024):
            yield self._body[start : start + 1024]
        if self._broken:
            raise OSError("connection reset")

    async def cancel(self) -> None:
        self.cancelled = True


class Files:
    """A scripted static host: URL -> (status, bytes) or an exception (offline)."""

    def __init__(self, files: dict[str, Any]) -> None:
        self.files = files
        self.requested: list[str] = []

    async def get_static(self, url: str) -> Reply:
        self.requested.append(url)
        found = self.files.get(url, (404, b""))
        if isinstance(found, BaseException):
            raise found
        status, body = found
        return Reply(status, body)


class FakeEngine:
    """A stand-in for StaticSearch: the manifest maps a word to a part; a part holds the
    names of the PAGES it has."""

    def __init__(self, manifest: bytes) -> None:
        self.terms: dict[str, str] = json.loads(manifest)
        self.loaded: dict[str, list[str]] = {}

    def parts_for(self, question: str, limit: int) -> list[str]:
        words = [w.strip("?.,").lower() for w in question.split()]
        names = dict.fromkeys(self.terms[w] for w in words if w in self.terms)
        return [name for name in names if name not in self.loaded]

    def add_part(self, name: str, data: bytes) -> str | None:
        try:
            pages = json.loads(data)
        except ValueError:
            return "PART_INVALID"  # a diagnostic, as the real engine returns
        if not isinstance(pages, list):
            return "PART_INVALID"
        self.loaded[name] = pages
        return None

    def find(self, question: str, limit: int) -> Found:
        words = {w.strip("?.,").lower() for w in question.split()}
        found = [PAGES[p] for pages in self.loaded.values() for p in pages if p in words]
        return Found(tuple(found[:limit]), grounded=True)


def compose(question: str, passages: Sequence[Passage]) -> str:
    return "Here is what the documentation says:\n\n" + "\n\n".join(
        f"> {p.text} [{n}]" for n, p in enumerate(passages, start=1)
    )


def host(**extra: Any) -> dict[str, Any]:
    files: dict[str, Any] = {
        MANIFEST: (200, json.dumps({"lantern": "a.json", "tent": "b.json"}).encode()),
        FOLDER + "a.json": (200, b'["lantern"]'),
        FOLDER + "b.json": (200, b'["tent"]'),
    }
    files.update(extra)
    return files


def adapter(files: Files) -> StaticAnswersAdapter:
    return create_static_answers_adapter(
        manifest_url=MANIFEST, transport=files, engine=(FakeEngine, compose)
    )


def conversation(chat_adapter: Any, online: bool = True) -> Conversation:
    ids = count(1)
    definition = define_chat(id="ask", adapter=chat_adapter)
    return Conversation(
        definition, online=lambda: online, new_id=lambda: f"m-{next(ids)}", now=lambda: NOW
    )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def chunks_of(source: Any) -> list[dict[str, str]]:
    return [chunk async for chunk in source]


def question(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def answer_of(chat: Conversation) -> ChatMessage:
    last = chat.last_answer()
    assert last is not None
    return last


def test_an_answer_is_text_then_the_sources_then_done_as_the_backend_streams_it() -> None:
    files = Files(host())
    source = adapter(files).create_source(question("How do I charge the lantern?"))
    chunks = run(chunks_of(source))
    assert [c["type"] for c in chunks][-1] == "done"
    chat = conversation(adapter(Files(host())))
    run(chat.send("How do I charge the lantern?"))
    answer = answer_of(chat)
    assert answer.status == "complete" and answer.in_page == "static"
    parts = message_parts(answer)
    assert [p["kind"] for p in parts] == ["text", "component"]
    assert "four hours over USB" in parts[0]["text"]
    frame = parts[1]["frame"]
    assert frame["componentKey"] == "source-list"
    assert frame["props"]["sources"] == [
        {
            "id": "source-1",
            "title": "Lantern › Charge the battery",
            "url": "/guide/lantern/#charge-the-battery",
        }
    ]
    # Only the manifest and the one part holding the question's word were fetched.
    assert files.requested == [MANIFEST, FOLDER + "a.json"]


def test_the_manifest_and_each_part_are_fetched_once_per_page() -> None:
    files = Files(host())
    chat = conversation(adapter(files))
    run(chat.send("lantern?"))
    run(chat.send("And the tent?"))
    run(chat.send("lantern and tent again"))
    assert files.requested == [MANIFEST, FOLDER + "a.json", FOLDER + "b.json"]
    assert all(m.status == "complete" for m in chat.messages)


def test_a_decline_is_the_backends_not_found_answer() -> None:
    files = Files(host())
    chat = conversation(adapter(files))
    run(chat.send("What is the licence of the moon?"))
    answer = answer_of(chat)
    assert answer.status == "complete" and answer.error is None
    assert answer.notice == NOT_FOUND_MESSAGE and answer.content == ""
    assert answer.in_page == "static"
    assert files.requested == [MANIFEST]  # no word of it is in the index: no part fetched
    source = adapter(Files(host())).create_source(question("moon"))
    chunks = run(chunks_of(source))
    assert chunks == [{"type": "error", "content": "Ask request failed (422)."}]
    assert source.failure is not None and source.failure.envelope is not None
    assert (source.failure.status, source.failure.envelope.code) == (422, NO_GROUNDED_SOURCES)


def test_a_part_that_does_not_parse_is_an_invalid_index_not_an_answer() -> None:
    chat = conversation(adapter(Files(host(**{FOLDER + "a.json": (200, b"{not json")}))))
    run(chat.send("lantern?"))
    answer = answer_of(chat)
    assert answer.status == "error" and answer.error == INDEX_INVALID_MESSAGE
    assert answer.in_page is None


def test_a_part_missing_on_the_server_says_the_site_must_be_published_again() -> None:
    files = host()
    del files[FOLDER + "a.json"]
    chat = conversation(adapter(Files(files)))
    run(chat.send("lantern?"))
    assert answer_of(chat).error == INDEX_MISSING_MESSAGE


def test_offline_a_cached_part_answers_and_an_uncached_one_gets_a_clear_note() -> None:
    files = Files(host())
    static = adapter(files)
    online = conversation(static)
    run(online.send("lantern?"))  # the manifest and part a are in this page now
    files.files = {url: OSError("offline") for url in files.files}
    offline = conversation(static, online=False)  # the conversation asks the adapter anyway
    run(offline.send("lantern, please"))
    assert answer_of(offline).status == "complete"
    run(offline.send("the tent?"))
    answer = answer_of(offline)
    assert answer.status == "error" and answer.error == INDEX_UNREACHABLE_MESSAGE
    assert answer.retry


def test_a_part_name_outside_the_index_folder_is_refused_before_any_fetch() -> None:
    manifest = json.dumps({"lantern": "../../secret.json"}).encode()
    files = Files(host(**{MANIFEST: (200, manifest)}))
    chat = conversation(adapter(files))
    run(chat.send("lantern?"))
    assert answer_of(chat).error == INDEX_INVALID_MESSAGE
    assert files.requested == [MANIFEST]


def test_parts_per_question_at_the_bound_and_one_past_it() -> None:
    def site(parts: int) -> tuple[Files, str]:
        words = [f"w{n}" for n in range(parts)]
        files: dict[str, Any] = {
            MANIFEST: (200, json.dumps({w: f"{w}.json" for w in words}).encode())
        }
        files.update({FOLDER + f"{w}.json": (200, b'["lantern"]') for w in words})
        return Files(files), " ".join([*words, "lantern"])

    files, text = site(STATIC_PARTS_PER_QUESTION_MAX)
    chat = conversation(adapter(files))
    run(chat.send(text))
    assert answer_of(chat).status == "complete"
    assert len(files.requested) == 1 + STATIC_PARTS_PER_QUESTION_MAX
    files, text = site(STATIC_PARTS_PER_QUESTION_MAX + 1)
    chat = conversation(adapter(files))
    run(chat.send(text))
    assert answer_of(chat).error == QUESTION_TOO_WIDE_MESSAGE
    assert files.requested == [MANIFEST]


class ChainEngine(FakeEngine):
    """A long question's search: each round's parts lead it to one more part it must read
    (a question of hundreds of words, whose typo repairs and compounds need parts found
    only once earlier parts are read), up to `len(terms)` rounds."""

    def parts_for(self, question: str, limit: int) -> list[str]:
        chain = list(self.terms.values())
        return chain[len(self.loaded) : len(self.loaded) + 1]


def test_fetch_rounds_at_the_bound_and_one_past_it_ask_for_fewer_words() -> None:
    """Past the round bound the reader is told to ask in fewer words, not that the site
    must be rebuilt (issue 36: a 400-word question got "built again")."""

    def chat_over(rounds: int) -> Conversation:
        words = [f"w{n}" for n in range(rounds)]
        files: dict[str, Any] = {
            MANIFEST: (200, json.dumps({w: f"{w}.json" for w in words}).encode())
        }
        files.update({FOLDER + f"{w}.json": (200, b'["lantern"]') for w in words})
        chat = conversation(
            create_static_answers_adapter(
                manifest_url=MANIFEST, transport=Files(files), engine=(ChainEngine, compose)
            )
        )
        run(chat.send(" ".join(["lantern", *words])))
        return chat

    assert answer_of(chat_over(STATIC_FETCH_ROUNDS_MAX)).status == "complete"
    assert answer_of(chat_over(STATIC_FETCH_ROUNDS_MAX + 1)).error == QUESTION_TOO_WIDE_MESSAGE


def test_a_part_at_the_size_bound_is_read_and_one_byte_more_is_refused() -> None:
    def padded(size: int) -> bytes:
        data = b'["lantern"]'
        return data + b" " * (size - len(data))

    chat = conversation(
        adapter(Files(host(**{FOLDER + "a.json": (200, padded(STATIC_PART_MAX_BYTES))})))
    )
    run(chat.send("lantern?"))
    assert answer_of(chat).status == "complete"
    big = padded(STATIC_PART_MAX_BYTES + 1)
    chat = conversation(adapter(Files(host(**{FOLDER + "a.json": (200, big)}))))
    run(chat.send("lantern?"))
    assert answer_of(chat).error == INDEX_INVALID_MESSAGE


def test_a_manifest_that_could_not_be_fetched_is_tried_again_on_the_next_question() -> None:
    files = Files(host(**{MANIFEST: OSError("offline")}))
    static = adapter(files)
    chat = conversation(static)
    run(chat.send("lantern?"))
    assert answer_of(chat).error == INDEX_UNREACHABLE_MESSAGE
    files.files = host()
    run(chat.retry())
    assert answer_of(chat).status == "complete"
    assert files.requested == [MANIFEST, MANIFEST, FOLDER + "a.json"]


def test_abort_while_a_part_is_fetched_ends_quietly() -> None:
    gate = asyncio.Event()

    class Slow(Files):
        async def get_static(self, url: str) -> Reply:
            if url.endswith("a.json"):
                await gate.wait()
            return await super().get_static(url)

    async def scenario() -> list[dict[str, str]]:
        source = adapter(Slow(host())).create_source(question("lantern?"))
        chunks: list[dict[str, str]] = []

        async def consume() -> None:
            chunks.extend([chunk async for chunk in source])

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0.01)
        source.abort()
        await asyncio.wait_for(task, 1)
        return chunks

    assert run(scenario()) == []


# -- the backend first, the static index behind it ----------------------------------


class Backend:
    """A scripted Ask backend behind the transport port: a status and a body, or down."""

    def __init__(
        self, status: int | None, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.posts = 0

    async def post(self, url: str, headers: Any, body: bytes) -> Reply:
        self.posts += 1
        if self.status is None:
            raise OSError("connection refused")
        reply = Reply(self.status, self.body)
        reply.headers = {"content-type": "application/json", **self.headers}
        return reply


def fallback(backend: Backend, files: Files) -> FallbackAdapter:
    primary = create_ask_adapter(endpoint="http://site.test/api/ask", transport=backend)
    return FallbackAdapter(primary, adapter(files))


def test_backend_down_the_static_index_answers_with_its_note() -> None:
    backend = Backend(None)
    files = Files(host())
    chat = conversation(fallback(backend, files))
    run(chat.send("lantern?"))
    answer = answer_of(chat)
    assert backend.posts == 1 and answer.status == "complete"
    assert answer.in_page == "fallback"
    assert "four hours" in message_parts(answer)[0]["text"]
    # Offline too: the conversation asks the adapter, the backend fails at once.
    chat = conversation(fallback(Backend(None), Files(host())), online=False)
    run(chat.send("lantern?"))
    assert answer_of(chat).in_page == "fallback"


def test_backend_5xx_the_static_index_answers() -> None:
    envelope = (
        b'{"error":{"code":"ASK_RETRIEVAL_FAILED","message":"Searching failed.","retryable":true}}'
    )
    chat = conversation(fallback(Backend(502, envelope), Files(host())))
    run(chat.send("lantern?"))
    assert answer_of(chat).in_page == "fallback"


@pytest.mark.parametrize(
    ("status", "body", "headers", "error"),
    [
        (
            429,
            b'{"error":{"code":"ASK_RATE_LIMITED","message":"Too many.","retryable":true}}',
            {"retry-after": "7"},
            "Too many questions in a short time.",
        ),
        (401, b"", {}, "The Ask service did not accept the request: sign in and ask again."),
    ],
)
def test_a_4xx_is_the_backends_answer_and_is_not_overridden(
    status: int, body: bytes, headers: dict[str, str], error: str
) -> None:
    files = Files(host())
    chat = conversation(fallback(Backend(status, body, headers), files))
    run(chat.send("lantern?"))
    answer = answer_of(chat)
    assert answer.status == "error" and answer.error == error and answer.in_page is None
    assert files.requested == []
    if status == 429:
        assert answer.retry_after == 7


def test_the_backends_not_found_is_kept_and_the_index_is_not_asked() -> None:
    body = json.dumps(
        {"error": {"code": NO_GROUNDED_SOURCES, "message": "Nothing.", "retryable": False}}
    ).encode()
    files = Files(host())
    chat = conversation(fallback(Backend(422, body), files))
    run(chat.send("lantern?"))
    assert answer_of(chat).notice == "Nothing." and files.requested == []


def test_backend_answers_normally_when_up() -> None:
    events = [
        {"type": "text", "delta": "From the backend."},
        {"type": "done"},
    ]
    body = "".join(json.dumps(e) + "\n" for e in events).encode()
    backend = Backend(200, body, {"content-type": "application/x-ndjson"})
    files = Files(host())
    chat = conversation(fallback(backend, files))
    run(chat.send("lantern?"))
    answer = answer_of(chat)
    assert answer.in_page is None and message_parts(answer)[0]["text"] == "From the backend."
    assert files.requested == []


def test_what_counts_as_unreachable() -> None:
    from agentskit_web.chat.ask.adapter import NETWORK_MESSAGE, TIMEOUT_MESSAGE
    from agentskit_web.chat.ask.failure import AskFailure

    assert backend_unreachable(None, NETWORK_MESSAGE)
    assert backend_unreachable(None, TIMEOUT_MESSAGE)
    assert backend_unreachable(AskFailure(500), "Ask request failed (500).")
    assert backend_unreachable(AskFailure(503), "Ask request failed (503).")
    assert not backend_unreachable(AskFailure(499), "Ask request failed (499).")
    assert not backend_unreachable(AskFailure(429), "Ask request failed (429).")
    assert not backend_unreachable(None, "The answer could not be generated.")


def test_the_in_page_mark_survives_memory() -> None:
    message = ChatMessage("m-1", "assistant", "", "complete", "2026-07-13T12:00:00.000Z")
    message.in_page = "fallback"
    wire = message.to_memory()
    assert wire["metadata"]["agentskit"]["inPage"] == "fallback"
    restored = ChatMessage.from_memory(wire)
    assert restored is not None and restored.in_page == "fallback"
    wire["metadata"]["agentskit"]["inPage"] = "<script>"
    restored = ChatMessage.from_memory(wire)
    assert restored is not None and restored.in_page is None


# -- the project's own engine ------------------------------------------------------------

SITE_CHUNKS = [
    Chunk(
        "/guide/setup/charging/",
        "charge-the-battery",
        "Charging",
        "Charge the battery",
        "The lantern charges over its USB-C port. A full charge from empty takes ninety "
        "minutes with a 10 watt charger.",
    ),
    Chunk(
        "/guide/care/cleaning/",
        "wipe-the-globe",
        "Cleaning",
        "Wipe the globe",
        "Wipe the frosted globe with a damp cloth. Do not use solvents: they cloud the plastic.",
    ),
    Chunk(
        "/guide/setup/pairing/",
        None,
        "Pairing",
        "Pairing",
        "Hold the switch for five seconds to pair the lantern with the phone app.",
    ),
]


def real_host() -> tuple[Files, str]:
    index = SiteIndex.of(SITE_CHUNKS, site_name="Lumen", base_path="/", generator="mkdocs", pages=3)
    files = split_index(index)
    folder = "http://site.test/agentskit/index/"
    served = {folder + name: (200, data) for name, data in files.all_files().items()}
    return Files(served), folder + files.manifest_name


def real_adapter(files: Files, manifest: str) -> StaticAnswersAdapter:
    return create_static_answers_adapter(manifest_url=manifest, transport=files)


def test_the_real_engine_answers_through_the_adapter_in_rounds() -> None:
    files, manifest = real_host()
    chat = conversation(real_adapter(files, manifest))
    run(chat.send("How long does the lantern take to charge?"))
    answer = answer_of(chat)
    assert answer.status == "complete" and answer.in_page == "static"
    parts = message_parts(answer)
    assert "ninety" in parts[0]["text"]
    sources = parts[-1]["frame"]["props"]["sources"]
    assert sources[0]["url"] == "/guide/setup/charging/#charge-the-battery"
    # The manifest, then the parts, each once.
    assert files.requested[0] == manifest
    assert len(set(files.requested)) == len(files.requested)
    assert set(files.requested) <= set(files.files)


def test_the_real_engine_declines_as_the_backend_does() -> None:
    files, manifest = real_host()
    chat = conversation(real_adapter(files, manifest))
    run(chat.send("What is the airspeed velocity of an unladen swallow?"))
    answer = answer_of(chat)
    assert answer.notice == NOT_FOUND_MESSAGE and answer.content == ""


def test_a_part_whose_bytes_do_not_match_its_name_is_refused_and_fetched_again() -> None:
    """A mismatched part (a deploy under way) says to ask again, not to rebuild; it is not
    added, so the next question fetches it again and answers once the host has it right."""
    files, manifest = real_host()
    right = dict(files.files)
    for url, (status, data) in list(files.files.items()):
        if url != manifest:
            files.files[url] = (status, data.replace(b"ninety", b"eighty"))
    chat = conversation(real_adapter(files, manifest))
    run(chat.send("How long does the lantern take to charge?"))
    assert answer_of(chat).error == INDEX_CHANGING_MESSAGE
    files.files.update(right)
    run(chat.send("How long does the lantern take to charge?"))
    assert answer_of(chat).error is None


def test_a_manifest_that_is_not_one_says_to_rebuild() -> None:
    files, manifest = real_host()
    files.files[manifest] = (200, b'{"format": "something else"}')
    chat = conversation(real_adapter(files, manifest))
    run(chat.send("charge?"))
    assert answer_of(chat).error == INDEX_INVALID_MESSAGE


def test_the_first_words_go_out_alone_then_the_page_gets_a_frame() -> None:
    """The first delta is the backend's first (`split_deltas`), the rest follows in one;
    between them the stream sleeps STATIC_FIRST_PAINT_PAUSE_SECONDS, so the page paints
    the first words before it renders the rest (Python holds its only thread)."""
    files, manifest = real_host()
    source = real_adapter(files, manifest).create_source(
        question("How long does the lantern take to charge?")
    )

    async def timed() -> list[tuple[float, dict[str, Any]]]:
        loop = asyncio.get_running_loop()
        return [(loop.time(), chunk) async for chunk in source]

    chunks = run(timed())
    # Each chunk is one content part as a JSON line (the first after the stream's header).
    lines = [(at, c["content"].rstrip("\n").split("\n")[-1]) for at, c in chunks[:-1]]
    parts = [(at, json.loads(line)) for at, line in lines]
    texts = [(at, part["text"]) for at, part in parts if part["kind"] == "text"]
    answer = "".join(text for _, text in texts)
    assert len(texts) == 2 and texts[0][1] == split_deltas(answer)[0]
    assert texts[1][0] - texts[0][0] >= STATIC_FIRST_PAINT_PAUSE_SECONDS
    events = answer_events(answer, [PAGES["lantern"]], "t")
    assert [e["delta"] for e in events if e["type"] == "text"] == [t for _, t in texts]


def _passes_in_a_fresh_interpreter(script: str) -> None:
    """Runs `script` where no other test has imported or built anything yet."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_warming_up_builds_the_answer_paths_models_before_the_first_question() -> None:
    """The warm-up runs a made-up answer, so pydantic builds the Ask events' models then,
    not during the reader's first answer (a fresh interpreter: other tests built them
    here); without intent the manifest is not read early."""
    script = (
        "import asyncio\n"
        "from agentskit_web.protocol.ask_events import AskDoneEvent, AskToolEvent\n"
        "from agentskit_web.chat.static_answers import create_static_answers_adapter\n"
        "assert not AskToolEvent.__pydantic_complete__\n"
        "adapter = create_static_answers_adapter(manifest_url='http://site.test/m.json')\n"
        "for step in adapter.warm_up_steps():\n"
        "    step()\n"
        "assert asyncio.run(adapter.read_manifest_early(False)) is False\n"
        "assert AskToolEvent.__pydantic_complete__ and AskDoneEvent.__pydantic_complete__\n"
    )
    _passes_in_a_fresh_interpreter(script)


def test_the_page_warms_up_in_steps_the_models_built_only_by_a_later_one() -> None:
    """The page runs `warm_up_steps` one per idle callback: the work is split, so the
    engine's imports, the search and the models' builds are not one long task."""
    script = (
        "from agentskit_web.protocol.ask_events import AskToolEvent\n"
        "from agentskit_web.chat.static_answers import create_static_answers_adapter\n"
        "adapter = create_static_answers_adapter(manifest_url='http://site.test/m.json')\n"
        "steps = adapter.warm_up_steps()\n"
        "assert len(steps) >= 4, steps\n"
        "for step in steps[:2]:\n"
        "    step()\n"
        "assert not AskToolEvent.__pydantic_complete__\n"
        "for step in steps[2:]:\n"
        "    step()\n"
        "assert AskToolEvent.__pydantic_complete__\n"
    )
    _passes_in_a_fresh_interpreter(script)


def test_stop_during_the_first_paint_pause_ends_quietly_after_the_first_words() -> None:
    files, manifest = real_host()
    source = real_adapter(files, manifest).create_source(
        question("How long does the lantern take to charge?")
    )

    async def stopped_after_first() -> list[dict[str, Any]]:
        seen = []
        loop = asyncio.get_running_loop()
        async for chunk in source:
            seen.append(chunk)
            if len(seen) == 1:  # the reader presses Stop while the first words paint
                loop.call_later(STATIC_FIRST_PAINT_PAUSE_SECONDS / 2, source.abort)
        return seen

    seen = run(stopped_after_first())
    assert [c["type"] for c in seen] == ["text"]
