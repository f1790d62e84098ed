"""Domain errors -> gRPC statuses, in one place for every servicer."""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc

from ..core.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
)
from ..core.errors import ShuttingDownError as Draining
from ..memory.retry import StoreUnavailableError
from ..signals.hub import SubscriptionGapError
from ..signals.ownership import RunAbortedError
from ..loop.resolve import ResolverUnavailableError
from sqlalchemy.exc import SQLAlchemyError
from ..voice.audio import AudioError
from ..voice.base import VoiceProviderError

log = logging.getLogger(__name__)

SHUTTING_DOWN = "server is shutting down"


class ShuttingDownError(Exception):
    """A run refused or ended because the server is draining."""

    def __init__(self) -> None:
        super().__init__(SHUTTING_DOWN)


_CODES: tuple[tuple[type[Exception], grpc.StatusCode], ...] = (
    (NotFoundError, grpc.StatusCode.NOT_FOUND),
    (InvalidArgumentError, grpc.StatusCode.INVALID_ARGUMENT),
    (AlreadyExistsError, grpc.StatusCode.ALREADY_EXISTS),
    (FailedPreconditionError, grpc.StatusCode.FAILED_PRECONDITION),
    (PermissionDeniedError, grpc.StatusCode.PERMISSION_DENIED),
    (ShuttingDownError, grpc.StatusCode.UNAVAILABLE),
    (UnauthenticatedError, grpc.StatusCode.UNAUTHENTICATED),
    (ResourceExhaustedError, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (Draining, grpc.StatusCode.UNAVAILABLE),
    (RunAbortedError, grpc.StatusCode.ABORTED),
    (StoreUnavailableError, grpc.StatusCode.UNAVAILABLE),
    (SubscriptionGapError, grpc.StatusCode.UNAVAILABLE),
    (ResolverUnavailableError, grpc.StatusCode.UNAVAILABLE),
    (VoiceProviderError, grpc.StatusCode.UNAVAILABLE),
    (AudioError, grpc.StatusCode.INVALID_ARGUMENT),
)


def status_for(exc: Exception) -> tuple[grpc.StatusCode, str]:
    for cls, code in _CODES:
        if isinstance(exc, cls):
            return code, str(exc)
    if isinstance(exc, SQLAlchemyError):  # its text holds SQL and the database's address: log only
        log.error("store error in an RPC", exc_info=exc)
        return grpc.StatusCode.UNAVAILABLE, "the database failed; see the server log (retry later)"
    # Not a deliberate error: the traceback goes to the log under an id the client gets; its text
    # (which may hold SQL, hosts or paths) does not leave the server.
    incident = uuid.uuid4().hex[:12]
    log.error("unexpected error in an RPC (incident %s)", incident, exc_info=exc)
    return grpc.StatusCode.INTERNAL, f"internal error (incident {incident} in the server log)"


async def abort_with(context: grpc.aio.ServicerContext, exc: Exception) -> NoReturn:
    """End the RPC with the status ``exc`` maps to (``context.abort`` raises)."""
    if isinstance(exc, grpc.aio.AbortError):  # already aborted further down: keep that status
        raise exc
    code, message = status_for(exc)
    await context.abort(code, message)
    raise AssertionError("context.abort returned")  # pragma: no cover


Req = TypeVar("Req")
Resp = TypeVar("Resp")
Handler = Callable[[Any, Req, grpc.aio.ServicerContext], Awaitable[Resp]]


def unary(fn: Handler[Req, Resp]) -> Handler[Req, Resp]:
    """Wrap a unary handler so that domain errors become statuses."""

    @functools.wraps(fn)
    async def wrapper(self: Any, request: Req, context: grpc.aio.ServicerContext) -> Resp:
        try:
            return await fn(self, request, context)
        except Exception as e:
            await abort_with(context, e)

    return wrapper
