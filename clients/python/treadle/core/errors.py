"""Errors raised across the runtime. Domain only: imports nothing from the rest of the package."""

from __future__ import annotations

from typing import Any


class TreadleError(Exception):
    """Base class of every error Treadle raises on purpose."""


class TripwireError(TreadleError):
    """Raised by a processor's ``abort()``; stops processing and emits a ``tripwire`` chunk."""

    def __init__(
        self,
        reason: str,
        *,
        retry: bool = False,
        metadata: Any = None,
        processor_id: str = "",
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry
        self.metadata = metadata
        self.processor_id = processor_id


class APICallError(TreadleError):
    """A provider API call failed (HTTP error, or a connection that never produced a response)."""

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        model_id: str,
        status_code: int | None = None,
        body: Any = None,
        is_retryable: bool = False,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.model_id = model_id
        self.status_code = status_code
        self.body = body
        self.is_retryable = is_retryable
        self.headers: dict[str, str] = headers or {}
        """The error response's headers, names lower-cased (``retry-after``, ...)."""

    def __str__(self) -> str:
        status = f" {self.status_code}" if self.status_code is not None else ""
        return f"{self.provider}{status}: {self.message}"


class ProcessorError(TreadleError):
    """A processor hook failed with something other than ``abort()``."""

    def __init__(self, processor_id: str, hook: str, cause: BaseException | str) -> None:
        super().__init__(f"processor {processor_id!r} failed in {hook}: {cause}")
        self.processor_id = processor_id
        self.hook = hook
        self.cause = cause


class ProcessorUnavailableError(ProcessorError):
    """A processor could not answer (not attached, timed out, disconnected, malformed answer)
    and its failure policy is ``fail_closed``: the run ends, whatever the hook."""


class ToolExecutionError(TreadleError):
    """A tool raised; the model receives the message as a tool error."""


class NotFoundError(TreadleError):
    """A named thing (agent, processor, tool, model provider) does not exist."""


class InvalidArgumentError(TreadleError):
    """Input that can never succeed: a malformed agent, request or option."""


class AlreadyExistsError(TreadleError):
    """Creating something whose id is taken."""


class FailedPreconditionError(TreadleError):
    """The request is well formed but the system's state forbids it."""


class UnauthenticatedError(TreadleError):
    """The caller presented no valid credential."""


class PermissionDeniedError(TreadleError):
    """The caller's credential does not allow this; the message names the missing scope."""


class ResourceExhaustedError(TreadleError):
    """A configured limit is reached; the message names the limit."""


class ShuttingDownError(TreadleError):
    """Refused because the server is draining."""
