"""A returning reader sees their conversation at once, and pays nothing until they reach for it.

A saved conversation is shown from its glance (chat/memory/glance.py): plain text the
widget keeps beside the conversation, which the loader validates and paints with
textContent, without Python. The page view costs what a first visit costs: no runtime
request before intent, whatever is saved (the test waits until the browser has run idle
callbacks well past any idle boot). Reaching for the box boots Python, which replaces the
glance with the full conversation. A glance that is corrupt, too long, of another version
or carrying markup is ignored or shown as inert text.

The demo (dist/ and the reference backend on one origin) is the site.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from agentskit_web.chat.memory.glance import (
    GLANCE_MAX_CHARS,
    GLANCE_QUESTION_MAX_CHARS,
    glance_key,
)
from agentskit_web.server.demo_server import DemoServer
from agentskit_web.testing import AskWidget
from e2e_support import BOOT_TIMEOUT_MS, Watch, running_demo, serve_demo_inline

QUESTION = "How do I configure rate limiting?"
SAVED = """() => {
  const element = document.querySelector('agentskit-ask');
  const key = element.getAttribute('storage-key') || 'agentskit:ask:ask';
  return localStorage.getItem(key);
}"""
"""The element's memory key (its storage-key, else widget_config.py's default) as stored."""
IDLE_TIMEOUT_MS = 5_000
"""The loader's bound on waiting for idle (web/agentskit-ask.js), for boot="idle"."""
DEMO_KEY = "agentskit-web-docs:ask"
"""The demo element's storage-key (index.html)."""
PAST_IDLE = f"""() => new Promise((done) => {{
  const until = performance.now() + {IDLE_TIMEOUT_MS + 1_000};
  const tick = () => performance.now() > until ? done(true) : requestIdleCallback(tick);
  requestIdleCallback(tick);
}})"""
"""Resolves after idle callbacks have run past the loader's idle timeout."""


@pytest.fixture(scope="module")
def demo(dist: Path) -> Iterator[DemoServer]:
    with running_demo(dist, pace_seconds=0.0) as server:
        yield server


@pytest.fixture
def watch(demo: DemoServer) -> Watch:
    return Watch(origin=demo.url)


@pytest.fixture(autouse=True)
def _inline_box(context: BrowserContext, demo: DemoServer, dist: Path) -> None:
    """These tests read the glance in the box itself, so the demo's home page is served with
    its box inline (the launcher's glance, in its dialog, is test_first_minute.py's)."""
    serve_demo_inline(context, demo.url, dist)


def _watched(context: BrowserContext, watch: Watch) -> Page:
    page = context.new_page()
    page.on("console", watch.on_console)
    page.on("pageerror", watch.on_page_error)
    return page


def _runtime(watch: Watch) -> list[str]:
    return [url for url in watch.requests if "/runtime." in url]


def test_a_saved_conversation_shows_at_once_in_a_new_tab_with_no_runtime_request(
    page: Page, context: BrowserContext, watch: Watch, demo: DemoServer
) -> None:
    page.goto(demo.url + "/")
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    shown = page.locator("agentskit-ask .ak-message").count()
    assert shown >= 2
    assert page.evaluate(SAVED) is not None

    second = _watched(context, watch)
    watch.requests.clear()
    second.goto(demo.url + "/")  # no click, no focus, no key: the reader only opens the tab
    glance = second.locator("agentskit-ask .ak-glance")
    expect(glance).to_be_visible()
    expect(glance.locator(".ak-user-text")).to_have_text(QUESTION)
    expect(glance.locator(".ak-assistant")).not_to_be_empty()
    assert second.evaluate(PAST_IDLE) is True
    assert _runtime(watch) == [], "a returning reader's page view loaded the runtime"
    host = second.locator("agentskit-ask")
    expect(host).to_have_attribute("data-state", "idle")

    second.locator("agentskit-ask .ak-input").focus()  # intent: Python takes over
    second.wait_for_selector(
        "agentskit-ask[data-state=ready]", state="attached", timeout=BOOT_TIMEOUT_MS
    )
    messages = second.locator("agentskit-ask .ak-message")
    messages.nth(shown - 1).wait_for(state="attached")
    assert messages.count() == shown
    assert QUESTION in (messages.first.text_content() or "")
    assert second.locator("agentskit-ask .ak-glance").count() == 0


def _stored(page: Page, demo: DemoServer, value: str) -> None:
    page.goto(demo.url + "/")
    page.evaluate(
        "([key, value]) => localStorage.setItem(key, value)", [glance_key(DEMO_KEY), value]
    )
    page.reload()
    page.wait_for_selector("agentskit-ask[data-state=idle]", state="attached")


def _glance(q: str, a: str = "An answer.", v: int = 1) -> str:
    return json.dumps({"v": v, "turns": [{"q": q, "a": a}]})


def test_a_glance_with_markup_is_shown_as_inert_text(page: Page, demo: DemoServer) -> None:
    hostile = '<img src=/nothing.png onerror="window.pwned=1"><b>bold</b>'
    _stored(page, demo, _glance(hostile, hostile))
    expect(page.locator("agentskit-ask .ak-glance .ak-user-text")).to_have_text(hostile)
    assert page.locator("agentskit-ask .ak-glance img, agentskit-ask .ak-glance b").count() == 0
    assert page.evaluate("window.pwned") is None


@pytest.mark.parametrize(
    "value",
    [
        "{not json",
        _glance("Q", v=2),
        json.dumps({"v": 1, "turns": []}),
        json.dumps({"v": 1, "turns": [{"q": "Q", "a": 3}]}),
        json.dumps({"v": 1, "turns": [{"q": " ", "a": ""}]}),
        json.dumps({"v": 1, "turns": [{"q": "Q", "a": ""}] * 4}),
        _glance("q" * (GLANCE_QUESTION_MAX_CHARS + 1)),
        _glance("Q", "a" * 500) + " " * (GLANCE_MAX_CHARS + 1 - len(_glance("Q", "a" * 500))),
    ],
    ids=[
        "not-json",
        "version",
        "no-turns",
        "answer-type",
        "blank",
        "too-many",
        "q-past",
        "len-past",
    ],
)
def test_a_corrupt_or_oversized_glance_is_ignored(page: Page, demo: DemoServer, value: str) -> None:
    _stored(page, demo, value)
    host = page.locator("agentskit-ask")
    expect(host.locator(".ak-input")).to_be_visible()
    assert host.get_attribute("data-glance") is None
    assert page.locator("agentskit-ask .ak-glance").count() == 0


def test_a_glance_at_its_limits_is_shown(page: Page, demo: DemoServer) -> None:
    question = "q" * GLANCE_QUESTION_MAX_CHARS
    value = _glance(question, "a" * 500)
    _stored(page, demo, value + " " * (GLANCE_MAX_CHARS - len(value)))
    expect(page.locator("agentskit-ask .ak-glance .ak-user-text")).to_have_text(question)


def test_with_nothing_saved_nothing_of_the_runtime_loads_past_idle(
    page: Page, watch: Watch, demo: DemoServer
) -> None:
    page.goto(demo.url + "/")
    page.wait_for_selector("agentskit-ask[data-state]", state="attached")
    assert page.evaluate(SAVED) is None
    assert page.evaluate(PAST_IDLE) is True
    assert _runtime(watch) == [], "a page with nothing saved loaded the runtime before intent"
    assert page.evaluate("() => document.querySelector('agentskit-ask').dataset.state") == "idle"
