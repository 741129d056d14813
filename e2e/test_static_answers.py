"""Static answers in Chromium: real MkDocs and Sphinx sites, a plain static file server.

Each site is built from fixtures/sites/docs/ by the generator's own command with
the plugin or extension and no `endpoint`, so the build writes the split static
index beside the assets and the loader knows its manifest. The sites are served
by `http.server` as any static host would serve them (no header policy of ours,
no Ask backend: every POST gets 405). A reader's question is answered in the
page, with sources whose links open the right page at the right heading, and no
request leaves the origin. With `offline="cache"`, a reload with the network cut
still answers a question whose index parts the first answer fetched, and a
question needing a part never fetched gets its note. With an `endpoint` whose
backend is down (a 502 from the proxy, or no connection at all), the index
answers with its note; a backend's 429 keeps the rate-limit UI.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from agentskit_web.answering.decline import CLOSEST_MESSAGE
from agentskit_web.answering.static_index import StaticSearch
from agentskit_web.testing import AskWidget
from e2e_support import BackgroundServer, Watch, assert_unreachable, failed_at, wait_for_state
from module_record import PYODIDE_MODULE

ROOT = Path(__file__).resolve().parent.parent
SITES = ROOT / "fixtures" / "sites"
DOCS = SITES / "docs"
QUESTION = "How long does the lantern take to charge the battery?"
NEAR_MISS = "Will a solar panel charge the battery?"
"""Shares "charge" and "battery" with the charging page, which does not answer it."""
ANCHOR = "charge-the-battery"
STATIC_NOTE = "Answered in your browser from this site's pages."
FALLBACK_NOTE = (
    "The answer service could not be reached: answered in your browser from this site's pages."
)
UNREACHABLE = "has not stored, and the site cannot be reached"
RATE_LIMITED_TEXT = "Too many questions in a short time."
STRICT_POLICY = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'"
)
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""
INDEX_PATH = "/agentskit/index/"
OFFLINE_READY_MS = 120_000


# -------------------------------------------------------------------- the sites


def build_site(generator: str, out: Path, endpoint: str | None, docs: Path = DOCS) -> Path:
    """The fixture site built by `generator` with the plugin, `endpoint` or none."""
    work = out.parent
    if generator == "mkdocs":
        config = (SITES / "mkdocs" / "mkdocs.yml").read_text(encoding="utf-8")
        config = config.replace("docs_dir: ../docs", f"docs_dir: {docs}")
        config = re.sub(r"\n\s+endpoint: /api/ask", "", config)
        if endpoint is not None:
            config = config.replace("      layout:", f"      endpoint: {endpoint}\n      layout:")
        written = work / "mkdocs.yml"
        written.write_text(config, encoding="utf-8")
        command = ["-m", "mkdocs", "build", "--strict", "-f", str(written), "-d", str(out)]
    else:
        conf = (SITES / "sphinx" / "conf.py").read_text(encoding="utf-8")
        conf = re.sub(r'\nagentskit_ask_endpoint = "/api/ask"[^\n]*', "", conf)
        if endpoint is not None:
            conf += f"\nagentskit_ask_endpoint = {endpoint!r}\n"
        confdir = work / "sphinx-conf"
        confdir.mkdir(exist_ok=True)
        (confdir / "conf.py").write_text(conf, encoding="utf-8")
        command = [
            "-m",
            "sphinx",
            "-W",
            "-q",
            "-b",
            "html",
            "-c",
            str(confdir),
            str(DOCS),
            str(out),
        ]
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{generator} build failed:\n{done.stdout}\n{done.stderr}"
    return out


def page_path(generator: str, relative: str) -> str:
    """Where each generator publishes `guide/setup/charging.md`."""
    stem = relative.removesuffix(".md")
    return f"/{stem}/" if generator == "mkdocs" else f"/{stem}.html"


HELD_MAX_S = 60
"""The longest a held response waits before the server gives up on the test."""


@dataclass
class Host:
    """What the plain server saw and how it answers POSTs (405 by default)."""

    root: Path
    post_status: int = 405
    post_body: bytes = b""
    post_headers: dict[str, str] = field(default_factory=dict)
    policy: str | None = None
    paths: list[str] = field(default_factory=list)
    posts: list[str] = field(default_factory=list)
    fallback: set[str] = field(default_factory=set)
    """Paths answered as a single-page app's host answers a missing file during a deploy:
    200 and its HTML shell."""
    parts_open: threading.Event = field(default_factory=threading.Event)
    """Index parts (not manifests) are answered once this is set: a slow network, held."""
    worker_open: threading.Event = field(default_factory=threading.Event)
    """The offline service worker's script is answered once this is set."""

    def __post_init__(self) -> None:
        self.parts_open.set()
        self.worker_open.set()


SPA_SHELL = b"<!doctype html><html><head><title>Docs</title></head><body><div id=app></div>"


def plain_handler(host: Host) -> type[http.server.SimpleHTTPRequestHandler]:
    class Plain(http.server.SimpleHTTPRequestHandler):
        """A static file host as GitHub Pages or an S3 bucket is: files, no backend."""

        protocol_version = "HTTP/1.1"

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(host.root), **kwargs)

        def end_headers(self) -> None:
            if host.policy is not None:
                self.send_header("Content-Security-Policy", host.policy)
            if self.path.split("?", 1)[0].endswith("/agentskit-ask-sw.js"):
                # What docs/embedding.md asks of any host for a site-wide offline scope.
                self.send_header("Service-Worker-Allowed", "/")
            super().end_headers()

        def do_GET(self) -> None:
            host.paths.append(self.path)
            if self.path.startswith(INDEX_PATH) and not MANIFEST_PATH.search(self.path):
                assert host.parts_open.wait(HELD_MAX_S), "a held part was never let go"
            if self.path.split("?", 1)[0].endswith("/agentskit-ask-sw.js"):
                assert host.worker_open.wait(HELD_MAX_S), "the held worker was never let go"
            if self.path in host.fallback:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(SPA_SHELL)))
                self.end_headers()
                self.wfile.write(SPA_SHELL)
                return
            super().do_GET()

        def do_POST(self) -> None:
            host.posts.append(self.path)
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            self.send_response(host.post_status)
            for name, value in host.post_headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(host.post_body)))
            self.end_headers()
            self.wfile.write(host.post_body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Plain


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str | None], Path]:
    """Each site once per module: (generator, endpoint) -> the built folder."""
    sites: dict[tuple[str, str | None], Path] = {}
    for generator, endpoint in (("mkdocs", None), ("sphinx", None), ("mkdocs", "/api/ask")):
        out = tmp_path_factory.mktemp(f"{generator}-{'backend' if endpoint else 'static'}")
        sites[(generator, endpoint)] = build_site(generator, out / "site", endpoint)
    return sites


EXTRA_PAGES = 40
EXTRA_WORDS_PER_PAGE = 60


def extra_word(number: int) -> str:
    """`xyaaa`, `xyaab`, ...: words no fixture page uses, sorted after all of theirs."""
    letters = ""
    for _ in range(3):
        number, rest = divmod(number, 26)
        letters = chr(ord("a") + rest) + letters
    return "xy" + letters


# The last glossary word: its term and word parts come last, far from the lantern's words.
OTHER_QUESTION = f"What does {extra_word(EXTRA_PAGES * EXTRA_WORDS_PER_PAGE - 1)} mean?"


def larger_docs(target: Path) -> Path:
    """The fixture docs plus pages of words of their own, so the index splits into several
    term and word parts and a question about them needs parts the lantern's question did
    not fetch."""
    shutil.copytree(DOCS, target)
    folder = target / "glossary"
    folder.mkdir()
    for page in range(EXTRA_PAGES):
        words = [extra_word(page * EXTRA_WORDS_PER_PAGE + n) for n in range(EXTRA_WORDS_PER_PAGE)]
        text = f"# Glossary {page}\n\n## Terms {page}\n\n" + " ".join(words) + ".\n"
        (folder / f"g{page}.md").write_text(text, encoding="utf-8")
    return target


@pytest.fixture
def host(
    request: pytest.FixtureRequest,
    built: dict[tuple[str, str | None], Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Host:
    generator, endpoint = request.param
    if endpoint == "larger":
        work = tmp_path_factory.mktemp("mkdocs-larger")
        return Host(build_site(generator, work / "site", None, larger_docs(work / "docs")))
    return Host(built[(generator, endpoint)])


@pytest.fixture
def server(host: Host) -> Iterator[BackgroundServer]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), plain_handler(host))
    with BackgroundServer(httpd, "plain-site") as running:
        yield running


@pytest.fixture
def watch(server: BackgroundServer) -> Watch:
    return Watch(origin=server.url)


def index_requests(host: Host) -> list[str]:
    return [path for path in host.paths if path.startswith(INDEX_PATH)]


def held_parts(host: Host) -> list[str]:
    """The index parts (not manifests) the page has asked the host for."""
    return [path for path in index_requests(host) if not MANIFEST_PATH.search(path)]


def source_hrefs(page: Page) -> list[str]:
    links = page.locator("agentskit-ask .ak-assistant .ak-source-link")
    return list(links.evaluate_all("(links) => links.map((a) => a.href)"))


def assert_link_resolves(page: Page, href: str) -> None:
    """The source opens: the page exists and holds the anchor's id."""
    parts = urlsplit(href)
    page.goto("about:blank")  # a new document each time, not a jump within the last one
    response = page.goto(href)
    assert response is not None and response.status == 200, href
    if parts.fragment:
        assert page.locator(f"[id='{parts.fragment}']").count() == 1, href


# -------------------------------------------------------------------- no server needed

STATIC = [("mkdocs", None), ("sphinx", None)]


@pytest.mark.parametrize("host", STATIC, indirect=True, ids=["mkdocs", "sphinx"])
def test_a_static_site_answers_in_the_page_with_sources_that_resolve(
    page: Page, host: Host, server: BackgroundServer, watch: Watch
) -> None:
    generator = "mkdocs" if (host.root / "sitemap.xml").exists() else "sphinx"
    page.goto(server.url + page_path(generator, "guide/care/cleaning.md"))
    widget_host = page.locator("agentskit-ask")
    expect(widget_host).to_have_attribute("data-answers", "static")  # before any boot
    page.wait_for_load_state("networkidle")
    assert index_requests(host) == [], "the index was fetched before anyone showed intent"

    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    expect(widget_host).to_have_attribute("data-answers", "static")
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator(".ak-message-note")).to_have_text(STATIC_NOTE)
    assert "ninety" in widget.answer_text
    fetched = index_requests(host)
    # Every file is named by a hash: the manifest by its own, a part by its kind's tree
    # root and its number (immutable names, cached forever).
    hashed = re.compile(r"\.[0-9a-f]{12,64}(?:-\d+)?\.json$")
    assert fetched and all(hashed.search(path) for path in fetched), fetched
    assert host.posts == [], "a static answer sent a request to a backend"

    hrefs = source_hrefs(page)
    assert hrefs, "the answer has no sources"
    top = urlsplit(hrefs[0])
    assert top.path == page_path(generator, "guide/setup/charging.md") and top.fragment == ANCHOR
    for href in hrefs:
        assert href.startswith(server.url + "/"), href
        assert_link_resolves(page, href)


@pytest.mark.parametrize("host", [("mkdocs", None)], indirect=True, ids=["mkdocs"])
def test_a_loader_whose_index_path_leaves_its_folder_uses_no_index(
    page: Page, host: Host, server: BackgroundServer
) -> None:
    """A loader whose static-index path names another host (`//host/x`, which the build
    refuses to write) uses no index: nothing would be fetched from that host."""
    loader = host.root / "agentskit" / "agentskit-ask.js"
    text = loader.read_text(encoding="utf-8")
    planted = re.sub(
        r'/\* agentskit:static-index \*/ "[^"]*"',
        '/* agentskit:static-index */ "//evil.example/agentskit-static.0123456789abcdef.json"',
        text,
    )
    assert planted != text
    loader.write_text(planted, encoding="utf-8")
    try:
        page.goto(server.url + "/")
        page.wait_for_function("globalThis.agentskitAsk !== undefined")
        assert page.evaluate("globalThis.agentskitAsk.staticIndex") is None
        expect(page.locator("agentskit-ask")).to_have_attribute("data-answers", "backend")
    finally:
        loader.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("host", STATIC, indirect=True, ids=["mkdocs", "sphinx"])
def test_a_near_miss_says_so_and_shows_the_closest_sections_that_resolve(
    page: Page, host: Host, server: BackgroundServer
) -> None:
    generator = "mkdocs" if (host.root / "sitemap.xml").exists() else "sphinx"
    page.goto(server.url + "/")
    widget = AskWidget(page).open()
    widget.ask(NEAR_MISS)
    assert widget.wait_answer() == "complete"
    assert widget.answer_text.strip() == CLOSEST_MESSAGE
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator(".ak-message-notfound")).to_have_count(0)
    expect(answer.locator("blockquote")).to_have_count(0)  # nothing is quoted
    hrefs = source_hrefs(page)
    top = urlsplit(hrefs[0])
    assert top.path == page_path(generator, "guide/setup/charging.md") and top.fragment == ANCHOR
    for href in hrefs:
        assert_link_resolves(page, href)
    assert host.posts == []


@pytest.mark.parametrize("host", [("mkdocs", None)], indirect=True, ids=["mkdocs"])
def test_a_question_the_docs_do_not_answer_is_declined_as_the_backend_declines(
    page: Page, host: Host, server: BackgroundServer
) -> None:
    page.goto(server.url + "/")
    widget = AskWidget(page).open()
    widget.ask("What is the airspeed velocity of an unladen swallow?")
    assert widget.wait_answer() == "complete"
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator(".ak-message-notfound")).to_contain_text("No passage")
    assert host.posts == []


@pytest.mark.parametrize("host", [("mkdocs", None)], indirect=True, ids=["mkdocs"])
def test_static_answers_run_under_the_strict_policy(
    page: Page, context: BrowserContext, host: Host, server: BackgroundServer
) -> None:
    """A plain page of the site (the themes' own inline scripts aside) under the strict CSP."""
    plain = host.root / "plain" / "index.html"
    plain.parent.mkdir(exist_ok=True)
    plain.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plain</title>'
        '<script type="module" src="../agentskit/agentskit-ask.js"></script></head>'
        "<body><main><h1>Plain</h1><agentskit-ask></agentskit-ask></main></body></html>",
        encoding="utf-8",
    )
    host.policy = STRICT_POLICY
    context.add_init_script(RECORD_VIOLATIONS)
    response = page.goto(server.url + "/plain/")
    assert response is not None and response.headers["content-security-policy"] == STRICT_POLICY
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    assert widget.sources
    assert page.evaluate("window.__cspViolations") == []


# -------------------------------------------------------------------- offline


KEPT_PARTS_TIMEOUT_MS = 15_000
"""How long the worker may take to store the parts an answer fetched."""


def kept_parts_within(page: Page, wanted: list[str], timeout_ms: int) -> list[str]:
    """The paths in the worker's index cache once they are ``wanted``, or as last seen.

    Polled from Python, each read awaited in the page: the cache fills from two paths (the
    keep message and the worker's own fetches), so one read is not enough, and the caller's
    assertion then names what was missing rather than a timeout.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        got: list[str] = page.evaluate(
            """() => caches.open('agentskit-ask:index').then((c) => c.keys()).then(
                (keys) => keys.map((k) => new URL(k.url).pathname).sort())"""
        )
        if sorted(got) == wanted or time.monotonic() >= deadline:
            return got
        page.wait_for_timeout(100)


MANIFEST_PATH = re.compile(r"/agentskit-static\.[0-9a-f]+\.json$")
"""A manifest's path (a part's name holds its kind before the hash)."""


def answered_and_kept(page: Page, host: Host, server: BackgroundServer, watch: Watch) -> list[str]:
    """The home page opted in to the offline cache, one question answered, and the paths of
    the index files it fetched once the worker has kept them all (asserted)."""
    home = host.root / "index.html"
    html = home.read_text(encoding="utf-8")
    opted = html.replace("<agentskit-ask ", '<agentskit-ask offline="cache" ', 1)
    assert opted != html
    home.write_text(opted, encoding="utf-8")
    page.on("console", watch.on_console)
    page.on("pageerror", watch.on_page_error)
    page.goto(server.url + "/")
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    expect(page.locator("agentskit-ask")).to_have_attribute(
        "data-offline", "ready", timeout=OFFLINE_READY_MS
    )
    # Parts fetched before the worker controlled the page are handed to it with the keep
    # message, the others as they pass through it: wait (bounded) until both have landed.
    fetched = sorted(set(index_requests(host)))
    cached = kept_parts_within(page, fetched, KEPT_PARTS_TIMEOUT_MS)
    assert sorted(cached) == fetched, "the fetched parts are kept"
    return cached


class TestOffline:
    @pytest.fixture
    def context(self, browser: Browser, watch: Watch) -> Iterator[BrowserContext]:
        """No route (Playwright turns the HTTP cache off with one); off-origin requests are
        still recorded and fail the test, and a service worker is expected here."""
        ctx = browser.new_context()
        ctx.unroute(PYODIDE_MODULE)
        ctx.on("request", watch.on_request)
        try:
            yield ctx
        finally:
            ctx.close()
        assert not watch.off_origin, f"requests to other origins: {watch.off_origin}"
        assert not watch.errors, "\n".join(watch.errors)

    @pytest.mark.parametrize("host", [("mkdocs", "larger")], indirect=True, ids=["mkdocs"])
    def test_a_reload_offline_answers_from_the_parts_already_fetched(
        self,
        page: Page,
        context: BrowserContext,
        host: Host,
        server: BackgroundServer,
        watch: Watch,
    ) -> None:
        cached = answered_and_kept(page, host, server, watch)
        # What the other question needs first is not among them (the engine says so).
        manifest = next(p for p in cached if MANIFEST_PATH.search(p))
        search = StaticSearch((host.root / manifest.lstrip("/")).read_bytes())
        needed_names = search.parts_for(OTHER_QUESTION, 4)
        needed = {INDEX_PATH + name for name in needed_names}
        assert needed - set(cached), "the other question's parts were fetched already"

        # The network is gone: the site's server stops (nothing answers) and the browser is
        # offline; the page boots from the worker's caches.
        server.stop()
        assert_unreachable(server.url + "/")
        context.set_offline(True)
        page.reload()
        wait_for_state(page, "ready")
        widget = AskWidget(page).open()
        widget.ask(QUESTION)  # its parts were fetched (and kept) by the first answer
        assert widget.wait_answer() == "complete"
        answer = page.locator("agentskit-ask .ak-assistant").last
        expect(answer.locator(".ak-message-note")).to_have_text(STATIC_NOTE)
        assert source_hrefs(page)

        widget.ask(OTHER_QUESTION)
        assert widget.wait_answer() == "error"
        assert UNREACHABLE in (widget.answer_error or "")
        # Offline, what nothing kept fails to load: the other question's parts, and the
        # theme's own scripts (the worker keeps the pages, the loader and the stylesheets).
        theme_scripts = page.evaluate(
            "[...document.scripts].map((s) => s.src).filter((s) => s && !s.includes('/agentskit/'))"
        )
        watch.allow_errors_at(
            {server.url + INDEX_PATH + name for name in needed_names} | set(theme_scripts)
        )

    @pytest.mark.parametrize("host", [("mkdocs", "larger")], indirect=True, ids=["mkdocs"])
    def test_parts_still_on_their_way_when_the_worker_takes_over_are_kept(
        self, page: Page, host: Host, server: BackgroundServer
    ) -> None:
        """A slow network: the answer's parts are still arriving when the worker is set up
        (its keep message made, the page not yet its client). They reach neither the message
        nor the worker's own fetches, so the page hands them over as they arrive."""
        home = host.root / "index.html"
        html = home.read_text(encoding="utf-8")
        home.write_text(html.replace("<agentskit-ask ", '<agentskit-ask offline="cache" ', 1))
        host.worker_open.clear()
        host.parts_open.clear()
        try:
            page.goto(server.url + "/")
            widget = AskWidget(page).open()
            widget.ask(QUESTION)
            deadline = time.monotonic() + HELD_MAX_S / 2
            while not held_parts(host) and time.monotonic() < deadline:
                page.wait_for_timeout(50)
            held = held_parts(host)
            assert held, "the question asks for its parts"
            host.worker_open.set()  # the worker installs while the parts are on their way
            expect(page.locator("agentskit-ask")).to_have_attribute(
                "data-offline", "ready", timeout=OFFLINE_READY_MS
            )
        finally:
            host.worker_open.set()
            host.parts_open.set()
        assert widget.wait_answer() == "complete"
        fetched = sorted(set(index_requests(host)))
        kept = kept_parts_within(page, fetched, KEPT_PARTS_TIMEOUT_MS)
        assert set(held) <= set(kept), "the parts that arrived late are kept"
        assert kept == fetched

    @pytest.mark.parametrize("host", [("mkdocs", "larger")], indirect=True, ids=["mkdocs"])
    def test_a_new_build_drops_the_kept_files_of_the_builds_before_it(
        self,
        page: Page,
        context: BrowserContext,
        host: Host,
        server: BackgroundServer,
        watch: Watch,
    ) -> None:
        """A rebuild renames every part of a kind that changed: without the drop, a reader's
        cache would keep one more index per rebuild. An earlier build's files are planted in
        the cache and this build's manifest evicted from it, so the next intent fetches the
        manifest as a new build's would be fetched."""
        fetched = answered_and_kept(page, host, server, watch)
        manifest = next(p for p in fetched if MANIFEST_PATH.search(p))
        digits = re.search(r"\.([0-9a-f]+)\.json$", manifest)
        assert digits is not None
        other = "".join("0" if d != "0" else "1" for d in digits.group(1))
        earlier = [
            f"{INDEX_PATH}agentskit-static.{other}.json",
            f"{INDEX_PATH}agentskit-static.terms.{other}-0.json",
            f"{INDEX_PATH}agentskit-static.texts.{other}-3.json",
        ]
        page.evaluate(
            """async ([earlier, manifest]) => {
                const cache = await caches.open('agentskit-ask:index');
                for (const path of earlier) await cache.put(path, new Response('{}'));
                await cache.delete(manifest);
            }""",
            [earlier, manifest],
        )
        planted = kept_parts_within(page, sorted([*fetched, *earlier]), 0)
        assert set(earlier) <= set(planted) and manifest not in planted

        page.reload()  # a returning reader: the glance shows, Python boots on intent (open)
        widget = AskWidget(page).open()
        widget.ask(QUESTION)
        assert widget.wait_answer() == "complete"
        kept = kept_parts_within(page, fetched, KEPT_PARTS_TIMEOUT_MS)
        assert not set(earlier) & set(kept), "an earlier build's files are dropped"
        assert set(fetched) <= set(kept), "this build's files are all kept"

    @pytest.mark.parametrize("host", [("mkdocs", "larger")], indirect=True, ids=["mkdocs"])
    def test_a_part_answered_with_html_during_a_deploy_is_fetched_again_after_it(
        self,
        page: Page,
        context: BrowserContext,
        host: Host,
        server: BackgroundServer,
        watch: Watch,
    ) -> None:
        """A host answering a part with 200 + its HTML shell while a deploy is under way:
        the worker keeps no such file, the reader is told to ask again (not to rebuild),
        and once the host answers the right part, online reloads answer again."""
        cached = answered_and_kept(page, host, server, watch)
        manifest = next(p for p in cached if MANIFEST_PATH.search(p))
        search = StaticSearch((host.root / manifest.lstrip("/")).read_bytes())
        needed = sorted({INDEX_PATH + n for n in search.parts_for(OTHER_QUESTION, 4)} - set(cached))
        assert needed, "the other question needs a part not fetched yet"
        part = needed[0]
        host.fallback.add(part)

        page.reload()
        widget = AskWidget(page).open()
        widget.ask(OTHER_QUESTION)
        assert widget.wait_answer() == "error"
        assert "Ask again in a moment" in (widget.answer_error or "")
        assert part not in kept_parts_within(page, [], 0), "an HTML shell is never kept"
        assert host.paths.count(part) >= 2, "fetched once more past the HTTP cache"

        host.fallback.clear()  # the deploy is done
        for _reload in range(2):
            page.reload()
            widget = AskWidget(page).open()
            widget.ask(OTHER_QUESTION)
            assert widget.wait_answer() == "complete"
        kept = kept_parts_within(page, sorted({*cached, *needed}), KEPT_PARTS_TIMEOUT_MS)
        assert part in kept
        stored = page.evaluate(
            """async (path) => {
                const response = await (await caches.open('agentskit-ask:index')).match(path);
                return response ? new Uint8Array(await response.arrayBuffer()).length : -1;
            }""",
            part,
        )
        assert stored == (host.root / part.lstrip("/")).stat().st_size

    @pytest.mark.parametrize("host", [("mkdocs", "larger")], indirect=True, ids=["mkdocs"])
    def test_a_kept_part_that_fails_its_proof_is_dropped_and_fetched_again(
        self,
        page: Page,
        context: BrowserContext,
        host: Host,
        server: BackgroundServer,
        watch: Watch,
    ) -> None:
        """A kept part and the kept manifest replaced by an HTML shell (as an earlier worker
        kept a deploy's fallback): each is dropped, fetched once more, and the answer comes."""
        cached = answered_and_kept(page, host, server, watch)
        manifest = next(p for p in cached if MANIFEST_PATH.search(p))
        part = next(p for p in cached if not MANIFEST_PATH.search(p))
        page.evaluate(
            """async (paths) => {
                const cache = await caches.open('agentskit-ask:index');
                for (const path of paths) {
                    const headers = { 'content-type': 'text/html' };
                    await cache.put(path, new Response('<!doctype html><p>app</p>', { headers }));
                }
            }""",
            [manifest, part],
        )
        page.reload()
        widget = AskWidget(page).open()
        widget.ask(QUESTION)
        assert widget.wait_answer() == "complete"
        for path in (manifest, part):
            size = page.evaluate(
                """async (path) => {
                    const cache = await caches.open('agentskit-ask:index');
                    const response = await cache.match(path);
                    return response ? (await response.arrayBuffer()).byteLength : -1;
                }""",
                path,
            )
            assert size == (host.root / path.lstrip("/")).stat().st_size, path


# -------------------------------------------------------------------- backend configured

BACKEND = [("mkdocs", "/api/ask")]


@pytest.mark.console_error_expected(failed_at("/api/ask"))
@pytest.mark.parametrize("host", BACKEND, indirect=True, ids=["mkdocs"])
def test_backend_down_behind_its_proxy_the_index_answers_with_its_note(
    page: Page, host: Host, server: BackgroundServer
) -> None:
    host.post_status = 502  # the reverse proxy's answer when the backend is down
    page.goto(server.url + "/")
    expect(page.locator("agentskit-ask")).to_have_attribute("data-answers", "backend")
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator(".ak-message-note")).to_have_text(FALLBACK_NOTE)
    assert [urlsplit(path).path for path in host.posts] == ["/api/ask"]
    assert index_requests(host), "the index was not asked"
    assert urlsplit(source_hrefs(page)[0]).fragment == ANCHOR


@pytest.mark.console_error_expected(failed_at("/api/ask"))
@pytest.mark.parametrize("host", BACKEND, indirect=True, ids=["mkdocs"])
def test_backend_unreachable_the_index_answers_with_its_note(
    page: Page, context: BrowserContext, host: Host, server: BackgroundServer
) -> None:
    context.route(
        lambda url: urlsplit(url).path == "/api/ask",
        lambda route: route.abort("connectionrefused"),
    )
    page.goto(server.url + "/")
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator(".ak-message-note")).to_have_text(FALLBACK_NOTE)
    assert host.posts == []


@pytest.mark.console_error_expected(failed_at("/api/ask"))
@pytest.mark.parametrize("host", BACKEND, indirect=True, ids=["mkdocs"])
def test_a_rate_limited_backend_keeps_the_429_ui(
    page: Page, host: Host, server: BackgroundServer
) -> None:
    host.post_status = 429
    host.post_headers = {"Content-Type": "application/json", "Retry-After": "30"}
    host.post_body = json.dumps(
        {"error": {"code": "ASK_RATE_LIMITED", "message": "Slow down.", "retryable": True}}
    ).encode()
    page.goto(server.url + "/")
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "error"
    limited = page.locator("agentskit-ask .ak-assistant").last
    expect(limited.locator("[role=alert] p")).to_have_text(RATE_LIMITED_TEXT)
    retry = limited.locator(".ak-retry-answer")
    expect(retry).to_be_disabled()
    expect(retry).to_have_text(re.compile(r"^Retry in [1-9]\d* s$"))
    assert index_requests(host) == [], "a 4xx is the backend's answer: the index is not asked"
    expect(limited.locator(".ak-message-note")).to_have_count(0)


# -------------------------------------------------------------------- screenshots

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
IMAGES = ROOT / "docs" / "images"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
UPDATE_DOC_IMAGES = "AGENTSKIT_UPDATE_DOC_IMAGES"  # =1: copy the docs' screenshots in


@pytest.mark.parametrize("host", [("mkdocs", None)], indirect=True, ids=["mkdocs"])
def test_screenshots_of_a_static_answer(page: Page, host: Host, server: BackgroundServer) -> None:
    """Light and dark, desktop and phone: the answer, its sources and the static note on
    screen, nothing wider than the page; also the docs' pictures on request."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(server.url + page_path("mkdocs", "guide/care/cleaning.md"))
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    for scheme in ("light", "dark"):
        for size_name, size in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            page.emulate_media(color_scheme=scheme)
            page.reload()
            AskWidget(page).open()
            note = page.locator("agentskit-ask .ak-message-note").last
            expect(note).to_have_text(STATIC_NOTE)  # the restored answer keeps its note
            note.evaluate("(el) => el.scrollIntoView({block: 'center'})")
            expect(note).to_be_in_viewport()
            width = page.viewport_size["width"] if page.viewport_size else size["width"]
            box = page.locator("agentskit-ask .ak-box").first.bounding_box()
            assert box is not None and box["x"] + box["width"] <= width + 0.5, box
            assert page.evaluate("() => document.documentElement.scrollWidth") <= width
            path = ARTIFACTS / f"static-{size_name}-{scheme}.png"
            page.screenshot(path=str(path), animations="disabled")
            if os.environ.get(UPDATE_DOC_IMAGES) == "1":
                IMAGES.mkdir(exist_ok=True)
                shutil.copyfile(path, IMAGES / path.name)
