"""Change-log sections rank below the documentation at equal evidence (issue 26 round five).

The rule (`answering/changelog.py`, `ranking.CHANGELOG_WEIGHT`) recognises a change log by
its version headings as MkDocs and Sphinx change logs write them: the reader marks every
section whose heading or an enclosing heading is a version (`Chunk.history`), and the
ranking weighs marked sections down unless the question asks about versions.
"""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from agentskit_web.answering import ranking
from agentskit_web.answering.changelog import is_version_heading
from agentskit_web.answering.chunk import Chunk
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.site_index import SiteIndex, parse_site_index
from agentskit_web.answering.static_index import StaticSearch, split_index
from agentskit_web.indexing.docs_folder import chunk_page, parse_markdown
from agentskit_web.indexing.site import index_site

MKDOCS_HEADINGS = [  # as MkDocs (Material) change logs write them, permalink signs removed
    "0.47.3 (August 24, 2025)",
    "0.13.8",
    "v2.1.0",
    "1.2.0 — March 2024",
    "1.2.0 - 2024-03-05",
    "[1.0.0] - 2017-06-20",
    "[Unreleased]",
    "2.0.0-beta2 (2024-01-01)",
]
SPHINX_HEADINGS = [  # Sphinx's own CHANGES, towncrier's default title, "Version x (date)"
    "Release 7.2.0 (released Aug 17, 2023)",
    "Version 1.2 (2024-03-05)",
    "attrs 23.2.0 (2023-12-31)",
    "1.0rc1",
    "v1.2.0: 2024-03-05",
]
NOT_VERSIONS = [  # sections of ordinary docs, and a change log's sub-sections by themselves
    "Fixed",
    "Bugs fixed",
    "StaticFiles",
    "Python 3.12",
    "Python 3.12 support",
    "Python 3.12 (or later)",
    "Migrating from 1.10 to 2.0",
    "Pydantic V2",
    "HTTP/1.1",
    "Step 2",
    "Version",
    "1.2.3.4 addresses",
    "Unreleased",
    "Unreleased features",
]


@pytest.mark.parametrize("heading", MKDOCS_HEADINGS + SPHINX_HEADINGS)
def test_a_change_logs_version_headings_are_recognised(heading: str) -> None:
    assert is_version_heading(heading)


@pytest.mark.parametrize("heading", NOT_VERSIONS)
def test_other_headings_are_not_versions(heading: str) -> None:
    assert not is_version_heading(heading)


DOCS = Chunk(
    "/staticfiles/",
    "serving-a-folder",
    "Static Files",
    "Serving a folder",
    "Mount a folder of static files under a path and the app serves each file with its "
    "content type, caching headers and range requests, so a browser can fetch images, "
    "stylesheets and scripts directly, and a missing file answers with a not found page.",
)
VERSION = Chunk(
    "/release-notes/",
    "0372-march-5-2024",
    "Release Notes",
    "0.37.2 (March 5, 2024)",
    "Changed: static files follow symbolic links.",
    history=True,
)
UNDER_VERSION = Chunk(  # a sub-section: its own heading is no version, the reader marks it
    "/release-notes/",
    "fixed",
    "Release Notes",
    "Fixed",
    "Serving static files sets the type.",
    history=True,
)
OTHER = Chunk("/", None, "Home", "Home", "Welcome to the demo application.")
FILLER = [  # other sections, so that the question's words are rare (BM25's IDF)
    Chunk(f"/topic-{n}/", f"part-{n}", f"Topic {n}", f"Part {n}", f"{words} for topic {n}.")
    for n, words in enumerate(
        [
            "Routes map paths to endpoints",
            "Sessions keep signed cookies",
            "Templates render HTML pages",
            "Websockets send and receive messages",
            "Middleware wraps every request",
            "Lifespan handlers run at startup",
            "Background tasks run after the response",
            "Exceptions become error responses",
        ]
    )
]
CHUNKS = [OTHER, *FILLER, DOCS, VERSION, UNDER_VERSION]


def sections(index: SearchIndex | StaticSearch, question: str) -> list[str]:
    return [f"{p.path}#{p.anchor}" for p in index.search(question, 4)]


def test_the_documentation_outranks_the_change_log_for_a_how_to_question() -> None:
    found = sections(SearchIndex.from_chunks(CHUNKS), "How do I serve static files?")
    assert found == ["/staticfiles/#serving-a-folder", "/release-notes/#fixed"]


def test_without_the_rule_the_change_log_would_rank_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # the fixture is one where the rule matters: BM25 alone prefers the short entries
    monkeypatch.setattr(ranking, "CHANGELOG_WEIGHT", 1.0)
    found = sections(SearchIndex.from_chunks(CHUNKS), "How do I serve static files?")
    assert found[0].startswith("/release-notes/")
    assert "/staticfiles/#serving-a-folder" in found


def test_the_mark_decides_not_the_other_candidates() -> None:
    # a version-headed candidate of the same page no longer makes its page a change log:
    # an unmarked section beside it (a docs page with one "2.0.0 (2023-06-30)" section) keeps
    # its score, and a marked one is weighed down with no version heading among the rows
    unmarked = dataclasses.replace(UNDER_VERSION, history=False)
    index = SearchIndex.from_chunks([OTHER, *FILLER, DOCS, VERSION, unmarked])
    assert sections(index, "How do I serve static files?")[0] == "/release-notes/#fixed"
    alone = SearchIndex.from_chunks([OTHER, *FILLER, DOCS, UNDER_VERSION])
    assert sections(alone, "How do I serve static files?")[0] == "/staticfiles/#serving-a-folder"


def test_the_mark_survives_the_site_index_file_and_is_absent_where_unset() -> None:
    site = SiteIndex.of(CHUNKS, site_name="Demo", base_path="/", generator="html", pages=3)
    data = site.to_bytes()
    assert data.count(b'"history":true') == 2 and b'"history":false' not in data
    decoded = parse_site_index(data)
    assert decoded.ok and decoded.value.chunk_list() == CHUNKS
    plain = [OTHER, *FILLER, DOCS]
    unmarked = SiteIndex.of(plain, site_name="Demo", base_path="/", generator="html", pages=3)
    assert b"history" not in unmarked.to_bytes()


@pytest.mark.parametrize(
    "question",
    [
        "How do I serve static files in v2.5?",  # a version number
        "Serving static files in the release notes",  # the change log's own title words
    ],
)
def test_a_question_about_versions_ranks_as_without_the_rule(
    question: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = SearchIndex.from_chunks(CHUNKS)
    shipped = sections(index, question)
    assert shipped[0].startswith("/release-notes/")
    monkeypatch.setattr(ranking, "CHANGELOG_WEIGHT", 1.0)
    assert sections(index, question) == shipped


def test_a_version_in_the_question_reaches_its_entry() -> None:
    found = sections(SearchIndex.from_chunks(CHUNKS), "What changed for static files in 0.37.2?")
    assert found[0] == "/release-notes/#0372-march-5-2024"


def test_the_page_ranks_as_the_server_does() -> None:
    site = SiteIndex.of(CHUNKS, site_name="Demo", base_path="/", generator="html", pages=3)
    files = split_index(site)
    server = SearchIndex.from_chunks(CHUNKS)
    for question in ["How do I serve static files?", "What changed for static files in 0.37.2?"]:
        page = StaticSearch(files.manifest)
        while names := page.parts_for(question, 4):
            for name in names:
                assert page.add_part(name, files.parts[name]) is None
        assert sections(page, question) == sections(server, question)


# ---- real builds: what the site reader gives for a MkDocs and a Sphinx change log

SERVING = "Mount a folder of files and the app serves each one with its content type, caching "
SERVING += "headers and range support.\n"
MKDOCS_PAGES = {
    "mkdocs.yml": "site_name: Demo\ntheme:\n  name: material\n",
    "docs/index.md": "# Demo\n\nWelcome.\n",
    "docs/serving.md": f"# Files\n\nIntro words.\n\n## Serving a folder\n\n{SERVING}",
    "docs/changelog.md": "# Changelog\n\n## [1.2.0] - 2024-03-05\n\n### Added\n\n"
    "- Serving a folder follows symbolic links.\n\n### Fixed\n\n"
    "- Serving a folder sets the right content type.\n\n## 1.1.0 (February 1, 2024)\n\n"
    "- Serving a folder is faster.\n",
}
SPHINX_PAGES = {
    "conf.py": 'project = "Demo"\n',
    "index.rst": "Demo\n====\n\nWelcome.\n\n.. toctree::\n\n   serving\n   changes\n",
    "serving.rst": "Files\n=====\n\nIntro words.\n\n"
    f"Serving a folder\n----------------\n\n{SERVING}",
    "changes.rst": "Changelog\n=========\n\nRelease 1.2.0 (released Mar 5, 2024)\n"
    "------------------------------------\n\nFeatures added\n~~~~~~~~~~~~~~\n\n"
    "* Serving a folder follows symbolic links.\n\nBugs fixed\n~~~~~~~~~~\n\n"
    "* Serving a folder sets the right content type.\n\nVersion 1.1 (2024-02-01)\n"
    "------------------------\n\n* Serving a folder is faster.\n",
}


def built(tmp: Path, generator: str, pages: dict[str, str] | None = None) -> SearchIndex:
    if pages is None:
        pages = MKDOCS_PAGES if generator == "mkdocs" else SPHINX_PAGES
    for name, text in pages.items():
        (tmp / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "src" / name).write_text(text, encoding="utf-8")
    if generator == "mkdocs":
        command = ["mkdocs", "build", "-q", "-f", str(tmp / "src" / "mkdocs.yml")]
        command += ["-d", str(tmp / "out")]
        env = {"NO_MKDOCS_2_WARNING": "1", "PATH": ""}
    else:
        command = ["sphinx", "-q", "-b", "html", str(tmp / "src"), str(tmp / "out")]
        env = None
    subprocess.run([sys.executable, "-m", *command], check=True, capture_output=True, env=env)
    return SearchIndex.from_chunks(index_site(tmp / "out").chunk_list())


@pytest.mark.parametrize(
    ("generator", "version", "docs", "log"),
    [
        ("mkdocs", "1.1.0 (February 1, 2024)", "/serving/#serving-a-folder", "/changelog/"),
        ("sphinx", "Version 1.1 (2024-02-01)", "/serving.html#serving-a-folder", "/changes.html"),
    ],
)
def test_a_built_change_log_ranks_below_the_docs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    generator: str,
    version: str,
    docs: str,
    log: str,
) -> None:
    index = built(tmp_path, generator)
    headings = {p.heading for p in index.all_passages() if p.path == log and p.anchor}
    # a version heading with its own text is a chunk; one with only sub-sections is not
    assert {h for h in headings if is_version_heading(h)} == {version}
    assert sections(index, "serve a folder") == [docs]
    assert sections(index, "what changed in 1.1 when serving a folder")[0].startswith(log)
    monkeypatch.setattr(ranking, "CHANGELOG_WEIGHT", 1.0)
    without = sections(index, "serve a folder")
    assert without[0] == docs and all(s.startswith(log) for s in without[1:]) and len(without) > 1


# ---- the reader's mark: a section under a version heading, at any depth

KEEP_A_CHANGELOG = """# Changelog

All notable changes to this project are documented in this file.

## [Unreleased]

### Removed

- Serving a folder no longer lists hidden files.

## [1.2.0] - 2024-03-05

### Added

- Serving a folder follows symbolic links.

### Fixed

- Serving a folder sets the right content type.

## [1.1.0] - 2024-02-01

### Changed

- Serving a folder is faster.
"""
NESTED_LOG = """# Demo

Intro words.

## Release history

### 2.0.0 (2024-05-01)

#### Added

- Serving a folder follows symbolic links.

### Older releases

Nothing worth noting.

## License

Serving a folder is free software.
"""
NOT_A_LOG = """# Supported versions

Serving a folder works on every supported Python.

## Python 3.12

Serving a folder on Python 3.12 needs nothing more.

### Notes

Serving a folder keeps working.

## Migrating from 1.10 to 2.0

Serving a folder has a new argument.
"""


def marks(markdown: str) -> dict[str, bool]:
    return {c.heading: c.history for c in chunk_page(parse_markdown(markdown, "x"), "/x/")}


def test_every_section_under_a_version_heading_is_marked_and_only_those() -> None:
    assert marks(KEEP_A_CHANGELOG) == {
        "Changelog": False,
        "Removed": True,  # under "[Unreleased]", the entry for the next version
        "Added": True,
        "Fixed": True,
        "Changed": True,
    }
    assert marks(NESTED_LOG) == {
        "Demo": False,
        "Added": True,  # two levels under "2.0.0 (2024-05-01)"
        "Older releases": False,  # a sibling of the version, not under it
        "License": False,
    }
    assert not any(marks(NOT_A_LOG).values())


# ---- real builds of logs whose versions hold no text of their own (only sub-sections)

MKDOCS_SUB_SECTIONS = {  # Keep a Changelog, and a docs page with numbers in its headings
    **MKDOCS_PAGES,
    "docs/changelog.md": KEEP_A_CHANGELOG,
    "docs/versions.md": NOT_A_LOG,
}
SPHINX_SUB_SECTIONS = {  # Sphinx's own CHANGES style, and the same docs page
    **SPHINX_PAGES,
    "index.rst": "Demo\n====\n\nWelcome.\n\n.. toctree::\n\n   serving\n   changes\n   versions\n",
    "changes.rst": "Changelog\n=========\n\nRelease 1.2.0 (released Mar 5, 2024)\n"
    "------------------------------------\n\nFeatures added\n~~~~~~~~~~~~~~\n\n"
    "* Serving a folder follows symbolic links.\n\nBugs fixed\n~~~~~~~~~~\n\n"
    "* Serving a folder sets the right content type.\n\n"
    "Release 1.1.0 (released Feb 1, 2024)\n------------------------------------\n\n"
    "Bugs fixed\n~~~~~~~~~~\n\n* Serving a folder is faster.\n",
    "versions.rst": "Supported versions\n==================\n\n"
    "Serving a folder works on every supported Python.\n\n"
    "Python 3.12\n-----------\n\nServing a folder on Python 3.12 needs nothing more.\n\n"
    "Notes\n~~~~~\n\nServing a folder keeps working.\n\n"
    "Migrating from 1.10 to 2.0\n--------------------------\n\n"
    "Serving a folder has a new argument.\n",
}


@pytest.mark.parametrize(
    ("generator", "pages", "log", "entries"),
    [
        ("mkdocs", MKDOCS_SUB_SECTIONS, "/changelog/", {"Removed", "Added", "Fixed", "Changed"}),
        ("sphinx", SPHINX_SUB_SECTIONS, "/changes.html", {"Features added", "Bugs fixed"}),
    ],
)
def test_a_built_log_of_sub_sections_only_is_marked_and_ranks_below_the_docs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    generator: str,
    pages: dict[str, str],
    log: str,
    entries: set[str],
) -> None:
    index = built(tmp_path, generator, pages)
    chunks = index.all_chunks()
    # no chunk has a version heading of its own: main's rule saw no change log here
    assert not any(is_version_heading(c.heading) for c in chunks)
    assert {c.heading for c in chunks if c.history} == entries
    assert {c.path for c in chunks if c.history} == {log}
    assert not any(c.history for c in chunks if c.path != log)  # "Python 3.12", "Migrating..."
    # every page says "serving a folder"; the entry and the docs share "content type"
    docs = "/serving/" if generator == "mkdocs" else "/serving.html"
    assert sections(index, "content type")[0] == f"{docs}#serving-a-folder"
    monkeypatch.setattr(ranking, "CHANGELOG_WEIGHT", 1.0)
    assert sections(index, "content type")[0].startswith(log)  # the mark is what moves it
