"""Every bound on what one assistant message may cost to display, defined once.

An answer is model or server text, and a stored answer is rendered again on
every page load, so a hostile answer (a 242 KiB pipe table, a thousand nested
lists, a megabyte on one line, a hundred thousand emphasis marks) must not
freeze the page. markdown-it-py's cost is not linear in the characters alone:
each markup character costs far more than plain text, each line costs the
block parser, and an unclosed `[` makes the link rule scan to the end of its
paragraph (quadratic in the worst case). So the markdown a message may send
to the parser is bounded by an estimated *parse cost* (see `RenderBudget`
in render_budget.py), the text it may show by characters, and the tree it may
build by nodes, table rows and columns, and nesting.

When a bound cuts, the message ends with `SHORTENED_NOTE`; "Copy answer"
still copies the complete original text (it reads the message, not the DOM).

The figures are calibrated by `make bench` (section `render`, hostile corpus):
its worst case must render in the page in <= 300 ms with <= 20,000 DOM nodes.
"""

from typing import Final

MESSAGE_MAX_NODES: Final = 3_000
"""View nodes (elements and text runs) one message may build, markdown and components."""

MESSAGE_MAX_CHARS: Final = 32_768
"""Characters of one message shown: rendered markdown, code, and the streaming tail."""

MESSAGE_MAX_LINES: Final = 2_000
"""Lines of one message taken in at all (each costs the block splitter, parsed or not)."""

MESSAGE_MAX_PARSE_COST: Final = 24_000
"""Estimated markdown-it work one message may spend (units of the costs below)."""

PARSE_COST_PER_CHAR: Final = 1
"""Each character outside fenced code."""

PARSE_COST_PER_MARKUP_CHAR: Final = 16
"""Each character that starts an inline or table rule (`MARKUP_CHARS`), on top of the above."""

PARSE_COST_PER_LINE: Final = 32
"""Each line outside fenced code (the block parser tries its rules on every line)."""

PARSE_COST_PER_OPEN_BRACKET_CHAR: Final = 4
"""Each character scanned while a `[` is open in its paragraph, per open `[`."""

PARSE_COST_PER_TABLE_CELL: Final = 16
"""Each cell of each line after a table's delimiter row: markdown-it pads short rows to the
header's width, so a 500-column header makes every later line cost 500 cells."""

CODE_CHARS_PER_COST: Final = 16
"""Fenced code is cheap to parse: one unit per this many characters (and one per line)."""

MARKUP_CHARS: Final = "[]()!*_`<>&\\~|#"
"""Characters markdown-it's inline and table rules react to."""

TABLE_MAX_ROWS: Final = 100
"""Rows of one table shown, the header row included."""

TABLE_MAX_COLUMNS: Final = 16
"""Cells of one table row shown."""

NESTING_MAX_DEPTH: Final = 16
"""Estimated nesting (a quote 1, a list item 2) from which a block is shown as plain text.

markdown-it stops nesting at 20 levels and silently drops deeper lines; text that
may nest this deeply is shown as one plain paragraph instead, so nothing vanishes.
"""

CODE_MAX_MARKERS: Final = 256
"""Invisible characters in code shown as `<U+XXXX>` markers before the code is cut."""

SHORTENED_NOTE: Final = "This answer was shortened for display; Copy answer copies the full text."
"""The plain-text note a message ends with when any bound above cut it."""

SHORTENED_CLASS: Final = "ak-shortened"
"""The note's class (styled, and found by tests)."""
