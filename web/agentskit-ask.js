// agentskit-ask.js: the whole embed of the agentskit-web Ask widget.
//
//   <script type="module" src="/any/path/agentskit-ask.js"></script>
//   <agentskit-ask endpoint="/api/ask"></agentskit-ask>
//
// This file defines <agentskit-ask>, draws its shell (heading, question box, Send,
// status line) in a shadow root, and loads nothing else until a reader shows intent
// (pointer over or focus on the box, a tap, a key in the box, Ctrl/Cmd-K). Then it
// downloads the Python runtime from the folder beside it (every path resolves against
// this file's own URL, so the folder works at any depth and under any base path),
// starts Pyodide itself and hands each element to the Python widget. A question asked
// before Python is ready is kept and sent once it is. Nothing here evaluates strings as
// code or writes HTML: the page can run it under `script-src 'self' 'wasm-unsafe-eval'`.
//
// `agentskit-web assets` writes the ASSETS line below (content-hashed names, sizes).

const ASSETS = /* agentskit:assets */ null;

const ELEMENT = "agentskit-ask";
const BASE = new URL(".", import.meta.url);
const SHARED_KEY = Symbol.for("agentskit-ask");
const BOOT_MODES = ["intent", "idle", "eager"];
const LAYOUTS = ["inline", "launcher"];
const POSITIONS = ["bottom-right", "bottom-left"];
const BOOT_TIMEOUT_MS = 180_000;
const IDLE_TIMEOUT_MS = 5_000;
const STRING_MAX_CHARS = 200;
const DEFAULT_STRINGS = Object.freeze({
  heading: "Ask the docs",
  placeholder: "Ask a question about these docs",
  label: "Your question",
  send: "Send",
  launcher: "Ask",
  close: "Close",
  idle: "Ask a question about these docs.",
  loading: "Loading the assistant: {done} of {total} MB…",
  starting: "Starting the assistant…",
  kept: "Your question is kept and will be sent as soon as the assistant is ready.",
  failed: "The assistant could not start.",
  retry: "Retry",
  waiting: "your conversation is waiting",
  glance: "Your last conversation",
  intro: "Ask in your own words. Answers come from these docs, with a link to each section they use.",
});

// One runtime per page, even if two copies of this loader (two URLs) are on it.
const shared = (globalThis[SHARED_KEY] ??= {
  runtime: null,
  python: null,
  elements: new Set(),
  warned: new Set(),
  keyboard: false,
});

class BootError extends Error {}

function warnOnce(key, message, say = console.warn) {
  if (shared.warned.has(key)) return;
  shared.warned.add(key);
  say(`agentskit-ask: ${message}`);
}

function choice(element, name, allowed) {
  const value = element.getAttribute(name);
  if (value === null || value === "") return allowed[0];
  const lower = value.trim().toLowerCase();
  if (allowed.includes(lower)) return lower;
  warnOnce(`${name}=${value}`, `${name}="${value}" is not one of ${allowed.join("|")}; using "${allowed[0]}".`);
  return allowed[0];
}

function stringsOf(element) {
  const raw = element.getAttribute("strings");
  if (raw === null || raw === "") return DEFAULT_STRINGS;
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = null;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    warnOnce(`strings=${raw}`, "the strings attribute is not a JSON object; using the built-in strings.");
    return DEFAULT_STRINGS;
  }
  const strings = { ...DEFAULT_STRINGS };
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value === "string" && value.trim() && value.length <= STRING_MAX_CHARS) {
      if (key in DEFAULT_STRINGS) strings[key] = value;
    } else {
      warnOnce(`strings.${key}`, `strings.${key} must be a non-blank string of at most ${STRING_MAX_CHARS} characters; ignored.`);
    }
  }
  return Object.freeze(strings);
}

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (match, name) => (name in values ? String(values[name]) : match));
}

function make(tag, attributes = {}, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// ---------------------------------------------------------------- the runtime

function runtimeURL(name) {
  if (!ASSETS) throw new BootError("this copy of agentskit-ask.js was not built (run `agentskit-web assets`).");
  return new URL(ASSETS.runtime + name, BASE);
}

async function download(url, onBytes) {
  let response;
  try {
    response = await fetch(url, { credentials: "same-origin" });
  } catch (error) {
    throw new BootError(`Could not load ${url.href} (${error.message || "network error"}).`);
  }
  if (!response.ok) throw new BootError(`Could not load ${url.href} (HTTP ${response.status}).`);
  if (!response.body) {
    onBytes((await response.arrayBuffer()).byteLength);
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onBytes(value.byteLength);
  }
}

// A first boot: Pyodide fetches its own files (its module, the wasm, which compiles while
// it streams, the standard library and the lock) while the loader fetches the wheels in
// parallel, counting their bytes as they arrive; Pyodide's files count as each completes.
// Every file is fetched once: a second request for a file Pyodide is loading would wait
// on the browser's cache lock and hold up the wasm compile. The wheels are installed once
// all are in, from the HTTP cache, so a missing file is reported once, by URL.
async function startRuntime(report, snapshot) {
  if (snapshot) {
    const restored = await restoreSnapshot(report); // null: none kept, or it failed (said once)
    if (restored) return restored;
  }
  if (fetchedBefore()) return startFromCache(report);
  const files = ASSETS ? ASSETS.files : [];
  const total = files.reduce((sum, file) => sum + file.size, 0);
  let done = 0;
  const count = (bytes) => {
    done += bytes;
    report({ done: Math.min(done, total), total });
  };
  count(0);
  const wheels = files.filter((file) => file.name.endsWith(".whl"));
  const watch = watchRuntime(files.filter((file) => !wheels.includes(file)), count);
  let fetched, booted;
  try {
    const started = Promise.race([startPyodide(), watch.failed]);
    const downloads = Promise.all(wheels.map((file) => download(runtimeURL(file.name), count)));
    [fetched, booted] = await Promise.allSettled([downloads, started]);
  } finally {
    watch.stop();
  }
  if (fetched.status === "rejected") throw fetched.reason;
  if (booted.status === "rejected") throw booted.reason;
  report({ starting: true });
  const python = await installPackages(booted.value);
  rememberFetched();
  return python;
}

// Watches the runtime files Pyodide fetches itself (Resource Timing): `count` gets each
// one's size when it has arrived, and `failed` rejects, naming the file, as soon as one
// comes back with an HTTP error. Pyodide would wait forever on a missing wasm.
function watchRuntime(files, count = () => {}) {
  const sizes = new Map(files.map((file) => [runtimeURL(file.name).href, file.size]));
  const folder = runtimeURL("").href;
  let fail;
  const failed = new Promise((_, reject) => (fail = reject));
  failed.catch(() => {}); // only ever awaited in a race
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (!entry.name.startsWith(folder)) continue;
      if (entry.responseStatus >= 400) {
        fail(new BootError(`Could not load ${entry.name} (HTTP ${entry.responseStatus}).`));
      } else if (sizes.has(entry.name)) {
        count(sizes.get(entry.name));
        sizes.delete(entry.name);
      }
    }
  });
  observer.observe({ type: "resource" }); // only files fetched from now on (not a past try's)
  return { failed, stop: () => observer.disconnect() };
}

// This browser fetched this runtime whole before (its folder name is a content hash),
// so every file is in the HTTP cache: reading each body again only to count bytes
// would slow the boot, and the loader starts Pyodide straight away. If that fails
// (the cache was cleared and a file is gone), the mark is dropped and Retry takes the
// full path, which names the file that broke.
async function startFromCache(report) {
  report({ starting: true });
  const watch = watchRuntime([]);
  try {
    const started = startPyodide({ packages: ASSETS.packages }); // fetched while it starts
    return await installPackages(await Promise.race([started, watch.failed]));
  } catch (error) {
    forgetFetched();
    throw error;
  } finally {
    watch.stop();
  }
}

// A later boot has given loadPyodide the packages, as a bare page with `packages` does: it
// fetches them from the cache while the interpreter starts and installs them after its
// bootstrap, logging a failure and going on. loadPackage here then finds them installed, or
// tries once more; a package still missing is an error (the first boot's path, which fetches
// the wheels itself, names the file).
async function installPackages(pyodide) {
  bootStep("interpreter");
  await yieldToPage();
  await pyodide.loadPackage(ASSETS.packages, { checkIntegrity: true });
  const missing = ASSETS.packages.filter((name) => !(name in pyodide.loadedPackages));
  if (missing.length) throw new BootError(`Could not install ${missing.join(", ")}.`);
  bootStep("packages");
  await importInSlices(pyodide);
  bootStep("imported");
  return pyodide.pyimport(EMBED_MODULE);
}

// ---------------------------------------------------------------- boot in slices
// Starting Python is a chain of synchronous steps; run back to back they make main-thread
// tasks of hundreds of ms on a phone. Each step below ends its task (a macrotask yield) so
// input and paint run between them (docs/design/boot-long-tasks.md has the measurements).

const SLICE_BUDGET_MS = 25;

// A performance mark per boot step (`agentskit:boot:<step>`): what the `boot` bench uses to
// say which step each long task of the boot belongs to.
function bootStep(name) {
  performance.mark(`agentskit:boot:${name}`);
}

// Ends the current task: scheduler.yield() where there is one (it resumes ahead of other
// queued work), else a zero-delay timeout.
function yieldToPage() {
  if (globalThis.scheduler?.yield) return globalThis.scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// Pyodide's hooks around its own synchronous steps: `fsInit` runs once the wasm is
// instantiated, before the interpreter starts; the module factory resolves once the
// interpreter has started, before Pyodide bootstraps its Python side. Each yields.
function slicedStart(options) {
  return {
    fsInit: async () => {
      bootStep("instantiated");
      await yieldToPage();
    },
    createPyodideModule: async (settings) => {
      const { default: create } = await import(runtimeURL("pyodide.asm.mjs").href);
      const module = await create(settings);
      bootStep("interpreter-started");
      await importBootstrapModules(settings.API);
      return module;
    },
    ...options,
  };
}

// Pyodide's bootstrap (`finalizeBootstrap`, one synchronous call of hundreds of ms) imports
// its own Python core, then `pyodide`, whose package loader and event loop import much of
// the standard library. Imported here first, in slices, it finds them loaded. `rawRun` is
// Pyodide's internal runner (PyRun_SimpleString, not a JS eval); where a version lacks it,
// or an import fails, the bootstrap imports them itself as before. `__import__(…)` binds no
// name in __main__. Only modules that need nothing the bootstrap sets up later (the `js`
// module) are listed, leaves first: `_pyodide._core_docs` alone pulls in 53 modules and
// `_pyodide_core` 79 (asyncio, ssl, subprocess, ...), so naming those two first made each one
// task (about 250 ms at 4x CPU); below, no step loads more than asyncio's own modules.
const BOOTSTRAP_IMPORTS = [
  "re", "enum", "functools", "collections", "types", "typing", "ast", "tokenize", "dis",
  "inspect", "json", "textwrap", "weakref", "copy", "warnings", "importlib.util",
  "importlib.abc", "importlib.machinery", "contextlib", "dataclasses", "logging", "traceback",
  "socket", "ssl", "selectors", "subprocess", "threading", "concurrent.futures", "signal",
  "base64", "pathlib", "glob", "fnmatch", "asyncio", "_pyodide._core_docs", "_pyodide._base",
  "_pyodide._importhook", "_pyodide_core", "importlib", "shutil", "zipfile", "tarfile",
];

async function importBootstrapModules(api) {
  if (typeof api?.rawRun !== "function") return;
  await inSlices(BOOTSTRAP_IMPORTS.map((name) => () => api.rawRun(`__import__("${name}")`)));
}

// Runs the steps in order, ending the task whenever a slice has run SLICE_BUDGET_MS, and
// once after the last, so what follows starts a task of its own.
async function inSlices(steps) {
  await yieldToPage();
  let since = performance.now();
  for (const step of steps) {
    if (performance.now() - since >= SLICE_BUDGET_MS) {
      await yieldToPage();
      since = performance.now();
    }
    step();
  }
  await yieldToPage();
}

// The widget's imports one module at a time (browser/boot_imports.py lists them, leaves
// first; then, on a site with a static index, the static answers' own): one import of
// the embed module would be one task as long as all of them. The list is a hint: a name
// that fails here fails again, and is reported, in the embed's import.
async function importInSlices(pyodide) {
  const order = pyodide.pyimport(BOOT_IMPORTS_MODULE);
  const names = order.BOOT_IMPORTS.toJs();
  // A site with a static index: its answers adapter and search, which the mount imports.
  if (staticIndexURL()) names.push(...order.STATIC_ANSWERS_IMPORTS.toJs());
  order.destroy();
  const tryImport = (name) => () => {
    try {
      pyodide.pyimport(name).destroy();
    } catch {}
  };
  await inSlices(names.map(tryImport));
}

const BOOT_IMPORTS_MODULE = "agentskit_web.browser.boot_imports";
// ---------------------------------------------------------------- end of boot in slices

const EMBED_MODULE = "agentskit_web.browser.embed";

const FETCHED_KEY = "agentskit-ask:runtime-fetched";

function fetchedBefore() {
  try {
    return Boolean(ASSETS) && localStorage.getItem(FETCHED_KEY) === ASSETS.runtime;
  } catch {
    return false; // storage blocked: take the full path
  }
}

function rememberFetched() {
  try {
    localStorage.setItem(FETCHED_KEY, ASSETS.runtime);
  } catch {} // storage full or blocked: the next boot counts bytes again, nothing else
}

function forgetFetched() {
  try {
    localStorage.removeItem(FETCHED_KEY);
  } catch {}
}

async function startPyodide(options = {}) {
  let loadPyodide;
  const entry = runtimeURL("pyodide.mjs");
  try {
    ({ loadPyodide } = await import(entry.href));
  } catch (error) {
    throw new BootError(`Could not load ${entry.href} (${error.message}).`);
  }
  bootStep("runtime-module");
  return loadPyodide({
    indexURL: runtimeURL("").href,
    lockFileURL: runtimeURL("pyodide-lock.json").href,
    ...slicedStart(options),
  });
}

function runtime(report, snapshot = false) {
  if (!shared.runtime) {
    shared.runtime = startRuntime(report, snapshot).then(
      (python) => (shared.python = python),
      (error) => {
        shared.runtime = null; // a Retry starts over
        throw error;
      },
    );
  }
  return shared.runtime;
}

function onPageKey(event) {
  if (event.key.toLowerCase() !== "k" || !(event.ctrlKey || event.metaKey) || event.altKey) return;
  const first = [...shared.elements].find((element) => element.isConnected);
  if (!first) return;
  event.preventDefault();
  first.open();
}

// ---------------------------------------------------------------- offline cache (opt-in)
// <agentskit-ask offline="cache">: once the runtime has booted, register the service
// worker shipped beside this file (agentskit-ask-sw.js). It precaches the runtime (from
// the HTTP cache: nothing is downloaded twice) and keeps this page, this loader, the
// knowledge file and the page's same-origin stylesheets and icons, so the page reopens
// and boots with the network off. Its scope is the folder above the assets folder (the
// site root when the folder is /agentskit/), or `offline-scope`; a scope wider than the
// assets folder needs the `Service-Worker-Allowed` header on the worker (our servers
// send it; docs/embedding.md says how on other hosts). data-offline on the element
// ends as "ready" (everything stored) or "error" (said once in the console).

const OFFLINE_MODES = ["none", "cache"];

function activated(registration) {
  if (registration.active) return Promise.resolve(registration.active);
  const worker = registration.installing || registration.waiting;
  return new Promise((resolve, reject) => {
    worker.addEventListener("statechange", () => {
      if (worker.state === "activated") resolve(worker);
      else if (worker.state === "redundant") reject(new Error("the service worker failed to install"));
    });
  });
}

function keptURLs(element) {
  const urls = [location.href, import.meta.url, ...fetchedIndexFiles()];
  const knowledge = element.getAttribute("knowledge");
  if (knowledge) urls.push(new URL(knowledge, document.baseURI).href);
  for (const link of document.querySelectorAll('link[rel~="stylesheet"][href], link[rel~="icon"][href]')) {
    urls.push(link.href);
  }
  return urls.filter((url) => new URL(url).origin === location.origin);
}

// An index file whose fetch had not ended when the keep message was made, and that did
// not pass through the worker (the page was not yet its client: Resource Timing's
// workerStart is 0), is handed to the worker once it ends, as the first ones were.
function keepLateIndexFiles(worker, message) {
  const url = staticIndexURL();
  if (!url || typeof PerformanceObserver !== "function") return;
  const folder = new URL(".", url).href;
  const handed = new Set(message.urls);
  new PerformanceObserver((entries) => {
    const late = entries
      .getEntries()
      .filter((entry) => entry.name.startsWith(folder) && entry.workerStart === 0 && !handed.has(entry.name))
      .map((entry) => entry.name);
    if (late.length === 0) return;
    for (const name of late) handed.add(name);
    worker.postMessage({ ...message, urls: late }, [new MessageChannel().port2]);
  }).observe({ type: "resource" });
}

async function keepOffline(element) {
  if (choice(element, "offline", OFFLINE_MODES) !== "cache" || element.dataset.offline) return;
  element.dataset.offline = "pending";
  try {
    if (!("serviceWorker" in navigator)) throw new Error("this browser has no service workers here");
    const custom = element.getAttribute("offline-scope");
    const scope = custom ? new URL(custom, document.baseURI) : new URL("../", BASE);
    const registration = await navigator.serviceWorker.register(new URL(ASSETS.serviceWorker, BASE).href, {
      scope: scope.href,
    });
    const worker = await activated(registration);
    const reply = await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = (event) => resolve(event.data);
      // scopePages: the site named a scope, so every page under it may be kept.
      const message = { type: "agentskit:keep", urls: keptURLs(element), scopePages: Boolean(custom) };
      keepLateIndexFiles(worker, message);
      worker.postMessage(message, [channel.port2]);
    });
    if (reply.error || reply.missing.length || reply.failed.length) {
      throw new Error(reply.error || `not stored: ${[...reply.missing, ...reply.failed].join(", ")}`);
    }
    if ((reply.refused || []).includes(location.href.split("#")[0])) {
      // The page says it is private (Cache-Control private/no-store or Vary: Cookie).
      element.dataset.offline = "private";
      warnOnce("offline", "this page is marked private by its server, so it is not kept offline.");
      return;
    }
    element.dataset.offline = "ready";
  } catch (error) {
    element.dataset.offline = "error";
    warnOnce("offline", `the offline cache could not be set up (${error.message || error}).`);
  }
}
// ---------------------------------------------------------------- end of the offline cache

// ---------------------------------------------------------------- boot snapshot (opt-in)
// <agentskit-ask snapshot="keep">: restore the booted Python from a snapshot kept in this
// browser, and have one made after a normal boot. All of it is agentskit-ask-snapshot.js
// (ASSETS.snapshot), imported only for an element with the attribute; if it cannot load,
// the boot is a normal one. data-snapshot on the element says what happened.

const SNAPSHOT_MODES = ["none", "keep"];

function snapshotHost(report = () => {}) {
  return {
    assets: ASSETS,
    base: BASE,
    startPyodide,
    embedModule: EMBED_MODULE,
    report,
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    say: (message) => warnOnce("snapshot", message, console.info), // a fallback is no page error
    warn: (message) => warnOnce("snapshot", message), // a refused (rewritten) snapshot: console.warn
    state: () => shared.snapshotState,
    setState(state) {
      shared.snapshotState = state;
      for (const element of shared.elements) {
        if (element.getAttribute("snapshot") === "keep") element.dataset.snapshot = state;
      }
    },
  };
}

async function snapshotModule(host) {
  try {
    return await (shared.snapshotModule ??= import(new URL(ASSETS.snapshot, BASE).href));
  } catch (error) {
    host.setState("unavailable");
    host.say(`the boot snapshot's module did not load (${error?.message || error}); booting normally.`);
    return null;
  }
}

async function restoreSnapshot(report) {
  const host = snapshotHost(report);
  const module = await snapshotModule(host);
  return module ? module.restoreSnapshot(host) : null;
}

function keepSnapshot() {
  if (!["none", "failed"].includes(shared.snapshotState)) return;
  const host = snapshotHost();
  snapshotModule(host).then((module) => module?.keepSnapshot(host));
}
// ---------------------------------------------------------------- end of the boot snapshot

// ---------------------------------------------------------------- static answers
// A site built with the MkDocs plugin or the Sphinx extension publishes its search index
// split into content-hashed files beside these assets, and the build writes the
// manifest's path (relative to this file) into STATIC_INDEX below. An <agentskit-ask>
// without `endpoint` then answers in the page from that index (no server needed); with
// an `endpoint`, the backend answers and the index is its fallback. The manifest is
// fetched when a reader shows intent, while the runtime boots, so the first question
// does not wait for it (the page's Python asks for the same URL and gets the cached copy).

const STATIC_INDEX = /* agentskit:static-index */ null;

// The build writes a plain relative path; a path that leaves this folder (`//host/x`,
// `/x`, `../x`) is refused here too, so the page never fetches an index from elsewhere.
function staticIndexURL() {
  if (!STATIC_INDEX) return null;
  const url = new URL(STATIC_INDEX, BASE);
  return url.origin === BASE.origin && url.href.startsWith(BASE.href) ? url : null;
}

// What answers this element: "static" without an endpoint when an index is published,
// else "backend" (the Python widget sets the same value once it has mounted).
function answersOf(element) {
  const protocol = (element.getAttribute("protocol") || "ask").trim().toLowerCase();
  const named = (element.getAttribute("endpoint") || "").trim() !== "";
  return staticIndexURL() && protocol !== "turn" && !named ? "static" : "backend";
}

function prefetchStaticIndex(element) {
  const url = staticIndexURL();
  if (!url || shared.indexPrefetch || answersOf(element) !== "static") return;
  shared.indexPrefetch = fetch(url, { credentials: "same-origin", cache: "force-cache" }).then(
    (response) => response.arrayBuffer(), // read whole, so the HTTP cache holds it
    () => null, // offline: the widget says so when a question needs it
  );
}

// The index files this page fetched so far (Resource Timing): the offline cache keeps them.
function fetchedIndexFiles() {
  const url = staticIndexURL();
  if (!url) return [];
  const folder = new URL(".", url).href;
  return performance
    .getEntriesByType("resource")
    .map((entry) => entry.name)
    .filter((name) => name.startsWith(folder));
}
// ---------------------------------------------------------------- end of static answers

// ---------------------------------------------------------------- the glance (no Python)
// A returning reader's page costs what a first visit costs until they reach for the box:
// nothing of the runtime loads before intent. Their conversation is still shown at once,
// from the glance the Python widget keeps beside it (chat/memory/glance.py): a bounded
// JSON value of plain text, read here, validated whole (anything else is ignored), and
// painted with textContent only. When Python mounts on intent, the full conversation
// replaces it. The key and storage area follow widget_config.py: storage-key, else
// agentskit:ask:<chat-id>, plus ":glance"; storage="session" reads sessionStorage and
// storage="none" keeps nothing.

const GLANCE_SUFFIX = ":glance";
const GLANCE_VERSION = 1;
const GLANCE_MAX_CHARS = 8_192; // as chat/memory/glance.py
const GLANCE_TURNS = 3;
const GLANCE_QUESTION_MAX_CHARS = 300;
const GLANCE_ANSWER_MAX_CHARS = 600;

function glanceArea(element) {
  const storage = (element.getAttribute("storage") || "local").trim().toLowerCase();
  if (storage === "none") return null;
  try {
    return storage === "session" ? sessionStorage : localStorage;
  } catch {
    return null; // storage blocked: nothing kept, nothing shown
  }
}

/** The stored glance as [{q, a}], or null when there is none or it is not a valid one. */
function readGlance(element) {
  const key =
    (element.getAttribute("storage-key") || `agentskit:ask:${element.getAttribute("chat-id") || "ask"}`) +
    GLANCE_SUFFIX;
  let raw = null;
  try {
    raw = glanceArea(element)?.getItem(key) ?? null;
  } catch {
    return null;
  }
  if (typeof raw !== "string" || raw.length > GLANCE_MAX_CHARS) return null;
  let value;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  const turns = value?.turns;
  if (value?.v !== GLANCE_VERSION || !Array.isArray(turns) || !turns.length || turns.length > GLANCE_TURNS) {
    return null;
  }
  const valid = turns.every(
    (turn) =>
      typeof turn?.q === "string" && turn.q.trim() && turn.q.length <= GLANCE_QUESTION_MAX_CHARS &&
      typeof turn.a === "string" && turn.a.length <= GLANCE_ANSWER_MAX_CHARS,
  );
  return valid ? turns.map((turn) => ({ q: turn.q, a: turn.a })) : null;
}

/** The glance as a log of plain-text messages (the widget's own message classes). */
function glanceLog(turns, strings) {
  const log = make("div", { class: "ak-log ak-glance", role: "log", "aria-label": strings.glance, tabindex: "0" });
  for (const turn of turns) {
    const question = make("article", { class: "ak-message ak-user", dir: "auto" });
    question.append(make("p", { class: "ak-user-text" }, turn.q));
    log.append(question);
    if (turn.a) {
      const answer = make("article", { class: "ak-message ak-assistant", dir: "auto" });
      answer.append(make("p", { class: "ak-plain" }, turn.a));
      log.append(answer);
    }
  }
  return log;
}
// ---------------------------------------------------------------- end of the glance

/** A left click without a modifier key: the link opens here, not in a new tab or window. */
function plainClick(event) {
  return event.button === 0 && !(event.metaKey || event.ctrlKey || event.shiftKey || event.altKey);
}

/** Whether the link goes to a section of this very page (same origin, path and query; an
 * anchor) in this tab. A folder's path and its index.html are one page (the index cites
 * `/`, a reader may be on `/index.html`). */
function samePageAnchor(link) {
  if (!link.href || (link.target && link.target !== "_self")) return false;
  const to = new URL(link.href, location.href);
  const page = (url) => url.origin + url.pathname.replace(/\/index\.html$/, "/") + url.search;
  return Boolean(to.hash) && page(to) === page(location);
}

// ---------------------------------------------------------------- the page's theme
// On a documentation theme with its own light/dark switch the box follows the switch,
// not only prefers-color-scheme: MkDocs Material writes data-md-color-scheme on <body>
// ("slate" is dark), Furo writes data-theme ("dark", "light" or "auto"), pydata-sphinx-theme
// writes data-theme on <html> ("dark" or "light", resolved from its mode). The loader
// mirrors it as data-page-scheme on each element; the stylesheet picks the palette
// from it unless the element's theme attribute names light or dark.

function pageScheme() {
  const body = document.body;
  if (!body) return "";
  const material = body.getAttribute("data-md-color-scheme");
  if (material) return material === "slate" ? "dark" : "light";
  // Furo on <body> ("auto" too: then the system decides), pydata-sphinx-theme on <html>.
  for (const scheme of [body.getAttribute("data-theme"), document.documentElement.getAttribute("data-theme")]) {
    if (scheme === "dark" || scheme === "light") return scheme;
  }
  return "";
}

function followPageScheme() {
  const apply = () => {
    const scheme = pageScheme();
    for (const element of shared.elements) {
      if (scheme) element.dataset.pageScheme = scheme;
      else delete element.dataset.pageScheme;
    }
  };
  apply();
  if (shared.schemeObserver || !document.body) return;
  shared.schemeObserver = new MutationObserver(apply);
  const watched = { attributes: true, attributeFilter: ["data-md-color-scheme", "data-theme"] };
  shared.schemeObserver.observe(document.body, watched);
  shared.schemeObserver.observe(document.documentElement, watched);
}
// ---------------------------------------------------------------- end of the page's theme

// ---------------------------------------------------------------- the element

class AskElement extends HTMLElement {
  #parts = null;
  #pending = null;
  #mounting = false;
  #watchdog = 0;
  #strings = DEFAULT_STRINGS;
  #layout = "inline";
  #returnFocus = null;
  #progressText = "";

  connectedCallback() {
    shared.elements.add(this);
    if (!shared.keyboard) {
      shared.keyboard = true;
      document.addEventListener("keydown", onPageKey);
    }
    if (this.shadowRoot) return; // moved within the page: already drawn
    if (this.#moveInto()) return; // connected again where the site asked
    this.#strings = stringsOf(this);
    this.#layout = choice(this, "layout", LAYOUTS);
    choice(this, "position", POSITIONS); // said once if unknown; the stylesheet places it
    this.#draw();
    followPageScheme();
    this.dataset.answers = answersOf(this);
    this.#setState("idle", this.#strings.idle);
    if (!performance.getEntriesByName("agentskit:shell").length) {
      performance.mark("agentskit:shell");
      requestAnimationFrame(() => setTimeout(() => performance.mark("agentskit:shell-painted")));
    }
    if (shared.python) {
      this.#start(); // the runtime is already here (an element added later)
      return;
    }
    const mode = choice(this, "boot", BOOT_MODES);
    if (mode === "eager") this.#start();
    else if (mode === "idle") this.#whenIdle();
    else this.#onIntent(); // a saved conversation shows as its glance: no boot before intent
  }

  // into="#selector" (the inline layout's placement in an element the site names): the
  // element moves itself there once; a selector that finds nothing leaves it where it is.
  #moveInto() {
    const selector = this.getAttribute("into");
    if (!selector || this.dataset.placed !== undefined) return false;
    this.dataset.placed = "";
    let target = null;
    try {
      target = document.querySelector(selector);
    } catch {} // not a selector: said below
    if (!target || target.contains(this)) {
      if (!target) warnOnce(`into=${selector}`, `into="${selector}" matches no element; the box stays where it is.`);
      return false;
    }
    target.append(this);
    return true;
  }

  disconnectedCallback() {
    shared.elements.delete(this);
  }

  /** Open the box and focus the question (Ctrl/Cmd-K, the launcher button). */
  open() {
    const { dialog, launcher } = this.#parts;
    if (launcher) delete launcher.dataset.waiting; // seen: the dot has said what it had to
    if (dialog && !dialog.open) {
      this.#returnFocus = document.activeElement;
      dialog.showModal();
    }
    prefetchStaticIndex(this);
    this.#start();
    if (this.dataset.mounted !== undefined) {
      this.dispatchEvent(new CustomEvent("agentskit:open"));
    } else {
      (this.shadowRoot.querySelector(".ak-input") || launcher)?.focus();
    }
  }

  /** Close the launcher's dialog (focus returns to where it was); inline boxes stay. */
  close() {
    const { dialog, launcher } = this.#parts;
    if (dialog?.open) dialog.close();
    const target = this.#returnFocus;
    this.#returnFocus = null;
    (target?.isConnected ? target : launcher)?.focus();
  }

  #draw() {
    const root = this.attachShadow({ mode: "open" });
    const strings = this.#strings;
    const sheet = make("link", { rel: "stylesheet", class: "ak-stylesheet" });
    sheet.href = ASSETS ? new URL(ASSETS.stylesheet, BASE).href : "";
    const box = make("div", { class: "ak-box" });
    box.hidden = true; // shown once styled, so the shell never flashes unstyled
    const show = () => {
      box.hidden = false;
      if (this.dataset.glance === "painted") requestAnimationFrame(() => setTimeout(() => performance.mark("agentskit:glance-painted")));
    };
    sheet.addEventListener("load", show, { once: true });
    sheet.addEventListener("error", show, { once: true });
    const shell = make("section", { class: "ak-widget ak-shell", "aria-labelledby": "ak-heading" });
    const header = make("header", { class: "ak-header" });
    header.append(make("h2", { class: "ak-heading", id: "ak-heading" }, strings.heading));
    const form = make("form", { class: "ak-form", "aria-label": strings.heading });
    const input = make("textarea", {
      class: "ak-input",
      rows: "1",
      name: "question",
      autocomplete: "off",
      placeholder: strings.placeholder,
      "aria-label": strings.label,
    });
    const send = make("button", { type: "submit", class: "ak-send" }, strings.send);
    form.append(input, send);
    const status = make("p", { class: "ak-status", role: "status", "aria-live": "polite" });
    const progress = make("progress", { class: "ak-progress", "aria-hidden": "true" });
    progress.hidden = true;
    const failure = make("div", { class: "ak-error", role: "alert" });
    failure.hidden = true;
    const message = make("p", { class: "ak-error-message" });
    const retry = make("button", { type: "button", class: "ak-retry" }, strings.retry);
    failure.append(message, retry);
    const glance = readGlance(this);
    if (glance) shell.append(header, glanceLog(glance, strings), form, status, progress, failure);
    else shell.append(header, make("p", { class: "ak-intro" }, strings.intro), form, status, progress, failure);
    let dialog = null;
    let launcher = null;
    if (this.#layout === "launcher") {
      launcher = make("button", {
        type: "button",
        class: "ak-launcher",
        "aria-haspopup": "dialog",
        "aria-keyshortcuts": "Control+K Meta+K",
      }, strings.launcher);
      const mac = /Mac|iPhone|iPad/.test(navigator.platform);
      launcher.append(make("kbd", { "aria-hidden": "true" }, mac ? "⌘ K" : "Ctrl K"));
      if (glance) {
        launcher.dataset.waiting = "";
        launcher.append(make("span", { class: "ak-visually-hidden" }, ` (${strings.waiting})`));
      }
      dialog = make("dialog", { class: "ak-dialog", "aria-labelledby": "ak-heading" });
      const close = make("button", { type: "button", class: "ak-quiet ak-close" }, strings.close);
      header.append(close);
      close.addEventListener("click", () => this.close());
      dialog.addEventListener("close", () => this.#returnFocus?.isConnected && this.#returnFocus.focus());
      // Esc closes the dialog even on a page whose own keydown handler prevents the default
      // (Furo's does, at the document, which would cancel the dialog's own Esc); the page's
      // handler does not see an Esc that was meant for the dialog.
      dialog.addEventListener("keydown", (event) => {
        if (event.key !== "Escape" || event.isComposing || !dialog.open) return;
        event.preventDefault();
        event.stopPropagation();
        this.close();
      });
      // A link to the page the reader is on (same path, only the anchor differs: a source
      // on this page) closes the dialog first, so the reader sees the section the browser
      // then scrolls to instead of the box still covering it.
      dialog.addEventListener("click", (event) => {
        if (event.defaultPrevented || !plainClick(event)) return;
        const link = event.composedPath().find((node) => node instanceof HTMLAnchorElement);
        if (link && samePageAnchor(link)) this.close();
      });
      dialog.append(box);
      box.append(shell);
      launcher.addEventListener("click", () => this.open());
      root.append(sheet, launcher, dialog);
    } else {
      box.append(shell);
      root.append(sheet, box);
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#submit();
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.#submit();
      }
    });
    retry.addEventListener("click", () => this.#start(true));
    this.#parts = { box, shell, input, status, progress, failure, message, dialog, launcher };
    if (glance) this.dataset.glance = "painted"; // tests and the bench read it
  }

  #onIntent() {
    const start = () => {
      prefetchStaticIndex(this); // intent only: boot="idle"/"eager" fetch no index early
      this.#start();
    };
    for (const name of ["pointerenter", "focusin", "touchstart", "keydown"]) {
      this.addEventListener(name, start, { once: true, passive: true });
    }
  }

  #whenIdle() {
    const start = () => this.#start();
    const later = () =>
      "requestIdleCallback" in window
        ? requestIdleCallback(start, { timeout: IDLE_TIMEOUT_MS })
        : setTimeout(start, 0);
    if (document.readyState === "complete") later();
    else addEventListener("load", later, { once: true });
  }

  #submit() {
    const { input, status } = this.#parts;
    const question = input.value.trim();
    if (!question || this.dataset.mounted !== undefined) return;
    this.#pending = question;
    input.readOnly = true;
    if (this.#progressText) this.#say(this.#progressText);
    else status.textContent = this.#strings.kept;
    prefetchStaticIndex(this);
    this.#start();
  }

  #setState(state, text) {
    this.dataset.state = state;
    this.setAttribute("aria-busy", String(state === "booting"));
    if (text !== undefined && this.#parts) this.#parts.status.textContent = text;
  }

  #report(step) {
    if (this.dataset.state !== "booting" || this.dataset.mounted !== undefined) return;
    const { status, progress } = this.#parts;
    if (step.starting) {
      progress.removeAttribute("value");
      this.#say(this.#strings.starting);
      return;
    }
    progress.hidden = false;
    progress.max = step.total || 1;
    progress.value = step.done;
    const mb = (bytes) => (bytes / 1_000_000).toFixed(1);
    this.#say(fill(this.#strings.loading, { done: mb(step.done), total: mb(step.total) }));
    status.dataset.progress = "";
  }

  #say(text) {
    const { status } = this.#parts;
    this.#progressText = text;
    status.dataset.progress = "";
    status.textContent = this.#pending ? `${text} ${this.#strings.kept}` : text;
  }

  async #start(retrying = false) {
    if (this.#mounting || this.dataset.mounted !== undefined) return;
    if (this.dataset.state === "error" && !retrying) return;
    this.#mounting = true;
    this.#parts.failure.hidden = true;
    this.#setState("booting");
    performance.mark("agentskit:intent");
    clearTimeout(this.#watchdog);
    const timeout = new Promise((_, reject) => {
      this.#watchdog = setTimeout(
        () => reject(new BootError("Starting the assistant took too long. Check your connection and retry.")),
        BOOT_TIMEOUT_MS,
      );
    });
    // A Content-Security-Policy that forbids compiling WebAssembly makes Pyodide hang,
    // not fail: name the directive at once instead of waiting for the watchdog.
    let onViolation;
    const blocked = new Promise((_, reject) => {
      onViolation = (event) => {
        if (!event.violatedDirective.startsWith("script-src")) return;
        reject(new BootError(
          `This page's Content-Security-Policy blocks the assistant (${event.violatedDirective} ` +
            `refused ${event.blockedURI || "a script"}); it needs script-src 'self' 'wasm-unsafe-eval'.`,
        ));
      };
      document.addEventListener("securitypolicyviolation", onViolation);
    });
    const guards = [timeout, blocked];
    try {
      const snapshot = choice(this, "snapshot", SNAPSHOT_MODES) === "keep";
      const python = await Promise.race([runtime((step) => this.#reportAll(step), snapshot), ...guards]);
      performance.mark("agentskit:widget-mount");
      const pending = this.#pending;
      const widget = await Promise.race([python.mount_element(this, pending), ...guards]);
      performance.measure("agentskit:widget-mount", "agentskit:widget-mount");
      // Python's mount starts a task later: a question sent in between reached #submit,
      // not mount_element, and would stay unsent in the box. Hand it over now.
      if (this.#pending !== null && this.#pending !== pending) {
        widget.input.value = "";
        widget.ask(this.#pending);
      }
      this.#pending = null;
      this.#ready();
    } catch (error) {
      this.#fail(error);
    } finally {
      clearTimeout(this.#watchdog);
      document.removeEventListener("securitypolicyviolation", onViolation);
      this.#mounting = false;
    }
  }

  #reportAll(step) {
    for (const element of shared.elements) if (#report in element) element.#report(step);
  }

  #ready() {
    this.#setState("ready");
    if (!performance.getEntriesByName("agentskit:ready").length) performance.mark("agentskit:ready");
    this.dispatchEvent(new CustomEvent("agentskit:ready", { bubbles: true, composed: true }));
    keepOffline(this); // offline="cache" only (see the offline cache block)
    keepSnapshot(); // snapshot="keep" only (see the boot snapshot block)
  }

  #fail(error) {
    const text = error instanceof BootError ? error.message : `${error?.name || "Error"}: ${error?.message || error}`;
    const { failure, message, progress, status, input } = this.#parts;
    input.readOnly = false; // the reader's question stays in the box
    progress.hidden = true;
    delete status.dataset.progress;
    message.textContent = text;
    failure.hidden = false;
    this.#setState("error", this.#strings.failed);
    this.dispatchEvent(new CustomEvent("agentskit:error", { bubbles: true, composed: true, detail: text }));
  }
}

if (!customElements.get(ELEMENT)) {
  performance.mark("agentskit:defined"); // the glance's time is measured from here
  customElements.define(ELEMENT, AskElement);
}

globalThis.agentskitAsk ??= Object.freeze({
  assets: ASSETS,
  /** The static index manifest's URL when the site published one, else null. */
  staticIndex: staticIndexURL()?.href ?? null,
  /** True once a reader's intent started the index's prefetch (the widget may then warm). */
  staticIndexWanted: () => Boolean(shared.indexPrefetch),
  /** The runtime promise once started (tests and page scripts), else null. */
  runtime: () => shared.runtime,
});
