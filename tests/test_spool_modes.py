"""The spool of the capture hooks (pybrain.hooks.spool): private whatever was there before
and whatever the umask, its transcript copies bounded, and a record that cannot be
written set aside after two tries instead of standing first in line for ever."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from pybrain.hooks import spool

ROOT = Path(__file__).resolve().parent.parent


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _turn(uuid: str) -> str:
    return json.dumps({"type": "user", "uuid": uuid, "message": {"role": "user", "content": f"turn {uuid}"}})


def test_a_spool_that_existed_is_made_private_and_records_are_0600(tmp_path: Path) -> None:
    (tmp_path / "spool" / "failed").mkdir(parents=True, mode=0o755)
    os.chmod(tmp_path / "spool", 0o755)
    os.chmod(tmp_path / "spool" / "failed", 0o755)
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(_turn("a") + "\n")
    old = os.umask(0)  # the most permissive umask: nothing is taken away from what is asked
    try:
        record = spool.keep(
            tmp_path, "session-end", {"session_id": "s", "transcript_path": str(transcript)}, {}, "/tmp", "t"
        )
    finally:
        os.umask(old)
    copy = Path(json.loads(record.read_text())["payload"]["transcript_path"])
    modes = {
        "spool": oct(_mode(tmp_path / "spool")),
        "record": oct(_mode(record)),
        "copies": oct(_mode(copy.parent)),
        "copy": oct(_mode(copy)),
    }
    print("tried: a 0755 spool, umask 0; got", modes)
    assert modes == {"spool": "0o700", "record": "0o600", "copies": "0o700", "copy": "0o600"}
    # a record set aside: spool/failed, which existed 0755, is made private too
    spool.drain(tmp_path, lambda r: (_ for _ in ()).throw(ValueError("refused")), print, "t")
    assert oct(_mode(tmp_path / "spool" / "failed")) == "0o700"
    assert [p.name for p in spool.set_aside(tmp_path)] == [record.name]


def test_the_transcript_copy_is_its_last_part(tmp_path: Path, monkeypatch) -> None:
    from pybrain.hooks import transcript

    monkeypatch.setattr(transcript, "MAX_BYTES", 1024, raising=False)
    source = tmp_path / "s.jsonl"
    source.write_text("".join(_turn(f"u{i:03d}") + "\n" for i in range(100)))
    record = spool.keep(
        tmp_path, "session-end", {"session_id": "s", "transcript_path": str(source)}, {}, "/tmp", "t"
    )
    copy = Path(json.loads(record.read_text())["payload"]["transcript_path"])
    print(
        f"tried: a {source.stat().st_size}-byte transcript, a 1024-byte limit; copied {copy.stat().st_size}"
    )
    assert copy.stat().st_size <= 1024
    text = copy.read_text()
    assert text.startswith('{"type"') and text.endswith(_turn("u099") + "\n")


class Outage:
    """A write that meets an outage each time, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, record: dict) -> None:
        self.calls += 1
        raise spool.Outage("the statement was cancelled")


def test_a_record_that_fails_twice_is_set_aside(tmp_path: Path) -> None:
    first = spool.keep(tmp_path, "session-end", {"session_id": "first"}, {}, "/tmp", "t")
    second = spool.keep(tmp_path, "session-end", {"session_id": "second"}, {}, "/tmp", "t")
    write = Outage()
    notices: list[str] = []
    for _ in range(2):
        assert spool.drain(tmp_path, write, notices.append, "t") == 0
    assert write.calls == 2, "each drain tried the first record, and stopped there"
    written: list[str] = []
    done = spool.drain(tmp_path, lambda r: written.append(r["payload"]["session_id"]), notices.append, "t")
    print("tried: a record whose write failed twice; then:", notices, written)
    assert done == 1 and written == ["second"], "the first is not tried a third time"
    assert [p.name for p in spool.set_aside(tmp_path)] == [first.name]
    assert any("tried 2 times" in n and "set aside" in n for n in notices)
    assert spool.pending(tmp_path) == [] and not second.exists()


def test_a_record_whose_writer_is_killed_is_set_aside_after_two_tries(tmp_path: Path) -> None:
    """A write that kills its process (OOM, a hard deadline) leaves no exception behind:
    the try is counted before it is made."""
    record = spool.keep(tmp_path, "session-end", {"session_id": "deadly"}, {}, "/tmp", "t")
    killer = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from pybrain.hooks import spool\n"
        "spool.drain(Path(sys.argv[1]), lambda r: os._exit(9), print, 't')\n"
    )
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", killer, str(tmp_path)],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
        )
        assert out.returncode == 9
    tried: list[dict] = []
    notices: list[str] = []
    spool.drain(tmp_path, tried.append, notices.append, "t")
    print("tried: two writers killed while writing the record; the third drain:", notices, tried)
    assert tried == []
    assert [p.name for p in spool.set_aside(tmp_path)] == [record.name]
    assert "set aside" in notices[0]


def test_brain_health_names_the_records_set_aside(cli_env, brain_cli) -> None:
    home = Path(cli_env["BRAIN_HOME"])
    record = spool.keep(home, "session-end", {"session_id": "s"}, {}, "/tmp", "another database")
    spool.drain(home, lambda r: None, print, "another database", until=None)  # written: gone
    record = spool.keep(home, "session-end", {"session_id": "s"}, {}, "/tmp", "another database")
    spool.drain(home, lambda r: (_ for _ in ()).throw(ValueError("refused")), print, "another database")
    r = brain_cli("health", "--json")
    kept = json.loads(r.output)["kept_captures"]
    assert kept == {"waiting": 0, "set_aside": [str(home / "spool" / "failed" / record.name)]}
    text = brain_cli("health").output
    assert "kept captures set aside" in text and str(home / "spool" / "failed") in text
