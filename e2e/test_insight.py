"""Readers' questions and thumbs back to the owner, end to end (issue 34).

A real MkDocs Material build (e2e/built_sites.py: the `agentskit-ask` plugin, `endpoint:
/api/ask`) is served by `agentskit-web preview`'s app with a question log. In Chromium a
reader asks three questions (one the docs do not answer), gives a thumbs up to one answer
and a thumbs down with a comment to another. The log then holds the three questions with
their verdicts and both votes; `agentskit-web report --html` writes the page, which is
opened in Chromium from the disk: its charts are drawn, the unanswered question is in its
group, and it makes no request and logs no console error. Screenshots of the widget and of
the report are written to e2e/artifacts/ for a person to look at.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from agentskit_web.cli import main as cli_main
from agentskit_web.server.preview import PreviewConfig, PreviewServer
from agentskit_web.testing import AskWidget, OriginGuard
from built_sites import QUESTIONS, built
from e2e_support import Watch, failed_at

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
UNANSWERED = "Is the lantern waterproof to IP67 in heavy rain?"
COMMENT = "It should say how long the charge lasts in the cold."


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[PreviewServer, Path]]:
    log = tmp_path_factory.mktemp("insight") / "questions.db"
    site = built("mkdocs-material")
    config = PreviewConfig(site_dir=site.out, pace_seconds=0.0, backend={"question_log": log})
    with PreviewServer(config) as server:
        yield server, log


@pytest.fixture
def watch(served: tuple[PreviewServer, Path]) -> Watch:
    return Watch(origin=served[0].url)


def logged(log: Path) -> list[tuple[str, str | None, str | None, str | None]]:
    db = sqlite3.connect(log)
    try:
        return db.execute(
            "SELECT question, verdict, feedback, comment FROM questions ORDER BY rowid"
        ).fetchall()
    finally:
        db.close()


def wait_for(
    page: Page, log: Path, expected: list[tuple[str, str | None, str | None, str | None]]
) -> None:
    """The feedback is sent in the background: wait (bounded) until the log shows it.

    Polled with `page.wait_for_timeout`, not `time.sleep`: the origin guard's route runs in
    this process, and Playwright's sync API dispatches it only while a call is waiting, so a
    request made during a plain sleep would hang until the deadline (seen as a lost comment).
    """
    deadline = time.monotonic() + 15
    while logged(log) != expected and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert logged(log) == expected


# The declined question is a 422, which Chromium logs as a failed load of /api/ask.
@pytest.mark.console_error_expected(failed_at("/api/ask"))
def test_questions_and_thumbs_reach_the_report(
    page: Page,
    browser: Browser,
    served: tuple[PreviewServer, Path],
    ask_widget: AskWidget,
    same_origin_only: OriginGuard,
    tmp_path: Path,
) -> None:
    server, log = served
    page.goto(server.site_url)
    ask_widget.open()
    answers = page.locator("agentskit-ask .ak-assistant")

    ask_widget.ask(QUESTIONS["charge"])
    assert ask_widget.wait_answer() == "complete", ask_widget.answer_error
    answers.last.locator('[data-ui="up"]').click()

    ask_widget.ask(UNANSWERED)
    ask_widget.wait_answer()

    ask_widget.ask(QUESTIONS["pair"])
    assert ask_widget.wait_answer() == "complete", ask_widget.answer_error
    answers.last.locator('[data-ui="down"]').click()
    comment = answers.last.locator(".ak-feedback-comment textarea")
    expect(comment).to_be_focused()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "insight-widget-comment.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.emulate_media(color_scheme="dark")
    comment.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "insight-widget-comment-phone-dark.png"))
    comment.fill(COMMENT)
    comment.press("Enter")  # sends the comment (a question's editor would re-ask instead)
    expect(answers.last.locator(".ak-feedback-comment")).to_have_count(0)

    wait_for(
        page,
        log,
        [
            (QUESTIONS["charge"], "answered", "up", None),
            (UNANSWERED, "declined", None, None),
            (QUESTIONS["pair"], "answered", "down", COMMENT),
        ],
    )
    assert same_origin_only.off_origin == []

    report = tmp_path / "report.html"
    assert cli_main(["report", str(log), "--html", str(report)]) == 0
    viewer = browser.new_context(viewport={"width": 1100, "height": 900})
    requests: list[str] = []
    errors: list[str] = []
    viewer.on("request", lambda request: requests.append(request.url))
    opened = viewer.new_page()
    opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda error: errors.append(str(error)))
    try:
        opened.goto(report.as_uri())
        expect(opened.locator("svg.pygal-chart")).to_have_count(3)  # no word shared yet
        expect(opened.locator("svg.pygal-chart rect.rect").first).to_be_visible()
        expect(opened.locator(".group")).to_contain_text(UNANSWERED)
        expect(opened.locator("table")).to_contain_text(COMMENT)
        opened.screenshot(path=str(ARTIFACTS / "insight-report.png"), full_page=True)
    finally:
        viewer.close()
    assert requests == [report.as_uri()], requests
    assert errors == []
