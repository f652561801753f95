"""The `brain` command's entry point.

`brain hook EVENT` runs before every prompt of a Claude Code session, in a new
process each time, so it goes straight to pybrain.hooks without importing the
CLI (click and every command's modules); every other command, and a hook
command this parser does not take as it is (--help, an unknown option, a value
out of range), goes to the click CLI in pybrain.cli, which says what is wrong.
"""

from __future__ import annotations

import os
import sys

# The `brain hook` options, as pybrain.cli declares them: name -> (type, lowest, highest).
_HOOK_OPTIONS: dict[str, tuple[type, float, float]] = {
    "--source": (str, 0, 0),
    "--project": (str, 0, 0),
    "--timeout": (float, 0.1, 600),
    "--budget": (int, 20, 100000),
}


def hook_arguments(args: list[str]) -> dict[str, object] | None:
    """`brain hook` arguments as run(event, ...) takes them; None for anything else."""
    from pybrain.hooks import EVENTS

    if not args or args[0] not in EVENTS:
        return None
    found: dict[str, object] = {"event": args[0]}
    rest = args[1:]
    while rest:
        name, sep, value = rest[0].partition("=")
        if name not in _HOOK_OPTIONS or name.lstrip("-") in found:
            return None
        if not sep:
            if len(rest) < 2:
                return None
            value, rest = rest[1], rest[2:]
        else:
            rest = rest[1:]
        kind, low, high = _HOOK_OPTIONS[name]
        if kind is not str:
            try:
                number = kind(value)
            except ValueError:
                return None
            if not low <= number <= high:
                return None
            found[name.lstrip("-")] = number
        else:
            found[name.lstrip("-")] = value
    found.setdefault("source", "claude-code")
    found.setdefault("project", os.environ.get("BRAIN_PROJECT", ""))
    return found


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["hook"]:
        from pybrain.hooks import warm

        parsed = hook_arguments(args[1:])
        if parsed is not None:
            # The warm process runs it, with every module imported already (pybrain.hooks.warm).
            forwarding = warm.enabled()
            if forwarding:
                code = warm.forward(args)
                if code is not None:
                    sys.exit(code)
            import warnings

            from pybrain.hooks import Options, run

            # platformdirs warns about XDG_RUNTIME_DIR as root; its fallback works
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            options = Options(
                str(parsed["source"]),
                str(parsed["project"]),
                parsed.get("timeout"),  # type: ignore[arg-type]
                parsed.get("budget"),  # type: ignore[arg-type]
            )
            code = run(str(parsed["event"]), sys.stdin.buffer.read(), options)
            if forwarding:
                try:
                    warm.start()  # for the hooks that come after this one
                except OSError as exc:
                    print(f"pybrain: no warm hook process ({exc})", file=sys.stderr)
            sys.exit(code)
    from pybrain.cli import main as cli

    cli()
