"""`agentskit-web build`: assemble the self-contained static site in `dist/`.

The page must run with no network beyond its own origin, so everything it
loads is copied in: Pyodide from the npm package `pyodide`, PyScript from
`@pyscript/core` (both pinned in web/package.json + package-lock.json), the
wheels pinned in web/wheels.toml (downloaded once from PyPI into .cache/), the
project's own wheel (all precompiled to CPython 3.14 bytecode by Pyodide under
Node, third-party ones sourceless: build/bytecode.py; Pyodide's python_stdlib.zip is
served sourceless-precompiled the same way), a generated
pyodide-lock.json describing exactly those wheels, the shell (web/), the
conformance fixtures and the demo docs site: index.html as the docs home,
docs/*.md rendered into that same page template as docs/<name>.html
(build/docs_pages.py), and docs/faq.json compiled into the local knowledge artifact
knowledge.json (build/knowledge.py).

Every step compares before it writes, so a second build with nothing changed
only reads files. Runtime files are scrubbed of the CDN URLs their upstream
defaults carry, and the result is scanned so no served text names a CDN.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .cdn_scan import scan_for_cdn
from .files import BuildError, Paths, Report, copy_if_changed, find_root, prune, write_if_changed
from .lock import make_lock
from .pages import copy_fixtures, copy_site, write_pages
from .pins import load_pins
from .runtime import check_scrubs_applied, copy_runtime, ensure_node_modules
from .wheels import build_page_wheels, fetch_wheels, precompile_wheels


def build(
    root: Path | None = None,
    dist: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Report:
    """Run every step; raise BuildError with a clear message on any missing piece."""
    started = time.monotonic()
    base = find_root(root)
    paths = Paths(root=base, dist=(dist or base / "dist").resolve(), cache=base / ".cache")
    paths.cache.mkdir(exist_ok=True)
    paths.dist.mkdir(parents=True, exist_ok=True)
    say = log or (lambda _message: None)
    report = Report()

    runtime, pins = load_pins(paths)
    report.record("npm ci", ensure_node_modules(paths))
    changed, runtime_files = copy_runtime(paths, runtime)
    check_scrubs_applied(paths)
    say("runtime: pyodide + pyscript")

    wheel_sources = fetch_wheels(paths, runtime, pins)
    app_changed, own_wheels = build_page_wheels(paths)
    report.record("app wheels", app_changed)
    compiled_changed, served = precompile_wheels(paths, runtime, wheel_sources, own_wheels)
    report.record("bytecode", compiled_changed)
    wheel_targets = []
    wheels_changed = False
    for source in served:
        target = paths.wheels / source.name
        wheels_changed |= copy_if_changed(source, target)
        wheel_targets.append(target)
    wheels_changed |= prune(paths.wheels, wheel_targets)
    report.record("wheels", wheels_changed)
    say(f"wheels: {len(wheel_targets)}")

    lock_path = paths.runtime / "pyodide" / "pyodide-lock.json"
    changed |= write_if_changed(lock_path, make_lock(paths, wheel_targets))
    changed |= prune(paths.runtime, [*runtime_files, lock_path])
    report.record("runtime", changed)

    site_changed, site_files = copy_site(paths)
    site_changed |= prune(paths.dist / "web", site_files)
    report.record("shell", site_changed)
    pages_changed, pages = write_pages(paths)
    report.record("pages", pages_changed)
    say(f"pages: {sum(1 for p in pages if p.suffix == '.html')} (docs home + docs/)")
    fixtures_changed, _ = copy_fixtures(paths)
    report.record("fixtures", fixtures_changed)

    hits = scan_for_cdn(paths.dist)
    if hits:
        raise BuildError("served files name a CDN:\n  " + "\n  ".join(hits))
    write_if_changed(paths.dist / "build-info.json", _build_info(runtime, wheel_targets))
    report.seconds = time.monotonic() - started
    return report


def _build_info(runtime: dict[str, str], wheels: list[Path]) -> bytes:
    info = {"runtime": runtime, "wheels": sorted(p.name for p in wheels)}
    return (json.dumps(info, indent=1, sort_keys=True) + "\n").encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentskit-web build", description=__doc__)
    parser.add_argument("--dist", type=Path, default=None, help="output folder (default dist/)")
    parser.add_argument("--clean", action="store_true", help="delete the output folder first")
    args = parser.parse_args(argv)
    root = find_root()
    dist = (args.dist or root / "dist").resolve()
    if args.clean and dist.is_dir():
        shutil.rmtree(dist)
    try:
        report = build(root, dist, log=lambda m: print(f"  {m}", flush=True))
    except BuildError as error:
        print(f"agentskit-web build: error: {error}", file=sys.stderr)
        return 1
    steps = ", ".join(f"{k} {v}" for k, v in report.steps.items())
    print(f"built {os.path.relpath(dist)} in {report.seconds:.1f}s ({steps})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
