"""The widget (`protocol="turn"`, real Chromium) behind haproxy when its instance is killed.

The page and its turn endpoint share one origin: haproxy (the configuration
docs/deployment.md shows) sends `/api/` round-robin to three real `serve-ask`
instances sharing one PostgreSQL database (`--sessions postgresql://...`, a
server this module starts) and one Redis, and everything else to a static
server of dist/ (switched to the turn protocol). The test kills the instance
streaming the answer with SIGKILL: the reader must see the reconnecting state,
the widget must resume through the other instances, and once the turn's lease
has run out the answer must end interrupted with a Retry that works, the
question stored once.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, Request, expect

from agentskit_web.bench.cluster import LocalCluster
from agentskit_web.bench.failover import stored_session, streaming_instance
from agentskit_web.bench.local_postgres import LocalPostgres
from agentskit_web.chat.widget_config import DEFAULT_STRINGS
from agentskit_web.server.turn_errors import CHAT_TURN_INTERRUPTED
from agentskit_web.testing import AskWidget
from e2e_support import ROOT, Watch, failed_at

QUESTION = "How do I configure rate limiting?"
LEASE_SECONDS = 2.0
PACE_SECONDS = 0.05  # an answer of several seconds: long enough to kill its instance mid-way
SITE = ROOT / "docs" / "site.json"
SITE_ID = json.loads(SITE.read_text(encoding="utf-8"))["siteId"]
CONNECTION_RECORDER = """(host) => {
  window.__akConnection = [];
  new MutationObserver(() => window.__akConnection.push(host.hasAttribute('data-reconnecting')))
    .observe(host, {attributes: true, attributeFilter: ['data-reconnecting']});
}"""
STREAMED_CHARS = """(host) => {
  const body = host.shadowRoot.querySelector('.ak-assistant[data-status=streaming] .ak-body');
  return body && !body.querySelector('.ak-thinking') ? body.textContent.trim().length : 0;
}"""


@pytest.fixture
def turn_site(dist: Path, tmp_path: Path) -> Path:
    """dist/ with the page's widget switched to the turn protocol (endpoint /api/turn)."""
    target = tmp_path / "dist"
    shutil.copytree(dist, target)
    page = target / "index.html"
    html = page.read_text(encoding="utf-8")
    switched = html.replace(
        'endpoint="/api/ask" corpus="docs" persona="guide"', 'protocol="turn"'
    ).replace(' knowledge="./knowledge.json"', "")
    assert switched != html
    page.write_text(switched, encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def postgres() -> Iterator[LocalPostgres]:
    with LocalPostgres() as server:
        yield server


@pytest.fixture
def cluster(turn_site: Path, tmp_path: Path, postgres: LocalPostgres) -> Iterator[LocalCluster]:
    flags = ("--pace", str(PACE_SECONDS), "--turn-lease", str(LEASE_SECONDS))
    with LocalCluster(
        tmp_path / "cluster",
        site_file=SITE,
        docs=ROOT / "docs",
        sessions=postgres.create_database(),
        flags=flags,
        site=turn_site,
    ) as running:
        assert "--sessions" in running.store_flags()
        yield running


@pytest.fixture
def watch(cluster: LocalCluster) -> Watch:
    return Watch(origin=cluster.url)


def _turn_requests(context: BrowserContext) -> list[Request]:
    seen: list[Request] = []
    context.on("request", lambda r: seen.append(r) if "/api/turn" in r.url else None)
    return seen


# The broken stream is the one error Chromium may log (a network error, never a status).
@pytest.mark.console_error_expected(failed_at("/api/turn"))
def test_a_killed_instance_mid_answer_reconnects_then_ends_interrupted_with_a_working_retry(
    page: Page, context: BrowserContext, cluster: LocalCluster
) -> None:
    requests = _turn_requests(context)
    page.goto(cluster.url + "/")
    widget = AskWidget(page).open()
    host = widget.host
    host.evaluate(CONNECTION_RECORDER)
    widget.ask(QUESTION)
    page.wait_for_function(
        f"() => ({STREAMED_CHARS})(document.querySelector('agentskit-ask')) > 40",
        polling="raf",
        timeout=30_000,
    )
    streaming = streaming_instance(cluster)
    assert streaming is not None, "one instance streams the answer"
    cluster.member(streaming).kill()

    region = page.locator("agentskit-ask .ak-connection")
    expect(region).to_be_visible(timeout=5_000)
    expect(region).to_have_text(DEFAULT_STRINGS["reconnecting"])
    assert widget.wait_answer() == "error"
    expect(region).to_be_hidden()
    shown = page.evaluate("() => window.__akConnection")
    assert shown[0] is True and shown[-1] is False, shown
    gets = [r for r in requests if r.method == "GET"]
    # It resumed through the balancer: the live instance it reached followed the session in
    # the store until the dead one's lease ran out, then ended the turn.
    assert len(gets) >= 1, "the widget resumed through the balancer"
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator("[role=alert]")).to_contain_text(CHAT_TURN_INTERRUPTED.message)
    expect(answer.locator(".ak-retry-answer")).to_be_enabled()

    (submit,) = [json.loads(r.post_data or "{}") for r in requests if r.method == "POST"]
    stored = stored_session(cluster, SITE_ID, submit["sessionId"])
    assert "activeTurn" not in stored["envelope"], "the session is not left busy"
    assert [m["content"] for m in stored["messages"] if m["role"] == "user"] == [QUESTION]

    widget.retry()
    assert widget.wait_answer() == "complete"
    expect(page.locator("agentskit-ask .ak-assistant")).to_have_count(1)
    expect(answer.locator("[role=alert]")).to_have_count(0)
    stored = stored_session(cluster, SITE_ID, submit["sessionId"])
    assert [(m["role"], m["status"]) for m in stored["messages"]] == [
        ("user", "complete"),
        ("assistant", "complete"),
    ]
    assert stored["messages"][0]["content"] == QUESTION
