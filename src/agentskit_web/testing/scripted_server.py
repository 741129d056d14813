"""A scripted Ask backend on loopback for tests of a page that embeds `<agentskit-ask>`.

`AskServer` runs a Starlette app (through `AppServer`) on a free 127.0.0.1
port. It serves a built site's files at `/` when given one, so the page and the
Ask endpoint share one origin (no CORS, `connect-src 'self'`), and answers
POSTs to its Ask path (`/api/ask`, the widget's default) with whatever the
test scripted last:

- `answer(text, sources)`: text deltas, one `cite` tool event, `done` — the
  stream the reference backend sends (PROTOCOL.md section 6);
- `lines(steps)`: raw NDJSON lines (bytes or str) with delays (floats, seconds);
- `error(status, code, message)`: a status error with an `{"error": …}` body;
- `stall(seconds)`: nothing at all (not even headers) for that long, then `done`;
- `preset(name)`: one of the project's hostile streams (`preset_names()`, presets.py).

Every request is recorded (`requests`: method, path, query, headers, body).
"""

from __future__ import annotations

import asyncio
import difflib
import json
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from ..server.feedback_app import feedback_path_for
from ..server.static import AppServer, create_static_app

DEFAULT_ASK_PATH = "/api/ask"
NDJSON = "application/x-ndjson"

Step = bytes | str | float


class ScriptError(TypeError):
    """A scripted answer that cannot be sent (says what to pass instead)."""


@dataclass(frozen=True)
class Source:
    """One source of a scripted answer: a title and a same-origin path (with an anchor)."""

    title: str
    path: str
    anchor: str | None = None


@dataclass(frozen=True)
class RecordedRequest:
    """One request the Ask endpoint received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body decoded as JSON (the widget sends `{"messages": [...], ...}`)."""
        return json.loads(self.body)

    @property
    def question(self) -> str | None:
        """The last user message's content, if the body has one."""
        try:
            messages = self.json()["messages"]
        except (ValueError, KeyError, TypeError):
            return None
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        return content if isinstance(content, str) else None


@dataclass(frozen=True)
class Script:
    """What the endpoint answers: a status, headers after `header_delay`, then the steps."""

    steps: tuple[bytes | float, ...]
    status: int = 200
    content_type: str | None = NDJSON
    header_delay: float = 0.0


def event_line(event: dict[str, Any]) -> bytes:
    """One NDJSON line of the Ask stream."""
    return (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _steps(steps: Sequence[Step]) -> tuple[bytes | float, ...]:
    checked: list[bytes | float] = []
    for index, step in enumerate(steps):
        if isinstance(step, bool) or not isinstance(step, bytes | str | int | float):
            raise ScriptError(
                f"scripted step {index} is {type(step).__name__} ({step!r}): pass each line as "
                'bytes or str (end it with a newline, e.g. \'{"type":"done"}\\n\') and each '
                "delay as a number of seconds; use event_line(dict) to encode an event"
            )
        if isinstance(step, int | float):
            if step < 0:
                raise ScriptError(f"scripted delay {index} is negative ({step}): use seconds >= 0")
            checked.append(float(step))
        else:
            checked.append(step.encode() if isinstance(step, str) else step)
    return tuple(checked)


@dataclass
class _State:
    script: Script
    requests: list[RecordedRequest] = field(default_factory=list)
    feedback: list[Any] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class AskServer(AppServer):
    """`with AskServer(site=dist) as ask: ask.answer("Hi", sources=[...])`."""

    def __init__(self, site: Path | None = None, path: str = DEFAULT_ASK_PATH) -> None:
        if not path.startswith("/"):
            raise ValueError(f"the Ask path must start with '/', got {path!r}")
        self.path = path
        self._state = _State(script=Script(steps=(event_line({"type": "done"}),)))
        routes = [
            Route(path, self._handle, methods=["POST"]),
            # Where the widget sends thumbs, beside its endpoint (docs/protocol.md, Feedback).
            Route(feedback_path_for(path), self._feedback, methods=["POST"]),
        ]
        app = (
            create_static_app(site, routes=list(routes))
            if site is not None
            else Starlette(routes=[*routes, Route("/{rest:path}", _no_site, methods=["GET"])])
        )
        super().__init__(app)
        self.site = site

    # -- what a test reads ------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        """The Ask endpoint's absolute URL."""
        return self.url + self.path

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def feedback(self) -> list[Any]:
        """The feedback bodies the widget sent (JSON, as sent), in order."""
        with self._state.lock:
            return list(self._state.feedback)

    # -- what a test scripts ----------------------------------------------------------------

    def answer(
        self,
        text: str,
        sources: Sequence[Source | tuple[str, str] | dict[str, str]] = (),
        *,
        chunks: int = 3,
        delay: float = 0.0,
        request_id: str = "scripted-1",
    ) -> None:
        """Answer every question with `text` (in `chunks` deltas, `delay` apart) and `sources`."""
        if not isinstance(text, str) or not text:
            raise ScriptError("answer(text) needs a non-empty str")
        size = max(1, -(-len(text) // max(1, chunks)))
        steps: list[Step] = []
        for start in range(0, len(text), size):
            if delay and steps:
                steps.append(delay)
            steps.append(event_line({"type": "text", "delta": text[start : start + size]}))
        listed = [_source(item) for item in sources]
        if listed:
            cited = []
            for number, source in enumerate(listed, start=1):
                entry = {"id": f"source-{number}", "title": source.title, "path": source.path}
                if source.anchor:
                    entry["anchor"] = source.anchor
                cited.append(entry)
            steps.append(
                event_line(
                    {
                        "type": "tool",
                        "id": f"sources-{request_id}",
                        "name": "cite",
                        "args": {"sources": cited},
                    }
                )
            )
        steps.append(event_line({"type": "done"}))
        self._set(Script(steps=_steps(steps)))

    def lines(
        self, steps: Sequence[Step], *, status: int = 200, content_type: str | None = NDJSON
    ) -> None:
        """Send these raw lines (bytes or str) as written, sleeping at each number (seconds)."""
        if isinstance(steps, bytes | str):
            raise ScriptError("lines() takes a list of lines and delays, e.g. [b'...\\n', 0.1]")
        self._set(Script(steps=_steps(steps), status=status, content_type=content_type))

    def error(
        self, status: int, code: str = "ASK_UNAVAILABLE", message: str = "", retryable: bool = False
    ) -> None:
        """Refuse with `status` and `{"error": {code, message, retryable}}`, as the backend does."""
        if not 400 <= status <= 599:
            raise ScriptError(f"error(status) must be a 4xx or 5xx status, got {status}")
        body = {"error": {"code": code, "message": message or code, "retryable": retryable}}
        payload = json.dumps(body).encode()
        self._set(Script(steps=(payload,), status=status, content_type="application/json"))

    def stall(self, seconds: float, then: Sequence[Step] = ()) -> None:
        """Send nothing (not even headers) for `seconds`, then `then` (default: `done`)."""
        steps = _steps(then or [event_line({"type": "done"})])
        self._set(Script(steps=steps, header_delay=float(seconds)))

    def preset(self, name: str) -> None:
        """Answer with a hostile preset (`preset_names()`): its exact bytes, 200, NDJSON."""
        from .presets import presets

        found = presets()
        if name not in found:
            close = difflib.get_close_matches(str(name), found, n=3, cutoff=0.5)
            hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            raise ScriptError(
                f"no preset named {name!r}{hint}: agentskit_web.testing.preset_names() lists "
                f"the {len(found)} names, e.g. 'hostile stream'"
            )
        self._set(Script(steps=(found[name],)))

    def reset(self) -> None:
        """Forget recorded requests (the script stays)."""
        with self._state.lock:
            self._state.requests.clear()

    def _set(self, script: Script) -> None:
        with self._state.lock:
            self._state.script = script

    # -- the endpoint -----------------------------------------------------------------------

    async def _feedback(self, request: Request) -> Response:
        try:
            body: Any = json.loads(await request.body())
        except ValueError:
            return Response(status_code=400)
        with self._state.lock:
            self._state.feedback.append(body)
        return Response(status_code=204)

    async def _handle(self, request: Request) -> Response:
        body = await request.body()
        recorded = RecordedRequest(
            method=request.method,
            path=request.url.path,
            query=parse_qs(request.url.query),
            headers={name.lower(): value for name, value in request.headers.items()},
            body=body,
        )
        with self._state.lock:
            self._state.requests.append(recorded)
            script = self._state.script
        if script.header_delay:
            await asyncio.sleep(script.header_delay)

        async def stream() -> AsyncIterator[bytes]:
            for step in script.steps:
                if isinstance(step, float):
                    await asyncio.sleep(step)
                else:
                    yield step

        headers = {"Cache-Control": "no-store"}
        return StreamingResponse(
            stream(), status_code=script.status, media_type=script.content_type, headers=headers
        )


NO_SITE = (
    "ask_server serves no site, only its Ask endpoint: pass --agentskit-site DIR (your built "
    "site, e.g. MkDocs' site/) or override the agentskit_site fixture in your conftest.py"
)


async def _no_site(request: Request) -> Response:
    """A page asked of a server without a site: say how to give it one (not a bare 404)."""
    return PlainTextResponse(NO_SITE, status_code=404)


def _source(item: Source | tuple[str, str] | dict[str, str]) -> Source:
    if isinstance(item, Source):
        return item
    if isinstance(item, tuple) and len(item) == 2:
        return Source(title=item[0], path=item[1])
    if isinstance(item, dict) and "title" in item and "path" in item:
        return Source(title=item["title"], path=item["path"], anchor=item.get("anchor"))
    raise ScriptError(
        f"a source is Source(title, path), (title, path) or {{'title':…, 'path':…}}, got {item!r}"
    )
