"""The Storage port over the browser's `localStorage` / `sessionStorage`.

A thin wrapper: `getItem`/`setItem`/`removeItem` of the page's storage area,
with the browser's DOMExceptions turned into the port's errors
(`QuotaExceededError` -> `StorageQuotaExceeded`, `SecurityError` ->
`StorageSecurityError`, anything else -> `StorageError`) so chat memory
handles a full or read-only storage the same way on the host and in the page.

Reading `window.localStorage` can itself throw (sandboxed or third-party
iframes, storage disabled): `open_web_storage` then keeps the page working on
in-memory storage and calls `on_fallback` once with a short notice.

`js` is imported lazily, inside the functions that need the real page, so the
wrappers can be exercised on CPython with stand-in objects.
"""

import contextlib
from collections.abc import Callable
from typing import Any, Final, Literal

from ..chat.memory.storage import (
    FallbackNotice,
    ResilientStorage,
    StorageError,
    StorageQuotaExceeded,
    StorageSecurityError,
)

StorageKind = Literal["local", "session"]
StorageListener = Callable[[str | None, str | None], None]

PROBE_KEY: Final = "agentskit:storage-probe"
_AREA_ATTRIBUTES: Final = {"local": "localStorage", "session": "sessionStorage"}
# Firefox used its own name for a full storage before adopting the standard one.
_QUOTA_NAMES: Final = frozenset({"QuotaExceededError", "NS_ERROR_DOM_QUOTA_REACHED"})
_SECURITY_NAMES: Final = frozenset({"SecurityError"})


def _error_name(error: BaseException) -> str:
    """The JavaScript error name of a Pyodide `JsException` (or a stand-in)."""
    name = getattr(error, "name", None)
    if isinstance(name, str):
        return name
    text = str(error)
    return text.split(":", 1)[0].strip() if ":" in text else ""


def storage_error_from(error: BaseException) -> StorageError:
    """The port's error for an error thrown by a storage area call."""
    if isinstance(error, StorageError):
        return error
    name = _error_name(error)
    if name in _QUOTA_NAMES:
        return StorageQuotaExceeded(name)
    if name in _SECURITY_NAMES:
        return StorageSecurityError(name)
    return StorageError(name or "Error")


def _text_or_none(value: object) -> str | None:
    """JavaScript null (None or `jsnull`, depending on Pyodide settings) becomes None."""
    return value if isinstance(value, str) else None


class BrowserStorage:
    """The Storage port over one Web Storage area (a JsProxy of `localStorage`)."""

    def __init__(self, area: Any) -> None:
        self._area = area

    def get_item(self, key: str) -> str | None:
        try:
            value = self._area.getItem(key)
        except Exception as error:  # every JS error becomes a port error
            raise storage_error_from(error) from error
        return _text_or_none(value)

    def set_item(self, key: str, value: str) -> None:
        try:
            self._area.setItem(key, value)
        except Exception as error:
            raise storage_error_from(error) from error

    def remove_item(self, key: str) -> None:
        try:
            self._area.removeItem(key)
        except Exception as error:
            raise storage_error_from(error) from error


def _page_globals() -> Any:
    import js  # only available inside Pyodide

    return js


def _storage_area(scope: Any, kind: StorageKind) -> Any:
    """The storage area object; raises when the page may not use it."""
    area = getattr(scope, _AREA_ATTRIBUTES[kind], None)
    if area is None or not hasattr(area, "getItem"):
        raise StorageSecurityError("Web Storage is not available.")
    return area


def open_web_storage(
    kind: StorageKind = "local",
    on_fallback: FallbackNotice | None = None,
    *,
    scope: Any = None,
) -> ResilientStorage:
    """Open `localStorage` (default) or `sessionStorage` as a Storage port.

    The area is opened and probed with one read right away, so a page where
    reading storage throws switches to in-memory storage now and reports it
    once through `on_fallback`, instead of in the middle of the first load.
    `scope` stands in for the page's global object (tests).
    """
    if kind not in _AREA_ATTRIBUTES:
        raise ValueError("kind must be 'local' or 'session'.")

    def open_primary() -> BrowserStorage:
        area = _storage_area(_page_globals() if scope is None else scope, kind)
        port = BrowserStorage(area)
        port.get_item(PROBE_KEY)
        return port

    storage = ResilientStorage(open_primary, on_fallback)
    storage.get_item(PROBE_KEY)
    return storage


def watch_other_tabs(
    key: str,
    listener: StorageListener,
    kind: StorageKind = "local",
    *,
    scope: Any = None,
) -> Callable[[], None]:
    """Call `listener(event_key, incoming)` when another tab may have changed `key`.

    Two sources, matching `chat.storage_sync.decide_storage_sync`: the
    `storage` event (fired only in *other* tabs; `event_key` None means the
    whole area was cleared) and the page regaining focus or becoming visible,
    when the canonical key is simply re-read. Returns a function that removes
    the listeners. A listener that raises is contained.
    """
    from pyodide.ffi import create_proxy  # only available inside Pyodide

    page = _page_globals() if scope is None else scope

    def deliver(event_key: str | None, incoming: str | None) -> None:
        # A page callback must not break the event loop.
        with contextlib.suppress(Exception):
            listener(event_key, incoming)

    def on_storage(event: Any) -> None:
        event_key = _text_or_none(getattr(event, "key", None))
        if event_key is not None and event_key != key:
            return
        deliver(event_key, _text_or_none(getattr(event, "newValue", None)))

    def on_focus(_event: Any) -> None:
        if getattr(page.document, "visibilityState", "visible") != "visible":
            return
        try:
            incoming = _text_or_none(_storage_area(page, kind).getItem(key))
        except Exception:  # unreadable storage: nothing to pick up
            return
        deliver(key, incoming)

    storage_proxy = create_proxy(on_storage)
    focus_proxy = create_proxy(on_focus)
    page.addEventListener("storage", storage_proxy)
    page.addEventListener("focus", focus_proxy)
    page.document.addEventListener("visibilitychange", focus_proxy)

    def stop() -> None:
        page.removeEventListener("storage", storage_proxy)
        page.removeEventListener("focus", focus_proxy)
        page.document.removeEventListener("visibilitychange", focus_proxy)
        storage_proxy.destroy()
        focus_proxy.destroy()

    return stop
