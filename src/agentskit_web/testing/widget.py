"""`AskWidget`: a page object for `<agentskit-ask>` on Playwright locators.

Playwright's CSS engine pierces the widget's open shadow root, so every step
is a locator and auto-waits; a site's tests never touch the shadow DOM. The
loader boots on intent (`boot="intent"`, the default): `open()` is the reader's
click into the box (or on the launcher button), then waits for `data-state=ready`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

BOOT_TIMEOUT_MS = 180_000
ATTACH_TIMEOUT_MS = 30_000
"""How long open() waits for the element to be on the page and drawn by the loader."""
ANSWER_TIMEOUT_MS = 60_000
SETTLED = re.compile(r"^(complete|error)$")
# Counts every time an answer's data-status is set to complete or error (the widget sets it on
# each refresh), so wait_answer waits for an answer settled after the last action.
COUNT_SETTLED = """(host) => {
  if (host.__akSettledObserver) return;
  host.__akSettled = 0;
  const settled = (node) => node.nodeType === 1 && node.classList.contains('ak-assistant')
    && /^(complete|error)$/.test(node.getAttribute('data-status') || '');
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes' && settled(r.target)) host.__akSettled += 1;
      for (const added of r.addedNodes || []) {
        if (added.nodeType !== 1) continue;
        const found = [added, ...added.querySelectorAll('.ak-assistant')].filter(settled);
        host.__akSettled += found.length;
      }
    }
  });
  observer.observe(host.shadowRoot || host, {
    subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  host.__akSettledObserver = observer;
}"""
TEXT_ONLY = """(body) => {
  const copy = body.cloneNode(true);
  copy.querySelectorAll('.ak-component, .ak-fallback, .ak-thinking').forEach((n) => n.remove());
  return copy.textContent.trim();
}"""


def reach_for(page: Any, selector: str = "agentskit-ask") -> None:
    """What a reader does to use the box, which is the loader's intent (it boots on it).

    Launcher layout: a click on the floating button (opens the dialog). Inline: a
    click into the question box (the pointer over it, then focus), while it is idle.
    """
    launcher = page.locator(f"{selector} .ak-launcher")
    if launcher.count():
        if page.locator(f"{selector} dialog.ak-dialog[open]").count() == 0:
            launcher.first.click()
    elif page.get_attribute(selector, "data-state") == "idle":
        page.locator(f"{selector} .ak-input").first.click()


class WidgetUsageError(RuntimeError):
    """The page object used out of order (says which call comes first)."""


class WidgetBootError(AssertionError):
    """open(): the widget ended in `data-state=error` (carries the loader's message)."""


@dataclass(frozen=True)
class SourceLink:
    title: str
    href: str


@dataclass(frozen=True)
class Message:
    role: str  # "user" | "assistant"
    text: str
    status: str | None  # assistant messages: pending | streaming | complete | error


class AskWidget:
    """`ask_widget.open(); ask_widget.ask("How?"); ask_widget.wait_answer()`."""

    def __init__(self, page: Any, selector: str = "agentskit-ask") -> None:
        self.page = page
        self.selector = selector
        self._opened = False
        self._mark: int | None = None

    @property
    def host(self) -> Any:
        """The `<agentskit-ask>` element's locator."""
        return self.page.locator(self.selector).first

    def _in(self, css: str) -> Any:
        return self.page.locator(f"{self.selector} {css}")

    def _require_open(self, action: str) -> None:
        if not self._opened:
            raise WidgetUsageError(
                f"ask_widget.{action}() before open(): call ask_widget.open() first "
                "(after page.goto) so the widget boots and is ready"
            )

    # -- state ------------------------------------------------------------------------------

    @property
    def state(self) -> str | None:
        """The element's `data-state`: idle, booting, ready or error."""
        value = self.host.get_attribute("data-state")
        return None if value is None else str(value)

    @property
    def error_message(self) -> str | None:
        node = self._in(".ak-error-message")
        return node.first.text_content() if node.count() else None

    def open(self, timeout_ms: float = BOOT_TIMEOUT_MS) -> AskWidget:
        """Reach for the box as a reader does and wait until the widget is ready.

        Inline: a click into the question box (the pointer over it, then focus: the
        loader's intent). Launcher: a click on the floating button, which opens the
        dialog. Either starts the runtime (`data-state` idle → booting → ready|error).
        """
        url = str(self.page.url)
        if url in ("", "about:blank"):
            raise WidgetUsageError(
                "ask_widget.open() before the page was loaded: call page.goto(url) first, "
                "then ask_widget.open()"
            )
        try:
            self.page.wait_for_selector(
                f"{self.selector}[data-state]", state="attached", timeout=ATTACH_TIMEOUT_MS
            )
        except Exception as error:  # playwright's TimeoutError: said in our words
            raise WidgetUsageError(
                f"no {self.selector} element started on {url} within {ATTACH_TIMEOUT_MS} ms: "
                "does the page include the loader script and the element, and is it the page "
                "you meant (ask_server serves your site only with --agentskit-site DIR)?"
            ) from error
        reach_for(self.page, self.selector)
        self.page.wait_for_selector(
            f"{self.selector}[data-state=ready], {self.selector}[data-state=error]",
            state="attached",
            timeout=timeout_ms,
        )
        if self.state != "ready":
            raise WidgetBootError(f"the widget failed to boot: {self.error_message}")
        self.host.evaluate(COUNT_SETTLED)
        self._opened = True
        return self

    def _before_action(self) -> None:
        self._mark = int(self.host.evaluate("(host) => host.__akSettled || 0"))

    # -- actions ----------------------------------------------------------------------------

    def ask(self, question: str) -> AskWidget:
        """Type a question and send it (Enter)."""
        self._require_open("ask")
        if not isinstance(question, str) or not question.strip():
            raise WidgetUsageError("ask(question) needs a non-empty str")
        field = self._in(".ak-input")
        field.fill(question)
        self._before_action()
        field.press("Enter")
        return self

    def wait_answer(self, timeout_ms: float = ANSWER_TIMEOUT_MS) -> str:
        """Wait until the last answer settles (complete or error); its status."""
        self._require_open("wait_answer")
        from playwright.sync_api import expect

        last = self._in(".ak-assistant").last
        if self._mark is not None:
            self.page.wait_for_function(
                "([selector, mark]) => (document.querySelector(selector).__akSettled || 0) > mark",
                arg=[self.selector, self._mark],
                timeout=timeout_ms,
            )
        expect(last).to_have_attribute("data-status", SETTLED, timeout=timeout_ms)
        return str(last.get_attribute("data-status"))

    def stop(self) -> AskWidget:
        """Press Stop while an answer streams."""
        self._require_open("stop")
        self._in(".ak-stop").click()
        return self

    def retry(self) -> AskWidget:
        """Press Retry on the failed answer."""
        self._require_open("retry")
        self._before_action()
        self._in(".ak-retry-answer").last.click()
        return self

    def regenerate(self) -> AskWidget:
        """Ask for the last answer again."""
        self._require_open("regenerate")
        self._before_action()
        self._in(".ak-regenerate").last.click()
        return self

    def new_conversation(self) -> AskWidget:
        """Start over (the header's New button)."""
        self._require_open("new_conversation")
        self._in(".ak-new").click()
        return self

    # -- what is shown ----------------------------------------------------------------------

    @property
    def answer_text(self) -> str:
        """The last answer's text, without its components (sources) ('' before any answer)."""
        bodies = self._in(".ak-assistant .ak-body")
        if bodies.count() == 0:
            return ""
        return str(bodies.last.evaluate(TEXT_ONLY))

    @property
    def answer_error(self) -> str | None:
        errors = self._in(".ak-assistant").last.locator(".ak-message-error-text")
        return (errors.first.text_content() or "").strip() if errors.count() else None

    @property
    def sources(self) -> list[SourceLink]:
        """The last answer's sources, in order."""
        answers = self._in(".ak-assistant")
        if answers.count() == 0:
            return []
        links = answers.last.locator(".ak-source-link")
        found = links.evaluate_all("(nodes) => nodes.map((n) => [n.textContent.trim(), n.href])")
        return [SourceLink(title=title, href=href) for title, href in found]

    @property
    def messages(self) -> list[Message]:
        """Every message shown, oldest first."""
        found = self._in(".ak-message").evaluate_all(
            """(nodes) => nodes.map((n) => {
              const copy = (n.querySelector('.ak-body') || n).cloneNode(true);
              copy.querySelectorAll('.ak-component, .ak-fallback, .ak-thinking')
                .forEach((c) => c.remove());
              return [n.classList.contains('ak-user') ? 'user' : 'assistant',
                      copy.textContent.trim(), n.getAttribute('data-status')];
            })"""
        )
        return [Message(role=role, text=text, status=status) for role, text, status in found]
