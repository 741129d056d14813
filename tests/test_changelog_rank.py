"""Change-log sections rank below the documentation at equal evidence (issue 26 round five).

The rule (`answering/changelog.py`, `ranking.CHANGELOG_WEIGHT`) recognises a change log by
its version headings as MkDocs and Sphinx change logs write them, weighs its sections down
unless the question asks about versions, and reads nothing the page does not fetch anyway.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from agentskit_web.answering import ranking
from agentskit_web.answering.changelog import changelog_pages, is_version_heading
from agentskit_web.answering.chunk import Chunk
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.site_index import SiteIndex
from agentskit_web.answering.static_index import StaticSearch, split_index
from agentskit_web.indexing.site import index_site

MKDOCS_HEADINGS = [  # as MkDocs (Material) change logs write them, permalink signs removed
    "0.47.3 (August 24, 2025)",
    "0.13.8",
    "v2.1.0",
    "1.2.0 — March 2024",
    "1.2.0 - 2024-03-05",
    "[1.0.0] - 2017-06-20",
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
)
UNDER_VERSION = Chunk(  # a sub-section: its own heading is no version
    "/release-notes/", "fixed", "Release Notes", "Fixed", "Serving static files sets the type."
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


def test_a_sub_section_is_known_by_a_version_heading_among_the_candidates() -> None:
    assert changelog_pages(CHUNKS) == {"/release-notes/"}
    without_version = [c for c in CHUNKS if c is not VERSION]
    assert changelog_pages(without_version) == set()
    # with the version entry gone, nothing says the page is a change log: no demotion
    index = SearchIndex.from_chunks(without_version)
    assert sections(index, "How do I serve static files?")[0] == "/release-notes/#fixed"


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


def built(tmp: Path, generator: str) -> SearchIndex:
    for name, text in (MKDOCS_PAGES if generator == "mkdocs" else SPHINX_PAGES).items():
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
