"""`brain serve`: the MCP server over streamable HTTP (the official SDK's transport).

Every HTTP request carries a bearer token; the SDK's bearer middleware asks
PoolTokenVerifier, which asks the database (brain.verify_token), so a
revoked token is refused on its next request. A token whose role lost its
membership gets 403, anything else without a good token 401, both with a
WWW-Authenticate header naming the protected-resource metadata (RFC 9728,
served at /.well-known/oauth-protected-resource/mcp).

Each MCP session (the transport's Mcp-Session-Id) has its own Brain and its
own booted session; every call of that Brain is a transaction on a pooled
connection, as the token's role, in its workspace, with its access as a
ceiling. The tools are those of pybrain.mcp, unchanged.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg_pool import ConnectionPool

from pybrain.errors import InvalidArgument
from pybrain.mcp import SessionState, build_server
from pybrain.serve import auth
from pybrain.serve.http import server_config
from pybrain.serve.pool import DEFAULT_POOL_SIZE, pooled_brain

log = logging.getLogger("pybrain.serve")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
# An MCP session unused this long is forgotten (the SDK's default idle timeout).
SESSION_IDLE_SECONDS = 30 * 60


@dataclass(frozen=True)
class ServeOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    pool_size: int = DEFAULT_POOL_SIZE
    # The URL clients use (behind a reverse proxy: https://brain.example.com); default http://host:port.
    public_url: str | None = None
    allow_anonymous_localhost: bool = False
    session_idle_seconds: float = SESSION_IDLE_SECONDS
    # The tools served: lean (the default, BRAIN_MCP_PROFILE) or full.
    profile: str | None = None

    @property
    def base_url(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def check(self) -> None:
        """Refuse what would expose the memory: anonymous access from another machine."""
        if self.allow_anonymous_localhost and not auth.is_loopback(self.host):
            raise InvalidArgument(
                f"Anonymous access is for this machine only; --host {self.host} reaches others.",
                hint="Bind to 127.0.0.1 (the default), or give every client a token (brain token create).",
            )
        if self.public_url:
            parts = urlsplit(self.public_url)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
                raise InvalidArgument(
                    "--public-url is the server's origin (a scheme, http or https, and a host, no path), "
                    "such as https://brain.example.com.",
                    hint=f"The MCP endpoint is then {{origin}}{MCP_PATH}.",
                )


class Sessions:
    """The state of each MCP session, keyed by the transport's session id.

    A session keeps the principal of its latest request (the SDK refuses a
    request whose token is another's), so a role's access lowered meanwhile
    counts at once. Sessions idle longer than idle_seconds are forgotten."""

    def __init__(
        self,
        pool: ConnectionPool,
        *,
        anonymous_pool: ConnectionPool | None = None,
        embedder_spec: str | None = None,
        idle_seconds: float = SESSION_IDLE_SECONDS,
        read_pool: ConnectionPool | None = None,
    ) -> None:
        self.pool = pool
        self.read_pool = read_pool
        self.anonymous_pool = anonymous_pool
        self.embedder_spec = embedder_spec
        self.idle_seconds = idle_seconds
        self._states: dict[str, tuple[SessionState, float]] = {}
        self._lock = threading.Lock()

    def select(self, key: str, principal: auth.Principal) -> SessionState:
        now = time.monotonic()
        with self._lock:
            for stale in [k for k, (_, seen) in self._states.items() if now - seen > self.idle_seconds]:
                del self._states[stale]
            found = self._states.get(key)
            if found is None:
                pool = self.anonymous_pool if principal.anonymous else self.pool
                if pool is None:
                    raise InvalidArgument("Anonymous access is not enabled.")
                # Over HTTP the client's process and folder are on its own machine: a boot
                # records neither (the session lives by its heartbeat).
                state = SessionState(
                    pooled_brain(
                        pool,
                        principal,
                        embedder_spec=self.embedder_spec,
                        via="http",
                        # the anonymous role reads where it writes
                        read_pool=None if principal.anonymous else self.read_pool,
                    )
                )
            else:
                state = found[0]
                state.brain.principal = principal
            self._states[key] = (state, now)
            return state

    def __len__(self) -> int:
        return len(self._states)


def _session_selector(sessions: Sessions) -> Callable[..., Awaitable[Any]]:
    """SDK middleware: each MCP message is served with its session's state."""
    from pybrain.mcp import Service

    async def select(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        request = ctx.request
        principal = auth.principal_of(request) if request is not None else None
        if principal is None:
            return await call_next(ctx)
        key = request.headers.get("mcp-session-id") or f"connection-{id(ctx.session)}"
        request_key = idempotency_key(request.headers.get("idempotency-key"))
        with Service.use_state(sessions.select(key, principal)), Service.use_request_key(request_key):
            return await call_next(ctx)

    return select


def idempotency_key(header: str | None) -> str | None:
    """The key of an Idempotency-Key header: its value, or the string it quotes (the IETF
    draft's form, a structured-field string: "8e03978e-40d5-..."); None without the header."""
    if header is None:
        return None
    value = header.strip()
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        value = re.sub(r"\\(.)", r"\1", value[1:-1])  # \" and \\ stand for " and \
    return value


def build_app(
    pool: ConnectionPool,
    options: ServeOptions | None = None,
    *,
    anonymous_pool: ConnectionPool | None = None,
    embedder_spec: str | None = None,
    read_pool: ConnectionPool | None = None,
) -> Any:
    """The ASGI application: the MCP endpoint at /mcp behind bearer tokens, and the
    protected-resource metadata. `pool` connects as a member of brain_server;
    `anonymous_pool` (with --allow-anonymous-localhost) as the local application role;
    `read_pool` (--read-database-url), as brain_server's member too, to a streaming
    replica that serves the reads of the catalogue's replica trait (brain.catalogue)."""
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.transport_security import TransportSecuritySettings

    from pybrain.mcp import Service

    options = options or ServeOptions()
    options.check()
    anonymous = None
    if options.allow_anonymous_localhost:
        if anonymous_pool is None:
            raise InvalidArgument("Anonymous access needs the local application role's connections.")
        anonymous = auth.Principal(workspace=None, role=None, access=None)
    verifier = auth.PoolTokenVerifier(pool, anonymous=anonymous)
    service = Service(None)
    service.server_options = {
        "token_verifier": verifier,
        # Tokens are issued by `brain token create`, not by an OAuth server: the server names
        # itself as the issuer in its metadata, and checks each token's workspace itself.
        "auth": AuthSettings(
            issuer_url=options.base_url,
            resource_server_url=options.base_url + MCP_PATH,
            required_scopes=[auth.SCOPE],
            validate_token_resource=False,
        ),
    }
    server = build_server(service, options.profile)
    sessions = Sessions(
        pool,
        anonymous_pool=anonymous_pool,
        embedder_spec=embedder_spec,
        idle_seconds=options.session_idle_seconds,
        read_pool=read_pool,
    )
    server.middleware.append(_session_selector(sessions))
    # DNS rebinding protection: the Host (and Origin) a browser may send. Behind a
    # reverse proxy the public name is allowed too.
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if not auth.is_loopback(options.host) and options.host not in ("0.0.0.0", "::"):
        hosts += [options.host, f"{options.host}:*"]
    if options.public_url:
        public = urlsplit(options.public_url)
        hosts.append(public.netloc)
        origins.append(f"{public.scheme}://{public.netloc}")
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=options.host,
        session_idle_timeout=options.session_idle_seconds,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=auth.is_loopback(options.host) or bool(options.public_url),
            allowed_hosts=hosts,
            allowed_origins=origins,
        ),
    )
    app.state.sessions = sessions
    app.state.service = service
    pools = [p for p in (pool, anonymous_pool) if p is not None]
    if verifier.anonymous_secret is not None:
        return Unavailable(_AnonymousLocalhost(app, verifier.anonymous_secret), pools)
    return Unavailable(app, pools)


class Unavailable:
    """503 with Retry-After, at once, while the database is down.

    A request that comes while a pool knows the database is down is answered
    without touching it; one that finds out on the way (its token check or its
    call raises DatabaseUnavailable, or psycopg's pool times out) gets the same
    answer in place of the 500 the framework would send."""

    def __init__(self, app: Any, pools: list[Any]) -> None:
        self.app = app
        self.pools = pools
        self.state = app.state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        down = next((p for p in self.pools if getattr(p, "down", False)), None)
        if down is not None:
            await _answer_503(send, down.unavailable())
            return
        held: list[dict[str, Any]] = []
        started = False

        async def guarded_send(message: dict[str, Any]) -> None:
            nonlocal started
            if held or (message["type"] == "http.response.start" and message.get("status") == 500):
                held.append(message)  # a 500 is kept back until the cause is known
                return
            started = True
            await send(message)

        try:
            await self.app(scope, receive, guarded_send)
        except Exception as exc:
            cause = _unavailable(exc)
            if cause is None or started:
                for message in held:
                    await send(message)
                raise
            await _answer_503(send, cause)
            return
        for message in held:
            await send(message)


def _unavailable(exc: BaseException) -> Any:
    """The DatabaseUnavailable behind exc (an exception group of the framework's included), or None."""
    from psycopg_pool import PoolTimeout

    from pybrain.errors import DatabaseUnavailable

    if isinstance(exc, DatabaseUnavailable):
        return exc
    if isinstance(exc, PoolTimeout | psycopg.OperationalError):
        log.warning("the database is not reachable: %s", str(exc).strip()[:200])
        return DatabaseUnavailable("The database is not reachable.")
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _unavailable(inner)) is not None:
                return found
    if exc.__cause__ is not None and exc.__cause__ is not exc:
        return _unavailable(exc.__cause__)
    return None


async def _answer_503(send: Any, error: Any) -> None:
    import json

    from pybrain.serve.pool import RETRY_AFTER

    body = json.dumps(
        {
            "error": "database_unavailable",
            "message": error.message,
            "hint": error.hint,
            "retry_after": RETRY_AFTER,
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"retry-after", str(RETRY_AFTER).encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _AnonymousLocalhost:
    """With --allow-anonymous-localhost: a request from this machine that carries no
    Authorization header is given the server's anonymous token (random, never shown)."""

    def __init__(self, app: Any, secret: str) -> None:
        self.app = app
        self.secret = secret.encode()
        self.state = app.state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = scope.get("headers") or []
            client = scope.get("client") or (None, None)
            if not any(k.lower() == b"authorization" for k, _ in headers) and auth.is_loopback(client[0]):
                scope = {**scope, "headers": [*headers, (b"authorization", b"Bearer " + self.secret)]}
        await self.app(scope, receive, send)


def run(
    options: ServeOptions,
    serve_url: str,
    *,
    anonymous_url: str | None = None,
    embedder_spec: str | None = None,
    ready: Callable[[str], None] | None = None,
    read_url: str | None = None,
) -> None:
    """Serve until interrupted: uvicorn on options.host:options.port."""
    import uvicorn

    from pybrain.embed import keep_warm
    from pybrain.serve.pool import open_pool

    options.check()
    check_connection_limit(serve_url, options.pool_size)
    keep_warm(embedder_spec)  # the model stays loaded in this process for its lifetime
    pool = open_pool(serve_url, options.pool_size, name="pybrain-serve")
    anonymous_pool = (
        open_pool(anonymous_url, min(options.pool_size, 4), name="pybrain-anonymous")
        if options.allow_anonymous_localhost and anonymous_url
        else None
    )
    # The replica's pool does not hold the start: while it is down, reads run on the primary.
    read_pool = open_pool(read_url, options.pool_size, name="pybrain-read", wait=False) if read_url else None
    try:
        app = build_app(
            pool, options, anonymous_pool=anonymous_pool, embedder_spec=embedder_spec, read_pool=read_pool
        )
        config = server_config(
            app, host=options.host, port=options.port, log_level="warning", proxy_headers=False
        )
        server = uvicorn.Server(config)
        if ready is not None:
            ready(options.base_url + MCP_PATH)
        server.run()
    finally:
        pool.close()
        if read_pool is not None:
            read_pool.close()
        if anonymous_pool is not None:
            anonymous_pool.close()


def check_connection_limit(url: str, pool_size: int) -> None:
    """Refuse a pool larger than the server role's connection limit allows (its LISTEN
    connection included); warn when the role has no limit."""
    from pybrain.errors import wrap_exceptions

    with wrap_exceptions(), psycopg.connect(url, autocommit=True) as conn:
        role, limit = conn.execute(
            "SELECT rolname, rolconnlimit FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
    if limit < 0:
        log.warning(
            "the role %s has no connection limit: give it one below the server's "
            "(ALTER ROLE %s CONNECTION LIMIT 40), so that other clients always get in",
            role,
            role,
        )
    elif pool_size + 1 > limit:
        raise InvalidArgument(
            f"--pool-size {pool_size} needs {pool_size + 1} connections, and the role {role} "
            f"may open {limit}.",
            hint=f"A smaller --pool-size, or ALTER ROLE {role} CONNECTION LIMIT {pool_size + 1} "
            "(below the server's max_connections).",
        )


# The login role of `brain serve` on the embedded server, and where its password is kept.
SERVE_ROLE = "brain_serve"
SERVE_STATEMENT_TIMEOUT = "10s"
# Its connection limit (at most; less on a server with few connections): `brain serve`'s pool
# and the dashboard's with tokens (each at most --pool-size) and their one LISTEN each.
SERVE_CONNECTION_LIMIT = 40


def serve_database_url(settings: Any) -> str:
    """The URL the server's pool connects with: BRAIN_SERVE_DATABASE_URL; on the embedded
    server, the login role brain_serve (a member of brain_server), created once with a
    password kept under BRAIN_HOME (readable by this user only)."""
    import json
    import os
    import secrets

    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    from pybrain import db
    from pybrain.errors import BrainError, wrap_exceptions

    configured = os.environ.get("BRAIN_SERVE_DATABASE_URL")
    if configured:
        return configured
    if settings.database_url:
        raise BrainError(
            "brain serve connects as a login role in brain_server: set BRAIN_SERVE_DATABASE_URL.",
            hint="As the owner: CREATE ROLE brain_serve LOGIN PASSWORD '...' IN ROLE brain_server; "
            "ALTER ROLE brain_serve SET statement_timeout = '10s' (docs/serve.md).",
        )
    admin = db.admin_url(settings)
    path = settings.home / "serve-role.json"
    try:
        password = json.loads(path.read_text(encoding="utf-8"))["password"]
    except (OSError, ValueError, KeyError):
        password = None
    with wrap_exceptions(), psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (SERVE_ROLE,)).fetchone()
        # Below the server's connections, so that the CLI and the superuser always get in.
        limit = conn.execute(
            "SELECT least(%s, current_setting('max_connections')::int"
            " - current_setting('superuser_reserved_connections')::int"
            " - coalesce(current_setting('reserved_connections', true)::int, 0) - 10)",
            (SERVE_CONNECTION_LIMIT,),
        ).fetchone()[0]
        if exists:
            conn.execute(
                sql.SQL("ALTER ROLE {} CONNECTION LIMIT {}").format(
                    sql.Identifier(SERVE_ROLE), sql.Literal(max(limit, 1))
                )
            )
        if exists and password:
            return make_conninfo(admin, user=SERVE_ROLE, password=password)
        password = secrets.token_urlsafe(24)
        role = sql.Identifier(SERVE_ROLE)
        if exists:
            conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(role, sql.Literal(password)))
        else:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN CONNECTION LIMIT {} PASSWORD {} IN ROLE brain_server").format(
                    role, sql.Literal(max(limit, 1)), sql.Literal(password)
                )
            )
            conn.execute(
                sql.SQL("ALTER ROLE {} SET statement_timeout = {}").format(
                    role, sql.Literal(SERVE_STATEMENT_TIMEOUT)
                )
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"role": SERVE_ROLE, "password": password}, f)
    return make_conninfo(admin, user=SERVE_ROLE, password=password)
