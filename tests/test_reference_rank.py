"""Guide before reference (issue 32 item 4): an API entry, known by its dotted-name anchor,
ranks below a guide section that matches alike, unless the question names its object."""

import pytest

from agentskit_web.answering import ranking
from agentskit_web.answering.chunk import Chunk
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.reference import is_reference_anchor, names_the_object

GUIDE = Chunk(
    "/utils/",
    "showing-progress-bars",
    "Utilities",
    "Showing progress bars",
    "Wrap a long loop in a progress bar so the user sees how far the work is.",
)
ENTRY = Chunk(
    "/api/",
    "click.progressbar",
    "API",
    "click.progressbar",
    "Shows a progress bar while iterating a long loop. The progress bar shows how far a "
    "long loop is: show it for any long loop.",
)
OTHERS = [
    Chunk(f"/page{n}/", None, f"Page {n}", f"Page {n}", f"Unrelated text number {n} here.")
    for n in range(8)
]
"""Pages that match nothing, so the shared words are rare (BM25's IDF)."""
ASKED = "show a progress bar for a long loop"


def ranked(question: str) -> list[str | None]:
    index = SearchIndex.from_chunks([ENTRY, GUIDE, *OTHERS])
    return [p.anchor for p in index.search(question, 3)]


def test_the_guide_ranks_first_and_the_entry_stays_among_the_sources() -> None:
    assert ranked(ASKED) == ["showing-progress-bars", "click.progressbar"]


def test_without_the_weight_the_entry_would_rank_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranking, "REFERENCE_WEIGHT", 1.0)
    assert ranked(ASKED)[0] == "click.progressbar"


def test_a_question_naming_the_object_ranks_as_without_the_weight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    named = "what does progressbar show for a long loop"
    weighed = ranked(named)
    monkeypatch.setattr(ranking, "REFERENCE_WEIGHT", 1.0)
    assert weighed == ranked(named)


@pytest.mark.parametrize(
    ("anchor", "entry"),
    [
        ("click.option", True),
        ("click.Command.main", True),
        ("pydantic.main.BaseModel.model_dump", True),
        ("click-option", False),  # Sphinx's id for a heading "click.option"
        ("clickoption", False),  # Python-Markdown's slug of it
        ("version-2.0", False),
        ("v2.0", False),
        ("option", False),
        (None, False),
    ],
)
def test_an_entry_is_known_by_its_dotted_name_anchor(anchor: str | None, entry: bool) -> None:
    assert is_reference_anchor(anchor) is entry


def test_the_object_is_named_by_its_last_part_as_a_word() -> None:
    assert names_the_object("how does click.progressbar work", "click.progressbar")
    assert names_the_object("Progressbar length?", "click.progressbar")
    assert not names_the_object("show a progress bar", "click.progressbar")
