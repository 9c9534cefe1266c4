"""The HTTP seam: JSON requests and line-delimited streams to the API server through one ApiClient."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import urllib3

from engine.errors import ApiUnavailable, KplanError, TransientError
from engine.kube import codec
from engine.kube.errors import api_error
from engine.kube.fence import Fence, LeadershipLost
from engine.kube.retrying import Retrying
from engine.kube.sdk import ApiClient, ApiException, RESTResponse
from engine.kube.wire import JSON, Wire

__all__ = ["CONNECT_TIMEOUT", "DISCOVERY_TIMEOUT", "JSON", "REQUEST_TIMEOUT", "Stream", "Transport"]

# Seconds to reach the server, and to wait for its answer: a server that takes longer counts as unavailable,
# so a command against an unresponsive one fails in one sentence instead of hanging (kubectl-like bounds).
CONNECT_TIMEOUT = 5.0
REQUEST_TIMEOUT = 20.0
DISCOVERY_TIMEOUT = 10.0  # discovery is small and usually a command's first request
T = TypeVar("T")
_NETWORK_ERRORS = (ApiException, urllib3.exceptions.HTTPError, OSError)


def given_up(error: KplanError, retries: int) -> KplanError:
    """`error`, saying how many attempts were made when a transient failure was retried. An answer that ended
    the retries for another reason (404 after a 503, say) stays what it is: a get of a missing object is None."""
    if not retries or not isinstance(error, TransientError):
        return error
    return ApiUnavailable(f"{error} (gave up after {retries + 1} attempts)")


def refusal(response: Any, data: bytes) -> ApiException:
    """The client's exception for an answer that is not a success (its status, reason, headers and body)."""
    answer = RESTResponse(response)
    answer.data = data  # type: ignore[assignment]  # what its read() keeps
    return ApiException(http_resp=answer)


def response_lines(response: Any) -> Iterator[bytes]:
    """The lines of a streaming urllib3 response as they arrive (what the client's watch reads, without
    importing its watch module), undecoded; a last line without its newline is dropped."""
    pending = b""
    for chunk in response.stream(amt=None, decode_content=False):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        yield from lines


class Stream:
    """An open streaming response (a watch): decoded JSON lines until the server ends it or it is cut."""

    def __init__(self, response: Any) -> None:
        self._response = response  # urllib3.HTTPResponse

    def lines(self) -> Iterator[dict[str, Any]]:
        """Each JSON line; stops quietly when the connection ends, is cut or times out."""
        try:
            for line in response_lines(self._response):
                if line.strip():
                    yield codec.decode_line(line)
        except (urllib3.exceptions.HTTPError, OSError, ValueError):
            return

    def interrupt(self) -> None:
        """Unblock a reader waiting on this stream from another thread."""
        with contextlib.suppress(ValueError, RuntimeError, OSError, AttributeError):
            self._response.shutdown()

    def close(self) -> None:
        self._response.close()
        self._response.release_conn()


class Transport:
    """Sends requests with the client's configuration and credentials; failures become kplan errors.
    With `retrying`, transient failures are sent again by its rules before they are raised. With `fence`, no
    attempt is sent once it has run out, none outlasts it, and a failure after it ran out is LeadershipLost."""

    def __init__(self, api_client: ApiClient, retrying: Retrying | None = None, fence: Fence | None = None) -> None:
        self.api_client = api_client
        self.wire = Wire(api_client)
        self.server = self.wire.host
        self.retrying = retrying
        self.fence = fence

    def request(
        self,
        method: str,
        path: str,
        *,
        action: str,
        what: str,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: float = REQUEST_TIMEOUT,
        repeatable: bool | None = None,
    ) -> Any:
        """The decoded JSON body of a 2xx answer; raises the kplan error for anything else (its `attempts` say how
        often it was sent). `repeatable` overrides the method's word on resending after an answer that may come
        after the server acted."""

        payload = None if body is None else self.wire.payload(body, content_type)

        def attempt() -> Any:
            response = self.wire.send(method, path, query, payload, content_type, self._timeouts(what, timeout))
            data = response.read()
            if not 200 <= response.status <= 299:
                raise refusal(response, data)
            return codec.decode(data) if data else None

        return self._retried(method, action, what, attempt, repeatable)

    def open_stream(
        self, path: str, *, action: str, what: str, query: Mapping[str, str], read_timeout: float | None
    ) -> Stream:
        """A streaming GET; raises the kplan error when the server does not answer 200."""

        def attempt() -> Stream:
            if self.fence is not None:
                self.fence.check(what)
            response = self.wire.send("GET", path, query, None, None, (CONNECT_TIMEOUT, read_timeout))
            if response.status != 200:
                raise refusal(response, response.read())
            return Stream(response)

        return self._retried("GET", action, what, attempt)

    def _retried(
        self, method: str, action: str, what: str, attempt: Callable[[], T], repeatable: bool | None = None
    ) -> T:
        """`attempt()`, sent again while `retrying` allows; the kplan error once it does not."""
        retries = 0
        while True:
            try:
                return attempt()
            except _NETWORK_ERRORS as exc:
                if self.fence is not None and self.fence.remaining() <= 0:
                    raise LeadershipLost(what) from exc
                pause = self.retrying.pause(retries, exc, method, repeatable) if self.retrying else None
                if self.retrying is None or pause is None:
                    error = given_up(api_error(exc, action, what, self.server), retries)
                    error.attempts = retries + 1
                    raise error from exc
            self.retrying.wait(pause)
            retries += 1

    def _timeout(self, timeout: float) -> float:
        """A request's timeout, shortened to what is left before the retry deadline (at least a second)."""
        return timeout if self.retrying is None else max(min(timeout, self.retrying.remaining()), 1.0)

    def _timeouts(self, what: str, timeout: float) -> tuple[float, float]:
        """(connect, read) timeouts of one attempt: within the fence, when there is one (LeadershipLost if spent)."""
        connect, read = CONNECT_TIMEOUT, self._timeout(timeout)
        if self.fence is None:
            return connect, read
        left = self.fence.check(what)
        return min(connect, left), min(read, left)
