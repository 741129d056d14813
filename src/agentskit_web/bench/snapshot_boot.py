"""Sub-figure of `boot` (issue 25, item 3): what a reader waits for, with and without the
opt-in boot snapshot (`snapshot="keep"`, docs/design/snapshot-boot.md).

The demo app (dist/ and the reference backend, answers streamed without pacing) on
127.0.0.1, Debian Chromium. Each run is one fresh browser context, one reader:
1. cold: the bare Pyodide + pydantic page (bench/raw.html, the baseline) in a context of
   its own, then the reader's context: the widget's page without the attribute;
2. the widget's page with `snapshot="keep"`, first visit (warm caches, no snapshot yet):
   a normal boot, then the worker makes and keeps the snapshot once the page is idle;
3. warm, interleaved (the order rotates per run): raw, widget plain, widget restored;
4. a question typed at intent + 2 s (the reader types while it boots), warm: widget plain
   and widget restored, and, for the answer path alone, one typed 1 s after the plain
   widget is ready; the order reverses every other run. Timed from the Enter key to the
   first frame after the answer's first text is in the DOM.

Intent is shown at DOMContentLoaded (as in `boot`); widget times are from the loader's
`agentskit:intent` mark to `agentskit:ready`; raw times are from navigation start to
`raw:ready` (it has nothing to wait for). Every ratio is to raw's median of the same run
and cache state. Samples are never dropped: a restore that did not happen (data-snapshot
other than "restored") fails the section.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .harness import BOOT_TIMEOUT_MS, INTENT_AT_LOAD, Session

WARM_GOAL_MS = 500.0
WARM_RATIO_GOAL = 0.6
FIRST_TEXT_GOAL_MS = 300.0
TYPED_AFTER_INTENT_MS = 2_000
QUESTION = "How do I embed the Ask widget?"
RAW_PATH = "/bench/raw.html"
PLAIN = "/?plain"
KEEP = "/?keep"

READ_WIDGET = """() => {
  const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const host = document.querySelector("agentskit-ask");
  return { intent: mark("agentskit:intent"), ready: mark("agentskit:ready"),
           read: mark("agentskit:snapshot-read"), loaded: mark("agentskit:snapshot-loaded"),
           checked: mark("agentskit:snapshot-checked"),
           relinked: mark("agentskit:snapshot-relinked"),
           restored: mark("agentskit:snapshot-restored"),
           snapshot: host.dataset.snapshot ?? null, state: host.dataset.state };
}"""
KEPT_SIZES = """async () => {
  const cache = await caches.open("agentskit-ask:snapshot");
  const meta = (await cache.keys()).find((request) => request.url.endsWith("/meta"));
  return (await cache.match(meta)).json();
}"""
# At intent + delay, type the question and press Enter in the box (the loader's box while
# it boots, the widget's once ready); resolves with the time from Enter to the first frame
# after the answer's first text is in the DOM, and whether the widget was ready at Enter.
ASK_AT = """async ([delay, question]) => {
  const intent = performance.getEntriesByName("agentskit:intent")[0].startTime;
  const wait = Math.max(0, intent + delay - performance.now());
  await new Promise((resolve) => setTimeout(resolve, wait));
  const host = document.querySelector("agentskit-ask");
  const root = host.shadowRoot;
  const readyAtEnter = host.dataset.state === "ready";
  const input = root.querySelector(".ak-input");
  input.value = question;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  const started = performance.now();
  const enter = { key: "Enter", bubbles: true, composed: true };
  input.dispatchEvent(new KeyboardEvent("keydown", enter));
  await new Promise((resolve, reject) => {
    const said = () => [...root.querySelectorAll(".ak-message, .ak-status")]
      .map((node) => `${node.className}: ${node.textContent.slice(0, 80)}`).join(" | ");
    setTimeout(() => reject(new Error(`no answer text within 120 s: ${said()}`)), 120000);
    const check = () => {
      const answer = root.querySelector(".ak-assistant");
      const body = answer && answer.querySelector(".ak-body");
      if (body && !body.querySelector(".ak-thinking") && body.textContent.trim()) {
        observer.disconnect();
        resolve();
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(root, { subtree: true, childList: true, characterData: true });
    check();
  });
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
  return { firstText: performance.now() - started, readyAtEnter };
}"""


class SnapshotBenchError(RuntimeError):
    """A page did not boot, or a restore did not happen where the figure needs one."""


@dataclass
class Figures:
    """Samples in ms, one per run, by row label."""

    rows: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, label: str, value: float) -> None:
        self.rows.setdefault(label, []).append(value)


def _route_widget_page(route: Any) -> None:
    """`/?keep` is the demo's page with `snapshot="keep"` on the element; `/?plain` is the
    same page through the same route, unchanged."""
    response = route.fetch()
    body = response.text()
    if route.request.url.endswith(KEEP):
        body = body.replace("<agentskit-ask ", '<agentskit-ask snapshot="keep" ', 1)
    route.fulfill(response=response, body=body)


def _raw(page: Any, url: str) -> float:
    page.goto(url + RAW_PATH, wait_until="commit")
    page.wait_for_selector(
        "#status[data-state=ready], #status[data-state=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    if page.get_attribute("#status", "data-state") != "ready":
        raise SnapshotBenchError(f"raw page failed: {page.text_content('#status')}")
    return float(page.evaluate("performance.getEntriesByName('raw:ready')[0].startTime"))


def _widget(page: Any, url: str, path: str) -> dict[str, Any]:
    page.goto(url + path, wait_until="commit")
    page.wait_for_selector(
        "agentskit-ask[data-state=ready], agentskit-ask[data-state=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    timing: dict[str, Any] = page.evaluate(READ_WIDGET)
    if timing["state"] != "ready":
        raise SnapshotBenchError(f"widget page {path} failed: {page.text_content('body')[:300]}")
    timing["boot"] = timing["ready"] - timing["intent"]
    return timing


def _restored(timing: dict[str, Any]) -> dict[str, Any]:
    if timing["snapshot"] != "restored":
        raise SnapshotBenchError(f"expected a restore, data-snapshot={timing['snapshot']!r}")
    return timing


def _step(run: int, what: str) -> None:
    print(f"  snapshot run {run + 1}: {what}", file=sys.stderr, flush=True)


def _one_run(session: Session, url: str, run: int, figures: Figures) -> None:
    baseline = session.browser.new_context()  # its own: raw cold leaves the reader's cache cold
    try:
        figures.add("raw cold", _raw(baseline.new_page(), url))
    finally:
        baseline.close()
    context = session.browser.new_context()
    context.add_init_script(INTENT_AT_LOAD)
    context.route(url + "/?*", _route_widget_page)
    try:
        page = context.new_page()

        def shown(message: Any) -> None:
            if message.type in ("error", "warning"):
                _step(run, message.text[:300])

        page.on("console", shown)
        figures.add("widget cold", _widget(page, url, PLAIN)["boot"])
        _step(run, "cold loads done; first visit with keep")
        first = _widget(page, url, KEEP)
        figures.add("widget warm, first visit with keep", first["boot"])
        page.wait_for_selector(
            "agentskit-ask[data-snapshot=kept], agentskit-ask[data-snapshot=unavailable]",
            state="attached",
            timeout=BOOT_TIMEOUT_MS,
        )
        if page.get_attribute("agentskit-ask", "data-snapshot") != "kept":
            raise SnapshotBenchError("the snapshot was not kept")
        if run == 0:
            sizes = page.evaluate(KEPT_SIZES)
            figures.notes.append(
                f"kept in Cache Storage: memory {sizes['memoryBytes'] / 1e6:.1f} MB, "
                f"site-packages files {sizes['filesBytes'] / 1e6:.1f} MB "
                f"({len(sizes['files'])} files), the bytes as put"
            )
        kept = "performance.getEntriesByName('agentskit:snapshot-kept')[0].startTime"
        made = float(page.evaluate(kept)) - first["ready"]
        figures.add("ready -> kept (worker, off the main thread)", made)
        loads: list[tuple[str, Callable[[], float]]] = [
            ("raw warm", lambda: _raw(page, url)),
            ("widget warm", lambda: _widget(page, url, PLAIN)["boot"]),
            ("widget warm, restored", lambda: _restore_split(page, url, figures)),
        ]
        _step(run, "snapshot kept; warm loads")
        shift = run % len(loads)
        for label, load in loads[shift:] + loads[:shift]:
            figures.add(label, load())
        _step(run, "questions at intent + 2 s")
        asks = [
            ("question at +2 s, widget warm", PLAIN, False),
            ("question at +2 s, restored", KEEP, False),
            ("question 1 s after ready, widget warm", PLAIN, True),
        ]
        for label, path, after_ready in asks if run % 2 == 0 else asks[::-1]:
            timing = _widget_asking(page, url, path, after_ready)
            if path == KEEP:
                _restored(timing)
            figures.add(label, timing["firstText"])
            if not timing["readyAtEnter"]:
                figures.notes.append(f"run {run + 1}: {label}: typed while it booted")
    finally:
        context.close()


def _restore_split(page: Any, url: str, figures: Figures) -> float:
    timing = _restored(_widget(page, url, KEEP))
    figures.add("  intent -> snapshot read", timing["read"] - timing["intent"])
    figures.add("  -> loadPyodide(_loadSnapshot) done", timing["loaded"] - timing["read"])
    figures.add("  -> files checked (site record)", timing["checked"] - timing["loaded"])
    figures.add("  -> files back, library relinked", timing["relinked"] - timing["checked"])
    figures.add("  -> checked, widget mounted (ready)", timing["ready"] - timing["relinked"])
    return float(timing["boot"])


def _widget_asking(page: Any, url: str, path: str, after_ready: bool = False) -> dict[str, Any]:
    # A new conversation: a saved one would show its old answer first (and start the boot
    # at idle, as for a returning reader), and ASK_AT waits for the first answer's text.
    page.evaluate("localStorage.clear()")
    page.goto(url + path, wait_until="commit")
    page.wait_for_selector("agentskit-ask[data-state]", state="attached", timeout=BOOT_TIMEOUT_MS)
    page.wait_for_function(
        "performance.getEntriesByName('agentskit:intent').length > 0", timeout=BOOT_TIMEOUT_MS
    )
    delay = TYPED_AFTER_INTENT_MS
    if after_ready:  # the answer path alone: asked 1 s after ready, nothing booting
        page.wait_for_selector(
            "agentskit-ask[data-state=ready]", state="attached", timeout=BOOT_TIMEOUT_MS
        )
        since = "performance.now() - performance.getEntriesByName('agentskit:intent')[0].startTime"
        delay = int(page.evaluate(since)) + 1_000
    asked: dict[str, Any] = page.evaluate(ASK_AT, [delay, QUESTION])
    asked.update(page.evaluate(READ_WIDGET))
    return asked


def run_snapshot_boot(runs: int, session: Session) -> str:
    """The sub-figure's lines; the demo app serves session.dist on a free loopback port."""
    from ..build.files import find_root
    from ..server.demo_server import DemoConfig, DemoServer

    root = find_root()
    config = DemoConfig(
        dist=session.dist, site=root / "docs/site.json", docs=root / "docs", pace_seconds=0.0
    )
    figures = Figures()
    with DemoServer(config) as demo:
        for run in range(runs):
            _one_run(session, demo.url, run, figures)
            print(f"  snapshot run {run + 1}/{runs} done", file=sys.stderr, flush=True)
    return format_snapshot(figures, runs)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def format_snapshot(figures: Figures, runs: int) -> str:
    rows = figures.rows
    raw = {"cold": _median(rows["raw cold"]), "warm": _median(rows["raw warm"])}
    lines = [
        f'\nboot snapshot (snapshot="keep"), intent -> ready, median of {runs} runs, one '
        "context per run, warm loads interleaved",
        f"  {'':<46}{'median':>8}{'min':>8}{'max':>8}   x raw (same runs)",
    ]
    for label, values in rows.items():
        base = raw["cold"] if "cold" in label else raw["warm"]
        shown = (
            ""
            if label.startswith(("raw", "  ", "ready", "question"))
            else (f"   x{_median(values) / base:.2f}")
        )
        lines.append(
            f"  {label:<46}{_median(values):>8.0f}{min(values):>8.0f}{max(values):>8.0f}{shown}"
        )
    restored = _median(rows["widget warm, restored"])
    plain = _median(rows["widget warm"])
    ratio = restored / raw["warm"]
    first = _median(rows["question at +2 s, restored"])
    lines += [
        f"  goal warm restored <= {WARM_GOAL_MS:.0f} ms: {restored:.0f} "
        f"({'ok' if restored <= WARM_GOAL_MS else 'MISSED'}); <= {WARM_RATIO_GOAL}x raw warm: "
        f"x{ratio:.2f} ({'ok' if ratio <= WARM_RATIO_GOAL else 'MISSED'}); "
        f"restored / plain widget warm x{restored / plain:.2f}",
        f"  goal first text <= {FIRST_TEXT_GOAL_MS:.0f} ms after Enter (typed at intent + "
        f"{TYPED_AFTER_INTENT_MS / 1000:.0f} s, restored): {first:.0f} "
        f"({'ok' if first <= FIRST_TEXT_GOAL_MS else 'MISSED'})",
    ]
    for label, values in rows.items():
        lines.append(f"  samples {label.strip()}: [{', '.join(f'{v:.0f}' for v in values)}]")
    lines += [f"  note: {note}" for note in figures.notes]
    return "\n".join(lines)
