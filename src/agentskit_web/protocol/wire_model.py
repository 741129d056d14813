"""Base class for pydantic wire models.

Every model validates with its wire (camelCase) names, is frozen once built,
and offers `to_wire()` returning exactly the wire dict (absent optional fields
omitted). Models also read like their wire dict (`model["eventId"]`,
`model == {...}`), so code written against plain wire dicts keeps working.
"""

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


def thaw_json(value: Any) -> Any:
    """Plain mutable JSON data (dicts and lists) from frozen data (mappings and tuples)."""
    if isinstance(value, Mapping):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw_json(item) for item in value]
    return value


class WireModel(BaseModel):
    """A frozen, wire-named pydantic model. Subclasses choose `extra` policy."""

    model_config: ClassVar[ConfigDict] = ConfigDict(
        frozen=True,
        extra="ignore",
        strict=True,
        populate_by_name=False,
        revalidate_instances="never",
        defer_build=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The exact wire form: wire names, absent optional fields omitted.

        Python dump mode keeps every string exactly (JSON mode re-encodes dict
        keys and mangles a lone surrogate, which is valid in a JSON string and
        in JavaScript); one pass then turns tuples and frozen mappings into
        fresh lists and dicts.
        """
        wire: dict[str, Any] = thaw_json(
            self.model_dump(mode="python", by_alias=True, exclude_unset=True)
        )
        return wire

    def __getitem__(self, key: str) -> Any:
        return self.to_wire()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_wire().get(key, default)

    def keys(self) -> Any:
        return self.to_wire().keys()

    def __contains__(self, key: object) -> bool:
        return key in self.to_wire()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, dict):
            return self.to_wire() == other
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]


class StrictWireModel(WireModel):
    """A wire model whose shape is closed: an unknown field makes it invalid."""

    model_config: ClassVar[ConfigDict] = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        populate_by_name=False,
        revalidate_instances="never",
        defer_build=True,
    )
