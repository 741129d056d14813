"""Section `static`: answers with no backend (issue 21), each figure beside its baseline.

The browser part (bench/static_browser.py): question -> first answer text painted
with the runtime warm, beside the same question through serve-ask on loopback,
and the index bytes the browser fetched per question.
"""

from __future__ import annotations

import argparse


def static_command(args: argparse.Namespace) -> int:
    """Print every part of the section; non-zero when a part could not run."""
    from .static_browser import static_browser_command

    return static_browser_command(args)
