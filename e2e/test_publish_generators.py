"""`agentskit-web publish` on real Hugo, Jekyll and plain HTML builds, from the release wheel.

A docs owner whose generator has no plugin of ours installs the wheel in a
clean venv (`pip install 'agentskit_web-….whl[build]'`: no checkout anywhere,
as in test_wheel_install.py), builds a site of their own with Debian's `hugo`
or `jekyll` (`make hugo jekyll` installs them), and follows the recipe in
docs/embedding.md, which this test reads from the docs and runs as written:
the template lines go into the site's base layout, the shell line builds the
site and runs `publish`. The plain HTML folder gets the embed from
`publish --inject`. Each site (three sections, pages two folders deep, code
blocks) is then served by a plain static server that answers POST with 405,
and Chromium asks a question on a nested page: the page answers from the
static index, every source resolves to a page holding its anchor, and no
request leaves the origin (conftest's guard).
"""

from __future__ import annotations

import hashlib
import http.server
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from playwright.sync_api import Page, expect

from agentskit_web.build.assets import LOADER, MANIFEST
from agentskit_web.build.pyscript import PYSCRIPT_CONFIG, PYSCRIPT_ENTRY
from agentskit_web.testing import AskWidget
from e2e_support import ROOT, BackgroundServer, Watch
from test_static_answers import Host, assert_link_resolves, plain_handler, source_hrefs
from wheel_support import Release, Venv, make_venv

EMBEDDING_DOC = ROOT / "docs" / "embedding.md"
QUESTION = "How long does the lantern take to charge the battery?"
ANSWER_WORD = "ninety"
PAGES: dict[str, tuple[str, str]] = {
    "guide/setup/charging": (
        "Charging",
        "## Charge the battery\n\nPlug the lantern into any USB-C charger. A full charge of "
        "the battery takes about ninety minutes; the ring glows green when it is done.\n\n"
        "```sh\nlantern status --battery\n```\n",
    ),
    "guide/care/cleaning": (
        "Cleaning",
        "## Clean the lens\n\nWipe the lens with a dry cloth. Never put the lantern under "
        "running water.\n\n## Store it\n\nKeep it half charged when stored for a season.\n",
    ),
    "reference/cli/commands": (
        "Commands",
        "## lantern reset\n\nRestores the factory settings.\n\n```sh\nlantern reset --yes\n```\n",
    ),
    "faq/questions": (
        "Questions",
        "## Is it waterproof?\n\nIt resists rain (IPX4) but it is not waterproof.\n",
    ),
}
"""Three sections, pages two folders deep, code: path (without suffix) -> (title, markdown)."""
NESTED_PAGE = "guide/care/cleaning"


def recipe(name: str) -> list[tuple[str, str]]:
    """The fenced blocks (language, text) after `<!-- recipe: NAME -->` in docs/embedding.md,
    up to the next paragraph that is not a block."""
    text = EMBEDDING_DOC.read_text(encoding="utf-8")
    marker = f"<!-- recipe: {name} -->"
    assert marker in text, f"docs/embedding.md has no {marker}"
    rest = text[text.index(marker) + len(marker) :]
    blocks = []
    for found in re.finditer(r"\s*```(\w+)\n(.*?)```\n", rest, re.DOTALL):
        if blocks and found.start() != blocks[-1][2]:
            break
        if not blocks and found.start() != 0:
            break
        blocks.append((found.group(1), found.group(2), found.end()))
    assert blocks, f"no code block after {marker}"
    return [(language, body) for language, body, _end in blocks]


def template_lines(name: str) -> str:
    return next(body for language, body in recipe(name) if language == "html")


def shell_line(name: str) -> str:
    return next(body for language, body in recipe(name) if language == "sh").strip()


def _front_matter(title: str, extra: str = "") -> str:
    return f"---\ntitle: {title}\n{extra}---\n"


def write_hugo_source(folder: Path) -> None:
    (folder / "layouts" / "_default").mkdir(parents=True)
    (folder / "config.toml").write_text(
        'baseURL = "https://lantern.example/"\ntitle = "Lantern"\n'
        'disableKinds = ["taxonomy", "term", "RSS", "sitemap"]\n'
        "[markup.highlight]\nnoClasses = false\n",
        encoding="utf-8",
    )
    base = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title>'
        '</head><body><main>{{ block "main" . }}{{ end }}</main>\n'
        + template_lines("hugo")
        + "</body></html>\n"
    )
    layouts = folder / "layouts" / "_default"
    (layouts / "baseof.html").write_text(base, encoding="utf-8")
    (layouts / "single.html").write_text(
        '{{ define "main" }}<h1>{{ .Title }}</h1>{{ .Content }}{{ end }}\n', encoding="utf-8"
    )
    (layouts / "list.html").write_text(
        '{{ define "main" }}<h1>{{ .Title }}</h1>{{ .Content }}<ul>{{ range .Pages }}'
        '<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ul>{{ end }}\n',
        encoding="utf-8",
    )
    content = folder / "content"
    content.mkdir()
    (content / "_index.md").write_text(
        _front_matter("Lantern docs") + "The lantern's manual.\n", encoding="utf-8"
    )
    for path, (title, body) in PAGES.items():
        target = content / f"{path}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_front_matter(title) + body, encoding="utf-8")


def write_jekyll_source(folder: Path) -> None:
    (folder / "_layouts").mkdir(parents=True)
    (folder / "_config.yml").write_text(
        "title: Lantern\nmarkdown: kramdown\n"
        "defaults:\n  - scope:\n      path: ''\n    values:\n      layout: default\n",
        encoding="utf-8",
    )
    (folder / "_layouts" / "default.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ page.title }}'
        "</title></head><body><main><h1>{{ page.title }}</h1>{{ content }}</main>\n"
        + template_lines("jekyll")
        + "</body></html>\n",
        encoding="utf-8",
    )
    (folder / "index.md").write_text(
        _front_matter("Lantern docs") + "The lantern's manual.\n", encoding="utf-8"
    )
    for path, (title, body) in PAGES.items():
        target = folder / f"{path}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_front_matter(title) + body, encoding="utf-8")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def write_plain_site(folder: Path) -> None:
    """Hand-written pages: `<h2>` with ids, no widget in them (`publish --inject` adds it)."""
    render = MarkdownIt("commonmark").render

    def page(title: str, body: str) -> str:
        html = re.sub(
            r"<h2>(.*?)</h2>", lambda m: f'<h2 id="{_slug(m.group(1))}">{m.group(1)}</h2>', body
        )
        return (
            f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{title}</title>\n</head>\n<body>\n<main><h1>{title}</h1>\n{html}</main>\n"
            "</body>\n</html>\n"
        )

    folder.mkdir(parents=True)
    (folder / "index.html").write_text(
        page("Lantern docs", "<p>The lantern's manual.</p>"), encoding="utf-8"
    )
    for path, (title, body) in PAGES.items():
        target = folder / f"{path}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page(title, render(body)), encoding="utf-8")


SOURCES = {"hugo": write_hugo_source, "jekyll": write_jekyll_source, "plain": write_plain_site}
OUTPUT = {"hugo": "public", "jekyll": "_site", "plain": "site"}
PAGE_URL = {
    "hugo": lambda path: f"/{path}/",
    "jekyll": lambda path: f"/{path}.html",
    "plain": lambda path: f"/{path}.html",
}


def run_recipe(venv: Venv, folder: Path, name: str) -> subprocess.CompletedProcess[str]:
    """The recipe's shell line, as written in the docs, in the site's folder."""
    return venv.run("bash", "-c", f"cd {folder} && {shell_line(name)}")


@pytest.fixture(scope="module")
def venv(release: Release, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """`pip install WHEEL[build]`: what `publish` needs, and nothing of the checkout."""
    return make_venv(tmp_path_factory.mktemp("publish"), f"{release.wheel}[build]")


@pytest.fixture(scope="module")
def sites(venv: Venv) -> dict[str, Path]:
    """Each generator's site, built and published by its recipe: name -> the built folder."""
    built = {}
    for name, write in SOURCES.items():
        source = venv.work / name
        if name == "plain":
            write(source / OUTPUT[name])
        else:
            write(source)
        done = run_recipe(venv, source, name)
        assert "static answers:" in done.stdout, done.stdout
        built[name] = source / OUTPUT[name]
    return built


@pytest.fixture
def host(request: pytest.FixtureRequest, sites: dict[str, Path]) -> Host:
    return Host(sites[request.param])


@pytest.fixture
def server(host: Host) -> Iterator[BackgroundServer]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), plain_handler(host))
    with BackgroundServer(httpd, "plain-site") as running:
        yield running


@pytest.fixture
def watch(server: BackgroundServer) -> Watch:
    return Watch(origin=server.url)


GENERATORS = ["hugo", "jekyll", "plain"]


@pytest.mark.parametrize("host", GENERATORS, indirect=True)
def test_a_published_site_answers_in_the_page_with_sources_that_resolve(
    host: Host, server: BackgroundServer, page: Page, request: pytest.FixtureRequest
) -> None:
    generator = request.node.callspec.params["host"]
    page.goto(server.url + PAGE_URL[generator](NESTED_PAGE))
    widget_host = page.locator("agentskit-ask")
    expect(widget_host).to_have_attribute("data-answers", "static")
    widget = AskWidget(page).open()
    widget.ask(QUESTION)
    assert widget.wait_answer() == "complete"
    assert ANSWER_WORD in widget.answer_text
    assert host.posts == [], "a static answer sent a request to a backend"
    hrefs = source_hrefs(page)
    assert hrefs, "the answer has no sources"
    assert hrefs[0].startswith(server.url + PAGE_URL[generator]("guide/setup/charging")), hrefs
    for href in hrefs:
        assert href.startswith(server.url + "/"), href
        assert_link_resolves(page, href)


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_publish_inject_twice_changes_nothing(venv: Venv, sites: dict[str, Path]) -> None:
    site = sites["plain"]
    before = _digest(site)
    again = venv.run(venv.bin("agentskit-web"), "publish", str(site), "--inject")
    assert "embedded in 0 pages" in again.stdout, again.stdout
    assert _digest(site) == before
    page = (site / f"{NESTED_PAGE}.html").read_text(encoding="utf-8")
    assert page.count(LOADER) == 1 and page.count("<agentskit-ask") == 1


def test_assets_from_the_wheel_with_and_without_pyscript(venv: Venv) -> None:
    plain = venv.run(venv.bin("agentskit-web"), "assets", "plain-assets")
    assert "Traceback" not in plain.stderr
    folder = venv.work / "plain-assets"
    assert (folder / LOADER).is_file() and (folder / MANIFEST).is_file()
    assert not (folder / PYSCRIPT_ENTRY).exists()
    assert '"pyscript"' not in (folder / MANIFEST).read_text(encoding="utf-8")
    assert list(folder.glob("runtime.*/pyodide.asm.wasm")), "raw wasm not restored"
    venv.run(venv.bin("agentskit-web"), "assets", "py-assets", "--with-pyscript")
    folder = venv.work / "py-assets"
    assert (folder / PYSCRIPT_ENTRY).is_file() and (folder / PYSCRIPT_CONFIG).is_file()
    assert list(folder.glob("pyscript.*/core.js"))


def test_a_command_that_needs_a_checkout_says_so_in_one_line(venv: Venv) -> None:
    refused = venv.run(venv.bin("agentskit-web"), "build", check=False)
    assert refused.returncode == 2, refused
    assert "Traceback" not in refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "source checkout" in lines[0], refused.stderr
