"""An adapter whose answers come from a Python function on the page, not from a server.

A PyScript page (or any page running Python) defines

    def answer(question: str, history: list[dict[str, str]]) -> str | Iterable[str]: ...

(or an `async def` returning text, or an async generator of text) and passes
it to `create_function_adapter(answer)`. Every question calls it once; what it
returns or yields goes through the same path as an Ask service's answer:
each string is text (split into records of at most 16,384 chars), encoded
as ordered assistant content (PROTOCOL.md section 2) by the same bounded
encoder the Ask body reader uses, so the widget renders it exactly as it
renders a server's answer (markdown, never HTML).

A page function is as untrusted as a server's body: it may raise, return a
number, yield bytes or return a 10 MB string. Each gets one error chunk with
a fixed message (the constants below) after whatever already streamed, and
nothing is raised out of the source. The bounds are the content bounds of
one message (`ASSISTANT_CONTENT_MAX_RECORDS` records, `ASSISTANT_CONTENT_MAX_BYTES`
UTF-8 bytes): one yielded string is one text event of a server, so a
generator that yields 513 pieces breaks the record bound as a server that
sends 513 deltas does. A string is cut to one char past the byte bound before
it is split, so a huge string costs no more than the bound.

The function receives the question (the last user message) and the earlier
turns as plain `{"role", "content"}` dicts (user and assistant only, the last
`ASK_REQUEST_MAX_MESSAGES`, each cut to `ASK_REQUEST_MESSAGE_MAX_CHARS`, the
same projection an Ask request sends), as fresh copies it may keep or change.

A synchronous function runs on the page's thread: between the pieces of a
sync iterable the source yields to the event loop so the widget can draw
them, but a function that computes for seconds blocks the page for that long
(use `async def` and `await` to stay responsive).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Final

from ..protocol.diagnostics import ProtocolError
from ..protocol.limits import (
    ASK_REQUEST_MAX_MESSAGES,
    ASK_REQUEST_MESSAGE_MAX_CHARS,
    ASSISTANT_CONTENT_MAX_BYTES,
    ASSISTANT_CONTENT_TEXT_MAX_CHARS,
)
from ..protocol.text_metrics import js_slice, split_text
from .ask.body import BoundedContentEncoder, ContentLimitExceeded
from .ask.projection import project_ask_messages
from .once_source import OnceSource, StreamChunk

PageAnswer = Callable[[str, list[dict[str, str]]], Any]
"""`answer(question, history)` -> str, an (async) iterable of str, or an awaitable of those."""

RAISED_MESSAGE: Final = "Page answer failed: the answer function raised {name}."
WRONG_RESULT_MESSAGE: Final = (
    "Page answer failed: the answer function returned {name}, not text or an iterable of text."
)
WRONG_PIECE_MESSAGE: Final = "Page answer failed: the answer function yielded {name}, not text."
UNENCODABLE_MESSAGE: Final = (
    "Page answer failed: the answer function yielded text that cannot be sent."
)
NO_QUESTION_MESSAGE: Final = "Page answer failed: there is no question to answer."
REUSED_MESSAGE: Final = "Page answer source was already streamed."
PIECE_MAX_CHARS: Final = ASSISTANT_CONTENT_MAX_BYTES + 1
"""A string longer than this cannot fit (a char is at least one UTF-8 byte): only this much of
it is split and encoded, enough to fill the bound and break it by one."""

_NOT_ITERABLE_RESULTS: Final = (bytes, bytearray, memoryview, dict)
"""Iterable, but never an iterable of text a function meant to return."""

_log = logging.getLogger(__name__)


class _Failure(Exception):
    """Ends a stream with one error chunk carrying `message`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _type_name(value: object) -> str:
    return type(value).__name__


def question_and_history(messages: Sequence[object]) -> tuple[str, list[dict[str, str]]] | None:
    """The last user message and the turns before it, bounded like an Ask request; None if the
    conversation does not end with a user message."""
    projected = project_ask_messages(messages)[-ASK_REQUEST_MAX_MESSAGES:]
    if not projected or projected[-1]["role"] != "user":
        return None
    bounded = [
        {"role": item["role"], "content": js_slice(item["content"], ASK_REQUEST_MESSAGE_MAX_CHARS)}
        for item in projected
    ]
    return bounded[-1]["content"], bounded[:-1]


class FunctionSource(OnceSource):
    """One answer from the page function: iterate it (once) for chunks; `abort()` stops it."""

    reused_message = REUSED_MESSAGE
    failure: None = None
    """No HTTP failure to report (the widget reads this attribute of every source)."""

    def __init__(self, answer: PageAnswer, messages: Sequence[object]) -> None:
        super().__init__()
        self._answer = answer
        self._messages = messages

    async def _stream_once(self) -> AsyncGenerator[StreamChunk, None]:
        encoder = BoundedContentEncoder()
        pieces = self._pieces()
        try:
            async for piece in pieces:
                limit: str | None = None
                try:
                    contents = _encoded(encoder, piece)
                except _LimitAfter as hit:
                    contents, limit = hit.emitted, hit.message
                for content in contents:
                    yield {"type": "text", "content": content}
                if limit is not None:
                    raise _Failure(limit)
        except _Failure as failure:
            if not self.aborted:
                yield {"type": "error", "content": failure.message}
            return
        finally:
            await pieces.aclose()
        if not self.aborted:
            yield {"type": "done"}

    async def _pieces(self) -> AsyncGenerator[str, None]:
        """The function's strings in order; raises _Failure for anything else."""
        asked = question_and_history(self._messages)
        if asked is None:
            raise _Failure(NO_QUESTION_MESSAGE)
        question, history = asked
        result = await self._guarded_call(lambda: self._answer(question, history))
        if isinstance(result, str):
            yield _checked(result)
        elif hasattr(result, "__aiter__"):
            async for piece in self._async_pieces(result):
                yield piece
        elif hasattr(result, "__iter__") and not isinstance(result, _NOT_ITERABLE_RESULTS):
            async for piece in self._sync_pieces(result):
                yield piece
        else:
            raise _Failure(WRONG_RESULT_MESSAGE.format(name=_type_name(result)))

    async def _guarded_call(self, call: Callable[[], Any]) -> Any:
        try:
            result = call()
            if inspect.isawaitable(result):
                result = await self._guarded(result)
        except (_Failure, asyncio.CancelledError):
            raise
        except Exception as error:
            raise _raised(error) from None
        return result

    async def _guarded(self, work: Any) -> Any:
        """Await `work` as a task `abort()` can cancel; after an abort, ends the stream."""
        task = asyncio.ensure_future(work)
        self._pending = task
        try:
            return await task
        except asyncio.CancelledError:
            if self.aborted and not _being_cancelled():
                raise _Failure("") from None
            task.cancel()
            raise
        finally:
            self._pending = None

    async def _async_pieces(self, result: Any) -> AsyncGenerator[str, None]:
        iterator: AsyncIterator[Any] = result.__aiter__()
        try:
            while not self.aborted:
                try:
                    piece = await self._guarded(_anext(iterator))
                except StopAsyncIteration:
                    return
                except (_Failure, asyncio.CancelledError):
                    raise
                except Exception as error:
                    raise _raised(error) from None
                yield _checked(piece)
        finally:
            await _aclose(iterator)

    async def _sync_pieces(self, result: Any) -> AsyncGenerator[str, None]:
        try:
            iterator: Iterator[Any] = iter(result)
        except Exception as error:
            raise _raised(error) from None
        try:
            while not self.aborted:
                try:
                    piece = next(iterator)
                except StopIteration:
                    return
                except Exception as error:
                    raise _raised(error) from None
                yield _checked(piece)
                await asyncio.sleep(0)  # let the widget draw what came
        finally:
            close = getattr(iterator, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:  # a generator that misbehaves while closing: nothing to keep
                    _log.warning("page answer function failed while closing", exc_info=True)


def _checked(piece: object) -> str:
    if not isinstance(piece, str):
        raise _Failure(WRONG_PIECE_MESSAGE.format(name=_type_name(piece)))
    return piece


def _raised(error: BaseException) -> _Failure:
    """The error chunk for an exception of the page function (its traceback goes to the log)."""
    _log.warning("page answer function raised", exc_info=error)
    return _Failure(RAISED_MESSAGE.format(name=_type_name(error)))


def _encoded(encoder: BoundedContentEncoder, piece: str) -> list[str]:
    """`piece` as encoded records; raises _Failure at the content bound (what fitted is kept:
    the caller has not yielded it yet, so records before the bound are returned first)."""
    if not piece:
        return []
    out: list[str] = []
    for text in split_text(piece[:PIECE_MAX_CHARS], ASSISTANT_CONTENT_TEXT_MAX_CHARS):
        try:
            out.append(encoder.encode({"kind": "text", "text": text}))
        except ContentLimitExceeded as exceeded:
            raise _LimitAfter(out, exceeded.message) from None
        except ProtocolError:  # no str is refused today (lone surrogates are escaped): kept so
            raise _LimitAfter(out, UNENCODABLE_MESSAGE) from None  # the source never raises
    return out


class _LimitAfter(_Failure):
    """A bound was hit after `emitted` records of the same piece were encoded."""

    def __init__(self, emitted: list[str], message: str) -> None:
        super().__init__(message)
        self.emitted = emitted


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _anext(iterator: AsyncIterator[Any]) -> Any:
    return await iterator.__anext__()


async def _aclose(iterator: AsyncIterator[Any]) -> None:
    aclose = getattr(iterator, "aclose", None)
    if aclose is None:
        return
    try:
        await aclose()
    except Exception:  # already broken or running elsewhere: nothing to free
        _log.warning("page answer function failed while closing", exc_info=True)


class FunctionAdapter:
    """The page function as an adapter: every question gets its own `FunctionSource`."""

    capabilities: Final = {"streaming": True, "structuredOutput": False, "local": True}
    """`local`: answers without the network, so the widget asks it even when offline."""

    def __init__(self, answer: PageAnswer) -> None:
        self.answer = answer

    def create_source(
        self, messages: Sequence[object], session_id: str | None = None, escalation: object = None
    ) -> FunctionSource:
        """A source streaming the function's answer to the last question of `messages`.

        `session_id` and `escalation` are accepted for the adapter port and not used.
        """
        return FunctionSource(self.answer, messages)

    send = create_source


def create_function_adapter(answer: PageAnswer) -> FunctionAdapter:
    """An adapter answering from `answer(question, history)` (see the module doc).

    Raises ValueError when `answer` is not callable (a host error, found at definition time).
    """
    if not callable(answer):
        raise ValueError("answer must be a function answer(question, history)")
    return FunctionAdapter(answer)
