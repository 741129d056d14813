"""docs/embedding.md's "Sizes" table is the measurement of the dist/ this tree builds.

`make site` (the `dist` fixture runs the same build) rewrites the table from the
assets folder it has just written (build/sizes.py); this test measures that folder
again, independently of the build's own call, and compares it with the table in the
docs and in the rendered page, so a figure in the docs can never drift from the
release built from the same tree.
"""

from __future__ import annotations

from pathlib import Path

from agentskit_web.build.sizes import SIZES_DOC, TABLE_END, TABLE_START, measure, table
from e2e_support import ROOT


def test_the_docs_sizes_table_is_a_fresh_measurement_of_dist(dist: Path) -> None:
    text = (ROOT / SIZES_DOC).read_text(encoding="utf-8")
    written = text[text.index(TABLE_START) + len(TABLE_START) : text.index(TABLE_END)]
    assert written.strip() == table(measure(dist / "agentskit"))
    rendered = (dist / "docs" / "embedding.html").read_text(encoding="utf-8")
    loader = table(measure(dist / "agentskit")).splitlines()[2].split("|")[2].strip()
    assert loader in rendered, "the rendered docs page shows other figures than the docs"
