"""The site reader on real builds: MkDocs (Material, mkdocs, readthedocs) and Sphinx (alabaster,
furo, sphinx-rtd-theme, pydata-sphinx-theme; html and dirhtml), each built here from one
small source written in the test.

Every build must give the same sections with the same text, each cited at a page that is a
built file and an anchor that is on it (read back with a regex, not with the reader), and no
title or text may carry the theme's chrome (navigation, search, footer, permalink signs).
"""

import subprocess
import sys
from pathlib import Path

import pytest

from agentskit_web.bench.index import check_citations, page_targets
from agentskit_web.indexing.site import index_site

MKDOCS_PAGES = {
    "index.md": "# Demo Home\n\nWelcome words.\n\n## Install { #custom-install }\n\n"
    '```python\nimport demo\n```\n\n!!! note "Heads up"\n    Admonition words.\n\n'
    "## Usage\n\nFirst usage.\n\n## Usage\n\nSecond usage.\n",
    "guide/setup.md": '# Setup\n\nSetup words with <abbr title="Cross-Origin">CORS</abbr>.\n\n'
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
}
SPHINX_PAGES = {
    "conf.py": 'project = "Demo Home"\n',
    "index.rst": "Demo Home\n=========\n\nWelcome words.\n\n.. toctree::\n\n   guide/setup\n\n"
    "Install\n-------\n\n.. code-block:: python\n\n   import demo\n\n.. note::\n\n"
    "   Admonition words.\n\nThe default_method setting\n--------------------------\n\n"
    "First usage.\n\nUsage\n-----\n\nSecond usage.\n",
    "guide/setup.rst": "Setup\n=====\n\nSetup words.\n\n=====  =====\na      b\n=====  =====\n"
    "1      2\n=====  =====\n",
}
CHROME_WORDS = ("Search", "Edit", "Next", "Previous", "Copyright", "Built with", "¶", "{", "<")


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")


def build_mkdocs(tmp: Path, theme: str, directory_urls: bool) -> Path:
    write(tmp / "docs", MKDOCS_PAGES)
    (tmp / "mkdocs.yml").write_text(
        "site_name: Demo Home\nrepo_url: https://example.com/r\nedit_uri: edit/main/docs/\n"
        f"use_directory_urls: {str(directory_urls).lower()}\ntheme:\n  name: {theme}\n"
        "markdown_extensions:\n  - attr_list\n  - admonition\n  - tables\n"
        "  - toc:\n      permalink: true\n"
        "  - pymdownx.highlight:\n      pygments_lang_class: true\n"
        "  - pymdownx.superfences\n",
        encoding="utf-8",
    )
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(tmp / "mkdocs.yml"),
         "-d", str(tmp / "site")],
        check=True, capture_output=True, env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""},
    )  # fmt: skip
    return tmp / "site"


def build_sphinx(tmp: Path, theme: str, builder: str) -> Path:
    write(tmp / "src", SPHINX_PAGES)
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", builder, "-D", f"html_theme={theme}",
         str(tmp / "src"), str(tmp / "out")],
        check=True, capture_output=True,
    )  # fmt: skip
    return tmp / "out"


def check(site: Path, generator: str) -> dict[tuple[str, str | None], str]:
    index = index_site(site)
    assert index.generator == generator
    citations = check_citations(index.chunk_list(), page_targets(site, "/"))
    assert (citations.missing_page, citations.missing_anchor, citations.markup_titles) == (0, 0, 0)
    for chunk in index.chunk_list():
        for word in CHROME_WORDS:
            assert word not in f"{chunk.page_title} {chunk.heading} {chunk.text}", (word, chunk)
    return {(c.path, c.anchor): f"{c.heading}: {c.text}" for c in index.chunk_list()}


@pytest.mark.parametrize(
    ("theme", "generator"),
    [("material", "mkdocs-material"), ("mkdocs", "mkdocs"), ("readthedocs", "mkdocs-readthedocs")],
)
def test_mkdocs_builds(tmp_path: Path, theme: str, generator: str) -> None:
    sections = check(build_mkdocs(tmp_path, theme, True), generator)
    assert sections == {
        ("/", None): "Demo Home: Welcome words.",
        ("/", "custom-install"): "Install: Heads up\nAdmonition words.",
        ("/", "usage"): "Usage: First usage.",
        ("/", "usage_1"): "Usage: Second usage.",
        ("/guide/setup/", None): "Setup: Setup words with CORS.\na | b\n1 | 2",
    }


def test_mkdocs_without_directory_urls(tmp_path: Path) -> None:
    sections = check(build_mkdocs(tmp_path, "material", False), "mkdocs-material")
    assert {path for path, _ in sections} == {"/", "/guide/setup.html"}


@pytest.mark.parametrize(
    ("theme", "generator"),
    [
        ("alabaster", "sphinx-alabaster"),
        ("furo", "sphinx-furo"),
        ("sphinx_rtd_theme", "sphinx-rtd"),
        ("pydata_sphinx_theme", "sphinx-pydata"),
    ],
)
def test_sphinx_builds(tmp_path: Path, theme: str, generator: str) -> None:
    sections = check(build_sphinx(tmp_path, theme, "html"), generator)
    assert sections == {
        ("/", None): "Demo Home: Welcome words.",
        ("/", "install"): "Install: Note\nAdmonition words.",
        ("/", "the-default-method-setting"): "The default_method setting: First usage.",
        ("/", "usage"): "Usage: Second usage.",
        ("/guide/setup.html", None): "Setup: Setup words.\na | b\n1 | 2",
    }


def test_sphinx_dirhtml(tmp_path: Path) -> None:
    sections = check(build_sphinx(tmp_path, "alabaster", "dirhtml"), "sphinx-alabaster")
    assert {path for path, _ in sections} == {"/", "/guide/setup/"}


def test_sphinx_autodoc_entries_are_sections_at_their_ids(tmp_path: Path) -> None:
    write(
        tmp_path / "src",
        {
            "conf.py": "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
            'project = "API"\nextensions = ["sphinx.ext.autodoc"]\n',
            "demo_mod.py": '"""Demo module."""\n\n\nclass Widget:\n    """A widget."""\n\n'
            "    def render(self, size: int = 3) -> str:\n"
            '        """Render at a size."""\n        return ""\n',
            "index.rst": "API\n===\n\nIntro.\n\n.. automodule:: demo_mod\n   :members:\n\n"
            "After the API.\n",
        },
    )
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(tmp_path / "src"),
         str(tmp_path / "out")],
        check=True, capture_output=True,
    )  # fmt: skip
    check(tmp_path / "out", "sphinx-alabaster")
    chunks = index_site(tmp_path / "out").chunk_list()
    assert [(c.anchor, c.heading, c.text) for c in chunks] == [
        (None, "API", "Intro.\nDemo module."),
        ("demo_mod.Widget", "demo_mod.Widget", "class demo_mod.Widget\nA widget."),
        (
            "demo_mod.Widget.render",
            "demo_mod.Widget.render",
            "render(size: int = 3) → str\nRender at a size.",
        ),
        (None, "API", "After the API."),  # the text after the entries is the page's again
    ]
