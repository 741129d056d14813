"""`agentskit-web eval QUESTIONS.yaml --site-dir SITE_DIR | --url ENDPOINT [--min-hit-rate R]`.

Exit codes: 0 the run passed (or no threshold), 1 the hit rate is below `--min-hit-rate`,
2 bad usage or a file/site/backend that cannot be used (one line on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..insight.eval_questions import EvalFileError, load_eval_file
from ..insight.eval_run import EndpointAsker, EvalRunError, SiteAsker, eval_lines, run_eval
from .output import terminal_safe


def _rate(value: str) -> float:
    try:
        rate = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 1")
    return rate


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentskit-web eval",
        description="Ask the questions of a questions file and score the pages cited "
        "(format: docs/testing.md).",
    )
    parser.add_argument("questions", type=Path, metavar="QUESTIONS.yaml")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--site-dir", type=Path, help="a built site, searched in process")
    where.add_argument("--url", help="a running Ask endpoint, e.g. http://127.0.0.1:8000/api/ask")
    parser.add_argument("--site", type=Path, default=None, help="with --site-dir: its site config")
    parser.add_argument("--base-path", default=None, help="with --site-dir: where it is published")
    parser.add_argument(
        "--token-env", default=None, help="with --url: the environment variable holding a bearer"
    )
    parser.add_argument(
        "--min-hit-rate", type=_rate, default=None, help="exit 1 when the hit rate is below this"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        questions = load_eval_file(args.questions)
        if args.site_dir is not None:
            site = SiteAsker(args.site_dir, site_config=args.site, base_path=args.base_path)
            site.check_pages(questions)
            report = run_eval(questions, site)
        else:
            if not args.url.startswith(("http://", "https://")):
                print("agentskit-web eval: --url must be an http(s) URL", file=sys.stderr)
                return 2
            token = os.environ.get(args.token_env, "") if args.token_env else None
            endpoint = EndpointAsker(args.url, token=token)
            try:
                report = run_eval(questions, endpoint)
            finally:
                endpoint.close()
    except (EvalFileError, EvalRunError) as error:
        print(f"agentskit-web eval: {terminal_safe(str(error))}", file=sys.stderr)
        return 2
    for line in eval_lines(report, args.min_hit_rate):
        print(terminal_safe(line))
    if args.min_hit_rate is not None and report.hit_rate < args.min_hit_rate:
        return 1
    return 0
