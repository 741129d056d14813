"""The opt-in PyScript build (`agentskit-web assets OUT --with-pyscript`), beside the runtime.

The default embed does not ship PyScript: its boot calls `Function(...)`, which
a strict CSP without `'unsafe-eval'` forbids (docs/security.md). A site whose
pages are written in PyScript opts in, and the assets folder gains:

```
OUT_DIR/
  agentskit-ask-pyscript.js     the entry pages link (stable name, revalidated)
  agentskit-ask-pyscript.json   the PyScript config pages name (stable name, revalidated)
  pyscript.<hash>/              @pyscript/core's browser bundle (web/package-lock.json)
```

The config points PyScript's interpreter at `runtime.<hash>/pyodide.mjs`, the
same Pyodide and the same lock the embed loads, and lists the page package
with `packages_cache: "passthrough"`: PyScript then hands the names to
`loadPyodide({packages})`, which installs them from the lock (integrity
checked). PyScript's other path, `micropip.install`, is never taken, so nothing
is downloaded from a package index at run time. The entry publishes the
stylesheet the way the loader does (`globalThis.agentskitAsk`) and imports
PyScript's `core.js`.

PyScript's bundle names CDN URLs as defaults (the Pyodide and MicroPython it
would fetch when a page names no interpreter, MicroPython's package index):
each is rewritten to a relative path inside the folder that does not exist, so
a page that leaves the config out fails on its own origin instead of reaching a
CDN, and the build's CDN scan stays clean. Source maps are left out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ..page_packages import PAGE_PACKAGE
from .cdn_scan import cdn_pattern
from .files import BuildError

PYSCRIPT_PACKAGE: Final = "@pyscript/core"
PYSCRIPT_SOURCE: Final = Path("node_modules") / "@pyscript" / "core" / "dist"
"""Where `npm ci` in web/ puts PyScript's browser bundle."""
PYSCRIPT_ENTRY: Final = "agentskit-ask-pyscript.js"
"""What a PyScript page links: `<script type="module" src=".../agentskit-ask-pyscript.js">`."""
PYSCRIPT_CONFIG: Final = "agentskit-ask-pyscript.json"
"""What a PyScript page names: `<script type="py" config=".../agentskit-ask-pyscript.json">`."""
PYSCRIPT_CORE: Final = "core.js"
SHIPPED_SUFFIXES: Final = frozenset({".js", ".css"})
NO_CDN: Final = "./no-cdn/"
"""What a CDN URL in PyScript's bundle becomes: a relative path that never exists."""
_SOURCE_MAP_COMMENT: Final = re.compile(rb"\n?//# sourceMappingURL=[^\n]*")


def pyscript_files(web: Path) -> dict[str, bytes]:
    """PyScript's bundle by file name: scripts and stylesheets, CDN URLs and map comments out."""
    source = web / PYSCRIPT_SOURCE
    if not (source / PYSCRIPT_CORE).is_file():
        raise BuildError(f"{PYSCRIPT_PACKAGE} is not installed in {web} (run `npm ci` in web/)")
    pattern = re.compile(cdn_pattern(web).pattern.encode("ascii") + rb"[^\s\"'`$\\]*")
    files = {}
    for path in sorted(source.iterdir()):
        if path.is_file() and path.suffix in SHIPPED_SUFFIXES:
            data = _SOURCE_MAP_COMMENT.sub(b"", path.read_bytes())
            files[path.name] = pattern.sub(NO_CDN.encode("ascii"), data)
    return files


def pyscript_config(runtime_dir: str) -> dict[str, object]:
    """PyScript's config: our Pyodide, the page package from its lock, never micropip."""
    return {
        "interpreter": f"./{runtime_dir}pyodide.mjs",
        "packages": [PAGE_PACKAGE],
        "packages_cache": "passthrough",
    }


def entry_text(folder: str, assets: Mapping[str, object]) -> str:
    """The entry module: publish the assets as the loader does, then start PyScript."""
    published = json.dumps(assets, sort_keys=True)
    return (
        "// agentskit-web: PyScript pages link this file (agentskit-web assets --with-pyscript).\n"
        "// It tells the widget where its stylesheet is, as agentskit-ask.js does, then starts\n"
        "// PyScript, which boots the same Pyodide and lock (agentskit-ask-pyscript.json).\n"
        'const BASE = new URL(".", import.meta.url);\n'
        f"globalThis.agentskitAsk ??= Object.freeze({{ assets: {published}, base: BASE.href, "
        "runtime: () => null });\n"
        f'await import(new URL("{folder}{PYSCRIPT_CORE}", BASE).href);\n'
    )


def pyscript_outputs(
    folder: str, files: Mapping[str, bytes], assets: Mapping[str, object]
) -> dict[str, bytes]:
    """Every file the option adds to the assets folder, by path inside it."""
    outputs = {f"{folder}{name}": data for name, data in files.items()}
    outputs[PYSCRIPT_ENTRY] = entry_text(folder, assets).encode("utf-8")
    config = pyscript_config(str(assets["runtime"]))
    outputs[PYSCRIPT_CONFIG] = (json.dumps(config, indent=1, sort_keys=True) + "\n").encode()
    return outputs
