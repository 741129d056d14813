"""A turn-protocol widget's thumbs reach the owner's question log, end to end (issue 34).

A real MkDocs Material build (e2e/built_sites.py) whose pages' widget is switched to the turn
protocol (`protocol="turn" endpoint="/api/turn"`), served by `agentskit-web preview`'s app
with a question log. In Chromium a reader asks a question, the answer streams over the turn
protocol, and the reader gives it a thumbs down with a comment. The widget sends the vote
to `/api/feedback` (beside its endpoint) under the answer's source-list id, which is the id
the turn runner logged the question under: the log's row holds the question, its verdict,
the vote and the comment. A screenshot of the comment box goes to e2e/artifacts/.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

from agentskit_web.server.preview import PreviewConfig, PreviewServer
from agentskit_web.testing import AskWidget, OriginGuard
from built_sites import QUESTIONS, built
from e2e_support import Watch

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
COMMENT = "It should say which app version pairs."
ASK_ENDPOINT = 'endpoint="/api/ask"'
TURN_ENDPOINT = 'protocol="turn" endpoint="/api/turn"'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[PreviewServer, Path]]:
    folder = tmp_path_factory.mktemp("turn-feedback")
    site = folder / "site"
    shutil.copytree(built("mkdocs-material").out, site)
    switched = 0
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        if ASK_ENDPOINT in html:
            page.write_text(html.replace(ASK_ENDPOINT, TURN_ENDPOINT), encoding="utf-8")
            switched += 1
    assert switched > 0
    log = folder / "questions.db"
    config = PreviewConfig(site_dir=site, pace_seconds=0.0, backend={"question_log": log})
    with PreviewServer(config) as server:
        yield server, log


@pytest.fixture
def watch(served: tuple[PreviewServer, Path]) -> Watch:
    return Watch(origin=served[0].url)


def logged(log: Path) -> list[tuple[str, str, str | None, str | None, str | None]]:
    if not log.exists():
        return []
    db = sqlite3.connect(log)
    try:
        return db.execute(
            "SELECT answer_id, question, verdict, feedback, comment FROM questions ORDER BY rowid"
        ).fetchall()
    finally:
        db.close()


def test_a_thumbs_down_with_a_comment_on_a_turn_answer_lands_in_the_log(
    page: Page,
    served: tuple[PreviewServer, Path],
    ask_widget: AskWidget,
    same_origin_only: OriginGuard,
) -> None:
    server, log = served
    posts: list[Request] = []
    page.on("request", lambda r: posts.append(r) if r.method == "POST" else None)
    page.goto(server.site_url)
    ask_widget.open()
    ask_widget.ask(QUESTIONS["pair"])
    assert ask_widget.wait_answer() == "complete", ask_widget.answer_error
    answer = page.locator("agentskit-ask .ak-assistant").last
    expect(answer.locator(".ak-body")).to_contain_text("pair")
    answer.locator('[data-ui="down"]').click()
    comment = answer.locator(".ak-feedback-comment textarea")
    expect(comment).to_be_focused()
    comment.fill(COMMENT)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "turn-feedback-comment.png"))
    comment.press("Enter")
    expect(answer.locator(".ak-feedback-comment")).to_have_count(0)

    # Polled with page.wait_for_timeout: the origin guard's route runs in this process and
    # the sync API dispatches it only during a Playwright call (see e2e/test_insight.py).
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and [r[3:] for r in logged(log)] != [("down", COMMENT)]:
        page.wait_for_timeout(100)
    ((answer_id, question, verdict, vote, said),) = logged(log)
    assert (question, verdict, vote, said) == (QUESTIONS["pair"], "answered", "down", COMMENT)

    paths = [urlsplit(r.url).path for r in posts]
    assert "/api/turn" in paths and "/api/ask" not in paths  # the answer came by turns
    sent = [json.loads(r.post_data or "{}") for r in posts if r.url.endswith("/api/feedback")]
    assert sent and {body["answerId"] for body in sent} == {answer_id}
    assert answer_id.startswith("sources-t-")  # the turn's source list, which the runner logged
    assert same_origin_only.off_origin == []
