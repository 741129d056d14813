"""The closed component manifest: definitions, the standard catalog, resolution, events.

A render frame names a component by key; only keys registered in a manifest
render, and only with props that pass that component's strict schema.
Resolution never raises: an unknown key or invalid props yields a fixed
diagnostic (and the decoded frame, so the renderer can show its semantic
fallback). A manifest always contains the 12 standard components, which an
application may not replace.

The standard components' prop models (standard.py, about forty pydantic classes) are
imported when the catalog is first read, not with this module: the widget imports the
catalog when it mounts, and most pages never see a component before the first answer.
"""

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel

from ...protocol.component import (
    ComponentFrame,
    ComponentInteraction,
    ComponentSelection,
    decode_component_event,
    decode_component_frame,
)
from ...protocol.diagnostics import DecodeResult, Diagnostic, ProtocolError
from ...protocol.identifiers import is_component_key, is_safe_id
from ...protocol.source_list import SourceListProps, is_portable_url, source_list_fallback

EventValueKind = Literal["none", "id", "form", "url"]
LiveRegion = Literal["none", "polite", "assertive"]
Capability = Literal[
    "display", "selection", "input", "action", "navigation", "progress", "download"
]
InteractionRule = Callable[[Any, str, object], bool]
"""(validated props or None, event name, value or NO_VALUE) -> may this event be emitted?"""

COMPONENT_UNKNOWN: Final = "COMPONENT_UNKNOWN"
COMPONENT_INVALID_PROPS: Final = "COMPONENT_INVALID_PROPS"
CONFIG_INVALID: Final = "AK_CONFIG_INVALID"

_UNKNOWN: Final = Diagnostic(COMPONENT_UNKNOWN, "Component is not registered.")
_INVALID_PROPS: Final = Diagnostic(COMPONENT_INVALID_PROPS, "Component props are invalid.")
_UNDECLARED: Final = Diagnostic(
    CONFIG_INVALID, "Component interaction is not declared by the resolved component."
)
_MANIFEST_MESSAGE: Final = (
    "Component manifest keys must be non-empty, unique, and must not override standard "
    "catalog keys."
)
_DEFINITION_MESSAGE: Final = "Component definition is invalid."


def _invalid_definition() -> ProtocolError:
    return ProtocolError(CONFIG_INVALID, _DEFINITION_MESSAGE)


@dataclass(frozen=True, slots=True)
class ComponentEventSpec:
    """One event a component may emit and the shape of its value."""

    name: str
    value: EventValueKind

    def __post_init__(self) -> None:
        if not is_component_key(self.name) or self.value not in get_args(EventValueKind):
            raise _invalid_definition()


@dataclass(frozen=True, slots=True)
class ComponentAccessibility:
    """ARIA role, whether it takes keyboard input, and its live-region politeness."""

    role: str
    keyboard: bool
    live: LiveRegion = "none"

    def __post_init__(self) -> None:
        valid = (
            isinstance(self.role, str)
            and bool(self.role)
            and isinstance(self.keyboard, bool)
            and self.live in get_args(LiveRegion)
        )
        if not valid:
            raise _invalid_definition()


def _event_spec(item: object) -> ComponentEventSpec:
    if isinstance(item, ComponentEventSpec):
        return item
    if isinstance(item, Mapping) and set(item) == {"name", "value"}:
        return ComponentEventSpec(item["name"], item["value"])
    raise _invalid_definition()


def _accessibility(item: object) -> ComponentAccessibility | None:
    if item is None or isinstance(item, ComponentAccessibility):
        return item
    if not isinstance(item, Mapping) or not set(item) <= {"role", "keyboard", "live"}:
        raise _invalid_definition()
    try:
        return ComponentAccessibility(**dict(item))
    except TypeError:
        raise _invalid_definition() from None


@dataclass(frozen=True, slots=True)
class ComponentDefinition:
    """A renderable component: key, strict props model, events, accessibility, fallback.

    `events` may be given as `ComponentEventSpec`s or `{"name", "value"}`
    mappings and `accessibility` as a mapping; both are normalised here, so
    a definition is immutable once built. The key is checked when a manifest
    is built. `fallback(props)` turns validated props into plain text for
    places that cannot render; `interaction` (standard components) checks
    event values against the props, otherwise the declared value kind is used.
    """

    key: str
    props_schema: type[BaseModel]
    events: tuple[ComponentEventSpec, ...] = ()
    accessibility: ComponentAccessibility | None = None
    capabilities: tuple[Capability, ...] = ()
    fallback: Callable[[Any], str] | None = None
    interaction: InteractionRule | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.props_schema, type) and issubclass(self.props_schema, BaseModel)):
            raise _invalid_definition()
        if isinstance(self.events, str | bytes | Mapping):
            raise _invalid_definition()
        events = tuple(_event_spec(item) for item in self.events)
        if len({event.name for event in events}) != len(events):
            raise _invalid_definition()
        capabilities = tuple(self.capabilities)
        if isinstance(self.capabilities, str) or any(
            item not in get_args(Capability) for item in capabilities
        ):
            raise _invalid_definition()
        if self.fallback is not None and not callable(self.fallback):
            raise _invalid_definition()
        if self.interaction is not None and not callable(self.interaction):
            raise _invalid_definition()
        object.__setattr__(self, "events", events)
        object.__setattr__(self, "capabilities", capabilities)
        object.__setattr__(self, "accessibility", _accessibility(self.accessibility))

    def event(self, name: str) -> ComponentEventSpec | None:
        """The declared event called `name`, if any."""
        return next((event for event in self.events if event.name == name), None)

    def fallback_text(self, props: Any) -> str | None:
        """The definition's plain-text rendering of validated `props`, if it has one."""
        return None if self.fallback is None else self.fallback(props)


def _standard(
    key: str,
    schema: type[BaseModel],
    events: tuple[tuple[str, EventValueKind], ...],
    accessibility: ComponentAccessibility,
    capabilities: tuple[Capability, ...],
    fallback: Callable[[Any], str],
    interaction: InteractionRule,
) -> ComponentDefinition:
    return ComponentDefinition(
        key=key,
        props_schema=schema,
        events=tuple(ComponentEventSpec(name, value) for name, value in events),
        accessibility=accessibility,
        capabilities=capabilities,
        fallback=fallback,
        interaction=interaction,
    )


def _interactive(role: str) -> ComponentAccessibility:
    return ComponentAccessibility(role=role, keyboard=True, live="none")


def _display(role: str, live: LiveRegion = "none") -> ComponentAccessibility:
    return ComponentAccessibility(role=role, keyboard=False, live=live)


_SELECT: Final = (("select", "id"),)
_OPEN_URL: Final = (("open", "url"),)


def _standard_components() -> Mapping[str, ComponentDefinition]:
    """The 12 standard definitions (imports the prop models on the first call only)."""
    from . import standard as std

    return MappingProxyType(
        {
            definition.key: definition
            for definition in (
                _standard(
                    "button-group",
                    std.ButtonGroupProps,
                    _SELECT,
                    _interactive("group"),
                    ("display", "selection"),
                    std.button_group_fallback,
                    std.button_group_accepts,
                ),
                _standard(
                    "choice-list",
                    std.ChoiceListProps,
                    _SELECT,
                    _interactive("group"),
                    ("display", "selection"),
                    std.choice_list_fallback,
                    std.choice_list_accepts,
                ),
                _standard(
                    "form",
                    std.FormProps,
                    (("submit", "form"),),
                    _interactive("form"),
                    ("display", "input"),
                    std.form_fallback,
                    std.form_accepts,
                ),
                _standard(
                    "confirmation",
                    std.ConfirmationProps,
                    (("confirm", "none"), ("cancel", "none")),
                    _interactive("group"),
                    ("display", "action"),
                    std.confirmation_fallback,
                    std.confirmation_accepts,
                ),
                _standard(
                    "progress",
                    std.ProgressProps,
                    (),
                    _display("progressbar", "polite"),
                    ("display", "progress"),
                    std.progress_fallback,
                    std.never_accepts,
                ),
                _standard(
                    "source-list",
                    SourceListProps,
                    (("open", "id"),),
                    _interactive("list"),
                    ("display", "navigation"),
                    source_list_fallback,
                    std.source_list_accepts,
                ),
                _standard(
                    "link-card",
                    std.LinkCardProps,
                    _OPEN_URL,
                    _interactive("link"),
                    ("display", "navigation"),
                    std.link_card_fallback,
                    std.link_card_accepts,
                ),
                _standard(
                    "error-notice",
                    std.ErrorNoticeProps,
                    (("retry", "none"),),
                    _interactive("alert"),
                    ("display", "action"),
                    std.error_notice_fallback,
                    std.error_notice_accepts,
                ),
                _standard(
                    "tool-call",
                    std.ToolCallProps,
                    (),
                    _display("status", "polite"),
                    ("display",),
                    std.tool_call_fallback,
                    std.never_accepts,
                ),
                _standard(
                    "approval-request",
                    std.ApprovalRequestProps,
                    (("approve", "none"), ("deny", "none")),
                    _interactive("group"),
                    ("display", "action"),
                    std.approval_request_fallback,
                    std.approval_request_accepts,
                ),
                _standard(
                    "table",
                    std.TableProps,
                    (),
                    _display("table"),
                    ("display",),
                    std.table_fallback,
                    std.never_accepts,
                ),
                _standard(
                    "file-attachment",
                    std.FileAttachmentProps,
                    _OPEN_URL,
                    _interactive("link"),
                    ("display", "download"),
                    std.file_attachment_fallback,
                    std.file_attachment_accepts,
                ),
            )
        }
    )


class _BuiltOnFirstRead(Mapping[str, ComponentDefinition]):
    """A read-only mapping whose contents `build()` makes when it is first read."""

    __slots__ = ("_build", "_built")

    def __init__(self, build: Callable[[], Mapping[str, ComponentDefinition]]) -> None:
        self._build = build
        self._built: Mapping[str, ComponentDefinition] | None = None

    def _mapping(self) -> Mapping[str, ComponentDefinition]:
        if self._built is None:
            self._built = self._build()
        return self._built

    def __getitem__(self, key: str) -> ComponentDefinition:
        return self._mapping()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())

    def __repr__(self) -> str:
        return repr(self._mapping())


STANDARD_COMPONENTS: Final[Mapping[str, ComponentDefinition]] = _BuiltOnFirstRead(
    _standard_components
)
"""The 12 standard components, in the reference catalog's order (built on first read)."""


class ComponentManifest(Mapping[str, ComponentDefinition]):
    """An immutable, closed key -> definition registry (standard components included).

    Build one with `define_component_manifest`; it reads like a read-only dict.
    """

    __slots__ = ("_definitions",)

    def __init__(self, definitions: Mapping[str, ComponentDefinition]) -> None:
        self._definitions: Mapping[str, ComponentDefinition] = MappingProxyType(dict(definitions))

    def __getitem__(self, key: str) -> ComponentDefinition:
        return self._definitions[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._definitions)

    def __len__(self) -> int:
        return len(self._definitions)

    def __repr__(self) -> str:
        return f"ComponentManifest({list(self._definitions)!r})"


def define_component_manifest(
    definitions: Iterable[ComponentDefinition] = (),
) -> ComponentManifest:
    """The standard catalog plus `definitions`, as a closed manifest.

    Raises ProtocolError(AK_CONFIG_INVALID) when an item is not a
    ComponentDefinition, a key is not a ComponentKey, a key repeats, or a key
    of the standard catalog is given a different definition (passing the
    standard definition object itself once is allowed and changes nothing).
    """
    if isinstance(definitions, str | bytes | Mapping):
        raise ProtocolError(CONFIG_INVALID, _MANIFEST_MESSAGE)
    registered: dict[str, ComponentDefinition] = dict(STANDARD_COMPONENTS)
    given: set[str] = set()
    for definition in definitions:
        if not isinstance(definition, ComponentDefinition):
            raise ProtocolError(CONFIG_INVALID, _MANIFEST_MESSAGE)
        key = definition.key
        standard = STANDARD_COMPONENTS.get(key) if isinstance(key, str) else None
        overrides = standard is not None and standard is not definition
        if not is_component_key(key) or key in given or overrides:
            raise ProtocolError(CONFIG_INVALID, _MANIFEST_MESSAGE)
        given.add(key)
        registered[key] = definition
    return ComponentManifest(registered)


class _StandardManifest(ComponentManifest):
    """The standard-only manifest, built (with the prop models) when it is first read."""

    __slots__ = ()

    def __init__(self) -> None:  # the slot stays unset until the first read
        pass

    def _ready(self) -> None:
        try:
            self._definitions  # noqa: B018 - set once the manifest was first read
        except AttributeError:
            self._definitions = define_component_manifest()._definitions

    def __getitem__(self, key: str) -> ComponentDefinition:
        self._ready()
        return self._definitions[key]

    def __iter__(self) -> Iterator[str]:
        self._ready()
        return iter(self._definitions)

    def __len__(self) -> int:
        self._ready()
        return len(self._definitions)

    def __repr__(self) -> str:
        self._ready()
        return f"ComponentManifest({list(self._definitions)!r})"


STANDARD_MANIFEST: Final[ComponentManifest] = _StandardManifest()
"""The manifest used when none is given: exactly the standard catalog (built on first read)."""


@dataclass(frozen=True, slots=True)
class ComponentResolution(DecodeResult):
    """`resolve_component_frame`'s result: `.frame` and validated `.props` when ok.

    On COMPONENT_UNKNOWN and COMPONENT_INVALID_PROPS the decoded `.frame` is
    still set (its semantic fallback is what the renderer shows); `.props` is
    None whenever `ok` is False.
    """

    props: Any = None
    definition: ComponentDefinition | None = None

    def props_wire(self) -> Any:
        """The validated props as their wire dict (None when not ok)."""
        return _model_wire(self.props) if self.ok else None

    def fallback_text(self) -> str | None:
        """The definition's fallback text for the validated props, if any."""
        if not self.ok or self.definition is None:
            return None
        return self.definition.fallback_text(self.props)


def _model_wire(model: Any) -> Any:
    if hasattr(model, "to_wire"):
        return model.to_wire()
    if isinstance(model, BaseModel):
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return model


def _lookup(manifest: Any, key: str) -> ComponentDefinition | None:
    try:
        definition = manifest.get(key) if isinstance(manifest, Mapping) else None
    except Exception:  # a hostile mapping is simply not a registry
        return None
    return definition if isinstance(definition, ComponentDefinition) else None


def resolve_component_frame(frame: Any, manifest: Any = None) -> ComponentResolution:
    """Decode `frame` and validate its props against its registered definition.

    `frame` may be text, bytes, a dict or a ComponentFrame; `manifest`
    defaults to the standard catalog. Never raises. Failures: the frame
    decoder's codes, COMPONENT_UNKNOWN ("Component is not registered.") and
    COMPONENT_INVALID_PROPS ("Component props are invalid.").
    """
    decoded = decode_component_frame(frame)
    if not decoded.ok:
        assert decoded.diagnostic is not None
        return ComponentResolution(ok=False, diagnostic=decoded.diagnostic)
    valid: ComponentFrame = decoded.frame
    registry = STANDARD_MANIFEST if manifest is None else manifest
    definition = _lookup(registry, valid.component_key)
    if definition is None:
        return ComponentResolution(ok=False, value=valid, diagnostic=_UNKNOWN)
    try:
        props = definition.props_schema.model_validate(valid.props)
    except Exception:  # any schema failure (or hostile validator) is inert
        return ComponentResolution(ok=False, value=valid, diagnostic=_INVALID_PROPS)
    return ComponentResolution(ok=True, value=valid, props=props, definition=definition)


# --- user-side events ------------------------------------------------------------------


def _declared_value_ok(kind: EventValueKind, value: object) -> bool:
    """The value shape a custom component's declared event promises."""
    if kind == "none":
        from .standard import NO_VALUE

        return value is NO_VALUE
    if kind == "id":
        return is_safe_id(value)
    if kind == "url":
        return isinstance(value, str) and is_portable_url(value)
    return type(value) is dict


def _event_parts(event: ComponentSelection | ComponentInteraction) -> tuple[str, object]:
    """(event name, value or NO_VALUE): a selection is the `select` event with its choice id."""
    if isinstance(event, ComponentSelection):
        return "select", event.choice_id
    if "value" not in event.model_fields_set:
        from .standard import NO_VALUE

        return event.event, NO_VALUE
    return event.event, event.value


def _same_instance(event: ComponentSelection | ComponentInteraction, frame: ComponentFrame) -> bool:
    return event.component_key == frame.component_key and event.instance_id == frame.instance_id


def _event_allowed(
    definition: ComponentDefinition,
    event: ComponentSelection | ComponentInteraction,
    props: Any,
) -> bool:
    name, value = _event_parts(event)
    declared = definition.event(name)
    if declared is None:
        return False
    if definition.interaction is not None:
        return bool(definition.interaction(props, name, value))
    return _declared_value_ok(declared.value, value)


def validate_component_event(manifest: Any, event: Any, frame: Any = None) -> DecodeResult:
    """Check a user-side `select`/`interact` event before it is emitted or acted on.

    The event is decoded (text, bytes, dict or model), its component must be
    registered in `manifest` (None = standard catalog) and declare the event,
    and the value must fit. Standard components check the value against the
    props of the rendered `frame` (e.g. source-list `open` takes the id of a
    source that has a url), so without `frame` their events are refused;
    custom components without an interaction rule check the declared value
    kind only. A selection event counts as the component's `select` event
    with its `choiceId` as value. Never raises; `.event` on success.
    """
    try:
        decoded = decode_component_event(event)
        if not decoded.ok:
            return decoded
        candidate = decoded.event
        props: Any = None
        if frame is not None:
            resolved = resolve_component_frame(frame, manifest)
            if not resolved.ok:
                return DecodeResult.failure(resolved.diagnostic or _UNDECLARED)
            if not _same_instance(candidate, resolved.frame):
                return DecodeResult.failure(_UNDECLARED)
            props = resolved.props
        registry = STANDARD_MANIFEST if manifest is None else manifest
        definition = _lookup(registry, candidate.component_key)
        if definition is None:
            return DecodeResult.failure(_UNKNOWN)
        if not _event_allowed(definition, candidate, props):
            return DecodeResult.failure(_UNDECLARED)
    except Exception:  # a validator never raises; a hostile rule is a refusal
        return DecodeResult.failure(_UNDECLARED)
    return DecodeResult.success(candidate)
