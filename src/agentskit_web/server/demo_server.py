"""`agentskit-web demo`: the built docs site and the Ask backend on one origin.

One Starlette app served by one uvicorn process: the Ask endpoint at
`/api/ask` and the turn endpoint at `/api/turn` (with `GET /api/turn/<sessionId>`
to resume), the widget's endpoints (so no CORS and a CSP of
`connect-src 'self'`) and `dist/` as static files with the types the page
needs (`application/wasm` for streaming compilation, `.mjs` as JavaScript).
The backend indexes `docs/` minus `docs/design/`, exactly the pages the build
publishes, with the extractive generator: no model and no network.

`serve_demo` is the command (prints the URL, runs until Ctrl-C or SIGTERM,
exit status 0); `DemoServer` runs the same app in a background thread on any
free port, for the browser tests and benchmarks. Both build the app with
`create_demo_app`, so the tests exercise the code path `make demo` runs.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette

from ..docs_text import DOCS_EXCLUDE
from .ask_app import DEFAULT_PATH, ask_route
from .ask_serve import DEMO_PACE_SECONDS, AskServeConfig, StartupError, build_app, uvicorn_config
from .feedback_app import feedback_route
from .static import (
    LOOPBACK,
    SHUTDOWN_GRACE_SECONDS,
    SITE_PORT,
    AppServer,
    bind_socket,
    create_static_app,
    serve_app,
)
from .turn_app import DEFAULT_TURN_PATH


@dataclass(slots=True)
class DemoConfig:
    """What the demo serves: the built site, the backend's site config and its docs."""

    dist: Path
    site: Path = Path("docs/site.json")
    docs: Path = Path("docs")
    path: str = DEFAULT_PATH
    turn_path: str = DEFAULT_TURN_PATH
    exclude: Sequence[str] = field(default_factory=lambda: list(DOCS_EXCLUDE))
    pace_seconds: float = DEMO_PACE_SECONDS
    # Further AskServeConfig settings (auth, rate limits...): tests run the real backend with them.
    backend: Mapping[str, Any] = field(default_factory=dict)


def create_demo_app(config: DemoConfig) -> Starlette:
    """The one-origin app; raises StartupError (one line) if anything is missing or invalid."""
    if not (config.dist / "index.html").is_file():
        raise StartupError(f"{config.dist} has no site yet: run `agentskit-web build` first.")
    backend = build_app(
        AskServeConfig(
            site=config.site,
            docs=config.docs,
            path=config.path,
            turn_path=config.turn_path,
            exclude=list(config.exclude),
            pace_seconds=config.pace_seconds,
            **config.backend,
        )
    )
    endpoint = backend.state.ask
    turn = backend.state.turn
    app = create_static_app(
        config.dist,
        routes=[
            ask_route(endpoint, config.path),
            feedback_route(endpoint, config.path),
            *turn.routes(config.turn_path),
        ],
    )
    app.state.ask = endpoint
    app.state.turn = turn
    return app


def demo_uvicorn_config(app: Starlette) -> uvicorn.Config:
    """The demo runs with the backend's own protections (request deadline, no proxy trusted)."""
    return uvicorn_config(app, AskServeConfig(), timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS)


class DemoServer(AppServer):
    """`with DemoServer(config) as demo: demo.url` — the demo app in a background thread."""

    def __init__(self, config: DemoConfig, host: str = LOOPBACK, port: int = 0) -> None:
        super().__init__(
            create_demo_app(config), host=host, port=port, settings=demo_uvicorn_config
        )


def serve_demo(config: DemoConfig, host: str = LOOPBACK, port: int = SITE_PORT) -> None:
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
    serve_app(app, sock, demo_uvicorn_config)
    print("Demo stopped.", flush=True)
