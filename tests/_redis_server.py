"""Debian's `redis-server` on loopback, started and stopped by the tests themselves.

`redis_server` (function scope) gives each test its own server in a temporary
folder on a free port, with persistence off, so no test sees another's buckets.
The Makefile's test path installs the Debian package when it is missing (like
chromium); a machine without it fails here with that instruction, never skips.
"""

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

REDIS_START_SECONDS = 10.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One `redis-server` process; `stop()` and `start()` simulate an outage on the same port."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError(
                "redis-server is not installed: `make redis-server` (Debian's redis-server) "
                "installs it for the shared rate-limit tests."
            )
        self.binary = binary
        self.folder = folder
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [
            self.binary, "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.folder), "--save", "", "--appendonly", "no",
            "--protected-mode", "yes", "--daemonize", "no", "--loglevel", "warning",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        client = redis.Redis.from_url(self.url, socket_timeout=0.5)
        give_up = time.monotonic() + REDIS_START_SECONDS
        while True:
            try:
                if client.ping():
                    break
            except redis.exceptions.ConnectionError:
                if time.monotonic() > give_up or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        client.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(folder)
    server.start()
    try:
        yield server
    finally:
        server.stop()
