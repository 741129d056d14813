"""Small file helpers every build step shares: compare before writing, prune, run a tool."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path


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


def find_root(start: Path | None = None) -> Path:
    """The repository root: the nearest folder holding pyproject.toml and web/."""
    for folder in [(start or Path.cwd()).resolve(), *(start or Path.cwd()).resolve().parents]:
        if (folder / "pyproject.toml").is_file() and (folder / "web").is_dir():
            return folder
    here = Path(__file__).resolve().parents[3]  # src/agentskit_web/build/files.py -> root
    if (here / "pyproject.toml").is_file():
        return here
    raise BuildError("cannot find the project root (a folder with pyproject.toml and web/)")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in blocks (`hashlib.file_digest`)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


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


def run_tool(command: list[str], cwd: Path, what: str) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-15:]
        raise BuildError(f"{what} failed ({' '.join(command)}):\n  " + "\n  ".join(tail))
