"""`agentskit-web build`: assemble the self-contained static site in `dist/`.

The page must run with no network beyond its own origin, so everything it
loads is copied in: Pyodide from the npm package `pyodide`, PyScript from
`@pyscript/core` (both pinned in web/package.json + package-lock.json), the
wheels pinned in web/wheels.toml (downloaded once from PyPI into .cache/), the
project's own wheel (all precompiled to CPython 3.14 bytecode by Pyodide under
Node, third-party ones sourceless: wheel_compile.py; Pyodide's python_stdlib.zip is
served sourceless-precompiled the same way), a generated
pyodide-lock.json describing exactly those wheels, the shell (web/), the
conformance fixtures and the demo docs site: index.html as the docs home,
docs/*.md rendered into that same page template as docs/<name>.html
(docs_site.py), and docs/faq.json compiled into the local knowledge artifact
knowledge.json (knowledge_build.py).

Every step compares before it writes, so a second build with nothing changed
only reads files. Runtime files are scrubbed of the CDN URLs their upstream
defaults carry, and the result is scanned so no served text names a CDN.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# Files of the npm `pyodide` package the browser needs (the rest is Node/TS/docs).
# The standard library, served precompiled under its own name: Pyodide fetches it by
# that name and nothing checks its hash (pyodide-lock.json does not list it).
STDLIB_ZIP = "python_stdlib.zip"
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", STDLIB_ZIP)
# Hosts no served file may name, kept as data beside the shell (and never served).
CDN_HOSTS_FILE = "cdn-hosts.txt"
# Shell files that describe the build rather than being served.
WEB_PRIVATE = {
    "node_modules",
    "package.json",
    "package-lock.json",
    "wheels.toml",
    "README.md",
    "compile_wheels.mjs",
    CDN_HOSTS_FILE,
}
TEXT_SUFFIXES = {".html", ".js", ".mjs", ".css", ".json", ".toml", ".py", ".txt", ".ndjson"}


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


class BuildError(RuntimeError):
    """A build step cannot complete; the message names the missing piece."""


@dataclass
class Paths:
    """Where the build reads from and writes to."""

    root: Path
    dist: Path
    cache: Path

    @property
    def web(self) -> Path:
        return self.root / "web"

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @property
    def node_modules(self) -> Path:
        return self.web / "node_modules"

    @property
    def runtime(self) -> Path:
        return self.dist / "runtime"

    @property
    def wheels(self) -> Path:
        return self.dist / "wheels"


@dataclass
class Report:
    """What one build did: step name -> 'done' or 'unchanged'."""

    steps: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def record(self, step: str, changed: bool) -> None:
        self.steps[step] = "updated" if changed else "unchanged"


@dataclass(frozen=True)
class WheelPin:
    """One pinned wheel from web/wheels.toml."""

    name: str
    version: str
    file: str
    sha256: str
    wasm: bool = False


# ---------------------------------------------------------------- small helpers


def find_root(start: Path | None = None) -> Path:
    """The repository root: the nearest folder holding pyproject.toml and web/."""
    for folder in [(start or Path.cwd()).resolve(), *(start or Path.cwd()).resolve().parents]:
        if (folder / "pyproject.toml").is_file() and (folder / "web").is_dir():
            return folder
    here = Path(__file__).resolve().parents[2]
    if (here / "pyproject.toml").is_file():
        return here
    raise BuildError("cannot find the project root (a folder with pyproject.toml and web/)")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def copy_if_changed(source: Path, target: Path) -> bool:
    """Copy keeping mtime; skip when size and mtime already match."""
    if not source.is_file():
        raise BuildError(f"missing build input: {source}")
    if target.is_file():
        a, b = source.stat(), target.stat()
        if a.st_size == b.st_size and int(a.st_mtime) == int(b.st_mtime):
            return False
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    return True


def write_if_changed(target: Path, data: bytes) -> bool:
    if target.is_file() and target.read_bytes() == data:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
    return True


def prune(folder: Path, keep: Iterable[Path]) -> bool:
    """Delete files under `folder` that this build did not produce."""
    wanted = {path.resolve() for path in keep}
    removed = False
    if not folder.is_dir():
        return False
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_file() and path.resolve() not in wanted:
            path.unlink()
            removed = True
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return removed


def _run(command: list[str], cwd: Path, what: str) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-15:]
        raise BuildError(f"{what} failed ({' '.join(command)}):\n  " + "\n  ".join(tail))


# ---------------------------------------------------------------- pins


def load_pins(paths: Paths) -> tuple[dict[str, str], list[WheelPin]]:
    manifest = paths.web / "wheels.toml"
    if not manifest.is_file():
        raise BuildError(f"missing wheel manifest: {manifest}")
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    runtime = {key: str(value) for key, value in data["runtime"].items()}
    pins = [WheelPin(**entry) for entry in data["wheel"]]
    _check_pyproject_pins(paths.root, pins)
    return runtime, pins


def _check_pyproject_pins(root: Path, pins: list[WheelPin]) -> None:
    """pyproject's `name==version` dependencies must equal the page's wheels."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    by_name = {canonical(pin.name): pin.version for pin in pins}
    for requirement in project["project"].get("dependencies", []):
        if "==" not in requirement:
            continue
        name, version = (part.strip() for part in requirement.split("==", 1))
        pinned = by_name.get(canonical(name))
        if pinned is None:
            raise BuildError(
                f"pyproject.toml depends on {name}=={version} but web/wheels.toml does not pin "
                "it: add its wheel (file + sha256) so the page has it too"
            )
        if pinned != version:
            raise BuildError(
                f"pyproject.toml pins {name}=={version} but web/wheels.toml pins {pinned}: "
                "the page and the host must run the same versions"
            )


def canonical(name: str) -> str:
    """PEP 503 normalised project name (what Pyodide's lock uses as a key)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# ---------------------------------------------------------------- steps


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
    _run(["npm", "ci", "--no-audit", "--no-fund"], paths.web, "npm ci in web/")
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


def _check_scrubs_applied(paths: Paths) -> None:
    """Every glob scrub must have matched at least one copied file."""
    for scrub in SCRUBS:
        matches = list(paths.runtime.glob(scrub.target))
        if not matches:
            raise BuildError(f"runtime file for scrub {scrub.target} not found")


def fetch_wheels(paths: Paths, runtime: dict[str, str], pins: list[WheelPin]) -> list[Path]:
    """Each pinned wheel from .cache/wheels (pip download on a miss), hash-checked."""
    cache = paths.cache / "wheels"
    cache.mkdir(parents=True, exist_ok=True)
    found: list[Path] = []
    for pin in pins:
        cached = cache / pin.file
        if not cached.is_file():
            _download(pin, runtime, cache)
        if not cached.is_file():
            raise BuildError(
                f"pinned wheel {pin.name}=={pin.version} ({pin.file}) is not on the index "
                "for this platform: pip downloaded a different file"
            )
        digest = sha256_file(cached)
        if digest != pin.sha256:
            cached.unlink()
            raise BuildError(
                f"pinned wheel {pin.file} has sha256 {digest}, web/wheels.toml expects "
                f"{pin.sha256}; the cached copy was removed"
            )
        found.append(cached)
    return found


def _download(pin: WheelPin, runtime: dict[str, str], cache: Path) -> None:
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--only-binary=:all:",
            "--no-deps",
            "--python-version",
            runtime["python"],
            "--dest",
            scratch,
        ]
        if pin.wasm:
            tag = "cp" + runtime["python"].replace(".", "")
            command += ["--platform", runtime["platform"], "--implementation", "cp", "--abi", tag]
        command.append(f"{pin.name}=={pin.version}")
        try:
            _run(command, cache, f"downloading pinned wheel {pin.name}=={pin.version}")
        except BuildError as error:
            raise BuildError(f"pinned artifact missing: {pin.file}\n{error}") from None
        for wheel in Path(scratch).glob("*.whl"):
            wheel.replace(cache / wheel.name)


def _source_key(root: Path) -> str:
    """Content hash of everything that goes into the project's wheel."""
    digest = hashlib.sha256()
    files = [root / "pyproject.toml"]
    files += sorted(p for p in (root / "src").rglob("*") if p.is_file() and _wheel_input(p))
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def _wheel_input(path: Path) -> bool:
    return "__pycache__" not in path.parts and ".egg-info" not in str(path)


def build_app_wheel(paths: Paths) -> tuple[bool, Path]:
    """The project's wheel from src/, cached by a hash of its sources."""
    key = _source_key(paths.root)
    folder = paths.cache / "app-wheel" / key
    existing = sorted(folder.glob("agentskit_web-*.whl")) if folder.is_dir() else []
    if existing:
        return False, existing[0]
    with tempfile.TemporaryDirectory(dir=paths.cache) as scratch:
        command = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--wheel-dir",
            scratch,
            str(paths.root),
        ]
        _run(command, paths.root, "building the agentskit-web wheel from src/")
        built = sorted(Path(scratch).glob("agentskit_web-*.whl"))
        if not built:
            raise BuildError("pip wheel produced no agentskit_web wheel")
        shutil.rmtree(paths.cache / "app-wheel", ignore_errors=True)
        folder.mkdir(parents=True)
        target = folder / built[0].name
        shutil.move(str(built[0]), target)
    return True, target


def precompile_wheels(
    paths: Paths, runtime: dict[str, str], pinned: list[Path], own: Path
) -> tuple[bool, list[Path]]:
    """Every wheel swapped for its bytecode-compiled repack (pinned ones first, then `own`).

    Third-party wheels become sourceless, as Pyodide's own distribution ships them
    (smaller, one file per import; a binary member keeps its bytes); the project's own
    wheel keeps its sources beside `__pycache__` so its tracebacks show lines. The
    pinned inputs were hash-checked already; the lock names and hashes the repacks.
    """
    from .wheel_compile import CompileError, Compiler, compile_wheels

    compiler = Compiler(paths.web, runtime["pyodide"], runtime["python"])
    try:
        return compile_wheels([*pinned, own], compiler, paths.cache, keep_sources={own})
    except CompileError as error:
        raise BuildError(f"precompiling the page's wheels: {error}") from None


def precompile_stdlib(paths: Paths, runtime: dict[str, str], archive: Path) -> Path:
    """python_stdlib.zip with each module as sourceless bytecode (cached in .cache/).

    zipimport would otherwise compile every imported stdlib module from source on each
    page load; `.pyc` members are imported as they are.
    """
    from .wheel_compile import CompileError, Compiler, compile_stdlib

    if not archive.is_file():
        raise BuildError(f"missing runtime file: {archive} (run `npm ci` in web/)")
    compiler = Compiler(paths.web, runtime["pyodide"], runtime["python"])
    try:
        return compile_stdlib(archive, compiler, paths.cache)[1]
    except CompileError as error:
        raise BuildError(f"precompiling the standard library: {error}") from None


# ---------------------------------------------------------------- lock file


@dataclass(frozen=True)
class WheelInfo:
    """What the lock needs to know about one wheel."""

    name: str
    version: str
    imports: list[str]
    requires: list[str]


def read_wheel(path: Path) -> WheelInfo:
    """Name, version, top-level imports and runtime requirements of a wheel."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        meta_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if meta_name is None:
            raise BuildError(f"{path.name} has no METADATA")
        metadata = archive.read(meta_name).decode("utf-8")
    fields = _metadata_fields(metadata)
    requires = [r for r in fields.get("Requires-Dist", []) if _applies_in_page(r)]
    return WheelInfo(fields["Name"][0], fields["Version"][0], _top_level(names), requires)


def _top_level(names: list[str]) -> list[str]:
    """Importable top-level names: package folders and single-file modules (also sourceless)."""
    tops: set[str] = set()
    for name in names:
        top, _, rest = name.partition("/")
        if top.endswith((".dist-info", ".data")):
            continue
        single = top.endswith((".py", ".pyc", ".so"))
        module = top if rest else top.split(".", 1)[0] if single else ""
        if module.isidentifier():
            tops.add(module)
    return sorted(tops)


def _metadata_fields(text: str) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        if ":" in line and not line.startswith((" ", "\t")):
            key, value = line.split(":", 1)
            fields.setdefault(key.strip(), []).append(value.strip())
    return fields


def _applies_in_page(requirement: str) -> bool:
    """Whether a Requires-Dist line applies inside Pyodide (no extras requested)."""
    from packaging.requirements import Requirement

    parsed = Requirement(requirement)
    if parsed.marker is None:
        return True
    environment = {
        "extra": "",
        "python_version": "3.14",
        "python_full_version": "3.14.0",
        "sys_platform": "emscripten",
        "platform_system": "Emscripten",
        "os_name": "posix",
        "platform_machine": "wasm32",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
    }
    return bool(parsed.marker.evaluate(environment))


def _requirement_name(requirement: str) -> str:
    from packaging.requirements import Requirement

    return canonical(Requirement(requirement).name)


def make_lock(paths: Paths, wheels: list[Path]) -> bytes:
    """pyodide-lock.json for exactly these wheels (sha256, deps, imports)."""
    upstream = paths.node_modules / "pyodide" / "pyodide-lock.json"
    if not upstream.is_file():
        raise BuildError(f"missing {upstream}: run `npm ci` in web/")
    info = json.loads(upstream.read_text(encoding="utf-8"))["info"]
    infos = {path: read_wheel(path) for path in wheels}
    known = {canonical(i.name) for i in infos.values()}
    packages: dict[str, object] = {}
    for path, wheel in sorted(infos.items(), key=lambda item: canonical(item[1].name)):
        key = canonical(wheel.name)
        depends = sorted({_requirement_name(r) for r in wheel.requires})
        missing = [d for d in depends if d not in known]
        if missing:
            raise BuildError(f"{path.name} needs {', '.join(missing)}: pin it in web/wheels.toml")
        packages[key] = {
            "name": key,
            "version": wheel.version,
            "file_name": f"../../wheels/{path.name}",
            "install_dir": "site",
            "sha256": sha256_file(path),
            "package_type": "package",
            "imports": wheel.imports,
            "depends": depends,
            "unvendored_tests": False,
        }
    lock = {"info": info, "packages": packages}
    return (json.dumps(lock, indent=1, sort_keys=True) + "\n").encode("utf-8")


# ---------------------------------------------------------------- site + fixtures


SHELL_CSS_LINK = '<link rel="stylesheet" href="./web/shell.css">'
KNOWLEDGE_FILE = "knowledge.json"
_KNOWLEDGE_ATTRIBUTE = re.compile(r'\s+knowledge="\./knowledge\.json"')


def _inline_shell_css(paths: Paths) -> Callable[[str], str]:
    """The shell CSS inlined in each page: the box paints without waiting on a request."""
    css = (paths.web / "shell.css").read_text(encoding="utf-8")

    def inline(html: str) -> str:
        if SHELL_CSS_LINK in html and "</style" not in css:
            return html.replace(SHELL_CSS_LINK, f'<style data-from="web/shell.css">\n{css}</style>')
        return html

    return inline


def _site_id(paths: Paths) -> str | None:
    """The backend site config's siteId (the FAQ must belong to the same site)."""
    from .protocol.wire_json import parse_json

    config = paths.docs / "site.json"
    document = parse_json(config.read_bytes()) if config.is_file() else None
    site_id = document.get("siteId") if isinstance(document, dict) else None
    return site_id if isinstance(site_id, str) else None


def render_pages(paths: Paths) -> dict[str, bytes]:
    """The docs home, one page per docs/*.md (not docs/design/) and the FAQ artifact.

    Keys are dist-relative paths. Without docs/faq.json there is no artifact and
    the pages drop their `knowledge` attribute (nothing to load, nothing to 404).
    """
    from .docs_site import SiteError, Template, load_pages, page_anchors, render_site
    from .knowledge_build import FaqError, compile_faq

    source = paths.root / "index.html"
    if not source.is_file():
        raise BuildError(f"missing build input: {source}")
    faq = paths.docs / "faq.json"
    text = source.read_text(encoding="utf-8")
    if not faq.is_file():
        text = _KNOWLEDGE_ATTRIBUTE.sub("", text)
    config = json.loads((paths.web / "pyscript.json").read_text(encoding="utf-8"))
    try:
        pages = load_pages(paths.docs)
        files = render_site(Template(text), pages, config, inline=_inline_shell_css(paths))
        if faq.is_file():
            compiled = compile_faq(faq, site_id=_site_id(paths), pages=page_anchors(pages))
            files[PurePosixPath(KNOWLEDGE_FILE)] = compiled.data
    except (SiteError, FaqError) as error:
        raise BuildError(str(error)) from None
    return {str(path): data for path, data in files.items()}


def write_pages(paths: Paths) -> tuple[bool, list[Path]]:
    """Write the docs site into dist/, removing pages whose source is gone."""
    changed = False
    produced: list[Path] = []
    for relative, data in render_pages(paths).items():
        target = paths.dist / relative
        changed |= write_if_changed(target, data)
        produced.append(target)
    changed |= prune(paths.dist / "docs", produced)
    stale = paths.dist / KNOWLEDGE_FILE
    if stale not in produced and stale.is_file():
        stale.unlink()
        changed = True
    return changed, produced


def copy_site(paths: Paths) -> tuple[bool, list[Path]]:
    """The web/ shell (minus build-only files) into dist/web."""
    changed = False
    produced: list[Path] = []
    for source in sorted(paths.web.rglob("*")):
        relative = source.relative_to(paths.web)
        if relative.parts[0] in WEB_PRIVATE or not source.is_file():
            continue
        target = paths.dist / "web" / relative
        changed |= copy_if_changed(source, target)
        produced.append(target)
    return changed, produced


def is_conformance_vector(path: Path) -> bool:
    """A JSON file of `cases`; other JSON in fixtures/ (the answers eval set) is CPython-only."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True  # published as it is, so the page's runner reports it
    return isinstance(document, dict) and "cases" in document


def copy_fixtures(paths: Paths) -> tuple[bool, list[Path]]:
    """fixtures/ into dist/fixtures plus index.json: the JSON vectors and resources."""
    source_dir = paths.root / "fixtures"
    target_dir = paths.dist / "fixtures"
    files = sorted(p for p in source_dir.rglob("*") if p.is_file()) if source_dir.is_dir() else []
    files = [
        p
        for p in files
        if not (p.parent == source_dir and p.suffix == ".json") or is_conformance_vector(p)
    ]
    changed = False
    produced: list[Path] = []
    for source in files:
        target = target_dir / source.relative_to(source_dir)
        changed |= copy_if_changed(source, target)
        produced.append(target)
    index = {
        "fixtures": [p.name for p in files if p.parent == source_dir and p.suffix == ".json"],
        "resources": [
            p.relative_to(source_dir).as_posix()
            for p in files
            if not (p.parent == source_dir and p.suffix == ".json")
        ],
    }
    index_path = target_dir / "index.json"
    changed |= write_if_changed(index_path, (json.dumps(index, indent=1) + "\n").encode())
    produced.append(index_path)
    changed |= prune(target_dir, produced)
    return changed, produced


def cdn_pattern(web: Path) -> re.Pattern[str]:
    """A pattern matching a URL (or protocol-relative URL) on any host of web/cdn-hosts.txt."""
    lines = (web / CDN_HOSTS_FILE).read_text(encoding="utf-8").splitlines()
    hosts = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return re.compile(r"(?:https?:)?//(?:" + "|".join(map(re.escape, hosts)) + r")")


def scan_for_cdn(dist: Path, web: Path | None = None) -> list[str]:
    """`file: host` for every served text file that names a CDN host."""
    pattern = cdn_pattern(web or find_root() / "web")
    hits: list[str] = []
    for path in sorted(dist.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in sorted(set(pattern.findall(text))):
            hits.append(f"{path.relative_to(dist).as_posix()}: {match}")
    return hits


# ---------------------------------------------------------------- driver


def build(
    root: Path | None = None,
    dist: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Report:
    """Run every step; raise BuildError with a clear message on any missing piece."""
    started = time.monotonic()
    base = find_root(root)
    paths = Paths(root=base, dist=(dist or base / "dist").resolve(), cache=base / ".cache")
    paths.cache.mkdir(exist_ok=True)
    paths.dist.mkdir(parents=True, exist_ok=True)
    say = log or (lambda _message: None)
    report = Report()

    runtime, pins = load_pins(paths)
    report.record("npm ci", ensure_node_modules(paths))
    changed, runtime_files = copy_runtime(paths, runtime)
    _check_scrubs_applied(paths)
    say("runtime: pyodide + pyscript")

    wheel_sources = fetch_wheels(paths, runtime, pins)
    app_changed, app_wheel = build_app_wheel(paths)
    report.record("app wheel", app_changed)
    compiled_changed, served = precompile_wheels(paths, runtime, wheel_sources, app_wheel)
    report.record("bytecode", compiled_changed)
    wheel_targets = []
    wheels_changed = False
    for source in served:
        target = paths.wheels / source.name
        wheels_changed |= copy_if_changed(source, target)
        wheel_targets.append(target)
    wheels_changed |= prune(paths.wheels, wheel_targets)
    report.record("wheels", wheels_changed)
    say(f"wheels: {len(wheel_targets)}")

    lock_path = paths.runtime / "pyodide" / "pyodide-lock.json"
    changed |= write_if_changed(lock_path, make_lock(paths, wheel_targets))
    changed |= prune(paths.runtime, [*runtime_files, lock_path])
    report.record("runtime", changed)

    site_changed, site_files = copy_site(paths)
    site_changed |= prune(paths.dist / "web", site_files)
    report.record("shell", site_changed)
    pages_changed, pages = write_pages(paths)
    report.record("pages", pages_changed)
    say(f"pages: {sum(1 for p in pages if p.suffix == '.html')} (docs home + docs/)")
    fixtures_changed, _ = copy_fixtures(paths)
    report.record("fixtures", fixtures_changed)

    hits = scan_for_cdn(paths.dist)
    if hits:
        raise BuildError("served files name a CDN:\n  " + "\n  ".join(hits))
    write_if_changed(paths.dist / "build-info.json", _build_info(runtime, wheel_targets))
    report.seconds = time.monotonic() - started
    return report


def _build_info(runtime: dict[str, str], wheels: list[Path]) -> bytes:
    info = {"runtime": runtime, "wheels": sorted(p.name for p in wheels)}
    return (json.dumps(info, indent=1, sort_keys=True) + "\n").encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentskit-web build", description=__doc__)
    parser.add_argument("--dist", type=Path, default=None, help="output folder (default dist/)")
    parser.add_argument("--clean", action="store_true", help="delete the output folder first")
    args = parser.parse_args(argv)
    root = find_root()
    dist = (args.dist or root / "dist").resolve()
    if args.clean and dist.is_dir():
        shutil.rmtree(dist)
    try:
        report = build(root, dist, log=lambda m: print(f"  {m}", flush=True))
    except BuildError as error:
        print(f"agentskit-web build: error: {error}", file=sys.stderr)
        return 1
    steps = ", ".join(f"{k} {v}" for k, v in report.steps.items())
    print(f"built {os.path.relpath(dist)} in {report.seconds:.1f}s ({steps})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
