"""No served text may name a CDN: the deny-list is data (web/cdn-hosts.txt), never served."""

from __future__ import annotations

import re
from pathlib import Path

from .files import find_root

# Hosts no served file may name, kept as data beside the shell (and never served).
CDN_HOSTS_FILE = "cdn-hosts.txt"


TEXT_SUFFIXES = {".html", ".js", ".mjs", ".css", ".json", ".toml", ".py", ".txt", ".ndjson"}


def cdn_pattern(web: Path) -> re.Pattern[str]:
    """A pattern matching a URL (or protocol-relative URL) on any host of web/cdn-hosts.txt."""
    lines = (web / CDN_HOSTS_FILE).read_text(encoding="utf-8").splitlines()
    hosts = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return re.compile(r"(?:https?:)?//(?:" + "|".join(map(re.escape, hosts)) + r")")


def scan_for_cdn(dist: Path, web: Path | None = None) -> list[str]:
    """`file: host` for every served text file that names a CDN host."""
    pattern = cdn_pattern(web or find_root() / "web")
    hits: list[str] = []
    for path in sorted(dist.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in sorted(set(pattern.findall(text))):
            hits.append(f"{path.relative_to(dist).as_posix()}: {match}")
    return hits
