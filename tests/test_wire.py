"""`brain wire` as a new user runs it: from a shell in a repository, with a fresh HOME, and
the servers it wires started the way each client starts them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

BRAIN = str(Path(sys.executable).parent / "brain")

# client -> the file `brain wire CLIENT --write FILE` writes here (~ is the test's HOME)
FILES = {
    "claude-code": ".mcp.json",
    "cursor": ".cursor/mcp.json",
    "vscode": ".vscode/mcp.json",
    "generic": "mcp.json",
    "windsurf": "~/.codeium/windsurf/mcp_config.json",
    "claude-desktop": "~/.config/Claude/claude_desktop_config.json",
    "codex": "~/.codex/config.toml",
}
SHARED = {"claude-code", "cursor", "vscode", "generic"}


@pytest.fixture
def shell(cli_env: dict[str, str], tmp_path: Path):
    """A user's shell in a new git repository `shop` (in its src/ folder): a fresh HOME and a
    PATH without this brain on it. Returns (run, repository, env)."""
    repo = tmp_path / "shop"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {**cli_env, "HOME": str(home), "PATH": "/usr/bin:/bin", "BRAIN_EMBED_SERVER": "off"}

    def run(command: str, cwd: Path = repo) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )

    return run, repo, env


def _server(client: str, written: str) -> dict[str, Any]:
    if client == "codex":
        return tomllib.loads(written)["mcp_servers"]["pybrain"]
    config = json.loads(written)
    return config["servers" if client == "vscode" else "mcpServers"]["pybrain"]


def _expand(value: str, env: dict[str, str], folder: Path) -> str:
    """A config value as the clients expand it: ${VAR}, ${env:VAR}, ${workspaceFolder}."""
    value = value.replace("${workspaceFolder}", str(folder))
    return re.sub(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), value)


def test_every_wired_server_is_scoped_to_its_repository(shell, conn, tmp_path) -> None:
    run, repo, env = shell
    for client, file in FILES.items():
        out = run(f"{BRAIN} wire {client} --write {file}")
        assert out.returncode == 0, out.stderr
        written = Path(file.replace("~", env["HOME"])) if file.startswith("~") else repo / file
        server = _server(client, written.read_text())
        assert server["args"] == ["mcp", "--repository"], client
        if client in SHARED:
            text = written.read_text()
            assert str(tmp_path) not in text and "/.venv/" not in text, f"a machine path in {file}: {text}"
            assert server["command"] == "brain", client
            assert "ln -s" in out.stderr and "~/.local/bin/brain" in out.stderr, out.stderr
        # and the printed configuration is the same entry
        printed = run(f"{BRAIN} wire {client}")
        assert printed.returncode == 0, printed.stderr
        assert _server(client, printed.stdout) == server, client

    # The servers, started as Claude Code, Cursor and VS Code start them (the command on
    # the user's PATH, the references expanded; Cursor and VS Code elsewhere than the
    # repository), keep a memory that names no project in the repository.
    path = f"{Path(BRAIN).parent}:{env['PATH']}"

    async def remember(client: str, headline: str) -> None:
        server = _server(client, (repo / FILES[client]).read_text())
        server_env = {k: _expand(v, env, repo) for k, v in server.get("env", {}).items()}
        params = StdioServerParameters(
            command=server["command"],
            args=server["args"],
            env={**env, "PATH": path, **server_env},
            cwd=repo / "src" if client == "claude-code" else tmp_path,
        )
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                result = await s.call_tool("remember", {"kind": "fact", "headline": headline})
                assert not result.is_error, result.content[0].text

    for client, headline in (
        ("claude-code", "Checkout retries twice"),
        ("cursor", "Refunds settle in three days"),
        ("vscode", "Invoices are numbered per year"),
    ):
        anyio.run(remember, client, headline)
    projects = dict(conn.execute("SELECT headline, project FROM brain.memory").fetchall())
    assert projects == {
        "Checkout retries twice": "shop",
        "Refunds settle in three days": "shop",
        "Invoices are numbered per year": "shop",
    }


def test_hooks_in_files_a_team_commits_name_no_machine_path(shell, tmp_path) -> None:
    run, repo, _env = shell
    for client, file in (("codex", ".codex/hooks.json"), ("cursor", ".cursor/hooks.json")):
        out = run(f"{BRAIN} wire {client} --hooks")
        assert out.returncode == 0, out.stderr
        text = (repo / file).read_text()
        assert str(tmp_path) not in text, text
        assert '"brain hook session-start --source ' + client in text
    # Claude Code's hooks go to the settings of this machine, by this brain's path
    out = run(f"{BRAIN} wire claude-code --hooks")
    assert out.returncode == 0, out.stderr
    local = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert local["hooks"]["SessionStart"][0]["hooks"][0]["command"] == f"{BRAIN} hook session-start"


def _ours(settings: dict[str, Any]) -> list[str]:
    return [
        h["command"]
        for groups in settings.get("hooks", {}).values()
        for g in groups
        for h in g["hooks"]
        if " hook " in h["command"]
    ]


def test_rewiring_leaves_each_hook_once_across_claude_codes_settings(shell) -> None:
    """An older wiring put pybrain's hooks in .claude/settings.json; the wiring of now writes
    settings.local.json and takes its own entries out of settings.json, and only its own."""
    run, repo, env = shell
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"type": "command", "command": "echo started"}
    old = {
        "permissions": {"allow": ["Bash(make test)"]},
        "hooks": {
            "SessionStart": [
                {"hooks": [theirs, {"type": "command", "command": "/old/bin/brain hook session-start"}]}
            ],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "'/old/bin/brain' hook session-end"}]}],
            "PreCompact": [{"hooks": [{"type": "command", "command": "brain hook pre-compact --project x"}]}],
        },
    }
    settings.write_text(json.dumps(old, indent=2))
    out = run(f"{BRAIN} wire claude-code --hooks")
    assert out.returncode == 0, out.stderr
    assert f"pybrain hooks in {settings.relative_to(repo)}: removed" in out.stdout, out.stdout
    shared = json.loads(settings.read_text())
    assert shared == {"permissions": old["permissions"], "hooks": {"SessionStart": [{"hooks": [theirs]}]}}
    local = json.loads((repo / ".claude" / "settings.local.json").read_text())
    everywhere = _ours(shared) + _ours(local)
    assert sorted(c.rsplit(" hook ", 1)[1] for c in everywhere) == [
        "pre-compact",
        "session-end",
        "session-start",
    ]

    # wiring the shared file instead takes them out of the local one
    out = run(f"{BRAIN} wire claude-code --hooks --settings .claude/settings.json")
    assert out.returncode == 0, out.stderr
    assert _ours(json.loads((repo / ".claude" / "settings.local.json").read_text())) == []
    assert len(_ours(json.loads(settings.read_text()))) == 3
    # a second run changes nothing in either
    before = settings.read_text(), (repo / ".claude" / "settings.local.json").read_text()
    out = run(f"{BRAIN} wire claude-code --hooks --settings .claude/settings.json")
    assert "already up to date" in out.stdout and "removed" not in out.stdout
    assert (settings.read_text(), (repo / ".claude" / "settings.local.json").read_text()) == before

    # the user's settings, which serve every project, are left, and named
    user = Path(env["HOME"]) / ".claude" / "settings.json"
    user.parent.mkdir()
    user.write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [{"command": "brain hook session-start"}]}]}})
    )
    out = run(f"{BRAIN} wire claude-code --hooks --settings .claude/settings.json")
    assert f"also in {user}" in out.stderr
    assert len(_ours(json.loads(user.read_text()))) == 1
