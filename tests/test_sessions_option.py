"""`--sessions` and `--turn-lease` on the configured backend (`build_app`), in process."""

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from _backend_process import write_backend_files
from agentskit_web.bench.local_postgres import LocalPostgres
from agentskit_web.extras import EXTRA_MODULES
from agentskit_web.server import ask_serve
from agentskit_web.server.ask_serve import (
    AskServeConfig,
    StartupError,
    _parser,
    build_app,
    config_from_args,
)
from agentskit_web.server.turn_store import TurnSessionStore
from agentskit_web.server.turn_store_postgres import PostgresTurnSessionStore


def _app(tmp_path: Path, **config: Any) -> Any:
    site_file, docs = write_backend_files(tmp_path)
    return build_app(AskServeConfig(site=site_file, docs=docs, pace_seconds=0, **config))


def _get(app: Any, path: str) -> httpx.Response:
    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 4000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.get(path)

    return asyncio.run(run())


def test_the_flags_map_onto_the_config_and_default_to_sqlite() -> None:
    args = _parser().parse_args(
        ["--sessions", "postgresql://u@127.0.0.1:5999/x", "--turn-lease", "4"]
    )
    config = config_from_args(args)
    assert (config.sessions, config.turn_lease) == ("postgresql://u@127.0.0.1:5999/x", 4.0)
    defaults = config_from_args(_parser().parse_args([]))
    assert (defaults.sessions, defaults.turn_lease) == ("sqlite", 10.0)


def test_the_default_store_is_sqlite(tmp_path: Path) -> None:
    app = _app(tmp_path)
    assert isinstance(app.state.turn.store, TurnSessionStore)
    assert app.state.turn.lease_seconds == 10.0


def test_postgresql_sessions_are_ready_until_the_database_goes_away(tmp_path: Path) -> None:
    server = LocalPostgres().start()
    try:
        app = _app(tmp_path, sessions=server.create_database(), turn_lease=3.0)
        assert isinstance(app.state.turn.store, PostgresTurnSessionStore)
        assert app.state.turn.lease_seconds == 3.0
        ready = _get(app, "/readyz")
        assert ready.status_code == 200 and ready.json()["checks"]["sessions"] is True
        server.stop()
        gone = _get(app, "/readyz")
        assert gone.status_code == 503 and gone.json()["checks"]["sessions"] is False
    finally:
        server.stop()


@pytest.mark.parametrize("where", ["mysql://127.0.0.1/x", "postgres", "PostgreSQL://x", ""])
def test_an_unknown_session_store_is_a_start_up_error(tmp_path: Path, where: str) -> None:
    with pytest.raises(StartupError, match="--sessions"):
        _app(tmp_path, sessions=where)


def test_an_unreachable_database_is_one_line_without_the_password(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StartupError) as caught:
        _app(tmp_path, sessions=f"postgresql://reader:hunter2@127.0.0.1:{port}/docs")
    line = str(caught.value)
    assert "\n" not in line and "hunter2" not in line and "reader:***@" in line


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://reader@127.0.0.1:{port}/docs?password=hunter2",
        "postgresql://127.0.0.1:{port}/docs?sslmode=disable&user=r&password=hunter2",
        "postgresql://reader:hunter2@127.0.0.1:{port}/docs?sslpassword=hunter2",
    ],
)
def test_a_password_anywhere_in_the_url_stays_out_of_the_start_up_error(
    tmp_path: Path, url: str
) -> None:
    """Issue 36: `?password=` (which libpq reads as well as user:pass@) was printed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StartupError) as caught:
        _app(tmp_path, sessions=url.format(port=port))
    line = str(caught.value)
    assert "\n" not in line and "hunter2" not in line and "password=***" in line


@pytest.mark.parametrize(
    "where", ["redis://:hunter2@127.0.0.1:1/x?db=zz", "rediss:/:hunter2@h", "redsi://:hunter2@h"]
)
def test_a_rate_limit_url_error_never_shows_its_password(tmp_path: Path, where: str) -> None:
    with pytest.raises(StartupError, match="--rate-limit") as caught:
        _app(tmp_path, rate_limit=where)
    assert "hunter2" not in str(caught.value)


def test_a_missing_postgres_extra_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert EXTRA_MODULES["postgres"] == ("psycopg", "psycopg_pool")
    monkeypatch.setattr(ask_serve, "missing_module", lambda extra: "psycopg_pool")
    with pytest.raises(StartupError, match=r"\[postgres\] extra .*agentskit-web\[postgres\]"):
        _app(tmp_path, sessions="postgresql://u@127.0.0.1:1/x")


@pytest.mark.parametrize("lease", [0.0, -1.0, float("nan"), float("inf")])
def test_a_lease_that_is_not_a_positive_number_is_a_start_up_error(
    tmp_path: Path, lease: float
) -> None:
    with pytest.raises(StartupError, match="--turn-lease"):
        _app(tmp_path, turn_lease=lease)


def test_serve_ask_exits_2_with_one_line_for_an_unreachable_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site_file, docs = write_backend_files(tmp_path)
    status = ask_serve.main(
        ["--site", str(site_file), "--docs", str(docs), "--port", "0",
         "--sessions", "postgresql://u:pw@127.0.0.1:1/x"]
    )  # fmt: skip
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not reachable" in err and ":pw@" not in err
