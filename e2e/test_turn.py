"""The widget with `protocol="turn"` in Chromium, against the real turn backend of the demo.

`turn_demo` serves a copy of dist/ whose page says `protocol="turn"` (and has
no FAQ artifact, so every question reaches the server) with `DemoServer`, the
app `make demo` runs: `POST /api/turn` and `GET /api/turn/<id>` beside
`/api/ask`. A scripted route (Playwright's `page.route`) plays the server for
the replay test: duplicate, stale, foreign-session and malformed lines must
change nothing on the page.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Request, Route, expect

from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.server.demo_server import DemoConfig, DemoServer
from agentskit_web.server.static import LOOPBACK
from e2e_support import ROOT, Watch, wait_for_state

PACE_SECONDS = 0.02
QUESTION = "How do I configure rate limiting?"
SECOND = "Does the widget load anything from a CDN?"
STORAGE_KEY = "agentskit-web-docs:ask"
SHADOW = "document.querySelector('agentskit-ask').shadowRoot"
TEXT_WHILE_STREAMING = f"""() => {{
  const root = {SHADOW};
  const body = root && root.querySelector('.ak-assistant[data-status=streaming] .ak-body');
  if (!body || body.querySelector('.ak-thinking')) return null;
  const text = body.textContent.trim();
  return text.length > 0 ? text.length : null;
}}"""
PREFIX = "\x1eagentskit.chat.content/1\n"
NOTICE_RECORDER = """() => {
  window.__akNotices = [];
  const host = document.querySelector('agentskit-ask');
  new MutationObserver(() => window.__akNotices.push(host.getAttribute('data-notice')))
    .observe(host, {attributes: true, attributeFilter: ['data-notice']});
}"""


@pytest.fixture(scope="module")
def turn_dist(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dist/ with the page's widget switched to the turn protocol."""
    target = tmp_path_factory.mktemp("turn-dist") / "dist"
    shutil.copytree(dist, target)
    page = target / "index.html"
    html = page.read_text(encoding="utf-8")
    switched = html.replace(
        'endpoint="/api/ask" corpus="docs" persona="guide"', 'protocol="turn"'
    ).replace(' knowledge="./knowledge.json"', "")
    assert switched != html
    page.write_text(switched, encoding="utf-8")
    return target


@pytest.fixture
def demo(turn_dist: Path) -> Iterator[DemoServer]:
    config = DemoConfig(
        dist=turn_dist,
        site=ROOT / "docs" / "site.json",
        docs=ROOT / "docs",
        pace_seconds=PACE_SECONDS,
    )
    server = DemoServer(config).start()
    try:
        yield server
    finally:
        if server.running:
            server.stop()


@pytest.fixture
def watch(demo: DemoServer) -> Watch:
    return Watch(origin=demo.url)


@pytest.fixture
def page(context: BrowserContext, watch: Watch) -> Page:
    opened = context.new_page()
    opened.on("console", watch.on_console)
    opened.on("pageerror", watch.on_page_error)
    return opened


def _turn_requests(context: BrowserContext) -> list[Request]:
    seen: list[Request] = []
    context.on(
        "request",
        lambda r: seen.append(r) if urlsplit(r.url).path.startswith("/api/turn") else None,
    )
    return seen


def _ask(page: Page, question: str) -> None:
    field = page.locator("agentskit-ask .ak-input")
    field.fill(question)
    field.press("Enter")


def _settled(page: Page, count: int) -> Any:
    answer = page.locator("agentskit-ask .ak-assistant").nth(count - 1)
    expect(answer).to_have_attribute("data-status", re.compile("complete|error"), timeout=30_000)
    return answer


def _submits(requests: list[Request]) -> list[dict[str, Any]]:
    return [json.loads(r.post_data or "{}") for r in requests if r.method == "POST"]


def _latest(page: Page, session: str) -> dict[str, Any]:
    """The server's latest snapshot of `session`, fetched by the page itself."""
    text = page.evaluate(
        "async (id) => (await fetch('/api/turn/' + id, {cache: 'no-store'})).text()", session
    )
    return json.loads(text.strip().splitlines()[-1])


def _answer_text(snapshot: dict[str, Any]) -> str:
    content = snapshot["payload"]["messages"][-1]["content"]
    records = [json.loads(line) for line in content.removeprefix(PREFIX).splitlines() if line]
    return "".join(r["text"] for r in records if r["kind"] == "text")


def _plain(text: str) -> str:
    """Letters and digits only: the page renders the Markdown the snapshot carries."""
    return re.sub(r"[^A-Za-z0-9]", "", text)


def test_a_turn_streams_completes_and_sequences_rise(
    page: Page, context: BrowserContext, demo: DemoServer
) -> None:
    requests = _turn_requests(context)
    page.goto(demo.url + "/")
    wait_for_state(page, "ready")

    _ask(page, QUESTION)
    early = page.wait_for_function(TEXT_WHILE_STREAMING, polling="raf", timeout=30_000)
    answer = _settled(page, 1)
    expect(answer).to_have_attribute("data-status", "complete")
    final_text = answer.locator(".ak-body").text_content() or ""
    assert 0 < int(early.json_value()) < len(final_text.strip()), "the answer arrived in one piece"
    expect(answer.locator(".ak-source-list .ak-source-link").first).to_be_visible()

    (first,) = _submits(requests)
    assert first["event"] == "client.turn.submit" and first["payload"] == {"input": QUESTION}
    session = first["sessionId"]
    assert len(session) >= 22, "the widget's ids carry 128 random bits"
    after_first = _latest(page, session)
    assert after_first["payload"]["status"] == "complete"

    _ask(page, SECOND)
    _settled(page, 2)
    second = _submits(requests)[-1]
    assert second["sessionId"] == session and second["turnId"] != first["turnId"]
    after_second = _latest(page, session)
    assert after_second["sequence"] > after_first["sequence"]
    assert len(after_second["payload"]["messages"]) == 4
    # What the page shows is what the server holds.
    shown = page.locator("agentskit-ask .ak-assistant .ak-body").nth(1).text_content() or ""
    assert _plain(_answer_text(after_second))[:120] in _plain(shown)

    # A guessed id gets nothing (asked from outside the page: a 404 logs a console error).
    guessed = httpx.get(f"{demo.url}/api/turn/{new_session_id()}", timeout=10)
    assert guessed.status_code == 404
    assert guessed.json()["error"]["code"] == "SESSION_NOT_FOUND"


def test_regenerate_sends_lineage_and_reload_restores_from_the_server(
    page: Page, context: BrowserContext, demo: DemoServer
) -> None:
    requests = _turn_requests(context)
    page.goto(demo.url + "/")
    wait_for_state(page, "ready")
    _ask(page, QUESTION)
    answer = _settled(page, 1)
    answer.hover()
    answer.locator(".ak-regenerate").click()
    for _ in range(300):  # the click starts the submit from a task: wait until it is sent
        if len(_submits(requests)) == 2:
            break
        page.wait_for_timeout(100)
    expect(page.locator("agentskit-ask .ak-assistant")).to_have_count(1)
    answer = _settled(page, 1)
    expect(answer).to_have_attribute("data-status", "complete")
    first, regenerate = _submits(requests)
    lineage = regenerate["payload"]["lineage"]
    assert lineage == {
        "operation": "regenerate",
        "parentTurnId": first["turnId"],
        "sourceMessageId": "a-" + first["turnId"],
    }
    latest = _latest(page, first["sessionId"])
    assert latest["payload"]["lineage"] == lineage
    shown = answer.locator(".ak-body").text_content() or ""

    # Reload without the cached conversation: the page restores it from the server.
    page.evaluate(f"() => localStorage.removeItem({json.dumps(STORAGE_KEY)})")
    page.reload()
    wait_for_state(page, "ready")
    expect(page.locator("agentskit-ask .ak-message")).to_have_count(2)
    restored = page.locator("agentskit-ask .ak-assistant .ak-body").text_content() or ""
    assert _plain(restored) == _plain(shown)
    gets = [r for r in requests if r.method == "GET"]
    assert gets and gets[-1].url.endswith("/api/turn/" + first["sessionId"])


class CuttingProxy:
    """A TCP proxy in front of the demo whose `cut()` drops every open connection at once."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server((LOOPBACK, 0))
        self.port = self.listener.getsockname()[1]
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection((LOOPBACK, self.upstream_port))
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.open.update((client, upstream))
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            with self.lock:
                self.open.discard(source)
                self.open.discard(target)

    def cut(self) -> None:
        with self.lock:
            victims = list(self.open)
        self.cuts += 1
        for sock in victims:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()
        self.cut()


def test_a_connection_cut_mid_turn_resumes_to_the_same_final_state(
    browser: Browser, demo: DemoServer
) -> None:
    proxy = CuttingProxy(demo.port)
    watch = Watch(origin=proxy.url)
    context = browser.new_context()
    context.on("request", watch.on_request)
    context.route(lambda url: not watch.same_origin(url), lambda route: route.abort())
    page = context.new_page()
    page.on("console", watch.on_console)
    page.on("pageerror", watch.on_page_error)
    requests = _turn_requests(context)
    try:
        page.goto(proxy.url + "/")
        wait_for_state(page, "ready")
        _ask(page, QUESTION)
        page.wait_for_function(TEXT_WHILE_STREAMING, polling="raf", timeout=30_000)
        page.evaluate(NOTICE_RECORDER)
        proxy.cut()  # every connection drops mid-turn, the answer's stream included
        answer = _settled(page, 1)
    finally:
        proxy.close()
    assert not watch.off_origin
    # The cut connections are the only errors Chromium may log.
    unexpected = [e for e in watch.errors if not re.search(r"net::ERR_|Failed to load resource", e)]
    assert not unexpected, unexpected
    expect(answer).to_have_attribute("data-status", "complete")
    assert page.evaluate("() => window.__akNotices")[:1] == ["Connection lost; reconnecting…"]
    (submit,) = _submits(requests)
    assert any(r.method == "GET" for r in requests), "the page resumed with a GET"
    latest = json.loads(
        httpx.get(f"{demo.url}/api/turn/{submit['sessionId']}", timeout=10).text.splitlines()[-1]
    )
    assert latest["payload"]["status"] == "complete"
    shown = answer.locator(".ak-body").text_content() or ""
    assert _plain(_answer_text(latest))[:120] in _plain(shown)
    expect(page.locator("agentskit-ask .ak-assistant")).to_have_count(1)
    context.close()


def _snapshot(submit: dict[str, Any], sequence: int, text: str, status: str, **over: Any) -> str:
    content = PREFIX + (json.dumps({"kind": "text", "text": text}) + "\n" if text else "")
    event = {
        "protocol": "agentskit.chat.turn",
        "version": 1,
        "eventId": f"e{sequence}-{len(text)}",
        "sessionId": submit["sessionId"],
        "turnId": submit["turnId"],
        "sequence": sequence,
        "emittedAt": "2026-01-01T00:00:00Z",
        "event": "server.turn.snapshot",
        "payload": {
            "messages": [
                {
                    "id": "u-1",
                    "role": "user",
                    "content": submit["payload"]["input"],
                    "status": "complete",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                },
                {
                    "id": "a-1",
                    "role": "assistant",
                    "content": content,
                    "status": "complete" if status == "complete" else "streaming",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                    "metadata": {"turnId": submit["turnId"]},
                },
            ],
            "status": status,
            "usage": {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0},
        },
    }
    event.update(over)
    return json.dumps(event)


def test_replayed_stale_and_foreign_snapshots_are_inert_in_the_page(
    page: Page, demo: DemoServer
) -> None:
    def scripted(route: Route) -> None:
        submit = json.loads(route.request.post_data or "{}")
        prefix = "Scripted answer. "
        lines = [
            _snapshot(submit, 5, "", "streaming"),
            _snapshot(submit, 6, prefix, "streaming"),
            _snapshot(submit, 6, prefix + "REPLAYED", "streaming"),
            _snapshot(submit, 2, "STALE", "streaming"),
            _snapshot(submit, 9, "FOREIGN", "complete", sessionId="F" * 22),
            '{"protocol":"agentskit.chat.turn","version":1,"event":"server.turn.snapshot"}',
            "<html>not json</html>",
        ]
        done = json.loads(_snapshot(submit, 7, prefix, "complete"))
        done["payload"]["messages"][-1]["content"] += (
            json.dumps({"kind": "text", "text": "Done."}) + "\n"
        )
        lines.append(json.dumps(done))
        route.fulfill(
            status=200,
            headers={"content-type": "application/x-ndjson; charset=utf-8"},
            body="\n".join(lines) + "\n",
        )

    page.route("**/api/turn", scripted)
    page.goto(demo.url + "/")
    wait_for_state(page, "ready")
    _ask(page, QUESTION)
    answer = _settled(page, 1)
    expect(answer).to_have_attribute("data-status", "complete")
    shown = answer.locator(".ak-body").text_content() or ""
    assert "Scripted answer." in shown and "Done." in shown
    for inert in ("REPLAYED", "STALE", "FOREIGN", "not json"):
        assert inert not in shown
