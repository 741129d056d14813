"""Per-client token-bucket rate limiting (429 ASK_RATE_LIMITED with retry-after).

Each client key (the principal's `rate_key`) owns a bucket of `capacity`
tokens refilled at `refill_per_second`; a question costs one token. Buckets are
kept in LRU order and bounded to `max_clients`, so a flood of distinct
addresses cannot grow memory without limit (an evicted client simply starts
again with a full bucket).
"""

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

DEFAULT_CAPACITY: Final = 20
DEFAULT_REFILL_PER_SECOND: Final = 0.5
DEFAULT_MAX_CLIENTS: Final = 10_000


@dataclass(frozen=True, slots=True)
class RateDecision:
    """`allowed`, and when refused, whole seconds until one token is back (>= 1)."""

    allowed: bool
    retry_after_seconds: int = 0


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class TokenBucketLimiter:
    """Thread-safe token buckets keyed by client; `clock` is monotonic seconds."""

    def __init__(
        self,
        capacity: int = DEFAULT_CAPACITY,
        refill_per_second: float = DEFAULT_REFILL_PER_SECOND,
        *,
        max_clients: int = DEFAULT_MAX_CLIENTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity < 1 or refill_per_second <= 0 or max_clients < 1:
            raise ValueError("Rate limit needs capacity >= 1, refill > 0 and max_clients >= 1.")
        self.capacity = capacity
        self.refill_per_second = refill_per_second
        self.max_clients = max_clients
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str, cost: float = 1.0) -> RateDecision:
        """Spend `cost` tokens from `key`'s bucket if it has them."""
        now = self._clock()
        with self._lock:
            bucket = self._buckets.pop(key, None)
            if bucket is None:
                bucket = _Bucket(tokens=float(self.capacity), updated=now)
            elapsed = max(0.0, now - bucket.updated)
            bucket.tokens = min(
                float(self.capacity), bucket.tokens + elapsed * self.refill_per_second
            )
            bucket.updated = now
            self._buckets[key] = bucket
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
            if bucket.tokens >= cost:
                bucket.tokens -= cost
                return RateDecision(True)
            missing = cost - bucket.tokens
            return RateDecision(False, max(1, math.ceil(missing / self.refill_per_second)))

    def __len__(self) -> int:
        return len(self._buckets)
