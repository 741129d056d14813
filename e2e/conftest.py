"""Browser test fixtures: a built dist/, a static server on a free 127.0.0.1 port, Chromium.

Every page a test opens is watched: a request to any origin other than the test
server fails the test (and is aborted, so nothing leaves the machine), and so
does any uncaught page error or console error. A test that provokes one on
purpose marks it `console_error_expected(pattern)`: lines matching the pattern
are allowed (and at least one must appear), every other error still fails.
Pages' WebSockets and service workers are recorded too: the product opens none.

Every page also reports the modules it imports (module_record.py); at the end of the
session every standard-library module a page tried to import must be in the served,
trimmed python_stdlib.zip, and `--record-modules FILE` writes the measured list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from agentskit_web.bench.harness import assets_manifest, chromium_launch_options
from agentskit_web.build.site import build
from agentskit_web.server.static import StaticSite
from e2e_support import ROOT, Watch
from module_record import ModuleRecorder, missing_from, wrap_new_context
from wheel_support import Release, build_release_at

STOCK_STDLIB = ROOT / "web/node_modules/pyodide/python_stdlib.zip"
RECORDER = ModuleRecorder()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "console_error_expected(pattern): console errors this test provokes"
    )
    config.addinivalue_line(
        "markers", "unmeasured_imports: the test imports modules no journey needs"
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-modules",
        type=Path,
        default=None,
        help="write the standard-library modules the pages imported to this file",
    )


@pytest.fixture(autouse=True)
def _measured_imports(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests marked `unmeasured_imports` import modules no journey needs: not recorded."""
    RECORDER.paused = request.node.get_closest_marker("unmeasured_imports") is not None
    yield
    RECORDER.paused = False


@pytest.fixture(scope="session", autouse=True)
def _page_modules(request: pytest.FixtureRequest, dist: Path) -> Iterator[None]:
    """After the session: write the measurement if asked; every recorded module is shipped."""
    yield
    target = request.config.getoption("--record-modules")
    if target is not None:
        RECORDER.write(target, STOCK_STDLIB)
    wanted = RECORDER.stdlib_names(STOCK_STDLIB)
    runtime = dist / "agentskit" / assets_manifest(dist)["runtime"]
    missing = missing_from(runtime / "python_stdlib.zip", wanted)
    assert not missing, f"pages imported standard-library modules the build trimmed: {missing}"


@pytest.fixture(scope="session")
def dist() -> Path:
    """dist/, (re)built incrementally: quick when `make` already built it."""
    target = ROOT / "dist"
    build(ROOT, target)
    return target


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    """The release wheel and sdist, built once for every test that installs them."""
    return build_release_at(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="session")
def site(dist: Path) -> Iterator[StaticSite]:
    with StaticSite(dist) as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**chromium_launch_options())
        # Instance attribute: every context any test opens reports its pages' imports.
        launched.new_context = wrap_new_context(launched.new_context, RECORDER)  # type: ignore[method-assign]
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def watch(site: StaticSite) -> Watch:
    return Watch(origin=site.url)


@pytest.fixture
def context(
    browser: Browser, watch: Watch, request: pytest.FixtureRequest
) -> Iterator[BrowserContext]:
    ctx = browser.new_context()
    ctx.on("request", watch.on_request)
    ctx.on("serviceworker", watch.on_service_worker)
    # Off-origin requests are recorded above and aborted here: nothing leaves the box.
    ctx.route(lambda url: not watch.same_origin(url), lambda route: route.abort())
    try:
        yield ctx
    finally:
        ctx.close()
    assert not watch.off_origin, f"requests to other origins: {watch.off_origin}"
    assert not watch.sockets, f"WebSockets opened: {watch.sockets}"
    assert not watch.service_workers, f"service workers started: {watch.service_workers}"
    marker = request.node.get_closest_marker("console_error_expected")
    expected = re.compile(marker.args[0]) if marker is not None else None
    unexpected = [line for line in watch.errors if expected is None or not expected.search(line)]
    assert not unexpected, "\n".join(unexpected)
    if expected is not None:
        assert any(expected.search(line) for line in watch.errors), "the expected error never came"


@pytest.fixture
def page(context: BrowserContext, watch: Watch) -> Page:
    opened = context.new_page()
    opened.on("console", watch.on_console)
    opened.on("pageerror", watch.on_page_error)
    opened.on("websocket", watch.on_websocket)
    return opened
