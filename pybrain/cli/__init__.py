"""The `brain` command: text for people, --json for scripts.

Exit codes: 0 done, 1 refused by pybrain (a BR error: see docs/errors.md),
2 bad usage, 3 database unavailable or not migratable, 4 embedder failed.

The commands live in modules by concern; this one assembles them into `brain`:
base (what every command shares), memories, sessions (and the wiring of agents:
wire, hook), access (workspaces, roles, tokens), transfer (export, import,
ingest, backup, restore), embedding (worker, reembed, embedder), servers (mcp,
serve, ui), maintenance (init, stats, health, db, ...) and packs (trajectory,
pack).
"""

from __future__ import annotations

import click

from pybrain.cli import access, embedding, maintenance, memories, packs, servers, sessions, transfer
from pybrain.cli.base import QuietGroup
from pybrain.config import ENVIRONMENT_HELP


def _show_version(ctx: click.Context) -> None:
    from pybrain.build import wheel_version

    click.echo(f"pybrain {wheel_version()}")
    ctx.exit()


@click.group(
    cls=QuietGroup, epilog=ENVIRONMENT_HELP, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _show_version(ctx) if value and not ctx.resilient_parsing else None,
    help="Show the version and the build id (a digest of the code), and exit.",
)
def main() -> None:
    """pybrain: long-term memory for AI agents, inside PostgreSQL."""


for _module in (memories, sessions, access, transfer, embedding, servers, maintenance, packs):
    for _command in _module.COMMANDS:
        main.add_command(_command)
