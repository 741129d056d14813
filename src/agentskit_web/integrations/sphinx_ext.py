"""The Sphinx extension: the Ask widget on every HTML page of a Sphinx site.

```python
extensions = ["agentskit_web.sphinx"]
agentskit_ask_endpoint = "/api/ask"   # optional: without it, answers come from the static index
agentskit_ask_layout = "launcher"     # the default; or "inline"
agentskit_ask_position = "bottom-right"  # the launcher's corner, or "bottom-left"
agentskit_ask_placement = "end"       # inline: "end", "start" or a CSS selector
agentskit_ask_links = "same-tab"      # where answer links open, or "new-tab"
agentskit_ask_boot = "intent"         # or "idle", "eager"
agentskit_ask_corpus = "docs"         # optional, as persona, knowledge, storage_key,
                                      # feedback_endpoint
agentskit_ask_suggestions = ["How do I install it?"]  # every attribute of the element is a
agentskit_ask_strings = {"send": "Envoyer"}           # setting, `-` written `_` (a list, a dict)
agentskit_ask_theme = "auto"
agentskit_ask_assets_path = "agentskit/"
agentskit_ask_assets_from = None      # a folder `agentskit-web assets` wrote
agentskit_ask_with_pyscript = False   # also publish PyScript (docs/pyscript.md)
agentskit_ask_index = True            # index the site (static answers; False: only the assets)
agentskit_ask_backend_index = None    # the backend's index file too (default: with an endpoint)
```

Per page (`html-page-context`): the loader's script tag and the
`<agentskit-ask>` element are appended to the page's body (the element first,
for an inline box with `placement = "start"`), every site path
made relative with the page's own `pathto`, so pages in sub-folders and the
`dirhtml` builder work without configuration. Putting both in the body rather
than in theme blocks keeps the extension independent of the theme. At
`build-finished` the assets folder is written into the output folder and, for
the `html` and `dirhtml` builders, the pages just written are indexed into it
and split for answers in the page, by the same code as `agentskit-web publish`
(publish.py: the builder's own URLs and section ids, below the path of
`html_baseurl` when it is set), one log line saying how many pages, where and
how large. A bad
value stops the build at `config-inited` with a ConfigError naming the setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from sphinx.application import Sphinx
from sphinx.errors import ConfigError, ExtensionError
from sphinx.util import logging

from ..build.files import BuildError
from ..extras import MissingExtra, require
from .assets_source import assets_origin
from .embed import (
    ATTRIBUTES,
    DEFAULT_ASSETS_PATH,
    EmbedConfigError,
    element_tag,
    embed_options,
    inline_before_content,
    loader_path,
    loader_tag,
)
from .index_step import base_path_of
from .publish import PublishSettings, publish_site
from .site_themes import SPHINX_SITE_THEMES

PREFIX: Final = "agentskit_ask_"
SITE_THEMES: Final = SPHINX_SITE_THEMES
"""`html_theme` -> `site-theme` (site_themes.py)."""
SETTINGS: Final[dict[str, object]] = {
    **{attribute.option: None for attribute in ATTRIBUTES},
    "placement": "end",
    "assets_path": DEFAULT_ASSETS_PATH,
    "assets_from": None,
    "with_pyscript": False,
    "index": True,
    "backend_index": None,
}
"""`agentskit_ask_<option>` for every attribute of the element (embed.ATTRIBUTES, unset: the
widget's default) and the settings of the build itself."""
HTML_FORMATS: Final = ("html",)
INDEXED_BUILDERS: Final = ("html", "dirhtml")
"""The builders whose output is a browsable site with the URLs the index cites."""
log = logging.getLogger(__name__)


def _settings(app: Sphinx) -> dict[str, object]:
    return {name: getattr(app.config, PREFIX + name) for name in SETTINGS}


def _validate(app: Sphinx, config: Any) -> None:
    try:
        app.agentskit_ask_options = embed_options(_settings(app), PREFIX)  # type: ignore[attr-defined]
    except EmbedConfigError as error:
        raise ConfigError(str(error)) from error
    source = app.config.agentskit_ask_assets_from
    if source is not None and not isinstance(source, str | Path):
        raise ConfigError(f"{PREFIX}assets_from: expected a folder path, got {source!r}")
    if not isinstance(app.config.agentskit_ask_with_pyscript, bool):
        raise ConfigError(
            f"{PREFIX}with_pyscript: expected True or False, "
            f"got {app.config.agentskit_ask_with_pyscript!r}"
        )
    if not isinstance(app.config.agentskit_ask_index, bool):
        raise ConfigError(f"{PREFIX}index: expected True or False")
    if app.config.agentskit_ask_backend_index not in (None, True, False):
        raise ConfigError(
            f"{PREFIX}backend_index: expected True, False or None (with an endpoint), "
            f"got {app.config.agentskit_ask_backend_index!r}"
        )
    try:  # before the pages are read: a missing source or extra is known now
        require("the agentskit_web.sphinx extension", "sphinx")
        assets_origin(
            Path(app.confdir, source) if source else None,
            with_pyscript=app.config.agentskit_ask_with_pyscript,
        )
    except (BuildError, MissingExtra) as error:
        raise ConfigError(f"agentskit-ask: {error}") from None


def _page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    if app.builder.format not in HTML_FORMATS or "body" not in context:
        return
    options = app.agentskit_ask_options  # type: ignore[attr-defined]
    pathto = context["pathto"]

    def relative(target: str) -> str:
        return str(pathto(target, 1))

    element = element_tag(options, relative)
    site_theme = SITE_THEMES.get(app.config.html_theme)
    if site_theme is not None:
        element = element.replace(
            "<agentskit-ask ", f'<agentskit-ask site-theme="{site_theme}" ', 1
        )
    loader = loader_tag(relative(loader_path(options)))
    if inline_before_content(options):
        context["body"] = element + "\n" + context["body"] + "\n" + loader
    else:
        context["body"] += "\n" + loader + "\n" + element


def _publish(app: Sphinx, exception: BaseException | None) -> None:
    if exception is not None or app.builder.format not in HTML_FORMATS:
        return
    source = app.config.agentskit_ask_assets_from
    settings = PublishSettings(
        options=app.agentskit_ask_options,  # type: ignore[attr-defined]
        base_path=base_path_of(app.config.html_baseurl),
        site_name=app.config.project,
        index=app.config.agentskit_ask_index and app.builder.name in INDEXED_BUILDERS,
        assets_from=Path(app.confdir, source) if source else None,
        with_pyscript=app.config.agentskit_ask_with_pyscript,
        backend_index=app.config.agentskit_ask_backend_index,
    )
    try:
        publish_site(Path(app.outdir), settings, say=log.info, warn=log.warning, detail=log.debug)
    except BuildError as error:
        raise ExtensionError(f"agentskit-ask: {error}") from error


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the `agentskit_ask_*` settings and the three events (see the module doc)."""
    for name, default in SETTINGS.items():
        app.add_config_value(PREFIX + name, default, "html")
    app.connect("config-inited", _validate)
    app.connect("html-page-context", _page)
    app.connect("build-finished", _publish)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
