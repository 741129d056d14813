"""The site index file: a docs site's chunks as one versioned JSON document.

`agentskit-web index SITE_DIR`, the MkDocs plugin and the Sphinx extension
write it (content-hashed, beside the widget's assets) from what the generator
built; `serve-ask --index FILE` reads it, and the static in-page answers are
made from the same chunks. It is the contract between indexing and search,
so its shape is closed (an unknown field is an error) and versioned.

Version 2 added a chunk's `role` (`Chunk.role`, marked by the reader). A
version 1 file, written before, is still read: its chunks get the role the
ranking computed from their titles when it was written (`page_roles.page_role`),
so a server reading an old index ranks as it did; a reader of version 1 only
refuses a version 2 file as another version, not as a broken one.

Reading one never raises: `parse_site_index` returns a `DecodeResult` whose
diagnostic says what is wrong without quoting the file (it may be large or
hostile), like every decoder of the protocol layer.
"""

import hashlib
import json
import re
from dataclasses import replace
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator

from ..protocol.diagnostics import DecodeResult, Diagnostic
from ..protocol.wire_json import JSON_INVALID, parse_json
from ..protocol.wire_model import StrictWireModel
from .chunk import Chunk
from .page_roles import Role, page_role

SITE_INDEX_FORMAT: Final = "agentskit.site-index"
SITE_INDEX_VERSION: Final = 2
SITE_INDEX_READ_VERSIONS: Final = (1, SITE_INDEX_VERSION)
"""The versions read: version 1 has no `role` (it is derived when read, see the module doc)."""
SITE_INDEX_MAX_BYTES: Final = 64 * 1024 * 1024
"""Largest index file read: about fifty times a 2,000-page site's visible text."""
SITE_INDEX_MAX_CHUNKS: Final = 200_000
"""Most chunks in one index (a 2,000-page site has about 20,000)."""
SITE_INDEX_FILE_PREFIX: Final = "agentskit-index."
SITE_INDEX_HASH_CHARS: Final = 16
"""Hex digits of the content hash in the file name (64 bits: no collision between builds)."""

SITE_PATH: Final = re.compile(r"/(?![/\\])[^\x00-\x1f\x7f\\]*")
"""A chunk's `path`: a path on the site's own origin (`/guide/`), never a full URL, a
scheme-relative `//host/` or a backslash a browser reads as `/`: an index is the site's
own pages, so its sources are links on the site (issue 36: a full URL became a live
source link to another host)."""


def is_site_path(value: object) -> bool:
    """Whether value is a path on the site's own origin (SITE_PATH)."""
    return isinstance(value, str) and SITE_PATH.fullmatch(value) is not None


def _site_path(value: str) -> str:
    if not is_site_path(value):
        raise ValueError("a chunk's path must be a path on the site (`/page/`), not a URL")
    return value


INDEX_TOO_LARGE: Final = Diagnostic(
    "SITE_INDEX_TOO_LARGE", f"The site index is larger than {SITE_INDEX_MAX_BYTES} bytes."
)
INDEX_NOT_JSON: Final = Diagnostic("SITE_INDEX_NOT_JSON", "The site index is not valid JSON.")
INDEX_WRONG_FORMAT: Final = Diagnostic(
    "SITE_INDEX_UNSUPPORTED",
    f"The file is not an {SITE_INDEX_FORMAT} version 1 or {SITE_INDEX_VERSION} document.",
)
INDEX_INVALID: Final = Diagnostic(
    "SITE_INDEX_INVALID", "The site index does not match its schema (rebuild it)."
)


class IndexedChunk(StrictWireModel):
    """One chunk on the wire: `answering.chunk.Chunk`'s fields, with its wire names."""

    path: Annotated[str, Field(min_length=1), AfterValidator(_site_path)]
    anchor: str | None = None
    page_title: str = Field(alias="pageTitle")
    heading: str
    text: str
    code: str = ""
    history: bool = False
    """`Chunk.history`; written only when true, so an index with no change log is the
    same file as before the mark existed."""
    role: Role | None = None
    """`Chunk.role` (one of `page_roles.ROLES`); written only when set."""

    def to_chunk(self) -> Chunk:
        return Chunk(
            self.path,
            self.anchor,
            self.page_title,
            self.heading,
            self.text,
            self.code,
            self.history,
            self.role,
        )

    @classmethod
    def of(cls, chunk: Chunk) -> "IndexedChunk":
        fields: dict[str, Any] = {
            "path": chunk.path,
            "anchor": chunk.anchor,
            "pageTitle": chunk.page_title,
            "heading": chunk.heading,
            "text": chunk.text,
            "code": chunk.code,
        }
        if chunk.history:
            fields["history"] = True
        if chunk.role is not None:
            fields["role"] = chunk.role
        return cls.model_validate(fields)


class SiteIndex(StrictWireModel):
    """A whole site's index: where it is served and what it holds.

    `base_path` is the path the site is published below (`/` or `/docs/`);
    every chunk's `path` already starts with it. `generator` names what built
    the pages when it was recognised (`mkdocs-material`, `sphinx-furo`, ...),
    `html` otherwise; `pages` counts the pages indexed.
    """

    format: Literal["agentskit.site-index"]
    version: Literal[1, 2]
    site_name: str = Field(alias="siteName")
    base_path: str = Field(alias="basePath")
    generator: str
    pages: Annotated[int, Field(ge=0)]
    chunks: Annotated[list[IndexedChunk], Field(max_length=SITE_INDEX_MAX_CHUNKS)]

    @classmethod
    def of(
        cls, chunks: list[Chunk], *, site_name: str, base_path: str, generator: str, pages: int
    ) -> "SiteIndex":
        return cls.model_validate(
            {
                "format": SITE_INDEX_FORMAT,
                "version": SITE_INDEX_VERSION,
                "siteName": site_name,
                "basePath": base_path,
                "generator": generator,
                "pages": pages,
                "chunks": [IndexedChunk.of(chunk) for chunk in chunks],
            }
        )

    def chunk_list(self) -> list[Chunk]:
        """The chunks; those of a version 1 file with the roles `page_role` derives (the
        ranking's view when it was written: see the module doc)."""
        chunks = [chunk.to_chunk() for chunk in self.chunks]
        if self.version == 1:
            return [replace(c, role=page_role(c.path, c.page_title, c.heading)) for c in chunks]
        return chunks

    @model_validator(mode="after")
    def _no_roles_in_version_1(self) -> "SiteIndex":
        """A role written in a file makes it version 2 at least."""
        if self.version == 1 and any(chunk.role is not None for chunk in self.chunks):
            raise ValueError("a version 1 site index has no chunk roles")
        return self

    def to_bytes(self) -> bytes:
        """Canonical UTF-8 JSON: the same chunks always give the same bytes (and name)."""
        return json.dumps(
            self.to_wire(), ensure_ascii=False, separators=(",", ":"), sort_keys=True
        ).encode("utf-8")

    def file_name(self) -> str:
        """`agentskit-index.<hash>.json`: content-hashed, so it can be cached forever."""
        digest = hashlib.sha256(self.to_bytes()).hexdigest()[:SITE_INDEX_HASH_CHARS]
        return f"{SITE_INDEX_FILE_PREFIX}{digest}.json"


def parse_site_index(data: str | bytes | bytearray | Any) -> DecodeResult:
    """Decode a site index file; `.value` is a `SiteIndex` on success. Never raises."""
    try:
        if isinstance(data, str | bytes | bytearray):
            size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
            if size > SITE_INDEX_MAX_BYTES:
                return DecodeResult.failure(INDEX_TOO_LARGE)
            data = parse_json(data)
            if data is JSON_INVALID:
                return DecodeResult.failure(INDEX_NOT_JSON)
        if (
            type(data) is not dict
            or data.get("format") != SITE_INDEX_FORMAT
            or data.get("version") not in SITE_INDEX_READ_VERSIONS
        ):
            return DecodeResult.failure(INDEX_WRONG_FORMAT)
        return DecodeResult.success(SiteIndex.model_validate(data))
    except (ValidationError, ValueError, TypeError, RecursionError):
        return DecodeResult.failure(INDEX_INVALID)
