"""Pages about the project rather than its use rank below the docs (issue 32 item 2)."""

import dataclasses
import json
from pathlib import Path

import pytest

from agentskit_web.answering import ranking
from agentskit_web.answering.chunk import Chunk
from agentskit_web.answering.page_roles import asks_for_role, page_role
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.site_index import SITE_INDEX_VERSION, SiteIndex, parse_site_index
from agentskit_web.answering.static_index import PART_INVALID, StaticSearch, split_index
from agentskit_web.indexing.docs_folder import chunk_page, parse_markdown
from agentskit_web.indexing.site import index_site


@pytest.mark.parametrize(
    ("path", "title", "heading", "role"),
    [
        ("/contributing/", "Contributing", "Running the tests", "contributing"),
        ("/docs/CONTRIBUTING.html", "How we work", "Setup", "contributing"),
        ("/sponsorship/", "✨ Sponsor Starlette & Uvicorn ✨", "Why sponsor", "sponsors"),
        ("/funding/", "Support us", "Support us", "sponsors"),
        ("/license/", "BSD-3-Clause License", "BSD-3-Clause License", "licence"),
        ("/about/code-of-conduct/", "Our pledge", "Our pledge", "code-of-conduct"),
        ("/third-party-packages/", "Third Party Packages", "Plugins", "third-party"),
        ("/contrib/", "click-contrib", "Third-party projects", "third-party"),
        ("/concepts/types/", "Types", "Handling third-party types", None),
        ("/security/", "Security", "Vetting third-party packages", None),
        ("/integrations/mypy/", "Mypy", "Configuring the plugin", None),
        ("/contrib/", "click-contrib", "click-contrib", None),
        ("/guide/licensing-your-cli/", "Licensing your CLI", "Adding a licence flag", None),
        ("/", "Welcome", "Welcome", None),
    ],
)
def test_a_role_is_the_page_s_conventional_name(
    path: str, title: str, heading: str, role: str | None
) -> None:
    assert page_role(path, title, heading) == role


DOCS = Chunk(
    "/lifespan/",
    "startup",
    "Lifespan",
    "Lifespan",
    "Open a database pool when the application starts and close it at shutdown.",
)
SPONSOR = Chunk(
    "/sponsorship/",
    None,
    "Sponsor Starlette",
    "Sponsor Starlette",
    "Your sponsorship keeps the database pool of our tests open when the app starts: "
    "open the database pool, open the pool when the app starts.",
    role="sponsors",
)
"""Marked as the reader marks it (`Chunk.role`): the ranking reads the mark."""
OTHERS = [
    Chunk(f"/page{n}/", None, f"Page {n}", f"Page {n}", f"Unrelated text number {n}.")
    for n in range(8)
]
ASKED = "open a database pool when the app starts"


def ranked(question: str) -> list[str]:
    index = SearchIndex.from_chunks([SPONSOR, DOCS, *OTHERS])
    return [p.path for p in index.search(question, 3)]


def test_the_docs_rank_before_a_sponsor_page_that_matches_better() -> None:
    assert ranked(ASKED)[0] == "/lifespan/"


def test_without_the_weight_the_sponsor_page_would_rank_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranking, "META_WEIGHT", 1.0)
    assert ranked(ASKED)[0] == "/sponsorship/"


def test_a_question_asking_for_the_role_ranks_as_without_the_weight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = "how do I sponsor the pool work when the app starts"
    assert asks_for_role(asked, "sponsors") and not asks_for_role(ASKED, "sponsors")
    weighed = ranked(asked)
    monkeypatch.setattr(ranking, "META_WEIGHT", 1.0)
    assert weighed == ranked(asked)


# ---- marked at index time (Chunk.role), read by the ranking


def test_the_ranking_reads_the_mark_not_the_titles() -> None:
    """The same sponsor chunk unmarked ranks as docs: the role comes from the reader."""
    unmarked = dataclasses.replace(SPONSOR, role=None)
    index = SearchIndex.from_chunks([unmarked, DOCS, *OTHERS])
    assert index.search(ASKED, 3)[0].path == "/sponsorship/"


PAGE = """<!doctype html><html><head><title>{title}</title></head><body><main>
<h1 id="top">{title}</h1><p>Plugins and add-ons people wrote.</p>
<h2 id="third-party-projects">Third-party projects</h2><p>Projects built on it.</p>
<h3 id="click-repl">click-repl</h3><p>A shell for your commands.</p>
<h3 id="click-help">click-help</h3><p>Coloured help pages.</p>
<h2 id="writing-your-own">Writing your own</h2><p>How to write a plugin.</p>
</main></body></html>"""


def _site(tmp_path: Path) -> dict[tuple[str, str | None], str | None]:
    """Index a small built site; (path, anchor) -> role of each chunk."""
    (tmp_path / "contrib").mkdir()
    (tmp_path / "contrib" / "index.html").write_text(PAGE.format(title="Extras"), "utf-8")
    (tmp_path / "contributing").mkdir()
    (tmp_path / "contributing" / "index.html").write_text(PAGE.format(title="Help"), "utf-8")
    (tmp_path / "index.html").write_text(PAGE.format(title="Welcome"), "utf-8")
    return {(c.path, c.anchor): c.role for c in index_site(tmp_path).chunk_list()}


def test_the_reader_marks_a_listing_and_the_sections_under_it(tmp_path: Path) -> None:
    roles = _site(tmp_path)
    assert roles[("/contrib/", "third-party-projects")] == "third-party"
    assert roles[("/contrib/", "click-repl")] == "third-party"  # under the listing
    assert roles[("/contrib/", "click-help")] == "third-party"
    assert roles[("/contrib/", "writing-your-own")] is None  # a sibling, not under it
    assert roles[("/contrib/", None)] is None  # the page top


def test_the_reader_marks_every_section_of_a_role_page(tmp_path: Path) -> None:
    roles = _site(tmp_path)
    assert {role for (path, _), role in roles.items() if path == "/contributing/"} == {
        "contributing"
    }


def test_the_markdown_reader_marks_roles_too(tmp_path: Path) -> None:
    page = parse_markdown(
        "# Extras\n\nIntro.\n\n## Third party packages\n\nText.\n\n### starlette-x\n\nMore.\n", "x"
    )
    assert [c.role for c in chunk_page(page, "/extras/")] == [None, "third-party", "third-party"]
    assert {c.role for c in chunk_page(page, "/license/")} == {"licence"}


def test_the_role_is_written_in_the_site_index_only_when_set() -> None:
    site = SiteIndex.of([SPONSOR, DOCS], site_name="S", base_path="/", generator="html", pages=2)
    wire = json.loads(site.to_bytes())
    assert wire["version"] == SITE_INDEX_VERSION == 2
    assert [chunk.get("role") for chunk in wire["chunks"]] == ["sponsors", None]
    assert "role" not in wire["chunks"][1]
    assert parse_site_index(site.to_bytes()).value.chunk_list() == [SPONSOR, DOCS]


def test_a_version_1_index_gets_the_roles_the_ranking_derived_then() -> None:
    site = SiteIndex.of(
        [dataclasses.replace(SPONSOR, role=None), DOCS, *OTHERS],
        site_name="S",
        base_path="/",
        generator="html",
        pages=10,
    )
    wire = json.loads(site.to_bytes())
    wire["version"] = 1
    old = parse_site_index(json.dumps(wire)).value
    assert old.chunk_list()[0].role == "sponsors"
    assert old.chunk_list()[1].role is None
    ranked = SearchIndex.from_chunks(old.chunk_list()).search(ASKED, 3)
    assert ranked[0].path == "/lifespan/"
    wire["chunks"][0]["role"] = "sponsors"  # a role is not version 1
    assert parse_site_index(json.dumps(wire)).diagnostic.code == "SITE_INDEX_INVALID"


def _static(chunks: list[Chunk]) -> tuple[StaticSearch, dict[str, bytes], bytes]:
    site = SiteIndex.of(chunks, site_name="S", base_path="/", generator="html", pages=10)
    files = split_index(site)
    return StaticSearch(files.manifest), files.parts, files.manifest


def test_the_static_index_carries_the_roles_and_answers_as_the_backend() -> None:
    chunks = [SPONSOR, DOCS, *OTHERS]
    search, parts, manifest = _static(chunks)
    assert json.loads(manifest)["version"] == 3
    while names := search.parts_for(ASKED, 3):
        for name in names:
            assert search.add_part(name, parts[name]) is None
    assert search.find(ASKED, 3) == SearchIndex.from_chunks(chunks).find(ASKED, 3)
    assert search._index.chunk(0).role == "sponsors"


def test_a_version_2_static_index_gets_the_roles_the_ranking_derived_then() -> None:
    """A version 2 index was written without roles: they are derived when its text parts
    are read (a role field in one is refused)."""
    _, parts, manifest = _static([dataclasses.replace(SPONSOR, role=None), DOCS, *OTHERS])
    old = StaticSearch(manifest.replace(b'"version":3', b'"version":2'))
    for name, data in parts.items():
        assert old.add_part(name, data) is None
    assert old._index.chunk(0).role == "sponsors"
    assert old.find(ASKED, 3).passages[0].path == "/lifespan/"
    _, marked_parts, marked = _static([SPONSOR, DOCS, *OTHERS])
    old = StaticSearch(marked.replace(b'"version":3', b'"version":2'))
    refused = [old.add_part(name, data) for name, data in marked_parts.items()]
    assert PART_INVALID in refused
