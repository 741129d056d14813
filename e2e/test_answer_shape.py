"""The answer's shape on real builds (issue 32): a short lead first, then "More from the docs".

A reader asks a how-to question through the widget on a MkDocs (Material) build of
built_sites.py and on Click's own Sphinx docs (the eval's corpus, built by
bench/corpora.py from `../shared/corpora/click` with its own conf.py, and previewed
as a plain folder: the preview adds the widget and indexes the HTML). The answer
opens with its quoted lead (at most LEAD_MAX_CHARS of text before any other part),
lists the other passages under "More from the docs", closed until the reader opens it
(by click or keyboard), each line closed over its quote until opened, and every
source resolves to a file of the build with its anchor an `id` on that page.
Screenshots: desktop light (closed) and phone dark (opened), in e2e/artifacts; dark is
Material's own switch (the box follows it), and on Click's light-only theme the system's
dark setting, which the box, like the page, does not follow.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from agentskit_web.answering.answer_shape import MORE_FROM_THE_DOCS
from agentskit_web.answering.extractive import LEAD_MAX_CHARS
from agentskit_web.bench.corpora import DEFAULT_CORPORA, build_sphinx_corpus
from agentskit_web.chat.view.markdown_tree import MORE_CLASS, MORE_ITEM_CLASS
from agentskit_web.cli.preview import preview_config
from agentskit_web.server.preview import PreviewConfig, PreviewServer
from agentskit_web.testing import AskWidget
from built_sites import BuiltSite, SiteBuild, broken_citation, built
from e2e_support import ARTIFACTS, Watch

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
CASES = {
    "mkdocs-material": "How do I charge the lantern and store it?",
    "click-sphinx": "How do I show a progress bar while my loop processes files?",
}
"""A how-to question per build, answered there by more than one section."""
QUOTED_LINES = {"mkdocs-material": 0, "click-sphinx": 1}
"""How many "More from the docs" lines carry a quote to open: the lantern's other passage
quotes one sentence, which its line already shows whole (nothing to open)."""
REMOVED_IMAGES = {"click-sphinx": ["/_static/click-name.svg"]}
"""Images the shared corpus was published without (its README: "Images removed"): the
page's 404 for them is the corpus's, not the widget's."""
DARK_SWITCH = {"mkdocs-material": "form[data-md-component='palette'] label:visible"}
"""The theme's own light/dark switch (clicked once: light to dark). Click's theme (Pallets)
has none and is light only: there the system turns dark and the box must stay light."""
NETWORK_SCRIPTS = {"click-sphinx": ["**/_static/describe_version.js*"]}
"""The theme's own scripts that fetch from the network (the Pallets theme asks PyPI for
the latest version): served empty, as for a reader offline, so the origin guard sees
only what the widget does."""


@pytest.fixture(scope="module", params=list(CASES))
def previewed(request: pytest.FixtureRequest) -> Iterator[tuple[str, BuiltSite, PreviewServer]]:
    if request.param == "click-sphinx":
        corpus = build_sphinx_corpus(DEFAULT_CORPORA, "click", "docs")
        site = BuiltSite(SiteBuild("click", "sphinx", "click", True), corpus.site_dir, "", 0.0)
        with preview_config(corpus.site_dir) as config:
            config.pace_seconds = 0.0
            with PreviewServer(config) as server:
                yield request.param, site, server
        return
    site = built(request.param)
    server = PreviewServer(PreviewConfig(site_dir=site.out, pace_seconds=0.0)).start()
    try:
        yield request.param, site, server
    finally:
        server.stop()


@pytest.fixture
def watch(previewed: tuple[str, BuiltSite, PreviewServer]) -> Watch:
    """The conftest's request/console guard, on the preview's origin."""
    return Watch(origin=previewed[2].url)


def test_the_answer_opens_with_its_lead_and_lists_the_rest(
    page: Page,
    watch: Watch,
    previewed: tuple[str, BuiltSite, PreviewServer],
    ask_widget: AskWidget,
) -> None:
    name, site, server = previewed
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size(DESKTOP)
    page.emulate_media(color_scheme="light")
    for pattern in NETWORK_SCRIPTS.get(name, []):
        page.route(pattern, lambda route: route.fulfill(body="", content_type="text/javascript"))
    page.goto(server.site_url)
    ask_widget.open()
    ask_widget.ask(CASES[name])
    assert ask_widget.wait_answer() == "complete", ask_widget.answer_error
    body = page.locator("agentskit-ask .ak-assistant .ak-body").last
    lead = body.locator("blockquote").first.inner_text().strip()
    assert lead, "the answer opens with a quote"
    text = ask_widget.answer_text.strip()
    assert text.startswith(lead.split("\n")[0]), (lead, text[:200])
    assert lead.split("\n")[0] and len(lead.split("\n")[0]) <= LEAD_MAX_CHARS + 8
    assert text.index(MORE_FROM_THE_DOCS) >= len(lead.split("\n")[0])
    sources = ask_widget.sources
    assert len(sources) >= 2
    broken = [why for s in sources if (why := broken_citation(site, s.href))]
    assert broken == [], "\n".join(broken)
    more = body.locator(f"details.{MORE_CLASS}")
    expect(more).to_have_count(1)
    summary = more.locator("> summary")
    first_line = more.locator("li").first
    expect(summary).to_have_text(MORE_FROM_THE_DOCS)
    expect(first_line).to_be_hidden()  # collapsed by default
    page.screenshot(path=str(ARTIFACTS / f"answer-shape-{name}-desktop-light.png"))
    summary.click()
    expect(first_line).to_be_visible()
    assert first_line.inner_text().strip(), "an opened line shows its title and sentence"
    quoted = more.locator(f"details.{MORE_ITEM_CLASS}")
    expect(quoted).to_have_count(QUOTED_LINES[name])
    line_quote = quoted.first.locator("> blockquote")
    if QUOTED_LINES[name]:  # the case's known answer, not the outcome: see QUOTED_LINES
        expect(line_quote).to_be_hidden()  # each line is closed over its quote
        quoted.first.locator("> summary").click()
        expect(line_quote).to_be_visible()
    page.set_viewport_size(PHONE)
    switch = DARK_SWITCH.get(name)
    if switch is None:
        page.emulate_media(color_scheme="dark")
    else:  # as a reader would: close the box, flip the theme's switch, open it again
        page.keyboard.press("Escape")
        page.locator(switch).first.click()
        page.wait_for_function(
            "document.querySelector('agentskit-ask').dataset.pageScheme === 'dark'"
        )
        page.locator("agentskit-ask .ak-launcher").click()
        expect(first_line).to_be_visible()  # the box reopens as the reader left it
    colours = page.evaluate(
        """() => {
          const host = document.querySelector('agentskit-ask');
          const widget = host.shadowRoot.querySelector('.ak-widget');
          return [getComputedStyle(widget).backgroundColor,
                  getComputedStyle(document.body).backgroundColor];
        }"""
    )
    assert colours[0] == colours[1], f"the box is the page's colour (box, page): {colours}"
    body.evaluate("(el) => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(ARTIFACTS / f"answer-shape-{name}-phone-dark.png"))
    summary.press("Enter")  # the summary is a keyboard control: Enter closes it again
    expect(first_line).to_be_hidden()
    assert watch.off_origin == [], "a request left the preview's origin"
    watch.allow_errors_at({server.url + path for path in REMOVED_IMAGES.get(name, [])})
