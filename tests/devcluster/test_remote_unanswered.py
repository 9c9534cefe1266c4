"""A request to an API server that does not answer (kube-apiserver restarting, found by the API faults soak,
issue 12) is one ConnectionError naming the request, and the simulators take it as a refusal to retry (no
traceback in their log), as they survive the restart."""

from __future__ import annotations

import pytest

from engine.controlplane.processes import free_port
from engine.devcluster.remote import RemoteApi
from engine.simulators.api import NODE, Api, ApiFailure
from engine.simulators.cache import Cache


@pytest.fixture
def nobody() -> RemoteApi:
    """A RemoteApi to a port nothing listens on."""
    return RemoteApi(f"http://127.0.0.1:{free_port()}")


def test_a_request_nobody_answers_is_one_connection_error(nobody: RemoteApi) -> None:
    with pytest.raises(ConnectionError, match=r"^GET /api/v1/nodes: the API server did not answer"):
        nobody.request("GET", "/api/v1/nodes")


def test_the_simulators_take_an_unanswered_request_as_a_failure_to_retry(nobody: RemoteApi) -> None:
    api = Api(nobody, Cache([NODE]))
    with pytest.raises(ApiFailure, match=r"GET /api/v1/nodes/node-1: 0 .*did not answer") as caught:
        api.read(NODE, "", "node-1")
    assert caught.value.code == 0
