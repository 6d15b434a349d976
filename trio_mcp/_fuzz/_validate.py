"""Checking what a server sent against the official JSON Schema of the negotiated
version, or against our own models when that schema is not at hand.

The schemas are read from a directory holding ``schema-<version>.json`` files
(the spec repository's ``schema/<version>/schema.json``, renamed), given by
the caller or by the ``TRIO_MCP_SPEC_DIR`` environment variable. Without
them, or without the ``jsonschema`` package, results are read with
trio_mcp's own models instead, which checks required fields and types but
not every constraint of the schema.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from .._jsonschema import SchemaValidator
from .._types._converter import StructureError, structure
from .._types._methods import METHODS
from .._types._mrtr import InputRequiredResult
from .._versions import MODERN_VERSIONS
from . import _lazy

__all__ = ["Validator", "spec_dir_from_environment"]

_ENV = "TRIO_MCP_SPEC_DIR"
#: The tasks extension's schema, beside the versions' schemas (the extension repository's
#: ``schema/draft/schema.json``, renamed).
TASKS_SCHEMA = "ext-tasks-schema.json"


def spec_dir_from_environment() -> Path | None:
    """The schema directory named by ``TRIO_MCP_SPEC_DIR``, if it is set."""
    value = os.environ.get(_ENV)
    return Path(value) if value else None


def _has_jsonschema() -> bool:
    try:
        _lazy.jsonschema  # noqa: B018 (loads it)
    except ImportError:
        return False
    return True


class Validator:
    """Validates results and notifications by method and protocol version.

    Args:
        spec_dir: a directory of ``schema-<version>.json`` files, or ``None``.
    """

    def __init__(self, spec_dir: str | os.PathLike[str] | None) -> None:
        self.spec_dir = Path(spec_dir) if spec_dir is not None else None
        self.jsonschema = _has_jsonschema()
        self._documents: dict[str, dict[str, Any] | None] = {}
        self._validators: dict[tuple[str, str], Any] = {}
        self._output: dict[bytes, SchemaValidator | None] = {}

    def schema_versions(self) -> list[str]:
        """The versions whose official schema is available."""
        if self.spec_dir is None or not self.jsonschema:
            return []
        found = []
        for path in sorted(self.spec_dir.glob("schema-*.json")):
            found.append(path.stem.removeprefix("schema-"))
        return found

    def _document(self, filename: str) -> dict[str, Any] | None:
        if filename not in self._documents:
            document = None
            if self.spec_dir is not None and self.jsonschema:
                path = self.spec_dir / filename
                try:
                    loaded = orjson.loads(path.read_bytes())
                except (OSError, orjson.JSONDecodeError):
                    loaded = None
                document = loaded if isinstance(loaded, dict) else None
            self._documents[filename] = document
        return self._documents[filename]

    def _definition_validator(self, filename: str, name: str) -> Any:
        key = (filename, name)
        if key not in self._validators:
            validator = None
            document = self._document(filename)
            if document is not None:
                defs_key = "$defs" if "$defs" in document else "definitions"
                if name in document.get(defs_key, {}):
                    schema = dict(document)
                    schema["$ref"] = f"#/{defs_key}/{name}"
                    cls = _lazy.jsonschema.validators.validator_for(document)
                    validator = cls(schema)
            self._validators[key] = validator
        return self._validators[key]

    def _problems(
        self, version: str, name: str, value: Any, *, filename: str | None = None
    ) -> list[str] | None:
        """Schema problems of ``value`` as definition ``name``; ``None`` if there is no schema
        for it (then the caller falls back to our models)."""
        validator = self._definition_validator(filename or f"schema-{version}.json", name)
        if validator is None:
            return None
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        problems = []
        for error in errors[:3]:
            where = "/".join(str(p) for p in error.absolute_path)
            problems.append(f"{where or '(top)'}: {_shorten(error.message)}")
        return problems

    def result_problems(self, method: str, version: str, result: dict[str, Any]) -> list[str]:
        """What is wrong with ``result`` as the answer to ``method`` in ``version``."""
        spec = METHODS.get(method)
        if spec is None or spec.result is None:
            return []
        model: type[Any] = spec.result
        if version in MODERN_VERSIONS and result.get("resultType") == "input_required":
            model = InputRequiredResult
        name = model.__name__
        problems = self._problems(version, name, result)
        if problems is not None:
            return problems
        try:
            structure(result, model)
        except StructureError as exc:
            return [_shorten(str(exc))]
        if version in MODERN_VERSIONS and not isinstance(result.get("resultType"), str):
            return ["resultType: a required property is missing"]
        return []

    def notification_problems(self, message: dict[str, Any], version: str) -> list[str]:
        """What is wrong with a notification the server sent (the whole message)."""
        spec = METHODS.get(str(message.get("method")))
        if spec is None or spec.is_request:
            return []
        problems = self._problems(version, spec.model.__name__, message)
        if problems is not None:
            return problems
        if spec.params is None:
            return []
        try:
            structure(message.get("params") or {}, spec.params)
        except StructureError as exc:
            return [_shorten(str(exc))]
        return []

    def message_problems(
        self, message: dict[str, Any], version: str, answered: str | None = None
    ) -> list[str] | None:
        """What is wrong with a whole JSON-RPC message of ``version`` (either side's): a
        request or notification against its method's definition, a result against the
        result of ``answered`` (the method of the request it answers). ``None`` when there
        is no schema for it (an unknown method, no schema at hand)."""
        if "result" in message:
            if answered is None:
                return None
            spec = METHODS.get(answered)
            if spec is None or spec.result is None:
                return None
            return self._problems(version, spec.result.__name__, message["result"])
        if "error" in message:
            return self._problems(version, "JSONRPCErrorResponse", message)
        spec = METHODS.get(str(message.get("method")))
        if spec is None:
            return None
        return self._problems(version, spec.model.__name__, message)

    def extension_problems(self, name: str, value: Any) -> list[str]:
        """What is wrong with ``value`` as definition ``name`` of the tasks extension's schema
        (``ext-tasks-schema.json`` in the schema directory); nothing when it is not at hand
        (the task checks of :mod:`._tasks` still apply)."""
        problems = self._problems("", name, value, filename=TASKS_SCHEMA)
        return problems or []

    def output_problems(self, schema: Mapping[str, Any], value: Any) -> list[str]:
        """What is wrong with ``value`` (``structuredContent``) under a tool's ``outputSchema``;
        nothing when the schema itself cannot be used (invalid, or no jsonschema)."""
        if not self.jsonschema:
            return []
        key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
        if key not in self._output:
            try:
                self._output[key] = SchemaValidator(schema)
            except (ValueError, RuntimeError):
                self._output[key] = None
        validator = self._output[key]
        if validator is None:
            return []
        return [_shorten(problem) for problem in validator.errors(value)]


@functools.lru_cache(maxsize=256)
def _shorten(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
