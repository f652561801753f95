"""Running the dashboard: connect as configured, then serve the app with uvicorn."""

from __future__ import annotations

import os
from collections.abc import Callable

from pybrain import db
from pybrain.client import open_brain
from pybrain.config import Settings
from pybrain.errors import InvalidArgument
from pybrain.serve.auth import is_loopback
from pybrain.serve.http import server_config
from pybrain.serve.ui.app import Dashboard, create_app


def run(
    host: str, port: int, *, require_token: bool = False, on_ready: Callable[[str], None] | None = None
) -> None:
    """Serve the dashboard until interrupted.

    On this machine (the default) a browser without a token works as the configured
    local role. Beyond it, or with require_token, every request needs a token of
    `brain token create` (an Authorization: Bearer header, or the login form), and
    the dashboard connects as BRAIN_SERVE_DATABASE_URL, a login role in brain_server,
    to run each request as the token's role, as `brain serve` does.
    """
    import uvicorn

    local = is_loopback(host)
    require_token = require_token or not local
    settings = Settings.from_env()
    conninfo = os.environ.get("BRAIN_SERVE_DATABASE_URL") if require_token else None
    if require_token and not conninfo:
        raise InvalidArgument(
            "Beyond this machine (or with --require-token) the dashboard runs each request as a "
            "token's role: set BRAIN_SERVE_DATABASE_URL to a login role in brain_server.",
            hint="As the owner: CREATE ROLE brain_serve LOGIN PASSWORD '...' IN ROLE brain_server; "
            "then make tokens with brain token create.",
        )
    from pybrain.embed import keep_warm

    # Starts the embedded database and migrates when needed, as every command does.
    with open_brain("configured", settings, actor="ui") as brain:
        space = brain.active_space()
    keep_warm(space.name if space else settings.embedder)  # loaded here, kept for the server's lifetime
    conninfo = conninfo or db.database_url(settings)
    dashboard = Dashboard(
        conninfo,
        workspace=settings.workspace,
        embedder_spec=settings.embedder,
        actor="ui",
        require_token=require_token,
    )
    # On this machine only its own names are served: a DNS-rebinding page cannot reach it.
    app = create_app(dashboard, allowed_hosts=["localhost", "127.0.0.1", host] if local else None)
    config = server_config(
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2, access_log=False
    )
    server = uvicorn.Server(config)
    if on_ready:
        on_ready(f"http://{'localhost' if host == '127.0.0.1' else host}:{port}/")
    server.run()
