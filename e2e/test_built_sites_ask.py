"""Asking through the widget on real MkDocs and Sphinx builds: every cited link resolves.

For each build of built_sites.py (MkDocs Material and `mkdocs` themes,
directory URLs on and off, one published under `/docs/`; Sphinx `html` and
`dirhtml` with furo and alabaster; the plugin or extension wrote the embed and
the index), `agentskit-web preview`'s app serves the built folder and answers
from that index on one origin. A reader opens the site's home page, reaches
for the widget and asks the questions of built_sites.QUESTIONS; every source
shown must be a file of the built site with its anchor an `id` on that page,
and no source title may carry `{`, `<` or `¶`. Following the first source
lands on that page with the target element present. No request leaves the
origin (the conftest's guard and the testing kit's `same_origin_only`).

A plain HTML folder (no plugin: no widget, no index) is previewed the same
way: the preview adds the widget to the pages it sends and indexes the HTML
at start-up; the answer cites the folder's own URL and id, and no file of
the folder is changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import Page, expect

from agentskit_web.cli.preview import preview_config
from agentskit_web.server.preview import PreviewConfig, PreviewServer
from agentskit_web.testing import AskWidget, OriginGuard
from built_sites import (
    BUILD_IDS,
    QUESTIONS,
    BuiltSite,
    SiteBuild,
    broken_citation,
    built,
    unclean_title,
    write_plain_site,
)
from e2e_support import Watch

PACE_SECONDS = 0.0
"""No pause between streamed pieces: these tests check where answers point, not streaming."""


@pytest.fixture(scope="module", params=BUILD_IDS)
def previewed(request: pytest.FixtureRequest) -> Iterator[tuple[BuiltSite, PreviewServer]]:
    site = built(request.param)
    server = PreviewServer(PreviewConfig(site_dir=site.out, pace_seconds=PACE_SECONDS)).start()
    try:
        yield site, server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def plain_preview(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[BuiltSite, PreviewServer]]:
    """A plain HTML folder (no plugin, no widget, no index) and the preview that adds both."""
    out = write_plain_site(tmp_path_factory.mktemp("plain") / "site")
    site = BuiltSite(SiteBuild("plain-html", "html", "none", directory_urls=True), out, "", 0.0)
    with preview_config(out) as config:
        config.pace_seconds = PACE_SECONDS
        with PreviewServer(config) as server:
            yield site, server


@pytest.fixture
def watch(request: pytest.FixtureRequest) -> Watch:
    """The conftest's request/console guard, on the origin of the preview the test uses."""
    name = "plain_preview" if "plain_preview" in request.fixturenames else "previewed"
    return Watch(origin=request.getfixturevalue(name)[1].url)


def test_every_cited_link_resolves_on_the_built_site(
    page: Page,
    watch: Watch,
    previewed: tuple[BuiltSite, PreviewServer],
    ask_widget: AskWidget,
    same_origin_only: OriginGuard,
) -> None:
    site, server = previewed
    page.goto(server.site_url)
    expect(page.locator("agentskit-ask")).to_have_count(1)
    ask_widget.open()
    cited: list[str] = []
    for question in QUESTIONS.values():
        ask_widget.ask(question)
        assert ask_widget.wait_answer() == "complete", ask_widget.answer_error
        sources = ask_widget.sources
        assert sources, f"no source for {question!r}"
        for source in sources:
            assert not unclean_title(source.title), f"markup in the source title {source.title!r}"
        cited.extend(source.href for source in sources)
    assert all(url.startswith(server.url + site.build.base_path) for url in cited), cited
    broken = [reason for url in dict.fromkeys(cited) if (reason := broken_citation(site, url))]
    assert broken == [], "\n".join(broken)

    # The charging answer cites the charging section; following it lands on its id.
    first = cited[0]
    assert urlsplit(first).path == site.build.url_of(
        "guide/battery.md" if site.build.generator == "mkdocs" else "battery.rst"
    ), first
    link = page.locator("agentskit-ask .ak-source-link").first
    link.click()  # the same tab (the default)
    page.wait_for_url(first)
    target = page
    fragment = unquote(urlsplit(first).fragment)
    assert fragment, f"the top source {first} names no section"
    expect(target.locator(f"[id='{fragment}']")).to_have_count(1)
    expect(target.locator(f"[id='{fragment}']")).to_contain_text("harg")
    assert watch.off_origin == [] and same_origin_only.off_origin == [], "a request left"


def test_a_plain_html_folder_gets_the_widget_and_answers_citing_its_pages(
    page: Page,
    watch: Watch,
    plain_preview: tuple[BuiltSite, PreviewServer],
    ask_widget: AskWidget,
    same_origin_only: OriginGuard,
) -> None:
    site, server = plain_preview
    page.goto(server.url + "/guide/pairing.html")
    expect(page.locator("agentskit-ask")).to_have_attribute("layout", "launcher")
    ask_widget.open()
    ask_widget.ask(QUESTIONS["charge"])
    assert ask_widget.wait_answer() == "complete", ask_widget.answer_error
    hrefs = [source.href for source in ask_widget.sources]
    assert hrefs and hrefs[0] == server.url + "/guide/battery/#charge-it", hrefs
    broken = [reason for url in hrefs if (reason := broken_citation(site, url))]
    assert broken == [], "\n".join(broken)
    assert not any("<agentskit-ask" in path.read_text() for path in Path(site.out).rglob("*.html"))
    assert watch.off_origin == [] and same_origin_only.off_origin == [], "a request left"
