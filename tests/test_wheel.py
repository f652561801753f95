"""The wheel as a user installs it: built from this tree, installed into a clean virtual
environment outside it, and `brain` run from there with nothing of the checkout in reach.

It fetches the runtime dependencies through pip (from its cache or the package index) and
starts its own embedded PostgreSQL: about a minute. Deselect it with `-m "not wheel"`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTION = "pybrain-memory"

pytestmark = pytest.mark.wheel


def _run(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _pip_env() -> dict[str, str]:
    """pip's own settings (index, cache, certificates) and nothing of pybrain's or the checkout's."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("BRAIN_", "PYTHON", "VIRTUAL_ENV"))}


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory of its own, not under pytest's basetemp, which a concurrent pytest run may
    prune while this slow test still runs a server from it."""
    with tempfile.TemporaryDirectory(prefix="pybrain-wheel-", ignore_cleanup_errors=True) as tmp:
        yield Path(tmp)


def test_the_wheel_installs_by_name_and_runs_with_no_checkout(outside: Path) -> None:
    tmp_path = outside
    clock = time.perf_counter()
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        _pip_env(),
        tmp_path,
    )
    (wheel,) = dist.glob("*.whl")
    assert wheel.name.startswith("pybrain_memory-")
    names = set(zipfile.ZipFile(wheel).namelist())
    migrations = sorted(p.name for p in (ROOT / "sql" / "migrations").glob("*.sql"))
    functions = sorted(p.name for p in (ROOT / "sql" / "functions").glob("*.sql"))
    assert {f"pybrain/sql/migrations/{m}" for m in migrations} <= names
    assert {f"pybrain/sql/functions/{f}" for f in functions} <= names
    assert {str(p.relative_to(ROOT)) for p in (ROOT / "pybrain" / "templates").iterdir()} <= names
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert f"Name: {DISTRIBUTION}\n" in text
    assert "Provides-Extra: local" in text and "sentence-transformers" in text
    built = time.perf_counter() - clock

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], _pip_env(), tmp_path)
    python = venv / "bin" / "python"
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile", str(wheel)],
        _pip_env(),
        tmp_path,
    )
    installed = time.perf_counter() - clock - built

    home = tmp_path / "home"
    env = {**_pip_env(), "BRAIN_HOME": str(home), "BRAIN_EMBEDDER": "hash", "BRAIN_EMBED_SERVER": "off"}
    brain = str(venv / "bin" / "brain")
    where = _run(
        [str(python), "-c", "import pybrain, pybrain.db as d; print(pybrain.__file__); print(d.sql_dir())"],
        env,
        tmp_path,
    ).split()
    assert all(Path(p).is_relative_to(venv) for p in where), where
    try:
        init = _run([brain, "init"], env, tmp_path)
        assert f"data in {home / 'pgdata'}" in init
        assert all(m in init for m in migrations) and f"{len(functions)} function files applied" in init
        stored = json.loads(
            _run(
                [
                    brain,
                    "remember",
                    "fact",
                    "Invoices render with WeasyPrint",
                    "Since the 2.3 release.",
                    "--json",
                ],
                env,
                tmp_path,
            )
        )
        assert stored["action"] == "created"
        hits = json.loads(_run([brain, "search", "how are invoices rendered", "--json"], env, tmp_path))
        assert [h["id"] for h in hits] == [stored["memory_id"]]
        listed = _run(
            [
                str(python),
                "-c",
                "import anyio; from pybrain.mcp import Service, build_server, schema_tokens;"
                "print(len(anyio.run(build_server(Service(None)).list_tools)))",
            ],
            env,
            tmp_path,
        )
        assert int(listed) == 10
    finally:
        subprocess.run([brain, "db", "stop"], env=env, cwd=tmp_path, capture_output=True, timeout=120)
    print(
        f"\nwheel: built in {built:.0f} s, installed with its dependencies in {installed:.0f} s, "
        f"init + remember + search in {time.perf_counter() - clock - built - installed:.0f} s"
    )


# The previous release, whose homes the README's "Upgrading" must carry over.
PREVIOUS = "12d2999"


def _readme_block(heading: str) -> list[str]:
    """The shell lines of the first ```sh block after a README heading (continuations joined)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    block = after[after.index("```sh\n") + 6 :]
    block = block[: block.index("```")]
    return [line.split("  #")[0].strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def test_the_readme_upgrades_a_home_of_the_previous_release(outside: Path) -> None:
    """A home made by the previous release (its wheel, built from its commit, installed as its
    README said into ~/.pybrain, `brain` linked onto PATH), upgraded by this README's
    "Upgrading" lines through a shell: the new code runs, and memories, sessions and
    handoffs are kept."""
    tmp = outside
    home = tmp / "user"
    old_tree, new_tree = tmp / "old", tmp / "clone"
    for tree, ref in ((old_tree, PREVIOUS), (new_tree, None)):
        tree.mkdir()
        if ref:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        else:  # this checkout as it is, its changes included: what `git pull` brings
            files = subprocess.run(
                ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
            ).stdout.split(b"\0")
            for name in filter(None, files):
                source = ROOT / name.decode()
                if source.is_file():
                    (tree / name.decode()).parent.mkdir(parents=True, exist_ok=True)
                    (tree / name.decode()).write_bytes(source.read_bytes())
    env = {
        **_pip_env(),
        "HOME": str(home),
        "BRAIN_HOME": str(tmp / "data"),
        "BRAIN_EMBEDDER": "hash",
        "BRAIN_EMBED_SERVER": "off",
        "PATH": f"{home}/.local/bin:/usr/bin:/bin",
    }
    home.mkdir()

    def sh(command: str, cwd: Path = home, timeout: float = 600) -> str:
        return _run(["sh", "-c", command], env, cwd, timeout)

    # the previous release, installed as its README said, with brain on PATH
    sh(f"{sys.executable} -m venv ~/.pybrain && ~/.pybrain/bin/pip wheel -q --no-deps -w dist .", old_tree)
    (old_wheel,) = (old_tree / "dist").glob("*.whl")
    sh(
        f"~/.pybrain/bin/pip install -q '{old_wheel}' && mkdir -p ~/.local/bin"
        " && ln -s ~/.pybrain/bin/brain ~/.local/bin/brain"
    )
    project = home / "shop"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    try:
        sh("brain init")
        old_version = sh("brain --version")
        sh('brain remember fact "Invoices render with WeasyPrint" "Since the 2.3 release." --project shop')
        sh("brain boot --source claude --project shop --task 'render invoices'", project)
        sh(
            "brain end --source claude --project shop --handoff 'Invoice fonts fixed; next: page numbers.'",
            project,
        )
        sh(
            "brain wire claude-code --hooks --settings .claude/settings.json", project
        )  # as that README said then

        upgrade = _readme_block("### Upgrading")
        assert upgrade[0].startswith("git pull && "), upgrade
        sh(upgrade[0].removeprefix("git pull && "), new_tree)
        sh(upgrade[1], project)  # the hooks wired again

        new_version = sh("brain --version")
        built = _run(
            [
                str(home / ".pybrain/bin/python"),
                "-c",
                "from pybrain.build import wheel_version; print(wheel_version())",
            ],
            env,
            new_tree,
        )
        assert new_version.split() == ["pybrain", built.strip()] and new_version != old_version
        assert "+b" in new_version
        # kept: the memory, the session and its handoff, which the next start shows
        hits = json.loads(sh("brain search 'how are invoices rendered' --project shop --json"))
        assert [h["headline"] for h in hits] == ["Invoices render with WeasyPrint"]
        handed = _run(
            [
                str(home / ".pybrain/bin/python"),
                "-c",
                "from pybrain.client import Brain\n"
                "with Brain.open() as b:\n"
                "    print([(r['session_id'] is not None, r['text']) for r in b.call('recent_handoffs')])",
            ],
            env,
            home,
        )
        assert handed.strip() == "[(True, 'Invoice fonts fixed; next: page numbers.')]", handed
        boot = sh("brain boot --source claude --project shop", project)
        assert "Invoice fonts fixed; next: page numbers." in boot
        # the hooks stand once, in the file this README wires, and the new code runs them
        settings = [project / ".claude" / name for name in ("settings.json", "settings.local.json")]
        commands = [
            h["command"]
            for path in settings
            if path.exists()
            for groups in json.loads(path.read_text())["hooks"].values()
            for g in groups
            for h in g["hooks"]
        ]
        assert sorted(c.rsplit(" hook ", 1)[1] for c in commands) == [
            "pre-compact",
            "session-end",
            "session-start",
        ]
        start = next(c for c in commands if c.endswith("hook session-start"))
        payload = json.dumps(
            {"session_id": "u1", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
        )
        out = subprocess.run(
            ["sh", "-c", start],
            input=payload,
            env={**env, "CLAUDE_PROJECT_DIR": str(project)},
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0 and "hook:" not in out.stderr, out.stderr
        assert "Invoice fonts fixed" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    finally:
        subprocess.run(["sh", "-c", "brain db stop"], env=env, cwd=home, capture_output=True, timeout=120)
        _end_processes_under(tmp)


def _end_processes_under(folder: Path) -> None:
    """End what a test's hooks left running from its folder (the warm hook process waits
    BRAIN_HOOK_SERVER_IDLE for the next hook, as it does for a user)."""
    import signal

    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            args = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if str(folder).encode() in args:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGTERM)
