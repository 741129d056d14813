"""`agentskit-web preview SITE_DIR`: the glue between the command line and server/preview.py.

A site built with the MkDocs plugin or the Sphinx extension already embeds
the widget and carries its assets folder. A plain folder of HTML does not;
unless `--no-widget` is given, the preview adds the widget for the time it
runs: the assets folder is published (integrations/assets_source.py: a
prebuilt folder or the checkout) into a temporary folder, served at
`/_agentskit/`, and each page is sent with the loader and a launcher
`<agentskit-ask>` (nothing in SITE_DIR is written). A site that has the widget
is sent with it wired to the preview's backend (server/preview.py), unless
`--static-answers` asks for the pages as built.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..build.assets import LOADER
from ..build.files import BuildError
from ..integrations.assets_source import publish_assets
from ..integrations.embed import element_tag, embed_options, loader_tag
from ..integrations.site_themes import site_theme_of_page
from ..server.ask_app import DEFAULT_PATH
from ..server.ask_serve import StartupError
from ..server.preview import (
    WIDGET_ASSETS_PATH,
    PreviewConfig,
    has_widget,
    home_page_head,
    serve_preview,
)
from ..server.static import SITE_PORT

PREVIEW_LAYOUT = "launcher"
"""The added widget floats over any theme instead of guessing where a page's content ends."""


def widget_snippet(site_theme: str | None = None) -> str:
    """The script tag and the element the preview adds to a page without the widget.

    Its `endpoint` is the preview's own Ask backend: a plain folder has no split index
    for answers in the page, and the preview is where an owner tries the backend. A
    `site_theme` (read off the site's home page) is written as the plugins write it, so
    the box takes the theme's colours as it will once the site is built with them."""
    options = embed_options({"layout": PREVIEW_LAYOUT, "endpoint": DEFAULT_PATH})
    element = element_tag(options, lambda path: path)
    if site_theme is not None:
        element = element.replace(
            "<agentskit-ask ", f'<agentskit-ask site-theme="{site_theme}" ', 1
        )
    return loader_tag(WIDGET_ASSETS_PATH + LOADER) + "\n" + element


@contextmanager
def preview_config(
    site_dir: Path,
    base_path: str | None = None,
    *,
    widget: bool = True,
    static_answers: bool = False,
) -> Iterator[PreviewConfig]:
    """The preview's settings; a site without the widget gets one (temporary assets folder).

    Raises BuildError when the widget must be added and no assets can be published.
    """
    config = PreviewConfig(site_dir=site_dir, base_path=base_path, static_answers=static_answers)
    if not widget or not site_dir.is_dir() or has_widget(site_dir):
        yield config
        return
    with tempfile.TemporaryDirectory(prefix="agentskit-preview-") as folder:
        publish_assets(Path(folder), None, lambda message: None)
        config.widget_assets = Path(folder)
        config.inject = widget_snippet(site_theme_of_page(home_page_head(site_dir)))
        yield config


def main(args: argparse.Namespace) -> int:
    port = SITE_PORT if args.port is None else args.port
    try:
        with preview_config(
            args.site_dir.resolve(),
            args.base_path,
            widget=not args.no_widget,
            static_answers=args.static_answers,
        ) as config:
            serve_preview(config, port=port)
    except (StartupError, BuildError) as error:
        print(f"agentskit-web preview: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        reason = error.strerror or str(error)
        print(f"agentskit-web preview: cannot listen on port {port}: {reason}", file=sys.stderr)
        return 2
    return 0
