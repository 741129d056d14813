"""The Markdown view's safety rules that `make mutate` showed no test guarding (issue 36
item 9): the parser as it is built (raw HTML, linkify and typographer off; tables and
strikethrough on), which link targets stay live, what an image becomes, the nesting
estimate for lists, indentation and later lines, and the plain-text fallbacks' node cost.

The parser is built once per process and cached, so the tests that check how it is built
reset the cache first (`fresh_parser`).
"""

from collections.abc import Iterator

import pytest

from agentskit_web.chat.view import markdown_tree
from agentskit_web.chat.view.markdown_tree import IMAGE_LINK_CLASS, markdown_to_tree
from agentskit_web.chat.view.render_budget import RenderBudget
from agentskit_web.chat.view.render_limits import NESTING_MAX_DEPTH, TABLE_MAX_ROWS
from agentskit_web.chat.view.tree import Child, Node, element, links_of, text_of, walk


def tags(nodes: tuple[Child, ...], tag: str) -> list[Node]:
    root = element("div", None, nodes)
    return [n for e, n in walk(root) if e == "open" and isinstance(n, Node) and n.tag == tag]


@pytest.fixture
def fresh_parser(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(markdown_tree, "_parser", None)
    yield


# -- the parser as built -------------------------------------------------------------


def test_raw_html_stays_text(fresh_parser: None) -> None:
    nodes = markdown_to_tree('<div onclick="x()">a</div>\n\nb <img src=x onerror=y()> <b>c</b>')
    root = element("div", None, nodes)
    assert [n.tag for e, n in walk(root) if e == "open" and isinstance(n, Node)] == [
        "div",
        "p",
        "p",
    ]
    assert '<div onclick="x()">a</div>' in text_of(root)
    assert "<img src=x onerror=y()> <b>c</b>" in text_of(root)


def test_bare_urls_are_not_linked_and_punctuation_is_kept(fresh_parser: None) -> None:
    nodes = markdown_to_tree('See https://evil.example/phish and www.evil.example -- "quoted" (c)')
    assert links_of(element("div", None, nodes)) == []
    assert text_of(nodes[0]).strip() == (
        'See https://evil.example/phish and www.evil.example -- "quoted" (c)'
    )


def test_tables_and_strikethrough_are_rendered(fresh_parser: None) -> None:
    nodes = markdown_to_tree("|a|b|\n|-|-|\n|1|2|\n\n~~gone~~")
    assert len(tags(nodes, "table")) == 1 and len(tags(nodes, "td")) == 2
    assert [text_of(n) for n in tags(nodes, "s")] == ["gone"]


def test_the_parser_is_built_once() -> None:
    assert markdown_tree.markdown_parser() is markdown_tree.markdown_parser()


# -- links and images --------------------------------------------------------------------


@pytest.mark.parametrize(
    "href",
    [
        "mailto:a@evil.example",
        "ftp://files.evil.example/x",
        "https://user:pw@evil.example/",
        "//evil.example/phish",
    ],
)
def test_a_link_markdown_it_accepts_but_we_do_not_stays_text(href: str) -> None:
    nodes = markdown_to_tree(f"[label]({href})")
    assert links_of(element("div", None, nodes)) == []
    assert tags(nodes, "a") == []  # not even an anchor without its href
    assert text_of(nodes[0]).strip() == "label"


def test_an_image_keeps_its_title() -> None:
    [paragraph] = markdown_to_tree('![Alt](/img/a.png "Tip") ![Far](https://cdn.example/b.png)')
    assert isinstance(paragraph, Node)
    near, far = [c for c in paragraph.children if isinstance(c, Node)]
    assert dict(near.attrs) == {"href": "/img/a.png", "title": "Tip", "class": IMAGE_LINK_CLASS}
    assert dict(far.attrs) == {"href": "https://cdn.example/b.png", "class": IMAGE_LINK_CLASS}


def test_an_image_pointing_at_an_anchor_is_its_alt_text() -> None:
    [paragraph] = markdown_to_tree("![Top](#top)")
    assert isinstance(paragraph, Node) and paragraph.children == ("Top",)


# -- nesting ---------------------------------------------------------------------------


def _plain(nodes: tuple[Child, ...]) -> bool:
    return len(nodes) == 1 and isinstance(nodes[0], Node) and nodes[0].attr("class") == "ak-plain"


def test_list_markers_count_two_levels_each() -> None:
    below = "- " * (NESTING_MAX_DEPTH // 2 - 1) + "deep"
    assert not _plain(markdown_to_tree(below))
    assert len(tags(markdown_to_tree(below), "ul")) == NESTING_MAX_DEPTH // 2 - 1
    at_limit = "- " * (NESTING_MAX_DEPTH // 2) + "deep"
    assert _plain(markdown_to_tree(at_limit))
    assert text_of(markdown_to_tree(at_limit)[0]).strip() == at_limit.strip()


def test_indentation_counts_one_level_per_two_columns() -> None:
    assert _plain(markdown_to_tree(" " * (2 * NESTING_MAX_DEPTH) + "x"))
    assert not _plain(markdown_to_tree(" " * (2 * NESTING_MAX_DEPTH - 2) + "x"))


def test_a_deep_line_after_the_first_line_counts() -> None:
    assert _plain(markdown_to_tree("intro\n" + "> " * NESTING_MAX_DEPTH + "deep"))


def test_the_plain_text_fallback_costs_two_nodes() -> None:
    deep = "> " * NESTING_MAX_DEPTH + "deep"
    budget = RenderBudget(nodes=2)
    assert _plain(markdown_to_tree(deep, budget)) and not budget.shortened
    budget = RenderBudget(nodes=1)
    assert markdown_to_tree(deep, budget) == () and budget.shortened


# -- never raises ------------------------------------------------------------------------


@pytest.mark.parametrize("source", [5, b"x", None, ""])
def test_anything_but_a_string_renders_nothing(source: object) -> None:
    assert markdown_to_tree(source) == ()  # type: ignore[arg-type]


class _BrokenParser:
    def parse(self, source: str) -> list[object]:
        raise RuntimeError("a parser bug")


def test_a_parser_failure_shows_the_text_as_one_paragraph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(markdown_tree, "_parser", _BrokenParser())
    assert markdown_to_tree("**a** b", RenderBudget(nodes=2)) == (element("p", None, ("**a** b",)),)
    budget = RenderBudget(nodes=1)
    assert markdown_to_tree("**a** b", budget) == () and budget.shortened


# -- bounds on lists, code languages and tables ------------------------------------------


def test_an_ordered_list_keeps_its_start_from_0_to_the_largest_commonmark_allows() -> None:
    for start in (0, 999_999_999):
        [listing] = markdown_to_tree(f"{start}. item")
        assert isinstance(listing, Node) and listing.attr("start") == str(start)


def test_a_code_language_name_at_the_limit_and_one_past() -> None:
    for length, kept in ((32, True), (33, False)):
        name = "a" * length
        [code] = tags(markdown_to_tree(f"```{name}\nx\n```"), "code")
        assert (code.attr("class") == f"language-{name}") is kept, length


def test_a_table_row_past_the_limit_leaves_nothing_of_itself() -> None:
    body = "".join(f"|r{i}|v{i}|\n" for i in range(TABLE_MAX_ROWS - 1))
    source = "|h1|h2|\n|---|---|\n" + body + "|LAST|cell|\n|after|more|\n\nnext"
    budget = RenderBudget()
    nodes = markdown_to_tree(source, budget)
    [table] = tags(nodes, "table")
    assert len(tags((table,), "tr")) == TABLE_MAX_ROWS and budget.shortened
    shown = text_of(element("div", None, nodes))
    assert "LAST" not in shown and "cell" not in shown and "after" not in shown
    assert shown.rstrip().endswith("next")


# -- what the tree builder counts and keeps -------------------------------------------


def test_a_code_block_costs_its_nodes_at_the_limit_and_one_past() -> None:
    budget = RenderBudget(nodes=6)  # div, button, "Copy", pre, code, "x\n"
    assert len(tags(markdown_to_tree("```\nx\n```", budget), "pre")) == 1
    assert not budget.shortened and budget.nodes == 0
    budget = RenderBudget(nodes=5)
    assert tags(markdown_to_tree("```\nx\n```", budget), "pre") == [] and budget.shortened


def test_adjacent_text_is_one_run_and_costs_one_node() -> None:
    budget = RenderBudget(nodes=2)  # p and one text run
    assert markdown_to_tree("a\nb", budget) == (element("p", None, ("a\nb",)),)
    assert not budget.shortened


def test_soft_and_hard_breaks() -> None:
    [paragraph] = markdown_to_tree("*a* x *b* y\nz  \nw")
    assert isinstance(paragraph, Node)
    em = element("em", None, ("a",)), element("em", None, ("b",))
    assert paragraph.children == (em[0], " x ", em[1], " y\nz", element("br"), "w")


def test_a_cut_inside_a_list_keeps_what_was_built() -> None:
    budget = RenderBudget(nodes=4)  # ul, li, "a", li: the third item does not fit
    nodes = markdown_to_tree("- a\n- b\n- c\n", budget)
    assert budget.shortened and len(tags(nodes, "ul")) == 1
    assert text_of(element("div", None, nodes)).startswith("a")


def test_header_cells_are_column_headers() -> None:
    nodes = markdown_to_tree("|a|b|\n|-|-|\n|1|2|")
    assert [th.attr("scope") for th in tags(nodes, "th")] == ["col", "col"]
    assert [td.attr("scope") for td in tags(nodes, "td")] == [None, None]


def test_each_table_counts_its_own_rows() -> None:
    body = "".join(f"|r{i}|\n" for i in range(TABLE_MAX_ROWS - 1))
    one = "|h|\n|-|\n" + body
    budget = RenderBudget()
    nodes = markdown_to_tree(one + "\npara\n\n" + one, budget)
    assert [len(tags((t,), "tr")) for t in tags(nodes, "table")] == [TABLE_MAX_ROWS] * 2


def test_text_after_a_cut_table_is_not_inside_it() -> None:
    body = "".join(f"|r{i}|\n" for i in range(TABLE_MAX_ROWS + 2))
    nodes = markdown_to_tree("|h|\n|-|\n" + body + "\nnext")
    assert [n.tag for n in nodes if isinstance(n, Node)] == ["table", "p"]


def test_code_languages_come_from_the_first_word_only() -> None:
    [code] = tags(markdown_to_tree("```py title x\nx\n```"), "code")
    assert code.attr("class") == "language-py"
    [plain] = tags(markdown_to_tree("```\nx\n```"), "code")
    assert plain.attr("class") is None
    [pre] = tags(markdown_to_tree("```\nx\n```"), "pre")
    assert pre.attr("data-lang") is None


def test_code_block_keeps_its_language_and_copy_label() -> None:
    block = markdown_tree.code_block("x", "py")
    [code] = tags((block,), "code")
    assert code.attr("class") == "language-py"
    [button] = tags((block,), "button")
    assert button.children == ("Copy",)


# -- "More from the docs" ----------------------------------------------------------------

MORE = "**More from the docs**\n"


def _item_details(nodes: tuple[Child, ...]) -> list[Node]:
    return [d for d in tags(nodes, "details") if d.attr("class") == markdown_tree.MORE_ITEM_CLASS]


def test_an_item_of_one_line_and_its_quote_closes_over_the_quote() -> None:
    source = MORE + "- One.\n  > Quoted one.\n"
    full = RenderBudget()
    nodes = markdown_to_tree(source, full)
    [item] = _item_details(nodes)
    assert text_of(item).startswith("One.")
    # p, strong, label, ul, li, "One.", blockquote, p, quote: 9 parsed; details, summary: 2
    assert RenderBudget().nodes - full.nodes == 11
    at_limit = RenderBudget(nodes=11)
    assert len(_item_details(markdown_to_tree(source, at_limit))) == 1
    assert not at_limit.shortened


def test_an_ordered_list_after_the_label_is_collapsed_with_its_start() -> None:
    # A list starting at 3 cannot interrupt a paragraph (CommonMark): a blank line first.
    nodes = markdown_to_tree(MORE + "\n3. One.\n   > Quoted.\n4. Two.\n")
    [section] = [d for d in tags(nodes, "details") if d.attr("class") == markdown_tree.MORE_CLASS]
    [listing] = tags((section,), "ol")
    assert listing.attr("start") == "3"


def test_an_item_that_is_only_a_quote_stays_as_it_is() -> None:
    nodes = markdown_to_tree(MORE + "- > Only a quote.\n")
    assert _item_details(nodes) == [] and len(tags(nodes, "blockquote")) == 1
