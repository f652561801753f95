"""The dashboard's routes: each page is SQL reads rendered by a template, each form one SQL call.

Every decision about memories is made by the brain.* functions the pages and
forms call through pybrain.client.Brain; this module only maps requests to
those calls, shows their results and errors, and keeps the browser safe:
autoescaped templates, a CSRF token on every form, a content security policy
without inline scripts or styles, no framing, and no caching of pages.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.datastructures import FormData, QueryParams
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pybrain import words
from pybrain.client import CATEGORIES, Brain, new_request_key, open_brain
from pybrain.connector import PoolConnector
from pybrain.errors import (
    AccessDenied,
    BrainError,
    DatabaseUnavailable,
    DuplicateMemory,
    InvalidArgument,
    InvalidTransition,
    MemoryNotFound,
)
from pybrain.health import health as health_report
from pybrain.serve import auth
from pybrain.serve.live import Listeners, StreamLimits
from pybrain.serve.pool import RETRY_AFTER, open_pool
from pybrain.serve.ui import charts

log = logging.getLogger("pybrain.ui")

STATIC = Path(__file__).parent / "static"
CSRF_COOKIE = "brain_csrf"
SESSION_COOKIE = "brain_login"
LOGIN_LIFETIME = 12 * 3600.0  # seconds a browser login lasts
KINDS = words.KINDS
STATES = words.STATES
TIERS = ("hot", "warm", "cold", "archive")
WINDOWS = {"1h": ("1 hour", 12), "24h": ("24 hours", 24), "7d": ("7 days", 28)}
PAGE = 50

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # Nothing to other sites; this site's own requests carry their origin (no-referrer made
    # Chromium send "Origin: null" with the dashboard's own forms).
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeaders:
    """Adds the security headers to every response, and no-store to all but static assets."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"]
                headers += SECURITY_HEADERS
                headers.append((b"cache-control", b"no-cache" if static else b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


@dataclass(frozen=True)
class Viewer:
    """Who is looking: the workspace and access level the database grants, and the audit actor."""

    access: str  # read | write | admin
    actor: str

    @property
    def may_write(self) -> bool:
        return self.access in ("write", "admin")


class Logins:
    """Browser logins: a random session id in an HttpOnly cookie stands for a token kept here,
    in memory only, and verified again on every request. A restart logs everyone out."""

    def __init__(self) -> None:
        self._tokens: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def start(self, token: str) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            now = time.monotonic()
            self._tokens = {k: v for k, v in self._tokens.items() if v[1] > now}
            self._tokens[sid] = (token, now + LOGIN_LIFETIME)
        return sid

    def token(self, sid: str | None) -> str | None:
        if not sid:
            return None
        with self._lock:
            found = self._tokens.get(sid)
        return found[0] if found and found[1] > time.monotonic() else None

    def end(self, sid: str | None) -> None:
        with self._lock:
            self._tokens.pop(sid or "", None)


class Dashboard:
    """The dashboard for one database role and workspace (the local user's, by default)."""

    def __init__(
        self,
        conninfo: str,
        *,
        workspace: int | None,
        embedder_spec: str | None = None,
        actor: str = "ui",
        pool_size: int = 4,
        require_token: bool = False,
    ) -> None:
        self.conninfo = conninfo
        self.require_token = require_token
        self.logins = Logins()
        self.workspace = workspace
        # Each request's Brain embeds with its own workspace's active space (Brain.embedder):
        # one model for all would embed other workspaces' queries in the wrong space (BR012),
        # or send them to another workspace's paid provider.
        self.embedder_spec = embedder_spec
        self.actor = actor
        # Calls fail at once with DatabaseUnavailable (503) while the database is down. The
        # pool opens when the application starts (create_app's lifespan).
        self.pool = open_pool(conninfo, pool_size, name="pybrain-ui", wait=None, min_size=1, reset=False)
        self.connector = PoolConnector(self.pool)
        # One LISTEN connection for every live page of this process, and caps on the
        # pages one token and one role may hold open (pybrain.serve.live).
        self.listener = Listeners(conninfo)
        self.streams = StreamLimits()
        self.env = Environment(
            loader=PackageLoader("pybrain.serve.ui", "templates"),
            autoescape=True,  # every stored text is escaped: a memory holding <script> shows as text
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["when"] = _when
        self.env.filters["bytes"] = _bytes
        self.env.globals["KINDS"] = KINDS
        # A request key for each rendered form that would count twice if sent twice (a rating,
        # an annotation): a double click or a form sent again counts once.
        self.env.globals["request_key"] = new_request_key

    # --- plumbing -------------------------------------------------------------

    @contextmanager
    def brain(self, request: Request) -> Iterator[Brain]:
        """A Brain for this request, running as its principal (see principal)."""
        principal = self.principal(request)
        actor = self.actor if principal.anonymous else f"{self.actor}:{principal.name}"
        # One pooled connection for all of the request's calls.
        with self.connector.held() as connector:
            yield open_brain(
                "pooled",
                connector=connector,
                principal=principal,
                embedder_spec=self.embedder_spec,
                actor=actor,
            )

    def principal(self, request: Request) -> auth.Principal:
        """Who the request runs as: the role and workspace of its bearer token or of the token
        its login cookie stands for, asked of the database on every request (a revoked token
        stops at once); without either, the local role when no token is required."""
        cached = getattr(request.state, "principal", None)
        if cached is not None:
            return cached
        token = auth.bearer_token(request.headers)
        if token is None:
            token = self.logins.token(request.cookies.get(SESSION_COOKIE))
        if token is None and not self.require_token:
            principal = auth.Principal(workspace=self.workspace, role=None, access=None)
        else:
            with self.pool.connection() as conn:
                principal = auth.verify(conn, token)
        request.state.principal = principal
        return principal

    def viewer(self, brain: Brain) -> Viewer:
        return Viewer(access=brain.value("workspace_access"), actor=brain.actor or self.actor)

    def render(self, request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        token = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32)
        html = self.env.get_template(template).render(
            request=request,
            path=request.url.path,
            csrf=token,
            logged_in=self.logins.token(request.cookies.get(SESSION_COOKIE)) is not None,
            **context,
        )
        response = HTMLResponse(html, status_code=status_code)
        if request.cookies.get(CSRF_COOKIE) != token:
            response.set_cookie(
                CSRF_COOKIE,
                token,
                httponly=True,
                samesite="strict",
                secure=request.url.scheme == "https",
                path="/",
            )
        return response

    # --- pages ----------------------------------------------------------------

    def memories(self, request: Request) -> Response:
        q = request.query_params
        f = _memory_filters(q)
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            facets = brain.value("dashboard_facets")
            error = None
            results: list[dict[str, Any]] = []
            try:
                if f["q"]:
                    results = brain.search(
                        f["q"],
                        kinds=f["kinds"] or None,
                        categories=[f["category"]] if f["category"] else None,
                        project=f["project"],
                        tags=f["tags"] or None,
                        people=f["people"] or None,
                        created_after=f["after"],
                        created_before=f["before"],
                        include_superseded=f["include_superseded"],
                        include_archived=f["include_archived"],
                        include_dormant=f["include_dormant"],
                        as_of=f["as_of"],
                        max_results=min(f["max_results"], 100),
                    )
                else:
                    results = brain.call(
                        "list_memories",
                        kinds=f["kinds"] or None,
                        projects=[f["project"]] if f["project"] is not None else None,
                        states=f["states"] or None,
                        tiers=f["tiers"] or None,
                        only_flagged=f["only_flagged"],
                        before_id=f["before_id"],
                        max_results=f["max_results"],
                    )
            except BrainError as exc:
                error = exc
        more = None
        if not f["q"] and len(results) == f["max_results"]:
            more = _query(q, before_id=results[-1]["id"])
        return self.render(
            request,
            "memories.html",
            status_code=_status(error) if error else 200,
            viewer=viewer,
            facets=facets,
            f=f,
            results=results,
            error=error,
            more=more,
            categories=CATEGORIES,
            states=STATES,
            tiers=TIERS,
        )

    def memory(
        self,
        request: Request,
        error: BrainError | None = None,
        done: str | None = None,
        form: dict[str, str] | None = None,
    ) -> Response:
        memory_id = _int(request.path_params["id"])
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            try:
                page = brain.value("memory_page", id=memory_id)
            except MemoryNotFound as exc:
                return self.render(request, "error.html", 404, viewer=viewer, error=exc)
            trail = brain.call("audit_trail", id=memory_id, max_results=100)
        return self.render(
            request,
            "memory.html",
            status_code=_status(error) if error else 200,
            viewer=viewer,
            m=page,
            trail=trail,
            error=error,
            done=done or request.query_params.get("done"),
            form=form or {},
        )

    def history(self, request: Request) -> Response:
        q = request.query_params
        memory_id = _int(q.get("memory")) if q.get("memory") else None
        actor = q.get("actor") or None
        action = q.get("action") or None
        before_id = _int(q.get("before_id")) if q.get("before_id") else None
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            facets = brain.value("dashboard_facets")
            events = brain.call(
                "audit_trail",
                id=memory_id,
                actors=[actor] if actor else None,
                actions=[action] if action else None,
                before_id=before_id,
                max_results=PAGE,
            )
        more = _query(q, before_id=events[-1]["audit_id"]) if len(events) == PAGE else None
        return self.render(
            request,
            "history.html",
            viewer=viewer,
            facets=facets,
            events=events,
            memory=memory_id,
            actor=actor,
            action=action,
            more=more,
        )

    def _sessions_context(self, brain: Brain) -> dict[str, Any]:
        sessions = brain.call("list_sessions", max_results=50)
        return {
            "live": [s for s in sessions if s["status"] == "active"],
            "recent": [s for s in sessions if s["status"] != "active"],
            "handoffs": brain.call("recent_handoffs", max_results=10),
            "items": brain.call("list_action_items", max_results=50),
        }

    def sessions(self, request: Request) -> Response:
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            context = self._sessions_context(brain)
        return self.render(request, "sessions.html", viewer=viewer, **context)

    def sessions_live(self, request: Request) -> Response:
        """The live part of the sessions page, fetched again when the database says it changed."""
        with self.brain(request) as brain:
            context = self._sessions_context(brain)
        return self.render(request, "_sessions_live.html", **context)

    async def session_events(self, request: Request) -> Response:
        """Server-sent events: 'change' whenever this workspace's sessions channel is notified.

        No connection of its own: the process's Listener of that channel fans its
        notifications out; a token (or the local user) holds at most STREAMS_PER_TOKEN
        streams, a role STREAMS_PER_ROLE (429 beyond)."""
        try:
            channel = await asyncio.to_thread(self._sessions_channel, request)
        except auth.TokenRefused as exc:
            return auth.refusal(exc)
        except DatabaseUnavailable as exc:
            return _unavailable(exc)
        principal = self.principal(request)
        token = "local" if principal.anonymous else f"token:{principal.token_id}"
        role = principal.role or "local"
        refused = self.streams.acquire(token, role)
        if refused is not None:
            log.warning("live page refused: %s", refused)
            return Response(
                f"Too many live pages: {refused}. Close some, or reload later.\n",
                status_code=429,
                headers={"Retry-After": "30"},
                media_type="text/plain",
            )
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.streams.release(token, role)

        async def stream() -> AsyncIterator[str]:
            try:
                # The workspace's own channel: its name is random and only members learn it.
                async with self.listener.subscribe(channel) as notes:
                    yield "retry: 3000\n\n"
                    while not await request.is_disconnected():
                        try:
                            await asyncio.wait_for(notes.get(), 15.0)
                        except TimeoutError:
                            yield ": still here\n\n"
                            continue
                        # A burst of changes (a boot writes several rows) becomes one event;
                        # RECONNECTED (notifications may have been missed) refreshes too.
                        await asyncio.sleep(0.3)
                        while not notes.empty():
                            notes.get_nowait()
                        yield "event: change\ndata: sessions\n\n"
            finally:
                release()

        return StreamingResponse(stream(), media_type="text/event-stream", background=BackgroundTask(release))

    def _sessions_channel(self, request: Request) -> str:
        with self.brain(request) as brain, brain.transaction() as cur:
            cur.execute("SELECT brain.sessions_channel() AS channel")
            return cur.fetchone()["channel"]

    def health(self, request: Request) -> Response:
        key = request.query_params.get("window", "24h")
        window, buckets = WINDOWS.get(key, WINDOWS["24h"])
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            report = health_report(brain)
            tools = brain.metrics(window)
            series = brain.call("metrics_series", window_size=window, buckets=buckets)
            errors = brain.recent_errors(20)
            dead = brain.failed_embeddings(max_results=20)
            storage = brain.value("storage_state")
        return self.render(
            request,
            "health.html",
            viewer=viewer,
            report=report,
            tools=tools,
            errors=errors,
            dead=dead,
            storage=storage,
            window=key,
            windows=WINDOWS,
            calls_chart=charts.count_chart("Tool calls", series),
            error_chart=charts.series_chart("Error rate", "%", series, [("error_rate", "error rate", "err")]),
            latency_chart=charts.series_chart(
                "Latency",
                " ms",
                series,
                [("p50_ms", "p50", "p50"), ("p95_ms", "p95", "p95"), ("p99_ms", "p99", "p99")],
            ),
        )

    def decay(self, request: Request) -> Response:
        days = request.query_params.get("within", "7")
        within = min(int(days), 3650) if days.isdecimal() and int(days) > 0 else 7
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            facts = brain.call("decay_outlook", within=f"{within} days", max_results=200)
            threshold = float(brain.value("setting", name="fact_dormant_threshold"))
        soon = [r for r in facts if r["dormant_soon"]]
        dormant = [r for r in facts if r["dormant"]]
        return self.render(
            request,
            "decay.html",
            viewer=viewer,
            facts=facts,
            soon=soon,
            dormant=dormant,
            within=within,
            threshold=threshold,
            chart=charts.decay_chart(facts, threshold),
        )

    def flagged(self, request: Request) -> Response:
        include_confirmed = request.query_params.get("all") == "1"
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            rows = brain.list_flagged(include_confirmed, 100)
        return self.render(
            request, "flagged.html", viewer=viewer, rows=rows, include_confirmed=include_confirmed
        )

    def trajectories(self, request: Request) -> Response:
        project = request.query_params.get("project") or None
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            rows = brain.list_trajectories(project=project, include_superseded=True, max_results=200)
            steps = {
                r["id"]: (brain.value("memory_json", id=r["id"]) or {}).get("steps", []) for r in rows[:50]
            }
        return self.render(
            request, "trajectories.html", viewer=viewer, rows=rows, steps=steps, project=project or ""
        )

    def packs(self, request: Request) -> Response:
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            packs = brain.list_packs()
            rendered = {p["name"]: brain.render_pack(p["name"]) for p in packs}
        return self.render(request, "packs.html", viewer=viewer, packs=packs, rendered=rendered)

    def injections(self, request: Request) -> Response:
        key = request.query_params.get("window", "24h")
        window, _ = WINDOWS.get(key, WINDOWS["24h"])
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            by_trigger = brain.injection_metrics("trigger", window)
            by_session = brain.injection_metrics("session", window)
        return self.render(
            request,
            "injections.html",
            viewer=viewer,
            by_trigger=by_trigger,
            by_session=by_session,
            window=key,
            windows=WINDOWS,
        )

    def snapshots(self, request: Request) -> Response:
        project = request.query_params.get("project")
        with self.brain(request) as brain:
            viewer = self.viewer(brain)
            rows = brain.call("list_snapshots", project=project, max_results=200)
        return self.render(request, "snapshots.html", viewer=viewer, rows=rows, project=project)

    # --- login --------------------------------------------------------------------

    def login_page(self, request: Request, error: BrainError | None = None, status: int = 200) -> Response:
        return self.render(
            request,
            "login.html",
            status,
            viewer=Viewer(access="read", actor=""),
            error=error,
            anonymous=not self.require_token,
        )

    async def login(self, request: Request) -> Response:
        """Check a token typed into the login form; a good one gets an HttpOnly session cookie."""
        if request.method == "GET":
            return self.login_page(request)
        form = await request.form()
        if not _csrf_ok(request, form):
            return Response("The form's CSRF token is missing or wrong; reload the page.", 403)
        token = form.get("token")
        token = token.strip() if isinstance(token, str) else ""

        def check() -> auth.Principal:
            with self.pool.connection() as conn:
                return auth.verify(conn, token)

        try:
            await asyncio.to_thread(check)
        except auth.TokenRefused as exc:
            return self.login_page(request, exc, exc.status)
        except DatabaseUnavailable as exc:
            return _unavailable(exc)
        response = RedirectResponse("/memories", 303)
        response.set_cookie(
            SESSION_COOKIE,
            self.logins.start(token),
            max_age=int(LOGIN_LIFETIME),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    async def logout(self, request: Request) -> Response:
        form = await request.form()
        if not _csrf_ok(request, form):
            return Response("The form's CSRF token is missing or wrong; reload the page.", 403)
        self.logins.end(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/login", 303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    # --- curation -------------------------------------------------------------

    async def curate(self, request: Request) -> Response:
        """One curation form: the CSRF token checked, the write access checked, one SQL call."""
        form = await request.form()
        if not _csrf_ok(request, form):
            return Response("The form's CSRF token is missing or wrong; reload the page.", 403)
        try:
            return await asyncio.to_thread(self._curate, request, form)
        except auth.TokenRefused as exc:
            return auth.refusal(exc)
        except DatabaseUnavailable as exc:
            return _unavailable(exc)

    def _curate(self, request: Request, form: FormData) -> Response:
        action = request.path_params["action"]
        if action not in ACTIONS:
            return Response("Unknown action.", 404)
        try:
            memory_id = _int(request.path_params["id"])
        except InvalidArgument as exc:
            return Response(exc.message, 400)
        with self.brain(request) as brain:
            if not self.viewer(brain).may_write:
                return Response("This role may only read this workspace.", 403)
            try:
                done = ACTIONS[action](brain, memory_id, form)
            except BrainError as exc:
                log.info("curation %s of #%s refused: %s", action, memory_id, exc.message)
                error = exc
            else:
                error = None
        if error is not None:
            # shown with the database's message, the typed text kept in the form
            kept = {k: v for k, v in form.items() if isinstance(v, str) and k not in ("csrf", "next")}
            return self.memory(request, error=error, form={"action": action, **kept})
        target = _next(form.get("next"), f"/memories/{done.get('id', memory_id)}")
        return RedirectResponse(f"{target}{'&' if '?' in target else '?'}done={done['done']}", 303)


def _unavailable(exc: DatabaseUnavailable) -> Response:
    return Response(
        exc.message + "\n",
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER)},
        media_type="text/plain",
    )


def _form_text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def _pin(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    brain.pin(memory_id)
    return {"done": "pinned"}


def _unpin(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    brain.unpin(memory_id)
    return {"done": "unpinned"}


def _rate(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    brain.rate(memory_id, _form_text(form, "direction"), request_key=_form_text(form, "request_key") or None)
    return {"done": "rated"}


def _annotate(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    note, key = _form_text(form, "note"), _form_text(form, "request_key") or None
    brain.annotate(memory_id, note, source=brain.actor, request_key=key)
    return {"done": "annotated"}


def _confirm(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    brain.confirm(memory_id)
    return {"done": "confirmed"}


def _confirm_flagged(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    brain.confirm_flagged(memory_id)
    return {"done": "confirmed-flag"}


def _archive(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    brain.archive(memory_id, _form_text(form, "reason"))
    return {"done": "archived"}


def _restore(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    brain.restore(memory_id)
    return {"done": "restored"}


def _forget(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    brain.forget(memory_id, _form_text(form, "reason"))
    return {"done": "forgotten"}


def _supersede(brain: Brain, memory_id: int, form: FormData) -> dict[str, Any]:
    result = brain.supersede(
        memory_id,
        _form_text(form, "headline"),
        _form_text(form, "reason"),
        body=_form_text(form, "body") or None,
    )
    return {"done": "superseded", "id": result.memory_id}


ACTIONS: dict[str, Callable[[Brain, int, FormData], dict[str, Any]]] = {
    "pin": _pin,
    "unpin": _unpin,
    "rate": _rate,
    "annotate": _annotate,
    "confirm": _confirm,
    "confirm-flagged": _confirm_flagged,
    "archive": _archive,
    "restore": _restore,
    "forget": _forget,
    "supersede": _supersede,
}


# --- helpers ------------------------------------------------------------------


def _csrf_ok(request: Request, form: FormData) -> bool:
    """The form carries the token of this browser's cookie (double submit), from this site."""
    cookie = request.cookies.get(CSRF_COOKIE)
    sent = form.get("csrf")
    if not cookie or not isinstance(sent, str) or not hmac.compare_digest(cookie.encode(), sent.encode()):
        return False
    origin = request.headers.get("origin")
    if origin == "null":
        # An opaque origin: a sandboxed frame, a file, or a redirect. Only the browser's own
        # word, which no page can set, makes it this site.
        return request.headers.get("sec-fetch-site") == "same-origin"
    if origin is not None:
        return origin == f"{request.url.scheme}://{request.headers.get('host', '')}"
    return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")


def _next(value: Any, default: str) -> str:
    """A local path to return to after a form: never another site."""
    if isinstance(value, str) and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return default


def _int(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        # (the value is never repeated: a query string may hold anything)
        raise InvalidArgument("An id is a whole number.", detail={"type": "integer"}) from None
    if not 0 < number < 2**63:
        raise InvalidArgument("An id is a whole number from 1.", detail={"type": "integer"})
    return number


def _status(error: BrainError) -> int:
    if isinstance(error, AccessDenied):
        return 403
    if isinstance(error, MemoryNotFound):
        return 404
    if isinstance(error, DuplicateMemory | InvalidTransition):
        return 409
    return 400


def _query(q: QueryParams, **changes: Any) -> str:
    params = {k: v for k, v in q.multi_items() if k not in changes}
    items = list(params.items()) + [(k, str(v)) for k, v in changes.items()]
    return "?" + urlencode(items)


def _memory_filters(q: QueryParams) -> dict[str, Any]:
    def words(name: str) -> list[str]:
        return [w.strip().lstrip("#@") for w in (q.get(name) or "").split(",") if w.strip()]

    def checked(name: str) -> bool:
        return q.get(name) == "1"

    def when(name: str) -> str | None:
        return q.get(name) or None

    max_results = q.get("max", str(PAGE))
    return {
        "q": (q.get("q") or "").strip(),
        "kinds": [k for k in q.getlist("kind") if k],
        "category": q.get("category") or None,
        "project": q.get("project") if q.get("project") not in (None, "*") else None,
        "tags": words("tags"),
        "people": words("people"),
        "after": when("after"),
        "before": when("before"),
        "as_of": when("as_of"),
        "include_superseded": checked("superseded"),
        "include_archived": checked("archived"),
        "include_dormant": checked("dormant"),
        "states": [s for s in q.getlist("state") if s],
        "tiers": [t for t in q.getlist("tier") if t],
        "only_flagged": checked("flagged"),
        "before_id": int(q["before_id"]) if (q.get("before_id") or "").isdecimal() else None,
        "max_results": int(max_results) if max_results.isdecimal() and 0 < int(max_results) <= 500 else PAGE,
    }


def _when(value: Any) -> Markup:
    """A timestamp to the minute, kept on one line."""
    if value is None:
        return Markup("—")
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return Markup('<span class="when">{}</span>').format(value)
    return Markup('<span class="when">{}</span>').format(value.strftime("%Y-%m-%d %H:%M"))


def _bytes(value: Any) -> str:
    n = float(value or 0)
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def create_app(dashboard: Dashboard, *, allowed_hosts: list[str] | None = None) -> Starlette:
    """The ASGI app; allowed_hosts guards a loopback dashboard against DNS rebinding."""

    def guarded(handler: Callable[..., Response]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                return await asyncio.to_thread(handler, request)
            except auth.TokenRefused as exc:
                if auth.bearer_token(request.headers) is None:
                    return RedirectResponse("/login", 303)  # a browser: log in with a token
                return auth.refusal(exc)
            except BrainError as exc:  # a bad id in the URL, the database down: said on a page
                log.warning("%s %s: %s", request.method, request.url.path, exc.message)
                status = 503 if isinstance(exc, DatabaseUnavailable) else _status(exc)
                response = dashboard.render(
                    request, "error.html", status, viewer=Viewer(access="read", actor=""), error=exc
                )
                if status == 503:
                    response.headers["Retry-After"] = str(RETRY_AFTER)
                return response

        return endpoint

    routes = [
        Route("/", lambda request: RedirectResponse("/memories", 303)),
        Route("/memories", guarded(dashboard.memories)),
        Route("/memories/{id}", guarded(dashboard.memory)),
        Route("/memories/{id}/{action}", dashboard.curate, methods=["POST"]),
        Route("/history", guarded(dashboard.history)),
        Route("/sessions", guarded(dashboard.sessions)),
        Route("/sessions/live", guarded(dashboard.sessions_live)),
        Route("/sessions/events", dashboard.session_events),
        Route("/health", guarded(dashboard.health)),
        Route("/decay", guarded(dashboard.decay)),
        Route("/flagged", guarded(dashboard.flagged)),
        Route("/trajectories", guarded(dashboard.trajectories)),
        Route("/packs", guarded(dashboard.packs)),
        Route("/injections", guarded(dashboard.injections)),
        Route("/snapshots", guarded(dashboard.snapshots)),
        Route("/login", dashboard.login, methods=["GET", "POST"]),
        Route("/logout", dashboard.logout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await asyncio.to_thread(dashboard.pool.open, wait=True)
        try:
            yield
        finally:
            await dashboard.listener.close()
            await asyncio.to_thread(dashboard.pool.close)

    middleware = [Middleware(SecurityHeaders)]
    if allowed_hosts:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts))
    return Starlette(routes=routes, middleware=middleware, lifespan=asynccontextmanager(lifespan))
