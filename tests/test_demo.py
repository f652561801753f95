"""`make demo`'s script: a database in a folder of its own every run, nothing else removed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_demo_makes_its_own_folder_and_removes_none() -> None:
    # (a short folder: the database's socket path is at most 107 bytes)
    with tempfile.TemporaryDirectory(prefix="pb-") as short:
        _demo(Path(short))


def _demo(tmp_path: Path) -> None:
    other = tmp_path / "pybrain-demo"  # what a fixed folder of an earlier demo, or of anyone, held
    other.mkdir()
    (other / "keep.txt").write_text("not the demo's")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")},
        "BRAIN": str(Path(sys.executable).parent / "brain"),
        "BRAIN_EMBEDDER": "hash",
        "BRAIN_EMBED_SERVER": "off",
        "TMPDIR": str(tmp_path),
    }
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh")], env=env, capture_output=True, text=True, timeout=300
    )
    (made,) = [p for p in tmp_path.iterdir() if p.name.startswith("pybrain-demo.")]
    try:
        assert out.returncode == 0, out.stderr
        assert f"data in {made / 'pgdata'}" in out.stdout and "created #1 rule" in out.stdout
        assert (other / "keep.txt").read_text() == "not the demo's"
        refused = subprocess.run(
            ["bash", str(ROOT / "scripts" / "demo.sh")],
            env={**env, "DEMO_HOME": str(other)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 2 and "not empty" in refused.stderr
        assert (other / "keep.txt").exists()
    finally:
        subprocess.run(
            [env["BRAIN"], "db", "stop"],
            env={**env, "BRAIN_HOME": str(made)},
            capture_output=True,
            timeout=120,
        )
