"""`agentskit-web index SITE_DIR`: the search index of a built site, as one content-hashed file.

SITE_DIR is what a generator wrote (MkDocs `site/`, Sphinx `_build/html` or
`_build/dirhtml`, Docusaurus `build/`, any folder of HTML). The file goes into
the widget's assets folder of that site (`SITE_DIR/agentskit/`, where the
MkDocs plugin and the Sphinx extension put the runtime) unless `--out` says
otherwise, so it is published and cached like the runtime. A folder that
cannot be indexed is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final

from ..indexing.site import ASSETS_FOLDER, SiteIndexError, index_site_with_report, write_site_index

EXIT_UNUSABLE: Final = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentskit-web index",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("site_dir", type=Path, metavar="SITE_DIR", help="the built site")
    parser.add_argument(
        "--base-path",
        default="/",
        help="the path the site is served below, e.g. /docs/ (default /)",
    )
    parser.add_argument(
        "--selector",
        default=None,
        metavar="CSS",
        help="the element holding each page's main content (tag, #id, .class, [attr])",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"folder to write the index into (default SITE_DIR/{ASSETS_FOLDER}/)",
    )
    parser.add_argument("--site-name", default=None, help="default: the home page's title")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        index, report = index_site_with_report(
            args.site_dir,
            base_path=args.base_path,
            body_selector=args.selector,
            site_name=args.site_name,
        )
        out_dir = args.out if args.out is not None else args.site_dir / ASSETS_FOLDER
        written = write_site_index(index, out_dir)
    except SiteIndexError as error:
        print(f"agentskit-web index: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    except OSError as error:
        reason = error.strerror or str(error)
        print(f"agentskit-web index: cannot write the index: {reason}", file=sys.stderr)
        return EXIT_UNUSABLE
    skipped = ", ".join(f"{count} {why}" for why, count in sorted(report.skipped.items()))
    print(
        f"indexed {index.pages} pages ({index.generator}), {len(index.chunks)} chunks"
        + (f"; skipped {skipped}" if skipped else "")
    )
    size = written.stat().st_size
    print(f"wrote {written} ({size} bytes, {size / 1024:.1f} KiB)")
    return 0
