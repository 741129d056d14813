"""`agentskit-web report LOG [--html OUT.html] [--since DATE] [--corpus ID] [--export-eval FILE]
[--suggest-synonyms --site-dir SITE_DIR]`.

Exit codes: 0 done, 2 a log (or a date) that cannot be used (one line on stderr).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path

from ..insight.eval_questions import dump_eval_skeleton
from ..insight.report import summarize, summary_lines
from ..server.question_log import read_question_log
from ..server.turn_session_port import is_postgres_url, redacted
from .output import terminal_safe


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date (YYYY-MM-DD)") from None


def _log_name(log: str) -> str:
    """The log as the page's title names it: a file's name, a database's name (no password)."""
    if is_postgres_url(log):
        return "PostgreSQL " + redacted(log).split("?", 1)[0].rsplit("/", 1)[-1]
    return Path(log).name


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentskit-web report",
        description="Summarize a question log (serve-ask --question-log).",
    )
    parser.add_argument(
        "log", metavar="LOG", help="the SQLite file, or the postgresql:// URL, of the log"
    )
    parser.add_argument("--html", type=Path, metavar="OUT.html", help="write one HTML page")
    parser.add_argument("--since", type=_date, metavar="YYYY-MM-DD", help="from this day on")
    parser.add_argument("--corpus", help="only this corpus id")
    parser.add_argument(
        "--export-eval",
        type=Path,
        metavar="FILE",
        help="write the unanswered questions as a questions file to complete (agentskit-web eval)",
    )
    parser.add_argument(
        "--suggest-synonyms",
        action="store_true",
        help="list readers' words the docs never use, with the closest docs words, and print "
        "them as search.synonyms groups (needs --site-dir)",
    )
    parser.add_argument("--site-dir", type=Path, help="the built site the log's backend answers")
    parser.add_argument("--base-path", default=None, help="with --site-dir: where it is published")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.suggest_synonyms and args.site_dir is None:
        print("agentskit-web report: --suggest-synonyms needs --site-dir", file=sys.stderr)
        return 2
    try:
        rows = read_question_log(args.log, since=args.since, corpus=args.corpus)
    except ValueError as error:
        print(f"agentskit-web report: {terminal_safe(str(error))}", file=sys.stderr)
        return 2
    summary = summarize(rows)
    for line in summary_lines(summary):
        print(terminal_safe(line))
    if args.html is not None:
        from ..insight.report_html import render_report

        period = f"{summary.days[0]} to {summary.days[-1]}" if summary.days else "no question"
        if args.corpus:
            period += f", corpus {args.corpus}"
        page = render_report(
            summary, title=f"What readers asked: {_log_name(args.log)}", period=period
        )
        args.html.write_text(page, encoding="utf-8")
        print(f"wrote {args.html}")
    if args.export_eval is not None:
        questions = summary.unanswered
        args.export_eval.write_text(dump_eval_skeleton(questions), encoding="utf-8")
        print(f"wrote {args.export_eval} ({len(questions)} questions to complete)")
    if args.suggest_synonyms:
        return _suggest(args, summary.unanswered_askings)
    return 0


def _suggest(args: argparse.Namespace, questions: list[str]) -> int:
    from ..insight.synonyms import synonyms_json, unknown_lines, unknown_words
    from ..server.site_source import SiteSourceError, from_site_dir

    try:
        source = from_site_dir(args.site_dir, base_path=args.base_path)
    except SiteSourceError as error:
        print(f"agentskit-web report: {terminal_safe(str(error))}", file=sys.stderr)
        return 2
    words = unknown_words(questions, source.chunks)
    for line in unknown_lines(words):
        print(terminal_safe(line))
    print(terminal_safe(synonyms_json(words)))
    return 0
