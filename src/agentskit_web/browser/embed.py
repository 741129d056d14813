"""The loader's entry point: `agentskit-ask.js` hands each `<agentskit-ask>` to Python here.

The loader (web/agentskit-ask.js) owns everything before Python: the shell, the
boot state (`data-state` idle/booting/ready/error), progress, Retry, the
launcher dialog and Ctrl/Cmd-K. Once Pyodide and this package are loaded it
calls `mount_element(host, pending)` for each element; this mounts the widget
from the element's attributes into the shell's box (keeping what the reader
typed, focus and caret) and sends `pending`, a question the reader submitted
while the runtime was still loading, so it is never lost.

With `?conformance=1` in the page URL the conformance vectors then run inside
the page once (browser/bootstrap.py), for the browser tests.
"""

from typing import Any

from .widget import AskWidget, mount, spawn, warm_up_when_idle

_first_mount = True
_conformance_started = False


async def mount_element(host: Any, pending: Any = None) -> AskWidget:
    """Mount the widget on `host` and send the reader's pending question, if any."""
    global _first_mount
    widget = await mount(host)
    if _first_mount:
        _first_mount = False
        warm_up_when_idle(widget.page)
    if isinstance(pending, str) and pending.strip():
        widget.input.value = ""
        widget.ask(pending)
    _maybe_run_conformance(widget)
    return widget


def _maybe_run_conformance(widget: AskWidget) -> None:
    global _conformance_started
    if _conformance_started or "conformance=1" not in str(widget.page.location.search):
        return
    _conformance_started = True
    from .bootstrap import publish_conformance

    spawn(publish_conformance())
