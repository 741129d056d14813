"""`agentskit-web build`: assemble the self-contained static site in `dist/`.

The page must run with no network beyond its own origin, so everything it
loads is copied in: Pyodide from the npm package `pyodide` (pinned in
web/package.json + package-lock.json), the
wheels pinned in web/wheels.toml (downloaded once from PyPI into .cache/), the
project's own wheel (all precompiled to CPython 3.14 bytecode by Pyodide under
Node, third-party ones sourceless: build/bytecode.py; Pyodide's python_stdlib.zip is
served sourceless-precompiled the same way), a generated
pyodide-lock.json describing exactly those wheels, the shell (web/), the
conformance fixtures and the demo docs site: index.html as the docs home,
docs/*.md rendered into that same page template as docs/<name>.html
(build/docs_pages.py), and docs/faq.json compiled into the local knowledge artifact
knowledge.json (build/knowledge.py). The assets folder is measured and the "Sizes"
table of docs/embedding.md rewritten from it (build/sizes.py) before the docs are
rendered.

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

from ..page_packages import INSTALLED_AFTER_READY, PAGE_PACKAGE
from .assets import RuntimeInput, write_assets
from .cdn_scan import scan_for_cdn
from .files import BuildError, Paths, Report, find_root, prune, write_if_changed
from .lock import dependency_closure, make_lock
from .pages import copy_fixtures, write_pages
from .pins import load_pins
from .runtime import ensure_node_modules, runtime_files
from .sizes import write_sizes_doc
from .wheels import BENCH_DISTRIBUTION, build_page_wheels, fetch_wheels, precompile_wheels

ASSETS_FOLDER = "agentskit"
"""Where the demo site publishes `agentskit-web assets` (dist/agentskit/)."""
BENCH_FOLDER = "bench"
"""Benchmark-only files: the raw-Pyodide baseline page and the in-page harness wheel."""
RAW_PAGE = "raw.html"
RUNTIME_MARKER = "__AGENTSKIT_RUNTIME__"


def runtime_input(paths: Paths, say: Callable[[str], None], report: Report) -> RuntimeInput:
    """Pyodide, the precompiled wheels and their lock: what the assets folder carries."""
    runtime, pins = load_pins(paths)
    report.record("npm ci", ensure_node_modules(paths))
    files = runtime_files(paths, runtime)
    say("runtime: pyodide")
    wheel_sources = fetch_wheels(paths, runtime, pins)
    app_changed, own_wheels = build_page_wheels(paths)
    report.record("app wheels", app_changed)
    compiled_changed, served = precompile_wheels(paths, runtime, wheel_sources, own_wheels)
    report.record("bytecode", compiled_changed)
    bench = [p for p in served if p.name.startswith(BENCH_DISTRIBUTION.replace("-", "_") + "-")]
    page = [p for p in served if p not in bench]
    lock = make_lock(paths, page)
    # Everything the page installs, at boot or once ready: prefetched and precached alike.
    closure = {
        name
        for root in (PAGE_PACKAGE, *INSTALLED_AFTER_READY)
        for name in dependency_closure(lock, root)
    }
    say(f"wheels: {len(page)} (+ {len(bench)} benchmark-only)")
    return RuntimeInput(
        files=files,
        wheels={p.name: p.read_bytes() for p in page},
        lock=lock,
        page_wheels=tuple(
            str(entry["file_name"]) for key, entry in lock["packages"].items() if key in closure
        ),
        bench_wheels={p.name: p.read_bytes() for p in bench},
    )


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

    inputs = runtime_input(paths, say, report)
    assets = write_assets(paths.dist / ASSETS_FOLDER, paths.web, inputs, paths.cache)
    report.record("assets", assets.changed)
    say(f"assets: {ASSETS_FOLDER}/ ({assets.runtime}, {assets.stylesheet})")
    report.record("bench", write_bench(paths, inputs, assets.runtime))
    # Before the docs are rendered into dist/: the page shows the sizes just measured.
    report.record("sizes", write_sizes_doc(paths.root, paths.dist / ASSETS_FOLDER))

    pages_changed, pages = write_pages(paths)
    report.record("pages", pages_changed)
    say(f"pages: {sum(1 for p in pages if p.suffix == '.html')} (docs home + docs/)")
    fixtures_changed, _ = copy_fixtures(paths)
    report.record("fixtures", fixtures_changed)

    hits = scan_for_cdn(paths.dist)
    if hits:
        raise BuildError("served files name a CDN:\n  " + "\n  ".join(hits))
    write_if_changed(paths.dist / "build-info.json", _build_info(inputs, assets.runtime))
    report.seconds = time.monotonic() - started
    return report


def write_bench(paths: Paths, inputs: RuntimeInput, runtime_dir: str) -> bool:
    """dist/bench/: the raw-Pyodide baseline page and the harness wheel (never in assets)."""
    folder = paths.dist / BENCH_FOLDER
    raw = (paths.web / RAW_PAGE).read_text(encoding="utf-8")
    if raw.count(RUNTIME_MARKER) != 1:
        raise BuildError(f"web/{RAW_PAGE} must name {RUNTIME_MARKER} exactly once")
    runtime_url = f"../{ASSETS_FOLDER}/{runtime_dir}"
    outputs = {RAW_PAGE: raw.replace(RUNTIME_MARKER, runtime_url).encode("utf-8")}
    outputs.update(inputs.bench_wheels)
    changed = False
    written = []
    for name, data in outputs.items():
        changed |= write_if_changed(folder / name, data)
        written.append(folder / name)
    return prune(folder, written) or changed


def _build_info(inputs: RuntimeInput, runtime_dir: str) -> bytes:
    info = {"runtime": runtime_dir, "wheels": sorted(inputs.wheels)}
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
