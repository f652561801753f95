"""Exceptions, and the one place where database errors become them.

The database raises SQLSTATE class ``BR`` with a message, a DETAIL (often JSON)
and a HINT; ``wrap_exceptions`` turns those into the classes below by code.
Each class's docstring is its default message. ``docs/errors.md`` lists them.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import psycopg


class BrainError(Exception):
    """pybrain could not do that."""

    code: str | None = None
    exit_code: int = 1

    def __init__(self, message: str | None = None, *, detail: Any = None, hint: str | None = None) -> None:
        self.message = message or (self.__doc__ or "").strip()
        self.detail = detail
        self.hint = hint
        super().__init__(self.message)

    def as_dict(self) -> dict[str, Any]:
        return {
            "error": type(self).__name__,
            "code": self.code,
            "message": self.message,
            "detail": self.detail,
            "hint": self.hint,
        }


class InvalidKind(BrainError):
    """The kind must be rule, fact, incident or task."""

    code = "BR001"


class InvalidSeverity(BrainError):
    """A rule's severity must be BLOCKER or PATTERN."""

    code = "BR002"


class HeadlineMissing(BrainError):
    """A memory needs a headline."""

    code = "BR003"


class HeadlineTooLong(BrainError):
    """The headline is longer than 15 words."""

    code = "BR004"


class BodyTooLong(BrainError):
    """The body is longer than 400 words."""

    code = "BR005"


class StackedGuardrails(BrainError):
    """The body stacks several date-stamped GUARDRAIL markers."""

    code = "BR006"


class SecretDetected(BrainError):
    """The text contains something that looks like a secret."""

    code = "BR007"


class DuplicateMemory(BrainError):
    """A related memory already exists."""

    code = "BR008"


class InvalidArgument(BrainError):
    """An argument is not valid."""

    code = "BR009"


class MemoryNotFound(BrainError):
    """No such memory in this workspace."""

    code = "BR010"


class InvalidTransition(BrainError):
    """The memory is not in a state that allows this."""

    code = "BR011"


class InvalidEmbedding(BrainError):
    """The embedding does not fit the embedding space."""

    code = "BR012"


class ActionItemsPending(BrainError):
    """Pending action items must be acknowledged before writing."""

    code = "BR013"


class ReasonRequired(BrainError):
    """This change needs a reason."""

    code = "BR014"


class ImmutableRule(BrainError):
    """A rule's text and severity change only through supersede."""

    code = "BR015"


class SessionNotFound(BrainError):
    """No such session in this workspace."""

    code = "BR016"


class AccessDenied(BrainError):
    """The connected role may not do this in this workspace."""

    code = "BR020"


class WorkspaceNotFound(BrainError):
    """No such workspace, organization, role or token."""

    code = "BR021"


class ConcurrentDuplicate(BrainError):
    """A concurrent write stored a duplicate first; the transaction was rolled back: send it again."""

    code = "BR022"


class RequestKeyReused(BrainError):
    """This request key was sent with another request (another function or other arguments).

    A request key names one request: sent again with the same arguments, the call is answered
    as the first time; ``detail`` names the first request's function and when it was sent.
    """

    code = "BR023"


class InputTooLarge(BrainError):
    """The input is over a documented limit (or its size cannot be known before it is read).

    Raised by the Python side before anything is read past the limit or sent to
    the database (docs/errors.md, BR030): a transcript, a document, standard
    input. ``detail`` names the limit: {"limit_bytes", "what", ...}.
    """

    code = "BR030"


class InvalidText(BrainError):
    """The text cannot be stored (NUL bytes or invalid UTF-8)."""


class DatabaseUnavailable(BrainError):
    """The database cannot be reached."""

    exit_code = 3


class MigrationError(BrainError):
    """The database schema cannot be brought up to date."""

    exit_code = 3


class EmbedderError(BrainError):
    """The embedding provider failed."""

    exit_code = 4


class EmbeddingRefused(EmbedderError):
    """The embedding provider refused a text, or answered it with a vector that is not finite.

    Unlike an outage, trying again soon gives the same answer: `brain worker`
    reports such a text to brain.embedding_failed, which decides when it is
    tried again and when it is parked. ``status`` is the provider's HTTP status
    (None for a non-finite vector) and ``reason`` a short message that never
    contains the text.
    """

    def __init__(self, message: str, *, status: int | None, reason: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.status = status
        self.reason = reason


_BY_SQLSTATE: dict[str, type[BrainError]] = {
    cls.code: cls
    for cls in (
        InvalidKind,
        InvalidSeverity,
        HeadlineMissing,
        HeadlineTooLong,
        BodyTooLong,
        StackedGuardrails,
        SecretDetected,
        DuplicateMemory,
        InvalidArgument,
        MemoryNotFound,
        InvalidTransition,
        InvalidEmbedding,
        ActionItemsPending,
        ReasonRequired,
        ImmutableRule,
        SessionNotFound,
        AccessDenied,
        WorkspaceNotFound,
        ConcurrentDuplicate,
        RequestKeyReused,
    )
    if cls.code
}


# PostgreSQL's own errors for a value it cannot take: a literal of the wrong
# type, a number out of range, a missing value, an unknown argument. Their
# messages quote the value ('invalid input syntax for type bigint: "..."'), so
# pybrain reports them as BR009 with the type or the limit alone: the value
# may be a secret pasted into the wrong field (docs/errors.md).
_RAW_ARGUMENT_ERRORS: dict[str, tuple[str, str]] = {
    "22P02": ("An argument is not a valid {type}.", "Send a value of the argument's type (docs/sql-api.md)."),
    "22007": (
        "An argument is not a valid {type}.",
        "Send times in ISO 8601: 2026-03-02 or 2026-03-02T09:00:00+00:00.",
    ),
    "22008": ("A time is out of range.", "Send times in ISO 8601, between the years 1 and 294276."),
    "22003": ("A number is out of range for {type}.", "Send a smaller number (see docs/sql-api.md)."),
    "22015": ("An interval is out of range.", "Send a shorter interval, such as 30 days or 12 hours."),
    "22004": ("An argument may not be null.", "Leave the argument out for its default, or send a value."),
    # (these messages name a column, a function or a limit, never a value: kept)
    "23502": ("", "Send every required argument (docs/sql-api.md)."),
    "42883": ("", "Check the argument names and types against docs/sql-api.md."),
    "54000": ("", "Send less: a shorter text or fewer items."),
    "54001": ("", "Send flatter JSON."),
    "2202E": ("An array is not valid here.", "Send a one-dimensional array."),
    "22001": ("A text is too long for its field.", "Send a shorter text."),
}

_TYPE_IN_MESSAGE = re.compile(r"for type ([a-z ]+?)(?::|$| )")


def _raw_argument_error(sqlstate: str, message: str) -> BrainError | None:
    """BR009 for a raw SQLSTATE that quotes an argument's value, or None for another."""
    if sqlstate not in _RAW_ARGUMENT_ERRORS:
        return None
    text, hint = _RAW_ARGUMENT_ERRORS[sqlstate]
    found = _TYPE_IN_MESSAGE.search(message or "")
    kind = found.group(1).strip() if found else "value of its type"
    if "array" in (message or "") and sqlstate == "22P02":
        kind = "array"
    if "json" in (message or "") and sqlstate == "22P02":
        kind = "JSON"
    return InvalidArgument(text.format(type=kind) or message, detail={"sqlstate": sqlstate}, hint=hint)


def _parse_detail(detail: str | None) -> Any:
    if not detail:
        return None
    try:
        return json.loads(detail)
    except ValueError:
        return detail


def from_database(exc: psycopg.Error) -> BrainError:
    """The BrainError that a database exception stands for."""
    diag = exc.diag
    sqlstate = diag.sqlstate or ""
    cls = _BY_SQLSTATE.get(sqlstate)
    if cls is not None:
        return cls(
            diag.message_primary,
            detail=_parse_detail(diag.message_detail),
            hint=diag.message_hint,
        )
    if isinstance(exc, psycopg.OperationalError) and not sqlstate:
        return DatabaseUnavailable(
            str(exc).strip() or None,
            hint="Check BRAIN_DATABASE_URL, or run `brain db start` for the embedded database.",
        )
    if sqlstate == "22021":  # character_not_in_repertoire: bytes that are not UTF-8
        return InvalidText(diag.message_primary, hint="Send the text as UTF-8.")
    raw = _raw_argument_error(sqlstate, diag.message_primary or "")
    if raw is not None:
        return raw
    return BrainError(
        diag.message_primary or str(exc).strip(),
        detail={"sqlstate": sqlstate} if sqlstate else None,
        hint=diag.message_hint,
    )


@contextlib.contextmanager
def wrap_exceptions() -> Iterator[None]:
    """Re-raise database and encoding errors as BrainError subclasses."""
    try:
        yield
    except BrainError:
        raise
    except psycopg.DataError as exc:
        if exc.diag.sqlstate:
            raise from_database(exc) from exc
        # Raised by the client before sending: text PostgreSQL cannot hold.
        raise InvalidText(str(exc), hint="Remove NUL (0x00) bytes from the text.") from exc
    except psycopg.Error as exc:
        raise from_database(exc) from exc
    except UnicodeEncodeError as exc:
        raise InvalidText("The text is not valid UTF-8.", hint="Send the text as UTF-8.") from exc
