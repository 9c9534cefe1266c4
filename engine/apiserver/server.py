"""The HTTP/1.1 front: keep-alive connections, JSON answers, chunked watch streams flushed per event.

The stdlib ThreadingHTTPServer serves one thread per connection, which suits long watch streams and
needs no dependency; TCP_NODELAY and single writes per answer keep keep-alive round trips fast.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from engine.apiserver import protobuf
from engine.apiserver.api import Api
from engine.apiserver.faults import WatchCut
from engine.apiserver.objects import json_bytes
from engine.apiserver.requests import ApiRequest, ApiResponse
from engine.apiserver.watch import StreamCut

log = logging.getLogger(__name__)


class HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, api: Api, port: int) -> None:
        self.api = api
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), RequestHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (killed, its connection reset) is routine, not a traceback on stderr;
        anything else is logged as an error."""
        if isinstance(sys.exc_info()[1], OSError):
            log.debug("http connection from %s was cut", client_address, exc_info=True)
        else:
            log.exception("http connection from %s failed", client_address)

    def close_connections(self) -> None:
        """Drop every open connection (idle keep-alives and streams) so their threads end."""
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


def encode(body: Any, accept: str) -> tuple[bytes, dict[str, str]]:
    """The answer's bytes: as given, protobuf for a client that prefers it (and a kind that has a message), else
    JSON ending in a newline (as Go's json.Encoder writes it)."""
    if isinstance(body, bytes):
        return body, {}
    if isinstance(body, dict) and protobuf.prefers_protobuf(accept):
        encoded = protobuf.encode_envelope(body)
        if encoded is not None:
            return encoded, {"Content-Type": protobuf.MEDIA_TYPE}
    return json_bytes(body) + b"\n", {}


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: HttpServer

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http " + format, *args)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        try:
            body = self._read_body()
        except ValueError:
            self.send_error(HTTPStatus.BAD_REQUEST, "malformed request body")
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = ApiRequest(self.command, url.path, query, headers, body)
        resp = self.server.api.handle(req)
        if resp.stream is not None:
            self._write_stream(resp)
        else:
            self._write(resp, req.accept)

    def _head(self, resp: ApiResponse, extra: dict[str, str]) -> bytes:
        phrase = HTTPStatus(resp.code).phrase if resp.code in HTTPStatus._value2member_map_ else ""
        lines = [f"HTTP/1.1 {resp.code} {phrase}"]
        empty = resp.body == b"" and resp.code != HTTPStatus.OK  # a 304 or 406 names no type
        plain = {} if empty else {"Content-Type": "application/json"}
        headers = {**plain, **resp.headers, **extra}
        lines += [f"{k}: {v}" for k, v in headers.items() if v]  # an empty value: no such header
        lines += [f'Warning: 299 - {json.dumps(w)}' for w in resp.warnings]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")

    def _write(self, resp: ApiResponse, accept: str) -> None:
        payload, extra = encode(resp.body, accept)
        if resp.code != HTTPStatus.NOT_MODIFIED:  # a 304 has no body, and names none: the cached answer stands
            extra["Content-Length"] = str(len(payload))
        head = self._head(resp, extra)
        self.wfile.write(head if self.command == "HEAD" else head + payload)

    def _write_stream(self, resp: ApiResponse) -> None:
        assert resp.stream is not None
        self.wfile.write(self._head(resp, {"Transfer-Encoding": "chunked", "Cache-Control": "no-cache, private"}))
        stream = resp.stream
        try:
            for chunk in stream:
                if not chunk:
                    if self._peer_closed():
                        break
                    continue
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            else:
                self.wfile.write(b"0\r\n\r\n")
                return
            self.close_connection = True
        except StreamCut as cut:
            if cut.args and cut.args[0] == WatchCut.END:
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    def _peer_closed(self) -> bool:
        """Whether the client hung up (the socket reads as EOF) while the stream was idle."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
