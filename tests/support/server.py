"""The loopback HTTP/1.1 server both wire fakes share: script playing and request recording."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .script import HttpError, ScriptStep, Turn


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any


class ScriptedServer:
    """Plays one scripted turn per POST to ``api_path``; subclasses render the provider's wire.

    Every request is recorded in ``recorded`` (``requests`` holds just the JSON bodies). Running
    out of script answers 500 with ``x-should-retry: false`` (so SDKs do not retry it) and adds
    a message to ``failures``. Every request is first checked as the real API checks it
    (``validate``): a request the API would refuse gets its 400 error JSON, plays no turn, and
    adds a message to ``failures`` too.

    The ``fakes_played_out`` fixture (autouse, ``tests/conftest.py``) fails every test that leaves
    a server it made with ``failures`` or with script not played; a test that provokes them on
    purpose takes them with ``take_failures()`` / checks ``remaining`` and clears the script.
    """

    api_path = ""
    provider = ""
    created: list[ScriptedServer] = []
    """Every server made in this process, oldest first (the teardown check reads it)."""

    def __init__(self, script: Iterable[ScriptStep] = ()) -> None:
        ScriptedServer.created.append(self)
        self.script: list[ScriptStep] = list(script)
        self.recorded: list[RecordedRequest] = []
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._played = 0
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        # A short poll interval keeps close() (which waits for the serve loop) quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"{self.provider}-wire",
            daemon=True,
        )
        self._thread.start()

    # --- public -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    @property
    def requests(self) -> list[Any]:
        """The parsed JSON bodies of every request, in order."""
        return [r.body for r in self.recorded]

    @property
    def remaining(self) -> int:
        return len(self.script) - self._played

    def take_failures(self) -> list[str]:
        """The failures so far, cleared (for a test that provokes them on purpose)."""
        with self._lock:
            taken, self.failures = self.failures, []
        return taken

    def add(self, *steps: ScriptStep) -> None:
        with self._lock:
            self.script.extend(steps)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- provider hooks ---------------------------------------------------------------------

    def error_body(self, error: HttpError) -> dict[str, Any]:
        raise NotImplementedError

    def validate(self, body: dict[str, Any]) -> HttpError | None:
        """The 400 the real API answers to ``body``, or None when it would accept it."""
        return None

    def response_headers(self) -> dict[str, str]:
        return {}

    def events(self, turn: Turn, request: dict[str, Any]) -> Iterator[bytes]:
        raise NotImplementedError

    # --- serving ----------------------------------------------------------------------------

    def _next_turn(self, body: Any) -> Turn | str:
        with self._lock:
            index = self._played
            if index >= len(self.script):
                message = (
                    f"scripted {self.provider} server: script exhausted: request #{index + 1} "
                    f"has no turn (the script has {len(self.script)})"
                )
                self.failures.append(message)
                return message
            self._played += 1
            step = self.script[index]
        if isinstance(step, Turn):
            return step
        try:
            return step(body)
        except Exception as e:  # noqa: BLE001 - reported to the test through `failures`
            message = f"scripted {self.provider} server: turn #{index + 1} raised {e!r}"
            self.failures.append(message)
            return message

    def _serve(self, h: _Handler, raw: bytes) -> None:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        headers = {k.lower(): v for k, v in h.headers.items()}
        self.recorded.append(RecordedRequest(h.command, h.path, headers, body))
        if h.path.split("?")[0] != self.api_path:
            return self._send_error(h, HttpError(404, f"no route for {h.command} {h.path}"))
        if not isinstance(body, dict) or not body.get("stream"):
            message = "the scripted server answers only streaming requests (stream: true)"
            return self._send_error(h, HttpError(400, message))
        refused = self.validate(body)
        if refused is not None:
            with self._lock:
                self.failures.append(
                    f"scripted {self.provider} server: request #{len(self.recorded)} refused as the real API "
                    f"would: {refused.message}"
                )
            return self._send_error(h, refused)
        turn = self._next_turn(body)
        if isinstance(turn, str):
            return self._send_error(h, HttpError(500, turn), {"x-should-retry": "false"})
        if turn.delay_before:
            time.sleep(turn.delay_before)
        if turn.error is not None:
            return self._send_error(h, turn.error)
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream; charset=utf-8")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        for k, v in self.response_headers().items():
            h.send_header(k, v)
        h.end_headers()
        for i, event in enumerate(self.events(turn, body)):
            if turn.pace and i:
                time.sleep(turn.pace)
            try:
                h.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                h.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # the client went away mid-answer
                return
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    def _send_error(
        self, h: _Handler, error: HttpError, extra: dict[str, str] | None = None
    ) -> None:
        payload = json.dumps(self.error_body(error)).encode()
        h.send_response(error.status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        for k, v in (self.response_headers() | (extra or {})).items():
            h.send_header(k, v)
        if error.retry_after_ms is not None:
            h.send_header("retry-after-ms", str(error.retry_after_ms))
        if error.retry_after is not None:
            h.send_header("retry-after", f"{error.retry_after:g}")
        h.end_headers()
        h.wfile.write(payload)
        h.wfile.flush()


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded unless it is already a string."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client closing its kept-alive connection is normal; anything else is printed.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self._dispatch()

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch()

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        owner: ScriptedServer = self.server.owner  # type: ignore[attr-defined]
        try:
            owner._serve(self, raw)
        except ConnectionError:
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass
