"""Bearer tokens: verified against the database on every request (brain.verify_token).

The database keeps only each token's sha256, its role, workspace, access,
expiry, last use and revocation (migration 015, sql/functions/022-serve.sql),
and decides whether a token is good: this module asks it and carries the
answer. A verified request runs as the token's role, in its workspace, with its
access as a ceiling (brain.max_access), each set for its transaction by
pybrain.connector, so row-level security and the membership checks of
docs/security.md apply to it unchanged.

For a Starlette application (the MCP endpoint, the dashboard):

    principal = authenticate(pool, request)      # raises TokenRefused
    ...
    except TokenRefused as exc:
        return refusal(exc)                      # 401/403 with WWW-Authenticate

and for the MCP SDK's auth hooks, PoolTokenVerifier is its TokenVerifier.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pybrain.connector import Scope, scoped
from pybrain.errors import BrainError, InvalidArgument, wrap_exceptions

TOKEN_PATTERN = re.compile(r"^pbt_[0-9a-f]{64}$")
# The scope every valid token carries: the MCP endpoint requires it, so a token
# whose role lost its membership gets 403 (insufficient_scope), not data.
SCOPE = "brain"
ACCESS_LEVELS = ("read", "write", "admin")


@dataclass(frozen=True)
class Principal:
    """Who a request runs as: a role in one workspace with an access level.

    token_id and name are None for the anonymous principal of
    `brain serve --allow-anonymous-localhost` (role None: the server's own
    local application connection, as its own login role)."""

    workspace: int | None
    role: str | None
    access: str | None
    token_id: int | None = None
    name: str | None = None
    expires_at: datetime | None = None

    @property
    def anonymous(self) -> bool:
        return self.token_id is None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class TokenRefused(BrainError):
    """The bearer token was refused."""

    def __init__(self, message: str, *, status: int = 401, reason: str = "invalid_token", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.status = status
        self.reason = reason


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an `Authorization: Bearer …` header, None without one."""
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
    if not value or value[:7].lower() != "bearer ":
        return None
    return value[7:].strip() or None


def verify(conn: psycopg.Connection, token: str | None) -> Principal:
    """The principal of a token, asked of the database now (so a revocation counts at once).

    Raises TokenRefused: 401 for no token, a malformed, unknown, revoked or
    expired one; 403 for a token whose role is no longer a member of its
    workspace. conn is any connection that may execute brain.verify_token
    (the server's login role, a member of brain_server).
    """
    if not token:
        raise TokenRefused("A bearer token is required.", hint="Send Authorization: Bearer pbt_...")
    if not TOKEN_PATTERN.match(token):
        # The database would refuse it too (BR009); no round trip for garbage.
        raise TokenRefused("That is not a pybrain token.", hint="Tokens are made by brain token create.")
    with wrap_exceptions(), conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        cur.execute("SELECT * FROM brain.verify_token(%s)", (token,))
        row = cur.fetchone()
    status = row["status"] if row else "unknown"
    if status == "valid":
        return Principal(
            workspace=row["workspace_id"],
            role=row["role_name"],
            access=row["access"],
            token_id=row["token_id"],
            name=row["name"],
            expires_at=row["expires_at"],
        )
    if status == "no_access":
        raise TokenRefused(
            f"The token's role {row['role_name']} is no longer a member of workspace {row['workspace_id']}.",
            status=403,
            reason="insufficient_scope",
            hint="An admin grants the role access again, or creates a token for another role.",
        )
    messages = {
        "unknown": "The token is not known.",
        "revoked": "The token was revoked.",
        "expired": "The token has expired.",
    }
    raise TokenRefused(messages.get(status, "The token was refused."), hint="Ask an admin for a new token.")


@contextmanager
def transaction(conn: psycopg.Connection, principal: Principal) -> Iterator[psycopg.Cursor[Any]]:
    """A transaction on conn as the principal: its role, workspace and access ceiling
    (pybrain.connector.Scope.of), all local to the transaction, so a pooled connection
    carries nothing of it to its next user."""
    with scoped(conn, Scope.of(principal)) as cur:
        yield cur


def is_loopback(host: str | None) -> bool:
    """Whether a client address or bind host is this machine only."""
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def authenticate(pool: Any, request: Any, *, anonymous: Principal | None = None) -> Principal:
    """The principal of a Starlette request: its bearer token verified on a connection of pool
    (a psycopg_pool.ConnectionPool). Without a token, `anonymous` when given and the client is
    on this machine. Raises TokenRefused."""
    token = bearer_token(request.headers)
    if token is None and anonymous is not None:
        client = request.client.host if request.client else None
        if is_loopback(client):
            return anonymous
        raise TokenRefused(
            "Anonymous requests are accepted from this machine only.", status=403, reason="insufficient_scope"
        )
    with pool.connection() as conn:
        return verify(conn, token)


def refusal(exc: TokenRefused, resource_metadata_url: str | None = None) -> Any:
    """The 401/403 response for a refused token, with its WWW-Authenticate header (RFC 6750)."""
    from starlette.responses import JSONResponse

    parts = [f'error="{exc.reason}"', f'error_description="{exc.message}"']
    if resource_metadata_url:
        parts.append(f'resource_metadata="{resource_metadata_url}"')
    return JSONResponse(
        {"error": exc.reason, "error_description": exc.message},
        status_code=exc.status,
        headers={"WWW-Authenticate": "Bearer " + ", ".join(parts)},
    )


class PoolTokenVerifier:
    """The MCP SDK's TokenVerifier: each request's token checked by brain.verify_token.

    A valid token carries the scope SCOPE and its principal in the claims; a
    token whose role lost its membership carries no scope (the endpoint
    answers 403); any other token is refused (401). `anonymous_secret` is the
    token the server puts on a header-less request from this machine when
    anonymous mode is on (it is never shown and changes every start)."""

    def __init__(self, pool: Any, *, anonymous: Principal | None = None) -> None:
        self.pool = pool
        self.anonymous = anonymous
        self.anonymous_secret = "anon_" + secrets.token_hex(32) if anonymous is not None else None

    def _verify(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        if self.anonymous_secret is not None and secrets.compare_digest(token, self.anonymous_secret):
            principal = self.anonymous
            assert principal is not None
            return AccessToken(
                token="anonymous", client_id="anonymous", scopes=[SCOPE], claims={"principal": principal}
            )
        try:
            with self.pool.connection() as conn:
                principal = verify(conn, token)
        except TokenRefused as exc:
            if exc.status == 403:
                return AccessToken(token="refused", client_id="refused", scopes=[], claims={"refused": exc})
            return None
        return AccessToken(
            token=f"token:{principal.token_id}",
            client_id=f"token:{principal.token_id}",
            scopes=[SCOPE],
            expires_at=int(principal.expires_at.timestamp()) if principal.expires_at else None,
            subject=principal.role,
            claims={"principal": principal},
        )

    async def verify_token(self, token: str) -> Any:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self._verify, token)


def principal_of(request: Any) -> Principal | None:
    """The principal the SDK's bearer middleware verified for a Starlette request (None without)."""
    user = request.scope.get("user") if hasattr(request, "scope") else None
    token = getattr(user, "access_token", None)
    claims = getattr(token, "claims", None) or {}
    principal = claims.get("principal")
    return principal if isinstance(principal, Principal) else None


def parse_lifetime(text: str | None) -> str | None:
    """A token lifetime such as 30d, 12h, 90m or 2w, as a PostgreSQL interval; BR009 otherwise."""
    if text is None:
        return None
    found = re.fullmatch(r"\s*(\d{1,6})\s*(m|min|h|d|w|y)\s*", text.lower())
    if not found:
        raise InvalidArgument(
            "A lifetime is a number and a unit (m, h, d, w, y), such as 30d.",
            hint="For example --expires-in 90d.",
        )
    unit = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks", "y": "years"}
    return f"{found.group(1)} {unit[found.group(2)]}"
