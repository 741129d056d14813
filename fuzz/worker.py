"""One fuzz target under atheris (libFuzzer), in its own process: `python -m fuzz.worker NAME`.

libFuzzer ends the process when it is done, so `fuzz/__main__.py` starts one
worker per target. The corpus libFuzzer grows is kept in .cache/fuzz/NAME
(reused by the next run); an input that fails is written by libFuzzer to
fixtures/fuzz/NAME/ (crash-*, timeout-*, oom-*), where the tests replay it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import pkgutil
import sys
from pathlib import Path
from typing import Any, Final

# Nothing of the package may be imported before `import_instrumented` runs (it would stay
# uninstrumented), so the fuzz modules that import it are imported inside the functions.
CORPUS: Final = Path(__file__).resolve().parent.parent / ".cache" / "fuzz"
# Per-input limits: an input that takes longer or more memory than this is itself a failure.
INPUT_TIMEOUT_SECONDS: Final = 10
RSS_LIMIT_MB: Final = 2_048


def write_corpus(name: str) -> Path:
    """The seeds of `name` as files in its corpus folder (content-addressed, so idempotent)."""
    from .seeds import seeds

    folder = CORPUS / name
    folder.mkdir(parents=True, exist_ok=True)
    for seed in seeds(name):
        (folder / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    return folder


def libfuzzer_arguments(name: str, runs: int, max_len: int, seed: int, corpus: Path) -> list[str]:
    """The libFuzzer command line: a bounded number of inputs, failures saved to fixtures/."""
    from .seeds import failures_dir

    return [
        sys.argv[0],
        f"-runs={runs}",
        f"-max_len={max_len}",
        f"-seed={seed}",
        f"-timeout={INPUT_TIMEOUT_SECONDS}",
        f"-rss_limit_mb={RSS_LIMIT_MB}",
        f"-artifact_prefix={failures_dir(name)}/",
        "-print_final_stats=1",
        str(corpus),
    ]


# Coverage is collected in our own pure layers and the markdown parser; instrumenting every
# loaded module (atheris.instrument_all) costs half a minute per start and guides no better.
INSTRUMENTED: Final = ("agentskit_web.protocol", "agentskit_web.chat", "markdown_it")


def import_instrumented(atheris: Any) -> None:
    """Import every module of the instrumented packages under atheris' import hook."""
    with atheris.instrument_imports(include=list(INSTRUMENTED)):
        for package_name in INSTRUMENTED:
            package = importlib.import_module(package_name)
            for module in pkgutil.walk_packages(package.__path__, package_name + "."):
                importlib.import_module(module.name)


def main() -> None:
    import atheris

    from .seeds import failures_dir
    from .targets import TARGETS

    parser = argparse.ArgumentParser(prog="python -m fuzz.worker")
    parser.add_argument("name", choices=sorted(TARGETS))
    parser.add_argument("--runs", type=int, required=True)
    parser.add_argument("--max-len", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    target = TARGETS[args.name]
    corpus = write_corpus(args.name)
    failures_dir(args.name).mkdir(parents=True, exist_ok=True)
    atheris.Setup(
        libfuzzer_arguments(args.name, args.runs, args.max_len, args.seed, corpus), target.run
    )
    atheris.Fuzz()


if __name__ == "__main__":
    import atheris as _atheris

    import_instrumented(_atheris)
    main()
