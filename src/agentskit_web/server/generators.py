"""The answer-generation port and its two implementations.

A `Generator` turns a question, the conversation so far and the retrieved
passages into a stream of text deltas. The Ask app owns everything around it
(deadlines, size bounds, citation event, errors), so a generator only yields
text or raises.

- `ExtractiveGenerator` (the default) needs no model and no network: it quotes
  the best-matching sentences of the retrieved passages verbatim, each
  attributed to its source, and says plainly that it quoted rather than wrote.
- `OpenAICompatibleGenerator` streams tokens from any OpenAI-compatible
  `/chat/completions` endpoint (URL + key) over httpx.
"""

import ipaddress
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol
from urllib.parse import urlsplit

import anyio
import httpx

from ..answering.answer_shape import MORE_FROM_THE_DOCS
from ..answering.chunk import Passage
from ..answering.extractive import (
    LEAD_MAX_CHARS,
    NoQuotableText,
    compose_extractive_answer,
    split_deltas,
)
from ..protocol.wire_json import JSON_INVALID, parse_json

Role = Literal["user", "assistant"]


class GenerationError(RuntimeError):
    """The generator could not produce an answer (the app reports ASK_GENERATION_FAILED)."""


@dataclass(frozen=True, slots=True)
class ChatTurn:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """What a generator sees: the question, earlier turns, numbered passages."""

    question: str
    passages: Sequence[Passage]
    history: Sequence[ChatTurn] = field(default_factory=tuple)


class Generator(Protocol):
    """The generation port. `model` (or None) is reported in the `done` event."""

    @property
    def model(self) -> str | None: ...

    def stream(self, request: GenerationRequest) -> AsyncIterator[str]: ...


# --------------------------------------------------------------------------- extractive


class ExtractiveGenerator:
    """Honest answers without a model: quotes from the retrieved passages, streamed.

    `pace_seconds` inserts a pause between deltas (the demo uses a few
    milliseconds so the stream is visible; tests and benches use 0).
    """

    def __init__(self, pace_seconds: float = 0.0) -> None:
        self.pace_seconds = pace_seconds

    @property
    def model(self) -> str | None:
        return None

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        try:
            answer = compose_extractive_answer(request.question, request.passages)
        except NoQuotableText as error:
            raise GenerationError(str(error)) from error
        for piece in split_deltas(answer):
            yield piece
            # Yield to the loop every delta: cancellation (client gone) lands here.
            await anyio.sleep(self.pace_seconds)


# --------------------------------------------------------------------------- OpenAI-compatible

SYSTEM_PROMPT: Final = (
    "You answer questions about a documentation site using only the numbered passages "
    "below. If the passages do not answer the question, say so plainly instead of "
    "guessing. Otherwise open with the answer itself: at most three sentences, about "
    f"{LEAD_MAX_CHARS} characters, from the passage that answers best; when the question "
    "asks how to do something and that passage has code, follow with that one code "
    f"block. Then, only if other passages add something, a line '**{MORE_FROM_THE_DOCS}**' "
    "directly followed, with no blank line, by one '- ' line per such passage: its title "
    "and what it adds. Cite each passage you "
    "use once, as [n]; do not list the sources, they are shown below the answer."
)
"""The same shape as the extractive answer (answering/extractive.py, issue 32): the reader
gets a short lead first, whichever generator the site runs."""
OPENAI_HISTORY_MAX_TURNS: Final = 8


def _passages_block(passages: Sequence[Passage]) -> str:
    return "\n\n".join(
        f"[{number}] {passage.title} ({passage.path}"
        f"{'#' + passage.anchor if passage.anchor else ''})\n{passage.text}"
        f"{chr(10) + passage.code if passage.code else ''}"
        for number, passage in enumerate(passages, start=1)
    )


def chat_messages(request: GenerationRequest) -> list[dict[str, str]]:
    """The chat-completions `messages`: system (rules + passages), recent turns, question."""
    messages = [
        {"role": "system", "content": f"{SYSTEM_PROMPT}\n\n{_passages_block(request.passages)}"}
    ]
    for turn in list(request.history)[-OPENAI_HISTORY_MAX_TURNS:]:
        messages.append({"role": turn.role, "content": turn.content})
    messages.append({"role": "user", "content": request.question})
    return messages


def is_loopback_host(host: str) -> bool:
    """True for `localhost` and loopback IP literals (127.0.0.0/8, ::1); never resolves DNS.

    A name is judged by its text alone: what it resolves to may change, and
    only `localhost` itself is mapped to loopback by every resolver.
    """
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def check_completion_url(base_url: str, *, allow_insecure_http: bool = False) -> None:
    """Refuse a URL the API key must not be sent to (raises ValueError with the reason).

    https anywhere; plain http only to this machine (loopback), unless the
    operator says explicitly that the network in between is trusted, because
    the key travels in the `Authorization` header of every request.
    """
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("The completion endpoint URL must be http(s) with a host.")
    if parts.username is not None or parts.password is not None:
        raise ValueError("The completion endpoint URL must not carry a user name or password.")
    if parts.scheme == "http" and not allow_insecure_http and not is_loopback_host(parts.hostname):
        raise ValueError(
            "The completion endpoint URL is plain http to a host other than this machine, "
            "so the API key would cross the network unencrypted; use https, or allow it "
            "explicitly with --openai-allow-http."
        )


def _delta_of(payload: Any) -> tuple[str, bool]:
    """(text, finished) from one streamed chunk; raises GenerationError on an error object."""
    if not isinstance(payload, dict):
        raise GenerationError("Malformed completion chunk.")
    if "error" in payload:
        raise GenerationError("The completion endpoint reported an error.")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "", False
    choice = choices[0]
    delta = choice.get("delta")
    text = delta.get("content") if isinstance(delta, dict) else None
    return (text if isinstance(text, str) else ""), choice.get("finish_reason") is not None


class OpenAICompatibleGenerator:
    """Streams tokens from an OpenAI-compatible chat-completions endpoint.

    `base_url` is the API root (e.g. `http://127.0.0.1:8080/v1`); the request
    goes to `<base_url>/chat/completions` with `stream: true` and the key as a
    bearer token. The key is never logged or echoed. Pass `client` to reuse a
    connection pool (the app does); otherwise one client per answer is used.
    A plain-http URL is refused unless its host is loopback or
    `allow_insecure_http` is set (`check_completion_url`).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        *,
        client: httpx.AsyncClient | None = None,
        connect_timeout: float = 10.0,
        temperature: float = 0.2,
        allow_insecure_http: bool = False,
    ) -> None:
        check_completion_url(base_url, allow_insecure_http=allow_insecure_http)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._key = api_key
        self._model = model
        self._client = client
        self._timeout = httpx.Timeout(connect_timeout, read=None)
        self.temperature = temperature

    @property
    def model(self) -> str | None:
        return self._model

    def _body(self, request: GenerationRequest) -> dict[str, Any]:
        return {
            "model": self._model,
            "stream": True,
            "temperature": self.temperature,
            "messages": chat_messages(request),
        }

    async def stream(self, request: GenerationRequest) -> AsyncIterator[str]:
        headers = {"authorization": f"Bearer {self._key}", "accept": "text/event-stream"}
        if self._client is not None:
            async for piece in self._stream_with(self._client, request, headers):
                yield piece
            return
        async with httpx.AsyncClient(timeout=self._timeout) as client:
            async for piece in self._stream_with(client, request, headers):
                yield piece

    async def _stream_with(
        self, client: httpx.AsyncClient, request: GenerationRequest, headers: dict[str, str]
    ) -> AsyncIterator[str]:
        try:
            async with client.stream(
                "POST", self.url, json=self._body(request), headers=headers, timeout=self._timeout
            ) as response:
                if response.status_code != 200:
                    raise GenerationError(f"Completion endpoint answered {response.status_code}.")
                async for piece in _sse_deltas(response):
                    yield piece
        except httpx.HTTPError as error:
            raise GenerationError("Completion endpoint unreachable or failed.") from error


async def _sse_deltas(response: httpx.Response) -> AsyncIterator[str]:
    """Text deltas of a chat-completions SSE body; requires `[DONE]` or a finish_reason."""
    finished = False
    async for line in response.aiter_lines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        payload = parse_json(data)
        if payload is JSON_INVALID:
            raise GenerationError("Malformed completion chunk.")
        text, done = _delta_of(payload)
        if text:
            yield text
        finished = finished or done
    if not finished:
        raise GenerationError("Completion stream ended before it finished.")
