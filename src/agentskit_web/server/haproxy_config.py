"""The haproxy configuration for several `serve-ask` instances: one template, filled here.

docs/deployment.md shows this configuration verbatim (a test renders it with
the documented values and compares), and the load-balancer tests and
`bench scale` run real haproxy processes on configurations rendered by the same
function, so what the page recommends is what was tested.

The choices, and why:

- `balance roundrobin` and no stickiness: every instance reads the same
  session store and rate-limit buckets, so any instance can answer any
  request; stickiness would only hide a store that is not shared.
- `option httpchk GET /readyz` every `HEALTH_CHECK_INTERVAL_MS`, out after
  `HEALTH_CHECK_FALL` failures, back after `HEALTH_CHECK_RISE` successes:
  a draining instance answers 503 there (and soon refuses connections), so it
  is taken out within about a second. A check may take
  `HEALTH_CHECK_TIMEOUT_MS`: a slow answer from a busy instance is not a
  failure (haproxy's default, `inter`, took all three out at once under load).
- `retries` with `option redispatch`: a request whose connection to an
  instance is refused (the instance was killed, before the health check
  noticed) is sent to another instance instead of failing; nothing was sent
  to the dead one, so this is safe for POSTs too.
- `timeout server` well above the longest pause inside a streamed answer
  (an inactivity timeout, not a cap on the answer's length).
- The reader's address goes to the instances in `X-Forwarded-For` (set, not
  appended, so a reader cannot forge it); run the instances with
  `--trusted-proxy` naming the balancer so that the rate limit is per reader.
- An optional second backend serves everything that is not the API (the
  built site), so the page and its Ask endpoint share one origin.
- `/metrics` is refused at the balancer: traffic counts are for the
  operator's Prometheus, which scrapes each instance's own address.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .operations import METRICS_PATH, READY_CHECK_TIMEOUT_SECONDS

HEALTH_CHECK_INTERVAL_MS: Final = 500
"""How often haproxy asks each instance's `/readyz`."""
HEALTH_CHECK_FALL: Final = 2
"""Failed checks in a row that take an instance out (about one second)."""
HEALTH_CHECK_RISE: Final = 2
"""Passed checks in a row that bring an instance back."""
HEALTH_CHECK_TIMEOUT_MS: Final = int(READY_CHECK_TIMEOUT_SECONDS * 1000) + 1_000
"""How long one check may take: `/readyz` bounds its own probes at READY_CHECK_TIMEOUT_SECONDS,
plus a second for a busy machine. Without it haproxy allows only `inter` (500 ms), and on a
loaded host slow answers took every instance out at once (seen in the tests)."""
CONNECT_RETRIES: Final = 2
"""Connection attempts haproxy retries (on another instance) before answering 503."""
TIMEOUT_CONNECT_MS: Final = 1_000
TIMEOUT_CLIENT_SECONDS: Final = 60
TIMEOUT_SERVER_SECONDS: Final = 120
"""Inactivity allowed on an instance's response: above any pause inside a streamed answer."""
API_PREFIX: Final = "/api/"


@dataclass(frozen=True, slots=True)
class Upstream:
    """One instance (or the static site) as haproxy reaches it."""

    name: str
    host: str
    port: int

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def haproxy_config(
    bind: str,
    instances: Sequence[Upstream],
    *,
    site: Upstream | None = None,
    stats_socket: str | None = None,
) -> str:
    """The configuration text: a frontend on `bind`, `/api/` over `instances`, the rest to `site`.

    Without `site` every path goes to the instances (they serve only the API
    and the health endpoints). `stats_socket` adds haproxy's admin socket (the
    tests read each instance's state from it).
    """
    if not instances:
        raise ValueError("haproxy needs at least one instance.")
    names = [upstream.name for upstream in (*instances, *([site] if site else []))]
    if len(set(names)) != len(names):
        raise ValueError("Instance names must differ.")
    lines = ["global", "    log stdout format raw local0 notice"]
    if stats_socket is not None:
        lines.append(f"    stats socket {stats_socket} mode 600 level admin")
    lines += [
        "",
        "defaults",
        "    mode http",
        "    log global",
        "    option dontlognull",
        f"    timeout connect {TIMEOUT_CONNECT_MS}ms",
        f"    timeout client {TIMEOUT_CLIENT_SECONDS}s",
        f"    timeout server {TIMEOUT_SERVER_SECONDS}s",
        f"    timeout check {HEALTH_CHECK_TIMEOUT_MS}ms",
        f"    retries {CONNECT_RETRIES}",
        "    option redispatch 1",
        "",
        "frontend docs",
        f"    bind {bind}",
        "    http-request set-header X-Forwarded-For %[src]",
        f"    http-request deny deny_status 403 if {{ path {METRICS_PATH} }}",
    ]
    if site is not None:
        lines += [f"    use_backend ask if {{ path_beg {API_PREFIX} }}", "    default_backend site"]
    else:
        lines.append("    default_backend ask")
    lines += [
        "",
        "backend ask",
        "    balance roundrobin",
        "    option httpchk GET /readyz",
        "    http-check expect status 200",
        f"    default-server check inter {HEALTH_CHECK_INTERVAL_MS}ms"
        f" fall {HEALTH_CHECK_FALL} rise {HEALTH_CHECK_RISE}",
    ]
    lines += [f"    server {one.name} {one.address}" for one in instances]
    if site is not None:
        lines += ["", "backend site", f"    server {site.name} {site.address}"]
    return "\n".join(lines) + "\n"


__all__ = ["Upstream", "haproxy_config"]
