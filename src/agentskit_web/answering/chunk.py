"""The indexed unit of a docs site and the retrieved one: the contract between indexing and search.

`indexing/` turns what a generator built (or a folder of Markdown) into
`Chunk`s; the search in this package ranks them and returns `Passage`s (in a
`Found`, which says whether they answer the question); the Ask app turns a
passage into a cited source. A chunk carries everything a
citation needs, as the reader will see it:

- `path`: the page's URL path as published (`/tutorial/cors/`, `/api.html`,
  with the site's base path), never a source file name;
- `anchor`: an `id` that exists on that page, or None for the page's top;
- `page_title` and `heading`: plain text as a reader sees them (no markup,
  no `{ #id }` attribute lists, no permalink signs);
- `text`: the section's prose (tables and admonitions as text);
- `code`: the section's code blocks, as code;
- `history`: whether the section is part of a change log (its own heading or a
  heading above it is a version number, `changelog.is_version_heading`). Only the
  reader sees the headings above a section, so it sets the mark; the ranking
  weighs such sections down (`ranking.CHANGELOG_WEIGHT`);
- `role`: None for the documentation proper, else what the section is about the
  project rather than its use (`page_roles.ROLES`: contributing, sponsors, code of
  conduct, licence, third-party listing). The reader sets it from the page's path
  and title and the headings above the section; the ranking weighs such sections
  down unless the question asks for them (`ranking.META_WEIGHT`).
"""

from dataclasses import dataclass

from ..protocol.limits import SOURCE_TITLE_MAX_CHARS
from .page_roles import Role


@dataclass(frozen=True, slots=True)
class Chunk:
    """One indexed unit of text with everything a citation needs."""

    path: str
    anchor: str | None
    page_title: str
    heading: str
    text: str
    code: str = ""
    history: bool = False
    role: Role | None = None


@dataclass(frozen=True, slots=True)
class Passage:
    """One retrieved chunk: where it lives (path + anchor), its titles, its text and score."""

    path: str
    anchor: str | None
    page_title: str
    heading: str
    text: str
    code: str = ""
    score: float = 0.0

    @property
    def title(self) -> str:
        """The source title shown to readers: `Page › Section`, cut to the wire bound."""
        title = self.page_title
        if self.heading and self.heading != self.page_title:
            title = f"{self.page_title} › {self.heading}"
        return title[:SOURCE_TITLE_MAX_CHARS].strip() or self.path


@dataclass(frozen=True, slots=True)
class Found:
    """What a search found for a question: the passages that answer it (`grounded`), or,
    for a near miss (`decline.verdict` "closest"), the closest ones, which no answer may
    quote; no passages at all when it is declined outright."""

    passages: tuple[Passage, ...] = ()
    grounded: bool = False

    @property
    def answered(self) -> list[Passage]:
        """The passages an answer may quote: none unless grounded."""
        return list(self.passages) if self.grounded else []
