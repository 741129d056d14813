// Build-time helper (not served): compile unpacked wheels to CPython 3.14 bytecode
// with the Pyodide interpreter the page runs, so the page imports .pyc instead of
// compiling sources. The host Python is another version, so only Pyodide can do it.
//
//   node web/compile_wheels.mjs LAYOUT:DIR [LAYOUT:DIR ...]
//
// Each DIR is an unpacked wheel; every .py outside *.dist-info/ and *.data/ is compiled
// (unchecked-hash: valid without reading the source or its timestamp). LAYOUT is
//   sources     __pycache__/<name>.cpython-314.pyc next to each .py (the .py stays);
//   sourceless  <name>.pyc at the .py's own path (`compileall -b`), so the wheel can
//               ship without the .py (wheel_compile.py drops the sources).
//   stdlib      as sourceless, for an unpacked python_stdlib.zip: every .py is compiled
//               and the code objects name the zip's path on sys.path (/lib/python314.zip),
//               as when zipimport compiles the source in the page.
// Exit status 0 only if every file compiled; errors go to stderr. Prints one JSON line:
// {"failed": [], "magic": hex, "cache_tag": ...}.

import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const LAYOUTS = new Set(["sources", "sourceless", "stdlib"]);

const COMPILE = `
import compileall, importlib.util, json, py_compile, re, site, sys

site_packages = site.getsitepackages()[0]
stdlib_zip = next(entry for entry in sys.path if entry.endswith(".zip"))
skip = re.compile(r"[\\\\/][^\\\\/]+\\.(?:dist-info|data)[\\\\/]")
failed = []
for mount, layout in MOUNTS:
    # ddir: the code objects (and tracebacks) name where Pyodide installs the wheel,
    # or the stdlib zip. With sources the loader fixes co_filename at import time;
    # sourceless it cannot.
    stdlib = layout == "stdlib"
    ok = compileall.compile_dir(
        mount,
        ddir=stdlib_zip if stdlib else site_packages,
        rx=None if stdlib else skip,
        quiet=1,
        force=True,
        legacy=(layout != "sources"),
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

function parseArgument(argument) {
  const colon = argument.indexOf(":");
  const layout = colon > 0 ? argument.slice(0, colon) : "";
  if (!LAYOUTS.has(layout)) {
    throw new Error(`expected LAYOUT:DIR, LAYOUT one of ${[...LAYOUTS].join(", ")}: ${argument}`);
  }
  return { layout, dir: argument.slice(colon + 1) };
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length === 0) {
    process.stderr.write("usage: node compile_wheels.mjs LAYOUT:DIR [LAYOUT:DIR ...]\n");
    return 2;
  }
  const jobs = args.map(parseArgument);
  const pyodidePath = path.join(here, "node_modules", "pyodide", "pyodide.mjs");
  const { loadPyodide } = await import(pyodidePath);
  // Python's own output (compileall's error report) goes to stderr: stdout is the result.
  const pyodide = await loadPyodide({
    stdout: (line) => process.stderr.write(line + "\n"),
    stderr: (line) => process.stderr.write(line + "\n"),
  });
  const mounts = jobs.map((job, index) => {
    const target = `/compile/w${index}`;
    pyodide.FS.mkdirTree(target);
    pyodide.mountNodeFS(target, path.resolve(job.dir));
    return [target, job.layout];
  });
  pyodide.globals.set("MOUNTS", pyodide.toPy(mounts));
  const result = JSON.parse(pyodide.runPython(COMPILE));
  if (result.failed.length > 0) {
    const names = result.failed.map(
      (mount) => jobs[mounts.findIndex(([target]) => target === mount)].dir,
    );
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
