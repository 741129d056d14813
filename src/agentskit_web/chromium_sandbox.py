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
import sys
from pathlib import Path
from typing import Final

_USERNS_SWITCHES: Final = (
    # (file, the value that forbids unprivileged user namespaces)
    ("/proc/sys/user/max_user_namespaces", "0"),
    ("/proc/sys/kernel/unprivileged_userns_clone", "0"),  # Debian's switch
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"),  # Ubuntu 24.04
)


def _user_namespaces_allowed() -> bool:
    """Linux: whether an ordinary user may create the user namespace the sandbox needs."""
    for name, forbidding in _USERNS_SWITCHES:
        try:
            value = Path(name).read_text(encoding="ascii").strip()
        except OSError:
            continue  # not this kernel's switch
        if value == forbidding:
            return False
    return True


def sandbox_available() -> bool:
    """False as root (Chromium refuses) or where Linux forbids unprivileged user namespaces."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is not None and geteuid() == 0:
        return False
    return not sys.platform.startswith("linux") or _user_namespaces_allowed()


def sandbox_args() -> list[str]:
    """Chromium flags for the sandbox: none when it can run, else `--no-sandbox` said openly."""
    return [] if sandbox_available() else ["--no-sandbox"]


__all__ = ["sandbox_args", "sandbox_available"]
