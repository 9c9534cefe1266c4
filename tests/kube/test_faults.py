"""Kube against a failing server: injected 5xx and 429 answers, an unreachable server and one that never answers
are ApiUnavailable (naming the server); a server that answers 404 everywhere is not a Kubernetes API server."""

from __future__ import annotations

import http.server
import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from engine.apiserver.faults import FaultProfile
from engine.devcluster.cluster import DevCluster
from engine.errors import ApiUnavailable, TransientError
from engine.kube import Kube, NotKubernetes, connect
from engine.kube.informer import Informer

from .helpers import configmap


@pytest.mark.parametrize("code", [500, 503, 429])
def test_server_errors_are_transient(own_cluster: DevCluster, own_kube: Kube, code: int) -> None:
    own_kube.resource("v1", "ConfigMap")
    own_cluster.faults = FaultProfile(error_rate={"*": 1.0}, error_codes=(code,))

    with pytest.raises(ApiUnavailable, match="cannot get ConfigMap default/settings: ") as caught:
        own_kube.get("v1", "ConfigMap", "settings", "default")

    assert isinstance(caught.value, TransientError)


def test_apply_failures_name_the_object(own_cluster: DevCluster, own_kube: Kube) -> None:
    own_kube.resource("v1", "ConfigMap")
    own_cluster.faults = FaultProfile(error_rate={"patch": 1.0}, error_codes=(500,))

    with pytest.raises(ApiUnavailable, match="cannot apply ConfigMap default/settings: "):
        own_kube.apply(configmap("settings", "default"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pointed_at(devcluster: DevCluster, tmp_path: Path, url: str) -> Path:
    """A kubeconfig like the dev cluster's, for the server at `url`."""
    path = tmp_path / "kubeconfig"
    devcluster.write_kubeconfig(path)
    config = yaml.safe_load(path.read_text())
    config["clusters"][0]["cluster"]["server"] = url
    path.write_text(yaml.safe_dump(config))
    return path


def test_an_unreachable_server_is_unavailable(devcluster: DevCluster, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    path = pointed_at(devcluster, tmp_path, url)

    with connect(str(path)) as kube, pytest.raises(ApiUnavailable) as caught:
        kube.get("v1", "ConfigMap", "settings", "default")

    assert str(caught.value) == f"cannot discover /api/v1: the API server at {url} is unavailable (connection refused)"


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers (a hung API server)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_a_server_that_never_answers_is_unavailable_after_the_discovery_timeout(
    devcluster: DevCluster, tmp_path: Path, silent_server: str
) -> None:
    path = pointed_at(devcluster, tmp_path, silent_server)

    with connect(str(path)) as kube, pytest.raises(ApiUnavailable) as caught:
        kube.resource("v1", "ConfigMap")

    assert str(caught.value) == (f"cannot discover /api/v1: the API server at {silent_server} is unavailable "
                                 "(it did not answer in time)")


class _NotFoundEverywhere(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "9")
        self.end_headers()
        self.wfile.write(b"not found")

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def web_server() -> Iterator[str]:
    """An HTTP server that is no Kubernetes API server: 404 for every path."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFoundEverywhere)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_server_answering_404_everywhere_is_not_a_kubernetes_api_server(
    devcluster: DevCluster, tmp_path: Path, web_server: str
) -> None:
    path = pointed_at(devcluster, tmp_path, web_server)

    with connect(str(path)) as kube, pytest.raises(NotKubernetes) as caught:
        kube.resource("kplan.dev/v1alpha1", "Instance")

    assert str(caught.value) == (f"the server at {web_server} is not a Kubernetes API server (GET /api does not "
                                 "answer with its API versions); check --kubeconfig and --context")


def test_an_informer_logs_one_transient_watch_failure_quietly_and_a_second_in_a_row_as_a_warning(
        own_cluster: DevCluster, own_kube: Kube) -> None:
    """A real server answers a new CRD's first watch 429 "storage is (re)initializing": routine, not a warning."""
    records: list[logging.LogRecord] = []
    two = threading.Event()

    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("informer failed"):
                records.append(record)
                if len(records) >= 2:
                    two.set()

    informer = Informer(own_kube, "v1", "ConfigMap", label_selector=None, notify=lambda _change, _obj, _listed: None)
    logger = logging.getLogger("engine.kube.informer")
    recorder, level = Recorder(), logger.level
    logger.addHandler(recorder)
    logger.setLevel(logging.INFO)
    try:
        own_cluster.faults = FaultProfile(error_rate={"watch": 1.0}, error_codes=(429,))
        informer.start()  # its list succeeds; each watch after it is answered 429
        assert two.wait(30), records
    finally:
        informer.stop()
        logger.removeHandler(recorder)
        logger.setLevel(level)

    assert [r.levelno for r in records[:2]] == [logging.INFO, logging.WARNING]
