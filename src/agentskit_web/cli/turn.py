"""`agentskit-web turn URL "question"`: stream one turn of the turn protocol to the terminal.

The answer's text is written as snapshots arrive (only what each snapshot
added), then its sources; `--session` continues a session, `--resume` only
fetches (and follows) a session's latest state, `--lineage` asks for retry,
regenerate or edit. The session id is printed to stderr so a second call can
continue it. Uses the same adapter as the page, over httpx. Exit codes: 0
complete, 1 error or diagnostic, 2 bad usage, 130 interrupted.
"""

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from ..chat.turn.adapter import TurnStream, TurnUpdate, create_turn_adapter
from ..protocol.content import ASSISTANT_CONTENT_PREFIX
from ..protocol.identifiers import is_safe_id
from ..protocol.limits import ASK_CONNECT_DEADLINE_SECONDS
from ..transports.httpx_transport import HttpxTransport
from .output import AnswerPrinter, endpoint_argument_error, terminal_safe


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentskit-web turn",
        description="Stream one turn of agentskit.chat.turn v1 from a turn endpoint.",
    )
    parser.add_argument("url", help="turn endpoint, an absolute http(s) URL (e.g. .../api/turn)")
    parser.add_argument("question", nargs="?", default="", help="the question (not with --resume)")
    parser.add_argument("--session", help="continue this session id (default: a new one)")
    parser.add_argument("--resume", action="store_true", help="only fetch the session's state")
    parser.add_argument("--token", help="bearer token sent as Authorization")
    parser.add_argument(
        "--lineage",
        nargs=3,
        metavar=("OPERATION", "PARENT_TURN", "SOURCE_MESSAGE"),
        help="retry|regenerate|edit, the parent turn id and the source message id",
    )
    parser.add_argument("--json", action="store_true", help="print each accepted event as JSON")
    parser.add_argument(
        "--timeout",
        type=float,
        default=ASK_CONNECT_DEADLINE_SECONDS,
        help="seconds allowed to connect and receive headers (default %(default)s)",
    )
    return parser


class _SnapshotPrinter(AnswerPrinter):
    """Prints what each snapshot added to the answer (snapshots carry all of it)."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self.shown = ""
        self.turn: str | None = None

    def snapshot(self, update: TurnUpdate) -> None:
        snapshot = update.snapshot
        if snapshot is None or not snapshot.payload.messages:
            return
        last = snapshot.payload.messages[-1]
        if last.role != "assistant":
            return
        if snapshot.turn_id != self.turn:
            self.turn, self.shown = snapshot.turn_id, ""
        content = last.content
        if not content.startswith(self.shown):
            self.shown = ""
            self.out.write("\n")
        added = content[len(self.shown) :]
        self.shown = content
        self.chunk(ASSISTANT_CONTENT_PREFIX + added.removeprefix(ASSISTANT_CONTENT_PREFIX))


async def turn(arguments: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the turn; returns the exit code."""
    headers = {"authorization": f"Bearer {arguments.token}"} if arguments.token else {}
    adapter = create_turn_adapter(
        endpoint=arguments.url,
        transport=HttpxTransport(),
        connect_timeout=arguments.timeout,
        headers=headers,
        session_id=arguments.session,
    )
    session = adapter.session
    err.write(f"session: {session.id}\n")
    lineage = None
    if arguments.lineage:
        operation, parent, source = arguments.lineage
        lineage = {"operation": operation, "parentTurnId": parent, "sourceMessageId": source}
    stream: TurnStream = (
        session.resume() if arguments.resume else session.submit(arguments.question, lineage)
    )
    printer = _SnapshotPrinter(out)
    status = 0
    try:
        async for update in stream:
            if arguments.json and update.snapshot is not None:
                out.write(update.snapshot.model_dump_json(by_alias=True) + "\n")
                continue
            if update.kind == "snapshot":
                printer.snapshot(update)
                snapshot = update.snapshot
                if snapshot is not None and snapshot.payload.status == "error":
                    error = snapshot.payload.error
                    message = error.message if error else "The chat turn failed."
                    err.write(terminal_safe(f"\nerror: {message}") + "\n")
                    status = 1
            elif update.kind == "reconnecting":
                err.write("\n[reconnecting]\n")
            elif update.kind == "resumed":
                err.write("[resumed]\n")
            else:
                code = f"{update.code}: " if update.code else ""
                err.write(terminal_safe(f"error: {code}{update.message or ''}") + "\n")
                status = 1
    except asyncio.CancelledError:
        stream.abort()
        raise
    if not arguments.json:
        printer.close()
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: `agentskit-web turn URL "question" [--session ID] [--resume] [--lineage]`."""
    arguments = _parser().parse_intermixed_args(argv)
    usage_error = endpoint_argument_error(arguments.url, arguments.timeout)
    if usage_error is not None:
        sys.stderr.write(f"error: {usage_error}\n")
        return 2
    if arguments.session is not None and not is_safe_id(arguments.session):
        sys.stderr.write("error: --session must be a session id (letters, digits, ._:-)\n")
        return 2
    if arguments.resume and arguments.session is None:
        sys.stderr.write("error: --resume needs --session\n")
        return 2
    if not arguments.resume and not arguments.question.strip():
        sys.stderr.write("error: a question is required\n")
        return 2
    try:
        return asyncio.run(turn(arguments, sys.stdout, sys.stderr))
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
