"""Continuity: LongMemEval's dev questions replayed as Claude Code sessions through the hooks.

For each question that is not an abstention, a fresh workspace (embedding space
local MiniLM, as `brain init` sets it) lives through the question's haystack as
Claude Code would have: each haystack session is a session, in date order, with
a transcript JSONL file written as Claude Code writes it (a `user` line per
prompt, an `assistant` line with a text block per reply, a uuid and a timestamp
each), and the hooks' own handlers (pybrain.hooks: session_start, prompt,
capture) run on the JSON Claude Code sends: SessionStart (source startup), (with
replay_prompts, each user prompt as UserPromptSubmit,) then SessionEnd (prompt_input_exit), which
observes the transcript's turns (brain.observe_transcript) and writes the
handoff (brain.hand_off_transcript). Then the question is the first prompt of a
new session: what reaches the agent is the SessionStart payload
(brain.boot_session, within boot_token_budget) and the UserPromptSubmit context
(brain.prompt_context, within prompt_context_tokens and prompt_context_max, when
search's verdict finds something relevant); variants ask it again with other
prompt budgets on the same store, and off-topic prompts (bench/offtopic.py) follow
it in the same session: how often they get a context, and its tokens.

The handlers run in this process on the bench's connection (the connection and
schema checks of a hook process are bench/hooks.py's subject), with the vectors
the warm embedding server would give: those of bench/embcache.py's MiniLM cache.
A turn's stored text is "User: …" where the LongMemEval run embeds "user: …":
MiniLM lowercases its input, so both have the same vector and the cached one is
used. A text the cache does not hold is embedded for a capture (rare: a turn
whose chunks differ) and not for a prompt: the prompt hook then searches by
words, as it does while no warm server runs (the haystack's own prompts, whose
context nothing measures).

Scored per question: the evidence turns (has_answer) whose text reaches the
agent (the start of the turn, its first 80 letters and digits, is in the
injected text: the turn is quoted, whole or cut) and whose whole text does; and,
on the same store, plain brain.search top 10 with the question and its vector
(min_relevance 0): turn@10 as bench/longmemeval.py computes it. The target:
injected evidence >= 0.90 of search's turn@10, with search's turn@5
(the evidence five lines could carry) beside it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from bench import embcache, latency, offtopic
from bench.embcache import EmbeddingCache
from bench.longmemeval import DATA_SETS, by_type, load_questions, question_workspace
from bench.server import BenchServer
from bench.util import log, summary, timed

DB = "bench_continuity"
TARGET = 0.90  # injected evidence / search turn@10 (issue 41)
QUICK_QUESTIONS = 6
SEAT = "/home/dev/longmemeval"  # the project directory every session is booted for
PREFIX_CHARS = 80  # letters and digits of a turn's start that must reach the agent
BUDGETS = ("boot_token_budget", "prompt_context_tokens", "prompt_context_max", "min_relevance")
# Settings a variant may change: the prompt hook's (the boot is the same for every variant).
VARIANT_SETTINGS = ("prompt_context_tokens", "prompt_context_max", "min_relevance")
OFFTOPIC_PER_QUESTION = 4  # off-topic prompts (bench/offtopic.py) asked after each question


class CachedEmbedder:
    """The warm embedding server as the hooks see it, answered from the MiniLM cache."""

    provider = "local"
    model = "all-MiniLM-L6-v2"
    dims = embcache.DIMS

    def __init__(self, cache: EmbeddingCache, *, embed_missing: bool) -> None:
        self.cache = cache
        self.embed_missing = embed_missing
        self.misses = 0

    @property
    def space(self) -> str:
        return embcache.SPACE

    def _key(self, text: str) -> str | None:
        for candidate in (text, re.sub(r"^(User|Assistant): ", lambda m: m[0].lower(), text)):
            if not self.cache.missing([candidate]):
                return candidate
        return None

    def embed(self, texts: list[str]) -> list[list[float]]:
        from pybrain.errors import EmbedderError

        keys = [self._key(t) for t in texts]
        missing = [t for t, k in zip(texts, keys, strict=True) if k is None]
        if missing:
            self.misses += len(missing)
            if not self.embed_missing:
                raise EmbedderError("not in the embedding cache")
            self.cache.ensure(missing, "turns not in the cache")
            keys = [k or t for t, k in zip(texts, keys, strict=True)]
        return [[float(x) for x in v] for v in self.cache.get(keys)]

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]


def _letters(text: str) -> str:
    """Letters and digits only, lowercased (JSON escapes of newlines and tabs as spaces)."""
    text = text.replace("\\n", " ").replace("\\t", " ").replace("\\r", " ")
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def _timestamp(date: str, minute: int) -> str | None:
    try:
        at = dt.datetime.strptime(date, "%Y/%m/%d (%a) %H:%M").replace(tzinfo=dt.UTC)
    except ValueError:
        return None
    return (at + dt.timedelta(seconds=20 * minute)).isoformat().replace("+00:00", ".000Z")


def write_transcript(folder: Path, sid: str, date: str, turns: list[dict[str, Any]]) -> Path:
    """The session's transcript as Claude Code writes it: a line per prompt and per reply."""
    path = folder / f"{sid}.jsonl"
    parent = None
    with path.open("w", encoding="utf-8") as f:
        for i, t in enumerate(turns):
            uuid = f"{sid}-{i:04d}"
            content: Any = t["content"] if t["role"] == "user" else [{"type": "text", "text": t["content"]}]
            entry = {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": SEAT,
                "sessionId": sid,
                "type": "user" if t["role"] == "user" else "assistant",
                "message": {"role": t["role"], "content": content},
                "uuid": uuid,
                "timestamp": _timestamp(date, i),
            }
            f.write(json.dumps(entry) + "\n")
            parent = uuid
    return path


@contextlib.contextmanager
def hooks_on(conn: psycopg.Connection, workspace: int, cache: EmbeddingCache) -> Iterator[dict[str, Any]]:
    """pybrain.hooks' handlers on this connection and workspace, with the cached vectors;
    yields {event: handler(payload) -> answer}."""
    from pybrain import hooks
    from pybrain.client import Brain
    from pybrain.hooks import base

    capture_embedder = CachedEmbedder(cache, embed_missing=True)
    prompt_embedder = CachedEmbedder(cache, embed_missing=False)

    @contextlib.contextmanager
    def brain(options: Any, *, start: bool) -> Iterator[Any]:
        yield Brain(conn, workspace=workspace, embedder=capture_embedder, actor=options.source)

    saved = {name: getattr(base, name) for name in ("_brain", "_hook_embedder", "_warm_local", "_client_pid")}
    base._brain = brain
    base._hook_embedder = lambda _brain, *, remote: capture_embedder if remote else prompt_embedder
    base._warm_local = lambda: None
    base._client_pid = lambda: None  # each session its own client process, none of them watched
    seat = os.environ.pop("CLAUDE_PROJECT_DIR", None)
    # What reaches the next session once a session end's work is done: a live SessionEnd
    # stores what fits in Claude Code's 1.5 s and its background process the rest
    # (docs/hooks.md); here the handler stores it all, embedded, before the next session.
    ended_by = {k: os.environ.get(k) for k in ("BRAIN_HOOK_END_BY", "BRAIN_HOOK_FINISH")}
    os.environ.update(BRAIN_HOOK_END_BY="off", BRAIN_HOOK_FINISH="off")
    failures: dict[str, int] = defaultdict(int)

    def call(event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The hook as `brain hook EVENT` runs it (pybrain.hooks.run: its deadline, and a
        failure said on standard error, nothing answered)."""
        out, err = io.StringIO(), io.StringIO()
        hooks.run(event, json.dumps(payload).encode(), hooks.Options(source="claude-code"), out, err)
        if f"pybrain {event} hook:" in err.getvalue():
            failures[event] += 1
            log(f"  {err.getvalue().strip()}")
        return json.loads(out.getvalue()) if out.getvalue().strip() else None

    try:
        yield {
            "SessionStart": lambda p: call("session-start", p),
            "UserPromptSubmit": lambda p: call("prompt", p),
            "SessionEnd": lambda p: call("session-end", p),
            "misses": {"capture": capture_embedder, "prompt": prompt_embedder},
            "failures": failures,
        }
    finally:
        for name, value in saved.items():
            setattr(base, name, value)
        if seat is not None:
            os.environ["CLAUDE_PROJECT_DIR"] = seat
        for key, value in ended_by.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _context(answer: dict[str, Any] | None) -> str:
    return answer["hookSpecificOutput"]["additionalContext"] if answer else ""


def replay_question(
    conn: psycopg.Connection,
    cache: EmbeddingCache,
    q: dict[str, Any],
    folder: Path,
    settings: dict[str, Any] | None = None,
    variants: dict[str, dict[str, Any]] | None = None,
    replay_prompts: bool = False,
    offtopic_prompts: list[str] | None = None,
) -> dict[str, Any]:
    """One question's haystack lived through as Claude Code sessions, then the question asked
    (settings: workspace settings the question's workspace gets, brain.set_setting).

    replay_prompts: each haystack prompt goes through the UserPromptSubmit hook too. What
    it injects is not measured and writes nothing the store or a later hook reads (an
    injection row, telemetry), so the figures are the same without it (docs/benchmarks.md
    checks it), and it took most of the replay's time: off by default.
    variants: other prompt hook settings (VARIANT_SETTINGS) the question is asked with
    again, on the same store and boot, each scored as the main one.
    offtopic_prompts: prompts on subjects nothing stored speaks of, asked in the question's
    session after it: the share that gets a context, and its tokens."""
    # as bench/longmemeval.py stores its chunks (the cached vectors are of those chunks)
    ws = question_workspace(conn, f"continuity-{q['question_id']}", settings)
    sessions = sorted(
        zip(q["haystack_dates"], q["haystack_session_ids"], q["haystack_sessions"], strict=True),
        key=lambda s: s[0],
    )
    stats = {"sessions": len(sessions), "prompts": 0, "turns": 0}
    with (
        timed() as t_replay,
        hooks_on(conn, ws, cache) as hook,
        contextlib.redirect_stderr(open(os.devnull, "w")),
    ):
        for n, (date, sid, turns) in enumerate(sessions):
            path = write_transcript(folder, sid, date, turns)
            base = {"session_id": sid, "transcript_path": str(path), "cwd": SEAT}
            hook["SessionStart"]({**base, "hook_event_name": "SessionStart", "source": "startup"})
            for t in turns:
                if t["role"] == "user" and t["content"].strip():
                    if replay_prompts:
                        hook["UserPromptSubmit"](
                            {**base, "hook_event_name": "UserPromptSubmit", "prompt": t["content"]}
                        )
                    stats["prompts"] += 1
            hook["SessionEnd"]({**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
            stats["turns"] += len(turns)
            if n == 0:
                # statistics for the new workspace (bench/longmemeval.py says why)
                conn.execute("ANALYZE brain.memory")
                conn.execute("ANALYZE brain.embedding")
        # the question: the first prompt of a new session
        asked = f"question-{q['question_id']}"
        path = folder / f"{asked}.jsonl"
        base = {"session_id": asked, "transcript_path": str(path), "cwd": SEAT}
        with timed() as t_start:
            boot = _context(
                hook["SessionStart"]({**base, "hook_event_name": "SessionStart", "source": "startup"})
            )

        def ask(prompt: str) -> str:
            return _context(
                hook["UserPromptSubmit"]({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
            )

        with timed() as t_prompt:
            context = ask(q["question"])
        asked_off = [ask(p) for p in offtopic_prompts or []]
        other: dict[str, tuple[str, list[str]]] = {}
        for label, variant in (variants or {}).items():
            for name, value in {**(settings or {}), **variant}.items():
                conn.execute("SELECT brain.set_setting(%s, %s)", (name, Jsonb(value)))
            other[label] = (ask(q["question"]), [ask(p) for p in offtopic_prompts or []])
            conn.execute("SELECT brain.reset_setting(n) FROM unnest(%s::text[]) AS n", (list(variant),))
            for name, value in (settings or {}).items():
                conn.execute("SELECT brain.set_setting(%s, %s)", (name, Jsonb(value)))
        misses = {k: e.misses for k, e in hook["misses"].items()}
        failures = dict(hook["failures"])

    # What reached the agent, and what plain search finds on the same store.
    evidence = [
        (sid, i, t["content"])
        for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True)
        for i, t in enumerate(session)
        if t.get("has_answer")
    ]
    scores = _score(conn, evidence, boot, context, asked_off)
    qvec = cache.get([q["question"]])[0]
    ids = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM brain.search(query => %s, query_embedding => %s, max_results => 10,"
            " min_relevance => 0)",
            (q["question"], latency._vec(qvec)),
        )
    ]
    turns_of = _turns_of(conn, ws)
    n = len(evidence)
    # each evidence turn: its place in search's first 10 (None beyond) and whether its
    # start reached the agent, to tell what the hook leaves out from what search misses
    reached = _letters(boot + "\n" + context)
    where = [
        {
            "turn": f"{sid}/{i}",
            "search_rank": next((r for r, m in enumerate(ids, 1) if (sid, i) in turns_of.get(m, ())), None),
            "injected": _quotes(reached, _letters(text)),
        }
        for sid, i, text in evidence
    ]
    return {
        "question_id": q["question_id"],
        "type": q["question_type"],
        "evidence_turns": n,
        **scores,
        "search_turn@10": sum(e["search_rank"] is not None for e in where) / n if n else None,
        "search_turn@5": sum((e["search_rank"] or 11) <= 5 for e in where) / n if n else None,
        "evidence": where,
        "boot_tokens": _tokens(conn, boot),
        "context": context,
        "variants": {label: _score(conn, evidence, boot, ctx, off) for label, (ctx, off) in other.items()},
        "start_ms": round(t_start[0] * 1000, 1),
        "prompt_ms": round(t_prompt[0] * 1000, 1),
        "replay_s": round(t_replay[0], 2),
        "cache_misses": misses,
        "hook_failures": failures,
        **stats,
    }


def _quotes(injected: str, letters: str) -> bool:
    """Whether the letters and digits of what reached the agent hold the start of a turn's
    (PREFIX_CHARS of them): the turn counts as injected, whole or cut."""
    return bool(letters) and letters[:PREFIX_CHARS] in injected


def _score(
    conn: psycopg.Connection, evidence: list[tuple[str, int, str]], boot: str, context: str, off: list[str]
) -> dict[str, Any]:
    """The evidence turns whose start (whole) reaches the agent through boot + prompt context,
    the prompt context's tokens, and the off-topic prompts that got a context and its tokens."""
    injected = _letters(boot + "\n" + context)
    boot_letters = _letters(boot)
    quoted = whole = from_boot = 0
    starts = [s for s in (_letters(text)[:PREFIX_CHARS] for _, _, text in evidence) if s]
    for _, _, text in evidence:
        letters = _letters(text)
        if _quotes(injected, letters):
            quoted += 1
            from_boot += letters[:PREFIX_CHARS] in boot_letters
            whole += letters in injected
    # the prompt context's lines, and those that quote the start of an evidence turn
    lines = [_letters(line) for line in context.splitlines() if line.startswith("- #")]
    n = len(evidence)
    return {
        "evidence_lines": sum(any(s in line for s in starts) for line in lines),
        "injected": quoted / n if n else None,
        "injected_whole": whole / n if n else None,
        "injected_from_boot": from_boot / n if n else None,
        "prompt_tokens": _tokens(conn, context),
        "prompt_lines": context.count("\n- #"),
        "offtopic_asked": len(off),
        "offtopic_answered": sum(bool(c) for c in off),
        "offtopic_tokens": sum(_tokens(conn, c) for c in off),
    }


def _tokens(conn: psycopg.Connection, text: str) -> int:
    return conn.execute("SELECT brain.estimate_tokens(%s)", (text,)).fetchone()[0] if text else 0


def _turns_of(conn: psycopg.Connection, ws: int) -> dict[int, set]:
    """The turns (haystack session, index) each memory holds, from the captured turns'
    source_ref "<session>/<session>-<index>"; a turn folded into another memory is that one's."""
    turns_of: dict[int, set] = defaultdict(set)
    folded: list[tuple[int, int]] = []
    for memory_id, ref, replaced_by in conn.execute(
        "SELECT memory_id, source_ref, replaced_by FROM brain.memory WHERE workspace_id = %s"
        " AND source_system = 'claude-code' ORDER BY memory_id",
        (ws,),
    ):
        sid, _, line = ref.rpartition("/")
        turns_of[memory_id].add((sid, int(line.rpartition("-")[2])))
        if replaced_by is not None:
            folded.append((memory_id, replaced_by))
    for gone, kept in folded:
        turns_of[kept] |= turns_of.pop(gone, set())
    return dict(turns_of)


def run(
    server: BenchServer,
    cache: EmbeddingCache,
    n_questions: int | None,
    settings: dict[str, Any] | None = None,
    variants: dict[str, dict[str, Any]] | None = None,
    replay_prompts: bool = False,
    data: str = "dev60",
) -> dict[str, Any]:
    """data: the question set (bench.longmemeval.DATA_SETS)."""
    for variant in (variants or {}).values():
        unknown = set(variant) - set(VARIANT_SETTINGS)
        if unknown:
            raise ValueError(
                f"a variant sets the prompt hook's settings only ({', '.join(VARIANT_SETTINGS)})"
            )
    questions = load_questions(n_questions, DATA_SETS[data])
    log(
        f"== continuity: {len(questions)} LongMemEval {data} questions replayed as Claude Code sessions"
        " through the hooks"
    )
    server.create_database(DB)
    cache.ensure([q["question"] for q in questions], "questions")
    cache.ensure(offtopic.QUERIES, "off-topic prompts")
    per_question = []
    with server.connect(DB) as conn, tempfile.TemporaryDirectory(prefix="pybrain-continuity-") as tmp:
        budgets = conn.execute(
            "SELECT brain.setting('boot_token_budget'), brain.setting('prompt_context_tokens'),"
            " brain.setting('prompt_context_max'), brain.setting('min_relevance')"
        ).fetchone()
        budgets = [(settings or {}).get(name, value) for name, value in zip(BUDGETS, budgets, strict=True)]
        for n, q in enumerate(questions, 1):
            folder = Path(tmp) / q["question_id"]
            folder.mkdir()
            off = [
                offtopic.QUERIES[((n - 1) * OFFTOPIC_PER_QUESTION + i) % len(offtopic.QUERIES)]
                for i in range(OFFTOPIC_PER_QUESTION)
            ]
            per_question.append(
                replay_question(conn, cache, q, folder, settings, variants, replay_prompts, off)
            )
            if n % 10 == 0 or n == len(questions):
                log(f"  {n}/{len(questions)} questions replayed")
    server.drop_database(DB)
    result: dict[str, Any] = {
        "data": data,
        "questions": len(questions),
        "budgets": dict(zip(BUDGETS, budgets, strict=True)),
        "settings": settings or {},
        "replay_prompts": replay_prompts,
        "metrics": aggregate(per_question),
        "variants": {
            label: {
                "settings": variant,
                "metrics": aggregate([{**pq, **pq["variants"][label]} for pq in per_question]),
            }
            for label, variant in (variants or {}).items()
        },
        "start_ms": summary([pq["start_ms"] for pq in per_question]),
        "prompt_ms": summary([pq["prompt_ms"] for pq in per_question]),
        "replay_s_per_question": summary([pq["replay_s"] for pq in per_question]),
        "cache_misses": {k: sum(pq["cache_misses"][k] for pq in per_question) for k in ("capture", "prompt")},
        "hook_failures": sum(sum(pq["hook_failures"].values()) for pq in per_question),
        "per_question": per_question,
    }
    overall = result["metrics"].get("overall", {})
    ratio = overall.get("ratio")
    result["check"] = {
        "target_ratio": TARGET,
        "ratio": ratio,
        "passed": ratio is not None and ratio >= TARGET,
    }
    log(
        f"  injected evidence {overall.get('injected')} (whole {overall.get('injected_whole')}) vs search "
        f"turn@10 {overall.get('search_turn@10')}: ratio {ratio}; prompt lines holding evidence "
        f"{overall.get('evidence_line_share')} "
        f"({'pass' if result['check']['passed'] else 'FAIL'} >= {TARGET})"
    )
    return result


def aggregate(per_question: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group, items in by_type([pq for pq in per_question if pq["evidence_turns"]]).items():
        row: dict[str, Any] = {"questions": len(items)}
        for name in ("injected", "injected_whole", "injected_from_boot", "search_turn@5", "search_turn@10"):
            values = [pq[name] for pq in items if pq.get(name) is not None]
            row[name] = round(float(np.mean(values)), 3) if values else None
        row["ratio"] = round(row["injected"] / row["search_turn@10"], 3) if row["search_turn@10"] else None
        row["prompt_tokens"] = round(float(np.mean([pq["prompt_tokens"] for pq in items])), 1)
        row["prompt_lines"] = round(float(np.mean([pq["prompt_lines"] for pq in items])), 2)
        shown = sum(pq["prompt_lines"] for pq in items)
        # of every line the prompt hook injected for the questions, the share holding evidence
        row["evidence_line_share"] = (
            round(sum(pq["evidence_lines"] for pq in items) / shown, 3) if shown else None
        )
        asked = sum(pq["offtopic_asked"] for pq in items)
        row["offtopic_answered"] = (
            round(sum(pq["offtopic_answered"] for pq in items) / asked, 3) if asked else None
        )
        row["offtopic_tokens"] = (
            round(sum(pq["offtopic_tokens"] for pq in items) / asked, 1) if asked else None
        )
        row["boot_tokens"] = round(float(np.mean([pq["boot_tokens"] for pq in items])), 1)
        out[group] = row
    return out


def render(result: dict[str, Any]) -> list[str]:
    b = result["budgets"]
    lines = [
        "",
        f"## Continuity: LongMemEval through the hooks ({result['questions']} questions)",
        f"budgets: boot {b['boot_token_budget']} tokens; prompt {b['prompt_context_tokens']} tokens, "
        f"{b['prompt_context_max']} lines, when search's verdict (min_relevance {b['min_relevance']}) "
        "finds something relevant",
    ]
    head = [
        "| question type | n | injected | whole | from boot | search turn@5 | search turn@10 | ratio "
        "| prompt tokens | lines | lines with evidence | off-topic answered | off-topic tokens |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += head

    def rows(metrics: dict[str, Any]) -> None:
        for group, row in metrics.items():
            lines.append(
                f"| {group} | {row['questions']} | {row['injected']} | {row['injected_whole']} | "
                f"{row['injected_from_boot']} | {row['search_turn@5']} | {row['search_turn@10']} | "
                f"{row['ratio']} | "
                f"{row['prompt_tokens']} | {row['prompt_lines']} | {row['evidence_line_share']} | "
                f"{row['offtopic_answered']} | "
                f"{row['offtopic_tokens']} |"
            )

    rows(result["metrics"])
    c = result["check"]
    lines.append(
        f"target: injected >= {c['target_ratio']} of search turn@10: {'pass' if c['passed'] else 'FAIL'}"
    )
    for label, v in result.get("variants", {}).items():
        lines += ["", f"variant {label}: {json.dumps(v['settings'])}", *head]
        rows(v["metrics"])
    return lines
