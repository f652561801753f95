"""The servers: `brain mcp` (MCP on stdio), `brain serve` (MCP over HTTP, with
tokens) and `brain ui` (the dashboard)."""

from __future__ import annotations

import click

from pybrain import db
from pybrain.cli.base import Choice, QuietCommand, _fail
from pybrain.client import open_brain
from pybrain.config import Settings
from pybrain.errors import BrainError

# Which MCP tools a server offers (brain mcp, brain serve).
PROFILE_OPTION = click.option(
    "--profile",
    type=Choice(["lean", "full"]),
    envvar="BRAIN_MCP_PROFILE",
    default="lean",
    show_default=True,
    help="lean: the ten tools of a session; full: every tool (env BRAIN_MCP_PROFILE).",
)


@click.command("mcp", cls=QuietCommand)
@PROFILE_OPTION
@click.option(
    "--project",
    envvar="BRAIN_PROJECT",
    help="The project of every tool call that names none ('' = global; env BRAIN_PROJECT). "
    "Default: each tool's own (global writes, searches of every project).",
)
@click.option(
    "--repository",
    is_flag=True,
    help="Without --project: the git repository of BRAIN_PROJECT_DIR (else CLAUDE_PROJECT_DIR, else "
    "the working directory) is the project, as the hooks take it (what brain wire writes).",
)
def mcp_command(profile: str, project: str | None, repository: bool) -> None:
    """Serve the MCP tools on stdio (for Claude Code, Cursor and other MCP clients)."""
    import os
    import sys

    from pybrain.mcp import serve

    folder = (
        (os.environ.get("BRAIN_PROJECT_DIR") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
        if repository
        else None
    )
    try:
        serve(profile, project, folder)
    except BrainError as exc:
        _fail(exc, as_json=False)
    # The client closed the server and every session it booted has ended. The local model's
    # runtime keeps native threads that abort an interpreter's ordinary exit ("terminate
    # called without an active exception" on standard error): leave without it.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@click.command("ui", cls=QuietCommand)
@click.option("--host", default="127.0.0.1", show_default=True, help="Beyond localhost: tokens only.")
@click.option("--port", default=8750, show_default=True, type=click.IntRange(1, 65535), help="Port.")
@click.option("--require-token", is_flag=True, help="Tokens only, on localhost too (brain token create).")
def ui_command(host: str, port: int, require_token: bool) -> None:
    """Serve the dashboard in a browser: memories, history, sessions, health, decay, flagged."""
    from pybrain.serve.ui.server import run

    try:
        run(
            host,
            port,
            require_token=require_token,
            on_ready=lambda url: click.echo(f"dashboard: {url}", err=True),
        )
    except BrainError as exc:
        _fail(exc, as_json=False)


@click.command("serve", cls=QuietCommand)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--pool-size",
    default=10,
    show_default=True,
    type=click.IntRange(1, 100),
    envvar="BRAIN_SERVE_POOL_SIZE",
    help="Database connections shared by all clients (env BRAIN_SERVE_POOL_SIZE).",
)
@click.option(
    "--public-url",
    help="The origin clients use behind a reverse proxy, such as https://brain.example.com.",
)
@click.option(
    "--allow-anonymous-localhost",
    is_flag=True,
    help="Serve requests without a token from this machine, as the local application role.",
)
@click.option(
    "--read-database-url",
    envvar="BRAIN_SERVE_READ_DATABASE_URL",
    help="A streaming replica for searches and other reads, as brain serve's role "
    "(env BRAIN_SERVE_READ_DATABASE_URL; docs/scaling.md).",
)
@PROFILE_OPTION
def serve_http(
    host: str,
    port: int,
    pool_size: int,
    public_url: str | None,
    allow_anonymous_localhost: bool,
    read_database_url: str | None,
    profile: str,
) -> None:
    """Serve MCP over streamable HTTP at /mcp; every request needs a bearer token (docs/serve.md).

    Tokens: brain token create. TLS: put a reverse proxy (Caddy, nginx) in front.
    """
    from pybrain.serve.app import ServeOptions, run, serve_database_url

    options = ServeOptions(
        host=host,
        port=port,
        pool_size=pool_size,
        public_url=public_url,
        allow_anonymous_localhost=allow_anonymous_localhost,
        profile=profile,
    )
    try:
        options.check()
        settings = Settings.from_env()
        open_brain("configured", settings).close()  # initialised and migrated, as for every command
        url = serve_database_url(settings)
        anonymous_url = db.database_url(settings) if allow_anonymous_localhost else None

        def ready(endpoint: str) -> None:
            mode = "; anonymous requests from this machine allowed" if allow_anonymous_localhost else ""
            click.echo(f"pybrain MCP at {endpoint} (bearer tokens{mode}); Ctrl-C stops", err=True)

        run(
            options,
            url,
            anonymous_url=anonymous_url,
            embedder_spec=settings.embedder,
            ready=ready,
            read_url=read_database_url,
        )
    except BrainError as exc:
        _fail(exc, False)


COMMANDS = (mcp_command, ui_command, serve_http)
