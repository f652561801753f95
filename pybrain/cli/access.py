"""Who may use the database: workspaces and their members, login roles, and the
bearer tokens of `brain serve`. Run as the database owner (or a workspace admin)."""

from __future__ import annotations

import sys
from typing import Any

import click

from pybrain import db
from pybrain.cli.base import Choice, _admin, _dump, _echo_rows, _text, command, group


@group("workspace")
def workspace_group() -> None:
    """Workspaces and who may use them (docs/security.md). Run as the database owner."""


@command(workspace_group, "create")
@click.argument("name")
def workspace_create(name: str, as_json: bool) -> None:
    """Create a workspace; it has no members until `brain workspace grant`."""
    with _admin() as brain:
        out = brain.value("create_workspace", name=_text(name, "name"))
    click.echo(_dump(out) if as_json else f"created workspace #{out['workspace']} {out['name']}")


@command(workspace_group, "list")
def workspace_list(as_json: bool) -> None:
    """The workspaces, with their members and active memories."""
    with _admin() as brain:
        found = brain.call("list_workspaces")

    def line(w: dict[str, Any]) -> str:
        return f"#{w['workspace_id']} {w['name']}: {w['members']} members, {w['memories']} memories"

    _echo_rows(found, as_json, line)


@command(workspace_group, "grant")
@click.argument("role")
@click.argument("workspace", type=click.IntRange(1))
@click.option("--access", type=Choice(["read", "write", "admin"]), default="write", show_default=True)
def workspace_grant(role: str, workspace: int, access: str, as_json: bool) -> None:
    """Give ROLE access to WORKSPACE (or change its access)."""
    with _admin() as brain:
        if brain.as_owner:
            # the membership as brain_owner, the role's adoption by brain serve as the installer
            out = db.grant_workspace(brain.connection(), role, workspace, access)
        else:
            out = brain.value("grant_workspace", role=role, workspace_id=workspace, access=access)
    click.echo(_dump(out) if as_json else f"{out['role']}: {out['access']} access to workspace #{workspace}")


@command(workspace_group, "revoke")
@click.argument("role")
@click.argument("workspace", type=click.IntRange(1))
def workspace_revoke(role: str, workspace: int, as_json: bool) -> None:
    """Take ROLE's access to WORKSPACE away."""
    with _admin() as brain:
        out = brain.value("revoke_workspace", role=role, workspace_id=workspace)
    if as_json:
        click.echo(_dump(out))
    else:
        click.echo(
            f"{role}: " + ("access revoked" if out["revoked"] else f"had no access to workspace #{workspace}")
        )


@group("role")
def role_group() -> None:
    """Login roles for agents and people (docs/security.md). Run as the database owner."""


@command(role_group, "create")
@click.argument("name")
@click.option("--workspace", type=click.IntRange(1), required=True, help="The workspace it may use.")
@click.option("--access", type=Choice(["read", "write", "admin"]), default="write", show_default=True)
@click.option("--statement-timeout", default="5s", show_default=True, help="Its statements' time limit.")
@click.option(
    "--password-stdin", is_flag=True, help="Read the password from standard input (default: generate one)."
)
def role_create(
    name: str, workspace: int, access: str, statement_timeout: str, password_stdin: bool, as_json: bool
) -> None:
    """Create a login role bound to one workspace; prints its password once."""
    password = sys.stdin.readline().rstrip("\n") if password_stdin else None
    with _admin() as brain:
        if brain.as_owner:
            # its checks as brain_owner; CREATE ROLE in the installer's own fixed SQL
            out = db.create_role(brain.connection(), name, workspace, access, password, statement_timeout)
        else:
            out = brain.value(
                "create_role",
                name=name,
                workspace_id=workspace,
                access=access,
                password=password,
                statement_timeout=statement_timeout,
            )
    if as_json:
        click.echo(_dump(out))
        return
    click.echo(f"created role {out['role']}: {out['access']} access to workspace #{workspace}")
    if out.get("password"):
        click.echo(f"password: {out['password']}  (shown once; give it to the agent's BRAIN_DATABASE_URL)")


@group("token")
def token_group() -> None:
    """Bearer tokens for `brain serve` (docs/serve.md). Run as an admin of the workspace or the owner."""


@command(token_group, "create")
@click.option("--workspace", type=click.IntRange(1), help="The token's workspace (default: the current one).")
@click.option("--role", required=True, help="The database role the token's requests run as.")
@click.option("--name", required=True, help="A name to recognise the token by, unique in the workspace.")
@click.option(
    "--access",
    type=Choice(["read", "write", "admin"]),
    help="At most the role's access in the workspace (default: the role's).",
)
@click.option("--expires-in", help="Lifetime, such as 30d, 12h, 2w, 1y (default: until revoked).")
def token_create(
    workspace: int | None, role: str, name: str, access: str | None, expires_in: str | None, as_json: bool
) -> None:
    """Create a bearer token; prints it once (the database keeps only its hash)."""
    from pybrain.serve.auth import parse_lifetime

    lifetime = parse_lifetime(expires_in)
    with _admin() as brain:
        out = brain.value(
            "create_token",
            role=role,
            name=_text(name, "name"),
            workspace_id=workspace,
            access=access,
            expires_in=lifetime,
        )
    if as_json:
        click.echo(_dump(out))
        return
    expiry = f", expires {str(out['expires_at'])[:19]}" if out.get("expires_at") else ""
    click.echo(
        f"created token #{out['token_id']} {out['name']}: {out['access']} access to workspace "
        f"#{out['workspace']} as {out['role']}{expiry}"
    )
    click.echo(f"token: {out['token']}")
    click.echo(
        "(shown once: keep it in an environment variable and give the client its name, "
        "e.g. brain wire claude-code --url https://HOST/mcp --token-env PYBRAIN_TOKEN)",
        err=True,
    )


@command(token_group, "list")
@click.option("--workspace", type=click.IntRange(1), help="The workspace (default: the current one).")
@click.option("--all", "include_revoked", is_flag=True, help="Include revoked tokens.")
def token_list(workspace: int | None, include_revoked: bool, as_json: bool) -> None:
    """The tokens of a workspace: role, access, state, last use, expiry (never the token)."""
    with _admin() as brain:
        found = brain.call("list_tokens", workspace_id=workspace, include_revoked=include_revoked)

    def line(t: dict[str, Any]) -> str:
        used = str(t["last_used_at"])[:19] if t["last_used_at"] else "never"
        expires = str(t["expires_at"])[:19] if t["expires_at"] else "never"
        return (
            f"#{t['token_id']} {t['name']} ({t['prefix']}…): {t['role_name']} {t['access']}, {t['state']};"
            f" last used {used}, expires {expires}"
        )

    _echo_rows(found, as_json, line, "no tokens")


@command(token_group, "revoke")
@click.argument("token")
@click.option("--workspace", type=click.IntRange(1), help="The workspace (default: the current one).")
def token_revoke(token: str, workspace: int | None, as_json: bool) -> None:
    """Revoke TOKEN (its #id or its name): the next request that carries it is refused."""
    ident = token.removeprefix("#")
    by_id = int(ident) if ident.isdigit() else None
    with _admin() as brain:
        out = brain.value(
            "revoke_token",
            token_id=by_id,
            name=None if by_id is not None else _text(token, "name"),
            workspace_id=workspace,
        )
    if as_json:
        click.echo(_dump(out))
    elif out["revoked"]:
        click.echo(f"revoked token #{out['token_id']} {out['name']}")
    else:
        when = str(out["revoked_at"])[:19]
        click.echo(f"token #{out['token_id']} {out['name']} was revoked already ({when})")


COMMANDS = (workspace_group, role_group, token_group)
