"""Toolsets: tools as JSON schemas plus Python functions, arguments validated against the schema
(one validator per schema, built once), faults turned into tool messages.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import requests

from toolreplay.cassettes.environment import normalise_environment
from toolreplay.wire.episode import ToolCall, ToolResult


class ToolError(Exception):
    """A tool call could not be executed; the message goes back to the model, with
    ``reason`` (e.g. the API's own words) beside it when given."""

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


ToolFunction = Callable[..., dict[str, Any]]


def is_cassette_miss(exc: BaseException) -> bool:
    """Whether ``exc`` is (or was caused by) a cassette miss: replay met a request that was
    never recorded. Such an error is the harness's, not the tool's, so it propagates instead
    of becoming a tool message."""
    from toolreplay.cassettes.miss import find_miss

    return find_miss(exc) is not None


def _tool_error(text: str, reason: str = "") -> dict[str, Any]:
    err: dict[str, Any] = {"error": text}
    if reason:
        err["reason"] = reason
    return err


def _describe_fault(exc: Exception, service: str) -> tuple[str, str]:
    """``(error text, reason)`` for the tool message of a failed call; never a bare ``None``.
    ``service`` names what the tools call (``Open-Meteo``) in timeout and network errors."""
    if isinstance(exc, requests.Timeout):
        return f"{service} did not answer in time ({type(exc).__name__}); try again later", ""
    if isinstance(exc, requests.RequestException):
        return f"{service} unreachable: {type(exc).__name__}", ""
    if isinstance(exc, ToolError):
        return str(exc), exc.reason or ""
    detail = str(exc)
    return f"the tool failed: {type(exc).__name__}{': ' + detail if detail else ''}", ""


@functools.lru_cache(maxsize=256)
def _validator(params_json: str) -> Any:
    """The checked JSON-Schema validator for a tool's ``parameters`` (given as canonical
    JSON): built and checked once per schema per process, shared by every toolset that
    offers it (validators keep no state between calls). Raises
    :class:`jsonschema.SchemaError` for a bad schema."""
    params = json.loads(params_json)
    cls = jsonschema.validators.validator_for(params)
    cls.check_schema(params)
    return cls(params)


@dataclass(frozen=True)
class Toolset:
    """A named set of tools: ``schemas`` (the OpenAI ``tools`` list) and their functions.

    One JSON-Schema validator per tool is built when the toolset is made (the schemas are
    checked then: :class:`jsonschema.SchemaError` for a bad one), not per call."""

    name: str
    schemas: tuple[dict[str, Any], ...]
    functions: Mapping[str, ToolFunction]
    #: What the tools call, named in timeout and network errors the model reads.
    service: str = "the tool's service"
    validators: Mapping[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        validators = {}
        for schema in self.schemas:
            function = schema["function"]
            params = function.get("parameters") or {"type": "object"}
            validators[function["name"]] = _validator(json.dumps(params))
        object.__setattr__(self, "validators", validators)

    def execute(self, call: ToolCall) -> ToolResult:
        """Run one tool call; never raises for anything the call or the tool does.

        Arguments are parsed from the JSON string and validated against the tool's schema;
        unknown tools (the message lists the offered ones), invalid JSON, schema violations
        (the validator's message and where), a :class:`ToolError` (with its ``reason``),
        timeouts and network failures, and any exception a tool raises become an error result
        ``{"error": ..., "reason"?: ...}`` the model reads. Only a replay cassette miss
        propagates (it is the harness's failure, not the tool's)."""
        try:
            payload = self._run(call)
            return ToolResult(call, json.dumps(payload, ensure_ascii=False))
        except Exception as exc:
            if is_cassette_miss(exc):
                raise
            text, reason = _describe_fault(exc, self.service)
            # the same text whether recorded on loopback or replayed (no port, no temp path)
            text, reason = normalise_environment(text), normalise_environment(reason)
            err = _tool_error(text, reason)
            return ToolResult(call, json.dumps(err, ensure_ascii=False), error=text)

    def _run(self, call: ToolCall) -> dict[str, Any]:
        fn = self.functions.get(call.name)
        if fn is None or call.name not in self.validators:
            offered = ", ".join(self.validators) or "none"
            raise ToolError(f"unknown tool {call.name!r}; the tools offered are: {offered}")
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError as exc:
            raise ToolError(f"arguments are not valid JSON: {exc}") from None
        error = jsonschema.exceptions.best_match(self.validators[call.name].iter_errors(args))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            at = f" (at {where})" if where else ""
            raise ToolError(f"invalid arguments for {call.name}{at}: {error.message}")
        if not isinstance(args, dict):
            raise ToolError(
                f"invalid arguments for {call.name}: {json.dumps(args)} is not an object"
            )
        return fn(**args)
