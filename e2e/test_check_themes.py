"""`agentskit-web check` on stock themes whose own scripts call other origins.

Two sites as their owners build them, each with static answers (the plugin or
the extension, no `endpoint`) and served by a plain static host that answers
POST with 405:

- MkDocs Material with `repo_url`: Material's script asks api.github.com for the
  repository's stars and forks;
- Sphinx with the Pallets theme (Flask's, Click's): its version banner asks
  pypi.org for the project's releases.

`check` aborts those requests (nothing leaves) and must say they are the
page's, not the widget's: the `page` row names each URL with the
`--allow-origin` that lets it through, while the origin and console rows,
which judge the widget, pass. The widget answers in the page, so the whole
check passes. Then the two faults an owner must hear about: a page the answer
cites deleted from the host (the sources row fails with its 404) and an index
part missing (the answer row fails, naming the part and its 404).
"""

from __future__ import annotations

import http.server
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from built_sites import MARKDOWN_EXTENSIONS, MKDOCS_PAGES, QUESTIONS, SPHINX_PAGES, _write
from e2e_support import BackgroundServer
from test_check import check, detail, verdicts
from test_static_answers import Host, plain_handler

QUESTION = QUESTIONS["charge"]
REPO_URL = "https://github.com/lumen-example/lantern"
THEME_ORIGIN = {"material": "https://api.github.com", "pallets": "https://pypi.org"}
"""The origin each theme's own script calls on every page."""
CITED_PAGE = {"material": "guide/battery/", "pallets": "battery.html"}
"""The page that answers QUESTION (its first source), as built: Material's is a folder (a
static host answers 404 for it once the folder is gone; http.server would list a folder
left without its index.html)."""
MATERIAL_CONFIG = f"""site_name: Lumen trail lantern
site_url: http://docs.example/
repo_url: {REPO_URL}
theme:
  name: material
  font: false
{MARKDOWN_EXTENSIONS}
plugins:
  - search
  - agentskit-ask
"""
"""Material as its quick start writes it, with a repository link (and no Google fonts: the
e2e's hosts are loopback only), the plugin without `endpoint`: static answers."""
PALLETS_CONF = """project = "Lumen"
version = "2.0"
extensions = ["pallets_sphinx_themes", "agentskit_web.sphinx"]
html_theme = "flask"
html_static_path: list[str] = []
"""
"""Flask's own theme, its version banner on (the default), the extension without endpoint."""


def build(theme: str, root: Path) -> Path:
    """The site built by its generator's own command; the output folder."""
    out = root / "site"
    if theme == "material":
        _write(root / "src" / "docs", MKDOCS_PAGES)
        config = root / "src" / "mkdocs.yml"
        config.write_text(MATERIAL_CONFIG, encoding="utf-8")
        command = ["-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(out)]
    else:
        _write(root / "src", SPHINX_PAGES)
        (root / "src" / "conf.py").write_text(PALLETS_CONF, encoding="utf-8")
        command = ["-m", "sphinx", "-q", "-b", "html", str(root / "src"), str(out)]
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{theme} build failed:\n{done.stdout}\n{done.stderr}"
    return out


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {theme: build(theme, tmp_path_factory.mktemp(theme)) for theme in THEME_ORIGIN}


def serve(root: Path) -> BackgroundServer:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), plain_handler(Host(root)))
    return BackgroundServer(httpd, "plain-site").start()


@pytest.fixture
def copy_of(sites: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    """A writable copy of a built site (a test breaks it without touching the shared one)."""

    def copy(theme: str) -> Path:
        return Path(shutil.copytree(sites[theme], tmp_path / theme))

    return copy


def theme_script_present(theme: str, site: Path) -> None:
    """The built pages carry the script that calls the other origin (else the test is void)."""
    home = (site / "index.html").read_text(encoding="utf-8")
    if theme == "material":
        assert REPO_URL in home and "md-source" in home
    else:
        assert "describe_version.js" in home


@pytest.mark.parametrize("theme", list(THEME_ORIGIN))
def test_check_passes_and_names_the_theme_s_requests_as_the_page_s(
    theme: str, sites: dict[str, Path]
) -> None:
    site = sites[theme]
    theme_script_present(theme, site)
    server = serve(site)
    try:
        status, report, stderr = check(server.url + "/", "--question", QUESTION)
    finally:
        server.stop()
    assert status == 0 and report is not None, (stderr, report)
    found = verdicts(report)
    assert all(found.values()), found
    assert "locally (no request)" in detail(report, "answer")
    assert "each loads and has its anchor" in detail(report, "sources")
    assert detail(report, "origin") == "no request of the widget left the page's origin"
    assert report is not None
    page = next(c for c in report["checks"] if c["name"] == "page")
    origin = THEME_ORIGIN[theme]
    named = [w for w in page["warnings"] if f"request to another origin {origin}/" in w]
    assert named, page["warnings"]
    assert all(f"--allow-origin {origin} lets it through" in w for w in named)


@pytest.mark.parametrize("theme", list(THEME_ORIGIN))
def test_a_deleted_page_fails_the_sources_row_with_its_404(
    theme: str, copy_of: Callable[[str], Path]
) -> None:
    site = copy_of(theme)
    cited = site / CITED_PAGE[theme]
    shutil.rmtree(cited) if cited.is_dir() else cited.unlink()
    server = serve(site)
    try:
        status, report, stderr = check(server.url + "/", "--question", QUESTION)
    finally:
        server.stop()
    assert status == 1 and report is not None, (stderr, report)
    found = verdicts(report)
    assert found["answer"] is True and found["sources"] is False, found
    gone = "/" + CITED_PAGE[theme]
    assert f"{gone}#" in detail(report, "sources") and "HTTP 404" in detail(report, "sources")
    assert found["origin"] is True and found["console"] is True, report


@pytest.mark.parametrize("theme", list(THEME_ORIGIN))
def test_a_missing_index_part_fails_the_answer_row_with_its_404(
    theme: str, copy_of: Callable[[str], Path]
) -> None:
    site = copy_of(theme)
    loader = (site / "agentskit" / "agentskit-ask.js").read_text(encoding="utf-8")
    folder = site / "agentskit" / "index"
    parts = [p for p in folder.iterdir() if p.suffix == ".json" and p.name not in loader]
    assert parts, "the static index has no parts beside its manifest"
    for part in parts:
        for copy in (part, part.with_name(part.name + ".br"), part.with_name(part.name + ".gz")):
            copy.unlink(missing_ok=True)
    server = serve(site)
    try:
        status, report, stderr = check(server.url + "/", "--question", QUESTION)
    finally:
        server.stop()
    assert status == 1 and report is not None, (stderr, report)
    found = verdicts(report)
    assert found["boot"] is True and found["answer"] is False, found
    answer = detail(report, "answer")
    assert "/agentskit/index/" in answer and "HTTP 404" in answer, answer
    assert found["sources"] is False and "the answer failed" in detail(report, "sources")
