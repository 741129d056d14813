"""The Storage port that chat memory writes through, and an in-process implementation.

The port is the `getItem`/`setItem`/`removeItem` part of the browser's Web
Storage (`localStorage`/`sessionStorage`), in Python spelling. Memory code
only ever talks to this port, so the same load/save/clear paths run on CPython
(with `MemoryStorage`) and in the page (with the browser port in
`agentskit_web.browser.web_storage`).

Browsers fail in three ways that matter here, and the port names each one:
`StorageQuotaExceeded` (the origin's quota is full: `setItem` throws and the
old value stays), `StorageSecurityError` (storage is disabled, sandboxed or
made read-only: any call may throw) and plain `StorageError` for the rest.
`MemoryStorage` can produce all of them on demand, so the failure paths are
tested on the host exactly as they happen in Chromium.

`ResilientStorage` keeps a page working when even *reading* storage throws
(sandboxed or third-party iframes): it moves to an in-memory store for the rest
of the page's life and reports that once.
"""

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Final, Protocol, runtime_checkable

from ...protocol.text_metrics import js_length

UTF16_UNIT_BYTES: Final = 2
"""Bytes per UTF-16 code unit when `MemoryStorage` counts usage against its quota."""


class StorageError(Exception):
    """A storage call failed. `name` mirrors the browser's DOMException name."""

    name: str = "Error"


class StorageQuotaExceeded(StorageError):
    """`set_item` would exceed the storage quota; the previous value is unchanged."""

    name = "QuotaExceededError"


class StorageSecurityError(StorageError):
    """Storage is disabled, sandboxed or read-only for this page."""

    name = "SecurityError"


@runtime_checkable
class Storage(Protocol):
    """The Web Storage subset chat memory needs.

    `get_item` returns None for a missing key. `set_item` and `remove_item`
    may raise `StorageError` (quota, security); any call may raise when the
    storage is unavailable. Implementations must leave the stored value
    unchanged when `set_item` raises.
    """

    def get_item(self, key: str) -> str | None: ...

    def set_item(self, key: str, value: str) -> None: ...

    def remove_item(self, key: str) -> None: ...


def storage_entry_bytes(key: str, value: str) -> int:
    """Quota cost of one entry: 2 bytes per UTF-16 code unit of key and value.

    Browsers store Web Storage strings as UTF-16 and Chromium charges key plus
    value against the origin's quota; counting the same way means a quota
    test on the host fails at the same content the browser would refuse.
    """
    return UTF16_UNIT_BYTES * (js_length(key) + js_length(value))


class MemoryStorage:
    """An in-process Storage with an optional quota, read-only mode and read failures.

    - `quota_bytes`: total budget counted by `storage_entry_bytes`; a
      `set_item` past it raises `StorageQuotaExceeded` and changes nothing.
    - `read_only`: `set_item` and `remove_item` raise `StorageSecurityError`
      (what a page sees when `setItem`/`removeItem` are patched to throw).
    - `fail_reads`: `get_item` raises `StorageSecurityError` (sandboxed iframe).

    The three switches are plain attributes, so a test can flip them after
    seeding data. `initial` seeds entries without any quota or mode check.
    """

    def __init__(
        self,
        quota_bytes: int | None = None,
        read_only: bool = False,
        *,
        fail_reads: bool = False,
        initial: Mapping[str, str] | None = None,
    ) -> None:
        if quota_bytes is not None and (isinstance(quota_bytes, bool) or quota_bytes < 0):
            raise ValueError("quota_bytes must be a non-negative integer or None.")
        self.quota_bytes = quota_bytes
        self.read_only = read_only
        self.fail_reads = fail_reads
        self._items: dict[str, str] = dict(initial or {})
        self._used = sum(storage_entry_bytes(k, v) for k, v in self._items.items())

    # -- the port -------------------------------------------------------------

    def get_item(self, key: str) -> str | None:
        """The stored string, or None when the key is absent."""
        if self.fail_reads:
            raise StorageSecurityError("The operation is insecure.")
        return self._items.get(key)

    def set_item(self, key: str, value: str) -> None:
        """Store `value`; raise and change nothing when read-only or over quota."""
        if self.read_only:
            raise StorageSecurityError("The operation is insecure.")
        key, value = str(key), str(value)
        previous = self._items.get(key)
        if previous == value:
            return
        released = 0 if previous is None else storage_entry_bytes(key, previous)
        needed = self._used - released + storage_entry_bytes(key, value)
        if self.quota_bytes is not None and needed > self.quota_bytes:
            raise StorageQuotaExceeded(f"Setting the value of '{key}' exceeded the quota.")
        self._items[key] = value
        self._used = needed

    def remove_item(self, key: str) -> None:
        """Delete `key` (absent keys are fine); raise when read-only."""
        if self.read_only:
            raise StorageSecurityError("The operation is insecure.")
        previous = self._items.pop(key, None)
        if previous is not None:
            self._used -= storage_entry_bytes(key, previous)

    # -- inspection for tests and tools --------------------------------------

    @property
    def used_bytes(self) -> int:
        """Bytes currently counted against the quota."""
        return self._used

    def snapshot(self) -> dict[str, str]:
        """A copy of every stored entry (bypasses `fail_reads`)."""
        return dict(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def __contains__(self, key: object) -> bool:
        return key in self._items


FallbackNotice = Callable[[str], None]

FALLBACK_MESSAGE: Final = (
    "Browser storage is unavailable here; this conversation is kept only until the page closes."
)


class ResilientStorage:
    """A Storage that survives a primary whose *reads* throw.

    `open_primary` is called lazily (reading `window.localStorage` itself can
    throw in a sandboxed iframe). If opening it or any `get_item` on it raises,
    this object switches, for good, to a fresh `MemoryStorage` and calls
    `on_fallback` exactly once with a short user-facing notice. Write errors
    (quota, read-only) are *not* a reason to switch: they propagate, so memory
    keeps the last good stored copy and reports the failed save.
    """

    def __init__(
        self,
        open_primary: Callable[[], Storage],
        on_fallback: FallbackNotice | None = None,
    ) -> None:
        self._open_primary = open_primary
        self._on_fallback = on_fallback
        self._primary: Storage | None = None
        self._fallback: MemoryStorage | None = None

    @property
    def is_fallback(self) -> bool:
        """True once the page runs on in-memory storage."""
        return self._fallback is not None

    def _fall_back(self) -> MemoryStorage:
        if self._fallback is None:
            self._fallback = MemoryStorage()
            self._primary = None
            if self._on_fallback is not None:
                # A notice must never break storage.
                with contextlib.suppress(Exception):
                    self._on_fallback(FALLBACK_MESSAGE)
        return self._fallback

    def _active(self) -> Storage:
        if self._fallback is not None:
            return self._fallback
        if self._primary is None:
            try:
                self._primary = self._open_primary()
            except Exception:  # any failure to reach storage means fall back
                return self._fall_back()
        return self._primary

    def get_item(self, key: str) -> str | None:
        """Read from the primary; on any read failure continue in memory."""
        active = self._active()
        if active is self._fallback:
            return active.get_item(key)
        try:
            return active.get_item(key)
        except Exception:  # reading must never fail the page
            return self._fall_back().get_item(key)

    def set_item(self, key: str, value: str) -> None:
        """Write through; quota and read-only errors propagate to the caller."""
        self._active().set_item(key, value)

    def remove_item(self, key: str) -> None:
        """Remove through; errors propagate to the caller."""
        self._active().remove_item(key)
