"""Sub-figure of `boot` (issue 35, item 3): the main thread while Python starts.

What a reader on a phone feels is the longest main-thread task and the blocking time
(the part of each task past 50 ms, Lighthouse's total blocking time), not the boot's
length. Measured in headless Debian Chromium on the demo app (dist/ and the reference
backend on 127.0.0.1), with the CPU slowed 4x through the DevTools protocol
(`Emulation.setCPUThrottlingRate`, Lighthouse's mobile profile) and unthrottled beside.

Each run is one fresh browser context per CPU rate: the widget's page loads, and once it
has loaded the reader shows intent (a click on the launcher, which opens the box as its
dialog, or `pointerenter` on an inline box); long tasks (PerformanceObserver "longtask")
are counted from the loader's `agentskit:intent` mark to 4 s after `agentskit:ready`.
Then the first question is typed and sent, and counted from the Enter key to the answer's
end. Warm is a reload of the same context (the
conversation key removed, so the reload is not a returning reader). The baseline of the
same run is the bare Pyodide + pydantic page (bench/raw.html) in its own context, counted
from navigation to 4 s after `raw:ready`; the order of the two alternates per run.

The same is measured on a docs site as owners ship it (`static`): the Starlette docs
(../shared/corpora, read in place) built with MkDocs and the plugin, no endpoint, so the
answer comes from the static index and the widget warms that path at idle after ready
(bench/static_browser.py's build); its question is STATIC_QUESTION. The three pages
alternate per run.

Every long task is attributed to the boot step it ran in: the loader and the widget set a
mark as each step ends (`agentskit:boot:<step>`, web/agentskit-ask.js), and a task
belongs to the first step whose end mark is at or after the task's start.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .boot_runs import LONGTASK_OBSERVER
from .harness import BOOT_TIMEOUT_MS, SHOW_INTENT, Session
from .static_browser import CORPUS, build_corpus_site, serve

TASK_GOAL_MS = 200.0
BLOCKING_GOAL_MS = 300.0
BLOCKING_FLOOR_MS = 50.0
AFTER_READY_MS = 4_000
RATES = (4, 1)
QUESTION = "How do I embed the Ask widget?"
STATIC_QUESTION = "How do I add CORS headers to my app?"
STATIC_PAGE = "/middleware/"
RAW_PATH = "/bench/raw.html"

# The step each end mark closes, in boot order (label, mark).
STEPS: tuple[tuple[str, str], ...] = (
    ("import pyodide.mjs", "agentskit:boot:runtime-module"),
    ("wasm compile + instantiate, stdlib", "agentskit:boot:instantiated"),
    ("interpreter start (main)", "agentskit:boot:interpreter-started"),
    ("Pyodide bootstrap (finalizeBootstrap)", "agentskit:boot:interpreter"),
    ("loadPackage (unpack, pydantic-core)", "agentskit:boot:packages"),
    ("our imports", "agentskit:boot:imported"),
    ("mount (first render)", "agentskit:ready"),
    ("markdown-it installed after ready", "agentskit:boot:later-packages"),
    ("markdown parser warmed at idle", "agentskit:boot:markdown-warm"),
)
AFTER_STEPS = "after ready, other"
RAW_STEPS: tuple[tuple[str, str], ...] = (("raw: whole boot", "raw:ready"),)

READ_TIMELINE = """() => {
  const marks = {};
  for (const entry of performance.getEntriesByType("mark")) {
    if (!(entry.name in marks)) marks[entry.name] = entry.startTime;
  }
  return { marks, tasks: window.__akLongTasks || [], now: performance.now() };
}"""
# The element's conversation key, as the loader reads it (storage-key, else by chat-id).
FORGET_CONVERSATION = """() => {
  const host = document.querySelector("agentskit-ask");
  const id = host.getAttribute("chat-id") || "ask";
  const key = host.getAttribute("storage-key") || `agentskit:ask:${id}`;
  localStorage.removeItem(key);
}"""
# Sends the question in the mounted widget; resolves with Enter's time and the answer's end.
ASK = """async (question) => {
  const host = document.querySelector("agentskit-ask");
  const root = host.shadowRoot;
  const input = root.querySelector(".ak-input");
  input.value = question;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  const enter = performance.now();
  const key = { key: "Enter", bubbles: true, composed: true };
  input.dispatchEvent(new KeyboardEvent("keydown", key));
  await new Promise((resolve, reject) => {
    setTimeout(() => reject(new Error("no complete answer within 120 s")), 120000);
    const check = () => {
      const answer = root.querySelector(".ak-assistant");
      if (answer && !host.hasAttribute("data-busy") && answer.dataset.status !== "streaming") {
        observer.disconnect();
        resolve();
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(host, { attributes: true });
    observer.observe(root, { subtree: true, childList: true, attributes: true });
  });
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 500)));
  const status = root.querySelector(".ak-assistant").dataset.status;
  return { enter, done: performance.now(), status };
}"""


class TasksBenchError(RuntimeError):
    """A page did not boot or answer."""


@dataclass
class Window:
    """The long tasks of one span of one page load."""

    tasks: list[tuple[float, float]]

    @property
    def longest(self) -> float:
        return max((duration for _, duration in self.tasks), default=0.0)

    @property
    def blocking(self) -> float:
        return sum(max(0.0, duration - BLOCKING_FLOOR_MS) for _, duration in self.tasks)


def window(tasks: list[list[float]], start: float, end: float) -> Window:
    """The tasks that started in [start, end]."""
    return Window([(s, d) for s, d in tasks if start <= s <= end])


def attribute(
    tasks: list[tuple[float, float]], marks: dict[str, float], steps: tuple[tuple[str, str], ...]
) -> dict[str, float]:
    """The longest task per step: a task belongs to the first step whose end mark is at or
    after its start (a mark set inside a task names the step that task ran)."""
    ends = [(label, marks[mark]) for label, mark in steps if mark in marks]
    longest: dict[str, float] = {}
    for start, duration in tasks:
        label = next((name for name, end in ends if end >= start), AFTER_STEPS)
        longest[label] = max(longest.get(label, 0.0), duration)
    return longest


@dataclass
class Figures:
    """Per-run samples: (rate, cache state, page, span) -> values."""

    longest: dict[tuple[int, str, str, str], list[float]] = field(default_factory=dict)
    blocking: dict[tuple[int, str, str, str], list[float]] = field(default_factory=dict)
    steps: dict[tuple[int, str, str, str], list[float]] = field(default_factory=dict)

    def add(self, key: tuple[int, str, str, str], span: Window) -> None:
        self.longest.setdefault(key, []).append(span.longest)
        self.blocking.setdefault(key, []).append(span.blocking)

    def add_steps(self, rate: int, state: str, kind: str, longest: dict[str, float]) -> None:
        for label, value in longest.items():
            self.steps.setdefault((rate, state, kind, label), []).append(value)


def _timeline(page: Any) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(READ_TIMELINE)
    return result


def _wait_ready(page: Any, selector: str, error: str) -> None:
    page.wait_for_selector(f"{selector}, {error}", state="attached", timeout=BOOT_TIMEOUT_MS)
    if page.query_selector(error) is not None:
        raise TasksBenchError(f"page failed to boot: {page.text_content('body')[:300]}")


def _raw_load(page: Any, navigate: Any, rate: int, state: str, figures: Figures) -> None:
    navigate()
    _wait_ready(page, "#status[data-state=ready]", "#status[data-state=error]")
    page.wait_for_timeout(AFTER_READY_MS)
    timeline = _timeline(page)
    ready = timeline["marks"]["raw:ready"]
    span = window(timeline["tasks"], 0.0, ready + AFTER_READY_MS)
    figures.add((rate, state, "raw", "boot"), span)


def _widget_load(
    page: Any, navigate: Any, rate: int, state: str, figures: Figures, kind: str, question: str
) -> None:
    navigate()
    page.wait_for_selector("agentskit-ask[data-state=idle]", state="attached")
    page.evaluate(SHOW_INTENT)
    _wait_ready(page, "agentskit-ask[data-state=ready]", "agentskit-ask[data-state=error]")
    page.wait_for_timeout(AFTER_READY_MS)
    timeline = _timeline(page)
    marks = timeline["marks"]
    intent, ready = marks["agentskit:intent"], marks["agentskit:ready"]
    boot = window(timeline["tasks"], intent, ready + AFTER_READY_MS)
    figures.add((rate, state, kind, "boot"), boot)
    figures.add_steps(rate, state, kind, attribute(boot.tasks, marks, STEPS))
    asked = page.evaluate(ASK, question)
    if asked["status"] != "complete":
        raise TasksBenchError(f"the first question ended {asked['status']!r}")
    tasks = _timeline(page)["tasks"]
    figures.add((rate, state, kind, "question"), window(tasks, asked["enter"], asked["done"]))


def _context(session: Session, rate: int) -> tuple[Any, Any]:
    context = session.browser.new_context()
    context.add_init_script(LONGTASK_OBSERVER)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
    return context, page


def _raw_run(session: Session, url: str, rate: int, figures: Figures) -> None:
    context, page = _context(session, rate)
    try:
        _raw_load(page, lambda: page.goto(url + RAW_PATH), rate, "cold", figures)
        _raw_load(page, lambda: page.reload(), rate, "warm", figures)
    finally:
        context.close()


def _widget_run(
    session: Session, url: str, rate: int, figures: Figures, kind: str = "widget"
) -> None:
    context, page = _context(session, rate)
    path, question = (STATIC_PAGE, STATIC_QUESTION) if kind == "static" else ("/", QUESTION)
    try:
        _widget_load(page, lambda: page.goto(url + path), rate, "cold", figures, kind, question)
        page.evaluate(FORGET_CONVERSATION)  # not a returning reader
        _widget_load(page, lambda: page.reload(), rate, "warm", figures, kind, question)
    finally:
        context.close()


def run_boot_tasks(runs: int, session: Session, corpus: Path = CORPUS) -> Figures:
    """The figures of `runs` interleaved runs per CPU rate (see the module doc)."""
    from ..build.files import find_root
    from ..server.demo_server import DemoConfig, DemoServer

    root = find_root()
    config = DemoConfig(
        dist=session.dist, site=root / "docs/site.json", docs=root / "docs", pace_seconds=0.0
    )
    figures = Figures()
    with (
        tempfile.TemporaryDirectory(prefix="agentskit-boot-tasks-") as tmp,
        DemoServer(config) as demo,
        serve(build_corpus_site(corpus, Path(tmp)), corpus) as docs,
    ):
        pages = [
            lambda rate: _raw_run(session, demo.url, rate, figures),
            lambda rate: _widget_run(session, demo.url, rate, figures),
            lambda rate: _widget_run(session, docs, rate, figures, "static"),
        ]
        for run in range(runs):
            for rate in RATES:
                for index in range(len(pages)):
                    pages[(run + index) % len(pages)](rate)
            print(f"  long-task run {run + 1}/{runs} done", file=sys.stderr, flush=True)
    return figures


def _median(values: list[float] | None) -> float:
    return statistics.median(values) if values else float("nan")


def format_boot_tasks(figures: Figures, runs: int) -> str:
    """The sub-figure's lines: per span and cache state, throttled beside unthrottled."""
    columns = [(rate, state) for rate in RATES for state in ("cold", "warm")]
    head = "".join(f"{f'{state} {rate}x':>12}" for rate, state in columns)
    lines = [
        f"main-thread long tasks: median of {runs} runs per CPU rate (4x: "
        "Emulation.setCPUThrottlingRate), ms",
        f"  {'':<46}{head}   goal (4x)",
    ]
    boot, question = "intent -> ready + 4 s", "first question"
    rows = (
        (f"longest task, {boot}", figures.longest, "widget", "boot", TASK_GOAL_MS),
        ("  baseline: raw page, nav -> ready + 4 s", figures.longest, "raw", "boot", None),
        (f"blocking time, {boot}", figures.blocking, "widget", "boot", BLOCKING_GOAL_MS),
        ("  baseline: raw page", figures.blocking, "raw", "boot", None),
        (f"longest task, {question}", figures.longest, "widget", "question", TASK_GOAL_MS),
        (f"blocking time, {question}", figures.blocking, "widget", "question", BLOCKING_GOAL_MS),
        ("docs site, static answers (Starlette):", None, "", "", None),
        (f"  longest task, {boot}", figures.longest, "static", "boot", TASK_GOAL_MS),
        (f"  blocking time, {boot}", figures.blocking, "static", "boot", BLOCKING_GOAL_MS),
        (f"  longest task, {question}", figures.longest, "static", "question", TASK_GOAL_MS),
        (f"  blocking time, {question}", figures.blocking, "static", "question", BLOCKING_GOAL_MS),
    )
    for label, table, page, span, goal in rows:
        if table is None:
            lines.append(f"  {label}")
            continue
        values = [_median(table.get((rate, state, page, span))) for rate, state in columns]
        cells = "".join(f"{value:>12.0f}" for value in values)
        verdict = ""
        if goal is not None:
            met = all(value <= goal for value in values[:2])
            verdict = f"<= {goal:.0f} ({'ok' if met else 'MISSED'})"
        lines.append(f"  {label:<46}{cells}   {verdict}")
    for kind, title in (("widget", "demo app"), ("static", "docs site, static answers")):
        lines.append(
            f"  longest task by boot step, {title} (median over runs of each run's longest; "
            "- none):"
        )
        for label in [name for name, _ in STEPS] + [AFTER_STEPS]:
            found = [figures.steps.get((rate, state, kind, label)) for rate, state in columns]
            if not any(found):
                continue
            cells = "".join(
                f"{_median(value):>12.0f}" if value else f"{'-':>12}" for value in found
            )
            lines.append(f"    {label:<44}{cells}")
    return "\n".join(lines)
