"""pyodide-lock.json for exactly the wheels the site serves (sha256, dependencies, imports)."""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from ..page_packages import INSTALLED_AFTER_READY, PAGE_PACKAGE
from .files import BuildError, Paths, sha256_file


@dataclass(frozen=True)
class WheelInfo:
    """What the lock needs to know about one wheel."""

    name: str
    version: str
    imports: list[str]
    requires: list[str]


def read_wheel(path: Path, python: str) -> WheelInfo:
    """Name, version, top-level imports and runtime requirements of a wheel."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        meta_name = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if meta_name is None:
            raise BuildError(f"{path.name} has no METADATA")
        metadata = archive.read(meta_name).decode("utf-8")
    fields = _metadata_fields(metadata)
    requires = [r for r in fields.get("Requires-Dist", []) if _applies_in_page(r, python)]
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


def _applies_in_page(requirement: str, python: str) -> bool:
    """Whether a Requires-Dist line applies inside Pyodide (no extras requested).

    `python` is the runtime's full version, read from Pyodide's own lock.
    """
    from packaging.requirements import Requirement

    parsed = Requirement(requirement)
    if parsed.marker is None:
        return True
    environment = {
        "extra": "",
        "python_version": ".".join(python.split(".")[:2]),
        "python_full_version": python,
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

    return canonicalize_name(Requirement(requirement).name)


def make_lock(paths: Paths, wheels: list[Path]) -> dict[str, Any]:
    """pyodide-lock.json for exactly these wheels (sha256, deps, imports).

    The page package's entry leaves out the dependencies installed after the widget is
    ready (`page_packages.INSTALLED_AFTER_READY`), so loading it at boot skips them.

    File names are bare: Pyodide resolves them against the lock file's own folder,
    where the assets build puts the wheels.
    """
    upstream = paths.node_modules / "pyodide" / "pyodide-lock.json"
    if not upstream.is_file():
        raise BuildError(f"missing {upstream}: run `npm ci` in web/")
    info = json.loads(upstream.read_text(encoding="utf-8"))["info"]
    infos = {path: read_wheel(path, str(info["python"])) for path in wheels}
    known = {canonicalize_name(i.name) for i in infos.values()}
    packages: dict[str, object] = {}
    for path, wheel in sorted(infos.items(), key=lambda item: canonicalize_name(item[1].name)):
        key = canonicalize_name(wheel.name)
        depends = sorted({_requirement_name(r) for r in wheel.requires})
        missing = [d for d in depends if d not in known]
        if key == PAGE_PACKAGE:  # installed by the page once the widget is ready
            depends = [d for d in depends if d not in INSTALLED_AFTER_READY]
        if missing:
            raise BuildError(f"{path.name} needs {', '.join(missing)}: pin it in web/wheels.toml")
        packages[key] = {
            "name": key,
            "version": wheel.version,
            "file_name": path.name,
            "install_dir": "site",
            "sha256": sha256_file(path),
            "package_type": "package",
            "imports": wheel.imports,
            "depends": depends,
            "unvendored_tests": False,
        }
    lock = {"info": info, "packages": packages}
    return lock


def dependency_closure(lock: dict[str, Any], root: str) -> list[str]:
    """`root` and every package it depends on in `lock`, by package name, sorted."""
    packages = lock["packages"]
    seen: set[str] = set()
    pending = [canonicalize_name(root)]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        if name not in packages:
            raise BuildError(f"the lock has no package {name} (needed by {root})")
        seen.add(name)
        pending.extend(packages[name]["depends"])
    return sorted(seen)
