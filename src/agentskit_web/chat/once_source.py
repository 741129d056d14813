"""The skeleton every answer source shares: streamed once, stopped by `abort()`.

A conversation asks an adapter for a source per answer and reads it exactly
once; `abort()` (the reader pressed Stop, or the widget went away) must end the
iteration quietly, without an error chunk, whatever the source was awaiting.
The backend's stream, the static index, the page function and the fallback
between the first two all need that same contract, so it is written once here
and each source supplies only `_stream_once()` (its chunks) and, if stopping
must release something more than the awaited future, `_on_abort()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any, ClassVar

StreamChunk = dict[str, str]
"""One chunk of an answer: `type` (text, error, done, ...) and its `content`."""


class OnceSource:
    """One answer: iterate it once for chunks; `abort()` stops it without an error chunk."""

    reused_message: ClassVar[str] = "Answer source was already streamed."
    """The error a second iteration yields (a source is never replayed)."""

    def __init__(self) -> None:
        self._pending: asyncio.Future[Any] | None = None
        self._started = False
        self.aborted = False

    def __aiter__(self) -> AsyncGenerator[StreamChunk, None]:
        return self.stream()

    def abort(self) -> None:
        """Stop now: the awaited piece (if any) is cancelled; the iterator ends quietly."""
        if self.aborted:
            return
        self.aborted = True
        if self._pending is not None and not self._pending.done():
            self._pending.cancel()
        self._on_abort()

    def _on_abort(self) -> None:
        """What a source releases beyond the awaited piece when stopped (default: nothing)."""

    async def stream(self) -> AsyncGenerator[StreamChunk, None]:
        """The chunks of this answer; never raises (except the consumer's own cancellation)."""
        if self._started:
            yield {"type": "error", "content": self.reused_message}
            return
        self._started = True
        chunks = self._stream_once()
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await chunks.aclose()

    def _stream_once(self) -> AsyncGenerator[StreamChunk, None]:
        """The source's own chunks, from its first and only iteration."""
        raise NotImplementedError


__all__ = ["OnceSource", "StreamChunk"]
