// agentskit-ask-snapshot.js: the opt-in boot snapshot of <agentskit-ask snapshot="keep">.
//
// The loader (agentskit-ask.js) imports this module only for an element with the
// attribute, so a page without it loads not one byte of it. In a page it restores a kept
// snapshot (`restoreSnapshot`) and, after a normal boot, has one made (`keepSnapshot`);
// started as a module worker (named SNAPSHOT_WORKER) it makes one. The loader hands it a
// `host`: { assets, base, startPyodide, embedModule, report, say, warn, setState, state,
// idleTimeoutMs } (the worker gets { assets, base, embedModule } in its message).
//
// Once a normal boot is ready and the page is idle, this same file, started as a module
// worker, boots a second Pyodide off the main thread, installs the same packages, imports
// the widget's modules and keeps a memory snapshot of that interpreter in Cache Storage.
// The next page restores it instead of booting: about half the warm boot
// (docs/design/snapshot-boot.md). A snapshot holds linear memory only, so the restore also
// puts back site-packages' files and relinks pydantic-core's library at the addresses the
// snapshot has it at (`relink`); every assumption is checked.
// The entry's key is a hash of every runtime file's and wheel's sha256 (ASSETS.files),
// this format and the browser: a changed runtime or wheel finds no entry and boots
// normally, and the snapshot made then replaces every other entry (one kept at a time).
// A restore that fails for any reason drops the entry, says so once (console.info) and
// boots normally; so does a snapshot that could not be kept (quota, no Cache Storage).
// Before its files are written back, each is checked against the runtime's record of what
// the wheels install (ASSETS.siteRecord, build/site_record.py): a file the wheels do not
// install, or bytes that differ, and the snapshot is refused, dropped and the boot is a
// normal one, said once as a warning (something on the origin rewrote it). The memory
// part cannot be checked so: docs/security.md says what that leaves.
// data-snapshot on the element: none | restored | failed, then making | kept | unavailable.

const SNAPSHOT_CACHE = "agentskit-ask:snapshot";
const SNAPSHOT_WORKER = "agentskit-ask-snapshot";
const SNAPSHOT_FORMAT = 1;
// The most a kept snapshot may take (memory plus files); past it, nothing is stored.
export const SNAPSHOT_MAX_BYTES = 128 * 1024 * 1024;

// Why a snapshot of `bytes` is not kept, or null when it fits.
export function snapshotSizeRefusal(bytes) {
  if (bytes <= SNAPSHOT_MAX_BYTES) return null;
  return `it would take ${(bytes / 2 ** 20).toFixed(0)} MiB, more than ${SNAPSHOT_MAX_BYTES / 2 ** 20}`;
}
const SNAPSHOT_MAKE_TIMEOUT_MS = 180_000;
// A worker's boot and a page's may put a different number of functions in the wasm table
// before any library loads (Node's and Chromium's differ by one); the maker leaves this
// many empty slots so pydantic-core's library sits above what any boot uses.
const SNAPSHOT_TABLE_SLACK = 64;
// What the snapshot holds imported: what a page has imported once the widget is ready and idle.
const snapshotImports = (embedModule) => `import ${embedModule}
from agentskit_web.chat.view.markdown_tree import markdown_parser
markdown_parser()`;
// Why a snapshot's site-packages files are refused, or null when each is one the wheels
// install with the bytes they install. `record` is the runtime's site-packages.json,
// `site` the site-packages folder, `index` the snapshot's [path, size] pairs over `bytes`.
export async function snapshotFilesRefusal(record, site, index, bytes) {
  const files = new Map(Object.entries(record.files));
  const folders = new Set([...files.keys()].map((path) => path.split("/")[0]).filter((top) => top.endsWith(".dist-info")));
  const hashed = []; // [relative path, digest promise]: hashed concurrently, compared in order
  let offset = 0;
  for (const [path, size] of index) {
    const data = bytes.subarray(offset, offset + size);
    offset += size;
    const relative = path.startsWith(`${site}/`) ? path.slice(site.length + 1) : null;
    if (relative === null) return `${path} is outside site-packages`;
    if (files.has(relative)) {
      hashed.push([relative, crypto.subtle.digest("SHA-256", data)]);
      continue;
    }
    // Not in a wheel: only what Pyodide's installer writes into a recorded .dist-info.
    const parts = relative.split("/");
    const metadata = parts.length === 2 && folders.has(parts[0]) && record.installerMetadata.includes(parts[1]);
    if (!metadata) return `${relative} is not installed by the runtime's wheels`;
  }
  if (offset !== bytes.byteLength) return "its files part does not match its index";
  for (const [relative, digest] of hashed) {
    const hex = [...new Uint8Array(await digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
    if (hex !== files.get(relative)) return `${relative} differs from the runtime's wheels`;
  }
  return null;
}

// A snapshot that holds something the runtime did not install: refused, said as a warning.
class RefusedSnapshot extends Error {}

// Run after a restore, before the widget: pydantic-core builds and runs a validator.
const SNAPSHOT_CHECK = "import pydantic_core\nassert pydantic_core.SchemaValidator({'type': 'int'}).validate_python('3') == 3";

async function snapshotKey({ assets: ASSETS }) {
  const files = ASSETS.files.map((file) => [file.name, file.sha256]);
  const material = JSON.stringify([SNAPSHOT_FORMAT, SNAPSHOT_TABLE_SLACK, ASSETS.runtime, ASSETS.packages, files,
    navigator.userAgent]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(material));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("").slice(0, 32);
}

// Cache Storage wants URLs: same-origin ones under this folder that nothing ever fetches.
function snapshotURL(host, key, part) {
  return new URL(`snapshot/${key}/${part}`, host.base).href;
}

async function dropSnapshots() {
  const cache = await caches.open(SNAPSHOT_CACHE);
  for (const request of await cache.keys()) await cache.delete(request);
}

// The page: restore the kept snapshot, or null (none kept for this runtime, or it failed).
export async function restoreSnapshot(host) {
  const { report, say, setState: setSnapshotState } = host;
  if (!globalThis.caches || !globalThis.crypto?.subtle) {
    setSnapshotState("unavailable");
    say("this page has no Cache Storage (it is not a secure context): no boot snapshot is kept.");
    return null;
  }
  let key = null;
  try {
    key = await snapshotKey(host);
    const cache = await caches.open(SNAPSHOT_CACHE);
    const kept = await cache.match(snapshotURL(host, key, "meta"));
    if (!kept) {
      setSnapshotState("none");
      return null;
    }
    report({ starting: true });
    // Pyodide starts (its modules, the lock, the wasm's fetch) while the parts are read:
    // it awaits the memory only before instantiating.
    const parts = readSnapshot(host, cache, key, kept);
    const record = fetch(new URL(host.assets.runtime + host.assets.siteRecord, host.base)).then((response) => {
      if (!response.ok) throw new Error(`the runtime's ${host.assets.siteRecord} answered ${response.status}`);
      return response.json();
    });
    record.catch(() => {}); // awaited below
    parts.catch(() => {}); // awaited below; a failure also rejects loadPyodide
    const memory = parts.then((read) => read.memory);
    const asm = import(new URL(host.assets.runtime + "pyodide.asm.mjs", host.base).href);
    const createPyodideModule = async (settings) => {
      const [{ default: create }, bytes] = await Promise.all([asm, memory]);
      // Pyodide sizes the memory from the snapshot but this build never reads that setting:
      // grow the heap before the restore copies the snapshot in ("offset is out of bounds").
      const heapLength = bytes.byteLength - new DataView(bytes.buffer).getUint32(4, true);
      const module = await create(settings);
      if (module.HEAP8.length < heapLength) module._emscripten_resize_heap(heapLength);
      return module;
    };
    const pyodide = await host.startPyodide({ _loadSnapshot: memory, createPyodideModule });
    performance.mark("agentskit:snapshot-loaded");
    const { meta, files } = await parts;
    const site = pyodide.runPython("import site; site.getsitepackages()[0]");
    const refusal = await snapshotFilesRefusal(await record, site, meta.files, files);
    if (refusal !== null) throw new RefusedSnapshot(refusal);
    performance.mark("agentskit:snapshot-checked");
    putFilesBack(pyodide._module.FS, meta.files, files);
    await relink(pyodide._module, meta);
    performance.mark("agentskit:snapshot-relinked");
    Object.assign(pyodide.loadedPackages, meta.loaded); // what is installed (a later loadPackage skips them)
    pyodide.runPython(SNAPSHOT_CHECK);
    const python = pyodide.pyimport(host.embedModule);
    performance.mark("agentskit:snapshot-restored");
    setSnapshotState("restored");
    return python;
  } catch (error) {
    performance.mark("agentskit:snapshot-failed");
    setSnapshotState("failed");
    if (error instanceof RefusedSnapshot) {
      host.warn(`the kept boot snapshot was refused: ${error.message} (something on this origin changed it); booting normally.`);
    } else {
      say(`the kept boot snapshot could not be restored (${error?.message || error}); booting normally.`);
    }
    if (key) await dropSnapshots().catch(() => {});
    return null;
  }
}

async function readSnapshot(host, cache, key, kept) {
  const [meta, memory, files] = await Promise.all([
    kept.json(),
    ...["memory", "files"].map(async (part) => {
      const response = await cache.match(snapshotURL(host, key, part));
      if (!response) throw new Error(`its ${part} part is missing`);
      return new Uint8Array(await response.arrayBuffer());
    }),
  ]);
  if (meta.format !== SNAPSHOT_FORMAT || memory.byteLength !== meta.memoryBytes ||
      files.byteLength !== meta.filesBytes) {
    throw new Error("it is incomplete or of another format");
  }
  performance.mark("agentskit:snapshot-read"); // the bench splits the restore by these marks
  return { meta, memory, files };
}

function putFilesBack(FS, index, bytes) {
  let offset = 0;
  for (const [path, size] of index) {
    FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    FS.writeFile(path, bytes.subarray(offset, offset + size));
    offset += size;
  }
}

// A snapshot is linear memory only: the wasm table and the dynamic linker's JS state are
// not in it. Instantiate each shared library again at the memory and table addresses it had
// (Emscripten places a library at calloc's block and the table's end), then copy its memory
// region back (instantiating re-ran its initialisers). Anything unexpected throws.
async function relink(M, meta) {
  for (const lib of meta.libs) {
    const binary = M.FS.readFile(lib.name);
    const align = 2 ** M.getDylinkMetadata(binary).memoryAlign;
    if (M.wasmTable.length > lib.tableBase) {
      throw new Error(`the table has ${M.wasmTable.length} slots, ${lib.name} was at ${lib.tableBase}`);
    }
    M.wasmTable.grow(lib.tableBase - M.wasmTable.length);
    const saved = M.HEAPU8.slice(lib.memoryBase, lib.memoryBase + lib.memorySize);
    // Its block is allocated in the restored heap: free it so calloc hands it back. The
    // block starts at most `align` bytes before memoryBase; dlmalloc's size header finds it.
    const request = lib.memorySize + align;
    let block = 0;
    for (let p = lib.memoryBase; p >= lib.memoryBase - align; p -= 8) {
      const size = M.HEAPU32[(p - 4) >>> 2] & ~7;
      if (size >= request && size <= request + 32) {
        block = p;
        break;
      }
    }
    if (!block) throw new Error(`no heap block found for ${lib.name} at ${lib.memoryBase}`);
    M._free(block);
    const handle = M._calloc(32, 1);
    const flags = { loadAsync: true, global: true, nodelete: true, allowUndefined: true };
    const exports = await M.loadWebAssemblyModule(binary, flags, lib.name, {}, handle);
    const placed = [M.HEAPU32[(handle + 12) >>> 2], M.HEAPU32[(handle + 20) >>> 2]];
    M._free(handle);
    if (placed[0] !== lib.memoryBase || placed[1] !== lib.tableBase) {
      throw new Error(`${lib.name} was placed at ${placed.join("/")}, not ${lib.memoryBase}/${lib.tableBase}`);
    }
    M.HEAPU8.set(saved, lib.memoryBase);
    M.mergeLibSymbols(exports, lib.name);
    M.LDSO.loadedLibsByName[lib.name] = { refcount: Infinity, name: lib.name, exports, global: true };
  }
  if (meta.tableLength > M.wasmTable.length) M.wasmTable.grow(meta.tableLength - M.wasmTable.length);
}

// The page, after a normal boot: make a snapshot in a worker once the page is idle.
let making = false;

export function keepSnapshot(host) {
  if (making || !["none", "failed"].includes(host.state())) return;
  making = true;
  const start = () => makeInWorker(host).finally(() => (making = false));
  if ("requestIdleCallback" in globalThis) requestIdleCallback(start, { timeout: host.idleTimeoutMs });
  else setTimeout(start, 0);
}

async function makeInWorker(host) {
  const { say, setState: setSnapshotState } = host;
  setSnapshotState("making");
  let worker = null;
  let timer = 0;
  try {
    const key = await snapshotKey(host);
    worker = new Worker(import.meta.url, { type: "module", name: SNAPSHOT_WORKER });
    const reply = await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error("making it took too long")), SNAPSHOT_MAKE_TIMEOUT_MS);
      worker.addEventListener("message", (event) => resolve(event.data));
      worker.addEventListener("error", (event) => reject(new Error(event.message || "the worker failed")));
      worker.postMessage({ key, assets: host.assets, base: host.base.href, embedModule: host.embedModule });
    });
    if (reply.error) throw new Error(reply.error);
    performance.mark("agentskit:snapshot-kept");
    setSnapshotState("kept");
  } catch (error) {
    setSnapshotState("unavailable");
    say(`no boot snapshot was kept (${error?.message || error}); the next visit boots normally.`);
  } finally {
    clearTimeout(timer);
    worker?.terminate();
  }
}

// The worker: boot, install, import, snapshot, keep; replies { bytes } or { error }.
function serveSnapshotWorker() {
  globalThis.addEventListener("message", async (event) => {
    try {
      const { key, assets, base, embedModule } = event.data;
      const runtime = new URL(assets.runtime, base);
      const startPyodide = async (options) => {
        const { loadPyodide } = await import(new URL("pyodide.mjs", runtime).href);
        const lockFileURL = new URL("pyodide-lock.json", runtime).href;
        return loadPyodide({ indexURL: runtime.href, lockFileURL, ...options });
      };
      const host = { assets, base: new URL(base), embedModule, startPyodide };
      globalThis.postMessage({ bytes: await makeSnapshot(host, String(key)) });
    } catch (error) {
      globalThis.postMessage({ error: `${error?.name || "Error"}: ${error?.message || error}` });
    }
  }, { once: true });
}

async function makeSnapshot(host, key) {
  const ASSETS = host.assets;
  const pyodide = await host.startPyodide({ _makeSnapshot: true });
  const M = pyodide._module;
  M.wasmTable.grow(SNAPSHOT_TABLE_SLACK);
  // Also what the widget installs and imports once ready (markdown): a restored page has it.
  const packages = [...ASSETS.packages, ...(ASSETS.packagesAfterReady || [])];
  await pyodide.loadPackage(packages, { checkIntegrity: true, messageCallback: () => {} });
  pyodide.runPython(snapshotImports(host.embedModule)); // no proxy kept: the snapshot holds no JS value of ours
  const site = pyodide.runPython("import site; site.getsitepackages()[0]");
  const files = collectFiles(M.FS, site);
  // Where each library sits: Emscripten writes it into the dlopen handle in the heap.
  const libs = Object.entries(M.LDSO.loadedLibsByHandle)
    .filter(([handle]) => Number(handle))
    .map(([handle, dso]) => ({
      name: dso.name,
      memoryBase: M.HEAPU32[(Number(handle) + 12) >>> 2],
      memorySize: M.HEAP32[(Number(handle) + 16) >>> 2],
      tableBase: M.HEAPU32[(Number(handle) + 20) >>> 2],
      tableSize: M.HEAP32[(Number(handle) + 24) >>> 2],
    }));
  // makeMemorySnapshot insists that pyodide.loadedPackages is still a fresh boot's {}
  // ("Unexpected hiwire entry at index 6"): empty it meanwhile.
  const loaded = { ...pyodide.loadedPackages };
  for (const name of Object.keys(loaded)) delete pyodide.loadedPackages[name];
  let memory;
  try {
    memory = pyodide.makeMemorySnapshot();
  } finally {
    Object.assign(pyodide.loadedPackages, loaded);
  }
  const bytes = memory.byteLength + files.bytes.byteLength;
  const refusal = snapshotSizeRefusal(bytes);
  if (refusal !== null) throw new Error(refusal);
  const meta = {
    format: SNAPSHOT_FORMAT, libs, loaded, tableLength: M.wasmTable.length, files: files.index,
    memoryBytes: memory.byteLength, filesBytes: files.bytes.byteLength,
  };
  await dropSnapshots(); // one kept at a time, and the old one's room is free for this one
  const cache = await caches.open(SNAPSHOT_CACHE);
  try {
    await cache.put(snapshotURL(host, key, "memory"), new Response(memory));
    await cache.put(snapshotURL(host, key, "files"), new Response(files.bytes));
    await cache.put(snapshotURL(host, key, "meta"), new Response(JSON.stringify(meta))); // last: complete
  } catch (error) {
    await dropSnapshots().catch(() => {});
    throw error;
  }
  return bytes;
}

// site-packages as [path, size] pairs and one buffer: a snapshot holds no files, and lazy
// imports (pydantic's) and the relink read them after a restore.
function collectFiles(FS, root) {
  const index = [];
  const parts = [];
  const walk = (folder) => {
    for (const name of FS.readdir(folder)) {
      if (name === "." || name === "..") continue;
      const path = `${folder}/${name}`;
      const mode = FS.lstat(path).mode;
      if (FS.isDir(mode)) walk(path);
      else if (FS.isFile(mode)) {
        const data = FS.readFile(path);
        index.push([path, data.byteLength]);
        parts.push(data);
      } else throw new Error(`${path} is neither a file nor a folder`);
    }
  };
  walk(root);
  const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return { index, bytes };
}

if (typeof WorkerGlobalScope !== "undefined" && globalThis instanceof WorkerGlobalScope &&
    globalThis.name === SNAPSHOT_WORKER) {
  serveSnapshotWorker();
}
