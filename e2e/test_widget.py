"""The Ask widget in real Chromium, on the real demo page, against scripted Ask streams.

The page is dist/index.html with the real `<agentskit-ask>`; `WidgetSite`
serves it and answers `/api/ask` on the same origin with a script chosen by
the question. Tests wait on the page's own signals (`data-state`,
`data-status` of a message, `aria-busy`) and on the server's gates, never on
fixed sleeps. The conftest guards fail any test that requests another origin
or logs a console error.
"""

from __future__ import annotations

import json
import re
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from e2e_support import ARTIFACTS, Watch, failed_at, wait_for_state
from widget_site import DONE, Reply, WidgetSite, answer, cite, error, text

STORAGE_KEY = "agentskit-web-docs:ask"
SOURCES = [
    {"title": "Getting started", "path": "/docs/start", "anchor": "install it"},
    {"title": "Embedding <the> widget", "path": "/docs/embedding.html"},
    {"title": "Evil", "path": "javascript:alert(1)"},
]
TRAP = """
window.__pwned = undefined;
window.__dialogs = 0;
for (const name of ["alert", "confirm", "prompt", "print"]) {
  window[name] = () => { window.__pwned = name; };
}
"""
SHADOW = "document.querySelector('agentskit-ask').shadowRoot"
NO_FAQ = (
    "document.addEventListener('DOMContentLoaded', () =>"
    " document.querySelector('agentskit-ask').removeAttribute('knowledge'))"
)


def _png() -> bytes:
    """A valid 1x1 PNG, served as the corpus's same-origin image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\xff\xff")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


@pytest.fixture
def widget_site(dist: Path) -> Iterator[WidgetSite]:
    with WidgetSite(dist) as server:
        server.files["/__e2e__/diagram.png"] = (_png(), "image/png")
        yield server


@pytest.fixture
def watch(widget_site: WidgetSite) -> Watch:
    """The conftest's request/console guard, on the scripted server's origin."""
    return Watch(origin=widget_site.url)


@pytest.fixture
def page(context: BrowserContext, watch: Watch) -> Page:
    context.add_init_script(TRAP)
    opened = context.new_page()
    opened.on("console", watch.on_console)
    opened.on("pageerror", watch.on_page_error)
    opened.on("dialog", lambda dialog: (watch.errors.append("dialog opened"), dialog.dismiss()))
    return opened


def boot(page: Page, site: WidgetSite) -> None:
    page.goto(site.url + "/")
    wait_for_state(page, "ready")


def ask(page: Page, question: str) -> None:
    field = page.locator("agentskit-ask .ak-input")
    field.fill(question)
    field.press("Enter")


def answers(page: Page) -> Any:
    return page.locator("agentskit-ask .ak-assistant")


def settled(page: Page, count: int) -> Any:
    """The `count`-th answer once it stopped streaming."""
    last = answers(page).nth(count - 1)
    expect(last).to_have_attribute("data-status", re.compile("complete|error"), timeout=20_000)
    return last


def log(page: Page) -> Any:
    return page.locator("agentskit-ask [role=log]")


def shadow_eval(page: Page, expression: str) -> Any:
    return page.evaluate(f"(() => {{ const root = {SHADOW}; return {expression}; }})()")


def no_script_ran(page: Page) -> None:
    assert page.evaluate("window.__pwned") is None, "hostile content executed"


# -- streaming, sources, ARIA ---------------------------------------------------------------


def test_the_answer_streams_visibly_with_aria_busy(page: Page, widget_site: WidgetSite) -> None:
    gate = threading.Event()
    widget_site.scripts["How do I start?"] = [
        text("First part of the answer. "),
        gate,
        text("Second part."),
        cite(*SOURCES),
        DONE,
    ]
    boot(page, widget_site)
    assert log(page).get_attribute("aria-live") == "polite"
    assert log(page).get_attribute("aria-busy") == "false"
    ask(page, "How do I start?")

    first = answers(page).first
    expect(first).to_contain_text("First part of the answer.")
    assert not gate.is_set(), "text appeared while the stream is still open"
    assert first.get_attribute("data-status") == "streaming"
    assert log(page).get_attribute("aria-busy") == "true"
    expect(page.locator("agentskit-ask .ak-stop")).to_be_visible()
    expect(page.locator("agentskit-ask .ak-send")).to_be_hidden()

    gate.set()
    settled(page, 1)
    expect(first).to_contain_text("First part of the answer. Second part.")
    assert log(page).get_attribute("aria-busy") == "false"
    expect(page.locator("agentskit-ask .ak-send")).to_be_visible()
    expect(page.locator("agentskit-ask .ak-status")).to_have_text("Answer complete.")
    no_script_ran(page)


def test_sources_render_as_safe_links_and_open_reaches_the_host(
    page: Page, widget_site: WidgetSite
) -> None:
    widget_site.scripts["Sources?"] = answer("See these pages.", sources=SOURCES)
    boot(page, widget_site)
    ask(page, "Sources?")
    settled(page, 1)

    listing = page.locator("agentskit-ask .ak-source-list ul")
    assert listing.get_attribute("role") == "list"
    assert listing.get_attribute("aria-label") == "Sources"
    links = page.locator("agentskit-ask .ak-source-link")
    expect(links).to_have_count(2)  # the javascript: source was dropped
    hrefs = [links.nth(i).get_attribute("href") for i in range(2)]
    assert hrefs == [
        widget_site.url + "/docs/start#install%20it",
        widget_site.url + "/docs/embedding.html",
    ]
    assert links.nth(1).inner_text() == "Embedding <the> widget"
    for i in range(2):  # the same tab by default (links="new-tab" for target=_blank)
        assert links.nth(i).get_attribute("target") is None
        assert links.nth(i).get_attribute("rel") == "noopener noreferrer"

    page.evaluate(
        """() => {
        window.__opened = [];
        document.querySelector('agentskit-ask').addEventListener('agentskit:source-open', (e) => {
          window.__opened.push(e.detail);
          e.preventDefault();   // the host handles navigation itself
        });
      }"""
    )
    links.first.click()
    opened = page.evaluate("window.__opened")
    message_id = answers(page).first.get_attribute("data-message-id")
    assert opened == [
        {
            "messageId": message_id,
            "instanceId": "sources-1",
            "sourceId": "source-1",
            "url": widget_site.url + "/docs/start#install%20it",
        }
    ]
    assert len(page.context.pages) == 1, "a cancelled open does not open a tab"
    assert page.url == widget_site.url + "/", "nor does it navigate"


def test_stop_ends_the_answer_upstream_and_keeps_what_streamed(
    page: Page, widget_site: WidgetSite
) -> None:
    widget_site.scripts["Long one"] = [text("Beginning. "), *[0.05, text("more ")] * 400, DONE]
    boot(page, widget_site)
    ask(page, "Long one")
    expect(answers(page).first).to_contain_text("Beginning.")
    page.locator("agentskit-ask .ak-stop").click()

    last = settled(page, 1)
    assert last.get_attribute("data-status") == "complete"
    expect(last.locator(".ak-message-note")).to_have_text("Stopped.")
    assert last.locator(".ak-message-error").count() == 0
    assert "Beginning." in last.inner_text()
    deadline = time.monotonic() + 10
    while widget_site.disconnects == 0 and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert widget_site.disconnects == 1 and widget_site.completed == 0
    assert page.evaluate(f"{SHADOW}.activeElement?.className") == "ak-input"


def test_an_error_keeps_the_streamed_text_and_retry_works(
    page: Page, widget_site: WidgetSite
) -> None:
    widget_site.queue["Flaky?"] = [
        [text("Partial answer before the failure."), error("The model went away.")],
        answer("A complete answer this time."),
    ]
    boot(page, widget_site)
    ask(page, "Flaky?")
    failed = settled(page, 1)
    assert failed.get_attribute("data-status") == "error"
    alert = failed.locator("[role=alert]")
    expect(alert).to_contain_text("The model went away.")
    assert "Partial answer before the failure." in failed.inner_text()
    expect(page.locator("agentskit-ask .ak-status")).to_contain_text("could not be completed")

    failed_id = failed.get_attribute("data-message-id")
    failed.locator(".ak-retry-answer").click()
    expect(answers(page).first).not_to_have_attribute("data-message-id", failed_id or "")
    expect(answers(page)).to_have_count(1)
    done = settled(page, 1)
    assert done.get_attribute("data-status") == "complete"
    expect(done).to_contain_text("A complete answer this time.")
    assert "Partial answer" not in done.inner_text()
    assert widget_site.questions() == ["Flaky?", "Flaky?"]
    retried = widget_site.requests[1][1]["messages"]
    assert retried == [{"role": "user", "content": "Flaky?"}]


def test_reload_restores_the_conversation(page: Page, widget_site: WidgetSite) -> None:
    widget_site.scripts["Remember me"] = answer("**Bold** memory.", sources=SOURCES[:1])
    boot(page, widget_site)
    ask(page, "Remember me")
    settled(page, 1)
    before = log(page).inner_text()
    stored = json.loads(page.evaluate(f"localStorage.getItem('{STORAGE_KEY}')"))
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant"]

    page.reload()
    wait_for_state(page, "ready")
    expect(answers(page)).to_have_count(1)
    assert log(page).inner_text() == before
    expect(page.locator("agentskit-ask .ak-body strong")).to_have_text("Bold")
    expect(page.locator("agentskit-ask .ak-source-link")).to_have_count(1)

    page.locator("agentskit-ask .ak-new").click()
    expect(answers(page)).to_have_count(0)
    assert page.evaluate(f"localStorage.getItem('{STORAGE_KEY}')") is None
    expect(page.locator("agentskit-ask .ak-suggestions button")).to_have_count(3)


def test_keyboard_only_use(page: Page, widget_site: WidgetSite) -> None:
    widget_site.scripts["line one\nline two"] = answer("Keyboard answer.")
    boot(page, widget_site)
    page.evaluate(
        """() => {
        window.__feedback = [];
        document.addEventListener('agentskit:feedback', (e) => window.__feedback.push(e.detail));
      }"""
    )
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+k")
    assert shadow_eval(page, "root.activeElement?.className") == "ak-input"
    page.keyboard.type("line one")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("line two")
    assert page.locator("agentskit-ask .ak-input").input_value() == "line one\nline two"
    page.keyboard.press("Enter")
    settled(page, 1)
    expect(page.locator("agentskit-ask .ak-user")).to_contain_text("line one")
    assert page.locator("agentskit-ask .ak-input").input_value() == ""

    # Tab from the log to the answer's thumbs up, then activate it with the keyboard.
    page.locator("agentskit-ask [role=log]").focus()
    for _ in range(12):
        page.keyboard.press("Tab")
        if shadow_eval(page, "root.activeElement?.dataset.ui") == "up":
            break
    assert shadow_eval(page, "root.activeElement?.dataset.ui") == "up"
    outline = shadow_eval(page, "getComputedStyle(root.activeElement).outlineStyle")
    assert outline != "none", "focus is visible"
    page.keyboard.press("Enter")
    up = page.locator("agentskit-ask [data-ui=up]")
    expect(up).to_have_attribute("aria-pressed", "true")
    message_id = answers(page).first.get_attribute("data-message-id")
    assert page.evaluate("window.__feedback") == [{"messageId": message_id, "value": "up"}]
    # With an endpoint the vote also goes to the backend, beside it (/api/feedback).
    deadline = time.monotonic() + 10
    while not widget_site.feedback and time.monotonic() < deadline:
        time.sleep(0.05)
    assert widget_site.feedback == [
        {"answerId": message_id, "question": "line one\nline two", "sources": [], "vote": "up"}
    ]

    page.keyboard.press("Escape")
    expect(page.locator("agentskit-ask .ak-panel")).to_be_hidden()
    expect(page.locator("agentskit-ask .ak-input")).to_be_hidden()
    page.keyboard.press("Control+k")
    expect(page.locator("agentskit-ask .ak-panel")).to_be_visible()
    assert shadow_eval(page, "root.activeElement?.className") == "ak-input"


def test_every_control_has_an_accessible_name(page: Page, widget_site: WidgetSite) -> None:
    widget_site.scripts["Name them"] = answer("```\ncode\n```", sources=SOURCES[:1])
    boot(page, widget_site)
    ask(page, "Name them")
    settled(page, 1)
    unnamed = shadow_eval(
        page,
        """[...root.querySelectorAll('button, textarea, a, [role=log]')]
            .filter((el) => !(el.getAttribute('aria-label') || el.textContent.trim()))
            .map((el) => el.outerHTML.slice(0, 80))""",
    )
    assert unnamed == []


def test_a_long_answer_opens_at_its_question_and_follows_only_a_reader_at_the_bottom(
    page: Page, widget_site: WidgetSite
) -> None:
    first, second = threading.Event(), threading.Event()
    lines = [text(f"Line {i} of a long answer.\n\n") for i in range(60)]
    more = [text(f"More {i} of a long answer.\n\n") for i in range(60)]
    rest = [text(f"Rest {i} of a long answer.\n\n") for i in range(60)]
    widget_site.scripts["Scroll"] = [*lines, first, *more, second, *rest, DONE]
    boot(page, widget_site)
    ask(page, "Scroll")
    expect(answers(page).first).to_contain_text("Line 59 of a long answer.")
    page.wait_for_timeout(200)  # frames after the chunks: none may push the question out
    question_top = shadow_eval(
        page,
        "(() => { const l = root.querySelector('.ak-log');"
        " const q = l.querySelector('.ak-user');"
        " return q.getBoundingClientRect().top - l.getBoundingClientRect().top; })()",
    )
    assert 0 <= question_top <= 16, "the question stays at the top while the answer grows"

    # The reader scrolls to the bottom themselves: the stream is followed from there.
    shadow_eval(
        page, "(() => { const l = root.querySelector('.ak-log'); l.scrollTop = l.scrollHeight; })()"
    )
    page.wait_for_timeout(100)
    first.set()
    expect(answers(page).first).to_contain_text("More 59 of a long answer.")
    page.wait_for_timeout(200)
    at_bottom = shadow_eval(
        page,
        "(() => { const l = root.querySelector('.ak-log');"
        " return l.scrollHeight - l.scrollTop - l.clientHeight; })()",
    )
    assert at_bottom <= 50, "a reader at the bottom follows the stream"

    shadow_eval(page, "root.querySelector('.ak-log').scrollTop = 0")
    page.wait_for_function(f"{SHADOW}.querySelector('.ak-log').scrollTop === 0")
    second.set()
    settled(page, 1)
    assert shadow_eval(page, "root.querySelector('.ak-log').scrollTop") == 0, "no yank"


# -- hostile corpus ----------------------------------------------------------------------------


def _corpus() -> list[dict[str, Any]]:
    path = Path(__file__).resolve().parent.parent / "fixtures" / "hostile_render.json"
    return list(json.loads(path.read_text(encoding="utf-8"))["cases"])


def _squash(value: str) -> str:
    return re.sub(r"\s+", "", value)


def _check_rendered(page: Page, site: WidgetSite, index: int, case: dict[str, Any]) -> None:
    """One settled answer shows the case as inert text or safe links, nothing else."""
    expect_ = case["expect"]
    message = answers(page).nth(index)
    body = message.locator(".ak-body")
    shown = body.evaluate("(el) => el.textContent")
    assert _squash(shown) == _squash(expect_["text"]), case["name"]
    hrefs = body.evaluate("(el) => [...el.querySelectorAll('a')].map((a) => a.href)")
    wanted = [href if href.startswith("http") else site.url + href for href in expect_["links"]]
    wanted = [
        href.replace(site.url + "#", site.url + "/#") if "#" in href else href for href in wanted
    ]
    assert hrefs == wanted, case["name"]
    for href in hrefs:
        assert re.match(r"https?://", href), case["name"]
    rels = body.evaluate("(el) => [...el.querySelectorAll('a')].map((a) => a.rel + '|' + a.target)")
    assert all(rel == "noopener noreferrer|" for rel in rels), case["name"]  # the same tab
    sources = body.evaluate("(el) => [...el.querySelectorAll('img')].map((i) => i.src)")
    assert sources == [site.url + src for src in expect_["images"]], case["name"]
    tags = body.evaluate(
        "(el) => [...el.querySelectorAll('script, iframe, object, embed, svg, style, form')].length"
    )
    assert tags == 0, case["name"]
    if expect_["error"] is not None:
        assert message.locator("[role=alert]").inner_text().startswith(expect_["error"])


def test_hostile_streamed_answers_render_inert(page: Page, widget_site: WidgetSite) -> None:
    cases = [case for case in _corpus() if "events" in case["input"]]
    assert len(cases) >= 40
    for case in cases:
        steps: list[Any] = [
            json.dumps(event, ensure_ascii=False).encode() + b"\n"
            for event in case["input"]["events"]
        ]
        widget_site.scripts[case["name"]] = steps
    boot(page, widget_site)
    for index, case in enumerate(cases):
        ask(page, case["name"])
        settled(page, index + 1)
        _check_rendered(page, widget_site, index, case)
        no_script_ran(page)
    page.wait_for_load_state("networkidle")
    no_script_ran(page)


def _stored_message(index: int, role: str, content: str) -> dict[str, Any]:
    return {
        "id": f"m-{index}",
        "role": role,
        "content": content,
        "status": "complete",
        "createdAt": "2026-01-01T00:00:00.000Z",
    }


def _content(case_input: dict[str, Any]) -> str:
    if "content" in case_input:
        return str(case_input["content"])
    from agentskit_web.protocol import AssistantContentEncoder

    encoder = AssistantContentEncoder()
    return "".join(encoder.encode(part) for part in case_input["parts"])


def test_hostile_stored_answers_render_inert(page: Page, widget_site: WidgetSite) -> None:
    cases = [case for case in _corpus() if "events" not in case["input"]]
    assert cases
    boot(page, widget_site)
    for start in range(0, len(cases), 10):
        batch = cases[start : start + 10]
        messages = []
        for offset, case in enumerate(batch):
            messages.append(_stored_message(2 * offset, "user", case["name"]))
            messages.append(_stored_message(2 * offset + 1, "assistant", _content(case["input"])))
        record = json.dumps({"version": 1, "messages": messages})
        page.evaluate("([key, value]) => localStorage.setItem(key, value)", [STORAGE_KEY, record])
        page.reload()
        wait_for_state(page, "ready")
        expect(answers(page)).to_have_count(len(batch))
        for index, case in enumerate(batch):
            _check_rendered(page, widget_site, index, case)
        no_script_ran(page)


# -- screenshots -------------------------------------------------------------------------------


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("agentskit-ask .ak-box").screenshot(path=str(ARTIFACTS / f"widget-{name}.png"))


def test_screenshots_light_dark_streaming_error_sources(
    page: Page, widget_site: WidgetSite
) -> None:
    gate = threading.Event()
    widget_site.scripts["How do I embed the Ask widget?"] = [
        text("Add the element to your page template:\n\n"),
        text('```html\n<agentskit-ask endpoint="/api/ask"></agentskit-ask>\n```\n\n'),
        text("Then publish `dist/` with your site. "),
        gate,
        text("The box works **offline** too."),
        cite(*SOURCES),
        DONE,
    ]
    widget_site.scripts["Break please"] = [
        text("Here is the start of an answer"),
        error("The Ask service timed out.", "ASK_TIMEOUT"),
    ]
    page.add_init_script(NO_FAQ)  # the suggestion must reach the scripted server, not the FAQ
    boot(page, widget_site)
    _shot(page, "light-empty")
    page.locator("agentskit-ask .ak-suggestions button").first.click()
    expect(answers(page).first).to_contain_text("Then publish")
    _shot(page, "streaming")
    gate.set()
    settled(page, 1)
    _shot(page, "sources")
    ask(page, "Break please")
    settled(page, 2)
    page.wait_for_function(  # the in-place error is scrolled into view, not left below
        f"(() => {{ const l = {SHADOW}.querySelector('.ak-log');"
        " return l.scrollHeight - l.scrollTop - l.clientHeight < 2; })()"
    )
    _shot(page, "error")
    page.emulate_media(color_scheme="dark")
    _shot(page, "dark")
    assert (
        page.locator("agentskit-ask").evaluate(
            "(el) => getComputedStyle(el.shadowRoot.querySelector('.ak-widget')).backgroundColor"
        )
        == "rgb(22, 26, 34)"
    ), "the reader's dark preference picks the dark palette"
    page.evaluate("document.querySelector('agentskit-ask').setAttribute('theme', 'light')")
    _shot(page, "theme-light-override")
    assert (
        page.locator("agentskit-ask").evaluate(
            "(el) => getComputedStyle(el.shadowRoot.querySelector('.ak-widget')).backgroundColor"
        )
        == "rgb(255, 255, 255)"
    )


def test_dark_theme_attribute_and_host_css_isolation(page: Page, widget_site: WidgetSite) -> None:
    boot(page, widget_site)
    page.add_style_tag(
        content="button { background: red !important; font-size: 40px !important; }"
        " * { color: lime !important; } .ak-input { display: none !important; }"
    )
    page.evaluate("document.querySelector('agentskit-ask').setAttribute('theme', 'dark')")
    background = shadow_eval(
        page, "getComputedStyle(root.querySelector('.ak-widget')).backgroundColor"
    )
    assert background == "rgb(22, 26, 34)"
    send = shadow_eval(page, "getComputedStyle(root.querySelector('.ak-send')).backgroundColor")
    assert send != "rgb(255, 0, 0)", "page CSS does not reach into the widget"
    expect(page.locator("agentskit-ask .ak-input")).to_be_visible()
    assert page.locator("h1").evaluate("(el) => getComputedStyle(el).color") == "rgb(0, 255, 0)"


# Chromium logs the scripted backend's 503 once the page is back online.
@pytest.mark.console_error_expected(failed_at("/api/ask"))
def test_offline_backend_is_said_plainly(page: Page, widget_site: WidgetSite) -> None:
    widget_site.scripts["Anyone?"] = [Reply(503, b'{"error":{"code":"ASK_INTERNAL"}}')]
    boot(page, widget_site)
    page.context.set_offline(True)
    ask(page, "Anyone?")
    failed = settled(page, 1)
    expect(failed.locator("[role=alert]")).to_contain_text("offline")
    assert widget_site.requests == [], "offline: nothing is sent"
    page.context.set_offline(False)
    failed_id = failed.get_attribute("data-message-id")
    failed.locator(".ak-retry-answer").click()
    expect(answers(page).first).not_to_have_attribute("data-message-id", failed_id or "")
    expect(answers(page).first.locator("[role=alert]")).to_contain_text("(503)")


# -- local answers, two tabs, copy, late mount -----------------------------------------------


def _faq() -> dict[str, Any]:
    from agentskit_web.protocol.knowledge import compute_knowledge_hash

    body = {
        "protocol": "agentskit.chat.knowledge",
        "version": 1,
        "artifactId": "e2e-faq",
        "siteId": "agentskit-web-docs",
        "generatedAt": "2026-01-01T00:00:00.000Z",
        "entries": [
            {
                "id": "embed",
                "kind": "document",
                "label": "Embedding",
                "match": {"type": "exact", "values": ["How do I embed the widget?"]},
                "answer": {
                    "markdown": "Add the `<agentskit-ask>` element to your template.",
                    "citations": [
                        {"id": "embedding", "title": "Embedding", "href": "/docs/embedding.html"}
                    ],
                },
            }
        ],
    }
    return {**body, "contentHash": compute_knowledge_hash(body)}


def test_faq_questions_are_answered_locally_and_misses_escalate(
    page: Page, widget_site: WidgetSite
) -> None:
    widget_site.files["/__e2e__/faq.json"] = (json.dumps(_faq()).encode(), "application/json")
    widget_site.scripts["Something else"] = answer("From the backend.")
    page.add_init_script(
        "document.addEventListener('DOMContentLoaded', () => document.querySelector("
        "'agentskit-ask').setAttribute('knowledge', '/__e2e__/faq.json'))"
    )
    boot(page, widget_site)
    expect(page.locator("agentskit-ask")).to_have_attribute("data-knowledge", "ready")

    ask(page, "how do I embed the widget?")
    local = settled(page, 1)
    expect(local.locator(".ak-message-note")).to_have_text("Answered from this site's FAQ.")
    expect(local.locator("code")).to_have_text("<agentskit-ask>")
    link = local.locator(".ak-source-link")
    assert link.get_attribute("href") == widget_site.url + "/docs/embedding.html"
    assert widget_site.requests == [], "a local answer makes no request"

    ask(page, "Something else")
    expect(settled(page, 2)).to_contain_text("From the backend.")
    deterministic = widget_site.requests[0][1]["deterministic"]
    assert deterministic["outcome"] == "escalation" and deterministic["reason"] == "miss"

    page.context.set_offline(True)
    ask(page, "Not in the FAQ either")
    expect(settled(page, 3).locator("[role=alert]")).to_contain_text("offline")
    ask(page, "How do I embed the widget?")
    expect(settled(page, 4).locator(".ak-message-note")).to_have_text(
        "Answered from this site's FAQ."
    )
    assert len(widget_site.requests) == 1
    page.context.set_offline(False)


def test_a_second_tab_picks_up_the_conversation(
    page: Page, context: BrowserContext, watch: Watch, widget_site: WidgetSite
) -> None:
    widget_site.scripts["Shared?"] = answer("Seen in both tabs.")
    boot(page, widget_site)
    other = context.new_page()
    other.on("console", watch.on_console)
    other.on("pageerror", watch.on_page_error)
    boot(other, widget_site)

    ask(page, "Shared?")
    settled(page, 1)
    expect(answers(other)).to_have_count(1)
    expect(answers(other).first).to_contain_text("Seen in both tabs.")
    assert len(widget_site.requests) == 1, "adopting the other tab's answer sends nothing"


def test_copy_answer_puts_its_text_on_the_clipboard(
    page: Page, context: BrowserContext, widget_site: WidgetSite
) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=widget_site.url)
    widget_site.scripts["Copy me"] = answer("Copy **this** answer.", sources=SOURCES[:1])
    boot(page, widget_site)
    ask(page, "Copy me")
    answer_element = settled(page, 1)
    button = answer_element.locator("[data-ui=copy]")
    button.click()
    expect(button).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == (
        "Copy **this** answer.\n\nSources:\n- Getting started </docs/start#install%20it>"
    )
    expect(button).to_have_text("Copy")


def test_an_element_added_later_mounts_by_itself(page: Page, widget_site: WidgetSite) -> None:
    boot(page, widget_site)
    page.evaluate(
        """() => {
        const host = document.createElement('agentskit-ask');
        host.id = 'late';
        host.setAttribute('storage', 'none');
        host.setAttribute('heading', 'Late <b>box</b>');
        document.body.appendChild(host);
      }"""
    )
    late = page.locator("#late")
    page.wait_for_selector("#late[data-state=ready]", state="attached")
    assert late.get_attribute("data-mounted") == ""
    expect(late.locator(".ak-heading")).to_have_text("Late <b>box</b>")


# A page that runs its own Pyodide (no loader) mounts the widget with a definition built
# in Python, as docs/embedding.md shows: its storage key, a legacy key to migrate.
PYTHON_API_SOURCE = """
import js
from agentskit_web.browser.web_storage import open_web_storage
from agentskit_web.browser.widget import mount
from agentskit_web.chat import create_ask_adapter, create_ask_session_memory, define_chat

definition = define_chat(
    id="docs-ask",
    adapter=create_ask_adapter(endpoint="/api/ask"),
    memory=create_ask_session_memory(
        key="mysite:ask:v2", legacy_keys=["mysite:ask"], storage=open_web_storage("local")
    ),
)
await mount(js.document.querySelector("agentskit-ask"), definition)
"""
LEGACY_CONVERSATION = [
    {"role": "user", "content": "What did I ask before?"},
    {"role": "assistant", "content": "An older answer, kept under the old key."},
]


def test_a_page_with_its_own_python_mounts_a_definition(
    page: Page, widget_site: WidgetSite, dist: Path
) -> None:
    from agentskit_web.bench.harness import harness_html

    html = harness_html(
        dist, "python api", PYTHON_API_SOURCE, body="<agentskit-ask></agentskit-ask>"
    )
    page.route(
        widget_site.url + "/python-api.html",
        lambda route: route.fulfill(status=200, content_type="text/html", body=html),
    )
    page.goto(widget_site.url + "/")  # the origin, to seed the legacy key
    page.evaluate(
        "([key, value]) => localStorage.setItem(key, value)",
        ["mysite:ask", json.dumps(LEGACY_CONVERSATION)],
    )
    page.goto(widget_site.url + "/python-api.html")
    page.wait_for_selector("html[data-state]", state="attached", timeout=120_000)
    assert page.get_attribute("html", "data-state") == "ready", page.get_attribute(
        "html", "data-error"
    )
    expect(answers(page).first).to_contain_text("An older answer, kept under the old key.")

    widget_site.scripts["How do I embed it?"] = answer("Add the element to your template.")
    ask(page, "How do I embed it?")
    expect(settled(page, 2)).to_contain_text("Add the element to your template.")
    stored = page.evaluate("() => localStorage.getItem('mysite:ask:v2')")
    assert stored and "How do I embed it?" in stored, "saved under the definition's key"
