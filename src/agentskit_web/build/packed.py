"""The release wheel's assets folder without the raw copies its `.gz` files already hold.

Every large runtime file sits in the assets folder three times: raw, `.br` and
`.gz`. A wheel deflates members, and the raw files deflate to about their `.gz`
size, so shipping all three carries the gzip payload twice (8 of the wheel's
22 MB). The release therefore drops each raw file of at least
`STRIP_MIN_BYTES` whose `.gz` decompresses to exactly its bytes, and the
plugins restore it when they publish the folder (`restore_raw_copies`):
decompressing gzip takes a few tens of milliseconds for the whole runtime and
gives back the very bytes the content hashes were taken over.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Final

STRIP_MIN_BYTES: Final = 64 * 1024
"""Smaller files stay raw: the loader and the manifest must be readable as they are."""
GZIP_SUFFIX: Final = ".gz"


def strip_raw_copies(folder: Path) -> int:
    """Delete each raw file its `.gz` sibling reproduces exactly; returns the bytes removed."""
    removed = 0
    for packed in sorted(folder.rglob(f"*{GZIP_SUFFIX}")):
        raw = packed.with_name(packed.name.removesuffix(GZIP_SUFFIX))
        if not raw.is_file() or raw.stat().st_size < STRIP_MIN_BYTES:
            continue
        data = raw.read_bytes()
        if gzip.decompress(packed.read_bytes()) == data:
            raw.unlink()
            removed += len(data)
    return removed


def restore_raw_copies(folder: Path) -> int:
    """Write back every raw file that only its `.gz` holds; returns how many were written."""
    written = 0
    for packed in sorted(folder.rglob(f"*{GZIP_SUFFIX}")):
        raw = packed.with_name(packed.name.removesuffix(GZIP_SUFFIX))
        if not raw.exists():
            raw.write_bytes(gzip.decompress(packed.read_bytes()))
            written += 1
    return written
