"""Terminal output shared by `agentskit-web ask` and `agentskit-web turn`.

Both print an answer's text records as they arrive and its components (the
source list, or any other by its semantic fallback) after it, every piece of
untrusted text made safe for a terminal first.
"""

import re
from typing import Any, TextIO

from ..protocol.content import ASSISTANT_CONTENT_PREFIX, decode_assistant_content

_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def terminal_safe(text: str) -> str:
    """Untrusted text made safe to print: no escape sequences or other controls, no lone surrogates.

    An answer or a source title could otherwise drive the terminal (ANSI/OSC
    sequences can retitle windows, fake links or hide text).
    """
    cleaned = _TERMINAL_CONTROLS.sub("", text)
    return cleaned.encode("utf-8", "replace").decode("utf-8")


def records(content: str) -> list[dict[str, Any]]:
    """The parts of one chunk's records (each chunk holds whole records)."""
    body = content.removeprefix(ASSISTANT_CONTENT_PREFIX)
    decoded = decode_assistant_content(ASSISTANT_CONTENT_PREFIX + body)
    return list(decoded.parts) if decoded.ok else []


def source_lines(frame: dict[str, Any]) -> list[str]:
    if frame.get("componentKey") != "source-list":
        summary = frame.get("fallback", {}).get("summary", "")
        return [f"[{frame.get('componentKey')}] {summary}"]
    lines = [f"{frame['props'].get('label', 'Sources')}:"]
    for source in frame["props"].get("sources", []):
        url = source.get("url")
        lines.append(f"  - {source['title']}" + (f" <{url}>" if url else ""))
    return lines


class AnswerPrinter:
    """Writes text parts as they arrive and keeps components for the end."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.frames: list[dict[str, Any]] = []
        self.wrote_text = False

    def chunk(self, content: str) -> None:
        for part in records(content):
            if part["kind"] == "text":
                self.out.write(terminal_safe(part["text"]))
                self.out.flush()
                self.wrote_text = True
            else:
                self.frames.append(part["frame"])

    def close(self) -> None:
        if self.wrote_text:
            self.out.write("\n")
        for frame in self.frames:
            self.out.write(terminal_safe("\n" + "\n".join(source_lines(frame)) + "\n"))
        self.out.flush()


def endpoint_argument_error(url: str, timeout: float) -> str | None:
    """The usage error of the URL and timeout `ask` and `turn` both take, or None."""
    if not url.lower().startswith(("http://", "https://")):
        return "URL must be an absolute http(s) URL"
    if not timeout > 0:
        return "--timeout must be positive"
    return None
