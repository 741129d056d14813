"""Which theme built a page, where its main content is, and what inside it is chrome.

Every rule here was read off pages the real generators built (MkDocs 1.6 with
Material 9, `mkdocs` and `readthedocs`; Sphinx 9 with alabaster, furo,
sphinx-rtd-theme and pydata-sphinx-theme; Docusaurus 3 from its documented
output structure). A theme is recognised by an element only it writes
(`detect`); its `body` names the element that holds the page's own content,
and `strip` names what the theme puts inside that element which a reader does
not read as the page's text beyond themes.ALWAYS_STRIP (Material's edit
button, tag list and "last update" line); most themes keep such chrome
outside their content element, so their body rule alone leaves it out.

Order matters: the first theme whose `detect` matches wins, so the more
specific signatures come first. A page no theme claims falls back to
`<main>`, `[role=main]`, `<article>`, then `<body>` (see html_page.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .html_tree import Element
from .selector import Selector, parse_selector


@dataclass(frozen=True, slots=True)
class Theme:
    """One theme's rules (selectors in the selector.py subset)."""

    name: str
    detect: tuple[Selector, ...]
    """Every one of these must match some element of the page."""
    body: Selector
    strip: Selector | None = None

    def claims(self, elements: Sequence[Element]) -> bool:
        """Whether the page (its elements in document order) carries this theme's signature."""
        return all(selector.first_in(elements) is not None for selector in self.detect)


def _theme(name: str, detect: str | tuple[str, ...], body: str, strip: str | None = None) -> Theme:
    signature = (detect,) if isinstance(detect, str) else detect
    return Theme(
        name,
        tuple(parse_selector(part) for part in signature),
        parse_selector(body),
        parse_selector(strip) if strip else None,
    )


THEMES: Final = (
    # Material: <article class="md-content__inner md-typeset">; the edit/view buttons, the
    # tag list and the "last update" facts (source-file plugin) live inside it.
    _theme(
        "mkdocs-material",
        "article.md-content__inner, div.md-content",
        "article.md-content__inner",
        ".md-content__button, .md-source-file, .md-tags, .md-annotation__index",
    ),
    # Docusaurus 3: <article> holds breadcrumbs, the mobile TOC, .theme-doc-markdown and the
    # doc footer ("Edit this page", last update); only .theme-doc-markdown is the page's text
    # (a blog post's is the `div.markdown` of its article).
    _theme(
        "docusaurus",
        "div.theme-doc-markdown, html.plugin-docs, html.plugin-blog",
        "div.theme-doc-markdown, article div.markdown",
    ),
    # furo: <article role="main" id="furo-main-content">; the edit/view-source icons sit
    # before it and the previous/next links after it, outside.
    _theme("sphinx-furo", "#furo-main-content", "#furo-main-content"),
    # pydata-sphinx-theme: <article class="bd-article"> inside .bd-content; the edit button,
    # breadcrumbs and the prev/next footer are outside the article.
    _theme("sphinx-pydata", "article.bd-article", "article.bd-article"),
    # sphinx-rtd-theme: <div itemprop="articleBody"> inside <div role="main" class="document">
    # inside .wy-nav-content; breadcrumbs ("Edit on GitHub") and footer buttons are outside
    # articleBody. MkDocs' readthedocs theme copies that structure; Sphinx's pages load
    # documentation_options.js, MkDocs' do not.
    _theme(
        "sphinx-rtd",
        ("div.wy-nav-content [itemprop=articleBody]", "script[src*=documentation_options]"),
        "[itemprop=articleBody]",
    ),
    _theme(
        "mkdocs-readthedocs",
        "div.wy-nav-content div.rst-content",
        "div.rst-content [itemprop=articleBody], div.rst-content div[role=main]",
    ),
    # MkDocs' built-in `mkdocs` theme (Bootstrap): <div class="col-md-9" role="main">; the
    # navbar, sidebar TOC and search modal are outside it.
    _theme("mkdocs", "div.col-md-9[role=main]", "div.col-md-9[role=main]"),
    # Sphinx alabaster (and the basic theme most others extend): <div class="body" role="main">;
    # the sidebar (search box, navigation) and the footer are outside it.
    _theme(
        "sphinx-alabaster", "div.bodywrapper div.body, div.documentwrapper div.body", "div.body"
    ),
)
"""Known themes, most specific first."""

FALLBACK_BODY: Final = parse_selector("main")
FALLBACK_ROLE_MAIN: Final = parse_selector("[role=main]")
FALLBACK_ARTICLE: Final = parse_selector("article")
MARKER: Final = parse_selector("[data-agentskit-body]")
"""An explicit marker on any element: its content is the page's text, whatever the theme."""

ALWAYS_STRIP: Final = parse_selector(
    "script, style, template, noscript, svg, nav, form, button, input, select, textarea, iframe,"
    " [role=navigation], [role=search], [role=banner], [role=contentinfo], [hidden],"
    " a.headerlink, a.hash-link, a.anchorjs-link, .headerlink, .linenos, .linenodiv,"
    " .toc, .toctree-wrapper, .md-sidebar, .sphinxsidebar, .wy-nav-side, .bd-sidebar-primary,"
    " .bd-sidebar-secondary, .sidebar-drawer, .toc-drawer, [data-agentskit-skip]"
)
"""Never the page's text, whichever element holds the content: navigation, search forms,
permalink signs, line numbers, tables of contents and sidebars, and anything an owner marks
with `data-agentskit-skip`."""

OUTSIDE_STRIP: Final = parse_selector("header, footer, aside")
"""Stripped too when no theme or marker names the content (the `<body>` fallback): page
chrome. Inside a recognised body they may be content (Docusaurus wraps the h1 in a header)."""

COOKIE_WORDS: Final = ("cookie", "consent", "gdpr")
"""An element whose id or class mentions one of these is a cookie banner: never indexed."""


def detect_theme(elements: Sequence[Element]) -> Theme | None:
    """The first known theme whose signature is on the page, or None."""
    for theme in THEMES:
        if theme.claims(elements):
            return theme
    return None
