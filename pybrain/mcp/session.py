"""What the server holds between calls: for each MCP session, a Brain and the session it booted."""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from pybrain.client import Brain


@dataclass
class SessionState:
    """What one client's MCP session holds: the Brain its calls use and the session it booted."""

    brain: Brain
    session: int | None = None


# The MCP session of the request being served (`brain serve` sets it per request; stdio has one).
_current_state: contextvars.ContextVar[SessionState | None] = contextvars.ContextVar(
    "pybrain_mcp_state", default=None
)


# The Idempotency-Key header of the HTTP request being served (`brain serve`), which a tool
# that takes a request_key takes as its key (BrainMCP.with_request_key); None over stdio.
_request_key: contextvars.ContextVar[str | None] = contextvars.ContextVar("pybrain_request_key", default=None)


class _CurrentBrain:
    """Stands for the Brain of the request's MCP session: the tools hold this and call through it."""

    def __init__(self, service: Service) -> None:
        self._service = service

    def __getattr__(self, name: str) -> Any:
        return getattr(self._service.state.brain, name)


class Service:
    """What the server holds: for each MCP session a Brain and the session it booted.

    Over stdio there is one client, so one SessionState. `brain serve` makes one
    per MCP session and selects it for each request (use_state); `brain` and
    `session` answer for the selected one."""

    def __init__(self, brain: Brain | None, project: str | None = None) -> None:
        self._default = SessionState(brain) if brain is not None else None
        # The project of a call that names none (`brain mcp --project`, the plugin's
        # repository); None: each tool's own default.
        self.project = project
        self.brain: Any = _CurrentBrain(self)
        self.started_at = time.time()
        # More arguments of MCPServer (brain serve: its token verifier and auth settings).
        self.server_options: dict[str, Any] = {}

    @property
    def state(self) -> SessionState:
        state = _current_state.get()
        if state is None:
            if self._default is None:
                raise ToolError("No MCP session is selected.")
            return self._default
        return state

    @property
    def session(self) -> int | None:
        return self.state.session

    @session.setter
    def session(self, value: int | None) -> None:
        self.state.session = value
        # the Brain's calls then belong to the session (brain.session): what it was shown, it uses
        self.state.brain.session = value

    @staticmethod
    @contextlib.contextmanager
    def use_state(state: SessionState) -> Iterator[None]:
        """Serve the calls made inside (and the threads they start) for this MCP session."""
        token = _current_state.set(state)
        try:
            yield
        finally:
            _current_state.reset(token)

    @staticmethod
    @contextlib.contextmanager
    def use_request_key(key: str | None) -> Iterator[None]:
        """Serve the calls made inside with this request key (an HTTP request's Idempotency-Key)."""
        token = _request_key.set(key)
        try:
            yield
        finally:
            _request_key.reset(token)

    @property
    def request_key(self) -> str | None:
        """The request key of the request being served (use_request_key), if any."""
        return _request_key.get()

    def require_session(self) -> int:
        if self.session is None:
            raise ToolError("No session yet. Call boot_session first.")
        return self.session


def service_of(ctx: Context) -> Service:
    """The Service of the server a tool call runs in (the SDK passes each tool its Context)."""
    return ctx.mcp_server.service  # type: ignore[attr-defined,no-any-return]
