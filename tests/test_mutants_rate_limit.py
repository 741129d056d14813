"""The in-process limiter through its port (`take_async`/`peek_async`/`ping`), written after
`make mutate` showed that dropping the cost in the async calls, or reporting the table as
unreachable, failed no test (issue 36 item 9)."""

import asyncio

from agentskit_web.server.rate_limit import RateDecision, TokenBucketLimiter


def _limiter() -> TokenBucketLimiter:
    """Five tokens, one back a second, on a clock that stands still."""
    return TokenBucketLimiter(5, 1.0, clock=lambda: 0.0)


def test_take_async_spends_the_cost_it_is_given() -> None:
    limiter = _limiter()
    assert asyncio.run(limiter.take_async("ip:192.0.2.1", 4.0)) == RateDecision(True)
    # One token is left: a second take of 2 is refused, missing one token (one second).
    assert asyncio.run(limiter.take_async("ip:192.0.2.1", 2.0)) == RateDecision(False, 1)
    assert asyncio.run(limiter.take_async("ip:192.0.2.1")) == RateDecision(True)


def test_peek_async_weighs_the_cost_it_is_given_and_spends_nothing() -> None:
    limiter = _limiter()
    # A full bucket of 5 cannot pay 7: two tokens missing, two seconds.
    assert asyncio.run(limiter.peek_async("ip:192.0.2.1", 7.0)) == RateDecision(False, 2)
    assert asyncio.run(limiter.take_async("ip:192.0.2.1", 3.0)).allowed
    assert asyncio.run(limiter.peek_async("ip:192.0.2.1", 3.0)) == RateDecision(False, 1)
    assert asyncio.run(limiter.peek_async("ip:192.0.2.1", 2.0)) == RateDecision(True)
    assert asyncio.run(limiter.peek_async("ip:192.0.2.1", 2.0)) == RateDecision(True)


def test_the_in_process_table_is_always_reachable_for_readiness() -> None:
    """Readiness reports the limiter's `ping`; the table in this process cannot be down."""
    assert _limiter().ping() is True
