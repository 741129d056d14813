"""The static (split) index: round trip, parts a question fetches, static = server, bad parts."""

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import agentskit_web.answering.static_index as static_index
from agentskit_web.answering.chunk import Chunk, Found
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.site_index import SiteIndex
from agentskit_web.answering.static_index import (
    MANIFEST_INVALID,
    PART_INVALID,
    PART_MISMATCH,
    PART_TOO_LARGE,
    PART_UNKNOWN,
    PartInvalidError,
    PartsMissing,
    StaticIndexError,
    StaticIndexFiles,
    StaticSearch,
    parse_static_manifest,
    split_index,
)
from agentskit_web.answering.text_terms import tokens
from agentskit_web.bench.answers import PROJECT_ROOT, load_eval_set, site_synonyms
from agentskit_web.protocol.limits import JSON_MAX_NESTING
from agentskit_web.server.retrieval import folder_chunks

LIMIT = 4


ALPHA = Chunk("/a/", None, "A", "A", "alpha")
"""A one-section page: the smallest site a test of the format needs."""


def site_of(chunks: Sequence[Chunk] = (ALPHA,), **fields: Any) -> SiteIndex:
    """A site index of `chunks` with the tests' usual fields (a 20-page HTML site named
    Docs at /), any of them replaced."""
    settings: dict[str, Any] = {
        "site_name": "Docs",
        "base_path": "/",
        "generator": "html",
        "pages": 20,
        **fields,
    }
    return SiteIndex.of(list(chunks), **settings)


@pytest.fixture(scope="module")
def our_docs() -> tuple[list[Chunk], StaticIndexFiles, SearchIndex]:
    eval_set = load_eval_set()
    chunks = folder_chunks(PROJECT_ROOT / eval_set.corpus.docs, exclude=eval_set.corpus.exclude)
    site = site_of(chunks)
    synonyms = site_synonyms()
    return (
        chunks,
        split_index(site, synonyms=synonyms),
        SearchIndex.from_chunks(chunks, synonyms=synonyms),
    )


def fetch_all(search: StaticSearch, files: StaticIndexFiles, question: str) -> list[list[str]]:
    """Every round of parts the question needs, each added; the rounds."""
    rounds: list[list[str]] = []
    while names := search.parts_for(question, LIMIT):
        assert len(rounds) < 6, "parts_for must converge"
        for name in names:
            assert search.add_part(name, files.parts[name]) is None
        rounds.append(names)
    return rounds


def _body(data: bytes) -> bytes:
    """A part's body: its bytes without the proof that opens them."""
    proof_end = data.index(b'",') + 2
    return b"{" + data[proof_end:]


def test_every_part_is_checked_against_its_kinds_root(our_docs: tuple) -> None:
    """The manifest's name holds its own hash; each part's name holds its kind's tree root
    and its number, and its proof leads from its body's hash to that root."""
    _, files, _ = our_docs
    assert hashlib.sha256(files.manifest).hexdigest()[:16] in files.manifest_name
    manifest = json.loads(files.manifest)
    counts = {"terms": len(manifest["terms"]), "positions": len(manifest["terms"])}
    counts |= {"words": len(manifest["words"]), "texts": len(manifest["texts"]), "lengths": 1}
    assert len(files.parts) == sum(counts.values())
    for kind, count in counts.items():
        root = manifest["roots"][kind]
        for number in range(count):
            name = f"agentskit-static.{kind}.{root}-{number}.json"
            data = files.parts[name]
            assert json.loads(data)["kind"] == kind  # one JSON object, proof first
            assert static_index._verified_body(data, root, number, count) == _body(data)
            if count > 1:  # the same bytes are not another number's
                other = (number + 1) % count
                assert static_index._verified_body(data, root, other, count) is None
    again = split_index(
        site_of(our_docs[0]),
        synonyms=site_synonyms(),
    )
    assert again == files  # the same site gives the same names and bytes


def test_a_rebuild_renames_every_part_of_a_kind_that_changed(our_docs: tuple) -> None:
    """Parts are named by their kind's root, so a changed chunk gives every text part a
    new name: no name the old build published stands for other bytes in the new one."""
    chunks, files, _ = our_docs
    changed = [*chunks[:-1], dataclasses.replace(chunks[-1], text=chunks[-1].text + " more")]
    rebuilt = split_index(
        site_of(changed),
        synonyms=site_synonyms(),
    )
    old_texts = {name for name in files.parts if ".texts." in name}
    new_texts = {name for name in rebuilt.parts if ".texts." in name}
    assert old_texts and not old_texts & new_texts
    for name in set(files.parts) & set(rebuilt.parts):
        assert files.parts[name] == rebuilt.parts[name]  # a kept name keeps its bytes
    search = StaticSearch(rebuilt.manifest)
    old_name = sorted(old_texts)[0]
    assert search.add_part(old_name, files.parts[old_name]) == PART_UNKNOWN
    new_name = sorted(new_texts)[0]
    assert search.add_part(new_name, files.parts[old_name]) == PART_MISMATCH  # old bytes


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 8, 9])
def test_every_tree_shape_proves_each_part_and_only_it(count: int) -> None:
    """Trees of 1 part (no proof), a power of two (at the bound of a depth) and one past
    it (one level more, a filler sibling): each part's proof has the depth its count
    gives, leads to the root, and fails for another part's body or a flipped digit."""
    bodies = [json.dumps({"kind": "words", "n": n}).encode() for n in range(count)]
    levels = static_index._tree([static_index._digest(body) for body in bodies])
    root = levels[-1][0]
    depth = (count - 1).bit_length()
    for number, body in enumerate(bodies):
        proof = "".join(static_index._proof(levels, number))
        assert len(proof) == depth * 16
        data = b'{"proof":"' + proof.encode() + b'",' + body[1:]
        assert static_index._verified_body(data, root, number, count) == body
        other = bodies[(number + 1) % count]
        forged = b'{"proof":"' + proof.encode() + b'",' + other[1:]
        assert (static_index._verified_body(forged, root, number, count) is None) == (count > 1)
        if proof:
            flipped = proof[:-1] + ("0" if proof[-1] != "0" else "1")
            data = b'{"proof":"' + flipped.encode() + b'",' + body[1:]
            assert static_index._verified_body(data, root, number, count) is None
        assert static_index._verified_body(body, root, number, count) is None  # no proof


def test_the_split_index_round_trips(our_docs: tuple) -> None:
    """Built here, not taken from the fixture: `make mutate` runs, for a mutant of the
    writing code, only the tests that called it, and the module's fixture is built once
    (for the first test that asks for it), so this test must call `split_index` itself."""
    chunks, _, full = our_docs
    files = split_index(
        site_of(chunks),
        synonyms=site_synonyms(),
    )
    search = StaticSearch(files.manifest)
    for name, data in files.parts.items():
        assert search.add_part(name, data) is None
    loaded = search._index
    assert loaded.loaded == set(files.parts)
    terms = full.index.sorted_terms()
    assert loaded.terms_from("") == terms
    for term in terms:
        assert list(loaded.postings(term)) == list(full.index.postings(term)), term
        assert list(loaded.counts(term)) == list(full.index.counts(term)), term
    assert [loaded.chunk(row) for row in range(len(chunks))] == chunks
    assert [loaded.length(row) for row in range(len(chunks))] == full.index.lengths()
    assert search._engine.vocabulary.counts == full.vocabulary.counts


def test_static_search_equals_the_server_on_every_eval_question(our_docs: tuple) -> None:
    _, files, full = our_docs
    page = StaticSearch(files.manifest)  # one page asking every question in turn
    with_positions = 0
    for question in load_eval_set().questions:
        fresh = StaticSearch(files.manifest)  # and each question as a page's first
        rounds = fetch_all(fresh, files, question.question)
        with_positions += any(".positions." in name for names in rounds for name in names)
        fetch_all(page, files, question.question)
        expected = full.search(question.question, LIMIT)
        assert fresh.search(question.question, LIMIT) == expected, question.id
        assert page.search(question.question, LIMIT) == expected, question.id
    # Positions are fetched only for phrases of several tokens (compounds): a few questions.
    assert 0 < with_positions < len(load_eval_set().questions) // 4


def test_a_questions_words_map_to_exactly_the_term_parts_fetched_first(our_docs: tuple) -> None:
    _, files, _ = our_docs
    manifest = json.loads(files.manifest)
    firsts = manifest["terms"]
    root = manifest["roots"]["terms"]
    names = [f"agentskit-static.terms.{root}-{number}.json" for number in range(len(firsts))]
    question = "Which attributes does the storage element accept?"
    expected: set[str] = set()
    for word in ("attributes", "storage", "element", "accept"):
        stem = tokens(word)[0]  # every word is >= 4 letters: searched as a prefix
        low = max(i for i, first in enumerate(firsts) if first <= stem)
        high = max(i for i, first in enumerate(firsts) if first <= stem + "\U0010ffff")
        expected.update(names[low : high + 1])
    first_round = StaticSearch(files.manifest).parts_for(question, LIMIT)
    assert {name for name in first_round if ".terms." in name} == expected
    assert f"agentskit-static.lengths.{manifest['roots']['lengths']}-0.json" in first_round


def test_every_fetched_part_is_needed(our_docs: tuple) -> None:
    """Leaving out any one part a question fetched leaves the question unanswerable."""
    _, files, _ = our_docs
    question = "How do I embed the Ask widget on my site?"
    fetched = [
        name for names in fetch_all(StaticSearch(files.manifest), files, question) for name in names
    ]
    assert len(fetched) == len(set(fetched))
    for left_out in fetched:
        search = StaticSearch(files.manifest)
        for name in fetched:
            if name != left_out:
                assert search.add_part(name, files.parts[name]) is None
        assert left_out in search.parts_for(question, LIMIT)
        with pytest.raises(PartsMissing) as missing:
            search.search(question, LIMIT)
        assert left_out in missing.value.names


def test_a_corrupted_part_is_refused_and_nothing_is_added(our_docs: tuple) -> None:
    _, files, _ = our_docs
    search = StaticSearch(files.manifest)
    name = next(iter(files.parts))
    data = bytearray(files.parts[name])
    data[len(data) // 2] ^= 0x01
    assert search.add_part(name, bytes(data)) == PART_MISMATCH
    assert search.add_part("agentskit-static.terms.0000000000000000.json", b"{}") == PART_UNKNOWN
    other = next(n for n in files.parts if n != name)
    assert search.add_part(name, files.parts[other]) == PART_MISMATCH  # another part's bytes
    assert not search.loaded
    assert search.add_part(name, files.parts[name]) is None and search.loaded == {name}


def _with_part(
    files: StaticIndexFiles, kind: str, body: object, number: int = 0
) -> tuple[StaticSearch, str, bytes]:
    """A manifest whose `kind` part `number` (the first unless told) is replaced by
    `body`, with its kind's tree rebuilt (so the part is proved as the build would prove
    it): the search, the part's name and its bytes. A part is one JSON object opened by
    its proof, so `body` is an object, or bytes (broken JSON the build would never write)."""
    manifest = json.loads(files.manifest)
    root = manifest["roots"][kind]
    names = sorted(
        (name for name in files.parts if f".{kind}.{root}-" in name),
        key=lambda name: int(name.split("-")[-1].split(".")[0]),
    )
    bodies = [_body(files.parts[name]) for name in names]
    bodies[number] = body if isinstance(body, bytes) else json.dumps(body).encode()
    levels = static_index._tree([static_index._digest(item) for item in bodies])
    manifest["roots"][kind] = levels[-1][0]
    proof = "".join(static_index._proof(levels, number)).encode()
    data = b'{"proof":"' + proof + b'",' + bodies[number][1:]
    name = f"agentskit-static.{kind}.{levels[-1][0]}-{number}.json"
    return StaticSearch(json.dumps(manifest).encode()), name, data


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("terms", {"kind": "terms", "terms": ["b", "a"], "postings": ["0,0", "0,0"]}),  # order
        ("terms", {"kind": "terms", "terms": ["a", "a"], "postings": ["0,0", "0,0"]}),  # twice
        ("terms", {"kind": "positions", "terms": ["a"], "postings": ["0,0"]}),  # another kind's
        ("terms", {"kind": "terms", "terms": ["a"], "postings": ["999999,0,0"]}),
        ("terms", {"kind": "terms", "terms": ["a"], "postings": ["0,7,0"]}),
        ("terms", {"kind": "terms", "terms": ["a"], "postings": ["x"]}),
        ("terms", {"kind": "terms", "terms": ["a"], "postings": ["0,0,1,2"]}),
        ("terms", {"kind": "terms", "terms": ["a"], "postings": ["0,0,0"]}),
        ("positions", {"kind": "positions", "terms": ["a"], "postings": ["0,0"]}),
        ("positions", {"kind": "positions", "terms": ["a"], "postings": ["0,4,1"]}),
        ("terms", {"kind": "words", "words": [], "counts": []}),
        ("words", {"kind": "words", "words": ["a"], "counts": [-1]}),
        ("words", {"kind": "words", "words": ["a"], "counts": [float("nan")]}),
        ("words", {"kind": "words", "words": ["a"], "counts": [True]}),
        ("texts", {"kind": "texts", "first": 0, "chunks": [["", None, "", "", "", ""]]}),
        ("texts", {"kind": "texts", "first": 1, "chunks": []}),
        ("lengths", {"kind": "lengths", "lengths": []}),
        ("texts", b'{"kind":"texts","first":0,'),  # not JSON, though its proof holds
    ],
)
def test_a_malformed_part_with_a_right_hash_is_refused(
    our_docs: tuple, kind: str, body: object
) -> None:
    search, name, data = _with_part(our_docs[1], kind, body)
    assert search.add_part(name, data) == PART_INVALID
    assert name not in search.loaded


@pytest.mark.parametrize("kind", ["terms", "positions"])
def test_a_row_past_the_index_is_a_typed_error_when_decoded(our_docs: tuple, kind: str) -> None:
    """`add_part` checks a part's shape (one regular expression per term, cheap in the
    page); the rows' bound is checked when the search decodes a term, and is the same
    PART_INVALID diagnostic, raised."""
    files = our_docs[1]
    rows = json.loads(files.manifest)["rows"]
    counts = "0,2" if kind == "terms" else "0,2,0"
    for last, refused in ((rows - 1, False), (rows, True)):  # the last row, then one past
        body = {"kind": kind, "terms": ["0"], "postings": [f"{counts};{last},2{counts[3:]}"]}
        search, name, data = _with_part(files, kind, body)
        assert search.add_part(name, data) is None
        index = search._index
        read = index.counts if kind == "terms" else index.postings
        if refused:
            with pytest.raises(PartInvalidError) as error:
                read("0")
            assert error.value.diagnostic == PART_INVALID
        else:
            assert [entry[0] for entry in read("0")] == [0, rows - 1]


def test_a_parts_nesting_at_the_bound_is_read_and_one_level_more_is_refused(
    our_docs: tuple,
) -> None:
    """Parts are read with a lean JSON path (no per-number hooks), but still behind the
    nesting pre-scan: deep input can crash Pyodide's parser."""
    for depth, refused in ((JSON_MAX_NESTING, False), (JSON_MAX_NESTING + 1, True)):
        deep: list[object] = []
        for _ in range(depth - 2):  # the part object is one level, the innermost list one
            deep = [deep]
        body = {"kind": "words", "words": ["a"], "counts": [1], "extra": deep}
        search, name, data = _with_part(our_docs[1], "words", body)
        found = search.add_part(name, data)
        assert found == (PART_INVALID if refused else None)


def test_the_part_size_bound(our_docs: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    _, files, _ = our_docs
    name, data = next(iter(files.parts.items()))
    monkeypatch.setattr(static_index, "STATIC_PART_MAX_BYTES", len(data))
    assert StaticSearch(files.manifest).add_part(name, data) is None  # at the bound
    monkeypatch.setattr(static_index, "STATIC_PART_MAX_BYTES", len(data) - 1)
    assert StaticSearch(files.manifest).add_part(name, data) == PART_TOO_LARGE  # one past


def test_a_bad_manifest_is_a_typed_error(our_docs: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    _, files, _ = our_docs
    assert b'"version":3' in files.manifest
    for bad in (b"", b"[]", b"{", files.manifest.replace(b'"version":3', b'"version":1')):
        assert parse_static_manifest(bad).diagnostic == MANIFEST_INVALID
        with pytest.raises(StaticIndexError) as error:
            StaticSearch(bad)
        assert error.value.diagnostic == MANIFEST_INVALID
        assert str(error.value) == MANIFEST_INVALID.message  # never the bytes
    monkeypatch.setattr(static_index, "STATIC_MANIFEST_MAX_BYTES", len(files.manifest))
    assert parse_static_manifest(files.manifest).ok
    monkeypatch.setattr(static_index, "STATIC_MANIFEST_MAX_BYTES", len(files.manifest) - 1)
    assert parse_static_manifest(files.manifest).diagnostic == MANIFEST_INVALID


def test_the_manifest_size_bound_counts_utf8_bytes_not_characters() -> None:
    """The page may pass the manifest as text: its size is still its UTF-8 bytes."""
    site = site_of(site_name="Dokumentation \u00fcber \u00e4lles", pages=1)
    manifest = split_index(site).manifest
    text = manifest.decode("utf-8")
    assert len(text) < len(manifest)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(static_index, "STATIC_MANIFEST_MAX_BYTES", len(manifest))
        assert parse_static_manifest(text).ok  # at the bound
        patch.setattr(static_index, "STATIC_MANIFEST_MAX_BYTES", len(manifest) - 1)
        assert parse_static_manifest(text).diagnostic == MANIFEST_INVALID  # one byte past


def test_search_before_its_parts_raises_parts_missing(our_docs: tuple) -> None:
    _, files, _ = our_docs
    search = StaticSearch(files.manifest)
    with pytest.raises(PartsMissing) as missing:
        search.search("embed the widget", LIMIT)
    names = missing.value.names
    assert names == search.parts_for("embed the widget", LIMIT)
    assert str(missing.value) == f"{len(names)} parts of the static index are not loaded yet."


def test_an_empty_folder_site(tmp_path: Path) -> None:
    site = site_of(site_name="A", pages=1)
    files = split_index(site)
    search = StaticSearch(files.manifest)
    fetch_all(search, files, "alpha")
    assert [p.path for p in search.search("alpha", LIMIT)] == ["/a/"]
    assert search.search("zebra", LIMIT) == []


def test_write_static_index_replaces_an_earlier_build(tmp_path: Path) -> None:
    from agentskit_web.indexing.static_files import write_static_index

    def files_of(text: str) -> StaticIndexFiles:
        chunk = Chunk("/a/", None, "A", "A", text)
        return split_index(site_of([chunk], site_name="A", pages=1))

    first, second = files_of("alpha"), files_of("beta")
    (tmp_path / "other.json").write_text("{}")
    manifest = write_static_index(first, tmp_path)
    assert manifest.read_bytes() == first.manifest
    assert {p.name for p in tmp_path.iterdir()} == {*first.all_files(), "other.json"}
    write_static_index(second, tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {*second.all_files(), "other.json"}
    search = StaticSearch((tmp_path / second.manifest_name).read_bytes())
    while names := search.parts_for("beta"):
        for name in names:
            assert search.add_part(name, (tmp_path / name).read_bytes()) is None
    assert [p.path for p in search.search("beta")] == ["/a/"]


def test_the_static_bench_measures_a_small_generated_site() -> None:
    from agentskit_web.bench.generated_site import generated_chunks, generated_questions
    from agentskit_web.bench.static import Corpus, format_figures, measure

    chunks = generated_chunks(5, ["widget", "install", "page", "answer", "search"])
    questions = generated_questions(chunks, 10)
    assert questions[9].endswith("q?")  # one in ten made of words no page uses
    figures = measure(Corpus("tiny", chunks, questions, (), "generated"))
    assert figures.agreement == 1.0 and figures.declines_agree == 1.0
    assert len(figures.first_br) == len(questions) and len(figures.later_br) == len(questions) - 1
    assert all(size > 0 for size in figures.first_br)
    assert len(figures.new_ms) == len(figures.plain_ms) == len(questions)
    table = format_figures([figures, dataclasses.replace(figures)])
    assert "goal <= 150" in table and "growth over [tiny]" in table and "plain BM25" in table


def test_the_parts_per_manifest_bound(our_docs: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    _, files, _ = our_docs
    manifest = json.loads(files.manifest)
    most = max(len(manifest[kind]) for kind in ("terms", "words", "texts"))
    monkeypatch.setattr(static_index, "STATIC_MAX_PARTS", most)
    assert parse_static_manifest(files.manifest).ok  # at the bound
    monkeypatch.setattr(static_index, "STATIC_MAX_PARTS", most - 1)
    assert parse_static_manifest(files.manifest).diagnostic == MANIFEST_INVALID  # one past


def test_search_after_parts_for_found_everything_does_not_search_again(our_docs: tuple) -> None:
    """In the page a question is searched once per round; the final `search` (or `find`)
    reuses the last round's result, and only while no part was added since and for the
    same question."""
    _, files, full = our_docs
    search = StaticSearch(files.manifest)
    question = load_eval_set().questions[0].question
    fetch_all(search, files, question)
    engine = search._engine
    runs: list[str] = []
    original = engine.find

    def counted(text: str, limit: int) -> Found:
        runs.append(text)
        return original(text, limit)

    engine.find = counted  # type: ignore[method-assign]
    assert search.find(question, LIMIT) == full.find(question, LIMIT)
    assert search.search(question, LIMIT) == full.search(question, LIMIT)
    assert runs == []  # the result of the last parts_for
    assert search.search(question, LIMIT - 1) == full.search(question, LIMIT - 1)
    assert runs == [question]  # another limit: searched
    other = load_eval_set().questions[1].question
    fetch_all(search, files, other)
    runs.clear()
    assert search.search(question, LIMIT) == full.search(question, LIMIT)
    assert runs == [question]  # another question was searched since: searched again


def _manifest_with(files: StaticIndexFiles, change: object) -> bytes:
    manifest = json.loads(files.manifest)
    change(manifest)  # type: ignore[operator]
    return json.dumps(manifest).encode()


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m["texts"].__setitem__(-1, m["texts"][-1] + 1),  # rows one past the index's
        lambda m: m["texts"].__setitem__(-1, m["texts"][-1] - 1),  # one short
        lambda m: m["texts"].extend([0]),  # an empty text part
        lambda m: m["roots"].pop("lengths"),
        lambda m: m["roots"].__setitem__("texts", "0" * 15),
        lambda m: m["roots"].__setitem__("texts", "g" * 16),
        lambda m: m["terms"].__setitem__(0, "a"),  # the first range must start at ""
        lambda m: m["words"].reverse(),
        lambda m: m.__setitem__("terms", []),  # no range at all
        lambda m: m["terms"].insert(1, "zzzz"),  # out of order after the leading ""
        lambda m: m["terms"].insert(1, m["terms"][1]),  # a first key twice
        lambda m: m.__setitem__("texts", [float(n) for n in m["texts"]]),  # not ints
        lambda m: m.__setitem__("synonyms", {}),
        lambda m: m.__setitem__("synonyms", [["a", 1]]),
        lambda m: m.__setitem__("synonyms", [["a", "b"], "cd"]),  # a group that is a string
        lambda m: m.__setitem__("rows", float(m["rows"])),
        lambda m: m.__setitem__("tokens", float(m["tokens"])),
        lambda m: m.__setitem__("tokens", -1),
        lambda m: m.__setitem__("roots", list(m["roots"])),  # the kinds, but not a mapping
        lambda m: m.__setitem__("siteName", None),
        lambda m: m.pop("basePath"),
    ],
)
def test_a_manifest_whose_ranges_or_roots_do_not_hold_is_refused(
    our_docs: tuple, change: object
) -> None:
    assert parse_static_manifest(our_docs[1].manifest).ok  # as built
    found = parse_static_manifest(_manifest_with(our_docs[1], change))
    assert not found.ok and found.diagnostic == MANIFEST_INVALID


def test_the_change_log_mark_travels_in_the_text_parts_and_only_where_set(
    our_docs: tuple,
) -> None:
    """A marked chunk (`Chunk.history`) comes back marked from its text part; an unmarked
    one is the six fields it was before the mark existed, so a site with no change log
    gets the same parts."""
    chunks = our_docs[0]
    assert not any(chunk.history for chunk in chunks)  # our docs have no change log
    marked = [dataclasses.replace(c, history=n % 3 == 0) for n, c in enumerate(chunks)]
    site = site_of(marked)
    files = split_index(site)
    search = StaticSearch(files.manifest)
    rows = []
    for name, data in files.parts.items():
        assert search.add_part(name, data) is None
        if ".texts." in name:
            rows += json.loads(_body(data))["chunks"]
    assert [search._index.chunk(row) for row in range(len(marked))] == marked
    assert sorted({len(row) for row in rows}) == [6, 7]
    assert all((len(row) == 7) == (row[6:] == [True]) for row in rows)
    plain = site_of(chunks)
    parts = split_index(plain).parts
    texts = [json.loads(_body(data))["chunks"] for n, data in parts.items() if ".texts." in n]
    assert texts and all(len(row) == 6 for part in texts for row in part)


@pytest.mark.parametrize(
    ("extra", "refused"),
    [
        ([True], False),
        ([1], True),
        ([False], True),
        (["y"], True),
        ([True, True], True),
        ([False, "sponsors"], False),
        ([True, "licence"], False),
        ([0, "licence"], True),
        ([False, "guide"], True),
        ([False, None], True),
        ([False, "licence", True], True),
    ],
)
def test_the_change_log_mark_is_a_seventh_field_true_and_nothing_else(
    our_docs: tuple, extra: list[object], refused: bool
) -> None:
    files = our_docs[1]
    root = json.loads(files.manifest)["roots"]["texts"]
    body = json.loads(_body(files.parts[f"agentskit-static.texts.{root}-0.json"]))
    body["chunks"][0] += extra
    search, name, part = _with_part(files, "texts", body)
    assert search.add_part(name, part) == (PART_INVALID if refused else None)
    if not refused:
        assert search._index.chunk(0).history is extra[0]
        assert search._index.chunk(0).role == (extra[1] if len(extra) > 1 else None)


def test_a_text_part_must_hold_the_rows_the_manifest_gives_it(our_docs: tuple) -> None:
    """The manifest gives each text part's row count; a part proved against the root but
    holding one row more or less than that is refused (the rows after it would shift)."""
    files = our_docs[1]
    manifest = json.loads(files.manifest)
    root = manifest["roots"]["texts"]
    data = files.parts[f"agentskit-static.texts.{root}-0.json"]
    body = json.loads(_body(data))
    assert len(body["chunks"]) == manifest["texts"][0]
    search, name, part = _with_part(files, "texts", body)
    assert search.add_part(name, part) is None  # as built
    for chunks in (body["chunks"][:-1], [*body["chunks"], body["chunks"][-1]]):
        search, name, part = _with_part(files, "texts", {**body, "chunks": chunks})
        assert search.add_part(name, part) == PART_INVALID


def test_the_manifest_carries_the_site_and_how_it_was_built() -> None:
    site = site_of(base_path="/docs/", generator="mkdocs", pages=7)
    files = split_index(site)  # built here: see test_the_split_index_round_trips
    manifest = json.loads(files.manifest)
    assert (manifest["generator"], manifest["pages"]) == ("mkdocs", 7)
    decoded = StaticSearch(files.manifest).manifest
    assert (decoded.site_name, decoded.base_path) == ("Docs", "/docs/")


def test_a_manifest_counts_rows_and_tokens_from_zero(our_docs: tuple) -> None:
    """Zero tokens is at the bound (a site of rows without words); -1 is refused by the
    parametrized test above."""
    manifest = json.loads(our_docs[1].manifest)
    manifest["tokens"] = 0
    assert parse_static_manifest(json.dumps(manifest).encode()).ok


def test_the_files_are_compact_utf8_json() -> None:
    """The manifest and each part's body are written as compact JSON with text as UTF-8
    (not `\\u` escapes): what a part costs to fetch, and its hash, follow from that."""
    site = site_of(
        [Chunk("/a/", None, "Gr\u00fc\u00dfe", "\u00dcber", "sch\u00f6ne Gr\u00fc\u00dfe")],
        site_name="D\u00f6k\u00fc",
        pages=1,
    )
    files = split_index(site)

    def compact(value: object) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    assert files.manifest == compact(json.loads(files.manifest))
    assert "D\u00f6k\u00fc".encode() in files.manifest
    for name, data in files.parts.items():
        assert _body(data) == compact(json.loads(_body(data))), name
    texts = b"".join(data for name, data in files.parts.items() if ".texts." in name)
    assert "sch\u00f6ne Gr\u00fc\u00dfe".encode() in texts


def test_the_postings_encoding() -> None:
    """Rows as deltas from the previous entry, a count only when above 1, positions as
    deltas from the previous position (the format `COUNTS_SHAPE` and `POSITIONS_SHAPE`
    check and `_decode_counts` reads)."""
    entries = [(3, 1, (4,)), (7, 2, (1, 5, 9))]
    assert static_index._encode_counts(entries) == "3,1;4,2,3"
    assert static_index._encode_postings(entries) == "3,1,4;4,2,1,4,4"
    assert static_index._decode_counts("3,1;4,2,3", 8) == [(3, 1, 1), (7, 2, 3)]
    assert static_index._decode_postings("3,1,4;4,2,1,4,4", 8) == entries


def test_ranges_close_once_their_size_reaches_the_target() -> None:
    ranges = static_index._ranges
    assert ranges("abcde", [1, 1, 1, 1, 1], 2) == [(0, 2), (2, 4), (4, 5)]
    assert ranges("abcd", [1, 1, 1, 1], 2) == [(0, 2), (2, 4)]  # no empty range after
    assert ranges("abc", [1, 2, 1], 3) == [(0, 2), (2, 3)]  # at the target: closed
    assert ranges("abc", [1, 1, 1], 4) == [(0, 3)]
    assert ranges("", [], 2) == []


def test_a_term_part_is_closed_once_its_json_reaches_the_target(our_docs: tuple) -> None:
    """Every term part but the last holds at least `TERM_PART_TARGET_BYTES` of terms and
    postings as JSON (each item quoted and followed by a comma), and would not without
    its last term."""
    chunks = our_docs[0]
    files = split_index(site_of(chunks))
    root = json.loads(files.manifest)["roots"]["terms"]
    bodies = [
        json.loads(_body(data))
        for _, data in sorted(
            (int(name.rsplit("-", 1)[1].split(".")[0]), data)
            for name, data in files.parts.items()
            if f".terms.{root}-" in name
        )
    ]
    assert len(bodies) > 2
    target = static_index.TERM_PART_TARGET_BYTES
    for body in bodies[:-1]:
        sizes = [
            len(json.dumps(term, ensure_ascii=False)) + len(json.dumps(raw)) + 2
            for term, raw in zip(body["terms"], body["postings"], strict=True)
        ]
        assert sum(sizes) >= target > sum(sizes[:-1])


def test_the_parts_per_kind_bound_of_a_ranges_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_index, "STATIC_MAX_PARTS", 3)
    assert static_index._firsts_of(["", "a", "b"]) == ("", "a", "b")  # at the bound
    with pytest.raises(ValueError):
        static_index._firsts_of(["", "a", "b", "c"])  # one past
    assert static_index._text_firsts_of([1, 2, 3], 6) == (0, 1, 3)
    with pytest.raises(ValueError):
        static_index._text_firsts_of([1, 2, 3, 4], 10)


def test_a_part_must_open_with_its_proof(our_docs: tuple) -> None:
    """The proof is read only behind the exact opening `{"proof":"`, and a byte that is
    not ASCII in it is a mismatch, not an error raised out of `add_part`."""
    files = our_docs[1]
    manifest = json.loads(files.manifest)
    assert len(manifest["terms"]) > 1  # the part has a proof to forge
    name = f"agentskit-static.terms.{manifest['roots']['terms']}-0.json"
    data = files.parts[name]
    for forged in (
        b'{"proxy":"' + data[len(b'{"proof":"') :],
        data[:10] + b"\xff" + data[11:],
        data[:10] + "\u00e9".encode() + data[12:],
    ):
        search = StaticSearch(files.manifest)
        assert search.add_part(name, forged) == PART_MISMATCH
        assert not search.loaded
    assert StaticSearch(files.manifest).add_part(name, data) is None


def test_a_term_part_holds_only_terms_of_its_range(our_docs: tuple) -> None:
    """Part `n` holds terms from its first key up to, not including, the next part's:
    checked at each end and one past it, on the second-to-last part (whose upper end is
    the last part's first key)."""
    files = our_docs[1]
    firsts = json.loads(files.manifest)["terms"]
    number = len(firsts) - 2
    assert number >= 1
    root = json.loads(files.manifest)["roots"]["terms"]
    before = json.loads(_body(files.parts[f"agentskit-static.terms.{root}-{number - 1}.json"]))
    own = json.loads(_body(files.parts[f"agentskit-static.terms.{root}-{number}.json"]))
    assert own["terms"][0] == firsts[number]
    cases = [
        (firsts[number], None),  # the range's first key
        (own["terms"][-1], None),  # its last term, below the next part's first key
        (before["terms"][-1], PART_INVALID),  # the previous part's last term
        (firsts[number + 1], PART_INVALID),  # the next part's first key
    ]
    for term, expected in cases:
        body = {"kind": "terms", "terms": [term], "postings": ["0,0"]}
        search, name, data = _with_part(files, "terms", body, number)
        assert search.add_part(name, data) == expected, term


def test_a_prefix_read_lists_every_term_part_it_spans_at_once(our_docs: tuple) -> None:
    """A prefix whose terms lie in two parts names both in one round, not one a round."""
    files = our_docs[1]
    manifest = json.loads(files.manifest)
    root = manifest["roots"]["terms"]
    names = [f"agentskit-static.terms.{root}-{n}.json" for n in range(len(manifest["terms"]))]
    terms = [json.loads(_body(files.parts[name]))["terms"] for name in names]
    number = next(
        n
        for n in range(1, len(names))
        if any(term.startswith(manifest["terms"][n][0]) for term in terms[n - 1])
    )
    prefix = manifest["terms"][number][0]
    holding = {
        name
        for name, held in zip(names, terms, strict=True)
        if any(t.startswith(prefix) for t in held)
    }
    assert len(holding) >= 2
    search = StaticSearch(files.manifest)
    index = search._index
    assert index.terms_from(prefix) == []
    assert index.missing == holding
    for name in holding:
        assert search.add_part(name, files.parts[name]) is None
    expected = sorted(t for held in terms for t in held if t.startswith(prefix))
    assert index.terms_from(prefix) == expected


def test_a_text_part_is_checked_row_by_row(our_docs: tuple) -> None:
    """A text part starts at the row the manifest gives (even when it then holds the
    right end), and each row has a path and string fields."""
    files = our_docs[1]
    root = json.loads(files.manifest)["roots"]["texts"]
    body = json.loads(_body(files.parts[f"agentskit-static.texts.{root}-0.json"]))
    assert len(body["chunks"]) > 1
    shifted = {**body, "first": body["first"] + 1, "chunks": body["chunks"][1:]}
    no_path = {**body, "chunks": [["", *body["chunks"][0][1:]], *body["chunks"][1:]]}
    text_number = [*body["chunks"][0]]
    text_number[4] = 5
    not_text = {**body, "chunks": [text_number, *body["chunks"][1:]]}
    for bad in (shifted, no_path, not_text):
        search, name, data = _with_part(files, "texts", bad)
        assert search.add_part(name, data) == PART_INVALID
        assert name not in search.loaded


def test_the_lengths_part_holds_one_int_per_row(our_docs: tuple) -> None:
    files = our_docs[1]
    root = json.loads(files.manifest)["roots"]["lengths"]
    body = json.loads(_body(files.parts[f"agentskit-static.lengths.{root}-0.json"]))
    for lengths in ([*body["lengths"], 0], [float(n) for n in body["lengths"]]):
        search, name, data = _with_part(files, "lengths", {**body, "lengths": lengths})
        assert search.add_part(name, data) == PART_INVALID


def test_a_row_without_tokens_is_read() -> None:
    """A row may have no tokens: its length 0 is at the bound of the lengths part."""
    site = site_of([ALPHA, Chunk("/b/", None, "", "", "")], site_name="A", pages=2)
    files = split_index(site)
    search = StaticSearch(files.manifest)
    for name, data in files.parts.items():
        assert search.add_part(name, data) is None
    assert [search._index.length(row) for row in (0, 1)] == [3, 0]
    assert [p.path for p in search.search("alpha", LIMIT)] == ["/a/"]


def test_a_site_index_with_no_chunks_is_refused_with_a_clear_error() -> None:
    """The site reader refuses a site with no text first; called directly, the split says
    why instead of failing on an empty list."""
    empty = site_of([], pages=0)
    with pytest.raises(ValueError, match="no chunks"):
        split_index(empty)
    one = site_of(site_name="One", pages=1)
    assert parse_static_manifest(split_index(one).manifest).ok  # one chunk is enough
