"""API reference entries, recognised by the anchor their generator gives them.

An API reference page written by autodoc (Sphinx) or mkdocstrings (MkDocs) gives
each documented object an `id` that is its dotted Python name: `click.option`,
`click.Command.main`, `pydantic.main.BaseModel.model_dump`. A heading of a
narrative page never gets such an id: Sphinx (docutils) turns dots into hyphens
(`click-option`) and Python-Markdown's slugify drops them (`clickoption`). So the
anchor alone tells a reference entry from a guide's section, on any site those
generators built, with no word list and no change to the index format.

An entry names its object and its parameters, so it matches a question as well as
the guide section that explains the task, but the reader asking "how do I X" is
better served by the guide first (issue 32): the ranking (`ranking._weighed`) weighs
an entry down by `ranking.REFERENCE_WEIGHT` unless the question names the object.
"""

import re
from typing import Final

from .text_terms import WORD

DOTTED_NAME: Final = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
"""A dotted Python name (at least two parts), as autodoc and mkdocstrings write ids."""


def is_reference_anchor(anchor: str | None) -> bool:
    """Whether a section's anchor is an API object's dotted name (see the module doc)."""
    return anchor is not None and DOTTED_NAME.fullmatch(anchor) is not None


def names_the_object(question: str, anchor: str) -> bool:
    """Whether the question writes the entry's own name (the anchor's last part,
    "progressbar" of `click.progressbar`): then it asks about the object itself."""
    asked = {word.lower() for word in WORD.findall(question)}
    return anchor.rsplit(".", 1)[-1].lower() in asked
