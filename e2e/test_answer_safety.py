"""What an answer may make the page do, in Chromium: no request of its own, nothing hidden.

- Images: by default an answer's image is a link, so `![x](/logout)` sends no
  request, neither when it renders nor when the answer is restored from
  storage on reload; the `images` attribute lets images load only under the
  site's path prefix.
- Bidi and invisible characters: each message is direction-isolated, and a
  code block shows its bidi controls and zero-width characters as markers
  with a warning, so "Copy code" copies what the reader saw.
- Cost: a hostile answer (a 242 KiB pipe table) restored from storage on
  reload is shortened for display, says so, stays within the node bound, and
  "Copy answer" still copies all of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from agentskit_web.bench.page.hostile import expand
from agentskit_web.chat.view.render_limits import MESSAGE_MAX_NODES, SHORTENED_NOTE
from e2e_support import Watch, wait_for_state
from test_widget import _png, answers, ask, settled
from widget_site import WidgetSite, answer

SHADOW = "document.querySelector('agentskit-ask').shadowRoot"
HOSTILE_IMAGES = "Before ![x](/logout) and ![diagram](/__e2e__/diagram.png) after."
TROJAN = 'if access != "user\u202e \u2066// admin only\u2069 \u2066":\n    x\u200b = 1'
ALLOW_E2E_IMAGES = (
    "document.addEventListener('DOMContentLoaded', () =>"
    " document.querySelector('agentskit-ask').setAttribute('images', '/__e2e__/'))"
)


@pytest.fixture
def widget_site(dist: Path) -> Iterator[WidgetSite]:
    with WidgetSite(dist) as server:
        server.files["/__e2e__/diagram.png"] = (_png(), "image/png")
        server.files["/logout"] = (b"logged out", "text/plain")
        yield server


@pytest.fixture
def watch(widget_site: WidgetSite) -> Watch:
    return Watch(origin=widget_site.url)


def _paths(watch: Watch) -> list[str]:
    return [urlsplit(url).path for url in watch.requests]


def _boot(page: Page, site: WidgetSite) -> None:
    page.goto(site.url + "/")
    wait_for_state(page, "ready")


def test_an_answer_image_requests_nothing_on_render_or_on_reload(
    page: Page, watch: Watch, widget_site: WidgetSite
) -> None:
    widget_site.scripts["Images?"] = answer(HOSTILE_IMAGES)
    _boot(page, widget_site)
    ask(page, "Images?")
    body = settled(page, 1).locator(".ak-body")
    expect(body.locator("img")).to_have_count(0)
    links = body.locator("a.ak-image-link")
    expect(links).to_have_count(2)
    assert links.first.get_attribute("href") == widget_site.url + "/logout"
    assert links.first.text_content() == "x"

    page.reload()
    wait_for_state(page, "ready")
    restored = answers(page).first.locator(".ak-body")
    expect(restored.locator("a.ak-image-link")).to_have_count(2)
    expect(restored.locator("img")).to_have_count(0)
    page.wait_for_load_state("networkidle")
    fetched = _paths(watch)
    assert "/logout" not in fetched and "/__e2e__/diagram.png" not in fetched
    assert fetched.count("/") == 2, "both loads were recorded"


def test_the_images_attribute_lets_only_images_under_its_prefix_load(
    page: Page, context: BrowserContext, watch: Watch, widget_site: WidgetSite
) -> None:
    context.add_init_script(ALLOW_E2E_IMAGES)
    widget_site.scripts["Images?"] = answer(HOSTILE_IMAGES)
    _boot(page, widget_site)
    ask(page, "Images?")
    body = settled(page, 1).locator(".ak-body")
    image = body.locator("img")
    expect(image).to_have_count(1)
    assert image.get_attribute("src") == widget_site.url + "/__e2e__/diagram.png"
    page.wait_for_function(
        f"{SHADOW}.querySelector('.ak-body img').naturalWidth === 1", timeout=10_000
    )
    expect(body.locator("a.ak-image-link")).to_have_text("x")
    assert "/__e2e__/diagram.png" in _paths(watch), "the allowed image did load"
    assert "/logout" not in _paths(watch)


def test_messages_are_isolated_and_code_shows_what_it_hides(
    page: Page, context: BrowserContext, widget_site: WidgetSite
) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=widget_site.url)
    widget_site.scripts["Trojan?"] = answer(
        "\u05e9\u05dc\u05d5\u05dd\n\n```py\n" + TROJAN + "\n```\n"
    )
    _boot(page, widget_site)
    ask(page, "Trojan?")
    message = settled(page, 1)
    assert message.get_attribute("dir") == "auto"
    isolation = message.evaluate("(el) => getComputedStyle(el).unicodeBidi")
    assert isolation == "isolate"
    block = message.locator(".ak-codeblock")
    expect(block.locator(".ak-invisible-warning")).to_contain_text("5 invisible")
    expect(block.locator(".ak-invisible")).to_have_count(5)
    shown = block.locator("code").text_content() or ""
    assert "\u202e" not in shown and "\u200b" not in shown
    assert '"user<U+202E> <U+2066>// admin only<U+2069> <U+2066>":' in shown
    block.locator("[data-action=copy-code]").click()
    # The copy is asynchronous (the page writes the clipboard from a task): wait for it.
    page.wait_for_function("async () => (await navigator.clipboard.readText()).length > 0")
    assert page.evaluate("navigator.clipboard.readText()") == shown


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOSTILE_CORPUS = FIXTURES / "hostile_markdown" / "cases.json"
MESSAGE_CHROME_NODES = 64
"""Nodes of one answer's own chrome (label, segment, action buttons and icons), generously."""
COUNT_NODES = """(message) => {
  const walker = document.createTreeWalker(message, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  let count = 1;
  while (walker.nextNode()) count++;
  return count;
}"""


def _hostile_table() -> str:
    cases = json.loads(HOSTILE_CORPUS.read_text(encoding="utf-8"))["cases"]
    (case,) = [case for case in cases if case["name"] == "pipe table 242 KiB"]
    return expand(case)


def test_a_hostile_stored_answer_is_shortened_on_reload_and_copies_whole(
    page: Page, context: BrowserContext, widget_site: WidgetSite
) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=widget_site.url)
    table = _hostile_table()
    assert len(table) > 240 * 1024
    widget_site.scripts["A huge table?"] = answer(table)
    _boot(page, widget_site)
    ask(page, "A huge table?")
    streamed = settled(page, 1)
    expect(streamed.locator(".ak-shortened")).to_have_text(SHORTENED_NOTE)

    page.reload()
    wait_for_state(page, "ready")
    expect(answers(page)).to_have_count(1)
    restored = answers(page).first
    note = restored.locator(".ak-shortened")
    expect(note).to_be_visible()
    expect(note).to_have_text(SHORTENED_NOTE)
    assert note.get_attribute("role") == "note"
    assert restored.locator("table tr").count() > 0, "what fits is still a table"
    nodes = restored.evaluate(COUNT_NODES)
    assert nodes <= MESSAGE_MAX_NODES + MESSAGE_CHROME_NODES, nodes
    shown = restored.locator(".ak-body").inner_text()
    assert len(shown) < len(table) // 4

    restored.locator("[data-ui=copy]").click()
    page.wait_for_function("async () => (await navigator.clipboard.readText()).length > 0")
    assert page.evaluate("navigator.clipboard.readText()") == table.strip()
