"""A real `serve-ask` uvicorn process on loopback for the operations and scale tests."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from _ask_helpers import site, write_docs

START_TIMEOUT_SECONDS = 30.0


def write_backend_files(folder: Path, **site_changes: Any) -> tuple[Path, Path]:
    """site.json and a docs folder for a backend under `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    site_file = folder / "site.json"
    site_file.write_text(json.dumps(site(**site_changes)), encoding="utf-8")
    return site_file, write_docs(folder / "docs")


class BackendProcess:
    """`python -m agentskit_web.server.ask_serve` on 127.0.0.1:0; `url` is the Ask endpoint."""

    def __init__(self, site_file: Path, docs: Path, *flags: str, wait: bool = True) -> None:
        command = [
            sys.executable, "-m", "agentskit_web.server.ask_serve",
            "--site", str(site_file), "--docs", str(docs), "--host", "127.0.0.1", "--port", "0",
            *flags,
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.url = self.root = ""
        self.port = 0
        if wait:
            self.ready()

    def ready(self) -> "BackendProcess":
        """Wait for the first stdout line (the URL); start-up imports take seconds on CI."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("Ask backend: "):
            self.kill()
            raise RuntimeError(f"backend did not start: {line!r} {self.stderr()}")
        self.url = line.removeprefix("Ask backend: ").strip()
        self.root = self.url.rsplit("/api/ask", 1)[0]
        self.port = int(self.root.rsplit(":", 1)[1])
        return self

    @classmethod
    def start_many(
        cls, site_file: Path, docs: Path, flag_sets: list[tuple[str, ...]]
    ) -> list["BackendProcess"]:
        """Start every backend at once, then wait for each (they import in parallel)."""
        backends = [cls(site_file, docs, *flags, wait=False) for flags in flag_sets]
        try:
            return [backend.ready() for backend in backends]
        except BaseException:
            for backend in backends:
                backend.kill()
            raise

    def terminate(self) -> None:
        """SIGTERM: the graceful drain."""
        self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        return self.process.stderr.read()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def __enter__(self) -> "BackendProcess":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.kill()
