"""The release wheel in a clean venv: what the e2e tests that install it share.

`make dist`'s code (build/release.py) builds the sdist and the wheel once per
session (conftest's `release` fixture); each test module makes its own venv
outside the checkout (`make_venv`) and checks nothing of the checkout is
reachable from it (`assert_no_checkout`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from agentskit_web.build.assets import LOADER
from agentskit_web.build.release import build_release
from e2e_support import ROOT

EPOCH = "1767225600"  # 2026-01-01: any fixed value; both builds get the same one
PREBUILT_IN_WHEEL = "agentskit_web/integrations/prebuilt/"
DEV = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "optional-dependencies"
]["dev"]


def dev_pin(name: str) -> str:
    """The developers' exact version of a theme, so the e2e installs what `make` tested."""
    return next(line for line in DEV if line.split("==")[0] == name)


@dataclass(frozen=True)
class Release:
    folder: Path
    wheel: Path
    sdist: Path


@dataclass(frozen=True)
class Venv:
    """A venv outside the checkout, and the folder its commands run in."""

    folder: Path
    work: Path

    def bin(self, name: str) -> str:
        return str(self.folder / "bin" / name)

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env["PATH"] = f"{self.folder / 'bin'}:{env.get('PATH', '')}"
        done = subprocess.run(
            list(command), cwd=self.work, env=env, capture_output=True, text=True, check=False
        )
        if check:
            assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
        return done


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_venv(root: Path, *requirements: str) -> Venv:
    folder = root / "venv"
    work = root / "work"
    work.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, cwd=work)
    venv = Venv(folder, work)
    venv.run(venv.bin("python"), "-m", "pip", "install", "--quiet", *requirements)
    return venv


def assert_no_checkout(venv: Venv) -> None:
    """The installed package, not the checkout: nothing of ROOT on sys.path, no web/ beside it."""
    probe = (
        "import sys, agentskit_web\n"
        "from agentskit_web.integrations.assets_source import PREBUILT, checkout_root\n"
        "print(agentskit_web.__file__); print(checkout_root()); print(PREBUILT)\n"
        "print('\\n'.join(sys.path))\n"
    )
    lines = venv.run(venv.bin("python"), "-c", probe).stdout.splitlines()
    package, checkout, prebuilt, *path = lines
    assert package.startswith(str(venv.folder)), package
    assert checkout == "None"
    assert prebuilt.startswith(str(venv.folder)) and (Path(prebuilt) / LOADER).is_file()
    assert not any(entry.startswith(str(ROOT)) for entry in path), path
    site_root = Path(package).parents[1]
    for name in ("web", ".cache", "pyproject.toml"):
        assert not any((folder / name).exists() for folder in Path(package).parents), name
    assert site_root.name == "site-packages"


def build_release_at(out: Path) -> Release:
    """`make dist` into `out` with EPOCH as SOURCE_DATE_EPOCH."""
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    try:
        built = build_release(ROOT, out)
    finally:
        del os.environ["SOURCE_DATE_EPOCH"]
    wheel = next(p for p in built if p.suffix == ".whl")
    sdist = next(p for p in built if p.name.endswith(".tar.gz"))
    print(f"\nwheel {wheel.name}: {wheel.stat().st_size / 1_048_576:.2f} MB")
    return Release(wheel.parent, wheel, sdist)
