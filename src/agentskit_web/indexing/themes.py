"""Which theme built a page, where its main content is, and what inside it is chrome.

Every rule here was read off pages the real generators built (MkDocs 1.6 with
Material 9, `mkdocs` and `readthedocs`; Sphinx 9 with alabaster, furo,
sphinx-rtd-theme and pydata-sphinx-theme; Docusaurus 3 from its documented
output structure). A theme is recognised by an element only it writes
(`detect`); its `body` names the element that holds the page's own content,
and `strip` names what the theme puts inside that element which a reader does
not read as the page's text (edit buttons, permalink signs, tag lists,
feedback forms, breadcrumbs, previous/next links, in-page TOCs).

Order matters: the first theme whose `detect` matches wins, so the more
specific signatures come first. A page no theme claims falls back to
`<main>`, `[role=main]`, `<article>`, then `<body>` (see html_page.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .html_tree import Element
from .selector import Selector, parse_selector


@dataclass(frozen=True, slots=True)
class Theme:
    """One theme's rules (selectors in the selector.py subset)."""

    name: str
    detect: Selector
    body: Selector
    strip: Selector | None = None

    def claims(self, root: Element) -> bool:
        return self.detect.first(root) is not None


def _theme(name: str, detect: str, body: str, strip: str | None = None) -> Theme:
    return Theme(
        name, parse_selector(detect), parse_selector(body), parse_selector(strip) if strip else None
    )


THEMES: Final = (
    # Material: <article class="md-content__inner md-typeset">; edit/view buttons, tags,
    # the feedback form and the "last update" facts live inside it.
    _theme(
        "mkdocs-material",
        "article.md-content__inner, div.md-content",
        "article.md-content__inner",
        ".md-content__button, .md-source-file, .md-tags, .md-feedback, .md-annotation__index,"
        " .md-top, .md-dialog",
    ),
    # Docusaurus 3: <article> holds breadcrumbs, the mobile TOC, .theme-doc-markdown and the
    # doc footer ("Edit this page", last update); only .theme-doc-markdown is the page's text.
    _theme(
        "docusaurus",
        "div.theme-doc-markdown, html.plugin-docs",
        "div.theme-doc-markdown, article div.markdown",
        ".theme-doc-toc-mobile, .theme-doc-breadcrumbs, .theme-doc-footer, .pagination-nav,"
        " .theme-edit-this-page, .theme-last-updated, .theme-doc-version-badge",
    ),
    # furo: <article role="main" id="furo-main-content">; the edit/view-source icons sit
    # in .content-icon-container before it, the previous/next links after it.
    _theme(
        "sphinx-furo",
        "#furo-main-content, div.content-icon-container",
        "#furo-main-content, article[role=main]",
        ".content-icon-container, .related-pages, .bottom-of-page",
    ),
    # pydata-sphinx-theme: <article class="bd-article"> inside .bd-content; the edit button,
    # breadcrumbs and prev/next footer live outside the article.
    _theme(
        "sphinx-pydata",
        "article.bd-article, div.bd-container",
        "article.bd-article",
        ".prev-next-area, .header-article, .bd-header-article, .editthispage",
    ),
    # sphinx-rtd-theme: <div itemprop="articleBody"> inside <div role="main" class="document">
    # inside .wy-nav-content; breadcrumbs and footer buttons are siblings of articleBody.
    _theme(
        "sphinx-rtd",
        "div.wy-nav-content [itemprop=articleBody], meta[name=readthedocs-addons-api-version]",
        "[itemprop=articleBody]",
        ".rst-footer-buttons, .wy-breadcrumbs",
    ),
    # MkDocs' own readthedocs theme: <div role="main"> in .wy-nav-content (no articleBody).
    _theme(
        "mkdocs-readthedocs",
        "div.wy-nav-content div.rst-content",
        "div.rst-content div[role=main]",
        ".rst-footer-buttons, .wy-breadcrumbs, .rst-versions",
    ),
    # MkDocs' built-in `mkdocs` theme (Bootstrap): <div class="col-md-9" role="main">.
    _theme(
        "mkdocs",
        "div.col-md-9[role=main]",
        "div.col-md-9[role=main]",
        ".navbar, .modal",
    ),
    # Sphinx alabaster (and the basic theme most others extend): <div class="body" role="main">.
    _theme(
        "sphinx-alabaster",
        "div.bodywrapper div.body, div.documentwrapper div.body",
        "div.body",
        ".related, .sphinxsidebar",
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


def detect_theme(root: Element) -> Theme | None:
    """The first known theme whose signature is on the page, or None."""
    for theme in THEMES:
        if theme.claims(root):
            return theme
    return None
