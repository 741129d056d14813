"""The pytest plugin as a site's test suite uses it: a separate pytest run, entry point loaded.

The run below writes the example test file of docs/testing.md (exactly as the
docs show it, so they cannot rot) plus a few more tests that use only
pytest-playwright's `page` and this package's fixtures, and runs it with the system Chromium
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

DOCS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "testing.md"
EXTRA_TESTS = textwrap.dedent(
    r"""

    import pytest

    from agentskit_web.testing import WidgetUsageError, event_line


    def test_asking_before_open_says_so(page, ask_server, ask_widget):
        page.goto(ask_server.url + "/")
        with pytest.raises(WidgetUsageError, match=r"call ask_widget.open\(\) first"):
            ask_widget.ask(QUESTION)


    def test_stop_ends_a_slow_stream(page, ask_server, ask_widget, same_origin_only):
        slow = [event_line({"type": "text", "delta": "first "})]
        slow += [0.2, '{"type":"text","delta":"more "}\n'] * 100
        ask_server.lines(slow)
        page.goto(ask_server.url + "/")
        ask_widget.open().ask(QUESTION)
        expect(page.locator("agentskit-ask .ak-assistant .ak-body")).to_contain_text("first")
        ask_widget.stop()
        ask_widget.wait_answer()
        assert ask_widget.answer_text.startswith("first")
        assert ask_widget.answer_text.count("more") < 50
        ask_widget.regenerate()
        expect(page.locator("agentskit-ask .ak-assistant .ak-body")).to_contain_text("first")
        ask_widget.stop()
        assert len(ask_server.requests) == 2


    def test_leaving_the_origin_fails(page, ask_server, same_origin_only):
        page.goto(ask_server.url + "/")
        page.evaluate("() => fetch('http://127.0.0.2:9/beacon').catch(() => null)")
    """
)


def docs_example() -> str:
    """The test file of docs/testing.md, exactly as written there."""
    text = DOCS_PAGE.read_text(encoding="utf-8")
    match = re.search(r"```python\n(# test_embed\.py\n.*?)```", text, re.S)
    assert match, "docs/testing.md lost its test_embed.py example"
    return match.group(1)


def test_a_site_suite_using_the_plugin(dist: Path, tmp_path: Path) -> None:
    # An ini of its own: the run is the site's, not this repository's (rootdir, addopts).
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_site.py").write_text(docs_example() + EXTRA_TESTS, encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "test_site.py",
            "-v",
            "-p",
            "no:cacheprovider",
            "-c",
            str(tmp_path / "pytest.ini"),
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
    outcomes = dict(re.findall(r"::(test_\w+)(?:\[\w+\])? (PASSED|FAILED|ERROR)", output))
    assert outcomes == {
        "test_the_widget_answers_with_sources": "PASSED",
        "test_a_refusal_is_shown_and_retry_recovers": "PASSED",
        "test_asking_before_open_says_so": "PASSED",
        "test_stop_ends_a_slow_stream": "PASSED",
        "test_leaving_the_origin_fails": "ERROR",  # same_origin_only fails it at teardown
    }, output
    assert "requests left the page's origin" in output
    assert "http://127.0.0.2:9/beacon" in output
