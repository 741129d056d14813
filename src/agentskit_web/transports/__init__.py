"""The Ask adapter's network edge: one port (port.py) and one implementation per platform.

The implementation is chosen once, by platform, the way micropip picks its
transport: the browser's `fetch` in Pyodide (fetch_transport.py, which imports
`js`/`pyodide` only inside its calls) and httpx on CPython (httpx_transport.py).
Nothing here imports chat/ or protocol/; chat/ imports the port from here.
"""

import sys

from .port import (
    AskTransport,
    AskTransportResponse,
    PlatformTransport,
    StaticFileTransport,
    TurnTransport,
    header_value,
)

__all__ = [
    "AskTransport",
    "AskTransportResponse",
    "PlatformTransport",
    "StaticFileTransport",
    "TurnTransport",
    "default_transport",
    "header_value",
]


def default_transport() -> PlatformTransport:
    """fetch in Pyodide, httpx on CPython; each imported only on the platform that runs it."""
    if sys.platform == "emscripten":
        from .fetch_transport import FetchTransport

        return FetchTransport()
    from .httpx_transport import HttpxTransport

    return HttpxTransport()
