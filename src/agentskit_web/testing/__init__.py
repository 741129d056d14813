"""pytest plugin for sites that embed `<agentskit-ask>` (`pip install agentskit-web[testing]`).

Registered through the `pytest11` entry point, so installing the extra is all a
project does. Fixtures:

- `ask_server`: a scripted Ask backend on 127.0.0.1 (`AskServer`), serving the
  site named by the `agentskit_site` fixture (override it in your conftest, or
  pass `--agentskit-site DIR`) on the same origin;
- `ask_widget`: a page object (`AskWidget`) for the `<agentskit-ask>` on
  pytest-playwright's `page`;
- `same_origin_only`: fails the test on any request that leaves the page's
  origin (and aborts it, so nothing leaves the machine);
- `answer_eval`: the `agentskit-web eval` of the questions file named by the test's
  `@pytest.mark.agentskit_eval("questions.yaml", min_hit_rate=0.8)` marker, against the
  built site (`site_dir=` in the marker, else `--agentskit-site`) or a running backend
  (`url=`); fails the test under `min_hit_rate`, and returns the `EvalReport`.

A system Chromium is used when `--agentskit-chromium PATH` or the
`AGENTSKIT_CHROMIUM` environment variable names one; otherwise Playwright's own
browser is launched as pytest-playwright would.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from ..chromium_sandbox import sandbox_args, sandbox_available

if TYPE_CHECKING:
    from ..insight.eval_run import EvalReport
    from .scripted_server import AskServer
    from .widget import AskWidget

# The entry point loads this module in every pytest run of an environment that has the
# package, extras or not: the server side (starlette, uvicorn) is imported on first use only.
# No submodule is named like a fixture: importing it would replace the fixture function on
# this package (an `ask_server` submodule did, when a conftest imported it before collection).
_LAZY = {
    "AskServer": "scripted_server",
    "RecordedRequest": "scripted_server",
    "Script": "scripted_server",
    "ScriptError": "scripted_server",
    "Source": "scripted_server",
    "event_line": "scripted_server",
    "preset_names": "presets",
    "AskWidget": "widget",
    "Message": "widget",
    "SourceLink": "widget",
    "WidgetBootError": "widget",
    "WidgetUsageError": "widget",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "AskServer",
    "AskWidget",
    "Message",
    "OriginGuard",
    "RecordedRequest",
    "Script",
    "ScriptError",
    "Source",
    "SourceLink",
    "WidgetBootError",
    "WidgetUsageError",
    "event_line",
    "preset_names",
]

CHROMIUM_ENV = "AGENTSKIT_CHROMIUM"
IN_PAGE_SCHEMES = frozenset({"data", "blob", "about"})
SYSTEM_CHROMIUM_ARGS = ("--disable-gpu", "--disable-quic")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentskit", "agentskit-web testing")
    group.addoption(
        "--agentskit-chromium",
        default=None,
        metavar="PATH",
        help=f"launch this Chromium executable (default: ${CHROMIUM_ENV}, else Playwright's)",
    )
    group.addoption(
        "--agentskit-site",
        default=None,
        metavar="DIR",
        help="built site that ask_server serves beside its Ask endpoint",
    )


EVAL_MARKER = "agentskit_eval"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{EVAL_MARKER}(questions, *, min_hit_rate=None, site_dir=None, url=None): "
        "the questions file the answer_eval fixture asks (agentskit-web eval)",
    )


def chromium_path(config: pytest.Config) -> str | None:
    """The system Chromium to launch: the option, then the environment variable."""
    value = config.getoption("--agentskit-chromium") or os.environ.get(CHROMIUM_ENV)
    if not value:
        return None
    if not Path(value).is_file():
        raise pytest.UsageError(
            f"agentskit: Chromium executable {value!r} does not exist: pass "
            f"--agentskit-chromium PATH or set {CHROMIUM_ENV} to an installed chromium "
            "(e.g. /usr/bin/chromium), or unset it to use Playwright's browser"
        )
    return value


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, Any, Any]:
    """Add the system Chromium to pytest-playwright's `browser_type_launch_args`."""
    result = yield
    if fixturedef.argname == "browser_type_launch_args" and isinstance(result, dict):
        path = chromium_path(request.config)
        if path is not None and "executable_path" not in result:
            result["executable_path"] = path
            result["args"] = [*result.get("args", []), *SYSTEM_CHROMIUM_ARGS]
        if "chromium_sandbox" not in result:
            # The sandbox wherever Chromium allows it (not as root: see chromium_sandbox.py).
            result["args"] = [*result.get("args", []), *sandbox_args()]
            result["chromium_sandbox"] = sandbox_available()
    return result


# -- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def agentskit_site(pytestconfig: pytest.Config) -> Path | None:
    """The built site ask_server serves (None: the Ask endpoint alone). Override freely."""
    value = pytestconfig.getoption("--agentskit-site")
    if value is None:
        return None
    site = Path(value).resolve()
    if not (site / "index.html").is_file():
        raise pytest.UsageError(
            f"agentskit: --agentskit-site {site} has no index.html: build the site first "
            "(`mkdocs build` writes site/, Sphinx writes _build/html/) and pass that folder"
        )
    return site


@pytest.fixture
def ask_server(agentskit_site: Path | None) -> Iterator[AskServer]:
    """A scripted Ask backend (and the site, if any) on one loopback origin."""
    from .scripted_server import AskServer

    server = AskServer(site=agentskit_site).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def ask_widget(page: Any) -> AskWidget:
    """The `<agentskit-ask>` on `page`: goto your page, then `ask_widget.open()`."""
    from .widget import AskWidget

    return AskWidget(page)


@pytest.fixture
def answer_eval(request: pytest.FixtureRequest, agentskit_site: Path | None) -> EvalReport:
    """Run the test's `agentskit_eval` questions file; fail under its `min_hit_rate`.

    The file's path is relative to the test module's folder. The answers come from
    the marker's `url` (a running backend), else its `site_dir`, else `--agentskit-site`.
    """
    from ..insight.eval_questions import EvalFileError, load_eval_file
    from ..insight.eval_run import (
        EndpointAsker,
        EvalRunError,
        SiteAsker,
        run_eval,
    )

    marker = request.node.get_closest_marker(EVAL_MARKER)
    if marker is None or not marker.args:
        raise pytest.UsageError(
            f'agentskit: answer_eval needs @pytest.mark.{EVAL_MARKER}("questions.yaml") on the test'
        )
    here = request.path.parent
    url: str | None = marker.kwargs.get("url")
    site_dir = marker.kwargs.get("site_dir")
    site = here / site_dir if site_dir is not None else agentskit_site
    try:
        questions = load_eval_file(here / marker.args[0])
        if url is not None:
            endpoint = EndpointAsker(url)
            try:
                report = run_eval(questions, endpoint)
            finally:
                endpoint.close()
        elif site is not None:
            asker = SiteAsker(Path(site))
            asker.check_pages(questions)
            report = run_eval(questions, asker)
        else:
            raise pytest.UsageError(
                "agentskit: answer_eval needs a site (site_dir= in the marker or "
                "--agentskit-site DIR) or a backend (url= in the marker)"
            )
    except (EvalFileError, EvalRunError) as error:
        raise pytest.UsageError(f"agentskit eval: {error}") from error
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """A test whose `answer_eval` is under its marker's `min_hit_rate` fails (not errors),
    with the figures and the misses, before its own body runs."""
    from ..insight.eval_run import EvalReport, eval_lines

    marker = item.get_closest_marker(EVAL_MARKER)
    report = getattr(item, "funcargs", {}).get("answer_eval")
    if marker is not None and isinstance(report, EvalReport):
        min_hit_rate: float | None = marker.kwargs.get("min_hit_rate")
        if min_hit_rate is not None and report.hit_rate < min_hit_rate:
            pytest.fail("\n".join(eval_lines(report, min_hit_rate)), pytrace=False)
    return (yield)


class OriginGuard:
    """Records (and aborts) requests leaving the origin of the page's first navigation."""

    def __init__(self) -> None:
        self.origin: str | None = None
        self.off_origin: list[str] = []

    def allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme in IN_PAGE_SCHEMES:
            return True
        origin = f"{parts.scheme}://{parts.netloc}"
        if self.origin is None:
            self.origin = origin  # the first request is the page itself
            return True
        return origin == self.origin

    def route(self, route: Any) -> None:
        if self.allowed(route.request.url):
            route.fallback()
        else:
            self.off_origin.append(route.request.url)
            route.abort()


@pytest.fixture
def same_origin_only(page: Any) -> Iterator[OriginGuard]:
    """Fail the test if the page requests anything from another origin."""
    guard = OriginGuard()
    page.context.route("**/*", guard.route)
    yield guard
    if guard.off_origin:
        pytest.fail(
            f"requests left the page's origin {guard.origin}: {guard.off_origin}", pytrace=False
        )
