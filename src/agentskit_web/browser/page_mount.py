"""One call for a page's own Python (a PyScript `<script type="py">`) to put the widget on it.

    from agentskit_web.chat import create_function_adapter, define_chat
    from agentskit_web.browser.page_mount import mount_chat

    def answer(question, history):
        yield f"You asked: {question}"

    chat = define_chat(id="demo", adapter=create_function_adapter(answer))
    widget = await mount_chat("#ask", chat)

`target` is a CSS selector or an element; the widget is built into its shadow
root exactly as the loader's `<agentskit-ask>` builds it (browser/widget.py
`mount`), with the same stylesheet file: `agentskit-ask-pyscript.js` (the
PyScript build's entry, build/pyscript.py) publishes where it is, as the loader
does. Options of the element's attributes (`suggestions`, `placeholder`, ...)
are read from the target element's attributes, so a `<div id="ask"
suggestions='["..."]'>` is configured the same way.

Once mounted, the target says so as `<agentskit-ask>` does: `data-state="ready"`, the
`agentskit:ready` event (bubbling) and performance mark. A question already typed is kept;
a target that is missing raises LookupError, a definition that is not a
`ChatDefinition` TypeError, and a call from a PyScript worker RuntimeError, all
before anything is drawn, with messages that name the cause. In a worker the
widget's box can be drawn through PyScript's proxies (with cross-origin
isolation), but measured in Chromium it never answered a question: its event
handlers, stylesheet lookup and page globals are the main thread's.
"""

from collections.abc import Sequence
from typing import Any, Final

from ..chat.definition import ChatDefinition
from .js_values import present
from .widget import AskWidget, _js_object, _page, mount, warm_up_when_idle

MISSING_TARGET: Final = "mount_chat: no element matches {selector!r} on this page"
READY: Final = "ready"
READY_MARK: Final = "agentskit:ready"
IN_WORKER: Final = (
    'mount_chat runs on the page\'s main thread: remove `worker` from the <script type="py"> '
    "that mounts the widget (docs/pyscript.md, 'Main thread or worker')"
)
NOT_A_DEFINITION: Final = "mount_chat: expected a chat from define_chat(...), got {name}"


def _prepare_shell(document: Any, host: Any) -> None:
    """Give `host` the shadow root the loader gives `<agentskit-ask>`: the stylesheet link, then
    the box the widget is built into (building into the root itself would drop the link)."""
    if present(host.shadowRoot):
        return
    root = host.attachShadow(_js_object({"mode": "open"}))
    try:
        page = _page()
        published = page.agentskitAsk
        href = str(page.URL.new(published.assets.stylesheet, published.base).href)
    except Exception:  # no agentskit-ask-pyscript.js on this page: the widget works, unstyled
        href = None
    if href is not None:
        link = document.createElement("link")
        link.setAttribute("rel", "stylesheet")
        link.setAttribute("class", "ak-stylesheet")
        link.setAttribute("href", href)
        root.append(link)
    box = document.createElement("div")
    box.setAttribute("class", "ak-box")
    root.append(box)


def _element(target: Any) -> Any:
    if not isinstance(target, str):
        return target
    element = _page().document.querySelector(target)
    if not present(element):
        raise LookupError(MISSING_TARGET.format(selector=target))
    return element


async def mount_chat(
    target: Any,
    definition: ChatDefinition,
    *,
    suggestions: Sequence[str] | None = None,
    knowledge: Any = None,
) -> AskWidget:
    """Mount the widget for `definition` on `target` (a CSS selector or an element)."""
    if not isinstance(definition, ChatDefinition):
        raise TypeError(NOT_A_DEFINITION.format(name=type(definition).__name__))
    if hasattr(_page(), "WorkerGlobalScope"):  # defined only inside a worker
        raise RuntimeError(IN_WORKER)
    host = _element(target)
    _prepare_shell(_page().document, host)
    widget = await mount(host, definition, suggestions=suggestions, knowledge=knowledge)
    warm_up_when_idle(widget.page)
    _announce_ready(widget)
    return widget


def _announce_ready(widget: AskWidget) -> None:
    """Say "ready" as the loader says it for `<agentskit-ask>`: `data-state="ready"` on the host,
    the `agentskit:ready` performance mark (once per page) and event (pages, tests, the bench)."""
    page = widget.page
    widget.host.setAttribute("data-state", READY)
    if not page.performance.getEntriesByName(READY_MARK).length:
        page.performance.mark(READY_MARK)
    event = page.CustomEvent.new(READY_MARK, _js_object({"bubbles": True, "composed": True}))
    widget.host.dispatchEvent(event)
