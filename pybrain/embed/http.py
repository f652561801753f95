"""What the HTTP providers share: session, timeouts, retries, errors, response checks."""

from __future__ import annotations

import abc
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import requests

from pybrain.embed.base import Embedder, current_deadline, env_float, env_int
from pybrain.errors import EmbedderError, EmbeddingRefused

CONNECT_TIMEOUT = 3.0
# The provider refused the texts themselves (bad input, too long, unprocessable):
# sending them again gives the same answer, other texts may pass.
REFUSAL_STATUSES = (400, 413, 422)
_PROBE_TEXT = "dimension probe"
_MAX_ERROR_TEXT = 300
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


@dataclass(frozen=True)
class HttpSettings:
    """Retry and timeout policy; attempt n > 1 waits retry_delay * 2 ** (n - 2) first.

    `deadline` bounds one request in total, its retries and waits included: when
    it has passed, the request fails and the write that waited for it is stored
    and queued. Each attempt's connect and read timeouts are cut to what is left.
    """

    attempts: int = 3
    retry_delay: float = 0.2
    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float = 30.0
    deadline: float = 5.0
    sleep: Callable[[float], None] = time.sleep

    @classmethod
    def from_env(cls) -> HttpSettings:
        return cls(
            attempts=env_int("BRAIN_EMBED_RETRIES", cls.attempts),
            retry_delay=env_float("BRAIN_EMBED_RETRY_DELAY", cls.retry_delay),
            read_timeout=env_float("BRAIN_EMBED_TIMEOUT", cls.read_timeout, minimum=0.001),
            deadline=env_float("BRAIN_EMBED_DEADLINE", cls.deadline, minimum=0.001),
        )


class HttpEmbedder(Embedder):
    """An embedder behind an HTTP API; subclasses define the wire format and the hints."""

    known_dims: ClassVar[dict[str, int]] = {}

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        headers: dict[str, str] | None = None,
        secret: str | None = None,
        settings: HttpSettings | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.settings = settings or HttpSettings.from_env()
        self._secret = secret
        self._session = requests.Session()
        self._session.headers.update(headers or {})
        self._dims = self._configured_dims()

    @property
    def dims(self) -> int:  # type: ignore[override]
        """From the known-models table or BRAIN_EMBED_DIMS, else learnt from one call."""
        if self._dims is None:
            self._embed_batch([_PROBE_TEXT])
        assert self._dims is not None
        return self._dims

    def _configured_dims(self) -> int | None:
        known = self.known_dims.get(self.model)
        if known is not None:
            return known
        configured = env_int("BRAIN_EMBED_DIMS", 0, minimum=0)
        return configured or None

    # The wire format.

    @property
    @abc.abstractmethod
    def endpoint(self) -> str:
        """The URL embeddings are posted to."""

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        """The JSON request body for one batch (Ollama's /api/embed and OpenAI's /embeddings
        both take the model and the texts as input)."""
        return {"model": self.model, "input": texts}

    @abc.abstractmethod
    def _vectors(self, body: Any) -> list[Any]:
        """The vectors in a decoded response body, in input order; ValueError etc. if malformed."""

    # What to tell the user.

    @abc.abstractmethod
    def _unreachable_hint(self) -> str: ...

    @abc.abstractmethod
    def _auth_hint(self) -> str: ...

    @abc.abstractmethod
    def _not_found_hint(self) -> str: ...

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        body = self._post(self._payload(texts))
        try:
            raw = self._vectors(body)
            vectors = [[float(value) for value in vector] for vector in raw]
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise self._bad_response(f"the response has no usable vectors ({exc!r})") from exc
        if len(vectors) != len(texts):
            raise self._bad_response(f"it returned {len(vectors)} vectors for {len(texts)} texts")
        if self._dims is None and vectors:
            self._dims = len(vectors[0])
        for vector in vectors:
            if len(vector) != self._dims:
                raise self._error(
                    f"{self.provider} model {self.model} at {self.endpoint} returned "
                    f"{len(vector)}-dimension vectors; expected {self._dims}.",
                    self._dims_hint(),
                    dims=len(vector),
                    expected_dims=self._dims,
                )
        return vectors

    def _dims_hint(self) -> str:
        if self.model in self.known_dims:
            return f"Check that the server's {self.model!r} is the model of that name."
        return "Set BRAIN_EMBED_DIMS to the model's vector length, or unset it to detect it."

    def _post(self, payload: dict[str, Any]) -> Any:
        settings = self.settings
        url = self.endpoint
        failure, hint = "", ""
        total = current_deadline() or settings.deadline
        clock = time.monotonic
        ends = clock() + total
        attempt = 0
        for attempt in range(1, settings.attempts + 1):
            if attempt > 1:
                wait = settings.retry_delay * 2 ** (attempt - 2)
                if clock() + wait >= ends:
                    attempt -= 1
                    break
                settings.sleep(wait)
            left = ends - clock()
            if left <= 0:
                attempt -= 1
                break
            read_timeout = min(settings.read_timeout, left)
            try:
                response = self._session.post(
                    url, json=payload, timeout=(min(settings.connect_timeout, left), read_timeout)
                )
            except requests.ConnectionError as exc:  # includes ConnectTimeout
                failure = f"connection failed ({_reason(exc)})"
                hint = self._unreachable_hint()
                continue
            except requests.Timeout:
                failure = f"no answer within {read_timeout:g} s"
                hint = (
                    "Raise BRAIN_EMBED_DEADLINE (the total, seconds) or BRAIN_EMBED_TIMEOUT (one "
                    "attempt), or check the server's load. The write is stored and queued."
                    if read_timeout < settings.read_timeout
                    else "Raise BRAIN_EMBED_TIMEOUT (seconds), or check the server's load."
                )
                continue
            except requests.RequestException as exc:
                raise self._error(
                    f"{self.provider}: cannot send a request to {url}: {exc}",
                    self._unreachable_hint(),
                ) from exc
            status = response.status_code
            if status == 429 or status >= 500:
                failure = f"HTTP {status}: {self._error_text(response)}"
                hint = (
                    "The server is overloaded or failing: try again later, "
                    "or set BRAIN_EMBED_RETRIES to try more times."
                )
                continue
            if status >= 400:
                raise self._client_error(response, payload)
            try:
                return response.json()
            except ValueError as exc:
                raise self._bad_response("the response is not JSON") from exc
        extra: dict[str, Any] = {}
        if attempt < settings.attempts:
            failure = (failure + "; " if failure else "") + f"deadline of {total:g} s reached"
            hint = hint or "Raise BRAIN_EMBED_DEADLINE (seconds), or check the server's load."
            extra["deadline_s"] = total
        raise self._error(
            f"{self.provider} embedding request to {url} failed after {attempt} attempt(s): {failure}",
            hint,
            attempts=attempt,
            **extra,
        )

    def _client_error(self, response: requests.Response, payload: dict[str, Any]) -> EmbedderError:
        status = response.status_code
        text = self._error_text(response, payload)
        where = f"{self.provider} at {self.endpoint}"
        if status in (401, 403):
            message = f"{where}: authentication failed (HTTP {status}): {text}"
            hint = self._auth_hint()
        elif status == 404:
            message = f"{where}: model {self.model!r} not found (HTTP 404): {text}"
            hint = self._not_found_hint()
        else:
            message = f"{where} rejected the request (HTTP {status}): {text}"
            hint = f"Check the model name {self.model!r} and the input texts."
            if status in REFUSAL_STATUSES:
                return EmbeddingRefused(
                    message,
                    status=status,
                    reason=text,
                    hint=hint,
                    detail={
                        "provider": self.provider,
                        "model": self.model,
                        "url": self.endpoint,
                        "status": status,
                    },
                )
        return self._error(message, hint, status=status)

    def _bad_response(self, reason: str) -> EmbedderError:
        return self._error(
            f"{self.provider} at {self.endpoint} sent an unexpected response: {reason}.",
            "Check that the URL points at a server speaking this provider's API.",
        )

    def _error(self, message: str, hint: str, **detail: Any) -> EmbedderError:
        return EmbedderError(
            message,
            hint=hint,
            detail={"provider": self.provider, "model": self.model, "url": self.endpoint, **detail},
        )

    def _error_text(self, response: requests.Response, payload: dict[str, Any] | None = None) -> str:
        """The server's own error message, short, and without the API key or the texts sent."""
        try:
            error: Any = response.json().get("error", "")
            if isinstance(error, dict):
                error = error.get("message", "")
            text = str(error)
        except (ValueError, AttributeError):
            text = response.text
        text = " ".join(text.split())
        for sent in (payload or {}).get("input", []):
            sent = " ".join(str(sent).split())
            if len(sent) >= 4:
                text = text.replace(sent, "[the text]")
        text = text[:_MAX_ERROR_TEXT] or response.reason or "no message"
        if self._secret:
            text = text.replace(self._secret, "***")
        return text


def _reason(exc: requests.RequestException) -> str:
    """The OS's reason, such as "Connection refused", without urllib3's nested reprs."""
    found = _ERRNO.search(str(exc))
    return found.group(1).strip() if found else type(exc).__name__
