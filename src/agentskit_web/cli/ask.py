"""`agentskit-web ask URL "question"`: stream one Ask answer to the terminal.

The answer's text is written as it arrives; the sources (and any other
component, by its semantic fallback) are listed after it. Uses the same
adapter as the page, over the httpx transport. Exit codes: 0 done, 1 error
chunk, 2 bad usage, 130 interrupted.
"""

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from ..chat.ask.adapter import create_ask_adapter
from ..protocol.limits import ASK_CONNECT_DEADLINE_SECONDS
from ..transports.httpx_transport import HttpxTransport
from .output import AnswerPrinter, endpoint_argument_error, terminal_safe

__all__ = ["ask", "main", "terminal_safe"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentskit-web ask", description="Ask an Ask service one question."
    )
    parser.add_argument("url", help="Ask endpoint, an absolute http(s) URL")
    parser.add_argument("question", help="the question to ask")
    parser.add_argument("--corpus", help="corpus hint (query parameter)")
    parser.add_argument("--persona", help="persona hint (query parameter)")
    parser.add_argument("--session", help="session id (a SafeId) to send")
    parser.add_argument(
        "--timeout",
        type=float,
        default=ASK_CONNECT_DEADLINE_SECONDS,
        help="seconds allowed to connect and receive headers (default %(default)s)",
    )
    return parser


async def ask(arguments: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Stream the answer; returns the exit code."""
    adapter = create_ask_adapter(
        endpoint=arguments.url,
        corpus=arguments.corpus,
        persona=arguments.persona,
        transport=HttpxTransport(),
        connect_timeout=arguments.timeout,
    )
    source = adapter.create_source(
        [{"role": "user", "content": arguments.question}], session_id=arguments.session
    )
    printer = AnswerPrinter(out)
    status = 0
    stream = source.stream()
    try:
        async for chunk in stream:
            if chunk["type"] == "text":
                printer.chunk(chunk["content"])
            elif chunk["type"] == "error":
                status = 1
                printer.close()
                err.write(terminal_safe(f"error: {_error_line(chunk, source)}") + "\n")
                return status
    except asyncio.CancelledError:
        source.abort()
        raise
    finally:
        await stream.aclose()
    printer.close()
    return status


def _error_line(chunk: Mapping[str, object], source: object) -> str:
    """The error chunk's text, with the server's own message and code when it sent one
    (`{"error": {code, message}}`, validated by chat/ask/failure.py): `Ask request failed
    (422): The question is empty. [ASK_BAD_REQUEST]`."""
    text = str(chunk.get("content", ""))
    failure = getattr(source, "failure", None)
    envelope = getattr(failure, "envelope", None)
    if envelope is None:
        return text
    return f"{text.rstrip('.')}: {envelope.message} [{envelope.code}]"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: `agentskit-web ask URL "question" [--corpus C] [--persona P] [--timeout S]`."""
    arguments = _parser().parse_args(argv)
    usage_error = endpoint_argument_error(arguments.url, arguments.timeout)
    if usage_error is not None:
        sys.stderr.write(f"error: {usage_error}\n")
        return 2
    try:
        return asyncio.run(ask(arguments, sys.stdout, sys.stderr))
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
