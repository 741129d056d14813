"""`agentskit-web demo`: the built docs site and the Ask backend on one origin.

One Starlette app served by one uvicorn process: the Ask endpoint at
`/api/ask` (the widget's default endpoint, so no CORS and a CSP of
`connect-src 'self'`) and `dist/` as static files with the types the page
needs (`application/wasm` for streaming compilation, `.mjs` as JavaScript).
The backend indexes `docs/` minus `docs/design/`, exactly the pages the build
publishes, with the extractive generator: no model and no network.

`serve_demo` is the command (prints the URL, runs until Ctrl-C or SIGTERM,
exit status 0); `DemoServer` runs the same app in a background thread on any
free port, for the browser tests and benchmarks. Both build the app with
`create_demo_app`, so the tests exercise the code path `make demo` runs.
"""

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import Final

import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import Scope

from ..docs_site import DOCS_EXCLUDE
from .ask_app import DEFAULT_PATH, ask_route
from .ask_serve import (
    DEMO_PACE_SECONDS,
    AskServeConfig,
    StartupError,
    bind_socket,
    build_app,
    uvicorn_config,
)
from .static_site import LOOPBACK, MIME_TYPES

DEMO_PORT: Final = 8000
SHUTDOWN_GRACE_SECONDS: Final = 3
"""How long a stop waits for answers still streaming before it closes their connections."""
START_TIMEOUT_SECONDS: Final = 30.0


class SiteFiles(StaticFiles):
    """`dist/` with explicit types (UTF-8 text), `nosniff`, and revalidation on every load."""

    def file_response(
        self,
        full_path: "os.PathLike[str] | str",
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        suffix = Path(full_path).suffix.lower()
        media_type = MIME_TYPES.get(suffix)
        if media_type is not None and (media_type.startswith("text/") or suffix == ".json"):
            media_type += "; charset=utf-8"
        response = FileResponse(
            full_path, status_code=status_code, stat_result=stat_result, media_type=media_type
        )
        # A rebuilt dist/ is picked up at once (the ETag makes the revalidation cheap).
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Content-Type-Options"] = "nosniff"
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response


@dataclass(slots=True)
class DemoConfig:
    """What the demo serves: the built site, the backend's site config and its docs."""

    dist: Path
    site: Path = Path("docs/site.json")
    docs: Path = Path("docs")
    path: str = DEFAULT_PATH
    exclude: Sequence[str] = field(default_factory=lambda: list(DOCS_EXCLUDE))
    pace_seconds: float = DEMO_PACE_SECONDS


def create_demo_app(config: DemoConfig) -> Starlette:
    """The one-origin app; raises StartupError (one line) if anything is missing or invalid."""
    if not (config.dist / "index.html").is_file():
        raise StartupError(f"{config.dist} has no site yet: run `agentskit-web build` first.")
    backend = build_app(
        AskServeConfig(
            site=config.site,
            docs=config.docs,
            path=config.path,
            exclude=list(config.exclude),
            pace_seconds=config.pace_seconds,
        )
    )
    endpoint = backend.state.ask
    app = Starlette(
        routes=[
            ask_route(endpoint, config.path),
            Mount("/", app=SiteFiles(directory=config.dist, html=True)),
        ]
    )
    app.state.ask = endpoint
    return app


def _server(app: Starlette) -> uvicorn.Server:
    """The demo runs with the backend's own protections (request deadline, no proxy trusted)."""
    return uvicorn.Server(
        uvicorn_config(app, AskServeConfig(), timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS)
    )


class DemoServer:
    """`with DemoServer(config) as demo: demo.url` — the demo app in a background thread."""

    def __init__(self, config: DemoConfig, host: str = LOOPBACK, port: int = 0) -> None:
        self.app = create_demo_app(config)
        self._socket = bind_socket(host, port)
        self.port = int(self._socket.getsockname()[1])
        self._server = _server(self.app)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> "DemoServer":
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="demo", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the demo server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving: the port refuses connections afterwards (the page sees "offline")."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=SHUTDOWN_GRACE_SECONDS + 5)
        self._socket.close()

    def __enter__(self) -> "DemoServer":
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


def _interrupt(_signal: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the demo like Ctrl-C does (uvicorn re-raises it after its shutdown)."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve_demo(config: DemoConfig, host: str = LOOPBACK, port: int = DEMO_PORT) -> None:
    """Serve until Ctrl-C/SIGTERM; prints the URL once the socket listens.

    Raises StartupError (bad config, no site) or OSError (port taken) before serving.
    """
    app = create_demo_app(config)
    sock = bind_socket(host, port)
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{sock.getsockname()[1]}/"
    print(
        f"Demo: {url}\n"
        f"  docs site from {config.dist}, Ask backend at {config.path} answering from "
        f"{config.docs}/ (no model, no network). Ctrl-C stops it.",
        flush=True,
    )
    try:
        with _sigterm_as_interrupt():
            _server(app).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    print("Demo stopped.", flush=True)
