"""Helpers shared by the browser tests (kept out of conftest so tests can import them)."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Page, expect

from agentskit_web.bench.harness import harness_html, runtime_path
from agentskit_web.server.demo_server import DemoConfig, DemoServer
from agentskit_web.server.static import LOOPBACK, media_type, static_headers

__all__ = ["harness_html", "runtime_path"]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
BOOT_TIMEOUT_MS = 180_000
IN_PAGE_SCHEMES = {"data", "blob", "about"}


@dataclass
class Watch:
    """What the pages of one test did that must not happen."""

    origin: str
    requests: list[str] = field(default_factory=list)
    off_origin: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    sockets: list[str] = field(default_factory=list)
    service_workers: list[str] = field(default_factory=list)

    def same_origin(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme in IN_PAGE_SCHEMES:
            return True
        return f"{parts.scheme}://{parts.netloc}" == self.origin

    def on_request(self, request: Any) -> None:
        self.requests.append(request.url)
        if not self.same_origin(request.url):
            self.off_origin.append(request.url)

    def on_websocket(self, socket: Any) -> None:
        """Any WebSocket counts: page.route and the request event never see one."""
        self.sockets.append(socket.url)

    def on_service_worker(self, worker: Any) -> None:
        """A service worker could fetch unseen by the page's own routes: none may start."""
        self.service_workers.append(worker.url)

    def on_console(self, message: Any) -> None:
        if message.type == "error":
            where = (message.location or {}).get("url") or ""
            self.errors.append(f"console error: {message.text}" + (f" at {where}" if where else ""))

    def allow_errors_at(self, urls: set[str]) -> None:
        """Drop the console errors logged at exactly these URLs (a request a test made fail on
        purpose, say one sent while the network is gone), whatever the browser's wording; any
        other error still fails the test."""
        self.errors[:] = [e for e in self.errors if not any(e.endswith(f" at {u}") for u in urls)]

    def on_page_error(self, error: Any) -> None:
        self.errors.append(f"page error: {error}")


def failed_at(path_pattern: str) -> str:
    """A `console_error_expected` pattern for the error a page logs when a request to a path
    matching `path_pattern` fails (a refused POST, a missing file), by the request's URL that
    `Watch.on_console` records: how Chromium words the error differs between builds."""
    return rf" at https?://[^/\s]+{path_pattern}(\?\S*)?$"


def assert_unreachable(url: str) -> None:
    """The network is really gone for the page: nothing answers at `url` (its server stopped).
    Offline tests assert this and what the reader then gets, never the browser's own report of
    its network state, which differs between Chromium builds."""
    try:
        urllib.request.urlopen(url, timeout=5).close()
    except OSError:
        return
    raise AssertionError(f"{url} still answers: the network is not gone")


@contextlib.contextmanager
def running_demo(dist: Path, pace_seconds: float | None = None) -> Iterator[DemoServer]:
    """The app `make demo` runs (dist/, /api/ask, /api/turn; docs/ indexed) on a free port,
    stopped afterwards unless the test already stopped it. `pace_seconds` between streamed
    pieces (default: the demo's own pace)."""
    paced = {} if pace_seconds is None else {"pace_seconds": pace_seconds}
    config = DemoConfig(dist=dist, site=ROOT / "docs" / "site.json", docs=ROOT / "docs", **paced)
    server = DemoServer(config).start()
    try:
        yield server
    finally:
        if server.running:
            server.stop()


def widget_state(page: Page) -> str | None:
    return page.get_attribute("agentskit-ask", "data-state")


def show_intent(page: Page) -> None:
    """What a reader reaching for the box does: the loader starts the runtime (boot=intent).

    Inline: the pointer over the box. Launcher: a click on its button, which opens the
    dialog (the question box is in it), unless a dialog is already open.
    """
    page.wait_for_selector("agentskit-ask[data-state]", state="attached")
    for host in page.locator("agentskit-ask").all():
        launcher = host.locator(".ak-launcher")
        if launcher.count() and not page.locator("agentskit-ask dialog[open]").count():
            launcher.click()
        else:
            host.dispatch_event("pointerenter")


def wait_for_state(page: Page, state: str) -> None:
    """Wait on the page's own signal (data-state), never on a sleep.

    Waiting for `ready` first shows intent, as a reader reaching for the box would.
    """
    if state in ("ready", "booting"):
        show_intent(page)
    page.wait_for_selector(
        f"agentskit-ask[data-state={state}], agentskit-ask[data-state=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    found = widget_state(page)
    if found != state:
        message = page.text_content("agentskit-ask .ak-error-message")
        raise AssertionError(f"widget state is {found!r}, expected {state!r}: {message}")


def save_artifact(name: str, data: Any) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- scripted sites


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """The built site's files with the product's header policy, for scripted test servers.

    Scripted Ask endpoints need byte-level control of timing (stalls, one byte at
    a time), which a plain threaded handler gives; the static part still sends
    exactly what `agentskit_web.server.static` sends.
    """

    protocol_version = "HTTP/1.1"

    def end_headers(self) -> None:
        for name, value in static_headers(self.path.split("?", 1)[0]).items():
            if name != "Content-Type":
                self.send_header(name, value)
        super().end_headers()

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return media_type(str(path)) or super().guess_type(path)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class BackgroundServer:
    """An http.server running in a daemon thread: `start`/`stop` or `with`, and its `url`."""

    def __init__(self, server: http.server.HTTPServer, name: str = "site") -> None:
        self._server = server
        self._name = name
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> BackgroundServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=self._name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def serve_demo_inline(page_or_context: Any, demo_url: str, dist: Path) -> None:
    """Serve the demo's home page (index.html: the launcher layout) with its box inline:
    for tests of what the box itself shows before anything opens it."""
    html = (dist / "index.html").read_text(encoding="utf-8")
    body = html.replace('layout="launcher"', 'layout="inline"', 1)
    assert body != html, "the demo page no longer writes layout=launcher"
    page_or_context.route(
        demo_url + "/",
        lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=body),
    )


def ask(page: Page, question: str) -> None:
    """Type a question into the widget and send it, as a reader does."""
    field = page.locator("agentskit-ask .ak-input")
    field.fill(question)
    field.press("Enter")


def settled(page: Page, count: int) -> Any:
    """The `count`-th answer once it has stopped streaming (complete or error)."""
    answer = page.locator("agentskit-ask .ak-assistant").nth(count - 1)
    expect(answer).to_have_attribute("data-status", re.compile("complete|error"), timeout=30_000)
    return answer
