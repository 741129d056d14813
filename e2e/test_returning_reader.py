"""A returning reader sees their conversation without acting; a new reader still costs nothing.

A saved conversation is itself a sign of intent: the loader boots the runtime when
the page is idle (requestIdleCallback) if the widget's memory key is in
localStorage, so a second tab shows the messages with no click, focus or key.
With nothing saved, the page stays at its page-view cost until intent: the test
waits until the browser has run idle callbacks past the loader's own
IDLE_TIMEOUT_MS, then checks no runtime file was requested.

The demo (dist/ and the reference backend on one origin) is the site.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page

from agentskit_web.server.demo_server import DemoServer
from agentskit_web.testing import AskWidget
from e2e_support import BOOT_TIMEOUT_MS, Watch, running_demo

QUESTION = "How do I configure rate limiting?"
SAVED = """() => {
  const element = document.querySelector('agentskit-ask');
  const key = element.getAttribute('storage-key') || 'agentskit:ask:ask';
  return localStorage.getItem(key);
}"""
"""The element's memory key (its storage-key, else widget_config.py's default) as stored."""
IDLE_TIMEOUT_MS = 5_000
"""The loader's own bound on waiting for idle (web/agentskit-ask.js)."""
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


def _watched(context: BrowserContext, watch: Watch) -> Page:
    page = context.new_page()
    page.on("console", watch.on_console)
    page.on("pageerror", watch.on_page_error)
    return page


def _runtime(watch: Watch) -> list[str]:
    return [url for url in watch.requests if "/runtime." in url]


def test_a_saved_conversation_shows_in_a_new_tab_without_acting(
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
    second.goto(demo.url + "/")  # no click, no focus, no key: the reader only opens the tab
    second.wait_for_selector(
        "agentskit-ask[data-state=ready]", state="attached", timeout=BOOT_TIMEOUT_MS
    )
    messages = second.locator("agentskit-ask .ak-message")
    messages.nth(shown - 1).wait_for(state="attached")
    assert messages.count() == shown
    assert QUESTION in (messages.first.text_content() or "")


def test_with_nothing_saved_nothing_of_the_runtime_loads_past_idle(
    page: Page, watch: Watch, demo: DemoServer
) -> None:
    page.goto(demo.url + "/")
    page.wait_for_selector("agentskit-ask[data-state]", state="attached")
    assert page.evaluate(SAVED) is None
    assert page.evaluate(PAST_IDLE) is True
    assert _runtime(watch) == [], "a page with nothing saved loaded the runtime before intent"
    assert page.evaluate("() => document.querySelector('agentskit-ask').dataset.state") == "idle"
