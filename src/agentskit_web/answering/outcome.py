"""What a search did with a question, in the three words an owner reads: one module, so the
backend's question log, `agentskit-web eval` and `agentskit-web report` never disagree.

- `answered`: passages that answer it (`Found.grounded`), quoted and cited;
- `near miss`: the closest sections shown, marked as not answering (decline.py's "closest");
- `declined`: nothing retrieved (the Ask app's `422 ASK_NO_GROUNDED_SOURCES`).
"""

from typing import Final, Literal

from .chunk import Found

Verdict = Literal["answered", "near miss", "declined"]
VERDICTS: Final[tuple[Verdict, ...]] = ("answered", "near miss", "declined")


def verdict_of(found: Found) -> Verdict:
    """The verdict of one search's result."""
    if not found.passages:
        return "declined"
    return "answered" if found.grounded else "near miss"


def section_label(path: str, anchor: str | None) -> str:
    """A cited section as owners write it in a questions file: `path` or `path#anchor`."""
    return f"{path}#{anchor}" if anchor else path
