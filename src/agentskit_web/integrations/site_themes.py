"""The `site-theme` the widget's stylesheet knows for a Sphinx theme, and for a built page.

The Sphinx extension writes `site-theme` from `html_theme` (`SPHINX_SITE_THEMES`); the
MkDocs plugin writes `material` for Material. `agentskit-web preview` adds the widget to
a folder built without either, so it reads the theme off the built page instead
(`site_theme_of_page`): Material's generator meta tag, or the stylesheet a Sphinx theme
links from `_static/` (its theme.conf `stylesheet`). Pure text in, name out: no Sphinx
import, so the preview needs no Sphinx installed.
"""

import re
from typing import Final

SPHINX_SITE_THEMES: Final = {
    "furo": "furo",
    "pocoo": "pallets",
    "flask": "pallets-flask",
    "click": "pallets-click",
    "jinja": "pallets-jinja",
    "werkzeug": "pallets-werkzeug",
    "pydata_sphinx_theme": "pydata",
    "alabaster": "alabaster",
    "sphinx_rtd_theme": "rtd",
}
"""`html_theme` -> the `site-theme` the widget's stylesheet knows (agentskit-ask.css):
Furo's colours, its light/dark switch and its drawers' stacking on a phone; the Pallets
themes' colours (pocoo and the projects' flavours of it, which differ only in their link
colour), which are light only, so the box stays light whatever the system says;
pydata-sphinx-theme's colours and its light/dark switch; Sphinx's default alabaster and
Read the Docs' theme, light only too."""
_STYLESHEET_THEMES: Final = {
    **{name: name for name in ("furo", "pocoo", "flask", "click", "jinja", "werkzeug")},
    "alabaster": "alabaster",
    "pydata-sphinx-theme": "pydata_sphinx_theme",
}
"""The stylesheet a theme links from `_static/` -> its `html_theme` (most share its name;
Read the Docs' `css/theme.css` says too little to be read as its theme)."""
MATERIAL: Final = "material"
_MATERIAL_META: Final = re.compile(rb'<meta name="generator" content="[^"]*mkdocs-material-')
_SPHINX_STYLESHEET: Final = re.compile(
    rb'<link rel="stylesheet"[^>]*href="(?:[^"]*/)?_static/(?:styles/)?([a-z-]+)\.css[?"]'
)


def site_theme_of_page(head: bytes) -> str | None:
    """The `site-theme` for a page built by a theme the stylesheet knows (from its first
    bytes: the theme's marks are in `<head>`), else None."""
    if _MATERIAL_META.search(head):
        return MATERIAL
    for match in _SPHINX_STYLESHEET.finditer(head):
        html_theme = _STYLESHEET_THEMES.get(match.group(1).decode())
        if html_theme is not None:
            return SPHINX_SITE_THEMES[html_theme]
    return None
