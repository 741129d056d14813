"""The plugins' index step, run by the real generators (quick: a stand-in assets folder).

`mkdocs build` and `sphinx-build` write the site index into the assets folder
(wherever `assets_path` puts it) after the pages, with the generator's URLs
and the base path of `site_url` / `html_baseurl`; one log line says what was
written; `index: false` / `agentskit_ask_index = False` turns the step off;
a site with nothing to index stops the build with the reason. The e2e
(e2e/test_built_site_index.py) checks every chunk of full builds against
their HTML.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentskit_web.answering.site_index import SiteIndex, parse_site_index
from agentskit_web.integrations.index_step import base_path_of

ROOT = Path(__file__).resolve().parents[1]
SITES = ROOT / "fixtures" / "sites"
DOCS = SITES / "docs"


@pytest.fixture
def prebuilt(tmp_path: Path) -> Path:
    """A stand-in for a folder `agentskit-web assets` wrote: its loader and its manifest."""
    folder = tmp_path / "prebuilt"
    folder.mkdir()
    loader = "// loader\nconst STATIC_INDEX = /* agentskit:static-index */ null;\n"
    (folder / "agentskit-ask.js").write_text(loader, encoding="utf-8")
    (folder / "assets.json").write_text("{}\n", encoding="utf-8")
    return folder


def _mkdocs(
    tmp_path: Path, prebuilt: Path, options: str = "", top: str = "", docs: Path = DOCS
) -> subprocess.CompletedProcess[str]:
    config = (SITES / "mkdocs" / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("docs_dir: ../docs", f"{top}docs_dir: {docs}")
    config = config.replace(
        "      storage_key: lumen:ask\n",
        f"      storage_key: lumen:ask\n      assets_from: {prebuilt}\n{options}",
    )
    written = tmp_path / "mkdocs.yml"
    written.write_text(config, encoding="utf-8")
    command = ["-m", "mkdocs", "build", "-f", str(written), "-d", str(tmp_path / "site")]
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)


def _sphinx(
    tmp_path: Path, prebuilt: Path, builder: str, *settings: str
) -> subprocess.CompletedProcess[str]:
    command = ["-m", "sphinx", "-b", builder, "-c", str(SITES / "sphinx")]
    for setting in (f"agentskit_ask_assets_from={prebuilt}", *settings):
        command += ["-D", setting]
    command += [str(DOCS), str(tmp_path / "site")]
    return subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)


def _index(folder: Path) -> SiteIndex:
    files = sorted(folder.glob("agentskit-index.*.json"))
    assert len(files) == 1, files
    decoded = parse_site_index(files[0].read_bytes())
    assert decoded.ok and isinstance(decoded.value, SiteIndex), decoded.diagnostic
    assert files[0].name == decoded.value.file_name()
    return decoded.value


def test_mkdocs_writes_the_index_into_the_assets_folder_below_site_url(
    tmp_path: Path, prebuilt: Path
) -> None:
    done = _mkdocs(
        tmp_path,
        prebuilt,
        "      assets_path: static/ask/\n",
        top="site_url: https://example.org/lantern/\n",
    )
    assert done.returncode == 0, done.stderr
    index = _index(tmp_path / "site" / "static" / "ask")
    assert index.base_path == "/lantern/" and index.site_name == "Lumen trail lantern"
    paths = {chunk.path for chunk in index.chunks}
    assert "/lantern/guide/setup/charging/" in paths and "/lantern/" in paths
    assert f"agentskit-ask: indexed {index.pages} pages" in done.stderr
    # A second build with the same pages writes the same file (content-hashed), not two.
    again = _mkdocs(tmp_path, prebuilt, "      assets_path: static/ask/\n")
    assert again.returncode == 0, again.stderr
    assert _index(tmp_path / "site" / "static" / "ask").base_path == "/"


def test_mkdocs_index_false_writes_no_index(tmp_path: Path, prebuilt: Path) -> None:
    done = _mkdocs(tmp_path, prebuilt, "      index: false\n")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "agentskit" / "agentskit-ask.js").is_file()
    assert list((tmp_path / "site").rglob("agentskit-index.*.json")) == []
    assert "indexed" not in done.stderr


def test_mkdocs_stops_when_no_page_has_text(tmp_path: Path, prebuilt: Path) -> None:
    docs = tmp_path / "empty-docs"
    docs.mkdir()
    (docs / "index.md").write_text("\n", encoding="utf-8")
    config = (
        f"site_name: Empty\ndocs_dir: {docs}\nplugins:\n  - agentskit-ask:\n"
        f"      assets_from: {prebuilt}\n"
    )
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    command = ["-m", "mkdocs", "build", "-f", str(tmp_path / "mkdocs.yml")]
    command += ["-d", str(tmp_path / "site")]
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "agentskit-ask:" in done.stderr and "no HTML page with text" in done.stderr


@pytest.mark.parametrize(
    ("builder", "page"),
    [("html", "/guide/setup/charging.html"), ("dirhtml", "/guide/setup/charging/")],
)
def test_sphinx_writes_the_index_with_the_builders_urls(
    tmp_path: Path, prebuilt: Path, builder: str, page: str
) -> None:
    done = _sphinx(tmp_path, prebuilt, builder)
    assert done.returncode == 0, done.stderr
    index = _index(tmp_path / "site" / "agentskit")
    assert page in {chunk.path for chunk in index.chunks}
    assert index.base_path == "/" and index.site_name == "Lumen trail lantern"
    assert f"agentskit-ask: indexed {index.pages} pages" in done.stdout


def test_sphinx_html_baseurl_and_index_off(tmp_path: Path, prebuilt: Path) -> None:
    done = _sphinx(tmp_path, prebuilt, "html", "html_baseurl=https://example.org/lantern/")
    assert done.returncode == 0, done.stderr
    assert _index(tmp_path / "site" / "agentskit").base_path == "/lantern/"
    off = tmp_path / "off"
    off.mkdir()
    done = _sphinx(off, prebuilt, "html", "agentskit_ask_index=0")
    assert done.returncode == 0, done.stderr
    assert list((off / "site").rglob("agentskit-index.*.json")) == []


def test_the_base_path_of_a_site_url() -> None:
    assert base_path_of(None) == "/"
    assert base_path_of("") == "/"
    assert base_path_of("https://example.org") == "/"
    assert base_path_of("https://example.org/docs") == "/docs/"
    assert base_path_of("https://example.org/a/b/") == "/a/b/"


def test_mkdocs_backend_index_false_keeps_only_the_static_index(
    tmp_path: Path, prebuilt: Path
) -> None:
    """The fixture has an endpoint (the file's default is on); `backend_index: false` wins."""
    done = _mkdocs(tmp_path, prebuilt, "      backend_index: false\n")
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "site").rglob("agentskit-index.*.json")) == []
    assert list((tmp_path / "site" / "agentskit" / "index").glob("agentskit-static.*.json"))
    assert "no backend index file" in done.stderr


def test_mkdocs_backend_index_must_be_a_boolean(tmp_path: Path, prebuilt: Path) -> None:
    done = _mkdocs(tmp_path, prebuilt, "      backend_index: sometimes\n")
    assert done.returncode != 0
    assert "backend_index" in done.stderr


def test_sphinx_backend_index_must_be_true_false_or_none(tmp_path: Path, prebuilt: Path) -> None:
    done = _sphinx(tmp_path, prebuilt, "html", "agentskit_ask_backend_index=sometimes")
    assert done.returncode != 0
    assert "agentskit_ask_backend_index: expected True, False or None" in done.stderr
