"""The MkDocs plugin and the Sphinx extension on real sites, in Chromium, next to the real backend.

Each site is built from fixtures/sites/docs/ by the generator's own command
(`mkdocs build` with the Material theme, `sphinx-build` with furo and MyST),
with the plugin or extension writing the assets folder and the embed. One
Starlette app serves the built site and `/api/ask` on one origin, the backend
indexing the same Markdown with the page paths that generator publishes
(`directory_page_path` for MkDocs, `html_page_path` for Sphinx). The journey,
in both layouts, starts on a page two folders deep: nothing of the runtime
loads before intent; a question streams; its top source opens the right page
at the right heading; a reload restores the conversation; no request leaves
the site's origin (the conftest's guard and the testing kit's `same_origin_only`).
The steps a reader takes go through the testing kit's page object (`ask_widget`,
`AskWidget`), as a site's own suite would. The MkDocs run also takes the
screenshots for docs/embedding.md (light and dark, desktop and phone).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import Page, expect

from agentskit_web.docs_text import directory_page_path, html_page_path
from agentskit_web.server.ask_app import ask_route, create_ask_endpoint
from agentskit_web.server.demo_server import demo_uvicorn_config
from agentskit_web.server.generators import ExtractiveGenerator
from agentskit_web.server.static import AppServer, create_static_app
from agentskit_web.testing import AskWidget, OriginGuard
from e2e_support import ARTIFACTS, ROOT, Watch

SITES = ROOT / "fixtures" / "sites"
DOCS = SITES / "docs"
IMAGES = ROOT / "docs" / "images"
UPDATE_DOC_IMAGES = "AGENTSKIT_UPDATE_DOC_IMAGES"  # =1: copy the docs' screenshots in
QUESTION = "How long does the lantern take to charge the battery?"
ANCHOR = "charge-the-battery"
STREAM_PACE_SECONDS = 0.02
SHADOW_STREAMING = """() => {
  const root = document.querySelector('agentskit-ask').shadowRoot;
  const body = root && root.querySelector('.ak-assistant[data-status=streaming] .ak-body');
  if (!body || body.querySelector('.ak-thinking')) return null;
  return body.textContent.trim().length || null;
}"""
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@dataclass(frozen=True)
class Generator:
    """How one generator builds the fixture site and where it publishes pages."""

    name: str
    page_path: Callable[[PurePosixPath], str]

    def build(self, out: Path, layout: str) -> None:
        if self.name == "mkdocs":
            config = (SITES / "mkdocs" / "mkdocs.yml").read_text(encoding="utf-8")
            config = config.replace("docs_dir: ../docs", f"docs_dir: {DOCS}")
            config = config.replace("layout: inline", f"layout: {layout}")
            written = out.parent / f"mkdocs-{layout}.yml"
            written.write_text(config, encoding="utf-8")
            command = ["-m", "mkdocs", "build", "--strict", "-f", str(written), "-d", str(out)]
        else:
            command = ["-m", "sphinx", "-W", "-q", "-b", "html", "-c", str(SITES / "sphinx")]
            command += ["-D", f"agentskit_ask_layout={layout}", str(DOCS), str(out)]
        done = subprocess.run(
            [sys.executable, *command], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{self.name} build failed:\n{done.stdout}\n{done.stderr}"


GENERATORS = {
    "mkdocs": Generator("mkdocs", directory_page_path),
    "sphinx": Generator("sphinx", html_page_path),
}


@dataclass
class Served:
    """A built site and its backend on one origin."""

    generator: Generator
    layout: str
    root: Path
    server: AppServer

    @property
    def url(self) -> str:
        return self.server.url

    def page_url(self, relative: str) -> str:
        return self.url + self.generator.page_path(PurePosixPath(relative))


@pytest.fixture(scope="module")
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name, layout = request.param
    generator = GENERATORS[name]
    out = tmp_path_factory.mktemp(f"{name}-{layout}") / "site"
    generator.build(out, layout)
    endpoint = create_ask_endpoint(
        DOCS / "site.json",
        DOCS,
        page_path=generator.page_path,
        docs_exclude=["contents.md"],
        generator=ExtractiveGenerator(pace_seconds=STREAM_PACE_SECONDS),
    )
    app = create_static_app(out, routes=[ask_route(endpoint)])
    server = AppServer(app, settings=demo_uvicorn_config).start()
    try:
        yield Served(generator, layout, out, server)
    finally:
        server.stop()


@pytest.fixture
def watch(served: Served) -> Watch:
    """The conftest's request/console guard, on the served site's origin."""
    return Watch(origin=served.url)


def _open(page: Page, layout: str) -> AskWidget:
    """The kit's open(): inline, a click into the box; launcher, the button opens the dialog."""
    widget = AskWidget(page).open()
    if layout == "launcher":
        expect(page.locator("agentskit-ask dialog.ak-dialog")).to_be_visible()
    expect(page.locator("agentskit-ask .ak-input")).to_be_visible()
    return widget


def _runtime_requests(watch: Watch) -> list[str]:
    return [url for url in watch.requests if "/runtime." in url or url.endswith(".wasm")]


def _answered(page: Page, served: Served) -> AskWidget:
    """Open a page two folders deep, reach for the box, ask; the answer is complete with sources."""
    page.goto(served.page_url("guide/care/cleaning.md"))
    widget = _open(page, served.layout)
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    assert widget.sources, "the answer has no sources"
    return widget


CASES = [(name, layout) for name in GENERATORS for layout in ("inline", "launcher")]


@pytest.mark.parametrize("served", CASES, indirect=True, ids=["-".join(c) for c in CASES])
def test_the_site_journey_intent_stream_cite_reload(
    page: Page,
    watch: Watch,
    served: Served,
    ask_widget: AskWidget,
    same_origin_only: OriginGuard,
) -> None:
    # 0. A page two folders deep loads the loader (relative to the page) and nothing else.
    start = served.page_url("guide/care/cleaning.md")
    page.goto(start)
    loader = page.locator("script[type=module][src$='agentskit-ask.js']")
    expect(loader).to_have_count(1)
    assert loader.evaluate("(s) => s.src") == served.url + "/agentskit/agentskit-ask.js"
    host = page.locator("agentskit-ask")
    expect(host).to_have_attribute("data-state", "idle")
    expect(host).to_have_attribute("layout", served.layout)
    page.wait_for_load_state("networkidle")
    assert _runtime_requests(watch) == [], "the runtime loaded before anyone showed intent"
    if served.layout == "launcher":
        expect(page.locator("agentskit-ask .ak-launcher")).to_be_visible()
        expect(page.locator("agentskit-ask dialog.ak-dialog")).to_be_hidden()

    # 1. Reaching for the box boots the runtime; a question streams (text before the end).
    ask_widget.open()
    assert ask_widget.state == "ready"
    assert _runtime_requests(watch), "intent did not load the runtime"
    if served.layout == "launcher":
        expect(page.locator("agentskit-ask dialog.ak-dialog")).to_be_visible()
    ask_widget.ask(QUESTION)
    early = int(
        page.wait_for_function(SHADOW_STREAMING, polling="raf", timeout=30_000).json_value()
    )
    assert ask_widget.wait_answer() == "complete"
    final = ask_widget.answer_text
    assert 0 < early < len(final), "the answer arrived in one piece"
    assert "ninety minutes" in final

    # 2. The top source is the published page and heading the answer quotes.
    href = ask_widget.sources[0].href
    assert href == served.page_url("guide/setup/charging.md") + f"#{ANCHOR}", href
    link = page.locator("agentskit-ask .ak-assistant").last.locator(".ak-source-link").first

    # 3. Following it opens that page at that heading, in the same tab (the default: a new
    # tab would start another runtime), where the conversation is too.
    link.click()
    page.wait_for_url(href)
    docs_page = page
    docs_page.wait_for_load_state()
    target = docs_page.locator(f"[id='{unquote(urlsplit(href).fragment)}']")
    expect(target).to_have_count(1)
    expect(target).to_contain_text("Charge the battery")
    top = target.evaluate("(el) => el.getBoundingClientRect().top")
    assert -1 < top < docs_page.viewport_size["height"], "the heading is on screen"
    there = _open(docs_page, served.layout)
    assert [m.role for m in there.messages] == ["user", "assistant"]

    # 4. A reload restores the conversation, its source included.
    docs_page.reload()
    there = _open(docs_page, served.layout)
    assert [m.role for m in there.messages] == ["user", "assistant"]
    assert [s.href for s in there.sources][:1] == [href]
    assert watch.off_origin == [] and same_origin_only.off_origin == [], "a request left"


SHOTS = [("mkdocs", "inline"), ("mkdocs", "launcher")]


@pytest.mark.parametrize("served", SHOTS, indirect=True, ids=["-".join(c) for c in SHOTS])
def test_screenshots_on_the_mkdocs_site(page: Page, served: Served) -> None:
    """Light and dark, desktop and phone, an answer and its sources on screen; also for the docs."""
    ARTIFACTS.mkdir(exist_ok=True)
    _answered(page, served)
    for scheme in ("light", "dark"):
        for size_name, size in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            page.emulate_media(color_scheme=scheme)
            page.reload()
            _open(page, served.layout)
            sources = page.locator("agentskit-ask .ak-source-list").last
            # The sources in the middle of the screen (the page and the log both scroll).
            sources.evaluate("(el) => el.scrollIntoView({block: 'center'})")
            expect(sources).to_be_in_viewport()
            _check_layout(page, served.layout, scheme)
            path = ARTIFACTS / f"mkdocs-{served.layout}-{size_name}-{scheme}.png"
            page.screenshot(path=str(path), animations="disabled")
            # The docs' pictures change only on request, so a test run leaves the tree clean.
            docs_shot = (served.layout, size_name) in (("inline", "desktop"), ("launcher", "phone"))
            if docs_shot and os.environ.get(UPDATE_DOC_IMAGES) == "1":
                IMAGES.mkdir(exist_ok=True)
                shutil.copyfile(path, IMAGES / path.name)


def _check_layout(page: Page, layout: str, scheme: str) -> None:
    """What a screenshot can get wrong, measured: overflow, the theme followed, the button."""
    width = page.viewport_size["width"]
    box = page.locator("agentskit-ask .ak-box").first.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, box
    scroll = page.evaluate("() => document.documentElement.scrollWidth")
    assert scroll <= width, f"the page scrolls sideways ({scroll} > {width})"
    dark = page.locator("agentskit-ask").evaluate(
        "(el) => matchMedia('(prefers-color-scheme: dark)').matches"
    )
    assert dark == (scheme == "dark")
    # The site itself follows the scheme too (Material's palette), as the widget does.
    site_scheme = page.evaluate("() => document.body.getAttribute('data-md-color-scheme')")
    assert site_scheme == ("slate" if scheme == "dark" else "default")
    # The widget's text is the page's size (site-theme="material", from its own stylesheet).
    sizes = page.evaluate(
        "() => [getComputedStyle(document.querySelector('agentskit-ask')).fontSize,"
        " getComputedStyle(document.querySelector('.md-typeset')).fontSize]"
    )
    assert sizes[0] == sizes[1], sizes
    if layout == "launcher":
        button = page.locator("agentskit-ask .ak-launcher").bounding_box()
        assert button is not None
        assert button["x"] + button["width"] <= width, "the launcher button is cut off"
