"""build/sizes.py: the "Sizes" table of docs/embedding.md, measured on an assets folder.

A stand-in folder with known byte counts (a loader, a stylesheet, runtime files, some
with `.br` copies) gives exact figures; the table is written between its markers and
nowhere else, a second write changes nothing, and a folder or page that is not what
the build expects is a BuildError naming it. e2e/test_sizes_table.py checks the real
docs page against the real dist/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentskit_web.build.files import BuildError
from agentskit_web.build.sizes import (
    SIZES_DOC,
    TABLE_END,
    TABLE_START,
    human,
    measure,
    table,
    with_table,
    write_sizes_doc,
)

RUNTIME = "runtime.0123456789abcdef/"


def _file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


@pytest.fixture
def assets(tmp_path: Path) -> Path:
    folder = tmp_path / "agentskit"
    manifest = {
        "runtime": RUNTIME,
        "stylesheet": "agentskit-ask.0123.css",
        "files": [{"name": "pyodide.asm.wasm"}, {"name": "python_stdlib.zip"}],
    }
    _file(folder / "assets.json", 0)
    (folder / "assets.json").write_text(json.dumps(manifest), encoding="utf-8")
    _file(folder / "agentskit-ask.js", 40_000)
    _file(folder / "agentskit-ask.js.br", 12_000)
    _file(folder / "agentskit-ask.0123.css", 9_000)  # no .br copy: sent as it is
    _file(folder / RUNTIME / "pyodide.asm.wasm", 9_000_000)
    _file(folder / RUNTIME / "pyodide.asm.wasm.br", 2_000_000)
    _file(folder / RUNTIME / "python_stdlib.zip", 3_000_000)
    _file(folder / RUNTIME / "pyodide.mjs", 10_000)
    _file(folder / RUNTIME / "pyodide.mjs.br", 3_000)
    return folder


def test_measure_counts_brotli_where_a_copy_exists_and_the_whole_folder(assets: Path) -> None:
    sizes = measure(assets)
    assert sizes.loader == 12_000
    assert sizes.stylesheet == 9_000
    assert sizes.page_view == 21_000
    assert sizes.runtime == 2_000_000 + 3_000_000 + 3_000  # pyodide.mjs is counted too
    assert sizes.runtime_files == 3
    on_disk = sum(p.stat().st_size for p in assets.rglob("*") if p.is_file())
    assert sizes.folder == on_disk


def test_human_sizes_at_the_unit_boundary() -> None:
    assert human(1024 * 1024 - 1) == "1024.0 kB"
    assert human(1024 * 1024) == "1.0 MB"
    assert human(12_000) == "11.7 kB"


def test_the_table_is_written_between_its_markers_only(tmp_path: Path, assets: Path) -> None:
    doc = tmp_path / SIZES_DOC
    doc.parent.mkdir(parents=True)
    before, after = "# Embedding\n\nText before.\n\n", "\n\nText after.\n"
    doc.write_text(before + TABLE_START + "\n| stale |\n" + TABLE_END + after, encoding="utf-8")
    assert write_sizes_doc(tmp_path, assets) is True
    text = doc.read_text(encoding="utf-8")
    assert text == before + TABLE_START + "\n" + table(measure(assets)) + "\n" + TABLE_END + after
    assert "| a page view: the loader `agentskit-ask.js` | 11.7 kB |" in text
    assert "| stale |" not in text
    assert write_sizes_doc(tmp_path, assets) is False  # unchanged: not rewritten


def test_a_page_without_the_markers_or_a_folder_that_is_not_assets_is_refused(
    tmp_path: Path, assets: Path
) -> None:
    with pytest.raises(BuildError, match="expected one"):
        with_table("# No table here\n", measure(assets))
    with pytest.raises(BuildError, match="expected one"):
        with_table(f"{TABLE_START}\n{TABLE_END}\n{TABLE_START}\n", measure(assets))
    with pytest.raises(BuildError, match="not an assets folder"):
        measure(tmp_path)
    (assets / RUNTIME / "python_stdlib.zip").unlink()
    with pytest.raises(BuildError, match=r"python_stdlib\.zip"):
        measure(assets)


def test_a_tree_without_the_docs_page_writes_nothing(tmp_path: Path, assets: Path) -> None:
    assert write_sizes_doc(tmp_path, assets) is False
    assert not (tmp_path / SIZES_DOC).exists()
