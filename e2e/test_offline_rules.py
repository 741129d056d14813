"""The offline worker's page-caching rules in Chromium (issue 23): a real worker, a real server.

The site is dist/ (its real worker and runtime) plus pages served with the
headers each rule is about. The tests register the worker and send it the
loader's `agentskit:keep` message themselves, as the loader does after boot,
so no Pyodide boot is needed to exercise the worker. Each test first shows a
page that may be kept is served offline (so a refusal below is the rule, not a
worker that never serves anything), then that

- a private page (no-store / private / Vary: Cookie or Authorization) is never
  stored and is not shown after logout with the network gone;
- a same-origin page that does not embed the widget is not remembered, unless
  the site named an `offline-scope`;
- an entry past its age is not served;
- a kept page whose fresh copy no longer asks for the cache makes the worker
  clear its caches and unregister.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Error, Page

from agentskit_web.server.static import AppServer, create_static_app
from e2e_support import Watch
from module_record import PYODIDE_MODULE

WORKER = "/agentskit/agentskit-ask-sw.js"
PAGES_CACHE = "agentskit-ask:pages"
OPTED_IN = (
    '<!doctype html><title>{title}</title><agentskit-ask offline="cache"></agentskit-ask>'
    "<p>{text}</p>"
)
PUBLIC_TEXT = "Public guide page"
PRIVATE_TEXT = "Private account page of alice"
OTHER_TEXT = "A page without the widget"
DAY_MS = 24 * 60 * 60 * 1000


class Pages:
    """ASGI app: a few pages with chosen headers in front of dist/ (worker and runtime)."""

    def __init__(self, dist: Path) -> None:
        self.static = create_static_app(dist)
        self.pages: dict[str, tuple[dict[str, str], str]] = {
            "/public.html": ({}, OPTED_IN.format(title="Guide", text=PUBLIC_TEXT)),
            "/other.html": ({}, f"<!doctype html><title>Other</title><p>{OTHER_TEXT}</p>"),
        }

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] not in self.pages:
            await self.static(scope, receive, send)
            return
        extra, body = self.pages[scope["path"]]
        headers = {"content-type": "text/html; charset=utf-8", **extra}
        raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": 200, "headers": raw})
        await send({"type": "http.response.body", "body": body.encode()})


@pytest.fixture
def pages(dist: Path) -> Pages:
    return Pages(dist)


@pytest.fixture
def server(pages: Pages) -> Iterator[AppServer]:
    with AppServer(pages) as running:
        yield running


@pytest.fixture
def context(browser: Browser, server: AppServer) -> Iterator[BrowserContext]:
    """A context without routes (a route would keep the worker's fetches from the network)."""
    watch = Watch(origin=server.url)
    ctx = browser.new_context()
    ctx.unroute(PYODIDE_MODULE)
    ctx.on("request", watch.on_request)
    try:
        yield ctx
    finally:
        ctx.close()
    assert not watch.off_origin, f"requests to other origins: {watch.off_origin}"


def _install(page: Page, server: AppServer, urls: list[str], scope_pages: bool = False) -> Any:
    """What the loader does after boot: register the worker for the site, send `keep`."""
    return page.evaluate(
        """async ([worker, urls, scopePages]) => {
          const registration = await navigator.serviceWorker.register(worker, { scope: "/" });
          await navigator.serviceWorker.ready;
          const active = registration.active;
          return await new Promise((resolve) => {
            const channel = new MessageChannel();
            channel.port1.onmessage = (event) => resolve(event.data);
            active.postMessage({ type: "agentskit:keep", urls, scopePages }, [channel.port2]);
          });
        }""",
        [WORKER, [server.url + u for u in urls], scope_pages],
    )


def _offline_text(page: Page, url: str) -> str | None:
    """The page's text when navigated with the network gone, or None when it fails."""
    try:
        page.goto(url)
    except Error:
        return None
    return page.locator("body").inner_text()


def _controlled(page: Page, server: AppServer) -> None:
    page.goto(server.url + "/public.html")
    assert page.evaluate("navigator.serviceWorker.controller !== null")


# No max-age below: Chromium's own HTTP cache may keep a `private, max-age` page for its
# user (that is what private allows); these tests are about the worker's cache.
@pytest.mark.parametrize(
    "headers",
    [
        {"cache-control": "no-store, private", "vary": "Cookie"},  # the page from the review
        {"cache-control": "no-store"},
        {"cache-control": "private"},
        {"cache-control": "no-cache", "vary": "Accept-Encoding, Cookie"},
        {"vary": "Authorization"},
        {"vary": "*"},
    ],
)
def test_a_private_page_is_never_kept_and_not_shown_after_logout(
    context: BrowserContext, pages: Pages, server: AppServer, headers: dict[str, str]
) -> None:
    pages.pages["/account.html"] = (headers, OPTED_IN.format(title="Account", text=PRIVATE_TEXT))
    page = context.new_page()
    context.add_cookies([{"name": "session", "value": "alice", "url": server.url}])
    page.goto(server.url + "/account.html")
    assert PRIVATE_TEXT in page.locator("body").inner_text()
    reply = _install(page, server, ["/public.html", "/account.html"])
    assert reply["refused"] == [server.url + "/account.html"], reply
    assert reply["kept"] == 1 and not reply["failed"], reply
    page.goto(server.url + "/account.html")  # controlled now: a navigation must not store it
    assert page.evaluate("navigator.serviceWorker.controller !== null")
    stored = page.evaluate(
        "(name) => caches.open(name).then((c) => c.keys()).then((k) => k.map((r) => r.url))",
        PAGES_CACHE,
    )
    assert server.url + "/account.html" not in stored
    assert server.url + "/public.html" in stored

    context.clear_cookies()  # alice logs out; the next user of this browser is offline
    context.set_offline(True)
    assert _offline_text(page, server.url + "/public.html") is not None
    assert PUBLIC_TEXT in page.locator("body").inner_text()
    shown = _offline_text(page, server.url + "/account.html")
    assert shown is None or PRIVATE_TEXT not in shown


def test_a_kept_page_that_turns_private_is_dropped(
    context: BrowserContext, pages: Pages, server: AppServer
) -> None:
    page = context.new_page()
    page.goto(server.url + "/public.html")
    _install(page, server, ["/public.html"])
    pages.pages["/public.html"] = (
        {"cache-control": "private"},
        OPTED_IN.format(title="Guide", text=PRIVATE_TEXT),
    )
    page.goto(server.url + "/public.html")
    assert PRIVATE_TEXT in page.locator("body").inner_text()
    context.set_offline(True)
    assert _offline_text(page, server.url + "/public.html") is None


@pytest.mark.parametrize("scope_pages", [False, True])
def test_only_pages_that_embed_the_widget_are_remembered_unless_a_scope_is_named(
    context: BrowserContext, server: AppServer, scope_pages: bool
) -> None:
    page = context.new_page()
    page.goto(server.url + "/public.html")
    _install(page, server, ["/public.html"], scope_pages)
    _controlled(page, server)
    page.goto(server.url + "/other.html")  # a navigation under the worker's scope
    assert OTHER_TEXT in page.locator("body").inner_text()
    context.set_offline(True)
    assert _offline_text(page, server.url + "/public.html") is not None
    shown = _offline_text(page, server.url + "/other.html")
    if scope_pages:
        assert shown is not None and OTHER_TEXT in shown
    else:
        assert shown is None


@pytest.mark.parametrize(("age_days", "served"), [(6.9, True), (7.1, False)])
def test_an_entry_past_its_age_is_not_served(
    context: BrowserContext, server: AppServer, age_days: float, served: bool
) -> None:
    page = context.new_page()
    page.goto(server.url + "/public.html")
    _install(page, server, ["/public.html"])
    _controlled(page, server)
    page.evaluate(
        """async ([name, url, age]) => {
          const cache = await caches.open(name);
          const kept = await cache.match(url);
          const headers = new Headers(kept.headers);
          headers.set("x-agentskit-stored-at", String(Date.now() - age));
          await cache.put(url, new Response(await kept.blob(), { headers }));
        }""",
        [PAGES_CACHE, server.url + "/public.html", age_days * DAY_MS],
    )
    context.set_offline(True)
    shown = _offline_text(page, server.url + "/public.html")
    assert (shown is not None and PUBLIC_TEXT in shown) is served


def test_the_worker_forgets_everything_when_the_page_no_longer_asks(
    context: BrowserContext, pages: Pages, server: AppServer
) -> None:
    page = context.new_page()
    page.goto(server.url + "/public.html")
    _install(page, server, ["/public.html"])
    _controlled(page, server)  # the fresh copy still asks: nothing forgotten
    assert page.evaluate("navigator.serviceWorker.getRegistrations().then((r) => r.length)") == 1
    pages.pages["/public.html"] = ({}, f"<!doctype html><title>Guide</title><p>{PUBLIC_TEXT}</p>")
    page.goto(server.url + "/public.html")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = page.evaluate(
            "Promise.all([navigator.serviceWorker.getRegistrations().then((r) => r.length),"
            " caches.keys().then((k) => k.filter((n) => n.startsWith('agentskit-ask:')).length)])"
        )
        if left == [0, 0]:
            break
        page.wait_for_timeout(100)
    assert left == [0, 0], "the worker unregistered itself and cleared its caches"
    context.set_offline(True)
    assert _offline_text(page, server.url + "/public.html") is None
