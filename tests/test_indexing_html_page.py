"""One built page -> its main content (indexing/html_page.py, themes.py, selector.py).

Each theme's page is a small HTML document written here with the structure
its real build has (Material 9, the `mkdocs` and `readthedocs` themes of
MkDocs 1.6, Sphinx 9 with alabaster, furo, sphinx-rtd-theme and
pydata-sphinx-theme, Docusaurus 3): the content element, the chrome a theme
puts around and inside it, and the permalink signs. Every page carries the
same chrome words (CHROME); a test fails if any of them is indexed.
"""

import pytest

from agentskit_web.indexing.docs_folder import chunk_page
from agentskit_web.indexing.html_page import (
    SKIP_FRAGMENT,
    SKIP_LISTING,
    SKIP_NOINDEX,
    SKIP_NOT_FOUND,
    SKIP_REDIRECT,
    SKIP_SEARCH,
    read_html_page,
)
from agentskit_web.indexing.html_tree import Element
from agentskit_web.indexing.selector import SelectorError, parse_selector

CHROME = ("NAVWORD", "SIDEWORD", "TOCWORD", "FOOTWORD", "EDITWORD", "COOKIEWORD", "SEARCHWORD")

CONTENT = """
<h1 id="guide">Guide<a class="headerlink" href="#guide" title="Permanent link">¶</a></h1>
<p>Intro about <code>Widget</code> and more.</p>
<h2 id="install">Install<a class="headerlink" href="#install" title="Permanent link">¶</a></h2>
<p>Run the installer.</p>
"""

NAV = "<nav class='md-nav'><a href='/x/'>NAVWORD</a></nav>"
COOKIE = "<div class='md-consent' data-md-component='consent'><p>COOKIEWORD</p></div>"


def doc(body: str, head: str = "", html_class: str = "") -> str:
    return (
        f"<!doctype html><html class='{html_class}'><head><title>Guide - Site</title>{head}"
        f"</head><body>{body}</body></html>"
    )


THEMES = {
    "mkdocs-material": doc(
        f"<header class='md-header'>NAVWORD<form class='md-search__form'><input>SEARCHWORD"
        f"</form></header>{COOKIE}<div class='md-container'><main class='md-main'>"
        "<div class='md-main__inner md-grid'><div class='md-sidebar md-sidebar--primary'>"
        f"{NAV}</div><div class='md-sidebar md-sidebar--secondary'><nav class='md-nav md-nav--"
        "secondary'>TOCWORD</nav></div><div class='md-content' data-md-component='content'>"
        "<article class='md-content__inner md-typeset'><a href='https://e.x/edit/main/docs/g.md'"
        " title='Edit this page' class='md-content__button md-icon'>EDITWORD</a>"
        f"<nav class='md-tags'>NAVWORD</nav><span class='md-tags'>NAVWORD</span>{CONTENT}"
        "<aside class='md-source-file'>EDITWORD Last update</aside>"
        "<form class='md-feedback'>Was this page helpful? EDITWORD</form></article></div>"
        "</div></main><footer class='md-footer'>FOOTWORD</footer></div>",
        head="<meta name='generator' content='mkdocs-1.6.1, mkdocs-material-9.8.1'>",
    ),
    "mkdocs": doc(
        "<div class='navbar fixed-top navbar-expand-lg'>NAVWORD</div><div class='container'>"
        "<div class='row'><div class='col-md-3'><div class='navbar-expand-md bs-sidebar "
        f"hidden-print affix' role='complementary'>SIDEWORD</div></div>"
        f"<div class='col-md-9' role='main'>{CONTENT}</div></div></div>"
        "<footer class='col-md-12'><p>FOOTWORD Documentation built with MkDocs.</p></footer>"
        "<div class='modal' id='mkdocs_search_modal' role='dialog'><form><input>SEARCHWORD"
        "</form><div id='mkdocs-search-results'></div></div>"
    ),
    "mkdocs-readthedocs": doc(
        "<div class='wy-grid-for-nav'><nav data-toggle='wy-nav-shift' class='wy-nav-side "
        "stickynav'>SIDEWORD</nav><section data-toggle='wy-nav-shift' class='wy-nav-content-wrap'>"
        "<div class='wy-nav-content'><div class='rst-content'><div role='navigation' "
        "aria-label='breadcrumbs navigation'><ul class='wy-breadcrumbs'><li>NAVWORD</li><li "
        "class='wy-breadcrumbs-aside'><a href='https://e.x/edit'>EDITWORD</a></li></ul></div>"
        "<div role='main' class='document' itemscope='itemscope' itemtype='http://schema.org/"
        f"Article'><div class='section' itemprop='articleBody'>{CONTENT}</div></div>"
        "<footer><div class='rst-footer-buttons' role='navigation'>NAVWORD</div><div "
        "role='contentinfo'>FOOTWORD</div></footer></div></div></section></div>"
    ),
    "sphinx-alabaster": doc(
        "<div class='document'><div class='documentwrapper'><div class='bodywrapper'>"
        "<div class='body' role='main'>"
        "<section id='guide'><h1>Guide<a class='headerlink' href='#guide'>¶</a></h1>"
        "<p>Intro about <code class='docutils literal notranslate'><span class='pre'>Widget"
        "</span></code> and more.</p><div class='toctree-wrapper compound'><ul><li>TOCWORD</li>"
        "</ul></div><section id='install'><h2>Install<a class='headerlink' href='#install' "
        "title='Link to this heading'>¶</a></h2><p>Run the installer.</p></section></section>"
        "</div></div></div><div class='sphinxsidebar' role='navigation'><div "
        "class='sphinxsidebarwrapper'>SIDEWORD<div class='searchformwrapper'><form "
        "class='search'><input>SEARCHWORD</form></div></div></div></div>"
        "<div class='footer'>FOOTWORD</div>",
        head="<script src='_static/documentation_options.js?v=1'></script>",
    ),
    "sphinx-furo": doc(
        "<div class='page'><aside class='sidebar-drawer'>SIDEWORD</aside><div class='main'>"
        "<div class='content'><div class='article-container'><div class='content-icon-container'>"
        "<div class='edit-this-page'><a class='muted-link' href='https://e.x/edit'>EDITWORD</a>"
        "</div></div><article role='main' id='furo-main-content'>"
        "<section id='guide'><h1>Guide<a class='headerlink' href='#guide'>¶</a></h1>"
        "<p>Intro about <code>Widget</code> and more.</p><section id='install'><h2>Install"
        "<a class='headerlink' href='#install'>¶</a></h2><p>Run the installer.</p></section>"
        "</section></article></div><footer><div class='related-pages'>NAVWORD</div>"
        "<div class='bottom-of-page'>FOOTWORD</div></footer></div><aside class='toc-drawer'>"
        "TOCWORD</aside></div></div>"
    ),
    "sphinx-rtd": doc(
        "<div class='wy-grid-for-nav'><nav class='wy-nav-side'>SIDEWORD<div role='search'>"
        "<form id='rtd-search-form'><input>SEARCHWORD</form></div></nav><section "
        "class='wy-nav-content-wrap'><div class='wy-nav-content'><div class='rst-content'>"
        "<div role='navigation' aria-label='Page navigation'><ul class='wy-breadcrumbs'><li>"
        "NAVWORD</li><li class='wy-breadcrumbs-aside'><a href='_sources/g.rst.txt'>EDITWORD</a>"
        "</li></ul></div><div role='main' class='document' itemscope='itemscope'><div "
        "itemprop='articleBody'><section id='guide'><h1>Guide<a class='headerlink' "
        "href='#guide'>\uf0c1</a></h1><p>Intro about <code>Widget</code> and more.</p>"
        "<section id='install'><h2>Install<a class='headerlink' href='#install'>\uf0c1</a></h2>"
        "<p>Run the installer.</p></section></section></div></div><footer><div "
        "class='rst-footer-buttons' role='navigation'>NAVWORD</div><div role='contentinfo'>"
        "FOOTWORD</div>FOOTWORD Built with Sphinx</footer></div></div></section></div>",
        head="<script src='_static/documentation_options.js?v=1'></script>",
    ),
    "sphinx-pydata": doc(
        "<div class='search-button__wrapper'><form class='bd-search'><input>SEARCHWORD</form>"
        "</div><header class='bd-header navbar'>NAVWORD</header><div class='bd-container'>"
        "<div class='bd-container__inner bd-page-width'><div class='bd-sidebar-primary "
        "bd-sidebar'>SIDEWORD</div><main id='main-content' class='bd-main' role='main'>"
        "<div class='bd-content'><div class='bd-article-container'><div class='bd-header-"
        "article'>NAVWORD</div><article class='bd-article'><section id='guide'><h1>Guide<a "
        "class='headerlink' href='#guide'>#</a></h1><p>Intro about <code>Widget</code> and "
        "more.</p><section id='install'><h2>Install<a class='headerlink' href='#install'>#</a>"
        "</h2><p>Run the installer.</p></section></section></article><footer class='prev-next-"
        "footer'><div class='prev-next-area'>NAVWORD</div></footer></div><div class='bd-sidebar"
        "-secondary bd-toc'>TOCWORD<div class='editthispage'>EDITWORD</div></div></div>"
        "<footer class='bd-footer-content'>FOOTWORD</footer></main></div></div>"
        "<footer class='bd-footer'>FOOTWORD</footer>"
    ),
    "docusaurus": doc(
        "<div id='__docusaurus'><nav aria-label='Main' class='navbar navbar--fixed-top'>NAVWORD"
        "</nav><div class='main-wrapper'><div class='docRoot_UBD9'><aside class='theme-doc-"
        "sidebar-container'>SIDEWORD</aside><main class='docMainContainer_TBSr'><div "
        "class='container'><div class='row'><div class='col docItemCol_VOVn'><article><nav "
        "class='theme-doc-breadcrumbs' aria-label='Breadcrumbs'>NAVWORD</nav><div class='"
        "tocCollapsible_ETCw theme-doc-toc-mobile'><button type='button'>On this page</button>"
        "<span>TOCWORD</span></div>"
        "<div class='theme-doc-markdown markdown'><header><h1>Guide</h1></header><p>Intro about "
        "<code>Widget</code> and more.</p><h2 class='anchor anchorWithStickyNavbar_LWe7' "
        "id='install'>Install<a href='#install' class='hash-link' aria-label='Direct link to "
        "Install' title='Direct link to Install'>\u200b</a></h2><p>Run the installer.</p></div>"
        "<footer class='theme-doc-footer'><a href='https://e.x/edit' class='theme-edit-this-"
        "page'>EDITWORD</a></footer></article><nav class='pagination-nav'>NAVWORD</nav></div>"
        "<div class='col col--3'><div class='theme-doc-toc-desktop'>TOCWORD</div></div></div>"
        "</div></main></div></div><footer class='footer footer--dark'>FOOTWORD</footer></div>",
        head="<meta name='generator' content='Docusaurus v3.6.0'>",
        html_class="docs-wrapper plugin-docs plugin-id-default docs-doc-page",
    ),
}


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_each_theme_yields_only_its_main_content(theme: str) -> None:
    page = read_html_page(THEMES[theme], "Fallback")
    assert page.skip is None
    assert page.theme == theme
    assert page.page.title == "Guide"
    chunks = chunk_page(page.page, "/guide/")
    assert [(c.anchor, c.heading, c.text) for c in chunks] == [
        (None, "Guide", "Intro about `Widget` and more."),
        ("install", "Install", "Run the installer."),
    ]
    everything = " ".join(f"{c.page_title} {c.heading} {c.text} {c.code}" for c in chunks)
    for word in CHROME:
        assert word not in everything
    for sign in ("¶", "#", "\u200b", "\uf0c1", "{"):
        assert sign not in everything


@pytest.mark.parametrize(
    ("where", "html"),
    [
        (
            "main",
            f"<main><nav>NAVWORD</nav>{CONTENT}<form>SEARCHWORD</form></main><aside>SIDEWORD</aside>",
        ),
        ("role", f"<div class='nav'>x</div><div role='main'>{CONTENT}</div>"),
        ("article", f"<div><article>{CONTENT}</article></div>"),
        (
            "body",
            f"<header>NAVWORD</header><div>{CONTENT}</div><aside>SIDEWORD</aside>"
            "<footer>FOOTWORD</footer><div id='cookie-banner'>COOKIEWORD</div>",
        ),
    ],
)
def test_unknown_pages_fall_back_to_main_role_main_article_then_body(where: str, html: str) -> None:
    page = read_html_page(doc(html), "Fallback")
    assert page.theme is None
    texts = [s.parts for s in page.page.sections if s.parts]
    assert texts == [["Intro about `Widget` and more."], ["Run the installer."]], where
    assert not any(word in str(page.page) for word in CHROME)


def test_the_explicit_marker_wins_over_theme_and_main() -> None:
    html = doc(
        "<main><p>NAVWORD main text</p><div data-agentskit-body><h2 id='a'>A</h2><p>Marked.</p>"
        "<div data-agentskit-skip>SIDEWORD</div></div></main>"
    )
    page = read_html_page(html, "Fallback")
    assert [s.parts for s in page.page.sections if s.parts] == [["Marked."]]


def test_the_selector_option_names_the_content() -> None:
    html = doc("<div id='shell'>NAVWORD</div><div class='page-body'><h2 id='a'>A</h2><p>Mine.</p>")
    page = read_html_page(html, "F", body_selector=parse_selector("div.page-body"))
    assert [s.parts for s in page.page.sections if s.parts] == [["Mine."]]
    unnamed = read_html_page(html, "F")
    assert "NAVWORD" in str(unnamed.page)  # without it, the whole body is read


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("div", True),
        ("#x", True),
        (".a", True),
        (".a.b", True),
        (".c", False),
        ("[data-k]", True),
        ("[data-k=v]", True),
        ("[data-k='v']", True),
        ("[data-k=w]", False),
        ("[data-k^=v]", True),
        ("[data-k*=v]", True),
        ("section div", True),
        ("main div", False),
        ("main, div#x", True),
    ],
)
def test_selector_subset(selector: str, matches: bool) -> None:
    from agentskit_web.indexing.html_tree import parse_html_tree

    root = parse_html_tree("<section><div id='x' class='a b' data-k='v'>t</div></section>")
    assert (parse_selector(selector).first(root) is not None) is matches


@pytest.mark.parametrize("selector", ["div > p", "a:not(.b)", "a ~ b", "", "x" * 501])
def test_selectors_outside_the_subset_are_refused(selector: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(selector)


def test_selector_length_limit_is_inclusive() -> None:
    parse_selector("a" * 500)


def anchors(body: str) -> list[tuple[str, str | None]]:
    page = read_html_page(doc(f"<main>{body}</main>"), "F")
    return [(s.heading, s.anchor) for s in page.page.sections if s.heading]


def test_anchor_is_the_heading_id() -> None:
    assert anchors("<h2 id='one'>One</h2><p>x</p>") == [("One", "one")]


def test_anchor_is_the_enclosing_section_id_as_sphinx_writes_it() -> None:
    assert anchors(
        "<section id='the-default-method-setting'><h2>The default_method setting"
        "</h2><p>x</p></section>"
    ) == [("The default_method setting", "the-default-method-setting")]
    assert anchors("<div class='section' id='old'><h2>Old</h2></div>") == [("Old", "old")]


def test_a_second_heading_of_a_section_does_not_take_its_id() -> None:
    assert anchors("<section id='s'><h3>First</h3><h2>Second</h2></section>") == [
        ("First", "s"),
        ("Second", None),
    ]


@pytest.mark.parametrize("attribute", ["name", "id"])
def test_an_a_name_or_a_id_inside_the_heading_counts(attribute: str) -> None:
    assert anchors(f"<h2><a {attribute}='legacy'></a>Legacy</h2>") == [("Legacy", "legacy")]


def test_repeated_headings_keep_the_ids_the_generator_wrote() -> None:
    assert anchors("<h2 id='usage'>Usage</h2><p>a</p><h2 id='usage_1'>Usage</h2><p>b</p>") == [
        ("Usage", "usage"),
        ("Usage", "usage_1"),
    ]


def test_a_heading_without_an_id_cites_the_page_top() -> None:
    assert anchors("<h2>Plain</h2><p>x</p>") == [("Plain", None)]


def test_a_heading_without_an_id_cites_its_parent_section() -> None:
    assert anchors("<h2 id='p'>Parent</h2><h3>Child</h3><h2>Other</h2>") == [
        ("Parent", "p"),
        ("Child", "p"),
        ("Other", None),
    ]


def test_titles_are_text_without_permalink_signs_or_markup() -> None:
    page = read_html_page(
        doc(
            "<main><h1 id='t'>The <code>Widget</code> <em>API</em><a class='headerlink' "
            "href='#t'>¶</a></h1><h2 id='u'>Use <abbr title='Cross-Origin'>CORS</abbr><a "
            "href='#u'>#</a></h2><p>x</p></main>"
        ),
        "F",
    )
    assert page.page.title == "The Widget API"
    assert [s.heading for s in page.page.sections if s.level == 2] == ["Use CORS"]


def test_an_attribute_list_a_build_left_in_a_heading_is_not_in_the_title() -> None:
    assert anchors("<h2 id='use-cors-use-cors'>Use CORS { #use-cors }</h2><p>x</p>") == [
        ("Use CORS", "use-cors-use-cors")
    ]


def test_code_keeps_its_language_and_layout() -> None:
    page = read_html_page(
        doc(
            "<main><h2 id='c'>Code</h2>"
            "<div class='language-python highlight'><pre><span></span><code>"
            "<span class='kn'>import</span> x\n    y()</code></pre></div>"
            "<div class='highlight-bash notranslate'><div class='highlight'><pre>pip install x"
            "</pre></div></div>"
            "<pre class='prism-code language-js'><code><span class='token-line'>a()<br></span>"
            "<span class='token-line'>b()<br></span></code></pre>"
            "<table class='highlighttable'><tr><td class='linenos'><pre>1\n2</pre></td>"
            "<td class='code'><pre class='language-toml'>a = 1\nb = 2</pre></td></tr></table>"
            "<pre>plain</pre></main>"
        ),
        "F",
    )
    assert [(b.language, b.text) for b in page.code_blocks] == [
        ("python", "import x\n    y()"),
        ("bash", "pip install x"),
        ("js", "a()\nb()"),
        ("toml", "a = 1\nb = 2"),
        (None, "plain"),
    ]
    assert page.page.sections[-1].code[0] == "import x\n    y()"


def test_implied_end_tags_close_rows_cells_items_and_paragraphs() -> None:
    from agentskit_web.indexing.html_tree import parse_html_tree

    root = parse_html_tree("<table><tr><td>a<td>1<tr><td>b<td>2</table>")
    rows = [e for e in root.iter() if e.tag == "tr"]
    assert len(rows) == 2 and rows[0].parent is rows[1].parent
    assert [len(row.children) for row in rows] == [2, 2]
    page = read_html_page(
        doc(
            "<main><table><tr><th>k<th>v<tr><td>a<td>1<tr><td>b<td>2</table>"
            "<ul><li>one<li>two<ul><li>inner</ul><li>three</ul><p>p1<p>p2</main>"
        ),
        "F",
    )
    assert page.page.sections[0].parts == [
        "k | v",
        "a | 1",
        "b | 2",
        "one",
        "two",
        "inner",
        "three",
        "p1",
        "p2",
    ]


def test_tables_and_admonitions_are_text() -> None:
    page = read_html_page(
        doc(
            "<main><h2 id='t'>T</h2><table><thead><tr><th>Name</th><th>Value</th></tr></thead>"
            "<tbody><tr><td>alpha</td><td><code>1</code></td></tr></tbody></table>"
            "<div class='admonition note'><p class='admonition-title'>Note</p><p>Careful."
            "</p></div><details class='tip'><summary>More</summary><p>Hidden tip.</p></details>"
            "</main>"
        ),
        "F",
    )
    assert page.page.sections[-1].parts == [
        "Name | Value",
        "alpha | 1",
        "Note",
        "Careful.",
        "More",
        "Hidden tip.",
    ]


@pytest.mark.parametrize(
    ("head", "body", "reason"),
    [
        ("<meta name='robots' content='NOINDEX'>", "<main><p>x</p></main>", SKIP_NOINDEX),
        ("<meta http-equiv='refresh' content='0; url=/new/'>", "<p>x</p>", SKIP_REDIRECT),
        ("", "<main><h1>404 - Not found</h1></main>", SKIP_NOT_FOUND),
        ("", "<main><h1>Page Not Found</h1></main>", SKIP_NOT_FOUND),
        ("", "<div role='main'><h1>Search</h1><div id='search-results'></div></div>", SKIP_SEARCH),
    ],
)
def test_pages_that_opt_out(head: str, body: str, reason: str) -> None:
    assert read_html_page(doc(body, head=head), "F").skip == reason


@pytest.mark.parametrize(
    ("html_class", "reason"),
    [
        ("blog-wrapper blog-list-page plugin-blog", SKIP_LISTING),
        ("blog-wrapper blog-tags-post-list-page plugin-blog", SKIP_LISTING),
        ("docs-wrapper docs-tags-doc-list-page plugin-docs", SKIP_LISTING),
        ("blog-wrapper blog-post-page plugin-blog", None),
    ],
)
def test_docusaurus_generated_lists_are_skipped_posts_are_not(
    html_class: str, reason: str | None
) -> None:
    html = doc(
        "<main><article><div class='markdown'><h2 id='p'>Post</h2><p>Words.</p></div>"
        "</article></main>",
        html_class=html_class,
    )
    assert read_html_page(html, "F").skip == reason


def test_a_fragment_or_template_is_not_a_page() -> None:
    page = read_html_page("<li class='md-nav__item'>{{ toc_item.title }}</li>", "F")
    assert page.skip == SKIP_FRAGMENT


def test_the_mkdocs_search_modal_on_every_page_does_not_skip_it() -> None:
    assert read_html_page(THEMES["mkdocs"], "F").skip is None


def test_robots_without_noindex_is_indexed() -> None:
    page = read_html_page(doc("<main><p>x</p></main>", "<meta name='robots' content='all'>"), "F")
    assert page.skip is None


def _depth(element: Element) -> int:
    deepest, stack = 0, [(element, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((c, depth + 1) for c in node.children if not isinstance(c, str))
    return deepest


@pytest.mark.parametrize("extra", [0, 1, 5_000])
def test_nesting_is_bounded_and_deep_text_is_kept(extra: int) -> None:
    from agentskit_web.indexing.html_tree import MAX_DEPTH, parse_html_tree

    # html + body + main + divs: the document root is depth 0, so MAX_DEPTH - 3 divs fill it.
    divs = MAX_DEPTH - 3 + extra
    html = doc("<main>" + "<div>" * divs + "<p>Deep words.</p>" + "</div>" * divs + "</main>")
    root = parse_html_tree(html)
    assert _depth(root) <= MAX_DEPTH
    page = read_html_page(html, "F")
    assert page.page.sections[0].parts == ["Deep words."]


def test_the_docs_own_sections_about_cookies_are_not_taken_for_a_consent_banner() -> None:
    """Starlette documents `set_cookie` under `<h4 id="set-cookie">` and Sphinx wraps a
    "Cookies" section in `<section id="cookies">`: both are text, not chrome; a banner
    named like one is still removed."""
    html = doc(
        "<main><h1>Responses</h1><h2 id='response'>Response</h2><p>Send it.</p>"
        "<h4 id='set-cookie'>Set Cookie</h4><p>Call set_cookie on the response.</p>"
        "<section id='cookies'><h2>Cookies</h2><p>Read request cookies.</p></section>"
        "<section id='cookie-consent'><p>COOKIEWORD</p></section>"
        "<div class='cookie-banner'><h2>We use cookies</h2><p>COOKIEWORD</p></div></main>"
    )
    page = read_html_page(html, "F").page
    sections = {s.anchor: (s.heading, s.parts) for s in page.sections if s.parts}
    assert sections["set-cookie"] == ("Set Cookie", ["Call set_cookie on the response."])
    assert sections["cookies"] == ("Cookies", ["Read request cookies."])
    assert sections["response"] == ("Response", ["Send it."])
    assert "COOKIEWORD" not in str(page)
