"""The Claude Code plugin: `/plugin marketplace add` + `/plugin install pybrain@pybrain`.

The repository's .claude-plugin/marketplace.json lists the plugin in plugin/
(.claude-plugin/plugin.json, hooks/hooks.json, .mcp.json, bin/brain). The test lays it
out in a scratch Claude Code config directory as Claude Code does (the marketplace under
plugins/marketplaces/, the installed copy under plugins/cache/<marketplace>/<plugin>/
<version>/, installed_plugins.json, enabledPlugins), then runs what it wires: each hook
command as Claude Code runs it (a shell, CLAUDE_PLUGIN_ROOT set, the JSON on stdin), and
the MCP server's command.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_hooks import FIXTURES, SESSION, captured, payload

import pybrain
from pybrain.wire import CLAUDE_HOOKS, _ours, hook_entries, plugin_hooks, plugin_mcp

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = str(Path(sys.executable).parent)


def install(config: Path) -> Path:
    """`/plugin marketplace add <this repository>` then `/plugin install pybrain@pybrain`,
    laid out as Claude Code lays them out; the installed plugin's root."""
    manifest = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    market = config / "plugins" / "marketplaces" / manifest["name"]
    shutil.copytree(REPO / ".claude-plugin", market / ".claude-plugin")
    (entry,) = manifest["plugins"]
    source = Path(entry["source"])
    assert not source.is_absolute() and entry["source"].startswith("./")
    shutil.copytree(REPO / source, market / source)
    (config / "plugins" / "known_marketplaces.json").write_text(
        json.dumps(
            {
                manifest["name"]: {
                    "source": {"source": "directory", "path": str(REPO)},
                    "installLocation": str(market),
                }
            }
        )
    )
    root = config / "plugins" / "cache" / manifest["name"] / entry["name"] / entry["version"]
    shutil.copytree(market / source, root)
    key = f"{entry['name']}@{manifest['name']}"
    (config / "plugins" / "installed_plugins.json").write_text(
        json.dumps(
            {
                "version": 2,
                "plugins": {key: [{"scope": "user", "installPath": str(root), "version": entry["version"]}]},
            }
        )
    )
    (config / "settings.json").write_text(json.dumps({"enabledPlugins": {key: True}}))
    return root


def expand(text: str, root: Path) -> str:
    return text.replace("${CLAUDE_PLUGIN_ROOT}", str(root))


def test_the_marketplace_lists_the_plugin_at_pybrains_version() -> None:
    manifest = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    assert manifest["owner"]["name"]
    (entry,) = manifest["plugins"]
    plugin = json.loads(
        (REPO / entry["source"] / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8")
    )
    assert plugin["name"] == entry["name"] == "pybrain"
    assert plugin["version"] == entry["version"] == pybrain.__version__
    # the shipped files are what pybrain.wire writes
    assert (
        json.loads((REPO / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8")) == plugin_hooks()
    )
    assert json.loads((REPO / "plugin" / ".mcp.json").read_text(encoding="utf-8")) == plugin_mcp()


def test_the_installed_plugin_wires_the_hooks_brain_wire_writes(tmp_path) -> None:
    root = install(tmp_path / "claude")
    hooks = json.loads((root / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    wired = hook_entries()
    assert sorted(hooks) == sorted(wired)  # the events `brain wire claude-code --hooks` writes
    for event, groups in hooks.items():
        ((handler,),) = [g["hooks"] for g in groups]
        name, timeout = CLAUDE_HOOKS[event]
        assert handler["type"] == "command" and handler["timeout"] == timeout == wired[event]["timeout"]
        assert handler.get("async", False) is (event == "PreCompact")
        words = shlex.split(expand(handler["command"], root))
        assert words == ["/bin/sh", str(root / "bin" / "brain"), "hook", name]
        assert (root / "bin" / "brain").is_file()
        assert _ours(handler) == name, "brain wire finds the plugin's handler as its own"
    server = json.loads((root / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["pybrain"]
    assert [server["command"], *(expand(a, root) for a in server["args"])] == [
        "/bin/sh",
        str(root / "bin" / "brain"),
        "mcp",
        "--repository",
    ]


def _shell(command: str, root: Path, env: dict[str, str], data: bytes = b"") -> subprocess.CompletedProcess:
    """A command as Claude Code runs a hook: through a shell, CLAUDE_PLUGIN_ROOT set, in the
    project's folder (the plugin's parent here: not this checkout, whose .venv the launcher
    would skip as the repository's own)."""
    environ = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    environ.update(env, CLAUDE_PLUGIN_ROOT=str(root))
    return subprocess.run(
        ["sh", "-c", command], input=data, capture_output=True, env=environ, timeout=120, cwd=root.parent
    )


def _mcp(root: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    """The MCP server's command as Claude Code starts it: no shell, ${CLAUDE_PLUGIN_ROOT} expanded."""
    server = json.loads((root / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["pybrain"]
    argv = [server["command"], *(expand(a, root) for a in server["args"]), *extra]
    environ = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    environ.update(env, CLAUDE_PLUGIN_ROOT=str(root))
    return subprocess.run(
        argv, capture_output=True, env=environ, timeout=120, stdin=subprocess.DEVNULL, cwd=root.parent
    )


def test_the_installed_plugins_commands_run(cli_env, conn, tmp_path) -> None:
    root = install(tmp_path / "claude")
    hooks = json.loads((root / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    transcript = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(FIXTURES / "transcript.jsonl", transcript)
    project = tmp_path / "billing"
    project.mkdir()
    env = {**cli_env, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}

    start = _shell(
        hooks["SessionStart"][0]["hooks"][0]["command"],
        root,
        env,
        payload("session-start", transcript, project),
    )
    assert start.returncode == 0, start.stderr
    assert json.loads(start.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    compact = _shell(
        hooks["PreCompact"][0]["hooks"][0]["command"], root, env, payload("pre-compact", transcript, project)
    )
    assert compact.returncode == 0 and b"5 created" in compact.stderr, compact.stderr
    end = _shell(
        hooks["SessionEnd"][0]["hooks"][0]["command"], root, env, payload("session-end", transcript, project)
    )
    assert end.returncode == 0 and b"no new turns" in end.stderr, end.stderr
    assert len(captured(conn)) == 5

    helped = _mcp(root, env, "--help")
    assert helped.returncode == 0, helped.stderr
    assert b"Usage:" in helped.stdout and b"mcp" in helped.stdout


@pytest.mark.skipif(os.name != "posix", reason="the launcher is a POSIX shell script")
def test_without_brain_installed_the_hooks_say_so_and_go_on(tmp_path) -> None:
    root = install(tmp_path / "claude")
    hooks = json.loads((root / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "nobody"), "BRAIN_COMMAND": ""}
    out = _shell(hooks["SessionStart"][0]["hooks"][0]["command"], root, bare, b"{}")
    assert out.returncode == 0 and out.stdout == b""
    assert b"pybrain plugin: no brain command found" in out.stderr
    out = _mcp(root, bare)
    assert out.returncode == 127


@pytest.mark.skipif(os.name != "posix", reason="the launcher is a POSIX shell script")
@pytest.mark.parametrize(
    "path",
    [
        "::/usr/bin:/bin",
        ":/usr/bin:/bin",
        "/usr/bin:/bin:",
        ".:/usr/bin:/bin",
        "bin:/usr/bin:/bin",
        "/usr/bin:.:/bin",
    ],
)
def test_the_launcher_never_runs_a_repositorys_own_brain(tmp_path, path) -> None:
    """A hook runs in the repository's folder: with an empty, `.` or relative entry in PATH,
    `command -v brain` would find the repository's ./brain (or bin/brain) and run it."""
    root = install(tmp_path / "claude")
    repo = tmp_path / "repo"
    (repo / "bin").mkdir(parents=True)
    marker = tmp_path / "ran"
    for planted in (repo / "brain", repo / "bin" / "brain"):
        planted.write_text(f"#!/bin/sh\necho planted > {marker}\n")
        planted.chmod(0o755)
    env = {"PATH": path, "HOME": str(tmp_path / "nobody"), "BRAIN_COMMAND": ""}
    out = subprocess.run(
        ["sh", str(root / "bin" / "brain"), "hook", "session-start"],
        input=b"{}",
        capture_output=True,
        env=env,
        cwd=repo,
        timeout=30,
    )
    print(f"PATH={path!r}: planted brain ran: {marker.exists()}")
    assert not marker.exists()
    assert out.returncode == 0 and b"no brain command found" in out.stderr


@pytest.mark.skipif(os.name != "posix", reason="the launcher is a POSIX shell script")
def test_the_launcher_finds_the_readmes_install_from_a_clone(tmp_path) -> None:
    root = install(tmp_path / "claude")
    home = tmp_path / "home"
    (home / ".pybrain" / "bin").mkdir(parents=True)
    brain = home / ".pybrain" / "bin" / "brain"
    brain.write_text('#!/bin/sh\necho "installed brain $*"\n')
    brain.chmod(0o755)
    out = subprocess.run(
        ["sh", str(root / "bin" / "brain"), "hook", "session-start"],
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
        timeout=30,
    )
    assert out.stdout == b"installed brain hook session-start\n"
