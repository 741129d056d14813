"""The turn endpoint's cost bounds: one place for every limit a client can push against.

A turn runs detached from its response (a reader who closes the tab does not
lose the answer), so the Ask path's in-flight cap, which counts open
responses, does not bound it: "submit, read one line, disconnect" would start
turns without holding a slot. `RunningTurns` counts the turns themselves, per
client key (the rate limiter's key) and in total, from admission until the
turn's last save.

The byte bound on a session bounds every snapshot, and the snapshot clock
(`turn_runner._coalesce`) spreads `TURN_RESPONSE_MAX_BYTES` over the turn's
time bound, so one turn's response and memory are bounded whatever the session
holds and however fast the model streams.
"""

import collections
import itertools
import math
import threading
from dataclasses import dataclass
from typing import Final

from ..protocol.limits import ASK_REQUEST_MESSAGE_MAX_CHARS
from .ask_app import ASK_MAX_STREAMS_PER_CLIENT

TURN_INPUT_MAX_CHARS: Final = ASK_REQUEST_MESSAGE_MAX_CHARS
"""A submitted question, in JavaScript characters: the same bound as an Ask message."""
TURN_SESSION_MAX_BYTES: Final = 512 * 1024
"""A session's messages (UTF-8 JSON) a new turn may start from: past it, 413 SESSION_TOO_LARGE.

Checked with the new question in place, before anything is saved; the answer
then adds at most one bounded answer, so a stored session stays under this
plus one question and one answer, and so does every snapshot of it."""
TURN_RESPONSE_MAX_BYTES: Final = 16 * 1024 * 1024
"""One turn's response, all its lines, at most: the snapshot clock spreads it over the turn.

Split into the streaming budget (the first line and the streaming snapshots)
and the rest for the lines that end the turn (`TURN_STREAMING_SHARE`)."""
TURN_STREAMING_SHARE: Final = 0.75
"""The share of `TURN_RESPONSE_MAX_BYTES` the first line and streaming snapshots may use.

The rest (4 MiB) is kept for the final snapshot and a closing diagnostic. A
snapshot holds at most the session (`TURN_SESSION_MAX_BYTES`) and one answer
(262,144 bytes of ordered content, at most twice that once escaped again
inside the snapshot's JSON): about 1.1 MB, so 4 MiB holds the final snapshot,
an interrupted one and a diagnostic with room to spare."""
TURN_MAX_RUNNING_PER_CLIENT: Final = ASK_MAX_STREAMS_PER_CLIENT
"""Turns one client key may have running at once, attached to a response or not (429)."""
TURN_MAX_RUNNING_TOTAL: Final = 64
"""Turns the process runs at once, over all clients (503 with Retry-After past it)."""
TURN_BUSY_RETRY_AFTER_SECONDS: Final = 5
"""What a 503 for the global cap tells the client to wait."""
CAPABILITY_ID_MIN_CHARS: Final = 22
"""An anonymous session id is a capability: 22 random letters and digits carry 131 bits."""
CAPABILITY_ID_MIN_ESTIMATED_BITS: Final = 64
"""The id's characters, read as a sample, must show at least this much entropy.

The estimate is length x the Shannon entropy of the id's own character
frequencies. A random 22-character id from the 62-letter alphabet scores about
92 bits (the lowest of 200,000 drawn was 73); `aaaa...` scores 0 and `abab...` 22.
"""
CAPABILITY_ID_MAX_NEAR_PAIRS: Final = 0.5
"""At most this share of neighbouring characters may be equal or one code point apart.

Catches counting ids (`abcdefghijklmnopqrstuv` has a high frequency entropy);
a random id has about 5 % such pairs (the most in 200,000 draws was 8 of 21)."""


@dataclass(frozen=True, slots=True)
class RunningRefusal:
    """Why a turn was not admitted: the per-client cap (429) or the global one (503)."""

    status: int
    retry_after: int


class RunningTurns:
    """Counts running turns per client key and in total; `take` reserves, `release` frees."""

    def __init__(
        self,
        per_client: int = TURN_MAX_RUNNING_PER_CLIENT,
        total: int = TURN_MAX_RUNNING_TOTAL,
    ) -> None:
        if per_client < 1 or total < 1:
            raise ValueError("The running-turn caps must be at least 1.")
        self.per_client = per_client
        self.total = total
        self._by_client: dict[str, int] = {}
        self._running = 0
        self._lock = threading.Lock()

    def take(self, client: str) -> RunningRefusal | None:
        """Reserve one running turn for `client`, or say why not (nothing reserved then)."""
        with self._lock:
            mine = self._by_client.get(client, 0)
            if mine >= self.per_client:
                return RunningRefusal(429, 1)
            if self._running >= self.total:
                return RunningRefusal(503, TURN_BUSY_RETRY_AFTER_SECONDS)
            self._by_client[client] = mine + 1
            self._running += 1
            return None

    def release(self, client: str) -> None:
        with self._lock:
            left = self._by_client.get(client, 0) - 1
            if left > 0:
                self._by_client[client] = left
            else:
                self._by_client.pop(client, None)
            self._running = max(0, self._running - 1)

    def running(self, client: str | None = None) -> int:
        """Turns running now, for one client or in total (tests, monitoring)."""
        with self._lock:
            return self._running if client is None else self._by_client.get(client, 0)


def estimated_bits(identifier: str) -> float:
    """Length x the Shannon entropy of the id's own character frequencies, in bits."""
    size = len(identifier)
    if size == 0:
        return 0.0
    counts = collections.Counter(identifier).values()
    return -sum(n * math.log2(n / size) for n in counts)


def is_capability_id(identifier: str) -> bool:
    """Whether an id can stand for a random capability (anonymous session ids).

    Length alone let `aaaaaaaaaaaaaaaaaaaaaa` through: an id guessed by anyone
    who tries the obvious. The checks are cheap statistics that every random id
    passes and the obvious made-up ones fail; they cannot prove randomness.
    """
    if len(identifier) < CAPABILITY_ID_MIN_CHARS:
        return False
    if estimated_bits(identifier) < CAPABILITY_ID_MIN_ESTIMATED_BITS:
        return False
    pairs = len(identifier) - 1
    near = sum(1 for a, b in itertools.pairwise(identifier) if abs(ord(a) - ord(b)) <= 1)
    return near <= pairs * CAPABILITY_ID_MAX_NEAR_PAIRS


__all__ = [
    "CAPABILITY_ID_MAX_NEAR_PAIRS",
    "CAPABILITY_ID_MIN_CHARS",
    "CAPABILITY_ID_MIN_ESTIMATED_BITS",
    "TURN_BUSY_RETRY_AFTER_SECONDS",
    "TURN_INPUT_MAX_CHARS",
    "TURN_MAX_RUNNING_PER_CLIENT",
    "TURN_MAX_RUNNING_TOTAL",
    "TURN_RESPONSE_MAX_BYTES",
    "TURN_SESSION_MAX_BYTES",
    "TURN_STREAMING_SHARE",
    "RunningRefusal",
    "RunningTurns",
    "estimated_bits",
    "is_capability_id",
]
