"""Helpers shared by the browser tests (kept out of conftest so tests can import them)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
BOOT_TIMEOUT_MS = 180_000
IN_PAGE_SCHEMES = {"data", "blob", "about"}


@dataclass
class Watch:
    """What the pages of one test did that must not happen."""

    origin: str
    requests: list[str] = field(default_factory=list)
    off_origin: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def same_origin(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme in IN_PAGE_SCHEMES:
            return True
        return f"{parts.scheme}://{parts.netloc}" == self.origin

    def on_request(self, request: Any) -> None:
        self.requests.append(request.url)
        if not self.same_origin(request.url):
            self.off_origin.append(request.url)

    def on_console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(f"console error: {message.text}")

    def on_page_error(self, error: Any) -> None:
        self.errors.append(f"page error: {error}")


def widget_state(page: Page) -> str | None:
    return page.get_attribute("agentskit-ask", "data-state")


def wait_for_state(page: Page, state: str) -> None:
    """Wait on the page's own signal (data-state), never on a sleep."""
    page.wait_for_selector(
        f"agentskit-ask[data-state={state}], agentskit-ask[data-state=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    found = widget_state(page)
    if found != state:
        message = page.text_content("agentskit-ask .ak-error-message")
        raise AssertionError(f"widget state is {found!r}, expected {state!r}: {message}")


def save_artifact(name: str, data: Any) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path
