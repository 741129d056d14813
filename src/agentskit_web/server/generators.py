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

import functools
import ipaddress
import itertools
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol
from urllib.parse import urlsplit

import anyio
import httpx

from ..answering.chunk import Passage
from ..protocol.wire_json import JSON_INVALID, parse_json
from .retrieval import STOPWORDS, light_stem, sentences, terms_of
from .search_terms import WORD, within_one_edit

Role = Literal["user", "assistant"]

EXTRACTIVE_SHORT_SENTENCE_CHARS: Final = 140
"""A quote of one sentence shorter than this also quotes its neighbour."""
EXTRACTIVE_QUOTE_MAX_CHARS: Final = 600
"""Most characters quoted from one source (whole sentences only)."""
EXTRACTIVE_CODE_MAX_CHARS: Final = 800
"""A source's code (all its blocks) is quoted whole up to this size, else not at all."""
SENTENCE_CACHE_MAX: Final = 1_024
"""Passages whose sentence split is remembered (a docs site has a few hundred sections)."""
EXTRACTIVE_TYPO_MIN_CHARS: Final = 5
"""Question words this long match a passage word one letter away ("limt" ~ "limit")."""
EXTRACTIVE_MAX_SENTENCES: Final = 2
"""Most sentences quoted from one source (a short best sentence brings its neighbour)."""
DELTA_TARGET_CHARS: Final = 24
"""The extractive generator streams in word groups of about this many chars."""


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


def _pick(scores: Sequence[int], lengths: Sequence[int]) -> list[int]:
    """Indexes of the sentences to quote, in document order (see `quote_sentences`)."""
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    picked: list[int] = []
    size = 0
    for index in ranked:
        if len(picked) >= EXTRACTIVE_MAX_SENTENCES or (picked and scores[index] == 0):
            break
        if size + lengths[index] > EXTRACTIVE_QUOTE_MAX_CHARS:
            continue
        picked.append(index)
        size += lengths[index]
    if len(picked) == 1 and lengths[picked[0]] < EXTRACTIVE_SHORT_SENTENCE_CHARS:
        # A short sentence alone reads as a fragment: add its neighbour for context.
        best = picked[0]
        for neighbour in (best + 1, best - 1):
            if 0 <= neighbour < len(scores) and size + lengths[neighbour] <= (
                EXTRACTIVE_QUOTE_MAX_CHARS
            ):
                picked.append(neighbour)
                break
    return sorted(picked)


def quote_terms(text: str) -> set[str]:
    """`terms_of` plus each pair of adjacent words joined ("sub-folder" -> "subfolder"),
    so a question and the docs that write a compound differently still meet."""
    words = [w for w in WORD.findall(text.lower()) if len(w) > 1]
    terms = {light_stem(w) for w in words if w not in STOPWORDS}
    terms.update(light_stem(left + right) for left, right in itertools.pairwise(words))
    return terms


@functools.lru_cache(maxsize=SENTENCE_CACHE_MAX)
def sentence_terms(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """A passage's sentences with their `quote_terms`, remembered per passage text:
    the docs do not change while the backend runs, and the same sections answer
    many questions."""
    return tuple((sentence, frozenset(quote_terms(sentence))) for sentence in sentences(text))


@functools.lru_cache(maxsize=SENTENCE_CACHE_MAX)
def _passage_terms(text: str) -> frozenset[str]:
    return frozenset(terms_of(text))


def _near_terms(question_terms: set[str], passages_terms: set[str]) -> set[str]:
    """Question terms with their one-letter typos resolved against the passages' terms.

    Only terms no passage contains are typo candidates, and only passage terms
    of about the same length and the same first two letters are compared, so
    this costs little even for long passages.
    """
    unknown = [t for t in question_terms - passages_terms if len(t) >= EXTRACTIVE_TYPO_MIN_CHARS]
    if not unknown:
        return question_terms
    by_prefix: dict[str, list[str]] = {}
    for candidate in passages_terms:
        by_prefix.setdefault(candidate[:2], []).append(candidate)
    resolved = set(question_terms)
    for term in unknown:
        resolved.update(
            candidate
            for candidate in by_prefix.get(term[:2], ())
            if within_one_edit(term, candidate)
        )
    return resolved


def _code_quote(passage: Passage, question_terms: set[str], room: int) -> str | None:
    """The passage's code as one fenced block, when it is on topic and fits whole."""
    code = passage.code.strip("\n")
    if not code or "```" in code or len(code) > room:
        return None
    if passage.text.strip() and not terms_of(code) & question_terms:
        return None
    return f"```\n{code}\n```"


def quote_sentences(passage: Passage, question_terms: set[str]) -> list[list[str]]:
    """The sentences of a passage that answer, as runs of adjacent sentences.

    At most EXTRACTIVE_MAX_SENTENCES whole sentences and EXTRACTIVE_QUOTE_MAX_CHARS
    in all (a sentence that does not fit is skipped, never cut): the ones sharing
    most words with the question, or the passage's first sentence when none
    does. The passage's code is added as one last run when it is on topic and
    at most EXTRACTIVE_CODE_MAX_CHARS (a code block is never cut either).
    """
    split = sentence_terms(passage.text)
    found = [sentence for sentence, _ in split]
    scores = [len(terms & question_terms) for _, terms in split]
    picked = _pick(scores, [len(sentence) for sentence in found]) if found else []
    runs: list[list[str]] = []
    for index in picked:
        if runs and index - 1 in picked:
            runs[-1].append(found[index])
        else:
            runs.append([found[index]])
    code = _code_quote(passage, question_terms, EXTRACTIVE_CODE_MAX_CHARS)
    if code is not None:
        runs.append([code])
    return runs


def _quote_block(runs: Sequence[Sequence[str]], number: int) -> str:
    """A Markdown blockquote: each sentence and code block followed by its [n];
    `…` marks sentences left out between two quoted ones."""
    marker = f"[{number}]"
    prose = [run for run in runs if not run[0].startswith("```")]
    code = [run[0] for run in runs if run[0].startswith("```")]
    parts = []
    if prose:
        parts.append(" … ".join(" ".join(f"{s} {marker}" for s in run) for run in prose))
    parts.extend(f"{block}\n{marker}" for block in code)
    body = "\n\n".join(parts)
    return "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))


def compose_extractive_answer(request: GenerationRequest) -> str:
    """The whole extractive answer as Markdown: attributed verbatim quotes, then a note."""
    question_terms = _near_terms(
        quote_terms(request.question),
        set().union(*(_passage_terms(p.text) for p in request.passages)),
    )
    blocks: list[str] = []
    for number, passage in enumerate(request.passages, start=1):
        runs = quote_sentences(passage, question_terms)
        if runs:
            blocks.append(f"{_quote_block(runs, number)}\n\n— *{passage.title}* [{number}]")
    if not blocks:
        raise GenerationError("No passage had quotable text.")
    intro = "Here is what the documentation says:"
    outro = "_These are direct quotes from the sources listed below; no language model was used._"
    return "\n\n".join([intro, *blocks, outro])


def split_deltas(text: str, target: int = DELTA_TARGET_CHARS) -> list[str]:
    """Cut text into word-aligned pieces of about `target` chars (joined, they equal text)."""
    pieces: list[str] = []
    current = ""
    for token in re.findall(r"\S+\s*|\s+", text):
        current += token
        if len(current) >= target:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


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
        answer = compose_extractive_answer(request)
        for piece in split_deltas(answer):
            yield piece
            # Yield to the loop every delta: cancellation (client gone) lands here.
            await anyio.sleep(self.pace_seconds)


# --------------------------------------------------------------------------- OpenAI-compatible

SYSTEM_PROMPT: Final = (
    "You answer questions about a documentation site using only the numbered passages "
    "below. Cite passages as [n]. If the passages do not answer the question, say so "
    "plainly instead of guessing."
)
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
