"""Completion of prompt arguments and resource-template parameters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

import attrs

from ._base import Model, Request, RequestParams, Result


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptReference(Model):
    name: str
    type: Literal["ref/prompt"] = "ref/prompt"
    title: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceTemplateReference(Model):
    uri: str
    type: Literal["ref/resource"] = "ref/resource"


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompletionArgument(Model):
    """The argument being completed and what the user typed so far."""

    name: str
    value: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompletionContext(Model):
    """Arguments already resolved, for completions that depend on them (2025-06-18)."""

    arguments: dict[str, str] | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompleteRequestParams(RequestParams):
    ref: PromptReference | ResourceTemplateReference
    argument: CompletionArgument
    context: CompletionContext | None = None

    __since__: ClassVar[Mapping[str, str]] = {"context": "2025-06-18"}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Completion(Model):
    """At most 100 ``values``; ``total`` and ``has_more`` say whether there are more."""

    values: list[str]
    total: int | None = None
    has_more: bool | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompleteResult(Result):
    completion: Completion


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompleteRequest(Request[CompleteResult]):
    method: Literal["completion/complete"] = "completion/complete"
    params: CompleteRequestParams
    result_model = CompleteResult
