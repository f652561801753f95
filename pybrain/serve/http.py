"""uvicorn's configuration for brain serve and the dashboard."""

from __future__ import annotations

from typing import Any

# A request's headers arrive within this many seconds of the connection, or of the answer to
# the request before it on the connection, or the connection is closed. uvicorn has no such
# limit: a client that sent half a request line and waited held its connection (and a slot
# of the server's) for as long as it liked.
HEADER_TIMEOUT = 10.0


def server_config(app: Any, *, header_timeout: float = HEADER_TIMEOUT, **kwargs: Any) -> Any:
    """uvicorn's Config for app, on HTTP/1.1 (h11) with a deadline for each request's headers."""
    import h11
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadline(H11Protocol):
        deadline: Any = None

        def _arm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
            self.deadline = self.loop.call_later(header_timeout, self._expire)

        def _expire(self) -> None:
            self.deadline = None
            # still waiting for the headers of a request (none is being answered)
            if self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete):
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None
            super().connection_lost(exc)

    return uvicorn.Config(app, http=HeaderDeadline, **kwargs)
