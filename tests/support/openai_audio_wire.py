"""A loopback server speaking OpenAI's audio endpoints as the real API does.

``POST /v1/audio/speech`` (JSON: ``model``, ``input``, ``voice``, ``response_format``...) answers
the audio bytes, chunked; ``pcm`` is 24 kHz mono 16-bit little-endian. ``POST
/v1/audio/transcriptions`` (multipart form: ``file``, ``model``, optional ``prompt``,
``language``...) answers ``{"text": ...}``. A request the real API would refuse gets its 400
error JSON and a message in ``failures``.

Scripts: ``speech`` is a list of PCM byte strings (one per speech request, in order);
``transcripts`` a list of texts (one per transcription request).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SPEECH_FORMATS = {"mp3", "opus", "aac", "flac", "wav", "pcm"}
SPEECH_VOICES = {"alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse"}
SPEECH_MODELS = {"tts-1", "tts-1-hd", "gpt-4o-mini-tts"}
TRANSCRIPTION_MODELS = {"whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe"}
MAX_SPEECH_INPUT = 4096


@dataclass
class AudioRequest:
    path: str
    headers: dict[str, str]
    json: dict[str, Any] | None = None
    form: dict[str, Any] = field(default_factory=dict)
    """Multipart fields; ``file`` is ``(filename, content_type, bytes)``."""


class OpenAIAudioServer:
    def __init__(self, speech: list[bytes] | None = None, transcripts: list[str] | None = None) -> None:
        self.speech = list(speech or [])
        self.transcripts = list(transcripts or [])
        self.recorded: list[AudioRequest] = []
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> OpenAIAudioServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the two endpoints ------------------------------------------------------------------

    def serve(self, h: BaseHTTPRequestHandler, raw: bytes) -> None:
        headers = {k.lower(): v for k, v in h.headers.items()}
        if not headers.get("authorization", "").startswith("Bearer "):
            return self._error(h, 401, "You didn't provide an API key.", "invalid_request_error")
        if h.path == "/v1/audio/speech":
            return self._speech(h, headers, raw)
        if h.path == "/v1/audio/transcriptions":
            return self._transcription(h, headers, raw)
        return self._error(h, 404, f"Invalid URL (POST {h.path})", "invalid_request_error")

    def _speech(self, h: BaseHTTPRequestHandler, headers: dict[str, str], raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except ValueError:
            return self._refuse(h, "We could not parse the JSON body of your request.")
        self.recorded.append(AudioRequest(h.path, headers, json=body))
        for key in ("model", "input", "voice"):
            if not body.get(key):
                return self._refuse(h, f"Missing required parameter: '{key}'.")
        if body["model"] not in SPEECH_MODELS:
            return self._refuse(h, f"Invalid model '{body['model']}'.")
        if body["voice"] not in SPEECH_VOICES:
            return self._refuse(h, f"Invalid value for 'voice': '{body['voice']}'.")
        if body.get("response_format", "mp3") not in SPEECH_FORMATS:
            return self._refuse(h, f"Invalid value for 'response_format': '{body['response_format']}'.")
        if len(body["input"]) > MAX_SPEECH_INPUT:
            return self._refuse(h, "'input' is too long.")
        if "instructions" in body and body["model"] in {"tts-1", "tts-1-hd"}:
            return self._refuse(h, "'instructions' is not supported for this model.")
        with self._lock:
            if not self.speech:
                self.failures.append("openai audio server: a speech request came with no scripted audio left")
                return self._error(h, 500, "out of script", "server_error")
            audio = self.speech.pop(0)
        h.send_response(200)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for at in range(0, len(audio), 4096):
            piece = audio[at:at + 4096]
            h.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    def _transcription(self, h: BaseHTTPRequestHandler, headers: dict[str, str], raw: bytes) -> None:
        kind = headers.get("content-type", "")
        if not kind.startswith("multipart/form-data"):
            return self._refuse(h, "Invalid Content-Type header: multipart/form-data is required.")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {kind}\r\n\r\n".encode() + raw)
        form: dict[str, Any] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            filename = part.get_filename()
            payload = part.get_payload(decode=True) or b""
            form[str(name)] = (filename, part.get_content_type(), payload) if filename else payload.decode()
        self.recorded.append(AudioRequest(h.path, headers, form=form))
        if "file" not in form:
            return self._refuse(h, "Missing required parameter: 'file'.")
        if form.get("model") not in TRANSCRIPTION_MODELS:
            return self._refuse(h, f"Invalid model '{form.get('model')}'.")
        filename, _, data = form["file"]
        if not filename or "." not in filename or not data:
            return self._refuse(h, "Invalid file format.")
        with self._lock:
            if not self.transcripts:
                self.failures.append("openai audio server: a transcription came with no scripted text left")
                return self._error(h, 500, "out of script", "server_error")
            text = self.transcripts.pop(0)
        self._json(h, 200, {"text": text})

    # --- replies ----------------------------------------------------------------------------

    def _refuse(self, h: BaseHTTPRequestHandler, message: str) -> None:
        self.failures.append(f"openai audio server: refused as the real API would: {message}")
        self._error(h, 400, message, "invalid_request_error")

    def _error(self, h: BaseHTTPRequestHandler, status: int, message: str, kind: str) -> None:
        self._json(h, status, {"error": {"message": message, "type": kind, "param": None, "code": None}},
                   {"x-should-retry": "false"})

    @staticmethod
    def _json(h: BaseHTTPRequestHandler, status: int, body: Any, extra: dict[str, str] | None = None) -> None:
        payload = json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        for k, v in (extra or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(payload)
        h.wfile.flush()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            self.server.owner.serve(self, raw)  # type: ignore[attr-defined]
        except ConnectionError:
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass
