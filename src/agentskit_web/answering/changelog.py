"""Change-log sections, recognised by their shape, and the questions that ask about versions.

Almost every docs site has release notes. An entry there names a feature in one
line ("StaticFiles: follow symlinks"), so it matches a short question as well as
the section that documents the feature, while a reader asking "how do I X" wants
the documentation, not its history. The ranking stage (`ranking._weighed`) weighs
such sections down unless the question itself asks about versions.

A change-log section is recognised by its headings, not by a word list: its own
heading or one above it *is* a version number, the way MkDocs and Sphinx change logs
write one ("0.37.2", "v2.1.0", "Version 1.2 (2024-03-05)", "1.2.0 — March 2024",
"Release 7.2.0 (released Aug 17, 2023)"). Keep a Changelog files and Sphinx's CHANGES
put a version's text in sub-sections ("Added", "Bugs fixed"), so only the reader,
which knows every heading above a section, can tell: it marks the chunk
(`Chunk.history`, `indexing.docs_folder.history_marks`), and the ranking reads the
mark.
"""

import re
from typing import Final

_VERSION: Final = r"\[?v?\d+(?:\.\d+)+(?:[-.+]?[a-z]+\d*)?\]?"
"""A version number: at least two parts (0.37, 2.1.0), a pre-release tag (1.0rc1,
2.0.0-beta2), in brackets as Keep a Changelog writes it ("[1.0.0]")."""
_NOTE: Final = r"(?:\s*\(.*\)|\s*[-–—:,]\s*.*|\s+\d{4}-\d{2}-\d{2})"
"""What may follow it: a bracket ("(March 5, 2024)", "(released Aug 17, 2023)"), a dash
or colon and a note ("— March 2024"), or an ISO date."""
_DATED: Final = r"(?:\s*\(.*\d{4}.*\)|\s*[-–—:,]\s*.*\d{4}.*|\s+\d{4}-\d{2}-\d{2})"
"""The same with a year in it, required after a project's name."""
VERSION_HEADING: Final = re.compile(
    rf"\s*(?:(?:version|release|v)\s*)?{_VERSION}{_NOTE}?\s*"  # 0.37.2, Version 1.2 (...)
    rf"|\s*[\w.-]+\s+{_VERSION}{_DATED}\s*"  # towncrier's "attrs 23.2.0 (2023-12-31)"
    r"|\s*\[unreleased\]\s*",  # Keep a Changelog's entry for the next version
    re.IGNORECASE,
)
"""A heading that is a version number: alone, after "version", "release" or "v", or after
one word (a project's name) when a dated note follows; or Keep a Changelog's
"[Unreleased]", the entry its format keeps above the versions for changes not yet
released (in brackets only: a plain "Unreleased" heading could be a feature's state). A
number in a section's name ("Python 3.12 support", "Python 3.12", "Python 3.12 (or
later)") is not one."""

QUESTION_VERSION: Final = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b", re.IGNORECASE)
"""A version number in a question ("what changed in 0.30", "since v2.1")."""


def is_version_heading(heading: str) -> bool:
    """Whether a heading is a version number (a change log's entry heading)."""
    return VERSION_HEADING.fullmatch(heading) is not None


def asks_about_versions(question: str, page_title_terms: set[str], asked: set[str]) -> bool:
    """Whether a question asks about versions: it holds a version number, or a word of the
    change log's own page title ("release notes", "changelog", "history")."""
    return QUESTION_VERSION.search(question) is not None or bool(page_title_terms & asked)
