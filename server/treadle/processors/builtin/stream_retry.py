"""``StreamErrorRetry``: retries transient provider errors with exponential backoff, honouring
``Retry-After`` (and ``retry-after-ms``)."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Any

from ...core.errors import APICallError
from ...core.args import ProcessAPIErrorArgs
from ._options import require
from .clock import Clock, SystemClock

_TRANSIENT_KINDS = frozenset({
    "server_error", "api_error", "overloaded_error", "rate_limit_error", "rate_limit_exceeded",
    "timeout_error", "service_unavailable", "internal_error",
})


@dataclass(frozen=True)
class StreamErrorRetryOptions:
    max_retries: int = 1
    """Retries per call this processor asks for (the run's retry budget also applies)."""
    base_delay: float = 1.0
    """Seconds before the first retry; doubled for each further one."""
    max_delay: float = 30.0
    """The longest wait between tries, and the longest ``Retry-After`` honoured: a provider
    asking for more is not retried."""

    def __post_init__(self) -> None:
        require(self.max_retries >= 0, "option 'maxRetries' must be >= 0")
        require(self.base_delay >= 0, "option 'baseDelay' must be >= 0")
        require(self.max_delay >= self.base_delay, "option 'maxDelay' must be >= 'baseDelay'")


def is_transient(error: Exception) -> bool:
    """A connection failure, 408/409/429/5xx, or an error event mid-stream of a transient kind;
    never one the provider marked ``x-should-retry: false``."""
    if not isinstance(error, APICallError):
        return False
    if error.headers.get("x-should-retry") == "false":
        return False
    if error.is_retryable:
        return True
    if error.status_code is None and isinstance(error.body, dict):
        kinds = {str(error.body.get(k, "")) for k in ("type", "code")}
        inner = error.body.get("error")
        if isinstance(inner, dict):
            kinds |= {str(inner.get(k, "")) for k in ("type", "code")}
        return bool(kinds & _TRANSIENT_KINDS) or "retry your request" in error.message.lower()
    return False


def retry_after(error: APICallError, now: float | None = None) -> float | None:
    """The wait the provider asked for, in seconds, or None."""
    headers = error.headers
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class StreamErrorRetry:
    """Asks for a retry of a transient failure after a backoff, at most ``maxRetries`` times per
    call. The provider SDKs retry failed requests themselves first (``modelSettings.maxRetries``,
    default 2); errors they give up on and errors that break a stream after it started (which
    no SDK retries) reach this processor."""

    name = "Stream error retry"
    description = "Retries transient provider errors with backoff, honouring Retry-After."

    def __init__(
        self, *, max_retries: int = 1, base_delay: float = 1.0, max_delay: float = 30.0,
        clock: Clock | None = None, id: str = "stream-error-retry",
    ) -> None:
        self.id = id
        self.options = StreamErrorRetryOptions(max_retries, base_delay, max_delay)
        self.clock: Clock = clock or SystemClock()

    def delay_for(self, error: APICallError, attempt: int) -> float | None:
        """Seconds to wait before retry number ``attempt`` (0-based); None: do not retry."""
        asked = retry_after(error)
        if asked is not None:
            return asked if asked <= self.options.max_delay else None
        return min(self.options.max_delay, self.options.base_delay * 2**attempt)

    async def process_api_error(self, args: ProcessAPIErrorArgs) -> dict[str, Any] | None:
        error = args.error
        attempt = int(args.state.get("attempts", 0))
        if attempt >= self.options.max_retries or not is_transient(error):
            return None
        assert isinstance(error, APICallError)
        delay = self.delay_for(error, attempt)
        if delay is None:
            return None
        args.state["attempts"] = attempt + 1
        await self.clock.sleep(delay)
        return {"retry": True}
