"""The Ask widget: `<agentskit-ask>` mounted from Python into its shadow root.

The loader (web/agentskit-ask.js) draws the element's shell and, once the
runtime is loaded, hands the element to `browser/embed.py`, which calls
`mount(element)`: the widget is built from the element's attributes (a
shorthand for `define_chat`, see chat/widget_config.py) into the shell's box,
keeping whatever the reader already typed (focus and caret kept), and restores
the saved conversation. A page that builds its own definition calls the same
function:

    from agentskit_web.browser.widget import mount
    widget = await mount(element, define_chat(id=..., adapter=..., memory=...),
                         suggestions=[...], knowledge=artifact)

Styles come from the loader's stylesheet file in the shadow root (no inline
<style>, so a strict CSP holds); theming is through `--ak-*` custom properties.

Host events (bubbling, composed, dispatched on the element):
- `agentskit:feedback` `{messageId, value: "up"|"down"|null}`;
- `agentskit:source-open` `{messageId, instanceId, sourceId, url}` (cancelable:
  `preventDefault()` keeps the link from opening);
- `agentskit:component` `{messageId, event}` with a validated component event
  (cancelable likewise).

Keyboard: Enter sends, Shift+Enter adds a line; Cmd/Ctrl-K (caught by the
loader, which sends `agentskit:open`) opens the widget and focuses the question;
Esc collapses the inline box (the launcher's dialog closes itself). In a
question's inline editor (its Edit button) Enter saves, Shift+Enter adds a
line and Esc cancels the edit only.

While a turn adapter resumes a dropped connection, a status region above the
form says "Connection lost; reconnecting…" until the resume succeeds (it goes
away) or the adapter gives up (it goes away and the answer shows the error in
place with Retry).
"""

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Final

from ..chat.answer_feedback import FeedbackSender, feedback_body, feedback_url
from ..chat.ask.adapter import create_ask_adapter
from ..chat.components.catalog import validate_component_event
from ..chat.conversation import Connection, Conversation, ConversationEvent, StatusChanged
from ..chat.definition import ChatDefinition, define_chat
from ..chat.local_answers import LOCAL_CHOICES_INSTANCE
from ..chat.memory.glance import conversation_glance, glance_key
from ..chat.memory.legacy import create_ask_session_memory
from ..chat.memory.sync import decide_storage_sync
from ..chat.message import ChatMessage
from ..chat.view.component_view import (
    COMPONENT_EVENT,
    COMPONENT_SUBMIT,
    NO_EVENT_VALUE,
    build_component_event,
)
from ..chat.warm_up import first_answer_steps
from ..chat.widget_config import WidgetConfig, config_from_attributes, suggestions_from_attribute
from ..page_packages import INSTALLED_AFTER_READY
from ..transports import default_transport
from .conversation_view import ConversationView
from .dom_render import DomBuilder, UrlPolicy
from .js_values import attribute, present
from .web_storage import StorageKind

COPY_FEEDBACK_SECONDS: Final = 1.5
STATUS_TEXT: Final = {
    "loading": "Loading the conversation…",
    "streaming": "Answering…",
    "error": "The answer could not be completed. Retry or ask again.",
    "idle": "",
}
ANSWER_DONE: Final = "Answer complete."
BUSY_STATUS: Final = "Wait for the answer, or stop it, before asking again."
EMPTY_EDIT_STATUS: Final = "The question is empty: type a question, or cancel the edit."
STOPPED_STATUS: Final = "Stopped."
_KNOWLEDGE_UNAVAILABLE: Final = "unavailable"  # not an artifact: local answers escalate "corrupt"

_mounted: list["AskWidget"] = []
_tasks: set["asyncio.Task[Any]"] = set()


def _page() -> Any:
    import js  # only inside Pyodide

    return js


def _proxy(callback: Callable[..., Any]) -> Any:
    from pyodide.ffi import create_proxy  # only inside Pyodide

    return create_proxy(callback)


def _js_object(value: Mapping[str, Any]) -> Any:
    import js
    from pyodide.ffi import to_js

    return to_js(dict(value), dict_converter=js.Object.fromEntries)


def spawn(work: "Coroutine[Any, Any, Any]") -> "asyncio.Task[Any]":
    """Run a coroutine from an event handler, keeping a reference until it ends."""
    task = asyncio.ensure_future(work)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


class AskWidget:
    """One mounted widget: chrome, controls and the conversation they drive."""

    def __init__(
        self,
        host: Any,
        definition: ChatDefinition,
        config: WidgetConfig,
        *,
        knowledge: Any = None,
        storage: Any = None,
        notices: Sequence[str] = (),
    ) -> None:
        self.page = _page()
        self.document = self.page.document
        self.host = host
        self.definition = definition
        self.config = config
        self.storage = storage
        self._proxies: list[Any] = []
        self._listeners: list[tuple[Any, str, Any]] = []
        self._last_known: str | None = None
        self._stop_watch: Callable[[], None] | None = None
        self._return_focus: Any = None
        existing = host.shadowRoot
        self.root = (
            existing if present(existing) else host.attachShadow(_js_object({"mode": "open"}))
        )
        box = self.root.querySelector(".ak-box")
        self.box = box if present(box) else self.root
        _ensure_stylesheet(self.document, self.root)
        self._build()
        policy = UrlPolicy(
            self.page.URL.new,
            str(self.page.location.href),
            config.image_prefix,
            new_tab=config.links == "new-tab",
        )
        self.builder = DomBuilder(self.document, policy)
        self.conversation = Conversation(
            definition, knowledge=knowledge, online=lambda: bool(self.page.navigator.onLine)
        )
        self.view = ConversationView(
            self.builder,
            self.log,
            definition.components,
            schedule_frame=self._schedule_frame,
            on_status=self._on_status,
            on_notice=self.notice,
            clock=lambda: float(self.page.performance.now()),
            text=config.text,
            schedule_later=self._schedule_later,
        )
        # Until the packages installed after ready are in (markdown), events wait in order.
        self._held: list[ConversationEvent] | None = None
        later = install_later_packages()
        if not later.done():
            self._held = []
            later.add_done_callback(lambda _task: self._release_held())
        url = feedback_url(config)
        self.feedback = None if url is None else FeedbackSender(url, default_transport())
        """Sends 👍/👎 to the owner's backend; None keeps them in the browser only."""
        self.conversation.subscribe(self._on_event)
        self._wire()
        for text in notices:
            self.notice(text)

    # -- chrome ------------------------------------------------------------------------

    def _make(
        self, tag: str, attrs: Mapping[str, str] | None = None, text: str | None = None
    ) -> Any:
        element = self.document.createElement(tag)
        for name, value in (attrs or {}).items():
            element.setAttribute(name, value)
        if text is not None:
            element.textContent = text
        return element

    def _build(self) -> None:
        make = self._make
        config = self.config
        text = config.text
        self.widget = make(
            "section", {"class": "ak-widget", "aria-labelledby": "ak-heading", "data-open": "true"}
        )
        header = make("header", {"class": "ak-header"})
        header.appendChild(make("h2", {"class": "ak-heading", "id": "ak-heading"}, config.heading))
        self.new_button = make(
            "button", {"type": "button", "class": "ak-quiet ak-new"}, text("new")
        )
        self.toggle = make(
            "button",
            {
                "type": "button",
                "class": "ak-quiet ak-toggle",
                "aria-expanded": "true",
                "aria-controls": "ak-panel",
                "aria-keyshortcuts": "Control+K Meta+K Escape",
            },
            text("close"),
        )
        header.appendChild(self.new_button)
        header.appendChild(self.toggle)
        self.panel = make("div", {"class": "ak-panel", "id": "ak-panel"})
        self.log = make(
            "div",
            {
                "class": "ak-log",
                "role": "log",
                "aria-live": "polite",
                "aria-relevant": "additions text",
                "aria-label": "Conversation",
                "aria-busy": "false",
                "tabindex": "0",
            },
        )
        # What the box is for, while the conversation is empty (the loader's shell shows the
        # same line before Python starts), so a reader never opens onto a blank box.
        self.intro = make("p", {"class": "ak-intro"}, text("intro"))
        self.suggestions = make(
            "div", {"class": "ak-suggestions", "role": "group", "aria-label": "Suggested questions"}
        )
        for suggestion in config.suggestions:
            self.suggestions.appendChild(
                make("button", {"type": "button", "data-suggestion": "true"}, suggestion)
            )
        self.suggestions.hidden = not config.suggestions
        self.form = make("form", {"class": "ak-form", "aria-label": "Ask a question"})
        self.input = make(
            "textarea",
            {
                "class": "ak-input",
                "id": "ak-input",
                "rows": "1",
                "name": "question",
                "autocomplete": "off",
                "placeholder": config.placeholder,
                "aria-label": text("label"),
                "aria-keyshortcuts": "Enter",
            },
        )
        self.send_button = make("button", {"type": "submit", "class": "ak-send"}, text("send"))
        self.stop_button = make(
            "button",
            {"type": "button", "class": "ak-stop", "aria-label": text("stop_label")},
            text("stop"),
        )
        self.stop_button.hidden = True
        for child in (self.input, self.send_button, self.stop_button):
            self.form.appendChild(child)
        self.status = make("p", {"class": "ak-status", "role": "status", "aria-live": "polite"})
        self.connection = make(
            "p", {"class": "ak-connection", "role": "status", "aria-live": "polite"}
        )
        self.connection.hidden = True
        self.disclaimer = make("p", {"class": "ak-disclaimer"}, config.disclaimer)
        for child in (self.intro, self.log, self.suggestions):
            self.panel.appendChild(child)
        for child in (header, self.panel, self.connection, self.form, self.status, self.disclaimer):
            self.widget.appendChild(child)
        self.box.replaceChildren(self.widget)

    # -- wiring -------------------------------------------------------------------------

    def _listen(self, target: Any, name: str, callback: Callable[[Any], Any]) -> None:
        proxy = _proxy(callback)
        self._proxies.append(proxy)
        self._listeners.append((target, name, proxy))
        target.addEventListener(name, proxy)

    def _wire(self) -> None:
        self._listen(self.form, "submit", self._on_submit)
        self._listen(self.input, "keydown", self._on_input_key)
        self._listen(self.stop_button, "click", lambda _e: self.conversation.stop())
        self._listen(self.new_button, "click", self._on_new)
        self._listen(self.toggle, "click", self._on_toggle)
        self._listen(self.log, "click", self._on_log_click)
        self._listen(self.log, "keydown", self._on_editor_key)
        self._listen(self.log, "scroll", lambda _e: self.view.on_scroll())
        self._listen(self.suggestions, "click", self._on_suggestion)
        self._listen(self.root, "keydown", self._on_widget_key)
        self._listen(self.host, "agentskit:open", self._on_open_request)

    def unmount(self) -> None:
        """Remove every listener this widget added (the DOM stays as it is)."""
        for target, name, proxy in self._listeners:
            with contextlib.suppress(Exception):
                target.removeEventListener(name, proxy)
        for proxy in self._proxies:
            with contextlib.suppress(Exception):
                proxy.destroy()
        self._listeners.clear()
        self._proxies.clear()
        if self._stop_watch is not None:
            with contextlib.suppress(Exception):
                self._stop_watch()
            self._stop_watch = None
        if self in _mounted:
            _mounted.remove(self)

    async def start(self) -> None:
        """Restore the saved conversation and follow other tabs."""
        await self.conversation.load()
        self._remember_stored()
        self._watch_other_tabs()

    # -- status and notices --------------------------------------------------------------

    def _on_status(self, status: str) -> None:
        busy = status in ("loading", "streaming")
        if busy:
            self.host.setAttribute("data-busy", "")
        else:
            self.host.removeAttribute("data-busy")
        focused = self.root.activeElement
        send_focused = present(focused) and focused == self.send_button
        stop_focused = present(focused) and focused == self.stop_button
        self.stop_button.hidden = status != "streaming"
        self.send_button.hidden = status == "streaming"
        if status == "streaming" and send_focused:
            self.stop_button.focus()  # keyboard users keep a focused control
        elif status != "streaming" and stop_focused:
            self.input.focus()
        text = STATUS_TEXT.get(status, "")
        last = self.conversation.last_answer()
        if status == "idle" and last is not None and last.status == "complete":
            text = STOPPED_STATUS if last.stopped else ANSWER_DONE
        self.status.textContent = text
        if status in ("idle", "error"):
            self._remember_stored()

    def notice(self, text: str) -> None:
        """Say something once, discreetly, in the status line."""
        self.status.textContent = text
        self.host.setAttribute("data-notice", text)

    @property
    def holding(self) -> bool:
        """Whether events wait for the packages installed after ready."""
        return self._held is not None

    def _on_event(self, event: ConversationEvent) -> None:
        if self._held is not None:
            self._held.append(event)
            return
        self.view.handle(event)
        self._after_event(event)

    def _release_held(self) -> None:
        held, self._held = self._held or [], None
        for event in held:
            self._on_event(event)

    def _after_event(self, event: ConversationEvent) -> None:
        empty = not self.conversation.messages
        last = self.conversation.last_answer()
        # After "not found in the docs" the suggestions come back: questions the docs do answer.
        not_found = last is not None and last.notice is not None
        self.suggestions.hidden = not ((empty or not_found) and self.config.suggestions)
        self.intro.hidden = not empty
        if isinstance(event, StatusChanged) and event.status == "streaming":
            self.host.setAttribute("data-streamed", "")
        if isinstance(event, Connection):
            self._show_connection(event.reconnecting)

    def _show_connection(self, reconnecting: bool) -> None:
        """The reconnecting state: shown (and announced) while it lasts, then removed."""
        self.connection.textContent = self.config.text("reconnecting") if reconnecting else ""
        self.connection.hidden = not reconnecting
        if reconnecting:
            self.host.setAttribute("data-reconnecting", "")
        else:
            self.host.removeAttribute("data-reconnecting")

    def _schedule_later(self, seconds: float, callback: Callable[[], None]) -> None:
        from pyodide.ffi import create_once_callable

        self.page.setTimeout(create_once_callable(callback), int(seconds * 1000))

    def _schedule_frame(self, callback: Callable[[], None]) -> None:
        from pyodide.ffi import create_once_callable

        self.page.requestAnimationFrame(create_once_callable(lambda _t: callback()))

    # -- questions ------------------------------------------------------------------------

    def ask(self, question: str) -> None:
        """Send a question (as the send button does)."""
        spawn(self._send(question))

    async def _send(self, question: str) -> None:
        if await self.conversation.send(question):
            return
        if self.conversation.busy:
            self.status.textContent = BUSY_STATUS

    def _on_submit(self, event: Any) -> None:
        event.preventDefault()
        question = str(self.input.value)
        if self.conversation.busy or not question.strip():
            if self.conversation.busy:
                self.status.textContent = BUSY_STATUS
            return
        self.input.value = ""
        self.ask(question)

    def _on_input_key(self, event: Any) -> None:
        if str(event.key) != "Enter" or bool(event.shiftKey) or bool(event.isComposing):
            return
        event.preventDefault()
        self.form.requestSubmit()

    def _on_suggestion(self, event: Any) -> None:
        button = event.target.closest("button[data-suggestion]")
        if present(button):
            self.ask(str(button.textContent))

    def _on_new(self, _event: Any) -> None:
        spawn(self._new())

    async def _new(self) -> None:
        await self.conversation.new_conversation()
        self._remember_stored()
        self.status.textContent = self.config.text("new_done")
        self.input.focus()

    # -- open / close ---------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        return str(self.widget.getAttribute("data-open")) == "true"

    def open(self, focus: bool = True) -> None:
        self.widget.setAttribute("data-open", "true")
        self.panel.hidden = False
        self.form.hidden = False
        self.toggle.setAttribute("aria-expanded", "true")
        self.toggle.textContent = self.config.text("close")
        if focus:
            self.input.focus()

    def close(self) -> None:
        if self.config.layout == "launcher":
            self.host.close()  # the loader's dialog: focus goes back where it was
            return
        self.widget.setAttribute("data-open", "false")
        self.panel.hidden = True
        self.form.hidden = True
        self.toggle.setAttribute("aria-expanded", "false")
        self.toggle.textContent = self.config.text("open")
        target = self._return_focus
        self._return_focus = None
        if present(target) and bool(target.isConnected):
            target.focus()
        else:
            self.toggle.focus()

    def _on_toggle(self, _event: Any) -> None:
        if self.is_open:
            self.close()
        else:
            self.open()

    def _on_open_request(self, _event: Any) -> None:
        """Ctrl/Cmd-K, caught by the loader for every layout: open and focus the question."""
        active = self.document.activeElement
        if present(active) and active != self.host:
            self._return_focus = active
        self.open()

    def _on_widget_key(self, event: Any) -> None:
        if self.config.layout == "launcher":
            return  # the dialog closes itself on Esc
        if str(event.key) == "Escape" and self.is_open:
            event.preventDefault()
            event.stopPropagation()
            self.close()

    # -- message actions ------------------------------------------------------------------

    def _message_id(self, target: Any) -> str | None:
        holder = target.closest("[data-message-id]")
        return attribute(holder, "data-message-id") if present(holder) else None

    def _on_log_click(self, event: Any) -> None:
        target = event.target
        if not present(target) or not hasattr(target, "closest"):
            return
        control = target.closest("[data-ui], [data-action]")
        if not present(control):
            return
        message_id = self._message_id(control)
        ui = attribute(control, "data-ui")
        action = attribute(control, "data-action")
        if ui is not None and message_id is not None:
            self._message_action(ui, message_id, control)
        elif action == "copy-code":
            block = control.closest(".ak-codeblock")
            code: Any = block.querySelector("code") if present(block) else None
            if present(code):
                spawn(self._copy(str(code.textContent), control))
        elif action in (COMPONENT_EVENT, COMPONENT_SUBMIT) and message_id is not None:
            self._component_action(event, control, message_id, action)

    def _message_action(self, ui: str, message_id: str, control: Any) -> None:
        conversation = self.conversation
        if ui == "copy":
            spawn(self._copy(conversation.plain_text(message_id), control))
        elif ui in ("up", "down"):
            message = conversation.find(message_id)
            value = None if message is not None and message.feedback == ui else ui
            spawn(self._feedback(message_id, value))
        elif ui == "comment-send":
            box = control.closest(".ak-feedback-comment")
            field: Any = box.querySelector("textarea") if present(box) else None
            comment = str(field.value) if present(field) else ""
            self.view.close_comment(message_id)
            spawn(self._send_feedback(message_id, "down", comment))
        elif ui == "comment-skip":
            self.view.close_comment(message_id)
        elif ui == "regenerate":
            spawn(conversation.regenerate())
        elif ui == "retry":
            spawn(conversation.retry())
        elif ui == "edit":
            self._open_editor(message_id)
        elif ui == "edit-save":
            self._save_edit(message_id, control)
        elif ui == "edit-cancel":
            self.view.close_editor(message_id)

    # -- editing a question -------------------------------------------------------------

    def _open_editor(self, message_id: str) -> None:
        message = self.conversation.find(message_id)
        if message is None or message.role != "user":
            return
        if self.conversation.busy:
            self.status.textContent = BUSY_STATUS
            return
        field = self.view.open_editor(message_id, message.content)
        if present(field):
            field.focus()
            end = len(str(field.value))
            field.setSelectionRange(end, end)

    def _save_edit(self, message_id: str, control: Any) -> None:
        editor = control.closest(".ak-editor")
        field: Any = editor.querySelector("textarea") if present(editor) else None
        if not present(field):
            return
        text = str(field.value)
        if not text.strip():
            self.status.textContent = EMPTY_EDIT_STATUS
            field.focus()
            return
        if self.conversation.busy:
            self.status.textContent = BUSY_STATUS
            return
        self.input.focus()  # the edited question and what followed are about to be replaced
        spawn(self.conversation.edit(message_id, text))

    def _on_editor_key(self, event: Any) -> None:
        """Enter saves, Shift+Enter adds a line, Esc cancels (and does not close the box)."""
        target = event.target
        if not present(target) or not hasattr(target, "closest"):
            return
        editor = target.closest(".ak-editor")
        message_id = self._message_id(target) if present(editor) else None
        if message_id is None:
            return
        key = str(event.key)
        comment = present(target.closest(".ak-feedback-comment"))
        if key == "Escape":
            event.preventDefault()
            event.stopPropagation()
            if comment:
                self.view.close_comment(message_id)
            else:
                self.view.close_editor(message_id)
        elif key == "Enter" and str(target.tagName).lower() == "textarea":
            if bool(event.shiftKey) or bool(event.isComposing):
                return
            event.preventDefault()
            if comment:  # the thumbs-down comment of an answer, not a question's editor
                self._message_action("comment-send", message_id, target)
            else:
                self._save_edit(message_id, target)

    async def _feedback(self, message_id: str, value: Any) -> None:
        detail = await self.conversation.set_feedback(message_id, value)
        if detail is not None:
            self.dispatch("agentskit:feedback", detail, cancelable=False)
        if value not in ("up", "down") or self.feedback is None:
            if value != "down":
                self.view.close_comment(message_id)
            return
        # The vote goes at once; a comment, if the reader writes one, follows (the last wins).
        await self._send_feedback(message_id, value)
        if value == "down":
            field = self.view.open_comment(message_id)
            if present(field):
                field.focus()
        else:
            self.view.close_comment(message_id)

    async def _send_feedback(self, message_id: str, vote: Any, comment: str | None = None) -> None:
        """Best effort (chat/answer_feedback.py): a failed send leaves the vote in the browser."""
        if self.feedback is None:
            return
        body = feedback_body(self.conversation.messages, message_id, vote, comment)
        if body is not None and await self.feedback.send(body) and comment:
            self.status.textContent = self.config.text("comment_thanks")

    async def _copy(self, text: str, button: Any) -> None:
        label = str(button.textContent)
        try:
            await self.page.navigator.clipboard.writeText(text)
            button.textContent = (
                self.config.text("copied") if label == self.config.text("copy") else "✓"
            )
        except Exception:  # no clipboard permission: say so instead of failing silently
            button.textContent = (
                self.config.text("copy_failed") if label == self.config.text("copy") else "✗"
            )
        await asyncio.sleep(COPY_FEEDBACK_SECONDS)
        button.textContent = label

    def dispatch(self, name: str, detail: Mapping[str, Any], cancelable: bool = True) -> bool:
        """Dispatch a CustomEvent to the host page; False when the host cancelled it."""
        init = {"detail": _js_object(detail), "bubbles": True, "composed": True}
        init["cancelable"] = cancelable
        event = self.page.CustomEvent.new(name, _js_object(init))
        return bool(self.host.dispatchEvent(event))

    # -- components -------------------------------------------------------------------------

    def _component_action(self, event: Any, control: Any, message_id: str, action: str) -> None:
        component = control.closest("[data-instance]")
        if not present(component):
            return
        key = attribute(component, "data-key") or ""
        instance = attribute(component, "data-instance") or ""
        frame = self.view.frame(message_id, instance)
        name = attribute(control, "data-event") or ""
        if action == COMPONENT_SUBMIT:
            value: Any = self._form_value(component)
        else:
            raw = attribute(control, "data-value")
            value = NO_EVENT_VALUE if raw is None else raw
        wire = build_component_event(key, instance, name, value)
        checked = validate_component_event(self.definition.components, wire, frame)
        if not checked.ok:
            event.preventDefault()
            return
        allowed = self.dispatch("agentskit:component", {"messageId": message_id, "event": wire})
        if key == "source-list" and name == "open":
            source = {
                "messageId": message_id,
                "instanceId": instance,
                "sourceId": value,
                "url": str(control.href),
            }
            allowed = self.dispatch("agentskit:source-open", source) and allowed
        if not allowed:
            event.preventDefault()
        message = self.conversation.find(message_id)
        if (
            allowed
            and name == "select"
            and instance == LOCAL_CHOICES_INSTANCE
            and message is not None
            and message.local
        ):
            spawn(self.conversation.choose(instance, str(value), str(control.textContent)))

    def _form_value(self, component: Any) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for field in component.querySelectorAll("[name]"):
            name = attribute(field, "name") or ""
            kind = attribute(field, "data-key") or ""
            if kind == "checkbox":
                values[name] = bool(field.checked)
            elif str(field.value) != "":
                values[name] = str(field.value)
        return values

    # -- two tabs ----------------------------------------------------------------------------

    def _remember_stored(self) -> None:
        """Note what is stored now (for other tabs' changes) and keep its glance beside it:
        called when the conversation settles (loaded, answered, failed, cleared, replaced)."""
        storage = self.storage
        if storage is None:
            return
        with contextlib.suppress(Exception):
            self._last_known = storage.get_item(self.config.storage_key)
        keep_glance(storage, self.config.storage_key, self.conversation.messages)

    def _watch_other_tabs(self) -> None:
        if self.storage is None or self.config.storage == "none":
            return
        from .web_storage import watch_other_tabs

        def listener(event_key: str | None, incoming: str | None) -> None:
            decision = decide_storage_sync(
                key=self.config.storage_key,
                event_key=event_key,
                incoming=incoming,
                last_known=self._last_known,
                busy=self.conversation.busy,
            )
            if decision.action == "replace" and self.conversation.replace_messages(
                decision.messages
            ):
                self._last_known = decision.last_known
                keep_glance(self.storage, self.config.storage_key, self.conversation.messages)

        kind: StorageKind = "session" if self.config.storage == "session" else "local"
        with contextlib.suppress(Exception):  # no storage events: one tab still works
            self._stop_watch = watch_other_tabs(self.config.storage_key, listener, kind)


def keep_glance(storage: Any, storage_key: str, messages: Sequence[ChatMessage]) -> None:
    """Store the conversation's glance (chat/memory/glance.py) for the loader to paint on
    the next page view without Python, or remove it when the conversation is empty. A
    full or blocked storage only costs the next page its glance."""
    text = conversation_glance(messages)
    key = glance_key(storage_key)
    with contextlib.suppress(Exception):
        if text is None:
            storage.remove_item(key)
        else:
            storage.set_item(key, text)


# -- mounting ---------------------------------------------------------------------------------


def definition_from_config(config: WidgetConfig, notices: list[str]) -> tuple[ChatDefinition, Any]:
    """The chat definition an element's attributes describe, and the storage it uses."""
    storage: Any = None
    if config.storage != "none":
        from .web_storage import open_web_storage

        kind: StorageKind = "session" if config.storage == "session" else "local"
        storage = open_web_storage(kind, notices.append)
    memory: Any = create_ask_session_memory(
        key=config.storage_key, legacy_keys=config.legacy_keys, storage=storage
    )
    adapter: Any
    if config.protocol == "turn":
        from ..chat.turn.adapter import create_turn_adapter
        from ..chat.turn.memory import TurnMemory

        # The server holds the conversation; Web Storage (legacy keys included) is the cache.
        adapter = create_turn_adapter(endpoint=config.endpoint)
        memory = TurnMemory(adapter, memory, session_key=config.storage_key + ":session")
    else:
        adapter = _ask_or_static_adapter(config, static_index_url())
    return define_chat(id=config.chat_id, adapter=adapter, memory=memory), storage


def answers_mode(config: WidgetConfig, static_index: str | None) -> str:
    """`static` when the page answers from the site's static index (no `endpoint` named
    and an index published), else `backend` (with the index behind it as a fallback)."""
    if config.protocol == "ask" and not config.endpoint_set and static_index is not None:
        return "static"
    return "backend"


def _ask_or_static_adapter(config: WidgetConfig, static_index: str | None) -> Any:
    """The Ask adapter the element describes: static answers, the backend, or the backend
    with the static index behind it (chat/static_answers.py)."""
    if static_index is None:
        return create_ask_adapter(
            endpoint=config.endpoint, corpus=config.corpus, persona=config.persona
        )
    from ..chat.static_answers import FallbackAdapter, create_static_answers_adapter

    static = create_static_answers_adapter(manifest_url=static_index)
    if answers_mode(config, static_index) == "static":
        return static
    backend = create_ask_adapter(
        endpoint=config.endpoint, corpus=config.corpus, persona=config.persona
    )
    return FallbackAdapter(backend, static)


def static_index_url() -> str | None:
    """The static index manifest the loader was told about at build time (an absolute
    same-origin URL), or None when the site published none or there is no loader."""
    try:
        page = _page()
        value = page.agentskitAsk.staticIndex
    except Exception:  # no loader on this page (a page mounting the widget itself)
        return None
    if not isinstance(value, str) or not value:
        return None
    try:
        target = page.URL.new(value, page.location.href)
    except Exception:
        return None
    if str(target.origin) != str(page.location.origin):
        return None  # never another origin, whatever the global says
    return str(target.href)


def _ensure_stylesheet(document: Any, root: Any) -> None:
    """The widget's stylesheet in `root`: the loader links it; a host mounted without the
    loader's shell gets the same file, found through the loader's published assets."""
    if present(root.querySelector("link.ak-stylesheet")):
        return
    try:
        page = _page()
        assets = page.agentskitAsk.assets
        href = str(page.URL.new(assets.stylesheet, page.agentskitAsk.base).href)
    except Exception:  # no loader on this page: the widget still works, unstyled
        return
    link = document.createElement("link")
    link.setAttribute("rel", "stylesheet")
    link.setAttribute("class", "ak-stylesheet")
    link.setAttribute("href", href)
    root.prepend(link)


def _take_shell_input(host: Any) -> tuple[str, bool, int | None]:
    """What the reader typed into the loader's shell before Python was ready."""
    root = host.shadowRoot
    shell_input: Any = root.querySelector(".ak-input") if present(root) else None
    if not present(shell_input):
        return "", False, None
    focused = root.activeElement == shell_input
    caret = shell_input.selectionEnd if focused else None
    position = int(caret) if isinstance(caret, int | float) else None
    return str(shell_input.value or ""), focused, position


async def mount(
    host: Any,
    definition: ChatDefinition | None = None,
    *,
    suggestions: Sequence[str] | None = None,
    knowledge: Any = None,
    config: WidgetConfig | None = None,
) -> AskWidget:
    """Mount the widget on `host` (an `agentskit-ask` or any element) and restore memory.

    `definition` defaults to the one the element's attributes describe;
    `suggestions` overrides the `suggestions` attribute; `knowledge` is a
    knowledge artifact (dict, text or verified model) for local answers,
    otherwise the `knowledge` attribute's URL is fetched (same origin only).
    """
    settings = config or config_from_attributes(lambda name: attribute(host, name))
    if suggestions is not None:
        settings = _with_suggestions(settings, suggestions)
    notices: list[str] = []
    storage: Any = None
    if definition is None:
        definition, storage = definition_from_config(settings, notices)
    typed, focused, caret = _take_shell_input(host)
    widget = AskWidget(
        host, definition, settings, knowledge=knowledge, storage=storage, notices=notices
    )
    host.setAttribute("data-mounted", "")
    host.setAttribute("data-answers", _answers_shown(definition))
    widget.input.value = typed
    if focused:
        widget.input.focus()
        if caret is not None:
            widget.input.setSelectionRange(caret, caret)
    _mounted.append(widget)
    await widget.start()
    if widget.holding and widget.conversation.messages:
        await install_later_packages()  # a restored conversation is drawn before ready
    # What the first answer runs besides its adapter: a FAQ's local answer, sources, the save.
    first_use = first_answer_steps(knowledge is not None or bool(settings.knowledge_url))
    if getattr(definition.adapter, "answers", None) == "static":
        warm_static_answers(widget.page, host, definition.adapter, first_use)
    else:  # an adapter with its own steps (the Ask stream's first answer) runs them first
        adapter_steps: list[Callable[[], object]] = getattr(
            definition.adapter, "warm_up_steps", list
        )()
        run_when_idle(widget.page, [*adapter_steps, *first_use], lambda: None, 1000)
    if knowledge is None and settings.knowledge_url:
        # Questions wait for the artifact, so an FAQ question asked right away is still local.
        widget.conversation.knowledge_pending = spawn(
            _load_knowledge(widget, settings.knowledge_url)
        )
    return widget


def _answers_shown(definition: ChatDefinition) -> str:
    """`data-answers`: what answers this element's questions, as its adapter says
    (`StaticAnswersAdapter.answers`); any other adapter is a backend."""
    return "static" if getattr(definition.adapter, "answers", None) == "static" else "backend"


def _with_suggestions(config: WidgetConfig, suggestions: Sequence[str]) -> WidgetConfig:
    from dataclasses import replace

    return replace(config, suggestions=suggestions_from_attribute(list(suggestions)))


async def _load_knowledge(widget: AskWidget, url: str) -> None:
    """Fetch the FAQ artifact from this origin; unusable means "escalate as corrupt"."""
    from ..protocol.knowledge import parse_knowledge_artifact

    page = widget.page
    try:
        target = page.URL.new(url, page.location.href)
        if str(target.origin) != str(page.location.origin):
            return  # never fetch another origin
        response = await page.fetch(str(target.href), _js_object({"credentials": "same-origin"}))
        text = str(await response.text()) if bool(response.ok) else ""
    except Exception:  # offline or missing: local answers cannot be trusted
        text = ""
    decoded = parse_knowledge_artifact(text) if text else None
    usable = decoded is not None and decoded.ok
    widget.conversation.knowledge = (
        decoded.artifact if decoded is not None and usable else _KNOWLEDGE_UNAVAILABLE
    )
    widget.host.setAttribute("data-knowledge", "ready" if usable else "unavailable")


_later_packages: "asyncio.Task[None] | None" = None


def install_later_packages() -> "asyncio.Task[None]":
    """Install the packages left out of the boot (`page_packages.INSTALLED_AFTER_READY`),
    once per page; the task ends when they are in or have failed (markdown then shows
    as plain text: chat/view/markdown_tree.py)."""
    global _later_packages
    if _later_packages is None:
        _later_packages = spawn(_install_later_packages())
    return _later_packages


async def _install_later_packages() -> None:
    import pyodide_js  # only inside Pyodide
    from pyodide.ffi import to_js

    try:
        names = to_js(list(INSTALLED_AFTER_READY))
        await pyodide_js.loadPackage(names, _js_object({"checkIntegrity": True}))
        boot_step("later-packages")
    except Exception as error:  # offline without the files: answers show as plain text
        _page().console.warn(f"agentskit-ask: markdown is shown as plain text ({error})")


def boot_step(name: str) -> None:
    """The loader's boot step marks (`agentskit:boot:<name>`), for the work done after ready:
    the `boot` bench attributes each long task to the step it belongs to."""
    _page().performance.mark(f"agentskit:boot:{name}")


def run_when_idle(
    page: Any, steps: Sequence[Callable[[], object]], then: Callable[[], object], timeout_ms: int
) -> None:
    """Run `steps` one per idle callback (each its own task, so none adds up to a long
    one while the reader types), then `then`. A step that raises only costs what it
    warms (the first answer does that work itself). Where the browser has no
    requestIdleCallback (Safari), each step is a zero-delay timeout: still a task of
    its own."""
    from pyodide.ffi import create_once_callable

    left = list(steps)
    idle = getattr(page, "requestIdleCallback", None)

    def schedule() -> None:
        if idle is not None:
            idle(create_once_callable(next_step), _js_object({"timeout": timeout_ms}))
        else:
            page.setTimeout(create_once_callable(next_step), 0)

    def next_step(_deadline: Any = None) -> None:
        with contextlib.suppress(Exception):
            left.pop(0)()
        if left:
            schedule()
        else:
            then()

    if left:
        schedule()
    else:
        then()


def warm_up_when_idle(page: Any) -> None:
    """Import the markdown parser once it is installed and the page is idle, so the first
    answer never waits on it: one module per idle callback (`MARKDOWN_IMPORTS`, through
    package_steps.StepwiseImport: no step runs the package's `__init__`), then the
    parser, then a made-up answer rendered (chat/warm_up.py `first_render`), so no step
    is a long task of its own."""
    from ..chat.view.markdown_tree import markdown_parser
    from ..chat.warm_up import first_render
    from ..package_steps import StepwiseImport
    from .boot_imports import MARKDOWN_IMPORTS

    def start(_task: Any) -> None:
        steps = [
            *StepwiseImport("markdown_it", MARKDOWN_IMPORTS).steps(),
            markdown_parser,
            first_render,
        ]
        run_when_idle(page, steps, lambda: boot_step("markdown-warm"), 3000)

    install_later_packages().add_done_callback(start)


def warm_static_answers(
    page: Any, host: Any, adapter: Any, first_use: Sequence[Callable[[], object]] = ()
) -> None:
    """Once the page is idle, run what a static answer runs and then `first_use`, a step
    per idle callback, and read the index's manifest when the reader's intent fetched it
    (chat/static_answers.py `warm_up_steps`, `read_manifest_early`), so the first question
    pays for none of it."""
    try:
        wanted = bool(page.agentskitAsk.staticIndexWanted())
    except Exception:  # no loader: nothing was prefetched, fetch nothing early
        wanted = False

    async def read_and_say() -> None:
        if await adapter.read_manifest_early(wanted):
            host.setAttribute("data-index", "ready")  # tests and the bench wait on it

    steps = [*adapter.warm_up_steps(), *first_use]
    run_when_idle(page, steps, lambda: spawn(read_and_say()), 1000)
