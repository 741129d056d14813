"""The docs pages, the knowledge artifact and the fixtures copied into the site."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath

from .files import BuildError, Paths, copy_if_changed, prune, write_if_changed

KNOWLEDGE_FILE = "knowledge.json"
SITE_FILES = ("site.css", "favicon.svg")
"""The demo site's own files beside its pages (from web/)."""


_KNOWLEDGE_ATTRIBUTE = re.compile(r'\s+knowledge="\./knowledge\.json"')


def _site_id(paths: Paths) -> str | None:
    """The backend site config's siteId (the FAQ must belong to the same site)."""
    from ..protocol.wire_json import parse_json

    config = paths.docs / "site.json"
    document = parse_json(config.read_bytes()) if config.is_file() else None
    site_id = document.get("siteId") if isinstance(document, dict) else None
    return site_id if isinstance(site_id, str) else None


def render_pages(paths: Paths) -> dict[str, bytes]:
    """The docs home, one page per docs/*.md (not docs/design/) and the FAQ artifact.

    Keys are dist-relative paths. Without docs/faq.json there is no artifact and
    the pages drop their `knowledge` attribute (nothing to load, nothing to 404).
    """
    from .docs_pages import SiteError, Template, load_pages, page_anchors, render_site
    from .knowledge import FaqError, compile_faq

    source = paths.root / "index.html"
    if not source.is_file():
        raise BuildError(f"missing build input: {source}")
    faq = paths.docs / "faq.json"
    text = source.read_text(encoding="utf-8")
    if not faq.is_file():
        text = _KNOWLEDGE_ATTRIBUTE.sub("", text)
    try:
        pages = load_pages(paths.docs)
        files = render_site(Template(text), pages)
        if faq.is_file():
            compiled = compile_faq(faq, site_id=_site_id(paths), pages=page_anchors(pages))
            files[PurePosixPath(KNOWLEDGE_FILE)] = compiled.data
    except (SiteError, FaqError) as error:
        raise BuildError(str(error)) from None
    # Pictures the pages show (docs/images/, e.g. embedding.md's screenshots), beside them.
    images = paths.docs / "images"
    for picture in sorted(images.glob("*.png")) if images.is_dir() else []:
        files[PurePosixPath("docs/images") / picture.name] = picture.read_bytes()
    for name in SITE_FILES:
        source = paths.web / name
        if not source.is_file():
            raise BuildError(f"missing build input: {source}")
        files[PurePosixPath(name)] = source.read_bytes()
    return {str(path): data for path, data in files.items()}


def write_pages(paths: Paths) -> tuple[bool, list[Path]]:
    """Write the docs site into dist/, removing pages whose source is gone."""
    changed = False
    produced: list[Path] = []
    for relative, data in render_pages(paths).items():
        target = paths.dist / relative
        changed |= write_if_changed(target, data)
        produced.append(target)
    changed |= prune(paths.dist / "docs", produced)
    stale = paths.dist / KNOWLEDGE_FILE
    if stale not in produced and stale.is_file():
        stale.unlink()
        changed = True
    return changed, produced


def is_conformance_vector(path: Path) -> bool:
    """A JSON file of `cases`; other JSON in fixtures/ (the answers eval set) is CPython-only."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True  # published as it is, so the page's runner reports it
    return isinstance(document, dict) and "cases" in document


def copy_fixtures(paths: Paths) -> tuple[bool, list[Path]]:
    """fixtures/ into dist/fixtures plus index.json: the JSON vectors and resources."""
    source_dir = paths.root / "fixtures"
    target_dir = paths.dist / "fixtures"
    files = sorted(p for p in source_dir.rglob("*") if p.is_file()) if source_dir.is_dir() else []
    files = [
        p
        for p in files
        if not (p.parent == source_dir and p.suffix == ".json") or is_conformance_vector(p)
    ]
    changed = False
    produced: list[Path] = []
    for source in files:
        target = target_dir / source.relative_to(source_dir)
        changed |= copy_if_changed(source, target)
        produced.append(target)
    index = {
        "fixtures": [p.name for p in files if p.parent == source_dir and p.suffix == ".json"],
        "resources": [
            p.relative_to(source_dir).as_posix()
            for p in files
            if not (p.parent == source_dir and p.suffix == ".json")
        ],
    }
    index_path = target_dir / "index.json"
    changed |= write_if_changed(index_path, (json.dumps(index, indent=1) + "\n").encode())
    produced.append(index_path)
    changed |= prune(target_dir, produced)
    return changed, produced
