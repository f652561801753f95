"""`brain wire`: the configuration that registers `brain mcp` with MCP clients."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from pybrain.errors import InvalidArgument

# Where each client keeps its servers: the key of the servers object, and the
# usual file (project-level where the client has one).
CLIENTS: dict[str, dict[str, str]] = {
    "claude-code": {"key": "mcpServers", "file": ".mcp.json"},
    "claude-desktop": {"key": "mcpServers", "file": "~/.config/Claude/claude_desktop_config.json"},
    "cursor": {"key": "mcpServers", "file": ".cursor/mcp.json"},
    "vscode": {"key": "servers", "file": ".vscode/mcp.json"},
    "windsurf": {"key": "mcpServers", "file": "~/.codeium/windsurf/mcp_config.json"},
    "generic": {"key": "mcpServers", "file": "mcp.json"},
    # TOML, not JSON (codex_toml below); `<repo>/.codex/config.toml` is read too
    "codex": {"key": "mcp_servers", "file": "~/.codex/config.toml"},
}
# How each client's config refers to an environment variable (None: it cannot).
# A reference keeps values, such as the password in BRAIN_DATABASE_URL, out of
# a file that people commit.
ENV_REFERENCE: dict[str, str | None] = {
    "claude-code": "${%s}",
    "claude-desktop": None,
    "cursor": "${env:%s}",
    "vscode": "${env:%s}",
    "windsurf": "${env:%s}",
    "generic": "${%s}",
    "codex": None,
}
# How a project-level config names the project's folder, for a `brain` inside it.
WORKSPACE_FOLDER: dict[str, str] = {
    "cursor": "${workspaceFolder}",
    "vscode": "${workspaceFolder}",
    "claude-code": ".",
}
SERVER_NAME = "pybrain"
# The settings a server started by the client needs to find this same memory.
PASSED_ENV = ("BRAIN_HOME", "BRAIN_DATABASE_URL", "BRAIN_EMBEDDER", "BRAIN_WORKSPACE")


def clients() -> list[str]:
    return list(CLIENTS)


def brain_path() -> str:
    """This `brain`'s absolute path (for a message: it is never written into a shared file)."""
    return _brain_command()


def _brain_command() -> str:
    """An absolute path to `brain`: clients start servers without the user's PATH."""
    here = Path(sys.argv[0])
    if here.name == "brain" and here.exists():
        return str(here.resolve())
    return shutil.which("brain") or "brain"


def usual_file(client: str) -> str:
    return CLIENTS[client]["file"]


def shared_file(target: str | os.PathLike[str]) -> bool:
    """Whether a config file is one a team commits: inside this folder and not Claude Code's
    settings of this machine (settings.local.json). A user-level file (under ~) stays here."""
    path = Path(target).expanduser()
    if str(target).startswith("~") or path.name == "settings.local.json":
        return False
    try:
        return path.resolve().is_relative_to(Path.cwd().resolve())
    except OSError:
        return False


def on_path() -> bool:
    """Whether the `brain` a client finds on PATH is this one."""
    found = shutil.which("brain")
    return bool(found) and Path(found).resolve() == Path(_brain_command()).resolve()


def _portable_command(client: str, command: str, shared: bool) -> str:
    """`brain` as a config should name it. In a file a team commits (shared): relative to
    the project folder when it lies inside it and the client names that folder, else by
    name, never a path of this machine (`brain` must then be on PATH: README, "Install").
    In a file that stays on this machine: the absolute path (clients start servers and
    hooks without the user's shell)."""
    if not shared or not os.path.isabs(command):
        return command
    here = Path.cwd().resolve()
    path = Path(command)
    if client in WORKSPACE_FOLDER and path.is_relative_to(here):
        return f"{WORKSPACE_FOLDER[client]}/{path.relative_to(here).as_posix()}"
    return "brain"


def hook_command(target: str | os.PathLike[str]) -> str:
    """How the hooks of the file target run `brain`: by name in a file a team commits, by this
    machine's absolute path in one that stays here."""
    return "brain" if shared_file(target) else shlex.quote(_brain_command())


def _has_password(url: str) -> bool:
    from psycopg.conninfo import conninfo_to_dict

    try:
        return bool(conninfo_to_dict(url).get("password"))
    except Exception:  # an unparsable URL may hold anything: treat it as secret
        return True


def server_entry(client: str, target: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The JSON object that registers pybrain with `client`, for the file target (default:
    the client's usual file).

    The server is scoped to the repository it runs in (`brain mcp --repository`): a call
    that names no project searches and writes that repository's memories, as the hooks do.
    The environment is passed by reference (`${BRAIN_DATABASE_URL}`), never by value, where
    the client expands references; a client that cannot gets the values in a file of this
    machine, except a database URL that holds a password (set it in that client's
    environment instead), and none in a file a team commits."""
    shared = shared_file(target if target is not None else usual_file(client))
    command = _portable_command(client, _brain_command(), shared)
    server: dict[str, Any] = {"command": command, "args": ["mcp", "--repository"]}
    if client == "vscode":
        server = {"type": "stdio", **server}
    reference = ENV_REFERENCE[client]
    env: dict[str, str] = {}
    for name in PASSED_ENV:
        value = os.environ.get(name)
        if not value:
            continue
        if reference is not None:
            env[name] = reference % name
        elif not shared and (name != "BRAIN_DATABASE_URL" or not _has_password(value)):
            env[name] = value
    if client in ("cursor", "vscode"):
        # the folder the editor has open: their servers may start elsewhere
        env["BRAIN_PROJECT_DIR"] = WORKSPACE_FOLDER[client]
    if env:
        server["env"] = env
    return {CLIENTS[client]["key"]: {SERVER_NAME: server}}


# How each client names a remote (streamable HTTP) server: the entry's fixed keys and the
# key of its URL. Claude Desktop takes remote servers as connectors in its own settings.
REMOTE: dict[str, tuple[dict[str, str], str]] = {
    "claude-code": ({"type": "http"}, "url"),
    "cursor": ({}, "url"),
    "vscode": ({"type": "http"}, "url"),
    "windsurf": ({}, "serverUrl"),
    "generic": ({"type": "streamable-http"}, "url"),
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def remote_url(url: str) -> str:
    """The MCP endpoint of a `brain serve`: https, or http on this machine only; /mcp when
    only the origin is given."""
    from urllib.parse import urlsplit, urlunsplit

    from pybrain.serve.auth import is_loopback

    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgument(
            "--url is the server's address, such as https://brain.example.com/mcp.",
            hint="brain serve answers at /mcp.",
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise InvalidArgument(
            "--url carries no credentials, query or fragment: the token goes in a header.",
            hint="Give the token's environment variable with --token-env.",
        )
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise InvalidArgument(
            f"http://{parts.netloc} would send the token in clear text over the network.",
            hint="Use https (a reverse proxy in front of brain serve: docs/serve.md), "
            "or http://127.0.0.1 on this machine.",
        )
    path = parts.path if parts.path not in ("", "/") else "/mcp"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def remote_entry(client: str, url: str, token_env: str | None) -> dict[str, Any]:
    """The JSON object that registers a remote `brain serve` with `client`. The token is
    referred to through the environment variable token_env, never written: the client
    reads it when it starts. Without token_env (anonymous, this machine only) no header."""
    if client not in REMOTE:
        raise InvalidArgument(
            f"{client} takes remote servers in its own settings, not in a file pybrain writes.",
            hint="Add the URL there, or use claude-code, cursor, vscode, windsurf or generic.",
        )
    endpoint = remote_url(url)
    from urllib.parse import urlsplit

    from pybrain.serve.auth import is_loopback

    fixed, url_key = REMOTE[client]
    server: dict[str, Any] = {**fixed, url_key: endpoint}
    if token_env is None:
        if not is_loopback(urlsplit(endpoint).hostname):
            raise InvalidArgument(
                "A remote server needs a token: name its environment variable with --token-env.",
                hint="brain token create --role ROLE --name NAME prints one; export it as that variable.",
            )
    elif not _ENV_NAME.match(token_env):
        raise InvalidArgument(
            "--token-env is the name of an environment variable, such as PYBRAIN_TOKEN.",
            hint="Letters, digits and _, not starting with a digit. Never the token itself.",
        )
    elif token_env.startswith("pbt_"):
        raise InvalidArgument(
            "--token-env takes the name of the variable that holds the token, not the token.",
            hint="export PYBRAIN_TOKEN=pbt_...; then --token-env PYBRAIN_TOKEN.",
        )
    else:
        reference = ENV_REFERENCE[client]
        assert reference is not None
        server["headers"] = {"Authorization": "Bearer " + reference % token_env}
    return {CLIENTS[client]["key"]: {SERVER_NAME: server}}


def merge_into(target: str | os.PathLike[str], client: str, entry: dict[str, Any]) -> Path:
    """Add or replace pybrain in a client's JSON config, keeping every other entry."""
    path = Path(target).expanduser()
    key = CLIENTS[client]["key"]
    config = _read_json(path)
    if not isinstance(config, dict) or not isinstance(config.get(key, {}), dict):
        raise InvalidArgument(
            f"{path} does not hold a JSON object with a {key!r} object.",
            hint="Fix the file, or write to another one.",
        )
    config.setdefault(key, {})[SERVER_NAME] = entry[key][SERVER_NAME]
    _write_json(path, config, ensure_ascii=True)
    return path


# --- Codex's config.toml ---------------------------------------------------------------

_TOML_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def codex_toml(entry: dict[str, Any]) -> str:
    """The `[mcp_servers.pybrain]` table of Codex's config.toml for a server_entry."""
    server = entry[CLIENTS["codex"]["key"]][SERVER_NAME]
    lines = [f"[mcp_servers.{SERVER_NAME}]", f"command = {json.dumps(server['command'])}"]
    lines.append(f"args = {json.dumps(server['args'])}")
    if server.get("env"):
        pairs = ", ".join(f"{name} = {json.dumps(value)}" for name, value in server["env"].items())
        lines.append(f"env = {{ {pairs} }}")
    return "\n".join(lines) + "\n"


def merge_codex_toml(target: str | os.PathLike[str], entry: dict[str, Any]) -> Path:
    """Put the `[mcp_servers.pybrain]` table into a Codex config.toml, in place of the one
    there (its sub-tables too), keeping every other line as written."""
    path = Path(target).expanduser()
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    ours = f"mcp_servers.{SERVER_NAME}"
    kept: list[str] = []
    inside = False
    for line in old.splitlines():
        table = _TOML_TABLE.match(line)
        if table:
            name = table.group(1).replace('"', "")
            inside = name == ours or name.startswith(ours + ".")
        if not inside:
            kept.append(line)
    text = "\n".join(kept).rstrip("\n")
    text = (text + "\n\n" if text else "") + codex_toml(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)
    return path


def _read_json(path: Path) -> Any:
    """A JSON file's content; {} when the file is missing or blank."""
    if not (path.exists() and path.read_text(encoding="utf-8").strip()):
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InvalidArgument(
            f"{path} is not valid JSON: {exc}", hint="Fix the file, or write to another one."
        ) from exc


# --- Claude Code hooks -----------------------------------------------------

# The hooks `brain wire claude-code --hooks` adds: event -> (`brain hook` command,
# Claude Code's timeout in seconds, a little over the hook's own deadline).
CLAUDE_HOOKS: dict[str, tuple[str, int]] = {
    "SessionStart": ("session-start", 15),
    "UserPromptSubmit": ("prompt", 5),
    "PreCompact": ("pre-compact", 60),
    "SessionEnd": ("session-end", 60),
}
# Codex's hooks (hooks.json, the same shape as Claude Code's, timeouts in seconds): it has
# no SessionEnd, and its Stop ends each turn, so the turns are captured and the handoff
# written when a turn stops (and at compaction).
CODEX_HOOKS: dict[str, tuple[str, int]] = {
    "SessionStart": ("session-start", 15),
    "UserPromptSubmit": ("prompt", 5),
    "PreCompact": ("pre-compact", 60),
    "Stop": ("session-end", 60),
}
# The hook events of each harness whose hooks `brain wire HARNESS --hooks` writes, and the
# file it writes them to by default.
# Cursor's hooks ({"version": 1, "hooks": {event: [{"command"}]}}): no prompt hook (its
# beforeSubmitPrompt adds no context), and no timeout written (its unit is not documented:
# the hooks keep their own deadlines). stop ends each agent loop, sessionEnd the session.
CURSOR_HOOKS: dict[str, tuple[str, int]] = {
    "sessionStart": ("session-start", 15),
    "preCompact": ("pre-compact", 60),
    "stop": ("session-end", 60),
    "sessionEnd": ("session-end", 60),
}
HARNESS_HOOKS: dict[str, dict[str, tuple[str, int]]] = {
    "claude-code": CLAUDE_HOOKS,
    "codex": CODEX_HOOKS,
    "cursor": CURSOR_HOOKS,
}
# The project's settings of this machine (Claude Code keeps the file out of git): the hooks
# name this machine's `brain` by its absolute path, which is no command for a teammate.
CLAUDE_SETTINGS = ".claude/settings.local.json"
HOOKS_FILE: dict[str, str] = {
    "claude-code": CLAUDE_SETTINGS,
    "codex": ".codex/hooks.json",
    "cursor": ".cursor/hooks.json",
}
# A command that runs `brain hook EVENT`: pybrain's own entry, found again on a second run.
_OUR_HOOK = re.compile(
    r"(?:^|[\s/'\"])brain['\"]?\s+hook\s+(session-start|prompt|pre-compact|session-end)(?=\s|$)"
)


def hook_entries(
    project: str | None = None,
    prompt_context: bool = False,
    command: str | None = None,
    harness: str = "claude-code",
) -> dict[str, dict[str, Any]]:
    """The hook handler of each event, as the harness's settings hold it (Claude Code's and
    Codex's alike). UserPromptSubmit only with prompt_context (a process per prompt: see
    docs/hooks.md for its latency). command: how the handler runs `brain` (default: this
    brain's absolute path)."""
    command = command or shlex.quote(_brain_command())
    entries: dict[str, dict[str, Any]] = {}
    for event, (name, timeout) in HARNESS_HOOKS[harness].items():
        if event == "UserPromptSubmit" and not prompt_context:
            continue
        line = f"{command} hook {name}"
        if harness != "claude-code":
            line += f" --source {harness}"
        if harness == "cursor":
            if project:
                line += f" --project {shlex.quote(project)}"
            entries[event] = {"command": line}
            continue
        if project:
            line += f" --project {shlex.quote(project)}"
        entries[event] = {"type": "command", "command": line, "timeout": timeout}
    return entries


def _ours(handler: Any) -> str | None:
    """The `brain hook` event a handler runs, None when it is not pybrain's."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return None
    found = _OUR_HOOK.search(handler["command"])
    return found.group(1) if found else None


def _hooks_file(target: str | os.PathLike[str]) -> tuple[Path, Any, dict[str, Any]]:
    """A hooks file read (an absent one as empty): its path, its JSON and its "hooks" object,
    which must map events to lists."""
    path = Path(target).expanduser()
    config = _read_json(path)
    hooks = config.get("hooks", {}) if isinstance(config, dict) else None
    if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
        raise InvalidArgument(
            f"{path} does not hold a JSON object whose 'hooks' maps events to lists.",
            hint="Fix the file, or write to another one (--settings PATH).",
        )
    return path, config, hooks


def _merge_handlers(
    handlers: list[Any], wanted: dict[str, Any] | None, placed: bool, event: str, report: dict[str, Any]
) -> tuple[list[Any], bool]:
    """An event's handlers with pybrain's own replaced in place by `wanted` (once: `placed`
    says whether it stands already) or removed when wanted is None; the others kept. Says
    what it replaced or removed in report. Returns the handlers and placed."""
    kept = []
    for handler in handlers:
        if _ours(handler) is None:
            kept.append(handler)
        elif wanted is not None and not placed:
            kept.append(wanted)
            placed = True
            if handler != wanted:
                report["replaced"].append(event)
        elif wanted is None:
            report["removed"].append(event)
    return kept, placed


def merge_hooks(
    target: str | os.PathLike[str],
    entries: dict[str, dict[str, Any]],
    harness: str = "claude-code",
    *,
    only_if_changed: bool = False,
) -> dict[str, Any]:
    """Put pybrain's hook handlers into a Claude Code settings file, keeping every other
    setting and hook; a handler of pybrain already there is replaced in place, and
    pybrain's handlers of events not in `entries` are removed. Running it twice changes
    nothing. Returns {"path", "added", "replaced", "removed"} (event names)."""
    path, settings, hooks = _hooks_file(target)
    report: dict[str, Any] = {"path": str(path), "added": [], "replaced": [], "removed": []}
    for event in HARNESS_HOOKS[harness]:
        wanted = entries.get(event)
        placed = False
        groups = []
        for group in hooks.get(event, []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                groups.append(group)
                continue
            kept, placed = _merge_handlers(handlers, wanted, placed, event, report)
            if kept or not handlers:
                groups.append({**group, "hooks": kept})
        if wanted is not None and not placed:
            groups.append({"hooks": [wanted]})
            report["added"].append(event)
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if only_if_changed and not (report["added"] or report["replaced"] or report["removed"]):
        return report
    settings["hooks"] = hooks
    _write_json(path, settings)
    return report


# Claude Code's settings files of a project: the shared one and the one of this machine. It
# runs the hooks of both (and of the user's ~/.claude/settings.json), so pybrain's stand in one.
CLAUDE_PROJECT_SETTINGS = ("settings.json", "settings.local.json")


def merge_claude_hooks(target: str | os.PathLike[str], entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """merge_hooks into a Claude Code settings file, then pybrain's own handlers removed from
    the project's other settings file (an older wiring's, which Claude Code would run too):
    each hook stands once. The report lists those removals under "elsewhere", and the user's
    settings file under "also_in" when pybrain's hooks stand there too (left: they serve
    every project)."""
    report = merge_hooks(target, entries)
    path = Path(target).expanduser()
    report["elsewhere"] = []
    if path.parent.name == ".claude" and path.name in CLAUDE_PROJECT_SETTINGS:
        for name in CLAUDE_PROJECT_SETTINGS:
            sibling = path.parent / name
            if name != path.name and sibling.exists():
                removed = merge_hooks(sibling, {}, only_if_changed=True)
                if removed["removed"]:
                    report["elsewhere"].append(removed)
    user = Path("~/.claude/settings.json").expanduser()
    report["also_in"] = []
    if user.exists() and user.resolve() != path.resolve():
        try:
            _, _, hooks = _hooks_file(user)
        except InvalidArgument:
            hooks = {}
        if any(
            _ours(h)
            for groups in hooks.values()
            for g in groups
            if isinstance(g, dict)
            for h in (g.get("hooks") if isinstance(g.get("hooks"), list) else [])
        ):
            report["also_in"].append(str(user))
    return report


def merge_cursor_hooks(target: str | os.PathLike[str], entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Put pybrain's handlers into a Cursor hooks.json ({"version": 1, "hooks": {event:
    [handler]}}), as merge_hooks does for Claude Code's settings: other hooks kept, ours
    replaced in place, ours of events not in `entries` removed; twice changes nothing."""
    path, config, hooks = _hooks_file(target)
    report: dict[str, Any] = {"path": str(path), "added": [], "replaced": [], "removed": []}
    for event in CURSOR_HOOKS:
        wanted = entries.get(event)
        placed = False
        kept, placed = _merge_handlers(hooks.get(event, []), wanted, placed, event, report)
        if wanted is not None and not placed:
            kept.append(wanted)
            report["added"].append(event)
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    config.setdefault("version", 1)
    config["hooks"] = hooks
    _write_json(path, config)
    return report


def _write_json(path: Path, data: dict[str, Any], *, ensure_ascii: bool = False) -> None:
    """Write a sibling file and rename it over the original: a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=2, ensure_ascii=ensure_ascii)
        out.write("\n")
    os.replace(tmp, path)


# --- the plugin ------------------------------------------------------------------

# The plugin (plugin/ of the repository) is one folder for the three harnesses: each reads
# its own manifest (.claude-plugin/, .codex-plugin/, .cursor-plugin/ plugin.json), which names
# its hooks file and MCP file; the repository lists it in each harness's marketplace file
# (.claude-plugin/, .agents/plugins/ and .cursor-plugin/ marketplace.json). The hooks run
# `brain` through the plugin's launcher (plugin/bin/brain, which finds the installed
# command), named by the variable each harness gives a plugin's commands for its folder.
PLUGIN_ROOT: dict[str, str] = {
    "claude-code": "${CLAUDE_PLUGIN_ROOT}",
    "codex": "${PLUGIN_ROOT}",
    "cursor": "${CURSOR_PLUGIN_ROOT}",
}
# Each harness's hooks file and MCP file in the plugin's folder (Claude Code's are the ones it
# reads without being told; Codex and Cursor are told by their manifest).
PLUGIN_FILES: dict[str, tuple[str, str]] = {
    "claude-code": ("hooks/hooks.json", ".mcp.json"),
    "codex": ("codex/hooks.json", "codex/mcp.json"),
    "cursor": ("cursor/hooks.json", "cursor/mcp.json"),
}
# Capture hooks Claude Code runs in the background: compaction goes on while the turns
# are stored. SessionEnd stays synchronous: Claude Code is exiting and must not cut it off.
PLUGIN_ASYNC = frozenset({"PreCompact"})


# The shell that runs the launcher, by its absolute path: a `sh` the repository puts on PATH
# (its node_modules/.bin, say) is never the one run.
PLUGIN_SHELL = "/bin/sh"


def plugin_command(harness: str = "claude-code") -> str:
    """How the plugin's hooks of a harness run `brain`: its launcher, in the plugin's folder."""
    return f'{PLUGIN_SHELL} "{PLUGIN_ROOT[harness]}/bin/brain"'


def plugin_hooks(harness: str = "claude-code") -> dict[str, Any]:
    """The plugin's hooks file of a harness: the events and timeouts `brain wire HARNESS
    --hooks` writes (without the opt-in prompt hook), running the plugin's launcher."""
    entries = hook_entries(command=plugin_command(harness), harness=harness)
    if harness == "cursor":
        return {"version": 1, "hooks": {event: [entry] for event, entry in entries.items()}}
    hooks: dict[str, Any] = {}
    for event, entry in entries.items():
        async_ = harness == "claude-code" and event in PLUGIN_ASYNC
        hooks[event] = [{"hooks": [{**entry, "async": True} if async_ else entry]}]
    return {
        "description": "pybrain: boot each session from memory, capture its turns and hand off",
        "hooks": hooks,
    }


def plugin_mcp(harness: str = "claude-code") -> dict[str, Any]:
    """The plugin's MCP file of a harness: `brain mcp --repository` through the launcher.
    Codex expands no variable in a plugin's MCP file (and resolves a relative `cwd` against
    the plugin's folder, where the repository would be lost), so its server runs the
    launcher's script inline (`/bin/sh -c SCRIPT brain mcp --repository`) in the session's
    folder: the same search, no `brain` looked up by Codex on its PATH."""
    from pybrain.launcher import SCRIPT

    # --repository: a call that names no project is the repository's, as the hooks take it
    if harness == "codex":
        args = ["-c", SCRIPT, "brain", "mcp", "--repository"]
    else:
        args = [f"{PLUGIN_ROOT[harness]}/bin/brain", "mcp", "--repository"]
    return {"mcpServers": {SERVER_NAME: {"command": PLUGIN_SHELL, "args": args}}}
