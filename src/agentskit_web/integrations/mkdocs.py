"""The MkDocs plugin `agentskit-ask`: the Ask widget on every page of an MkDocs site.

```yaml
plugins:
  - search
  - agentskit-ask:
      endpoint: /api/ask        # optional: without it, answers come from the static index
      layout: launcher          # launcher (a button in a corner, the default) or inline
      position: bottom-right    # the launcher's corner: bottom-right or bottom-left
      placement: end            # inline: end or start of the content, or a CSS selector
      links: same-tab           # where answer links open: same-tab or new-tab
      boot: intent              # intent, idle or eager
      corpus: docs              # optional hints sent to the backend
      persona: guide
      knowledge: faq.json       # optional local FAQ artifact
      storage_key: mysite:ask   # optional memory key
      theme: auto               # auto, light or dark
      assets_path: agentskit/   # where the assets folder goes inside the site
      assets_from: null         # a folder `agentskit-web assets` wrote (see assets_source)
      with_pyscript: false      # also publish PyScript, for `<script type="py">` pages
      index: true               # write the site's search index into the assets folder
```

Per page: the loader's `<script type="module">` goes into `<head>` (the
element carries `site-theme` for the themes in SITE_THEMES); the
`<agentskit-ask>` element goes before `</body>` (launcher) or after the page's
content (inline; before it with `placement: start`; a selector is written as
`into`, and the loader moves the box into that element). Every site path is
written relative to the page with MkDocs' own `get_relative_url`, so
`use_directory_urls`, pages two folders deep and a site published under a
sub-path all work. After the build, the assets folder is written into
`site_dir`, and the built pages are indexed into it (index_step.py: the URLs
and anchors as published, below the path of `site_url`), one log line saying
how many pages, where and how large. A bad value stops `mkdocs build` with
`Plugin 'agentskit-ask' option '...'` and the accepted values.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Final

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.utils import get_relative_url

from ..build.files import BuildError
from ..extras import MissingExtra, require
from ..indexing.site import SiteIndexError
from .assets_source import assets_origin, publish_assets
from .embed import (
    BOOTS,
    DEFAULT_ASSETS_PATH,
    LAYOUTS,
    LINKS,
    POSITIONS,
    THEMES,
    EmbedConfigError,
    EmbedOptions,
    element_tag,
    embed_options,
    inline_before_content,
    loader_path,
    loader_tag,
)
from .index_step import base_path_of, write_build_index

log = logging.getLogger("mkdocs.plugins.agentskit-ask")
SITE_THEMES: Final = frozenset({"material"})
"""Themes the widget's own stylesheet knows (`site-theme` on the element, a `:host` rule).

Material sets the root font size to 125% and its text to .8rem; the widget sizes itself
in rem, so without the rule it would be a quarter larger than the page's text. The rule
lives in agentskit-ask.css, not an inline <style> (which `style-src 'self'` blocks), and a
site's own `agentskit-ask { ... }` rule still wins over `:host`."""
_HEAD_END = re.compile(r"</head\s*>", re.IGNORECASE)
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)


class AgentskitAskConfig(base.Config):  # type: ignore[no-untyped-call]
    """The plugin's options in mkdocs.yml (types and choices checked by MkDocs first)."""

    endpoint = c.Optional(c.Type(str))
    corpus = c.Optional(c.Type(str))
    persona = c.Optional(c.Type(str))
    boot = c.Choice(BOOTS, default="intent")
    layout = c.Choice(LAYOUTS, default=LAYOUTS[0])
    position = c.Choice(POSITIONS, default=POSITIONS[0])
    placement = c.Optional(c.Type(str))
    links = c.Choice(LINKS, default=LINKS[0])
    knowledge = c.Optional(c.Type(str))
    storage_key = c.Optional(c.Type(str))
    theme = c.Choice(THEMES, default="auto")
    assets_path = c.Type(str, default=DEFAULT_ASSETS_PATH)
    assets_from = c.Optional(c.Dir(exists=True))
    with_pyscript = c.Type(bool, default=False)
    index = c.Type(bool, default=True)


class AgentskitAskPlugin(BasePlugin[AgentskitAskConfig]):  # type: ignore[no-untyped-call]
    """Adds the embed to each page and publishes the assets folder after the build."""

    def __init__(self) -> None:
        self.options = EmbedOptions()
        self.site_theme: str | None = None

    def on_config(self, config: Any) -> Any:
        theme = str(config["theme"].name)
        self.site_theme = theme if theme in SITE_THEMES else None
        try:
            self.options = embed_options(dict(self.config))
        except EmbedConfigError as error:
            raise PluginError(f"agentskit-ask: {error}") from error
        source = self.config.assets_from
        try:  # before the pages are built: a missing source or extra is known now
            require("the agentskit-ask MkDocs plugin", "mkdocs")
            assets_origin(Path(source) if source else None, with_pyscript=self.config.with_pyscript)
        except (BuildError, MissingExtra) as error:
            raise PluginError(f"agentskit-ask: {error}") from None
        return config

    def on_page_content(self, html: str, page: Any, config: Any, files: Any) -> str:
        if self.options.layout != "inline":
            return html
        if inline_before_content(self.options):
            return self._element(page) + "\n" + html
        return html + "\n" + self._element(page)

    def on_post_page(self, output: str, page: Any, config: Any) -> str:
        script = loader_tag(get_relative_url(loader_path(self.options), page.url))
        output = _insert_before(_HEAD_END, output, script, page)
        if self.options.layout == "launcher":
            output = _insert_before(_BODY_END, output, self._element(page), page)
        return output

    def on_post_build(self, config: Any) -> None:
        target = Path(config["site_dir"]) / self.options.assets_path
        source = self.config.assets_from
        try:
            origin = publish_assets(
                target,
                Path(source) if source else None,
                log.debug,
                with_pyscript=self.config.with_pyscript,
            )
        except BuildError as error:
            raise PluginError(f"agentskit-ask: {error}") from error
        log.info("agentskit-ask: assets written to %s (%s)", target, origin)
        if not self.config.index:
            return
        try:
            write_build_index(
                Path(config["site_dir"]),
                target,
                base_path=base_path_of(config["site_url"]),
                site_name=config["site_name"],
                say=log.info,
            )
        except SiteIndexError as error:
            raise PluginError(f"agentskit-ask: {error}") from error
        self._publish_static_answers(config)

    def _publish_static_answers(self, config: Any) -> None:
        """The split index beside the assets, for answers in the page (static_answers.py);
        it reads the site index the step before wrote, so the site is indexed once."""
        from .static_answers import publish_static_answers

        try:
            publish_static_answers(
                Path(config["site_dir"]),
                self.options.assets_path,
                base_path=base_path_of(config["site_url"]),
                required=self.options.endpoint is None,
                say=log.info,
                warn=log.warning,
            )
        except BuildError as error:
            raise PluginError(f"agentskit-ask: {error}") from error

    def _element(self, page: Any) -> str:
        tag = element_tag(self.options, lambda target: get_relative_url(target, page.url))
        if self.site_theme is None:
            return tag
        return tag.replace("<agentskit-ask ", f'<agentskit-ask site-theme="{self.site_theme}" ', 1)


def _insert_before(pattern: re.Pattern[str], output: str, text: str, page: Any) -> str:
    """`text` just before the last match of `pattern`; a theme without it is a clear error."""
    found = list(pattern.finditer(output))
    if not found:
        raise PluginError(
            f"agentskit-ask: the page {page.file.src_uri} has no {pattern.pattern} to add "
            "the embed to (does the theme write a full HTML document?)"
        )
    at = found[-1].start()
    return output[:at] + text + "\n" + output[at:]
