"""Nothing outside the root (docs/ingest.md, "What is read"): a path named on the command
line, or matched by a glob, is resolved and must lie under --root (the current folder by
default); a folder's walk follows no link out of the folder; only regular files are read,
none over the document limit (BR030).

Each test prints what it tried and which documents got through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pybrain.ingest import collect

SECRET = "# Private\n\nThe vault unseal steps live here.\n"


@pytest.fixture
def layout(tmp_path: Path, monkeypatch) -> Path:
    """root/ (the cwd) with docs/guide.md; outside/ beside it with private.md."""
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\n\nDeploy with make deploy.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text(SECRET)
    monkeypatch.chdir(root)
    return root


def _through(listing) -> list[str]:
    got = [d.ref for d in listing.documents if "vault" in d.text or "root:" in d.text]
    print(
        "documents:",
        [d.ref for d in listing.documents],
        "problems:",
        [(p.path, p.message) for p in listing.problems],
    )
    return got


def test_a_glob_through_a_linked_folder_reads_nothing_outside(layout: Path) -> None:
    (layout / "docs" / "linkdir").symlink_to(layout.parent / "outside", target_is_directory=True)
    for pattern in ("docs/**", "docs/**/*.md", "docs/*"):
        listing = collect([pattern], root=layout)
        print("tried:", pattern)
        assert _through(listing) == [], f"{pattern} read a file outside the root"
        assert "docs/guide.md" in [d.ref for d in listing.documents]
        assert any("outside the root" in p.message for p in listing.problems), pattern


def test_a_named_link_inside_the_root_to_a_file_outside_is_not_read(layout: Path) -> None:
    (layout / "docs" / "notes.md").symlink_to(layout.parent / "outside" / "private.md")
    listing = collect(["docs/notes.md"], root=layout)
    print("tried: docs/notes.md -> ../outside/private.md")
    assert _through(listing) == []
    assert [p.path for p in listing.problems] == ["docs/notes.md"]
    assert "outside the root" in listing.problems[0].message


def test_a_link_named_on_the_command_line_to_etc_passwd_is_not_read(layout: Path) -> None:
    (layout / "link-to-etc-passwd").symlink_to("/etc/passwd")
    (layout / "linked-folder").symlink_to(layout.parent / "outside", target_is_directory=True)
    for named in ("link-to-etc-passwd", "linked-folder", "linked-folder/private.md"):
        listing = collect([named], root=layout)
        print("tried:", named)
        assert _through(listing) == [], f"{named} was read"
        assert listing.documents == []
        assert [p.path for p in listing.problems] == [named]


def test_a_path_outside_the_root_is_refused_unless_root_says_otherwise(layout: Path) -> None:
    outside = str(layout.parent / "outside" / "private.md")
    listing = collect([outside], root=layout)
    assert _through(listing) == [] and "outside the root" in listing.problems[0].message
    # --root names the folder to ingest from: then it is read, its ref relative to it
    listing = collect([outside], root=layout.parent)
    assert [d.ref for d in listing.documents] == ["outside/private.md"]


def test_links_that_stay_inside_the_root_are_read(layout: Path) -> None:
    (layout / "docs" / "same.md").symlink_to(layout / "docs" / "guide.md")
    (layout / "alias").symlink_to(layout / "docs", target_is_directory=True)
    listing = collect(["docs/same.md", "alias"], root=layout)
    assert sorted(d.ref for d in listing.documents) == ["alias/guide.md", "alias/same.md", "docs/same.md"]
    assert listing.problems == []


def test_only_regular_files_are_read(layout: Path) -> None:
    os.mkfifo(layout / "docs" / "pipe.md")
    listing = collect(["docs/pipe.md", "docs"], root=layout)
    assert [p.path for p in listing.problems] == ["docs/pipe.md"]
    assert [d.ref for d in listing.documents] == ["docs/guide.md"]


def test_a_file_over_the_document_limit_is_br030(layout: Path) -> None:
    from pybrain.ingest import walk

    big = layout / "docs" / "big.md"
    big.write_text("# Big\n\n" + "A line of a long log that goes on and on.\n" * (walk.MAX_BYTES // 40))
    listing = collect(["docs/big.md"], root=layout)
    assert [(p.path, p.code) for p in listing.problems] == [("docs/big.md", "BR030")]
    assert "2 MB" in listing.problems[0].message


def test_brain_ingest_of_a_link_to_etc_passwd_stores_nothing(layout: Path, brain_cli, conn) -> None:
    (layout / "link-to-etc-passwd").symlink_to("/etc/passwd")
    (layout / "docs" / "linkdir").symlink_to(layout.parent / "outside", target_is_directory=True)
    r = brain_cli("ingest", "link-to-etc-passwd", "docs/**", "--json")
    print("tried: brain ingest link-to-etc-passwd 'docs/**'; got", r.exit_code, r.output[-600:])
    assert r.exit_code == 1
    stored = [
        row[0] for row in conn.execute("SELECT source_ref FROM brain.memory WHERE source_ref IS NOT NULL")
    ]
    assert stored and all(ref.startswith("docs/guide.md") for ref in stored), stored


def test_a_call_cut_off_by_the_statement_timeout_says_so(layout: Path, brain, conn) -> None:
    """Before, a document the role's statement_timeout cut off failed with the server's bare
    'canceling statement due to statement timeout' (SQLSTATE 57014)."""
    from pybrain.errors import BrainError
    from pybrain.ingest import ingest

    doc = layout / "docs" / "long.md"
    doc.write_text(
        "".join(f"## Part {i}\n\n" + "Words of a long document go on. " * 40 + "\n\n" for i in range(300))
    )
    conn.execute("SET statement_timeout = '20ms'")
    try:
        with pytest.raises(BrainError) as cut:
            ingest(brain, ["docs/long.md"], root=layout)
    finally:
        conn.execute("RESET statement_timeout")
    print(
        "tried: a 300-section document with a 20 ms statement timeout; got:",
        cut.value.message,
        cut.value.hint,
    )
    assert "cancelled by the statement timeout" in cut.value.message
    assert cut.value.detail["sqlstate"] == "57014" and "How large" in cut.value.hint


def test_a_folder_named_from_anywhere_is_read_and_links_out_of_it_are_not(layout: Path) -> None:
    """`brain ingest ~/notes` from another folder: the folder named is what is read (refs
    start with its name); a link in it to a file outside it is named and not read."""
    notes = layout.parent / "notes"
    (notes / "ops").mkdir(parents=True)
    (notes / "ops" / "deploy.md").write_text("# Deploy\n\nTag, then run make deploy.\n")
    (notes / "leak.md").symlink_to(layout.parent / "outside" / "private.md")
    (notes / "linked").symlink_to(layout.parent / "outside", target_is_directory=True)
    listing = collect([str(notes)])
    assert _through(listing) == []
    assert [d.ref for d in listing.documents] == ["notes/ops/deploy.md"]
    assert listing.scopes == ["notes/"]
    assert [p.path for p in listing.problems] == [str(notes / "leak.md")]
    # a glob, a file or a link to the folder, named from elsewhere, stay outside the root
    (layout / "to-notes").symlink_to(notes, target_is_directory=True)
    for named in (str(notes / "*.md"), str(notes / "ops" / "deploy.md"), "to-notes"):
        listing = collect([named])
        assert listing.documents == [] and "outside the root" in listing.problems[0].message, named
    # with --root given, it is that root that counts
    listing = collect([str(notes)], root=layout)
    assert listing.documents == [] and "outside the root" in listing.problems[0].message


def test_brain_ingest_of_a_folder_elsewhere_through_a_shell(cli_env, conn, layout: Path) -> None:
    import subprocess
    import sys

    notes = layout.parent / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text("# Deploy\n\nTag, then run make deploy.\n")
    brain = Path(sys.executable).parent / "brain"
    out = subprocess.run(
        ["sh", "-c", f"cd {layout} && {brain} ingest {notes}"],
        env={**os.environ, **cli_env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    refs = [r[0] for r in conn.execute("SELECT DISTINCT source_ref FROM brain.memory")]
    assert refs == ["notes/deploy.md"]
