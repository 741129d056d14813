"""The widget's imports in the order the loader runs them, one module at a time.

Importing `agentskit_web.browser.embed` imports about 270 modules; in one `pyimport` that is
one main-thread task (hundreds of ms on a phone). The loader (web/agentskit-ask.js,
`importInSlices`) imports these names in order instead and ends its task between them
whenever a slice has run its budget, so the page can paint and take input in between
(docs/design/boot-long-tasks.md).

The order is leaves first, as CPython's `-X importtime` reports their completion for
`import agentskit_web.browser.embed`, with the heavy third-party modules (pydantic's
internals, pydantic-core's schema module) on their own, ahead of the first model that
needs them. It is a hint, not a requirement: a module left out is imported by whichever
listed module needs it, only in a longer slice. tests/test_boot_imports.py fails when
the embed imports one of our modules this list does not name.
"""

from typing import Final

BOOT_IMPORTS: Final = (
    "enum",
    "re",
    "typing",
    "logging",
    "inspect",
    "asyncio",
    "urllib.parse",
    "datetime",
    "copy",
    "dataclasses",
    "json",
    "typing_extensions",
    "typing_inspection.introspection",
    "annotated_types",
    "pydantic_core",
    "pydantic_core.core_schema",
    "pydantic._internal._decorators",
    "pydantic._internal._fields",
    "pydantic._internal._validators",
    "pydantic.aliases",
    "pydantic.types",
    "pydantic.json_schema",
    "pydantic.main",
    "agentskit_web",
    "agentskit_web.lazy_exports",
    "agentskit_web.protocol",
    "agentskit_web.protocol.limits",
    "agentskit_web.protocol.text_metrics",
    "agentskit_web.protocol.identifiers",
    "agentskit_web.protocol.wire_json",
    "agentskit_web.transports.port",
    "agentskit_web.transports",
    "agentskit_web.chat",
    "agentskit_web.chat.once_source",
    "agentskit_web.chat.ask",
    "agentskit_web.chat.ask.adapter",
    "agentskit_web.protocol.diagnostics",
    "agentskit_web.protocol.json_structure",
    "agentskit_web.protocol.wire_model",
    "agentskit_web.protocol.component",
    "agentskit_web.protocol.source_list",
    "agentskit_web.chat.components",
    "agentskit_web.chat.components.catalog",
    "agentskit_web.protocol.content",
    "agentskit_web.protocol.dates",
    "agentskit_web.chat.definition",
    "agentskit_web.chat.view",
    "agentskit_web.chat.view.presentation",
    "agentskit_web.chat.message",
    "agentskit_web.chat.conversation",
    "agentskit_web.chat.local_answers",
    "agentskit_web.chat.memory",
    "agentskit_web.protocol.memory_record",
    "agentskit_web.chat.memory.storage",
    "agentskit_web.chat.memory.web_storage",
    "agentskit_web.chat.memory.legacy",
    "agentskit_web.chat.memory.sync",
    "agentskit_web.chat.memory.glance",
    "agentskit_web.chat.view.tree",
    "agentskit_web.chat.view.component_view",
    "agentskit_web.chat.widget_config",
    "agentskit_web.chat.answer_feedback",
    "agentskit_web.page_packages",
    "agentskit_web.chat.view.markdown_stream",
    "agentskit_web.chat.view.render_limits",
    "agentskit_web.chat.view.render_budget",
    "agentskit_web.answering",
    "agentskit_web.answering.answer_shape",
    "agentskit_web.chat.view.markdown_tree",
    "agentskit_web.chat.view.render_plan",
    "agentskit_web.browser",
    "agentskit_web.browser.js_values",
    "agentskit_web.browser.dom_render",
    "agentskit_web.browser.conversation_view",
    "agentskit_web.browser.web_storage",
    "agentskit_web.browser.widget",
    "agentskit_web.browser.embed",
)

MARKDOWN_IMPORTS: Final = (
    "markdown_it.common.utils",
    "markdown_it.ruler",
    "markdown_it.rules_inline",
    "markdown_it.helpers",
    "markdown_it.rules_block",
    "markdown_it.parser_block",
    "markdown_it.parser_core",
    "markdown_it.main",
)
"""markdown-it-py's heavier modules, leaves first: the widget imports them one per idle
callback once the package is installed after ready (`widget.warm_up_when_idle`), where one
import of the parser was a task of 160-470 ms at idle."""
