"""The static (split) index: a site's search as immutable files a page fetches part by part.

A static host (GitHub Pages, an S3 bucket) cannot run a search, so the build
writes the index the backend would build as files, and the page runs the same
`SearchIndex` over them (one implementation: the ranking code is not ported).
A question should fetch only what it needs, so the index is split:

- a *manifest* (`agentskit-static.<hash>.json`): the site, the row count and
  total tokens (BM25's statistics), the synonyms, each part's range (the
  first key of each term and word part, the rows of each text part) and one
  hash tree root per kind of part (a part's name is
  `agentskit-static.<kind>.<root>-<number>.json`);
- *term* parts: the postings (row, field, count) of a range of index tokens,
  sorted, so a token and every token a prefix finds lie in one run of
  consecutive parts (as static search tools split theirs);
- *position* parts: the same ranges' token positions, read only for a phrase
  of several tokens (a compound, a synonym phrase), which few questions have;
- *word* parts: the vocabulary a question's typo repair and compound split
  read (reader's words with chunk counts), split by sorted word range too;
- one *lengths* part: every row's token count (BM25 needs it for any row a
  question's words match);
- *text* parts: the chunks (titles, text, code, a seventh field `true` for a
  change-log section, `Chunk.history`, and an eighth, the section's role,
  `Chunk.role`, when it has one) of a range of rows, fetched after ranking for
  the passages the search keeps and quotes (and weighs: the marks are read there).

Version 3 added the role. A version 2 manifest (and its parts) is still read: its
chunks get the role the ranking derived from their titles when it was written
(`page_roles.page_role`), so a page with an older index answers as it did.

The manifest's name holds the SHA-256 of its bytes. Each kind's parts are the
leaves of a hash tree (SHA-256, truncated like the names) whose root the
manifest holds, and each part opens with its proof (its siblings' digests up
to the root), so a part is checked against the manifest as strictly as when
the manifest listed every part's hash, while the manifest holds five roots
instead of a hash per part (thousands at 2,000 pages, which do not compress).
A part's name holds its kind's root, which changes whenever any part of the
kind changes: a name never stands for two contents, so parts are cached
forever, and a rebuild renames every part of a kind that changed. A
corrupted, substituted or misnumbered part is refused (`add_part` returns a
diagnostic).

Fetching, in rounds (the page fetches each round's parts in parallel):

    search = StaticSearch(manifest_bytes)
    while names := search.parts_for(question, limit):
        for name in names:
            search.add_part(name, fetched(name))
    found = search.find(question, limit)   # passages, and whether they answer it

The first round names the term, word and lengths parts of the question's
words; the second (once they are added) the text parts of the passages the
search ranks, and rarely a third (a repaired typo's parts, or the text parts
of a two-part question's second part). `parts_for` runs the search itself
over what is loaded and lists what it read but did not have, so what it asks
for is exactly what `find` reads, and `find` then gives what `SearchIndex.find`
gives over the whole index (a near miss's closest passages included, so their
text parts are fetched too).
"""

import bisect
import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from ..protocol.diagnostics import DecodeResult, Diagnostic
from ..protocol.wire_json import nesting_depth_exceeds, parse_json
from .chunk import Chunk, Found, Passage
from .inverted_index import FIELD_COUNT, Count, Entry, InvertedIndex
from .page_roles import ROLES, Role, page_role
from .query_terms import LAST_CHAR, Vocabulary, normalise_synonyms
from .ranking import SearchIndex
from .site_index import SiteIndex, is_site_path

STATIC_INDEX_FORMAT: Final = "agentskit.static-index"
STATIC_INDEX_VERSION: Final = 3
STATIC_INDEX_READ_VERSIONS: Final = (2, STATIC_INDEX_VERSION)
"""The versions read: version 2 has no roles (they are derived when read: module doc)."""
STATIC_FILE_PREFIX: Final = "agentskit-static."
STATIC_HASH_CHARS: Final = 16
"""Hex digits of the content hash in every name (64 bits: no collision between builds)."""

TERM_PART_TARGET_BYTES: Final = 6_000
"""A term part is closed once its postings reach this many bytes (uncompressed JSON): small
enough that a question's few words fetch little, large enough that a 2,000-page site
stays at a few hundred parts."""
WORD_PART_TARGET_BYTES: Final = 8_000
"""The same for the vocabulary's parts."""
TEXT_PART_TARGET_BYTES: Final = 2_000
"""A text part is closed once its chunks reach this many bytes: a quote's section costs
about one such part."""

STATIC_MANIFEST_MAX_BYTES: Final = 4 * 1024 * 1024
"""Largest manifest read (a 2,000-page site's is about 12 kB, 3 kB brotli)."""
STATIC_PART_MAX_BYTES: Final = 8 * 1024 * 1024
"""Largest part read (one token's postings over a large site stay well under this)."""
STATIC_MAX_PARTS: Final = 100_000
"""Most parts one manifest may list."""

MANIFEST_INVALID: Final = Diagnostic(
    "STATIC_INDEX_INVALID",
    f"The static index manifest is not an {STATIC_INDEX_FORMAT} version 2 or "
    f"{STATIC_INDEX_VERSION} document (rebuild the site).",
)
PART_UNKNOWN: Final = Diagnostic(
    "STATIC_PART_UNKNOWN", "The part is not one this static index lists."
)
PART_MISMATCH: Final = Diagnostic(
    "STATIC_PART_MISMATCH",
    "The part's bytes do not match the index's hash of them (corrupted, or from another build).",
    retryable=True,
)
PART_TOO_LARGE: Final = Diagnostic(
    "STATIC_PART_TOO_LARGE", f"The part is larger than {STATIC_PART_MAX_BYTES} bytes."
)
PART_INVALID: Final = Diagnostic(
    "STATIC_PART_INVALID", "The part does not match the static index format (rebuild the site)."
)

STATIC_DEFAULT_LIMIT: Final = 4
"""Passages `parts_for` plans for when not told (the demo site's maxSources): pass the
limit the search will be asked with, since more passages may need more text parts."""

_FIELD: Final = f"[0-{FIELD_COUNT - 1}]"
COUNTS_SHAPE: Final = re.compile(rf"\d+,{_FIELD}(?:,[1-9]\d*)?(?:;\d+,{_FIELD}(?:,[1-9]\d*)?)*")
"""One term's counts as `_encode_counts` writes them (row delta, field, count > 1 when
present), checked with one `fullmatch` per term when a part is added; the rows' bound
is checked when a term is decoded (`_decode_counts`)."""
POSITIONS_SHAPE: Final = re.compile(rf"\d+,{_FIELD}(?:,\d+)+(?:;\d+,{_FIELD}(?:,\d+)+)*")
"""One term's postings with positions (`_encode_postings`), checked the same way."""

KIND_TERMS: Final = "terms"
KIND_POSITIONS: Final = "positions"
KIND_WORDS: Final = "words"
KIND_TEXTS: Final = "texts"
KIND_LENGTHS: Final = "lengths"
KINDS: Final = (KIND_TERMS, KIND_POSITIONS, KIND_WORDS, KIND_TEXTS, KIND_LENGTHS)
"""Every kind of part, each with a hash tree of its own (one root each in the manifest)."""
_HEX: Final = frozenset("0123456789abcdef")


class StaticIndexError(ValueError):
    """A manifest that cannot be used; `.diagnostic` says why (never quoting the bytes)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class PartInvalidError(StaticIndexError):
    """A loaded part turned out malformed when the search decoded one of its postings (a
    row past the index's rows): `add_part` checks each part's shape, not every number, so
    that adding a part costs a regular expression, not a decode of all its postings."""

    def __init__(self) -> None:
        super().__init__(PART_INVALID)


class PartsMissing(LookupError):
    """`StaticSearch.search` was called before the parts it reads were added."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(f"{len(names)} parts of the static index are not loaded yet.")
        self.names = list(names)


@dataclass(frozen=True, slots=True)
class StaticIndexFiles:
    """What the build writes: the manifest (its name and bytes) and every part by name."""

    manifest_name: str
    manifest: bytes
    parts: dict[str, bytes]

    def all_files(self) -> dict[str, bytes]:
        return {self.manifest_name: self.manifest, **self.parts}


def _canonical(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:STATIC_HASH_CHARS]


def _name_of(kind: str, root: str, number: int) -> str:
    """A part's file name: its kind, its kind's tree root and its number. The root changes
    whenever any part of the kind does, so a name never stands for two contents (a host
    may cache it forever), and the manifest lists no name (see `_tree`)."""
    return f"{STATIC_FILE_PREFIX}{kind}.{root}-{number}.json"


_PROOF_OPEN: Final = b'{"proof":"'
"""Every part starts with its proof: `{"proof":"<sibling digests>",` then its body's
canonical JSON without the body's opening brace (one JSON object in all)."""
_TREE_FILLER: Final = "0" * STATIC_HASH_CHARS
"""The sibling of a level's last node when the level has an odd count (fixed, so the
tree's shape follows from the part count alone)."""


def _node(left: str, right: str) -> str:
    """An inner node's digest. Its input is 32 hex digits while a leaf's (a part's body)
    starts with `{`: a node can never be passed off as a part or the reverse."""
    return _digest((left + right).encode("ascii"))


def _tree(leaves: list[str]) -> list[list[str]]:
    """The levels of a kind's hash tree, leaves (each part body's digest) first, the
    root last. The manifest holds only the root, and each part carries the digests of
    its siblings up to it (`_proof`): checking a part costs its hash and `depth` small
    hashes, and the manifest no longer grows by one incompressible hash per part."""
    levels = [leaves]
    while len(levels[-1]) > 1:
        level = levels[-1]
        paired = [*level, _TREE_FILLER] if len(level) % 2 else level
        levels.append([_node(a, b) for a, b in zip(paired[::2], paired[1::2], strict=True)])
    return levels


def _depth(count: int) -> int:
    """The levels above the leaves of a tree of `count` leaves (0 for one leaf)."""
    return (count - 1).bit_length()


def _proof(levels: list[list[str]], number: int) -> list[str]:
    """Leaf `number`'s siblings, from the leaves up."""
    proof: list[str] = []
    for level in levels[:-1]:
        sibling = number ^ 1
        proof.append(level[sibling] if sibling < len(level) else _TREE_FILLER)
        number >>= 1
    return proof


def _verified_body(data: bytes, root: str, number: int, count: int) -> bytes | None:
    """The body of part `number` of `count` when its proof leads from the body's digest
    to `root` (the manifest's); None when not (corrupted, another build, another number)."""
    size = _depth(count) * STATIC_HASH_CHARS
    start = len(_PROOF_OPEN) + size
    if not data.startswith(_PROOF_OPEN) or data[start : start + 2] != b'",':
        return None
    proof = data[len(_PROOF_OPEN) : start].decode("ascii", errors="replace")
    if set(proof) - _HEX:
        return None
    body = b"{" + data[start + 2 :]
    digest = _digest(body)
    for level in range(size // STATIC_HASH_CHARS):
        sibling = proof[level * STATIC_HASH_CHARS : (level + 1) * STATIC_HASH_CHARS]
        digest = _node(sibling, digest) if number >> level & 1 else _node(digest, sibling)
    return body if digest == root else None


# --------------------------------------------------------------------------- writing


def _encode_postings(entries: Sequence[Entry]) -> str:
    """`row-delta,field,first-position,position-delta...` per entry, `;` between entries."""
    out: list[str] = []
    previous_row = 0
    for row, field, at in entries:
        deltas = [at[0]] + [b - a for a, b in itertools.pairwise(at)]
        out.append(",".join(map(str, [row - previous_row, field, *deltas])))
        previous_row = row
    return ";".join(out)


def _encode_counts(entries: Sequence[Entry]) -> str:
    """`row-delta,field[,count]` per entry (the count left out when 1), `;` between."""
    out: list[str] = []
    previous_row = 0
    for row, field, at in entries:
        numbers = [row - previous_row, field] + ([len(at)] if len(at) > 1 else [])
        out.append(",".join(map(str, numbers)))
        previous_row = row
    return ";".join(out)


def _decode_counts(raw: str, rows: int) -> list[Count]:
    """A term's counts; `PartInvalidError` when a row is past the index's `rows` (the
    part's shape was checked when it was added, by `COUNTS_SHAPE`)."""
    entries: list[Count] = []
    row = 0
    for item in raw.split(";"):
        numbers = [int(number) for number in item.split(",")]
        if len(numbers) not in (2, 3):
            raise PartInvalidError()
        row += numbers[0]
        entries.append((row, numbers[1], numbers[2] if len(numbers) == 3 else 1))
    if row >= rows:  # rows ascend: the last one is the largest
        raise PartInvalidError()
    return entries


def _ranges(keys: Sequence[Any], sizes: Sequence[int], target: int) -> list[tuple[int, int]]:
    """Consecutive [start, end) index ranges whose sizes add up to about `target` each."""
    ranges: list[tuple[int, int]] = []
    start, size = 0, 0
    for index, item_size in enumerate(sizes):
        size += item_size
        if size >= target:
            ranges.append((start, index + 1))
            start, size = index + 1, 0
    if start < len(keys):
        ranges.append((start, len(keys)))
    return ranges


def split_index(
    site_index: SiteIndex, *, synonyms: Iterable[Sequence[str]] = ()
) -> StaticIndexFiles:
    """The static index of a site index: the manifest and its parts, each kind's parts
    named by the root of their hash tree and their number (see `_tree`). A site index
    with no chunks raises ValueError (the site reader refuses such a site first)."""
    chunks = site_index.chunk_list()
    if not chunks:
        raise ValueError("This site index has no chunks: there is nothing to answer from.")
    search = SearchIndex.from_chunks(chunks)
    index = search.index
    bodies: dict[str, list[bytes]] = {kind: [] for kind in KINDS}

    def add(kind: str, body: dict[str, Any]) -> None:
        bodies[kind].append(_canonical({"kind": kind, **body}))

    terms = index.sorted_terms()
    counted = [_encode_counts(index.postings(term)) for term in terms]
    placed = [_encode_postings(index.postings(term)) for term in terms]
    term_firsts: list[str] = []
    for start, end in _ranges(
        terms,
        [len(t) + len(e) + 6 for t, e in zip(terms, counted, strict=True)],
        TERM_PART_TARGET_BYTES,
    ):
        term_firsts.append("" if start == 0 else terms[start])
        add(KIND_TERMS, {"terms": terms[start:end], "postings": counted[start:end]})
        add(KIND_POSITIONS, {"terms": terms[start:end], "postings": placed[start:end]})

    words = search.vocabulary.sorted_words()
    counts = [search.vocabulary.counts[word] for word in words]
    word_firsts: list[str] = []
    for start, end in _ranges(words, [len(w) + 6 for w in words], WORD_PART_TARGET_BYTES):
        word_firsts.append("" if start == 0 else words[start])
        add(KIND_WORDS, {"words": words[start:end], "counts": counts[start:end]})

    # The change-log mark is a seventh field and the role an eighth, only when set (a role
    # without the mark writes `false` before it): unmarked rows keep their bytes.
    rows: list[list[str | bool | None]] = [
        [c.path, c.anchor, c.page_title, c.heading, c.text, c.code, *_marks(c)] for c in chunks
    ]
    text_rows: list[int] = []
    sizes = [sum(len(str(field)) for field in row) + 16 for row in rows]
    for start, end in _ranges(rows, sizes, TEXT_PART_TARGET_BYTES):
        text_rows.append(end - start)
        add(KIND_TEXTS, {"first": start, "chunks": rows[start:end]})

    add(KIND_LENGTHS, {"lengths": index.lengths()})
    parts: dict[str, bytes] = {}
    roots: dict[str, str] = {}
    for kind in KINDS:
        levels = _tree([_digest(body) for body in bodies[kind]])
        roots[kind] = levels[-1][0]
        for number, body in enumerate(bodies[kind]):
            proof = "".join(_proof(levels, number)).encode("ascii")
            parts[_name_of(kind, roots[kind], number)] = _PROOF_OPEN + proof + b'",' + body[1:]
    manifest = _canonical(
        {
            "format": STATIC_INDEX_FORMAT,
            "version": STATIC_INDEX_VERSION,
            "siteName": site_index.site_name,
            "basePath": site_index.base_path,
            "generator": site_index.generator,
            "pages": site_index.pages,
            "rows": index.size,
            "tokens": index.total_tokens,
            "synonyms": [list(group) for group in synonyms],
            "roots": roots,
            "terms": term_firsts,
            "words": word_firsts,
            "texts": text_rows,
        }
    )
    return StaticIndexFiles(f"{STATIC_FILE_PREFIX}{_digest(manifest)}.json", manifest, parts)


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class StaticManifest:
    """A decoded manifest: statistics, synonyms, each range's part name, and where each
    name lies (kind and number: what its proof is checked against)."""

    site_name: str
    base_path: str
    rows: int
    tokens: int
    version: int
    synonyms: tuple[tuple[str, ...], ...]
    roots: dict[str, str]
    counts: dict[str, int]
    """Parts of each kind (a proof's length follows from it)."""
    lengths: str
    term_firsts: tuple[str, ...]
    term_names: tuple[str, ...]
    position_names: tuple[str, ...]
    word_firsts: tuple[str, ...]
    word_names: tuple[str, ...]
    text_firsts: tuple[int, ...]
    text_names: tuple[str, ...]
    places: dict[str, tuple[str, int]]
    """Part name -> (kind, number)."""


def _marks(chunk: Chunk) -> list[str | bool]:
    """A text row's fields after the code: `[true]` for a change-log section, `[history,
    role]` for a section with a role, none for the rest."""
    if chunk.role is not None:
        return [chunk.history, chunk.role]
    return [True] if chunk.history else []


def _row_marks(row: list[Any], version: int) -> tuple[bool, Role | None] | None:
    """A text row's change-log mark and role (see `_marks`), None when they are not
    well-formed; a version 2 row has no role field and gets the one `page_role`
    derives (module doc)."""
    extra = row[6:]
    role: Role | None = None
    if len(extra) < 2 and all(mark is True for mark in extra):
        history = bool(extra)
    elif version > 2 and len(extra) == 2 and type(extra[0]) is bool and extra[1] in ROLES:
        history, role = extra[0], cast(Role, extra[1])
    else:
        return None
    if version == 2 and type(row[0]) is str and type(row[2]) is str and type(row[3]) is str:
        role = page_role(row[0], row[2], row[3])
    return history, role


def _str_list(value: Any) -> bool:
    """A list of str (checked with C-level `map`: parts hold thousands of items)."""
    return type(value) is list and set(map(type, value)) <= {str}


def _int_list(value: Any) -> bool:
    """A list of non-negative int (not bool)."""
    return type(value) is list and set(map(type, value)) <= {int} and min(value, default=0) >= 0


def _firsts_of(value: Any) -> tuple[str, ...]:
    """A manifest's first keys of a kind's ranges; ValueError unless sorted, distinct,
    starting at "" and at most `STATIC_MAX_PARTS`."""
    if not _str_list(value) or not value or len(value) > STATIC_MAX_PARTS:
        raise ValueError("ranges")
    if value != sorted(value) or len(set(value)) != len(value) or value[0] != "":
        raise ValueError("order")
    return tuple(value)


def _text_firsts_of(value: Any, rows: int) -> tuple[int, ...]:
    """The first row of each text part, from the manifest's rows per part (small numbers
    compress far better than the ascending first rows); ValueError unless each is > 0,
    they add up to the index's rows and there are at most `STATIC_MAX_PARTS`."""
    if not _int_list(value) or not value or len(value) > STATIC_MAX_PARTS:
        raise ValueError("texts")
    if min(value) < 1 or sum(value) != rows:
        raise ValueError("texts")
    return (0, *itertools.accumulate(value[:-1]))


def parse_static_manifest(data: bytes | str) -> DecodeResult:
    """Decode a manifest; `.value` is a `StaticManifest` on success. Never raises."""
    try:
        size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
        if size > STATIC_MANIFEST_MAX_BYTES:
            return DecodeResult.failure(MANIFEST_INVALID)
        value = parse_json(data)
        if (
            type(value) is not dict
            or value.get("format") != STATIC_INDEX_FORMAT
            or value.get("version") not in STATIC_INDEX_READ_VERSIONS
        ):
            return DecodeResult.failure(MANIFEST_INVALID)
        synonyms = value["synonyms"]
        if type(synonyms) is not list or not all(_str_list(group) for group in synonyms):
            return DecodeResult.failure(MANIFEST_INVALID)
        rows, tokens = value["rows"], value["tokens"]
        if type(rows) is not int or type(tokens) is not int or rows < 0 or tokens < 0:
            return DecodeResult.failure(MANIFEST_INVALID)
        roots = value["roots"]
        if type(roots) is not dict or set(roots) != set(KINDS):
            return DecodeResult.failure(MANIFEST_INVALID)
        for root in roots.values():
            if type(root) is not str or len(root) != STATIC_HASH_CHARS or set(root) - _HEX:
                return DecodeResult.failure(MANIFEST_INVALID)
        term_firsts = _firsts_of(value["terms"])
        word_firsts = _firsts_of(value["words"])
        text_firsts = _text_firsts_of(value["texts"], rows)
        if not all(type(value.get(key)) is str for key in ("siteName", "basePath")):
            return DecodeResult.failure(MANIFEST_INVALID)
        counts = {
            KIND_TERMS: len(term_firsts),
            KIND_POSITIONS: len(term_firsts),
            KIND_WORDS: len(word_firsts),
            KIND_TEXTS: len(text_firsts),
            KIND_LENGTHS: 1,
        }
        names = {
            kind: tuple(_name_of(kind, roots[kind], number) for number in range(count))
            for kind, count in counts.items()
        }
        places = {
            name: (kind, number)
            for kind, kind_names in names.items()
            for number, name in enumerate(kind_names)
        }
        return DecodeResult.success(
            StaticManifest(
                value["siteName"],
                value["basePath"],
                rows,
                tokens,
                value["version"],
                tuple(tuple(group) for group in synonyms),
                dict(roots),
                counts,
                names[KIND_LENGTHS][0],
                term_firsts,
                names[KIND_TERMS],
                names[KIND_POSITIONS],
                word_firsts,
                names[KIND_WORDS],
                text_firsts,
                names[KIND_TEXTS],
                places,
            )
        )
    except (KeyError, ValueError, TypeError, RecursionError):
        return DecodeResult.failure(MANIFEST_INVALID)


def _covering(firsts: Sequence[Any], low: Any, high: Any) -> range:
    """Indexes of the consecutive parts whose ranges meet [low, high]."""
    start = max(bisect.bisect_right(firsts, low) - 1, 0)
    end = max(bisect.bisect_right(firsts, high) - 1, 0)
    return range(start, end + 1)


_PLACEHOLDER: Final = Chunk("", None, "", "", "")


class PartialIndex(InvertedIndex):
    """The inverted index of the parts loaded so far; a read of an unloaded part is
    recorded (and sees nothing) until `checkpoint` raises `PartsMissing`."""

    def __init__(self, manifest: StaticManifest) -> None:
        super().__init__()
        self.manifest = manifest
        self.total_tokens = manifest.tokens
        self.missing: set[str] = set()
        self.loaded: set[str] = set()
        self._raw: dict[str, str] = {}
        self._raw_positions: dict[str, str] = {}
        self._decoded: dict[str, list[Count]] = {}
        self._decoded_positions: dict[str, list[Entry]] = {}
        self._part_terms: dict[int, list[str]] = {}
        self._part_lengths: list[int] | None = None
        self._rows: dict[int, Chunk] = {}

    @property
    def size(self) -> int:
        return self.manifest.rows

    def _need(self, name: str) -> bool:
        if name in self.loaded:
            return True
        self.missing.add(name)
        return False

    def counts(self, token: str) -> Sequence[Count]:
        number = _covering(self.manifest.term_firsts, token, token)[0]
        if not self._need(self.manifest.term_names[number]):
            return ()
        found = self._decoded.get(token)
        if found is None:
            raw = self._raw.get(token)
            if raw is None:
                return ()
            found = self._decoded[token] = _decode_counts(raw, self.manifest.rows)
        return found

    def postings(self, token: str) -> Sequence[Entry]:
        number = _covering(self.manifest.term_firsts, token, token)[0]
        if not self._need(self.manifest.position_names[number]):
            return ()
        found = self._decoded_positions.get(token)
        if found is None:
            raw = self._raw_positions.get(token)
            if raw is None:
                return ()
            found = self._decoded_positions[token] = _decode_postings(raw, self.manifest.rows)
        return found

    def terms_from(self, prefix: str) -> list[str]:
        found: list[str] = []
        for number in _covering(self.manifest.term_firsts, prefix, prefix + LAST_CHAR):
            if not self._need(self.manifest.term_names[number]):
                continue
            terms = self._part_terms[number]
            start = bisect.bisect_left(terms, prefix)
            for term in terms[start:]:
                if not term.startswith(prefix):
                    break
                found.append(term)
        return found

    def length(self, row: int) -> int:
        if not self._need(self.manifest.lengths) or self._part_lengths is None:
            return 0
        return self._part_lengths[row]

    def chunk(self, row: int) -> Chunk:
        number = _covering(self.manifest.text_firsts, row, row)[0]
        if not self._need(self.manifest.text_names[number]):
            return _PLACEHOLDER
        return self._rows.get(row, _PLACEHOLDER)

    def checkpoint(self) -> None:
        if self.missing:
            raise PartsMissing(sorted(self.missing))

    # ---- loading (the data was validated by StaticSearch.add_part)

    def load_terms(self, name: str, number: int, terms: list[str], postings: list[str]) -> None:
        self._part_terms[number] = terms
        self._raw.update(zip(terms, postings, strict=True))
        self.loaded.add(name)

    def load_positions(self, name: str, terms: list[str], postings: list[str]) -> None:
        self._raw_positions.update(zip(terms, postings, strict=True))
        self.loaded.add(name)

    def load_lengths(self, name: str, lengths: list[int]) -> None:
        self._part_lengths = lengths
        self.loaded.add(name)

    def load_texts(self, name: str, first: int, chunks: list[Chunk]) -> None:
        self._rows.update((first + offset, chunk) for offset, chunk in enumerate(chunks))
        self.loaded.add(name)


class PartialVocabulary(Vocabulary):
    """The vocabulary of the word parts loaded so far; reads of others are recorded."""

    def __init__(self, index: PartialIndex) -> None:
        super().__init__()
        self._index = index

    def need(self, low: str, high: str) -> None:
        manifest = self._index.manifest
        for number in _covering(manifest.word_firsts, low, high):
            self._index._need(manifest.word_names[number])


def _decode_postings(raw: str, rows: int) -> list[Entry]:
    """A term's postings with positions; `PartInvalidError` when a row is past `rows`."""
    entries: list[Entry] = []
    row = 0
    for item in raw.split(";"):
        numbers = [int(number) for number in item.split(",")]
        row += numbers[0]
        at = list(itertools.accumulate(numbers[2:]))
        entries.append((row, numbers[1], tuple(at)))
    if row >= rows:
        raise PartInvalidError()
    return entries


class StaticSearch:
    """The search of a site over its static index, fed part by part (see the module doc)."""

    def __init__(self, manifest: bytes | str) -> None:
        decoded = parse_static_manifest(manifest)
        if not decoded.ok:
            raise StaticIndexError(decoded.diagnostic or MANIFEST_INVALID)
        self.manifest: StaticManifest = decoded.value
        self._index = PartialIndex(self.manifest)
        self._engine = SearchIndex(
            self._index,
            PartialVocabulary(self._index),
            normalise_synonyms(self.manifest.synonyms),
        )
        self._answered: tuple[tuple[str, int], Found] | None = None
        """The last search that had every part it read: `find` after a `parts_for` that
        returned [] gives it without searching again (a second search in the page)."""

    @property
    def loaded(self) -> frozenset[str]:
        return frozenset(self._index.loaded)

    def parts_for(self, question: str, limit: int = STATIC_DEFAULT_LIMIT) -> list[str]:
        """The parts this question's search reads that are not added yet (sorted); []
        when `find` can answer now. Call again after adding them (see the module doc)."""
        try:
            self.find(question, limit)
        except PartsMissing as missing:
            return missing.names
        return []

    def search(self, question: str, limit: int = STATIC_DEFAULT_LIMIT) -> list[Passage]:
        """What `SearchIndex.search` gives over the whole index; raises `PartsMissing`
        when a part it reads was not added (ask `parts_for` first)."""
        return self.find(question, limit).answered

    def find(self, question: str, limit: int = STATIC_DEFAULT_LIMIT) -> Found:
        """What `SearchIndex.find` gives over the whole index (a near miss's closest
        passages too); raises `PartsMissing` when a part it reads was not added."""
        if self._answered is not None and self._answered[0] == (question, limit):
            return self._answered[1]  # `parts_for` just ran it, and nothing was added
        self._index.missing.clear()
        try:
            found = self._engine.find(question, limit)
            self._index.checkpoint()
        except PartsMissing:
            self._engine.forget()  # what was read without its parts is not kept
            raise
        self._answered = ((question, limit), found)
        return found

    def add_part(self, name: str, data: bytes) -> Diagnostic | None:
        """Validate and add one part; a diagnostic (and nothing added) when it is unknown,
        its proof does not lead from its bytes to its kind's root, or it is malformed.
        Adding a part twice is harmless."""
        place = self.manifest.places.get(name)
        if place is None:
            return PART_UNKNOWN
        if name in self._index.loaded:
            return None
        self._answered = None
        if len(data) > STATIC_PART_MAX_BYTES:
            return PART_TOO_LARGE
        kind, number = place
        manifest = self.manifest
        body = _verified_body(bytes(data), manifest.roots[kind], number, manifest.counts[kind])
        if body is None:
            return PART_MISMATCH
        try:
            value = _parse_part(body)
            if type(value) is not dict or value.get("kind") != kind:
                return PART_INVALID
            if kind in (KIND_TERMS, KIND_POSITIONS):
                return self._add_terms(name, number, kind, value)
            if kind == KIND_WORDS:
                return self._add_words(name, number, value)
            if kind == KIND_TEXTS:
                return self._add_texts(name, number, value)
            return self._add_lengths(name, value)
        except (KeyError, ValueError, TypeError, IndexError, RecursionError):
            return PART_INVALID

    def _add_terms(
        self, name: str, number: int, kind: str, value: dict[str, Any]
    ) -> Diagnostic | None:
        terms, postings = value["terms"], value["postings"]
        if not (_str_list(terms) and _str_list(postings)) or len(terms) != len(postings):
            return PART_INVALID
        if not _in_range(terms, self.manifest.term_firsts, number):
            return PART_INVALID
        shape = COUNTS_SHAPE if kind == KIND_TERMS else POSITIONS_SHAPE
        if not all(shape.fullmatch(raw) for raw in postings):
            return PART_INVALID
        if kind == KIND_TERMS:
            self._index.load_terms(name, number, terms, postings)
        else:
            self._index.load_positions(name, terms, postings)
        self._engine.forget()
        return None

    def _add_words(self, name: str, number: int, value: dict[str, Any]) -> Diagnostic | None:
        words, counts = value["words"], value["counts"]
        if not (_str_list(words) and _int_list(counts)) or len(words) != len(counts):
            return PART_INVALID
        if not _in_range(words, self.manifest.word_firsts, number):
            return PART_INVALID
        self._engine.vocabulary.add_counts(zip(words, counts, strict=True))
        self._index.loaded.add(name)
        self._engine.forget()
        return None

    def _add_texts(self, name: str, number: int, value: dict[str, Any]) -> Diagnostic | None:
        first, rows = value["first"], value["chunks"]
        if first != self.manifest.text_firsts[number] or type(rows) is not list:
            return PART_INVALID
        end = (
            self.manifest.text_firsts[number + 1]
            if number + 1 < len(self.manifest.text_firsts)
            else self.manifest.rows
        )
        if first + len(rows) != end:
            return PART_INVALID
        chunks: list[Chunk] = []
        for row in rows:
            marks = _row_marks(row, self.manifest.version) if type(row) is list else None
            if marks is None or len(row) < 6:
                return PART_INVALID
            path, anchor, page_title, heading, text, code = row[:6]
            if not (_str_list([path, page_title, heading, text, code]) and is_site_path(path)):
                return PART_INVALID
            if anchor is not None and type(anchor) is not str:
                return PART_INVALID
            chunks.append(Chunk(path, anchor, page_title, heading, text, code, *marks))
        self._index.load_texts(name, first, chunks)
        self._engine.forget()
        return None

    def _add_lengths(self, name: str, value: dict[str, Any]) -> Diagnostic | None:
        lengths = value["lengths"]
        if not _int_list(lengths) or len(lengths) != self.manifest.rows:
            return PART_INVALID
        if sum(lengths) != self.manifest.tokens:
            return PART_INVALID
        self._index.load_lengths(name, lengths)
        self._engine.forget()
        return None


def _reject_constant(_name: str) -> Any:
    raise ValueError("non-finite number")


_PART_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
"""The lean JSON reader of parts: the C scanner with no per-number hooks. A part is read
only once its proof led from its bytes to the root the manifest gave (which `parse_json`
read, with every wire check), so it is the build's own JSON; what remains to guard is the shape
(checked by `add_part`), the nesting (pre-scanned: deep input can crash Pyodide), NaN,
and huge integers (Python refuses more than 4,300 digits). `parse_json`'s per-integer
hook was most of the time spent adding a vocabulary part in the page."""


def _parse_part(data: bytes) -> Any:
    """A part's JSON value; ValueError (or RecursionError) when it is not one."""
    text = data.decode("utf-8")
    if nesting_depth_exceeds(text):
        raise ValueError("nesting")
    return _PART_DECODER.decode(text)


def _in_range(keys: list[str], firsts: Sequence[str], number: int) -> bool:
    """The keys are sorted, distinct and inside part `number`'s range."""
    if keys != sorted(keys) or len(set(keys)) != len(keys):
        return False
    if not keys:
        return True
    high = firsts[number + 1] if number + 1 < len(firsts) else None
    return keys[0] >= firsts[number] and (high is None or keys[-1] < high)
