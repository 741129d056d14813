"""The package's layers, read from the import graph of src/ (docs/design/architecture.md).

protocol <- chat <- browser is the page's stack; transports/ is the network edge
below chat; server/, build/ and bench/ stand beside, and cli/ sits on top. A
module may import its own layer and the layers this table allows, nothing
else; module-level imports form no cycle; only browser/ and the fetch
transport touch the page (`js`, `pyodide`, `pyscript`), and the pure layers
open no socket.
"""

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "agentskit_web"

# layer -> the other layers it may import
ALLOWED: dict[str, frozenset[str]] = {
    "base": frozenset(),
    "docs_text": frozenset(),
    "protocol": frozenset({"base"}),
    "transports": frozenset(),
    "chat": frozenset({"base", "protocol", "transports", "answering"}),
    "browser": frozenset({"base", "protocol", "transports", "answering", "chat"}),
    # What the backend and the page both run to answer (index format, search, extractive
    # answer): pure, like protocol/ and chat/.
    "answering": frozenset({"base", "protocol"}),
    # Reading a built site (or Markdown) into chunks: host files, no sockets.
    "indexing": frozenset({"base", "protocol", "docs_text", "answering"}),
    "server": frozenset({"base", "protocol", "docs_text", "answering", "indexing"}),
    "build": frozenset({"base", "protocol", "docs_text", "answering", "indexing"}),
    # The MkDocs plugin and the Sphinx extension publish build/'s assets folder, and check the
    # element's attributes with the widget's own bounds (chat/widget_config.py, pure).
    "integrations": frozenset(
        {"base", "protocol", "docs_text", "answering", "indexing", "build", "chat"}
    ),
    # `agentskit_web.sphinx`, the extension's documented name, re-exports integrations/.
    "sphinx": frozenset({"integrations"}),
    "bench.page": frozenset({"base", "protocol", "transports", "answering", "chat", "browser"}),
    # bench/corpora.py cites a built MkDocs site by docs_text's directory-URL rule.
    "bench": frozenset(
        {
            "base",
            "protocol",
            "docs_text",
            "transports",
            "answering",
            "indexing",
            "chat",
            "browser",
            "server",
            "build",
            "bench.page",
            "insight",
        }
    ),
    # The owner's eval and the question log's report: read what server/ writes, search as it does.
    "insight": frozenset({"base", "protocol", "answering", "indexing", "server"}),
    "testing": frozenset({"base", "server", "insight"}),
    "cli": frozenset(
        {
            "base",
            "protocol",
            "transports",
            "answering",
            "indexing",
            "chat",
            "browser",
            "server",
            "build",
            "bench",
            "testing",
            "insight",
            # `preview` publishes the widget's assets for a site built without the plugins.
            "integrations",
        }
    ),
}
PAGE_ONLY = ("js", "pyodide", "pyscript")
PAGE_TOUCHERS = ("browser", "transports.fetch_transport", "bench.page")
# Modules that open connections or files of the host; the pure layers import none of them.
HOST_IO = (
    "socket",
    "http",
    "urllib.request",
    "sqlite3",
    "httpx",
    "starlette",
    "uvicorn",
    "redis",
    "prometheus_client",
    "psycopg",
)
PURE_LAYERS = ("protocol", "chat", "answering")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    module_level: bool
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


BASE_MODULES = ("lazy_exports", "package_steps", "page_packages", "extras", "chromium_sandbox")
"""Top-level modules every layer may use: pure helpers with no layer of their own."""


def layer_of(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts or parts[0] in BASE_MODULES:
        return "base"
    if parts[:2] == ["bench", "page"]:
        return "bench.page"
    return parts[0]


def _type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import, and whether it runs at import time (not inside a def or TYPE_CHECKING)."""

    def walk(node: ast.AST, top: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, top
            elif isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            ) or _type_checking_block(child):
                yield from walk(child, False)
            else:
                yield from walk(child, top)

    yield from walk(tree, True)


def _resolve(source: str, is_package: bool, node: ast.ImportFrom) -> str:
    base = source.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def import_graph() -> tuple[set[str], list[Edge], dict[str, list[tuple[str, int]]]]:
    """Our modules, the edges between them, and each module's outside imports."""
    modules: set[str] = set()
    edges: list[Edge] = []
    outside: dict[str, list[tuple[str, int]]] = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        source = module_name(path)
        modules.add(source)
        is_package = path.name == "__init__.py"
        for node, top in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(source, is_package, node) if node.level else node.module or ""
                targets = [base]
                # `from package import module` names a module, not an attribute
                targets += [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                if target.split(".")[0] == PACKAGE:
                    edges.append(Edge(source, target, top, node.lineno))
                elif target:
                    outside.setdefault(source, []).append((target, node.lineno))
    known = [e for e in edges if e.target in modules]
    return modules, known, outside


def test_the_graph_is_read():
    modules, edges, _ = import_graph()
    assert f"{PACKAGE}.browser.widget" in modules
    assert any(
        e.source == f"{PACKAGE}.browser.widget" and layer_of(e.target) == "chat" for e in edges
    )


def test_no_layer_imports_upward_or_sideways():
    _, edges, _ = import_graph()
    violations = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in edges
        if (here := layer_of(e.source)) != (there := layer_of(e.target))
        and there not in ALLOWED[here]
    ]
    assert violations == []


def test_every_module_belongs_to_a_known_layer():
    modules, _, _ = import_graph()
    assert {layer_of(m) for m in modules} <= set(ALLOWED)


def test_module_level_imports_have_no_cycle():
    modules, edges, _ = import_graph()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for edge in edges:
        if edge.module_level and edge.target != edge.source:
            graph[edge.source].add(edge.target)
    # A package importing its own submodules at import time is how packages work, not a cycle.
    for module, targets in graph.items():
        graph[module] = {t for t in targets if not module.startswith(t + ".")}
    assert find_cycle(graph) is None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a path, or None (iterative DFS, colours white/grey/black)."""
    colour = dict.fromkeys(graph, 0)
    for root in sorted(graph):
        if colour[root]:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        colour[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                colour[node] = 2
                stack.pop()
            elif colour.get(child, 2) == 1:
                path = [n for n, _ in stack]
                return [*path[path.index(child) :], child]
            elif colour.get(child) == 0:
                colour[child] = 1
                stack.append((child, iter(sorted(graph[child]))))
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_layer_rule_catches_an_upward_import():
    edge = Edge(f"{PACKAGE}.chat.conversation", f"{PACKAGE}.browser.widget", True, 1)
    assert layer_of(edge.target) not in ALLOWED[layer_of(edge.source)]


def test_only_the_browser_layer_touches_the_page():
    _, _, outside = import_graph()
    touchers = sorted(
        source
        for source, targets in outside.items()
        if any(t.split(".")[0] in PAGE_ONLY for t, _ in targets)
    )
    assert f"{PACKAGE}.browser.widget" in touchers, "the check would prove nothing"
    assert [
        m for m in touchers if not any(m.startswith(f"{PACKAGE}.{p}") for p in PAGE_TOUCHERS)
    ] == []


def test_the_pure_layers_do_no_host_io():
    _, _, outside = import_graph()
    found = [
        f"{source} imports {target} (line {line})"
        for source, targets in outside.items()
        if layer_of(source) in PURE_LAYERS
        for target, line in targets
        if any(target == io or target.startswith(io + ".") for io in HOST_IO)
    ]
    assert found == []
