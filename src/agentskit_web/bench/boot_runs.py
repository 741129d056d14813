"""What each boot measurement shares: the pages it loads, how one run reads them, the samples.

Used by the `boot` section (boot.py) and its PyScript sub-figure (pyscript_boot.py), and
the long-task observer by the other browser sections; kept apart so no two bench modules
import each other.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .harness import BOOT_TIMEOUT_MS, INTENT_AT_LOAD, Session

# Installed in every page before its own scripts: collect long tasks from the start.
LONGTASK_OBSERVER = """
window.__akLongTasks = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__akLongTasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
} catch (error) {}
"""

# Read after ready: the ready mark, the shell mark, first contentful paint, long tasks.
READ_TIMINGS = """
([readyMark, shellMark]) => {
  const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const ready = mark(readyMark);
  const fcp = performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null;
  const core = performance.getEntriesByName("agentskit:widget-mount", "measure")[0];
  const tasks = (window.__akLongTasks || []).filter(([start]) => ready === null || start < ready);
  return {
    ready,
    shell: shellMark ? mark(shellMark) : null,
    fcp,
    mount: core ? core.duration : null,
    longTasks: tasks.reduce((sum, [, duration]) => sum + duration, 0),
  };
}
"""


@dataclass(frozen=True)
class PageKind:
    """One page the boot section loads, and how it signals readiness."""

    label: str
    path: str
    ready_selector: str
    error_selector: str
    ready_mark: str
    shell_mark: str | None
    intent_at_load: bool = False
    """Show intent as soon as the page is parsed, so `boot` is measured from navigation."""


RAW = PageKind(
    "raw",
    "/bench/raw.html",
    "#status[data-state=ready]",
    "#status[data-state=error]",
    "raw:ready",
    None,
)
WIDGET = PageKind(
    "widget",
    "/",
    "agentskit-ask[data-state=ready]",
    "agentskit-ask[data-state=error]",
    "agentskit:ready",
    "agentskit:shell-painted",
    intent_at_load=True,
)


@dataclass
class Samples:
    """Per-run numbers for one page kind and one cache state."""

    ready: list[float] = field(default_factory=list)
    shell: list[float] = field(default_factory=list)
    first_paint: list[float] = field(default_factory=list)
    """First contentful paint: the bare page's is the shell figure's baseline (the
    browser's own first paint of a page with nothing of ours)."""
    long_tasks: list[float] = field(default_factory=list)
    mount: list[float] = field(default_factory=list)

    def add(self, timing: dict[str, Any]) -> None:
        self.ready.append(float(timing["ready"]))
        self.long_tasks.append(float(timing["longTasks"]))
        if timing["fcp"] is not None:
            self.first_paint.append(float(timing["fcp"]))
        if timing["mount"] is not None:
            self.mount.append(float(timing["mount"]))
        if timing["shell"] is not None:
            painted = timing["fcp"] if timing["fcp"] is not None else timing["shell"]
            self.shell.append(max(float(timing["shell"]), float(painted)))


class BenchError(RuntimeError):
    """A page did not reach its ready state."""


def load(page: Any, kind: PageKind, navigate: Callable[[], Any]) -> dict[str, Any]:
    navigate()
    page.wait_for_selector(
        f"{kind.ready_selector}, {kind.error_selector}", state="attached", timeout=BOOT_TIMEOUT_MS
    )
    if page.query_selector(kind.error_selector) is not None:
        raise BenchError(f"{kind.label} page failed to boot: {page.text_content('body')[:300]}")
    timing: dict[str, Any] = page.evaluate(READ_TIMINGS, [kind.ready_mark, kind.shell_mark])
    if timing["ready"] is None:
        raise BenchError(f"{kind.label} page has no {kind.ready_mark} mark")
    return timing


def one_run(
    session: Session, kind: PageKind, cold: Samples, warm: Samples, urls: list[str] | None
) -> None:
    """Cold load in a fresh context, then a warm reload in the same context."""
    context = session.browser.new_context()
    context.add_init_script(LONGTASK_OBSERVER)
    if kind.intent_at_load:
        context.add_init_script(INTENT_AT_LOAD)
    try:
        page = context.new_page()
        recording = urls is not None

        def record(response: Any) -> None:
            if recording and urls is not None:
                urls.append(response.url)

        page.on("response", record)
        url = session.base_url + kind.path
        cold.add(load(page, kind, lambda: page.goto(url, wait_until="commit")))
        recording = False
        warm.add(load(page, kind, lambda: page.reload(wait_until="commit")))
    finally:
        context.close()


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
