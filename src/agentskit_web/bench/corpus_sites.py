"""The real corpora (../shared/corpora/) built with MkDocs Material, cached under .cache/.

A docs owner builds Starlette's docs with its own mkdocs.yml, minus what needs
the network or the package's source (analytics, mkdocstrings, `watch`,
`custom_dir` overrides); Pydantic's corpus has no mkdocs.yml, so one with the
Material dialect its pages use (attribute lists, admonitions, details,
superfences, tabs, snippets, permalinks) is written here. The corpus is read
in place (docs_dir points into it; MkDocs writes only into the cache) and the
built site is keyed by a hash of the config and every corpus file's size and
mtime, so a second run reuses it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

PROJECT_ROOT: Final = Path(__file__).resolve().parents[3]
CORPORA: Final = PROJECT_ROOT.parent / "shared" / "corpora"
CACHE: Final = PROJECT_ROOT / ".cache" / "corpus-sites"

_MATERIAL_EXTENSIONS: Final[list[Any]] = [
    "attr_list",
    "md_in_html",
    "admonition",
    "tables",
    "footnotes",
    {"toc": {"permalink": True}},
    "pymdownx.details",
    {"pymdownx.highlight": {"pygments_lang_class": True}},
    "pymdownx.inlinehilite",
    "pymdownx.superfences",
    {"pymdownx.tabbed": {"alternate_style": True}},
    {"pymdownx.tasklist": {"custom_checkbox": True}},
]


def _config(name: str, docs: Path) -> dict[str, Any]:
    if name == "starlette":
        return {
            "site_name": "Starlette",
            "docs_dir": str(docs),
            "theme": {"name": "material", "features": ["content.code.copy", "toc.follow"]},
            "repo_url": "https://github.com/encode/starlette",
            "edit_uri": "edit/master/docs/",
            # Starlette's own config uses custom_dir: docs/overrides (templates, not pages).
            "exclude_docs": "overrides/\n",
            "markdown_extensions": _MATERIAL_EXTENSIONS,
            "plugins": ["search"],
        }
    return {
        "site_name": "Pydantic",
        "docs_dir": str(docs),
        "theme": {"name": "material", "features": ["content.code.copy", "content.tabs.link"]},
        "repo_url": "https://github.com/pydantic/pydantic",
        "edit_uri": "edit/main/docs/",
        # Pydantic's own config builds with custom_dir: docs/theme; its templates are not pages.
        "exclude_docs": "theme/\nextra/\n",
        "markdown_extensions": [
            *_MATERIAL_EXTENSIONS,
            {"pymdownx.snippets": {"base_path": [str(docs)], "check_paths": False}},
        ],
        "plugins": ["search"],
    }


def _fingerprint(folder: Path, config: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode())
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            stat = file.stat()
            digest.update(f"{file.relative_to(folder)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def build_corpus_site(name: str, corpora: Path = CORPORA) -> Path:
    """The built site of corpus `name` (`starlette` or `pydantic`), built once and cached."""
    docs = corpora / name / "docs"
    config = _config(name, docs)
    site = CACHE / f"{name}-{_fingerprint(docs, config)}"
    if (site / "index.html").is_file():
        return site
    CACHE.mkdir(parents=True, exist_ok=True)
    config_file = CACHE / f"{name}-mkdocs.yml"
    # JSON is YAML: no YAML writer needed.
    config_file.write_text(json.dumps(config, indent=1), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config_file), "-d", str(site)],
        check=True,
        cwd=CACHE,
    )
    return site
