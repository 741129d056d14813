"""`serve-ask` start-up checks, the listening socket, and a tiny run of the backend bench."""

import json
import socket
from pathlib import Path

import pytest

from _ask_helpers import site, write_docs
from agentskit_web.bench.backend import AskBenchResult, format_table, run_ask_bench
from agentskit_web.server.ask_serve import (
    AskServeConfig,
    StartupError,
    build_app,
    config_from_args,
    main,
)
from agentskit_web.server.generators import ExtractiveGenerator, OpenAICompatibleGenerator
from agentskit_web.server.static import bind_socket


@pytest.fixture
def config(tmp_path: Path) -> AskServeConfig:
    site_file = tmp_path / "site.json"
    site_file.write_text(json.dumps(site()))
    return AskServeConfig(site=site_file, docs=write_docs(tmp_path / "docs"))


def test_default_build_is_anonymous_and_extractive(config: AskServeConfig) -> None:
    endpoint = build_app(config).state.ask
    assert isinstance(endpoint.generator, ExtractiveGenerator)
    assert endpoint.generator.pace_seconds == config.pace_seconds


def test_bearer_mode_needs_a_readable_token_file(config: AskServeConfig, tmp_path: Path) -> None:
    config.auth = "bearer"
    with pytest.raises(StartupError, match="--tokens-file"):
        build_app(config)
    config.tokens_file = tmp_path / "missing.txt"
    with pytest.raises(StartupError, match=r"missing\.txt"):
        build_app(config)
    config.tokens_file.write_text("alice tok-a\n")
    assert build_app(config).state.ask.authenticate is not None


def test_openai_generator_needs_url_model_and_key_from_env(
    config: AskServeConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.generator = "openai"
    config.openai_url = "http://127.0.0.1:9/v1"
    config.openai_model = "m"
    monkeypatch.delenv("AGENTSKIT_ASK_API_KEY", raising=False)
    with pytest.raises(StartupError, match="AGENTSKIT_ASK_API_KEY"):
        build_app(config)
    monkeypatch.setenv("AGENTSKIT_ASK_API_KEY", "sk-from-env")
    generator = build_app(config).state.ask.generator
    assert isinstance(generator, OpenAICompatibleGenerator) and generator.model == "m"
    config.openai_url = "ftp://x"
    with pytest.raises(StartupError, match="http"):
        build_app(config)


def test_unknown_modes_and_bad_files_are_start_up_errors(
    config: AskServeConfig, tmp_path: Path
) -> None:
    config.metrics_file = tmp_path / "no-such-dir" / "m.jsonl"
    with pytest.raises(StartupError, match="Metrics file"):
        build_app(config)
    config.metrics_file = None
    config.docs = tmp_path / "nope"
    with pytest.raises(StartupError, match="does not exist"):
        build_app(config)


def test_cli_reports_start_up_errors_in_one_line(
    config: AskServeConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["--site", str(config.site), "--docs", str(config.docs), "--auth", "bearer"])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("agentskit-web serve-ask: Bearer mode needs --tokens-file")
    assert len(err.strip().splitlines()) == 1


def test_cli_flags_map_onto_the_config() -> None:
    import argparse

    from agentskit_web.server.ask_serve import _parser

    args: argparse.Namespace = _parser().parse_args(
        ["--port", "0", "--cors-origin", "https://a", "--cors-origin", "https://b",
         "--rate-capacity", "5", "--pace", "0", "--generator", "openai", "--exclude", "design/*"]
    )  # fmt: skip
    config = config_from_args(args)
    assert config.cors_origins == ["https://a", "https://b"]
    assert config.exclude == ["design/*"]
    assert (config.rate_capacity, config.pace_seconds, config.generator) == (5, 0.0, "openai")


def test_hardening_flags_map_onto_the_config_and_the_app(config: AskServeConfig) -> None:
    import argparse

    from agentskit_web.server.ask_serve import _parser

    args: argparse.Namespace = _parser().parse_args(
        ["--trusted-proxy", "10.0.0.5", "--trusted-proxy", "fd00::/8",
         "--max-streams-per-client", "2", "--body-timeout", "3.5",
         "--request-read-timeout", "7", "--limit-concurrency", "64",
         "--session-ttl", "600", "--max-sessions-per-subject", "50", "--openai-allow-http"]
    )  # fmt: skip
    parsed = config_from_args(args)
    assert parsed.trusted_proxies == ["10.0.0.5", "fd00::/8"]
    assert (parsed.max_streams_per_client, parsed.body_timeout) == (2, 3.5)
    assert (parsed.request_read_timeout, parsed.limit_concurrency) == (7.0, 64)
    assert (parsed.session_ttl, parsed.max_sessions_per_subject) == (600.0, 50)
    assert parsed.openai_allow_http is True
    defaults = config_from_args(_parser().parse_args([]))
    assert defaults.trusted_proxies == [] and defaults.openai_allow_http is False

    config.max_streams_per_client, config.body_timeout = 2, 3.5
    config.session_ttl, config.max_sessions_per_subject = 600.0, 50
    config.sessions_db = ":memory:"
    endpoint = build_app(config).state.ask
    assert (endpoint.max_streams_per_client, endpoint.body_timeout) == (2, 3.5)
    # The site in this fixture does not save conversations; the store is built all the same.
    site_file = config.site
    site_file.write_text(json.dumps(site(persistence__mode="required")))
    store = build_app(config).state.ask.session_store
    assert (store.ttl_seconds, store.max_sessions_per_subject) == (600.0, 50)


def test_server_settings_are_the_guarded_ones(config: AskServeConfig) -> None:
    from agentskit_web.server.ask_serve import (
        SERVER_KEEP_ALIVE_SECONDS,
        SERVER_LIMIT_CONCURRENCY,
        uvicorn_config,
    )
    from agentskit_web.server.connection_guard import (
        REQUEST_READ_TIMEOUT_SECONDS,
        GuardedH11Protocol,
    )

    settings = uvicorn_config(build_app(config), config)
    assert isinstance(settings.http, type) and issubclass(settings.http, GuardedH11Protocol)
    assert settings.http.read_timeout == REQUEST_READ_TIMEOUT_SECONDS == 15.0
    assert settings.limit_concurrency == SERVER_LIMIT_CONCURRENCY == 512
    assert settings.timeout_keep_alive == SERVER_KEEP_ALIVE_SECONDS
    assert settings.proxy_headers is False
    config.request_read_timeout = 0
    with pytest.raises(StartupError):
        uvicorn_config(build_app(config), config)


def test_plain_http_to_a_remote_completion_endpoint_needs_the_explicit_flag(
    config: AskServeConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTSKIT_ASK_API_KEY", "sk-from-env")
    config.generator, config.openai_model = "openai", "m"
    config.openai_url = "http://llm.internal.example:8080/v1"
    with pytest.raises(StartupError, match="--openai-allow-http"):
        build_app(config)
    config.openai_allow_http = True
    assert isinstance(build_app(config).state.ask.generator, OpenAICompatibleGenerator)


def test_listening_socket_is_tcp_with_nodelay() -> None:
    sock = bind_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio then sets TCP_NODELAY per connection
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert sock.getsockname()[1] > 0
    finally:
        sock.close()


def test_bench_runs_against_a_real_process() -> None:
    result = run_ask_bench(concurrency=3, questions=12, sequential=4, warmup=2)
    assert isinstance(result, AskBenchResult)
    lone, loaded = result.phases
    assert (lone.completed, loaded.completed) == (4, 12)
    assert loaded.qps > 0 and lone.stat("ttfb_ms", 0.5) <= lone.stat("done_ms", 0.5)
    table = format_table(result)
    assert "TTFB p50" in table and "3 clients" in table and "failed: 0" in table


def test_bench_ttfb_is_taken_at_the_headers_not_at_the_first_body_chunk() -> None:
    import asyncio

    import httpx

    from agentskit_web.bench.backend import Timing, _one

    body_delay = 0.4

    class LateBody(httpx.AsyncByteStream):
        async def __aiter__(self):  # type: ignore[no-untyped-def]
            await asyncio.sleep(body_delay)
            yield b'{"type":"done"}\n'

    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=LateBody())

    async def ask() -> Timing:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await _one(client, "http://bench.invalid/api/ask", "q")

    timing = asyncio.run(ask())
    assert timing.ok
    assert timing.ttfb_ms < body_delay * 1000 / 2
    assert timing.done_ms >= body_delay * 1000
