"""The cited sources' titles (answering/citation.py): duplicates told apart, bounds kept."""

from __future__ import annotations

import pytest

from agentskit_web.answering.chunk import Passage
from agentskit_web.answering.citation import (
    OPENING_MAX_CHARS,
    OPENING_MAX_WORDS,
    cited_sources,
    opening_line,
    opening_words,
    source_titles,
)
from agentskit_web.protocol.limits import SOURCE_TITLE_MAX_CHARS


def _passage(page: str, heading: str, text: str, path: str = "/p/", anchor: str | None = None):
    return Passage(path=path, anchor=anchor, page_title=page, heading=heading, text=text)


def test_two_sources_with_one_title_get_their_quoted_opening_words() -> None:
    passages = [
        _passage("Usage", "Usage", "Install the package with pip first.", "/a/"),
        _passage("Guide", "Setup", "Nothing in common.", "/b/"),
        _passage("Usage", "Usage", "Call run() from your script to start.", "/c/"),
    ]
    assert source_titles(passages) == [
        "Usage (“Install the package with pip first.”)",
        "Guide › Setup",
        "Usage (“Call run() from your script to…”)",
    ]


def test_titles_no_other_source_shares_are_left_as_they_are() -> None:
    passages = [
        _passage("Battery", "Storage", "Half full."),
        _passage("Battery", "Charge", "Plug."),
    ]
    assert source_titles(passages) == ["Battery › Storage", "Battery › Charge"]


def test_sources_whose_opening_words_agree_too_are_numbered() -> None:
    same = "In winter, store the lantern indoors at room temperature."
    passages = [
        _passage("Battery", "Storage", same, anchor="storage"),
        _passage("Battery", "Storage", same, anchor="id1"),
    ]
    titles = source_titles(passages)
    assert titles == [
        "Battery › Storage (“In winter, store the lantern indoors…”) (1)",
        "Battery › Storage (“In winter, store the lantern indoors…”) (2)",
    ]


def test_the_opening_words_skip_the_labels_a_section_opens_with() -> None:
    """Material's tabs put every label first ("Summer", "Winter"), an admonition its
    title: the quote starts at the first line that reads as a sentence."""
    tabs = "Summer\nWinter\nIn summer, keep the lantern out of direct sun.\nIn winter, store it."
    note = "Cold weather\nCharging below freezing point damages the cells!"
    plain = "Before storing it for months, leave the cells half full."
    passages = [
        _passage("Battery", "Storage", tabs),
        _passage("Battery", "Storage", plain),
        _passage("Battery", "Storage", note),
    ]
    assert source_titles(passages) == [
        "Battery › Storage (“In summer, keep the lantern out…”)",
        "Battery › Storage (“Before storing it for months, leave…”)",
        "Battery › Storage (“Charging below freezing point damages the…”)",
    ]


def test_a_source_with_no_line_that_reads_as_a_sentence_opens_at_its_start() -> None:
    labels = "pip\nuv\nconda"
    later = "Install it:\npip\nuv"
    assert opening_line(labels) == labels
    assert opening_line(later) == later  # a line ending in ":" reads as a sentence
    assert opening_line("Note\nSee `run()`.") == "See `run()`."
    assert opening_line("Tip\nSee (the guide).") == "See (the guide)."


def test_a_source_with_no_text_quotes_its_code_and_else_its_number() -> None:
    code = Passage("/a/", None, "API", "run", "", code="run(fast=True)")
    empty = Passage("/b/", None, "API", "run", "")
    assert source_titles([code, empty]) == ["API › run (“run(fast=True)”)", "API › run"]
    assert source_titles([empty, empty]) == ["API › run (1)", "API › run (2)"]


def test_opening_words_at_their_bounds_and_one_past() -> None:
    words = [f"w{i}" for i in range(OPENING_MAX_WORDS + 1)]
    assert opening_words(" ".join(words[:OPENING_MAX_WORDS])) == " ".join(words[:-1])
    assert opening_words(" ".join(words)) == " ".join(words[:-1]) + "…"
    exact = "a" * (OPENING_MAX_CHARS - 2) + " b"  # two words, exactly the limit
    assert opening_words(exact) == exact
    assert opening_words(exact + "c") == "a" * (OPENING_MAX_CHARS - 2) + "…"
    assert opening_words("x" * (OPENING_MAX_CHARS + 1)) == "x" * OPENING_MAX_CHARS + "…"
    assert opening_words("  \n ") == ""


@pytest.mark.parametrize("length", [SOURCE_TITLE_MAX_CHARS, SOURCE_TITLE_MAX_CHARS + 1])
def test_a_title_at_the_wire_bound_keeps_its_quote_within_it(length: int) -> None:
    long = "T" * length
    passages = [_passage(long, long, "First one."), _passage(long, long, "Second one.")]
    titles = source_titles(passages)
    assert all(len(title) == SOURCE_TITLE_MAX_CHARS for title in titles), titles
    assert titles[0].endswith(" (“First one.”)") and titles[1].endswith(" (“Second one.”)")


def test_the_cite_sources_carry_ids_titles_paths_and_anchors() -> None:
    passages = [
        _passage("Usage", "Usage", "One.", "/a/", "top"),
        _passage("Usage", "Usage", "Two.", "/b/"),
    ]
    assert cited_sources(passages) == [
        {"id": "source-1", "title": "Usage (“One.”)", "path": "/a/", "anchor": "top"},
        {"id": "source-2", "title": "Usage (“Two.”)", "path": "/b/"},
    ]
