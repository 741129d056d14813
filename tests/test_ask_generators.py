"""Answer generators: the honest extractive default, and the OpenAI-compatible client.

The OpenAI-compatible generator is tested against a local fake chat-completions
server (a small Starlette app under a real uvicorn on 127.0.0.1): no network.
"""

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from _ask_helpers import PASSAGE, ThreadedUvicorn, ask_body, post, site, text_of, write_docs
from agentskit_web.answering.chunk import Passage
from agentskit_web.answering.extractive import (
    EXTRACTIVE_CODE_MAX_CHARS,
    EXTRACTIVE_MAX_SENTENCES,
    EXTRACTIVE_QUOTE_MAX_CHARS,
    NoQuotableText,
    compose_extractive_answer,
    split_deltas,
)
from agentskit_web.answering.sentences import sentences
from agentskit_web.server.ask_app import create_ask_app
from agentskit_web.server.generators import (
    ChatTurn,
    ExtractiveGenerator,
    GenerationError,
    GenerationRequest,
    OpenAICompatibleGenerator,
    chat_messages,
)

# --------------------------------------------------------------------------- extractive


def passage(
    text: str, title: str = "Guide", anchor: str | None = "part", code: str = ""
) -> Passage:
    return Passage("/docs/guide.html", anchor, "Guide", title, text, code)


def collect(generator: Any, request: GenerationRequest) -> list[str]:
    async def run() -> list[str]:
        return [piece async for piece in generator.stream(request)]

    return asyncio.run(run())


def quotes_of(answer: str) -> list[str]:
    return [line[2:] for line in answer.split("\n") if line.startswith("> ")]


def test_extractive_answer_quotes_verbatim_and_attributes() -> None:
    source = passage(
        "Intro sentence about nothing. Install the widget with one line. "
        "It streams answers. Unrelated closing remark."
    )
    answer = compose_extractive_answer("How to install the widget?", [source])
    # The short best sentence brings its neighbour; each sentence carries its marker.
    assert "> Install the widget with one line. [1] It streams answers. [1]" in answer
    assert "Intro sentence" not in answer and "Unrelated" not in answer
    assert "— *Guide › guide* [1]" not in answer
    assert "— *Guide* [1]" in answer
    assert answer.startswith("Here is what the documentation says:")
    assert answer.endswith("no language model was used._")


def test_every_quote_is_whole_verbatim_sentences_of_its_passage() -> None:
    passages = [
        passage("Alpha beta gamma. Delta epsilon widget zeta.", "One"),
        passage("Widget theta.\nIota kappa.", "Two"),
        passage("Lambda mu nu.", "Three"),
    ]
    answer = compose_extractive_answer("widget", passages)
    quotes = quotes_of(answer)
    assert len(quotes) == 3
    for number, (quote, source) in enumerate(zip(quotes, passages, strict=True), start=1):
        pieces = [p.strip() for p in re.split(r"\[\d\]|…", quote) if p.strip()]
        assert pieces and all(p in sentences(source.text) for p in pieces)
        assert quote.count(f"[{number}]") == len(pieces)


def test_best_sentence_matching_uses_light_stemming() -> None:
    source = passage("Nothing here. Installing takes a minute. Something else entirely different.")
    answer = compose_extractive_answer("how do I install?", [source])
    assert "> Installing takes a minute. [1]" in answer


def test_compounds_and_one_letter_typos_find_the_sentence() -> None:
    source = passage(
        "Intro text here. Pages in sub-folders need their own config. Rate limits apply."
    )
    answer = compose_extractive_answer("subfolder", [source])
    assert "Pages in sub-folders need their own config. [1]" in answer
    typo = compose_extractive_answer("the rate limts", [source])
    assert "Rate limits apply. [1]" in typo


def test_at_most_the_sentence_limit_in_document_order_with_gaps_marked() -> None:
    text = " ".join(f"Widget fact number {i}." for i in range(EXTRACTIVE_MAX_SENTENCES + 3))
    source = passage("Opening line. " + text)
    answer = compose_extractive_answer("widget fact", [source])
    quote = quotes_of(answer)[0]
    assert quote.count("[1]") == EXTRACTIVE_MAX_SENTENCES
    numbers = [int(n) for n in re.findall(r"number (\d+)", quote)]
    assert numbers == sorted(numbers)


def test_a_sentence_is_never_cut_only_skipped() -> None:
    long_sentence = "widget " * (EXTRACTIVE_QUOTE_MAX_CHARS // 7 + 1) + "end."
    assert len(long_sentence) > EXTRACTIVE_QUOTE_MAX_CHARS
    source = passage(f"{long_sentence} A short widget line.")
    answer = compose_extractive_answer("widget", [source])
    assert "A short widget line. [1]" in answer
    assert "widget widget" not in answer and "…" not in answer.split("\n\n")[1]
    fits = "widget " * (EXTRACTIVE_QUOTE_MAX_CHARS // 7 - 1) + "end."
    assert len(fits) <= EXTRACTIVE_QUOTE_MAX_CHARS
    answer = compose_extractive_answer("widget", [passage(fits)])
    assert f"> {fits} [1]" in answer


def test_abbreviations_and_inline_code_do_not_end_a_sentence() -> None:
    assert sentences("Skip files, e.g. `design/*`. Keys like `{a. B}` stay. Next.") == [
        "Skip files, e.g. `design/*`.",
        "Keys like `{a. B}` stay.",
        "Next.",
    ]


def test_code_is_quoted_whole_or_not_at_all() -> None:
    code = "pip install agentskit-web\nsecond line"
    answer = compose_extractive_answer("pip", [passage("", code=code)])
    assert "> ```\n> pip install agentskit-web\n> second line\n> ```\n> [1]" in answer
    at_limit = "pip " + "x" * (EXTRACTIVE_CODE_MAX_CHARS - 4)
    assert len(at_limit) == EXTRACTIVE_CODE_MAX_CHARS
    with_prose = passage("Install with pip.", code=at_limit)
    assert "```" in compose_extractive_answer("pip", [with_prose])
    too_long = passage("Install with pip.", code=at_limit + "x")
    answer = compose_extractive_answer("pip", [too_long])
    assert "```" not in answer and "Install with pip. [1]" in answer
    off_topic = passage("Install with pip.", code="make demo")
    assert "```" not in compose_extractive_answer("pip", [off_topic])


def test_no_quotable_text_is_a_generation_error() -> None:
    with pytest.raises(NoQuotableText):
        compose_extractive_answer("x", [passage("")])
    with pytest.raises(GenerationError):
        collect(ExtractiveGenerator(), GenerationRequest("x", [passage("")]))


def test_split_deltas_round_trips() -> None:
    text = "Word  boundaries\n\nkeep  everything — even émoji 😀 and trailing space "
    pieces = split_deltas(text, target=8)
    assert "".join(pieces) == text
    assert all(pieces) and len(pieces) > 3
    assert split_deltas("") == []


def test_extractive_stream_yields_the_composed_answer() -> None:
    request = GenerationRequest("widget", [PASSAGE])
    pieces = collect(ExtractiveGenerator(), request)
    assert "".join(pieces) == compose_extractive_answer(request.question, request.passages)
    assert len(pieces) > 3
    assert ExtractiveGenerator().model is None


# --------------------------------------------------------------------------- OpenAI-compatible

KEY = "sk-test-key-123"


def sse(payload: Any) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {text}\n\n".encode()


def chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class FakeCompletions:
    """A fake `/v1/chat/completions`; the requested model name picks the behaviour."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.disconnected = threading.Event()  # set from the server's thread

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.handle, methods=["POST"])])

    async def handle(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if request.headers.get("authorization") != f"Bearer {KEY}":
            return JSONResponse({"error": {"message": "bad key"}}, status_code=401)
        model = body["model"]
        if model == "http-500":
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=500)
        return StreamingResponse(self.events(model), media_type="text/event-stream")

    async def events(self, model: str) -> AsyncIterator[bytes]:
        yield b": keep-alive comment\n\n"
        yield sse({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        if model == "ok":
            for piece in ["Grounded ", "answer ", "[1]."]:
                yield sse(chunk(piece))
            yield sse(chunk(None, "stop"))
            yield sse("[DONE]")
        elif model == "finish-only":
            yield sse(chunk("Done by finish_reason.", "stop"))
        elif model == "no-done":
            yield sse(chunk("cut "))
        elif model == "garbage":
            yield sse(chunk("before "))
            yield b"data: {not json\n\n"
        elif model == "error-object":
            yield sse(chunk("before "))
            yield sse({"error": {"message": "content filter"}})
        elif model == "slow":
            try:
                for _ in range(200):
                    yield sse(chunk("tick "))
                    await asyncio.sleep(0.05)
            finally:
                self.disconnected.set()


@pytest.fixture(scope="module")
def fake() -> Iterator[tuple[FakeCompletions, str]]:
    completions = FakeCompletions()
    with ThreadedUvicorn(completions.app()) as server:
        yield completions, f"{server.url}/v1"


def request_for(question: str = "How do I install the widget?") -> GenerationRequest:
    history = [ChatTurn("user", "earlier"), ChatTurn("assistant", "earlier answer")]
    return GenerationRequest(question, [PASSAGE], history)


def test_openai_stream_yields_tokens_and_sends_grounded_messages(
    fake: tuple[FakeCompletions, str],
) -> None:
    completions, base = fake
    generator = OpenAICompatibleGenerator(base, KEY, "ok")
    assert collect(generator, request_for()) == ["Grounded ", "answer ", "[1]."]
    sent = completions.requests[-1]
    assert sent["model"] == "ok" and sent["stream"] is True
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    system = sent["messages"][0]["content"]
    assert "[1] Installing › Install the widget (/docs/install.html#install-the-widget)" in system
    assert PASSAGE.text in system and "only the numbered passages" in system
    assert sent["messages"][-1]["content"] == "How do I install the widget?"
    assert completions.headers[-1]["accept"] == "text/event-stream"
    assert generator.model == "ok"


def test_finish_reason_without_done_is_complete(fake: tuple[FakeCompletions, str]) -> None:
    _, base = fake
    pieces = collect(OpenAICompatibleGenerator(base, KEY, "finish-only"), request_for())
    assert pieces == ["Done by finish_reason."]


@pytest.mark.parametrize("model", ["no-done", "garbage", "error-object", "http-500"])
def test_broken_streams_raise_generation_error(
    fake: tuple[FakeCompletions, str], model: str
) -> None:
    _, base = fake
    with pytest.raises(GenerationError):
        collect(OpenAICompatibleGenerator(base, KEY, model), request_for())


def test_wrong_key_is_a_generation_error_without_the_key(fake: tuple[FakeCompletions, str]) -> None:
    _, base = fake
    with pytest.raises(GenerationError) as raised:
        collect(OpenAICompatibleGenerator(base, "wrong-key", "ok"), request_for())
    assert "401" in str(raised.value) and "wrong-key" not in str(raised.value)


def test_unreachable_endpoint_is_a_generation_error() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    generator = OpenAICompatibleGenerator(f"http://127.0.0.1:{port}/v1", KEY, "ok")
    with pytest.raises(GenerationError):
        collect(generator, request_for())


def test_only_http_urls_are_accepted() -> None:
    with pytest.raises(ValueError):
        OpenAICompatibleGenerator("file:///etc/passwd", KEY, "ok")


@pytest.mark.parametrize(
    "url",
    [
        "https://api.example.com/v1",
        "https://10.0.0.5/v1",
        "http://127.0.0.1:8080/v1",
        "http://127.9.9.9/v1",
        "http://localhost:8080/v1",
        "http://LOCALHOST./v1",
        "http://[::1]:8080/v1",
    ],
)
def test_https_anywhere_and_plain_http_on_loopback_are_accepted(url: str) -> None:
    assert OpenAICompatibleGenerator(url, KEY, "m").url == url.rstrip("/") + "/chat/completions"


@pytest.mark.parametrize(
    "url",
    [
        "http://api.example.com/v1",
        "http://10.0.0.5:8080/v1",
        "http://[2001:db8::1]/v1",
        "http://127.0.0.1.example.com/v1",  # a name, not the loopback literal
        "http://localhost.example.com/v1",
        "http://0.0.0.0:8080/v1",
    ],
)
def test_plain_http_to_another_host_is_refused_unless_allowed(url: str) -> None:
    with pytest.raises(ValueError, match="--openai-allow-http"):
        OpenAICompatibleGenerator(url, KEY, "m")
    allowed = OpenAICompatibleGenerator(url, KEY, "m", allow_insecure_http=True)
    assert allowed.url.startswith("http://")


@pytest.mark.parametrize(
    "url", ["https://user:pass@api.example.com/v1", "http:///v1", "https://", "ftp://x/v1"]
)
def test_malformed_or_credentialed_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        OpenAICompatibleGenerator(url, KEY, "m", allow_insecure_http=True)


def test_history_is_bounded() -> None:
    history = [ChatTurn("user", f"q{i}") for i in range(30)]
    messages = chat_messages(GenerationRequest("now", [PASSAGE], history))
    assert len(messages) == 1 + 8 + 1
    assert messages[1]["content"] == "q22"


def test_ask_app_streams_openai_tokens_end_to_end(
    fake: tuple[FakeCompletions, str], tmp_path: Path
) -> None:
    _, base = fake
    docs = write_docs(tmp_path / "docs")
    app = create_ask_app(site(), docs, generator=OpenAICompatibleGenerator(base, KEY, "ok"))
    events = post(app, ask_body()).events
    assert text_of(events) == "Grounded answer [1]."
    assert [e["type"] for e in events][-2:] == ["tool", "done"]
    assert events[-1] == {"type": "done", "model": "ok"}


def test_ask_app_reports_upstream_failure_in_stream(
    fake: tuple[FakeCompletions, str], tmp_path: Path
) -> None:
    _, base = fake
    docs = write_docs(tmp_path / "docs")
    app = create_ask_app(site(), docs, generator=OpenAICompatibleGenerator(base, KEY, "garbage"))
    events = post(app, ask_body()).events
    assert [e["type"] for e in events] == ["text", "error"]
    assert events[-1]["code"] == "ASK_GENERATION_FAILED"


def test_generation_timeout_closes_the_upstream_stream(
    fake: tuple[FakeCompletions, str], tmp_path: Path
) -> None:
    completions, base = fake
    completions.disconnected.clear()
    docs = write_docs(tmp_path / "docs")
    # The fake ticks every 50 ms for 10 s: 1.5 s leaves a loaded machine time for the first tick.
    config = site(limits__generationTimeoutMs=1_500)
    app = create_ask_app(config, docs, generator=OpenAICompatibleGenerator(base, KEY, "slow"))
    events = post(app, ask_body()).events
    assert events[-1]["code"] == "ASK_TIMEOUT"
    assert text_of(events).startswith("tick ")

    async def wait_for_upstream_close() -> None:
        for _ in range(100):
            if completions.disconnected.is_set():
                return
            await asyncio.sleep(0.05)

    asyncio.run(wait_for_upstream_close())
    assert completions.disconnected.is_set()
