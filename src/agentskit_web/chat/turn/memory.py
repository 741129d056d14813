"""Chat memory for the turn protocol: the server is the source of truth, Web Storage a cache.

`TurnMemory(adapter, cache, session_key)` is what a widget with
`protocol="turn"` uses as its definition's memory:

- `load()` reads the session id saved under `session_key` (the cache's
  storage), continues that session in the adapter and restores the
  conversation from the server's latest snapshot (`GET <endpoint>/<id>`,
  one attempt, no reconnect loop). When there is no saved id, or the server
  cannot be reached or no longer knows the session, the cache is loaded
  instead (offline), with its legacy keys migrated as before.
- `save(messages)` writes the cache and the session id.
- `clear()` clears the cache, forgets the id and starts a new session.
"""

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ...protocol.identifiers import is_safe_id
from ..memory.storage import Storage
from .adapter import TurnAdapter


class CacheMemory(Protocol):
    async def load(self) -> list[dict[str, Any]]: ...

    async def save(self, messages: Sequence[Mapping[str, Any]]) -> None: ...

    async def clear(self) -> None: ...

    def storage(self) -> Storage | None: ...


class TurnMemory:
    """See the module doc."""

    def __init__(self, adapter: TurnAdapter, cache: CacheMemory, session_key: str) -> None:
        self.adapter = adapter
        self.cache = cache
        self.session_key = session_key
        self.restored_from_server = False

    def _saved_session(self) -> str | None:
        storage = self.cache.storage()
        if storage is None:
            return None
        try:
            value = storage.get_item(self.session_key)
        except Exception:  # unreadable storage: no saved session
            return None
        return value if isinstance(value, str) and is_safe_id(value) else None

    def _remember_session(self) -> None:
        storage = self.cache.storage()
        if storage is None:
            return
        with contextlib.suppress(Exception):  # the cache is best effort
            if storage.get_item(self.session_key) != self.adapter.session.id:
                storage.set_item(self.session_key, self.adapter.session.id)

    async def _from_server(self) -> list[dict[str, Any]] | None:
        stream = self.adapter.session.resume(attempts=0)
        latest = None
        async for update in stream:
            if update.kind == "snapshot":
                latest = update.snapshot
            elif update.kind in ("error", "diagnostic"):
                break
        if latest is None:
            return None
        return [message.to_wire() for message in latest.payload.messages]

    async def load(self) -> list[dict[str, Any]]:
        self.restored_from_server = False
        saved = self._saved_session()
        if saved is not None:
            self.adapter.use_session(saved)
            try:
                messages = await self._from_server()
            except Exception:  # offline or refused: the cache answers
                messages = None
            if messages is not None:
                self.restored_from_server = True
                with contextlib.suppress(Exception):
                    await self.cache.save(messages)
                return messages
        return await self.cache.load()

    async def save(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self._remember_session()
        await self.cache.save(messages)

    async def clear(self) -> None:
        self.adapter.new_session()
        storage = self.cache.storage()
        if storage is not None:
            with contextlib.suppress(Exception):
                storage.remove_item(self.session_key)
        await self.cache.clear()
