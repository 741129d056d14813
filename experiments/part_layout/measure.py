"""Fewer, larger static index parts against the shipped layout (issue 33, item 7).

The split index (answering/static_index.py) cuts each kind of part at a target size
(terms and positions 6 kB, words 8 kB, texts 2 kB). Larger targets mean fewer files on
the host and fewer requests per question, but each question then fetches more bytes it
does not use. For each corpus with an eval file (ours and the real corpora, built with
MkDocs as the `answers` bench builds them) and each scale of the three targets, this
prints: the files published, and for every eval question asked first in a fresh page
the requests and brotli bytes it costs (manifest + parts), then the later questions'
bytes in one page that asks them all in turn. Same questions, same chunks, one run;
scale 1 is the shipped layout (the baseline).

    .venv/bin/python experiments/part_layout/measure.py [--scales 1,2,4,8] [--one-kind]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from statistics import mean, median

import brotli

from agentskit_web.answering import static_index
from agentskit_web.answering.site_index import SiteIndex
from agentskit_web.answering.static_index import StaticSearch, split_index
from agentskit_web.bench.answers import default_corpora
from agentskit_web.bench.static import FIRST_QUESTIONS, LIMIT, Corpus, corpora

TARGETS = ("TERM_PART_TARGET_BYTES", "WORD_PART_TARGET_BYTES", "TEXT_PART_TARGET_BYTES")
SHIPPED = {name: getattr(static_index, name) for name in TARGETS}


def fetch_all(search: StaticSearch, parts: dict[str, bytes], question: str) -> list[str]:
    fetched: list[str] = []
    while names := search.parts_for(question, LIMIT):
        for name in names:
            if search.add_part(name, parts[name]) is not None:
                raise RuntimeError(f"{name} refused")
        fetched.extend(names)
    return fetched


def p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def one_layout(corpus: Corpus, scale: int, scaled: Sequence[str] = TARGETS) -> str:
    for name, size in SHIPPED.items():
        setattr(static_index, name, size * scale if name in scaled else size)
    try:
        site = SiteIndex.of(
            corpus.chunks, site_name=corpus.name, base_path="/", generator="html", pages=0
        )
        files = split_index(site, synonyms=corpus.synonyms)
    finally:
        for name, size in SHIPPED.items():
            setattr(static_index, name, size)
    everything = files.all_files()
    br = {name: len(brotli.compress(data, quality=11)) for name, data in everything.items()}
    first_bytes: list[int] = []
    first_requests: list[int] = []
    for question in corpus.questions[:FIRST_QUESTIONS]:
        names = [
            files.manifest_name,
            *fetch_all(StaticSearch(files.manifest), files.parts, question),
        ]
        first_bytes.append(sum(br[name] for name in names))
        first_requests.append(len(names))
    page = StaticSearch(files.manifest)
    later: list[int] = []
    for number, question in enumerate(corpus.questions):
        names = fetch_all(page, files.parts, question)
        if number:
            later.append(sum(br[name] for name in names))
    which = "" if tuple(scaled) == TARGETS else f" ({', '.join(scaled)} only)"
    return (
        f"  x{scale}{which}: {len(everything):5d} files ({sum(br.values()) / 1000:7.1f} kB br); "
        f"first question p50 {median(first_bytes) / 1000:6.1f} kB, p90 "
        f"{p90(first_bytes) / 1000:6.1f} kB, mean {mean(first_bytes) / 1000:6.1f} kB in "
        f"{median(first_requests):.0f} requests (p90 {p90(first_requests):.0f}); "
        f"later mean {mean(later) / 1000:5.1f} kB"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", default="1,2,4,8")
    parser.add_argument("--one-kind", action="store_true", help="also scale each target alone (x4)")
    args = parser.parse_args(argv)
    scales = [int(s) for s in args.scales.split(",")]
    found, notes = corpora(default_corpora(), pages=0)
    for note in notes:
        print(note)
    print(f"targets at x1 (shipped): {SHIPPED}")
    for corpus in found:
        print(f"[{corpus.name}] {len(corpus.chunks)} chunks, {len(corpus.questions)} questions")
        for scale in scales:
            print(one_layout(corpus, scale), flush=True)
        if args.one_kind:
            for name in TARGETS:
                print(one_layout(corpus, 4, (name,)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
