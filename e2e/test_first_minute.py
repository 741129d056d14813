"""A reader's first minute on real MkDocs Material and Sphinx (Furo, Pallets, pydata, Read
the Docs, alabaster) builds, with the defaults.

Each site is built for real (`mkdocs build`, `sphinx-build`) with the plugin or extension
and no agentskit option at all, so what is checked is what an owner gets by default:

- the launcher is in the first viewport of a long page, on a desktop and on a 390 x 844
  phone, clear of every fixed or sticky element the theme shows (Material's header and
  back-to-top button, Furo's header and back-to-top button, the Pallets theme's sticky
  version banner), and beneath the theme's phone drawer and its overlay when the reader
  opens it;
- the box takes the theme's colours and follows the theme's own light/dark switch (its
  toggle button or menu, not the system setting); on the light-only themes (Flask's
  Pallets theme, Read the Docs', Sphinx's default alabaster) it stays light when the
  system is dark, in their colours;
- every text of an answer meets WCAG AA contrast on every theme, light and dark;
- a returning reader's next page paints the saved question, without Python, with no
  runtime request before they reach for the box; the launcher says a conversation waits;
  the glance is in the dialog the moment it opens and becomes the full conversation;
- Enter on a long answer leaves the question in view (the log opens at the question).

Screenshots (desktop light, phone dark) are written to e2e/artifacts/first-minute-*.png.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agentskit_web.chat.widget_config import DEFAULT_STRINGS
from agentskit_web.server.preview import PreviewConfig, PreviewServer
from agentskit_web.testing import AskWidget
from e2e_support import BOOT_TIMEOUT_MS, Watch

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
QUESTION = "How long does the lantern take to charge its battery?"
SECTIONS = 40
"""Sections on the long page: many viewports tall on a desktop and a phone."""


def _long_markdown() -> str:
    parts = ["# Lantern handbook\n"]
    parts.append(
        "## Charge the battery\n\nPlug the USB-C cable into the base. The lantern takes "
        "ninety minutes to charge its battery fully; the ring glows green when done.\n"
    )
    for index in range(SECTIONS):
        parts.append(
            f"## Trail note {index}\n\nOn trail {index} the lantern lights the path for walkers "
            "at night; keep it clipped to the pack strap so both hands stay free.\n\n"
            "Each note repeats the advice so that the page is long, as handbooks are.\n"
        )
    return "\n".join(parts)


def _long_rst() -> str:
    lines = ["Lantern handbook", "================", "", ".. toctree::", "", "   other", ""]
    lines += [
        "Charge the battery",
        "------------------",
        "",
        "Plug the USB-C cable into the base. The lantern takes ninety minutes to charge its",
        "battery fully; the ring glows green when done.",
        "",
    ]
    for index in range(SECTIONS):
        title = f"Trail note {index}"
        lines += [
            title,
            "-" * len(title),
            "",
            f"On trail {index} the lantern lights the path for walkers at night; keep it",
            "clipped to the pack strap so both hands stay free.",
            "",
            "Each note repeats the advice so that the page is long, as handbooks are.",
            "",
        ]
    return "\n".join(lines)


MKDOCS_CONFIG = """
site_name: Lantern handbook
site_url: http://docs.example/
theme:
  name: material
  font: false
  features:
    - navigation.top
  palette:
    - scheme: default
      toggle:
        icon: material/brightness-7
        name: Switch to dark mode
    - scheme: slate
      toggle:
        icon: material/brightness-4
        name: Switch to light mode
plugins:
  - search
  - agentskit-ask
"""
MKDOCS_STOCK_CONFIG = """
site_name: Lantern handbook
site_url: http://docs.example/
theme:
  name: material
  font: false
plugins:
  - search
  - agentskit-ask
"""
"""Material as `theme: material` gives it: no palette, so no light/dark switch and no
data-md-color-scheme on the page; the theme is light whatever the system says."""
SPHINX_CONF = """
project = "Lantern handbook"
extensions = ["agentskit_web.sphinx"]
html_theme = "%s"
html_static_path: list[str] = []
"""
PALLETS_CONF = """
project = "Lantern handbook"
version = "9.0"
extensions = ["pallets_sphinx_themes", "agentskit_web.sphinx"]
html_theme = "flask"
html_static_path: list[str] = []
"""
"""Flask's theme. Its version banner (sticky, at the top) compares `version` with the
releases it reads from PyPI, cached in localStorage: the cache is seeded (`page` below) with
an older release, so the banner says "development version" and nothing leaves the machine."""
PALLETS_RELEASES = [
    {
        "value": "8.0.0",
        "parts": [0, 8, 0, 0],
        "isPre": False,
        "preL": "",
        "preN": 0,
        "isPost": False,
        "postN": 0,
        "isDev": False,
        "devN": 0,
    }
]
FLASK_LINK = "rgb(0, 75, 107)"
"""flask.css's link colour (#004b6b): the box's accent and links on site-theme=pallets-flask."""
OTHER = "Walking at night is easier with a lantern that charges quickly."


@dataclass(frozen=True)
class Theme:
    """One real build and what its own chrome is called."""

    name: str
    long_page: str
    other_page: str
    fixed: str | None
    """Selector of the theme's own fixed or sticky chrome the launcher must stay clear of."""
    reveal_top: str | None
    """Chrome the theme shows after scrolling down, then a little up (a back-to-top button)."""
    drawer: str | None
    """What opens the theme's navigation drawer on a phone (None: it has none)."""
    dark_toggle: tuple[str, ...]
    """The theme's own light/dark switch: what is clicked, in order, to go from light to dark
    (empty: the theme is light only)."""
    accent: str | None = None
    """A light-only theme's link colour the box takes as its accent (computed style)."""


THEMES = {
    "material": Theme(
        "material",
        "/",
        "/other/",
        ".md-header, .md-top, .md-tabs, .md-sidebar",
        ".md-top",
        "label.md-header__button[for='__drawer']",
        ("form[data-md-component='palette'] label:visible",),
    ),
    # Material with no palette configured: light only, in its own colours.
    "material-stock": Theme(
        "material-stock", "/", "/other/", None, None, None, (), "rgb(64, 81, 181)"
    ),
    "furo": Theme(
        "furo",
        "/index.html",
        "/other.html",
        ".mobile-header, .back-to-top, .sidebar-drawer, .toc-drawer",
        ".back-to-top",
        "label.nav-overlay-icon",
        ("button.theme-toggle:visible",),
    ),
    # Its drawers are modal dialogs; its colour switch a menu (light, dark, system).
    "pydata": Theme(
        "pydata",
        "/index.html",
        "/other.html",
        ".bd-header, #pst-back-to-top",
        "#pst-back-to-top",
        "button.primary-toggle:visible",
        (
            "button.theme-switch-button:visible",
            "button.theme-change-button[data-mode='dark']:visible",
        ),
    ),
    # No drawer (its sidebar follows the content on a phone) and no dark mode.
    "pallets": Theme(
        "pallets",
        "/index.html",
        "/other.html",
        "p.version-warning",
        "p.version-warning",
        None,
        (),
        FLASK_LINK,
    ),
    # Sphinx's default theme and Read the Docs': light only, with fixed colours.
    "alabaster": Theme(
        "alabaster", "/index.html", "/other.html", None, None, None, (), "rgb(0, 75, 107)"
    ),
    "rtd": Theme("rtd", "/index.html", "/other.html", None, None, None, (), "rgb(36, 114, 164)"),
}
FULL = ["furo", "material", "pallets", "pydata"]
"""The themes every test runs on: their chrome, drawers and switches are named above."""
SWITCHING = ["furo", "material", "pydata"]
"""The themes with a light/dark switch and a phone drawer."""
LIGHT_ONLY = ["alabaster", "material-stock", "pallets", "rtd"]
"""The themes with no dark mode: the box stays light, in their colours."""
HTML_THEMES = {
    "furo": "furo",
    "pallets": "flask",
    "pydata": "pydata_sphinx_theme",
    "alabaster": "alabaster",
    "rtd": "sphinx_rtd_theme",
}
"""Each Sphinx build's `html_theme`."""


def _build(theme: str, root: Path) -> Path:
    out = root / "site"
    if theme.startswith("material"):
        config = MKDOCS_CONFIG if theme == "material" else MKDOCS_STOCK_CONFIG
        docs = root / "docs"
        docs.mkdir(parents=True)
        (docs / "index.md").write_text(_long_markdown(), encoding="utf-8")
        (docs / "other.md").write_text(f"# Night walks\n\n{OTHER}\n", encoding="utf-8")
        (root / "mkdocs.yml").write_text(textwrap.dedent(config), encoding="utf-8")
        command = ["-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml")]
        command += ["-d", str(out)]
    else:
        source = root / "src"
        source.mkdir(parents=True)
        (source / "index.rst").write_text(_long_rst(), encoding="utf-8")
        (source / "other.rst").write_text(
            f"Night walks\n===========\n\n{OTHER}\n", encoding="utf-8"
        )
        conf = PALLETS_CONF if theme == "pallets" else SPHINX_CONF % HTML_THEMES[theme]
        if theme == "pydata":  # without a default mode the theme's own script logs an error
            conf += 'html_context = {"default_mode": "auto"}\n'
        (source / "conf.py").write_text(textwrap.dedent(conf), encoding="utf-8")
        command = ["-m", "sphinx", "-q", "-b", "html", str(source), str(out)]
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module", params=FULL)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Theme, PreviewServer]]:
    theme = THEMES[request.param]
    out = _build(theme.name, tmp_path_factory.mktemp(theme.name))
    with PreviewServer(PreviewConfig(site_dir=out, pace_seconds=0.0)) as server:
        yield theme, server


@pytest.fixture
def watch(served: tuple[Theme, PreviewServer]) -> Watch:
    return Watch(origin=served[1].url)


@pytest.fixture
def page(page: Page) -> Page:
    """Every page of the test's context starts with the Pallets theme's release cache."""
    seed = json.dumps(
        {"describeVersion-time": "9999999999999", "describeVersion-result": PALLETS_RELEASES}
    )
    page.context.add_init_script(
        f"try {{ for (const [k, v] of Object.entries({seed})) localStorage.setItem(k, "
        "typeof v === 'string' ? v : JSON.stringify(v)); } catch {}"  # about:blank has none
    )
    return page


Box = dict[str, float]


def _overlaps(a: Box, b: Box) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def _launcher_box(page: Page) -> Box:
    launcher = page.locator("agentskit-ask .ak-launcher")
    expect(launcher).to_be_visible()
    box = launcher.bounding_box()
    assert box is not None
    return box


def _theme_boxes(page: Page, selector: str) -> list[Box]:
    """The theme's fixed/sticky chrome that is on screen now, as boxes in the viewport."""
    return list(
        page.evaluate(
            """(selector) => [...document.querySelectorAll(selector)]
                .filter((el) => ['fixed', 'sticky'].includes(getComputedStyle(el).position))
                .filter((el) => el.checkVisibility({opacityProperty: true}))
                .map((el) => el.getBoundingClientRect())
                .filter((r) => r.width > 0 && r.height > 0
                  && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth)
                .map((r) => ({x: r.x, y: r.y, width: r.width, height: r.height}))""",
            selector,
        )
    )


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_launcher_is_in_the_first_viewport_clear_of_the_theme(
    page: Page, served: tuple[Theme, PreviewServer], size: str
) -> None:
    theme, server = served
    viewport = DESKTOP if size == "desktop" else PHONE
    page.set_viewport_size(viewport)
    page.emulate_media(color_scheme="light")
    page.goto(server.url + theme.long_page)
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height > 4 * viewport["height"], "the page is long"
    box = _launcher_box(page)
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], "first viewport"
    launcher = page.locator("agentskit-ask .ak-launcher")
    expect(launcher).to_contain_text("Ask")
    if size == "desktop":
        expect(launcher.locator("kbd")).to_have_text("Ctrl K")  # the shortcut, shown
    page.screenshot(path=str(ARTIFACTS / f"first-minute-{theme.name}-{size}-light.png"))

    # Scrolled down, then a little up: the theme shows its back-to-top button (or banner).
    page.mouse.wheel(0, 3000)
    page.wait_for_timeout(300)
    page.mouse.wheel(0, -300)
    assert theme.reveal_top is not None and theme.fixed is not None
    expect(page.locator(theme.reveal_top).first).to_be_visible()
    chrome = _theme_boxes(page, theme.fixed)
    assert chrome, "the theme's fixed chrome was found"
    box = _launcher_box(page)
    assert not [other for other in chrome if _overlaps(box, other)], (box, chrome)

    # Keyboard reachable: Tab from the page reaches it, and Enter opens the dialog.
    page.locator("agentskit-ask .ak-launcher").focus()
    page.keyboard.press("Enter")
    expect(page.locator("agentskit-ask dialog.ak-dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("agentskit-ask dialog.ak-dialog")).to_be_hidden()


@pytest.mark.parametrize("served", SWITCHING, indirect=True)
def test_the_theme_drawer_opened_on_a_phone_lies_over_the_launcher(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    theme, server = served
    assert theme.drawer is not None
    page.set_viewport_size(PHONE)
    page.goto(server.url + theme.long_page)
    box = _launcher_box(page)
    page.locator(theme.drawer).click()
    page.wait_for_timeout(400)  # the drawer's slide-in transition
    centre = {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}
    on_top = page.evaluate("({x, y}) => document.elementFromPoint(x, y)?.localName ?? null", centre)
    assert on_top != "agentskit-ask", "the launcher covers the theme's open drawer"


def _switch_to_dark(page: Page, theme: Theme) -> None:
    """Flip the theme's own switch to dark, and wait until the box has seen it."""
    for selector in theme.dark_toggle:
        page.locator(selector).first.click()
    page.wait_for_function("document.querySelector('agentskit-ask').dataset.pageScheme === 'dark'")


def _scheme_colours(page: Page) -> dict[str, str]:
    return dict(
        page.evaluate(
            """() => {
              const host = document.querySelector('agentskit-ask');
              const widget = host.shadowRoot.querySelector('.ak-widget');
              return {
                scheme: host.dataset.pageScheme ?? '',
                box: getComputedStyle(widget).backgroundColor,
                page: getComputedStyle(document.body).backgroundColor,
              };
            }"""
        )
    )


@pytest.mark.parametrize("served", SWITCHING, indirect=True)
def test_the_box_takes_the_theme_colours_and_follows_its_dark_switch(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    theme, server = served
    assert theme.dark_toggle
    page.emulate_media(color_scheme="light")  # the system stays light: only the theme switches
    page.goto(server.url + theme.other_page)
    page.locator("agentskit-ask .ak-launcher").wait_for()
    light = _scheme_colours(page)
    assert light["box"] == light["page"], light
    _switch_to_dark(page, theme)
    dark = _scheme_colours(page)
    assert dark["box"] == dark["page"] != light["page"], (light, dark)


@pytest.mark.parametrize("served", LIGHT_ONLY, indirect=True)
def test_on_a_light_only_theme_the_box_takes_its_colours_and_stays_light(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    theme, server = served
    page.emulate_media(color_scheme="dark")  # the system is dark; the theme has no dark mode
    page.goto(server.url + theme.other_page)
    page.locator("agentskit-ask .ak-launcher").wait_for()
    colours = _scheme_colours(page)
    assert colours["box"] == "rgb(255, 255, 255)", colours
    seen = page.evaluate(
        """() => {
          const root = document.querySelector('agentskit-ask').shadowRoot;
          const launcher = getComputedStyle(root.querySelector('.ak-launcher'));
          const widget = getComputedStyle(root.querySelector('.ak-widget'));
          const prose = [...document.querySelectorAll('p')]
            .find((p) => p.textContent.includes('Walking at night'));
          return {scheme: getComputedStyle(document.querySelector('agentskit-ask')).colorScheme,
                  accent: launcher.backgroundColor, text: widget.color,
                  font: widget.fontFamily, pageText: getComputedStyle(prose).color,
                  pageFont: getComputedStyle(prose).fontFamily};
        }"""
    )
    # The page's text is its prose's (alabaster's <body> is black, its text #3e4349).
    # Form controls, scrollbars and the light-dark() colours (errors, focus ring) too.
    assert seen["scheme"] == "light", seen
    assert seen["accent"] == theme.accent, seen
    assert seen["text"] == seen["pageText"] and seen["font"] == seen["pageFont"], seen


def _runtime(watch: Watch) -> list[str]:
    return [url for url in watch.requests if "/runtime." in url or url.endswith(".wasm")]


def test_a_returning_reader_sees_the_saved_question_before_any_runtime_request(
    page: Page, served: tuple[Theme, PreviewServer], watch: Watch
) -> None:
    theme, server = served
    page.goto(server.url + theme.other_page)
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete", widget.answer_error

    second = page.context.new_page()
    second.on("console", watch.on_console)
    second.on("pageerror", watch.on_page_error)
    watch.requests.clear()
    second.goto(server.url + theme.long_page)
    host = second.locator("agentskit-ask")
    expect(host).to_have_attribute("data-glance", "painted")
    second.wait_for_load_state("networkidle")
    assert _runtime(watch) == [], "a returning reader's page view loaded the runtime"
    expect(host).to_have_attribute("data-state", "idle")
    launcher = second.locator("agentskit-ask .ak-launcher")
    expect(launcher).to_have_attribute("data-waiting", "")
    expect(launcher).to_contain_text("your conversation is waiting")  # for screen readers too
    painted = second.evaluate(
        """() => {
          const [defined] = performance.getEntriesByName('agentskit:defined');
          const [painted] = performance.getEntriesByName('agentskit:glance-painted');
          return painted && defined ? painted.startTime - defined.startTime : null;
        }"""
    )
    assert painted is not None, "the glance was painted (its time is a figure in `make bench`)"

    # The moment the dialog opens (before Python), the saved question is what it shows.
    shown = second.evaluate(
        """() => {
          const root = document.querySelector('agentskit-ask').shadowRoot;
          root.querySelector('.ak-launcher').click();
          const glance = root.querySelector('.ak-glance');
          return glance && glance.checkVisibility() ? glance.textContent : null;
        }"""
    )
    assert shown is not None and QUESTION in shown
    second.screenshot(path=str(ARTIFACTS / f"first-minute-{theme.name}-glance.png"))
    second.wait_for_selector(
        "agentskit-ask[data-state=ready]", state="attached", timeout=BOOT_TIMEOUT_MS
    )
    full = AskWidget(second)
    expect(second.locator("agentskit-ask .ak-message")).to_have_count(2)
    assert [m.role for m in full.messages] == ["user", "assistant"]
    assert second.locator("agentskit-ask .ak-glance").count() == 0, "replaced by the real log"


def test_enter_on_a_long_answer_leaves_the_question_in_view(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    theme, server = served
    page.set_viewport_size(PHONE)
    page.goto(server.url + theme.other_page)
    # A short log (a site may set it): the answer, with its sources, is longer than the log.
    page.evaluate(
        "document.querySelector('agentskit-ask').style.setProperty('--ak-log-height', '14rem')"
    )
    widget = AskWidget(page).open()
    page.locator("agentskit-ask .ak-input").fill(QUESTION)
    page.locator("agentskit-ask .ak-input").press("Enter")
    assert widget.wait_answer() == "complete", widget.answer_error
    page.wait_for_timeout(300)  # frames after the end: nothing may scroll the question away
    seen = page.evaluate(
        """() => {
          const root = document.querySelector('agentskit-ask').shadowRoot;
          const log = root.querySelector('.ak-log');
          const question = [...log.querySelectorAll('.ak-user')].at(-1);
          const answer = [...log.querySelectorAll('.ak-assistant')].at(-1);
          const l = log.getBoundingClientRect();
          const q = question.getBoundingClientRect();
          const a = answer.getBoundingClientRect();
          return {overflow: log.scrollHeight - log.clientHeight, answer: a.height,
                  logHeight: l.height, questionIn: q.top >= l.top - 1 && q.bottom <= l.bottom + 1,
                  answerStartIn: a.top < l.bottom && a.top >= l.top};
        }"""
    )
    assert seen["answer"] > seen["logHeight"], f"the answer is longer than the log: {seen}"
    assert seen["questionIn"] and seen["answerStartIn"], seen


def test_a_source_on_this_page_closes_the_dialog_and_shows_its_section(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    server = served[1]
    page.set_viewport_size(DESKTOP)
    page.goto(server.url + "/")  # the long page at the path the index cites: "/" (a scroll)
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete", widget.answer_error
    this_page = page.url.split("#")[0].removesuffix("index.html")  # "/" and "/index.html"
    here = [s for s in widget.sources if s.href.startswith(this_page + "#")]
    assert here, f"the answer cites a section of this page: {widget.sources}"
    anchor = here[0].href.split("#", 1)[1]
    assert page.evaluate("scrollY") == 0
    page.evaluate("window.stayed = true")  # gone if the click reloaded the page
    page.locator("agentskit-ask .ak-source-link", has_text=here[0].title).first.click()
    expect(page.locator("agentskit-ask dialog.ak-dialog")).to_be_hidden()
    page.wait_for_function("(id) => location.hash === '#' + id", arg=anchor)
    section = page.locator(f"[id='{anchor}']")
    # The page scrolls to the section (smoothly on themes that ask for it: wait for it).
    page.wait_for_function("scrollY > 0")
    expect(section).to_be_in_viewport()
    assert page.evaluate("window.stayed === true"), "the same page, scrolled, not reloaded"
    # A source on another page is a navigation: the dialog is not closed for it first.
    assert page.evaluate(
        """() => {
          const root = document.querySelector('agentskit-ask').shadowRoot;
          root.querySelector('.ak-launcher').click();
          const link = document.createElement('a');
          link.href = '/elsewhere.html#x';
          link.addEventListener('click', (event) => event.preventDefault());
          root.querySelector('.ak-log').append(link);
          link.click();
          return root.querySelector('dialog').open;
        }"""
    ), "a link to another page left the dialog open until the page changes"


def test_an_empty_box_says_what_it_is_for_before_and_after_python_starts(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    """A reader who opens the box on a phone meets a line saying what to do, not a blank
    screen: in the loader's shell while Python starts, in the widget once it has, and again
    after "New conversation"; it gives way to the conversation."""
    theme, server = served
    page.set_viewport_size(PHONE)
    held: list[object] = []
    page.route("**/runtime.*/**", lambda route: held.append(route))  # Python cannot start yet
    page.goto(server.url + theme.other_page)
    page.locator("agentskit-ask .ak-launcher").click()
    intro = page.locator("agentskit-ask dialog .ak-intro")
    expect(intro).to_be_visible()
    expect(intro).to_have_text(DEFAULT_STRINGS["intro"])
    expect(page.locator("agentskit-ask")).to_have_attribute("data-state", "booting")
    assert held, "the runtime was not asked for"
    page.unroute("**/runtime.*/**")  # the held requests go on to the network
    widget = AskWidget(page).open()
    expect(intro).to_be_visible()
    expect(intro).to_have_text(DEFAULT_STRINGS["intro"])
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete", widget.answer_error
    expect(intro).to_be_hidden()
    widget.new_conversation()
    expect(intro).to_be_visible()


def test_on_a_phone_the_open_dialog_fills_the_screen(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    theme, server = served
    page.set_viewport_size(PHONE)
    page.goto(server.url + theme.other_page)  # a short page: nothing may show below the box
    page.locator("agentskit-ask .ak-launcher").click()
    dialog = page.locator("agentskit-ask dialog.ak-dialog")
    expect(dialog).to_be_visible()
    full = {"x": 0, "y": 0, **PHONE}
    for part in (dialog, page.locator("agentskit-ask dialog .ak-widget")):
        box = part.bounding_box()
        assert box is not None
        assert {k: round(v) for k, v in box.items()} == full, box


def test_on_a_phone_the_conversation_takes_the_screen_down_to_the_question_box(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    theme, server = served
    page.set_viewport_size(PHONE)
    page.goto(server.url + theme.other_page)
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete", widget.answer_error
    gap = page.evaluate(
        """() => {
          const root = document.querySelector('agentskit-ask').shadowRoot;
          const widget = root.querySelector('dialog .ak-widget');
          const style = getComputedStyle(widget);
          const inner = widget.getBoundingClientRect().bottom
            - parseFloat(style.paddingBottom) - parseFloat(style.borderBottomWidth);
          const shown = [...widget.children].filter((el) => el.getClientRects().length > 0);
          return inner - Math.max(...shown.map((el) => el.getBoundingClientRect().bottom));
        }"""
    )
    assert abs(gap) <= 1, f"{gap:.0f} px of empty screen below the question box"


CONTRAST_JS = """() => {
  const root = document.querySelector('agentskit-ask').shadowRoot;
  const rgba = (text) => {
    const match = /^rgba?\\(([^)]*)\\)$/.exec(text);
    if (!match) return null;
    const parts = match[1].split(/[\\s,/]+/).filter(Boolean).map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
  const parentOf = (el) => el.parentElement || el.getRootNode().host || null;
  const backdrop = (el) => {
    const layers = [];
    for (let at = el; at; at = parentOf(at)) {
      const colour = rgba(getComputedStyle(at).backgroundColor);
      if (colour === null) return null;
      if (colour[3] > 0) layers.push(colour);
      if (colour[3] === 1) break;
    }
    let under = [255, 255, 255];
    for (const layer of layers.reverse()) under = over(layer, under);
    return under;
  };
  const luminance = (rgb) => {
    const [r, g, b] = rgb.map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const found = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || el.closest(':disabled, .ak-visually-hidden')) continue;
    const rects = el.getClientRects();
    if (rects.length === 0 || !el.checkVisibility({opacityProperty: true})) continue;
    const style = getComputedStyle(el);
    const text = rgba(style.color);
    const under = backdrop(el);
    if (text === null || under === null) {
      found.push({text: node.textContent.trim().slice(0, 40), unread: style.color});
      continue;
    }
    const fg = over(text, under);
    const [hi, lo] = [luminance(fg), luminance(under)].sort((a, b) => b - a);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    found.push({text: node.textContent.trim().slice(0, 40), ratio: (hi + 0.05) / (lo + 0.05),
                needed: large ? 3 : 4.5, color: style.color});
  }
  return found;
}"""
"""Every piece of text in the box that is on screen, with its WCAG contrast ratio against the
colours painted under it (its own and its ancestors' backgrounds, alpha composited), and the
ratio WCAG 2 AA asks of its size. Disabled controls and screen-reader-only text are exempt."""


@pytest.mark.parametrize("served", sorted(THEMES), indirect=True)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_of_an_answer_is_readable_on_the_theme(
    page: Page, served: tuple[Theme, PreviewServer], scheme: str
) -> None:
    theme, server = served
    page.set_viewport_size(DESKTOP)
    page.emulate_media(color_scheme="light")
    page.goto(server.url + theme.other_page)
    if scheme == "dark" and not theme.dark_toggle:  # light only: the system is dark
        page.emulate_media(color_scheme="dark")
    elif scheme == "dark":
        _switch_to_dark(page, theme)
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete", widget.answer_error
    page.evaluate(  # "More from the docs" and its quotes open, so their text is measured too
        "document.querySelector('agentskit-ask').shadowRoot.querySelectorAll('details')"
        ".forEach((details) => { details.open = true; })"
    )
    texts = page.evaluate(CONTRAST_JS)
    assert len(texts) > 10, texts
    unread = [t for t in texts if "unread" in t]
    assert not unread, f"colours the test cannot read: {unread}"
    poor = [t for t in texts if t["ratio"] < t["needed"]]
    assert not poor, f"text under WCAG AA contrast on {theme.name} {scheme}: {poor}"


def test_screenshots_desktop_light_and_phone_dark(
    page: Page, served: tuple[Theme, PreviewServer]
) -> None:
    """Looked at by a person (the report says so); asserted only to be written."""
    theme, server = served
    for size, scheme in (("desktop", "light"), ("phone", "dark")):
        # The switch is flipped on a desktop (pydata's is in its drawer on a phone); the
        # themes keep the choice, so the phone view is dark too.
        page.set_viewport_size(DESKTOP)
        page.emulate_media(color_scheme="light")
        page.goto(server.url + theme.other_page)
        page.locator("agentskit-ask .ak-launcher").wait_for()
        if scheme == "dark" and not theme.dark_toggle:  # light only: the system is dark
            page.emulate_media(color_scheme="dark")
        elif scheme == "dark":
            _switch_to_dark(page, theme)
        page.set_viewport_size(DESKTOP if size == "desktop" else PHONE)
        path = ARTIFACTS / f"first-minute-{theme.name}-{size}-{scheme}.png"
        page.screenshot(path=str(path))
        AskWidget(page).open()
        page.screenshot(path=str(path.with_name(path.stem + "-open.png")))
        assert path.is_file()
