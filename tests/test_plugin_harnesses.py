"""The plugin in Codex and Cursor: one folder (plugin/) with a manifest for each harness.

Codex finds the repository's marketplace at .agents/plugins/marketplace.json (else
.claude-plugin/marketplace.json), the plugin's manifest at .codex-plugin/plugin.json (before
.claude-plugin/plugin.json), installs the folder under plugins/cache/<marketplace>/<plugin>/
<version>/ of its home, runs the hooks the manifest's `hooks` file names through a shell with
PLUGIN_ROOT (and CLAUDE_PLUGIN_ROOT) in their environment, and starts the MCP server of the
manifest's `mcpServers` file as written (no variable expanded; a relative cwd would be the
plugin's folder) in the session's folder. Cursor finds .cursor-plugin/marketplace.json and
.cursor-plugin/plugin.json, expands ${CURSOR_PLUGIN_ROOT} in the hook commands and the MCP
server's arguments, and starts the server in the workspace. The tests lay the plugin out as
each harness does and run what it wires, fed each harness's JSON (tests/fixtures/hooks/).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import test_codex
import test_cursor
from helpers import remember, scalar
from mcp import ClientSession, StdioServerParameters, stdio_client

import pybrain
from pybrain.wire import PLUGIN_FILES, hook_entries, plugin_hooks, plugin_mcp

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = str(Path(sys.executable).parent)
# Where each harness looks for a repository's marketplace and a plugin's manifest, in order.
MARKETPLACES = {
    "claude-code": [".claude-plugin/marketplace.json"],
    "codex": [".agents/plugins/marketplace.json", ".claude-plugin/marketplace.json"],
    "cursor": [".cursor-plugin/marketplace.json"],
}
MANIFESTS = {
    "claude-code": [".claude-plugin/plugin.json"],
    "codex": [".codex-plugin/plugin.json", ".claude-plugin/plugin.json"],
    "cursor": [".cursor-plugin/plugin.json"],
}


def first(root: Path, candidates: list[str]) -> Path:
    return next(root / c for c in candidates if (root / c).is_file())


def _relative(root: Path, value: str) -> Path:
    """A manifest's path: './'-prefixed, inside the plugin's folder (Codex refuses others)."""
    assert value.startswith("./") and ".." not in Path(value).parts, value
    return root / value


def marketplace_plugin(harness: str) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """The marketplace the harness finds in this repository, its one plugin entry, and the
    plugin's source folder."""
    market = json.loads(first(REPO, MARKETPLACES[harness]).read_text(encoding="utf-8"))
    (entry,) = market["plugins"]
    source = entry["source"]
    path = source["path"] if isinstance(source, dict) else source
    if isinstance(source, dict):
        assert source["source"] == "local" and path.startswith("./")
    return market, entry, (REPO / path).resolve()


def install(harness: str, home: Path) -> Path:
    """The plugin installed from the repository's marketplace as the harness lays it out;
    the installed folder."""
    market, entry, source = marketplace_plugin(harness)
    manifest = json.loads(first(source, MANIFESTS[harness]).read_text(encoding="utf-8"))
    root = home / "plugins" / "cache" / market["name"] / entry["name"] / manifest["version"]
    shutil.copytree(source, root)
    if harness == "codex":
        (home / "config.toml").write_text(f'[plugins."{entry["name"]}@{market["name"]}"]\nenabled = true\n')
    return root


def component(root: Path, harness: str, field: str) -> dict[str, Any]:
    """The hooks or MCP file the manifest names (none named: the harness's default file)."""
    manifest = json.loads(first(root, MANIFESTS[harness]).read_text(encoding="utf-8"))
    default = "./" + PLUGIN_FILES["claude-code"][field == "mcpServers"]
    return json.loads(_relative(root, manifest.get(field, default)).read_text(encoding="utf-8"))


def commands(root: Path, harness: str) -> dict[str, str]:
    """Each hook event's command as the installed plugin wires it."""
    hooks = component(root, harness, "hooks")["hooks"]
    if harness == "cursor":
        return {event: handler["command"] for event, (handler,) in hooks.items()}
    return {event: groups[0]["hooks"][0]["command"] for event, groups in hooks.items()}


def harness_env(harness: str, root: Path, env: dict[str, str]) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    environ.update(env, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if harness == "codex":
        environ.update(PLUGIN_ROOT=str(root), CLAUDE_PLUGIN_ROOT=str(root))
    else:
        environ.update(CURSOR_PLUGIN_ROOT=str(root))
    return environ


def run(harness: str, command: str, root: Path, env: dict[str, str], data: bytes, cwd: Path) -> Any:
    """A hook as the harness runs it: Cursor expands its variable in the command, Codex gives
    it in the environment; a shell runs the command, the JSON on stdin."""
    if harness == "cursor":
        command = command.replace("${CURSOR_PLUGIN_ROOT}", str(root))
    return subprocess.run(
        ["sh", "-c", command],
        input=data,
        capture_output=True,
        env=harness_env(harness, root, env),
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.parametrize("harness", ["claude-code", "codex", "cursor"])
def test_each_harness_finds_the_plugin_and_the_files_pybrain_wire_writes(harness) -> None:
    market, entry, source = marketplace_plugin(harness)
    assert source == (REPO / "plugin").resolve(), "one folder for the three harnesses"
    manifest_path = first(source, MANIFESTS[harness])
    assert manifest_path.parent.name == {"claude-code": ".claude-plugin"}.get(harness, f".{harness}-plugin")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    assert manifest["name"] == entry["name"] == market["name"] == "pybrain"
    assert manifest["version"] == pybrain.__version__
    hooks_file, mcp_file = PLUGIN_FILES[harness]
    if harness != "claude-code":  # Claude Code reads its files without being told
        assert _relative(source, manifest["hooks"]) == source / hooks_file
        assert _relative(source, manifest["mcpServers"]) == source / mcp_file
    assert json.loads((source / hooks_file).read_text(encoding="utf-8")) == plugin_hooks(harness)
    assert json.loads((source / mcp_file).read_text(encoding="utf-8")) == plugin_mcp(harness)
    # the events `brain wire HARNESS --hooks` writes (the prompt hook is opt-in there too)
    assert sorted(commands(source, harness)) == sorted(hook_entries(harness=harness))
    assert (source / "bin" / "brain").is_file()


def repository(conn: Any, tmp_path: Path, transcript: Path, name: str) -> tuple[Path, Path]:
    """A git repository (billing) whose memory holds a rule, and the harness's transcript
    fixture copied beside it under the name the harness gives it."""
    folder = tmp_path / "billing"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    shutil.copy(transcript, tmp_path / name)
    remember(conn, kind="rule", severity="BLOCKER", headline="Never rerun the billing export by hand")
    return folder, tmp_path / name


def test_codex_runs_the_installed_plugins_hooks_and_server(cli_env, conn, tmp_path) -> None:
    root = install("codex", tmp_path / "codex-home")
    wired = commands(root, "codex")
    assert set(wired) == {"SessionStart", "PreCompact", "Stop"}
    name = f"rollout-2026-11-20T09-00-00-{test_codex.SESSION}.jsonl"
    folder, rollout = repository(conn, tmp_path, test_codex.FIXTURES / "rollout.jsonl", name)

    def hook(event: str, name: str) -> Any:
        data = test_codex.payload(name, rollout, folder)
        out = run("codex", wired[event], root, cli_env, data, folder)
        assert out.returncode == 0 and b"hook:" not in out.stderr, out.stderr
        return out

    start = json.loads(hook("SessionStart", "session-start").stdout)["hookSpecificOutput"]
    assert "Never rerun the billing export by hand" in start["additionalContext"]
    assert b"2 created" in hook("PreCompact", "pre-compact").stderr
    assert hook("Stop", "session-end").stdout == b""
    assert [r["project"] for r in test_codex.captured(conn)] == ["billing", "billing"]
    (handoff,) = conn.execute("SELECT handoff FROM brain.session").fetchone()
    assert "lacked s3:PutObject" in handoff

    server = component(root, "codex", "mcpServers")["mcpServers"]["pybrain"]
    assert "cwd" not in server, "a relative cwd is the plugin's folder: the repository would be lost"
    argv = [server["command"], *server["args"]]
    found = anyio.run(mcp_session, "Codex", argv, harness_env("codex", root, cli_env), folder)
    assert "Codex's memory" in found
    stored = "SELECT project FROM brain.memory WHERE headline LIKE 'Codex''s memory%'"
    assert scalar(conn, stored) == "billing"


def test_cursor_runs_the_installed_plugins_hooks_and_server(cli_env, conn, tmp_path) -> None:
    root = install("cursor", tmp_path / "cursor-home")
    wired = commands(root, "cursor")
    assert set(wired) == {"sessionStart", "preCompact", "stop", "sessionEnd"}
    name = f"{test_cursor.CONVERSATION}.jsonl"
    folder, transcript = repository(conn, tmp_path, test_cursor.FIXTURES / "transcript.jsonl", name)

    def hook(event: str, name: str, **changes: object) -> Any:
        data = test_cursor.payload(name, transcript, folder, **changes)
        out = run("cursor", wired[event], root, cli_env, data, folder)
        assert out.returncode == 0 and b"hook:" not in out.stderr, out.stderr
        return out

    start = json.loads(hook("sessionStart", "session-start").stdout)
    assert "Never rerun the billing export by hand" in start["additional_context"]
    hook("preCompact", "pre-compact")
    hook("stop", "session-end")
    hook("sessionEnd", "session-end-final")
    stored = test_cursor.captured(conn)
    assert stored and {project for _, _, project in stored} == {"billing"}
    assert len({ref for ref, _, _ in stored}) == len(stored), "each turn stored once"

    server = component(root, "cursor", "mcpServers")["mcpServers"]["pybrain"]
    argv = [server["command"], *(a.replace("${CURSOR_PLUGIN_ROOT}", str(root)) for a in server["args"])]
    found = anyio.run(mcp_session, "Cursor", argv, harness_env("cursor", root, cli_env), folder)
    assert "Cursor's memory" in found
    stored = "SELECT project FROM brain.memory WHERE headline LIKE 'Cursor''s memory%'"
    assert scalar(conn, stored) == "billing"


async def mcp_session(harness: str, argv: list[str], env: dict[str, str], cwd: Path) -> str:
    """The plugin's MCP server started as the harness starts it, in the session's folder: a
    fact remembered without naming a project, then searched; what the search shows."""
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env={**env, "BRAIN_EMBED_SERVER": "off"}, cwd=str(cwd)
    )
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            result = await s.call_tool(
                "remember", {"kind": "fact", "headline": f"{harness}'s memory is the billing repository's"}
            )
            assert not result.is_error, result.content[0].text
            result = await s.call_tool("search", {"query": f"{harness} memory billing repository"})
            assert not result.is_error, result.content[0].text
            return result.content[0].text


@pytest.mark.skipif(os.name != "posix", reason="the launcher is a POSIX shell script")
@pytest.mark.parametrize("harness", ["codex", "cursor"])
def test_without_brain_installed_the_plugins_hooks_say_so_and_go_on(harness, tmp_path) -> None:
    root = install(harness, tmp_path / "home")
    start = next(c for e, c in commands(root, harness).items() if e.lower() == "sessionstart")
    bare = {"HOME": str(tmp_path / "nobody"), "BRAIN_COMMAND": ""}
    env = {**harness_env(harness, root, bare), "PATH": "/usr/bin:/bin"}
    command = start.replace("${CURSOR_PLUGIN_ROOT}", str(root))
    out = subprocess.run(["sh", "-c", command], input=b"{}", capture_output=True, env=env, timeout=60)
    assert out.returncode == 0 and out.stdout == b""
    assert b"pybrain plugin: no brain command found" in out.stderr
