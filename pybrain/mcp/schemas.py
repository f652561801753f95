"""The tool schemas as tools/list shows them, and what they cost an agent's context."""

from __future__ import annotations

import json
import math
from typing import Any

# Schema keywords tools/list leaves out: pydantic's titles repeat the names, and the
# length bounds are generous limits that the server enforces with a clear error.
UNLISTED_KEYWORDS = frozenset({"title", "maxLength", "minLength", "maxItems"})


def lean_schema(schema: Any) -> Any:
    """A JSON schema without UNLISTED_KEYWORDS, and `anyOf [X, null]` with a null default as X."""
    if isinstance(schema, list):
        return [lean_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: (lean_schema(v) if k != "properties" else {p: lean_schema(d) for p, d in v.items()})
        for k, v in schema.items()
        if k not in UNLISTED_KEYWORDS
    }
    alternatives = out.get("anyOf")
    if isinstance(alternatives, list) and out.get("default", ...) is None:
        rest = [a for a in alternatives if a != {"type": "null"}]
        if len(rest) == 1 and len(rest) < len(alternatives):
            del out["anyOf"], out["default"]
            out = {**rest[0], **out}
    return out


def says_nothing(schema: dict[str, Any] | None) -> bool:
    """An output schema that only says the result is an object."""
    return schema is not None and lean_schema(schema) == {"type": "object", "additionalProperties": True}


def schema_tokens(tools: list[Any]) -> int:
    """The context an agent spends on these tools, estimated: each tool as tools/list returns it
    (name, description, inputSchema, and any other field), as compact JSON, at 4 characters a
    token (OpenAI's rule of thumb for English; on these schemas the cl100k_base BPE tokenizer
    finds about 4.3 characters a token, so the estimate is on the high side). docs/mcp.md."""
    total = 0
    for tool in tools:
        entry = (
            tool.model_dump(by_alias=True, exclude_none=True, mode="json")
            if hasattr(tool, "model_dump")
            else tool
        )
        total += math.ceil(len(json.dumps(entry, ensure_ascii=False, separators=(",", ":"))) / 4)
    return total
