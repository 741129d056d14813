"""`python -m agentskit_web.bench [SECTION]`: the benchmark sections, one module each.

`protocol` and `ask` (stream.py), `boot` (boot.py, the default), `weight`
(weight.py), `render` (render.py), `turn` (turn.py), `backend` (backend.py),
`answers` (answers.py), `static` (static.py), `embed` (embed.py), `idle`
(idle_page.py), `scale` (scale.py), `question-log` (question_log.py) and `index`
(index.py); `make bench` runs them all. `snapshot` (snapshot.py) is an experiment
(issue 25), run by hand, not by `make bench`.
Harnesses that run inside a page live in bench/page/ and ship in their own
wheel, which only the benchmark pages fetch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

Section = Callable[[argparse.Namespace], int]
SUB_FIGURE_RUNS = 3
"""Runs of each `boot` sub-figure unless told, or --runs when that is smaller."""


def _section(module: str, command: str) -> Section:
    """A section imported only when it runs (the browser ones need Playwright, backend httpx)."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        section: Section = getattr(importlib.import_module(f".{module}", __package__), command)
        return section(args)

    return run


SECTIONS: dict[str, tuple[str, Section]] = {
    "protocol": (
        "CPython: Ask decode, content encode/decode MB/s vs a naive peer",
        _section("stream", "protocol_command"),
    ),
    "boot": (
        "page boot: raw Pyodide vs widget, shell paint, long tasks, bytes",
        _section("boot", "boot_command"),
    ),
    "weight": (
        "cold widget load: bytes by group raw/gzip/brotli, stored vs deflated members",
        _section("weight", "weight_command"),
    ),
    "ask": (
        "Ask adapter body path in Pyodide vs CPython, per-chunk flatness",
        _section("stream", "ask_command"),
    ),
    "render": (
        "Ask widget: chunk-to-paint latency, render work 4 vs 32, hostile markdown corpus",
        _section("render", "render_command"),
    ),
    "turn": (
        "turn snapshots vs Ask NDJSON, same 512-record answer: bytes, Pyodide CPU, render work",
        _section("turn", "turn_command"),
    ),
    "backend": (
        "reference Ask backend: TTFB, done, q/s at 10 clients",
        _section("backend", "backend_command"),
    ),
    "answers": (
        "retrieval eval: recall@1/@3, MRR, declined vs plain BM25 (own options: answers -h)",
        _section("answers", "main"),
    ),
    "static": (
        "static (split) index: bytes per question, index vs visible text, static = server, "
        "search ms vs FTS5 (own options: static -h)",
        _section("static", "main"),
    ),
    "scale": (
        "question -> first token p50: Redis rate limiter vs the in-process default, same run; "
        "turns/s with 1 and 3 instances behind haproxy; failover after a kill -9",
        _section("scale", "scale_command"),
    ),
    "question-log": (
        "serve-ask --question-log: request p50, SQLite and PostgreSQL logs vs off "
        "(same run, interleaved, beside a noise floor)",
        _section("question_log", "question_log_command"),
    ),
    "index": (
        "built site -> site index: pages/s, bytes vs visible text, broken citations (corpora)",
        _section("index", "index_command"),
    ),
    "embed": (
        "one-line embed: page-view cost vs no embed, intent->ready vs bare Pyodide, 2nd page",
        _section("embed", "embed_command"),
    ),
    "idle": (
        "page view before intent, first visit and returning reader vs no widget: bytes, "
        "long tasks, runtime requests; saved conversation visible after define",
        _section("idle_page", "idle_command"),
    ),
    "snapshot": (
        "experiment: boot from a Pyodide memory snapshot (own options: snapshot -h)",
        _section("snapshot", "main"),
    ),
}
OWN_OPTIONS = frozenset({"answers", "snapshot", "static"})
"""Sections that parse their own command line (everything after the section name)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="agentskit-web bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sections = parser.add_subparsers(dest="section")
    for name, (text, command) in SECTIONS.items():
        section = sections.add_parser(name, help=text)
        section.add_argument("--runs", type=int, default=5, help="runs per measure (>= 5)")
        section.add_argument(
            "--smoke",
            action="store_true",
            help="one run with the smallest inputs: shows the section still runs "
            "(`make bench-smoke`, part of `make test`); its figures are not judged",
        )
        section.add_argument("--dist", type=Path, default=None)
        section.add_argument("--no-build", action="store_true", help="use dist/ as it is")
        section.add_argument("--json", type=Path, default=None, help="also write results here")
        section.set_defaults(command=command)
        if name == "index":
            section.add_argument(
                "--corpora",
                type=Path,
                default=None,
                help="the shared corpora folder (default ../shared/corpora); without it, "
                "our own built demo docs are measured",
            )
        if name == "boot":
            section.add_argument(
                "--against",
                type=Path,
                default=None,
                help="another built dist (say, the tree before a change): both run "
                "interleaved in one browser and the widget's after/before ratio is printed",
            )
            section.add_argument(
                "--tasks-runs",
                type=int,
                default=None,
                help="runs of the main-thread long tasks sub-figure, CPU slowed 4x and "
                "unthrottled (default min(3, --runs); 0: skip it)",
            )
            section.add_argument(
                "--first-answer-runs",
                type=int,
                default=None,
                help="runs of the cold click -> first answer text sub-figure, static answers "
                "and backend (default min(3, --runs); 0: skip it)",
            )
            section.add_argument(
                "--pyscript-runs",
                type=int,
                default=None,
                help="runs of the PyScript page vs the plain embed sub-figure "
                "(default min(3, --runs); 0: skip it)",
            )
            section.add_argument(
                "--snapshot-runs",
                type=int,
                default=None,
                help='runs of the boot snapshot (snapshot="keep") sub-figure: intent -> ready '
                "cold/warm/restored and a question typed at intent + 2 s (default min(3, --runs); "
                "0: skip it)",
            )
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] and arguments[0] in OWN_OPTIONS:
        import importlib

        own = importlib.import_module(f".{arguments[0]}", __package__)
        return int(own.main(arguments[1:]))
    if not arguments or arguments[0].startswith("-"):
        arguments.insert(0, "boot")
    args = parser.parse_args(arguments)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.smoke:
        args.runs = 1
    if args.section == "boot":  # sub-figures follow --runs down: `--runs 1` is a quick smoke
        for name in ("tasks_runs", "first_answer_runs", "pyscript_runs", "snapshot_runs"):
            value = getattr(args, name)
            if value is None:
                setattr(args, name, min(SUB_FIGURE_RUNS, args.runs))
            elif args.smoke:
                setattr(args, name, min(value, 1))
    return int(args.command(args))


if __name__ == "__main__":
    raise SystemExit(main())
