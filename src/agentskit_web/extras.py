"""Which optional extra each command needs, and the one line that says so when it is missing.

The core package (the wire contracts, the widget's Python, the MkDocs plugin and
the Sphinx extension when a release's prebuilt assets are installed) needs only
pydantic and markdown-it-py. Everything else is an extra, so a docs project that
pins its own generator never gets ours forced on it. A command that finds an
extra missing stops before doing any work with one line naming the extra to
install: an owner who typed `agentskit-web serve-ask` or `mkdocs build` should
not have to read a traceback, nor wait 20 s for a build that fails at the end.

Modules are looked up with `importlib.util.find_spec` (nothing is imported), in
the order listed, so the line names the first one missing.
"""

from __future__ import annotations

import importlib.util
from typing import Final

PACKAGE: Final = "agentskit-web"
EXTRA_MODULES: Final[dict[str, tuple[str, ...]]] = {
    "server": ("starlette", "uvicorn", "httpx", "prometheus_client"),
    "scale": ("redis",),
    "postgres": ("psycopg", "psycopg_pool"),
    "build": ("packaging", "brotli"),
    # The plugins write the site's search index with .br copies (build/static_index.py).
    "mkdocs": ("mkdocs", "brotli"),
    "sphinx": ("sphinx", "brotli"),
    "testing": ("pytest", "playwright", "pytest_playwright", "starlette", "uvicorn", "httpx"),
    # `agentskit-web eval` reads YAML and asks a running backend; `report --html` draws SVG.
    "insight": ("yaml", "httpx", "pygal"),
}
"""Import names each extra provides (tests/test_extras.py checks them against pyproject.toml)."""
COMMAND_EXTRAS: Final[dict[str, tuple[str, ...]]] = {
    "serve-ask": ("server",),
    "ask": ("server",),
    "turn": ("server",),
    "serve": ("server",),
    "preview": ("server",),
    "demo": ("server", "build"),
    "build": ("build",),
    "assets": ("build",),
    "publish": ("build",),
    "check": ("testing",),
    "bench": ("testing", "build"),
    "eval": ("server", "insight"),
    "report": ("insight",),
}
"""What each `agentskit-web` command needs beyond the core package."""


class MissingExtra(Exception):
    """An optional dependency is not installed; `str()` is the one line to show."""

    def __init__(self, what: str, extra: str, module: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(
            f"{what} needs the [{extra}] extra (no module named {module!r}): "
            f"pip install '{PACKAGE}[{extra}]'"
        )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import, or a None in sys.modules
        return False


def missing_module(extra: str) -> str | None:
    """The first module of `extra` that is not installed, or None when all are."""
    return next((m for m in EXTRA_MODULES[extra] if not _installed(m)), None)


def require(what: str, *extras: str) -> None:
    """Raise MissingExtra naming the first extra of `extras` that is not fully installed."""
    for extra in extras:
        module = missing_module(extra)
        if module is not None:
            raise MissingExtra(what, extra, module)


def require_for_command(command: str) -> None:
    """`require` for one `agentskit-web` command (a command with no extra needs nothing)."""
    require(f"agentskit-web {command}", *COMMAND_EXTRAS.get(command, ()))
