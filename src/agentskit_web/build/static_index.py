"""The static index beside the widget's assets, and the loader told where its manifest is.

A site built with the MkDocs plugin or the Sphinx extension answers questions in
the page, with no server, from its own index split into content-hashed files
(`answering.split_index`: a manifest and parts). This step writes them into
`index/` inside the assets folder, with brotli and gzip copies for servers that
negotiate `Accept-Encoding` (as the runtime's files have), removes the files of
an earlier build there, and writes the manifest's path into the published loader
(`STATIC_INDEX`, relative to the loader), so the page knows where the index is
without one more request. The loader's compressed copies are rewritten with it.

```
assets/
  agentskit-ask.js              STATIC_INDEX = "index/<manifest>"
  index/
    <manifest>.json(.br, .gz)   content-hashed: cached for a year (`immutable`)
    <part>.json(.br, .gz)
```

The folder name is also the service worker's (web/agentskit-ask-sw.js keeps what
pages fetch below `index/` for `offline="cache"`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..answering.site_index import INDEX_TOO_LARGE, SiteIndex, parse_site_index
from .assets import LOADER, compressed_copies
from .files import BuildError, write_if_changed

STATIC_INDEX_FOLDER: Final = "index/"
"""Where the static index goes inside the assets folder (the service worker knows it too)."""
STATIC_INDEX_MARKER: Final = re.compile(r'/\* agentskit:static-index \*/ (?:null|"[^"\n]*")')
"""What the loader holds where the manifest's path is written (`null` before a site build)."""


@dataclass(frozen=True)
class StaticIndexReport:
    """What `publish_static_index` wrote: the manifest's path from the loader, the files."""

    manifest: str
    files: tuple[Path, ...]
    bytes_written: int


PLAIN_RELATIVE_PATH: Final = re.compile(
    r"[A-Za-z0-9_-][A-Za-z0-9._-]*(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*)*"
)
"""A path below the loader's folder: segments that start with a letter, digit, `_` or `-`
(never `..`, never empty), so no `/x` (the site's root), no `//host/x` (another host)."""


def loader_with_static_index(text: str, manifest: str | None) -> str:
    """The loader's text with `STATIC_INDEX` set to `manifest` (or null); idempotent."""
    found = STATIC_INDEX_MARKER.findall(text)
    if len(found) != 1:
        raise BuildError(
            f"{LOADER}: expected exactly one `/* agentskit:static-index */` to fill in "
            "(an assets folder from an older agentskit-web? run `agentskit-web assets` again)"
        )
    value = "null" if manifest is None else '"' + manifest + '"'
    if manifest is not None and not PLAIN_RELATIVE_PATH.fullmatch(manifest):
        raise BuildError(f"static index manifest path {manifest!r} is not a plain relative path")
    return STATIC_INDEX_MARKER.sub(lambda _m: f"/* agentskit:static-index */ {value}", text)


def write_index_files(
    folder: Path, manifest_name: str, files: Mapping[str, bytes], cache: Path | None = None
) -> tuple[Path, ...]:
    """Write `files` (the manifest among them) and their compressed copies into `folder`;
    files of an earlier index there are removed (the folder holds only the index)."""
    if manifest_name not in files:
        raise BuildError(f"the static index has no manifest file {manifest_name}")
    outputs = dict(files)
    for name, data in files.items():
        if "/" in name or name.startswith("."):
            raise BuildError(f"static index file name {name!r} is not a plain file name")
        outputs.update(compressed_copies(name, data, cache))
    written = []
    for name, data in sorted(outputs.items()):
        target = folder / name
        write_if_changed(target, data)
        written.append(target)
    for stale in folder.iterdir():
        if stale.is_file() and stale not in written:
            stale.unlink()
    return tuple(written)


def set_loader_static_index(assets_dir: Path, manifest: str | None) -> None:
    """Write `manifest` into the published loader and refresh its compressed copies."""
    loader = assets_dir / LOADER
    if not loader.is_file():
        raise BuildError(f"no {LOADER} in {assets_dir}: publish the assets first")
    data = loader_with_static_index(loader.read_text(encoding="utf-8"), manifest).encode("utf-8")
    write_if_changed(loader, data)
    copies = compressed_copies(LOADER, data)
    for suffix in ("br", "gz"):
        target = assets_dir / f"{LOADER}.{suffix}"
        packed = copies.get(f"{LOADER}.{suffix}")
        if packed is not None:
            write_if_changed(target, packed)
        elif target.exists():
            target.unlink()  # a stale copy would be served instead of the new loader


def publish_static_index(
    assets_dir: Path, manifest_name: str, files: Mapping[str, bytes], cache: Path | None = None
) -> StaticIndexReport:
    """Write the static index into `assets_dir/index/` and point the loader at it."""
    folder = assets_dir / STATIC_INDEX_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = write_index_files(folder, manifest_name, files, cache)
    manifest = STATIC_INDEX_FOLDER + manifest_name
    set_loader_static_index(assets_dir, manifest)
    return StaticIndexReport(manifest, written, sum(len(data) for data in files.values()))


def site_index_of(site_dir: Path, assets_dir: Path, base_path: str) -> SiteIndex:
    """The site index the build wrote (assets folder first, then the site's root), else
    one read from the built HTML now. Raises BuildError for an unusable index file."""
    from ..indexing.site import find_site_index, index_site, read_site_index_bytes

    for folder in (assets_dir, site_dir):
        found = find_site_index(folder) if folder.is_dir() else None
        if found is not None:
            try:
                data = read_site_index_bytes(found)
            except OSError as error:
                raise BuildError(f"{found}: cannot be read: {error.strerror}") from None
            if data is None:
                raise BuildError(f"{found}: {INDEX_TOO_LARGE.message}")
            decoded = parse_site_index(data)
            index = decoded.value if decoded.ok else None
            if not isinstance(index, SiteIndex):
                reason = decoded.diagnostic.message if decoded.diagnostic else "unreadable"
                raise BuildError(f"{found}: {reason}")
            return index
    return index_site(site_dir, base_path=base_path)
