"""The hostile presets `ask_server.preset(name)` answers with: the project's own corpora.

They are the streams our conformance and browser tests throw at the widget
(byte-for-byte copies of fixtures/ in presets/, since an installed package has no
fixtures/; tests/test_testing_plugin.py fails when a copy and its original
differ), so a site's suite can check
that its page, its CSP and its styles keep the widget sane under them:

- `hostile stream`: fixtures/ask/hostile.ndjson as one body (lines that are not
  JSON, CRLF, invalid UTF-8, a 1,000-deep array, NaN, an off-origin cite, a BOM…);
- `error midstream`: text, then an `error` event, then text after it;
- every streamed case of fixtures/hostile_render.json by its name (`script tag
  in text`, `markdown link javascript`, `cite protocol relative path dropped`…):
  its events as NDJSON lines.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

STREAM_PRESETS = {
    "hostile stream": "hostile.ndjson",
    "error midstream": "error_midstream.ndjson",
}
RENDER_CORPUS = "hostile_render.json"
PRESET_FILES = (*STREAM_PRESETS.values(), RENDER_CORPUS)


def _read(name: str) -> bytes:
    return files(__package__ or "agentskit_web.testing").joinpath("presets", name).read_bytes()


def _line(event: Any) -> bytes:
    return (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


@cache
def presets() -> dict[str, bytes]:
    """Every preset's name and the exact body it sends, in a stable order."""
    found = {name: _read(file) for name, file in STREAM_PRESETS.items()}
    for case in json.loads(_read(RENDER_CORPUS))["cases"]:
        events = case["input"].get("events")
        if events is not None:
            found[str(case["name"])] = b"".join(_line(event) for event in events)
    return found


def preset_names() -> tuple[str, ...]:
    """The names `ask_server.preset(name)` accepts."""
    return tuple(presets())
