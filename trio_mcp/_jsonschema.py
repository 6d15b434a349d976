"""Validating JSON against a JSON Schema given verbatim (a tool's own ``inputSchema`` or
``outputSchema``), with the ``jsonschema`` library.

Imported lazily (``jsonschema`` is a dependency, but a slow import): servers
whose tools are typed Python functions never load it (unless a parameter
carries constraints in ``Field(schema=...)``). Remote
``$ref`` are never fetched (the spec forbids it by default): a reference
that is not inside the schema fails validation. The dialect is the
schema's ``$schema`` or, by default, 2020-12.

Supported dialects: drafts 3, 4, 6 and 7, 2019-09 and 2020-12 (those the
``jsonschema`` library knows); a schema naming another is refused with
:exc:`ValueError` when it is registered (a server) or met (a client).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _lazy

__all__ = ["SchemaValidator"]


class SchemaValidator:
    """A compiled validator for one schema.

    Raises:
        ValueError: (at construction) the schema itself is invalid, or its
            dialect is not supported.
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        try:
            jsonschema = _lazy.jsonschema
            referencing = _lazy.referencing
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise RuntimeError(
                "validating a JSON Schema needs the 'jsonschema' package, a dependency of "
                "trio-mcp: reinstall trio-mcp"
            ) from exc

        def refuse(uri: str) -> Any:
            raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]

        schema = dict(schema)
        dialect = schema.get("$schema", "https://json-schema.org/draft/2020-12/schema")
        cls = jsonschema.validators.validator_for({"$schema": dialect}, default=None)
        if cls is None:
            raise ValueError(f"unsupported JSON Schema dialect {dialect!r}")
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"invalid JSON Schema: {exc.message}") from None
        registry: Any = referencing.Registry(retrieve=refuse)  # type: ignore[call-arg]
        self._validator = cls(schema, registry=registry)
        self._errors = (jsonschema.ValidationError, referencing.exceptions.Unresolvable)

    def errors(self, value: Any) -> list[str]:
        """Every way ``value`` fails the schema (empty if it conforms)."""
        try:
            found = sorted(self._validator.iter_errors(value), key=lambda e: list(e.path))
        except self._errors as exc:
            return [f"cannot validate: {exc}"]
        messages = []
        for error in found[:5]:
            where = "/".join(str(p) for p in error.absolute_path)
            messages.append(f"{where}: {error.message}" if where else error.message)
        return messages
