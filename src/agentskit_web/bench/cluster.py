"""Several real `serve-ask` instances behind a real haproxy, for `bench scale` and the tests.

`LocalCluster(folder, instances=3).start()` runs, all on 127.0.0.1:

- a `redis-server` (`LocalRedis`) holding the shared rate-limit buckets;
- the instances (`python -m agentskit_web.server.ask_serve`, each on a port it
  picks) sharing one turn session store and that Redis, with the balancer as
  trusted proxy. The store is PostgreSQL (`--sessions postgresql://...`) when
  `sessions` is such a URL (a database the caller made, e.g. on a
  `LocalPostgres`), else one SQLite file in the folder shared by every
  instance (`--sessions-db`), which works on one machine only;
- Debian's haproxy (`haproxy -db -f <config>`) in front on a free port, its
  configuration rendered by `server.haproxy_config` (the one docs/deployment.md
  shows), with an admin socket in the folder from which `states()` reads what
  the health checks think of each instance;
- optionally a static site (`site=`): the built dist/ behind the same frontend,
  so a page and its Ask/turn endpoints share one origin.

`kill(i)` is SIGKILL (the process is gone, mid-answer or not), `terminate(i)`
is SIGTERM (the graceful drain). `stop()` ends everything it started.
"""

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from ..server.haproxy_config import Upstream, haproxy_config
from ..server.static import StaticSite
from ..server.turn_session_port import TurnSessionStorePort, is_postgres_url
from ..server.turn_store import TurnSessionStore
from .local_redis import LocalRedis

INSTANCE_START_SECONDS: Final = 60.0
"""Start-up imports of three instances at once on a loaded 2-core machine take seconds."""
BALANCER_START_SECONDS: Final = 20.0
"""How long haproxy may take until its health checks see every instance up."""
HAPROXY_PATHS: Final = ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def haproxy_binary() -> str:
    """Debian's haproxy (in /usr/sbin, which a user's PATH may lack); RuntimeError if missing."""
    found = shutil.which("haproxy") or next(
        (path for path in HAPROXY_PATHS if os.access(path, os.X_OK)), None
    )
    if found is None:
        raise RuntimeError("haproxy is not installed: `make haproxy` installs Debian's package.")
    return found


@dataclass(slots=True)
class Instance:
    """One `serve-ask` child process; `root` is its own address (not the balancer's)."""

    name: str
    command: list[str]
    process: subprocess.Popen[str] | None = None
    root: str = ""
    port: int = 0

    def spawn(self) -> None:
        self.process = subprocess.Popen(
            self.command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def ready(self) -> None:
        """Read the URL line; RuntimeError with its stderr if the process did not start."""
        assert self.process is not None and self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("Ask backend: "):
            self.kill()
            error = self.process.stderr.read() if self.process.stderr else ""
            raise RuntimeError(f"instance {self.name} did not start: {line!r} {error}")
        url = line.removeprefix("Ask backend: ").strip()
        self.root = url.rsplit("/api/ask", 1)[0]
        self.port = int(self.root.rsplit(":", 1)[1])

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: nothing in the process runs again."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.wait()

    def terminate(self) -> None:
        """SIGTERM: the drain (`--shutdown-deadline`)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)


@dataclass(slots=True)
class LocalCluster:
    """Redis, `instances` backends on one session store, haproxy in front (see the module doc)."""

    folder: Path
    instances: int = 3
    site_file: Path | None = None
    docs: Path | None = None
    sessions: str | None = None
    """The shared turn session store: a postgresql:// URL, else an SQLite file in `folder`."""
    flags: tuple[str, ...] = ()
    """More `serve-ask` flags for every instance (pace, lease, rate budget...)."""
    member_flags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Flags for one instance by name (`ask1`...), after `flags` (so they win)."""
    site: Path | None = None
    """A built site to serve behind the same frontend (everything not under /api/)."""
    redis: LocalRedis | None = None
    members: list[Instance] = field(default_factory=list)
    balancer: subprocess.Popen[bytes] | None = None
    port: int = 0
    _site_server: StaticSite | None = None

    @property
    def url(self) -> str:
        """The balancer's origin, e.g. http://127.0.0.1:41234."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def stats_socket(self) -> Path:
        return self.folder / "haproxy.sock"

    @property
    def config_file(self) -> Path:
        return self.folder / "haproxy.cfg"

    def store_flags(self) -> list[str]:
        """The `serve-ask` flags naming the shared turn session store."""
        if self.sessions is not None and is_postgres_url(self.sessions):
            return ["--sessions", self.sessions]
        return ["--sessions-db", self.sessions or str(self.folder / "sessions.sqlite3")]

    def open_store(self) -> TurnSessionStorePort:
        """The shared turn store, opened by this process too (close it after use)."""
        if self.sessions is not None and is_postgres_url(self.sessions):
            from ..server.turn_store_postgres import PostgresTurnSessionStore

            return PostgresTurnSessionStore(self.sessions)
        return TurnSessionStore(self.sessions or str(self.folder / "sessions.sqlite3"))

    def start(self) -> "LocalCluster":
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.redis = LocalRedis(self.folder)
        self.redis.start()
        for number in range(1, self.instances + 1):
            command = [
                sys.executable, "-m", "agentskit_web.server.ask_serve",
                "--host", "127.0.0.1", "--port", "0", *self.store_flags(),
                "--rate-limit", self.redis.url, "--trusted-proxy", "127.0.0.1",
            ]  # fmt: skip
            if self.site_file is not None:
                command += ["--site", str(self.site_file)]
            if self.docs is not None:
                command += ["--docs", str(self.docs)]
            name = f"ask{number}"
            own = self.member_flags.get(name, ())
            self.members.append(Instance(name, [*command, *self.flags, *own]))
        # All at once (they import in parallel); the store's schema set-up waits on its lock.
        for member in self.members:
            member.spawn()
        for member in self.members:
            member.ready()
        site_upstream = None
        if self.site is not None:
            static = StaticSite(self.site)
            static.__enter__()
            self._site_server = static
            site_upstream = Upstream("site", "127.0.0.1", int(static.url.rsplit(":", 1)[1]))
        self.port = free_port()
        upstreams = [Upstream(m.name, "127.0.0.1", m.port) for m in self.members]
        text = haproxy_config(
            f"127.0.0.1:{self.port}",
            upstreams,
            site=site_upstream,
            stats_socket=str(self.stats_socket),
        )
        self.config_file.write_text(text, encoding="utf-8")
        log = (self.folder / "haproxy.log").open("wb")
        self.balancer = subprocess.Popen(
            [haproxy_binary(), "-db", "-f", str(self.config_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.wait_states({m.name: "UP" for m in self.members}, BALANCER_START_SECONDS)

    # -- what the balancer sees ------------------------------------------------

    def admin(self, command: str) -> str:
        """One command on haproxy's admin socket (`show stat`, `disable server ask/ask2`...)."""
        if self.balancer is None or self.balancer.poll() is not None:
            raise RuntimeError(f"haproxy is not running: {self.log()}")
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(2)
            sock.connect(str(self.stats_socket))
            sock.sendall(command.encode() + b"\n")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        return data.decode()

    def only(self, name: str) -> None:
        """Send every request to `name` (the others in maintenance) until `all_in()`."""
        for member in self.members:
            if member.running:
                self.set_in_rotation(member.name, member.name == name)

    def all_in(self) -> None:
        """Every instance still running back in rotation."""
        for member in self.members:
            if member.running:
                self.set_in_rotation(member.name, True)

    def set_in_rotation(self, name: str, enabled: bool) -> None:
        """Put an instance in or out of the balancer's rotation (maintenance mode)."""
        self.admin(f"{'enable' if enabled else 'disable'} server ask/{name}")
        self.wait_states({name: "UP" if enabled else "MAINT"}, BALANCER_START_SECONDS)

    def states(self) -> dict[str, str]:
        """Each instance's state as haproxy's health checks have it (UP, DOWN, MAINT...)."""
        try:
            text = self.admin("show stat")
        except OSError:
            return {}
        lines = text.splitlines()
        if not lines or not lines[0].startswith("# "):
            return {}
        header = lines[0][2:].split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
        return {
            row["svname"]: row["status"].split(" ")[0]
            for row in rows
            if row.get("pxname") == "ask" and row.get("svname") not in ("FRONTEND", "BACKEND")
        }

    def wait_states(self, wanted: dict[str, str], timeout: float) -> float:
        """Seconds until every named instance has the wanted state; RuntimeError after timeout."""
        started = time.monotonic()
        seen: dict[str, str] = {}
        while time.monotonic() - started < timeout:
            seen = self.states()
            if all(seen.get(name) == state for name, state in wanted.items()):
                return time.monotonic() - started
            time.sleep(0.05)
        raise RuntimeError(f"haproxy states {seen}, wanted {wanted}; log: {self.log()}")

    def log(self) -> str:
        path = self.folder / "haproxy.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    # -- per instance --------------------------------------------------------------

    def member(self, name: str) -> Instance:
        return next(m for m in self.members if m.name == name)

    def counters(self, name: str) -> dict[str, float]:
        """One instance's Prometheus samples (read from the instance itself, not the balancer)."""
        text = httpx.get(self.member(name).root + "/metrics", timeout=10).text
        samples: dict[str, float] = {}
        for line in text.splitlines():
            match = re.fullmatch(r"([a-z_]+(?:\{[^}]*\})?) (\S+)", line)
            if match and not line.startswith("#"):
                samples[match.group(1)] = float(match.group(2))
        return samples

    def stop(self) -> None:
        if self.balancer is not None and self.balancer.poll() is None:
            self.balancer.terminate()
            try:
                self.balancer.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.balancer.kill()
                self.balancer.wait()
        for member in self.members:
            member.kill()
        if self._site_server is not None:
            with contextlib.suppress(Exception):
                self._site_server.__exit__(None, None, None)
            self._site_server = None
        if self.redis is not None:
            self.redis.stop()

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


__all__ = ["Instance", "LocalCluster", "free_port", "haproxy_binary"]
