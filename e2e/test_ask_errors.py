"""Errors say what happened: the real widget against the real Ask backend (DemoServer).

Each case configures the backend the way a site would (bearer auth, a corpus
hint it refuses, a tight rate limit) or asks what the docs do not cover, and
checks what the reader sees: a plain message, Retry only when it can help, a
countdown for Retry-After, and "not found" as an answer with suggestions.
Chromium logs each non-OK response to the console: that one line is expected.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from agentskit_web.chat.ask.failure import FORBIDDEN_TEXT, RATE_LIMITED_TEXT, UNAUTHORIZED_TEXT
from agentskit_web.server.demo_server import DemoConfig, DemoServer
from e2e_support import ROOT, Watch, failed_at, wait_for_state

UNANSWERABLE = "zqxv flibbertigibbet quasar marmalade?"
ANSWERABLE = "How do I configure rate limiting?"
RATE_REFILL_PER_SECOND = 0.25  # one question back every 4 s: the countdown is short but visible

Start = Callable[..., DemoServer]


@pytest.fixture
def start_demo(dist: Path) -> Iterator[Start]:
    started: list[DemoServer] = []

    def start(**backend: Any) -> DemoServer:
        config = DemoConfig(
            dist=dist,
            site=ROOT / "docs" / "site.json",
            docs=ROOT / "docs",
            pace_seconds=0.0,
            backend=backend,
        )
        server = DemoServer(config).start()
        started.append(server)
        return server

    yield start
    for server in started:
        if server.running:
            server.stop()


@pytest.fixture
def watch(site: Any) -> Watch:
    """Requests are checked against the demo's origin once it is known (see `_open`)."""
    return Watch(origin="http://unset.invalid")


def _open(page: Page, watch: Watch, demo: DemoServer) -> None:
    watch.origin = demo.url
    page.goto(demo.url + "/")
    wait_for_state(page, "ready")


def _ask(page: Page, question: str) -> Any:
    field = page.locator("agentskit-ask .ak-input")
    answers = page.locator("agentskit-ask .ak-assistant")
    before = answers.count()  # counted before sending: the new answer is the one after these
    field.fill(question)
    field.press("Enter")
    expect(answers).to_have_count(before + 1, timeout=30_000)
    answer = answers.nth(before)
    expect(answer).to_have_attribute("data-status", re.compile("complete|error"), timeout=30_000)
    return answer


@pytest.mark.console_error_expected(failed_at("/api/ask"))
def test_not_found_in_the_docs_is_an_honest_answer_with_suggestions(
    page: Page, watch: Watch, start_demo: Start
) -> None:
    _open(page, watch, start_demo())
    answer = _ask(page, UNANSWERABLE)
    expect(answer).to_have_attribute("data-status", "complete")
    notice = answer.locator(".ak-message-notfound")
    expect(notice).to_contain_text("No passage of the documentation matches this question")
    expect(answer.locator("[role=alert]")).to_have_count(0)
    expect(answer.locator(".ak-retry-answer")).to_have_count(0)
    assert "Ask request failed" not in (answer.text_content() or "")
    expect(page.locator("agentskit-ask .ak-suggestions")).to_be_visible()
    # The notice is stored with the answer: a reload shows the same answer.
    page.reload()
    wait_for_state(page, "ready")
    expect(page.locator("agentskit-ask .ak-message-notfound")).to_contain_text("No passage")


@pytest.mark.console_error_expected(failed_at("/api/ask"))
def test_unauthorized_is_said_plainly_without_a_retry(
    page: Page, watch: Watch, start_demo: Start, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("reader s3cret-token-for-e2e\n", encoding="utf-8")
    _open(page, watch, start_demo(auth="bearer", tokens_file=tokens))
    answer = _ask(page, ANSWERABLE)
    expect(answer).to_have_attribute("data-status", "error")
    expect(answer.locator("[role=alert]")).to_have_text(UNAUTHORIZED_TEXT)
    expect(answer.locator(".ak-retry-answer")).to_have_count(0)


@pytest.mark.console_error_expected(failed_at("/api/ask"))
def test_forbidden_is_said_plainly_without_a_retry(
    page: Page, context: BrowserContext, watch: Watch, start_demo: Start
) -> None:
    # The site asks for a corpus the backend does not serve (a real widget attribute).
    context.add_init_script(
        "document.addEventListener('DOMContentLoaded', () =>"
        " document.querySelector('agentskit-ask').setAttribute('corpus', 'another-corpus'))"
    )
    _open(page, watch, start_demo())
    answer = _ask(page, ANSWERABLE)
    expect(answer).to_have_attribute("data-status", "error")
    expect(answer.locator("[role=alert]")).to_have_text(FORBIDDEN_TEXT)
    expect(answer.locator(".ak-retry-answer")).to_have_count(0)


@pytest.mark.console_error_expected(failed_at("/api/ask"))
def test_rate_limited_counts_down_retry_after_then_retries(
    page: Page, watch: Watch, start_demo: Start
) -> None:
    demo = start_demo(rate_capacity=1, rate_refill=RATE_REFILL_PER_SECOND)
    _open(page, watch, demo)
    expect(_ask(page, ANSWERABLE)).to_have_attribute("data-status", "complete")
    limited = _ask(page, ANSWERABLE)
    expect(limited).to_have_attribute("data-status", "error")
    expect(limited.locator("[role=alert] p")).to_have_text(RATE_LIMITED_TEXT)
    retry = limited.locator(".ak-retry-answer")
    expect(retry).to_be_disabled()
    expect(retry).to_have_text(re.compile(r"^Retry in [1-9]\d* s$"))
    first = retry.text_content()
    expect(retry).not_to_have_text(first or "", timeout=3_000)  # it counts down
    expect(retry).to_be_enabled(timeout=10_000)
    expect(retry).to_have_text("Retry")
    retry.click()
    last = page.locator("agentskit-ask .ak-assistant").last
    expect(last).to_have_attribute("data-status", "complete", timeout=30_000)
