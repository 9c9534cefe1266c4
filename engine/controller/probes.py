"""The manager's HTTP endpoints: /healthz (alive), /readyz (caches synced, campaigning or leading), /metrics."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from engine.controller.metrics import CONTENT_TYPE

__all__ = ["ProbeServer", "parse_address"]

Check = Callable[[], bool]


def parse_address(text: str) -> tuple[str, int]:
    """`host:port` (port 0 = any free port); ValueError when it is not one."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"not a host:port address: {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


class ProbeServer:
    """Serves the probes and metrics from a daemon thread until `stop()`."""

    def __init__(self, address: tuple[str, int], *, healthy: Check, ready: Check, metrics: Callable[[], str]) -> None:
        routes: dict[str, Callable[[], tuple[int, str, str]]] = {
            "/healthz": lambda: probe(healthy()),
            "/readyz": lambda: probe(ready()),
            "/metrics": lambda: (200, CONTENT_TYPE, metrics()),
        }
        self._server = ThreadingHTTPServer(address, handler_for(routes))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="probes", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        """The bound host and port (the actual port when 0 was asked for)."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


def probe(ok: bool) -> tuple[int, str, str]:
    return (200, "text/plain; charset=utf-8", "ok\n") if ok else (503, "text/plain; charset=utf-8", "not ready\n")


def handler_for(routes: dict[str, Callable[[], tuple[int, str, str]]]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            route = routes.get(self.path.split("?", 1)[0])
            code, content_type, body = route() if route else (404, "text/plain; charset=utf-8", "not found\n")
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:  # probes every few seconds: not worth a line
            return

    return Handler
