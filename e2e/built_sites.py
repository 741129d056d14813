"""Small docs sites built for real by MkDocs and Sphinx, with the plugin writing the index.

The sources are written here (not copied from any project) with the constructs
that broke citations before: `{ #id }` attribute lists on headings, repeated
headings, admonitions, content tabs, code blocks, `¶` permalinks, Sphinx
sections and explicit targets, a heading with an underscore. Each `SiteBuild`
runs the generator's own command (`mkdocs build`, `sphinx-build`) with the
`agentskit-ask` plugin or the `agentskit_web.sphinx` extension, which writes
the assets folder and the site index into the output. A build happens once
per test session (`built`), however many tests use it.

`html_ids` and `file_for_url` read the built HTML independently of the
indexer, so a test can check that what the index cites exists.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

SITE_NAME = "Lumen trail lantern"
QUESTIONS = {
    "charge": "How long does the lantern take to charge its battery?",
    "pair": "How do I pair the remote with the app?",
    "winter": "How should I store the lantern in winter?",
}
"""Questions a reader asks through the widget; each is answered by a section with a tricky id."""
EXPECTED_ANCHORS = {
    "mkdocs": {
        "charge-it",
        "storage",
        "storage_1",
        "pair-with-the-app",
        "the-default_mode-setting",
    },
    # Sphinx puts the id on the <section>; the second "Storage" gets docutils' "id1".
    "sphinx": {
        "charge-the-battery",
        "storage",
        "id1",
        "pair-with-the-app",
        "the-default-mode-setting",
    },
}
"""Ids each generator publishes for the sections above (what the index must cite)."""

MKDOCS_PAGES = {
    "index.md": """
        # Lumen trail lantern

        The Lumen is a small trail lantern for night walks. This guide covers
        [charging](guide/battery.md), [pairing](guide/pairing.md) and storage.
        """,
    "guide/battery.md": """
        # Battery and charging { #battery-charging }

        The lantern runs on a built-in lithium battery.

        ## Charge the battery { #charge-it }

        Plug the USB-C cable into the base of the lantern. The lantern takes
        ninety minutes to charge its battery fully; the ring glows green when done.

        !!! warning "Cold weather"
            Charging below freezing point damages the battery cells; let the lantern warm first.

        ## Storage

        Before storing it for months, leave the cells half full.

        ## Storage

        === "Summer"

            In summer, keep the lantern out of direct sun while it is stored.

        === "Winter"

            In winter, store the lantern indoors at room temperature, never in a cold car.
        """,
    "guide/pairing.md": """
        # Pairing the remote

        The remote turns the lantern on from a distance.

        ## Pair with the app

        Hold the button for five seconds, then pair the remote with the app:

        ```python
        lantern = app.find("lumen")
        lantern.pair(code="0420")
        ```

        ## The default_mode setting

        `default_mode` chooses the light the lantern starts in: `warm`, `cold` or `red`.
        """,
}

SPHINX_PAGES = {
    "index.rst": """
        Lumen trail lantern
        ===================

        The Lumen is a small trail lantern for night walks.

        .. toctree::

           battery
           pairing
        """,
    "battery.rst": """
        Battery and charging
        ====================

        The lantern runs on a built-in lithium battery.

        .. _charge-it:

        Charge the battery
        ------------------

        Plug the USB-C cable into the base of the lantern. The lantern takes
        ninety minutes to charge its battery fully; the ring glows green when done.

        .. warning::

           Charging below freezing point damages the battery cells; let the lantern warm first.

        Storage
        -------

        Before storing it for months, leave the cells half full.

        Storage
        -------

        In winter, store the lantern indoors at room temperature, never in a cold car.
        """,
    "pairing.rst": """
        Pairing the remote
        ==================

        The remote turns the lantern on from a distance.

        Pair with the app
        -----------------

        Hold the button for five seconds, then pair the remote with the app:

        .. code-block:: python

           lantern = app.find("lumen")
           lantern.pair(code="0420")

        The default_mode setting
        ------------------------

        ``default_mode`` chooses the light the lantern starts in: ``warm``, ``cold`` or ``red``.
        """,
}

PLUGIN = """
plugins:
  - search
  - agentskit-ask:
      endpoint: /api/ask
"""
"""The plugin's defaults (the launcher, boot on intent) but for the backend it asks."""
MATERIAL_THEME = """theme:
  name: material
  font: false
  palette:
    - scheme: default
      toggle:
        icon: material/brightness-7
        name: Switch to dark mode
    - scheme: slate
      toggle:
        icon: material/brightness-4
        name: Switch to light mode
"""
"""Material with its own light/dark switch (the box follows it: e2e/test_answer_shape)."""
MARKDOWN_EXTENSIONS = """
markdown_extensions:
  - attr_list
  - admonition
  - pymdownx.details
  - pymdownx.superfences
  - pymdownx.tabbed:
      alternate_style: true
  - toc:
      permalink: true
"""


@dataclass(frozen=True)
class SiteBuild:
    """One generator, theme and URL style."""

    id: str
    generator: str
    theme: str
    directory_urls: bool
    base_path: str = "/"

    def build(self, root: Path) -> BuiltSite:
        source = root / "src"
        out = root / "site"
        started = time.monotonic()
        log = self._mkdocs(source, out) if self.generator == "mkdocs" else self._sphinx(source, out)
        return BuiltSite(self, out, log, time.monotonic() - started)

    def _mkdocs(self, source: Path, out: Path) -> str:
        _write(source / "docs", MKDOCS_PAGES)
        theme = MATERIAL_THEME if self.theme == "material" else ""
        if self.theme == "mkdocs":
            # The built-in theme; its highlight.js languages would come from a CDN.
            theme = "theme:\n  name: mkdocs\n  highlightjs: false\n"
        site_url = f"site_url: http://docs.example{self.base_path}\n"
        config = (
            f"site_name: {SITE_NAME}\n{site_url}"
            f"use_directory_urls: {str(self.directory_urls).lower()}\n"
            f"{theme}{MARKDOWN_EXTENSIONS}{PLUGIN}"
        )
        (source / "mkdocs.yml").write_text(config, encoding="utf-8")
        command = ["-m", "mkdocs", "build", "--strict", "-f", str(source / "mkdocs.yml")]
        return _run([*command, "-d", str(out)])

    def _sphinx(self, source: Path, out: Path) -> str:
        _write(source, SPHINX_PAGES)
        conf = (
            f"project = {SITE_NAME!r}\n"
            'extensions = ["agentskit_web.sphinx"]\n'
            f"html_theme = {self.theme!r}\n"
            "html_static_path: list[str] = []\n"
            'agentskit_ask_endpoint = "/api/ask"\n'
        )
        if self.base_path != "/":
            conf += f'html_baseurl = "http://docs.example{self.base_path}"\n'
        (source / "conf.py").write_text(conf, encoding="utf-8")
        builder = "dirhtml" if self.directory_urls else "html"
        return _run(["-m", "sphinx", "-b", builder, str(source), str(out)])

    def url_of(self, relative: str) -> str:
        """The URL path a page source is published at (for the tests' own expectations)."""
        stem = relative.rsplit(".", 1)[0]
        if stem == "index" or stem.endswith("/index"):
            page = stem[: -len("index")]
        elif self.directory_urls:
            page = stem + "/"
        else:
            page = stem + ".html"
        return self.base_path + page


PLAIN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} | Lumen</title></head>
<body><header><a href="/">Lumen</a></header><nav><a href="/guide/battery/">Battery</a></nav>
<main><article><h1>{title}</h1>{body}</article></main><footer>Edit this page</footer></body></html>
"""
PLAIN_PAGES = {
    "index.html": ("Lumen trail lantern", "<p>The Lumen is a small trail lantern.</p>"),
    "guide/battery/index.html": (
        "Battery and charging",
        '<h2 id="charge-it">Charge the battery<a href="#charge-it">#</a></h2>'
        "<p>The lantern takes ninety minutes to charge its battery fully.</p>"
        '<h2 id="storage">Storage</h2><p>In winter, store the lantern indoors.</p>',
    ),
    "guide/pairing.html": (
        "Pairing the remote",
        '<h2 id="pair-with-the-app">Pair with the app</h2>'
        "<p>Hold the button for five seconds, then pair the remote with the app.</p>",
    ),
}
"""A folder of plain HTML (as Docusaurus or Hugo would write, no plugin): no widget, no index."""


def write_plain_site(out: Path) -> Path:
    for name, (title, body) in PLAIN_PAGES.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PLAIN_PAGE.format(title=title, body=body), encoding="utf-8")
    return out


BUILDS = [
    SiteBuild("mkdocs-material", "mkdocs", "material", directory_urls=True),
    SiteBuild("mkdocs-material-files-subpath", "mkdocs", "material", False, base_path="/docs/"),
    SiteBuild("mkdocs-mkdocs", "mkdocs", "mkdocs", directory_urls=True),
    SiteBuild("mkdocs-mkdocs-files", "mkdocs", "mkdocs", directory_urls=False),
    SiteBuild("sphinx-html-furo", "sphinx", "furo", directory_urls=False),
    SiteBuild("sphinx-dirhtml-furo", "sphinx", "furo", directory_urls=True),
    SiteBuild("sphinx-html-alabaster", "sphinx", "alabaster", directory_urls=False),
    SiteBuild("sphinx-dirhtml-alabaster", "sphinx", "alabaster", directory_urls=True),
]
BUILD_IDS = [build.id for build in BUILDS]


@dataclass(frozen=True)
class BuiltSite:
    """A finished build: the output folder, the generator's log, how long it took."""

    build: SiteBuild
    out: Path
    log: str
    seconds: float

    @property
    def index_file(self) -> Path:
        found = sorted((self.out / "agentskit").glob("agentskit-index.*.json"))
        assert len(found) == 1, f"expected one index file in the assets folder, got {found}"
        return found[0]


_ROOT = Path(tempfile.mkdtemp(prefix="agentskit-built-sites-"))
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)
_BUILT: dict[str, BuiltSite] = {}


def built(build_id: str) -> BuiltSite:
    """The site, built once per test session (every test module shares it)."""
    if build_id not in _BUILT:
        build = next(b for b in BUILDS if b.id == build_id)
        root = _ROOT / build_id
        root.mkdir()
        _BUILT[build_id] = build.build(root)
    return _BUILT[build_id]


def _write(folder: Path, pages: dict[str, str]) -> None:
    for name, text in pages.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _run(arguments: list[str]) -> str:
    done = subprocess.run([sys.executable, *arguments], capture_output=True, text=True, check=False)
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"build failed:\n{log}"
    return log


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value is not None:
                self.ids.add(value)


def html_ids(file: Path) -> set[str]:
    """Every `id` attribute in an HTML file (the anchors a link can land on)."""
    parser = _Ids()
    parser.feed(file.read_text(encoding="utf-8"))
    parser.close()
    return parser.ids


def file_for_url(site: BuiltSite, url: str) -> Path | None:
    """The built file a URL (or URL path) serves, or None when it is not a file of the site."""
    path = unquote(urlsplit(url).path)
    base = site.build.base_path
    if not path.startswith(base):
        return None
    relative = path[len(base) :]
    if relative == "" or relative.endswith("/"):
        relative += "index.html"
    candidate = (site.out / relative).resolve()
    if site.out.resolve() not in candidate.parents or not candidate.is_file():
        return None
    return candidate


def broken_citation(site: BuiltSite, url: str) -> str | None:
    """Why a cited URL does not land on the built site (None when it does)."""
    file = file_for_url(site, url)
    if file is None:
        return f"{url}: no such file in the built site"
    fragment = unquote(urlsplit(url).fragment)
    if fragment and fragment not in html_ids(file):
        return f"{url}: no id {fragment!r} on {file.relative_to(site.out)}"
    return None


def unclean_title(title: str) -> bool:
    """Markup or a permalink sign in a title a reader sees."""
    return any(mark in title for mark in ("{", "<", "¶"))
