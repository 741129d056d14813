"""The site index file: round trip, content-hashed name, and every way a read can fail."""

import json

import pytest

from agentskit_web.answering import site_index
from agentskit_web.answering.chunk import Chunk
from agentskit_web.answering.site_index import SiteIndex, parse_site_index

CHUNKS = [
    Chunk("/tutorial/cors/", "use-corsmiddleware", "CORS", "Use CORSMiddleware", "Add it.", "x"),
    Chunk("/", None, "Home", "Home", "Welcome."),
]


def _index(chunks: list[Chunk] = CHUNKS) -> SiteIndex:
    return SiteIndex.of(chunks, site_name="Demo", base_path="/", generator="html", pages=2)


def test_round_trip_keeps_every_field():
    result = parse_site_index(_index().to_bytes())
    assert result.ok
    assert result.value.chunk_list() == CHUNKS
    assert result.value.site_name == "Demo" and result.value.pages == 2


def test_the_name_follows_the_content():
    name = _index().file_name()
    assert name.startswith("agentskit-index.") and name.endswith(".json")
    assert _index().file_name() == name
    changed = [*CHUNKS[:1], Chunk("/", None, "Home", "Home", "Welcome!")]
    assert _index(changed).file_name() != name


def test_size_bound_at_the_limit_and_past_it(monkeypatch):
    data = _index().to_bytes()
    monkeypatch.setattr(site_index, "SITE_INDEX_MAX_BYTES", len(data))
    assert parse_site_index(data).ok
    monkeypatch.setattr(site_index, "SITE_INDEX_MAX_BYTES", len(data) - 1)
    assert parse_site_index(data).diagnostic.code == "SITE_INDEX_TOO_LARGE"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"{not json", "SITE_INDEX_NOT_JSON"),
        (b"[]", "SITE_INDEX_UNSUPPORTED"),
        (json.dumps({"format": "agentskit.site-index", "version": 3}), "SITE_INDEX_UNSUPPORTED"),
        (json.dumps({"format": "agentskit.site-index", "version": 2}), "SITE_INDEX_INVALID"),
        (json.dumps({"format": "other", "version": 1}), "SITE_INDEX_UNSUPPORTED"),
        (json.dumps({"format": "agentskit.site-index", "version": 1}), "SITE_INDEX_INVALID"),
    ],
)
def test_a_bad_file_gets_a_typed_diagnostic(data, code):
    result = parse_site_index(data)
    assert not result.ok and result.diagnostic.code == code


def test_an_unknown_field_is_refused():
    wire = _index().to_wire()
    wire["chunks"][0]["extra"] = 1
    assert parse_site_index(json.dumps(wire)).diagnostic.code == "SITE_INDEX_INVALID"


def test_chunk_count_bound_at_the_limit_and_past_it():
    wire = _index().to_wire()
    over = dict(wire, chunks=wire["chunks"] * (site_index.SITE_INDEX_MAX_CHUNKS // 2 + 1))
    assert parse_site_index(over).diagnostic.code == "SITE_INDEX_INVALID"
    at = dict(wire, chunks=wire["chunks"] * (site_index.SITE_INDEX_MAX_CHUNKS // 2))
    assert parse_site_index(at).ok


def test_the_change_log_mark_round_trips_and_is_written_only_when_set():
    marked = Chunk("/changes/", "v2", "Changes", "2.0", "New things.", history=True)
    index = _index([marked, *CHUNKS])
    wire = json.loads(index.to_bytes())
    assert wire["chunks"][0]["history"] is True
    assert all("history" not in chunk for chunk in wire["chunks"][1:])
    assert parse_site_index(index.to_bytes()).value.chunk_list() == [marked, *CHUNKS]


def test_the_file_is_canonical_compact_utf8_json_with_sorted_keys():
    """The same chunks always give the same bytes, so the same content-hashed name."""
    index = SiteIndex.of(
        [Chunk("/\u00fcber/", None, "\u00dcber", "Gr\u00fc\u00dfe", "sch\u00f6n")],
        site_name="D\u00f6k\u00fc",
        base_path="/",
        generator="html",
        pages=1,
    )
    data = index.to_bytes()
    canonical = json.dumps(
        json.loads(data), ensure_ascii=False, separators=(",", ":"), sort_keys=True
    ).encode("utf-8")
    assert data == canonical
    assert "sch\u00f6n".encode() in data


def test_the_size_bound_counts_utf8_bytes_of_text_input(monkeypatch):
    index = SiteIndex.of(
        [Chunk("/a/", None, "\u00c4", "\u00c4", "\u00e4\u00f6\u00fc" * 10)],
        site_name="A",
        base_path="/",
        generator="html",
        pages=1,
    )
    data = index.to_bytes()
    text = data.decode("utf-8")
    assert len(text) < len(data)
    monkeypatch.setattr(site_index, "SITE_INDEX_MAX_BYTES", len(data))
    assert parse_site_index(text).ok  # at the bound
    monkeypatch.setattr(site_index, "SITE_INDEX_MAX_BYTES", len(data) - 1)
    assert parse_site_index(text).diagnostic.code == "SITE_INDEX_TOO_LARGE"  # one byte past


def _read_in_a_small_address_space(path):
    """Run the server's index-file read in a child limited to 1 GB of address space: a read
    that loads a 3 GB file whole fails there with MemoryError, as it would on a small host."""
    import subprocess
    import sys

    code = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from agentskit_web.server.site_source import SiteSourceError, read_index_file\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "try:\n"
        "    read_index_file(Path(sys.argv[1]))\n"
        "except SiteSourceError as error:\n"
        "    print(error)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
    )


def test_a_3_gb_index_file_is_refused_by_its_size_before_it_is_read(tmp_path):
    big = tmp_path / "agentskit-index.0123456789abcdef.json"
    with big.open("wb") as file:
        file.truncate(3 * 1024**3)  # sparse: no disk used
    done = _read_in_a_small_address_space(big)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == f"Index file {big}: {site_index.INDEX_TOO_LARGE.message}"


def test_the_index_file_read_at_the_size_limit_and_past_it(tmp_path, monkeypatch):
    from agentskit_web.indexing import site

    data = _index().to_bytes()
    file = tmp_path / "agentskit-index.0123456789abcdef.json"
    file.write_bytes(data)
    monkeypatch.setattr(site, "SITE_INDEX_MAX_BYTES", len(data))
    assert site.read_site_index_bytes(file) == data
    monkeypatch.setattr(site, "SITE_INDEX_MAX_BYTES", len(data) - 1)
    assert site.read_site_index_bytes(file) is None


def test_an_index_path_that_is_a_fifo_is_an_error_not_a_wait(tmp_path):
    import os

    from agentskit_web.indexing.site import read_site_index_bytes

    fifo = tmp_path / "agentskit-index.0123456789abcdef.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        read_site_index_bytes(fifo)
