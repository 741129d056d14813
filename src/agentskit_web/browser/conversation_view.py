"""The conversation log in the DOM, driven by the controller's small events.

Each event touches only what it names: `Appended` adds one message element,
`PartsAppended` renders only the new parts of one answer (through
`dom_render.MessageBody`), `Updated` refreshes one message's status, error,
note and buttons, `Removed` drops one element; only `Reset` rebuilds the log.

Accessibility: the log is `role="log"` with `aria-live="polite"`; while an
answer streams it is `aria-busy="true"`, so assistive technology reads the
finished answer instead of every token. Errors are `role="alert"` inside the
message they belong to, below what streamed, with a Retry button.

A question has an Edit button: `open_editor` swaps its text for an inline
editor (a labelled textarea holding the text, Save and Cancel buttons);
`close_editor` puts the text back and focus on Edit. Saving is the widget's
job (`Conversation.edit`), whose `Removed`/`Appended` events replace the
question and everything after it.

Scrolling follows the stream only while the reader is within
`FOLLOW_THRESHOLD_PX` of the bottom; scrolling up stops it until the reader
comes back down (or asks a new question: that question is always scrolled
into view). Following never goes past the latest question: once a long answer
fills the log, the question stays at its top (QUESTION_MARGIN_PX below it) and
following stops, so a finished answer reads from its beginning and the reader
scrolls on at their own pace. A restored conversation opens at its last
question likewise. The scroll itself is written once per animation frame, not
per chunk.

Message chrome (labels, buttons) is built with `createElement` and
`textContent` from fixed strings; message text only ever becomes text nodes.
"""

from collections.abc import Callable
from typing import Any, Final

from ..chat.conversation import (
    Appended,
    ConversationEvent,
    Notice,
    PartsAppended,
    Removed,
    Reset,
    StatusChanged,
    Updated,
)
from ..chat.message import ChatMessage
from ..chat.widget_config import DEFAULT_STRINGS
from ..protocol.limits import FEEDBACK_COMMENT_MAX_CHARS
from .dom_render import DomBuilder, MessageBody, render_message_body
from .js_values import present

FOLLOW_THRESHOLD_PX: Final = 48
QUESTION_MARGIN_PX: Final = 8
"""Room left above the latest question when it is scrolled to the top of the log."""
SVG_NS: Final = "http://www.w3.org/2000/svg"
ICONS: Final = {
    "up": (
        "M7 10v11H4a1 1 0 0 1-1-1v-9a1 1 0 0 1 1-1h3zm0 0 4-8a2.5 2.5 0 0 1 2.5 2.5V9h5.3"
        "a2 2 0 0 1 2 2.3l-1.3 8A2 2 0 0 1 17.5 21H7"
    ),
    "down": (
        "M17 14V3h3a1 1 0 0 1 1 1v9a1 1 0 0 1-1 1h-3zm0 0-4 8a2.5 2.5 0 0 1-2.5-2.5V15H5.2"
        "a2 2 0 0 1-2-2.3l1.3-8A2 2 0 0 1 6.5 3H17"
    ),
}
"""Stroke paths (24x24) for the thumbs buttons: drawn, so no emoji font is needed."""
STOPPED_NOTE: Final = "Stopped."
LOCAL_NOTE: Final = "Answered from this site's FAQ."


def DEFAULT_TEXT(key: str) -> str:
    """The default UI string for `key`."""
    return DEFAULT_STRINGS[key]


RETRY_IN = "Retry in {seconds} s"


class _MessageElement:
    """The DOM of one message and the parts of it that change."""

    def __init__(self, view: "ConversationView", message: ChatMessage) -> None:
        self.view = view
        self.message_id = message.id
        self.role = message.role
        make = view.make
        # dir=auto + unicode-bidi: isolate (CSS): one message's direction never leaks into the next.
        self.element = make("article", {"class": f"ak-message ak-{message.role}", "dir": "auto"})
        self.element.setAttribute("data-message-id", message.id)
        label = self.view.text("you") if message.role == "user" else self.view.text("assistant")
        self.element.appendChild(make("p", {"class": "ak-visually-hidden"}, label))
        self.body_element = make("div", {"class": "ak-body"})
        self.element.appendChild(self.body_element)
        self.body: MessageBody | None = None
        self.error: Any = None
        self.note: Any = None
        self.actions: Any = None
        self.thinking: Any = None
        self.editor: Any = None
        self.comment: Any = None
        if message.role == "user":
            self.body_element.appendChild(make("p", {"class": "ak-user-text"}, message.content))
            self._question_actions()
            return
        if message.status == "streaming":
            self.body = MessageBody(view.builder, self.body_element, view.manifest)
            self.thinking = make("p", {"class": "ak-thinking"}, self.view.text("thinking"))
            self.body_element.appendChild(self.thinking)
        else:
            self.body = render_message_body(view.builder, self.body_element, message, view.manifest)
        self.refresh(message)

    def parts(self, parts: tuple[dict[str, Any], ...]) -> None:
        if self.thinking is not None:
            self.thinking.remove()
            self.thinking = None
        if self.body is not None:
            self.body.append_parts(parts)

    def refresh(self, message: ChatMessage) -> None:
        """Status, in-place error, note and action buttons of an assistant message."""
        self.element.setAttribute("data-status", message.status)
        if message.status == "streaming":
            return
        if self.thinking is not None:
            self.thinking.remove()
            self.thinking = None
        if self.body is not None:
            self.body.finish()
        self._notice(message)
        self._error(message)
        self._note(message)
        self._actions(message)

    def _notice(self, message: ChatMessage) -> None:
        """A server's plain-text answer ("not found in the docs"): shown as the answer, as text."""
        if message.notice is None or self.body_element.querySelector(".ak-message-notfound"):
            return
        notice = self.view.make("p", {"class": "ak-message-notfound"}, message.notice)
        self.body_element.appendChild(notice)

    def _error(self, message: ChatMessage) -> None:
        if message.error is None:
            if self.error is not None:
                self.error.remove()
                self.error = None
            return
        if self.error is not None:
            return
        make = self.view.make
        self.error = make("div", {"class": "ak-message-error", "role": "alert"})
        self.error.appendChild(make("p", {"class": "ak-message-error-text"}, message.error))
        if message.retry:  # offered only when trying again can help
            retry = make(
                "button",
                {
                    "type": "button",
                    "class": "ak-retry-answer",
                    "data-ui": "retry",
                    "aria-label": self.view.text("retry_label"),
                },
                self.view.text("retry"),
            )
            self.error.appendChild(retry)
            if message.retry_after:
                self.view.count_down(retry, message.retry_after)
        self.element.insertBefore(self.error, self.actions)

    def _note(self, message: ChatMessage) -> None:
        text = STOPPED_NOTE if message.stopped else LOCAL_NOTE if message.local else None
        if text is None and message.in_page is not None:  # answered from the static index
            text = self.view.text(f"{message.in_page}_note")
        if text is None or self.note is not None:
            return
        self.note = self.view.make("p", {"class": "ak-message-note"}, text)
        if message.in_page is not None:
            self.note.setAttribute("data-in-page", message.in_page)
        self.element.insertBefore(self.note, self.actions)

    def _question_actions(self) -> None:
        self.actions = self.view.make("div", {"class": "ak-message-actions", "role": "group"})
        self.actions.setAttribute("aria-label", "Question actions")
        label = self.view.text("edit_label")
        edit = self.view.make(
            "button",
            {"type": "button", "class": "ak-edit", "data-ui": "edit", "aria-label": label},
            self.view.text("edit"),
        )
        edit.setAttribute("title", label)
        self.actions.appendChild(edit)
        self.element.appendChild(self.actions)

    def open_editor(self, text: str) -> Any:
        """Swap the question for an inline editor holding `text`; returns its textarea."""
        if self.editor is not None:
            return self.editor.querySelector("textarea")
        make, words = self.view.make, self.view.text
        self.editor = make("div", {"class": "ak-editor", "role": "group"})
        self.editor.setAttribute("aria-label", words("edit_field"))
        field = make(
            "textarea",
            {
                "class": "ak-edit-input",
                "rows": "3",
                "aria-label": words("edit_field"),
                "aria-keyshortcuts": "Enter Escape",
            },
        )
        field.value = text
        self.editor.appendChild(field)
        buttons = make("div", {"class": "ak-editor-actions"})
        for ui, key, classes in (
            ("edit-save", "save", "ak-edit-save"),
            ("edit-cancel", "cancel", "ak-quiet ak-edit-cancel"),
        ):
            attrs = {"type": "button", "class": classes, "data-ui": ui}
            attrs["aria-label"] = words(key + "_label")
            buttons.appendChild(make("button", attrs, words(key)))
        self.editor.appendChild(buttons)
        self.body_element.hidden = True
        self.actions.hidden = True
        self.element.setAttribute("data-editing", "")
        self.element.appendChild(self.editor)
        return field

    def close_editor(self) -> None:
        """Put the question back as it was; focus returns to its Edit button."""
        if self.editor is None:
            return
        self.editor.remove()
        self.editor = None
        self.body_element.hidden = False
        self.actions.hidden = False
        self.element.removeAttribute("data-editing")
        edit = self.actions.querySelector('[data-ui="edit"]')
        if present(edit):
            edit.focus()

    def open_comment(self) -> Any:
        """Below a thumbs-down answer, a field for what was wrong (optional); its textarea."""
        if self.comment is not None:
            return self.comment.querySelector("textarea")
        make, words = self.view.make, self.view.text
        self.comment = make("div", {"class": "ak-editor ak-feedback-comment", "role": "group"})
        self.comment.setAttribute("aria-label", words("comment_field"))
        field = make(
            "textarea",
            {
                "class": "ak-edit-input",
                "rows": "2",
                "maxlength": str(FEEDBACK_COMMENT_MAX_CHARS),
                "aria-label": words("comment_field"),
                "placeholder": words("comment_field"),
            },
        )
        self.comment.appendChild(field)
        buttons = make("div", {"class": "ak-editor-actions"})
        for ui, key, classes in (
            ("comment-send", "comment_send", "ak-comment-send"),
            ("comment-skip", "comment_skip", "ak-quiet ak-comment-skip"),
        ):
            buttons.appendChild(make("button", {"type": "button", "class": classes, "data-ui": ui},
                                     words(key)))  # fmt: skip
        self.comment.appendChild(buttons)
        self.element.appendChild(self.comment)
        return field

    def close_comment(self) -> None:
        """Remove the comment field; focus returns to the thumbs down."""
        if self.comment is None:
            return
        self.comment.remove()
        self.comment = None
        if self.actions is None:
            return
        down: Any = self.actions.querySelector('[data-ui="down"]')
        if present(down):
            down.focus()

    def _actions(self, message: ChatMessage) -> None:
        make = self.view.make
        if self.actions is None:
            self.actions = make("div", {"class": "ak-message-actions", "role": "group"})
            self.actions.setAttribute("aria-label", "Answer actions")
            buttons = [
                ("copy", self.view.text("copy"), self.view.text("copy_label"), "ak-copy"),
                ("up", None, self.view.text("up_label"), "ak-thumb ak-up"),
                ("down", None, self.view.text("down_label"), "ak-thumb ak-down"),
                (
                    "regenerate",
                    self.view.text("regenerate"),
                    self.view.text("regenerate_label"),
                    "ak-regenerate",
                ),
            ]
            for action, text, label, classes in buttons:
                button = make(
                    "button",
                    {"type": "button", "class": classes, "data-ui": action, "aria-label": label},
                    text,
                )
                button.setAttribute("title", label)
                if text is None:
                    button.appendChild(self.view.icon(ICONS[action]))
                self.actions.appendChild(button)
            self.element.appendChild(self.actions)
        for value in ("up", "down"):
            button = self.actions.querySelector(f'[data-ui="{value}"]')
            if present(button):
                button.setAttribute(
                    "aria-pressed", "true" if message.feedback == value else "false"
                )


class ConversationView:
    """Renders a `Conversation` into a log element (subscribe `handle` to it)."""

    def __init__(
        self,
        builder: DomBuilder,
        log: Any,
        manifest: Any = None,
        *,
        schedule_frame: Callable[[Callable[[], None]], None] | None = None,
        on_status: Callable[[str], None] | None = None,
        on_notice: Callable[[str], None] | None = None,
        clock: Callable[[], float] | None = None,
        text: Callable[[str], str] = DEFAULT_TEXT,
        schedule_later: Callable[[float, Callable[[], None]], None] | None = None,
    ) -> None:
        self.text = text
        """The UI string for a key (the element's `strings`, else the defaults)."""
        self.builder = builder
        self.document = builder.document
        self.log = log
        self.manifest = manifest
        self._messages: dict[str, _MessageElement] = {}
        self._schedule_frame = schedule_frame
        self._on_status = on_status
        self._on_notice = on_notice
        self._scroll_pending = False
        self._question_pending = False
        self._last_top = 0.0
        self._question: Any = None
        """The latest question's element: following stops once it reaches the log's top."""
        self.follow = True
        self._clock = clock
        self._schedule_later = schedule_later
        self.work_ms = 0.0  # time spent applying events (with a clock), for the render benchmark
        log.setAttribute("aria-busy", "false")

    # -- element helpers ------------------------------------------------------------

    def make(self, tag: str, attrs: dict[str, str] | None = None, text: str | None = None) -> Any:
        """A chrome element: fixed tag and attributes, text only through `textContent`."""
        element = self.document.createElement(tag)
        for name, value in (attrs or {}).items():
            element.setAttribute(name, value)
        if text is not None:
            element.textContent = text
        return element

    def count_down(self, button: Any, seconds: int) -> None:
        """Keep a Retry button disabled, saying how long is left, until `seconds` have passed.

        The server's Retry-After is honoured: asking earlier would only be refused
        again. Without a timer (no page) the button stays disabled.
        """
        if seconds <= 0:
            button.removeAttribute("disabled")
            button.textContent = self.text("retry")
            return
        button.setAttribute("disabled", "")
        button.textContent = RETRY_IN.format(seconds=seconds)
        if self._schedule_later is not None:
            self._schedule_later(1.0, lambda: self.count_down(button, seconds - 1))

    def icon(self, path: str) -> Any:
        """A small stroked SVG icon (decorative: the button carries the label)."""
        svg = self.document.createElementNS(SVG_NS, "svg")
        for name, value in (
            ("viewBox", "0 0 24 24"),
            ("width", "16"),
            ("height", "16"),
            ("fill", "none"),
            ("stroke", "currentColor"),
            ("stroke-width", "2"),
            ("stroke-linecap", "round"),
            ("stroke-linejoin", "round"),
            ("aria-hidden", "true"),
            ("focusable", "false"),
        ):
            svg.setAttribute(name, value)
        shape = self.document.createElementNS(SVG_NS, "path")
        shape.setAttribute("d", path)
        svg.appendChild(shape)
        return svg

    # -- events -----------------------------------------------------------------------

    def handle(self, event: ConversationEvent) -> None:
        """Apply one controller event to the DOM (timed into `work_ms` when given a clock)."""
        if self._clock is None:
            self._handle(event)
            return
        started = self._clock()
        try:
            self._handle(event)
        finally:
            self.work_ms += self._clock() - started

    def _handle(self, event: ConversationEvent) -> None:
        if isinstance(event, PartsAppended):
            view = self._messages.get(event.message.id)
            if view is not None:
                view.parts(event.parts)
                self._content_changed()
        elif isinstance(event, Appended):
            self._append(event.message)
            if event.message.role == "user":
                self.follow = True
                self._question_pending = True
            self._content_changed()
        elif isinstance(event, Updated):
            view = self._messages.get(event.message.id)
            if view is not None and event.message.role == "assistant":
                view.refresh(event.message)
                self._content_changed()
        elif isinstance(event, Removed):
            removed = self._messages.pop(event.message_id, None)
            if removed is not None:
                removed.element.remove()
                if removed.element is self._question:
                    self._question = None
        elif isinstance(event, Reset):
            self._reset(event.messages)
        elif isinstance(event, StatusChanged):
            self.log.setAttribute("aria-busy", "true" if event.status == "streaming" else "false")
            if self._on_status is not None:
                self._on_status(event.status)
        elif isinstance(event, Notice) and self._on_notice is not None:
            self._on_notice(event.text)

    def _append(self, message: ChatMessage) -> None:
        view = _MessageElement(self, message)
        self._messages[message.id] = view
        self.log.appendChild(view.element)
        if message.role == "user":
            self._question = view.element

    def _reset(self, messages: tuple[ChatMessage, ...]) -> None:
        self._messages.clear()
        self._question = None
        self.log.replaceChildren()
        for message in messages:
            self._append(message)
        self.follow = True
        self._content_changed()

    def open_editor(self, message_id: str, text: str) -> Any:
        """The inline editor of question `message_id` holding `text` (its textarea), or None."""
        view = self._messages.get(message_id)
        if view is None or view.role != "user":
            return None
        return view.open_editor(text)

    def close_editor(self, message_id: str) -> None:
        view = self._messages.get(message_id)
        if view is not None:
            view.close_editor()

    def open_comment(self, message_id: str) -> Any:
        """The comment field under answer `message_id` (its textarea), or None."""
        view = self._messages.get(message_id)
        if view is None or view.role != "assistant":
            return None
        return view.open_comment()

    def close_comment(self, message_id: str) -> None:
        view = self._messages.get(message_id)
        if view is not None:
            view.close_comment()

    def message_element(self, message_id: str) -> Any:
        view = self._messages.get(message_id)
        return None if view is None else view.element

    def frame(self, message_id: str, instance_id: str) -> Any:
        """The render frame behind a component the reader interacted with."""
        view = self._messages.get(message_id)
        if view is None or view.body is None:
            return None
        return view.body.frames.get(instance_id)

    # -- scrolling ----------------------------------------------------------------------

    def on_scroll(self) -> None:
        """The reader scrolled: follow again at the bottom, stop following on a move up.

        A scroll event can arrive after more content was appended (it reports
        the widget's own scroll one frame late), so being away from the bottom
        alone does not mean the reader left it: only a move up does. Nor does a
        move up between a new question and the frame that shows it: the earlier
        answer losing its Regenerate button shrinks the log, and the browser's
        clamp of `scrollTop` arrives as a scroll event the reader never made.
        """
        log = self.log
        top = float(log.scrollTop)
        distance = float(log.scrollHeight) - top - float(log.clientHeight)
        if distance <= FOLLOW_THRESHOLD_PX:
            self.follow = True
        elif top < self._last_top - 1 and not self._question_pending:
            self.follow = False
        self._last_top = top

    def _content_changed(self) -> None:
        if not self.follow or self._scroll_pending:
            return
        if self._schedule_frame is None:
            self._scroll_frame()
            return
        self._scroll_pending = True
        self._schedule_frame(self._scroll_frame)

    def _scroll_frame(self) -> None:
        self._scroll_pending = False
        self._question_pending = False
        if self.follow:
            self.scroll_to_latest()

    def scroll_to_latest(self) -> None:
        """The end of the log, but never past the latest question (see the module doc): once
        the question reaches the top, following stops and the reader's position is theirs."""
        log = self.log
        end = float(log.scrollHeight)  # the browser clamps it to the last full view
        if self._question is not None:
            top = max(0.0, float(self._question.offsetTop) - QUESTION_MARGIN_PX)
            if top < end - float(log.clientHeight):
                log.scrollTop = top
                self._last_top = float(log.scrollTop)
                self.follow = False
                self._question = None  # pinned once: a reader back at the bottom follows it
                return
        log.scrollTop = end
        self._last_top = float(log.scrollTop)
