"""What one message may still spend on display, and where its markdown is cut.

`RenderBudget` is created once per message (render_plan.MessageRenderPlan) and
spent block by block, so the bound holds the same way for a streamed answer
and for one restored from storage in a single pass. Before a block reaches
markdown-it, `take_source` keeps the longest prefix (whole lines when
possible) whose estimated parse cost and characters fit; the estimate is one
linear pass over at most the characters kept plus one line, so a megabyte
answer costs no more to bound than the budget it may spend.

The estimate (units in render_limits.py) charges every character, markup
characters and lines extra, fenced code at a small rate, and, for each
unclosed `[`, every character until its paragraph closes it or ends: the
link rule scans that far for every `[`, which is where markdown-it's cost
turns quadratic.
"""

import re
from typing import Final

from .markdown_stream import closes_fence, fence_opening
from .render_limits import (
    CODE_CHARS_PER_COST,
    MARKUP_CHARS,
    MESSAGE_MAX_CHARS,
    MESSAGE_MAX_NODES,
    MESSAGE_MAX_PARSE_COST,
    PARSE_COST_PER_CHAR,
    PARSE_COST_PER_LINE,
    PARSE_COST_PER_MARKUP_CHAR,
    PARSE_COST_PER_OPEN_BRACKET_CHAR,
    PARSE_COST_PER_TABLE_CELL,
)

_CHUNK_CHARS: Final = 256  # a long line is costed in pieces this long
_DELIMITER_ROW: Final = frozenset("|-: \t")
_BRACKETS: Final = re.compile(r"[\[\]]")
_NOT_MARKUP: Final = re.compile("[^" + re.escape(MARKUP_CHARS) + "]+")


def _lines(text: str) -> list[str]:
    """The lines of `text`, each with its `\\n` (the last one maybe without)."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


def markup_count(text: str) -> int:
    """How many characters of `text` are markup characters."""
    return len(_NOT_MARKUP.sub("", text))


def text_cost(text: str, open_brackets: int) -> tuple[int, int]:
    """(estimated parse cost, `[` still open after it) of markdown text outside code."""
    cost = len(text) * PARSE_COST_PER_CHAR + markup_count(text) * PARSE_COST_PER_MARKUP_CHAR
    scanned = 0
    previous = 0
    for match in _BRACKETS.finditer(text):
        scanned += open_brackets * (match.start() - previous)
        previous = match.start()
        if match.group() == "[":
            open_brackets += 1
        elif open_brackets:
            open_brackets -= 1
    scanned += open_brackets * (len(text) - previous)
    return cost + scanned * PARSE_COST_PER_OPEN_BRACKET_CHAR, open_brackets


def table_columns(line: str) -> int:
    """The column count when `line` is a table's delimiter row (`|---|:-:|`), else 0."""
    stripped = line.strip(" \t\r\n")
    if "|" not in stripped or "-" not in stripped or not set(stripped) <= _DELIMITER_ROW:
        return 0
    return len(stripped.strip("|").split("|"))


def code_cost(line: str) -> int:
    """Estimated parse cost of one line inside fenced code."""
    return 1 + len(line) // CODE_CHARS_PER_COST


class RenderBudget:
    """Characters, parse cost and nodes one message may still spend; `shortened` once cut."""

    def __init__(
        self,
        chars: int = MESSAGE_MAX_CHARS,
        cost: int = MESSAGE_MAX_PARSE_COST,
        nodes: int = MESSAGE_MAX_NODES,
    ) -> None:
        self.chars = chars
        self.cost = cost
        self.nodes = nodes
        self.shortened = False

    def take_source(self, block: str) -> str:
        """The prefix of `block` that fits (spent from the budget); marks a cut as shortened."""
        fence: tuple[str, int] | None = None
        open_brackets = 0
        columns = 0  # the width of the table this paragraph is, once its delimiter row is seen
        kept = 0
        for line in _lines(block):
            blank = line.strip(" \t\r\n") == ""
            in_code = fence is not None
            if not in_code:
                columns = 0 if blank else max(columns, table_columns(line))
            fits, open_brackets = self._spend_line(line, in_code, blank, open_brackets, columns)
            if fits < len(line):
                self.shortened = True
                self.cost = 0  # nothing after a cut is shown
                self.chars = 0
                return block[: kept + fits]
            kept += fits
            if fence is not None:
                fence = None if closes_fence(line, fence) else fence
            elif not blank and (fence := fence_opening(line)) is not None:
                open_brackets = 0  # a fence ends the paragraph
        return block

    def _spend_line(
        self, line: str, in_code: bool, blank: bool, open_brackets: int, columns: int = 0
    ) -> tuple[int, int]:
        """Spend what the line costs, or as much of it as fits: (characters kept, `[` open).

        Walks the line in chunks and stops at the first that does not fit, so the
        work is linear in what is kept (a megabyte line is not scanned past the budget).
        """
        if blank or in_code:  # a blank line ends the paragraph; code is cheap and flat
            whole = PARSE_COST_PER_LINE if blank else code_cost(line)
            if whole <= self.cost and len(line) <= self.chars:
                self.cost -= whole
                self.chars -= len(line)
                return len(line), 0
            if blank:
                return 0, 0
            return min(len(line), self.chars, max(0, self.cost - 1) * CODE_CHARS_PER_COST), 0
        line_cost = PARSE_COST_PER_LINE + columns * PARSE_COST_PER_TABLE_CELL
        if line_cost > self.cost:
            return 0, open_brackets
        self.cost -= line_cost
        kept = 0
        while kept < len(line):
            chunk = line[kept : kept + _CHUNK_CHARS]
            cost, after = text_cost(chunk, open_brackets)
            if cost > self.cost or len(chunk) > self.chars:
                return kept + self._longest_fit(chunk, open_brackets), open_brackets
            self.cost -= cost
            self.chars -= len(chunk)
            open_brackets = after
            kept += len(chunk)
        return kept, open_brackets

    def _longest_fit(self, chunk: str, open_brackets: int) -> int:
        """The longest prefix of a (short) chunk whose cost and characters fit what is left."""
        low, high = 0, min(len(chunk), self.chars)
        while low < high:  # cost grows with the prefix
            middle = (low + high + 1) // 2
            if text_cost(chunk[:middle], open_brackets)[0] <= self.cost:
                low = middle
            else:
                high = middle - 1
        return low

    def take_plain(self, text: str) -> str:
        """The prefix of `text` shown as plain text (not parsed: only characters are spent)."""
        if len(text) <= self.chars:
            self.chars -= len(text)
            return text
        shown = text[: self.chars]
        self.shortened = True
        self.chars = 0
        self.cost = 0
        return shown

    def take_tail(self, shown: int, text: str) -> str:
        """The part of streamed `text` the plain-text tail may still show after `shown` chars."""
        room = max(0, self.chars - shown)
        return text if len(text) <= room else text[:room]

    def take_nodes(self, count: int) -> bool:
        """Spend `count` nodes if they fit; otherwise mark the message shortened."""
        if count > self.nodes:
            self.shortened = True
            self.nodes = 0
            return False
        self.nodes -= count
        return True
