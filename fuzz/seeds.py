"""Seed corpora from fixtures/: every conformance case of a target's subjects, in fuzz form.

A case's input is written the way `targets.as_value` reads it back (a mode
byte, then the payload), so the fuzzer starts from inputs that reach deep
into each decoder instead of rediscovering JSON. The markdown target also
starts from the project's own docs pages. Inputs that once failed live in
fixtures/fuzz/<target>/ and are seeds too, so a fixed bug stays covered.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from agentskit_web.protocol.content import encode_assistant_content

from .targets import MODE_BYTES, MODE_JSON, MODE_TEXT, TARGETS

ROOT: Final = Path(__file__).resolve().parent.parent
FIXTURES: Final = ROOT / "fixtures"
FAILURES: Final = FIXTURES / "fuzz"
DOCS: Final = ROOT / "docs"
STREAM_CHUNK_SEED: Final = 63  # chunk size 64: splits lines and UTF-8 characters alike


def failures_dir(target: str) -> Path:
    """Where the inputs that failed `target` are kept (and replayed by the tests)."""
    return FAILURES / target


def _case_bytes(case: dict[str, Any]) -> bytes | None:
    if "input" in case:
        return bytes([MODE_JSON]) + json.dumps(case["input"], ensure_ascii=False).encode()
    if "inputText" in case:
        return bytes([MODE_TEXT]) + str(case["inputText"]).encode("utf-8", "surrogatepass")
    if "inputBytesHex" in case:
        return bytes([MODE_BYTES]) + binascii.unhexlify(case["inputBytesHex"])
    return None


def _stream_bytes(case: dict[str, Any]) -> bytes | None:
    if "chunksHex" in case:
        body = b"".join(binascii.unhexlify(chunk) for chunk in case["chunksHex"])
    elif "stream" in case:
        body = (FIXTURES / case["stream"]).read_bytes()
    elif isinstance(case.get("input"), str):
        body = case["input"].encode("utf-8", "surrogatepass")
    elif "inputText" in case:
        body = case["inputText"].encode("utf-8", "surrogatepass")
    else:
        return None
    return bytes([STREAM_CHUNK_SEED]) + body


def _render_bytes(case: dict[str, Any]) -> bytes | None:
    data = case.get("input")
    if not isinstance(data, dict):
        return None
    if "content" in data:
        return str(data["content"]).encode("utf-8", "surrogatepass")
    if "events" in data:
        deltas = [e.get("delta", "") for e in data["events"] if isinstance(e, dict)]
        return "".join(d for d in deltas if isinstance(d, str)).encode("utf-8", "surrogatepass")
    try:
        return encode_assistant_content(data.get("parts", [])).encode("utf-8", "surrogatepass")
    except Exception:  # a case of deliberately invalid parts seeds nothing
        return None


def _converter(target: str) -> Any:
    if target == "ask_event_decoder":
        return _stream_bytes
    if target == "markdown_view":
        return _render_bytes
    return _case_bytes


def seeds(target: str) -> Iterator[bytes]:
    """Every seed of `target`: its fixture cases, its past failures, docs pages for markdown."""
    subjects = set(TARGETS[target].subjects)
    convert = _converter(target)
    for path in sorted(FIXTURES.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("subject") not in subjects:
            continue
        for case in document["cases"]:
            seed = convert(case)
            if seed:
                yield seed
    if target == "markdown_view":
        for page in sorted(DOCS.rglob("*.md")):
            yield page.read_bytes()
    if target == "turn_submit":
        from .turn_submit import bound_seeds

        yield from bound_seeds()
    yield from recorded_failures(target)


def recorded_failures(target: str) -> Iterator[bytes]:
    """The inputs saved under fixtures/fuzz/<target>/ (none is fine)."""
    folder = failures_dir(target)
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.is_file():
                yield path.read_bytes()
