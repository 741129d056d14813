"""In-page hostile-markdown benchmark: a stored answer restored into the widget, per case.

Each case of fixtures/hostile_markdown/cases.json (the host passes the JSON in)
is stored as the assistant's answer and restored the way a page load restores
it (`Conversation.replace_messages`, which renders settled messages in one go).
Measured per case, several runs each, all printed:

- time: from the restore call until the frame showing it has been painted
  (a `requestAnimationFrame` callback posts a message, which runs after that
  frame's paint), so Python, DOM building, style, layout and paint all count;
- DOM nodes: elements and text nodes under the widget's log afterwards.

The baseline, measured in the same page and run: the same bytes shown as plain
text (one `pre` with one text node in the same log), i.e. the least any
renderer could do with that answer.
"""

from typing import Any, Final

from ...browser.js_values import present
from ...chat.message import ChatMessage
from .figures import median, ratio
from .render import PacedTransport, _new_widget, _remove

RUNS: Final = 3

_COUNT_NODES: Final = """(root) => {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  let count = 1;
  while (walker.nextNode()) count++;
  return count;
}"""
_NEXT_PAINT: Final = """() => new Promise((resolve) => requestAnimationFrame(() => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => resolve(performance.now());
  channel.port2.postMessage(0);
}))"""


def expand(case: dict[str, Any]) -> str:
    """A case's text: its pieces, each repeated, concatenated (deterministic)."""
    return "".join(str(text) * int(repeat) for text, repeat in case["pieces"])


def _stored(content: str) -> list[dict[str, Any]]:
    stamp = "2026-01-01T00:00:00.000Z"
    question = ChatMessage("m-q", "user", "A hostile question", "complete", stamp)
    answer = ChatMessage("m-a", "assistant", content, "complete", stamp)
    return [question.to_memory(), answer.to_memory()]


class _Page:
    """The page's clock, paint probe and node counter (JavaScript helpers)."""

    def __init__(self) -> None:
        import js

        self.performance = js.performance
        self.next_paint = js.eval(_NEXT_PAINT)
        self.count_nodes = js.eval(_COUNT_NODES)
        self.document = js.document

    def now(self) -> float:
        return float(self.performance.now())


async def _restore(page: _Page, widget: Any, content: str) -> dict[str, float]:
    """Restore `content` as the stored answer: ms until painted, DOM nodes in the log."""
    widget.conversation.replace_messages([])
    await page.next_paint()
    started = page.now()
    widget.conversation.replace_messages(_stored(content))
    rendered = page.now()
    painted = float(await page.next_paint())
    nodes = int(page.count_nodes(widget.view.log))
    note = widget.view.log.querySelector(".ak-shortened")
    return {
        "ms": painted - started,
        "renderMs": rendered - started,
        "nodes": float(nodes),
        "shortened": float(present(note)),
    }


async def _plain(page: _Page, widget: Any, content: str) -> dict[str, float]:
    """The baseline: the same text as one `pre` text node in the same log."""
    widget.conversation.replace_messages([])
    await page.next_paint()
    started = page.now()
    holder = page.document.createElement("pre")
    holder.textContent = content
    widget.view.log.appendChild(holder)
    painted = float(await page.next_paint())
    nodes = int(page.count_nodes(widget.view.log))
    holder.remove()
    return {"ms": painted - started, "nodes": float(nodes)}


async def run_hostile_bench(corpus: dict[str, Any]) -> dict[str, Any]:
    """Every case, restored and as plain text, `RUNS` times each; the JSON-ready result."""
    page = _Page()
    widget = await _new_widget(PacedTransport([b'{"type":"done"}\n'], 0.0))
    await _restore(page, widget, "A *warm-up* answer with `code` and [a link](/x).")
    results = []
    for case in corpus["cases"]:
        content = expand(case)
        runs = [await _restore(page, widget, content) for _ in range(RUNS)]
        plain = [await _plain(page, widget, content) for _ in range(RUNS)]
        results.append(
            {
                "name": case["name"],
                "bytes": len(content.encode("utf-8")),
                "runsMs": [run["ms"] for run in runs],
                "medianMs": median(run["ms"] for run in runs),
                "maxMs": max(run["ms"] for run in runs),
                "renderMedianMs": median(run["renderMs"] for run in runs),
                "nodes": max(run["nodes"] for run in runs),
                "shortened": all(run["shortened"] for run in runs),
                "plainMedianMs": median(run["ms"] for run in plain),
                "plainNodes": max(run["nodes"] for run in plain),
                "ratioToPlain": ratio(
                    median(run["ms"] for run in runs), median(run["ms"] for run in plain)
                ),
            }
        )
    _remove(widget)
    worst_ms = max(results, key=lambda result: result["maxMs"])
    worst_nodes = max(results, key=lambda result: result["nodes"])
    return {
        "cases": results,
        "goal": corpus["goal"],
        "worstMs": {"name": worst_ms["name"], "ms": worst_ms["maxMs"]},
        "worstNodes": {"name": worst_nodes["name"], "nodes": worst_nodes["nodes"]},
    }
