"""Section `boot`: it measures, in headless Debian Chromium against dist/ on 127.0.0.1, with
the median of N runs, cold (a fresh browser context: empty HTTP and code
caches) and warm (the same context, reloaded):
- raw runtime boot: web/raw.html loads the same Pyodide + lock and imports
  pydantic, with no PyScript and no widget;
- widget boot: index.html until the widget root has data-state="ready";
- the boot ratio: the median of the per-run widget/raw ratios, each pair run back to
  back (goal <= 1.15), and the ratio of the two medians beside;
- shell visible and typeable: max(first contentful paint, the inline mark
  placed right after the widget markup) (goal < 100 ms), beside the bare page's first
  contentful paint in the same runs (what the browser takes to paint a page with
  nothing of ours);
- long tasks (PerformanceObserver "longtask") on the main thread before ready;
- bytes per file group requested on a cold widget load: raw, gzip, and brotli
  (the `.br` copy our servers send; raw where there is none).
Raw and widget runs alternate so background load hits both alike.

A sub-figure (bench/boot_tasks.py; `--tasks-runs N`, 0 to skip) counts main-thread long
tasks from intent to 4 s after ready and across the first question, with the CPU slowed
4x and unthrottled, per boot step, next to the bare page of the same runs.

A sub-figure (bench/first_answer.py; `--first-answer-runs N`, 0 to skip) times a cold
click to the first answer text, static answers and backend, next to the bare page cold.

Every sub-figure runs min(3, --runs) times unless told: `--runs 1` is the quick smoke.

A sub-figure (bench/snapshot_boot.py; `--snapshot-runs N`, 0 to skip) measures the opt-in
boot snapshot: intent -> ready cold, warm and restored, and a question typed at intent + 2 s
to its first answer text, each next to the raw page of the same runs.

A sub-figure (bench/pyscript_boot.py; `--pyscript-runs N`, 0 to skip) times the
PyScript page of docs/pyscript.md next to the plain embed, from one assets folder
written with `--with-pyscript`.

`--against DIST` boots a second built dist (the tree before a change) interleaved
with this one in the same browser and prints the widget's after/before ratio, per
run and of the medians: on a shared machine the boot ratio moves between runs by
more than most changes move it, and interleaving exposes both trees to the same load.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .boot_runs import (
    RAW,
    WIDGET,
    Samples,
    median,
    one_run,
)
from .harness import Session, open_session

SHELL_GOAL_MS = 100.0
RATIO_GOAL = 1.15


def _group(path: str) -> str:
    if path.endswith(".whl"):
        return "wheels"
    if path.endswith("python_stdlib.zip"):
        return "stdlib"
    if "/runtime." in f"/{path}":
        return "runtime"
    return "app"


def bytes_by_group(dist: Path, urls: list[str]) -> dict[str, dict[str, int]]:
    """Raw, gzip and brotli sizes of the distinct dist/ files these URLs fetched."""
    groups: dict[str, dict[str, int]] = {
        name: {"files": 0, "raw": 0, "gzip": 0, "br": 0}
        for name in ("runtime", "stdlib", "wheels", "app")
    }
    seen: set[str] = set()
    for url in urls:
        path = urlsplit(url).path.lstrip("/") or "index.html"
        if path.endswith("/"):
            path += "index.html"
        file = dist / path
        if path in seen or not file.is_file():
            continue
        seen.add(path)
        data = file.read_bytes()
        group = groups[_group(path)]
        group["files"] += 1
        group["raw"] += len(data)
        group["gzip"] += len(gzip.compress(data, compresslevel=6))
        brotli = file.with_name(file.name + ".br")
        group["br"] += brotli.stat().st_size if brotli.is_file() else len(data)
    return groups


def run_boot(args: argparse.Namespace, session: Session) -> dict[str, Any]:
    cold = {RAW.label: Samples(), WIDGET.label: Samples()}
    warm = {RAW.label: Samples(), WIDGET.label: Samples()}
    urls: list[str] = []
    for run in range(args.runs):
        order = (RAW, WIDGET) if run % 2 == 0 else (WIDGET, RAW)
        for kind in order:
            record = urls if (kind is WIDGET and not urls) else None
            one_run(session, kind, cold[kind.label], warm[kind.label], record)
        print(f"  run {run + 1}/{args.runs} done", file=sys.stderr, flush=True)
    result: dict[str, Any] = {"runs": args.runs, "cold": {}, "warm": {}}
    for state, samples in (("cold", cold), ("warm", warm)):
        raw, widget = samples[RAW.label], samples[WIDGET.label]
        result[state] = {
            "raw_ms": median(raw.ready),
            "widget_ms": median(widget.ready),
            "ratio": median(widget.ready) / median(raw.ready),
            "ratio_pairwise": median([w / r for w, r in zip(widget.ready, raw.ready, strict=True)]),
            "shell_ms": median(widget.shell),
            "raw_first_paint_ms": median(raw.first_paint),
            "mount_ms": median(widget.mount),
            "ratio_without_mount": (
                median([r - i for r, i in zip(widget.ready, widget.mount, strict=False)])
                / median(raw.ready)
            ),
            "widget_long_tasks_ms": median(widget.long_tasks),
            "raw_long_tasks_ms": median(raw.long_tasks),
            "samples": {"raw": raw.ready, "widget": widget.ready, "shell": widget.shell},
        }
    result["bytes"] = bytes_by_group(session.dist, urls)
    return result


def _kb(value: int) -> str:
    return f"{value / 1024:,.0f} KiB"


def format_boot(result: dict[str, Any], browser_version: str) -> str:
    cold, warm = result["cold"], result["warm"]

    def row(label: str, key: str, fmt: str, goal: str = "") -> str:
        return f"  {label:<34}{format(cold[key], fmt):>12}{format(warm[key], fmt):>12}   {goal}"

    def verdict(key: str, ok: Callable[[float], bool]) -> str:
        return "ok" if ok(cold[key]) and ok(warm[key]) else "MISSED"

    lines = [
        f"boot benchmark: median of {result['runs']} runs, headless Chromium {browser_version}",
        f"  {'':<34}{'cold':>12}{'warm':>12}   goal",
        row("raw runtime boot (ms)", "raw_ms", ".0f"),
        row("widget boot to ready (ms)", "widget_ms", ".0f"),
        row("  of which widget mount (ms)", "mount_ms", ".0f"),
        row(
            "ratio widget/raw, median of pairs",
            "ratio_pairwise",
            ".2f",
            f"<= {RATIO_GOAL} ({verdict('ratio_pairwise', lambda v: v <= RATIO_GOAL)})",
        ),
        row("ratio of the medians", "ratio", ".2f", "(info)"),
        row("ratio without the widget mount", "ratio_without_mount", ".2f", "(info)"),
        row(
            "shell visible+typeable (ms)",
            "shell_ms",
            ".0f",
            f"< {SHELL_GOAL_MS:.0f} ({verdict('shell_ms', lambda v: v < SHELL_GOAL_MS)})",
        ),
        row("  baseline: bare page's first paint", "raw_first_paint_ms", ".0f", "(same runs)"),
        row("long tasks before ready, widget", "widget_long_tasks_ms", ".0f"),
        row("long tasks before ready, raw", "raw_long_tasks_ms", ".0f"),
        "",
        f"  {'cold widget load, bytes by group':<34}{'files':>7}{'raw':>14}{'gzip':>14}"
        f"{'br (sent)':>14}",
    ]
    total = {"files": 0, "raw": 0, "gzip": 0, "br": 0}
    for name, group in result["bytes"].items():
        lines.append(
            f"  {name:<34}{group['files']:>7}{_kb(group['raw']):>14}{_kb(group['gzip']):>14}"
            f"{_kb(group['br']):>14}"
        )
        for key in total:
            total[key] += group[key]
    lines.append(
        f"  {'total':<34}{total['files']:>7}{_kb(total['raw']):>14}{_kb(total['gzip']):>14}"
        f"{_kb(total['br']):>14}"
    )
    for state in ("cold", "warm"):
        samples = result[state]["samples"]
        lines.append(
            f"  {state} samples ms: raw {_ints(samples['raw'])}; widget {_ints(samples['widget'])};"
            f" shell {_ints(samples['shell'])}"
        )
    return "\n".join(lines)


def _ints(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.0f}" for v in values) + "]"


def run_against(runs: int, after: Session, before: Session) -> str:
    """Both dists' widget and raw pages, interleaved in one browser: the widget's
    after/before ratio of medians, and per run, so a change is judged by what moved
    together rather than by two boot ratios taken minutes apart."""
    sessions = {"before": before, "after": after}
    cold = {(name, kind.label): Samples() for name in sessions for kind in (RAW, WIDGET)}
    warm = {(name, kind.label): Samples() for name in sessions for kind in (RAW, WIDGET)}
    for run in range(runs):
        order = [(name, kind) for kind in (WIDGET, RAW) for name in sessions]
        for name, kind in reversed(order) if run % 2 else order:
            one_run(sessions[name], kind, cold[name, kind.label], warm[name, kind.label], None)
        print(f"  run {run + 1}/{runs} done", file=sys.stderr, flush=True)
    lines = [f"boot, interleaved against {before.dist}: median of {runs} runs (ms)"]
    for state, samples in (("cold", cold), ("warm", warm)):
        for name in sessions:
            widget, raw = samples[name, WIDGET.label].ready, samples[name, RAW.label].ready
            lines.append(
                f"  {state} {name:<7} widget {median(widget):>7.0f}  raw {median(raw):>7.0f}"
                f"  widget/raw {median(widget) / median(raw):.2f}"
            )
        now, then = samples["after", WIDGET.label].ready, samples["before", WIDGET.label].ready
        paired = ", ".join(f"{a / b:.2f}" for a, b in zip(now, then, strict=True))
        lines.append(
            f"  {state} widget after/before {median(now) / median(then):.2f} (per run: {paired})"
        )
    return "\n".join(lines)


def boot_command(args: argparse.Namespace) -> int:
    with open_session(args.dist, build=not args.no_build) as session:
        if args.against is not None:
            from ..server.static import StaticSite

            with StaticSite(args.against.resolve()) as site:
                other = Session(args.against.resolve(), site.url, session.browser)
                print(run_against(args.runs, session, other))
            return 0
        result = run_boot(args, session)
        version = session.browser.version
        print(format_boot(result, version), flush=True)
        if args.tasks_runs > 0:
            from .boot_tasks import format_boot_tasks, run_boot_tasks

            print(format_boot_tasks(run_boot_tasks(args.tasks_runs, session), args.tasks_runs))
        if args.first_answer_runs > 0:
            from .first_answer import run_first_answer

            print(run_first_answer(args.first_answer_runs, session), flush=True)
        if args.pyscript_runs > 0:
            from .pyscript_boot import run_pyscript_boot

            print("\n".join(run_pyscript_boot(args.pyscript_runs, session)))
        if args.snapshot_runs > 0:
            from .snapshot_boot import run_snapshot_boot

            print(run_snapshot_boot(args.snapshot_runs, session), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0
