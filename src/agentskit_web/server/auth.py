"""Authentication hooks, run on the request head *before* any byte of the body is read.

A hook receives a `RequestHead` (method, path, query, headers, client address),
which deliberately has no way to read the body, and returns a `Principal` or
None (401 ASK_UNAUTHORIZED). The principal names the subject (used for rate
limiting and the persistence key, never written to metrics) and, optionally,
the sites it may use.

Two hooks ship: `anonymous()` (the demo: everyone is welcome, rate-limited per
client address) and `bearer_tokens(...)` (a fixed table of opaque tokens, e.g.
one per partner site, compared in constant time).
"""

import hmac
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from starlette.datastructures import Headers, QueryParams

from .rate_limit import client_rate_key


@dataclass(frozen=True, slots=True)
class RequestHead:
    """Everything about a request except its body.

    `client_host` is the peer address of the socket; only when the operator
    lists the proxy in front as trusted (`serve-ask --trusted-proxy`) is it the
    address that proxy reports in `X-Forwarded-For`.
    """

    method: str
    path: str
    query: QueryParams
    headers: Headers
    client_host: str | None


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller.

    `subject` identifies the caller to the persistence store; `rate_key` is
    the bucket the rate limiter charges; `sites` (None = any) limits which site
    ids the credential may use.
    """

    subject: str
    rate_key: str
    sites: frozenset[str] | None = None
    anonymous: bool = False

    def may_use(self, site_id: str) -> bool:
        return self.sites is None or site_id in self.sites


Authenticator = Callable[[RequestHead], Awaitable[Principal | None]]
"""The auth hook: a principal, or None to answer 401 ASK_UNAUTHORIZED."""


ANONYMOUS_SUBJECT = "anonymous"


def anonymous() -> Authenticator:
    """Everyone is the anonymous subject; rate limiting is per client address (IPv6: /64)."""

    async def authenticate(head: RequestHead) -> Principal:
        return Principal(
            subject=ANONYMOUS_SUBJECT,
            rate_key=client_rate_key(head.client_host),
            anonymous=True,
        )

    return authenticate


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """What one bearer token stands for."""

    subject: str
    sites: frozenset[str] | None = None


def _bearer_token(headers: Headers) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        return None
    return token


def bearer_tokens(grants: Mapping[str, TokenGrant | str]) -> Authenticator:
    """`Authorization: Bearer <token>` against a fixed table (token -> subject or grant).

    Every configured token is compared with `hmac.compare_digest`, so the time
    taken does not reveal how much of a guess matched.
    """
    table = [
        (token.encode(), grant if isinstance(grant, TokenGrant) else TokenGrant(grant))
        for token, grant in grants.items()
    ]
    if not table:
        raise ValueError("Bearer-token mode needs at least one token.")

    async def authenticate(head: RequestHead) -> Principal | None:
        offered = _bearer_token(head.headers)
        if offered is None:
            return None
        offered_bytes = offered.encode()
        found: TokenGrant | None = None
        for token, grant in table:
            if hmac.compare_digest(token, offered_bytes):
                found = grant
        if found is None:
            return None
        return Principal(subject=found.subject, rate_key=f"sub:{found.subject}", sites=found.sites)

    return authenticate


def load_token_file(text: str) -> dict[str, TokenGrant]:
    """Parse a token file: one `subject token` pair per line, `#` comments, blank lines ok."""
    grants: dict[str, TokenGrant] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(f"Token file line {number}: expected 'subject token'.")
        subject, token = fields
        grants[token] = TokenGrant(subject)
    if not grants:
        raise ValueError("Token file has no tokens.")
    return grants
