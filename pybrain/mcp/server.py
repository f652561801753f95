"""The server: the tools of a profile registered on the SDK's MCPServer, every call recorded in
brain.tool_event, and `serve`, which runs it on stdio."""

from __future__ import annotations

import functools
import inspect
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from mcp.types import Tool as MCPTool
from pydantic import ValidationError

from pybrain import __version__
from pybrain.client import open_brain
from pybrain.errors import BrainError
from pybrain.mcp.arguments import check, invalid, name_of, validation_summary
from pybrain.mcp.profiles import DATA_NOTE, DEFAULT_PROFILE, FULL_PROFILE_HINT, PROFILES, TOOLS, check_profile
from pybrain.mcp.render import json_text, plain
from pybrain.mcp.schemas import lean_schema, says_nothing
from pybrain.mcp.session import Service

INSTRUCTIONS = f"""pybrain is this agent's long-term memory.
Start with boot_session (source = your client's name, project, task): it returns the rules, tasks and
handoff that matter now, within a token budget. Search before you assume; recall a memory for its body.
Store what you learn with remember (rules, facts, incidents, tasks); when a memory is wrong, supersede it
with a reason instead of storing a contradicting one. End with end_session and a handoff.
{DATA_NOTE}"""


class BrainMCP(MCPServer):
    """An MCPServer that records every tool call, including rejected arguments."""

    def __init__(self, service: Service, profile: str = DEFAULT_PROFILE) -> None:
        super().__init__("pybrain", instructions=INSTRUCTIONS, version=__version__, **service.server_options)
        self.service = service
        self.profile = profile
        self.tool_names: list[str] = []
        self.other_profile: dict[str, tuple[str, ...]] = {}  # what only the full profile has

    async def list_tools(self) -> list[MCPTool]:
        """The tools as agents read them: schemas without what tells an agent little (pydantic's
        titles, length bounds, `null` alternatives of optional arguments, an output schema that
        only says "an object"), so they cost fewer tokens. Arguments are still checked against
        the whole schema, so an explicit null stays accepted where it was."""
        return [
            tool.model_copy(
                update={
                    "input_schema": lean_schema(tool.input_schema),
                    "output_schema": None if says_nothing(tool.output_schema) else tool.output_schema,
                }
            )
            for tool in await super().list_tools()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        started = datetime.now(UTC)
        clock = time.perf_counter()
        # a name that is no tool is recorded as such, never as what the client sent
        if self._tool_manager.get_tool(name) is None and name not in self.other_profile:
            # Answered here: the SDK's message and its log line repeat the name, which may be
            # anything a client sent; the event is recorded under no name of the client's.
            message = f"No tool {name_of(name)}; the tools are {', '.join(sorted(self.tool_names))}."
            self.service.brain.record_event(
                "(unknown tool)", "mcp", started, clock, self.service.session, "invalid_arguments", message
            )
            return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
        try:
            self.check_arguments(name, arguments)
            arguments = self.with_project(name, arguments)
            arguments = self.with_request_key(name, arguments)
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            # The SDK may wrap the ToolError a tool raised: the code is on the first that has one.
            cause: BaseException | None = exc
            code = None
            while cause is not None and code is None:
                code = getattr(cause, "code", None)
                cause = cause.__cause__
            if code is None:
                code = "invalid_arguments" if isinstance(exc.__cause__, ValidationError) else "tool_error"
            if isinstance(exc.__cause__, ValidationError):
                # pydantic's message repeats the rejected value: say where and what, never the value
                summary = ToolError(validation_summary(name, exc.__cause__))
                summary.__cause__ = exc.__cause__
                exc = summary
            self.service.brain.record_event(name, "mcp", started, clock, self.service.session, code, str(exc))
            raise exc
        self.service.brain.record_event(name, "mcp", started, clock, self.service.session)
        if isinstance(result, CallToolResult) and result.structured_content is not None:
            # The text an agent reads: the same data as one line of JSON, not indented.
            result.content = [TextContent(type="text", text=json_text(result.structured_content))]
        return result

    def with_project(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """The server's project (Service.project) for a tool that takes one, when the call names
        none; a call that names one, '' (global) included, keeps it."""
        arguments = dict(arguments or {})
        tool = self._tool_manager.get_tool(name)
        if (
            self.service.project is not None
            and tool is not None
            and "project" in tool.parameters.get("properties", {})
            and "project" not in arguments
        ):
            arguments["project"] = self.service.project
        return arguments

    def with_request_key(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The request's Idempotency-Key header (brain serve: Service.request_key) as the
        request_key of a tool that takes one; a tool that takes none (a read, or a write that
        is idempotent by itself: docs/serve.md) runs as without it. A request_key argument
        that differs from the header is refused."""
        key = self.service.request_key
        tool = self._tool_manager.get_tool(name)
        if key is None or tool is None or "request_key" not in tool.parameters.get("properties", {}):
            return arguments
        if arguments.get("request_key") not in (None, key):
            raise invalid(
                f"{name}'s request_key differs from the request's Idempotency-Key header: "
                "send the key in one of them, or the same in both."
            )
        return {**arguments, "request_key": key}

    def check_arguments(self, name: str, arguments: dict[str, Any] | None) -> None:
        """Refuse arguments the tool does not take, and values of another JSON type than its
        schema's (pybrain.mcp.arguments); a tool of the full profile only is named as such."""
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            if name in self.other_profile:
                raise invalid(f"{name} is a tool of the full profile: {FULL_PROFILE_HINT}.")
            return  # call_tool answers it
        check(name, arguments, tool.parameters, self.other_profile.get(name, ()))


def _bridge(fn: Callable[..., Any]) -> Callable[..., Any]:
    """pybrain errors become tool errors carrying the message, detail and hint."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return plain(fn(*args, **kwargs))
        except BrainError as exc:
            text = exc.message
            if exc.detail:
                text += f"\nDetail: {json.dumps(exc.detail, default=str)}"
            if exc.hint:
                text += f"\nHint: {exc.hint}"
            error = ToolError(text)
            error.code = exc.code or type(exc).__name__  # type: ignore[attr-defined]
            raise error from exc

    return call


def build_server(service: Service, profile: str | None = None) -> BrainMCP:
    """The MCP server with the tools of a profile (lean or full; default BRAIN_MCP_PROFILE, else lean)."""
    profile = check_profile(profile)
    server = BrainMCP(service, profile)
    served = PROFILES[profile]
    for entry in TOOLS:
        name = entry.name
        if name not in served.tools:
            server.other_profile[name] = ()
            continue
        bridged = _bridge(entry.fn)
        if name in served.omits:
            server.other_profile[name] = served.omits[name]
            # The schema leaves out arguments a session seldom needs (their defaults apply).
            signature = inspect.signature(entry.fn, eval_str=True)
            bridged.__signature__ = signature.replace(  # type: ignore[attr-defined]
                parameters=[p for p in signature.parameters.values() if p.name not in served.omits[name]]
            )
        server.add_tool(bridged, name=name, description=entry.description, structured_output=entry.structured)
        server.tool_names.append(name)
    return server


def serve(profile: str | None = None, project: str | None = None, repository: str | None = None) -> None:
    """Run the server on stdio until the client closes it; project: of the calls that name none
    (None with repository, a folder: the project of its repository, pybrain.repo.project_of)."""
    import anyio

    from pybrain.embed import keep_warm

    profile = check_profile(profile)
    with open_brain("configured") as brain:
        if project is None and repository is not None:
            from pybrain.repo import project_of

            project = project_of(repository, brain)
        space = brain.active_space()
        keep_warm(space.name if space else None)  # loaded while the client starts up, kept while it runs
        anyio.run(build_server(Service(brain, project=project), profile).run_stdio_async)
