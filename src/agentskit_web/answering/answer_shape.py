"""The one label an answer and the view agree on: "More from the docs".

An answer (the extractive composer, and the `openai` generator asked for the same
shape) opens with its lead, then this label as a strong line directly followed by a
list of the other passages, in one Markdown block. The view (chat/view/markdown_tree.py)
recognises exactly that structure and shows the list collapsed in a `<details>` it
builds itself, so the answer text never needs raw HTML. Its own module so the view can
name the label without importing the composer (and what the composer imports).
"""

from typing import Final

MORE_FROM_THE_DOCS: Final = "More from the docs"
"""The label above the passages after the lead (the eval measures what comes before)."""
