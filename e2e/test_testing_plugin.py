"""The testing kit as a site's suite uses it, and as our own e2e uses it.

1. The complete example of docs/testing.md, exactly as written: its MkDocs site
   (`mkdocs.yml`, `docs/*.md`) and `tests/test_embed.py` are written to a fresh
   folder and its CI commands run there (`mkdocs build`, then `pytest
   tests/test_embed.py --agentskit-site site --agentskit-chromium …`) in a
   separate pytest that finds the plugin through its `pytest11` entry point,
   with pytest-playwright's `page`. A second file in the same run holds cases the
   docs do not show: asking before `open()`, Stop and Regenerate on a slow
   stream, and a request to another origin, which `same_origin_only` must fail.
2. In this suite (the plugin is loaded by e2e/pytest.ini): every hostile preset,
   one after another on one page of the demo site, leaves the widget ready, runs
   no script, shows no image and no link off the page's origin.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from agentskit_web.bench.harness import chromium_executable
from agentskit_web.testing import AskServer, AskWidget, preset_names
from e2e_support import ROOT, Watch

DOCS_PAGE = ROOT / "docs" / "testing.md"
DOCS_CHROMIUM = "/usr/bin/chromium"
EXTRA_TESTS = textwrap.dedent(
    r"""
    import pytest
    from playwright.sync_api import expect

    from agentskit_web.testing import WidgetUsageError, event_line

    QUESTION = "A question the site cannot answer by itself"


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


# ---------------------------------------------------------------- 1. the docs example


def fenced(text: str, language: str, first_line: str) -> str:
    """The body of the one ```language block of the docs whose first line is `first_line`."""
    pattern = rf"```{language}\n({re.escape(first_line)}\n.*?)```"
    found = re.findall(pattern, text, re.S)
    assert len(found) == 1, f"docs/testing.md: expected one {language} block {first_line!r}"
    return str(found[0])


def docs_example() -> tuple[dict[str, str], list[str]]:
    """The example's files (path → text, exactly as in the docs) and its CI commands."""
    text = DOCS_PAGE.read_text(encoding="utf-8")
    files = {
        "mkdocs.yml": fenced(text, "yaml", "# mkdocs.yml"),
        "docs/index.md": fenced(text, "markdown", "<!-- docs/index.md -->"),
        "docs/start.md": fenced(text, "markdown", "<!-- docs/start.md -->"),
        "tests/test_embed.py": fenced(text, "python", "# test_embed.py"),
    }
    ci = fenced(text, "sh", 'pip install "agentskit-web[testing,mkdocs]"').splitlines()
    assert ci[0].startswith("pip install"), ci
    return files, ci[1:]


def installed_entry_points(target: Path) -> Path:
    """What `pip install` writes for this checkout's entry points (its dist-info).

    First on the run's sys.path, it stands for the installed package, so the run
    finds the plugin the way a site's does: by its pytest11 entry point.
    """
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = target / f"agentskit_web-{project['version']}.dist-info"
    info.mkdir(parents=True)
    metadata = f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    groups = {"console_scripts": project["scripts"], **project["entry-points"]}
    lines = []
    for group, entries in groups.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def run_ci(command: str, cwd: Path, env: dict[str, str], *extra: str) -> str:
    """One CI line as written (its tool run with this interpreter); its output."""
    words = shlex.split(command)
    words = [chromium_executable() if w == DOCS_CHROMIUM else w for w in words]
    done = subprocess.run(
        [sys.executable, "-m", *words, *extra],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    return f"$ {command}\n{done.stdout}{done.stderr}\n(exit {done.returncode})\n"


def test_the_docs_example_runs_as_written(tmp_path: Path) -> None:
    files, commands = docs_example()
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    (tmp_path / "tests" / "test_more.py").write_text(EXTRA_TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # the site's own
    paths = [str(installed_entry_points(tmp_path / "installed")), str(ROOT / "src")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    assert [c.split()[0] for c in commands] == ["mkdocs", "pytest"], commands
    built = run_ci(commands[0], tmp_path, env)
    assert "(exit 0)" in built and (tmp_path / "site" / "start" / "index.html").is_file(), built
    assert (tmp_path / "site" / "agentskit" / "agentskit-ask.js").is_file(), built

    output = run_ci(
        commands[1], tmp_path, env, "tests/test_more.py", "-v", "-p", "no:cacheprovider"
    )
    # The plugin came through its entry point: pytest lists it by distribution.
    assert re.search(r"^plugins: .*agentskit-web-", output, re.M), output
    outcomes = dict(re.findall(r"::(test_\w+)(?:\[\w+\])? (PASSED|FAILED|ERROR)", output))
    assert outcomes == {
        "test_the_widget_answers_with_sources": "PASSED",
        "test_a_refusal_is_shown_and_retry_recovers": "PASSED",
        "test_a_hostile_stream_leaves_the_widget_usable": "PASSED",
        "test_asking_before_open_says_so": "PASSED",
        "test_stop_ends_a_slow_stream": "PASSED",
        "test_leaving_the_origin_fails": "ERROR",  # same_origin_only fails it at teardown
    }, output
    assert "requests left the page's origin" in output
    assert "http://127.0.0.2:9/beacon" in output


# ---------------------------------------------------------------- 2. every preset, in this suite


@pytest.fixture
def agentskit_site(dist: Path) -> Path:
    """ask_server serves the demo site (the plugin's fixture, given our dist/)."""
    return dist


@pytest.fixture
def watch(ask_server: AskServer) -> Watch:
    """The conftest's request and console guard, on ask_server's origin."""
    return Watch(origin=ask_server.url)


NO_SCRIPT_RAN = "() => window.__pwned === undefined && window.__agentskitPwned === undefined"
# What the answers' bodies hold (the widget's own buttons and icons are not answer content).
SHOWN = """(host) => {
  const bodies = [...host.shadowRoot.querySelectorAll('.ak-assistant .ak-body')];
  const all = (css) => bodies.flatMap((body) => [...body.querySelectorAll(css)]);
  return {
    links: all('a').map((a) => a.href),
    images: all('img').length,
    active: all('script, iframe, object, embed, svg, style, form').length,
  };
}"""


def test_every_hostile_preset_leaves_the_widget_sane(
    page: Page, ask_server: AskServer, ask_widget: AskWidget, same_origin_only: Any
) -> None:
    names = preset_names()
    assert len(names) >= 40 and names[0] == "hostile stream"
    page.goto(ask_server.url + "/")
    ask_widget.open()
    for count, name in enumerate(names, start=1):
        ask_server.preset(name)
        ask_widget.new_conversation()  # one exchange each: memory and requests stay small
        ask_widget.ask(f"Preset {count}")
        status = ask_widget.wait_answer()
        assert status in ("complete", "error"), name
        assert ask_widget.state == "ready", name
        assert [m.role for m in ask_widget.messages] == ["user", "assistant"], name
        assert page.evaluate(NO_SCRIPT_RAN), f"{name}: a script ran"
        shown = ask_widget.host.evaluate(SHOWN)
        assert shown["images"] == 0 and shown["active"] == 0, (name, shown)
        for href in shown["links"]:
            assert href.startswith((ask_server.url + "/", "https://")), (name, href)
        for source in ask_widget.sources:
            assert source.href.startswith(ask_server.url + "/"), (name, source)
    assert [r.question for r in ask_server.requests] == [
        f"Preset {n}" for n in range(1, len(names) + 1)
    ]
