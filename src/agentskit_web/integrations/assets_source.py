"""Where the MkDocs plugin and the Sphinx extension get the assets folder from.

The folder (`agentskit-web assets`: the loader, the stylesheet, Pyodide and the
wheels, with their compressed copies) is made from the project's
checkout: `web/`, the npm-installed Pyodide and the pinned wheels. A package
installed from PyPI has no checkout, so the folder is looked for in this order:

1. `assets_from`, a folder the site owner names (one `agentskit-web assets
   OUT_DIR` wrote, e.g. in CI from a checkout): copied as it is;
2. `agentskit_web/integrations/prebuilt/`, the same folder shipped as package
   data by a release build (it is never committed to git), with the PyScript
   build in it: `with_pyscript` keeps it, the default leaves it out
   (docs/design/publish-any-generator.md says why the wheel carries it);
3. the checkout this package runs from (an editable install, the e2e): the
   folder is built with the same code as `agentskit-web assets`, its slow steps
   cached in the checkout's `.cache/`, so a rebuild takes about a second.

The first that exists wins; when none does, the build stops with a message
naming all three. `assets_origin` makes that choice before the site is built
(the plugin's `on_config`, the extension's `config-inited`), so a missing
source, or a checkout without the `[build]` extra (brotli, packaging) that
building needs, stops the build at once with one line rather than after it.
We build rather than copy from a checkout's `dist/` because `dist/` may be
stale or absent; the build is what `make site` runs anyway.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ..build.assets import LOADER, MANIFEST, PYSCRIPT_KEY, compressed_copies, write_assets
from ..build.files import BuildError, Paths, Report, find_root, write_if_changed
from ..build.packed import restore_raw_copies
from ..extras import MissingExtra, require

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


def assets_origin(assets_from: Path | None = None, *, with_pyscript: bool = False) -> Path:
    """The folder the assets will come from: `assets_from`, PREBUILT, or the checkout's root.

    Raises BuildError when there is none (or `assets_from` is not an assets folder,
    or lacks the PyScript build `with_pyscript` asks for), and BuildError naming
    the `[build]` extra when only a checkout is left and the modules building
    from it needs are not installed.
    """
    if assets_from is not None:
        if not is_assets_folder(assets_from):
            raise BuildError(
                f"assets_from: {assets_from} is not a folder written by `agentskit-web assets` "
                f"(no {LOADER} and {MANIFEST} in it)"
            )
        _require_pyscript(assets_from, with_pyscript)
        return assets_from
    if is_assets_folder(PREBUILT) and (not with_pyscript or _has_pyscript(PREBUILT)):
        return PREBUILT
    root = checkout_root()
    if root is None:
        raise BuildError(
            "no agentskit-web assets to publish: set assets_from to a folder written by "
            f"`agentskit-web assets OUT_DIR`, or install a release that ships {PREBUILT}, "
            "or run from a source checkout"
        )
    try:
        require("building the widget's assets from the checkout", "build")
    except MissingExtra as error:
        raise BuildError(str(error)) from None
    return root


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
    source = assets_origin(assets_from, with_pyscript=with_pyscript)
    if is_assets_folder(source):
        _copy_folder(source, target, with_pyscript=with_pyscript)
        restore_raw_copies(target)  # a release ships some files only as .gz (build/packed.py)
        return str(source)
    root = source  # a checkout: build the folder as `agentskit-web assets` does
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


def _copy_folder(source: Path, target: Path, *, with_pyscript: bool) -> None:
    """Copy `source` into `target`, keeping files the site already has there.

    The release's folder carries the PyScript build (build/release.py); without
    `with_pyscript` it is left out and the manifest written without its entry, so
    the copy is the very folder `agentskit-web assets` writes without the option.
    """
    if source.resolve() == target.resolve():
        return
    pyscript = _pyscript_names(source)
    if with_pyscript or not pyscript:
        shutil.copytree(source, target, dirs_exist_ok=True)
        return

    def ignored(folder: str, names: list[str]) -> set[str]:
        if Path(folder) != source:
            return set()
        return {name for name in names if name.removesuffix(".br").removesuffix(".gz") in pyscript}

    shutil.copytree(source, target, dirs_exist_ok=True, ignore=ignored)
    manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    manifest.pop(PYSCRIPT_KEY, None)
    data = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    outputs = {MANIFEST: data, **compressed_copies(MANIFEST, data)}
    for name in (MANIFEST + ".br", MANIFEST + ".gz"):
        (target / name).unlink(missing_ok=True)
    for name, content in outputs.items():
        write_if_changed(target / name, content)


def _pyscript_names(folder: Path) -> frozenset[str]:
    """The top-level names of the PyScript build in an assets folder (none without one)."""
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    pyscript = manifest.get(PYSCRIPT_KEY)
    if not isinstance(pyscript, dict):
        return frozenset()
    return frozenset(
        str(pyscript[key]).rstrip("/") for key in ("folder", "entry", "config") if key in pyscript
    )
