"""Tool events, metrics, recent errors, health; `brain wire`."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner
from helpers import call_scalar, raises_br, rows, scalar

from pybrain.cli import main

T0 = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)


def event(conn, tool: str, ms: float, ok: bool = True, minutes: float = 0, **kwargs) -> None:
    args = {
        "tool": tool,
        "started_at": T0 + dt.timedelta(minutes=minutes),
        "latency_ms": ms,
        "ok": ok,
        **kwargs,
    }
    call_scalar(conn, "record_tool_event", **args)


def test_metrics_per_tool_over_a_window(conn) -> None:
    for ms in range(1, 101):
        event(conn, "search", float(ms))
    event(conn, "remember", 4.0)
    event(conn, "remember", 6.0, ok=False, error_code="BR008", error="related")
    event(conn, "remember", 5.0, minutes=-60 * 48)  # outside the window
    m = {r["tool"]: r for r in rows(conn, "SELECT * FROM brain.metrics(now => %s)", (T0,))}
    assert (m["search"]["calls"], m["search"]["errors"], m["search"]["avg_ms"]) == (100, 0, 50.5)
    assert m["search"]["p99_ms"] == pytest.approx(99.01)
    assert (m["remember"]["calls"], m["remember"]["errors"], m["remember"]["error_rate"]) == (2, 1, 0.5)
    week = {r["tool"]: r for r in rows(conn, "SELECT * FROM brain.metrics('7 days', %s)", (T0,))}
    assert week["remember"]["calls"] == 3


def test_recent_errors_newest_first(conn) -> None:
    event(conn, "recall", 1.0, ok=False, error_code="BR010", error="No memory #9", minutes=1)
    event(conn, "remember", 1.0, ok=False, error_code="BR007", error="secret", minutes=2)
    event(conn, "search", 1.0, minutes=3)
    errors = rows(conn, "SELECT tool, error_code FROM brain.recent_errors(5)")
    assert errors == [{"tool": "remember", "error_code": "BR007"}, {"tool": "recall", "error_code": "BR010"}]


def test_events_refresh_the_session_heartbeat_and_are_checked(conn) -> None:
    session = scalar(conn, "SELECT (brain.boot_session('claude', now => %s))->>'session_id'", (T0,))
    event(conn, "search", 1.0, session=int(session), channel="mcp")
    heartbeat = scalar(conn, "SELECT heartbeat_at FROM brain.session WHERE session_id = %s", (int(session),))
    assert heartbeat > T0
    with raises_br("BR009"):
        event(conn, "search", 1.0, channel="carrier-pigeon")


def test_health_reports_the_database_view(conn) -> None:
    h = scalar(conn, "SELECT brain.health()")
    assert h["database"]["version"].startswith(("15", "16", "17", "18"))
    assert set(h["extensions"]) == {"vector", "pg_trgm"}
    assert h["schema"]["latest"].endswith(".sql") and h["active_space"] == "hash:feature-hash-v1"
    assert h["memories"] == {} and h["pending_embeddings"] == 0


@pytest.fixture
def cli(cli_env):
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def test_commands_are_recorded_and_reported(cli, conn) -> None:
    cli("remember", "fact", "Observed by the CLI")
    cli("recall", "999")
    out = cli("metrics").output
    assert out.splitlines()[0].split() == ["tool", "calls", "errors", "avg", "ms", "p99", "ms"]
    assert any(line.startswith("recall") for line in out.splitlines())
    errors = cli("errors").output
    assert "cli recall BR010: No memory #999 in this workspace." in errors
    tools = [r["tool"] for r in rows(conn, "SELECT tool FROM brain.tool_event ORDER BY event_id")]
    assert tools[:2] == ["remember", "recall"]
    health = cli("health")
    assert health.exit_code == 0 and "embedder: hash:feature-hash-v1 reachable" in health.output
    data = json.loads(cli("health", "--json").stdout)
    assert data["ok"] is True and data["embedder"]["reachable"] is True


def test_health_warns_when_every_role_may_run_its_own_statements(cli, conn, admin) -> None:
    """The installer revokes the languages from PUBLIC (docs/security.md); where they are open, a
    client runs statements of its own inside functions, whose text the write guard reads in the
    call stack: health says so, in the database's report and the command's."""
    assert scalar(conn, "SELECT brain.health()")["exposed"] == []
    assert "warning" not in cli("health").output
    admin.execute("GRANT USAGE ON LANGUAGE plpgsql TO PUBLIC")
    try:
        assert scalar(conn, "SELECT brain.health()")["exposed"] == ["USAGE ON LANGUAGE plpgsql"]
        out = cli("health").output
        assert "warning: every role holds USAGE ON LANGUAGE plpgsql" in out and "write guard" in out
    finally:
        admin.execute("REVOKE USAGE ON LANGUAGE plpgsql FROM PUBLIC")


def test_health_fails_when_the_embedder_is_unreachable(cli, conn, monkeypatch) -> None:
    from pybrain.embed import clear_cache

    conn.execute("SELECT brain.use_embedding_space('ollama', 'all-minilm', 384)")
    conn.execute("SELECT brain.activate_embedding_space('ollama:all-minilm')")
    monkeypatch.setenv("BRAIN_OLLAMA_URL", "http://127.0.0.1:9")
    clear_cache()
    r = cli("health")
    assert r.exit_code == 4 and "NOT reachable (127.0.0.1:9" in r.output


def test_wire_prints_and_merges(cli, tmp_path) -> None:
    printed = json.loads(cli("wire", "claude-code").stdout)
    server = printed["mcpServers"]["pybrain"]
    assert server["args"] == ["mcp", "--repository"] and server["command"].endswith("brain")
    assert server["env"]["BRAIN_EMBEDDER"] == "${BRAIN_EMBEDDER}", "a reference, never the value"
    assert json.loads(cli("wire", "vscode").stdout)["servers"]["pybrain"]["type"] == "stdio"

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}))
    assert cli("wire", "cursor", "--write", str(config)).output.strip() == f"pybrain added to {config}"
    merged = json.loads(config.read_text())
    assert merged["theme"] == "dark" and set(merged["mcpServers"]) == {"other", "pybrain"}
    cli("wire", "cursor", "--write", str(config))
    assert json.loads(config.read_text()) == merged, "writing twice changes nothing"

    fresh = tmp_path / "new" / "mcp.json"
    cli("wire", "generic", "--write", str(fresh))
    assert list(json.loads(fresh.read_text())["mcpServers"]) == ["pybrain"]

    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    r = cli("wire", "cursor", "--write", str(broken))
    assert r.exit_code == 1 and "is not valid JSON" in r.stderr
    assert broken.read_text() == "{not json", "a file that cannot be read is left alone"
