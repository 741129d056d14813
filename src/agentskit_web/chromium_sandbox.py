"""Whether Chromium can run with its sandbox here, for every place that launches it.

Playwright launches Chromium with `--no-sandbox` unless told otherwise
(`chromium_sandbox=False` is its default). The sandbox is what keeps a page
that exploits the renderer inside it, and the testing plugin and `check` load
pages we do not control, so it is on wherever the platform allows it.

It does not allow it as root: Chromium refuses to start a sandboxed browser
for uid 0 ("Running as root without --no-sandbox is not supported"). CI
containers often run as root, so there the sandbox stays off, and
docs/testing.md says how to run as an ordinary user instead (a non-root user
in the container; on Debian the sandbox then uses unprivileged user
namespaces, which the kernel must allow).
"""

import os


def sandbox_available() -> bool:
    """True unless this process runs as root on a POSIX system (Chromium refuses then)."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid is None or geteuid() != 0


def sandbox_args() -> list[str]:
    """Chromium flags for the sandbox: none when it can run, else `--no-sandbox` said openly."""
    return [] if sandbox_available() else ["--no-sandbox"]


__all__ = ["sandbox_args", "sandbox_available"]
