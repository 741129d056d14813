"""PyScript pages (docs/pyscript.md), as they will be used: the page from the docs, copied as it
is into a folder `agentskit-web assets --with-pyscript` wrote, served under the policy the docs
give for it, answers from its own Python function. Real Chromium, nothing off-origin."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentskit_web.bench.pyscript_boot import documented_page as page_in
from agentskit_web.server.static import AppServer, SiteFiles
from e2e_support import ARTIFACTS, ROOT, Watch, wait_for_state

DOC = ROOT / "docs/pyscript.md"
STRICT_POLICY = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'"
)
BOOT_TIMEOUT_MS = 180_000
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


def documented_policy() -> str:
    """The one policy docs/pyscript.md gives for PyScript pages."""
    found = re.findall(r"Content-Security-Policy: ([^\n]+)", DOC.read_text(encoding="utf-8"))
    assert len(found) == 1, found
    return found[0]


def documented_page() -> str:
    """The complete page of docs/pyscript.md, as it is (the bench extracts the same block)."""
    return page_in(DOC)


def with_policy(app: ASGIApp, policy: str) -> ASGIApp:
    """Every response carries `policy` as its Content-Security-Policy header."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    *message.get("headers", []),
                    (b"content-security-policy", policy.encode()),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_with_policy)

    return wrapped


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What a site owner has: the CLI's folder with PyScript, the docs' page saved in it."""
    target = tmp_path_factory.mktemp("site") / "agentskit"
    command = [sys.executable, "-m", "agentskit_web.cli", "assets", str(target), "--with-pyscript"]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=600)
    (target / "ask.html").write_text(documented_page(), encoding="utf-8")
    # The site's own icon: Chromium asks every origin for /favicon.ico (a 404 is a console error).
    (target / "favicon.ico").write_bytes((ROOT / "web/favicon.svg").read_bytes())
    (target / "embed.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Embed</title>'
        '<script type="module" src="agentskit-ask.js"></script></head><body><main>'
        '<agentskit-ask endpoint="/api/ask" boot="eager"></agentskit-ask></main></body></html>\n',
        encoding="utf-8",
    )
    return target


def page_two_levels_below(folder: Path, name: str) -> str:
    """The docs' page in `one/two/` below the folder, its two paths changed as the docs say."""
    page = documented_page()
    for attribute in ("src", "config"):
        for file in ("agentskit-ask-pyscript.js", "agentskit-ask-pyscript.json"):
            page = page.replace(f'{attribute}="{file}"', f'{attribute}="../../{file}"')
    assert page.count('"../../agentskit-ask-pyscript.') == 2, "the docs' page names both paths"
    deep = folder / "one" / "two"
    deep.mkdir(parents=True, exist_ok=True)
    (deep / name).write_text(page, encoding="utf-8")
    return f"/one/two/{name}"


@pytest.fixture
def serve(folder: Path, watch: Watch) -> Iterator[object]:
    servers: list[AppServer] = []

    def start(policy: str) -> str:
        files = Starlette(routes=[Mount("/", SiteFiles(directory=folder, html=True))])
        server = AppServer(with_policy(files, policy))
        server.__enter__()
        servers.append(server)
        watch.origin = server.url
        return server.url

    yield start
    for server in servers:
        server.__exit__(None, None, None)


def pyscript_answer(page: Page, question: str) -> str:
    answers = page.locator("#ask .ak-assistant")
    before = answers.count()  # read .last only once the new answer is in the DOM
    field = page.locator("#ask .ak-input")
    field.fill(question)
    field.press("Enter")
    expect(answers).to_have_count(before + 1, timeout=30_000)
    answer = answers.nth(before)
    expect(answer).to_have_attribute("data-status", "complete", timeout=30_000)
    return answer.inner_text()


def test_the_documented_page_answers_from_its_own_function_under_the_documented_policy(
    page: Page, context: BrowserContext, serve: object, watch: Watch
) -> None:
    policy = documented_policy()
    assert policy == STRICT_POLICY.replace(
        "'wasm-unsafe-eval'", "'wasm-unsafe-eval' 'unsafe-eval'"
    ), "the strict policy plus 'unsafe-eval', nothing more"
    url = serve(policy)  # type: ignore[operator]
    context.add_init_script(RECORD_VIOLATIONS)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    response = page.goto(f"{url}/ask.html")
    assert response is not None and response.headers["content-security-policy"] == policy
    page.locator("#ask[data-mounted] .ak-input").wait_for(timeout=BOOT_TIMEOUT_MS)
    text = pyscript_answer(page, "What is PyScript?")
    assert "This answer comes from the function answer in the page's own" in text
    assert "You asked 0 question(s) before this one." in text
    context.set_offline(True)  # the answers need nothing but the page itself
    second = pyscript_answer(page, "Does this work offline?")
    assert "You asked 1 question(s) before this one." in second
    # Rendered as markdown by the widget, never as HTML: the code span is a <code> element.
    assert page.locator("#ask .ak-assistant").first.locator("code").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "pyscript-page.png"), full_page=True)
    violations = page.evaluate("window.__cspViolations")
    assert violations == []
    assert not any("micropip" in url for url in requests), "nothing installs at run time"
    assert any("/pyscript." in url for url in requests)
    page.close()
    assert watch.off_origin == []


def test_the_plain_embed_in_the_same_folder_still_needs_no_unsafe_eval(
    page: Page, context: BrowserContext, serve: object
) -> None:
    url = serve(STRICT_POLICY)  # type: ignore[operator]
    context.add_init_script(RECORD_VIOLATIONS)
    page.goto(f"{url}/embed.html")
    wait_for_state(page, "ready")
    violations = page.evaluate("window.__cspViolations")
    requests = page.evaluate("performance.getEntriesByType('resource').map((e) => e.name)")
    page.close()
    assert violations == []
    assert not any("pyscript" in name for name in requests), "the embed never loads PyScript"


@pytest.mark.console_error_expected(r"unsafe-eval|Content Security Policy|EvalError")
def test_the_pyscript_page_under_the_strict_policy_is_refused_by_script_src(
    page: Page, context: BrowserContext, serve: object
) -> None:
    url = serve(STRICT_POLICY)  # type: ignore[operator]
    context.add_init_script(RECORD_VIOLATIONS)
    page.goto(f"{url}/ask.html")
    deadline = time.monotonic() + 60
    violations: list[str] = []
    while not violations and time.monotonic() < deadline:
        page.wait_for_timeout(200)  # (wait_for_function evaluates a string: this policy forbids it)
        violations = page.evaluate("window.__cspViolations")
    page.close()
    assert any(v.startswith("script-src") for v in violations), violations


def test_a_page_two_levels_below_the_folder_boots_from_the_folder_s_runtime(
    page: Page, context: BrowserContext, folder: Path, serve: object, watch: Watch
) -> None:
    url = serve(documented_policy())  # type: ignore[operator]
    path = page_two_levels_below(folder, "deep.html")
    context.add_init_script(RECORD_VIOLATIONS)
    runtimes: list[str] = []
    page.on("request", lambda r: runtimes.append(r.url) if "pyodide.mjs" in r.url else None)
    page.goto(f"{url}{path}")
    page.locator("#ask[data-mounted] .ak-input").wait_for(timeout=BOOT_TIMEOUT_MS)
    assert "This answer comes from the function answer" in pyscript_answer(
        page, "What is PyScript?"
    )
    assert page.evaluate("window.__cspViolations") == []
    page.close()
    assert runtimes and all(r.startswith(f"{url}/runtime.") for r in runtimes), runtimes
    assert watch.off_origin == []


@pytest.mark.console_error_expected(r"404|pyodide|module")
def test_a_missing_runtime_is_said_in_the_page_where_the_script_is(
    page: Page, folder: Path, serve: object
) -> None:
    url = serve(documented_policy())  # type: ignore[operator]
    path = page_two_levels_below(folder, "missing.html")
    page.route("**/pyodide.mjs", lambda route: route.fulfill(status=404, body="not found"))
    page.goto(f"{url}{path}")
    alert = page.locator("p[role=alert]")
    expect(alert).to_be_visible(timeout=60_000)
    expect(alert).to_contain_text(f"{url}/runtime.")
    # In the script's place: right before the <script type="py"> that could not start.
    assert (
        page.evaluate(
            "document.querySelector('p[role=alert]').nextElementSibling.getAttribute('type')"
        )
        == "py"
    )
    assert page.locator("#ask[data-mounted]").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "pyscript-missing-runtime.png"), full_page=True)
    page.close()
