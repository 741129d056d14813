"""The page's wheels: the pinned ones from PyPI (hash-checked), our page and bench wheels."""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from packaging.utils import canonicalize_name

from .files import BuildError, Paths, prune, run_tool, sha256_file, write_if_changed
from .pins import WheelPin


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
            run_tool(command, cache, f"downloading pinned wheel {pin.name}=={pin.version}")
        except BuildError as error:
            raise BuildError(f"pinned artifact missing: {pin.file}\n{error}") from None
        for wheel in Path(scratch).glob("*.whl"):
            wheel.replace(cache / wheel.name)


PAGE_FILES: Final = (
    "agentskit_web/__init__.py",
    "agentskit_web/py.typed",
    "agentskit_web/lazy_exports.py",
    "agentskit_web/package_steps.py",
    "agentskit_web/page_packages.py",
    "agentskit_web/protocol/",
    "agentskit_web/answering/",
    "agentskit_web/chat/",
    "agentskit_web/browser/",
    "agentskit_web/transports/__init__.py",
    "agentskit_web/transports/port.py",
    "agentskit_web/transports/fetch_transport.py",
)
"""What a reader's page runs: the wire contracts, the search and extractive answer
(static answers), the chat logic, the page edge and the fetch transport. server/,
build/, bench/, cli/ and the httpx transport never run in Pyodide, so the page wheel
leaves them out (the CPython install keeps everything)."""

BENCH_DISTRIBUTION: Final = "agentskit-web-bench"
BENCH_FILES: Final = ("agentskit_web/bench/__init__.py", "agentskit_web/bench/page/")
"""The in-page benchmark harnesses, in a wheel of their own that only benchmark pages load."""

WHEEL_DROPS: Final[dict[str, tuple[str, ...]]] = {
    "pydantic": ("pydantic/v1/", "pydantic/mypy.py", "pydantic/experimental/"),
}
"""Members of third-party wheels the page never imports, left out of the served wheel
(distribution name -> member paths; a trailing / takes a folder). pydantic.v1 is the
pydantic 1 compatibility copy (reached only for a type with `__get_validators__`),
pydantic.mypy the type-checker plugin and pydantic.experimental opt-in APIs; the e2e
journeys pass without them and the import-everything test runs on what is served.
Listed in docs/design/architecture.md."""

_WHEEL_DATE: Final = (2020, 1, 1, 0, 0, 0)
"""Every member's timestamp: the same sources always give byte-identical wheels, so the
bytecode cache (keyed by the wheel's sha256) hits after an unchanged rebuild."""


@dataclass(frozen=True)
class WheelSpec:
    """One wheel written from src/: distribution name, version, requirements, members."""

    name: str
    version: str
    requires: tuple[str, ...]
    members: tuple[str, ...]
    summary: str

    @property
    def file_name(self) -> str:
        return f"{canonicalize_name(self.name).replace('-', '_')}-{self.version}-py3-none-any.whl"


def page_wheel_specs(root: Path) -> list[WheelSpec]:
    """The page wheel (name, version and dependencies from pyproject.toml) and the bench wheel."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version = str(project["version"])
    src = root / "src"
    page = WheelSpec(
        project["name"],
        version,
        tuple(project.get("dependencies", [])),
        _members(src, PAGE_FILES),
        str(project.get("description", "")),
    )
    bench = WheelSpec(
        BENCH_DISTRIBUTION,
        version,
        (f"{project['name']}=={version}",),
        _members(src, BENCH_FILES),
        "In-page benchmark harnesses of agentskit-web (benchmark pages only).",
    )
    return [page, bench]


def _members(src: Path, selection: Iterable[str]) -> tuple[str, ...]:
    """Source files under `src` named by `selection` (a trailing / takes a whole package)."""
    found: set[str] = set()
    for entry in selection:
        path = src / entry
        if entry.endswith("/"):
            if not path.is_dir():
                raise BuildError(f"page wheel: missing package {path}")
            found.update(
                p.relative_to(src).as_posix() for p in path.rglob("*.py") if _wheel_input(p)
            )
        elif path.is_file():
            found.add(entry)
        else:
            raise BuildError(f"page wheel: missing file {path}")
    return tuple(sorted(found))


def _wheel_input(path: Path) -> bool:
    return "__pycache__" not in path.parts


def write_wheel(spec: WheelSpec, src: Path, target: Path) -> None:
    """Write `wheel_bytes(spec, src)` to `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(wheel_bytes(spec, src))


def wheel_bytes(spec: WheelSpec, src: Path) -> bytes:
    """A pure-Python wheel of `spec.members` with METADATA, WHEEL and a RECORD of sha256s."""
    dist_info = f"{canonicalize_name(spec.name).replace('-', '_')}-{spec.version}.dist-info"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {spec.name}",
        f"Version: {spec.version}",
        f"Summary: {spec.summary}",
        *(f"Requires-Dist: {requirement}" for requirement in spec.requires),
    ]
    wheel = ["Wheel-Version: 1.0", "Generator: agentskit-web build", "Root-Is-Purelib: true"]
    wheel.append("Tag: py3-none-any")
    files = [(name, (src / name).read_bytes()) for name in spec.members]
    files.append((f"{dist_info}/METADATA", ("\n".join(metadata) + "\n").encode()))
    files.append((f"{dist_info}/WHEEL", ("\n".join(wheel) + "\n").encode()))
    record = [f"{name},sha256={_b64_digest(data)},{len(data)}" for name, data in files]
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_WHEEL_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def _b64_digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_page_wheels(paths: Paths) -> tuple[bool, list[Path]]:
    """Our page and bench wheels from src/ in .cache/page-wheels (rewritten only on change)."""
    folder = paths.cache / "page-wheels"
    changed = False
    built = []
    for spec in page_wheel_specs(paths.root):
        target = folder / spec.file_name
        changed |= write_if_changed(target, wheel_bytes(spec, paths.root / "src"))
        built.append(target)
    changed |= prune(folder, built)
    return changed, built


def precompile_wheels(
    paths: Paths, runtime: dict[str, str], pinned: list[Path], own: list[Path]
) -> tuple[bool, list[Path]]:
    """Every wheel swapped for its bytecode-compiled repack (pinned ones first, then `own`).

    Every wheel becomes sourceless, as Pyodide's own distribution ships them (a binary
    member keeps its bytes): half the files to unpack at boot, which made installing
    the project's own wheel about 45 ms faster than with its sources beside
    `__pycache__` (tracebacks keep file names and line numbers, not the source text).
    The pinned inputs were hash-checked already; the lock names and hashes the repacks.
    """
    from .bytecode import CompileError, Compiler, compile_wheels

    compiler = Compiler(paths.web, runtime["pyodide"], runtime["python"])
    drops = {wheel: WHEEL_DROPS.get(_distribution(wheel), ()) for wheel in pinned}
    try:
        return compile_wheels([*pinned, *own], compiler, paths.cache, drops=drops)
    except CompileError as error:
        raise BuildError(f"precompiling the page's wheels: {error}") from None


def _distribution(wheel: Path) -> str:
    """The canonical distribution name of a wheel file (its first name component)."""
    return str(canonicalize_name(wheel.name.split("-", 1)[0]))
