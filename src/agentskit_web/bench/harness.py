"""Shared by the browser sections: Debian Chromium, the built site on loopback, and a bare
Pyodide page that runs one Python snippet (`run_python_in_page`)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..page_packages import INSTALLED_AFTER_READY, PAGE_PACKAGE

CHROMIUM_FLAGS = (
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
BOOT_TIMEOUT_MS = 240_000

# A reader reaching for the box, which is the loader's intent: a click on the launcher's
# button (the box opens as its dialog, so what is measured is laid out and painted as the
# reader sees it), else the pointer over an inline box.
_REACH_FOR = """(host) => {
  const launcher = host.shadowRoot && host.shadowRoot.querySelector(".ak-launcher");
  if (launcher) launcher.click();
  else host.dispatchEvent(new Event("pointerenter"));
}"""
SHOW_INTENT = f"""() => ({_REACH_FOR})(document.querySelector("agentskit-ask"))"""
# The same as an init script: module scripts run before DOMContentLoaded, so the element is
# defined and drawn by then.
INTENT_AT_LOAD = f"""
document.addEventListener("DOMContentLoaded", () => {{
  document.querySelectorAll("agentskit-ask").forEach({_REACH_FOR});
}});
"""


def chromium_executable() -> str:
    """Debian's chromium (never a Playwright-downloaded browser)."""
    configured = os.environ.get("AGENTSKIT_CHROMIUM")
    if configured:
        return configured
    return shutil.which("chromium") or "/usr/bin/chromium"


def chromium_launch_options() -> dict[str, Any]:
    """Keyword arguments for `playwright.chromium.launch`, shared with e2e/."""
    from ..chromium_sandbox import sandbox_args, sandbox_available

    return {
        "executable_path": chromium_executable(),
        "args": [*CHROMIUM_FLAGS, *sandbox_args()],
        "chromium_sandbox": sandbox_available(),
    }


# ---------------------------------------------------------------- session


@dataclass
class Session:
    """A built dist/, a server for it and a launched browser, shared by sections."""

    dist: Path
    base_url: str
    browser: Any


@contextmanager
def open_session(dist: Path | None, build: bool) -> Iterator[Session]:
    from playwright.sync_api import sync_playwright

    from ..build.files import find_root
    from ..build.site import build as build_site
    from ..server.static import StaticSite

    root = find_root()
    target = (dist or root / "dist").resolve()
    if build:
        build_site(root, target)
    with StaticSite(target) as site, sync_playwright() as playwright:
        browser = playwright.chromium.launch(**chromium_launch_options())
        try:
            yield Session(dist=target, base_url=site.url, browser=browser)
        finally:
            browser.close()


HARNESS_PATH = "/__bench__/harness.html"
HARNESS_TIMEOUT_MS = 240_000


def assets_manifest(dist: Path) -> dict[str, Any]:
    """dist/agentskit/assets.json: where the loader's runtime folder and stylesheet are."""
    return dict(json.loads((dist / "agentskit" / "assets.json").read_text(encoding="utf-8")))


def runtime_path(dist: Path) -> str:
    """The site path of the content-hashed runtime folder, `/agentskit/runtime.<hash>/`."""
    return f"/agentskit/{assets_manifest(dist)['runtime']}"


def bench_wheel_path(dist: Path) -> str:
    """The site path of the in-page harness wheel (benchmark and harness pages only)."""
    (wheel,) = sorted((dist / "bench").glob("agentskit_web_bench-*.whl"))
    return f"/bench/{wheel.name}"


def harness_html(
    dist: Path, title: str, source: str, *, bench: bool = False, body: str = ""
) -> str:
    """A bare Pyodide page on the site's runtime (no loader, no widget) that runs `source`."""
    runtime = runtime_path(dist)
    extra = f"await pyodide.loadPackage({json.dumps(bench_wheel_path(dist))});" if bench else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<script type="module">
import {{ loadPyodide }} from "{runtime}pyodide.mjs";
const root = document.documentElement;
const runtime = new URL("{runtime}", location.href).href;  // Pyodide needs absolute URLs
try {{
  const pyodide = await loadPyodide({{
    indexURL: runtime,
    lockFileURL: runtime + "pyodide-lock.json",
    packages: {json.dumps([PAGE_PACKAGE, *INSTALLED_AFTER_READY])},
  }});
  {extra}
  window.akPy = pyodide;
  await pyodide.runPythonAsync({json.dumps(source)});
  root.dataset.state = "ready";
}} catch (error) {{
  root.dataset.error = String(error);
  root.dataset.state = "error";
}}
</script>
</head>
<body>{body}</body>
</html>
"""


@contextmanager
def harness_page(session: Session) -> Iterator[Any]:
    """A bare Pyodide page (the shipped wheels, no widget), booted, in a fresh context.

    The page is served on the bench server's origin through a Playwright route, so
    dist/ is not touched. JavaScript and Python measured in it share one page.
    """
    context = session.browser.new_context()
    try:
        page = context.new_page()
        html = harness_html(session.dist, "Bench harness", "", bench=True)
        page.route(
            f"**{HARNESS_PATH}",
            lambda route: route.fulfill(status=200, content_type="text/html", body=html),
        )
        page.goto(session.base_url + HARNESS_PATH)
        page.wait_for_selector("html[data-state]", state="attached", timeout=HARNESS_TIMEOUT_MS)
        if page.get_attribute("html", "data-state") != "ready":
            raise RuntimeError(f"the harness failed: {page.get_attribute('html', 'data-error')}")
        yield page
    finally:
        context.close()


def python_in(page: Any, code: str) -> Any:
    """Run `code` with the harness page's Pyodide and JSON-decode its value."""
    return json.loads(page.evaluate("(code) => akPy.runPythonAsync(code)", code))


def run_python_in_page(session: Session, code: str) -> Any:
    """Run `code` in a fresh harness page and JSON-decode its value."""
    with harness_page(session) as page:
        return python_in(page, code)
