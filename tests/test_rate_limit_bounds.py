"""The in-process rate limiter at its bounds: the constructor's limits at the limit and one
past it, a full client table's retry time, and IPv6 zone ids (written after `make mutate`
showed mutants of these lines surviving the server tests)."""

import pytest

from agentskit_web.server.rate_limit import RateDecision, TokenBucketLimiter, client_rate_key

LIMITS_MESSAGE = r"^Rate limit needs capacity >= 1, refill > 0 and max_clients >= 1\.$"


def test_the_smallest_limits_are_accepted() -> None:
    now = [0.0]
    limiter = TokenBucketLimiter(1, 1e-9, max_clients=1, clock=lambda: now[0])
    assert limiter.take("a") == RateDecision(True)
    assert limiter.take("a").allowed is False


@pytest.mark.parametrize(
    ("capacity", "refill_per_second", "max_clients"),
    [(0, 1.0, 1), (1, 0.0, 1), (1, 1.0, 0)],
    ids=["capacity 0", "refill 0", "max_clients 0"],
)
def test_one_past_each_limit_is_refused_naming_the_limits(
    capacity: int, refill_per_second: float, max_clients: int
) -> None:
    with pytest.raises(ValueError, match=LIMITS_MESSAGE):
        TokenBucketLimiter(capacity, refill_per_second, max_clients=max_clients)


def test_a_full_table_tells_a_new_client_when_the_first_bucket_is_full_again() -> None:
    """One client may be remembered; it holds 1 of 2 tokens, refilled at one a second, so
    the table has room again in one second, and the newcomer is told exactly that."""
    now = [0.0]
    limiter = TokenBucketLimiter(2, 1.0, max_clients=1, clock=lambda: now[0])
    assert limiter.take("a").allowed
    assert limiter.take("b") == RateDecision(False, 1)
    now[0] = 1.0
    assert limiter.take("b") == RateDecision(True)
    assert len(limiter) == 1


def test_an_ipv6_zone_id_does_not_make_another_client() -> None:
    """A link-local peer may be reported with its interface (`%eth0`): the same machine on
    another interface, or without one, is the same client (its /64)."""
    keys = {client_rate_key(host) for host in ("fe80::1%eth0", "fe80::1%eth1", "fe80::1")}
    assert keys == {"ip6:fe80::/64"}
