"""`agentskit-web preview` on a site built for static answers: the site and its backend.

The fixture site is built by MkDocs with the plugin and no `endpoint`, as a
docs owner on a static host builds it: its pages answer by themselves from the
split index. `preview` is described as the site and its backend, so by default
it sends each page with the element wired to its own Ask endpoint: the
reader's question is a POST to the preview, and the answer says it is the
backend's (`data-answers="backend"`, no "Answered in your browser" note).
`--static-answers` (`static_answers=True`, what the flag sets) sends the pages
as built: the same question is answered in the page, with no POST at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

from agentskit_web.cli.preview import preview_config
from agentskit_web.server.ask_app import DEFAULT_PATH
from agentskit_web.server.preview import PreviewServer
from agentskit_web.testing import AskWidget
from e2e_support import Watch
from test_static_answers import QUESTION, STATIC_NOTE, build_site


@pytest.fixture(scope="module")
def static_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mkdocs-static") / "site"
    return build_site("mkdocs", out, None)


def running_preview(site: Path, static_answers: bool) -> Iterator[PreviewServer]:
    with preview_config(site, static_answers=static_answers) as config:
        config.pace_seconds = 0.0
        with PreviewServer(config) as server:
            yield server


@pytest.fixture
def backend_preview(static_site: Path) -> Iterator[PreviewServer]:
    yield from running_preview(static_site, static_answers=False)


@pytest.fixture
def static_preview(static_site: Path) -> Iterator[PreviewServer]:
    yield from running_preview(static_site, static_answers=True)


@pytest.fixture
def watch(request: pytest.FixtureRequest) -> Watch:
    """The conftest's request/console guard, on the origin of the test's preview."""
    name = "static_preview" if "static_preview" in request.fixturenames else "backend_preview"
    return Watch(origin=request.getfixturevalue(name).url)


def ask_counting_posts(page: Page, preview: PreviewServer, answers: str) -> list[str]:
    """Open a nested page, check which path answers, ask; the POSTs to the Ask endpoint."""
    posts: list[str] = []

    def count(request: Request) -> None:
        if request.method == "POST" and urlsplit(request.url).path == DEFAULT_PATH:
            posts.append(request.url)

    page.on("request", count)
    page.goto(preview.site_url + "guide/setup/charging/")
    expect(page.locator("agentskit-ask")).to_have_attribute("data-answers", answers)
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete", widget.answer_error
    assert "ninety" in widget.answer_text
    return posts


def test_preview_wires_a_static_site_to_its_own_backend(
    page: Page, watch: Watch, backend_preview: PreviewServer
) -> None:
    posts = ask_counting_posts(page, backend_preview, "backend")
    assert len(posts) > 0, "the preview's backend was never asked"
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator(".ak-message-note")).to_have_count(0)  # not the static note
    assert watch.off_origin == []


def test_preview_static_answers_answers_in_the_page_without_a_post(
    page: Page, watch: Watch, static_preview: PreviewServer
) -> None:
    posts = ask_counting_posts(page, static_preview, "static")
    assert posts == [], "--static-answers: the page asked a backend"
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator(".ak-message-note")).to_have_text(STATIC_NOTE)
    assert watch.off_origin == []
