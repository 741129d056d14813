"""`make fuzz`: every target for a number of inputs each; a line per target with count and time.

`python -m fuzz --runs 1000000` is the campaign; `make test` runs
`python -m fuzz --runs 2000` as a short pass. Each target runs in its own
process (see worker.py); a failing input is saved under fixtures/fuzz/ and
makes this command exit non-zero.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Final

from .seeds import ROOT, failures_dir
from .targets import TARGETS

CAMPAIGN_RUNS: Final = 1_000_000
DEFAULT_MAX_LEN: Final = 16_384
DEFAULT_SEED: Final = 1
DONE_LINE: Final = re.compile(r"Done (\d+) runs in (\d+) second")


@dataclass
class Outcome:
    """What one target's worker reported."""

    name: str
    runs: int | None
    seconds: float
    returncode: int
    failures: list[str]
    tail: str


def run_target(name: str, runs: int, max_len: int, seed: int) -> Outcome:
    """Run one worker to completion and read its libFuzzer summary."""
    before = set(_failure_files(name))
    started = time.perf_counter()
    command = [sys.executable, "-m", "fuzz.worker", name, f"--runs={runs}"]
    command += [f"--max-len={max_len}", f"--seed={seed}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, errors="replace")
    seconds = time.perf_counter() - started
    found = DONE_LINE.search(done.stderr)
    new = sorted(set(_failure_files(name)) - before)
    folder = failures_dir(name)
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    tail = "\n".join(done.stderr.strip().splitlines()[-25:])
    return Outcome(
        name, int(found.group(1)) if found else None, seconds, done.returncode, new, tail
    )


def _failure_files(name: str) -> list[str]:
    folder = failures_dir(name)
    return [path.name for path in folder.iterdir()] if folder.is_dir() else []


def report(outcome: Outcome) -> str:
    """One line: inputs run, wall time, rate, and any failing input saved."""
    runs = "?" if outcome.runs is None else f"{outcome.runs:,}"
    rate = f"{outcome.runs / outcome.seconds:,.0f}/s" if outcome.runs and outcome.seconds else "-"
    status = "ok" if outcome.returncode == 0 and not outcome.failures else "FAILED"
    saved = f" saved: {', '.join(outcome.failures)}" if outcome.failures else ""
    timing = f"{outcome.seconds:>8.1f} s {rate:>9}"
    return f"  {outcome.name:<26}{runs:>12} inputs {timing}  {status}{saved}"


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    parser.add_argument("--runs", type=int, default=CAMPAIGN_RUNS, help="inputs per target")
    parser.add_argument("--max-len", type=int, default=DEFAULT_MAX_LEN, help="longest input")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="libFuzzer's seed")
    parser.add_argument("--only", nargs="*", choices=sorted(TARGETS), help="these targets")
    args = parser.parse_args()
    names = args.only or list(TARGETS)
    print(f"fuzz: {len(names)} targets, {args.runs:,} inputs each (atheris/libFuzzer)", flush=True)
    failed = False
    for name in names:
        outcome = run_target(name, args.runs, args.max_len, args.seed)
        print(report(outcome), flush=True)
        if outcome.returncode != 0 or outcome.failures or outcome.runs is None:
            failed = True
            print(outcome.tail, file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
