"""Pages about the project rather than its use: contributing, sponsors, third-party lists,
codes of conduct, licences.

Most docs sites carry a few such pages beside the documentation. They share a
question's words by chance ("pool", "test", "request" in a contributor's guide or
a sponsor's blurb) and then crowd out the section that answers, while a reader
asking "how do I X" wants the docs (issue 32: "retry failed requests" answered from
Contributing › "Check Job Failed"; a Starlette start-up question from Sponsorship).

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
from typing import Final

from .text_terms import WORD

ROLE_NAMES: Final = {
    "contributing": re.compile(r"contributing(?:[ _-]guide)?|how[ _-]to[ _-]contribute"),
    "sponsors": re.compile(r"sponsors?(?:hip)?|funding|donate"),
    "code of conduct": re.compile(r"code[ _-]of[ _-]conduct"),
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
ROLE_QUESTION_STEMS: Final = {
    "contributing": ("contribut",),
    "sponsors": ("sponsor", "fund", "donat"),
    "code of conduct": ("conduct",),
    "licence": ("licen",),
    "third-party": ("third", "extension", "plugin", "package"),
}
"""The starts of the words a question asking for that role uses: then it ranks as docs."""


def page_role(path: str, page_title: str, heading: str) -> str | None:
    """The role of a section (None: documentation), from its page's last path segment,
    its page title and its own heading (see the module doc)."""
    segment = path.rstrip("/").rsplit("/", 1)[-1].lower()
    segment = segment.removesuffix(".html").removesuffix(".htm")
    title = " ".join(page_title.lower().split())
    for role, name in ROLE_NAMES.items():
        if name.fullmatch(segment) or name.fullmatch(title):
            return role
    if THIRD_PARTY.fullmatch(title) or THIRD_PARTY.fullmatch(" ".join(heading.lower().split())):
        return "third-party"
    return None


def asks_for_role(question: str, role: str) -> bool:
    """Whether the question asks for that role's page ("how do I contribute")."""
    stems = ROLE_QUESTION_STEMS[role]
    return any(word.startswith(stems) for word in WORD.findall(question.lower()))
