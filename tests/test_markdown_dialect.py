"""The MkDocs / Material Markdown dialect read as text (indexing/markdown_dialect.py, docs_folder).

Pages are written here in the dialect (the constructs the Starlette and
Pydantic docs use); each test names the rule it guards.
"""

from pathlib import PurePosixPath

import pytest

from agentskit_web.build.docs_pages import render_markdown
from agentskit_web.docs_text import split_attr_list
from agentskit_web.indexing.docs_folder import chunk_page, parse_markdown
from agentskit_web.indexing.markdown_dialect import (
    FRONT_MATTER_MAX_LINES,
    MkDocsSlugger,
    mkdocs_slugify,
    strip_html,
    to_commonmark,
)


def sections(text: str, ids: str = "mkdocs") -> list[tuple[str, str | None, list[str], list[str]]]:
    page = parse_markdown(text, "Fallback", ids)  # type: ignore[arg-type]
    return [(s.heading, s.anchor, s.parts, s.code) for s in page.sections if s.heading]


def everything(text: str) -> str:
    page = parse_markdown(text, "Fallback", "mkdocs")
    return repr([(c.page_title, c.heading, c.text, c.code) for c in chunk_page(page, "/p/")])


def test_front_matter_is_skipped() -> None:
    text = "---\ndescription: Settings\ntitle: X\n---\n\n# Settings\n\nBody.\n"
    page = parse_markdown(text, "F", "mkdocs")
    assert page.title == "Settings"
    assert "description" not in everything(text)


def test_a_rule_later_on_the_page_is_not_front_matter() -> None:
    text = "# T\n\nAbove.\n\n---\n\nBelow.\n"
    assert "Below." in everything(text) and "Above." in everything(text)


def test_unterminated_or_too_long_front_matter_is_left_alone() -> None:
    assert to_commonmark("---\nno end\n\n# T\n").startswith("---")
    long_block = "---\n" + "k: v\n" * FRONT_MATTER_MAX_LINES + "---\n# T\n"
    assert to_commonmark(long_block).startswith("---")
    limit = "---\n" + "k: v\n" * (FRONT_MATTER_MAX_LINES - 1) + "---\n# T\n"
    assert to_commonmark(limit).startswith("# T")


@pytest.mark.parametrize(
    ("heading", "title", "anchor"),
    [
        ("Use CORSMiddleware { #use-corsmiddleware }", "Use CORSMiddleware", "use-corsmiddleware"),
        ("CORS {: #cors .wide }", "CORS", "cors"),
        ('Styled { .class data-x="1" }', "Styled", None),
        ("Set literal {x}", "Set literal {x}", None),
    ],
)
def test_attribute_lists_on_headings(heading: str, title: str, anchor: str | None) -> None:
    assert split_attr_list(heading) == (title, anchor)
    [(got_title, got_anchor, _, _)] = sections(f"## {heading}\n\nBody.\n")
    assert got_title == title
    assert got_anchor == (anchor or mkdocs_slugify(title))


def test_the_demo_build_and_reader_agree_on_attribute_lists() -> None:
    text = "# Page\n\n## Install { #setup }\n\nBody.\n"
    rendered = render_markdown(text, PurePosixPath("x.md"), "X")
    assert '<h2 id="setup">Install</h2>' in rendered.html
    assert [(h, a) for h, a, _, _ in sections(text, "github")] == [
        ("Page", None),
        ("Install", "setup"),
    ]


def test_admonitions_are_text_with_their_body() -> None:
    text = (
        "# T\n\n"
        '!!! note "Mind the order"\n'
        "    Middleware runs **outside** the router.\n\n"
        "    ```python\n    app = Starlette()\n    ```\n\n"
        "??? tip\n    Collapsed tip.\n\n"
        '???+ warning "Open"\n    Open warning.\n\n'
        '!!! info\n    !!! note "Inner"\n        Nested body.\n\n'
        "After.\n"
    )
    [(_, _, parts, code)] = sections(text)
    assert parts == [
        "Mind the order",
        "Middleware runs outside the router.",
        "Tip",
        "Collapsed tip.",
        "Open",
        "Open warning.",
        "Info",
        "Inner",
        "Nested body.",
        "After.",
    ]
    assert code == ["app = Starlette()"]


def test_content_tabs_are_text_with_their_body() -> None:
    text = (
        '# T\n\n=== "Python 3.9+"\n\n    Use `Annotated`.\n\n=== "Python 3.10+"\n\n    Use `|`.\n'
    )
    [(_, _, parts, _)] = sections(text)
    assert parts == ["Python 3.9+", "Use `Annotated`.", "Python 3.10+", "Use `|`."]


@pytest.mark.parametrize(
    "line",
    [
        '--8<-- "docs/snippets/cors.py"',
        ';--8<-- "skipped.md"',
        "{* ../../docs_src/cors/tutorial001.py hl[2] *}",
        "::: pydantic.main.BaseModel",
        "{ .annotate }",
        "{% include 'x.md' %}",
        "{{ pydantic_settings }}",
    ],
)
def test_include_and_macro_lines_stay_out_of_text(line: str) -> None:
    text = f"# T\n\nBefore.\n\n{line}\n\nAfter.\n"
    [(_, _, parts, code)] = sections(text)
    assert parts == ["Before.", "After."] and code == []


def test_mkdocstrings_options_go_with_their_directive() -> None:
    text = "# T\n\n::: pydantic.Field\n    options:\n        show_root_heading: true\n\nAfter.\n"
    assert sections(text)[0][2] == ["After."]


def test_snippets_inside_code_are_dropped_but_jinja_in_code_is_code() -> None:
    text = (
        '# T\n\n```python\n--8<-- "a.py"\nprint(1)\n```\n\n'
        "```html\n<a href=\"{{ url_for('home') }}\">{% if x %}</a>\n```\n"
    )
    [(_, _, _, code)] = sections(text)
    assert code == ["print(1)", "<a href=\"{{ url_for('home') }}\">{% if x %}</a>"]


def test_a_multi_line_jinja_block_is_dropped() -> None:
    text = "# T\n\n{%\n  include-markdown 'x.md'\n  start='<!-- a -->'\n%}\n\nAfter.\n"
    assert sections(text)[0][2] == ["After."]


def test_html_inside_markdown_is_read_as_text() -> None:
    text = (
        "# T\n\nFor more info about "
        '<abbr title="Cross-Origin Resource Sharing">CORS</abbr>, see <a href="x">this</a>.\n\n'
        '<div class="grid cards" markdown>\n\nCard text.\n\n</div>\n\n'
        "Returns `List<int>` or List<int>.<!-- hidden -->\n"
    )
    [(_, _, parts, _)] = sections(text)
    assert parts == [
        "For more info about CORS, see this.",
        "Card text.",
        "Returns `List<int>` or List<int>.",
    ]
    assert strip_html("a <br/> b <span class='x'>c</span>") == "a  b c"


def test_html_in_a_heading_is_not_in_the_title() -> None:
    [(title, anchor, _, _)] = sections("## Use <code>CORS</code> now\n\nx\n")
    assert title == "Use CORS now" and anchor == "use-cors-now"


def test_mkdocs_ids_repeat_with_underscores_github_ids_with_dashes() -> None:
    text = "# T\n\n## Usage\n\na\n\n## Usage\n\nb\n\n## Usage\n\nc\n"
    assert [a for _, a, _, _ in sections(text, "mkdocs")][1:] == ["usage", "usage_1", "usage_2"]
    assert [a for _, a, _, _ in sections(text, "github")][1:] == ["usage", "usage-1", "usage-2"]


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("The default_method setting", "the-default_method-setting"),
        ("Café & crème", "cafe-creme"),
        ("`Field()` options", "field-options"),
        ("  a -- b  ", "a-b"),
    ],
)
def test_mkdocs_slug_rule(text: str, slug: str) -> None:
    assert mkdocs_slugify(text.replace("`", "")) == slug


def test_mkdocs_slugger_numbers_repeats_and_empty_slugs() -> None:
    slugger = MkDocsSlugger()
    slugger.reserve("x")
    assert [slugger.slug(t) for t in ("x", "x", "!!!", "!!!")] == ["x_1", "x_2", "_1", "_2"]
