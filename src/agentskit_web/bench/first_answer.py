"""Sub-figure of `boot` (issue 35, item 4): a cold click to the first answer text.

A first-time reader clicks the box, types a question and presses Enter while Python
starts; the figure is the time from their click (the loader's `agentskit:intent` mark) to
the first frame after the answer's first text is in the DOM. Two sites, one fresh browser
context (empty caches) per sample, alternating:
- static answers: the Starlette docs (../shared/corpora, read in place) built with MkDocs
  and the `agentskit-ask` plugin with no endpoint (bench/static_browser.py's build), the
  answer from the split index in the page;
- backend: the same build's home page with `endpoint="/api/ask"`, the reference backend
  over the same pages on the same origin.
The baseline of the same runs is the bare Pyodide + pydantic page (bench/raw.html of
dist/) cold, navigation to ready, in a fresh context between the two.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from .harness import BOOT_TIMEOUT_MS, Session
from .static_browser import BACKEND_PAGE, CORPUS, build_corpus_site, serve

QUESTION = "How do I add CORS middleware to my application?"
RAW_PATH = "/bench/raw.html"

# Resolves with the time of the first frame after the first answer text is in the DOM.
WATCH_FIRST_TEXT = """() => {
  const root = document.querySelector("agentskit-ask").shadowRoot;
  window.__akFirstText = new Promise((resolve, reject) => {
    setTimeout(() => reject(new Error("no answer text within 240 s")), 240000);
    const check = () => {
      const body = root.querySelector(".ak-assistant .ak-body");
      if (body && !body.querySelector(".ak-thinking") && body.textContent.trim()) {
        observer.disconnect();
        requestAnimationFrame(() => setTimeout(() => resolve(performance.now())));
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(root, { subtree: true, childList: true, characterData: true });
  });
}"""
READ = """async () => {
  const painted = await window.__akFirstText;
  const intent = performance.getEntriesByName("agentskit:intent")[0].startTime;
  return { firstText: painted - intent,
           answers: document.querySelector("agentskit-ask").dataset.answers };
}"""


class FirstAnswerError(RuntimeError):
    """A page did not answer as the figure needs."""


def _ask_cold(browser: Any, url: str, expected: str) -> float:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("agentskit-ask[data-state=idle]", state="attached")
        page.evaluate(WATCH_FIRST_TEXT)
        launcher = page.locator("agentskit-ask .ak-launcher")
        if launcher.count():  # the plugins' default layout: the reader's click opens the box
            launcher.first.click()
        box = page.locator("agentskit-ask .ak-input")
        box.click()
        box.type(QUESTION)
        box.press("Enter")
        result: dict[str, Any] = page.evaluate(READ)
        if result["answers"] != expected:
            raise FirstAnswerError(f"{url} answered by {result['answers']}, not {expected}")
        return float(result["firstText"])
    finally:
        context.close()


def _raw_cold(session: Session) -> float:
    context = session.browser.new_context()
    try:
        page = context.new_page()
        page.goto(session.base_url + RAW_PATH, wait_until="commit")
        page.wait_for_selector(
            "#status[data-state=ready]", state="attached", timeout=BOOT_TIMEOUT_MS
        )
        return float(page.evaluate("performance.getEntriesByName('raw:ready')[0].startTime"))
    finally:
        context.close()


def run_first_answer(runs: int, session: Session, corpus: Path = CORPUS) -> str:
    """The sub-figure's lines (see the module doc)."""
    samples: dict[str, list[float]] = {"static": [], "backend": [], "raw": []}
    with tempfile.TemporaryDirectory(prefix="agentskit-first-answer-") as tmp:
        site = build_corpus_site(corpus, Path(tmp))
        with serve(site, corpus) as base:
            pages = {"static": f"{base}/", "backend": f"{base}/{BACKEND_PAGE}"}
            for run in range(runs):
                order = ("static", "backend") if run % 2 == 0 else ("backend", "static")
                samples[order[0]].append(_ask_cold(session.browser, pages[order[0]], order[0]))
                samples["raw"].append(_raw_cold(session))
                samples[order[1]].append(_ask_cold(session.browser, pages[order[1]], order[1]))
                print(f"  first-answer run {run + 1}/{runs} done", file=sys.stderr, flush=True)
    lines = [f"cold click -> first answer text painted: median of {runs} runs (ms)"]
    for label, key in (
        ("static answers (Starlette docs, no endpoint)", "static"),
        ("backend (same pages, /api/ask)", "backend"),
        ("  baseline: raw Pyodide + pydantic, cold boot", "raw"),
    ):
        values = samples[key]
        spread = f"{min(values):.0f}-{max(values):.0f}"
        lines.append(f"  {label:<48}{statistics.median(values):>8.0f}   ({spread})")
    return "\n".join(lines)
