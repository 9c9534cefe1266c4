"""Tap: an HTTP proxy on 127.0.0.1 between one client (a manager) and a cluster, that records what the client
sends and can be cut like a network partition (the soak's partition of the leader).

    with Tap.for_kubeconfig(cluster_kubeconfig) as tap:
        tap.write_kubeconfig(path)        # the client's kubeconfig: plain HTTP to the tap, no credentials
        tap.cut_at_next_write()           # the next write is held mid-flight, and everything after it
        tap.heal()
        tap.sent                          # every request forwarded: method, path, status, when sent and answered

While cut, nothing passes either way: requests and answers (watch events included) are held, as TCP holds
what a partitioned network did not deliver. On heal, what is held passes on, except on connections whose
client gave up meanwhile (closed them): their requests are dropped, as a client that aborts a connection
discards what it had not delivered. The tap forwards with the credentials of the cluster's kubeconfig.
"""

from __future__ import annotations

import base64
import contextlib
import select
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

import urllib3
import yaml

from engine.devcluster import kubeconfig

__all__ = ["Sent", "Tap"]

HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host", "te", "trailer",
                        "upgrade", "proxy-connection"})
READS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOK = 0.05  # seconds between looks at a held client's connection (a closed socket notifies nobody)


@dataclass(frozen=True)
class Sent:
    """One request the tap forwarded; `sent` and `answered` are wall-clock seconds (time.time())."""

    method: str
    path: str
    status: int
    sent: float
    answered: float

    @property
    def write(self) -> bool:
        return self.method not in READS and "watch=" not in self.path


class Tap:
    def __init__(self, upstream: str, *, ca: str | None = None, cert: str | None = None, key: str | None = None,
                 token: str | None = None) -> None:
        self.upstream = upstream.rstrip("/")
        tls: dict[str, Any] = {"ca_certs": ca, "cert_file": cert, "key_file": key} if upstream.startswith("https") \
            else {}
        self._pool = urllib3.PoolManager(maxsize=64, block=False, retries=False, **tls)
        self._auth = {"authorization": f"Bearer {token}"} if token else {}
        self._open = threading.Event()
        self._open.set()
        self._cut_on_write = threading.Event()
        self._lock = threading.Lock()
        self._sent: list[Sent] = []
        self._clients: set[socket.socket] = set()
        self._server: ThreadingHTTPServer | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self.cut_at: float | None = None  # wall-clock time of the latest cut
        self.dropped = 0  # requests and answers dropped because their client gave up while cut
        self.url = ""

    @classmethod
    def for_kubeconfig(cls, path: str | Path) -> Tap:
        """A tap to the current cluster of kubeconfig `path`, forwarding with its user's credentials."""
        config = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        context = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"]) or {}
        folder = tempfile.TemporaryDirectory(prefix="kplan-tap-")
        files = {}
        for field, stem in (("certificate-authority-data", "ca"), ("client-certificate-data", "cert"),
                            ("client-key-data", "key")):
            data = cluster.get(field) if stem == "ca" else user.get(field)
            if data:
                target = Path(folder.name) / f"{stem}.pem"
                target.write_bytes(base64.b64decode(data))
                files[stem] = str(target)
        tap = cls(str(cluster["server"]), token=user.get("token"), **files)
        tap._folder = folder
        return tap

    # lifecycle

    def start(self) -> Tap:
        tap = self

        class Handler(Forwarding):
            owner = tap

        self._server = Quiet(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="tap",
                         daemon=True).start()
        return self

    def stop(self) -> None:
        self._open.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            clients, self._clients = list(self._clients), set()
        for client in clients:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
        self._pool.clear()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def __enter__(self) -> Tap:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def write_kubeconfig(self, path: str | Path, context: str = "kplan-tap") -> Path:
        return kubeconfig.write(path, self.url, context, None)

    # the partition

    def cut(self) -> None:
        self.cut_at = time.time()
        self._open.clear()

    def cut_at_next_write(self) -> None:
        """Cut the moment the client sends its next write, holding that write too (the client is mid-pass)."""
        self._cut_on_write.set()

    def heal(self) -> None:
        self._cut_on_write.clear()
        self._open.set()

    @property
    def is_cut(self) -> bool:
        return not self._open.is_set()

    @property
    def sent(self) -> list[Sent]:
        with self._lock:
            return list(self._sent)

    # for the handler

    def _passes(self, method: str, path: str, client: socket.socket) -> bool:
        """Wait while cut; False when the client gave up meanwhile (its connection closed)."""
        if self._cut_on_write.is_set() and method not in READS and "watch=" not in path:
            self._cut_on_write.clear()
            self.cut()
        held = False
        while not self._open.wait(LOOK):
            held = True
            if gone(client):
                break
        if held and gone(client):
            with self._lock:
                self.dropped += 1
            return False
        return True

    def _record(self, sent: Sent) -> None:
        with self._lock:
            self._sent.append(sent)

    def _track(self, client: socket.socket, on: bool) -> None:
        with self._lock:
            (self._clients.add if on else self._clients.discard)(client)


class Quiet(ThreadingHTTPServer):
    """Serves each connection on a thread of its own; a client that drops its connection is no error."""

    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


def gone(client: socket.socket) -> bool:
    """Whether the peer closed `client` (readable at EOF) without reading from it."""
    try:
        readable, _, _ = select.select([client], [], [], 0)
        return bool(readable) and client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (OSError, ValueError):
        return True


class Forwarding(BaseHTTPRequestHandler):
    """Forwards each request upstream and relays the answer (chunk by chunk for streams), holding while cut."""

    protocol_version = "HTTP/1.1"
    owner: Tap

    def setup(self) -> None:
        super().setup()
        self.owner._track(self.connection, True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.owner._track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._forward()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def _forward(self) -> None:
        tap = self.owner
        body = self.rfile.read(int(self.headers.get("content-length") or 0)) or None
        if not tap._passes(self.command, self.path, self.connection):
            self.close_connection = True
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP} | tap._auth
        sent = time.time()
        try:
            answer = tap._pool.urlopen(self.command, tap.upstream + self.path, body=body, headers=headers,
                                       preload_content=False, decode_content=False, redirect=False,
                                       timeout=urllib3.Timeout(connect=5.0, read=None))
        except (urllib3.exceptions.HTTPError, OSError):  # the server is down: the client sees its connection drop
            self.close_connection = True
            return
        try:
            tap._record(Sent(self.command, self.path, answer.status, sent, time.time()))
            self._relay(answer)
        except (urllib3.exceptions.HTTPError, OSError):  # the stream was cut upstream, or the client left
            self.close_connection = True
        finally:
            answer.release_conn()

    def _relay(self, answer: Any) -> None:
        tap = self.owner
        chunked = answer.headers.get("transfer-encoding", "").lower() == "chunked"
        if not tap._passes("GET", "", self.connection):
            self.close_connection = True
            return
        self.send_response_only(answer.status)
        for name, value in answer.headers.items():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        if not chunked:
            data = answer.read(decode_content=False)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for chunk in answer.read_chunked(decode_content=False):
            if not tap._passes("GET", "", self.connection):
                self.close_connection = True
                return
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
