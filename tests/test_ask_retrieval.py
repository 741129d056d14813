"""Docs retrieval: heading chunking, anchors, the question's phrases, BM25 ranking."""

import asyncio
import re
from pathlib import Path, PurePosixPath

import pytest

from _ask_helpers import write_docs
from agentskit_web.answering.inverted_index import Phrase
from agentskit_web.answering.query_terms import Vocabulary, query_phrases, term_groups
from agentskit_web.answering.ranking import QUERY_MAX_TERMS
from agentskit_web.answering.text_terms import STOPWORDS
from agentskit_web.docs_text import HeadingSlugger, page_path_for, slugify
from agentskit_web.indexing.docs_folder import (
    CHUNK_MAX_CHARS,
    chunk_page,
    parse_html,
    parse_markdown,
)
from agentskit_web.server.retrieval import IndexRetriever, index_folder


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Install the widget", "install-the-widget"),
        ("The element's attributes", "the-elements-attributes"),
        ("What's new?", "whats-new"),
        ("The Python API: define_chat", "the-python-api-define_chat"),
        ("C++ & Rust", "c--rust"),
        ("Café au lait", "café-au-lait"),
        ("  Trimmed  ", "trimmed"),
        ("Step 2 — done", "step-2--done"),
        ("Ünïcödé 日本語", "ünïcödé-日本語"),
        ("!!!", ""),
        (
            '"The assistant is offline" when the backend is down',
            "the-assistant-is-offline-when-the-backend-is-down",
        ),
    ],
)
def test_slugify_follows_the_github_rule(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


def test_slugger_deduplicates_in_document_order() -> None:
    slugger = HeadingSlugger()
    assert [slugger.slug("Usage") for _ in range(3)] == ["usage", "usage-1", "usage-2"]
    slugger.reserve("setup")
    assert slugger.slug("Setup") == "setup-1"


def test_page_paths() -> None:
    assert page_path_for(PurePosixPath("getting-started.md")) == "/docs/getting-started.html"
    assert page_path_for(PurePosixPath("guide/setup.md")) == "/docs/guide/setup.html"
    assert page_path_for(PurePosixPath("ref.html")) == "/docs/ref.html"


MARKDOWN = """# Guide

Intro *text* with `code` and a [link](https://x.example).

## Setup

Run it.

```sh
pip install thing
```

## Setup

Again.

### Deep `api()` heading

- item one
- item two
"""


def test_markdown_sections_titles_and_anchors() -> None:
    page = parse_markdown(MARKDOWN, "Fallback")
    assert page.title == "Guide"
    sections = [(s.heading, s.level, s.anchor) for s in page.sections]
    assert sections == [
        ("", 0, None),
        ("Guide", 1, None),
        ("Setup", 2, "setup"),
        ("Setup", 2, "setup-1"),
        ("Deep api() heading", 3, "deep-api-heading"),
    ]
    assert page.sections[1].parts == ["Intro text with `code` and a link."]
    assert page.sections[2].code == ["pip install thing"]
    assert page.sections[4].parts == ["item one", "item two"]


def test_markdown_without_h1_uses_the_fallback_title() -> None:
    page = parse_markdown("Just text.\n\n## Part\n\nMore.", "My page")
    assert page.title == "My page"
    chunks = chunk_page(page, "/docs/p.html")
    assert [(c.heading, c.anchor) for c in chunks] == [("My page", None), ("Part", "part")]


def test_raw_html_in_markdown_stays_literal_text() -> None:
    """HTML is disabled: a tag in a page is indexed (and quoted) as the text it is."""
    page = parse_markdown("# T\n\n<script>alert(1)</script> after\n", "F")
    assert page.sections[1].parts == ["<script>alert(1)</script> after"]


HTML = """<!doctype html><html><head><title>Html Page</title>
<style>h2 { color: red }</style><script>var secret = "nope";</script></head>
<body><nav>Menu Home About</nav>
<h1>Main &amp; title</h1><p>First para.</p>
<h2 id="custom-id">Has an id</h2><p>Body <b>bold</b> text.</p><pre><code>x = 1</code></pre>
<h2>No id here</h2><ul><li>one</li><li>two</li></ul>
<h2>custom id</h2><p>Collides with a slug.</p>
</body></html>"""


def test_html_sections_keep_ids_and_skip_scripts() -> None:
    page = parse_html(HTML, "Fallback")
    assert page.title == "Main & title"
    sections = [(s.heading, s.anchor) for s in page.sections]
    assert sections == [
        ("", None),
        ("Main & title", None),
        ("Has an id", "custom-id"),
        ("No id here", "no-id-here"),
        ("custom id", "custom-id-1"),
    ]
    text = " ".join(p for s in page.sections for p in s.parts)
    assert "secret" not in text and "Menu" not in text and "color" not in text
    assert page.sections[2].parts == ["Body bold text."]
    assert page.sections[2].code == ["x = 1"]


def test_html_title_falls_back_to_the_title_element() -> None:
    assert parse_html("<title> T  one </title><p>x</p>", "F").title == "T one"
    assert parse_html("<p>x</p>", "F").title == "F"


def test_long_sections_split_into_chunks_that_share_the_anchor() -> None:
    paragraphs = "\n\n".join(f"Paragraph {i} " + "word " * 80 for i in range(30))
    page = parse_markdown(f"# P\n\n## Long\n\n{paragraphs}\n", "P")
    chunks = chunk_page(page, "/docs/p.html")
    assert len(chunks) > 3
    assert {c.anchor for c in chunks} == {"long"}
    assert all(len(c.text) <= CHUNK_MAX_CHARS for c in chunks)
    giant = parse_markdown("# G\n\n" + "x" * (CHUNK_MAX_CHARS * 3 + 5), "G")
    assert [len(c.text) for c in chunk_page(giant, "/g")] == [
        CHUNK_MAX_CHARS,
        CHUNK_MAX_CHARS,
        CHUNK_MAX_CHARS,
        5,
    ]


def _phrases(question: str) -> list[Phrase] | None:
    groups = term_groups(question, Vocabulary(), {}, STOPWORDS, QUERY_MAX_TERMS)
    return query_phrases(groups) or None


def test_question_phrases_hold_every_term_as_data() -> None:
    assert _phrases("How do I embed the widget?") == [
        Phrase(("emb",), prefix=True),
        Phrase(("widget",), prefix=True),
    ]
    assert _phrases("what is it?") is None
    assert _phrases("") is None
    assert _phrases("a b c") is None
    assert _phrases("pip pip PIP") == [Phrase(("pip",))]
    assert _phrases("step 2") == [Phrase(("step",), prefix=True), Phrase(("2",))]
    many = " ".join(f"word{i}" for i in range(QUERY_MAX_TERMS + 10))
    assert len(_phrases(many) or []) == QUERY_MAX_TERMS


@pytest.mark.parametrize(
    "hostile",
    [
        '"',
        '" OR 1',
        "NEAR(a b)",
        "a* OR -b",
        "col:widget",
        "^start",
        "x AND NOT y",
        "'; DROP",
        "{abc}",
        "widget\x00",
        "(((",
        "\u202e\u2066",
    ],
)
def test_query_syntax_in_questions_is_inert(tmp_path: Path, hostile: str) -> None:
    index = index_folder(write_docs(tmp_path / "docs"))
    index.search(hostile, 5)  # must not raise
    # Only the words count: the same question with every other character blanked
    # out finds exactly the same passages.
    words_only = re.sub(r"\W", " ", hostile)
    found = index.search(f"install the widget {hostile}", 5)
    assert found == index.search(f"install the widget {words_only}", 5)
    if not re.search(r"\w", hostile):
        assert found


def test_search_ranks_by_bm25_with_headings_first(tmp_path: Path) -> None:
    index = index_folder(write_docs(tmp_path / "docs"))
    found = index.search("How do I install the widget?", 3)
    assert (found[0].path, found[0].anchor) == ("/docs/install.html", "install-the-widget")
    assert found[0].title == "Installing › Install the widget"
    assert [p.score for p in found] == sorted((p.score for p in found), reverse=True)
    assert index.search("wasm-unsafe-eval policy", 1)[0].anchor == "content-policy"
    assert index.search("zebra", 5) == []
    assert index.search("widget", 0) == []


def test_stemming_finds_other_word_forms(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", {"e.md": "# Embedding\n\nEmbedding the widget is easy.\n"})
    index = index_folder(docs)
    for question in ["embed", "embedding", "embedded", "embeds"]:
        assert index.search(question, 1), question


def test_code_blocks_are_searchable_but_weigh_less(tmp_path: Path) -> None:
    docs = write_docs(
        tmp_path / "docs",
        {
            "a.md": '# Config\n\n```json\n{"frobnicate": true}\n```\n',
            "b.md": "# Frobnicate\n\nHow to frobnicate things.\n",
        },
    )
    index = index_folder(docs)
    assert [p.path for p in index.search("frobnicate", 2)] == ["/docs/b.html"]  # a.md: below floor
    (docs / "b.md").unlink()
    assert [p.path for p in index_folder(docs).search("frobnicate", 2)] == ["/docs/a.html"]


def test_weak_matches_under_the_relative_floor_are_dropped(tmp_path: Path) -> None:
    docs = write_docs(
        tmp_path / "docs",
        {
            "strong.md": "# Quota\n\nQuota quota quota: the quota rules.\n",
            "weak.md": "# Other\n\n" + "Unrelated words about many things. " * 30 + "quota.\n",
        },
    )
    found = index_folder(docs).search("quota", 5)
    assert [p.path for p in found] == ["/docs/strong.html"]


def test_only_doc_files_are_indexed(tmp_path: Path) -> None:
    docs = write_docs(
        tmp_path / "docs",
        {
            "a.md": "# A\n\nalpha text\n",
            "site.json": '{"alpha": 1}',
            "n.txt": "alpha",
            "sub/b.html": "<h1>B</h1><p>alpha beta</p>",
        },
    )
    index = index_folder(docs)
    assert sorted(p.path for p in index.search("alpha", 10)) == ["/docs/a.html", "/docs/sub/b.html"]


def test_excluded_globs_are_left_out(tmp_path: Path) -> None:
    docs = write_docs(
        tmp_path / "docs",
        {"a.md": "# A\n\nalpha\n", "design/x.md": "# X\n\nalpha\n", "design/y.html": "alpha"},
    )
    index = index_folder(docs, exclude=["design/*"])
    assert [p.path for p in index.search("alpha", 10)] == ["/docs/a.html"]
    with pytest.raises(ValueError, match="no Markdown"):
        index_folder(docs, exclude=["*"])


def test_custom_page_path_rule(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    index = index_folder(docs, page_path=lambda rel: f"/guide/{rel.stem}/")
    assert index.search("install widget", 1)[0].path == "/guide/install/"


def test_index_retriever_is_async(tmp_path: Path) -> None:
    index = index_folder(write_docs(tmp_path / "docs"))
    retriever = IndexRetriever(index)
    found = asyncio.run(retriever.retrieve("pip", 2))
    assert found.grounded and len(found.passages) == 2
    assert found.answered == index.search("pip", 2)


def test_the_project_docs_index_and_answer_their_own_questions() -> None:
    docs = Path(__file__).resolve().parent.parent / "docs"
    index = index_folder(docs)
    expectations = {
        "How do I embed the Ask widget?": "/docs/embedding.html",
        "Does the widget load anything from a CDN?": "/docs/offline.html",
        "Which Content-Security-Policy does the page need?": "/docs/security.html",
        "What is the rate limit?": "/docs/configuration.html",
        "Which events are in the answer stream?": "/docs/protocol.html",
    }
    for question, path in expectations.items():
        assert path in [p.path for p in index.search(question, 2)], question


def test_the_weight_sweep_reaches_k1_and_b_and_puts_every_constant_back(tmp_path: Path) -> None:
    """bench/sweep.py overrides ranking's BM25_K1 and BM25_B: the search must read them
    when it runs (a default bound at definition would make the sweep measure nothing)."""
    from agentskit_web.answering import ranking
    from agentskit_web.bench.answers import EvalQuestion
    from agentskit_web.bench.sweep import setting_figures

    index = index_folder(write_docs(tmp_path / "docs"))
    shipped = ranking.FIELD_WEIGHTS, ranking.BM25_K1, ranking.BM25_B
    before = [p.score for p in index.search("How do I install the widget?", 3)]
    question = EvalQuestion(
        id="q",
        split="tuning",
        kind="direct",
        question="How do I install the widget?",
        needs="any",
        expected=["/docs/install.html#install-the-widget"],
    )
    figures = setting_figures({"t": (index, [question])}, (1.0, 4.0, 1.0, 0.25), 2.0, 0.3)
    assert figures["t"]["r1"] == 1.0
    assert shipped == (ranking.FIELD_WEIGHTS, ranking.BM25_K1, ranking.BM25_B)
    ranking.BM25_K1, ranking.BM25_B = 2.0, 0.3  # type: ignore[misc]
    try:
        changed = [p.score for p in index.search("How do I install the widget?", 3)]
    finally:
        ranking.BM25_K1, ranking.BM25_B = shipped[1], shipped[2]  # type: ignore[misc]
    assert changed != before
    assert [p.score for p in index.search("How do I install the widget?", 3)] == before
