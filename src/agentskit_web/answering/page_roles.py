"""Pages about the project rather than its use: contributing, sponsors, third-party lists,
codes of conduct, licences.

Most docs sites carry a few such pages beside the documentation. They share a
question's words by chance ("pool", "test", "request" in a contributor's guide or
a sponsor's blurb) and then crowd out the section that answers, while a reader
asking "how do I X" wants the docs (issue 32: "retry failed requests" answered from
Contributing › "Check Job Failed"; a Starlette start-up question from Sponsorship).

The role is marked at index time (`Chunk.role`): the site reader knows every heading
above a section, so a sub-section of a "Third-party projects" section is marked as
well (`role_marks`), and the ranking reads the mark instead of guessing from the
titles of each candidate. An index written before the mark existed (site index v1,
static index v2) gets its roles from `page_role` when it is read, which is what the
ranking computed then, so it ranks as before.

A role is recognised from what every generator leaves, not from a list fitted to a
corpus: the page's last path segment or its title *is* the role's conventional name,
the names GitHub gives a project's community files (CONTRIBUTING, CODE_OF_CONDUCT,
LICENSE, FUNDING; a sponsor page is `sponsors`/`sponsorship`), or a page or section
title calls itself a third-party listing. Each holds on the four eval corpora: it
marks Pydantic's, Starlette's and Click's Contributing pages, Starlette's
Sponsorship and Third Party Packages pages, Click's licence and its "Third-party
projects" section, and nothing on our docs or among the docs proper (Pydantic's
integrations pages and its "Handling third-party types" document features and stay
docs). Change logs have their own
mark (`changelog`, `Chunk.history`).

The ranking (`ranking._weighed`) weighs such sections down by
`ranking.META_WEIGHT` unless the question asks for the role ("how do I contribute",
"what licence is it under").
"""

import re
from collections.abc import Sequence
from typing import Final, Literal, get_args

from .text_terms import WORD

Role = Literal["contributing", "sponsors", "code-of-conduct", "licence", "third-party"]
"""A role a section may be marked with (`Chunk.role`, the index's "role" field)."""
ROLES: Final = get_args(Role)
THIRD_PARTY_ROLE: Final[Role] = "third-party"

ROLE_NAMES: Final[dict[Role, re.Pattern[str]]] = {
    "contributing": re.compile(r"contributing(?:[ _-]guide)?|how[ _-]to[ _-]contribute"),
    "sponsors": re.compile(r"sponsors?(?:hip)?|funding|donate"),
    "code-of-conduct": re.compile(r"code[ _-]of[ _-]conduct"),
    "licence": re.compile(r"(?:[\w.-]+[ _-])?licen[cs]e"),
}
"""A role by its conventional name, matched against the whole of a page's last path
segment or its title (lower-cased): "Contributing", `/sponsorship/`, "BSD-3-Clause
License", `/code-of-conduct/`."""
THIRD_PARTY: Final = re.compile(
    r"third[ _-]party[ _-](?:packages|projects|libraries|extensions|plugins|tools)"
)
"""A whole page or section title naming a third-party listing ("Third Party Packages",
"Third-party projects"); a docs section about third-party things ("Handling third-party
types") is not one."""
ROLE_QUESTION_STEMS: Final[dict[Role, tuple[str, ...]]] = {
    "contributing": ("contribut",),
    "sponsors": ("sponsor", "fund", "donat"),
    "code-of-conduct": ("conduct",),
    "licence": ("licen",),
    "third-party": ("third", "extension", "plugin", "package"),
}
"""The starts of the words a question asking for that role uses: then it ranks as docs."""


def _lowered(text: str) -> str:
    return " ".join(text.lower().split())


def whole_page_role(path: str, page_title: str) -> Role | None:
    """The role of a whole page (None: documentation or not known from the page), from
    its last path segment and its title (see the module doc)."""
    segment = path.rstrip("/").rsplit("/", 1)[-1].lower()
    segment = segment.removesuffix(".html").removesuffix(".htm")
    title = _lowered(page_title)
    for role, name in ROLE_NAMES.items():
        if name.fullmatch(segment) or name.fullmatch(title):
            return role
    if THIRD_PARTY.fullmatch(title):
        return THIRD_PARTY_ROLE
    return None


def page_role(path: str, page_title: str, heading: str) -> Role | None:
    """The role of a section (None: documentation), from its page's last path segment,
    its page title and its own heading: what an index written before `Chunk.role`
    existed gets when it is read (see the module doc)."""
    role = whole_page_role(path, page_title)
    if role is None and THIRD_PARTY.fullmatch(_lowered(heading)):
        return THIRD_PARTY_ROLE
    return role


def role_marks(
    path: str, page_title: str, headings: Sequence[tuple[int, str]]
) -> list[Role | None]:
    """For each section of a page (its heading level and title, in page order), its role:
    the page's own (`whole_page_role`), else third-party when its heading or one
    enclosing it names a third-party listing (the reader's view: every heading above a
    section is known here, not in the ranking)."""
    role = whole_page_role(path, page_title)
    if role is not None:
        return [role] * len(headings)
    enclosing: list[tuple[int, bool]] = []  # (level, listing) of the open headings
    marks: list[Role | None] = []
    for level, heading in headings:
        while enclosing and enclosing[-1][0] >= level:
            enclosing.pop()
        listing = (bool(enclosing) and enclosing[-1][1]) or bool(
            THIRD_PARTY.fullmatch(_lowered(heading))
        )
        enclosing.append((level, listing))
        marks.append(THIRD_PARTY_ROLE if listing else None)
    return marks


def asks_for_role(question: str, role: Role) -> bool:
    """Whether the question asks for that role's page ("how do I contribute")."""
    stems = ROLE_QUESTION_STEMS[role]
    return any(word.startswith(stems) for word in WORD.findall(question.lower()))
