"""Document ingest: provenance, idempotent re-ingest, renames, removals, secrets, search by source."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg
import pytest
from helpers import raises_br, rows, scalar

from pybrain.ingest import collect, ingest
from pybrain.ingest.ignore import parse

TREE = Path(__file__).parent / "fixtures" / "ingest" / "tree"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the fixture tree, as the current directory (paths given to ingest are relative to it)."""
    root = tmp_path / "tree"
    shutil.copytree(TREE, root)
    monkeypatch.chdir(root)
    return root


def chunk_ids(conn: psycopg.Connection, ref: str, state: str = "active") -> list[int]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT memory_id FROM brain.memory WHERE source_ref = %s AND state = %s"
            " ORDER BY source_chunk, memory_id",
            (ref, state),
        )
    ]


def test_the_walk_reads_formats_and_honours_ignore_files(tree: Path) -> None:
    listing = collect(["."], root=tree)
    docs = {d.ref: d for d in listing.documents}
    assert sorted(docs) == [
        "docs/deploy.md",
        "docs/guide.md",
        "keep.log",
        "notes.txt",
        "src/retry/backoff.py",
    ]
    assert listing.scopes == [""]
    # ignored: generated/ (a folder rule) and *.log but the re-included keep.log; a PNG has no format of ours
    assert listing.skipped == ["./docs/diagram.png"]
    assert {d.format for d in docs.values()} == {"markdown", "text", "code"}
    code = docs["src/retry/backoff.py"].text
    assert code.startswith("Retries with exponential backoff")
    assert "## class RetryPolicy\n\nHow long to wait before each attempt" in code
    assert "## def RetryPolicy.delay" in code and "Full jitter spreads the retries" in code
    assert "The processor's documented limit" in code
    assert "type: ignore" not in code and "import random" not in code


def test_gitignore_files_apply_below_the_root(tree: Path) -> None:
    (tree / ".gitignore").write_text("drafts/\n")
    (tree / "docs" / "drafts").mkdir()
    (tree / "docs" / "drafts" / "wip.md").write_text("# Work in progress\n\nNot ready for anyone.\n")
    (tree / "docs" / ".gitignore").write_text("deploy.md\n")
    listing = collect(["docs"], root=tree)
    # the root's .gitignore reaches docs/ (named alone), and docs/.gitignore its own files
    assert [d.ref for d in listing.documents] == ["docs/guide.md"]
    assert listing.scopes == ["docs/"]
    # a file named on the command line is read whatever the ignore files say
    assert [d.ref for d in collect(["docs/deploy.md"], root=tree).documents] == ["docs/deploy.md"]


def test_ignore_patterns_follow_gitignore() -> None:
    rules = parse(["*.tmp", "/only-root.md", "docs/**/draft-*.md", "cache/", "!important.tmp", "\\#hash.md"])

    def ignored(rel: str, is_dir: bool = False) -> bool:
        decision = False
        for r in rules:
            if r.dir_only and not is_dir:
                continue
            if r.regex.match(rel):
                decision = not r.negate
        return decision

    assert ignored("a/b/x.tmp") and not ignored("a/important.tmp")
    assert ignored("only-root.md") and not ignored("sub/only-root.md")
    assert ignored("docs/a/b/draft-1.md") and ignored("docs/draft-2.md") and not ignored("docs/final.md")
    assert ignored("x/cache", is_dir=True) and not ignored("x/cache")
    assert ignored("#hash.md")


def test_ingest_then_change_delete_rename_reingest(counting, conn, tree: Path) -> None:
    brain, embedder = counting
    first = ingest(brain, ["."], root=tree)
    assert first.problems == []
    assert dict(first.documents) == {"new": 5}
    n_chunks = first.chunks["new"]
    assert n_chunks == len(embedder.texts) == scalar(conn, "SELECT count(*) FROM brain.memory")
    guide = chunk_ids(conn, "docs/guide.md")
    assert len(guide) >= 3, "the guide is long enough for several chunks"
    row = rows(
        conn,
        "SELECT kind, origin, category, source_system, source_chunk, source_hash, metadata"
        " FROM brain.memory WHERE memory_id = %s",
        (guide[1],),
    )[0]
    assert (row["kind"], row["origin"], row["category"], row["source_system"], row["source_chunk"]) == (
        "fact",
        "artifact",
        "reference",
        "files",
        2,
    )
    assert row["metadata"]["chunks"] == len(guide) and row["metadata"]["format"] == "markdown"
    refunds = next(
        i
        for i in guide
        if "Refunds" in scalar(conn, "SELECT headline FROM brain.memory WHERE memory_id = %s", (i,))
    )
    notes = chunk_ids(conn, "notes.txt")
    deploy = chunk_ids(conn, "docs/deploy.md")

    # One paragraph changed, one file deleted, one renamed.
    guide_md = tree / "docs" / "guide.md"
    guide_md.write_text(guide_md.read_text().replace("up to the captured amount", "up to the settled amount"))
    (tree / "notes.txt").unlink()
    (tree / "docs" / "deploy.md").rename(tree / "docs" / "releases.md")
    audits = scalar(conn, "SELECT count(*) FROM brain.audit")
    embedder.texts.clear()

    second = ingest(brain, ["."], root=tree)
    assert dict(second.documents) == {"changed": 1, "removed": 1, "renamed": 1, "unchanged": 2}
    assert dict(second.chunks) == {"changed": 1, "unchanged": len(guide) - 1, "removed": len(notes)}
    # embedded: the changed chunk, and the renamed document's chunks (a chunk is embedded with its
    # document's ref), nothing else
    changed = [t for t in embedder.texts if "settled amount" in t]
    retitled = [t for t in embedder.texts if t.startswith("docs/releases.md")]
    assert len(changed) == 1 and len(retitled) == len(deploy) == len(embedder.texts) - 1
    assert changed[0].startswith("docs/guide.md > ")
    assert brain.pending() == [], "the renamed chunks have their new vectors"

    # the changed chunk superseded its old version: the chain is in history and recall
    (new_refunds,) = [i for i in chunk_ids(conn, "docs/guide.md") if i not in guide]
    assert chunk_ids(conn, "docs/guide.md") == [i if i != refunds else new_refunds for i in guide]
    history = brain.history(new_refunds)
    assert [c["id"] for c in history["chain"]] == [refunds, new_refunds]
    assert history["chain"][0]["reason"] == "changed at source"
    old = brain.recall(refunds)
    assert old["state"] == "superseded" and old["current_id"] == new_refunds
    # the deleted file's chunks are tombstoned, said why
    assert chunk_ids(conn, "notes.txt") == []
    assert {
        r[0]
        for r in conn.execute("SELECT forget_reason FROM brain.memory WHERE memory_id = ANY(%s)", (notes,))
    } == {"removed at source"}
    # the renamed file's memories moved: same ids, new ref, history kept
    assert chunk_ids(conn, "docs/releases.md") == deploy and chunk_ids(conn, "docs/deploy.md") == []
    moved = brain.recall(deploy[0])
    assert (moved["source_ref"], moved["state"]) == ("docs/releases.md", "active")
    events = [e["action"] for e in brain.history(deploy[0])["events"]]
    assert events == ["insert", "update"]
    written = scalar(conn, "SELECT count(*) FROM brain.audit") - audits
    # an insert and a supersede, the moved chunks, the forgotten ones, the renamed ones
    assert written == 1 + 1 + (len(guide) - 1) + len(notes) + len(deploy)

    # A third run finds nothing to do: no embedding, no write.
    embedder.texts.clear()
    audits = scalar(conn, "SELECT count(*) FROM brain.audit")
    third = ingest(brain, ["."], root=tree)
    assert dict(third.documents) == {"unchanged": 4} and sum(third.chunks.values()) == 0
    assert embedder.texts == [] and scalar(conn, "SELECT count(*) FROM brain.audit") == audits


def test_a_moved_paragraph_keeps_its_memory(counting, conn, tree: Path) -> None:
    brain, embedder = counting
    ingest(brain, ["docs/guide.md"], root=tree)
    before = chunk_ids(conn, "docs/guide.md")
    guide_md = tree / "docs" / "guide.md"
    text = guide_md.read_text()
    # the Troubleshooting section moves before Refunds; a new section is added at the end
    head, rest = text.split("## Refunds", 1)
    refunds, trouble = rest.split("## Troubleshooting", 1)
    guide_md.write_text(
        head + "## Troubleshooting" + trouble.rstrip() + "\n\n## Refunds" + refunds.rstrip() + "\n\n"
        "## Chargebacks\n\nA chargeback freezes the payment and opens a case in the back office"
        " within a day.\n"
    )
    embedder.texts.clear()
    report = ingest(brain, ["docs/guide.md"], root=tree)
    assert dict(report.chunks) == {"unchanged": len(before), "new": 1}
    assert len(embedder.texts) == 1 and "chargeback" in embedder.texts[0].lower()
    after = chunk_ids(conn, "docs/guide.md")
    assert sorted(after[:-1]) == sorted(before), "the same memories, renumbered"
    chunks = rows(conn, "SELECT source_chunk, metadata FROM brain.memory WHERE memory_id = ANY(%s)", (after,))
    assert sorted(c["source_chunk"] for c in chunks) == list(range(1, len(after) + 1))
    assert {c["metadata"]["chunks"] for c in chunks} == {len(after)}


def test_dry_run_writes_nothing(counting, conn, tree: Path) -> None:
    brain, embedder = counting
    dry = ingest(brain, ["."], root=tree, dry_run=True)
    assert dict(dry.documents) == {"new": 5} and dry.chunks["new"] > 5
    assert embedder.texts == [] and scalar(conn, "SELECT count(*) FROM brain.memory") == 0
    ingest(brain, ["."], root=tree)
    (tree / "notes.txt").unlink()
    (tree / "docs" / "guide.md").write_text("# Payments service guide\n\nThe guide moved to the wiki.\n")
    state = rows(conn, "SELECT memory_id, state, source_ref, source_chunk FROM brain.memory ORDER BY 1")
    embedder.texts.clear()
    dry = ingest(brain, ["."], root=tree, dry_run=True)
    assert dry.documents["removed"] == 1 and dry.documents["changed"] == 1 and dry.chunks["removed"] >= 2
    assert embedder.texts == []
    assert (
        rows(conn, "SELECT memory_id, state, source_ref, source_chunk FROM brain.memory ORDER BY 1") == state
    )


def test_stdin_and_bad_input(brain, conn, tree: Path) -> None:
    (tree / "data.bin").write_bytes(b"\x00\x01\x02binary")
    (tree / "latin1.txt").write_bytes("Caf\xe9 au lait".encode("latin-1"))
    text = (
        "# Standup 2026-11-20\n\n"
        "The refund button is back after the hotfix; @maria will watch the error rate.\n"
    )
    report = ingest(
        brain,
        ["-", "missing.md", "data.bin", "latin1.txt", "notes.txt"],
        root=tree,
        stdin_ref="meetings/standup.md",
        read_stdin=lambda: text.encode(),
    )
    problems = {p.path: p.message for p in report.problems}
    assert problems == {
        "missing.md": "no such file or folder",
        "data.bin": "binary file (it holds NUL bytes)",
        "latin1.txt": "not UTF-8 text (invalid continuation byte at byte 3)",
    }
    assert report.documents["new"] == 2, "the rest goes on"
    (memory,) = rows(
        conn, "SELECT headline, people, source_ref FROM brain.memory WHERE source_ref LIKE 'meetings/%'"
    )
    assert memory["source_ref"] == "meetings/standup.md" and memory["people"] == ["maria"]


def test_a_secret_in_a_document_is_redacted(brain, conn, tree: Path) -> None:
    report = ingest(brain, ["docs/deploy.md"], root=tree)
    assert report.redacted == 1
    (doc,) = [r for r in report.rows if r["chunk"] is None]
    assert [x["kind"] for x in doc["redacted"]] == ["aws-access-key-id"]
    assert (
        scalar(conn, "SELECT count(*) FROM brain.memory WHERE body LIKE '%AKIA%' OR headline LIKE '%AKIA%'")
        == 0
    )
    assert scalar(conn, "SELECT count(*) FROM brain.memory WHERE body LIKE '%[redacted:%'") == 1
    # unchanged at the next run: the hash is the file's, the stored text the redacted one
    again = ingest(brain, ["docs/deploy.md"], root=tree)
    assert dict(again.documents) == {"unchanged": 1}


def test_search_filters_by_provenance(brain, tree: Path) -> None:
    ingest(brain, ["."], root=tree)
    ingest(brain, ["docs"], root=tree, source_system="wiki", project="payments")
    everything = brain.search("webhooks signing secret worker queue", max_results=20)
    assert {h["id"] for h in everything}
    by_ref = brain.search("webhooks signing secret worker queue", source_ref="docs/guide.md", max_results=20)
    assert by_ref and {brain.recall(h["id"])["source_ref"] for h in by_ref} == {"docs/guide.md"}
    wiki = brain.search("webhooks signing secret", source_system="wiki", source_ref="docs/", max_results=20)
    assert wiki and {
        (m["source_system"], m["source_ref"][:5]) for m in map(brain.recall, [h["id"] for h in wiki])
    } == {("wiki", "docs/")}
    assert brain.search("webhooks", source_ref="docs/guide", max_results=5) == [], "a ref without / is exact"
    assert brain.search("settlement export", source_system="wiki", max_results=5) == []


def test_the_same_file_in_two_source_systems_or_projects_is_two_documents(brain, conn, tree: Path) -> None:
    ingest(brain, ["notes.txt"], root=tree)
    report = ingest(brain, ["notes.txt"], root=tree, project="payments")
    assert dict(report.documents) == {"new": 1}
    assert (
        scalar(conn, "SELECT count(DISTINCT project) FROM brain.memory WHERE source_ref = 'notes.txt'") == 2
    )


def test_a_folder_removes_only_what_lies_under_it(brain, conn, tree: Path) -> None:
    ingest(brain, ["."], root=tree)
    (tree / "notes.txt").unlink()
    report = ingest(brain, ["docs"], root=tree)
    assert dict(report.documents) == {"unchanged": 2}
    assert chunk_ids(conn, "notes.txt"), "notes.txt lies outside docs/: it stays"
    report = ingest(brain, ["docs/guide.md"], root=tree)
    assert dict(report.documents) == {"unchanged": 1}, "a file names no scope: nothing is removed"


def test_a_copy_is_a_duplicate_not_a_rename(counting, conn, tree: Path) -> None:
    brain, embedder = counting
    ingest(brain, ["."], root=tree)
    shutil.copy(tree / "notes.txt", tree / "docs" / "notes-copy.txt")
    embedder.texts.clear()
    report = ingest(brain, ["."], root=tree)
    assert report.documents["new"] == 1 and report.documents.get("renamed", 0) == 0
    assert dict(report.chunks) == {"duplicate": 1} and embedder.texts == []


def test_sql_api_refuses_bad_documents(conn) -> None:
    with raises_br("BR009"):
        conn.execute("SELECT * FROM brain.ingest_documents('{}'::jsonb)")
    with raises_br("BR009"):
        conn.execute("""SELECT * FROM brain.ingest_documents('[{"ref": "a.md"}]')""")
    with raises_br("BR009"):
        conn.execute(
            "SELECT * FROM brain.ingest_documents(%s)",
            (json.dumps([{"ref": "a.md", "hash": "1"}, {"ref": "a.md", "hash": "2"}]),),
        )
    with raises_br("BR009"):
        conn.execute("""SELECT * FROM brain.ingest_documents('[]', source_system => '')""")
    # a document the gate refuses is reported; the others are stored
    docs = [
        {"ref": "empty.md", "hash": "e", "text": "   \n"},
        {"ref": "ok.md", "hash": "o", "text": "The settlement export runs at 02:00 UTC."},
    ]
    out = rows(
        conn, "SELECT ref, chunk, action, error_code FROM brain.ingest_documents(%s)", (json.dumps(docs),)
    )
    assert [(r["ref"], r["action"], r["error_code"]) for r in out if r["chunk"] is None] == [
        ("empty.md", "rejected", "BR009"),
        ("ok.md", "new", None),
    ]
    # stored without embeddings: queued for the worker
    assert scalar(conn, "SELECT dedup_pending FROM brain.memory WHERE source_ref = 'ok.md'") is True


def test_cli_ingest(brain_cli, tree: Path) -> None:
    out = brain_cli("ingest", ".", "missing.md")
    assert out.exit_code == 1, out.output
    assert "missing.md: no such file or folder" in out.output
    assert "documents: 5 new" in out.output
    out = brain_cli("ingest", ".", "--json")
    assert out.exit_code == 0
    summary = json.loads(out.output)
    assert summary["documents"]["unchanged"] == 5 and summary["embedded"] == 0
    out = brain_cli("search", "signing secret webhooks", "--source-ref", "docs/guide.md", "--json")
    hits = json.loads(out.output)
    assert hits and all(h["kind"] == "fact" for h in hits)
    out = brain_cli(
        "ingest", "-", "--stdin-ref", "meetings/retro.md", "--dry-run", input="# Retro\n\nShip smaller PRs.\n"
    )
    assert "would" in out.output and "documents: 1 new" in out.output


def test_chunks_sent_back_are_scanned_again(conn) -> None:
    text = "# Deploy\n\nPromote the image from staging in the deploy dashboard."
    docs = [{"ref": "deploy.md", "hash": "d1", "text": text}]
    checked = rows(
        conn,
        "SELECT chunk, headline, section, body FROM brain.ingest_documents(%s, check_only => true)",
        (json.dumps(docs),),
    )
    chunks = [{k: r[k] for k in ("headline", "section", "body")} for r in checked if r["chunk"]]
    forged = [dict(chunks[0], body=chunks[0]["body"] + " The key is AKIAIOSFODNN7EXAMPLE.")]
    out = rows(
        conn,
        "SELECT chunk, action, error_code FROM brain.ingest_documents(%s)",
        (json.dumps([dict(docs[0], chunks=forged)]),),
    )
    assert out == [{"chunk": None, "action": "rejected", "error_code": "BR007"}]
    out = rows(
        conn,
        "SELECT chunk, action FROM brain.ingest_documents(%s)",
        (json.dumps([dict(docs[0], chunks=chunks)]),),
    )
    assert [r["action"] for r in out] == ["new", "new"]
    assert scalar(conn, "SELECT body FROM brain.memory WHERE source_ref = 'deploy.md'") == chunks[0]["body"]
    # a changed version refused leaves the stored one as it was
    changed = dict(docs[0], hash="d2", text=text + " Roll back the same way.", chunks=forged)
    out = rows(conn, "SELECT chunk, action FROM brain.ingest_documents(%s)", (json.dumps([changed]),))
    assert out == [{"chunk": None, "action": "rejected"}]
    assert rows(conn, "SELECT source_chunk, source_hash FROM brain.memory WHERE state = 'active'") == [
        {"source_chunk": 1, "source_hash": "d1"}
    ]


def test_chunks_are_indexed_with_their_document_and_heading_and_keep_their_order(
    brain, conn, tree: Path
) -> None:
    """A chunk's context (document and heading path) is indexed with it, a document is a thread
    of chunks in order, and both follow a rename and a reordering."""

    def rows(ref: str) -> list[tuple[int, str, int, str]]:
        return conn.execute(
            "SELECT memory_id, thread, position, context FROM brain.memory"
            " WHERE source_ref = %s AND state = 'active' ORDER BY source_chunk",
            (ref,),
        ).fetchall()

    ingest(brain, ["docs/guide.md"], root=tree)
    first = rows("docs/guide.md")
    assert len(first) >= 3
    assert [(t, p) for _, t, p, _ in first] == [("docs/guide.md", i) for i in range(1, len(first) + 1)]
    webhooks = next(r for r in first if "Webhooks" in (r[3] or ""))
    assert webhooks[3].startswith("docs/guide.md > ") and "Webhooks" in webhooks[3]
    # the context is searched: the document's name and the heading find the chunk
    found = brain.search("guide.md Webhooks", source_ref="docs/guide.md", min_relevance=0, max_results=3)
    assert webhooks[0] in [h["id"] for h in found]
    # neighbours: a hit brings the chunks beside it in its document
    hit = brain.search(
        "processed_events table drops an event it has seen",
        source_ref="docs/guide.md",
        neighbours=1,
        min_relevance=0,
        max_results=3,
    )
    ids = [h["id"] for h in hit]
    at = [r[0] for r in first].index(ids[0])
    assert set(ids[1:]) <= {r[0] for r in first[max(0, at - 1) : at + 2]}

    # Renamed, and its sections reordered in a later run: the thread follows the ref, positions the order.
    (tree / "docs" / "guide.md").rename(tree / "docs" / "payments.md")
    ingest(brain, ["docs"], root=tree)
    moved = rows("docs/payments.md")
    assert [m[0] for m in moved] == [r[0] for r in first]
    assert {m[1] for m in moved} == {"docs/payments.md"}
    assert all(m[3].startswith("docs/payments.md") for m in moved)
    text = (tree / "docs" / "payments.md").read_text()
    head, rest = text.split("## Webhooks", 1)
    webhooks_part, tail = rest.split("\n## ", 1)
    (tree / "docs" / "payments.md").write_text(
        head + "## " + tail.rstrip() + "\n\n## Webhooks" + webhooks_part
    )
    ingest(brain, ["docs"], root=tree)
    reordered = rows("docs/payments.md")
    assert [p for _, _, p, _ in reordered] == list(range(1, len(reordered) + 1))
    assert {r[0] for r in reordered} & {webhooks[0]}, "the moved section keeps its memory"
    assert "Webhooks" in reordered[-1][3], "the section moved to the end, its context with it"


def test_links_that_leave_the_folder_are_reported_not_read(tmp_path: Path, monkeypatch) -> None:
    """A symbolic link inside an ingested folder to a file outside it (/etc/passwd, a
    home directory's keys) is skipped and named; a link within the folder is read."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Private\n\nThe vault unseal steps live here.\n")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "guide.md").write_text("# Guide\n\nDeploys run nightly from main.\n")
    (docs / "passwd.md").symlink_to("/etc/passwd")
    (docs / "sub" / "escape.md").symlink_to(outside / "secret.md")
    (docs / "again.md").symlink_to(docs / "guide.md")  # inside the folder: fine
    monkeypatch.chdir(tmp_path)
    listing = collect(["docs"], root=tmp_path)
    refs = sorted(d.ref for d in listing.documents)
    print("read:", refs, "reported:", [(p.path, p.message) for p in listing.problems])
    assert refs == ["docs/again.md", "docs/guide.md"]
    assert {p.path for p in listing.problems} == {"docs/passwd.md", "docs/sub/escape.md"}
    assert all("outside the folder" in p.message for p in listing.problems)
    # A glob that matches a link leaving the root is reported too.
    listing = collect(["docs/*.md"], root=tmp_path)
    assert "docs/passwd.md" in {p.path for p in listing.problems}
    assert all("passwd" not in d.ref for d in listing.documents)


def test_standard_input_is_bounded_like_a_file(tmp_path: Path) -> None:
    from pybrain.ingest.walk import MAX_BYTES

    big = b"# Log\n\n" + b"request 42 failed with 502\n" * (MAX_BYTES // 20)
    listing = collect(["-"], root=tmp_path, read_stdin=lambda: big)
    assert listing.documents == []
    assert [(p.path, p.message, p.code) for p in listing.problems] == [
        ("-", "standard input is over the 2 MB a document may be: split it or leave it out", "BR030")
    ]


def test_a_paragraph_repeated_in_one_document_is_stored_once(counting, conn, tmp_path: Path) -> None:
    """A document that repeats a paragraph (an example shown twice, a boilerplate notice):
    the second is a duplicate of the first, and the document is stored. Before, both were
    stored as new, the second met the first's unique key, and the whole ingest failed
    (null memory_id in brain.embedding)."""
    brain, embedder = counting
    # each paragraph its own chunk: about a hundred tokens with chunks of at most 64
    notice = " ".join(["Run the migrations before the deploy; the release checklist names each step."] * 6)
    conn.execute("SELECT brain.set_setting('chunk_max_tokens', '64')")
    doc = tmp_path / "runbook.md"
    doc.write_text(
        "# Runbook\n\n## Deploy\n\n" + notice + "\n\n## Rollback\n\n" + notice + "\n\n"
        "## Contacts\n\nThe on-call engineer answers pages within fifteen minutes.\n"
    )
    embedder.texts.clear()
    report = ingest(brain, [str(doc)], root=tmp_path)
    assert report.chunks.get("duplicate", 0) >= 1, report.chunks
    stored = conn.execute(
        "SELECT count(*), count(DISTINCT normalized) FROM brain.memory"
        " WHERE source_ref LIKE %s AND state = 'active'",
        ("%runbook.md",),
    ).fetchone()
    assert stored[0] == stored[1]
    assert report.chunks["new"] == stored[0] == len(embedder.texts)
