"""A project is named by what its repository proves, not by its folder's name.

Two repositories with one folder name (your billing, and a clone of someone else's code in
~/Downloads/billing) are two projects: the second never boots with the first's rules and
handoffs, and its turns go to its own project. One repository reached by different remote
URLs, or cloned twice, is one. A repository that had no commit or no remote when it was first
seen keeps its project when it gets them. The projects an older release named by folder stay
where they are: the first repository seen with that name keeps it. And an older release's
global sessions are filed, at the upgrade, under the project of the folder they ran in.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from conftest import new_database
from helpers import remember
from test_hooks import payload, run_hook
from test_migrations import migrate_through

from pybrain import db
from pybrain.client import Brain
from pybrain.embed import get_embedder
from pybrain.repo import find, project_of

GIT = ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "-c", "init.defaultBranch=main"]


def git_repo(folder: Path, *, commit: str | None = "first", remote: str | None = None) -> Path:
    folder.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q", str(folder)], check=True)
    if commit is not None:
        (folder / "README").write_text(commit)
        subprocess.run([*GIT, "-C", str(folder), "add", "README"], check=True)
        subprocess.run([*GIT, "-C", str(folder), "commit", "-q", "-m", commit], check=True)
    if remote is not None:
        subprocess.run([*GIT, "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def commit(folder: Path, message: str) -> None:
    (folder / "NOTES").write_text(message)
    subprocess.run([*GIT, "-C", str(folder), "add", "NOTES"], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-q", "-m", message], check=True)


def start(cli_env: dict[str, str], folder: Path, session: str) -> str:
    """The session-start hook in folder: the context it adds."""
    out, _ = run_hook(
        cli_env, "session-start", payload("session-start", folder / "t.jsonl", folder, session_id=session)
    )
    assert out.returncode == 0 and b"hook:" not in out.stderr, out.stderr
    return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]


def test_remote_urls_of_one_repository_are_one_key(conn) -> None:
    def key(url: str) -> str | None:
        return conn.execute("SELECT brain._remote_key(%s)", (url,)).fetchone()[0]

    same = [
        "git@github.com:Acme/Billing.git",
        "https://github.com/acme/billing",
        "https://github.com/acme/billing.git/",
        "ssh://git@github.com:22/acme/billing.git",
        "https://dev:ghp_notarealtoken@github.com/acme/billing",
        "git://github.com/acme/billing",
        " github.com:acme/billing ",
    ]
    assert {key(u) for u in same} == {"github.com/acme/billing"}
    assert key("https://gitlab.com/acme/billing") == "gitlab.com/acme/billing"
    for local in (
        "/srv/git/billing.git",
        "./billing",
        "../billing",
        "file:///srv/git/billing.git",
        "~/git/b",
        "",
    ):
        assert key(local) is None, local


def test_two_repositories_of_one_name_are_two_projects(cli_env, conn, tmp_path) -> None:
    mine = git_repo(tmp_path / "work" / "billing", remote="git@github.com:acme/billing.git")
    theirs = git_repo(
        tmp_path / "Downloads" / "billing", commit="their code", remote="https://github.com/other/billing"
    )
    assert start(cli_env, mine, "s-mine") and find(mine).label == find(theirs).label == "billing"
    remember(
        conn,
        kind="rule",
        severity="BLOCKER",
        headline="Never rerun the billing export by hand",
        project="billing",
    )
    context = start(cli_env, theirs, "s-theirs")
    assert "Never rerun the billing export" not in context
    projects = dict(
        conn.execute("SELECT client_info->>'client_session', project FROM brain.session").fetchall()
    )
    assert projects["s-mine"] == "billing"
    other = projects["s-theirs"]
    digest = conn.execute("SELECT encode(sha256('remote:github.com/other/billing'), 'hex')").fetchone()[0]
    assert other == f"billing@{digest[:7]}", other
    print(f"two repositories named billing: {projects}")
    # the same repository in another folder, by another URL of its remote: one project
    clone = git_repo(tmp_path / "elsewhere" / "billing-copy", remote="https://github.com/ACME/billing")
    assert "Never rerun the billing export" in start(cli_env, clone, "s-clone")


def test_a_repository_keeps_its_project_through_its_first_commit_and_remote(
    cli_env, conn, brain, tmp_path
) -> None:
    # an older billing took the name first: this new one is billing@...
    git_repo(tmp_path / "old" / "billing", remote="git@github.com:acme/billing.git")
    assert project_of(tmp_path / "old" / "billing", brain) == "billing"
    fresh = git_repo(tmp_path / "new" / "billing", commit=None)
    first = project_of(fresh, brain)
    assert first.startswith("billing@")
    commit(fresh, "first commit")
    assert project_of(fresh, brain) == first, "the first commit keeps it"
    subprocess.run(
        [*GIT, "-C", str(fresh), "remote", "add", "origin", "git@example.com:me/billing.git"], check=True
    )
    (fresh / "sub").mkdir()
    assert project_of(fresh / "sub", brain) == first, "a subfolder, and a remote added later"
    # a second clone of the same history, without a remote: by its root commit
    clone = tmp_path / "clone" / "billing"
    subprocess.run([*GIT, "clone", "-q", str(fresh), str(clone)], check=True)
    subprocess.run([*GIT, "-C", str(clone), "remote", "remove", "origin"], check=True)
    assert project_of(clone, brain) == first
    # a folder outside git: its own, by host and path
    (tmp_path / "notes").mkdir()
    assert project_of(tmp_path / "notes", brain) == "notes"
    (tmp_path / "b" / "notes").mkdir(parents=True)
    assert project_of(tmp_path / "b" / "notes", brain).startswith("notes@")


def test_a_project_an_older_release_named_stays_with_the_first_repository(cli_env, conn, tmp_path) -> None:
    """Memories filed under 'billing' before the upgrade: the first repository seen with that
    name boots with them; a later one of the same name does not."""
    remember(
        conn,
        kind="rule",
        severity="BLOCKER",
        headline="Never rerun the billing export by hand",
        project="billing",
    )
    mine = git_repo(tmp_path / "work" / "billing")
    assert "Never rerun the billing export" in start(cli_env, mine, "s1")
    theirs = git_repo(tmp_path / "Downloads" / "billing", commit="someone else's")
    assert "Never rerun the billing export" not in start(cli_env, theirs, "s2")


def test_repository_project_refuses_what_is_no_identity(conn) -> None:
    for identities in (["origin"], ["root:xyz"], []):
        with pytest.raises(psycopg.Error) as raised:
            conn.execute("SELECT brain.repository_project(%s, 'billing')", (identities,))
        assert (
            "BR009" in str(raised.value.diag.sqlstate or "")
            or "identity" in str(raised.value)
            or "Name" in str(raised.value)
        )
    with pytest.raises(psycopg.Error, match="written by pybrain's functions only"):
        conn.execute(
            "INSERT INTO brain.repository (identity, project, label)"
            " VALUES ('remote:github.com/acme/billing', 'x', 'x')"
        )


@pytest.fixture
def old_database(admin_url: str):
    with new_database(admin_url, "brain_repository_upgrade") as url:
        yield url


def test_an_older_releases_global_sessions_are_filed_by_their_folder_at_the_upgrade(
    old_database, tmp_path
) -> None:
    """A database of the previous release whose hooks filed sessions globally, in two
    repositories (ledger, with a remote; mailer, with commits only), with their handoffs and
    captured turns; upgraded by `brain init`: each repository's next start shows its own
    handoff, and neither one's search finds the other's turns."""
    ledger = git_repo(tmp_path / "work" / "ledger", remote="git@github.com:acme/ledger.git")
    mailer = git_repo(tmp_path / "work" / "mailer", commit="mailer")
    host = socket.gethostname()
    with psycopg.connect(old_database, autocommit=True) as conn:
        before = [p.name for p in db.sql_files("migrations")].index("032-repository-projects.sql")
        migrate_through(conn, before)
        conn.execute("SELECT set_config('brain.workspace', '1', false)")
        for folder, session, handoff, turn, ago in (
            (
                ledger,
                "s-ledger",
                "Ledger: the nightly close is half done.",
                "User: reconcile the kestrel ledger",
                3,
            ),
            (
                mailer,
                "s-mailer",
                "Mailer: the bounce queue is drained.",
                "User: drain the marmot bounce queue",
                2,
            ),
        ):
            conn.execute(
                "INSERT INTO brain.session (source, project, cwd, host, client_info, started_at,"
                " heartbeat_at, status, ended_at, end_reason, handoff) VALUES ('claude-code', '', %s, %s, %s,"
                " now() - make_interval(hours => %s), now() - make_interval(hours => %s), 'ended',"
                " now() - make_interval(hours => %s), 'logout', %s)",
                (
                    str(folder),
                    host,
                    json.dumps({"client_session": session, "via": "hook"}),
                    ago,
                    ago,
                    ago - 1,
                    handoff,
                ),
            )
            conn.execute(
                "INSERT INTO brain.memory (kind, headline, normalized, project, origin, source_system,"
                " source_ref) VALUES ('fact', %s, lower(%s), '', 'observed', 'claude-code', %s)",
                (turn, turn, f"{session}/u1"),
            )
    env = {
        **{k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"},
        "BRAIN_DATABASE_URL": old_database,
        "BRAIN_EMBEDDER": "hash",
        "BRAIN_HOME": str(tmp_path / "home"),
    }
    init = subprocess.run(
        [sys.executable, "-m", "pybrain", "init"], capture_output=True, env=env, timeout=300
    )
    assert init.returncode == 0, init.stderr
    print(init.stdout.decode())
    assert b"re-filed 2 global sessions" in init.stdout
    cli = {k: env[k] for k in ("BRAIN_DATABASE_URL", "BRAIN_EMBEDDER", "BRAIN_HOME")}
    assert "Ledger: the nightly close is half done." in start(cli, ledger, "s2-ledger")
    context = start(cli, mailer, "s2-mailer")
    assert "Mailer: the bounce queue is drained." in context and "Ledger" not in context
    with psycopg.connect(old_database, autocommit=True) as conn:
        conn.execute("SELECT set_config('brain.workspace', '1', false)")
        brain = Brain(conn, embedder=get_embedder("hash"))
        projects = {f.name: project_of(f, brain) for f in (ledger, mailer)}
        assert projects == {"ledger": "ledger", "mailer": "mailer"}
        for folder, own, other in ((ledger, "kestrel", "marmot"), (mailer, "marmot", "kestrel")):
            project = projects[folder.name]
            mine = [r["headline"] for r in brain.call("search", query=own, project=project)]
            theirs = [r["headline"] for r in brain.call("search", query=other, project=project)]
            print(f"{folder.name}: search {own!r} -> {mine}; search {other!r} -> {theirs}")
            assert any(own in h for h in mine) and theirs == [], (folder.name, mine, theirs)
        global_ = conn.execute("SELECT count(*) FROM brain.memory WHERE project = ''").fetchone()[0]
        assert global_ == 0
    # brain init again: nothing more to file
    again = subprocess.run(
        [sys.executable, "-m", "pybrain", "init"], capture_output=True, env=env, timeout=300
    )
    assert again.returncode == 0 and b"re-filed" not in again.stdout, again.stdout
