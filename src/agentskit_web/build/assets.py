"""`agentskit-web assets OUT_DIR`: the one folder a site publishes to embed the widget.

```
OUT_DIR/
  agentskit-ask.js              the loader (stable name: pages link it; revalidated)
  agentskit-ask.<hash>.css      the widget's stylesheet
  agentskit-ask-snapshot.<hash>.js  the opt-in boot snapshot (snapshot="keep"), loaded on use
  agentskit-ask-sw.js           the opt-in offline service worker (stable name, revalidated)
  runtime.<hash>/               Pyodide, the precompiled stdlib, the lock, the wheels and
                                site-packages.json (what the wheels install, by sha256)
  assets.json                   what is where (tools, benchmarks, the testing kit)
  *.br, *.gz                    pre-compressed copies of the large files
```

Every name that can change carries a content hash, so a server may cache it
for a year (`immutable`): a reader's second page asks for nothing. The loader's
own name is stable; its text names the hashed files, so publishing a new
folder swaps everything at once. The runtime is one folder with one hash over
all of its files because Pyodide looks for `pyodide.asm.wasm` and friends by
fixed names beside `pyodide.mjs`. Paths inside are relative: the folder works
at any URL path, and nothing in it names another host.

Compression: brotli (quality 11) and gzip (level 9) copies are written for
text and binary files of at least `COMPRESS_MIN_BYTES` when they save at least
`COMPRESS_MIN_SAVING`; servers that negotiate `Accept-Encoding` (ours do, see
server/static.py) send them with `Content-Encoding`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Final

from ..page_packages import INSTALLED_AFTER_READY, PAGE_PACKAGE
from .files import BuildError, write_if_changed
from .site_record import SITE_RECORD, site_record

LOADER: Final = "agentskit-ask.js"
SERVICE_WORKER: Final = "agentskit-ask-sw.js"
"""The offline cache (`offline="cache"`): pages register it by this stable name."""
PRECACHE_MARKER: Final = "/* agentskit:precache */ null"
"""What web/agentskit-ask-sw.js holds where the build writes the list of files it precaches."""
STYLESHEET_SOURCE: Final = "agentskit-ask.css"
SNAPSHOT_SOURCE: Final = "agentskit-ask-snapshot.js"
"""The opt-in boot snapshot's module (`snapshot="keep"`): the loader imports it by its hashed
name (ASSETS.snapshot) only for an element with the attribute, so a page view never loads it."""
MANIFEST: Final = "assets.json"
RUNTIME_PREFIX: Final = "runtime."
LOCK_FILE: Final = "pyodide-lock.json"
HASH_CHARS: Final = 16
"""Hex digits of sha256 in a hashed name: 64 bits, no accidental reuse between builds."""
ASSETS_MARKER: Final = "/* agentskit:assets */ null"
"""What web/agentskit-ask.js holds where the build writes the ASSETS object."""
COMPRESSIBLE: Final = frozenset({".js", ".mjs", ".css", ".json", ".wasm", ".zip", ".whl"})
COMPRESS_MIN_BYTES: Final = 1_024
COMPRESS_MIN_SAVING: Final = 0.05
"""A compressed copy must be at least 5% smaller than the file, or it is not written."""
PYODIDE_ENTRY: Final = "pyodide.mjs"
PREFETCHED_RUNTIME: Final = ("pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", LOCK_FILE)
"""Runtime files the loader downloads in parallel (with progress) before starting Pyodide."""
_OWN_PREFIXES: Final = ("agentskit-ask", MANIFEST)
HASHED_RUNTIME: Final = re.compile(rf"^{re.escape(RUNTIME_PREFIX)}[0-9a-f]{{{HASH_CHARS}}}/$")
"""The form of `assets["runtime"]`: what tools reading assets.json may rely on."""
PYSCRIPT_KEY: Final = "pyscript"
"""The manifest's entry for the PyScript build (absent without `--with-pyscript`)."""
PYSCRIPT_PREFIX: Final = "pyscript."
"""The PyScript build's folder (`--with-pyscript`, build/pyscript.py): `pyscript.<hash>/`."""
_HASHED_FOLDER: Final = re.compile(
    rf"^(?:{re.escape(RUNTIME_PREFIX)}|{re.escape(PYSCRIPT_PREFIX)})[0-9a-f]{{{HASH_CHARS}}}/$"
)


@dataclass(frozen=True)
class RuntimeInput:
    """What goes into runtime.<hash>/: Pyodide's files and the page's wheels."""

    files: Mapping[str, bytes]
    """Pyodide's own files by name (pyodide.mjs already scrubbed of CDN defaults)."""
    wheels: Mapping[str, bytes]
    """Wheel file name -> bytes: the pinned ones and the page wheel, precompiled."""
    lock: Mapping[str, object]
    """pyodide-lock.json for exactly `wheels`, with bare file names."""
    page_wheels: tuple[str, ...] = ()
    """The wheels the page loads at boot (the page package and its dependencies)."""
    bench_wheels: Mapping[str, bytes] = field(default_factory=dict)
    """The in-page benchmark harness wheel: written beside the bench pages, never here."""


@dataclass
class AssetsReport:
    """What one `write_assets` produced, for the build report and the manifest."""

    runtime: str
    stylesheet: str
    files: list[Path] = field(default_factory=list)
    changed: bool = False


def content_hash(parts: Iterable[tuple[str, bytes]]) -> str:
    """sha256 over (name, bytes) pairs in the given order, cut to HASH_CHARS hex digits."""
    digest = hashlib.sha256()
    for name, data in parts:
        digest.update(name.encode("utf-8") + b"\0" + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:HASH_CHARS]


def hashed_name(name: str, data: bytes) -> str:
    """`agentskit-ask.css` -> `agentskit-ask.<hash>.css`."""
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}.{content_hash([(name, data)])}{dot}{suffix}"


def loader_text(template: str, assets: Mapping[str, object]) -> str:
    """The loader with its ASSETS object written in (fails if the marker moved)."""
    if template.count(ASSETS_MARKER) != 1:
        raise BuildError(f"{LOADER}: expected exactly one `{ASSETS_MARKER}` to fill in")
    return template.replace(ASSETS_MARKER, json.dumps(assets, sort_keys=True))


def precache_object(assets: Mapping[str, object]) -> dict[str, object]:
    """What the service worker keeps: the stylesheet, every runtime file a boot fetches and
    the boot snapshot's module.

    Paths are relative to the worker's own URL (the assets folder); `version`
    changes whenever any of those files does, which names a new cache.
    """
    runtime = str(assets["runtime"])
    # The site-packages record too: a restore offline checks the snapshot's files with it.
    record = [str(assets["siteRecord"])] if assets.get("siteRecord") else []
    boot = [runtime + name for name in (PYODIDE_ENTRY, *_file_names(assets), *record)]
    # The opt-in boot snapshot's module (a few kB): offline, a page with snapshot="keep"
    # imports it to restore, and without it would boot the slow way.
    snapshot = [str(assets["snapshot"])] if assets.get("snapshot") else []
    files = sorted({str(assets["stylesheet"]), *boot, *snapshot})
    return {"version": content_hash([(name, b"") for name in files]), "files": files}


def _file_names(assets: Mapping[str, object]) -> list[str]:
    listed = assets["files"]
    assert isinstance(listed, list)
    return [str(entry["name"]) for entry in listed]


def service_worker_text(template: str, assets: Mapping[str, object]) -> str:
    """The service worker with its PRECACHE object written in (fails if the marker moved)."""
    if template.count(PRECACHE_MARKER) != 1:
        raise BuildError(f"{SERVICE_WORKER}: expected exactly one `{PRECACHE_MARKER}` to fill in")
    return template.replace(PRECACHE_MARKER, json.dumps(precache_object(assets), sort_keys=True))


def compressed_copies(name: str, data: bytes, cache: Path | None = None) -> dict[str, bytes]:
    """`{name.br: ..., name.gz: ...}` for a compressible file, each only if it pays.

    Brotli at quality 11 takes seconds on the 10 MB wasm, so results are kept in
    `cache` by the content's sha256 and a rebuild with nothing changed is quick.
    """
    if PurePosixPath(name).suffix not in COMPRESSIBLE or len(data) < COMPRESS_MIN_BYTES:
        return {}
    limit = len(data) * (1 - COMPRESS_MIN_SAVING)
    copies = {}
    for suffix, compress in (("br", _brotli), ("gz", _gzip)):
        packed = _cached(cache, data, suffix, compress)
        if len(packed) <= limit:
            copies[f"{name}.{suffix}"] = packed
    return copies


def _brotli(data: bytes) -> bytes:
    import brotli

    return bytes(brotli.compress(data, quality=11))


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def _cached(
    cache: Path | None, data: bytes, suffix: str, compress: Callable[[bytes], bytes]
) -> bytes:
    if cache is None:
        return compress(data)
    entry = cache / f"{hashlib.sha256(data).hexdigest()}.{suffix}"
    if entry.is_file():
        return entry.read_bytes()
    packed = compress(data)
    entry.parent.mkdir(parents=True, exist_ok=True)
    staged = entry.with_suffix(f".{suffix}.part")
    staged.write_bytes(packed)
    staged.replace(entry)
    return packed


def _runtime_members(runtime: RuntimeInput) -> dict[str, bytes]:
    members = dict(runtime.files)
    members.update(runtime.wheels)
    members[LOCK_FILE] = (json.dumps(runtime.lock, indent=1, sort_keys=True) + "\n").encode()
    members[SITE_RECORD] = site_record(runtime.wheels)
    return members


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def assets_object(
    runtime_dir: str,
    stylesheet: str,
    members: Mapping[str, bytes],
    page_wheels: Iterable[str],
    snapshot: str | None = None,
) -> dict[str, object]:
    """What the loader needs to know: where things are and what to download, with sizes."""
    prefetch = [*PREFETCHED_RUNTIME, *sorted(page_wheels)]
    missing = [name for name in (PYODIDE_ENTRY, *prefetch) if name not in members]
    if missing:
        raise BuildError(f"runtime folder lacks {', '.join(missing)}")
    return {
        "runtime": runtime_dir,
        "stylesheet": stylesheet,
        "packages": [PAGE_PACKAGE],
        # Installed once the widget is ready; a boot snapshot holds them already imported.
        "packagesAfterReady": list(INSTALLED_AFTER_READY),
        # sha256 per file: the loader keys a kept boot snapshot by them (snapshot="keep").
        "files": [
            {"name": name, "size": len(members[name]), "sha256": _sha256(members[name])}
            for name in prefetch
        ],
        "serviceWorker": SERVICE_WORKER,
        "snapshot": snapshot,
        # What a kept snapshot's site-packages may hold (build/site_record.py).
        "siteRecord": SITE_RECORD,
    }


def write_assets(
    out: Path,
    web: Path,
    runtime: RuntimeInput,
    cache: Path | None = None,
    *,
    with_pyscript: bool = False,
) -> AssetsReport:
    """Write (or update in place) the assets folder; stale hashed files are removed.

    `cache` (the build's .cache/) keeps compressed copies between builds.
    `with_pyscript` adds PyScript beside the runtime (build/pyscript.py); without
    it the folder is exactly the default embed's.
    """
    members = _runtime_members(runtime)
    runtime_dir = f"{RUNTIME_PREFIX}{content_hash(sorted(members.items()))}/"
    css = _read(web / STYLESHEET_SOURCE)
    stylesheet = hashed_name(STYLESHEET_SOURCE, css)
    snapshot_code = _read(web / SNAPSHOT_SOURCE)
    snapshot = hashed_name(SNAPSHOT_SOURCE, snapshot_code)
    assets = assets_object(runtime_dir, stylesheet, members, runtime.page_wheels, snapshot)
    loader = loader_text(_read(web / LOADER).decode("utf-8"), assets).encode("utf-8")
    outputs: dict[str, bytes] = {f"{runtime_dir}{name}": data for name, data in members.items()}
    outputs[stylesheet] = css
    outputs[snapshot] = snapshot_code
    outputs[LOADER] = loader
    worker = service_worker_text(_read(web / SERVICE_WORKER).decode("utf-8"), assets)
    outputs[SERVICE_WORKER] = worker.encode("utf-8")
    manifest: dict[str, object] = dict(assets)
    if with_pyscript:
        manifest[PYSCRIPT_KEY] = _add_pyscript(outputs, web, assets)
    outputs[MANIFEST] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    packed = cache / "compressed" if cache is not None else None
    for name, data in list(outputs.items()):
        outputs.update(compressed_copies(name, data, packed))
    report = AssetsReport(runtime=runtime_dir, stylesheet=stylesheet)
    for name, data in sorted(outputs.items()):
        target = out / name
        report.changed |= write_if_changed(target, data)
        report.files.append(target)
    stale = [p for p in _ours(out) if p not in set(report.files)]
    for path in stale:
        path.unlink()
    report.changed |= bool(stale)
    _remove_empty_runtime_folders(out)
    return report


def _add_pyscript(
    outputs: dict[str, bytes], web: Path, assets: Mapping[str, object]
) -> dict[str, str]:
    """Add the PyScript files to `outputs`; what assets.json says about them."""
    from .pyscript import PYSCRIPT_CONFIG, PYSCRIPT_ENTRY, pyscript_files, pyscript_outputs

    files = pyscript_files(web)
    folder = f"{PYSCRIPT_PREFIX}{content_hash(sorted(files.items()))}/"
    outputs.update(pyscript_outputs(folder, files, assets))
    return {"folder": folder, "entry": PYSCRIPT_ENTRY, "config": PYSCRIPT_CONFIG}


def _ours(out: Path) -> list[Path]:
    """Files in `out` this command writes: the folder may also hold a site's own files."""
    if not out.is_dir():
        return []
    found = [p for p in out.iterdir() if p.is_file() and p.name.startswith(_OWN_PREFIXES)]
    for folder in out.iterdir():
        if folder.is_dir() and _HASHED_FOLDER.match(folder.name + "/"):
            found += [p for p in folder.rglob("*") if p.is_file()]
    return found


def _remove_empty_runtime_folders(out: Path) -> None:
    for folder in out.iterdir():
        if (
            folder.is_dir()
            and _HASHED_FOLDER.match(folder.name + "/")
            and not any(folder.iterdir())
        ):
            folder.rmdir()


def _read(path: Path) -> bytes:
    if not path.is_file():
        raise BuildError(f"missing build input: {path}")
    return path.read_bytes()
