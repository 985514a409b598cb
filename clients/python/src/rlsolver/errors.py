"""Typed errors: every non-2xx answer of the server becomes one, carrying its RFC 9457 problem
details (`status`, `title`, `detail` and, when the server names the offending input, `field`)."""

from __future__ import annotations

from typing import Any


class RLSolverError(Exception):
    """An error answer of the server (or, with `status` 0, no answer at all)."""

    def __init__(self, status: int, title: str, detail: str, field: str | None = None, type: str = "about:blank"):
        self.status = status
        self.title = title
        self.detail = detail
        self.field = field
        self.type = type
        where = f" (field '{field}')" if field else ""
        super().__init__(f"{status} {title}{where}: {detail}")

    @classmethod
    def from_problem(cls, status: int, body: Any, text: str = "") -> "RLSolverError":
        """The error class for `status`, filled from a problem+json body (or the raw text)."""
        if not isinstance(body, dict):
            body = {}
        kind = _BY_STATUS.get(status, ServerError if status >= 500 else RLSolverError)
        return kind(
            status,
            str(body.get("title") or _TITLES.get(status, "Error")),
            str(body.get("detail") or text or "no detail"),
            body.get("field"),
            str(body.get("type") or "about:blank"),
        )


class BadRequest(RLSolverError):
    """400: the body is not the JSON the endpoint reads."""


class Unauthorized(RLSolverError):
    """401: missing or wrong API key."""


class Forbidden(RLSolverError):
    """403: the key lacks the scope."""


class NotFound(RLSolverError):
    """404: no such problem, job, model or population."""


class Conflict(RLSolverError):
    """409: the resource is not in a state that allows this (a name taken, a job not finished)."""


class PayloadTooLarge(RLSolverError):
    """413: an instance or request over one of the server's documented limits."""


class InvalidInput(RLSolverError):
    """422: the input is well-formed but invalid; `field` names what to fix."""


class Busy(RLSolverError):
    """429 or 503 after every retry: the server's queue or solve slots stayed full."""


class ServerError(RLSolverError):
    """5xx other than 503."""


_BY_STATUS = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: BadRequest,
    422: InvalidInput,
    429: Busy,
    503: Busy,
}
_TITLES = {400: "Bad Request", 404: "Not Found", 422: "Unprocessable Content", 429: "Too Many Requests"}
