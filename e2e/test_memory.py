"""Session memory in real Chromium `localStorage` (issue 5), driven by a small in-page harness.

The harness page is served through a Playwright route on the test server's own
origin (so it shares that origin's storage) and runs the shipped wheel in
Pyodide: `open_web_storage` (the browser port) + `create_ask_session_memory`,
plus `watch_other_tabs` and `decide_storage_sync` for the two-page case. It
shows the in-page conversation in `#log`, so "shown" is checked on the DOM.
Tests wait on `html[data-state]` and `data-sync-count`, never on sleeps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from agentskit_web.server.static import StaticSite
from e2e_support import BOOT_TIMEOUT_MS, Watch, harness_html

KEY = "ask:conversation"
LEGACY_KEYS = ("docs-ask:history", "ask-widget:messages")
HARNESS_PATH = "/__e2e__/memory-harness.html"
BLANK_PATH = "/__e2e__/blank.html"

HARNESS_PY = r"""
import json
import js
from agentskit_web.browser.web_storage import open_web_storage, watch_other_tabs
from agentskit_web.chat import ChatMemoryError, create_ask_session_memory, project_ask_messages
from agentskit_web.chat.memory.sync import decide_storage_sync

KEY = "ask:conversation"
LEGACY_KEYS = ["docs-ask:history", "ask-widget:messages"]
notices = []


def notice(text):
    notices.append(text)
    js.document.getElementById("notice").textContent = text


storage = open_web_storage("local", notice)
memory = create_ask_session_memory(KEY, LEGACY_KEYS, storage)
state = {"shown": [], "last_known": None, "syncs": 0, "counter": 0}


def render():
    log = js.document.getElementById("log")
    log.replaceChildren()
    for item in project_ask_messages(state["shown"]):
        li = js.document.createElement("li")
        li.dataset.role = item["role"]
        li.textContent = item["content"]
        log.appendChild(li)


def outcome(run):
    try:
        return json.dumps({"ok": True, "value": run()})
    except ChatMemoryError as error:
        return json.dumps({"ok": False, "code": error.code, "message": error.message})


def ak_load():
    def run():
        state["shown"] = memory.load_now()
        state["last_known"] = storage.get_item(KEY)
        render()
        return state["shown"]
    return outcome(run)


def ak_say(text):
    state["counter"] += 1
    number = state["counter"]
    stamp = "2024-06-01T00:00:00.%03dZ" % (number % 1000)
    base = {"status": "complete", "createdAt": stamp}
    state["shown"] = [
        *state["shown"],
        {**base, "id": "u%d-%s" % (number, js.document.title), "role": "user", "content": text},
        {**base, "id": "a%d-%s" % (number, js.document.title), "role": "assistant",
         "content": "answer to " + text},
    ]
    render()  # the page shows the turn whether or not saving works

    def run():
        state["last_known"] = memory.save_now(state["shown"])
        return len(state["shown"])
    return outcome(run)


def ak_clear():
    def run():
        memory.clear_now()
        state["shown"], state["last_known"] = [], None
        render()
        return True
    return outcome(run)


def ak_state():
    return json.dumps({"shown": state["shown"], "notices": notices,
                       "fallback": storage.is_fallback, "syncs": state["syncs"]})


def on_other_tab(event_key, incoming):
    decision = decide_storage_sync(key=KEY, event_key=event_key, incoming=incoming,
                                   last_known=state["last_known"])
    if decision.action == "replace":
        state["shown"], state["last_known"] = decision.messages, decision.last_known
        render()
    state["syncs"] += 1
    js.document.documentElement.dataset.syncCount = str(state["syncs"])


stop_watching = watch_other_tabs(KEY, on_other_tab)
"""

BLANK_HTML = "<!doctype html><html><head></head><body></body></html>"

READ_ONLY_SCRIPT = """
(() => {
  const refuse = () => { throw new DOMException("Storage is read-only here.", "SecurityError"); };
  Storage.prototype.setItem = refuse;
  Storage.prototype.removeItem = refuse;
})();
"""

UNREADABLE_SCRIPT = """
Object.defineProperty(window, "localStorage", {
  configurable: true,
  get() { throw new DOMException("The operation is insecure.", "SecurityError"); },
});
"""

FILL_STORAGE = """
() => {
  let index = 0;
  let size = 1 << 20;
  const chunk = n => "j".repeat(n);
  while (size >= 1) {
    try {
      localStorage.setItem("junk:" + index, chunk(size));
      index += 1;
    } catch (error) {
      if (error.name !== "QuotaExceededError") throw error;
      size = Math.floor(size / 2);
    }
  }
  return index;
}
"""

SNAPSHOT_STORAGE = """
() => {
  const entries = {};
  for (let i = 0; i < localStorage.length; i += 1) {
    const key = localStorage.key(i);
    const value = localStorage.getItem(key);
    entries[key] = key.startsWith("junk:") ? value.length : value;
  }
  return entries;
}
"""


def _harness_html(dist: Path, title: str) -> str:
    body = '<p id="notice" role="status"></p><ol id="log"></ol>'
    return harness_html(dist, title, HARNESS_PY, body=body)


@pytest.fixture
def routes(context: BrowserContext, site: StaticSite) -> str:
    """Serve the harness and a blank seeding page on the test server's origin."""

    def harness(route: Any) -> None:
        title = "tab-b" if "tab=b" in route.request.url else "tab-a"
        route.fulfill(status=200, content_type="text/html", body=_harness_html(site.root, title))

    context.route(f"{site.url}{HARNESS_PATH}*", harness)
    context.route(
        f"{site.url}{BLANK_PATH}",
        lambda route: route.fulfill(status=200, content_type="text/html", body=BLANK_HTML),
    )
    return site.url


def _boot(page: Page, origin: str, query: str = "") -> None:
    page.goto(f"{origin}{HARNESS_PATH}{query}")
    page.wait_for_selector(
        "html[data-state=ready], html[data-state=error]", state="attached", timeout=BOOT_TIMEOUT_MS
    )
    state = page.get_attribute("html", "data-state")
    assert state == "ready", page.get_attribute("html", "data-error")


def _call(page: Page, expression: str) -> Any:
    return json.loads(page.evaluate("code => window.akPy.runPython(code)", expression))


def _seed(page: Page, origin: str, entries: dict[str, str]) -> None:
    page.goto(f"{origin}{BLANK_PATH}")
    page.evaluate(
        "entries => { for (const [k, v] of Object.entries(entries)) localStorage.setItem(k, v); }",
        entries,
    )


def _storage(page: Page) -> dict[str, Any]:
    entries: dict[str, Any] = page.evaluate(SNAPSHOT_STORAGE)
    return entries


def _shown(page: Page) -> list[str]:
    texts: list[str] = page.locator("#log li").all_text_contents()
    return texts


def _new_watched_page(context: BrowserContext, watch: Watch) -> Page:
    opened = context.new_page()
    opened.on("console", watch.on_console)
    opened.on("pageerror", watch.on_page_error)
    return opened


LEGACY_FORMATS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "content": lambda: [
        {"id": "q1", "role": "user", "content": "How do I install?"},
        {"id": "a1", "role": "assistant", "content": "Run pip install."},
    ],
    "text": lambda: [
        {"role": "user", "text": "How do I install?"},
        {"role": "assistant", "text": "Run pip install."},
    ],
    "docs-parts": lambda: [
        {"role": "user", "content": "How do I install?"},
        {
            "role": "assistant",
            "parts": [
                {"kind": "text", "text": "Run pip install."},
                {
                    "kind": "tool",
                    "id": "cite-1",
                    "name": "cite",
                    "args": {"sources": [{"title": "Install", "path": "/docs/install"}]},
                },
            ],
        },
    ],
}


# -- tests -----------------------------------------------------------------------------------


def test_a_conversation_survives_a_reload(page: Page, routes: str) -> None:
    _boot(page, routes)
    assert _call(page, "ak_load()") == {"ok": True, "value": []}
    assert _call(page, "ak_say('first question')")["ok"]
    page.reload()
    page.wait_for_selector("html[data-state=ready]", state="attached", timeout=BOOT_TIMEOUT_MS)
    loaded = _call(page, "ak_load()")
    assert [m["content"] for m in loaded["value"]] == ["first question", "answer to first question"]
    assert _shown(page) == ["first question", "answer to first question"]
    assert json.loads(_storage(page)[KEY])["version"] == 1


@pytest.mark.parametrize("shape", sorted(LEGACY_FORMATS))
@pytest.mark.parametrize("legacy_key", LEGACY_KEYS)
def test_legacy_values_are_migrated_and_shown(
    page: Page, routes: str, shape: str, legacy_key: str
) -> None:
    _seed(page, routes, {legacy_key: json.dumps(LEGACY_FORMATS[shape]()), "site:theme": "dark"})
    _boot(page, routes)
    loaded = _call(page, "ak_load()")
    assert loaded["ok"] and len(loaded["value"]) == 2
    assert all(m["status"] == "complete" for m in loaded["value"])
    shown = _shown(page)
    assert shown[0] == "How do I install?"
    assert shown[1].startswith("Run pip install.")
    if shape == "docs-parts":
        assert shown[1] == "Run pip install.\n[source-list]"
    stored = _storage(page)
    assert legacy_key not in stored and stored["site:theme"] == "dark"
    assert json.loads(stored[KEY])["messages"] == loaded["value"]


def test_quota_filled_storage_keeps_everything_and_the_chat_works(page: Page, routes: str) -> None:
    legacy = json.dumps(LEGACY_FORMATS["content"]())
    _seed(page, routes, {LEGACY_KEYS[0]: legacy})
    junk_keys = page.evaluate(FILL_STORAGE)
    assert junk_keys > 0
    before = _storage(page)
    _boot(page, routes)
    loaded = _call(page, "ak_load()")
    assert [m["content"] for m in loaded["value"]] == ["How do I install?", "Run pip install."]
    assert _shown(page) == ["How do I install?", "Run pip install."]
    said = _call(page, "ak_say('still here?')")
    assert said == {
        "ok": False,
        "code": "AK_MEMORY_SAVE_FAILED",
        "message": "Web Storage refused to store the message record.",
    }
    assert _shown(page)[-2:] == ["still here?", "answer to still here?"]
    assert _storage(page) == before


def test_read_only_storage_keeps_legacy_and_the_chat_works(
    page: Page, context: BrowserContext, routes: str
) -> None:
    legacy = json.dumps(LEGACY_FORMATS["text"]())
    _seed(page, routes, {LEGACY_KEYS[1]: legacy, "site:theme": "dark"})
    context.add_init_script(READ_ONLY_SCRIPT)
    _boot(page, routes)
    before = _storage(page)
    loaded = _call(page, "ak_load()")
    assert [m["content"] for m in loaded["value"]] == ["How do I install?", "Run pip install."]
    assert not _call(page, "ak_say('and now?')")["ok"]
    assert _call(page, "ak_clear()")["code"] == "AK_MEMORY_CLEAR_FAILED"
    assert _storage(page) == before == {LEGACY_KEYS[1]: legacy, "site:theme": "dark"}
    assert _call(page, "ak_load()")["value"] == loaded["value"]  # still readable


def test_unreadable_local_storage_falls_back_to_memory_and_says_so_once(
    page: Page, context: BrowserContext, routes: str
) -> None:
    context.add_init_script(UNREADABLE_SCRIPT)
    _boot(page, routes)
    assert _call(page, "ak_load()") == {"ok": True, "value": []}
    assert _call(page, "ak_say('in memory')")["ok"]
    assert _call(page, "ak_load()")["value"][0]["content"] == "in memory"
    state = _call(page, "ak_state()")
    assert state["fallback"] is True and len(state["notices"]) == 1
    assert page.text_content("#notice") == state["notices"][0]


@pytest.mark.parametrize("with_legacy", [False, True], ids=["clean", "next-legacy-key"])
def test_a_corrupt_canonical_value_starts_clean_or_from_legacy(
    page: Page, routes: str, with_legacy: bool
) -> None:
    entries = {KEY: '{"version":1,"messages":[{"id":', "site:theme": "dark"}
    if with_legacy:
        entries[LEGACY_KEYS[0]] = json.dumps(LEGACY_FORMATS["content"]())
    _seed(page, routes, entries)
    _boot(page, routes)
    loaded = _call(page, "ak_load()")
    assert loaded["ok"]
    stored = _storage(page)
    assert stored["site:theme"] == "dark"
    if with_legacy:
        assert loaded["value"][0]["content"] == "How do I install?"
        assert json.loads(stored[KEY])["messages"] == loaded["value"]
    else:
        assert loaded["value"] == [] and KEY not in stored
    assert _call(page, "ak_say('works')")["ok"]


def test_two_pages_share_the_conversation_without_write_loops(
    page: Page, context: BrowserContext, watch: Watch, routes: str
) -> None:
    _boot(page, routes)
    _call(page, "ak_load()")
    assert _call(page, "ak_say('from tab a')")["ok"]
    second = _new_watched_page(context, watch)
    _boot(second, routes, "?tab=b")
    loaded = _call(second, "ak_load()")
    assert [m["content"] for m in loaded["value"]] == ["from tab a", "answer to from tab a"]
    assert _shown(second) == ["from tab a", "answer to from tab a"]

    assert _call(page, "ak_say('more from a')")["ok"]
    second.wait_for_selector("html[data-sync-count='1']", state="attached")
    assert _shown(second)[-1] == "answer to more from a"
    assert _call(second, "ak_state()")["shown"] == _call(page, "ak_state()")["shown"]

    assert _call(second, "ak_say('reply from b')")["ok"]
    page.wait_for_selector("html[data-sync-count='1']", state="attached")
    assert _shown(page)[-1] == "answer to reply from b"
    # Adopting never writes, so neither page hears from the other again.
    assert _call(page, "ak_state()")["syncs"] == 1
    assert _call(second, "ak_state()")["syncs"] == 1

    assert _call(page, "ak_clear()")["ok"]
    second.wait_for_selector("html[data-sync-count='2']", state="attached")
    assert _shown(second) == []
