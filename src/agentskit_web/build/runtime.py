"""The Pyodide runtime from the pinned npm package, scrubbed of CDN defaults, stdlib precompiled."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from .files import BuildError, Paths, run_tool

# Files of the npm `pyodide` package the browser needs (the rest is Node/TS/docs).
# The standard library, served precompiled under its own name: Pyodide fetches it by
# that name and nothing checks its hash (pyodide-lock.json does not list it).
STDLIB_ZIP = "python_stdlib.zip"


PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", STDLIB_ZIP)


@dataclass(frozen=True)
class Scrub:
    """One upstream default URL in a runtime file replaced by a same-origin (or inert) path."""

    target: str  # the runtime file's name
    pattern: str
    replacement: str


# Upstream defaults that would reach a CDN if ever used. The loader always sets the
# index and lock URLs, so these are fallbacks; each must match (a version bump that
# moves them fails the build instead of silently shipping a CDN URL).
SCRUBS = (
    # Node-only fallback for packages missing locally; the browser never uses it.
    Scrub("pyodide.mjs", r"https://cdn\.jsdelivr\.net/pyodide/v\$\{\w+\}/full/", "./"),
)


def ensure_node_modules(paths: Paths) -> bool:
    """`npm ci` in web/ when node_modules is missing or older than the lock."""
    lock = paths.web / "package-lock.json"
    marker = paths.node_modules / ".package-lock.json"
    if not lock.is_file():
        raise BuildError(f"missing {lock}: the runtime pins live there (npm install in web/)")
    if marker.is_file() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return False
    if shutil.which("npm") is None:
        raise BuildError("npm is needed to install the pinned runtime (web/package-lock.json)")
    run_tool(["npm", "ci", "--no-audit", "--no-fund"], paths.web, "npm ci in web/")
    marker.touch()
    return True


def _npm_version(package_dir: Path) -> str:
    manifest = package_dir / "package.json"
    if not manifest.is_file():
        raise BuildError(f"missing npm package {package_dir.name}: run `npm ci` in web/")
    return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])


def runtime_files(paths: Paths, runtime: dict[str, str]) -> dict[str, bytes]:
    """Pyodide's files the page loads, by name: CDN defaults scrubbed, the stdlib precompiled."""
    package = paths.node_modules / "pyodide"
    found = _npm_version(package)
    if found != runtime["pyodide"]:
        raise BuildError(
            f"web/node_modules has pyodide {found} but web/wheels.toml pins "
            f"{runtime['pyodide']}: run `npm ci` in web/"
        )
    files: dict[str, bytes] = {}
    for name in PYODIDE_FILES:
        source = package / name
        if name == STDLIB_ZIP:
            source = precompile_stdlib(paths, runtime, source)
        if not source.is_file():
            raise BuildError(f"missing runtime file: {source} (run `npm ci` in web/)")
        files[name] = _scrubbed(name, source.read_bytes())
    return files


def _scrubbed(name: str, data: bytes) -> bytes:
    scrubs = [scrub for scrub in SCRUBS if scrub.target == name]
    if not scrubs:
        return data
    text = data.decode("utf-8")
    for scrub in scrubs:
        text, count = re.subn(scrub.pattern, scrub.replacement, text)
        if count == 0:
            raise BuildError(f"{name}: expected upstream URL not found ({scrub.pattern})")
    return text.encode("utf-8")


def precompile_stdlib(paths: Paths, runtime: dict[str, str], archive: Path) -> Path:
    """python_stdlib.zip with each module as sourceless bytecode (cached in .cache/).

    zipimport would otherwise compile every imported stdlib module from source on each
    page load; `.pyc` members are imported as they are.
    """
    from .bytecode import CompileError, Compiler, compile_stdlib

    if not archive.is_file():
        raise BuildError(f"missing runtime file: {archive} (run `npm ci` in web/)")
    compiler = Compiler(paths.web, runtime["pyodide"], runtime["python"])
    try:
        return compile_stdlib(archive, compiler, paths.cache)[1]
    except CompileError as error:
        raise BuildError(f"precompiling the standard library: {error}") from None
