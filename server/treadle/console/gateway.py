"""The console's HTTP server: the static pages, and the Connect protocol (JSON codec) for the
browser, forwarded call by call to the server's gRPC port.

The browser speaks Connect (``POST /treadle.v1.Service/Method``; unary calls as plain JSON,
server-streaming calls as enveloped JSON messages). Each call is turned into the same gRPC call
any client makes, on a channel to the server's own port, with the browser's ``Authorization``
header as the call's metadata: the gate authenticates and checks it as it does every client's,
so the console has no access of its own. Client-streaming methods (the attach streams) are not
offered.

A small HTTP/1.1 server on asyncio streams: the console is a handful of files and a few calls
at a time from one browser, so no web framework is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import ipaddress
import json
import logging
import struct
from collections.abc import AsyncIterator
from importlib import import_module, resources
from typing import Any

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message

log = logging.getLogger(__name__)

_PROTOS = ("agent_service", "thread_service", "processor_service", "tool_service", "console_service",
           "agent_version_service", "score_service", "voice_service")
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png"}
# Connect's HTTP status per gRPC code (connectrpc.com/docs/protocol, "Error Codes").
_HTTP = {"canceled": 499, "unknown": 500, "invalid_argument": 400, "deadline_exceeded": 504,
         "not_found": 404, "already_exists": 409, "permission_denied": 403, "resource_exhausted": 429,
         "failed_precondition": 400, "aborted": 409, "out_of_range": 400, "unimplemented": 501,
         "internal": 500, "unavailable": 503, "data_loss": 500, "unauthenticated": 401}
_MAX_HEADER_BYTES = 64 << 10


def _code(status: grpc.StatusCode) -> str:
    name = status.name.lower()
    return "canceled" if name == "cancelled" else name


class _HttpError(Exception):
    def __init__(self, code: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


class ConsoleGateway:
    def __init__(self, target: str, *, max_message_bytes: int = 16 << 20, hosts: tuple[str, ...] = ()) -> None:
        self.target = target
        self.max_message_bytes = max_message_bytes
        self.hosts = {h.lower() for h in hosts} | {"localhost"}
        """Names the ``Host`` header may carry besides IP addresses (DNS rebinding: a page of
        another site whose name resolves to this address must not reach the API)."""
        for name in _PROTOS:  # registers every treadle.v1 service in the default pool
            import_module(f"treadle.v1.{name}_pb2")
        self._pool = descriptor_pool.Default()
        self._files = self._load_static()
        self._channel: grpc.aio.Channel | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @staticmethod
    def _load_static() -> dict[str, tuple[str, bytes, bytes]]:
        """path -> (content type, body, gzipped body): read once, at start."""
        out: dict[str, tuple[str, bytes, bytes]] = {}
        root = resources.files("treadle.console") / "static"
        for item in root.iterdir():
            suffix = "." + item.name.rpartition(".")[2]
            if item.is_file() and suffix in _TYPES:
                body = item.read_bytes()
                out["/" + item.name] = (_TYPES[suffix], body, gzip.compress(body, 9, mtime=0))
        out["/"] = out["/index.html"]
        return out

    async def start(self, listen: str) -> int:
        limit = self.max_message_bytes
        self._channel = grpc.aio.insecure_channel(self.target, options=[
            ("grpc.max_receive_message_length", limit), ("grpc.max_send_message_length", limit)])
        host, _, port = listen.rpartition(":")
        self._server = await asyncio.start_server(self._connection, host.strip("[]"), int(port),
                                                  limit=_MAX_HEADER_BYTES)
        return int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
        if self._channel is not None:
            await self._channel.close()
            self._channel = None

    # --- HTTP ---------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                keep = await self._request(reader, writer)
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = (lines[0].split(" ") + ["", ""])[:3]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        if length > self.max_message_bytes + 5:
            await self._send_error(writer, "resource_exhausted", "request too large")
            return False
        body = await reader.readexactly(length) if length else b""
        path = path.split("?", 1)[0]
        if not self._host_ok(headers.get("host", "")):
            await self._plain(writer, 403, "text/plain", b"unknown Host: open the console by its address")
            return False
        if method == "GET" or method == "HEAD":
            return await self._static(writer, path, headers, method == "HEAD")
        if method != "POST":
            await self._plain(writer, 405, "text/plain", b"method not allowed")
            return True
        return await self._call(reader, writer, path, headers, body)

    def _host_ok(self, host: str) -> bool:
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        name = name.strip("[]").lower()
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return name in self.hosts

    async def _plain(self, writer: asyncio.StreamWriter, status: int, content_type: str, body: bytes,
                     extra: dict[str, str] | None = None, head_only: bool = False) -> None:
        lines = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}", f"Content-Type: {content_type}",
                 f"Content-Length: {len(body)}", "X-Content-Type-Options: nosniff",
                 "Referrer-Policy: no-referrer"]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (b"" if head_only else body))
        await writer.drain()

    async def _static(self, writer: asyncio.StreamWriter, path: str, headers: dict[str, str], head: bool) -> bool:
        found = self._files.get(path)
        if found is None:
            await self._plain(writer, 404, "text/plain", b"not found")
            return True
        content_type, body, zipped = found
        extra = {"Cache-Control": "no-cache",
                 "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; media-src blob:; frame-ancestors 'none'"}
        if "gzip" in headers.get("accept-encoding", ""):
            extra["Content-Encoding"] = "gzip"
            body = zipped
        await self._plain(writer, 200, content_type, body, extra, head)
        return True

    async def _send_error(self, writer: asyncio.StreamWriter, code: str, message: str,
                          status: int | None = None) -> None:
        body = json.dumps({"code": code, "message": message}).encode()
        await self._plain(writer, status or _HTTP.get(code, 500), "application/json", body)

    # --- Connect ------------------------------------------------------------------------------

    def _method(self, path: str) -> MethodDescriptor:
        service, _, name = path.strip("/").partition("/")
        if not service.startswith("treadle.v1.") or not name:
            raise _HttpError("not_found", f"no method {path}")
        try:
            method = self._pool.FindServiceByName(service).methods_by_name[name]
        except KeyError:
            raise _HttpError("not_found", f"no method {path}") from None
        if method.client_streaming:
            raise _HttpError("unimplemented", f"{path} streams requests; the console does not offer it")
        return method

    async def _call(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str,
                    headers: dict[str, str], body: bytes) -> bool:
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        streaming_request = content_type == "application/connect+json"
        try:
            if content_type not in ("application/json", "application/connect+json"):
                # Only these: a browser sends them cross-site only after a CORS preflight, which
                # this server never grants (a form on another site cannot call the API).
                raise _HttpError("unimplemented", "send application/json (or application/connect+json for "
                                                  "server-streaming methods)", 415)
            method = self._method(path)
            if method.server_streaming != streaming_request:
                raise _HttpError("invalid_argument", "server-streaming methods take application/connect+json, "
                                                     "others application/json")
            if streaming_request:
                if len(body) < 5:
                    raise _HttpError("invalid_argument", "an enveloped request message is required")
                size = struct.unpack(">I", body[1:5])[0]
                body = body[5:5 + size]
            request_cls = message_factory.GetMessageClass(method.input_type)
            response_cls = message_factory.GetMessageClass(method.output_type)
            try:
                request = json_format.Parse(body or b"{}", request_cls())
            except (json_format.ParseError, UnicodeDecodeError) as e:
                raise _HttpError("invalid_argument", f"request is not a valid {method.input_type.full_name}: {e}") from None
        except _HttpError as e:
            await self._send_error(writer, e.code, e.message, e.status)
            return True
        metadata = [("authorization", headers["authorization"])] if headers.get("authorization") else []
        rpc = f"/{method.containing_service.full_name}/{method.name}"
        assert self._channel is not None
        if not method.server_streaming:
            call = self._channel.unary_unary(rpc, request_serializer=_serialize,
                                             response_deserializer=response_cls.FromString)
            try:
                response = await call(request, metadata=metadata)
            except grpc.aio.AioRpcError as e:
                await self._send_error(writer, _code(e.code()), e.details() or "")
                return True
            await self._plain(writer, 200, "application/json", _to_json(response))
            return True
        stream = self._channel.unary_stream(rpc, request_serializer=_serialize,
                                            response_deserializer=response_cls.FromString)
        await self._stream(reader, writer, stream(request, metadata=metadata))
        return False

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, call: Any) -> None:
        """Enveloped JSON messages as they arrive, then the end-of-stream message; the gRPC call
        is cancelled as soon as the browser goes away (a closed tab stops its run)."""
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\n"
                     b"Cache-Control: no-store\r\nConnection: close\r\n\r\n")
        await writer.drain()

        async def watch() -> None:
            with contextlib.suppress(Exception):
                while await reader.read(4096):
                    pass
            call.cancel()

        watcher = asyncio.create_task(watch())
        end: dict[str, Any] = {}
        try:
            async for message in _responses(call):
                data = _to_json(message)
                writer.write(struct.pack(">BI", 0, len(data)) + data)
                await writer.drain()
        except grpc.aio.AioRpcError as e:
            end = {"error": {"code": _code(e.code()), "message": e.details() or ""}}
        except asyncio.CancelledError:
            call.cancel()
            raise
        except ConnectionError:
            call.cancel()
            return
        finally:
            watcher.cancel()
        data = json.dumps(end).encode()
        with contextlib.suppress(ConnectionError):
            writer.write(struct.pack(">BI", 2, len(data)) + data)
            await writer.drain()


async def _responses(call: Any) -> AsyncIterator[Message]:
    async for message in call:
        yield message


def _to_json(message: Message) -> bytes:
    return json_format.MessageToJson(message, indent=None).encode()


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()
