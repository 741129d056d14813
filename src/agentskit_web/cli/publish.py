"""`agentskit-web publish SITE_DIR`: the widget and its static answers in any built site.

Run it after the generator's build (Hugo `public/`, Jekyll `_site/`, Docusaurus
`build/`, a folder of hand-written HTML): it writes the assets folder, the
site's index and the static index into SITE_DIR and points the loader at the
index, exactly what the MkDocs plugin and the Sphinx extension do
(integrations/publish.py). Pages that embed the widget from a template need
nothing more; `--inject` adds the loader and a launcher `<agentskit-ask>` to
every page lacking them (a second run changes nothing). A site that cannot be
published is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final

from ..build.files import BuildError
from ..integrations.embed import DEFAULT_ASSETS_PATH, EmbedConfigError, embed_options

EXIT_UNUSABLE: Final = 2
INJECTED_LAYOUT: Final = "launcher"
"""What `--inject` adds by default: a floating button fits any theme without knowing where
its content ends."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentskit-web publish",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("site_dir", type=Path, metavar="SITE_DIR", help="the built site")
    parser.add_argument(
        "--base-path", default="/", help="the path the site is served below, e.g. /docs/"
    )
    parser.add_argument(
        "--selector",
        default=None,
        metavar="CSS",
        help="the element holding each page's main content (tag, #id, .class, [attr])",
    )
    parser.add_argument(
        "--endpoint",
        default=None,
        help="an Ask backend (the static index is then its fallback); default: none",
    )
    parser.add_argument(
        "--assets-path",
        default=DEFAULT_ASSETS_PATH,
        help=f"the assets folder inside SITE_DIR (default {DEFAULT_ASSETS_PATH})",
    )
    parser.add_argument("--site-name", default=None, help="default: the home page's title")
    parser.add_argument(
        "--inject",
        action="store_true",
        help="add the loader and the element to every HTML page lacking them",
    )
    parser.add_argument(
        "--layout",
        default=INJECTED_LAYOUT,
        help=f"the injected element's layout (default {INJECTED_LAYOUT})",
    )
    parser.add_argument(
        "--with-pyscript", action="store_true", help="also publish PyScript (docs/pyscript.md)"
    )
    parser.add_argument(
        "--backend-index",
        action="store_const",
        const=True,
        default=None,
        help="also write the backend's index file into the assets folder (default: only "
        "with --endpoint; a page answering by itself reads only the split index)",
    )
    return parser


def main(argv: list[str]) -> int:
    from ..indexing.site import normalize_base_path
    from ..integrations.publish import PublishSettings, inject_embed, publish_site

    args = build_parser().parse_args(argv)
    site_dir: Path = args.site_dir.resolve()
    try:
        options = embed_options(
            {"endpoint": args.endpoint, "layout": args.layout, "assets_path": args.assets_path}
        )
        base_path = normalize_base_path(args.base_path)
        settings = PublishSettings(
            options=options,
            base_path=base_path,
            site_name=args.site_name,
            body_selector=args.selector,
            with_pyscript=args.with_pyscript,
            backend_index=args.backend_index,
        )
        publish_site(site_dir, settings, say=print, warn=print)
        if args.inject:
            report = inject_embed(site_dir, options, base_path)
            print(
                f"agentskit-ask: embedded in {report.changed} pages "
                f"({report.unchanged} had it already)"
            )
    except (BuildError, EmbedConfigError) as error:
        print(f"agentskit-web publish: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    except OSError as error:
        reason = error.strerror or str(error)
        print(f"agentskit-web publish: cannot write into {site_dir}: {reason}", file=sys.stderr)
        return EXIT_UNUSABLE
    return 0
