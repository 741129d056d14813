"""The real corpora of the answer eval, built with MkDocs or Sphinx as their owners would.

`../shared/corpora/` holds documentation sets nobody on this project wrote
(Pydantic, Starlette: MkDocs; Click: Sphinx), read in place and never edited. The eval's expected
sections are the URLs and anchors MkDocs publishes (`/concepts/models/#id`),
so each corpus is built into a real Material site first:

- Starlette ships its own `mkdocs.yml`; the generated config is that file with
  what needs the network or the package's source dropped (`extra.analytics`,
  the `mkdocstrings` plugin, `watch`, `custom_dir` when its folder is missing).
- Pydantic's docs come without one, so the generated config is a minimal
  Material config with the Markdown extensions its pages use (attribute lists
  for `{#id}`, admonitions, content tabs, details, superfences).
- Click ships its own Sphinx `docs/conf.py` (Pallets theme, MyST, autodoc,
  sphinx-tabs, log-cabinet); `build_sphinx_corpus` runs `sphinx-build -b
  dirhtml` on it in place (the output and doctrees go to the cache) with the
  corpus's `src/` first on the import path, so autodoc documents the version
  the docs were written for.

The generated config is written under `.cache/corpora/<name>/`, never into the
corpus; the built site is cached there too, keyed by a hash of every corpus
file, the config and the MkDocs/Material versions, so a second run is quick.

`index_built_site` turns a built site into index chunks. It is the one place
that says how: `agentskit_web.indexing.site.index_site`, the reader the
product ships (see docs/design/site-index.md).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any, Final

import yaml

from ..answering.chunk import Chunk
from ..docs_text import directory_page_path
from ..indexing.site import index_site

PROJECT_ROOT: Final = Path(__file__).resolve().parents[3]
DEFAULT_CORPORA: Final = PROJECT_ROOT.parent / "shared" / "corpora"
"""`../shared/corpora` from the project root (the machine's shared corpora folder)."""
CACHE_DIR: Final = PROJECT_ROOT / ".cache" / "corpora"
BUILD_TIMEOUT_SECONDS: Final = 600
"""Longest a corpus build may take (Pydantic's ~90 pages take well under a minute)."""
BUILD_KEY_FILE: Final = "build-key"
PAGE_FILE: Final = "index.html"
"""With directory URLs every page MkDocs writes is `<folder>/index.html`; other HTML in
the site (the 404 page, HTML files a docs folder copies as static assets) is no page."""
DROPPED_PLUGINS: Final = frozenset({"mkdocstrings"})
"""Plugins a corpus config names that need the package's source (or the network)."""


class CorpusError(RuntimeError):
    """A corpus could not be found or built (the message says which and why)."""


# ------------------------------------------------------------------ the config


class _PythonName:
    """A `!!python/name:...` value of a corpus's mkdocs.yml, kept as written."""

    def __init__(self, suffix: str) -> None:
        self.suffix = suffix


class _ConfigLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """Loads a corpus's mkdocs.yml without importing what its python tags name."""


def _construct_python_name(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> _PythonName:
    return _PythonName(suffix)


_ConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/name:", _construct_python_name)


class _ConfigDumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML ships no types
    """Writes the generated config, the python tags back as they were."""


def _represent_python_name(dumper: yaml.SafeDumper, value: _PythonName) -> yaml.Node:
    return dumper.represent_scalar(f"tag:yaml.org,2002:python/name:{value.suffix}", "")


_ConfigDumper.add_representer(_PythonName, _represent_python_name)


MINIMAL_MATERIAL_CONFIG: Final[dict[str, Any]] = {
    "theme": {"name": "material"},
    "markdown_extensions": [
        "tables",
        "toc",
        "attr_list",
        "md_in_html",
        "admonition",
        "footnotes",
        "pymdownx.details",
        "pymdownx.highlight",
        "pymdownx.superfences",
        {"pymdownx.tabbed": {"alternate_style": True}},
    ],
    "plugins": ["search"],
}
"""A docs owner's smallest Material setup for a corpus that ships no mkdocs.yml."""


@dataclass(frozen=True, slots=True)
class CorpusSite:
    """A built corpus: where its site is and how it was built."""

    name: str
    site_dir: Path
    config_file: Path
    cached: bool


def generated_config(corpus_dir: Path, config: str | None) -> dict[str, Any]:
    """The MkDocs config the eval builds a corpus with (see the module docstring)."""
    docs_dir = corpus_dir / "docs"
    if config is None:
        settings: dict[str, Any] = {"site_name": corpus_dir.name.capitalize()}
        settings.update(MINIMAL_MATERIAL_CONFIG)
    else:
        # _ConfigLoader is SafeLoader plus one inert tag: nothing is imported or run.
        loaded = yaml.load((corpus_dir / config).read_text(encoding="utf-8"), _ConfigLoader)
        if not isinstance(loaded, dict):
            raise CorpusError(f"{corpus_dir / config} is not a MkDocs config mapping.")
        settings = dict(loaded)
        extra = dict(settings.get("extra") or {})
        extra.pop("analytics", None)
        settings["extra"] = extra
        settings.pop("watch", None)
        theme = dict(settings.get("theme") or {})
        if "custom_dir" in theme:
            custom = (corpus_dir / str(theme["custom_dir"])).resolve()
            if custom.is_dir():
                theme["custom_dir"] = str(custom)
            else:
                theme.pop("custom_dir")
        settings["theme"] = theme
        plugins = []
        for plugin in settings.get("plugins") or []:
            name = plugin if isinstance(plugin, str) else next(iter(plugin))
            if name not in DROPPED_PLUGINS:
                plugins.append(plugin)
        settings["plugins"] = plugins
    settings["docs_dir"] = str(docs_dir.resolve())
    settings["use_directory_urls"] = True
    return settings


def config_text(settings: dict[str, Any]) -> str:
    """The config as YAML (stable key order, so its hash is stable)."""
    return str(yaml.dump(settings, Dumper=_ConfigDumper, sort_keys=True, allow_unicode=True))


MKDOCS_PACKAGES: Final = ("mkdocs", "mkdocs-material")
SPHINX_PACKAGES: Final = (
    "sphinx",
    "myst-parser",
    "pallets-sphinx-themes",
    "sphinx-tabs",
    "sphinxcontrib-log-cabinet",
)
"""The builders whose versions key a built corpus (a new version rebuilds it)."""


def corpus_hash(corpus_dir: Path, config: str, packages: tuple[str, ...] = MKDOCS_PACKAGES) -> str:
    """sha256 over every corpus file (path and bytes), the config and the builders' versions."""
    digest = hashlib.sha256()
    for package in packages:
        digest.update(f"{package}={importlib.metadata.version(package)}\n".encode())
    digest.update(config.encode())
    for file in sorted(p for p in corpus_dir.rglob("*") if p.is_file()):
        digest.update(file.relative_to(corpus_dir).as_posix().encode() + b"\0")
        digest.update(file.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def build_corpus(
    corpora: Path, name: str, config: str | None, cache: Path = CACHE_DIR
) -> CorpusSite:
    """The corpus's built site, from the cache when its key matches, else built now."""
    corpus_dir = corpora / name
    if not (corpus_dir / "docs").is_dir():
        raise CorpusError(f"Corpus {name!r} has no docs folder at {corpus_dir / 'docs'}.")
    text = config_text(generated_config(corpus_dir, config))
    key = corpus_hash(corpus_dir, text)
    home = cache / name
    site_dir = home / "site"
    config_file = home / "mkdocs.yml"
    key_file = home / BUILD_KEY_FILE
    if site_dir.is_dir() and key_file.is_file() and key_file.read_text().strip() == key:
        return CorpusSite(name, site_dir, config_file, cached=True)
    home.mkdir(parents=True, exist_ok=True)
    config_file.write_text(text, encoding="utf-8")
    fresh = Path(tempfile.mkdtemp(prefix="site-", dir=home))
    command = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config_file)]
    command += ["-d", str(fresh)]
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    _build_into_cache("mkdocs build", name, command, environment, fresh, site_dir, key)
    return CorpusSite(name, site_dir, config_file, cached=False)


def _build_into_cache(
    tool: str,
    name: str,
    command: list[str],
    environment: dict[str, str],
    fresh: Path,
    site_dir: Path,
    key: str,
) -> None:
    """Run a generator's build into `fresh`, then swap it in as the cached site with its key
    (a failed or timed-out build leaves the cache as it was)."""
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_SECONDS,
            check=False,
            env=environment,
        )
    except subprocess.TimeoutExpired as error:
        shutil.rmtree(fresh, ignore_errors=True)
        limit = BUILD_TIMEOUT_SECONDS
        raise CorpusError(f"{tool} of {name!r} took over {limit} s.") from error
    if done.returncode != 0:
        shutil.rmtree(fresh, ignore_errors=True)
        raise CorpusError(f"{tool} of {name!r} failed:\n{done.stderr[-2000:]}")
    key_file = site_dir.parent / BUILD_KEY_FILE
    key_file.unlink(missing_ok=True)
    shutil.rmtree(site_dir, ignore_errors=True)
    fresh.rename(site_dir)
    key_file.write_text(key + "\n")


def build_sphinx_corpus(
    corpora: Path, name: str, conf_dir: str, cache: Path = CACHE_DIR
) -> CorpusSite:
    """A Sphinx corpus's `dirhtml` site, from the cache when its key matches, else built now.

    The build reads the corpus in place, with its `src/` first on `PYTHONPATH` (autodoc
    imports the package the docs describe). Intersphinx cannot reach the network; Sphinx
    warns and links nothing, as for an offline owner.
    """
    corpus_dir = corpora / name
    if not (corpus_dir / conf_dir / "conf.py").is_file():
        raise CorpusError(f"Corpus {name!r} has no Sphinx conf.py at {corpus_dir / conf_dir}.")
    key = corpus_hash(corpus_dir, f"sphinx dirhtml {conf_dir}", SPHINX_PACKAGES)
    home = cache / name
    site_dir = home / "site"
    key_file = home / BUILD_KEY_FILE
    if site_dir.is_dir() and key_file.is_file() and key_file.read_text().strip() == key:
        return CorpusSite(name, site_dir, corpus_dir / conf_dir / "conf.py", cached=True)
    home.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix="site-", dir=home))
    # Doctrees go under the output folder and bytecode is not written: the corpus stays
    # untouched (it may be read-only).
    command = [sys.executable, "-m", "sphinx", "-q", "-b", "dirhtml"]
    command += [str(corpus_dir / conf_dir), str(fresh)]
    path = os.pathsep.join(filter(None, [str(corpus_dir / "src"), os.environ.get("PYTHONPATH")]))
    environment = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
    _build_into_cache("sphinx-build", name, command, environment, fresh, site_dir, key)
    return CorpusSite(name, site_dir, corpus_dir / conf_dir / "conf.py", cached=False)


# ------------------------------------------------------------------ reading the site


def site_pages(site_dir: Path) -> list[tuple[str, Path]]:
    """(URL path, file) of every page the build wrote, sorted by URL path."""
    pages = []
    for file in site_dir.rglob(PAGE_FILE):
        relative = PurePosixPath(file.relative_to(site_dir).as_posix())
        pages.append((directory_page_path(relative), file))
    return sorted(pages)


def article_html(html: str) -> str:
    """The page's content (Material's `<article>`), without header, sidebars or footer;
    the whole page when it has no article."""
    start = html.find("<article")
    end = html.rfind("</article>")
    if start < 0 or end < start:
        return html
    return html[start : end + len("</article>")]


class _HeadingIds(HTMLParser):
    """The ids of a page's headings, and whether the first is its h1."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            found = [value for name, value in attrs if name == "id" and value]
            if found:
                self.ids.append((int(tag[1]), found[0]))


def _heading_ids(html: str) -> list[tuple[int, str]]:
    parser = _HeadingIds()
    parser.feed(html)
    parser.close()
    return parser.ids


class _ElementIds(HTMLParser):
    """Every `id` of a page (Sphinx puts a section's id on its `<section>`, an API
    entry's on its `<dt>`, not on the heading)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.extend(value for name, value in attrs if name == "id" and value)


def published_ids(site_dir: Path) -> dict[str, str]:
    """Each page's URL path and `path#id` for every id on it, with its page's file: what
    a Sphinx site publishes (a superset of its sections, enough to check that an
    expected section exists)."""
    sections: dict[str, str] = {}
    for path, file in site_pages(site_dir):
        sections[path] = str(file)
        parser = _ElementIds()
        parser.feed(file.read_text(encoding="utf-8"))
        parser.close()
        sections.update((f"{path}#{anchor}", str(file)) for anchor in parser.ids)
    return sections


def published_sections(site_dir: Path) -> dict[str, str]:
    """Every section the built site publishes, as the eval writes it, with its page's file:
    each page's URL path (its top section) and `path#id` for each heading id of its
    content except the page's own h1 (that is the page's top: cited without anchor)."""
    sections: dict[str, str] = {}
    for path, file in site_pages(site_dir):
        sections[path] = str(file)
        for number, (level, anchor) in enumerate(
            _heading_ids(article_html(file.read_text(encoding="utf-8")))
        ):
            if number == 0 and level == 1:
                continue
            sections[f"{path}#{anchor}"] = str(file)
    return sections


def index_built_site(site_dir: Path) -> list[Chunk]:
    """The index chunks of a built site, read by the reader the product ships.

    `agentskit_web.indexing.site.index_site` is what `agentskit-web index` runs
    on a site owner's build: it finds each page's content by its theme, keeps
    the heading ids the generator gave, and cites text under a heading without
    an id as part of the section around it. The eval reads the corpus through
    it (and the wire model's round trip) so the figures are those of the index
    a site would ship, not of a reader only the bench uses.
    """
    return index_site(site_dir).chunk_list()
