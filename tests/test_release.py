"""`make dist`'s pure parts: the sdist rewritten reproducibly, raw files left to their .gz copies.

The whole release (two builds, byte-identical, installed in a clean venv) is
e2e/test_wheel_install.py; these are the quick checks of each rule.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import time
from pathlib import Path

import pytest

from agentskit_web.build.packed import STRIP_MIN_BYTES, restore_raw_copies, strip_raw_copies
from agentskit_web.build.release import normalise_sdist, source_date_epoch, stage_project

EPOCH = 1_767_225_600


def _sdist(path: Path, mtime: float, owner: int) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in (("pkg/b.py", b"b = 2\n"), ("pkg/a.py", b"a = 1\n")):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.uid, info.mode = len(data), mtime, owner, 0o664
            archive.addfile(info, io.BytesIO(data))


def test_two_sdists_made_at_different_times_become_the_same_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "one.tar.gz", tmp_path / "two.tar.gz"
    _sdist(first, time.time(), 1000)
    time.sleep(1.1)  # the gzip header holds whole seconds
    _sdist(second, time.time() + 3600, 0)
    assert first.read_bytes() != second.read_bytes()
    normalise_sdist(first, EPOCH)
    normalise_sdist(second, EPOCH)
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as archive:
        members = archive.getmembers()
    assert [m.name for m in members] == ["pkg/a.py", "pkg/b.py"]
    assert {(m.mtime, m.uid, m.mode) for m in members} == {(EPOCH, 0, 0o644)}


def test_source_date_epoch_comes_from_the_environment_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    assert source_date_epoch(tmp_path) == EPOCH
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert source_date_epoch(tmp_path) > 0  # outside git: the fixed fallback
    assert "SOURCE_DATE_EPOCH" not in os.environ


def _pair(folder: Path, name: str, size: int) -> bytes:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    (folder / name).write_bytes(data)
    (folder / f"{name}.gz").write_bytes(gzip.compress(data, 9, mtime=0))
    return data


def test_raw_files_at_the_bound_are_stripped_and_restored_exactly(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime.0123456789abcdef"
    runtime.mkdir()
    at = _pair(runtime, "at.wasm", STRIP_MIN_BYTES)
    below = _pair(runtime, "below.wasm", STRIP_MIN_BYTES - 1)
    assert strip_raw_copies(tmp_path) == STRIP_MIN_BYTES
    assert not (runtime / "at.wasm").exists()
    assert (runtime / "below.wasm").read_bytes() == below  # under the bound: kept
    assert restore_raw_copies(tmp_path) == 1
    assert (runtime / "at.wasm").read_bytes() == at
    assert restore_raw_copies(tmp_path) == 0


def test_a_gz_that_does_not_reproduce_its_file_keeps_the_file(tmp_path: Path) -> None:
    data = _pair(tmp_path, "big.wasm", STRIP_MIN_BYTES * 2)
    (tmp_path / "big.wasm.gz").write_bytes(gzip.compress(data[:-1], 9, mtime=0))
    assert strip_raw_copies(tmp_path) == 0
    assert (tmp_path / "big.wasm").read_bytes() == data


def test_the_release_is_staged_outside_the_checkout_without_stale_assets(tmp_path: Path) -> None:
    """The checkout is only read: a plugin build run during `make dist` never sees assets
    that are not its own, and a prebuilt folder left in the checkout is not shipped."""
    root = tmp_path / "checkout"
    package = root / "src" / "agentskit_web"
    (package / "integrations" / "prebuilt").mkdir(parents=True)
    (package / "integrations" / "prebuilt" / "stale.js").write_text("old", encoding="utf-8")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.cpython-313.pyc").write_bytes(b"\0")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (root / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    (root / "README.md").write_text("# readme\n", encoding="utf-8")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))

    project = stage_project(root, tmp_path / "staging")

    assert not project.is_relative_to(root)
    staged = sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file())
    assert staged == ["README.md", "pyproject.toml", "src/agentskit_web/__init__.py"]
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
