"""A scripted Ask server for the widget's browser tests: dist/ and `/api/ask` on one origin.

`WidgetSite` serves the built site (the real demo page with the real widget)
and answers `POST /api/ask` with a script chosen by the question: the last
user message's content is looked up in `scripts` (falling back to
`default`). A script is a list of steps:
- `bytes`: written and flushed at once (TCP_NODELAY, so each reaches the page);
- `float`: a pause in seconds (ends early when the page disconnects);
- `threading.Event`: wait until the test sets it (to look at the page mid-stream);
- `Reply(status, body, content_type)` as the only step: a non-streaming reply.

`queue[question]` holds scripts used once each, in order, before `scripts`
(a retry that must answer differently). `files` serves extra GET paths
(`path -> (bytes, content type)`), e.g. a same-origin image.

Every request is recorded (`requests`: path and parsed JSON body) and every
stream's fate too (`disconnects` counts pages that hung up mid-stream).
"""

from __future__ import annotations

import functools
import http.server
import json
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentskit_web.server.static import LOOPBACK
from e2e_support import BackgroundServer, SiteHandler

ASK_PATH = "/api/ask"
FEEDBACK_PATH = "/api/feedback"
"""Where the widget sends thumbs (beside its endpoint): recorded, answered 204."""


@dataclass
class Reply:
    status: int
    body: bytes = b""
    content_type: str = "application/json"


Step = bytes | float | threading.Event | Reply


def line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, ensure_ascii=False) + "\n").encode()


def text(delta: str) -> bytes:
    return line({"type": "text", "delta": delta})


def cite(*sources: dict[str, Any], tool_id: str = "sources-1") -> bytes:
    return line({"type": "tool", "id": tool_id, "name": "cite", "args": {"sources": list(sources)}})


def error(message: str, code: str = "ASK_GENERATION_FAILED") -> bytes:
    return line({"type": "error", "message": message, "code": code})


DONE = line({"type": "done"})


def answer(*deltas: str, sources: Iterable[dict[str, Any]] = (), pause: float = 0.0) -> list[Step]:
    """Text deltas (with an optional pause after each), then a cite event if any, then done."""
    steps: list[Step] = []
    for delta in deltas:
        steps.append(text(delta))
        if pause:
            steps.append(pause)
    listed = list(sources)
    if listed:
        steps.append(cite(*listed))
    steps.append(DONE)
    return steps


@dataclass
class WidgetSite:
    root: Path
    scripts: dict[str, list[Step]] = field(default_factory=dict)
    queue: dict[str, list[list[Step]]] = field(default_factory=dict)
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    default: list[Step] = field(default_factory=lambda: answer("Scripted answer."))
    requests: list[tuple[str, Any]] = field(default_factory=list)
    feedback: list[Any] = field(default_factory=list)
    disconnects: int = 0
    completed: int = 0

    def __post_init__(self) -> None:
        handler = functools.partial(_Handler, directory=str(self.root))
        server = _Server((LOOPBACK, 0), handler)
        server.site = self
        self._background = BackgroundServer(server)
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return self._background.url

    def script_for(self, body: Any) -> list[Step]:
        question = ""
        if isinstance(body, dict):
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            question = users[-1].get("content", "") if users else ""
        with self.lock:
            pending = self.queue.get(question)
            if pending:
                return pending.pop(0)
        return self.scripts.get(question, self.default)

    def questions(self) -> list[str]:
        """The last user message of every request so far, in order."""
        asked = []
        for _path, body in self.requests:
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            asked.append(users[-1]["content"] if users else "")
        return asked

    def __enter__(self) -> WidgetSite:
        self._background.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._background.stop()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    site: WidgetSite


class _Handler(SiteHandler):
    server: _Server

    def do_GET(self) -> None:
        extra = self.server.site.files.get(urlsplit(self.path).path)
        if extra is None:
            super().do_GET()
            return
        data, content_type = extra
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if path == FEEDBACK_PATH:
            with self.server.site.lock:
                self.server.site.feedback.append(json.loads(raw))
            self._reply(Reply(204))
            return
        if path != ASK_PATH:
            self.send_error(404)
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        site = self.server.site
        with site.lock:
            site.requests.append((self.path, body))
        script = site.script_for(body)  # takes the lock itself
        if script and isinstance(script[0], Reply):
            self._reply(script[0])
            return
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.flush()
            for step in script:
                if not self._play(step):
                    with site.lock:
                        site.disconnects += 1
                    return
            with site.lock:
                site.completed += 1
        except (BrokenPipeError, ConnectionResetError):
            with site.lock:
                site.disconnects += 1

    def _reply(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def _play(self, step: Step) -> bool:
        """Play one step; False when the page hung up."""
        if isinstance(step, bytes):
            self.wfile.write(step)
            self.wfile.flush()
            return True
        if isinstance(step, threading.Event):
            while not step.wait(0.05):
                if self._client_gone():
                    return False
            return True
        if isinstance(step, float):
            deadline = time.monotonic() + step
            while (left := deadline - time.monotonic()) > 0:
                if self._client_gone(min(left, 0.05)):
                    return False
            return True
        return True

    def _client_gone(self, wait: float = 0.0) -> bool:
        """True when the client closed its side (readable with nothing to read)."""
        import select

        readable, _, _ = select.select([self.connection], [], [], wait)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
