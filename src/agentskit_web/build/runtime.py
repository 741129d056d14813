"""The Pyodide runtime from the pinned npm package: CDN defaults scrubbed, stdlib trimmed+compiled.

The standard library Pyodide ships (python_stdlib.zip) holds ~600 modules; a page
imports about a third of them. The build keeps the modules the browser tests saw a
page import (web/page-modules.txt, measured by `make page-modules`), a small margin
(STDLIB_MARGIN) and whatever a site lists under `[stdlib] keep` in web/wheels.toml, plus
the module-level imports of all of those. Every other module is left out, and a
generated `sitecustomize` (imported by `site` at interpreter start-up) puts a finder
last on sys.meta_path that turns an import of a left-out module into a
ModuleNotFoundError naming it and saying how to keep it.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tomllib
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from .files import BuildError, Paths, run_tool, write_if_changed

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
    """python_stdlib.zip trimmed to the page's modules, each as sourceless bytecode.

    Trimming comes first, so only what is shipped is compiled. zipimport would
    otherwise compile every imported stdlib module from source on each page load;
    `.pyc` members are imported as they are. Both results are cached in .cache/.
    """
    from .bytecode import CompileError, Compiler, compile_stdlib

    if not archive.is_file():
        raise BuildError(f"missing runtime file: {archive} (run `npm ci` in web/)")
    selection = load_stdlib_selection(paths.web)
    trimmed = paths.cache / TRIMMED_CACHE_FOLDER / STDLIB_ZIP
    write_if_changed(trimmed, trim_stdlib(archive.read_bytes(), selection))
    compiler = Compiler(paths.web, runtime["pyodide"], runtime["python"])
    try:
        return compile_stdlib(trimmed, compiler, paths.cache)[1]
    except CompileError as error:
        raise BuildError(f"precompiling the standard library: {error}") from None


# ---------------------------------------------------------------- trimming

PAGE_MODULES_FILE: Final = "page-modules.txt"
"""web/page-modules.txt: the standard-library modules the browser tests saw a page import
(one per line; regenerate with `make page-modules`)."""

STDLIB_MARGIN: Final = (
    "_pyodide",  # Pyodide's own Python side: the JS API imports parts of it on demand
    "pyodide",  # (pyodide.code for runPythonAsync, pyodide.http, pyodide.console, ...)
    "encodings",  # codecs are looked up by name at run time: bytes.decode("cp1252")
    "traceback",  # an error report in the page formats its traceback with these
    "linecache",
    "tokenize",
)
"""Kept whether or not a test imported them: modules a page reaches through a name
chosen at run time, or only on an error path the tests may not take. A package here is
kept whole."""

TRIMMED_CACHE_FOLDER: Final = "stdlib-trimmed"
FINDER_MODULE: Final = "sitecustomize"
"""`site` imports this name at start-up (before any page code); Pyodide ships none."""

KEEP_HINT: Final = "to ship it, add '{fullname}' to `keep` under [stdlib] in web/wheels.toml"
"""The end of the finder's message (an f-string in the generated module)."""

_MODULE_IMPORT = re.compile(r"^(?:import\s+([\w., ]+)|from\s+(\.*[\w.]*)\s+import\s+\(?([\w, *]*))")


@dataclass(frozen=True)
class StdlibSelection:
    """What the build keeps: measured modules, the margin, a site's extra modules."""

    measured: tuple[str, ...]
    margin: tuple[str, ...] = STDLIB_MARGIN
    keep: tuple[str, ...] = ()


def load_stdlib_selection(web: Path) -> StdlibSelection:
    """web/page-modules.txt and `[stdlib] keep` of web/wheels.toml."""
    listing = web / PAGE_MODULES_FILE
    if not listing.is_file():
        raise BuildError(f"missing {listing}: run `make page-modules` to measure it")
    measured = tuple(
        line.strip()
        for line in listing.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )
    manifest = tomllib.loads((web / "wheels.toml").read_text(encoding="utf-8"))
    keep = manifest.get("stdlib", {}).get("keep", [])
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        raise BuildError("web/wheels.toml: [stdlib] keep must be a list of module names")
    return StdlibSelection(measured, keep=tuple(keep))


def stdlib_modules(names: Iterable[str]) -> dict[str, str]:
    """Module name -> its source member, for every .py member of a stdlib archive."""
    modules: dict[str, str] = {}
    for name in names:
        path = PurePosixPath(name)
        if path.suffix != ".py" or path.parts[0] == "site-packages":
            continue
        parts = path.with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = name
    return modules


def kept_modules(sources: dict[str, bytes], selection: StdlibSelection) -> set[str]:
    """The selection, closed over parent packages and module-level imports.

    A margin or keep entry that names a package keeps all of it; a measured name keeps
    that module only (the measurement already lists the submodules a page loaded).
    """
    modules = stdlib_modules(sources)
    unknown = sorted(name for name in selection.keep if name not in modules)
    if unknown:
        raise BuildError(
            f"web/wheels.toml [stdlib] keep names no standard-library module: {unknown[0]}"
        )
    whole = (*selection.margin, *selection.keep)
    pending = [m for m in selection.measured if m in modules]
    pending += [m for m in modules if any(m == w or m.startswith(w + ".") for w in whole)]
    kept: set[str] = set()
    while pending:
        module = pending.pop()
        if module in kept:
            continue
        kept.add(module)
        parent = module.rpartition(".")[0]
        pending += [parent] if parent else []
        is_package = modules[module].endswith("/__init__.py")
        pending += _imports_of(module, sources[modules[module]], is_package, modules)
    return kept


def _imports_of(module: str, source: bytes, is_package: bool, modules: dict[str, str]) -> list[str]:
    """Modules a stdlib module imports at its top level (unindented import statements)."""
    found: list[str] = []
    package = module if is_package else module.rpartition(".")[0]
    for line in source.decode("utf-8", "replace").splitlines():
        match = _MODULE_IMPORT.match(line)
        if match is None:
            continue
        plain, base, names = match.groups()
        if plain:
            found += [part.split(" as ")[0].strip() for part in plain.split(",")]
            continue
        target = _resolve(base, package)
        found.append(target)
        imported = (n.split(" as ")[0].strip() for n in names.split(","))
        found += [f"{target}.{name}" for name in imported if name.isidentifier()]
    return [name for name in found if name in modules]


def _resolve(base: str, package: str) -> str:
    """`from ..x import` seen inside `package`, as an absolute module name."""
    dots = len(base) - len(base.lstrip("."))
    if dots == 0:
        return base
    parts = package.split(".")
    anchor = ".".join(parts[: len(parts) - dots + 1])
    rest = base[dots:]
    return f"{anchor}.{rest}" if rest else anchor


def trim_stdlib(archive: bytes, selection: StdlibSelection) -> bytes:
    """The archive with only the kept modules, plus the finder that names the rest.

    Members keep their order, dates and modes; a folder entry or data file stays only
    inside a kept package. The output is byte-identical for identical inputs.
    """
    with zipfile.ZipFile(io.BytesIO(archive)) as source:
        infos = source.infolist()
        modules = stdlib_modules(i.filename for i in infos)
        if FINDER_MODULE in modules:
            raise BuildError(f"{STDLIB_ZIP} already has a {FINDER_MODULE} module")
        sources = {m: source.read(member) for m, member in modules.items()}
        kept = kept_modules({modules[m]: sources[m] for m in modules}, selection)
        kept_members = {modules[m] for m in kept}
        packages = {modules[m].rpartition("/")[0] + "/" for m in kept if _package(modules[m])}
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as out:
            for info in infos:
                name = info.filename
                if name in kept_members or (not name.endswith(".py") and _inside(name, packages)):
                    out.writestr(info, source.read(info))
            trimmed = sorted(set(modules) - kept)
            finder = zipfile.ZipInfo(f"{FINDER_MODULE}.py", date_time=infos[0].date_time)
            finder.compress_type = infos[0].compress_type
            finder.external_attr = infos[0].external_attr
            out.writestr(finder, finder_source(trimmed))
    return buffer.getvalue()


def _package(member: str) -> bool:
    return member.endswith("/__init__.py")


def _inside(name: str, packages: set[str]) -> bool:
    folder = name if name.endswith("/") else name.rpartition("/")[0] + "/"
    return folder in packages


def finder_source(trimmed: list[str]) -> str:
    """The generated `sitecustomize`: a last-resort finder for the modules left out."""
    names = "\n".join(trimmed)
    return f'''"""Added by `agentskit-web build`: names standard-library modules the build left out.

The page's python_stdlib.zip holds only the modules its pages import. This finder sits
last on sys.meta_path, so it is asked only when no other finder found a module, and
turns an import of a left-out module into a ModuleNotFoundError that says so.
"""

import sys

TRIMMED = frozenset("""
{names}
""".split())


class TrimmedStdlibFinder:
    """Raise a clear ModuleNotFoundError for a module trimmed from the standard library."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname not in TRIMMED:
            return None
        raise ModuleNotFoundError(
            f"No module named {{fullname!r}}: agentskit-web's build left it out of the "
            f"standard library because no page imported it; {KEEP_HINT}",
            name=fullname,
        )


sys.meta_path.append(TrimmedStdlibFinder)
'''
