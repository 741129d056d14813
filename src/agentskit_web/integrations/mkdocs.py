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
      feedback_endpoint: null   # where 👍/👎 go (default: beside endpoint; none without one)
      theme: auto               # auto, light or dark
      suggestions:              # every attribute of the element is an option, `-` written `_`
        - How do I install it?  # (docs/embedding.md's table); lists and mappings as YAML
      strings: {send: Envoyer}
      assets_path: agentskit/   # where the assets folder goes inside the site
      assets_from: null         # a folder `agentskit-web assets` wrote (see assets_source)
      with_pyscript: false      # also publish PyScript, for `<script type="py">` pages
      index: true               # index the site (static answers; false: only the assets)
      backend_index: null       # the backend's index file too (default: when endpoint is set)
```

Per page: the loader's `<script type="module">` goes into `<head>` (the
element carries `site-theme` for the themes in SITE_THEMES); the
`<agentskit-ask>` element goes before `</body>` (launcher) or after the page's
content (inline; before it with `placement: start`; a selector is written as
`into`, and the loader moves the box into that element). Every site path is
written relative to the page with MkDocs' own `get_relative_url`, so
`use_directory_urls`, pages two folders deep and a site published under a
sub-path all work. After the build, the assets folder, the site's index and the
static index are written into `site_dir` by the same code as `agentskit-web
publish` (publish.py: the URLs and anchors as published, below the path of
`site_url`), one log line saying how many pages, where and how large. A bad
value stops `mkdocs build` with `Plugin 'agentskit-ask' option '...'` and the accepted values.
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
from .assets_source import assets_origin
from .embed import (
    ATTRIBUTES,
    DEFAULT_ASSETS_PATH,
    LIST_KINDS,
    MAPPING_KINDS,
    Attribute,
    EmbedConfigError,
    EmbedOptions,
    element_tag,
    embed_options,
    inline_before_content,
    loader_path,
    loader_tag,
)
from .index_step import base_path_of
from .publish import PublishSettings, publish_site

log = logging.getLogger("mkdocs.plugins.agentskit-ask")
SITE_THEMES: Final = {"material": "material", "readthedocs": "rtd"}
"""MkDocs theme -> the `site-theme` the widget's own stylesheet knows (on the element, a
`:host` rule). MkDocs' readthedocs theme is Read the Docs' Sphinx theme ported: the same
colours, light only, so it shares that theme's rule.

Material sets the root font size to 125% and its text to .8rem; the widget sizes itself
in rem, so without the rule it would be a quarter larger than the page's text. The rule
lives in agentskit-ask.css, not an inline <style> (which `style-src 'self'` blocks), and a
site's own `agentskit-ask { ... }` rule still wins over `:host`."""
_HEAD_END = re.compile(r"</head\s*>", re.IGNORECASE)
_BODY_END = re.compile(r"</body\s*>", re.IGNORECASE)


def _option(attribute: Attribute) -> Any:
    """The MkDocs option of one element attribute: MkDocs checks types and choices first."""
    if attribute.kind == "choice":
        choice = c.Choice(attribute.choices, default=attribute.default)
        return choice if attribute.default is not None else c.Optional(choice)
    if attribute.kind in LIST_KINDS:
        return c.Optional(c.Type((list, str)))
    if attribute.kind in MAPPING_KINDS:
        return c.Optional(c.Type((dict, str)))
    return c.Optional(c.Type(str))


_AttributeOptions: Any = type(
    "_AttributeOptions",
    (base.Config,),
    {attribute.option: _option(attribute) for attribute in ATTRIBUTES},
)
"""One option per attribute of the element (embed.ATTRIBUTES), made from that list."""


class AgentskitAskConfig(_AttributeOptions):  # type: ignore[misc]
    """The plugin's options in mkdocs.yml: every attribute's, and where the assets come from."""

    placement = c.Optional(c.Type(str))
    assets_path = c.Type(str, default=DEFAULT_ASSETS_PATH)
    assets_from = c.Optional(c.Dir(exists=True))
    with_pyscript = c.Type(bool, default=False)
    index = c.Type(bool, default=True)
    backend_index = c.Optional(c.Type(bool))


class AgentskitAskPlugin(BasePlugin[AgentskitAskConfig]):  # type: ignore[no-untyped-call]
    """Adds the embed to each page and publishes the assets folder after the build."""

    def __init__(self) -> None:
        self.options = EmbedOptions()
        self.site_theme: str | None = None

    def on_config(self, config: Any) -> Any:
        theme = str(config["theme"].name)
        self.site_theme = SITE_THEMES.get(theme)
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
        source = self.config.assets_from
        settings = PublishSettings(
            options=self.options,
            base_path=base_path_of(config["site_url"]),
            site_name=config["site_name"],
            index=self.config.index,
            assets_from=Path(source) if source else None,
            with_pyscript=self.config.with_pyscript,
            backend_index=self.config.backend_index,
        )
        try:
            publish_site(
                Path(config["site_dir"]), settings, say=log.info, warn=log.warning, detail=log.debug
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
