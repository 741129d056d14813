"""Serving a built site: one header policy, one Starlette app, one way to run it.

`agentskit-web serve`, `make demo` (beside the Ask backend), the benchmarks and
the browser tests all serve files through `SiteFiles`, so every one of them
sends the same headers (`static_headers`):

- the right types for the page: `application/wasm` (streaming compilation
  needs it), `.mjs` as JavaScript, UTF-8 text;
- `X-Content-Type-Options: nosniff`;
- caching by name: a file whose path carries a content hash never changes, so
  it is `public, max-age=31536000, immutable` (a second page asks nothing);
  everything else is `no-cache` (revalidated, so a rebuilt site shows at once);
- the offline service worker (`agentskit-ask-sw.js`, opt-in) with
  `Service-Worker-Allowed: /`, so a worker published in the assets folder may
  control the site's pages outside that folder;
- `x.br` / `x.gz` written beside `x` are sent for `x` to clients that accept
  them, with `Content-Encoding` and `Vary: Accept-Encoding`.

`AppServer` runs any ASGI app under uvicorn in a background thread on a free
loopback port (tests, benchmarks); `serve_app` runs one in the foreground
until Ctrl-C or SIGTERM (the commands).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Final, Self

import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import ASGIApp, Scope

LOOPBACK: Final = "127.0.0.1"
SITE_PORT: Final = 8000
"""The port `agentskit-web serve` and `make demo` listen on unless told otherwise."""
SHUTDOWN_GRACE_SECONDS: Final = 3
"""How long a stop waits for responses still streaming before it closes their connections."""
START_TIMEOUT_SECONDS: Final = 30.0

MIME_TYPES: Final[Mapping[str, str]] = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".css": "text/css",
    ".html": "text/html",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".ndjson": "application/x-ndjson",
    ".toml": "text/plain",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".py": "text/x-python",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
IMMUTABLE: Final = "public, max-age=31536000, immutable"
REVALIDATE: Final = "no-cache"
HASHED_NAME: Final = re.compile(r"\.[0-9a-f]{12,64}(?=[./]|$)")
"""`name.<hex content hash>[.ext]` in any path segment: how `agentskit-web assets` names every
file that can change (`agentskit-ask.<hash>.css`) and the runtime folder (`runtime.<hash>/`)."""
SERVICE_WORKER_NAME: Final = "agentskit-ask-sw.js"
"""The assets folder's service worker: build/assets.SERVICE_WORKER (server/ cannot import it)."""
ENCODINGS: Final = (("br", ".br"), ("gzip", ".gz"))
"""Pre-compressed copies a server looks for beside a file, in order of preference."""


def media_type(path: str) -> str | None:
    """The Content-Type for a file name: ours first, text types with `charset=utf-8`."""
    kind = MIME_TYPES.get(os.path.splitext(path)[1].lower())
    if kind is None:
        return None
    if kind.startswith("text/") or kind in ("application/json", "application/x-ndjson"):
        return f"{kind}; charset=utf-8"
    return kind


def is_content_hashed(path: str) -> bool:
    """Whether the path carries a content hash (so the bytes behind it can never change)."""
    return HASHED_NAME.search(path.replace("\\", "/")) is not None


def accepted_encodings(header: str) -> set[str]:
    """Content codings an `Accept-Encoding` header accepts (q=0 refuses one)."""
    accepted: set[str] = set()
    for item in header.split(","):
        coding, _, params = item.strip().partition(";")
        quality = params.strip().removeprefix("q=").strip() if params else "1"
        try:
            if float(quality) <= 0:
                continue
        except ValueError:
            continue
        accepted.add(coding.strip().lower())
    return accepted


def is_inside(path: str, roots: Sequence[str | os.PathLike[str]]) -> bool:
    """Whether `path`, symlinks resolved, lies in one of `roots` (resolved too).

    The same rule Starlette's `StaticFiles` applies to the file asked for; a
    compressed copy beside it must pass it too, or a `site/x.gz` symlink to
    `/etc/passwd` is sent to any client that accepts gzip.
    """
    real = os.path.realpath(path)
    for root in roots:
        base = os.path.realpath(root)
        if os.path.commonpath([real, base]) == base:
            return True
    return False


def negotiate(
    path: str, accept_encoding: str, roots: Sequence[str | os.PathLike[str]]
) -> tuple[str, str | None, bool]:
    """(file to send, its Content-Encoding or None, whether variants exist for `Vary`).

    Only copies that are regular files inside `roots` (the served folders)
    count; one that leads outside is ignored as if it were absent.
    """
    accepted = accepted_encodings(accept_encoding)
    variants = [(coding, path + suffix) for coding, suffix in ENCODINGS]
    present = [
        (coding, file)
        for coding, file in variants
        if os.path.isfile(file) and is_inside(file, roots)
    ]
    for coding, file in present:
        if coding in accepted or (coding == "gzip" and "*" in accepted):
            return file, coding, True
    return path, None, bool(present)


def static_headers(path: str) -> dict[str, str]:
    """The headers every server of this project sends with the file at `path`."""
    headers = {
        "Cache-Control": IMMUTABLE if is_content_hashed(path) else REVALIDATE,
        "X-Content-Type-Options": "nosniff",
    }
    if path.replace("\\", "/").rsplit("/", 1)[-1] == SERVICE_WORKER_NAME:
        headers["Service-Worker-Allowed"] = "/"
    kind = media_type(path)
    if kind is not None:
        headers["Content-Type"] = kind
    return headers


class SiteFiles(StaticFiles):
    """A built site's files with `static_headers`, pre-compressed copies negotiated by
    `Accept-Encoding` (brotli, then gzip), and ETag/304 from Starlette."""

    def file_response(
        self,
        full_path: os.PathLike[str] | str,
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        request = Headers(scope=scope)
        path = str(full_path)
        headers = static_headers(path)
        served, coding, has_variants = negotiate(
            path, request.get("accept-encoding", ""), self.all_directories
        )
        response = FileResponse(
            served,
            status_code=status_code,
            stat_result=stat_result if served == path else os.stat(served),
            media_type=headers.pop("Content-Type", None),
        )
        response.headers.update(headers)
        if coding is not None:
            response.headers["Content-Encoding"] = coding
        if has_variants:
            response.headers["Vary"] = "Accept-Encoding"
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response


def create_static_app(root: Path, routes: list[BaseRoute] | None = None) -> Starlette:
    """`root` served at `/` (with `index.html` for folders), after any `routes` given."""
    if not (root / "index.html").is_file():
        raise FileNotFoundError(f"{root} has no index.html: run `agentskit-web build` first")
    return Starlette(routes=[*(routes or []), Mount("/", app=SiteFiles(directory=root, html=True))])


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket (port 0 = any free port; read it back from getsockname).

    The protocol must be IPPROTO_TCP explicitly: asyncio only disables Nagle
    (TCP_NODELAY) on accepted sockets whose proto says TCP, and with Nagle on,
    each streamed line after the first waits ~40 ms for the client's delayed ACK.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(512)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


ConfigFactory = Callable[[Any], uvicorn.Config]
"""Builds the uvicorn settings for an app (the Ask backend passes its guarded ones)."""


def plain_uvicorn_config(app: ASGIApp) -> uvicorn.Config:
    """Static files alone: quiet, no lifespan, a short grace."""
    return uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
    )


class AppServer:
    """`with AppServer(app) as server: server.url` — an ASGI app in a background thread."""

    def __init__(
        self,
        app: ASGIApp,
        host: str = LOOPBACK,
        port: int = 0,
        settings: ConfigFactory = plain_uvicorn_config,
    ) -> None:
        self.app = app
        self._socket = bind_socket(host, port)
        self.port = int(self._socket.getsockname()[1])
        self._server = uvicorn.Server(settings(app))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name=type(self).__name__,
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{type(self).__name__} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving: the port refuses connections afterwards."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=SHUTDOWN_GRACE_SECONDS + 5)
        self._socket.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


class StaticSite(AppServer):
    """`with StaticSite(dist) as site: site.url` — a built site alone, in the background."""

    def __init__(self, root: Path, port: int = 0, host: str = LOOPBACK) -> None:
        self.root = root
        super().__init__(create_static_app(root), host=host, port=port)


def _interrupt(_signal: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops a command like Ctrl-C does (uvicorn re-raises it after its shutdown)."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve_app(
    app: ASGIApp, sock: socket.socket, settings: ConfigFactory = plain_uvicorn_config
) -> None:
    """Serve on an already bound socket until Ctrl-C or SIGTERM; always closes the socket."""
    try:
        with _sigterm_as_interrupt():
            uvicorn.Server(settings(app)).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()


def serve_forever(root: Path, host: str = LOOPBACK, port: int = SITE_PORT) -> None:
    """`agentskit-web serve`: the built site alone until Ctrl-C."""
    app = create_static_app(root)
    serve_app(app, bind_socket(host, port))
