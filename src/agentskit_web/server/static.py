"""A small threaded static file server for `dist/`, bound to 127.0.0.1.

Used by `agentskit-web serve|demo`, the browser tests and the benchmark. The
standard library handler is enough; what it lacks is the right MIME types for
WebAssembly (streaming compilation requires `application/wasm`) and ES modules
(`.mjs` must be JavaScript), a quiet log, and a clean start/stop API with a
free port.
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Self

LOOPBACK = "127.0.0.1"

MIME_TYPES = {
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
    ".py": "text/x-python",
    ".map": "application/json",
    ".svg": "image/svg+xml",
}


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves one folder with correct types; logs nothing unless asked to."""

    extensions_map: ClassVar[dict[str, str]] = {  # type: ignore[misc]
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        **MIME_TYPES,
    }
    verbose = False
    # Keep-alive: the page fetches ~25 files; HTTP/1.0 would open a connection for each.
    protocol_version = "HTTP/1.1"

    def end_headers(self) -> None:
        # Text types are UTF-8; revalidate so a rebuilt dist/ is picked up at once.
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def guess_type(self, path: str | Any) -> str:
        kind = super().guess_type(path)
        if kind.startswith("text/") or kind == "application/json":
            return f"{kind}; charset=utf-8"
        return kind

    def log_message(self, format: str, *args: Any) -> None:
        if self.verbose:
            super().log_message(format, *args)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A browser closing a tab mid-download is normal, not a server error.
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class BackgroundServer:
    """An http.server running in a daemon thread: `start`/`stop` or `with`, and its `url`."""

    def __init__(self, server: http.server.HTTPServer, name: str = "site") -> None:
        self._server = server
        self._name = name
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=self._name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


class StaticSite(BackgroundServer):
    """`with StaticSite(dist) as site: site.url` — serve in a background thread."""

    def __init__(
        self, root: Path, port: int = 0, host: str = LOOPBACK, verbose: bool = False
    ) -> None:
        if not (root / "index.html").is_file():
            raise FileNotFoundError(f"{root} has no index.html: run `agentskit-web build`")
        handler = functools.partial(_handler_class(verbose), directory=str(root))
        self.root = root
        super().__init__(_Server((host, port), handler), name="static-site")


def _handler_class(verbose: bool) -> type[SiteHandler]:
    return type("Handler", (SiteHandler,), {"verbose": verbose})


def serve_forever(root: Path, port: int = 8000, verbose: bool = True) -> None:
    """Serve until Ctrl-C (the `serve` and `demo` commands)."""
    site = StaticSite(root, port=port, verbose=verbose)
    try:
        site._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        site._server.server_close()
