"""Section `snapshot` (issue 25, item 1): can the page's Python boot from a Pyodide memory
snapshot, and what would it save?

An experiment, not a shipped path: the loader and the default build are unchanged. It
builds a throwaway site in a temporary folder (the built runtime of dist/ and a test page),
serves it on 127.0.0.1 and drives Debian Chromium, like the `boot` section.

Two places a snapshot can be made:
- build time, in Node: `loadPyodide({_makeSnapshot: true})` with the page's packages, the
  widget's imports, then `makeMemorySnapshot()`; the page restores it with `_loadSnapshot`;
- in the reader's browser: the same after a first boot, kept in Cache Storage, restored on
  the next load.

A restored snapshot is only linear memory. Two things outside it must be put back before
pydantic-core works (see docs/design/snapshot-boot.md): the files of site-packages (lazy
imports read them) and pydantic-core's shared library, which must be instantiated again at
the memory and table addresses it had when the snapshot was taken (`relink` in the page).
Mode `naive` restores without either step and records how it breaks.

Printed: warm boot to "widget modules imported" for the plain boot and each restore,
interleaved in one browser context (median and spread of `--runs`), the snapshot's size raw,
gzip (level 9) and brotli (quality 11, what the build uses), the time to make it, and the
checks run after restore (a model validated, the conformance vectors vs CPython's counts).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from ..page_packages import INSTALLED_AFTER_READY, PAGE_PACKAGE
from .harness import BOOT_TIMEOUT_MS, chromium_launch_options, runtime_path

TABLE_SLACK = 64
"""Empty wasm-table slots the Node maker leaves before loading libraries (see MAKE_SNAPSHOT_JS)."""
PACKAGES = [PAGE_PACKAGE, *INSTALLED_AFTER_READY]
# What the widget has imported when it is ready (the loader's pyimport), plus markdown-it,
# which the loader installs right after: the state a snapshot should hold.
IMPORTS = """
import pydantic, markdown_it
from pydantic import BaseModel
import agentskit_web.protocol, agentskit_web.chat
import agentskit_web.browser.embed
"""
# Run after every boot: a new model (pydantic-core builds and runs a validator).
CHECK = """
import json
from pydantic import BaseModel, ValidationError
class SnapshotProbe(BaseModel):
    name: str
    count: int
good = SnapshotProbe.model_validate({"name": "a", "count": "3"}).count
try:
    SnapshotProbe.model_validate({"name": 1})
    errors = 0
except ValidationError as error:
    errors = error.error_count()
json.dumps({"validated": good, "errors": errors})
"""
# Optional, once per mode: the conformance vectors (texts and resources handed in by JS).
CONFORMANCE = """
import base64, json
from agentskit_web.browser.bootstrap import run_corpus
texts = fixture_texts
blobs = fixture_bytes
counts = run_corpus(json.loads(texts["index.json"]), texts.__getitem__,
                    lambda name: base64.b64decode(blobs[name]))
json.dumps({name: [c["passed"], c["failed"], c["error"]] for name, c in counts.items()})
"""

MAKE_SNAPSHOT_JS = """
// Build-time snapshot in Node. argv: runtime folder, snapshot file, metadata file,
// packages (JSON), Python to run before the snapshot.
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [runtimeDir, outFile, metaFile, packagesJson, code] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(runtimeDir + "/pyodide.mjs").href);
const started = performance.now();
const py = await loadPyodide({
  indexURL: runtimeDir + "/",
  lockFileURL: runtimeDir + "/pyodide-lock.json",
  _makeSnapshot: true,
});
// A browser boot puts one more function in the wasm table than a Node boot before any
// library loads (restore then fails with "table already has 14175 slots, the library was
// at 14174"). Leave empty slots so the libraries sit above what any host's boot uses.
py._module.wasmTable.grow(TABLE_SLACK);
await py.loadPackage(JSON.parse(packagesJson));
await py.runPythonAsync(code);
const booted = performance.now() - started;
const made = performance.now();
const { snapshot, meta } = SNAPSHOT(py);
writeFileSync(outFile, snapshot);
const makeMs = performance.now() - made;
writeFileSync(metaFile, JSON.stringify({ ...meta, bootMs: booted, makeMs }));
"""

# Shared by Node and the page: the snapshot plus what it cannot hold (where the shared
# libraries were placed; Emscripten writes that into each dlopen handle).
SNAPSHOT_FUNCTION_JS = """
function SNAPSHOT(py) {
  const M = py._module;
  const libs = Object.entries(M.LDSO.loadedLibsByHandle)
    .map(([handle, dso]) => [Number(handle), dso])
    .filter(([handle]) => handle)
    .map(([handle, dso]) => ({
      name: dso.name,
      memoryBase: M.HEAPU32[(handle + 12) >>> 2],
      memorySize: M.HEAP32[(handle + 16) >>> 2],
      tableBase: M.HEAPU32[(handle + 20) >>> 2],
      tableSize: M.HEAP32[(handle + 24) >>> 2],
    }));
  // makeMemorySnapshot insists that hiwire slot 6 (pyodide.loadedPackages) is still the {}
  // of a fresh boot ("Unexpected hiwire entry at index 6"): empty it for the snapshot.
  const loaded = { ...py.loadedPackages };
  for (const key of Object.keys(loaded)) delete py.loadedPackages[key];
  let snapshot;
  try {
    snapshot = py.makeMemorySnapshot();
  } finally {
    Object.assign(py.loadedPackages, loaded);
  }
  return { snapshot, meta: { libs, tableLength: M.wasmTable.length, wheels: WHEELS } };
}
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>snapshot experiment</title>
<script type="module">
const WHEELS = __WHEELS__;
const PACKAGES = __PACKAGES__;
const IMPORTS = __IMPORTS__;
const CHECK = __CHECK__;
const CONFORMANCE = __CONFORMANCE__;
__SNAPSHOT_FUNCTION__
const params = new URLSearchParams(location.search);
const mode = params.get("mode");
const rt = new URL("__RUNTIME__", location.href).href;
const root = document.documentElement;
const out = { mode };
const CACHE = "agentskit-snapshot-experiment";

// Put back what a memory snapshot does not hold, before anything calls pydantic-core.
async function relink(py, meta) {
  const M = py._module;
  const started = performance.now();
  // 1. site-packages: unpack the wheels with zipfile (pyodide.loadPackage would also
  //    dlopen the library again, at new addresses the restored heap knows nothing of).
  const site = py.runPython("import site; site.getsitepackages()[0]");
  for (const wheel of meta.wheels) {
    const body = new Uint8Array(await (await fetch(rt + wheel)).arrayBuffer());
    M.FS.writeFile("/tmp/wheel.zip", body);
    py.runPython(
      `import zipfile; zipfile.ZipFile("/tmp/wheel.zip").extractall(${JSON.stringify(site)})`,
    );
  }
  M.FS.unlink("/tmp/wheel.zip");
  out.unpackMs = performance.now() - started;
  // 2. each shared library, again at the addresses the snapshot's memory points at.
  for (const lib of meta.libs) {
    const binary = M.FS.readFile(lib.name);
    const align = 2 ** M.getDylinkMetadata(binary).memoryAlign;
    if (M.wasmTable.length > lib.tableBase) {
      throw new Error(
        `table already has ${M.wasmTable.length} slots, the library was at ${lib.tableBase}`,
      );
    }
    M.wasmTable.grow(lib.tableBase - M.wasmTable.length);
    const saved = M.HEAPU8.slice(lib.memoryBase, lib.memoryBase + lib.memorySize);
    // Its block is allocated in the restored heap: free it so calloc hands it back. The
    // block starts at most `align` bytes before memoryBase; find it by its size header.
    const request = lib.memorySize + align;
    let block = 0;
    for (let p = lib.memoryBase; p >= lib.memoryBase - align; p -= 8) {
      const size = M.HEAPU32[(p - 4) >>> 2] & ~7;
      if (size >= request && size <= request + 32) { block = p; break; }
    }
    if (!block) throw new Error(`no heap block found for ${lib.name} at ${lib.memoryBase}`);
    M._free(block);
    const handle = M._calloc(32, 1);
    const exports = await M.loadWebAssemblyModule(
      binary, { loadAsync: true, global: true, nodelete: true, allowUndefined: true },
      lib.name, {}, handle);
    const placed = [M.HEAPU32[(handle + 12) >>> 2], M.HEAPU32[(handle + 20) >>> 2]];
    M._free(handle);
    if (placed[0] !== lib.memoryBase || placed[1] !== lib.tableBase) {
      throw new Error(`${lib.name} placed at memory ${placed[0]} table ${placed[1]}, ` +
        `the snapshot has it at ${lib.memoryBase} / ${lib.tableBase}`);
    }
    // Instantiating re-ran its data initialisers and constructors: put its state back.
    M.HEAPU8.set(saved, lib.memoryBase);
    M.mergeLibSymbols(exports, lib.name);
    const dso = { refcount: Infinity, name: lib.name, exports, global: true };
    M.LDSO.loadedLibsByName[lib.name] = dso;
  }
  const missing = meta.tableLength - M.wasmTable.length;
  if (missing > 0) M.wasmTable.grow(missing);
  out.relinkMs = performance.now() - started - out.unpackMs;
}

async function fromCache() {
  const cache = await caches.open(CACHE);
  const [snap, meta] = await Promise.all(
    [cache.match("snapshot.bin"), cache.match("snapshot.json")],
  );
  if (!snap || !meta) throw new Error("no snapshot in Cache Storage");
  return { bytes: snap.arrayBuffer(), meta: await meta.json() };
}

function fromServer() {
  return {
    bytes: fetch("snapshot.bin").then((r) => r.arrayBuffer()),
    metaPromise: fetch("snapshot.json").then((r) => r.json()),
  };
}

try {
  const { loadPyodide } = await import(rt + "pyodide.mjs");
  const base = { indexURL: rt, lockFileURL: rt + "pyodide-lock.json" };
  let py;
  if (mode === "plain" || mode === "browser-make") {
    py = await loadPyodide({ ...base, packages: PACKAGES, _makeSnapshot: mode === "browser-make" });
    py.runPython(IMPORTS);
    out.ready = performance.now();
    if (mode === "browser-make") {
      const made = performance.now();
      const { snapshot, meta } = SNAPSHOT(py);
      out.makeMs = performance.now() - made;
      const cache = await caches.open(CACHE);
      await cache.put("snapshot.bin", new Response(snapshot));
      await cache.put("snapshot.json", new Response(JSON.stringify(meta)));
      out.storeMs = performance.now() - made - out.makeMs;
      out.bytes = snapshot.length;
    }
  } else {
    let source;
    if (mode === "browser-restore") source = await fromCache();
    else { source = fromServer(); }
    const bytes = new Uint8Array(await source.bytes);
    // Pyodide sets INITIAL_MEMORY to the snapshot's length, but this build defines its
    // memory inside the wasm and never reads that setting, so restoreSnapshot's
    // HEAP8.set() throws "RangeError: offset is out of bounds" once the snapshot is larger
    // than the initial memory. Grow the memory first (mode naive-nogrow shows the error).
    const heapLength = bytes.length - new Uint32Array(bytes.buffer, 0, 2)[1];
    const { default: create } = await import(rt + "pyodide.asm.mjs");
    const createPyodideModule = async (settings) => {
      const module = await create(settings);
      if (module.HEAP8.length < heapLength) module._emscripten_resize_heap(heapLength);
      return module;
    };
    py = await loadPyodide({
      ...base,
      _loadSnapshot: bytes,
      ...(mode === "naive-nogrow" ? {} : { createPyodideModule }),
    });
    out.restored = performance.now();
    const meta = source.meta ?? (await source.metaPromise);
    if (!mode.startsWith("naive")) await relink(py, meta);
    out.ready = performance.now();
  }
  window.akPy = py;
  try {
    out.check = JSON.parse(py.runPython(CHECK));
  } catch (error) {
    out.checkError = String(error);
  }
  if (params.get("conformance") === "1" && !out.checkError) {
    const index = await (await fetch("fixtures/index.json")).json();
    const texts = { "index.json": JSON.stringify(index) };
    const blobs = {};
    for (const name of index.fixtures) texts[name] = await (await fetch("fixtures/" + name)).text();
    for (const name of index.resources) {
      const bytes = new Uint8Array(await (await fetch("fixtures/" + name)).arrayBuffer());
      let text = "";
      for (const byte of bytes) text += String.fromCharCode(byte);
      blobs[name] = btoa(text);
    }
    py.globals.set("fixture_texts", py.toPy(texts));
    py.globals.set("fixture_bytes", py.toPy(blobs));
    try {
      out.conformance = JSON.parse(py.runPython(CONFORMANCE));
    } catch (error) {
      out.conformanceError = String(error);
    }
  }
  root.dataset.state = "ready";
} catch (error) {
  out.error = String(error && error.stack ? error.stack : error).slice(0, 2000);
  root.dataset.state = "error";
}
window.akOut = out;
</script></head><body><p>snapshot experiment</p></body></html>
"""


def _wheels(runtime: Path) -> list[str]:
    """Wheels of the page's lock entries (all of the runtime's wheels but the bench one)."""
    return sorted(
        p.name for p in runtime.glob("*.whl") if not p.name.startswith("agentskit_web_bench")
    )


def _page(runtime_url: str, wheels: list[str]) -> str:
    replacements = {
        "__WHEELS__": json.dumps(wheels),
        "__PACKAGES__": json.dumps(PACKAGES),
        "__IMPORTS__": json.dumps(IMPORTS),
        "__CHECK__": json.dumps(CHECK),
        "__CONFORMANCE__": json.dumps(CONFORMANCE),
        "__SNAPSHOT_FUNCTION__": SNAPSHOT_FUNCTION_JS,
        "__RUNTIME__": runtime_url,
    }
    html = PAGE
    for key, value in replacements.items():
        html = html.replace(key, value)
    return html


def make_node_snapshot(runtime: Path, folder: Path, wheels: list[str]) -> dict[str, Any]:
    """Run the Node maker on the built runtime; snapshot.bin and snapshot.json in `folder`."""
    script = folder / "make-snapshot.mjs"
    script.write_text(
        SNAPSHOT_FUNCTION_JS.replace("WHEELS", json.dumps(wheels))
        + MAKE_SNAPSHOT_JS.replace("TABLE_SLACK", str(TABLE_SLACK)),
        encoding="utf-8",
    )
    started = time.perf_counter()
    subprocess.run(
        [
            "node",
            str(script),
            str(runtime),
            str(folder / "snapshot.bin"),
            str(folder / "snapshot.json"),
            json.dumps(PACKAGES),
            IMPORTS,
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    meta: dict[str, Any] = json.loads((folder / "snapshot.json").read_text(encoding="utf-8"))
    meta["nodeWallMs"] = (time.perf_counter() - started) * 1000
    return meta


def compress_beside(path: Path) -> dict[str, int]:
    """Write `x.gz` (level 9) and `x.br` (quality 11, the build's settings) beside `path`,
    which the static server then sends, as it does for the runtime; their sizes."""
    import brotli

    data = path.read_bytes()
    packed = {
        "gzip": gzip.compress(data, compresslevel=9),
        "brotli": bytes(brotli.compress(data, quality=11)),
    }
    path.with_name(path.name + ".gz").write_bytes(packed["gzip"])
    path.with_name(path.name + ".br").write_bytes(packed["brotli"])
    return {"raw": len(data)} | {name: len(body) for name, body in packed.items()}


def _cpython_conformance(fixtures: Path) -> dict[str, list[Any]]:
    from ..browser.bootstrap import run_corpus

    index = json.loads((fixtures / "index.json").read_text(encoding="utf-8"))
    counts = run_corpus(
        index,
        lambda name: (fixtures / name).read_text(encoding="utf-8"),
        lambda name: (fixtures / name).read_bytes(),
    )
    return {name: [c["passed"], c["failed"], c["error"]] for name, c in counts.items()}


def _load(page: Any, url: str) -> dict[str, Any]:
    page.goto(url, wait_until="commit")
    page.wait_for_selector("html[data-state]", state="attached", timeout=BOOT_TIMEOUT_MS)
    return dict(page.evaluate("window.akOut"))


def _spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (
        f"median {statistics.median(values):7.0f} ms  "
        f"(min {min(values):.0f}, max {max(values):.0f}, n={len(values)})"
    )


def run(dist: Path, runs: int, conformance: bool) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from ..server.static import StaticSite

    runtime_dir = dist / runtime_path(dist).strip("/")
    wheels = _wheels(runtime_dir)
    results: dict[str, Any] = {"runs": runs}
    with tempfile.TemporaryDirectory(prefix="ak-snapshot-") as temp:
        site = Path(temp)
        shutil.copytree(runtime_dir, site / "rt", ignore=shutil.ignore_patterns("*.br", "*.gz"))
        shutil.copytree(dist / "fixtures", site / "fixtures")
        print("making the build-time snapshot in Node ...", flush=True)
        meta = make_node_snapshot(site / "rt", site, wheels)
        results["node"] = {"meta": meta, "sizes": compress_beside(site / "snapshot.bin")}
        (site / "index.html").write_text(_page("rt/", wheels), encoding="utf-8")
        wheel_bytes = sum((site / "rt" / w).stat().st_size for w in wheels)
        results["runtimeBytes"] = {
            name: (site / "rt" / name).stat().st_size
            for name in ("pyodide.asm.wasm", "python_stdlib.zip", "pyodide.asm.mjs")
        } | {"wheels": wheel_bytes}
        timings: dict[str, list[float]] = {"plain": [], "node-restore": [], "browser-restore": []}
        restored: dict[str, list[float]] = {"node-restore": [], "browser-restore": []}
        detail: dict[str, list[Any]] = {"unpack": [], "relink": []}
        with StaticSite(site) as server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(**chromium_launch_options())
            try:
                context = browser.new_context()
                page = context.new_page()
                url = server.url + "/index.html?mode="
                results["cold-plain"] = _load(page, url + "plain")
                results["naive-nogrow"] = _load(page, url + "naive-nogrow")
                results["naive"] = _load(page, url + "naive")
                results["browser-make"] = _load(page, url + "browser-make")
                flag = "&conformance=1" if conformance else ""
                for index in range(runs):
                    for mode in timings:
                        extra = flag if index == 0 else ""
                        out = _load(page, url + mode + extra)
                        if out.get("error") or out.get("checkError"):
                            results.setdefault("failures", []).append(out)
                            continue
                        timings[mode].append(out["ready"])
                        if mode in restored:
                            restored[mode].append(out["restored"])
                            detail["unpack"].append(out["unpackMs"])
                            detail["relink"].append(out["relinkMs"])
                        if index == 0:
                            results[f"first-{mode}"] = out
                context.close()
            finally:
                browser.close()
        results["timings"] = timings
        results["restored"] = restored
        results["detail"] = detail
        if conformance:
            results["cpython-conformance"] = _cpython_conformance(dist / "fixtures")
    return results


def report(results: dict[str, Any]) -> None:
    node = results["node"]
    s = node["sizes"]
    meta = node["meta"]
    print("\n== snapshot size (build-time, Node)")
    print(
        f"raw {s['raw'] / 1e6:.1f} MB   gzip -9 {s['gzip'] / 1e6:.2f} MB   "
        f"brotli q11 {s['brotli'] / 1e6:.2f} MB"
    )
    rt = results["runtimeBytes"]
    print(
        f"baseline, same run: runtime (still loaded): wasm {rt['pyodide.asm.wasm'] / 1e6:.1f} MB, "
        f"stdlib {rt['python_stdlib.zip'] / 1e6:.1f} MB, wheels {rt['wheels'] / 1e6:.1f} MB (raw)"
    )
    libs = [
        (lib["name"].rsplit("/", 1)[-1], lib["memoryBase"], lib["tableBase"])
        for lib in meta["libs"]
    ]
    print(
        f"Node: boot+imports {meta['bootMs']:.0f} ms, makeMemorySnapshot {meta['makeMs']:.0f} ms, "
        f"libs (name, memory base, table base) {libs}"
    )
    made = results["browser-make"]
    print("\n== browser-made snapshot (after a first boot, kept in Cache Storage)")
    if made.get("error"):
        print("failed:", made["error"])
    else:
        print(
            f"raw {made['bytes'] / 1e6:.1f} MB, makeMemorySnapshot {made['makeMs']:.0f} ms, "
            f"Cache Storage put {made['storeMs']:.0f} ms (boot before it {made['ready']:.0f} ms)"
        )
    nogrow = results["naive-nogrow"]
    print("\n== restore as Pyodide does it (mode naive-nogrow)")
    print("restore:", "ok" if not nogrow.get("error") else nogrow["error"][:300])
    naive = results["naive"]
    print("\n== restore with the memory grown, without relinking (mode naive)")
    print("restore:", "ok" if not naive.get("error") else naive["error"][:400])
    print("check after restore:", naive.get("check") or naive.get("checkError", "")[-600:])
    print("\n== warm boot to 'widget modules imported' (interleaved, one context)")
    timings = results["timings"]
    base = statistics.median(timings["plain"]) if timings["plain"] else float("nan")
    for mode, values in timings.items():
        ratio = statistics.median(values) / base if values else float("nan")
        print(f"{mode:16} {_spread(values)}   x{ratio:.2f} of plain")
    for mode, values in results["restored"].items():
        print(f"  {mode}: loadPyodide(_loadSnapshot) alone {_spread(values)}")
    print(f"  unpack wheels {_spread(results['detail']['unpack'])}")
    print(f"  relink .so    {_spread(results['detail']['relink'])}")
    for mode in timings:
        first = results.get(f"first-{mode}", {})
        print(f"check {mode}: {first.get('check') or first.get('checkError')}")
    if "cpython-conformance" in results:
        cpython = results["cpython-conformance"]
        for mode in timings:
            got = results.get(f"first-{mode}", {}).get("conformance")
            same = got == cpython
            passed = sum(v[0] for v in (got or {}).values())
            why = "" if got else f" ({results.get(f'first-{mode}', {}).get('conformanceError')})"
            print(f"conformance {mode}: {passed} passed, matches CPython: {same}{why}")
        print(f"conformance CPython: {sum(v[0] for v in cpython.values())} passed")
    for failure in results.get("failures", []):
        print("FAILED:", failure.get("mode"), failure.get("error") or failure.get("checkError"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="agentskit-web bench snapshot",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=5, help="warm loads per mode (interleaved)")
    parser.add_argument("--dist", type=Path, default=None, help="a built dist/ (default: ./dist)")
    parser.add_argument("--no-conformance", action="store_true", help="skip the vectors")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args(argv)
    from ..build.files import find_root

    dist = (args.dist or find_root() / "dist").resolve()
    results = run(dist, max(1, args.runs), not args.no_conformance)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0
