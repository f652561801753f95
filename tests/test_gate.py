"""The write gate, called as SQL: every rule raises its own code and writes nothing."""

from __future__ import annotations

import pytest
from helpers import memory_count, raises_br, remember, scalar, unit


def audit_count(conn) -> int:
    return scalar(conn, "SELECT count(*) FROM brain.audit")


REJECTED = [
    ("BR001", dict(kind="belief", headline="Something")),
    ("BR001", dict(kind="", headline="Something")),
    ("BR002", dict(kind="rule", headline="Be careful", severity="DEPRECATED")),
    ("BR002", dict(kind="rule", headline="Be careful", severity="URGENT")),
    ("BR002", dict(kind="fact", headline="Sky is blue", severity="BLOCKER")),
    ("BR003", dict(kind="fact", headline="")),
    ("BR003", dict(kind="fact", headline="   \n\t ")),
    ("BR004", dict(kind="fact", headline=" ".join(["word"] * 16))),
    ("BR004", dict(kind="fact", headline="x" * 301)),
    ("BR005", dict(kind="fact", headline="Long", body=" ".join(["word"] * 401))),
    ("BR005", dict(kind="fact", headline="Long", body="y" * 20001)),
    (
        "BR006",
        dict(
            kind="rule",
            headline="Merged guardrails",
            body="GUARDRAIL 2025-01-03: never X.\nGUARDRAIL 2025-02-11: never Y.",
        ),
    ),
    (
        "BR006",
        dict(
            kind="rule",
            headline="Merged guardrails",
            body="[2025-01-03 GUARDRAIL] never X. [2025-02-11 GUARDRAIL] never Y.",
        ),
    ),
    ("BR009", dict(kind="fact", headline="Sky is blue", category="gossip")),
    ("BR009", dict(kind="fact", headline="Sky is blue", origin="rumour")),
    ("BR009", dict(kind="fact", headline="Sky is blue", priority=1)),
    ("BR009", dict(kind="task", headline="Ship it", priority=9)),
    ("BR009", dict(kind="task", headline="Ship it", status="stale")),
    ("BR009", dict(kind="rule", headline="Be careful", halflife_days=3.0)),
    ("BR009", dict(kind="fact", headline="Sky is blue", error_message="boom")),
    ("BR009", dict(kind="fact", headline="Sky is blue", importance=2.0)),
    ("BR009", dict(kind="rule", headline="Skill", skill_trigger='{"name": "Bad Name"}')),
]


@pytest.mark.parametrize(("code", "args"), REJECTED, ids=[f"{c}-{i}" for i, (c, _) in enumerate(REJECTED)])
def test_gate_rejects_with_its_code_and_writes_nothing(conn, code, args) -> None:
    with raises_br(code) as caught:
        remember(conn, **args)
    assert caught.error.diag.message_primary
    assert caught.error.diag.message_hint is not None
    assert memory_count(conn) == 0
    assert audit_count(conn) == 0


def test_headline_of_exactly_15_words_and_body_of_400_pass(conn) -> None:
    r = remember(conn, kind="fact", headline=" ".join(["w"] * 15), body=" ".join(["b"] * 400))
    assert r["action"] == "created"


def test_one_date_stamped_guardrail_is_fine(conn) -> None:
    r = remember(conn, kind="rule", headline="Guardrail", body="GUARDRAIL 2025-01-03: never X.")
    assert r["action"] == "created"


SECRETS = {
    "aws-access-key-id": "the key AKIAIOSFODNN7EXAMPLE is for CI",
    "openai-api-key": "use sk-proj-abcdefghijklmnopqrstuvwx0123 for the calls",
    "github-token": "token ghp_" + "a1B2" * 9,
    "slack-token": "xoxb-123456789012-abcdefghij",
    "gcp-api-key": "AIza" + "S" * 35,
    "stripe-key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----",
    "url-credentials": "connect to postgresql://app:s3cr3tP4ss@db.internal:5432/prod",
    "assigned-secret": "set password=Tr0ub4dor&3xyzzy-long in the file",
}


@pytest.mark.parametrize("pattern", sorted(SECRETS))
def test_secrets_are_rejected_before_anything_is_stored(conn, pattern) -> None:
    with raises_br("BR007") as caught:
        remember(conn, kind="fact", headline="Connection details", body=SECRETS[pattern])
    detail = caught.error.diag.message_detail
    assert pattern in detail
    assert SECRETS[pattern] not in (caught.error.diag.message_primary + detail)
    assert memory_count(conn) == 0


@pytest.mark.parametrize("field", ["headline", "tags", "metadata", "error_message"])
def test_secrets_are_found_in_every_text_field(conn, field) -> None:
    secret = "AKIAIOSFODNN7EXAMPLE"
    args = {"kind": "incident" if field == "error_message" else "fact", "headline": "Keys"}
    args[field] = {"tags": [secret], "metadata": f'{{"k": "{secret}"}}'}.get(field, f"key {secret}")
    with raises_br("BR007"):
        remember(conn, **args)


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://user:password@localhost/db",
        "postgresql://app:***@db/prod",
        "postgresql://app:${DB_PASSWORD}@db/prod",
        "postgresql://app@db/prod",
        "The token expires after 12 hours",
        "Read the password from the vault path secret/prod/db",
    ],
)
def test_placeholders_and_prose_are_not_secrets(conn, text) -> None:
    assert remember(conn, kind="fact", headline="Database access", body=text)["action"] == "created"


def test_check_only_validates_without_writing(conn) -> None:
    r = remember(conn, kind="fact", headline="Sky is blue", body="Rayleigh scattering.", check_only=True)
    assert r["action"] == "valid"
    assert r["embedding_input"] == "Sky is blue\n\nRayleigh scattering."
    assert memory_count(conn) == 0
    with raises_br("BR007"):
        remember(conn, kind="fact", headline="k", body="AKIAIOSFODNN7EXAMPLE", check_only=True)


@pytest.mark.parametrize(
    ("code", "embedding"),
    [
        ("BR012", [1.0, 0.0, 0.0]),
        ("BR012", [float("nan")] + [0.0] * 383),
        ("BR012", [float("inf")] + [0.0] * 383),
        ("BR012", [0.0] * 384),
    ],
)
def test_bad_vectors_are_rejected(conn, code, embedding) -> None:
    with raises_br(code):
        remember(conn, kind="fact", headline="Vector", embedding=embedding)
    assert memory_count(conn) == 0


def test_embedding_from_an_unknown_space_is_rejected(conn) -> None:
    with raises_br("BR012") as caught:
        remember(
            conn,
            kind="fact",
            headline="Vector",
            embedding=unit(),
            embedding_space="openai:text-embedding-3-small",
        )
    assert "brain init" in caught.error.diag.message_hint
    assert memory_count(conn) == 0


def test_a_rule_without_severity_is_a_pattern(conn) -> None:
    r = remember(conn, kind="rule", headline="Prefer small commits")
    assert (
        scalar(conn, "SELECT severity FROM brain.rule WHERE memory_id = %s", (r["memory_id"],)) == "PATTERN"
    )


def test_no_break_spaces_are_white_space(conn) -> None:
    with raises_br("BR003"):
        remember(conn, kind="fact", headline="\u00a0\u2003\u00a0")
    assert scalar(conn, "SELECT brain.word_count(%s)", ("one\u00a0two\u202fthree",)) == 3
    r = remember(conn, kind="fact", headline="\u00a0Padded headline\u00a0")
    assert (
        scalar(conn, "SELECT headline FROM brain.memory WHERE memory_id = %s", (r["memory_id"],))
        == "Padded headline"
    )


def test_errors_leave_out_absent_detail_and_hint(conn) -> None:
    with raises_br("BR003") as caught:
        remember(conn, kind="fact", headline="")
    assert caught.error.diag.message_detail is None


@pytest.mark.parametrize(
    "args",
    [
        "'Bad Provider', 'm', 8",
        "'ok', '  ', 8",
        "'ok', 'm', 8, near_identical => 0.8, related => 0.9",
    ],
)
def test_embedding_space_arguments_are_checked(conn, args) -> None:
    with raises_br("BR009"):
        scalar(conn, f"SELECT space_id FROM brain.use_embedding_space({args})")
