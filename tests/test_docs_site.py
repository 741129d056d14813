"""The demo docs site renderer: heading ids are the backend's anchors, links land, paths work."""

import posixpath
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

import pytest

from agentskit_web.build.docs_pages import (
    DocPage,
    SiteError,
    Template,
    load_pages,
    nav_html,
    published_sources,
    render_markdown,
    render_site,
)
from agentskit_web.docs_text import DOCS_EXCLUDE, HeadingSlugger, page_path_for
from agentskit_web.indexing.docs_folder import load_docs, parse_markdown

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
TEMPLATE = (ROOT / "index.html").read_text(encoding="utf-8")


class _Ids(HTMLParser):
    """Heading ids in document order, and every link and path-like attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.hrefs: list[str] = []
        self.attributes: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and "id" in values:
            self.headings.append(values["id"])
        if tag == "a" and "href" in values:
            self.hrefs.append(values["href"])
        for name in ("href", "src", "knowledge"):
            if name in values:
                self.attributes.setdefault(name, []).append(values[name])


def parsed(html: str) -> _Ids:
    ids = _Ids()
    ids.feed(html)
    return ids


@pytest.fixture(scope="module")
def pages() -> list[DocPage]:
    return load_pages(DOCS)


@pytest.fixture(scope="module")
def site(pages: list[DocPage]) -> dict[PurePosixPath, bytes]:
    return render_site(Template(TEMPLATE), pages)


# -- the backend's anchors ---------------------------------------------------------------------


def test_every_heading_id_is_the_backends_anchor(site: dict[PurePosixPath, bytes]) -> None:
    """For every docs page, the rendered ids are exactly the slugs retrieval gives each heading."""
    checked = 0
    for source in published_sources(DOCS):
        relative = PurePosixPath(source.relative_to(DOCS).as_posix())
        page = parse_markdown(source.read_text(encoding="utf-8"), relative.stem)
        slugger = HeadingSlugger()
        expected = [slugger.slug(s.heading) for s in page.sections if s.heading]
        output = PurePosixPath(page_path_for(relative).lstrip("/"))
        assert parsed(site[output].decode()).headings == expected, relative
        checked += len(expected)
    assert checked > 40


def test_every_chunk_the_backend_can_cite_lands_on_a_heading(
    site: dict[PurePosixPath, bytes],
) -> None:
    chunks = load_docs(DOCS, page_path_for, DOCS_EXCLUDE)
    ids = {path: set(parsed(data.decode()).headings) for path, data in site.items()}
    for chunk in chunks:
        output = PurePosixPath(chunk.path.lstrip("/"))
        assert output in site, chunk.path
        assert chunk.anchor is None or chunk.anchor in ids[output], (chunk.path, chunk.anchor)


def test_the_published_pages_are_the_backends_corpus(site: dict[PurePosixPath, bytes]) -> None:
    corpus = {c.path for c in load_docs(DOCS, page_path_for, DOCS_EXCLUDE)}
    published = {f"/{p}" for p in site if p.suffix == ".html" and p.parts[0] == "docs"}
    assert published == corpus
    assert not any("design" in str(path) for path in site)
    assert (DOCS / "design").is_dir(), "the exclusion is exercised"


def test_headings_follow_the_github_rule() -> None:
    text = "# Title `code`\n\n## Run the demo\n\n## Run the demo\n\n### `--pace` *fast* & ok?\n"
    rendered = render_markdown(text, PurePosixPath("x.md"), "X")
    assert rendered.title == "Title code"
    assert rendered.anchors == ("title-code", "run-the-demo", "run-the-demo-1", "--pace-fast--ok")
    assert '<h3 id="--pace-fast--ok">' in rendered.html


def test_raw_html_in_markdown_stays_text() -> None:
    rendered = render_markdown(
        "# T\n\n<script>alert(1)</script> <b>x</b>\n", PurePosixPath("x.md"), "T"
    )
    assert "<script>" not in rendered.html and "&lt;script&gt;" in rendered.html


# -- links ---------------------------------------------------------------------------------------


def test_links_between_pages_become_html_and_land(site: dict[PurePosixPath, bytes]) -> None:
    ids = {path: set(parsed(data.decode()).headings) for path, data in site.items()}
    checked = 0
    for output, data in site.items():
        if output.suffix != ".html" or output.parts[0] != "docs":
            continue
        for href in parsed(data.decode()).hrefs:
            assert not href.split("#")[0].endswith(".md"), (output, href)
            if href.startswith(("http:", "https:", "mailto:")):
                continue
            path, _, fragment = href.partition("#")
            resolved = (
                PurePosixPath(posixpath.normpath(str(output.parent / path))) if path else output
            )
            assert resolved in site, (output, href)
            if fragment:
                assert fragment in ids[resolved], (output, href)
            checked += 1
    assert checked > 50


def test_a_dead_link_fails_the_build(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## Part\n\nSee [b](b.md#nowhere).\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n\nSee [a](a.md#part) and [c](c.md).\n", encoding="utf-8")
    with pytest.raises(SiteError) as raised:
        load_pages(tmp_path)
    message = str(raised.value)
    assert "docs/a.md: b.md#nowhere is no heading" in message
    assert "docs/b.md: links to c.md, which is not published" in message
    assert "a.md#part" not in message


def test_a_link_into_the_excluded_design_notes_fails(tmp_path: Path) -> None:
    (tmp_path / "design").mkdir()
    (tmp_path / "design" / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (tmp_path / "a.md").write_text("# A\n\n[notes](design/notes.md)\n", encoding="utf-8")
    with pytest.raises(SiteError, match=r"design/notes\.md, which is not published"):
        load_pages(tmp_path)


def test_in_page_and_external_links_are_left_alone() -> None:
    text = "# A\n\n## B\n\n[b](#b) [x](https://example.com/x.md) [r](/docs/a.md) [i](./a.md#b)\n"
    rendered = render_markdown(text, PurePosixPath("a.md"), "A")
    hrefs = parsed(rendered.html).hrefs
    assert hrefs == ["#b", "https://example.com/x.md", "/docs/a.md", "a.html#b"]


# -- the page template -----------------------------------------------------------------------


def test_pages_in_docs_use_paths_from_their_folder(site: dict[PurePosixPath, bytes]) -> None:
    page = parsed(site[PurePosixPath("docs/embedding.html")].decode())
    assert page.attributes["knowledge"] == ["../knowledge.json"]
    scripts = [src for src in page.attributes["src"] if not src.endswith(".png")]
    assert scripts == ["../agentskit/agentskit-ask.js"]  # the one script
    assert "../site.css" in page.attributes["href"]
    assert not [v for values in page.attributes.values() for v in values if v.startswith("./")]


def test_the_home_keeps_its_content_and_lists_every_page(
    site: dict[PurePosixPath, bytes], pages: list[DocPage]
) -> None:
    home = site[PurePosixPath("index.html")].decode()
    links = parsed(home)
    assert links.attributes["src"] == ["./agentskit/agentskit-ask.js"]
    for page in pages:
        assert links.hrefs.count(str(page.output)) == 2  # navigation + table of contents
    assert "<title>agentskit-web docs</title>" in home
    assert "What runs here" in home


def test_each_page_has_one_widget_title_and_current_nav_entry(
    site: dict[PurePosixPath, bytes],
) -> None:
    text = site[PurePosixPath("docs/offline.html")].decode()
    assert text.count("<agentskit-ask ") == 1
    assert text.count("<script") == 1, "the embed is one module script, nothing inline"
    assert "<title>Offline and local answers · agentskit-web docs</title>" in text
    assert text.count('aria-current="page">') == 1
    assert '<a href="offline.html" aria-current="page">' in text
    assert "What runs here" not in text, "the home content is replaced"


def test_nav_links_are_relative_to_the_page(pages: list[DocPage]) -> None:
    at_root = nav_html(pages, PurePosixPath("index.html"))
    in_docs = nav_html(pages, PurePosixPath("docs/security.html"))
    assert '<a href="index.html" aria-current="page">Home</a>' in at_root
    assert '<a href="docs/security.html">Security</a>' in at_root
    assert '<a href="../index.html">Home</a>' in in_docs
    assert '<a href="security.html" aria-current="page">Security</a>' in in_docs


def test_filled_in_content_keeps_its_own_relative_paths() -> None:
    template = Template(TEMPLATE)
    text = template.render(
        PurePosixPath("docs/x.html"), nav="", content='<a href="./y.html">y</a>', title="X"
    )
    assert '<a href="./y.html">y</a>' in text


@pytest.mark.parametrize("marker", ["nav", "content", "toc"])
def test_a_template_without_its_markers_is_refused(marker: str) -> None:
    broken = TEMPLATE.replace(f"<!-- site:{marker} -->", "")
    with pytest.raises(SiteError, match=f"site:{marker}"):
        Template(broken)
