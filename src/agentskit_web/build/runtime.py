"""The Pyodide runtime from the pinned npm package, scrubbed of CDN defaults, stdlib precompiled."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from .files import BuildError, Paths, copy_if_changed, run_tool, write_if_changed

# Files of the npm `pyodide` package the browser needs (the rest is Node/TS/docs).
# The standard library, served precompiled under its own name: Pyodide fetches it by
# that name and nothing checks its hash (pyodide-lock.json does not list it).
STDLIB_ZIP = "python_stdlib.zip"


PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", STDLIB_ZIP)


@dataclass(frozen=True)
class Scrub:
    """One upstream default URL replaced by a same-origin (or inert) path."""

    target: str  # path relative to dist/runtime
    pattern: str
    replacement: str


# Upstream defaults that would reach a CDN if ever used. Our config always sets
# the interpreter, so these are fallbacks; each must match (a version bump that
# moves them fails the build instead of silently shipping a CDN URL).
SCRUBS = (
    # Node-only fallback for packages missing locally; the browser never uses it.
    Scrub("pyodide/pyodide.mjs", r"https://cdn\.jsdelivr\.net/pyodide/v\$\{\w+\}/full/", "./"),
    # PyScript's default interpreter: point it at the bundled Pyodide instead.
    Scrub(
        "pyscript/core-*.js",
        r"https://cdn\.jsdelivr\.net/pyodide/v\$\{\w+\}/full/pyodide\.mjs",
        "../pyodide/pyodide.mjs",
    ),
    # MicroPython is not bundled: its default URLs become inert same-origin paths.
    Scrub(
        "pyscript/core-*.js",
        r"https://cdn\.jsdelivr\.net/npm/@micropython/[\w.-]+@\$\{\w+\}/micropython\.mjs",
        "./micropython-not-bundled.mjs",
    ),
    Scrub("pyscript/core-*.js", r"https://micropython\.org/pi/v2", "./mip-not-bundled"),
    Scrub("pyscript/core-*.js", r"https://raw\.githubusercontent\.com/", "./github-not-bundled/"),
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


def copy_runtime(paths: Paths, runtime: dict[str, str]) -> tuple[bool, list[Path]]:
    """Pyodide core + PyScript dist into dist/runtime, CDN defaults scrubbed."""
    pyodide_src = paths.node_modules / "pyodide"
    pyscript_src = paths.node_modules / "@pyscript" / "core" / "dist"
    pinned = (
        ("pyodide", pyodide_src, "pyodide"),
        ("@pyscript/core", pyscript_src.parent, "pyscript"),
    )
    for label, package, key in pinned:
        found = _npm_version(package)
        if found != runtime[key]:
            raise BuildError(
                f"web/node_modules has {label} {found} but web/wheels.toml pins {runtime[key]}:"
                " run `npm ci` in web/"
            )
    changed = False
    produced: list[Path] = []
    pyodide_dir = paths.runtime / "pyodide"
    pairs = [(pyodide_src / name, pyodide_dir / name) for name in PYODIDE_FILES]
    stdlib = precompile_stdlib(paths, runtime, pyodide_src / STDLIB_ZIP)
    pairs = [(stdlib if target.name == STDLIB_ZIP else src, target) for src, target in pairs]
    pyscript_files = sorted(
        p for p in pyscript_src.iterdir() if p.suffix in {".js", ".css"} and p.is_file()
    )
    if not pyscript_files:
        raise BuildError(f"no PyScript files in {pyscript_src}: run `npm ci` in web/")
    pairs += [(p, paths.runtime / "pyscript" / p.name) for p in pyscript_files]
    for source, target in pairs:
        changed |= _copy_scrubbed(source, target, paths.runtime)
        produced.append(target)
    return changed, produced


def _scrubs_for(relative: str) -> list[Scrub]:
    return [s for s in SCRUBS if Path(relative).match(s.target)]


def _copy_scrubbed(source: Path, target: Path, runtime_dir: Path) -> bool:
    relative = target.relative_to(runtime_dir).as_posix()
    scrubs = _scrubs_for(relative)
    if not scrubs:
        return copy_if_changed(source, target)
    if not source.is_file():
        raise BuildError(f"missing runtime file: {source} (run `npm ci` in web/)")
    text = source.read_text(encoding="utf-8")
    for scrub in scrubs:
        text, count = re.subn(scrub.pattern, scrub.replacement, text)
        if count == 0:
            raise BuildError(f"{relative}: expected upstream URL not found ({scrub.pattern})")
    return write_if_changed(target, text.encode("utf-8"))


def check_scrubs_applied(paths: Paths) -> None:
    """Every glob scrub must have matched at least one copied file."""
    for scrub in SCRUBS:
        matches = list(paths.runtime.glob(scrub.target))
        if not matches:
            raise BuildError(f"runtime file for scrub {scrub.target} not found")


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
