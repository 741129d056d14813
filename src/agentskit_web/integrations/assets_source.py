"""Where the MkDocs plugin and the Sphinx extension get the assets folder from.

The folder (`agentskit-web assets`: the loader, the stylesheet, Pyodide and the
wheels, about 25 MB with its compressed copies) is made from the project's
checkout: `web/`, the npm-installed Pyodide and the pinned wheels. A package
installed from PyPI has no checkout, so the folder is looked for in this order:

1. `assets_from`, a folder the site owner names (one `agentskit-web assets
   OUT_DIR` wrote, e.g. in CI from a checkout): copied as it is;
2. `agentskit_web/integrations/prebuilt/`, the same folder shipped as package
   data by a release build (it is never committed to git);
3. the checkout this package runs from (an editable install, the e2e): the
   folder is built with the same code as `agentskit-web assets`, its slow steps
   cached in the checkout's `.cache/`, so a rebuild takes about a second.

The first that exists wins; when none does, the build stops with a message
naming all three. We build rather than copy from a checkout's `dist/` because
`dist/` may be stale or absent; the build is what `make site` runs anyway.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ..build.assets import LOADER, MANIFEST, write_assets
from ..build.files import BuildError, Paths, Report, find_root

PREBUILT: Final = Path(__file__).resolve().parent / "prebuilt"
_PACKAGE_ROOT: Final = Path(__file__).resolve().parents[1]


def checkout_root() -> Path | None:
    """The source checkout this package was imported from, or None for an installed wheel.

    Looked for beside the package itself (not the current folder), so building a
    docs site elsewhere still finds the checkout of an editable install.
    """
    candidate = _PACKAGE_ROOT.parents[1]
    if not (candidate / "web" / LOADER).is_file():
        return None
    try:
        return find_root(candidate)
    except BuildError:
        return None


def is_assets_folder(folder: Path) -> bool:
    """True for a folder `agentskit-web assets` wrote (its loader and its manifest)."""
    return (folder / LOADER).is_file() and (folder / MANIFEST).is_file()


def publish_assets(
    target: Path,
    assets_from: Path | None = None,
    say: Callable[[str], None] = print,
    *,
    with_pyscript: bool = False,
) -> str:
    """Write the assets folder to `target`; returns where it came from (for the build log).

    `with_pyscript` (the plugins' `with_pyscript` option) adds PyScript
    (build/pyscript.py); a folder to copy must then have been written with
    `--with-pyscript`. Raises BuildError naming the setting and the folders
    tried when there is no source.
    """
    if assets_from is not None:
        if not is_assets_folder(assets_from):
            raise BuildError(
                f"assets_from: {assets_from} is not a folder written by `agentskit-web assets` "
                f"(no {LOADER} and {MANIFEST} in it)"
            )
        _require_pyscript(assets_from, with_pyscript)
        _copy_folder(assets_from, target)
        return str(assets_from)
    if is_assets_folder(PREBUILT) and (not with_pyscript or _has_pyscript(PREBUILT)):
        _copy_folder(PREBUILT, target)
        return str(PREBUILT)
    root = checkout_root()
    if root is None:
        raise BuildError(
            "no agentskit-web assets to publish: set assets_from to a folder written by "
            f"`agentskit-web assets OUT_DIR`, or install a release that ships {PREBUILT}, "
            "or run from a source checkout"
        )
    from ..build.site import runtime_input

    paths = Paths(root=root, dist=target, cache=root / ".cache")
    paths.cache.mkdir(exist_ok=True)
    inputs = runtime_input(paths, say, Report())
    write_assets(target, paths.web, inputs, paths.cache, with_pyscript=with_pyscript)
    return f"built from the checkout at {root}"


def _has_pyscript(folder: Path) -> bool:
    from ..build.pyscript import PYSCRIPT_CONFIG, PYSCRIPT_ENTRY

    return (folder / PYSCRIPT_ENTRY).is_file() and (folder / PYSCRIPT_CONFIG).is_file()


def _require_pyscript(folder: Path, with_pyscript: bool) -> None:
    if with_pyscript and not _has_pyscript(folder):
        raise BuildError(
            f"with_pyscript: {folder} has no PyScript build in it "
            "(write it with `agentskit-web assets OUT_DIR --with-pyscript`)"
        )


def _copy_folder(source: Path, target: Path) -> None:
    """Copy `source` into `target`, keeping files the site already has there."""
    if source.resolve() == target.resolve():
        return
    shutil.copytree(source, target, dirs_exist_ok=True)
