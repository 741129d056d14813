// Build-time helper (not served): compile unpacked wheels to CPython 3.14 bytecode
// with the Pyodide interpreter the page runs, so the page imports .pyc instead of
// compiling sources. The host Python is another version, so only Pyodide can do it.
//
//   node web/compile_wheels.mjs DIR [DIR ...]
//
// Each DIR is an unpacked wheel; every .py outside *.dist-info/ and *.data/ gets
// __pycache__/<name>.cpython-314.pyc next to it (unchecked-hash: valid without
// reading the source or its timestamp). Exit status 0 only if every file compiled;
// errors go to stderr. Prints one JSON line: {"failed": [], "magic": hex, "cache_tag": ...}.

import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

const COMPILE = `
import compileall, importlib.util, json, py_compile, re, site, sys

site_packages = site.getsitepackages()[0]
skip = re.compile(r"[\\\\/][^\\\\/]+\\.(?:dist-info|data)[\\\\/]")
total = 0
failed = []
for mount in MOUNTS:
    # ddir: the tracebacks name where Pyodide installs the wheel (the loader also
    # fixes co_filename to the real path at import time).
    ok = compileall.compile_dir(
        mount,
        ddir=site_packages,
        rx=skip,
        quiet=1,
        force=True,
        workers=1,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    if not ok:
        failed.append(mount)
json.dumps({
    "failed": failed,
    "magic": importlib.util.MAGIC_NUMBER.hex(),
    "cache_tag": sys.implementation.cache_tag,
})
`;

async function main() {
  const dirs = process.argv.slice(2);
  if (dirs.length === 0) {
    process.stderr.write("usage: node compile_wheels.mjs DIR [DIR ...]\n");
    return 2;
  }
  const pyodidePath = path.join(here, "node_modules", "pyodide", "pyodide.mjs");
  const { loadPyodide } = await import(pyodidePath);
  // Python's own output (compileall's error report) goes to stderr: stdout is the result.
  const pyodide = await loadPyodide({
    stdout: (line) => process.stderr.write(line + "\n"),
    stderr: (line) => process.stderr.write(line + "\n"),
  });
  const mounts = dirs.map((dir, index) => {
    const target = `/compile/w${index}`;
    pyodide.FS.mkdirTree(target);
    pyodide.mountNodeFS(target, path.resolve(dir));
    return target;
  });
  pyodide.globals.set("MOUNTS", pyodide.toPy(mounts));
  const result = JSON.parse(pyodide.runPython(COMPILE));
  if (result.failed.length > 0) {
    const names = result.failed.map((mount) => dirs[mounts.indexOf(mount)]);
    process.stderr.write(`compile_wheels: some files did not compile in ${names.join(", ")}\n`);
    return 1;
  }
  process.stdout.write(JSON.stringify(result) + "\n");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`compile_wheels: ${error && error.message ? error.message : error}\n`);
    process.exit(1);
  },
);
