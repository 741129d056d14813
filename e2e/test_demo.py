"""The offline demo in Chromium: the real docs site, the real widget and the real Ask backend.

`demo` starts `DemoServer` (the app `agentskit-web demo` serves: dist/ and
`/api/ask` on one origin, docs/ indexed without docs/design/) on a free port.
The journey: ask a question about the docs and watch it stream, follow a
source to its page and heading, reload, then stop the backend and check that
an FAQ question is still answered in the page with no request while any
other question says plainly that the assistant is offline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Request, expect

from agentskit_web.build.docs_pages import published_sources
from agentskit_web.server.demo_server import DemoServer
from e2e_support import Watch, ask, running_demo, settled, wait_for_state, widget_state

STREAM_PACE_SECONDS = 0.02  # slow enough to see the text grow, fast enough for a test
DOCS_QUESTION = "How do I configure rate limiting?"
FAQ_QUESTION = "Does it use a CDN?"
OFFLINE_QUESTION = "How do I rotate the bearer tokens?"
EDITED_QUESTION = "How do I style the widget with my colours?"
LOCAL_NOTE = "Answered from this site's FAQ."
SHADOW = "document.querySelector('agentskit-ask').shadowRoot"
TEXT_WHILE_STREAMING = f"""() => {{
  const root = {SHADOW};
  const body = root && root.querySelector('.ak-assistant[data-status=streaming] .ak-body');
  if (!body || body.querySelector('.ak-thinking')) return null;
  const text = body.textContent.trim();
  return text.length > 0 ? text.length : null;
}}"""


@pytest.fixture
def demo(dist: Path) -> Iterator[DemoServer]:
    with running_demo(dist, STREAM_PACE_SECONDS) as server:
        yield server


@pytest.fixture
def watch(demo: DemoServer) -> Watch:
    """The conftest's request/console guard, on the demo's origin."""
    return Watch(origin=demo.url)


def _open(context: BrowserContext, watch: Watch) -> Page:
    opened = context.new_page()
    opened.on("console", watch.on_console)
    opened.on("pageerror", watch.on_page_error)
    return opened


@pytest.fixture
def page(context: BrowserContext, watch: Watch) -> Page:
    return _open(context, watch)


def _ask_requests(context: BrowserContext) -> list[Request]:
    asked: list[Request] = []
    context.on("request", lambda r: asked.append(r) if urlsplit(r.url).path == "/api/ask" else None)
    return asked


def _ready(page: Page) -> None:
    wait_for_state(page, "ready")
    expect(page.locator("agentskit-ask")).to_have_attribute("data-knowledge", "ready")


def _messages(page: Page) -> list[str]:
    return page.locator("agentskit-ask .ak-message").evaluate_all(
        "(nodes) => nodes.map((n) => n.classList.contains('ak-user') ? 'user' : 'assistant')"
    )


def test_the_demo_journey_stream_cite_reload_then_offline(
    page: Page, context: BrowserContext, watch: Watch, demo: DemoServer
) -> None:
    asked = _ask_requests(context)
    page.goto(demo.url + "/")
    _ready(page)
    # home + every published docs page
    pages = len(published_sources(Path(__file__).resolve().parents[1] / "docs"))
    expect(page.locator("nav.site-nav a")).to_have_count(1 + pages)

    # 1. A question about the docs streams: text shows while the answer is still open.
    ask(page, DOCS_QUESTION)
    early = page.wait_for_function(TEXT_WHILE_STREAMING, polling="raf", timeout=30_000)
    early_length = int(early.json_value())
    answer = settled(page, 1)
    expect(answer).to_have_attribute("data-status", "complete")
    final_text = answer.locator(".ak-body").text_content() or ""
    assert 0 < early_length < len(final_text.strip()), "the answer arrived in one piece"
    expect(answer).to_contain_text("rate")
    request = json.loads(asked[0].post_data or "{}")
    assert request["messages"][-1] == {"role": "user", "content": DOCS_QUESTION}
    assert request["deterministic"]["reason"] == "miss", "the FAQ was tried first"

    # 2. The sources list the page sections the answer quotes.
    links = answer.locator(".ak-source-list .ak-source-link")
    expect(links.first).to_be_visible()
    href = links.first.get_attribute("href") or ""
    target = urlsplit(href)
    assert f"{target.scheme}://{target.netloc}" == demo.url
    assert re.fullmatch(r"/docs/[a-z-]+\.html", target.path), href
    assert target.fragment, "the top source names a section"

    # 3. Following it opens that page at that heading, in the same tab (the default), with
    # the conversation there too.
    links.first.click()
    page.wait_for_url(href)
    docs_page = page
    docs_page.wait_for_load_state()
    anchor = unquote(target.fragment)
    heading = docs_page.locator(f"main [id='{anchor}']")
    expect(heading).to_have_count(1)
    assert re.fullmatch(r"h[1-6]", heading.evaluate("(el) => el.tagName.toLowerCase()"))
    _ready(docs_page)
    top = heading.evaluate("(el) => el.getBoundingClientRect().top")
    # Scrolling lands on whole pixels: a heading laid out at a fractional offset may
    # sit up to a pixel above the viewport's top edge and is still on screen.
    assert -1 < top < docs_page.viewport_size["height"], "the heading is on screen"
    assert _messages(docs_page) == ["user", "assistant"]

    # 4. Reload: the conversation is restored from storage, sources included.
    docs_page.reload()
    _ready(docs_page)
    assert _messages(docs_page) == ["user", "assistant"]
    expect(docs_page.locator("agentskit-ask .ak-source-link").first).to_have_attribute("href", href)

    # 5. Backend stopped: an FAQ question is answered in the page, with no request.
    demo.stop()
    before = len(asked)
    ask(docs_page, FAQ_QUESTION)
    local = settled(docs_page, 2)
    expect(local).to_have_attribute("data-status", "complete")
    expect(local.locator(".ak-message-note")).to_have_text(LOCAL_NOTE)
    expect(local).to_contain_text("served by your own site")
    expect(local.locator(".ak-source-link")).to_have_attribute(
        "href", demo.url + "/docs/offline.html#nothing-comes-from-a-cdn"
    )
    assert len(asked) == before, "a local answer makes no Ask request"

    # 6. Any other question: one attempt (with the escalation), then a plain offline message.
    ask(docs_page, OFFLINE_QUESTION)
    failed = settled(docs_page, 3)
    expect(failed).to_have_attribute("data-status", "error")
    expect(failed.locator("[role=alert]")).to_contain_text("offline")
    assert len(asked) == before + 1
    escalation = json.loads(asked[-1].post_data or "{}")["deterministic"]
    assert escalation["outcome"] == "escalation" and escalation["reason"] == "miss"
    # Chromium logs the refused connection itself; nothing else may have gone wrong.
    watch.errors[:] = [e for e in watch.errors if "ERR_CONNECTION_REFUSED" not in e]


def test_edit_on_the_ask_path_asks_again_with_the_edited_history(
    page: Page, context: BrowserContext, demo: DemoServer
) -> None:
    """Ask is stateless: the edited question and nothing after it is the history it sends."""
    asked = _ask_requests(context)
    page.goto(demo.url + "/")
    _ready(page)
    ask(page, DOCS_QUESTION)
    settled(page, 1)
    ask(page, OFFLINE_QUESTION)
    settled(page, 2)
    question = page.locator("agentskit-ask .ak-user").first
    question.locator("button.ak-edit").click()
    field = question.locator("textarea.ak-edit-input")
    expect(field).to_have_value(DOCS_QUESTION)
    field.fill(EDITED_QUESTION)
    field.press("Enter")
    for _ in range(300):  # the save starts the request from a task
        if len(asked) == 3:
            break
        page.wait_for_timeout(100)
    request = json.loads(asked[2].post_data or "{}")
    assert request["messages"] == [{"role": "user", "content": EDITED_QUESTION}]
    expect(page.locator("agentskit-ask .ak-message")).to_have_count(2)
    answer = settled(page, 1)
    expect(answer).to_have_attribute("data-status", "complete")
    expect(page.locator("agentskit-ask .ak-user-text")).to_have_text(EDITED_QUESTION)
    assert _messages(page) == ["user", "assistant"]


DEMO_PAGES = ("/", "/docs/embedding.html")
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
# The relative luminance of an element's computed background (0 black, 1 white).
BACKGROUND_LUMINANCE = """(element) => {
  const [r, g, b] = getComputedStyle(element).backgroundColor.match(/[\\d.]+/g).map(Number);
  const linear = (c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}"""


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_demo_page_shows_the_ask_button_at_once_in_the_system_scheme(
    browser: Browser, demo: DemoServer, watch: Watch, size: str, scheme: str
) -> None:
    """A reader on a phone meets the box the way a plugin-built site shows it: a button in
    the first viewport of every page, the page and the box both dark on a dark system."""
    context = browser.new_context(viewport=VIEWPORTS[size], color_scheme=scheme)
    try:
        page = _open(context, watch)
        for path in DEMO_PAGES:
            page.goto(demo.url + path)
            expect(page.locator("agentskit-ask .ak-launcher")).to_be_in_viewport(ratio=1)
            page_dark = page.locator("body").evaluate(BACKGROUND_LUMINANCE) < 0.2
            box_dark = page.locator("agentskit-ask .ak-widget").evaluate(BACKGROUND_LUMINANCE) < 0.2
            assert (page_dark, box_dark) == (scheme == "dark",) * 2, path
            assert widget_state(page) == "idle", "the page booted Python before any intent"
    finally:
        context.close()
