"""The widget shell in real Chromium: typeable at once, boots to ready, fails visibly, retries."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Route

from agentskit_web.build.cdn_scan import scan_for_cdn
from agentskit_web.server.static import StaticSite
from e2e_support import Watch, wait_for_state, widget_state


def test_shell_is_visible_and_typeable_before_python_is_ready(page: Page, site: StaticSite) -> None:
    held: list[Route] = []
    # Hold the interpreter's wasm so the page is provably still booting while we type.
    page.route("**/runtime/pyodide/pyodide.asm.wasm", lambda route: held.append(route))
    page.goto(site.url + "/", wait_until="domcontentloaded")

    assert widget_state(page) == "booting"
    box = page.locator("agentskit-ask")
    assert box.is_visible()
    assert box.get_attribute("aria-busy") == "true"
    status = page.locator("agentskit-ask .ak-status")
    assert status.is_visible() and status.inner_text().strip(), "the box is never blank"
    assert page.locator("agentskit-ask .ak-error").is_hidden()

    question = page.locator("agentskit-ask .ak-input")
    question.click()
    question.type("How do I embed the widget?")
    assert question.input_value() == "How do I embed the widget?"
    page.locator("agentskit-ask .ak-send").click()
    assert "Still starting" in status.inner_text()
    assert widget_state(page) == "booting"

    assert held, "the wasm request was not made"
    for route in held:
        route.continue_()
    wait_for_state(page, "ready")
    assert question.input_value() == "How do I embed the widget?", "typing survives the boot"


# Chromium logs the static server's refusal of the Ask POST to the console.
@pytest.mark.console_error_expected(r"^console error: Failed to load resource: .* 405 \(Method Not")
def test_boots_to_ready_with_the_widget_and_says_when_no_backend_answers(
    page: Page, site: StaticSite
) -> None:
    page.goto(site.url + "/")
    wait_for_state(page, "ready")

    box = page.locator("agentskit-ask")
    assert box.get_attribute("aria-busy") == "false"
    assert box.get_attribute("data-mounted") == ""
    assert page.locator("agentskit-ask .ak-error").is_hidden()
    assert page.evaluate("window.agentskitShell.state") == "ready"
    assert page.evaluate("performance.getEntriesByName('agentskit:ready').length") == 1
    assert page.locator("agentskit-ask [role=log]").count() == 1

    # The static server has no Ask backend: the answer fails in place.
    page.locator("agentskit-ask .ak-input").fill("Is anyone there?")
    page.locator("agentskit-ask .ak-send").click()
    error = page.locator("agentskit-ask .ak-message-error")
    error.wait_for()
    assert "Ask request failed (405)." in error.inner_text()  # a static site allows GET only
    # 405 will not change on a second try: no Retry is offered (issue 14, item 9).
    assert page.locator("agentskit-ask .ak-retry-answer").count() == 0
    assert "Is anyone there?" in page.locator("agentskit-ask .ak-user").inner_text()


def test_no_request_leaves_the_test_server(page: Page, site: StaticSite, watch: Watch) -> None:
    page.goto(site.url + "/")
    wait_for_state(page, "ready")

    fetched = {url.removeprefix(site.url) for url in watch.requests}
    assert "/runtime/pyodide/pyodide.asm.wasm" in fetched, "requests are being recorded"
    assert any(url.startswith("/wheels/pydantic_core-") for url in fetched)
    assert not watch.off_origin
    assert all(watch.same_origin(url) for url in watch.requests)
    assert scan_for_cdn(site.root) == []


# The withheld wheel: Chromium's 404 and integrity lines, then the loader's own report of it.
@pytest.mark.console_error_expected(
    r"^console error: (Failed to load resource: .* 404 \(Not Found\)"
    r"|Failed to find a valid digest .*/wheels/agentskit_web-.*"
    r"|Fetch API cannot load .*/wheels/agentskit_web-.*integrity.*"
    r"|The following error occurred while loading agentskit-web:"
    r"|Failed to fetch)$"
)
def test_boot_failure_shows_the_error_with_a_retry_that_works(
    page: Page, site: StaticSite, watch: Watch
) -> None:
    missing = "**/wheels/agentskit_web-*.whl"
    page.route(missing, lambda route: route.fulfill(status=404, body="not found"))
    page.goto(site.url + "/")
    wait_for_state_error(page)

    error = page.locator("agentskit-ask .ak-error")
    assert error.is_visible()
    message = page.locator("agentskit-ask .ak-error-message").inner_text()
    assert message.strip(), "the error says what went wrong"
    assert "could not start" in page.locator("agentskit-ask .ak-status").inner_text()
    retry = page.locator("agentskit-ask .ak-retry")
    assert retry.is_visible() and retry.is_enabled()
    assert any("404" in line or "agentskit" in line for line in watch.errors)

    page.unroute(missing)
    retry.click()
    wait_for_state(page, "ready")
    assert page.locator("agentskit-ask .ak-error").is_hidden()


def wait_for_state_error(page: Page) -> None:
    page.wait_for_selector("agentskit-ask[data-state=error]", state="attached", timeout=60_000)
