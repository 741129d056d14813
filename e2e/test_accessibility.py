"""Accessibility of the widget, checked by axe-core (npm, Deque), not by rules written here.

axe-core is a dev dependency in web/package.json: the test injects
web/node_modules/axe-core/axe.min.js into the page; no page of the site ever
links it. It runs on the `<agentskit-ask>` element (shadow root included) in
both colour schemes and both layouts: on the idle shell, then with a streamed
answer and its sources on screen (in the launcher's open dialog for
`layout="launcher"`), then with the question's inline editor open. Any
violation, of any impact, fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from agentskit_web.server.demo_server import DemoServer
from e2e_support import ROOT, Watch, running_demo, serve_demo_inline, wait_for_state

AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
QUESTION = "How do I configure rate limiting?"
# Every rule axe runs by default (WCAG 2.0-2.2 A/AA and best practices), on the widget only.
RUN_AXE = """async () => {
  const result = await axe.run(document.querySelector("agentskit-ask"), {
    resultTypes: ["violations"],
  });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target, summary: n.failureSummary })),
  }));
}"""


@pytest.fixture(scope="module")
def demo(dist: Path) -> Iterator[DemoServer]:
    with running_demo(dist) as server:
        yield server


@pytest.fixture
def watch(demo: DemoServer) -> Watch:
    return Watch(origin=demo.url)


def _describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']}")
        for node in violation["nodes"]:
            lines.append(f"    {node['target']}: {node['summary']}")
    return "\n".join(lines)


def _axe(page: Page, when: str) -> None:
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    violations = page.evaluate(RUN_AXE)
    assert not violations, f"axe-core, {when}:\n{_describe(violations)}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("layout", ["inline", "launcher"])
def test_axe_finds_no_violation(
    page: Page, demo: DemoServer, dist: Path, scheme: str, layout: str
) -> None:
    page.emulate_media(color_scheme=scheme)
    if layout == "inline":
        serve_demo_inline(page, demo.url, dist)
    page.goto(demo.url + "/")
    host = page.locator("agentskit-ask")
    expect(host.locator(".ak-box" if layout == "inline" else ".ak-launcher")).to_be_visible()
    assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark")
    _axe(page, f"{layout}, {scheme}, idle shell")

    if layout == "launcher":
        page.keyboard.press("Control+k")
        expect(host.locator("dialog.ak-dialog")).to_have_attribute("open", "")
    wait_for_state(page, "ready")
    field = host.locator(".ak-input")
    field.fill(QUESTION)
    field.press("Enter")
    answer = host.locator(".ak-assistant").first
    expect(answer).to_have_attribute("data-status", "complete", timeout=30_000)
    expect(answer.locator(".ak-source-link").first).to_be_visible()
    if layout == "launcher":
        expect(host.locator("dialog.ak-dialog")).to_have_attribute("open", "")
    # The answer's own controls (copy, feedback) may appear after a short settle.
    page.wait_for_function(
        "() => !document.querySelector('agentskit-ask').shadowRoot"
        ".querySelector('.ak-assistant[data-status=streaming]')"
    )
    _axe(page, f"{layout}, {scheme}, an answer with its sources")
    assert re.search(r"rate", answer.text_content() or "", re.IGNORECASE)

    # A question's inline editor (its Edit button): textarea, Save and Cancel.
    host.locator(".ak-user button.ak-edit").first.click()
    expect(host.locator(".ak-user textarea.ak-edit-input")).to_be_focused()
    _axe(page, f"{layout}, {scheme}, a question being edited")


def test_axe_is_never_served_to_readers(demo: DemoServer, dist: Path) -> None:
    served = [p for p in dist.rglob("*") if p.is_file() and "axe" in p.name.lower()]
    assert served == []
    assert AXE.is_file(), "axe-core is installed from web/package-lock.json"


@pytest.mark.parametrize("layout", ["inline", "launcher"])
def test_axe_finds_no_violation_in_a_returning_readers_glance(
    page: Page, demo: DemoServer, dist: Path, layout: str
) -> None:
    """The saved conversation painted by the loader (no Python), in the box or the dialog."""
    glance = json.dumps({"v": 1, "turns": [{"q": QUESTION, "a": "Set a limit per client."}]})
    key = json.dumps("agentskit-web-docs:ask:glance")  # the demo's storage-key + ":glance"
    page.add_init_script(f"localStorage.setItem({key}, {json.dumps(glance)});")
    page.route("**/runtime.*/**", lambda route: None)  # held: the glance stays on screen
    if layout == "inline":
        serve_demo_inline(page, demo.url, dist)
    page.goto(demo.url + "/")
    host = page.locator("agentskit-ask")
    if layout == "launcher":
        expect(host.locator(".ak-launcher[data-waiting]")).to_be_visible()
        _axe(page, "launcher with a conversation waiting")
        host.locator(".ak-launcher").click()
    glance_log = host.locator(".ak-glance")
    expect(glance_log).to_be_visible()
    expect(glance_log.locator(".ak-user-text")).to_have_text(QUESTION)
    _axe(page, f"{layout}, the saved conversation's glance")
