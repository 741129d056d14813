"""The pytest plugin as a site's test suite uses it: a separate pytest run, entry point loaded.

The run below writes an ordinary test file that uses only pytest-playwright's
`page` and this package's fixtures, and runs it with the system Chromium
(`--agentskit-chromium`) against the built demo site served by `ask_server` on
the same origin (`--agentskit-site dist/`). One of its tests requests another
origin on purpose and must fail with `same_origin_only`'s message.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from agentskit_web.bench.harness import chromium_executable

SITE_TESTS = textwrap.dedent(
    """
    import re

    import pytest
    from playwright.sync_api import expect

    from agentskit_web.testing import Source, SourceLink, WidgetUsageError, event_line

    QUESTION = "What does the scripted backend say about widgets?"


    def test_answer_sources_error_retry_new(page, ask_server, ask_widget, same_origin_only):
        ask_server.answer(
            "Scripted answer about widgets.",
            sources=[Source("Getting started", "/docs/start.html", anchor="install it")],
            delay=0.05,
        )
        page.goto(ask_server.url + "/")
        with pytest.raises(WidgetUsageError, match="open"):
            ask_widget.ask(QUESTION)
        ask_widget.open()
        assert ask_widget.state == "ready"
        ask_widget.ask(QUESTION)
        assert ask_widget.wait_answer() == "complete"
        assert ask_widget.answer_text == "Scripted answer about widgets."
        assert ask_widget.sources == [
            SourceLink("Getting started", ask_server.url + "/docs/start.html#install%20it")
        ]
        assert [m.role for m in ask_widget.messages] == ["user", "assistant"]
        assert ask_server.requests[-1].question == QUESTION

        ask_server.error(503, "ASK_UNAVAILABLE", "Down.", retryable=True)
        ask_widget.regenerate()
        assert ask_widget.wait_answer() == "error"
        assert ask_widget.answer_error
        ask_server.answer("Back again.")
        ask_widget.retry()
        assert ask_widget.wait_answer() == "complete"
        assert ask_widget.answer_text == "Back again."
        assert len(ask_server.requests) == 3

        ask_widget.new_conversation()
        expect(page.locator("agentskit-ask .ak-message")).to_have_count(0)


    def test_stop_ends_a_slow_stream(page, ask_server, ask_widget, same_origin_only):
        slow = [event_line({"type": "text", "delta": "first "})]
        slow += [0.2, '{"type":"text","delta":"more "}\\n'] * 100
        ask_server.lines(slow)
        page.goto(ask_server.url + "/")
        ask_widget.open().ask(QUESTION)
        expect(page.locator("agentskit-ask .ak-assistant .ak-body")).to_contain_text("first")
        ask_widget.stop()
        ask_widget.wait_answer()
        assert ask_widget.answer_text.startswith("first")
        assert ask_widget.answer_text.count("more") < 50


    def test_leaving_the_origin_fails(page, ask_server, same_origin_only):
        page.goto(ask_server.url + "/")
        page.evaluate("() => fetch('http://127.0.0.2:9/beacon').catch(() => null)")
    """
)


def test_a_site_suite_using_the_plugin(dist: Path, tmp_path: Path) -> None:
    (tmp_path / "test_site.py").write_text(SITE_TESTS, encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "test_site.py",
            "-v",
            "-p",
            "no:cacheprovider",
            "--agentskit-chromium",
            chromium_executable(),
            "--agentskit-site",
            str(dist),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = run.stdout + run.stderr
    outcomes = dict(re.findall(r"::(test_\w+) (PASSED|FAILED|ERROR)", output))
    assert outcomes == {
        "test_answer_sources_error_retry_new": "PASSED",
        "test_stop_ends_a_slow_stream": "PASSED",
        "test_leaving_the_origin_fails": "FAILED",
    }, output
    assert "requests left the page's origin" in output
    assert "http://127.0.0.2:9/beacon" in output
