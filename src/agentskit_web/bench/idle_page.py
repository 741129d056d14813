"""Section `idle`: what a page view costs before the reader reaches for the box (issue 35).

In headless Debian Chromium against dist/ on 127.0.0.1, each run loads the demo page
(index.html) three ways, interleaved, each in a fresh browser context (empty caches):

- `no widget`: the same page with the loader's script tag and the element taken out
  (the baseline: what the site costs without us);
- `first visit`: the page as shipped, nothing saved;
- `returning`: the page as shipped, with a saved conversation (the memory key and its
  glance, written by the same Python code the widget uses) already in localStorage.

Nobody shows intent. After the load event the page is left alone until idle callbacks
have run for IDLE_WINDOW_MS (past the loader's own idle timeout, so a boot at idle
would be caught). Figures, median of the runs:

- bytes: the encoded bodies of every request the page made (navigation included), and
  the difference from `no widget` (goal: +36 kB or less for both widget cases);
- long tasks: the sum of main-thread tasks over 50 ms (PerformanceObserver "longtask")
  from navigation to the end of the window, and the difference from `no widget`
  (goal: 0 ms more);
- runtime requests: requests into the runtime folder (goal: 0 for both);
- saved conversation visible: `agentskit:glance-painted` minus `agentskit:defined` for
  the returning reader (goal: <= 200 ms), beside the shell's own paint after the element
  is defined on a first visit (`agentskit:shell-painted`), its baseline.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import dataclass, field
from typing import Any

from .boot_runs import LONGTASK_OBSERVER
from .harness import Session, open_session

IDLE_WINDOW_MS = 6_000
BYTES_GOAL = 36 * 1024
GLANCE_GOAL_MS = 200.0
DEMO_KEY = "agentskit-web-docs:ask"
"""The demo element's storage-key (index.html)."""
_LOADER_TAG = re.compile(r'<script type="module" src="[^"]*agentskit-ask\.js"></script>')
_ELEMENT = re.compile(r"<agentskit-ask\b.*?</agentskit-ask>", re.DOTALL)

PAST_IDLE = f"""() => new Promise((done) => {{
  const until = performance.now() + {IDLE_WINDOW_MS};
  const tick = () => performance.now() > until ? done(true) : requestIdleCallback(tick);
  requestIdleCallback(tick);
}})"""

READ = """() => {
  const mark = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const entries = [...performance.getEntriesByType('navigation'),
                   ...performance.getEntriesByType('resource')];
  return {
    bytes: entries.reduce((sum, e) => sum + (e.encodedBodySize || 0), 0),
    longTasks: (window.__akLongTasks || []).reduce((sum, [, duration]) => sum + duration, 0),
    runtime: entries.filter((e) => e.name.includes('/runtime.')).length,
    defined: mark('agentskit:defined'),
    glance: mark('agentskit:glance-painted'),
    shell: mark('agentskit:shell-painted'),
  };
}"""


def saved_conversation() -> dict[str, str]:
    """localStorage entries of a reader who asked one question (the widget's own formats)."""
    from ..chat.memory.glance import conversation_glance, glance_key
    from ..chat.memory.legacy import create_ask_session_memory
    from ..chat.memory.storage import MemoryStorage
    from ..chat.message import ChatMessage

    question = ChatMessage(
        "u-1", "user", "How do I embed the widget?", "complete", "2026-01-01T00:00:00.000Z"
    )
    answer = ChatMessage(
        "a-1",
        "assistant",
        "Add the loader's script tag and an `<agentskit-ask>` element to your page. " * 8,
        "complete",
        "2026-01-01T00:00:01.000Z",
    )
    storage = MemoryStorage()
    memory = create_ask_session_memory(key=DEMO_KEY, storage=storage)
    memory.save_now([question.to_memory(), answer.to_memory()])
    glance = conversation_glance([question, answer])
    assert glance is not None
    return {**storage.snapshot(), glance_key(DEMO_KEY): glance}


@dataclass
class Figures:
    bytes: list[float] = field(default_factory=list)
    long_tasks: list[float] = field(default_factory=list)
    runtime: list[float] = field(default_factory=list)
    painted: list[float] = field(default_factory=list)

    def add(self, read: dict[str, Any], mark: str) -> None:
        self.bytes.append(float(read["bytes"]))
        self.long_tasks.append(float(read["longTasks"]))
        self.runtime.append(float(read["runtime"]))
        if read[mark] is not None and read["defined"] is not None:
            self.painted.append(float(read[mark]) - float(read["defined"]))


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _one(session: Session, case: str, saved: dict[str, str]) -> dict[str, Any]:
    context = session.browser.new_context()
    context.add_init_script(LONGTASK_OBSERVER)
    if case == "returning":  # saved before the page's own scripts run
        entries = json.dumps(list(saved.items()))
        context.add_init_script(f"for (const [k, v] of {entries}) localStorage.setItem(k, v);")
    if case == "no widget":

        def strip(route: Any) -> None:
            response = route.fetch()
            html = _ELEMENT.sub("", _LOADER_TAG.sub("", response.text()))
            route.fulfill(response=response, body=html)

        context.route(session.base_url + "/", strip)
    try:
        page = context.new_page()
        page.goto(session.base_url + "/", wait_until="load")
        page.evaluate(PAST_IDLE)
        return dict(page.evaluate(READ))
    finally:
        context.close()


CASES = ("no widget", "first visit", "returning")


def run_idle(runs: int, session: Session) -> dict[str, Figures]:
    saved = saved_conversation()
    figures = {case: Figures() for case in CASES}
    for run in range(runs):
        order = CASES if run % 2 == 0 else tuple(reversed(CASES))
        for case in order:
            read = _one(session, case, saved)
            if case == "returning" and read["glance"] is None:
                raise RuntimeError("the returning reader's glance was not painted")
            figures[case].add(read, "glance" if case == "returning" else "shell")
        print(f"  run {run + 1}/{runs} done", file=sys.stderr, flush=True)
    return figures


def format_idle(figures: dict[str, Figures], runs: int) -> str:
    base = figures["no widget"]
    lines = [
        f"idle page before intent (index.html, fresh context each, {runs} runs interleaved, "
        f"{IDLE_WINDOW_MS / 1000:.0f} s of idle after load, medians)",
        f"  {'':<14}{'bytes':>12}{'vs none':>11}{'long tasks':>12}{'vs none':>10}"
        f"{'runtime req':>13}",
    ]
    verdicts = []
    for case in CASES:
        fig = figures[case]
        extra = _median(fig.bytes) - _median(base.bytes)
        tasks = _median(fig.long_tasks) - _median(base.long_tasks)
        lines.append(
            f"  {case:<14}{_median(fig.bytes) / 1024:>9.1f} kB{extra / 1024:>+8.1f} kB"
            f"{_median(fig.long_tasks):>9.0f} ms{tasks:>+7.0f} ms{_median(fig.runtime):>13.0f}"
        )
        if case != "no widget":
            verdicts.append(extra <= BYTES_GOAL and tasks <= 0 and max(fig.runtime) == 0)
    lines.append(
        "  goal: +36 kB or less, +0 ms, 0 runtime requests for both: "
        + ("ok" if all(verdicts) else "MISSED")
    )
    glance = _median(figures["returning"].painted)
    shell = _median(figures["first visit"].painted)
    lines.append(
        f"  saved conversation visible after the element is defined: {glance:.0f} ms "
        f"(max {max(figures['returning'].painted):.0f}); first visit's shell painted: "
        f"{shell:.0f} ms   goal <= {GLANCE_GOAL_MS:.0f} ms: "
        + ("ok" if glance <= GLANCE_GOAL_MS else "MISSED")
    )
    return "\n".join(lines)


def idle_command(args: argparse.Namespace) -> int:
    with open_session(args.dist, build=not args.no_build) as session:
        print(format_idle(run_idle(args.runs, session), args.runs), flush=True)
    return 0
