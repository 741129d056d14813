"""PostgreSQL fixtures: Debian's server on loopback, one cluster per test session.

`postgres_server` (session scope) runs `initdb` + `pg_ctl start` in a
temporary folder on 127.0.0.1 on a free port (as the `postgres` system user
when the tests run as root, which PostgreSQL requires) and stops it at the
end; `postgres_url` gives each test a fresh, empty database on it, so no test
sees another's rows. The Makefile's test path installs Debian's package when
it is missing (`make postgresql`, like redis-server and chromium); a machine
without it fails here with that instruction, never skips.

Other test folders (e2e/, the balancer tests) use them with
`from _postgres_server import postgres_server, postgres_url` once tests/ is
on `sys.path`, or start a `LocalPostgres` themselves.
"""

from collections.abc import Iterator

import pytest

from agentskit_web.bench.local_postgres import LocalPostgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[LocalPostgres]:
    server = LocalPostgres().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: LocalPostgres) -> str:
    """A new database of its own for this test (`postgresql://agentskit@127.0.0.1:PORT/t_...`)."""
    return postgres_server.create_database()
