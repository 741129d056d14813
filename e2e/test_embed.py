"""The one-line embed on pages it was not built for: a sub-folder, a strict CSP, the launcher,
two loaders and two elements, and attribute typos. Real Chromium, the real backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentskit_web.server.demo_server import DemoConfig, DemoServer, create_demo_app
from agentskit_web.server.static import AppServer
from e2e_support import ROOT, Watch, show_intent, wait_for_state

STRICT_POLICY = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'"
)
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


def demo_config(dist: Path) -> DemoConfig:
    return DemoConfig(dist=dist, site=ROOT / "docs/site.json", docs=ROOT / "docs", pace_seconds=0)


@pytest.fixture(scope="module")
def demo(dist: Path) -> Iterator[DemoServer]:
    with DemoServer(demo_config(dist)) as server:
        yield server


@pytest.fixture
def watch(demo: DemoServer) -> Watch:
    """Same-origin means the demo's origin here (a test with its own server moves it)."""
    return Watch(origin=demo.url)


def with_policy(app: ASGIApp, policy: str) -> ASGIApp:
    """Every response carries `policy` as its Content-Security-Policy header."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"content-security-policy", policy.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_with_policy)

    return wrapped


def ask_and_wait(page: Page, question: str) -> None:
    page.locator("agentskit-ask .ak-input").fill(question)
    page.locator("agentskit-ask .ak-send").click()
    page.locator("agentskit-ask .ak-assistant[data-status=complete]").wait_for(timeout=60_000)


def embed_page(
    script_src: str, element: str = '<agentskit-ask endpoint="/api/ask"></agentskit-ask>'
) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plain page</title>'
        f'<script type="module" src="{script_src}"></script></head>'
        f"<body><main><h1>A plain page</h1>{element}</main></body></html>"
    )


def serve_page(context: BrowserContext, url: str, html: str) -> None:
    context.route(url, lambda route: route.fulfill(status=200, content_type="text/html", body=html))


def test_the_embed_works_on_a_plain_page_two_folders_deep(
    page: Page, context: BrowserContext, demo: DemoServer
) -> None:
    url = f"{demo.url}/guides/deep/plain.html"
    serve_page(context, url, embed_page("../../agentskit/agentskit-ask.js"))
    page.goto(url)
    wait_for_state(page, "ready")
    ask_and_wait(page, "How do I embed the widget?")
    sources = page.locator("agentskit-ask .ak-source-link")
    assert sources.count() >= 1
    hrefs = sources.evaluate_all("links => links.map((a) => a.getAttribute('href'))")
    assert [h for h in hrefs if not h.startswith(f"{demo.url}/docs/")] == []


def test_the_demo_runs_under_the_strict_policy_with_no_violation(
    page: Page, context: BrowserContext, dist: Path, watch: Watch
) -> None:
    app = with_policy(create_demo_app(demo_config(dist)), STRICT_POLICY)
    with AppServer(app) as server:
        watch.origin = server.url
        context.add_init_script(RECORD_VIOLATIONS)
        response = page.goto(server.url + "/docs/embedding.html")
        assert response is not None
        assert response.headers["content-security-policy"] == STRICT_POLICY
        wait_for_state(page, "ready")
        ask_and_wait(page, "Does the widget load anything from a CDN?")
        violations = page.evaluate("window.__cspViolations")
        page.close()  # before the server stops: nothing may still be loading
    assert violations == []


def test_a_policy_without_wasm_unsafe_eval_ends_in_a_visible_error(
    page: Page, context: BrowserContext, dist: Path, watch: Watch
) -> None:
    policy = STRICT_POLICY.replace(" 'wasm-unsafe-eval'", "")
    app = with_policy(create_demo_app(demo_config(dist)), policy)
    with AppServer(app) as server:
        watch.origin = server.url
        context.add_init_script(RECORD_VIOLATIONS)
        page.goto(server.url + "/")
        show_intent(page)
        page.wait_for_selector("agentskit-ask[data-state=error]", state="attached", timeout=120_000)
        violations = page.evaluate("window.__cspViolations")
        assert page.locator("agentskit-ask .ak-retry").is_visible()
        page.close()  # before the server stops: the other downloads may still be running
    assert any(v.startswith("script-src") for v in violations), violations


def test_the_launcher_opens_an_accessible_dialog_and_gives_focus_back(
    page: Page, context: BrowserContext, demo: DemoServer
) -> None:
    url = f"{demo.url}/launcher.html"
    element = '<agentskit-ask endpoint="/api/ask" layout="launcher"></agentskit-ask>'
    html = embed_page(
        "./agentskit/agentskit-ask.js", f'<button id="before">Before</button>{element}'
    )
    serve_page(context, url, html)
    page.goto(url)
    launcher = page.locator("agentskit-ask .ak-launcher")
    launcher.wait_for()
    dialog = page.locator("agentskit-ask dialog.ak-dialog")
    assert not dialog.is_visible()
    page.locator("#before").focus()
    page.keyboard.press("Control+k")
    dialog.wait_for(state="visible")
    assert (
        page.evaluate("document.querySelector('agentskit-ask').shadowRoot.activeElement.className")
        == "ak-input"
    )
    wait_for_state(page, "ready")
    ask_and_wait(page, "How do I embed the widget?")
    assert dialog.is_visible(), "the answer streams into the open dialog"
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.id") == "before", "focus goes back"

    launcher.click()
    dialog.wait_for(state="visible")
    page.locator("agentskit-ask .ak-toggle").click()  # the widget's own Close
    dialog.wait_for(state="hidden")


def test_two_loaders_and_two_elements_share_one_runtime(
    page: Page, context: BrowserContext, demo: DemoServer, watch: Watch
) -> None:
    url = f"{demo.url}/two.html"
    elements = (
        '<agentskit-ask endpoint="/api/ask" storage-key="one"></agentskit-ask>'
        '<script type="module" src="./agentskit/agentskit-ask.js?again"></script>'
        '<agentskit-ask endpoint="/api/ask" storage-key="two" boot="eager"></agentskit-ask>'
    )
    serve_page(context, url, embed_page("./agentskit/agentskit-ask.js", elements))
    page.goto(url)
    page.wait_for_selector("agentskit-ask[data-state=ready]", state="attached", timeout=120_000)
    show_intent(page)
    page.wait_for_function(
        "() => [...document.querySelectorAll('agentskit-ask')]"
        ".every((e) => e.dataset.state === 'ready')"
    )
    wasm = [u for u in watch.requests if u.endswith("/pyodide.asm.wasm")]
    assert 1 <= len(wasm) <= 2, wasm  # the loader's download (+ Pyodide's, from the cache)
    assert page.evaluate("customElements.get('agentskit-ask') !== undefined")
    assert page.locator("agentskit-ask").count() == 2


def test_invalid_attributes_fall_back_and_say_so_once(
    page: Page, context: BrowserContext, demo: DemoServer
) -> None:
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    url = f"{demo.url}/typos.html"
    element = (
        '<agentskit-ask endpoint="/api/ask" boot="sometimes" layout="modal" strings="{oops">'
        "</agentskit-ask>"
    )
    serve_page(context, url, embed_page("./agentskit/agentskit-ask.js", element + element))
    page.goto(url)
    page.wait_for_selector("agentskit-ask[data-state=idle]", state="attached")
    assert page.locator("agentskit-ask .ak-launcher").count() == 0, "layout fell back to inline"
    assert page.locator("agentskit-ask .ak-heading").first.inner_text() == "Ask the docs"
    ours = [w for w in warnings if w.startswith("agentskit-ask:")]
    assert len([w for w in ours if 'boot="sometimes"' in w]) == 1, ours
    assert len([w for w in ours if 'layout="modal"' in w]) == 1, ours
    assert len([w for w in ours if "strings" in w]) == 1, ours
    wait_for_state(page, "ready")  # boot fell back to intent: a reader's intent starts it
