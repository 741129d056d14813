"""The words an answer and its readers agree on: "More from the docs" and the quotes note.

An answer (the extractive composer, and the `openai` generator asked for the same
shape) opens with its lead, then this label as a strong line directly followed by a
list of the other passages, in one Markdown block. The view (chat/view/markdown_tree.py)
recognises exactly that structure and shows the list collapsed in a `<details>` it
builds itself, so the answer text never needs raw HTML. An extractive answer ends with
QUOTES_NOTE, which the glance (chat/memory/glance.py) drops as it drops the [n] markers.
Its own module so the view and the glance can name these without importing the composer
(and what the composer imports).
"""

from typing import Final

MORE_FROM_THE_DOCS: Final = "More from the docs"
"""The label above the passages after the lead (the eval measures what comes before)."""

QUOTES_NOTE: Final = (
    "_These are direct quotes from the sources listed below; no language model was used._"
)
"""The extractive answer's last line: says whose words these are (the sources frame)."""
