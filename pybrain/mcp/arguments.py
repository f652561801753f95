"""Argument checks before a tool runs: no argument the tool does not take, no value of another
JSON type than its schema's (no true for an id, no "1" for a number, no 1.0 for an integer).
An error says where and what, never the rejected value: it may be a secret in the wrong field,
and the SDK logs the message."""

from __future__ import annotations

import difflib
import re
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from pybrain.mcp.profiles import FULL_PROFILE_HINT

# Arguments other tools and the CLI's old options call by another name.
ARGUMENT_ALIASES = {
    "limit": "max_results",
    "top_k": "max_results",
    "k": "max_results",
    "n": "max_results",
    "memory_id": "id",
    "kind": "kinds",
    "text": "query",
}
JSON_TYPE_NAMES = {
    "integer": "a whole number",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "null": "null",
    "object": "an object",
    "array": "a list",
}


def invalid(message: str) -> ToolError:
    """A tool error recorded as invalid_arguments."""
    error = ToolError(message)
    error.code = "invalid_arguments"  # type: ignore[attr-defined]
    return error


def check(
    name: str, arguments: dict[str, Any] | None, schema: dict[str, Any], full_only: tuple[str, ...]
) -> None:
    """Refuse what tool `name` (with input `schema`) does not take; `full_only` are the arguments
    only the full profile offers, named as such in the error."""
    known = schema.get("properties", {})
    given = arguments or {}
    unknown = sorted(set(given) - set(known))
    if unknown:
        more = [a for a in unknown if a in full_only]
        raise invalid(
            f"{name} takes no argument {', '.join(map(name_of, unknown))}{_suggest(unknown, known)}; "
            f"its arguments are {', '.join(sorted(known)) or 'none'}."
            + (f" {', '.join(more)}: full profile only ({FULL_PROFILE_HINT})." if more else "")
        )
    defs = schema.get("$defs", {})
    for key, value in given.items():
        if not _matches(value, known[key], defs):
            raise invalid(
                f"{name}: argument {key!r} must be {_describe(known[key], defs)}, not {_json_type(value)}."
            )


def validation_summary(tool: str, error: ValidationError) -> str:
    """pydantic's rejection of a tool's arguments without the values it repeats."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
        for e in error.errors(include_url=False, include_input=False, include_context=False)
    )
    return f"Invalid arguments for {tool}: {problems}"


def name_of(arg: str, quoted: bool = True) -> str:
    """An unknown name (an argument's, a tool's) as an error may say it: a plain identifier of
    lowercase letters and _ (what a misspelt name looks like); anything else may be a value
    pasted as a name, and is not repeated."""
    if re.fullmatch(r"[a-z][a-z_]{0,39}", arg):
        return repr(arg) if quoted else arg
    return "(a name that is not an identifier)"


def _suggest(unknown: list[str], known: dict[str, Any]) -> str:
    """' (use max_results)' for limit: the name this server gives what the caller meant."""
    names = []
    for arg in unknown:
        alias = ARGUMENT_ALIASES.get(arg)
        close = [alias] if alias in known else difflib.get_close_matches(arg, list(known), n=1, cutoff=0.75)
        if close:
            names.append(f"{close[0]} for {name_of(arg, quoted=False)}" if len(unknown) > 1 else close[0])
    return f" (use {', '.join(names)})" if names else ""


def _json_type(value: Any) -> str:
    """The JSON type of a value, in words: what an argument error may say of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction" if value != int(value) else "a number written with a decimal point"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return defs.get(ref.rsplit("/", 1)[-1], {}) if isinstance(ref, str) else schema


def _matches(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    """Whether value has a JSON type the schema allows (strictly: a boolean is no number)."""
    schema = _resolve(schema, defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return any(_matches(value, s, defs) for s in schema[key])
    kinds = schema.get("type")
    if kinds is None:
        return True
    for kind in kinds if isinstance(kinds, list) else [kinds]:
        if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
            return True
        if kind == "string" and isinstance(value, str):
            return True
        if kind == "boolean" and isinstance(value, bool):
            return True
        if kind == "null" and value is None:
            return True
        if kind == "object" and isinstance(value, dict):
            return True
        if kind == "array" and isinstance(value, list):
            return all(_matches(v, schema.get("items", {}), defs) for v in value)
    return False


def _describe(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    schema = _resolve(schema, defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_describe(s, defs) for s in schema[key])
    kinds = schema.get("type", "any value")
    return " or ".join(JSON_TYPE_NAMES.get(k, k) for k in (kinds if isinstance(kinds, list) else [kinds]))
