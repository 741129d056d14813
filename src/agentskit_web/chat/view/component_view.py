"""Component render frames -> the inert view tree, through the manifest.

A frame is resolved with `resolve_component_frame` (decode, registered key,
strict props). Each of the 12 standard components has a view here; an
application component registered in the manifest shows its definition's
fallback text; an unknown, invalid or undecodable frame shows the semantic
fallback `[unsupported visual: <kind>] <summary>`. A view that fails for any
reason also falls back, so a frame never renders as nothing and never raises.

Interactive parts are buttons or links carrying `data-action`:
- `component-event` with `data-event` (and `data-value` when the event has a
  value): the browser layer builds the component event, validates it with
  `validate_component_event` against the same frame and hands it to the host;
- `component-submit` on a form's submit button: the browser layer collects
  the form's fields (`name` = field id) into the `submit` value.
Source links are real links (`href`, new tab) that also emit `open`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from ...protocol.component import COMPONENT_PROTOCOL
from ..components.catalog import STANDARD_COMPONENTS, resolve_component_frame
from .presentation import component_fallback_text, semantic_fallback
from .tree import Child, Node, element

if TYPE_CHECKING:  # the prop models load with the catalog, when a component first arrives
    from ...protocol.source_list import SourceListProps
    from ..components.standard import (
        ApprovalRequestProps,
        ButtonGroupProps,
        ChoiceListProps,
        ConfirmationProps,
        ErrorNoticeProps,
        FileAttachmentProps,
        FormField,
        FormProps,
        LinkCardProps,
        ProgressProps,
        TableProps,
        ToolCallProps,
    )

COMPONENT_EVENT: Final = "component-event"
NO_EVENT_VALUE: Final = object()
"""An interaction without a `value` (distinct from JSON null)."""
COMPONENT_SUBMIT: Final = "component-submit"
_JSON_INDENT: Final = 2


def fallback_view(text: str) -> Node:
    """The semantic fallback as a note: always something visible, always plain text."""
    return element("div", {"class": "ak-fallback", "role": "note"}, (text,))


def _root(key: str, instance: str, children: list[Child], role: str | None = None) -> Node:
    attrs = {"class": f"ak-component ak-{key}", "data-key": key, "data-instance": instance}
    if role is not None:
        attrs["role"] = role
        first = children[0] if children else None
        if isinstance(first, Node) and first.children and isinstance(first.children[0], str):
            attrs["aria-label"] = first.children[0]
    return element("div", attrs, children)


def _event_button(label: str, event: str, value: str | None = None, **extra: str) -> Node:
    attrs = {"type": "button", "data-action": COMPONENT_EVENT, "data-event": event}
    if value is not None:
        attrs["data-value"] = value
    attrs.update(extra)
    return element("button", attrs, (label,))


def _external_link(href: str, children: list[Child], **extra: str) -> Node:
    return element("a", {"href": href, **extra}, children)


def _source_list(props: SourceListProps) -> list[Child]:
    items: list[Child] = []
    for source in props.sources:
        parts: list[Child] = []
        if source.url is not None:
            parts.append(
                _external_link(
                    source.url,
                    [source.title],
                    **{
                        "class": "ak-source-link",
                        "data-action": COMPONENT_EVENT,
                        "data-event": "open",
                        "data-value": source.id,
                    },
                )
            )
        else:
            parts.append(element("span", {"class": "ak-source-title"}, (source.title,)))
        if source.snippet is not None:
            parts.append(element("p", {"class": "ak-source-snippet"}, (source.snippet,)))
        items.append(element("li", {"class": "ak-source"}, parts))
    label = element("p", {"class": "ak-label"}, (props.label,))
    listing = element("ul", {"role": "list", "aria-label": props.label}, items)
    return [label, listing]


def _link_card(props: LinkCardProps) -> list[Child]:
    parts: list[Child] = [element("strong", None, (props.title,))]
    if props.description is not None:
        parts.append(element("span", {"class": "ak-description"}, (props.description,)))
    if props.label is not None:
        parts.append(element("span", {"class": "ak-link-label"}, (props.label,)))
    attrs = {"class": "ak-card-link", "data-action": COMPONENT_EVENT, "data-event": "open"}
    attrs["data-value"] = props.href
    return [_external_link(props.href, parts, **attrs)]


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        from ..components.standard import js_number_text

        return js_number_text(value)
    return str(value)


def _table(props: TableProps) -> list[Child]:
    header = element(
        "tr",
        None,
        [element("th", {"scope": "col"}, (column.label,)) for column in props.columns],
    )
    rows = [
        element(
            "tr",
            None,
            [element("td", None, (_cell_text(row.get(column.key)),)) for column in props.columns],
        )
        for row in props.rows
    ]
    table = element(
        "table",
        None,
        (
            element("caption", None, (props.caption,)),
            element("thead", None, (header,)),
            element("tbody", None, rows),
        ),
    )
    return [element("div", {"class": "ak-table-scroll"}, (table,))]


def _progress(props: ProgressProps) -> list[Child]:
    from ..components.standard import js_number_text

    value = js_number_text(props.value)
    bar = element(
        "progress",
        {"max": "100", "value": value, "aria-label": props.label},
    )
    parts: list[Child] = [element("span", {"class": "ak-label"}, (props.label,)), bar]
    parts.append(element("span", {"class": "ak-progress-value"}, (f"{value}%",)))
    if props.status is not None:
        parts.append(element("span", {"class": "ak-description"}, (props.status,)))
    return parts


def _error_notice(props: ErrorNoticeProps) -> list[Child]:
    parts: list[Child] = [
        element("strong", None, (props.title,)),
        element("p", None, (props.message,)),
    ]
    if props.code:
        parts.append(element("code", None, (props.code,)))
    if props.retry_label is not None:
        parts.append(_event_button(props.retry_label, "retry"))
    return parts


def _json_text(value: object) -> str:
    try:
        return json.dumps(value, indent=_JSON_INDENT, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return str(value)


def _tool_call(props: ToolCallProps) -> list[Child]:
    parts: list[Child] = [
        element("strong", None, (props.name,)),
        element("span", {"class": f"ak-status ak-status-{props.status}"}, (props.status,)),
    ]
    if props.arguments is not None:
        parts.append(element("pre", {"class": "ak-json"}, (_json_text(props.arguments),)))
    if "result" in props.model_fields_set:
        parts.append(element("pre", {"class": "ak-json"}, (_json_text(props.result),)))
    return parts


def _two_choice(title: str, text: str, buttons: list[tuple[str, str]]) -> list[Child]:
    return [
        element("strong", None, (title,)),
        element("p", None, (text,)),
        element(
            "div",
            {"class": "ak-actions"},
            [_event_button(label, event) for label, event in buttons],
        ),
    ]


def _confirmation(props: ConfirmationProps) -> list[Child]:
    return _two_choice(
        props.title,
        props.message,
        [(props.confirm_label, "confirm"), (props.cancel_label, "cancel")],
    )


def _approval(props: ApprovalRequestProps) -> list[Child]:
    return _two_choice(
        props.title,
        props.description,
        [(props.approve_label, "approve"), (props.deny_label, "deny")],
    )


def _button_group(props: ButtonGroupProps) -> list[Child]:
    buttons: list[Child] = []
    for button in props.buttons:
        extra = {"class": f"ak-variant-{button.variant or 'secondary'}"}
        if button.disabled:
            extra["disabled"] = ""
        buttons.append(_event_button(button.label, "select", button.id, **extra))
    return [
        element("span", {"class": "ak-label"}, (props.label,)),
        element(
            "div", {"class": "ak-actions", "role": "group", "aria-label": props.label}, buttons
        ),
    ]


def _choice_list(props: ChoiceListProps) -> list[Child]:
    choices: list[Child] = []
    for choice in props.choices:
        label: list[Child] = [element("span", {"class": "ak-choice-label"}, (choice.label,))]
        if choice.description is not None:
            label.append(element("span", {"class": "ak-description"}, (choice.description,)))
        choices.append(element("li", None, (_event_button_children(label, choice.id),)))
    return [
        element("p", {"class": "ak-label"}, (props.prompt,)),
        element("ul", {"class": "ak-choices", "role": "list"}, choices),
    ]


def _event_button_children(children: list[Child], value: str) -> Node:
    attrs = {
        "type": "button",
        "data-action": COMPONENT_EVENT,
        "data-event": "select",
        "data-value": value,
    }
    return element("button", attrs, children)


def _form_field(field: FormField) -> Node:
    field_attrs = {"name": field.id, "data-key": field.type}
    if field.required:
        field_attrs["required"] = ""
    if field.type == "select":
        options = [element("option", {"value": ""}, ("",))]
        options += [
            element("option", {"value": option.id}, (option.label,))
            for option in field.options or []
        ]
        control = element("select", field_attrs, options)
    else:
        input_type = {"checkbox": "checkbox", "number": "number", "email": "email"}.get(
            field.type, "text"
        )
        field_attrs["type"] = input_type
        if field.placeholder:
            field_attrs["placeholder"] = field.placeholder
        control = element("input", field_attrs)
    return element("label", {"class": f"ak-field ak-field-{field.type}"}, (field.label, control))


def _form(props: FormProps) -> list[Child]:
    parts: list[Child] = []
    if props.title is not None:
        parts.append(element("strong", None, (props.title,)))
    parts.extend(_form_field(field) for field in props.fields)
    parts.append(
        element(
            "button",
            {"type": "button", "data-action": COMPONENT_SUBMIT, "data-event": "submit"},
            (props.submit_label,),
        )
    )
    return parts


def _size_text(size: int | float) -> str:
    units = ("bytes", "KB", "MB", "GB", "TB")
    value = float(size)
    index = 0
    while value >= 1024 and index < len(units) - 1:
        value /= 1024
        index += 1
    return f"{int(value)} {units[0]}" if index == 0 else f"{value:.1f} {units[index]}"


def _file_attachment(props: FileAttachmentProps) -> list[Child]:
    detail = props.mime_type
    if props.size_bytes is not None:
        detail = f"{detail}, {_size_text(props.size_bytes)}"
    name: Child = props.name
    if props.url is not None:
        attrs = {"class": "ak-file-link", "data-action": COMPONENT_EVENT, "data-event": "open"}
        attrs["data-value"] = props.url
        name = _external_link(props.url, [props.name], **attrs)
    return [
        element("span", {"class": "ak-file-name"}, (name,)),
        element("span", {"class": "ak-description"}, (detail,)),
    ]


_VIEWS: Final[dict[str, Callable[[Any], list[Child]]]] = {
    "source-list": _source_list,
    "link-card": _link_card,
    "table": _table,
    "progress": _progress,
    "error-notice": _error_notice,
    "tool-call": _tool_call,
    "confirmation": _confirmation,
    "approval-request": _approval,
    "button-group": _button_group,
    "choice-list": _choice_list,
    "form": _form,
    "file-attachment": _file_attachment,
}

_GROUPS: Final = frozenset({"form", "confirmation", "approval-request", "choice-list"})
"""Components whose controls belong together: the root is a labelled group."""


def component_view(frame: Any, manifest: Any = None) -> Node:
    """The view of one render frame (wire dict, model or text); never raises.

    `manifest` defaults to the standard catalog.
    """
    try:
        resolved = resolve_component_frame(frame, manifest)
        if not resolved.ok:
            return fallback_view(semantic_fallback(frame))
        key = resolved.frame.component_key
        view = _VIEWS.get(key)
        if view is None or resolved.definition is not STANDARD_COMPONENTS.get(key):
            return fallback_view(component_fallback_text(frame, manifest))
        children = view(resolved.props)
        role = "group" if key in _GROUPS else None
        return _root(key, resolved.frame.instance_id, children, role)
    except Exception:  # a view must never break the message: show the fallback
        return fallback_view(semantic_fallback(frame))


def build_component_event(
    component_key: str, instance_id: str, event: str, value: object = NO_EVENT_VALUE
) -> dict[str, Any]:
    """The user-side event a control stands for (validate it before emitting).

    `select` becomes a selection event (`choiceId`); everything else an
    interaction, with `value` only when one is given.
    """
    base = {
        "protocol": COMPONENT_PROTOCOL,
        "version": 1,
        "componentKey": component_key,
        "instanceId": instance_id,
    }
    if event == "select":
        return {**base, "type": "select", "choiceId": value}
    interaction = {**base, "type": "interact", "event": event}
    if value is not NO_EVENT_VALUE:
        interaction["value"] = value
    return interaction
