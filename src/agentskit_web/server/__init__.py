"""CPython-only servers: the static site server (demo, e2e, bench) and, later, the Ask backend."""

from .static import StaticSite, serve_forever

__all__ = ["StaticSite", "serve_forever"]
