"""The kubelet's HTTPS API on 127.0.0.1, the part an API server uses: `GET /containerLogs/{ns}/{pod}/{container}`
(how pods/log reaches a node) and `/healthz`.

As a kubelet started with `--client-ca-file` and no anonymous access: a client must present a certificate the
cluster's CA signed (the API server's `--kubelet-client-certificate`), and the server presents one of its own,
signed by the same CA for 127.0.0.1. One server plays the kubelet of every simulated node (each Node reports its
port); it answers from the pods it knows (the kubelet simulator's cache, with its own status writes) and the
`LogStore` both runtimes write to. Errors are plain text in the kubelet's words, which the API server passes on.
"""

from __future__ import annotations

import contextlib
import http.server
import select
import ssl
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from engine.simulators.kubelet.containerlogs import (
    InvalidOptions,
    LogOptions,
    LogStore,
    Unavailable,
    follow,
    render,
    run_of,
)

JsonDict = dict[str, Any]
PodLookup = Callable[[str, str], JsonDict | None]  # namespace, name -> the pod as this kubelet knows it
IDLE_SECONDS = 0.5  # how often a follow with no output checks whether its client is still there
HANDSHAKE_SECONDS = 10.0


class KubeletServer(http.server.ThreadingHTTPServer):
    """Serves the kubelet API on 127.0.0.1:`port` (0: a free one) over `tls` (a server context that requires
    client certificates, checked against the cluster's CA), until `close`."""

    daemon_threads = True

    def __init__(self, tls: ssl.SSLContext, pods: PodLookup, logs: LogStore, port: int = 0) -> None:
        if tls.verify_mode != ssl.CERT_REQUIRED:
            raise ValueError("the kubelet API requires client certificates: pass a context with CERT_REQUIRED")
        super().__init__(("127.0.0.1", port), Handler)
        self.tls, self.pods, self.logs = tls, pods, logs
        self.port = int(self.server_address[1])
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="kubelet-api", daemon=True)

    def start(self) -> KubeletServer:
        self._thread.start()
        return self

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that failed the TLS handshake (no certificate, or one the CA did not sign): dropped quietly."""

    def close(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(10)


class Handler(http.server.BaseHTTPRequestHandler):
    server: KubeletServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        raw = self.request
        raw.settimeout(HANDSHAKE_SECONDS)
        self.request = self.server.tls.wrap_socket(raw, server_side=True)  # a bad certificate fails here
        self.request.settimeout(None)
        super().setup()

    def handle(self) -> None:
        with contextlib.suppress(OSError):  # handshake refused, or the client hung up
            super().handle()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.split("/") if p]
        if parts == ["healthz"]:
            self._answer(200, b"ok")
        elif parts and parts[0] == "containerLogs":
            self._container_logs(parts[1:], {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()})
        else:
            self._answer(404, b"404 page not found\n")

    def _container_logs(self, names: list[str], query: dict[str, str]) -> None:
        if len(names) != 3:
            missing = ("podNamespace", "podID", "container name")[min(len(names), 2)]
            self._answer(400, f'{{"message": "Missing {missing}."}}'.encode())
            return
        namespace, name, container = names
        if "tail" in query:  # the kubelet's older spelling of tailLines ("all": no limit)
            tail = query.pop("tail")
            if tail != "all":
                query["tailLines"] = tail
        try:
            options = LogOptions.parse(query)
        except InvalidOptions:
            self._answer(422, b'{"message": "Invalid request."}')
            return
        except ValueError:
            self._answer(400, b'{"message": "Unable to decode query."}')
            return
        pod = self.server.pods(namespace, name)
        if pod is None:
            self._answer(404, f'pod "{name}" does not exist'.encode())
            return
        spec = pod.get("spec") or {}
        declared = [*(spec.get("containers") or []), *(spec.get("initContainers") or []),
                    *(spec.get("ephemeralContainers") or [])]
        if not any(c.get("name") == container for c in declared if isinstance(c, dict)):
            self._answer(404, f'container "{container}" not found in pod "{name}"'.encode())
            return
        try:
            cid = run_of(pod, container, query.get("previous", "").lower() in ("true", "1"))
        except Unavailable as e:
            self._answer(400, str(e).encode())
            return
        log = self.server.logs.get(cid)
        if log is None:
            self._answer(200, b"")
        elif options.follow:
            self._stream(follow(log, options, IDLE_SECONDS))
        else:
            self._answer(200, render(log, options))

    def _answer(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, chunks: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for chunk in chunks:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                elif self._peer_closed():
                    self.close_connection = True
                    return
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _peer_closed(self) -> bool:
        """Whether the client hung up while the stream was idle (a follower sends nothing after its request)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)
