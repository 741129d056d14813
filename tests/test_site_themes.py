"""The site-theme read off a built page (integrations/site_themes.py) and the preview's use."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentskit_web.cli.preview import preview_config
from agentskit_web.integrations.site_themes import SPHINX_SITE_THEMES, site_theme_of_page

MATERIAL_HEAD = b'<head><meta name="generator" content="mkdocs-1.6.1, mkdocs-material-9.8.1">'
SPHINX_LINK = b'<link rel="stylesheet" type="text/css" href="%s" />'


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (MATERIAL_HEAD, "material"),
        (SPHINX_LINK % b"_static/click.css?v=66889b38", "pallets-click"),
        (SPHINX_LINK % b"../_static/flask.css", "pallets-flask"),
        (SPHINX_LINK % b"_static/styles/furo.css?v=1", "furo"),
        (SPHINX_LINK % b"_static/pocoo.css", "pallets"),
        (SPHINX_LINK % b"_static/alabaster.css", "alabaster"),
        (SPHINX_LINK % b"_static/styles/pydata-sphinx-theme.css?digest=8d2f", "pydata"),
        (SPHINX_LINK % b"_static/css/theme.css", None),  # Read the Docs': a name too plain
        (SPHINX_LINK % b"_static/basic.css", None),
        (b'<meta name="generator" content="mkdocs-1.6.1">', None),  # the mkdocs theme
        (SPHINX_LINK % b"https://cdn.example/flask.css", None),  # not a Sphinx _static file
        (b"", None),
    ],
)
def test_a_page_names_the_theme_that_built_it(head: bytes, expected: str | None) -> None:
    assert site_theme_of_page(head) == expected


STYLESHEETS = {
    "furo": "_static/styles/furo.css",
    "pydata_sphinx_theme": "_static/styles/pydata-sphinx-theme.css",
    "sphinx_rtd_theme": None,
}
"""Where a theme's own stylesheet is, when it is not `_static/<html_theme>.css` (None: one
the page cannot be told apart by)."""


def test_every_sphinx_site_theme_is_read_off_its_stylesheet() -> None:
    for html_theme, site_theme in SPHINX_SITE_THEMES.items():
        path = STYLESHEETS.get(html_theme, f"_static/{html_theme}.css")
        if path is not None:
            assert site_theme_of_page(SPHINX_LINK % path.encode()) == site_theme


@pytest.mark.parametrize(("stylesheet", "expected"), [("click", "pallets-click"), ("plain", None)])
def test_the_preview_writes_the_site_theme_it_read_off_the_home_page(
    tmp_path: Path, stylesheet: str, expected: str | None
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    link = (SPHINX_LINK % f"_static/{stylesheet}.css".encode()).decode()
    (site / "index.html").write_text(f"<html><head>{link}</head><body></body></html>")
    with preview_config(site) as config:
        assert config.inject is not None
        written = f'site-theme="{expected}"' if expected else "site-theme"
        assert (written in config.inject) is (expected is not None), config.inject
