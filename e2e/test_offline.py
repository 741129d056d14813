"""The opt-in offline cache in Chromium: a real service worker on the real demo.

`offline_demo` serves a copy of dist/ whose home page opts in
(`<agentskit-ask offline="cache">`) next to the reference backend. The first
visit is online and boots; the worker (published in /agentskit/, controlling
the whole site through `Service-Worker-Allowed`) then precaches the runtime.
The backend is stopped and the browser context set offline; a reload boots from
the cache, answers an FAQ question in the page and says plainly that the
backend is offline for any other question. Without the attribute no worker is
ever registered.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from agentskit_web.server.demo_server import DemoConfig, DemoServer
from agentskit_web.server.static import StaticSite
from e2e_support import ROOT, Watch, assert_unreachable, wait_for_state
from module_record import PYODIDE_MODULE

FAQ_QUESTION = "Does it use a CDN?"
OTHER_QUESTION = "How do I rotate the bearer tokens?"
LOCAL_NOTE = "Answered from this site's FAQ."
WORKER = "/agentskit/agentskit-ask-sw.js"
STALE_CACHE = "agentskit-ask:runtime:0000000000000000"
OFFLINE_READY_MS = 120_000
SNAPSHOT_KEPT_MS = 240_000
"""How long the worker may take to boot a second interpreter and keep its snapshot."""
SITE_CSS_LOADED = """[...document.styleSheets].some(
  (sheet) => sheet.href && sheet.href.endsWith("/site.css") && sheet.cssRules.length > 0)"""
ASK_PATH = "/api/ask"
"""The one request a reader's question makes once the network is gone: the page logs its
failure at this URL (how Chromium words it differs between builds; the URL does not)."""


def _copy_site(dist: Path, target: Path) -> None:
    """dist/ with the home page opted in (hard links where the file system allows)."""

    def link_or_copy(source: str, destination: str) -> object:
        try:
            os.link(source, destination)
        except OSError:
            shutil.copy2(source, destination)
        return destination

    shutil.copytree(
        dist, target, copy_function=link_or_copy, ignore=shutil.ignore_patterns("bench")
    )
    home = target / "index.html"
    html = home.read_text(encoding="utf-8")
    opted = html.replace("<agentskit-ask ", '<agentskit-ask offline="cache" ', 1)
    assert opted != html, "the demo page has no <agentskit-ask> element"
    home.unlink()  # a hard link: never write through it into dist/
    home.write_text(opted, encoding="utf-8")


class _ServedPaths:
    """ASGI middleware: the path of every HTTP request that reached the server."""

    def __init__(self, app: Any, paths: list[str]) -> None:
        self.app = app
        self.paths = paths

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)


@pytest.fixture
def served() -> list[str]:
    return []


@pytest.fixture
def offline_demo(dist: Path, tmp_path: Path, served: list[str]) -> Iterator[DemoServer]:
    site = tmp_path / "site"
    _copy_site(dist, site)
    config = DemoConfig(dist=site, site=ROOT / "docs" / "site.json", docs=ROOT / "docs")
    server = DemoServer(config)
    server.app.add_middleware(_ServedPaths, paths=served)  # type: ignore[attr-defined]
    server.start()
    try:
        yield server
    finally:
        if server.running:
            server.stop()


def _ready(page: Page) -> None:
    wait_for_state(page, "ready")
    expect(page.locator("agentskit-ask")).to_have_attribute("data-knowledge", "ready")


def _ask(page: Page, question: str, count: int) -> Any:
    field = page.locator("agentskit-ask .ak-input")
    field.fill(question)
    field.press("Enter")
    answer = page.locator("agentskit-ask .ak-assistant").nth(count - 1)
    expect(answer).to_have_attribute("data-status", re.compile("complete|error"), timeout=30_000)
    return answer


def _cache_names(page: Page) -> list[str]:
    return list(page.evaluate("caches.keys()"))


class TestOfflineCache:
    @pytest.fixture
    def watch(self, offline_demo: DemoServer) -> Watch:
        return Watch(origin=offline_demo.url)

    @pytest.fixture
    def context(self, browser: Browser, watch: Watch) -> Iterator[BrowserContext]:
        """The conftest's guard without its abort route: Playwright turns the HTTP cache off
        in a context with any route, and this test checks that nothing is downloaded twice.
        Off-origin requests are still recorded and fail the test."""
        ctx = browser.new_context()
        ctx.unroute(PYODIDE_MODULE)  # the import recorder's route would turn the cache off too
        ctx.on("request", watch.on_request)
        try:
            yield ctx
        finally:
            ctx.close()
        assert not watch.off_origin, f"requests to other origins: {watch.off_origin}"
        assert not watch.errors, "\n".join(watch.errors)

    def test_offline_reload_boots_from_the_cache_and_answers_the_faq(
        self,
        page: Page,
        context: BrowserContext,
        watch: Watch,
        offline_demo: DemoServer,
        served: list[str],
        dist: Path,
    ) -> None:
        page.goto(offline_demo.url + "/")
        # A runtime cache left by an older build: activation must drop it.
        page.evaluate(
            "(name) => caches.open(name).then((c) => c.put('/stale', new Response('old')))",
            STALE_CACHE,
        )
        assert STALE_CACHE in _cache_names(page)
        _ready(page)
        expect(page.locator("agentskit-ask")).to_have_attribute(
            "data-offline", "ready", timeout=OFFLINE_READY_MS
        )
        scope = page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r.scope)")
        assert scope == offline_demo.url + "/", "the worker controls the whole site"
        names = _cache_names(page)
        assert STALE_CACHE not in names
        runtime_caches = [n for n in names if n.startswith("agentskit-ask:runtime:")]
        assert len(runtime_caches) == 1, names
        assert "agentskit-ask:pages" in names
        assert WORKER in served
        # The worker's precache came from the HTTP cache: the server sent each runtime
        # file once, to the loader's prefetch (Pyodide's own fetches were cache hits too).
        runtime = (
            "/agentskit/" + json.loads((dist / "agentskit" / "assets.json").read_text())["runtime"]
        )
        sent = Counter(path for path in served if path.startswith(runtime))
        assert sent, served
        assert all(count == 1 for count in sent.values()), sent

        # The network is gone: the backend stops (nothing answers at the origin) and the
        # browser is offline.
        offline_demo.stop()
        assert_unreachable(offline_demo.url + "/")
        context.set_offline(True)
        page.reload()
        assert page.evaluate("navigator.serviceWorker.controller !== null")
        _ready(page)
        assert page.evaluate(SITE_CSS_LOADED), "the page's own stylesheet came from the cache"

        local = _ask(page, FAQ_QUESTION, 1)
        expect(local).to_have_attribute("data-status", "complete")
        expect(local.locator(".ak-message-note")).to_have_text(LOCAL_NOTE)
        expect(local).to_contain_text("served by your own site")

        failed = _ask(page, OTHER_QUESTION, 2)
        expect(failed).to_have_attribute("data-status", "error")
        expect(failed.locator("[role=alert]")).to_contain_text("offline")
        watch.allow_errors_at({offline_demo.url + ASK_PATH})

    def test_offline_a_kept_boot_snapshot_restores_from_the_caches(
        self,
        page: Page,
        context: BrowserContext,
        offline_demo: DemoServer,
        watch: Watch,
        tmp_path: Path,
    ) -> None:
        """With offline="cache" and snapshot="keep", the offline worker holds the snapshot's
        module, so a reload with the network gone restores the kept interpreter."""
        home = tmp_path / "site" / "index.html"  # offline_demo's copy of dist/
        html = home.read_text(encoding="utf-8")
        home.write_text(html.replace("<agentskit-ask ", '<agentskit-ask snapshot="keep" ', 1))
        page.goto(offline_demo.url + "/")
        _ready(page)
        widget = page.locator("agentskit-ask")
        expect(widget).to_have_attribute("data-offline", "ready", timeout=OFFLINE_READY_MS)
        expect(widget).to_have_attribute("data-snapshot", "kept", timeout=SNAPSHOT_KEPT_MS)

        offline_demo.stop()
        assert_unreachable(offline_demo.url + "/")
        context.set_offline(True)
        page.reload()
        _ready(page)
        expect(page.locator("agentskit-ask")).to_have_attribute("data-snapshot", "restored")
        local = _ask(page, FAQ_QUESTION, 1)
        expect(local).to_have_attribute("data-status", "complete")


def test_without_the_opt_in_no_service_worker_is_registered(
    page: Page, context: BrowserContext, site: StaticSite, watch: Watch
) -> None:
    page.goto(site.url + "/")
    _ready(page)
    assert page.get_attribute("agentskit-ask", "data-offline") is None
    assert page.evaluate("navigator.serviceWorker.getRegistrations().then((r) => r.length)") == 0
    assert page.evaluate("navigator.serviceWorker.controller") is None
    assert context.service_workers == []
    assert not [url for url in watch.requests if url.endswith(WORKER)]
    assert _cache_names(page) == []
