"""What a reader sees when the instance answering them shuts down (the real widget, Chromium).

The demo server runs the real backend in process with a slow extractive pace,
so an answer is still streaming when the test ends the instance's drain
deadline (what SIGTERM arms in `serve-ask`, see docs/deployment.md). The
reader must see the partial answer end with the plain restart message and a
working Retry; Retry then reaches an instance that is up (here: the same
endpoint with no drain, as the balancer's next instance would be).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agentskit_web.server.ask_app import MESSAGES
from agentskit_web.server.demo_server import DemoConfig, DemoServer
from agentskit_web.server.operations import Drain
from e2e_support import ROOT, Watch, wait_for_state

QUESTION = "How do I configure rate limiting?"
SLOW_PACE_SECONDS = 0.4  # several seconds of answer: long enough to interrupt mid-stream


@pytest.fixture
def demo(dist: Path) -> Iterator[DemoServer]:
    config = DemoConfig(
        dist=dist, site=ROOT / "docs" / "site.json", docs=ROOT / "docs",
        pace_seconds=SLOW_PACE_SECONDS,
    )  # fmt: skip
    server = DemoServer(config).start()
    yield server
    if server.running:
        server.stop()


@pytest.fixture
def watch(site: object) -> Watch:
    return Watch(origin="http://unset.invalid")


def test_an_answer_cut_by_a_shutdown_says_so_and_retry_answers(
    page: Page, watch: Watch, demo: DemoServer
) -> None:
    endpoint = demo.app.state.ask
    drain = Drain()
    endpoint.shutdown = drain
    watch.origin = demo.url
    page.goto(demo.url + "/")
    wait_for_state(page, "ready")
    field = page.locator("agentskit-ask .ak-input")
    field.fill(QUESTION)
    field.press("Enter")
    answer = page.locator("agentskit-ask .ak-assistant").first
    expect(answer).to_have_attribute("data-status", "streaming", timeout=30_000)
    expect(answer).to_contain_text(re.compile(r"\w{4,}"), timeout=30_000)  # some text arrived
    drain.expire()  # the drain deadline of a SIGTERM'd instance
    expect(answer).to_have_attribute("data-status", "error", timeout=15_000)
    expect(answer.locator("[role=alert]")).to_contain_text(MESSAGES["shutdown"])
    retry = answer.locator(".ak-retry-answer")
    expect(retry).to_be_enabled()
    endpoint.shutdown = None  # the next request reaches an instance that is up
    retry.click()
    last = page.locator("agentskit-ask .ak-assistant").last
    expect(last).to_have_attribute("data-status", "complete", timeout=60_000)
    expect(last.locator("[role=alert]")).to_have_count(0)
