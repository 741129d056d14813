"""Run the reference Ask backend with uvicorn: `agentskit-web serve-ask` / `serve_ask(...)`.

What it answers from (server/site_source.py): a built site (`--site-dir`: the
index file the MkDocs plugin or Sphinx extension wrote there, or the folder's
HTML indexed at start-up), an index file (`--index`), or a folder of
Markdown/HTML sources (`--docs`, the default `docs/`). The site config is
optional: `--site FILE`, else `site.json` inside the `--docs` folder, else one
derived from the site's name (said in one line at start-up).

Everything is validated before the socket opens: a bad site config, a missing
docs folder, a bearer mode without tokens or an OpenAI-compatible generator
without its key stop start-up with one clear line (exit status 2), never a
traceback in the middle of serving.

The OpenAI-compatible key is read from the environment variable named by
`--api-key-env` (default AGENTSKIT_ASK_API_KEY), never from the command line,
so it does not show up in `ps` or shell history.

`uvicorn_config` is the one place the server's protections are set, for
`serve-ask` and the demo alike: a deadline on reading each request
(`connection_guard`), `limit_concurrency`, and proxy headers honoured only from
the proxies the operator lists (`--trusted-proxy`; by default nobody, so the
client address is always the socket's and `X-Forwarded-For` is ignored).
"""

import argparse
import ipaddress
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import uvicorn
from starlette.applications import Starlette

from ..extras import MissingExtra, missing_module
from .ask_app import (
    ASK_BODY_TIMEOUT_SECONDS,
    ASK_MAX_STREAMS_PER_CLIENT,
    DEFAULT_PATH,
    SiteConfigError,
    SiteSettings,
    create_ask_app,
    load_site_config,
)
from .auth import Authenticator, anonymous, bearer_tokens, load_token_file
from .connection_guard import REQUEST_READ_TIMEOUT_SECONDS, guarded_h11_protocol
from .generators import ExtractiveGenerator, Generator, OpenAICompatibleGenerator
from .metrics import JsonLinesMetrics, MetricsSink
from .operations import (
    SHUTDOWN_DEADLINE_SECONDS,
    SHUTDOWN_FLUSH_SECONDS,
    Drain,
    DrainingServer,
    Operations,
    Probe,
    PrometheusMetrics,
    mount_operations,
)
from .persistence import (
    SESSION_MAX_PER_SUBJECT,
    SESSION_TTL_SECONDS,
    PersistenceError,
    SessionStore,
)
from .question_log import QUESTION_LOG_DEFAULT_DAYS, QuestionRecorder, open_question_log
from .rate_limit import (
    AUTH_FAILURE_CAPACITY,
    AUTH_FAILURE_REFILL_PER_SECOND,
    DEFAULT_CAPACITY,
    DEFAULT_REFILL_PER_SECOND,
    RateLimiter,
    TokenBucketLimiter,
)
from .retrieval import IndexRetriever
from .site_source import (
    SiteSource,
    chunk_retriever,
    derived_site_config,
    from_docs_folder,
    from_index_file,
    from_site_dir,
)
from .static import bind_socket
from .turn_app import DEFAULT_TURN_PATH, TURN_LEASE_SECONDS, mount_turn
from .turn_session_port import (
    TURN_STORE_MAX_SESSIONS_TOTAL,
    TurnSessionKey,
    TurnSessionStorePort,
    client_share,
    is_postgres_url,
    redacted,
)
from .turn_store import TurnSessionStore

DEFAULT_PORT: Final = 8001
DEFAULT_API_KEY_ENV: Final = "AGENTSKIT_ASK_API_KEY"
DEMO_PACE_SECONDS: Final = 0.01
"""Pause between extractive deltas when serving, so a reader sees the answer stream."""
SERVER_LIMIT_CONCURRENCY: Final = 512
"""uvicorn's `limit_concurrency`: with this many connections open (or requests
running), a new request gets 503 instead of more work. Kept under the usual
1,024 open-file limit, with room for the databases and the listening socket."""
SERVER_KEEP_ALIVE_SECONDS: Final = 5
"""uvicorn's `timeout_keep_alive`: an idle connection is closed this long after a response."""


class StartupError(RuntimeError):
    """A configuration problem found before serving (printed as one line)."""


@dataclass(slots=True)
class AskServeConfig:
    """Everything `serve_ask` needs; the CLI fills it from flags."""

    site: Path | None = None
    """The site config; None: `site.json` in `docs` when answering from it, else derived."""
    docs: Path = Path("docs")
    site_dir: Path | None = None
    """A built site to answer from (takes the place of `docs`)."""
    index_file: Path | None = None
    """A site index file to answer from (takes the place of `docs` and `site_dir`)."""
    base_path: str | None = None
    """Where `site_dir` is published (None: its index file's, else `/`)."""
    path: str = DEFAULT_PATH
    turn_path: str = DEFAULT_TURN_PATH
    auth: str = "anonymous"
    tokens_file: Path | None = None
    rate_capacity: int = DEFAULT_CAPACITY
    rate_refill: float = DEFAULT_REFILL_PER_SECOND
    metrics_file: Path | None = None
    sessions_db: str = ":memory:"
    sessions: str = "sqlite"
    """Where turn sessions live: `sqlite` (the `sessions_db` file) or a postgresql:// URL."""
    generator: str = "extractive"
    openai_url: str | None = None
    openai_model: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    pace_seconds: float = DEMO_PACE_SECONDS
    cors_origins: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    trusted_proxies: list[str] = field(default_factory=list)
    max_streams_per_client: int = ASK_MAX_STREAMS_PER_CLIENT
    body_timeout: float = ASK_BODY_TIMEOUT_SECONDS
    request_read_timeout: float = REQUEST_READ_TIMEOUT_SECONDS
    limit_concurrency: int = SERVER_LIMIT_CONCURRENCY
    session_ttl: float = SESSION_TTL_SECONDS
    max_sessions_per_subject: int = SESSION_MAX_PER_SUBJECT
    max_sessions_total: int = TURN_STORE_MAX_SESSIONS_TOTAL
    openai_allow_http: bool = False
    rate_limit: str = "memory"
    shutdown_deadline: float = SHUTDOWN_DEADLINE_SECONDS
    turn_lease: float = TURN_LEASE_SECONDS
    question_log: Path | str | None = None
    """The owner's log of what readers ask: an SQLite file (question_log.py) or a
    `postgresql://` URL (question_log_postgres.py); None: none is kept."""
    question_log_days: int = QUESTION_LOG_DEFAULT_DAYS


def _authenticator(config: AskServeConfig) -> Authenticator:
    if config.auth == "anonymous":
        return anonymous()
    if config.auth == "bearer":
        if config.tokens_file is None:
            raise StartupError("Bearer mode needs --tokens-file (lines of 'subject token').")
        try:
            return bearer_tokens(load_token_file(config.tokens_file.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            raise StartupError(f"Token file {config.tokens_file}: {error}") from error
    raise StartupError(f"Unknown auth mode {config.auth!r} (anonymous or bearer).")


def _generator(config: AskServeConfig) -> Generator:
    if config.generator == "extractive":
        return ExtractiveGenerator(pace_seconds=config.pace_seconds)
    if config.generator == "openai":
        key = os.environ.get(config.api_key_env, "")
        if not (config.openai_url and config.openai_model and key):
            raise StartupError(
                "The openai generator needs --openai-url, --openai-model and the key in "
                f"${config.api_key_env}."
            )
        try:
            return OpenAICompatibleGenerator(
                config.openai_url,
                key,
                config.openai_model,
                allow_insecure_http=config.openai_allow_http,
            )
        except ValueError as error:
            raise StartupError(str(error)) from error
    raise StartupError(f"Unknown generator {config.generator!r} (extractive or openai).")


def _limiters(config: AskServeConfig) -> tuple[RateLimiter, RateLimiter]:
    """The per-client and failed-authentication limiters: in process, or shared in Redis."""
    if config.rate_limit == "memory":
        return (
            TokenBucketLimiter(config.rate_capacity, config.rate_refill),
            TokenBucketLimiter(AUTH_FAILURE_CAPACITY, AUTH_FAILURE_REFILL_PER_SECOND),
        )
    if config.rate_limit.startswith(("redis://", "rediss://", "unix://")):
        try:
            from .redis_rate_limit import RedisRateLimiter, redis_client
        except ImportError as error:
            raise StartupError(
                "--rate-limit redis://... needs the redis client: "
                "pip install 'agentskit-web[scale]'."
            ) from error
        try:
            client = redis_client(config.rate_limit)
        except ValueError as error:
            raise StartupError(f"--rate-limit {redacted(config.rate_limit)}: {error}") from error
        return (
            RedisRateLimiter(client, "ask", config.rate_capacity, config.rate_refill),
            RedisRateLimiter(client, "auth", AUTH_FAILURE_CAPACITY, AUTH_FAILURE_REFILL_PER_SECOND),
        )
    raise StartupError(
        f"Unknown --rate-limit {redacted(config.rate_limit)!r}"
        " (memory, or a redis:// or rediss:// URL)."
    )


def _turn_store(config: AskServeConfig) -> TurnSessionStorePort:
    """The turn session store: SQLite (`--sessions-db`) by default, or shared PostgreSQL."""
    bounds: dict[str, Any] = {
        "ttl_seconds": config.session_ttl,
        "max_sessions_per_client": client_share(
            config.max_sessions_per_subject, config.max_sessions_total
        ),
        "max_sessions_total": config.max_sessions_total,
    }
    if config.sessions == "sqlite":
        return TurnSessionStore(config.sessions_db, **bounds)
    if not is_postgres_url(config.sessions):
        raise StartupError(
            f"Unknown --sessions {redacted(config.sessions)!r} (sqlite, or a postgresql:// URL)."
        )
    module = missing_module("postgres")
    if module is not None:
        raise StartupError(str(MissingExtra("--sessions postgresql://...", "postgres", module)))
    from .turn_store_postgres import PostgresTurnSessionStore

    try:
        return PostgresTurnSessionStore(config.sessions, **bounds)
    except PersistenceError as error:
        raise StartupError(f"--sessions: {error}") from error


def _question_log(config: AskServeConfig) -> QuestionRecorder | None:
    """The owner's question log, if `--question-log` names one (ValueError: a bad one)."""
    where = config.question_log
    if where is None:
        return None
    if isinstance(where, str) and is_postgres_url(where):
        module = missing_module("postgres")
        if module is not None:
            raise StartupError(
                str(MissingExtra("--question-log postgresql://...", "postgres", module))
            )
    elif isinstance(where, str) and "://" in where:
        raise StartupError(
            f"Unknown --question-log {redacted(where)!r} (an SQLite file or a postgresql:// URL)."
        )
    return open_question_log(where, days=config.question_log_days)


def _readiness_probes(
    app: Starlette, turn_store: TurnSessionStorePort, limiter: RateLimiter
) -> list[Probe]:
    """Index loaded and session stores answering (gating); limiter reachable (reported)."""
    ask = app.state.ask
    probe = TurnSessionKey(ask.site.site_id, "readiness-probe", "readiness-probe")

    async def index() -> bool:
        retriever = ask.retriever
        return not isinstance(retriever, IndexRetriever) or retriever.index.size > 0

    async def sessions() -> bool:
        await anyio.to_thread.run_sync(turn_store.load_sync, probe, abandon_on_cancel=True)
        store = ask.session_store
        if store is not None:
            await anyio.to_thread.run_sync(
                store.count_sync, ask.site.site_id, "readiness-probe", abandon_on_cancel=True
            )
        return True

    async def rate_limiter() -> bool:
        return await anyio.to_thread.run_sync(limiter.ping, abandon_on_cancel=True)

    # The limiter does not gate: it fails open to local buckets (see operations).
    return [
        Probe("index", index),
        Probe("sessions", sessions),
        Probe("limiter", rate_limiter, False),
    ]


def build_app(config: AskServeConfig) -> Starlette:
    """The configured app; raises StartupError with a one-line reason."""
    also: MetricsSink | None = None
    if config.metrics_file is not None:
        try:
            also = JsonLinesMetrics(config.metrics_file)
        except OSError as error:
            raise StartupError(f"Metrics file {config.metrics_file}: {error.strerror}.") from error
    metrics = PrometheusMetrics(also=also)
    if not config.shutdown_deadline >= 0:
        raise StartupError("--shutdown-deadline must be >= 0 seconds.")
    rate_limiter, auth_failure_limiter = _limiters(config)
    try:
        source = answer_source(config)
        site, notes = site_settings(config, source)
        app = create_ask_app(
            site,
            path=config.path,
            retriever=chunk_retriever(source.chunks, synonyms=site.synonyms),
            generator=_generator(config),
            authenticate=_authenticator(config),
            rate_limiter=rate_limiter,
            auth_failure_limiter=auth_failure_limiter,
            session_store=SessionStore(
                config.sessions_db,
                ttl_seconds=config.session_ttl,
                max_sessions_per_subject=config.max_sessions_per_subject,
            ),
            metrics=metrics,
            cors_origins=config.cors_origins,
            max_streams_per_client=config.max_streams_per_client,
            body_timeout=config.body_timeout,
            question_log=_question_log(config),
        )
        turn_store = _turn_store(config)
    except (SiteConfigError, ValueError, OSError) as error:
        raise StartupError(str(error)) from error
    if not config.turn_path.startswith("/") or config.turn_path == config.path:
        raise StartupError("--turn-path must be a path starting with / and differ from --path.")
    if not (config.turn_lease > 0 and math.isfinite(config.turn_lease)):
        raise StartupError("--turn-lease must be a positive number of seconds.")
    turn = mount_turn(app, turn_store, path=config.turn_path, lease_seconds=config.turn_lease)
    drain = Drain()
    drain.background.append(turn.drain)
    log = app.state.ask.question_log
    if log is not None:  # after the turns (they log as they end): what is queued is written
        metrics.watch_question_log(log)

        async def close_log() -> None:
            await anyio.to_thread.run_sync(log.close, abandon_on_cancel=True)

        drain.background.append(close_log)
    app.state.ask.shutdown = drain
    operations = Operations(metrics, drain, _readiness_probes(app, turn_store, rate_limiter))
    mount_operations(
        app,
        operations,
        routes={config.path: "ask", config.turn_path: "turn"},
        prefixes={config.turn_path.rstrip("/") + "/": "turn_resume"},
    )
    app.state.source = source
    app.state.startup_notes = notes
    return app


def answer_source(config: AskServeConfig) -> SiteSource:
    """The chunks to answer from: `index_file`, else `site_dir`, else `docs` (SiteSourceError)."""
    if config.index_file is not None and config.site_dir is not None:
        raise StartupError("Give --index or --site-dir, not both.")
    if config.index_file is not None:
        return from_index_file(config.index_file)
    if config.site_dir is not None:
        return from_site_dir(config.site_dir, base_path=config.base_path)
    return from_docs_folder(config.docs, config.exclude)


def site_settings(config: AskServeConfig, source: SiteSource) -> tuple[SiteSettings, list[str]]:
    """The site config given, or `site.json` beside the Markdown, or one derived (with a note)."""
    site_file = config.site
    if site_file is None and config.site_dir is None and config.index_file is None:
        beside = config.docs / "site.json"
        site_file = beside if beside.is_file() else None
    if site_file is not None:
        return load_site_config(site_file), []
    derived = load_site_config(derived_site_config(source.site_name))
    note = (
        f'No site config: answering as "{derived.assistant_name}" from one corpus '
        f"({derived.corpus_id}); --site FILE sets the names, limits and synonyms."
    )
    return derived, [note]


def uvicorn_config(
    app: Starlette,
    config: AskServeConfig,
    *,
    log_level: str = "warning",
    timeout_graceful_shutdown: int | None = None,
) -> uvicorn.Config:
    """The uvicorn settings every server of this project runs with (see the module doc).

    Proxy headers (`X-Forwarded-For`, `X-Forwarded-Proto`) are read only when
    `config.trusted_proxies` lists addresses or networks; uvicorn's own default
    would trust loopback and the FORWARDED_ALLOW_IPS environment variable.
    """
    if config.request_read_timeout <= 0 or config.limit_concurrency < 1:
        raise StartupError("The request read timeout and the concurrency limit must be positive.")
    trusted = [_trusted_proxy(entry) for entry in config.trusted_proxies]
    return uvicorn.Config(
        app,
        log_level=log_level,
        lifespan="off",
        access_log=False,
        http=guarded_h11_protocol(config.request_read_timeout),
        limit_concurrency=config.limit_concurrency,
        timeout_keep_alive=SERVER_KEEP_ALIVE_SECONDS,
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted if trusted else [],
        timeout_graceful_shutdown=timeout_graceful_shutdown,
    )


def _trusted_proxy(entry: str) -> str:
    """A trusted-proxy entry as uvicorn reads it: an IP address or network, checked here.

    uvicorn would keep anything else as a literal that never matches (or, for
    `*`, trust every client), so a typo would silently change who is trusted.
    """
    text = entry.strip()
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise StartupError(
            f"--trusted-proxy {entry!r} is not an IP address or network "
            "(such as 10.0.0.5 or 10.0.0.0/8)."
        ) from None
    return str(network.network_address) if network.num_addresses == 1 else str(network)


def serve_ask(
    config: AskServeConfig,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    log_level: str = "warning",
) -> None:
    """Serve until Ctrl-C. Prints the URL (with the real port when `port` is 0)."""
    app = build_app(config)
    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    source: SiteSource = app.state.source
    # The URL first: scripts (the bench, the tests) read it from the first line.
    print(f"Ask backend: http://{shown_host}:{bound_port}{config.path}", flush=True)
    print(f"Turn endpoint: http://{shown_host}:{bound_port}{config.turn_path}", flush=True)
    print(f"Answering from {source.origin} ({source.pages} pages).", flush=True)
    for note in app.state.startup_notes:
        print(note, flush=True)
    # uvicorn cancels what is left SHUTDOWN_FLUSH_SECONDS after the drain deadline.
    grace = math.ceil(config.shutdown_deadline + SHUTDOWN_FLUSH_SECONDS)
    settings = uvicorn_config(app, config, log_level=log_level, timeout_graceful_shutdown=grace)
    server = DrainingServer(settings, app.state.operations.drain, config.shutdown_deadline)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentskit-web serve-ask",
        description="Serve the reference Ask backend over a docs folder.",
    )
    add = parser.add_argument
    add(
        "--site",
        type=Path,
        default=None,
        help="site config (JSON); default: site.json in --docs, else derived from the site",
    )
    add("--docs", type=Path, default=Path("docs"), help="folder of Markdown/HTML pages")
    add(
        "--site-dir",
        type=Path,
        default=None,
        help="a built site (MkDocs site/, Sphinx _build/html...): answer citing its URLs",
    )
    add("--index", type=Path, default=None, help="a site index file (agentskit-web index)")
    add(
        "--base-path",
        default=None,
        help="the path --site-dir is published below, e.g. /docs/ (default: its index's, or /)",
    )
    add("--host", default="127.0.0.1")
    add("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    add("--path", default=DEFAULT_PATH, help="URL path of the Ask endpoint")
    add("--turn-path", default=DEFAULT_TURN_PATH, help="URL path of the turn endpoint")
    add("--auth", choices=("anonymous", "bearer"), default="anonymous")
    add("--tokens-file", type=Path, help="bearer mode: lines of 'subject token'")
    add("--rate-capacity", type=int, default=DEFAULT_CAPACITY, help="burst per client")
    add("--rate-refill", type=float, default=DEFAULT_REFILL_PER_SECOND, help="tokens/second")
    add("--metrics-file", type=Path, help="append privacy-safe metrics as JSON lines")
    add("--sessions-db", default=":memory:", help="SQLite file for saved conversations")
    add(
        "--sessions",
        default="sqlite",
        help="where turn sessions live: sqlite (the --sessions-db file) or "
        "postgresql://user@host:port/db (shared by every instance)",
    )
    add(
        "--session-ttl",
        type=float,
        default=SESSION_TTL_SECONDS,
        help="seconds a saved conversation is kept after its last answer",
    )
    add(
        "--max-sessions-per-subject",
        type=int,
        default=SESSION_MAX_PER_SUBJECT,
        help="saved conversations kept per caller (Ask: all anonymous readers are one caller;"
        " turns: per address or IPv6 /64, at most 1/500 of --max-sessions-total)",
    )
    add(
        "--max-sessions-total",
        type=int,
        default=TURN_STORE_MAX_SESSIONS_TOTAL,
        help="turn sessions kept over all callers; past it new ones are refused (503)",
    )
    add(
        "--rate-limit",
        default="memory",
        help="where rate-limit buckets live: memory (this process) or redis://host:port/db "
        "(shared by every instance)",
    )
    add(
        "--shutdown-deadline",
        type=float,
        default=SHUTDOWN_DEADLINE_SECONDS,
        help="seconds running answers get after SIGTERM before they end as interrupted",
    )
    add(
        "--turn-lease",
        type=float,
        default=TURN_LEASE_SECONDS,
        help="seconds a running turn's lease lasts without a save; after it, any instance "
        "ends the turn as interrupted",
    )
    add(
        "--question-log",
        default=None,
        help="keep what readers ask in this SQLite file, or in PostgreSQL "
        "(postgresql://user@host:port/db, shared by every instance): day, question masked, "
        "verdict, cited pages, feedback; no IP, client or session (docs/security.md). "
        "Default: off",
    )
    add(
        "--question-log-days",
        type=int,
        default=QUESTION_LOG_DEFAULT_DAYS,
        help="days the question log keeps (older rows are deleted on each write; "
        "default %(default)s)",
    )
    add("--generator", choices=("extractive", "openai"), default="extractive")
    add("--openai-url", help="OpenAI-compatible API root, e.g. http://127.0.0.1:8080/v1")
    add("--openai-model", help="model name sent to the endpoint")
    add(
        "--openai-allow-http",
        action="store_true",
        help="allow a plain-http --openai-url on a host other than loopback (the key is sent)",
    )
    add("--api-key-env", default=DEFAULT_API_KEY_ENV, help="environment variable with the key")
    add("--pace", type=float, default=DEMO_PACE_SECONDS, help="seconds between extractive deltas")
    add("--cors-origin", action="append", default=[], help="allow this browser origin (repeat)")
    add("--exclude", action="append", default=[], help="glob of doc files to skip (repeat)")
    add(
        "--trusted-proxy",
        action="append",
        default=[],
        help="address or network of a reverse proxy whose X-Forwarded-For is believed (repeat)",
    )
    add(
        "--max-streams-per-client",
        type=int,
        default=ASK_MAX_STREAMS_PER_CLIENT,
        help="requests one client may have in flight at once",
    )
    add(
        "--body-timeout",
        type=float,
        default=ASK_BODY_TIMEOUT_SECONDS,
        help="seconds a request body may take to arrive (408 after)",
    )
    add(
        "--request-read-timeout",
        type=float,
        default=REQUEST_READ_TIMEOUT_SECONDS,
        help="seconds a whole request (head and body) may take to arrive on a connection",
    )
    add(
        "--limit-concurrency",
        type=int,
        default=SERVER_LIMIT_CONCURRENCY,
        help="open connections or running requests beyond which new requests get 503",
    )
    return parser


def config_from_args(args: argparse.Namespace) -> AskServeConfig:
    return AskServeConfig(
        site=args.site,
        docs=args.docs,
        site_dir=args.site_dir,
        index_file=args.index,
        base_path=args.base_path,
        path=args.path,
        turn_path=args.turn_path,
        auth=args.auth,
        tokens_file=args.tokens_file,
        rate_capacity=args.rate_capacity,
        rate_refill=args.rate_refill,
        metrics_file=args.metrics_file,
        sessions_db=args.sessions_db,
        sessions=args.sessions,
        generator=args.generator,
        openai_url=args.openai_url,
        openai_model=args.openai_model,
        api_key_env=args.api_key_env,
        pace_seconds=args.pace,
        cors_origins=list(args.cors_origin),
        exclude=list(args.exclude),
        trusted_proxies=list(args.trusted_proxy),
        max_streams_per_client=args.max_streams_per_client,
        body_timeout=args.body_timeout,
        request_read_timeout=args.request_read_timeout,
        limit_concurrency=args.limit_concurrency,
        session_ttl=args.session_ttl,
        max_sessions_per_subject=args.max_sessions_per_subject,
        max_sessions_total=args.max_sessions_total,
        openai_allow_http=args.openai_allow_http,
        rate_limit=args.rate_limit,
        shutdown_deadline=args.shutdown_deadline,
        turn_lease=args.turn_lease,
        question_log=args.question_log,
        question_log_days=args.question_log_days,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry: `agentskit-web serve-ask [flags]` (also `python -m ...ask_serve`)."""
    args: Any = _parser().parse_args(argv)
    try:
        serve_ask(config_from_args(args), args.host, args.port)
    except StartupError as error:
        print(f"agentskit-web serve-ask: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"agentskit-web serve-ask: cannot listen: {error.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
