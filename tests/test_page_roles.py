"""Pages about the project rather than its use rank below the docs (issue 32 item 2)."""

import pytest

from agentskit_web.answering import ranking
from agentskit_web.answering.chunk import Chunk
from agentskit_web.answering.page_roles import asks_for_role, page_role
from agentskit_web.answering.ranking import SearchIndex


@pytest.mark.parametrize(
    ("path", "title", "heading", "role"),
    [
        ("/contributing/", "Contributing", "Running the tests", "contributing"),
        ("/docs/CONTRIBUTING.html", "How we work", "Setup", "contributing"),
        ("/sponsorship/", "✨ Sponsor Starlette & Uvicorn ✨", "Why sponsor", "sponsors"),
        ("/funding/", "Support us", "Support us", "sponsors"),
        ("/license/", "BSD-3-Clause License", "BSD-3-Clause License", "licence"),
        ("/about/code-of-conduct/", "Our pledge", "Our pledge", "code of conduct"),
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
)
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
