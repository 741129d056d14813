"""The widget with `protocol="turn"` in Chromium, against the real turn backend of the demo.

`demo` serves a copy of dist/ whose page says `protocol="turn"` (and has
no FAQ artifact, so every question reaches the server) with `DemoServer`, the
app `make demo` runs: `POST /api/turn` and `GET /api/turn/<id>` beside
`/api/ask`. A scripted route (Playwright's `page.route`) plays the server for
the replay test: duplicate, stale, foreign-session and malformed lines must
change nothing on the page. `CuttingProxy` sits between the page and the
demo to drop its connections mid-answer, and to refuse new ones for a while
(the server is "down"), so the reconnecting state shows and then resolves.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Request, Route, expect

from agentskit_web.chat.turn.adapter import new_session_id
from agentskit_web.chat.widget_config import DEFAULT_STRINGS
from agentskit_web.server.demo_server import DemoServer
from agentskit_web.server.static import LOOPBACK
from e2e_support import Watch, ask, running_demo, settled, wait_for_state

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
RECONNECTING = DEFAULT_STRINGS["reconnecting"]
CONNECTION_RECORDER = """() => {
  window.__akConnection = [];
  const host = document.querySelector('agentskit-ask');
  new MutationObserver(() => window.__akConnection.push(host.hasAttribute('data-reconnecting')))
    .observe(host, {attributes: true, attributeFilter: ['data-reconnecting']});
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
    with running_demo(turn_dist, PACE_SECONDS) as server:
        yield server


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

    ask(page, QUESTION)
    early = page.wait_for_function(TEXT_WHILE_STREAMING, polling="raf", timeout=30_000)
    answer = settled(page, 1)
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

    ask(page, SECOND)
    settled(page, 2)
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
    ask(page, QUESTION)
    answer = settled(page, 1)
    answer.hover()
    answer.locator(".ak-regenerate").click()
    for _ in range(300):  # the click starts the submit from a task: wait until it is sent
        if len(_submits(requests)) == 2:
            break
        page.wait_for_timeout(100)
    expect(page.locator("agentskit-ask .ak-assistant")).to_have_count(1)
    answer = settled(page, 1)
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


EDITED = "How do I put the widget on my own docs site?"


def _wait_for_submits(page: Page, requests: list[Request], count: int) -> None:
    """The submit starts from a task after the click: wait until it was sent."""
    for _ in range(300):
        if len(_submits(requests)) >= count:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"expected {count} submits, saw {len(_submits(requests))}")


def test_edit_replaces_the_question_and_what_followed_with_lineage_and_survives_a_reload(
    page: Page, context: BrowserContext, demo: DemoServer
) -> None:
    requests = _turn_requests(context)
    page.goto(demo.url + "/")
    wait_for_state(page, "ready")
    ask(page, QUESTION)
    settled(page, 1)
    ask(page, SECOND)
    old_second = settled(page, 2).locator(".ak-body").text_content() or ""
    first = _submits(requests)[0]
    questions = page.locator("agentskit-ask .ak-user")

    # Edit opens an inline editor with the question's text; Escape cancels it (and only it).
    edit = questions.first.locator("button.ak-edit")
    expect(edit).to_have_accessible_name(DEFAULT_STRINGS["edit_label"])
    edit.focus()
    page.keyboard.press("Enter")  # a button: the keyboard opens it as a click does
    field = questions.first.locator("textarea.ak-edit-input")
    expect(field).to_be_focused()
    expect(field).to_have_value(QUESTION)
    expect(field).to_have_accessible_name(DEFAULT_STRINGS["edit_field"])
    expect(questions.first.locator(".ak-user-text")).to_be_hidden()
    for key in ("save", "cancel"):
        button = questions.first.locator(f"button[data-ui=edit-{key}]")
        expect(button).to_have_accessible_name(DEFAULT_STRINGS[f"{key}_label"])
    field.fill("not sent")
    field.press("Escape")
    expect(questions.first.locator(".ak-editor")).to_have_count(0)
    expect(questions.first.locator(".ak-user-text")).to_have_text(QUESTION)
    expect(edit).to_be_focused()
    expect(page.locator("agentskit-ask .ak-panel")).to_be_visible()  # Esc did not close the box
    assert len(_submits(requests)) == 2

    # Save: the question is replaced and everything after it gives way to the new turn.
    edit.click()
    field = questions.first.locator("textarea.ak-edit-input")
    field.fill(EDITED)
    questions.first.locator("button[data-ui=edit-save]").click()
    _wait_for_submits(page, requests, 3)
    expect(page.locator("agentskit-ask .ak-message")).to_have_count(2)
    answer = settled(page, 1)
    expect(answer).to_have_attribute("data-status", "complete")
    edit_submit = _submits(requests)[2]
    assert edit_submit["payload"]["input"] == EDITED
    assert edit_submit["payload"]["lineage"] == {
        "operation": "edit",
        "parentTurnId": first["turnId"],
        "sourceMessageId": "u-" + first["turnId"],
    }
    expect(questions).to_have_count(1)
    expect(questions.first.locator(".ak-user-text")).to_have_text(EDITED)
    log = page.locator("agentskit-ask .ak-log").text_content() or ""
    assert SECOND not in log and _plain(old_second)[:80] not in _plain(log)

    # The server holds the same: the edited question and its answer, nothing after.
    latest = _latest(page, first["sessionId"])
    assert latest["payload"]["lineage"] == edit_submit["payload"]["lineage"]
    assert latest["payload"]["status"] == "complete"
    held = latest["payload"]["messages"]
    assert [(m["role"], m["content"] if m["role"] == "user" else "") for m in held] == [
        ("user", EDITED),
        ("assistant", ""),
    ]
    shown = answer.locator(".ak-body").text_content() or ""
    assert _plain(_answer_text(latest))[:120] in _plain(shown)

    # A reload without the cached conversation restores the edited one from the server.
    page.evaluate(f"() => localStorage.removeItem({json.dumps(STORAGE_KEY)})")
    page.reload()
    wait_for_state(page, "ready")
    expect(page.locator("agentskit-ask .ak-message")).to_have_count(2)
    expect(page.locator("agentskit-ask .ak-user .ak-user-text")).to_have_text(EDITED)
    restored = page.locator("agentskit-ask .ak-assistant .ak-body").text_content() or ""
    assert _plain(restored) == _plain(shown)


class CuttingProxy:
    """A TCP proxy in front of the demo: `cut(down_seconds)` drops every open connection at
    once and then, for `down_seconds`, closes every new one unanswered (the server is down)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server((LOOPBACK, 0))
        self.port = self.listener.getsockname()[1]
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.cuts = 0
        self.down_until = 0.0
        self.refused = 0
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
            if time.monotonic() < self.down_until:
                self.refused += 1
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                client.close()  # a reset: the request fails at once, as with a server that is down
                continue
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

    @property
    def down(self) -> bool:
        return time.monotonic() < self.down_until

    def cut(self, down_seconds: float = 0.0) -> None:
        self.down_until = time.monotonic() + down_seconds
        with self.lock:
            victims = list(self.open)
        self.cuts += 1
        for sock in victims:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()
        self.cut()


@contextlib.contextmanager
def _through_proxy(
    browser: Browser, demo: DemoServer
) -> Iterator[tuple[CuttingProxy, Page, list[Request]]]:
    """A page on the demo reached through a `CuttingProxy` (with the conftest's guards)."""
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
        yield proxy, page, requests
    finally:
        proxy.close()
        page.close()
        context.close()
    assert not watch.off_origin
    # The cut and refused connections are the only errors Chromium may log: a network
    # error (net::ERR_...), never a response status ("the server responded with a status").
    unexpected = [e for e in watch.errors if not re.search(r"net::ERR_[A-Z_]+", e)]
    assert not unexpected, unexpected


def _same_final_state(
    page: Page, demo: DemoServer, answer: Any, requests: list[Request]
) -> dict[str, Any]:
    """The page shows what the server's latest snapshot holds: one complete answer."""
    expect(answer).to_have_attribute("data-status", "complete")
    expect(page.locator("agentskit-ask .ak-assistant")).to_have_count(1)
    (submit,) = _submits(requests)
    latest = json.loads(
        httpx.get(f"{demo.url}/api/turn/{submit['sessionId']}", timeout=10).text.splitlines()[-1]
    )
    assert latest["payload"]["status"] == "complete"
    shown = answer.locator(".ak-body").text_content() or ""
    assert _plain(_answer_text(latest))[:120] in _plain(shown)
    return latest


def _streaming_with_recorder(page: Page, proxy: CuttingProxy) -> None:
    """Open the page through the proxy, ask, and record connection notices once text streams."""
    page.goto(proxy.url + "/")
    wait_for_state(page, "ready")
    ask(page, QUESTION)
    page.wait_for_function(TEXT_WHILE_STREAMING, polling="raf", timeout=30_000)
    page.evaluate(CONNECTION_RECORDER)


def test_a_connection_cut_mid_turn_resumes_to_the_same_final_state(
    browser: Browser, demo: DemoServer
) -> None:
    with _through_proxy(browser, demo) as (proxy, page, requests):
        _streaming_with_recorder(page, proxy)
        proxy.cut()  # every connection drops mid-turn, the answer's stream included
        answer = settled(page, 1)
        _same_final_state(page, demo, answer, requests)
        # Reconnecting was shown, then went away when the resume succeeded.
        assert page.evaluate("() => window.__akConnection") == [True, False]
        expect(page.locator("agentskit-ask .ak-connection")).to_be_hidden()
        assert any(r.method == "GET" for r in requests), "the page resumed with a GET"


def test_a_server_down_for_a_while_shows_reconnecting_until_it_is_back(
    browser: Browser, demo: DemoServer
) -> None:
    # Down until the test says so: the page's resume attempts are counted (the proxy refuses
    # each), so a slow run waits longer instead of skipping the check.
    with _through_proxy(browser, demo) as (proxy, page, requests):
        _streaming_with_recorder(page, proxy)
        proxy.cut(3600.0)
        region = page.locator("agentskit-ask .ak-connection")
        expect(region).to_be_visible(timeout=5_000)
        assert proxy.down, "the state shows while the server is still unreachable"
        expect(region).to_have_text(RECONNECTING)
        expect(region).to_have_attribute("role", "status")
        expect(region).to_have_attribute("aria-live", "polite")
        answer = page.locator("agentskit-ask .ak-assistant").first
        expect(answer).to_have_attribute("data-status", "streaming")
        # It stays through several failed attempts (no flicker: the recorder below sees one
        # show and one hide), then goes away once the server is back.
        deadline = time.monotonic() + 30
        while proxy.refused < 3 and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        assert proxy.refused >= 3, "three resume attempts were refused"
        expect(region).to_be_visible()
        expect(region).to_have_text(RECONNECTING)
        proxy.down_until = 0.0  # the server is back
        expect(region).to_be_hidden(timeout=30_000)
        assert not proxy.down and proxy.refused >= 1, "resumed only once the server was back"
        answer = settled(page, 1)
        _same_final_state(page, demo, answer, requests)
        assert page.evaluate("() => window.__akConnection") == [True, False]
        gets = [r for r in requests if r.method == "GET"]
        assert len(gets) >= 2, "resume attempts failed while the server was down, then one worked"
        expect(answer.locator("[role=alert]")).to_have_count(0)


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
    ask(page, QUESTION)
    answer = settled(page, 1)
    expect(answer).to_have_attribute("data-status", "complete")
    shown = answer.locator(".ak-body").text_content() or ""
    assert "Scripted answer." in shown and "Done." in shown
    for inert in ("REPLAYED", "STALE", "FOREIGN", "not json"):
        assert inert not in shown


def test_a_server_that_stays_down_ends_in_an_error_with_retry_that_works_once_it_is_back(
    browser: Browser, demo: DemoServer
) -> None:
    with _through_proxy(browser, demo) as (proxy, page, requests):
        _streaming_with_recorder(page, proxy)
        proxy.cut(down_seconds=120)  # longer than every resume attempt together (15.7 s)
        region = page.locator("agentskit-ask .ak-connection")
        expect(region).to_be_visible(timeout=5_000)
        answer = settled(page, 1)
        expect(answer).to_have_attribute("data-status", "error")
        expect(region).to_be_hidden()
        assert page.evaluate("() => window.__akConnection") == [True, False]
        alert = answer.locator("[role=alert]")
        expect(alert).to_contain_text("could not be resumed")
        retry = alert.locator("button[data-ui=retry]")
        expect(retry).to_be_enabled()
        gets = [r for r in requests if r.method == "GET"]
        assert len(gets) == 6, "RESUME_ATTEMPTS resumes, then it gave up"

        proxy.down_until = 0.0  # the server is back
        retry.click()
        _wait_for_submits(page, requests, 2)
        answer = settled(page, 1)
        expect(answer).to_have_attribute("data-status", "complete")
        first, again = _submits(requests)
        assert again["payload"]["lineage"]["parentTurnId"] == first["turnId"]
        latest = _latest(page, first["sessionId"])
        assert latest["payload"]["status"] == "complete"
        assert len(latest["payload"]["messages"]) == 2
        shown = answer.locator(".ak-body").text_content() or ""
        assert _plain(_answer_text(latest))[:120] in _plain(shown)
