"""`agentskit-web build|assets|serve|demo|preview|serve-ask|ask|turn|index|publish|check|eval|
report|bench`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP_FLAGS = frozenset({"-h", "--help"})


class NeedsCheckout(Exception):
    """A command that builds from the project's sources was run without a checkout."""


def _checkout_root(command: str) -> Path:
    """The checkout's root, or NeedsCheckout naming what works from the release wheel."""
    from ..build.files import BuildError, find_root

    try:
        return find_root()
    except BuildError:
        raise NeedsCheckout(
            f"`{command}` builds this project's own docs site and needs a source checkout "
            "(run it there); from the release wheel, `agentskit-web assets OUT_DIR` writes the "
            "widget and `agentskit-web publish SITE_DIR` adds it to a built site"
        ) from None


def _build(args: argparse.Namespace) -> int:
    from ..build import site as site_build

    _checkout_root("agentskit-web build")
    return site_build.main(["--dist", str(args.dist)] if args.dist else [])


def _assets(args: argparse.Namespace) -> int:
    """Write the embed's folder (loader, stylesheet, runtime, wheels) to OUT_DIR.

    From the release wheel the folder is the one it ships (with or without its
    PyScript build); from a checkout it is built (integrations/assets_source.py).
    """
    from ..build.assets import LOADER
    from ..build.files import BuildError
    from ..integrations.assets_source import publish_assets

    out = args.out_dir.resolve()
    try:
        origin = publish_assets(
            out, None, lambda message: print(f"  {message}"), with_pyscript=args.with_pyscript
        )
    except BuildError as error:
        print(f"agentskit-web assets: error: {error}", file=sys.stderr)
        return 1
    count = sum(1 for path in out.rglob("*") if path.is_file())
    print(f"wrote {args.out_dir} ({count} files, from {origin}); embed it with:")
    print(f'  <script type="module" src="/PATH/TO/{args.out_dir.name}/{LOADER}"></script>')
    print('  <agentskit-ask endpoint="/api/ask"></agentskit-ask>')
    if args.with_pyscript:
        from ..build.pyscript import PYSCRIPT_CONFIG, PYSCRIPT_ENTRY

        print("and PyScript pages with (see docs/pyscript.md):")
        print(
            f'  <script type="module" src="/PATH/TO/{args.out_dir.name}/{PYSCRIPT_ENTRY}"></script>'
        )
        print(f'  <script type="py" config="/PATH/TO/{args.out_dir.name}/{PYSCRIPT_CONFIG}">')
    return 0


def _serve(args: argparse.Namespace) -> int:
    from ..server.static import SITE_PORT, serve_forever

    dist = (args.dist or _checkout_root("agentskit-web serve") / "dist").resolve()
    if not (dist / "index.html").is_file():
        print(f"{dist} has no site yet: run `agentskit-web build` first", file=sys.stderr)
        return 1
    port = SITE_PORT if args.port is None else args.port
    print(f"Serving {dist} on http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
    serve_forever(dist, port=port)
    return 0


def _demo(args: argparse.Namespace) -> int:
    """Build, then serve dist/ and the Ask backend together on one origin until Ctrl-C."""
    from ..server.ask_serve import StartupError
    from ..server.demo_server import DemoConfig, serve_demo
    from ..server.static import SITE_PORT

    root = _checkout_root("agentskit-web demo")
    status = 0 if args.no_build else _build(args)
    if status != 0:
        return status
    port = SITE_PORT if args.port is None else args.port
    config = DemoConfig(
        dist=(args.dist or root / "dist").resolve(),
        site=root / "docs" / "site.json",
        docs=root / "docs",
    )
    try:
        serve_demo(config, port=port)
    except StartupError as error:
        print(f"agentskit-web demo: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        reason = error.strerror or str(error)
        print(f"agentskit-web demo: cannot listen on port {port}: {reason}", file=sys.stderr)
        return 2
    return 0


def _preview(args: argparse.Namespace) -> int:
    """A built docs site (SITE_DIR) and the Ask backend answering from it, on one origin."""
    from . import preview

    return preview.main(args)


def _serve_ask(rest: list[str]) -> int:
    from ..server import ask_serve

    return ask_serve.main(rest)


def _ask(rest: list[str]) -> int:
    from . import ask as ask_cli

    return ask_cli.main(rest)


def _turn(rest: list[str]) -> int:
    from . import turn as turn_cli

    return turn_cli.main(rest)


def _bench(args: argparse.Namespace) -> int:
    from ..bench.__main__ import main as bench_main

    return bench_main(args.rest)


def main(argv: list[str] | None = None) -> int:
    from ..extras import MissingExtra, require_for_command

    argv = sys.argv[1:] if argv is None else argv
    try:
        help_only = argv[:1] == ["check"] and bool(HELP_FLAGS & set(argv[1:]))
        if argv[:1] and not help_only:  # check's --help imports nothing of [testing]
            require_for_command(argv[0])
        return _dispatch(argv)
    except (MissingExtra, NeedsCheckout) as error:
        print(f"agentskit-web: {error}", file=sys.stderr)
        return 2


def _dispatch(argv: list[str]) -> int:
    if argv[:1] == ["serve-ask"]:
        return _serve_ask(argv[1:])
    if argv[:1] == ["ask"]:
        return _ask(argv[1:])
    if argv[:1] == ["turn"]:
        return _turn(argv[1:])
    if argv[:1] == ["index"]:
        from . import index

        return index.main(argv[1:])
    if argv[:1] == ["publish"]:
        from . import publish

        return publish.main(argv[1:])
    if argv[:1] == ["check"]:
        from . import check

        return check.main(argv[1:])
    if argv[:1] == ["eval"]:
        from . import eval as eval_cli

        return eval_cli.main(argv[1:])
    if argv[:1] == ["report"]:
        from . import report

        return report.main(argv[1:])
    parser = argparse.ArgumentParser(prog="agentskit-web", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser("build", help="assemble the offline static site in dist/")
    build.add_argument("--dist", type=Path, default=None)
    build.set_defaults(run=_build)

    assets = commands.add_parser(
        "assets", help="write the embed folder (agentskit-ask.js + runtime) to OUT_DIR"
    )
    assets.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    assets.add_argument(
        "--with-pyscript",
        action="store_true",
        help="also write PyScript, self-hosted, for <script type=py> pages (needs 'unsafe-eval')",
    )
    assets.set_defaults(run=_assets)

    for name, run, text in (
        ("serve", _serve, "serve dist/ on 127.0.0.1"),
        ("demo", _demo, "build, then serve the docs site + Ask backend on http://127.0.0.1:8000"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("--dist", type=Path, default=None)
        command.add_argument("--port", type=int, default=None, help="default 8000")
        command.set_defaults(run=run)
        if name == "demo":
            command.add_argument(
                "--no-build", action="store_true", help="serve dist/ as it is (make demo built it)"
            )

    preview = commands.add_parser(
        "preview",
        help="serve a built docs site (MkDocs site/, Sphinx _build/html...) and its Ask backend",
    )
    preview.add_argument("site_dir", type=Path, metavar="SITE_DIR")
    preview.add_argument("--port", type=int, default=None, help="default 8000")
    preview.add_argument(
        "--base-path",
        default=None,
        help="the path the site is published below, e.g. /docs/ (default: its index's, or /)",
    )
    preview.add_argument(
        "--no-widget",
        action="store_true",
        help="serve pages without the widget as they are (by default the preview adds it)",
    )
    preview.add_argument(
        "--static-answers",
        action="store_true",
        help="send the pages as built: a widget without endpoint answers from the static "
        "index (by default the preview wires it to its own backend)",
    )
    preview.set_defaults(run=_preview)

    # Listed for --help only: main() hands `serve-ask ...` to ask_serve before parsing.
    commands.add_parser("serve-ask", help="serve the reference Ask backend (serve-ask --help)")
    commands.add_parser("ask", help='stream one answer: ask URL "question" (ask --help)')
    commands.add_parser("turn", help='stream one turn: turn URL "question" (turn --help)')
    commands.add_parser(
        "index", help="index a built site (MkDocs, Sphinx, any HTML) for Ask: index SITE_DIR"
    )
    commands.add_parser(
        "publish",
        help="add the widget and its static answers to any built site: publish SITE_DIR",
    )
    commands.add_parser(
        "check", help="check the Ask widget on a page in Chromium: check URL (check --help)"
    )
    commands.add_parser(
        "eval", help="score a questions file against a built site or a backend (eval --help)"
    )
    commands.add_parser(
        "report", help="summarize a question log, or write it as one HTML page (report --help)"
    )

    bench = commands.add_parser("bench", help="browser benchmarks (see agentskit_web.bench)")
    bench.add_argument("rest", nargs=argparse.REMAINDER)
    bench.set_defaults(run=_bench)

    args = parser.parse_args(argv)
    return int(args.run(args))
