"""`brain hook EVENT`: memory from an agent client's hooks, without the agent deciding.

Claude Code runs a hook command at SessionStart, UserPromptSubmit, PreCompact
and SessionEnd with one JSON object on standard input (session_id,
transcript_path, cwd, hook_event_name, and per event source, prompt, trigger
or reason). Each event here is a thin shell over SQL:

- session-start: brain.boot_session; prints the boot payload as
  hookSpecificOutput.additionalContext.
- prompt: brain.prompt_context; prints the few memories the prompt brings up
  (nothing when none is relevant).
- pre-compact, session-end: the transcript's new turns through
  brain.observe_transcript (the gate redacts or refuses secrets), then a
  handoff from brain.transcript_handoff through brain.end_session_of.

A hook never blocks the session: whatever fails (no database, a deadline, bad
input) is one line on standard error, nothing on standard output, exit 0. A
database that has not accepted the connection CONNECT_BY seconds after the hook
started is given up; what pre-compact and session-end could not write is kept on disk
(pybrain.hooks.spool) and written by the next hook or command that reaches it.
"""

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


def run(
    event: str, raw: bytes, options: Options, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run one hook: its JSON answer (if any) to `out`, a notice to `err` on failure. Always 0."""
    out = out or sys.stdout
    err = err or sys.stderr
    options = replace(options, timeout=options.timeout or DEFAULT_TIMEOUT[event], event=event)
    if event in CONTEXT_EVENTS and options.budget is not None:
        options = replace(options, budget=min(options.budget, OUTPUT_TOKENS))
    payload = None
    try:
        payload = _payload(raw)
        if options.source == "cursor":
            payload = _from_cursor(payload)
        with _deadline(options.timeout):
            answer = HANDLERS[event](payload, options)
    except Exception as exc:  # a hook never fails the session: it says why and exits 0
        kept = ""
        if payload is not None and event in CAPTURE_EVENTS and _outage(exc):
            try:
                kept = f"; its input is kept in {_keep(event, payload, options)} for the next hook or command"
            except Exception as failed:
                kept = f"; its input could not be kept ({type(failed).__name__}: {_first_line(str(failed))})"
        print(f"pybrain {event} hook: {_describe(exc)}{kept} (the session goes on without it)", file=err)
        if event in CONTEXT_EVENTS and _outage(exc):
            notice = _unavailable(event, exc, payload)
            if notice is not None:
                _print(out, notice, options.source)
        return 0
    if event in CONTEXT_EVENTS and payload is not None:
        _told(payload, forget=True)  # memory is back: a later outage is told again
    if answer is not None:
        _print(out, answer, options.source)
    return 0


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
    import hashlib

    session = _string(payload, "session_id")
    if session is None:
        return False
    try:
        from pybrain.entry import home

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


def write_kept(settings: Any, err: TextIO | None = None, seconds: float | None = None) -> int:
    """Write the capture hooks' inputs kept in the spool of settings.home for its database,
    oldest first, through the same hooks (see pybrain.hooks.spool); the number written.
    Stops at the first outage, and begins no record after `seconds`."""
    from pybrain.hooks import spool

    def write(record: dict[str, Any]) -> None:
        event = record["event"]
        kept = record.get("options") or {}
        options = Options(
            source=kept.get("source") or "claude-code",
            # (None: the seat's repository, named when the record is written)
            project=kept["project"] if isinstance(kept.get("project"), str) else None,
            budget=kept.get("budget"),
            timeout=DEFAULT_TIMEOUT[event],
            event=event,
            at=datetime.fromisoformat(record["at"]),
        )
        seat = os.environ.pop("CLAUDE_PROJECT_DIR", None)  # the record's seat, not this process's
        try:
            HANDLERS[event](record["payload"], options)
        except Exception as exc:
            if _outage(exc):
                raise spool.Outage(str(exc)) from exc
            raise RuntimeError(_describe(exc)) from exc
        finally:
            if seat is not None:
                os.environ["CLAUDE_PROJECT_DIR"] = seat

    return spool.drain(
        settings.home,
        write,
        lambda line: print(f"pybrain: {line}", file=err or sys.stderr),
        spool.target(settings.database_url, settings.workspace),
        None if seconds is None else time.monotonic() + seconds,
    )


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
    from pybrain.client import Brain
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
        if options.event not in ("", "prompt") and options.at is None and not _quick(options):
            # at most half the hook's time: the hook's own work comes after (not at a
            # session end within Claude Code's 1.5 s: its background process writes them)
            write_kept(settings, seconds=budget / 2)
        brain = Brain(
            conn,
            workspace=settings.workspace,
            embedder_spec=settings.embedder,
            actor=options.source,
            conninfo=url,
        )
        # Each call's transaction within the hook's time (SET LOCAL: no startup option,
        # which PgBouncer refuses, and nothing left on a pooled server connection).
        brain.statement_timeout = f"{int(budget * 1000)}ms"
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


# --- the events ------------------------------------------------------------


def session_start(payload: dict[str, Any], options: Options) -> dict[str, Any]:
    from pybrain.client import render_boot

    client_info = {
        "via": "hook",
        "client": _harness(options)[0],
        "client_session": _string(payload, "session_id"),
        "start": _string(payload, "source"),  # startup | resume | clear | compact
        "model": _string(payload, "model"),
        "transcript": _string(payload, "transcript_path"),  # read by a later start if no hook ends this one
    }
    with _brain(options, start=True) as brain:
        options = _project(options, brain, payload)
        _warm_up(brain)
        # No task at a session start: the database names what stands for one (the last
        # handoff), whose embedding finds the trajectories and the context pack to show.
        vector, space = _boot_query(brain, options)
        boot = brain.boot_session(
            options.source,
            project=options.project,
            cwd=_seat(payload),
            pid=_client_pid(),
            token_budget=options.budget,
            client_info={k: v for k, v in client_info.items() if v is not None},
            task_embedding=vector,
            embedding_space=space,
        )
        _mark_transcript(brain, options, client_info.get("client_session"), client_info.get("transcript"))
        try:
            if _worker_busy():
                # the background worker stores what sessions left: this seat's ended
                # sessions are asked of it too, and the payload goes out at once
                _finish_later(options, _seat(payload))
            elif _capture_ended(brain, options, _seat(payload)):
                # a handoff came from them: the payload shows it (and is found by it)
                vector, space = _boot_query(brain, options)
                boot = {
                    **boot,
                    **brain.value(
                        "boot_payload",
                        session=boot["session_id"],
                        task_embedding=vector,
                        embedding_space=space,
                        token_budget=options.budget,
                    ),
                }
        except HookTimeout:  # the payload goes out all the same; the next start tries once more
            print("pybrain session-start: no time left to capture an earlier session", file=sys.stderr)
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            # marked as injected: the capture hooks never store it back (brain.capturable_text)
            "additionalContext": f"{INJECTED[0]}\n{render_boot(boot)}{INJECTED[1]}",
        }
    }


# Days a transcript's mark is kept: brain.uncaptured_sessions hands out sessions of the last 7.
MARK_DAYS = 8


def _transcript_mark(opened: Any, project: str | None, session: str, transcript: str) -> Path:
    """The mark of a transcript this machine's hooks booted (or left) a session for: a file
    under BRAIN_HOME/run/transcripts named by a digest of the workspace, project, client
    session and path. A crashed session's transcript is read only when it is marked, so a
    path another member of the workspace planted in a session row is never read."""
    from pybrain.entry import home

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


def _boot_query(brain: Any, options: Options) -> tuple[list[float] | None, str | None]:
    """The embedding of brain.boot_query (the last handoff) and its space, by an embedder a
    hook may use without loading a model (none: the boot goes without, as before)."""
    from pybrain.errors import EmbedderError

    query = brain.value("boot_query", source=options.source, project=options.project or "")
    if not query:
        return None, None
    embedder = _hook_embedder(brain, remote=False)
    if embedder is None:
        return None, None
    try:
        return embedder.embed_one(query), embedder.space
    except EmbedderError:
        return None, None


def _capture_ended(
    opened: Any, options: Options, seat: str, *, embed: bool = True, per_call: int | None = None
) -> bool:
    """Capture the transcripts of this seat's sessions (of any harness) that ended without a
    capture hook (the client crashed): brain.uncaptured_sessions, then for each its turns through
    brain.observe_transcript and brain.capture_ended_session. True when a handoff was written."""
    import socket

    from psycopg.types.json import Jsonb

    from pybrain.errors import InputTooLarge
    from pybrain.hooks.transcript import read_turns

    handed = False
    # Stop beginning batches of turns at half the hook's time: the payload goes out after.
    until = (STARTED or time.time()) + (options.timeout or DEFAULT_TIMEOUT["session-start"]) / 2
    ended = opened.call(
        "uncaptured_sessions",
        source=options.source,
        project=options.project,
        cwd=seat,
        host=socket.gethostname(),
    )
    for row in ended:
        # (a session of another harness of the project: its turns stored, and its handoff
        # written, as its own hooks would have)
        harness = row["session_source"]
        own = replace(options, source=harness) if harness in HARNESSES else options
        if not _transcript_mark(opened, options.project, row["client_session"], row["transcript"]).exists():
            # not a transcript this machine's hooks booted a session for (a path planted in the
            # database, or one of another BRAIN_HOME): never read; the session is marked captured
            print(
                f"pybrain: session #{row['session_id']}'s transcript was not recorded by this machine's"
                " hooks; it is not read",
                file=sys.stderr,
            )
            turns = []
        else:
            try:
                turns = read_turns(os.path.expanduser(row["transcript"]), row["client_session"])
            except (OSError, InputTooLarge):
                turns = []  # gone from disk, or not a file to read: nothing to capture
        if turns:
            embedder = _hook_embedder(opened, remote=True) or _NoEmbedder()
            brain = opened.embedding_with(embedder)
            _, left = _store_turns(brain, turns, own, until, embed=embed, per_call=per_call)
            if left:
                # what is stored stays; this session is handed out again (brain.uncaptured_sessions)
                print(
                    f"pybrain: {left} turns of session #{row['session_id']} left for the next session start",
                    file=sys.stderr,
                )
                continue
        out = opened.value(
            "capture_ended_session",
            session=row["session_id"],
            turns=Jsonb(turns),
            client=_harness(own)[1],
        )
        handed = handed or out["stored"]
    return handed


def prompt(payload: dict[str, Any], options: Options) -> dict[str, Any] | None:
    text = payload.get("prompt")
    if not isinstance(text, str):
        raise ValueError("the UserPromptSubmit input has no prompt")
    if not text.strip():
        return None
    session = _string(payload, "session_id")
    with _brain(options, start=False) as brain:
        options = _project(options, brain, payload)
        # What may be searched for: the prompt without what the person marked <private>
        # (a span they left open in an earlier message included), which never reaches the
        # embedder either.
        text = _searchable(brain, payload, text)
        if not text:
            return None
        embedder = _hook_embedder(brain, remote=False)
        vector = None
        if embedder is not None:
            from pybrain.errors import EmbedderError

            try:
                vector = embedder.embed_one(text)
            except EmbedderError:
                vector = None  # by words only
        context = brain.value(
            "prompt_context",
            prompt=text,
            query_embedding=vector,
            embedding_space=embedder.space if vector is not None else None,
            project=options.project or None,
            exclude_source_system=_harness(options)[0] if session else None,
            exclude_ref_prefix=f"{session}/" if session else None,
            token_budget=options.budget,
        )
    if not context["text"]:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context["text"]}}


# How much of the transcript's end the prompt hook reads for a <private> span its person left
# open in an earlier message.
PROMPT_TRANSCRIPT_BYTES = 256 * 1024


def _searchable(brain: Any, payload: dict[str, Any], prompt: str) -> str:
    """What of a prompt may be searched for and embedded: the last text of
    brain.capturable_turns over the person's turns at the transcript's end (its last
    PROMPT_TRANSCRIPT_BYTES) and the prompt, so that a <private> they left open hides this
    prompt up to its </private>; without a transcript, the prompt alone."""
    from psycopg.types.json import Jsonb

    from pybrain.errors import InputTooLarge
    from pybrain.hooks.transcript import Lines, read_turns

    path = _string(payload, "transcript_path")
    session = _string(payload, "session_id") or "prompt"
    turns: list[dict[str, Any]] = []
    if path:
        try:
            lines = Lines(os.path.expanduser(path), max_bytes=PROMPT_TRANSCRIPT_BYTES)
            turns = [t for t in read_turns(lines.path, session, lines) if t["role"] == "user"]
        except (OSError, InputTooLarge, ValueError):
            turns = []
    if turns and turns[-1]["text"] == prompt:
        turns = turns[:-1]  # the client wrote the prompt before the hook ran
    turns.append({"ref": f"{session}/prompt", "role": "user", "text": prompt})
    return str(brain.value("capturable_turns", turns=Jsonb(turns))[-1]["text"])


def capture(payload: dict[str, Any], options: Options, event: str) -> None:
    """Observe the transcript's new turns, then end the session with a handoff written from them."""
    from pybrain.hooks.transcript import Lines, read_turns

    path = _string(payload, "transcript_path")
    session = _string(payload, "session_id") or (
        os.path.splitext(os.path.basename(path))[0] if path else None
    )
    turns: list[dict[str, Any]] = []
    missing = None
    lines = None
    if path and session:
        try:
            # (its last transcript.MAX_BYTES; a file that is not regular is refused, InputTooLarge)
            lines = Lines(os.path.expanduser(path))
            turns = read_turns(lines.path, session, lines)
        except FileNotFoundError:
            missing = path  # the session is ended with its handoff all the same
    detail = _string(payload, "trigger") or _string(payload, "reason")
    when = f"{event} ({detail})" if detail else event
    clock = time.perf_counter()
    # The live session-end hook has Claude Code's 1.5 s: it hands off first (from every
    # turn), then stores turns until END_BY and leaves the rest to the next session start.
    until = _end_by() if event == "session end" and options.at is None else None
    left = 0
    kept = ""
    with _brain(options, start=True) as opened:
        options = _project(options, opened, payload)
        embedder = _hook_embedder(opened, remote=True) or _NoEmbedder()
        brain = opened.embedding_with(embedder)

        def hand_off() -> dict[str, Any]:
            return brain.hand_off_transcript(
                turns,
                when,
                options.source,
                project=options.project,
                cwd=_seat(payload),
                client=_harness(options)[1],
                transcript=session,
                compaction=event == "compaction",
                now=options.at,
            )

        rows: list[dict[str, Any]] = []
        if until is None:
            if turns:
                rows = brain.observe_transcript(
                    turns,
                    source_system=_harness(options)[0],
                    project=options.project,
                    source_agent=options.source,
                )
            ended = hand_off()
        else:
            ended = hand_off()
            # Embedded here with the hash embedder (in this process, a few ms); with any other,
            # stored queued (a model or a network round trip would not keep to the deadline),
            # and the background process embeds them.
            space = opened.active_space()
            inline = space is not None and space.provider == "hash"
            rows, left = _store_turns(brain, turns, options, until, embed=inline)
            queued = not inline and any(r["action"] == "created" for r in rows)
            marked = None
            if left and ended.get("session") and path and session:
                marked = brain.value(
                    "leave_capture", session=ended["session"], transcript=path, client_session=session
                )["capture_left"]
                if marked is not None:  # its next start reads the rest of this transcript
                    _mark_transcript(opened, options, session, path)
            if left and marked is None:
                # no session of its own to mark: its input is kept, for the background process
                # (below) or the next hook or command to write
                kept = f"{left} turns kept in {_keep('session-end', payload, options)}"
            if marked is not None:
                later = (
                    "in the background"
                    if _finish_later(options, _seat(payload))
                    else "by the next session start"
                )
                kept = f"{left} turns left to store {later}"
            elif (queued and _hook_embedder(opened, remote=True) is not None) or _kept_waiting():
                _finish_later(options, _seat(payload))  # it embeds them, and writes what was kept
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["action"]] = counts.get(r["action"], 0) + 1
    summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "no new turns"
    if kept:
        summary = f"{summary}, {kept}"
    if missing:
        summary = f"no transcript at {missing}"
    elif lines is not None and lines.note():
        summary = f"{summary} (the transcript read in part: {lines.note()})"
    where = f"session #{ended['session']}" if ended.get("session") else "the next session"
    handed = (
        "nothing to hand off"
        if ended.get("handoff") is None
        else "the same handoff as before"
        if ended.get("unchanged")
        else f"handoff for {where}"
    )
    print(f"pybrain {event}: {summary}; {handed} ({time.perf_counter() - clock:.2f} s)", file=sys.stderr)


def _quick(options: Options) -> bool:
    """Whether this is the live session-end hook with Claude Code's 1.5 s (BRAIN_HOOK_END_BY)."""
    return options.event == "session-end" and options.at is None and _end_by() is not None


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
    from pybrain.hooks import finish, spool

    if os.environ.get("BRAIN_HOOK_FINISH", "").strip().lower() == "off":
        return False
    settings = Settings.from_env()
    try:
        return finish.working(settings.home, spool.target(settings.database_url, settings.workspace))
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
    from pybrain.hooks import finish, spool

    settings = Settings.from_env()
    target = spool.target(settings.database_url, settings.workspace)
    try:
        finish.ask(
            settings.home, target, {"source": options.source, "project": options.project, "seat": seat}
        )
        if finish.working(settings.home, target):
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


HANDLERS = {
    "session-start": session_start,
    "prompt": prompt,
    "pre-compact": lambda payload, options: capture(payload, options, "compaction"),
    "session-end": lambda payload, options: capture(payload, options, "session end"),
}
