"""Debian's `redis-server` on loopback in a temporary folder: for the scale bench and the tests.

`LocalRedis(folder)` picks a free port; `start()` runs the server with
persistence off, bound to 127.0.0.1, and waits until it answers PING; `stop()`
ends it (and `start()` again brings it back on the same port, which is how
the tests simulate an outage). Nothing is left behind but the folder.
"""

import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Final

REDIS_START_SECONDS: Final = 10.0
"""How long a starting redis-server may take to answer PING (it takes milliseconds)."""
START_ATTEMPTS: Final = 3
"""Fresh ports a first start tries (another process may take a free port first)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class LocalRedis:
    """One `redis-server` process on 127.0.0.1; `url` is what `--rate-limit` takes."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError(
                "redis-server is not installed: `make redis-server` installs Debian's package."
            )
        self.binary = binary
        self.folder = folder
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self._started_once = False

    def start(self) -> None:
        """Run the server and wait for PING; a first start retries on a fresh port.

        The free port is found by binding and releasing it, so another process
        can take it in between; on a busy machine a first start then tries again
        (`START_ATTEMPTS`). A restart keeps its port (clients know that URL).
        """
        attempts = START_ATTEMPTS if not self._started_once else 1
        for attempt in range(attempts):
            if attempt:
                self.port = _free_port()
                self.url = f"redis://127.0.0.1:{self.port}/0"
            if self._run():
                self._started_once = True
                return
        raise RuntimeError(f"redis-server did not start on 127.0.0.1:{self.port}")

    def _run(self) -> bool:
        command = [
            self.binary, "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.folder), "--save", "", "--appendonly", "no",
            "--protected-mode", "yes", "--daemonize", "no", "--loglevel", "warning",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        give_up = time.monotonic() + REDIS_START_SECONDS
        while not _answers_ping(self.port):
            if time.monotonic() > give_up or self.process.poll() is not None:
                self.stop()
                return False
            time.sleep(0.05)
        return True

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
