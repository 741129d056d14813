"""Forged clients: X-Forwarded-For, IPv6 /64s, address floods and token guessing.

Servers run on a real uvicorn on loopback with the settings `serve-ask` uses
(`ask_serve.uvicorn_config`), so what is tested is what operators run.
"""

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ask_helpers import FakeClock, ScriptedGenerator, ThreadedUvicorn, ask_body, site, write_docs
from agentskit_web.server.ask_app import MESSAGES, create_ask_app
from agentskit_web.server.ask_serve import AskServeConfig, StartupError, uvicorn_config
from agentskit_web.server.auth import Principal, RequestHead, anonymous, bearer_tokens
from agentskit_web.server.rate_limit import (
    AUTH_FAILURE_CAPACITY,
    AUTH_FAILURE_REFILL_PER_SECOND,
    DEFAULT_CAPACITY,
    TokenBucketLimiter,
    client_rate_key,
)


def quick_app(tmp_path: Path, **options: Any) -> Any:
    return create_ask_app(
        site(), write_docs(tmp_path / "docs"), generator=ScriptedGenerator(), **options
    )


def statuses(url: str, headers: list[dict[str, str]], source: str = "127.0.0.1") -> list[int]:
    """POST one question per header set, from the loopback address `source`."""
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(timeout=30, transport=transport) as client:
        return [
            client.post(f"{url}/api/ask", json=ask_body(), headers=extra).status_code
            for extra in headers
        ]


# --------------------------------------------------------------------------- X-Forwarded-For


def test_rotating_forwarded_for_does_not_mint_buckets_by_default(tmp_path: Path) -> None:
    """The issue's case: throttled, then 40 requests with forged addresses; all stay throttled."""
    app = quick_app(tmp_path)
    forged = [{"x-forwarded-for": f"198.51.100.{n}"} for n in range(40)]
    with ThreadedUvicorn(app, AskServeConfig()) as server:
        first = statuses(server.url, [{}] * (DEFAULT_CAPACITY + 2))
        then = statuses(server.url, forged)
    assert first == [200] * DEFAULT_CAPACITY + [429, 429]
    assert then == [429] * 40


def seen_client_hosts(tmp_path: Path, config: AskServeConfig, forwarded: str) -> str | None:
    seen: list[str | None] = []
    hook = anonymous()

    async def recording(head: RequestHead) -> Principal | None:
        seen.append(head.client_host)
        return await hook(head)

    app = quick_app(tmp_path, authenticate=recording)
    with ThreadedUvicorn(app, config) as server:
        assert statuses(server.url, [{"x-forwarded-for": forwarded}]) == [200]
    return seen[0]


@pytest.mark.parametrize(
    ("trusted", "forwarded", "client"),
    [
        ([], "203.0.113.9", "127.0.0.1"),  # the default trusts nobody, not even loopback
        (["10.0.0.0/8"], "203.0.113.9", "127.0.0.1"),  # a proxy elsewhere is not this peer
        (["127.0.0.1"], "203.0.113.9", "203.0.113.9"),
        # A trusted proxy that appends: the right-most address it did not add is the client.
        (["127.0.0.1"], "198.51.100.66, 203.0.113.9", "203.0.113.9"),
        (["127.0.0.0/8", "10.0.0.0/8"], "203.0.113.9, 10.1.2.3", "203.0.113.9"),
    ],
)
def test_forwarded_for_is_believed_only_from_a_trusted_proxy(
    tmp_path: Path, trusted: list[str], forwarded: str, client: str
) -> None:
    config = AskServeConfig(trusted_proxies=trusted)
    assert seen_client_hosts(tmp_path, config, forwarded) == client


def test_uvicorn_settings_follow_our_config_not_uvicorns_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")  # uvicorn would read this; we do not
    app = quick_app(tmp_path)
    default = uvicorn_config(app, AskServeConfig())
    assert default.proxy_headers is False and default.forwarded_allow_ips == []
    trusted = uvicorn_config(app, AskServeConfig(trusted_proxies=[" 10.0.0.5 ", "fd00::/8"]))
    assert trusted.proxy_headers is True
    assert trusted.forwarded_allow_ips == ["10.0.0.5", "fd00::/8"]


@pytest.mark.parametrize("entry", ["*", "proxy.internal", "10.0.0.300", ""])
def test_a_trusted_proxy_must_be_an_address_or_network(tmp_path: Path, entry: str) -> None:
    with pytest.raises(StartupError, match="trusted-proxy"):
        uvicorn_config(quick_app(tmp_path), AskServeConfig(trusted_proxies=[entry]))


# --------------------------------------------------------------------------- IPv6 /64


def ask_from(app: Any, host: str) -> int:
    """One question through the ASGI app from `host` (loopback has no second IPv6 /64)."""

    async def run() -> int:
        transport = httpx.ASGITransport(app=app, client=(host, 40_000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return (await client.post("/api/ask", json=ask_body())).status_code

    return asyncio.run(run())


def test_addresses_of_one_ipv6_64_share_one_bucket(tmp_path: Path) -> None:
    limiter = TokenBucketLimiter(3, 0.001, clock=FakeClock().monotonic)
    app = quick_app(tmp_path, rate_limiter=limiter)
    same_64 = [f"2001:db8:0:7:{n:x}::1" for n in range(1, 5)]
    assert [ask_from(app, host) for host in same_64] == [200, 200, 200, 429]
    assert ask_from(app, "2001:db8:0:8::1") == 200  # the neighbouring /64 is someone else
    assert ask_from(app, "198.51.100.1") == 200
    assert client_rate_key(same_64[0]) == client_rate_key(same_64[3]) == "ip6:2001:db8:0:7::/64"


# --------------------------------------------------------------------------- failed authentication


def test_failed_authentications_are_limited_per_address_before_the_token_is_checked(
    tmp_path: Path,
) -> None:
    failures = TokenBucketLimiter(AUTH_FAILURE_CAPACITY, 0.0001)
    app = quick_app(
        tmp_path,
        authenticate=bearer_tokens({"right-token": "alice"}),
        auth_failure_limiter=failures,
    )
    wrong = {"authorization": "Bearer wrong-token"}
    right = {"authorization": "Bearer right-token"}
    with ThreadedUvicorn(app, AskServeConfig()) as server:
        guesses = statuses(server.url, [wrong] * AUTH_FAILURE_CAPACITY)
        spent = statuses(server.url, [wrong, right, {}])
        other_address = statuses(server.url, [right, wrong], source="127.0.0.2")
        with httpx.Client(timeout=30) as client:
            refused = client.post(f"{server.url}/api/ask", json=ask_body(), headers=right)
    assert guesses == [401] * AUTH_FAILURE_CAPACITY
    assert spent == [429, 429, 429]  # even the right token: a guess cannot be confirmed
    assert other_address == [200, 401]
    assert refused.json()["error"] == {
        "code": "ASK_RATE_LIMITED",
        "message": MESSAGES["auth_rate"],
        "retryable": True,
    }
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.headers["connection"] == "close"


def test_the_default_failure_allowance_refills_one_guess_every_ten_seconds(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    app = quick_app(tmp_path, authenticate=bearer_tokens({"right-token": "alice"}), clock=clock)
    assert AUTH_FAILURE_REFILL_PER_SECOND == 0.1

    def guess() -> tuple[int, str | None]:
        async def run() -> tuple[int, str | None]:
            transport = httpx.ASGITransport(app=app, client=("198.51.100.9", 40_000))
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                reply = await client.post(
                    "/api/ask", json=ask_body(), headers={"authorization": "Bearer guess"}
                )
                return reply.status_code, reply.headers.get("retry-after")

        return asyncio.run(run())

    assert [guess()[0] for _ in range(AUTH_FAILURE_CAPACITY)] == [401] * AUTH_FAILURE_CAPACITY
    assert guess() == (429, "10")
    clock.advance(9)
    assert guess() == (429, "1")
    clock.advance(1)
    assert guess()[0] == 401  # one guess regained after 10 s, and spent
    assert guess()[0] == 429


def test_successful_authentications_spend_nothing_of_the_failure_allowance(
    tmp_path: Path,
) -> None:
    failures = TokenBucketLimiter(AUTH_FAILURE_CAPACITY, 0.0001)
    app = quick_app(
        tmp_path,
        authenticate=bearer_tokens({"right-token": "alice"}),
        auth_failure_limiter=failures,
        rate_limiter=TokenBucketLimiter(1_000, 1.0),
    )
    right = {"authorization": "Bearer right-token"}
    with ThreadedUvicorn(app, AskServeConfig()) as server:
        many = statuses(server.url, [right] * (AUTH_FAILURE_CAPACITY + 5))
    assert many == [200] * (AUTH_FAILURE_CAPACITY + 5)
    assert failures.peek(client_rate_key("127.0.0.1")).allowed
    assert len(failures) == 0


def test_loopback_aliases_are_distinct_clients() -> None:
    """The tests above rely on 127.0.0.2 being a usable, separate source address."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname(), source_address=("127.0.0.2", 0)) as _:
            peer, address = listener.accept()
            peer.close()
    assert address[0] == "127.0.0.2"
