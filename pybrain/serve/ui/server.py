"""Running the dashboard: connect as configured, then serve the app with uvicorn."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from pybrain import db
from pybrain.client import Brain
from pybrain.config import Settings
from pybrain.errors import InvalidArgument
from pybrain.serve.ui.app import Dashboard, create_app

LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(host: str, port: int, *, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve the dashboard for the configured database role and workspace until interrupted."""
    if not is_loopback(host):
        raise InvalidArgument(
            f"The dashboard serves only this machine (localhost), not {host}.",
            detail={"host": host},
            hint="Leave --host at 127.0.0.1 and reach it through an SSH tunnel (ssh -L).",
        )
    import uvicorn

    settings = Settings.from_env()
    # Starts the embedded database and migrates when needed, as every command does.
    with Brain.open(settings, actor="ui") as brain:
        embedder = brain.embedder
    conninfo = db.database_url(settings)
    dashboard = Dashboard(conninfo, workspace=settings.workspace, embedder=embedder, actor="ui")
    app = create_app(dashboard, allowed_hosts=["localhost", "127.0.0.1", host])
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2, access_log=False
    )
    server = uvicorn.Server(config)
    if on_ready:
        on_ready(f"http://{'localhost' if host == '127.0.0.1' else host}:{port}/")
    server.run()
