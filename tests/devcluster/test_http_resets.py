"""A client killed mid-request (its connection reset) leaves no traceback on the dev cluster's stderr: the kills
soak found the stdlib server printing one for every SIGKILLed manager (issue 12)."""

from __future__ import annotations

import logging
import socket
import struct
import threading

import pytest

from engine.devcluster.cluster import DevCluster


class _Seen(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.cut = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "was cut" in record.getMessage():
            self.cut.set()


def test_a_reset_connection_is_logged_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    seen = _Seen()
    logger = logging.getLogger("engine.apiserver.server")
    logger.addHandler(seen)
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with DevCluster(port=0) as cluster:
            with socket.create_connection(("127.0.0.1", cluster.port)) as client:
                client.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")  # half a request
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
            assert seen.cut.wait(20), "the server did not see the reset"
            code, _ = cluster.request("GET", "/api/v1/namespaces")
            assert code == 200
    finally:
        logger.removeHandler(seen)
        logger.setLevel(previous)
    assert "Traceback" not in capfd.readouterr().err
