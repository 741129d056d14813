"""Backend site config `agentskit.chat.backend-site` v1 (PROTOCOL.md section 6).

The trusted server resolves one of these from its authenticated context
before it reads a request body; it names the site, its assistant, its
corpus, the components and actions it may use, its time limits and whether
persistence is required. Strict everywhere: an unknown field at any level
makes the config invalid, since a typo in an operator's config must not be
silently ignored. Labels are JavaScript-trimmed before their 1..256 bound
(and returned trimmed), as the reference's `z.string().trim()` does.

The spec names no diagnostic code for this config; an invalid one is an
operator error, reported as SERVER_INVALID_CONFIG (the reference server's
500 configuration code) with fixed messages.
"""

import re
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field, ValidationError

from .diagnostics import DecodeResult, Diagnostic
from .identifiers import SafeId, js_chars
from .json_structure import StructureLimits, check_structure
from .limits import (
    JSON_MAX_NESTING,
    SITE_ASSISTANT_NAME_MAX_CHARS,
    SITE_GENERATION_TIMEOUT_MS_RANGE,
    SITE_MAX_ACTIONS,
    SITE_MAX_COMPONENTS,
    SITE_MAX_SOURCES_RANGE,
    SITE_MAX_SUGGESTIONS,
    SITE_MAX_SYNONYM_GROUPS,
    SITE_REQUEST_TIMEOUT_MS_RANGE,
    SITE_RETRIEVAL_TIMEOUT_MS_RANGE,
    SITE_SYNONYM_GROUP_TERMS_RANGE,
    SITE_SYNONYM_TERM_MAX_CHARS,
)
from .wire_fields import JS_TRIM, NOT_NULL, JsInt, exact_number
from .wire_json import JSON_INVALID, parse_json
from .wire_model import StrictWireModel

SITE_CONFIG_PROTOCOL: Final = "agentskit.chat.backend-site"
SITE_CONFIG_VERSION: Final = 1
SERVER_INVALID_CONFIG: Final = "SERVER_INVALID_CONFIG"

_NOT_JSON: Final = Diagnostic(SERVER_INVALID_CONFIG, "Ask site configuration is not valid JSON.")
_INVALID: Final = Diagnostic(SERVER_INVALID_CONFIG, "Ask site configuration is invalid.")

# Every list and field of a valid config, with room to spare; bounds the walk
# of a host dict (and refuses cycles) before pydantic sees it.
_STRUCTURE: Final = StructureLimits(
    max_nodes=4 * (SITE_MAX_SUGGESTIONS + SITE_MAX_COMPONENTS + SITE_MAX_ACTIONS + 64)
    + SITE_MAX_SYNONYM_GROUPS * (SITE_SYNONYM_GROUP_TERMS_RANGE[1] + 1),
    max_depth=JSON_MAX_NESTING + 1,
)

SiteLabel = Annotated[str, JS_TRIM, js_chars(1, SITE_ASSISTANT_NAME_MAX_CHARS)]


def _ranged(bounds: tuple[int, int]) -> Any:
    return Field(ge=bounds[0], le=bounds[1])


class SiteAssistant(StrictWireModel):
    """The assistant (persona) the site exposes and its starter suggestions."""

    id: SafeId
    name: SiteLabel
    suggestions: Annotated[list[SiteLabel], Field(max_length=SITE_MAX_SUGGESTIONS)]


class SiteCorpus(StrictWireModel):
    """The corpus answers are grounded in, retrieved locally or federated."""

    id: SafeId
    mode: Literal["local", "federated"]


class SiteLimits(StrictWireModel):
    """Time limits (ms) and the most sources one answer may cite."""

    request_timeout_ms: Annotated[JsInt, _ranged(SITE_REQUEST_TIMEOUT_MS_RANGE)] = Field(
        alias="requestTimeoutMs"
    )
    retrieval_timeout_ms: Annotated[JsInt, _ranged(SITE_RETRIEVAL_TIMEOUT_MS_RANGE)] = Field(
        alias="retrievalTimeoutMs"
    )
    generation_timeout_ms: Annotated[JsInt, _ranged(SITE_GENERATION_TIMEOUT_MS_RANGE)] = Field(
        alias="generationTimeoutMs"
    )
    max_sources: Annotated[JsInt, _ranged(SITE_MAX_SOURCES_RANGE)] = Field(alias="maxSources")


class SitePersistence(StrictWireModel):
    """Whether conversations must be persisted (then a session id is required)."""

    mode: Literal["required", "disabled"]


def _has_word(term: str) -> str:
    if not re.search(r"\w", term):
        raise ValueError("a synonym needs a letter or digit")
    return term


SynonymTerm = Annotated[
    str, JS_TRIM, js_chars(1, SITE_SYNONYM_TERM_MAX_CHARS), AfterValidator(_has_word)
]
SynonymGroup = Annotated[
    list[SynonymTerm],
    Field(
        min_length=SITE_SYNONYM_GROUP_TERMS_RANGE[0], max_length=SITE_SYNONYM_GROUP_TERMS_RANGE[1]
    ),
]


class SiteSearch(StrictWireModel):
    """Optional retrieval settings (an extension of the v1 contract; absent in most configs).

    `synonyms` are groups of terms a reader may use for one another ("llm" and
    "model"); the reference backend searches every term of a group when a
    question uses one of them.
    """

    synonyms: Annotated[list[SynonymGroup], Field(max_length=SITE_MAX_SYNONYM_GROUPS)]


class SiteConfig(StrictWireModel):
    """A validated, immutable backend site config."""

    protocol: Literal["agentskit.chat.backend-site"]
    version: Annotated[Literal[1], exact_number(SITE_CONFIG_VERSION)]
    site_id: SafeId = Field(alias="siteId")
    assistant: SiteAssistant
    corpus: SiteCorpus
    components: Annotated[list[SafeId], Field(max_length=SITE_MAX_COMPONENTS)]
    actions: Annotated[list[SafeId], Field(max_length=SITE_MAX_ACTIONS)]
    limits: SiteLimits
    persistence: SitePersistence
    search: Annotated[SiteSearch | None, NOT_NULL] = None


def _decode(data: Any) -> DecodeResult:
    if isinstance(data, SiteConfig):
        return DecodeResult.success(data)
    if isinstance(data, str | bytes | bytearray):
        candidate = parse_json(data)
        if candidate is JSON_INVALID:
            return DecodeResult.failure(_NOT_JSON)
    else:
        candidate = data
    if type(candidate) is not dict or not check_structure(candidate, _STRUCTURE):
        return DecodeResult.failure(_INVALID)
    try:
        return DecodeResult.success(SiteConfig.model_validate(candidate))
    except (ValidationError, ValueError, TypeError, RecursionError):
        return DecodeResult.failure(_INVALID)


def parse_site_config(data: Any) -> DecodeResult:
    """Decode a site config (text, bytes or dict); `.config` on success. Never raises."""
    try:
        return _decode(data)
    except Exception:  # a decoder never raises
        return DecodeResult.failure(_INVALID)
