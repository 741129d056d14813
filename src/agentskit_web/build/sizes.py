"""The "Sizes" table of docs/embedding.md, measured on the assets folder each build writes.

The docs used to give sizes by hand ("about 25 MB", "about 5 kB") and they
drifted from what the build writes (issue 33: 40.1 MB and 9.2 kB measured).
Every `make site` now measures the folder it has just written
(`dist/agentskit/`) and rewrites the table between the two markers in
docs/embedding.md, so the figures a docs owner reads are the ones of the
release built from the same tree. Sizes are what a reader's browser would
download when the server negotiates brotli (the `.br` copy beside a file, else
the file itself), and what the owner publishes (the whole folder on disk).
`write_if_changed` keeps an unchanged table from touching the file.

The table rounds to a tenth of a kB or MB (binary units, as `check` prints),
so a change of a few bytes in the loader does not rewrite the docs each time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .assets import LOADER, MANIFEST
from .files import BuildError, write_if_changed

TABLE_START: Final = "<!-- sizes: measured by the build (build/sizes.py), do not edit -->"
TABLE_END: Final = "<!-- end of sizes -->"
SIZES_DOC: Final = Path("docs") / "embedding.md"
"""The page holding the table, relative to the project's root."""
PYODIDE_ENTRY: Final = "pyodide.mjs"
"""The module the loader imports from the runtime folder (not in the manifest's list)."""


@dataclass(frozen=True)
class Sizes:
    """What the assets folder costs: on disk, and per reader (brotli where a copy exists)."""

    folder: int
    """Every file of the folder, the `.br`/`.gz` copies included: what an owner publishes."""
    loader: int
    stylesheet: int
    runtime: int
    """The runtime files the loader declares (fetched once per site, on intent)."""
    runtime_files: int

    @property
    def page_view(self) -> int:
        return self.loader + self.stylesheet


def sent(path: Path) -> int:
    """The bytes a brotli-accepting browser gets for `path`: its `.br` copy, else the file."""
    packed = path.with_name(path.name + ".br")
    return (packed if packed.is_file() else path).stat().st_size


def measure(assets_dir: Path) -> Sizes:
    """Measure a folder `agentskit-web assets` (or the build) wrote; BuildError if it is not one."""
    manifest_file = assets_dir / MANIFEST
    if not manifest_file.is_file() or not (assets_dir / LOADER).is_file():
        raise BuildError(f"{assets_dir} is not an assets folder (no {MANIFEST} or {LOADER})")
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    runtime_dir = assets_dir / str(manifest["runtime"])
    names = [str(entry["name"]) for entry in manifest["files"]] + [PYODIDE_ENTRY]
    runtime = [runtime_dir / name for name in dict.fromkeys(names)]
    missing = [str(path) for path in runtime if not path.is_file()]
    if missing:
        raise BuildError(f"the assets manifest names files that are not there: {missing}")
    return Sizes(
        folder=sum(p.stat().st_size for p in assets_dir.rglob("*") if p.is_file()),
        loader=sent(assets_dir / LOADER),
        stylesheet=sent(assets_dir / str(manifest["stylesheet"])),
        runtime=sum(sent(path) for path in runtime),
        runtime_files=len(runtime),
    )


def human(size: int) -> str:
    """1024-based, one decimal: `11.8 kB`, `6.1 MB`."""
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} kB"
    return f"{size / (1024 * 1024):.1f} MB"


def table(sizes: Sizes) -> str:
    """The Markdown table (without its markers)."""
    rows = [
        ("a page view: the loader `agentskit-ask.js`", sizes.loader),
        ("a page view: the stylesheet", sizes.stylesheet),
        ("a page view in all (before anyone asks)", sizes.page_view),
        (
            f"the Python runtime, once per site on intent ({sizes.runtime_files} files "
            "the loader declares)",
            sizes.runtime,
        ),
        (
            "the assets folder you publish (every file with its `.br` and `.gz` copies)",
            sizes.folder,
        ),
    ]
    lines = ["| what | size (brotli where the server sends it) |", "|---|---|"]
    lines += [f"| {what} | {human(size)} |" for what, size in rows]
    return "\n".join(lines)


def with_table(text: str, sizes: Sizes) -> str:
    """`text` with the table between the markers replaced; BuildError without the markers."""
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start or text.count(TABLE_START) != 1:
        raise BuildError(f"{SIZES_DOC}: expected one `{TABLE_START}` ... `{TABLE_END}` block")
    head = text[: start + len(TABLE_START)]
    return head + "\n" + table(sizes) + "\n" + text[end:]


def write_sizes_doc(root: Path, assets_dir: Path) -> bool:
    """Measure `assets_dir` and rewrite the table in the project's docs; True if it changed.

    A tree without the docs page (an sdist, a copy of `web/` only) has nothing to write."""
    doc = root / SIZES_DOC
    if not doc.is_file():
        return False
    text = doc.read_text(encoding="utf-8")
    return write_if_changed(doc, with_table(text, measure(assets_dir)).encode("utf-8"))
