"""Typed diagnostics and the small result objects every decoder returns.

Decoders never raise on untrusted input; they return a result with `ok` and
either the decoded value or a `Diagnostic`. A diagnostic carries only a code
from the spec, a fixed message and retryability: never a validator error tree
or any part of the rejected payload, so it is safe to log and to show.
"""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Diagnostic(Mapping[str, Any]):
    """A safe, typed failure: `code`, fixed `message`, `retryable`, optional `event_id`.

    It is also a read-only mapping of its wire form (camelCase `eventId`), so
    callers may use `diag.code` or `diag["code"]` alike.
    """

    code: str
    message: str
    retryable: bool = False
    event_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
        }
        if self.event_id is not None:
            wire["eventId"] = self.event_id
        return wire

    def __getitem__(self, key: str) -> Any:
        return self.to_wire()[key]

    def __eq__(self, other: object) -> bool:
        """Equal to another diagnostic, or to its wire dict (camelCase or snake_case)."""
        if isinstance(other, Diagnostic):
            return self.to_wire() == other.to_wire()
        if isinstance(other, Mapping):
            mine = self.to_wire()
            theirs = dict(other)
            if "event_id" in theirs:
                theirs["eventId"] = theirs.pop("event_id")
            return mine == theirs
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.code, self.message, self.retryable, self.event_id))

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_wire())

    def __len__(self) -> int:
        return len(self.to_wire())


class ProtocolError(ValueError):
    """Raised only to a host that passed invalid data to an encoder or validator."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.code, self.message)


@dataclass(frozen=True, slots=True)
class DecodeResult:
    """Outcome of one decode: `ok` with `value`, or not `ok` with `diagnostic`.

    Contract-specific aliases (`event`, `frame`, `snapshot`, `request`,
    `config`, `artifact`, `envelope`) name the same value so each API reads
    as the spec writes it.
    """

    ok: bool
    value: Any = None
    diagnostic: Diagnostic | None = None

    @classmethod
    def success(cls, value: Any) -> "DecodeResult":
        return cls(ok=True, value=value)

    @classmethod
    def failure(cls, diagnostic: Diagnostic) -> "DecodeResult":
        return cls(ok=False, diagnostic=diagnostic)

    @property
    def event(self) -> Any:
        return self.value

    @property
    def frame(self) -> Any:
        return self.value

    @property
    def snapshot(self) -> Any:
        return self.value

    @property
    def request(self) -> Any:
        return self.value

    @property
    def config(self) -> Any:
        return self.value

    @property
    def artifact(self) -> Any:
        return self.value

    @property
    def envelope(self) -> Any:
        return self.value


@dataclass(frozen=True, slots=True)
class ContentResult:
    """Outcome of `decode_assistant_content`: ordered wire `parts` and `complete`."""

    ok: bool
    parts: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = False
    diagnostic: Diagnostic | None = None


@dataclass(frozen=True, slots=True)
class AskDecodeResult:
    """Outcome of `decode_ask_events` on one buffer.

    `rest` is the unfinished trailing line to prepend to the next buffer;
    `discarded_partial` says an oversized partial was dropped, and the caller
    must skip input through the next newline.
    """

    events: list[dict[str, Any]] = field(default_factory=list)
    rest: str = ""
    discarded_partial: bool = False
    ok: bool = True
