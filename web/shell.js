// agentskit-web shell glue. The widget markup and CSS are static, so the box is
// visible and typeable before any of this runs. This module owns the boot state
// shown to people and tests (`data-state` = booting | ready | error), starts
// PyScript from the bundled copy, and turns every boot failure into a visible
// message with a Retry button: never a blank box.
const BOOT_TIMEOUT_MS = 180_000;
const SITE = new URL("../", import.meta.url).href;
const PYSCRIPT_CORE = new URL("runtime/pyscript/core.js", SITE);
// Files whose failure stops the boot: Pyodide and PyScript can hang rather than
// reject on some of them (a missing lock file or wasm), so watch their status.
const BOOT_FILES = ["runtime/", "wheels/", "web/"].map((folder) => SITE + folder);

let state = "booting";
const roots = () => [...document.querySelectorAll("agentskit-ask")];
const part = (root, name) => root.querySelector(`.ak-${name}`);

function render(next, status) {
  state = next;
  for (const root of roots()) {
    root.dataset.state = next;
    root.setAttribute("aria-busy", String(next === "booting"));
    const line = part(root, "status");
    if (line && status !== undefined) line.textContent = status;
    const box = part(root, "error");
    if (box) box.hidden = next !== "error";
  }
}

function fail(message) {
  if (state !== "booting") return;
  clearTimeout(watchdog);
  performance.mark("agentskit:error");
  for (const root of roots()) {
    const text = part(root, "error-message");
    if (text) text.textContent = String(message || "Unknown error.");
  }
  render("error", "The assistant could not start.");
  dispatchEvent(new CustomEvent("agentskit:error", { detail: String(message) }));
}

function ready(status) {
  if (state !== "booting") return;
  clearTimeout(watchdog);
  performance.mark("agentskit:ready");
  render("ready", String(status || "Ready."));
  dispatchEvent(new CustomEvent("agentskit:ready"));
}

function progress(event) {
  if (state !== "booting" || typeof event.detail !== "string") return;
  for (const root of roots()) {
    const line = part(root, "status");
    if (line) line.textContent = `Starting the assistant: ${event.detail}…`;
  }
}

function onSubmit(event) {
  event.preventDefault();
  const root = event.target.closest("agentskit-ask");
  const line = root && part(root, "status");
  const question = part(root, "input")?.value ?? "";
  if (state === "ready" && typeof window.agentskitShell.onAsk === "function") {
    window.agentskitShell.onAsk(question, root);
  } else if (line && state === "booting") {
    line.textContent = "Still starting: your question stays in the box until the assistant is ready.";
  } else if (line && state === "ready") {
    line.textContent = "The Ask backend is not connected in this build yet, so nothing was sent.";
  }
}

function bootError(event) {
  const reason = event.reason ?? event.error ?? event.message;
  fail(`Boot error: ${reason?.message ?? reason}`);
}

function watchResources(list) {
  if (state !== "booting") return;
  for (const entry of list.getEntries()) {
    const status = entry.responseStatus ?? 0;
    if (status >= 400 && BOOT_FILES.some((prefix) => entry.name.startsWith(prefix))) {
      const file = entry.name.slice(SITE.length);
      fail(`A file the assistant needs could not be loaded: ${file} (HTTP ${status}).`);
      return;
    }
  }
}

const watchdog = setTimeout(
  () => fail("Starting the assistant took too long. Check your connection and retry."),
  BOOT_TIMEOUT_MS,
);

window.agentskitShell = {
  ready,
  fail,
  onAsk: null,
  get state() {
    return state;
  },
};

for (const root of roots()) {
  part(root, "form")?.addEventListener("submit", onSubmit);
  part(root, "retry")?.addEventListener("click", () => location.reload());
}
addEventListener("py:progress", progress);
const resources = new PerformanceObserver(watchResources);
resources.observe({ type: "resource", buffered: true });
addEventListener("error", bootError);
addEventListener("unhandledrejection", bootError);
addEventListener("agentskit:ready", () => {
  resources.disconnect();
  removeEventListener("error", bootError);
  removeEventListener("unhandledrejection", bootError);
});

// Start the runtime after the shell's first frame, so the box is painted and
// typeable before PyScript's module graph runs (the big downloads are already
// under way through the page's preload links).
function startRuntime() {
  import(PYSCRIPT_CORE).catch((error) => fail(`The PyScript runtime failed to load (${error.message}).`));
}
requestAnimationFrame(() => setTimeout(startRuntime));
