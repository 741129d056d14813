"""SIGTERM on a real `serve-ask` process: stop accepting, let answers finish, end the rest.

Each test starts the backend as its own uvicorn process on 127.0.0.1 (an
ephemeral port), opens a streaming Ask request, sends SIGTERM once the first
text delta arrived, and watches both the open stream and the listening port.
"""

import json
import socket
import time
from pathlib import Path

import httpx
import pytest

from _ask_helpers import ask_body
from _backend_process import BackendProcess, write_backend_files
from agentskit_web.server.ask_app import MESSAGES
from agentskit_web.server.ask_serve import AskServeConfig, StartupError, build_app

PROCESS_EXIT_SECONDS = 15.0


def _refuses_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except OSError:
        return True


def _stream_through_sigterm(backend: BackendProcess) -> tuple[list[dict], float, bool]:
    """Events of one answer, seconds from SIGTERM to the stream's end, and whether the
    port refused a new connection while that answer was still streaming."""
    events: list[dict] = []
    refused_meanwhile = False
    signalled = 0.0
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", backend.url, json=ask_body()) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line:
                continue
            events.append(json.loads(line))
            if len(events) == 1:
                assert events[0]["type"] == "text"
                backend.terminate()
                signalled = time.monotonic()
                time.sleep(0.3)  # uvicorn closes its listening socket on the next tick
                refused_meanwhile = _refuses_connections(backend.port)
    return events, time.monotonic() - signalled, refused_meanwhile


def test_an_answer_running_at_sigterm_finishes_and_new_connections_are_refused(
    tmp_path: Path,
) -> None:
    site_file, docs = write_backend_files(tmp_path)
    with BackendProcess(site_file, docs, "--pace", "0.2", "--shutdown-deadline", "15") as backend:
        events, after_signal, refused = _stream_through_sigterm(backend)
        assert refused, "the instance still accepted connections after SIGTERM"
        assert [e["type"] for e in events][-2:] == ["tool", "done"]
        assert not any(e["type"] == "error" for e in events)
        assert after_signal < 15
        assert backend.wait(PROCESS_EXIT_SECONDS) == 0


def test_an_answer_past_the_deadline_ends_as_a_retryable_interruption(tmp_path: Path) -> None:
    site_file, docs = write_backend_files(tmp_path)
    deadline = 1.5
    # Nine deltas a second apart: the answer would need ~9 s, the deadline is 1.5 s.
    flags = ("--pace", "1.0", "--shutdown-deadline", str(deadline))
    with BackendProcess(site_file, docs, *flags) as backend:
        events, after_signal, refused = _stream_through_sigterm(backend)
        assert refused
        last = events[-1]
        assert last == {
            "type": "error",
            "code": "ASK_INTERNAL",
            "message": MESSAGES["shutdown"],
            "retryable": True,
        }
        assert not any(e["type"] == "done" for e in events)
        assert deadline - 0.2 <= after_signal < deadline + 2.0
        assert backend.wait(PROCESS_EXIT_SECONDS) == 0


@pytest.mark.parametrize("deadline", [-1.0, float("nan")])
def test_a_negative_deadline_is_a_start_up_error(tmp_path: Path, deadline: float) -> None:
    site_file, docs = write_backend_files(tmp_path)
    config = AskServeConfig(site=site_file, docs=docs, shutdown_deadline=deadline)
    with pytest.raises(StartupError, match="shutdown-deadline"):
        build_app(config)
