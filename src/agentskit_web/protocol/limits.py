"""Every numeric bound of the AgentsKit wire contracts, named as in PROTOCOL.md.

Keeping them in one module means a test can import the exact limit it probes
(at the limit and one past it) and nothing hard-codes a magic number twice.
"""

from typing import Final

# Identifiers
SAFE_ID_MAX_CHARS: Final = 128
COMPONENT_KEY_MAX_CHARS: Final = 64

# Strict JSON pre-checks shared by every decoder (guards recursion and huge numbers).
JSON_MAX_NESTING: Final = 64
JSON_MAX_NUMBER_CHARS: Final = 400

# Section 2 - ordered assistant content
ASSISTANT_CONTENT_MAX_BYTES: Final = 262_144
ASSISTANT_CONTENT_MAX_RECORDS: Final = 512
# A text record's bound counts code points, as the reference encoder does: it
# accepts 8,193 emoji (16,386 UTF-16 units). See docs/design/compatibility.md.
ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS: Final = 16_384
# Writers of this project split text into records of at most this many UTF-16
# units (the same number), so every record they write is valid under either count.
ASSISTANT_CONTENT_TEXT_MAX_CHARS: Final = ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS

# Section 3 - components and bounded JSON
BOUNDED_JSON_MAX_NODES: Final = 1_000
BOUNDED_JSON_MAX_DEPTH: Final = 20
BOUNDED_JSON_MAX_STRING_CHARS: Final = 16_384
BOUNDED_JSON_MAX_ARRAY_ITEMS: Final = 1_000
BOUNDED_JSON_MAX_OBJECT_KEYS: Final = 1_000
BOUNDED_JSON_MAX_KEY_CHARS: Final = 256
COMPONENT_FALLBACK_KIND_MAX_CHARS: Final = 64
COMPONENT_FALLBACK_SUMMARY_MAX_CHARS: Final = 4_096
SOURCE_LIST_LABEL_MAX_CHARS: Final = 256
SOURCE_LIST_MAX_SOURCES: Final = 50
SOURCE_TITLE_MAX_CHARS: Final = 256
SOURCE_SNIPPET_MAX_CHARS: Final = 4_096
PORTABLE_URL_MAX_CHARS: Final = 2_048

# Section 4 - session envelope
SESSION_MAX_TERMINAL_TURNS: Final = 64
SESSION_STATE_MAX_CHARS: Final = 128
SESSION_MAX_DECISIONS: Final = 1_000
SESSION_DECISION_INPUT_MAX_CHARS: Final = 16_384
SESSION_DECISION_CONTENT_MAX_CHARS: Final = 65_536
SESSION_MAX_CONFIRMATIONS: Final = 1_000

# Section 5 - Ask service events and decoder
ASK_TEXT_DELTA_MAX_CHARS: Final = 1_048_576
ASK_TOOL_ID_MAX_CHARS: Final = 256
ASK_TOOL_NAME_MAX_CHARS: Final = 128
ASK_TOOL_ARG_KEY_MAX_CHARS: Final = 128
ASK_MODEL_MAX_CHARS: Final = 256
ASK_ERROR_MESSAGE_MAX_CHARS: Final = 4_096
ASK_ERROR_CODE_MAX_CHARS: Final = 128
ASK_LINE_MAX_BYTES: Final = 1_048_576
ASK_PARTIAL_LINE_MAX_BYTES: Final = 1_048_576
ASK_MAX_RECORDS_PER_DECODE: Final = 4_096
ASK_CONNECT_DEADLINE_SECONDS: Final = 30.0
# The body of a non-OK Ask response: read this much at most, for this long at most, to find an
# `{"error": {code, message, retryable}}` envelope; a longer or slower body is not an envelope.
ASK_ERROR_BODY_MAX_BYTES: Final = 8_192
ASK_ERROR_BODY_DEADLINE_SECONDS: Final = 5.0
# The largest `Retry-After` (delta-seconds) honoured; a larger value counts as absent.
ASK_RETRY_AFTER_MAX_SECONDS: Final = 3_600

# Section 6 - Ask backend request, escalation, site config
ASK_REQUEST_MAX_MESSAGES: Final = 64
ASK_REQUEST_MESSAGE_MAX_CHARS: Final = 16_384
ASK_REQUEST_MAX_BODY_BYTES: Final = 65_536
ESCALATION_QUERY_MAX_CHARS: Final = 512
ESCALATION_MESSAGE_MAX_CHARS: Final = 4_096
ESCALATION_MAX_CANDIDATES: Final = 8
SITE_ASSISTANT_NAME_MAX_CHARS: Final = 256
SITE_MAX_SUGGESTIONS: Final = 8
SITE_MAX_SYNONYM_GROUPS: Final = 64
"""Optional `search.synonyms` of a site config (an additive extension): at most this many groups,"""
SITE_SYNONYM_GROUP_TERMS_RANGE: Final = (2, 8)
"""each of 2 to 8 equivalent terms,"""
SITE_SYNONYM_TERM_MAX_CHARS: Final = 64
"""each term 1 to 64 characters (after trim) with at least one letter or digit."""
SITE_MAX_COMPONENTS: Final = 64
SITE_MAX_ACTIONS: Final = 64
SITE_REQUEST_TIMEOUT_MS_RANGE: Final = (100, 120_000)
SITE_RETRIEVAL_TIMEOUT_MS_RANGE: Final = (100, 60_000)
SITE_GENERATION_TIMEOUT_MS_RANGE: Final = (100, 120_000)
SITE_MAX_SOURCES_RANGE: Final = (1, 8)

# Section 7 - memory records and Web Storage memory
MEMORY_RECORD_MAX_NODES: Final = 10_000
MEMORY_RECORD_MAX_DEPTH: Final = 32
MEMORY_DEFAULT_MAX_MESSAGES: Final = 20
MEMORY_DEFAULT_MAX_RECORD_BYTES: Final = 1_048_576

# Section 8 - deterministic local answers
KNOWLEDGE_MAX_BYTES: Final = 524_288
KNOWLEDGE_MAX_ENTRIES: Final = 1_024
KNOWLEDGE_MAX_MATCH_VALUES: Final = 16
KNOWLEDGE_ANSWER_MAX_CHARS: Final = 16_384
KNOWLEDGE_MAX_CITATIONS: Final = 8

# Section 1 - turn protocol
# zod 4's `.int()` (the reference decoder) accepts only JavaScript safe integers.
JS_MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991
# Reference server request body bound (64 KiB).
TURN_REQUEST_MAX_BODY_BYTES: Final = 65_536
# Implementation bound on a whole decoded turn event (not in the spec): a valid
# event is its memory record (<= 10,000 nodes) plus a few envelope nodes, so this
# leaves ample room for additive fields while bounding the walk of host objects.
TURN_EVENT_MAX_NODES: Final = 100_000

# Section 7 - memory record object keys (reference `cloneJsonRecord` rejects longer keys).
MEMORY_RECORD_MAX_KEY_CHARS: Final = 256

# Section 3 - standard component catalog props (reference catalog bounds)
COMPONENT_LABEL_MAX_CHARS: Final = 256
COMPONENT_TEXT_MAX_CHARS: Final = 4_096
COMPONENT_JSON_RECORD_KEY_MAX_CHARS: Final = 128
CHOICE_LIST_MAX_CHOICES: Final = 20
BUTTON_GROUP_MAX_BUTTONS: Final = 12
FORM_MAX_FIELDS: Final = 30
FORM_FIELD_MAX_OPTIONS: Final = 50
FORM_PLACEHOLDER_MAX_CHARS: Final = 256
PROGRESS_VALUE_RANGE: Final = (0, 100)
ERROR_NOTICE_CODE_MAX_CHARS: Final = 128
TABLE_MAX_COLUMNS: Final = 30
TABLE_MAX_ROWS: Final = 1_000
TABLE_CELL_MAX_CHARS: Final = 4_096
FILE_MIME_TYPE_MAX_CHARS: Final = 256

# Section 6/8 - answer envelope `agentskit.chat.answer` and knowledge artifact fields
ANSWER_ENVELOPE_MAX_BYTES: Final = 262_144
ANSWER_MAX_SUGGESTIONS: Final = 8
ANSWER_MARKDOWN_MAX_CHARS: Final = 16_384
ANSWER_LABEL_MAX_CHARS: Final = 256
ANSWER_PROVENANCE_NAME_MAX_CHARS: Final = 128
KNOWLEDGE_MATCH_VALUE_MAX_CHARS: Final = 512

# Feedback on one answer (`POST /api/feedback`, protocol/feedback.py).
FEEDBACK_MAX_BODY_BYTES: Final = 8_192
"""A question, up to eight cited sections and a short comment fit with room to spare."""
FEEDBACK_QUESTION_MAX_CHARS: Final = 2_000
FEEDBACK_COMMENT_MAX_CHARS: Final = 500
FEEDBACK_MAX_SOURCES: Final = 8
"""An answer cites at most eight sections (`SITE_MAX_SOURCES_RANGE`)."""
FEEDBACK_SOURCE_PATH_MAX_CHARS: Final = 512
FEEDBACK_SOURCE_ANCHOR_MAX_CHARS: Final = 256
