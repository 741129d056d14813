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
    """pyproject's `name==version` dependencies must equal the page's wheels."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    by_name = {canonicalize_name(pin.name): pin.version for pin in pins}
    for requirement in project["project"].get("dependencies", []):
        if "==" not in requirement:
            continue
        name, version = (part.strip() for part in requirement.split("==", 1))
        pinned = by_name.get(canonicalize_name(name))
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
