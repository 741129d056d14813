"""`make dist`: the release an owner installs: an sdist and a wheel carrying the widget's assets.

A package installed from an index has no checkout, so the MkDocs plugin and
the Sphinx extension publish the assets folder shipped inside it
(`agentskit_web/integrations/prebuilt/`, see integrations/assets_source.py).
This writes that folder with the same code as `agentskit-web assets
--with-pyscript` (the loader, the stylesheet, the Pyodide runtime, the wheels,
the PyScript build, their `.br`/`.gz` copies and the lock: an owner gets
PyScript from the wheel too, and the default publish leaves it out; raw files
their `.gz` reproduces are left out, see build/packed.py), runs the standard
PEP 517 build (`python -m build`: the sdist, then the wheel from the sdist, so
the sdist alone rebuilds the same wheel). All of it happens in a staging copy
of the project's packaging files (pyproject.toml, README.md, src/), never in
the checkout: there the plugins build fresh assets from `web/`, and a prebuilt
folder, even for the minute a release takes, would shadow them for a docs
build run at that moment.

Reproducible: every timestamp is SOURCE_DATE_EPOCH (default: the last commit's
time). The wheel's backend already honours it; the sdist's tar and gzip
headers carry the build machine's clock and owner, so the sdist is rewritten
with sorted members, that time, owner 0 and fixed modes. Two runs of the same
commit print the same sha256s.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Final

from .files import BuildError, Paths, Report, find_root
from .packed import strip_raw_copies

OUT_DIR: Final = "release"
"""Where `make dist` writes the sdist and the wheel (dist/ is the demo site)."""
PREBUILT_PARTS: Final = ("src", "agentskit_web", "integrations", "prebuilt")
STAGED_FILES: Final = ("pyproject.toml", "README.md")
"""What the build reads besides src/ (the metadata and the long description)."""
STAGING_IGNORED: Final = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "prebuilt")
FALLBACK_EPOCH: Final = 315_532_800
"""1980-01-01, the earliest time a zip member can hold: used outside a git checkout."""


def source_date_epoch(root: Path) -> int:
    """SOURCE_DATE_EPOCH if set, else the last commit's time (the same for every rebuild)."""
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value:
        return int(value)
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%ct"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return int(out)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return FALLBACK_EPOCH


def write_prebuilt(root: Path, target: Path) -> int:
    """The assets folder at `target` (with PyScript), written afresh; returns its file count."""
    from .assets import write_assets
    from .site import runtime_input

    if target.exists():
        shutil.rmtree(target)
    paths = Paths(root=root, dist=target, cache=root / ".cache")
    paths.cache.mkdir(exist_ok=True)
    inputs = runtime_input(paths, lambda message: print(f"  {message}"), Report())
    report = write_assets(target, paths.web, inputs, paths.cache, with_pyscript=True)
    return len(report.files)


def normalise_sdist(path: Path, epoch: int) -> None:
    """Rewrite a .tar.gz with sorted members, one mtime, owner 0 and 0644/0755 modes."""
    with tarfile.open(path, "r:gz") as source:
        members = sorted(source.getmembers(), key=lambda member: member.name)
        payload = [
            (member, source.extractfile(member).read() if member.isfile() else None)  # type: ignore[union-attr]
            for member in members
        ]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as target:
        for member, data in payload:
            member.mtime = epoch
            member.uid = member.gid = 0
            member.uname = member.gname = ""
            member.pax_headers = {}
            member.mode = 0o755 if member.isdir() or member.mode & 0o111 else 0o644
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    with (
        path.open("wb") as out,
        gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=epoch, compresslevel=9) as packed,
    ):
        packed.write(raw.getvalue())


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _size(count: int) -> str:
    return f"{count / 1_048_576:.2f} MB"


def stage_project(root: Path, staging: Path) -> Path:
    """A copy of what the build reads, so the checkout is never written; returns its root."""
    project = staging / "project"
    project.mkdir(parents=True)
    for name in STAGED_FILES:
        shutil.copy2(root / name, project / name)
    shutil.copytree(root / "src", project / "src", ignore=STAGING_IGNORED)
    return project


def build_release(root: Path, out_dir: Path) -> list[Path]:
    """Write the sdist and the wheel to `out_dir` (emptied first); returns their paths."""
    epoch = source_date_epoch(root)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="agentskit-release-") as staging:
        project = stage_project(root, Path(staging))
        prebuilt = project.joinpath(*PREBUILT_PARTS)
        count = write_prebuilt(root, prebuilt)
        saved = strip_raw_copies(prebuilt)
        print(
            f"prebuilt assets: {count} files in the staged {Path(*PREBUILT_PARTS)}/ "
            f"({saved / 1_048_576:.1f} MB of raw files left to their .gz copies)",
            flush=True,
        )
        environment = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
        subprocess.run(
            [sys.executable, "-m", "build", "--outdir", str(out_dir), str(project)],
            check=True,
            env=environment,
            stdout=subprocess.DEVNULL,
        )
    built = sorted(out_dir.iterdir())
    for path in built:
        if path.name.endswith(".tar.gz"):
            normalise_sdist(path, epoch)
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentskit_web.build.release")
    parser.add_argument("--out-dir", type=Path, default=None, help=f"default {OUT_DIR}/")
    args = parser.parse_args(argv)
    try:
        root = find_root()
        built = build_release(root, (args.out_dir or root / OUT_DIR).resolve())
    except (BuildError, subprocess.CalledProcessError) as error:
        print(f"make dist: error: {error}", file=sys.stderr)
        return 1
    print(f"SOURCE_DATE_EPOCH={source_date_epoch(root)}")
    for path in built:
        print(f"{path.name}: {_size(path.stat().st_size)} sha256 {_sha256(path)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
