"""The bare runtime booted in a dedicated worker against the same boot on the page (issue 35).

docs/design/boot-worker.md proposes moving Pyodide off the main thread because its
longest boot tasks (the wasm instantiation, CPython's start) are single calls no loader
can slice. Before building it, this measures what the move buys and costs, with the
bench's own bare page's work (bench/raw.html: Pyodide + pydantic from dist/'s runtime,
one model validated), in three forms served from the same origin:

- `main`: the work on the page, as bench/raw.html does it;
- `worker`: the same work in a dedicated module worker whose script is a file of the
  site (what a strict CSP allows); the page only starts it and marks ready when the
  worker says so;
- `worker+module`: as `worker`, but the page compiles pyodide.asm.wasm itself
  (`WebAssembly.compileStreaming`) and posts the compiled module to the worker, which
  instantiates it in place of Pyodide's own `instantiateStreaming` (the page's compile
  can use the browser's wasm code cache on a warm visit; whether a worker's can is what
  the first two forms show).

Per run, each form in a fresh browser context (cold) then reloaded (warm), the forms'
order rotating; per CPU rate (4x through `Emulation.setCPUThrottlingRate`, and 1x):
navigation -> ready, and the page's main-thread long tasks from navigation to ready +
4 s (longest, and blocking: each task's part past 50 ms). The DevTools throttle is set
on the page; whether it slows a worker is not assumed, so boot times are compared at 1x.

    .venv/bin/python experiments/boot_worker/measure.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

from agentskit_web.bench.boot_runs import LONGTASK_OBSERVER
from agentskit_web.bench.boot_tasks import AFTER_READY_MS, window
from agentskit_web.bench.harness import BOOT_TIMEOUT_MS, open_session, runtime_path

FORMS = ("main", "worker", "worker+module")
RATES = (4, 1)
PAGE_PATH = "/__experiment__/boot.html"
WORKER_PATH = "/__experiment__/boot-worker.js"

WORK = """
const { loadPyodide } = await import(RUNTIME + "pyodide.mjs");
const pyodide = await loadPyodide({
  indexURL: RUNTIME, lockFileURL: RUNTIME + "pyodide-lock.json", packages: ["pydantic"],
});
pyodide.runPython(
  "from pydantic import BaseModel\\nclass Ping(BaseModel):\\n    ok: bool\\n" +
  "Ping.model_validate({'ok': True})\\n");
"""

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>boot</title>
<script type="module">
const RUNTIME = new URL(RUNTIME_PATH, location.href).href;
const status = document.getElementById("status");
const done = () => { performance.mark("raw:ready"); status.dataset.state = "ready"; };
const fail = (error) => { status.dataset.state = "error"; status.textContent = String(error); };
BODY
</script></head><body><p id="status" data-state="booting">booting</p></body></html>"""

ON_PAGE = "try { WORK done(); } catch (error) { fail(error); }"

START_WORKER = """
const worker = new Worker(WORKER_PATH, { type: "module" });
worker.onmessage = (event) => (event.data === "ready" ? done() : fail(event.data));
worker.onerror = (event) => fail(event.message);
"""

POST_MODULE = """
WebAssembly.compileStreaming(fetch(RUNTIME + "pyodide.asm.wasm"))
  .then((module) => worker.postMessage(module), fail);
"""

WORKER = """
const RUNTIME = new URL(RUNTIME_PATH, location.href).href;
WAIT
try { WORK postMessage("ready"); } catch (error) { postMessage(String(error)); }
"""

WAIT_FOR_MODULE = """
const module = await new Promise((resolve) => { self.onmessage = (e) => resolve(e.data); });
WebAssembly.instantiateStreaming = async (response, imports) =>
  ({ instance: await WebAssembly.instantiate(module, imports), module });
"""

READ = """() => ({
  ready: performance.getEntriesByName("raw:ready")[0].startTime,
  tasks: window.__akLongTasks,
})"""


def fill(template: str, **parts: str) -> str:
    for name, value in parts.items():
        template = template.replace(name, value)
    return template


def page_html(form: str, runtime: str) -> str:
    if form == "main":
        body = fill(ON_PAGE, WORK=WORK)
    else:
        body = fill(START_WORKER, WORKER_PATH=json.dumps(WORKER_PATH))
        if form == "worker+module":
            body += POST_MODULE
    return fill(PAGE, BODY=body, RUNTIME_PATH=json.dumps(runtime))


def worker_js(form: str, runtime: str) -> str:
    wait = WAIT_FOR_MODULE if form == "worker+module" else ""
    return fill(WORKER, WAIT=wait, WORK=WORK, RUNTIME_PATH=json.dumps(runtime))


def load(page: Any, navigate: Any) -> dict[str, float]:
    navigate()
    page.wait_for_selector(
        "#status[data-state=ready], #status[data-state=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    if page.query_selector("#status[data-state=error]") is not None:
        raise RuntimeError(page.text_content("#status"))
    page.wait_for_timeout(AFTER_READY_MS)
    read = page.evaluate(READ)
    span = window(read["tasks"], 0.0, read["ready"] + AFTER_READY_MS)
    return {"ready": read["ready"], "longest": span.longest, "blocking": span.blocking}


def serve(context: Any, path: str, body: str, content_type: str) -> None:
    context.route(f"**{path}", lambda route: route.fulfill(body=body, content_type=content_type))


def run(session: Any, form: str, rate: int) -> dict[str, dict[str, float]]:
    runtime = runtime_path(session.dist)
    context = session.browser.new_context()
    context.add_init_script(LONGTASK_OBSERVER)
    serve(context, PAGE_PATH, page_html(form, runtime), "text/html")
    serve(context, WORKER_PATH, worker_js(form, runtime), "text/javascript")
    try:
        page = context.new_page()
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})
        cold = load(page, lambda: page.goto(session.base_url + PAGE_PATH))
        warm = load(page, lambda: page.reload())
        return {"cold": cold, "warm": warm}
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    samples: dict[tuple[int, str, str, str], list[float]] = {}
    with open_session(None, build=False) as session:
        for number in range(args.runs):
            shift = number % len(FORMS)
            for rate in RATES:
                for form in FORMS[shift:] + FORMS[:shift]:
                    for state, figures in run(session, form, rate).items():
                        for name, value in figures.items():
                            samples.setdefault((rate, state, form, name), []).append(value)
    print(f"bare Pyodide + pydantic: on the page vs in a worker, median of {args.runs}, ms")
    print(f"{'rate':>4} {'state':>5} {'figure':>9} " + "".join(f"{f:>15}" for f in FORMS))
    for rate in RATES:
        for state in ("cold", "warm"):
            for name in ("ready", "longest", "blocking"):
                values = [samples[(rate, state, form, name)] for form in FORMS]
                medians = "".join(f"{statistics.median(v):15.0f}" for v in values)
                runs = " ".join(str([round(x) for x in v]) for v in values)
                print(f"{rate:>3}x {state:>5} {name:>9} {medians}   {runs}")


if __name__ == "__main__":
    main()
