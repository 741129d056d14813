"""Docs prose quoted in an answer stays text, and an index's sources stay on the site
(issue 36, item 8): Markdown syntax a page shows (`[ok](https://evil.example/phish)`)
is never a live link in the rendered answer, and a chunk whose path is a full URL is
refused by the site index file and by the static index's text parts."""

import pytest

from agentskit_web.answering.chunk import Chunk, Passage
from agentskit_web.answering.extractive import compose_extractive_answer, markdown_text
from agentskit_web.answering.site_index import (
    IndexedChunk,
    SiteIndex,
    is_site_path,
    parse_site_index,
)
from agentskit_web.answering.static_index import KIND_TEXTS, StaticSearch, split_index
from agentskit_web.chat.view.markdown_tree import markdown_to_tree
from agentskit_web.chat.view.tree import Node, walk

PHISH = "[ok](https://evil.example/phish)"
PROSE = (
    f"Write links as {PHISH} in your pages. An autolink is <https://evil.example/a> and an "
    "image ![x](https://evil.example/i.png); code is `x` and *stars* stay."
)


def _rendered(source: str) -> tuple[list[Node], str]:
    nodes: list[Node] = []
    text: list[str] = []
    for child in markdown_to_tree(source):
        for kind, item in walk(child):
            if kind == "open" and isinstance(item, Node):
                nodes.append(item)
            elif kind == "text" and isinstance(item, str):
                text.append(item)
    return nodes, "".join(text)


def test_markdown_in_quoted_prose_stays_text() -> None:
    lead = Passage("/guide/links/", "links", "Links", "", PROSE)
    more = Passage("/guide/more/", "more", "More [x](https://evil.example)", "", PROSE)
    answer = compose_extractive_answer("How do I write links?", [lead, more])
    nodes, text = _rendered(answer)
    # No link or image from the prose; the code span is the index's own (a page's <code>)
    # and shows as code; the emphases are the answer's own (the second source's title in
    # "More from the docs" and the closing note), never the prose's *stars*.
    tags = [node.tag for node in nodes if node.tag in ("a", "img", "code", "em")]
    assert "a" not in tags and "img" not in tags
    assert "code" in tags and "`x`" not in text
    assert tags.count("em") == 2
    assert PHISH in text and "<https://evil.example/a>" in text
    assert "*stars*" in text and "More [x](https://evil.example)" in text


def test_a_code_span_keeps_its_text_and_makes_no_link() -> None:
    nodes, text = _rendered("> " + markdown_text("see [`x`](https://evil.example) and `a_b*c`"))
    assert [node.tag for node in nodes] == ["blockquote", "p", "code", "code"]
    assert text == "see [x](https://evil.example) and a_b*c"


@pytest.mark.parametrize(
    "sentence", ["- not a list", "+ nor this", "1. nor this", "12) nor this", "# not a heading"]
)
def test_a_quote_starting_like_a_block_marker_stays_a_sentence(sentence: str) -> None:
    nodes, text = _rendered("> " + markdown_text(sentence))
    assert [node.tag for node in nodes] == ["blockquote", "p"]
    assert text == sentence


@pytest.mark.parametrize(
    ("path", "on_site"),
    [
        ("/", True),
        ("/guide/a b.html", True),
        ("/docs/%41/", True),
        ("https://evil.example/", False),
        ("//evil.example/x", False),
        ("/\\evil.example/x", False),
        ("guide/", False),
        ("javascript:alert(1)", False),
        ("/a\nb", False),
    ],
)
def test_a_chunk_path_is_a_path_on_the_site(path: str, on_site: bool) -> None:
    assert is_site_path(path) is on_site
    index = SiteIndex.of(
        [Chunk("/", None, "Home", "Home", "Welcome.")],
        site_name="S",
        base_path="/",
        generator="html",
        pages=1,
    )
    wire = index.to_wire()
    wire["chunks"][0]["path"] = path
    assert parse_site_index(wire).ok is on_site


def test_a_static_text_part_whose_path_is_a_full_url_is_refused() -> None:
    """Even a part whose proof holds (the build's own file) is refused with such a path."""
    chunk = IndexedChunk.model_construct(
        path="https://evil.example/phish",
        anchor=None,
        page_title="Phish",
        heading="Phish",
        text="Charge the lantern for ninety minutes.",
        code="",
        history=False,
    )
    index = SiteIndex.model_construct(
        format="agentskit.site-index",
        version=1,
        site_name="S",
        base_path="/",
        generator="html",
        pages=1,
        chunks=[chunk],
    )
    files = split_index(index)
    search = StaticSearch(files.manifest)
    texts = [name for name in files.parts if f".{KIND_TEXTS}." in name]
    assert texts
    refused = search.add_part(texts[0], files.parts[texts[0]])
    assert refused is not None and refused.code == "STATIC_PART_INVALID"
