"""Section `weight`: what a cold widget load transfers, compressed, by group.

One cold load of the docs home in a fresh Chromium context records the URLs the
page fetched; each distinct dist/ file is then measured raw, gzip (level 9, what a
pre-compressed .gz holds) and brotli (quality 11, what a pre-compressed .br holds).
The groups are runtime (Pyodide and the lock), stdlib (python_stdlib.zip),
wheels and app (pages, shell, data). The goal is on brotli: <= 7 MB, moonshot <= 5 MB.

A second table compares the archives (python_stdlib.zip and the wheels) as served,
with stored members, against the same archives rewritten with deflated members, so
the choice of member compression is measured in the same run on the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .harness import BOOT_TIMEOUT_MS, INTENT_AT_LOAD, Session, open_session

GOAL_BYTES = 7_000_000
MOONSHOT_BYTES = 5_000_000
GZIP_LEVEL = 9
BROTLI_QUALITY = 11
GROUPS = ("runtime", "stdlib", "wheels", "app")
STDLIB_NAME = "python_stdlib.zip"


@dataclass
class Sizes:
    """Bytes of one group (or archive set) raw, gzip and brotli."""

    files: int = 0
    raw: int = 0
    gzip: int = 0
    brotli: int = 0
    names: list[str] = field(default_factory=list)

    def add(self, name: str, data: bytes) -> None:
        self.files += 1
        self.raw += len(data)
        self.gzip += len(gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0))
        self.brotli += brotli_size(data)
        self.names.append(name)


def brotli_size(data: bytes) -> int:
    """Bytes of brotli at the quality a pre-compressed .br file is made with.

    Quality 11 runs at about 1 MB/s, so sizes are remembered by content hash in
    .cache/weight/ (a second run over unchanged files only hashes them).
    """
    import brotli

    from ..build.files import find_root

    digest = hashlib.sha256(data).hexdigest()
    memo = find_root() / ".cache" / "weight" / f"{digest}-q{BROTLI_QUALITY}"
    if memo.is_file():
        return int(memo.read_text(encoding="utf-8"))
    size = len(brotli.compress(data, quality=BROTLI_QUALITY))
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(str(size), encoding="utf-8")
    return size


def group_of(path: str) -> str:
    """runtime, stdlib, wheels or app, by the file's path under dist/."""
    if path.endswith(STDLIB_NAME):
        return "stdlib"
    if path.endswith(".whl"):
        return "wheels"
    if "/runtime." in f"/{path}":
        return "runtime"
    return "app"


def fetched_files(dist: Path, urls: Iterable[str]) -> list[str]:
    """The distinct dist/ files (relative paths) behind these URLs, in first-fetch order."""
    seen: list[str] = []
    for url in urls:
        path = urlsplit(url).path.lstrip("/") or "index.html"
        if path.endswith("/"):
            path += "index.html"
        if path not in seen and (dist / path).is_file():
            seen.append(path)
    return seen


def measure_groups(dist: Path, files: list[str]) -> dict[str, Sizes]:
    groups = {name: Sizes() for name in GROUPS}
    for path in files:
        groups[group_of(path)].add(path, (dist / path).read_bytes())
    return groups


def deflated_copy(archive: bytes) -> bytes:
    """The same archive with every member deflated (the layout before stored members)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as source, zipfile.ZipFile(buffer, "w") as out:
        for info in source.infolist():
            copy = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            copy.external_attr = info.external_attr
            copy.compress_type = zipfile.ZIP_STORED if info.is_dir() else zipfile.ZIP_DEFLATED
            out.writestr(copy, source.read(info))
    return buffer.getvalue()


def compare_member_compression(dist: Path, files: list[str]) -> dict[str, Sizes]:
    """The fetched archives as served (stored members) and rewritten with deflated members."""
    served, deflated = Sizes(), Sizes()
    for path in files:
        if group_of(path) in ("stdlib", "wheels"):
            data = (dist / path).read_bytes()
            served.add(path, data)
            deflated.add(path, deflated_copy(data))
    return {"stored members": served, "deflated members": deflated}


def record_cold_load(session: Session) -> list[str]:
    """URLs one cold load of the docs home fetches until the widget is ready (intent at load)."""
    context = session.browser.new_context()
    context.add_init_script(INTENT_AT_LOAD)
    urls: list[str] = []
    try:
        page = context.new_page()
        page.on("response", lambda response: urls.append(response.url))
        page.goto(session.base_url + "/", wait_until="commit")
        page.wait_for_selector(
            "agentskit-ask[data-state=ready], agentskit-ask[data-state=error]",
            state="attached",
            timeout=BOOT_TIMEOUT_MS,
        )
        if page.get_attribute("agentskit-ask", "data-state") != "ready":
            raise RuntimeError("the widget did not boot: " + page.text_content("body")[:300])
    finally:
        context.close()
    return urls


def run_weight(session: Session) -> dict[str, Any]:
    files = fetched_files(session.dist, record_cold_load(session))
    groups = measure_groups(session.dist, files)
    archives = compare_member_compression(session.dist, files)
    return {
        "groups": {name: vars(sizes) for name, sizes in groups.items()},
        "archives": {name: vars(sizes) for name, sizes in archives.items()},
    }


def _mb(value: int) -> str:
    return f"{value / 1_000_000:,.2f} MB"


def _row(label: str, sizes: dict[str, Any]) -> str:
    return (
        f"  {label:<20}{sizes['files']:>6}{_mb(sizes['raw']):>12}"
        f"{_mb(sizes['gzip']):>12}{_mb(sizes['brotli']):>12}"
    )


def format_weight(result: dict[str, Any]) -> str:
    header = f"  {'':<20}{'files':>6}{'raw':>12}{'gzip':>12}{'brotli':>12}"
    lines = ["weight: a cold load of the docs home until the widget is ready", header]
    total = {"files": 0, "raw": 0, "gzip": 0, "brotli": 0}
    for name, sizes in result["groups"].items():
        lines.append(_row(name, sizes))
        for key in total:
            total[key] += sizes[key]
    lines.append(_row("total", total))
    wire = total["brotli"]
    verdict = "ok" if wire <= GOAL_BYTES else "MISSED"
    moonshot = "ok" if wire <= MOONSHOT_BYTES else "missed"
    lines.append(
        f"  on the wire (brotli) {_mb(wire)}: goal <= {_mb(GOAL_BYTES)} ({verdict}),"
        f" moonshot <= {_mb(MOONSHOT_BYTES)} ({moonshot})"
    )
    lines += ["", "  archives (stdlib + wheels) by member compression", header]
    lines += [_row(name, sizes) for name, sizes in result["archives"].items()]
    return "\n".join(lines)


def weight_command(args: argparse.Namespace) -> int:
    with open_session(args.dist, build=not args.no_build) as session:
        result = run_weight(session)
    print(format_weight(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0
