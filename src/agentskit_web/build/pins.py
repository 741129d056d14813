"""The pinned runtime and wheels (web/wheels.toml), checked against pyproject.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from .files import BuildError, Paths


@dataclass(frozen=True)
class WheelPin:
    """One pinned wheel from web/wheels.toml."""

    name: str
    version: str
    file: str
    sha256: str
    wasm: bool = False


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
    """Each host requirement of pyproject.toml must admit the version the page pins.

    The host takes compatible ranges (a docs project brings its own pydantic); the
    page runs exactly the wheels of web/wheels.toml. A pin outside the host's range
    would mean the page runs code the host never accepts, so the build stops.
    """
    from packaging.requirements import Requirement

    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    by_name = {canonicalize_name(pin.name): pin.version for pin in pins}
    for line in project["project"].get("dependencies", []):
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        pinned = by_name.get(name)
        if pinned is None:
            raise BuildError(
                f"pyproject.toml depends on {line} but web/wheels.toml does not pin "
                f"{requirement.name}: add its wheel (file + sha256) so the page has it too"
            )
        if not requirement.specifier.contains(pinned, prereleases=True):
            raise BuildError(
                f"web/wheels.toml pins {requirement.name} {pinned}, outside pyproject.toml's "
                f"{line}: the page must run a version the host accepts"
            )
