"""The `redis_server` fixture: Debian's `redis-server` on loopback, one per test.

Each test gets its own server in its temporary folder on a free port, with
persistence off, so no test sees another's buckets. The Makefile's test path
installs the Debian package when it is missing (like chromium); a machine
without it fails here with that instruction, never skips.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentskit_web.bench.local_redis import LocalRedis

RedisServer = LocalRedis


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[LocalRedis]:
    folder = tmp_path / "redis"
    folder.mkdir()
    server = LocalRedis(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()
