"""Debian's PostgreSQL on loopback in a temporary folder: for the scale bench and the tests.

`LocalPostgres()` finds the server binaries (`initdb`, `pg_ctl`: on PATH, else
the newest `/usr/lib/postgresql/<version>/bin`, where Debian's `postgresql`
package puts them without linking them into PATH); `start()` makes a cluster
in a fresh temporary folder with `initdb` (trust authentication, loopback
only, a superuser named `agentskit`), starts it with `pg_ctl` on 127.0.0.1 on
a free port and waits until it accepts connections; `stop()` stops it and
removes the folder. `create_database()` gives each test a database of its own.

PostgreSQL refuses to run as root (initdb and postgres both exit). When this
process is root (CI and the team's machines are), both commands run as the
`postgres` system user that Debian's package creates (or `nobody` when there
is none), through util-linux's `setpriv`, which needs no PAM session or
password; the temporary folder is made theirs. As any other user they run
as that user.
"""

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Final

POSTGRES_START_SECONDS: Final = 60.0
"""How long `pg_ctl start` may take until the server accepts connections (about 1 s)."""
SUPERUSER: Final = "agentskit"
START_ATTEMPTS: Final = 3
"""Fresh ports a start tries (another process may take a free port first)."""
FAST_SETTINGS: Final = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
"""For tests: durability off (the folder is thrown away); the bench keeps the defaults."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_binaries() -> Path:
    """The folder holding `initdb` and `pg_ctl` (RuntimeError naming the make target if none)."""
    on_path = shutil.which("initdb")
    if on_path is not None and shutil.which("pg_ctl") is not None:
        return Path(on_path).resolve().parent

    def version(path: str) -> int:
        name = Path(path).parent.parent.name
        return int(name) if name.isdigit() else 0

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if found:
        return Path(found[-1]).parent
    raise RuntimeError(
        "PostgreSQL's server is not installed: `make postgresql` installs Debian's package."
    )


def _unprivileged_user() -> pwd.struct_passwd | None:
    """Who runs the server when this process is root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise RuntimeError("Running as root needs a 'postgres' or 'nobody' user for PostgreSQL.")


class LocalPostgres:
    """One PostgreSQL cluster on 127.0.0.1; `url` is what `--sessions` takes."""

    def __init__(self, *, durable: bool = False) -> None:
        self.bin = server_binaries()
        self.durable = durable
        self.user = _unprivileged_user()
        self.folder: Path | None = None
        self.port = 0
        self.url = ""

    def _command(self, *args: str) -> list[str]:
        if self.user is None:
            return list(args)
        return [
            "setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}",
            "--clear-groups", *args,
        ]  # fmt: skip

    def _run(self, *args: str, timeout: float = POSTGRES_START_SECONDS) -> None:
        done = subprocess.run(
            self._command(*args),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd="/",
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed: {done.stderr.strip()[-2000:]}")

    def start(self) -> "LocalPostgres":
        """initdb in a fresh folder, then pg_ctl start on a free loopback port."""
        folder = Path(tempfile.mkdtemp(prefix="agentskit-postgres-"))
        self.folder = folder
        if self.user is not None:
            os.chown(folder, self.user.pw_uid, self.user.pw_gid)
        data = folder / "data"
        self._run(
            str(self.bin / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
            "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        for _ in range(START_ATTEMPTS):
            self.port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories=''"
                + ("" if self.durable else " " + FAST_SETTINGS)
            )
            try:
                self._run(
                    str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"),
                    "-o", options, "-w", "-t", str(int(POSTGRES_START_SECONDS)), "start",
                )  # fmt: skip
            except RuntimeError:
                continue
            self.url = f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"
            return self
        log = (folder / "server.log").read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"PostgreSQL did not start on 127.0.0.1: {log}")

    def create_database(self) -> str:
        """A new, empty database on this server; returns its URL."""
        import psycopg

        name = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self.url.rsplit("/", 1)[0] + "/" + name

    def stop(self) -> None:
        """pg_ctl stop, then remove the folder.

        Immediate mode: no shutdown checkpoint (the folder is thrown away), so
        stopping a cluster that served hundreds of test databases takes no
        longer than stopping an empty one.
        """
        folder, self.folder = self.folder, None
        if folder is None:
            return
        data = folder / "data"
        if (data / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self._run(
                    str(self.bin / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"
                )
        shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> "LocalPostgres":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["LocalPostgres", "server_binaries"]
