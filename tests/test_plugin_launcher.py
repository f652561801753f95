"""The plugin's launcher (plugin/bin/brain) runs only a `brain` outside the repository.

A hook and the plugin's MCP server run in the session's folder: a repository that plants a
`brain` (or a `sh`, `dirname`, `git`, ... that a launcher might look up) where PATH or
BRAIN_COMMAND leads must not get it run. Each way of planting one is tried three ways: the
launcher file as Claude Code's and Cursor's hooks run it, and the script inline as Codex
starts the plugin's MCP server (`/bin/sh -c SCRIPT brain mcp --repository`, from
plugin_mcp("codex")). Every planted program writes a mark; the installed `brain` (outside
the repository) says it ran and with which PATH. Each case prints what was tried and what ran.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pybrain.launcher import SCRIPT
from pybrain.wire import PLUGIN_FILES, plugin_hooks, plugin_mcp

REPO = Path(__file__).resolve().parent.parent
LAUNCHER = REPO / "plugin" / "bin" / "brain"
# The programs a shell script might look up on PATH: a planted one of each writes a mark.
PLANTED = ("brain", "sh", "dirname", "basename", "readlink", "realpath", "git", "pwd", "test", "[", "env")

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the launcher is a POSIX shell script")


def test_the_launcher_file_is_the_script_pybrain_writes_inline() -> None:
    assert LAUNCHER.read_text(encoding="utf-8") == SCRIPT
    server = plugin_mcp("codex")["mcpServers"]["pybrain"]
    assert server == {"command": "/bin/sh", "args": ["-c", SCRIPT, "brain", "mcp", "--repository"]}
    for harness in PLUGIN_FILES:
        assert plugin_mcp(harness)["mcpServers"]["pybrain"]["command"] == "/bin/sh"
        hooks = plugin_hooks(harness)["hooks"]
        commands = [h["command"] for groups in hooks.values() for g in groups for h in g.get("hooks", [g])]
        assert commands and all(c.startswith('/bin/sh "${') for c in commands), commands


def plant(folder: Path, marks: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        program = folder / name
        program.write_text(f'#!/bin/sh\necho "{folder}/{name}" >> "{marks}"\nexit 0\n')
        program.chmod(0o755)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A repository with `brain` (and the rest) planted in its root, bin/, node_modules/.bin
    and a subfolder; a link outside it to its bin/; a `brain` installed outside it."""
    repo = tmp_path / "work" / "shop"
    (repo / ".git").mkdir(parents=True)
    marks = tmp_path / "marks"
    for folder in (repo, repo / "bin", repo / "node_modules" / ".bin", repo / "src"):
        plant(folder, marks)
    (tmp_path / "link").symlink_to(repo / "bin")
    installed = tmp_path / "opt" / "pybrain" / "bin"
    installed.mkdir(parents=True)
    brain = installed / "brain"
    brain.write_text('#!/bin/sh\necho "installed brain ran: $*"\necho "PATH=$PATH"\n')
    brain.chmod(0o755)
    return {"repo": repo, "marks": marks, "installed": installed, "tmp": tmp_path}


def launch(
    way: str, world: dict[str, Path], path: str, cwd: Path, brain_command: str = ""
) -> subprocess.CompletedProcess:
    env = {"PATH": path, "HOME": str(world["tmp"] / "home"), "BRAIN_COMMAND": brain_command}
    if way == "file":
        argv = ["/bin/sh", str(LAUNCHER), "hook", "session-start"]
    else:
        server = plugin_mcp("codex")["mcpServers"]["pybrain"]
        argv = [server["command"], *server["args"][:3], "hook", "session-start"]
    return subprocess.run(argv, input=b"{}", capture_output=True, env=env, cwd=cwd, timeout=30)


def planted_ran(world: dict[str, Path]) -> list[str]:
    marks = world["marks"]
    return marks.read_text(encoding="utf-8").split() if marks.exists() else []


# Each way a repository gets its own `brain` onto the launcher's way: (name, PATH entries
# placed before the installed brain's folder, with {repo}, {tmp} filled in; cwd below repo).
PLANTINGS = [
    ("empty entry", ["", ""], "."),
    ("dot", ["."], "."),
    ("relative bin", ["bin"], "."),
    ("relative node_modules/.bin", ["node_modules/.bin"], "."),
    ("relative parent from a subfolder", ["..", "../bin"], "src"),
    ("absolute node_modules/.bin (npm puts it first)", ["{repo}/node_modules/.bin"], "."),
    ("absolute node_modules/.bin from a subfolder", ["{repo}/node_modules/.bin"], "src"),
    ("absolute repository root", ["{repo}"], "."),
    ("a glob reaching the repository", ["{tmp}/work/sh*p/bin", "{tmp}/work/*/node_modules/.bin"], "."),
    ("a glob of every folder", ["{tmp}/*/*/bin"], "."),
    ("/proc/self/cwd", ["/proc/self/cwd", "/proc/self/cwd/bin"], "."),
    ("/proc/self/cwd from a subfolder", ["/proc/self/cwd", "/proc/self/cwd/../bin"], "src"),
    ("a link outside into the repository", ["{tmp}/link"], "."),
    ("dot segments", ["{repo}/src/../bin", "{tmp}/work/./shop/node_modules/.bin"], "."),
]


@pytest.mark.parametrize("way", ["file", "inline"])
@pytest.mark.parametrize(("name", "entries", "where"), PLANTINGS, ids=[p[0] for p in PLANTINGS])
def test_a_brain_planted_in_the_repository_never_runs(world, way, name, entries, where) -> None:
    fill = {"repo": str(world["repo"]), "tmp": str(world["tmp"])}
    path = ":".join([e.format(**fill) for e in entries] + [str(world["installed"]), "/usr/bin", "/bin"])
    out = launch(way, world, path, world["repo"] / where)
    ran = planted_ran(world)
    said = out.stdout.decode()
    print(
        f"[{way}] {name}: PATH={path!r} cwd={where}: planted ran: {ran or 'nothing'}; {said.splitlines()[:1]}"
    )
    assert ran == [], f"{name}: {ran}"
    assert out.returncode == 0, out.stderr
    assert said.startswith("installed brain ran: hook session-start"), (said, out.stderr)
    # brain itself gets PATH without the entries that lead into the repository
    passed = said.split("PATH=", 1)[1].strip().split(":")
    assert str(world["installed"]) in passed
    assert all(p.startswith("/") and "node_modules" not in p and "/proc/" not in p for p in passed), passed
    assert not any(p.startswith(str(world["repo"])) or p == str(world["tmp"] / "link") for p in passed), (
        passed
    )


BRAIN_COMMANDS = [
    ("relative", "brain"),
    ("dot", "./brain"),
    ("relative bin", "bin/brain"),
    ("absolute inside", "{repo}/node_modules/.bin/brain"),
    ("/proc/self/cwd", "/proc/self/cwd/brain"),
    ("a link outside into the repository", "{tmp}/link/brain"),
]


@pytest.mark.parametrize("way", ["file", "inline"])
@pytest.mark.parametrize(("name", "command"), BRAIN_COMMANDS, ids=[c[0] for c in BRAIN_COMMANDS])
def test_brain_command_runs_only_when_absolute_and_outside_the_repository(world, way, name, command) -> None:
    command = command.format(repo=world["repo"], tmp=world["tmp"])
    path = f"{world['installed']}:/usr/bin:/bin"
    out = launch(way, world, path, world["repo"], brain_command=command)
    ran = planted_ran(world)
    said = out.stderr.decode().strip()
    print(f"[{way}] BRAIN_COMMAND={command!r} ({name}): planted ran: {ran or 'nothing'}; {said}")
    assert ran == []
    assert out.returncode == 0 and out.stdout == b"", "a hook goes on without brain"
    assert b"pybrain plugin: not run: BRAIN_COMMAND=" in out.stderr


@pytest.mark.parametrize("way", ["file", "inline"])
def test_an_absolute_brain_command_outside_the_repository_runs(world, way) -> None:
    out = launch(way, world, "/usr/bin:/bin", world["repo"], brain_command=str(world["installed"] / "brain"))
    assert out.stdout.startswith(b"installed brain ran: hook session-start"), out.stderr
    assert planted_ran(world) == []


@pytest.mark.parametrize("way", ["file", "inline"])
def test_outside_any_repository_the_working_folders_own_brain_is_skipped(world, way) -> None:
    """A folder without .git: it is the one the session works in, and its brain is its own."""
    loose = world["tmp"] / "download"
    plant(loose / "node_modules" / ".bin", world["marks"])
    path = f"{loose}/node_modules/.bin:{world['installed']}:/usr/bin:/bin"
    out = launch(way, world, path, loose)
    assert planted_ran(world) == []
    assert out.stdout.startswith(b"installed brain ran:"), out.stderr


def test_a_folder_of_home_stays_usable_from_home(world) -> None:
    """HOME is no repository: from HOME (or /) a brain installed under it still runs."""
    home = world["tmp"] / "home"
    installed = home / ".local" / "bin"
    installed.mkdir(parents=True)
    brain = installed / "brain"
    brain.write_text('#!/bin/sh\necho "home brain ran"\n')
    brain.chmod(0o755)
    for cwd in (home, Path("/")):
        out = launch("file", world, f"{installed}:/usr/bin:/bin", cwd)
        assert out.stdout.startswith(b"home brain ran"), (cwd, out.stderr)


def test_when_nothing_outside_is_found_the_launcher_says_what_it_skipped(world) -> None:
    path = f"{world['repo']}/node_modules/.bin:.:/usr/bin:/bin"
    out = launch("file", world, path, world["repo"])
    assert planted_ran(world) == []
    assert out.returncode == 0 and out.stdout == b""
    err = out.stderr.decode()
    assert "no brain command found" in err and "node_modules/.bin (inside the repository" in err, err
    assert "'.' (relative)" in err
