"""Split streaming markdown into finished blocks and a growing tail, in linear time.

Re-parsing a whole answer on every token is the classic chat-widget jank:
the work per chunk grows with the answer, so the total grows with its square.
The widget instead shows the unfinished tail as plain text (extended in place,
never rebuilt) and renders markdown once per *finished block*. A block is
finished when a blank line is followed by a line that starts in column 0 and
is outside a fenced code block, because then nothing later can change how the
text before the blank line parses:
- indented lines (list-item continuations, indented code) never start a block;
- fenced code is tracked (``` and ~~~, CommonMark opening/closing rules), so
  blank lines inside a fence are not boundaries;
- a new list item after a blank line keeps a list block open, so a loose list
  stays one list with the right numbering.
Known limit: reference-style link definitions (`[1]: /url`) only apply within
their own block.

Every character is looked at a bounded number of times: lines are classified
once when they complete, and the unfinished line is kept as pieces.
"""

import re
from typing import Final

_FENCE_OPEN: Final = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_LIST_ITEM: Final = re.compile(r"(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")


def _is_blank(line: str) -> bool:
    return line.strip(" \t\r\n") == ""


def fence_opening(line: str) -> tuple[str, int] | None:
    """(fence char, length) when `line` opens a fenced code block."""
    match = _FENCE_OPEN.fullmatch(line.rstrip("\r\n"))
    if match is None:
        return None
    fence, info = match.group(1), match.group(2)
    if fence[0] == "`" and "`" in info:
        return None  # a backtick fence's info string may not contain a backtick
    return fence[0], len(fence)


def closes_fence(line: str, fence: tuple[str, int]) -> bool:
    body = line.rstrip("\r\n")
    stripped = body.lstrip(" ")
    if len(body) - len(stripped) > 3:
        return False
    char, length = fence
    run = len(stripped) - len(stripped.lstrip(char))
    return run >= length and stripped[run:].strip(" \t") == ""


class MarkdownBlockSplitter:
    """Feed text as it streams; get back markdown sources of blocks that are final.

    Invariant: the concatenation of every returned block plus `tail` equals
    everything fed so far. `finish()` returns the tail as the last block.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._lines: list[str] = []  # complete lines of the open block
        self._partial: list[str] = []  # pieces of the unfinished line
        self._has_content = False  # the open block has a non-blank line
        self._after_blank = False  # the last complete line was blank
        self._is_list = False  # the open block started with a list item
        self._fence: tuple[str, int] | None = None

    @property
    def tail(self) -> str:
        """Text fed but not yet returned in a block (shown as plain text while streaming)."""
        return "".join(self._lines) + "".join(self._partial)

    def feed(self, text: str) -> list[str]:
        """Add streamed text; returns the blocks this text finished, in order."""
        if not text:
            return []
        pieces = text.split("\n")
        finished: list[str] = []
        for index, piece in enumerate(pieces):
            if index == len(pieces) - 1:
                if piece:
                    self._partial.append(piece)
                break
            self._partial.append(piece + "\n")
            line = "".join(self._partial)
            self._partial.clear()
            block = self._complete_line(line)
            if block is not None:
                finished.append(block)
        return finished

    def finish(self) -> list[str]:
        """The remaining tail as a final block (none when it is blank); resets the splitter."""
        blocks: list[str] = []
        if self._partial:  # the unfinished last line still decides whether a block ended
            line = "".join(self._partial)
            self._partial.clear()
            finished = self._complete_line(line)
            if finished is not None:
                blocks.append(finished)
        rest = self.tail
        self._reset()
        if rest and not _is_blank(rest):
            blocks.append(rest)
        return blocks

    def _complete_line(self, line: str) -> str | None:
        """Account for one complete line; returns the block it finished, if any."""
        if self._fence is not None:
            self._lines.append(line)
            if closes_fence(line, self._fence):
                self._fence = None
            return None
        if _is_blank(line):
            self._lines.append(line)
            self._after_blank = self._has_content
            return None
        finished = None
        if self._starts_new_block(line):
            finished = "".join(self._lines)
            self._lines = []
            self._is_list = False
        if not self._has_content or finished is not None:
            self._is_list = _LIST_ITEM.match(line) is not None
        self._lines.append(line)
        self._has_content = True
        self._after_blank = False
        self._fence = fence_opening(line)
        return finished

    def _starts_new_block(self, line: str) -> bool:
        if not (self._after_blank and self._has_content) or line[0] in " \t":
            return False
        return not (self._is_list and _LIST_ITEM.match(line) is not None)


def split_markdown_blocks(text: str) -> list[str]:
    """All blocks of a complete text, split exactly as the streaming splitter would."""
    splitter = MarkdownBlockSplitter()
    return [*splitter.feed(text), *splitter.finish()]
