"""`agentskit-web preview SITE_DIR`: a built docs site and its Ask backend on one origin.

What `make demo` does for this project's docs, for anyone's built site
(MkDocs' `site/`, Sphinx's `_build/html` or `_build/dirhtml`, any folder of
HTML): one Starlette app, one uvicorn process, the site's files served with
the same headers as every server of this project (static.py's `SiteFiles`)
under the path the site is published below, and the Ask and turn endpoints at
`/api/ask` and `/api/turn` from the origin's root, where the widget's default
`endpoint` points. The backend answers from the index the plugin wrote into
the site (or the site's HTML indexed at start-up, see site_source.py), so
every source it cites is a page and an anchor of this very folder.

A folder whose pages have no widget (built without the plugins: Docusaurus,
Hugo, hand-written HTML) can get one for the preview only: the command
publishes the assets folder into a temporary folder, served at
`WIDGET_ASSETS_PATH`, and every HTML page is sent with the loader's script
tag and an `<agentskit-ask>` element (the `inject` snippet) before its
`</body>`; the files on disk are never changed.

A site that embeds the widget answers from its backend here, as it is described:
the site and its backend. A page built for static answers (no `endpoint` on the
element: the page answers from its split index) is sent with the element wired
to the preview's own Ask endpoint (`endpoint="/api/ask"` added to each
`<agentskit-ask>` lacking one), so questions reach the backend and the static
index stays the fallback it is on any site with a backend. `--static-answers`
sends the pages as built instead, to try the page answering by itself. An
element that names an endpoint of its own, or speaks the turn protocol, is left
as it is.

A site under a base path (`--base-path /docs/`, or the one its index was
written for) is served there, and `/` redirects to it, as the site's own host
would place it. The app is built by `create_preview_app` for the command and
for the tests alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .ask_app import DEFAULT_PATH, ask_route
from .ask_serve import DEMO_PACE_SECONDS, AskServeConfig, StartupError, build_app
from .demo_server import demo_uvicorn_config
from .feedback_app import feedback_route
from .site_source import SiteSource
from .static import (
    LOOPBACK,
    SITE_PORT,
    AppServer,
    SiteFiles,
    bind_socket,
    serve_app,
    static_headers,
)
from .turn_app import DEFAULT_TURN_PATH

WIDGET_TAG: Final = b"<agentskit-ask"
"""How a page built with the MkDocs plugin or the Sphinx extension (or embedded by hand) shows."""
WIDGET_SNIFF_BYTES: Final = 1024 * 1024
"""How much of the home page is read to tell whether the widget is embedded."""
WIDGET_ASSETS_PATH: Final = "/_agentskit/"
"""Where the preview serves the assets folder it adds to a site that has none."""
INJECT_MAX_PAGE_BYTES: Final = 8 * 1024 * 1024
"""Larger HTML files are sent as they are (no widget added): the preview reads a page whole."""
HTML_SUFFIXES: Final = (".html", ".htm")
PREVIEW_CSP: Final = (
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self';"
    " frame-ancestors 'self'"
)
"""The Content-Security-Policy on every preview response (issue 36: it sent none).

What holds for any docs site without breaking it: no fetch, XHR, WebSocket
or beacon leaves the origin (the widget's rule, and no reader data leaves a
local preview), no plugins, no `<base>` or form pointing elsewhere, no
framing by another origin. Not the strict `script-src`/`style-src` of
docs/security.md: the pages are the owner's, and themes such as MkDocs' own
and Material run inline scripts that a strict policy would block, so the
preview would no longer show the site as it is (`agentskit-web check` tests
a page under the owner's real policy)."""
_BODY_END: Final = re.compile(rb"</body\s*>", re.IGNORECASE)
_ELEMENT: Final = re.compile(rb"<agentskit-ask(?![-\w])([^>]*)>", re.IGNORECASE)
_NAMES_ENDPOINT: Final = re.compile(rb"(?<![-\w])endpoint\s*=", re.IGNORECASE)
_TURN: Final = re.compile(rb"""(?<![-\w])protocol\s*=\s*["']?\s*turn\b""", re.IGNORECASE)


@dataclass(slots=True)
class PreviewConfig:
    """What `preview` serves: the built site, where it is published, the endpoints' paths."""

    site_dir: Path
    base_path: str | None = None
    path: str = DEFAULT_PATH
    turn_path: str = DEFAULT_TURN_PATH
    pace_seconds: float = DEMO_PACE_SECONDS
    backend: Mapping[str, Any] = field(default_factory=dict)
    """Further AskServeConfig settings (a site config, rate limits...)."""
    widget_assets: Path | None = None
    """An assets folder to serve at WIDGET_ASSETS_PATH (for a site without the widget)."""
    inject: str | None = None
    """HTML added before each page's `</body>` (the embed, for a site without the widget)."""
    static_answers: bool = False
    """Send the pages as built: an element without `endpoint` answers from the static index
    (False: such elements are wired to the preview's backend, see `wire_endpoint`)."""


def create_preview_app(config: PreviewConfig) -> Starlette:
    """The one-origin app; raises StartupError (one line) when the folder gives nothing."""
    if not config.site_dir.is_dir():
        raise StartupError(f"Site folder {config.site_dir} does not exist.")
    backend = build_app(
        AskServeConfig(
            site_dir=config.site_dir,
            base_path=config.base_path,
            path=config.path,
            turn_path=config.turn_path,
            pace_seconds=config.pace_seconds,
            **config.backend,
        )
    )
    source: SiteSource = backend.state.source
    endpoint = backend.state.ask
    turn = backend.state.turn
    files: SiteFiles
    if config.inject is not None:
        snippet = config.inject.encode("utf-8")
        files = PageRewritingSiteFiles(
            lambda page: inject_snippet(page, snippet), directory=config.site_dir, html=True
        )
    elif config.static_answers or not has_widget(config.site_dir):
        files = SiteFiles(directory=config.site_dir, html=True)
    else:
        wired = config.path.encode("utf-8")
        files = PageRewritingSiteFiles(
            lambda page: wire_endpoint(page, wired), directory=config.site_dir, html=True
        )
    routes: list[BaseRoute] = [
        ask_route(endpoint, config.path),
        feedback_route(endpoint, config.path),
        *turn.routes(config.turn_path),
    ]
    if config.widget_assets is not None:
        assets = SiteFiles(directory=config.widget_assets)
        routes.append(Mount(WIDGET_ASSETS_PATH.rstrip("/"), app=assets))
    if source.base_path == "/":
        routes.append(Mount("/", app=files))
    else:
        routes.append(Route("/", _redirect_to(source.base_path)))
        routes.append(Mount(source.base_path.rstrip("/"), app=files))
    app = Starlette(routes=routes, middleware=[Middleware(PolicyHeader)])
    app.state.ask = endpoint
    app.state.turn = turn
    app.state.source = source
    app.state.startup_notes = list(backend.state.startup_notes)
    if config.inject is None and not has_widget(config.site_dir):
        app.state.startup_notes.append(
            "The pages have no Ask widget: add the MkDocs plugin or the Sphinx extension "
            f"(docs/embedding.md); the backend answers at {config.path} all the same."
        )
    elif config.inject is not None:
        app.state.startup_notes.append(
            "The pages have no Ask widget: the preview adds one to each page it sends "
            "(the files are not changed; add the plugin or the embed to publish it)."
        )
    elif not config.static_answers:
        app.state.startup_notes.append(
            f"The widget asks this backend: an element without endpoint is sent with "
            f"endpoint={config.path} (--static-answers: the pages as built, answering from "
            "the static index)."
        )
    return app


class PolicyHeader:
    """Adds `PREVIEW_CSP` to every response that does not set a policy of its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("content-security-policy", PREVIEW_CSP)
            await send(message)

        await self.app(scope, receive, with_policy)


def _redirect_to(target: str) -> Any:
    async def redirect(request: Request) -> RedirectResponse:
        return RedirectResponse(target, status_code=307)

    return redirect


def inject_snippet(page: bytes, snippet: bytes) -> bytes:
    """`page` with `snippet` before its last `</body>` (the end without one), unless the
    page embeds the widget already."""
    if WIDGET_TAG in page:
        return page
    ends = list(_BODY_END.finditer(page))
    at = ends[-1].start() if ends else len(page)
    return page[:at] + snippet + b"\n" + page[at:]


def wire_endpoint(page: bytes, endpoint: bytes) -> bytes:
    """`page` with `endpoint="…"` on each `<agentskit-ask>` that names none (and does not
    speak the turn protocol): the element then asks the preview's backend."""

    def wired(found: re.Match[bytes]) -> bytes:
        attributes = found.group(1)
        if _NAMES_ENDPOINT.search(attributes) or _TURN.search(attributes):
            return found.group(0)
        return b'<agentskit-ask endpoint="' + endpoint + b'"' + attributes + b">"

    return _ELEMENT.sub(wired, page)


class PageRewritingSiteFiles(SiteFiles):
    """The site's files, every HTML page sent through `rewrite` (bytes in, bytes out).

    Only the uncompressed page is read (a `.br`/`.gz` copy beside it is not
    used for pages), and the result is revalidated like any page (`no-cache`).
    """

    def __init__(self, rewrite: Callable[[bytes], bytes], **options: Any) -> None:
        super().__init__(**options)
        self.rewrite = rewrite

    def file_response(
        self,
        full_path: os.PathLike[str] | str,
        stat_result: os.stat_result,
        scope: Any,
        status_code: int = 200,
    ) -> Response:
        path = str(full_path)
        if not path.lower().endswith(HTML_SUFFIXES) or stat_result.st_size > INJECT_MAX_PAGE_BYTES:
            return super().file_response(full_path, stat_result, scope, status_code)
        with open(path, "rb") as file:
            page = file.read()
        body = self.rewrite(page)
        if body == page:
            return super().file_response(full_path, stat_result, scope, status_code)
        headers = static_headers(path)
        kind = headers.pop("Content-Type", "text/html; charset=utf-8")
        return Response(body, status_code=status_code, headers=headers, media_type=kind)


def home_page_head(site_dir: Path) -> bytes:
    """The first WIDGET_SNIFF_BYTES of the site's home page (b"" without one).

    The home page is `index.html`; a site without one (Sphinx with another `root_doc`)
    is judged by its first HTML page in name order.
    """
    home = site_dir / "index.html"
    if not home.is_file():
        home = next(iter(sorted(site_dir.glob("*.html"))), home)
    if not home.is_file():
        return b""
    with home.open("rb") as file:
        return file.read(WIDGET_SNIFF_BYTES)


def has_widget(site_dir: Path) -> bool:
    """Whether the site embeds the widget (the plugins put it on every page)."""
    return WIDGET_TAG in home_page_head(site_dir)


class PreviewServer(AppServer):
    """`with PreviewServer(config) as preview: preview.url` — in a background thread (tests)."""

    def __init__(self, config: PreviewConfig, host: str = LOOPBACK, port: int = 0) -> None:
        super().__init__(
            create_preview_app(config), host=host, port=port, settings=demo_uvicorn_config
        )

    @property
    def site_url(self) -> str:
        """The site's home: the server's URL and the base path."""
        source: SiteSource = self.app.state.source  # type: ignore[attr-defined]
        return self.url + source.base_path


def serve_preview(config: PreviewConfig, host: str = LOOPBACK, port: int = SITE_PORT) -> None:
    """Serve until Ctrl-C/SIGTERM; prints the URL and the page count once the socket listens.

    Raises StartupError (nothing to answer from) or OSError (port taken) before serving.
    """
    app = create_preview_app(config)
    source: SiteSource = app.state.source
    sock = bind_socket(host, port)
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{sock.getsockname()[1]}{source.base_path}"
    print(f"Preview: {url}", flush=True)
    print(
        f"  {source.pages} pages indexed ({len(source.chunks)} sections) from {source.origin}; "
        f"Ask backend at {config.path} (no model, no network). Ctrl-C stops it.",
        flush=True,
    )
    for note in app.state.startup_notes:
        print(f"  {note}", flush=True)
    serve_app(app, sock, demo_uvicorn_config)
    print("Preview stopped.", flush=True)
