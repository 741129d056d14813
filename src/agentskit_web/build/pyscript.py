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


def entry_text(folder: str, assets: Mapping[str, object], config: Mapping[str, object]) -> str:
    """The entry module: publish the assets as the loader does, then start PyScript.

    PyScript resolves a config's `interpreter` against the page, not against the config
    file (`@pyscript/core` src/core.js, `relative_url(config.interpreter)`), so a page
    outside the folder would ask for `runtime.<hash>/` beside itself and never start.
    The entry knows where the folder is (`import.meta.url`): every `<script type="py">`
    naming our config file gets the same config inline, its interpreter an absolute URL
    inside the folder. A page anywhere on the site then boots with the two paths it
    names. The entry imports the interpreter module too (the same URL PyScript imports:
    one fetch, one module); when that fails, the reader sees why in the script's place,
    as text (never HTML), instead of an empty page and one console line."""
    published = json.dumps(assets, sort_keys=True)
    interpreter = str(config["interpreter"]).removeprefix("./")
    inline = json.dumps({k: v for k, v in config.items() if k != "interpreter"}, sort_keys=True)
    return (
        "// agentskit-web: PyScript pages link this file (agentskit-web assets --with-pyscript).\n"
        "// It tells the widget where its stylesheet is, as agentskit-ask.js does, names the\n"
        "// folder's Pyodide by its absolute URL in the config of every script that names\n"
        f"// {PYSCRIPT_CONFIG} (PyScript resolves it against the page), then starts\n"
        "// PyScript. A runtime that does not load is shown in the page, in the script's place.\n"
        'const BASE = new URL(".", import.meta.url);\n'
        f"globalThis.agentskitAsk ??= Object.freeze({{ assets: {published}, base: BASE.href, "
        "runtime: () => null });\n"
        f'const CONFIG = new URL("{PYSCRIPT_CONFIG}", BASE).href;\n'
        f'const INTERPRETER = new URL("{interpreter}", BASE).href;\n'
        "const scripts = [...document.querySelectorAll('script[type=\"py\"][config]')].filter(\n"
        '  (script) => new URL(script.getAttribute("config"), document.baseURI).href === CONFIG,\n'
        ");\n"
        f"const inline = JSON.stringify({{ ...{inline}, interpreter: INTERPRETER }});\n"
        'for (const script of scripts) script.setAttribute("config", inline);\n'
        "const runtime = import(INTERPRETER).then(() => null, (error) => error);\n"
        f'await import(new URL("{folder}{PYSCRIPT_CORE}", BASE).href);\n'
        "const failure = await runtime;\n"
        "if (failure) {\n"
        "  for (const script of scripts) {\n"
        '    const note = document.createElement("p");\n'
        '    note.setAttribute("role", "alert");\n'
        '    note.className = "agentskit-ask-pyscript-error";\n'
        '    note.style.cssText = "border: 2px solid #b00020; padding: 0.75em; color: #b00020;";\n'
        "    note.textContent = `The Ask box could not start: its Python runtime did not load "
        "from ${INTERPRETER} (${failure}). Publish the whole assets folder "
        "(agentskit-web assets --with-pyscript) beside this page's links to it.`;\n"
        "    script.before(note);\n"
        "  }\n"
        "}\n"
    )


def pyscript_outputs(
    folder: str, files: Mapping[str, bytes], assets: Mapping[str, object]
) -> dict[str, bytes]:
    """Every file the option adds to the assets folder, by path inside it."""
    outputs = {f"{folder}{name}": data for name, data in files.items()}
    config = pyscript_config(str(assets["runtime"]))
    outputs[PYSCRIPT_ENTRY] = entry_text(folder, assets, config).encode("utf-8")
    outputs[PYSCRIPT_CONFIG] = (json.dumps(config, indent=1, sort_keys=True) + "\n").encode()
    return outputs
