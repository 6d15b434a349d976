"""Elicitation: a server asks the user, through the client, for input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import attrs

from ._base import MetaObject, Notification, Request, RequestParams
from ._tools import TaskMetadata


@attrs.frozen(kw_only=True)
class ElicitRequestFormParams(RequestParams):
    """Form mode: ``requested_schema`` is a flat object schema of primitive properties."""

    message: str
    requested_schema: dict[str, Any]
    mode: Literal["form"] | None = None
    task: TaskMetadata | None = None

    __since__: ClassVar[Mapping[str, str]] = {"mode": "2025-11-25", "task": "2025-11-25"}
    __until__: ClassVar[Mapping[str, str]] = {"task": "2025-11-25"}


@attrs.frozen(kw_only=True)
class ElicitRequestURLParams(RequestParams):
    """URL mode (2025-11-25): the user completes an interaction out of band at ``url``."""

    message: str
    url: str
    mode: Literal["url"] = "url"
    #: 2025-11-25 only; from 2026-07-28 on a server correlates through ``requestState``.
    elicitation_id: str | None = None
    task: TaskMetadata | None = None

    __until__: ClassVar[Mapping[str, str]] = {"elicitation_id": "2025-11-25", "task": "2025-11-25"}


ElicitRequestParams: TypeAlias = ElicitRequestFormParams | ElicitRequestURLParams


@attrs.frozen(kw_only=True)
class ElicitResult:
    """The user's answer: accepted (with ``content`` in form mode), declined or cancelled."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | None = None
    meta: MetaObject | None = None


@attrs.frozen(kw_only=True)
class ElicitRequest(Request[ElicitResult]):
    method: Literal["elicitation/create"] = "elicitation/create"
    params: ElicitRequestFormParams | ElicitRequestURLParams
    result_model = ElicitResult


@attrs.frozen(kw_only=True)
class ElicitationCompleteNotificationParams:
    elicitation_id: str


@attrs.frozen(kw_only=True)
class ElicitationCompleteNotification(Notification):
    """2025-11-25 only: an out-of-band (URL mode) elicitation finished."""

    method: Literal["notifications/elicitation/complete"] = "notifications/elicitation/complete"
    params: ElicitationCompleteNotificationParams


@attrs.frozen(kw_only=True)
class URLElicitationRequiredErrorData:
    """``data`` of the -32042 error (2025-11-25 only)."""

    elicitations: list[ElicitRequestURLParams]


# --- The restricted schemas form mode may ask for -----------------------------------------


@attrs.frozen(kw_only=True)
class StringSchema:
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {"default": "2025-11-25"}


@attrs.frozen(kw_only=True)
class NumberSchema:
    type: Literal["number", "integer"]
    title: str | None = None
    description: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    default: float | None = None

    __since__: ClassVar[Mapping[str, str]] = {"default": "2025-11-25"}


@attrs.frozen(kw_only=True)
class BooleanSchema:
    type: Literal["boolean"] = "boolean"
    title: str | None = None
    description: str | None = None
    default: bool | None = None


@attrs.frozen(kw_only=True)
class EnumOption:
    """One choice of a titled enum: the value and what to show."""

    const: str
    title: str


@attrs.frozen(kw_only=True)
class UntitledSingleSelectEnumSchema:
    enum: list[str]
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    default: str | None = None


@attrs.frozen(kw_only=True)
class TitledSingleSelectEnumSchema:
    one_of: list[EnumOption]
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    default: str | None = None


@attrs.frozen(kw_only=True)
class LegacyTitledEnumSchema:
    """Deprecated shape: ``enum`` with a parallel ``enumNames`` (2025-06-18's ``EnumSchema``)."""

    enum: list[str]
    enum_names: list[str] | None = None
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    default: str | None = None

    __since__: ClassVar[Mapping[str, str]] = {"default": "2025-11-25"}


@attrs.frozen(kw_only=True)
class UntitledEnumItems:
    enum: list[str]
    type: Literal["string"] = "string"


@attrs.frozen(kw_only=True)
class TitledEnumItems:
    any_of: list[EnumOption]


@attrs.frozen(kw_only=True)
class UntitledMultiSelectEnumSchema:
    items: UntitledEnumItems
    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    default: list[str] | None = None


@attrs.frozen(kw_only=True)
class TitledMultiSelectEnumSchema:
    items: TitledEnumItems
    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    default: list[str] | None = None


SingleSelectEnumSchema: TypeAlias = UntitledSingleSelectEnumSchema | TitledSingleSelectEnumSchema
MultiSelectEnumSchema: TypeAlias = UntitledMultiSelectEnumSchema | TitledMultiSelectEnumSchema
EnumSchema: TypeAlias = (
    UntitledSingleSelectEnumSchema
    | TitledSingleSelectEnumSchema
    | UntitledMultiSelectEnumSchema
    | TitledMultiSelectEnumSchema
    | LegacyTitledEnumSchema
)
PrimitiveSchemaDefinition: TypeAlias = StringSchema | NumberSchema | BooleanSchema | EnumSchema
