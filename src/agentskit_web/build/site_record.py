"""The site-packages record: every file the runtime's wheels install, with its sha256.

A kept boot snapshot (`snapshot="keep"`, web/agentskit-ask-snapshot.js) carries a copy
of site-packages in the origin's Cache Storage, which any script on the origin can
rewrite. Before a restore writes those files back, the loader compares them with this
record: a path the wheels do not install, or bytes that differ, and the snapshot is
refused. The record is a member of runtime.<hash>/ (SITE_RECORD), so the folder's hash
covers it and a changed record is a new runtime (and a new snapshot key).

Each hash is taken over the wheel member's bytes, which are what Pyodide unpacks, rather
than read from the wheel's RECORD: that covers RECORD itself (listed there without a hash)
and cannot drift from a RECORD a repack forgot to update. The wheels themselves are pinned
by sha256 in the lock.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from typing import Final

from .files import BuildError

SITE_RECORD: Final = "site-packages.json"
"""Its name inside runtime.<hash>/ (the loader reads it as ASSETS.siteRecord)."""
SITE_RECORD_FORMAT: Final = 1
INSTALLER_METADATA: Final = ("INSTALLER", "PYODIDE_SOURCE")
"""Files Pyodide's loadPackage writes into each installed wheel's .dist-info folder
(pyodide.asm.mjs, `install(..., new Map([["INSTALLER", ...], ["PYODIDE_SOURCE", ...]]))`):
not in any wheel, never imported, so accepted by name inside a recorded .dist-info."""


def installed_files(wheels: Mapping[str, bytes]) -> dict[str, str]:
    """Path relative to site-packages -> sha256 hex, for every file in every wheel.

    Two wheels installing one path with different bytes is a build error: whichever
    Pyodide unpacked last would win, and the record could not say which.
    """
    files: dict[str, str] = {}
    for name, data in sorted(wheels.items()):
        with zipfile.ZipFile(io.BytesIO(data)) as wheel:
            for member in wheel.infolist():
                if member.is_dir():
                    continue
                digest = hashlib.sha256(wheel.read(member)).hexdigest()
                if files.setdefault(member.filename, digest) != digest:
                    raise BuildError(f"{name}: {member.filename} is installed by another wheel too")
    return files


def site_record(wheels: Mapping[str, bytes]) -> bytes:
    """The record's bytes (sorted JSON: the same wheels give the same file)."""
    record = {
        "format": SITE_RECORD_FORMAT,
        "installerMetadata": list(INSTALLER_METADATA),
        "files": installed_files(wheels),
    }
    return (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()
