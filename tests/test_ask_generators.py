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
from agentskit_web.answering.answer_shape import MORE_FROM_THE_DOCS
from agentskit_web.answering.chunk import Passage
from agentskit_web.answering.extractive import (
    EXTRACTIVE_CODE_MAX_CHARS,
    EXTRACTIVE_SHORT_SENTENCE_CHARS,
    LEAD_MAX_CHARS,
    LEAD_MAX_SENTENCES,
    PREVIEW_MAX_CHARS,
    NoQuotableText,
    asks_how,
    compose_extractive_answer,
    extractive_answer,
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


def lead_of(answer: str) -> str:
    """The answer's opening quote (its first blockquote line)."""
    return quotes_of(answer)[0]


def test_the_answer_opens_with_the_sentences_that_answer_then_lists_the_rest() -> None:
    source = passage(
        "Intro sentence about nothing. Install the widget with one line. "
        "It streams answers. Unrelated closing remark."
    )
    other = passage("The widget has a dark theme. Colours follow the page.", "Themes")
    answer = compose_extractive_answer("How to install the widget?", [source, other])
    # The short best sentence brings its neighbour; one marker for the whole quote.
    assert answer.startswith("> Install the widget with one line. It streams answers. [1]")
    assert "Intro sentence" not in answer and "Unrelated" not in answer
    more = answer.split(f"**{MORE_FROM_THE_DOCS}**\n", 1)[1]
    assert more.startswith("- *Guide › Themes* [2]: The widget has a dark theme.\n")
    # The line's whole quote is nested under it (the view opens it on demand), unmarked.
    assert "\n  > The widget has a dark theme. Colours follow the page.\n" in more
    # A quote that is just the line's sentence is not nested: opening it would repeat it.
    lone = passage("The widget has a dark theme.", "Themes")
    code = Passage("/docs/code/", "code", "Guide", "Code", "", "widget.run()")
    listed = compose_extractive_answer("How to install the widget?", [source, lone, code])
    assert "  > The widget has a dark theme." not in listed
    assert "- *Guide › Code* [3]: Code example.\n  > ```\n  > widget.run()\n  > ```" in listed
    assert answer.count("[1]") == answer.count("[2]") == 1
    assert answer.endswith("no language model was used._")
    alone = compose_extractive_answer("How to install the widget?", [source])
    assert MORE_FROM_THE_DOCS not in alone, "nothing more: no empty list"


def test_every_quote_is_whole_verbatim_sentences_of_its_passage() -> None:
    passages = [
        passage("Alpha beta gamma. Delta epsilon widget zeta.", "One"),
        passage("Widget theta.\nIota kappa.", "Two"),
        passage("Lambda mu nu.", "Three"),
    ]
    answer = extractive_answer("widget", passages)
    assert answer.lead == 0
    lead = lead_of(answer.markdown).removesuffix(" [1]")
    assert lead in sentences(passages[0].text) or lead == passages[0].text
    for number, source in enumerate(passages[1:], start=2):
        line = next(x for x in answer.markdown.split("\n") if f"[{number}]: " in x)
        assert line.split(f"[{number}]: ", 1)[1] in sentences(source.text)


def test_the_lead_holds_at_most_three_sentences_in_document_order() -> None:
    at_limit = " ".join(f"Widget fact number {i}." for i in range(LEAD_MAX_SENTENCES))
    lead = lead_of(compose_extractive_answer("widget fact", [passage("Opening. " + at_limit)]))
    assert lead == f"{at_limit} [1]"
    past = " ".join(f"Widget fact number {i}." for i in range(LEAD_MAX_SENTENCES + 2))
    lead = lead_of(compose_extractive_answer("widget fact", [passage("Opening. " + past)]))
    numbers = [int(n) for n in re.findall(r"number (\d+)", lead)]
    assert len(numbers) == LEAD_MAX_SENTENCES and numbers == sorted(numbers)


def test_a_lead_sentence_is_never_cut_only_skipped() -> None:
    fits = "widget " * ((LEAD_MAX_CHARS - 4) // 7) + "end."
    fits = fits.rjust(LEAD_MAX_CHARS, "w")
    assert len(fits) == LEAD_MAX_CHARS
    assert lead_of(compose_extractive_answer("widget", [passage(fits)])) == f"{fits} [1]"
    too_long = "w" + fits
    answer = compose_extractive_answer("widget", [passage(f"{too_long} A short widget line.")])
    assert lead_of(answer) == "A short widget line. [1]"
    # A passage with nothing that fits gives the lead to the next one.
    answer = extractive_answer("widget", [passage(too_long), passage("Widgets stream.")])
    assert answer.lead == 1 and answer.markdown.startswith("> Widgets stream. [2]")


def _pointing_back(length: int) -> str:
    """A sentence of `length` characters that opens with "This" and holds "widget note",
    long enough that the short-sentence rule brings no neighbour."""
    sentence = "This widget note " + "w" * (length - len("This widget note ") - 1) + "."
    assert len(sentence) == length and length >= EXTRACTIVE_SHORT_SENTENCE_CHARS
    return sentence


def _unrelated(length: int) -> str:
    sentence = "Opening " + "z" * (length - len("Opening ") - 1) + "."
    assert len(sentence) == length
    return sentence


def test_a_lead_that_points_back_brings_the_sentence_before_it() -> None:
    back = _pointing_back(200)
    before = "Run make test from the project root."
    answer = compose_extractive_answer("widget note", [passage(f"{before} {back} Unrelated.")])
    assert lead_of(answer) == f"{before} {back} [1]"
    # At the section's start it points at the heading: the title goes above the quote and
    # carries the [n] (one marker), so the reader sees what "This" is.
    opening = passage(back, "Notes")
    answer = compose_extractive_answer("widget note", [opening])
    assert answer.startswith(f"*Guide › Notes* [1]\n\n> {back}\n")
    assert answer.count("[1]") == 1
    # A lead that opens the section on anything else has no title line.
    plain_start = passage("Widget notes hold " + "w" * 200 + ".", "Notes")
    assert compose_extractive_answer("widget note", [plain_start]).startswith("> Widget notes")
    # Nor does one whose back-reference is not its section's first sentence, its
    # antecedent left out for the bounds (test below): the title is not what it means.
    far = passage(f"{_unrelated(LEAD_MAX_CHARS)} {back}", "Notes")
    assert compose_extractive_answer("widget note", [far]).startswith(f"> {back} [1]")
    # "There", "Thus" and "These" inside a sentence point at nothing before.
    plain = "There " + back.removeprefix("This ")
    answer = compose_extractive_answer("widget note", [passage(f"{before} {plain}")])
    assert lead_of(answer) == f"{plain} [1]"


def test_the_sentence_before_comes_only_within_the_lead_bounds() -> None:
    back = _pointing_back(250)
    at_limit = _unrelated(LEAD_MAX_CHARS - 250)
    answer = compose_extractive_answer("widget note", [passage(f"{at_limit} {back}")])
    assert lead_of(answer) == f"{at_limit} {back} [1]"
    past = _unrelated(LEAD_MAX_CHARS - 250 + 1)
    answer = compose_extractive_answer("widget note", [passage(f"{past} {back}")])
    assert lead_of(answer) == f"{back} [1]"
    # A lead of LEAD_MAX_SENTENCES already takes no fourth sentence.
    facts = [f"Widget note {i} holds." for i in range(LEAD_MAX_SENTENCES - 1)]
    back = _pointing_back(150)
    text = f"{_unrelated(60)} {back} {' '.join(facts)}"
    lead = lead_of(compose_extractive_answer("widget note", [passage(text)]))
    assert lead == f"{back} {' '.join(facts)} [1]"


def test_a_how_to_question_gets_the_code_block_a_fact_question_does_not() -> None:
    code = "pip install agentskit-web\nsecond line"
    answer = compose_extractive_answer("how do I pip install it?", [passage("", code=code)])
    assert answer.startswith("> ```\n> pip install agentskit-web\n> second line\n> ```\n>")
    assert answer.count("[1]") == 1
    with_prose = passage("Install with pip.", code=code)
    assert "```" in compose_extractive_answer("install with pip", [with_prose])
    assert "```" not in compose_extractive_answer("what is pip install?", [with_prose])
    assert asks_how("Show a progress bar") and asks_how("Can I install it?")
    assert not asks_how("Why use pip?") and not asks_how("") and not asks_how("which pip")


def test_a_sentence_introducing_code_is_left_out_when_no_code_follows() -> None:
    source = passage("Install it with pip. To install, run this:", code="pip install widget")
    shown = compose_extractive_answer("how do I install with pip?", [source])
    assert shown.startswith("> Install it with pip. To install, run this: [1]\n>\n> ```")
    fact = compose_extractive_answer("what does install with pip do?", [source])
    assert fact.startswith("> Install it with pip. [1]") and "run this:" not in fact


def test_code_is_quoted_whole_or_not_at_all() -> None:
    at_limit = "pip " + "x" * (EXTRACTIVE_CODE_MAX_CHARS - 4)
    assert len(at_limit) == EXTRACTIVE_CODE_MAX_CHARS
    with_prose = passage("Install with pip.", code=at_limit)
    assert "```" in compose_extractive_answer("pip", [with_prose])
    too_long = passage("Install with pip.", code=at_limit + "x")
    answer = compose_extractive_answer("pip", [too_long])
    assert "```" not in answer and "Install with pip. [1]" in answer
    off_topic = passage("Install with pip.", code="make demo")
    assert "```" not in compose_extractive_answer("pip", [off_topic])


def test_a_more_line_shows_at_most_the_preview_bound() -> None:
    first = passage("Widgets stream.")
    at_limit = ("widget " * PREVIEW_MAX_CHARS)[: PREVIEW_MAX_CHARS - 1] + "."
    assert len(at_limit) == PREVIEW_MAX_CHARS
    answer = compose_extractive_answer("widget", [first, passage(at_limit)])
    assert f"[2]: {at_limit}" in answer
    past = "widget " * (PREVIEW_MAX_CHARS // 7) + "widgets."
    assert len(past) > PREVIEW_MAX_CHARS
    line = compose_extractive_answer("widget", [first, passage(past)]).split("[2]: ")[1]
    line = line.split("\n")[0]
    assert line.endswith(" …") and len(line) <= PREVIEW_MAX_CHARS + 2
    assert past.startswith(line.removesuffix(" …"))


def test_best_sentence_matching_uses_light_stemming() -> None:
    source = passage("Nothing here. Installing takes a minute. Something else entirely different.")
    answer = compose_extractive_answer("how do I install?", [source])
    assert answer.startswith("> Installing takes a minute.")


def test_compounds_and_one_letter_typos_find_the_sentence() -> None:
    source = passage(
        "Intro text here. Pages in sub-folders need their own config. Rate limits apply."
    )
    answer = compose_extractive_answer("subfolder", [source])
    assert answer.startswith("> Pages in sub-folders need their own config.")
    typo = compose_extractive_answer("the rate limts", [source])
    assert "Rate limits apply. [1]" in typo


def test_abbreviations_and_inline_code_do_not_end_a_sentence() -> None:
    assert sentences("Skip files, e.g. `design/*`. Keys like `{a. B}` stay. Next.") == [
        "Skip files, e.g. `design/*`.",
        "Keys like `{a. B}` stay.",
        "Next.",
    ]


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
