"""What every hook shares: its options, limits and deadline, its input and output, its
connection (a Brain within the hook's time) and its embedder, and what is kept on disk
when the database cannot take a capture. The events are rooms of their own (on_start,
on_prompt, on_capture); pybrain.hooks runs them."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

# The command names and the Claude Code events they serve.
EVENTS: dict[str, str] = {
    "session-start": "SessionStart",
    "prompt": "UserPromptSubmit",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
# Seconds a hook gives itself (it is cut off before Claude Code's own timeout,
# which `brain wire claude-code --hooks` sets a few seconds longer).
DEFAULT_TIMEOUT: dict[str, float] = {"session-start": 10, "prompt": 3, "pre-compact": 45, "session-end": 45}
# Seconds after the hook started by which the database must have accepted its connection
# (BRAIN_HOOK_CONNECT_TIMEOUT), with at least CONNECT_AT_LEAST of waiting: a local server
# answers in milliseconds, and one that hangs must not hold the session past a second.
CONNECT_BY = 0.65
CONNECT_AT_LEAST = 0.2
# When the hook process started (time.time()), set by pybrain.entry and the warm process.
STARTED: float | None = None
# The hooks whose input is kept on disk when the database cannot take it.
CAPTURE_EVENTS = ("pre-compact", "session-end")
SOURCE_SYSTEM = "claude-code"
# The harnesses whose hooks these commands serve, by --source: the source_system of their
# captured turns and the client's name in a handoff. Another source is taken for Claude Code.
HARNESSES: dict[str, tuple[str, str]] = {
    "claude-code": ("claude-code", "Claude Code"),
    "codex": ("codex", "Codex"),
    "cursor": ("cursor", "Cursor"),
}
# The tags that mark what a hook injects (brain.prompt_context's text has them too).
INJECTED = ("<pybrain-context>", "</pybrain-context>")
CLIENT_NAME = "Claude Code"
# Processes that sit between the client and the hook: the client is the first other ancestor.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "busybox", "env", "timeout"})
# The hook process's parent, when the hook runs in a child of the warm process (pybrain.hooks.warm).
CLIENT_PARENT: int | None = None
# The most a hook reads of its standard input (one JSON object; the prompt hook's holds the prompt).
INPUT_BYTES = 8 * 1024 * 1024
# Claude Code keeps at most this many characters of a hook's output (its JSON, the
# additionalContext included); a hook prints no more. A budget asked of a context hook is
# at most OUTPUT_TOKENS (brain.estimate_tokens: 4 characters a token), and what is still
# over is cut at a line.
OUTPUT_CHARS = 10_000
OUTPUT_TOKENS = 2_000
# The hooks that add context: when memory is down they say so to the model in one line.
CONTEXT_EVENTS = ("session-start", "prompt")
# Seconds after the session-end hook started by which it has returned (BRAIN_HOOK_END_BY;
# `off`: no limit): Claude Code gives its SessionEnd hooks 1.5 s in all, whatever the
# settings' timeout says. The turns it has no time for are left to the next session start.
END_BY = 0.8
# A capture stores its turns in batches of at most BATCH_TURNS (the first FIRST_TURNS, to
# measure), beginning none it has no time for: a turn takes about TURN_SECONDS at first (the
# gate, chunks; twice that embedded; measured after), and LAST_SECONDS are kept for what
# comes after the last batch (marking what is left, starting the background process).
BATCH_TURNS = 250
FIRST_TURNS = 16
TURN_SECONDS = 0.008
LAST_SECONDS = 0.1


def _harness(options: Any) -> tuple[str, str]:
    """(source_system of the turns, client name) of the harness the hook serves."""
    return HARNESSES.get(options.source, HARNESSES[SOURCE_SYSTEM])


class HookTimeout(Exception):
    """The hook's own deadline passed."""


@dataclass(frozen=True)
class Options:
    source: str = "claude-code"
    # None: the project of the session's folder's repository (pybrain.repo.project_of), named
    # once the database answers (_project)
    project: str | None = ""
    timeout: float | None = None
    budget: int | None = None
    # Set by run(): the event; and, when a kept capture is written later, the time its hook ran.
    event: str = ""
    at: datetime | None = None


def _print(out: TextIO, answer: dict[str, Any], source: str = SOURCE_SYSTEM) -> None:
    text = _fit(answer)
    if text and source == "cursor":
        # Cursor reads the context a hook adds from additional_context
        inner = json.loads(text).get("hookSpecificOutput") or {}
        text = json.dumps({"additional_context": inner.get("additionalContext") or ""}, ensure_ascii=False)
    out.write(text)
    out.write("\n")
    out.flush()


def _from_cursor(payload: dict[str, Any]) -> dict[str, Any]:
    """Cursor's hook input in the fields the hooks read: the conversation (conversation_id,
    else sessionStart's session_id) as session_id, the first of workspace_roots as cwd."""
    out = dict(payload)
    conversation = payload.get("conversation_id") or payload.get("session_id")
    if isinstance(conversation, str) and conversation:
        out["session_id"] = conversation
    roots = payload.get("workspace_roots")
    if not payload.get("cwd") and isinstance(roots, list) and roots and isinstance(roots[0], str):
        out["cwd"] = roots[0]
    return out


def _chars(text: str) -> int:
    """Characters as Claude Code (JavaScript) counts them: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _fit(answer: dict[str, Any]) -> str:
    """The hook's JSON, within OUTPUT_CHARS: an additionalContext that would take it over
    is cut at a line end (its closing tag kept) and says so."""
    text = json.dumps(answer, ensure_ascii=False)
    if _chars(text) <= OUTPUT_CHARS:
        return text
    inner = answer.get("hookSpecificOutput") or {}
    context = inner.get("additionalContext")
    if not isinstance(context, str):
        return ""  # nothing to cut: print nothing rather than output Claude Code drops
    closing = INJECTED[1] if context.rstrip().endswith(INJECTED[1]) else ""
    body = context.rstrip()[: -len(closing)] if closing else context
    note = f"\n(cut: Claude Code takes at most {OUTPUT_CHARS:,} characters of a hook's output)\n"

    def fitted(n: int) -> str:
        cut = body[:n]
        if n < len(body):  # at a line's end, unless that leaves out most of it (one long line)
            cut = cut[: cut.rindex("\n")] if "\n" in cut and cut.rindex("\n") >= n * 0.8 else cut + "…"
        shorter = {**answer, "hookSpecificOutput": {**inner, "additionalContext": cut + note + closing}}
        return json.dumps(shorter, ensure_ascii=False)

    low, high = 0, len(body)  # the longest prefix whose JSON fits
    while low < high:
        mid = (low + high + 1) // 2
        if _chars(fitted(mid)) <= OUTPUT_CHARS:
            low = mid
        else:
            high = mid - 1
    out = fitted(low)
    return out if _chars(out) <= OUTPUT_CHARS else ""


def _unavailable(event: str, exc: BaseException, payload: dict[str, Any] | None) -> dict[str, Any] | None:
    """The one line a context hook adds when memory is down (once a session for the prompt
    hook: the first prompt, or the start, said it already)."""
    from pybrain.errors import MigrationError

    if isinstance(exc, HookTimeout):
        why = "the database did not answer in time"
    elif isinstance(exc, MigrationError) or "brain init" in str(getattr(exc, "hint", "") or ""):
        why = "the database needs `brain init`"
    else:
        why = "the database is not reachable"
    if payload is not None and _told(payload) and event == "prompt":
        return None
    if event == "session-start":
        line = f"pybrain: memory is unavailable this session ({why}); nothing was loaded."
    else:
        line = f"pybrain: memory is unavailable ({why}); nothing was recalled for this prompt."
    return {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": line}}


def _told(payload: dict[str, Any], *, forget: bool = False) -> bool:
    """Whether the model of this client session was told already that memory is down, and
    mark it told (forget: unmark it). A file under BRAIN_HOME/run per client session."""

    session = _string(payload, "session_id")
    if session is None:
        return False
    try:
        from pybrain.paths import home

        folder = os.path.join(home(), "run")
        mark = os.path.join(folder, f"unavailable-{hashlib.sha1(session.encode()).hexdigest()[:16]}")
        if forget:
            with suppress(FileNotFoundError):
                os.unlink(mark)
            return False
        if os.path.exists(mark):
            return True
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(mark, "w", encoding="utf-8"):
            pass
    except OSError:
        return False
    return False


def _outage(exc: BaseException) -> bool:
    """Whether exc says the database is not there (down, hung, too slow, not migrated),
    rather than that it refused what it was sent."""
    from pybrain.errors import BrainError, DatabaseUnavailable, MigrationError

    if isinstance(exc, HookTimeout | DatabaseUnavailable | MigrationError):
        return True
    if isinstance(exc, BrainError) and isinstance(exc.detail, dict):
        return str(exc.detail.get("sqlstate", ""))[:2] in ("08", "53", "57", "58")
    return False


def _keep(event: str, payload: dict[str, Any], options: Options) -> Any:
    """Keep a capture hook's input on disk (pybrain.hooks.spool); the record's path."""
    from pybrain.config import Settings
    from pybrain.hooks import spool

    settings = Settings.from_env()
    wanted = {"source": options.source, "project": options.project, "budget": options.budget}
    where = spool.target(settings.database_url, settings.workspace)
    return spool.keep(settings.home, event, payload, wanted, _seat(payload), where)


def _describe(exc: BaseException) -> str:
    from pybrain.errors import BrainError, DatabaseUnavailable

    if isinstance(exc, HookTimeout):
        return str(exc)
    if isinstance(exc, DatabaseUnavailable):
        return f"the database is unavailable: {_first_line(exc.message)}"
    if isinstance(exc, BrainError):
        return f"{exc.code + ': ' if exc.code else ''}{_first_line(exc.message)}"
    return f"{type(exc).__name__}: {_first_line(str(exc))}"


def _first_line(text: str) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:300]


def read_input(stream: Any) -> bytes:
    """A hook's standard input, read up to one byte past INPUT_BYTES (a larger one is refused unread)."""
    return stream.read(INPUT_BYTES + 1)


def _payload(raw: bytes) -> dict[str, Any]:
    if len(raw) > INPUT_BYTES:
        from pybrain.errors import InputTooLarge

        raise InputTooLarge(
            f"Standard input is over the {INPUT_BYTES // (1024 * 1024)} MiB a hook reads: "
            "it is not the hook's JSON.",
            detail={"what": "hook input", "limit_bytes": INPUT_BYTES},
        )
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"standard input is not the hook's JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise ValueError("standard input is not a JSON object")
    return payload


@contextmanager
def _deadline(seconds: float, message: str | None = None) -> Iterator[None]:
    """Raise HookTimeout in this thread after `seconds` (SIGALRM, where there is one, in the
    main thread). Inside another deadline, the earlier of the two; the outer one runs on after."""
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    previous = signal.getsignal(signal.SIGALRM)
    if outer_left and outer_left <= seconds:
        yield  # the outer deadline comes first
        return
    text = message or f"gave up after {seconds:g} s"

    def expire(*_: Any) -> None:
        raise HookTimeout(text)

    started = time.monotonic()
    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, outer_left - (time.monotonic() - started)))


@functools.cache
def _shipped_schema() -> tuple[list[str], str]:
    """db.shipped_schema(), read once a process (the warm process reads it for its children)."""
    from pybrain import db

    return db.shipped_schema()


def _connect_timeout() -> float:
    """Seconds left to wait for the connection: until CONNECT_BY (or BRAIN_HOOK_CONNECT_TIMEOUT)
    seconds after the hook started, at least CONNECT_AT_LEAST."""
    raw = os.environ.get("BRAIN_HOOK_CONNECT_TIMEOUT", "").strip()
    try:
        limit = max(CONNECT_AT_LEAST, float(raw)) if raw else CONNECT_BY
    except ValueError:
        limit = CONNECT_BY
    if STARTED is None:
        return limit
    return max(CONNECT_AT_LEAST, limit - (time.time() - STARTED))


# --- the database ----------------------------------------------------------


@contextmanager
def _brain(options: Options, *, start: bool) -> Iterator[Any]:
    """A Brain for one hook: short connect and statement timeouts, no migration, no model load.

    start: start the embedded database when it is stopped (one `brain init` created; a hook
    creates none but at session-start). Once the database has answered, the capture hooks'
    inputs kept on disk are written first (not by the prompt hook: it must stay fast).
    """
    from pybrain import db
    from pybrain.api.brain import open_brain
    from pybrain.config import Settings
    from pybrain.errors import BrainError, DatabaseUnavailable, MigrationError

    settings = Settings.from_env()
    budget = options.timeout or 10.0
    if start and options.event != "session-start" and not settings.database_url:
        start = (settings.home / "pgdata" / "PG_VERSION").exists()
    url = db.database_url(settings, start=start)
    wait = _connect_timeout()
    with _deadline(wait, f"the database did not answer within {wait:.2f} s"):
        conn = db.connect(url, connect_timeout=max(2, int(budget / 3)), application_name="pybrain-hook")
    upgraded = False
    try:
        if not db.is_migrated(conn):
            raise DatabaseUnavailable("the database has no pybrain schema", hint="Run `brain init`.")
        if not db.is_current(conn, _shipped_schema(), migrated=True):
            if options.event != "session-start" or settings.database_url:
                later = "" if settings.database_url else ", or start a new session"
                raise MigrationError(f"the database schema is not this pybrain's: run `brain init`{later}")
            # A pybrain upgraded under the embedded database it made: the first hook of a
            # session brings the schema and functions up to date, as any command would
            # (the owner migrates; the other hooks, which must stay fast, wait for it).
            with db.connect(db.admin_url(settings, start=False)) as admin:
                report = db.migrate(admin)
            upgraded = True
            applied = ", ".join(report.applied) or "its functions"
            print(f"pybrain session-start: the database upgraded ({applied})", file=sys.stderr)
        # Each call's transaction within the hook's time (SET LOCAL: no startup option,
        # which PgBouncer refuses, and nothing left on a pooled server connection).
        brain = open_brain(
            "hook",
            settings,
            conn=conn,
            conninfo=url,
            actor=options.source,
            statement_timeout=f"{int(budget * 1000)}ms",
        )
        if upgraded:
            # as brain init does: the older release's global sessions filed by their folder
            from pybrain.repo import refile_global_sessions

            refile_global_sessions(brain)
        if not options.event:
            yield brain
            return
        # Each hook run is a tool event (`hook EVENT`, channel cli), from the hook's start:
        # the dashboard's Health page and `brain metrics` count them.
        began = STARTED or time.time()
        started = datetime.fromtimestamp(began, UTC)
        clock = time.perf_counter() - (time.time() - began)
        try:
            yield brain
        except BrainError as exc:
            if not conn.closed and not _outage(exc):
                brain.record_event(
                    f"hook {options.event}", "cli", started, clock, None, exc.code or "", exc.message
                )
            raise
        brain.record_event(f"hook {options.event}", "cli", started, clock)
    finally:
        conn.close()


def _hook_embedder(brain: Any, *, remote: bool) -> Any:
    """The embedder a hook may use without loading a model: the hash embedder, a warm
    local server, and (when `remote`) the HTTP providers. None: search by words only,
    or store and queue the rows for `brain worker`."""
    from pybrain.embed import get_embedder
    from pybrain.errors import EmbedderError

    space = brain.active_space()
    if space is None:
        return None
    try:
        if space.provider == "hash" or (remote and space.provider in ("ollama", "openai")):
            return get_embedder(space.name)
        if space.provider == "local":
            return _warm_local()
    except EmbedderError:
        return None
    return None


def _warm_local() -> Any:
    from pybrain.embed import server
    from pybrain.embed.local import LocalEmbedder
    from pybrain.errors import EmbedderError

    if not server.enabled():
        return None

    class WarmOnly(server.ServedEmbedder):
        """The warm server or nothing: without one, a server is started for the next
        call and this one goes without (loading the model takes about half a second,
        more than a hook's share of its budget; the word leg answers meanwhile)."""

        def _embed_batch(self, texts: list[str]) -> list[list[float]]:
            try:
                return server.request(self.path, texts, timeout=5)
            except (OSError, ValueError) as exc:
                self._start()
                raise EmbedderError("no warm embedding server was running (one is starting)") from exc

    return WarmOnly(LocalEmbedder(), "local")


def _warm_up(brain: Any) -> None:
    """Start the warm embedding server of a local space in the background, if none runs,
    so the prompt and capture hooks of this session find it."""
    space = brain.active_space()
    if space is None or space.provider != "local":
        return
    from pybrain.errors import EmbedderError

    try:
        embedder = _warm_local()
        if embedder is not None:
            embedder.embed(["warm"])
    except EmbedderError:
        pass  # it is starting: nothing waits for it


class _NoEmbedder:
    """Stands in for an embedder a hook may not load: every call fails, so writes queue."""

    space = None

    def embed(self, texts: Any) -> list[list[float]]:
        from pybrain.errors import EmbedderError

        raise EmbedderError("no embedder is available to a hook without loading a model")

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]


def _project(options: Options, brain: Any, payload: dict[str, Any]) -> Options:
    """options with the project named: without --project, that of the repository the
    session's folder belongs to (pybrain.repo.project_of, which the database decides)."""
    if options.project is not None:
        return options
    from pybrain.repo import project_of

    return replace(options, project=project_of(_seat(payload), brain))


def _seat(payload: dict[str, Any]) -> str:
    """The directory a session is booted and ended for: the project's, as Claude Code
    gives it to hooks (CLAUDE_PROJECT_DIR), else the payload's cwd."""
    return os.environ.get("CLAUDE_PROJECT_DIR") or str(payload.get("cwd") or os.getcwd())


def _client_pid() -> int | None:
    """The client's process: the first ancestor that is not a shell between it and this hook."""
    import psutil

    try:
        proc = psutil.Process(CLIENT_PARENT or os.getppid())
        while proc is not None and proc.name() in SHELLS:
            proc = proc.parent()
    except psutil.Error:
        return None
    return proc.pid if proc is not None and proc.pid > 1 else None


def _string(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _quick(options: Options) -> bool:
    """Whether this is the live session-end hook with Claude Code's 1.5 s (BRAIN_HOOK_END_BY)."""
    return options.event == "session-end" and options.at is None and _end_by() is not None


# Days a transcript's mark is kept: brain.uncaptured_sessions hands out sessions of the last 7.
MARK_DAYS = 8


def _transcript_mark(opened: Any, project: str | None, session: str, transcript: str) -> Path:
    """The mark of a transcript this machine's hooks booted (or left) a session for: a file
    under BRAIN_HOME/run/transcripts named by a digest of the workspace, project, client
    session and path. A crashed session's transcript is read only when it is marked, so a
    path another member of the workspace planted in a session row is never read."""
    from pybrain.paths import home

    key = "\0".join((str(opened.workspace or ""), project or "", session, os.path.expanduser(transcript)))
    return Path(home()) / "run" / "transcripts" / hashlib.sha256(key.encode()).hexdigest()


def _mark_transcript(opened: Any, options: Options, session: str | None, transcript: str | None) -> None:
    """Mark a transcript as this machine's (best effort: unmarked, a crash of its session
    is not captured); marks older than MARK_DAYS go."""
    if not session or not transcript:
        return
    mark = _transcript_mark(opened, options.project, session, transcript)
    try:
        mark.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        mark.touch()
        old = time.time() - MARK_DAYS * 86400
        for other in mark.parent.iterdir():
            if other.stat().st_mtime < old:
                other.unlink(missing_ok=True)
    except OSError:
        pass


def _end_by() -> float | None:
    """When (time.time()) the live session-end hook must be done: END_BY seconds after the
    hook started (BRAIN_HOOK_END_BY; `off`: never)."""
    raw = os.environ.get("BRAIN_HOOK_END_BY", "").strip().lower()
    if raw in ("off", "none"):
        return None
    try:
        seconds = max(0.0, float(raw)) if raw else END_BY
    except ValueError:
        seconds = END_BY
    return (STARTED or time.time()) + seconds


def _kept_waiting() -> bool:
    """Whether the spool holds capture inputs kept while the database was out."""
    from pybrain.config import Settings
    from pybrain.hooks import spool

    return spool.waiting(Settings.from_env().home)


def _worker_busy() -> bool:
    """Whether the background worker of this home and database is at work now."""
    from pybrain.config import Settings
    from pybrain.hooks import later, spool

    if os.environ.get("BRAIN_HOOK_FINISH", "").strip().lower() == "off":
        return False
    settings = Settings.from_env()
    try:
        return later.working(settings.home, spool.target(settings.database_url, settings.workspace))
    except OSError:
        return False


def _finish_later(options: Options, seat: str) -> bool:
    """Ask the background worker (pybrain.hooks.finish) to store what the session-end hook
    left, and start it unless one runs already (it takes this request too); one worker per
    home and database (BRAIN_HOOK_FINISH=off: leave it to the next session start). Whether
    the request was left."""
    if os.environ.get("BRAIN_HOOK_FINISH", "").strip().lower() == "off":
        return False
    import subprocess

    from pybrain.config import Settings
    from pybrain.hooks import later, spool

    settings = Settings.from_env()
    target = spool.target(settings.database_url, settings.workspace)
    try:
        later.ask(settings.home, target, {"source": options.source, "project": options.project, "seat": seat})
        if later.working(settings.home, target):
            return True
        subprocess.Popen(
            [sys.executable, "-m", "pybrain.hooks.finish", target],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # (what it could say may quote a turn)
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False
    return True


def _store_turns(
    brain: Any,
    turns: list[dict[str, Any]],
    options: Options,
    until: float | None,
    *,
    embed: bool,
    per_call: int | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Store turns through brain.observe_transcript in batches, oldest first, beginning none
    that would not end by `until` (time.time(); None: all of them). embed: embed each batch
    (a check, the embedder, then the write), else store them queued for `brain worker`.
    per_call: turns a statement stores at most (default BATCH_TURNS).
    The rows written, and the number of turns not sent (each batch is its own statement:
    what was stored stays, and a later call skips it)."""
    rows: list[dict[str, Any]] = []
    if not turns:
        return rows, 0
    if until is None:
        until = float("inf")
    # Each batch is read alone: what may be stored of each turn is taken from all of them
    # first, so a <private> span a batch leaves open stays open in the next.
    from psycopg.types.json import Jsonb

    turns = brain.value("capturable_turns", turns=Jsonb(turns))
    rate = TURN_SECONDS * (2 if embed else 1)
    done = 0
    while done < len(turns):
        room = until - time.time() - (LAST_SECONDS if until != float("inf") else 0)
        most = (per_call or BATCH_TURNS) if done else min(per_call or FIRST_TURNS, FIRST_TURNS)
        size = min(most, len(turns) - done, int(room / rate) if room > 0 else 0)
        if size < 1:
            break
        batch = turns[done : done + size]
        began = time.perf_counter()
        if embed:
            rows += brain.observe_transcript(
                batch,
                source_system=_harness(options)[0],
                project=options.project,
                source_agent=options.source,
            )
        else:
            rows += brain.call(
                "observe_transcript",
                turns=Jsonb(batch),
                source_system=_harness(options)[0],
                project=options.project,
                source_agent=options.source,
            )
        rate = max(rate, (time.perf_counter() - began) / size)
        done += size
    return rows, len(turns) - done
