"""GET pods/{name}/log: validated and located here, answered by the pod's node's kubelet, as kube-apiserver does.

The options are checked (422 PodLogOptions), the container chosen (400 in the API server's words), a pod not yet
scheduled answers an empty log; otherwise the request goes on, over HTTPS with the API server's kubelet client
certificate (`Api.kubelet_tls`), to `/containerLogs/{ns}/{pod}/{container}` at the node's InternalIP and
daemonEndpoints.kubeletEndpoint.Port, and the kubelet's answer comes back: its text (streamed while following),
or its refusal as a Status (400 with its words, 404, 500) the way kube-apiserver's response checker makes it.
"""

from __future__ import annotations

import datetime
import http.client
import queue
import re
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from engine.apiserver.objects import JsonDict
from engine.apiserver.requests import ApiRequest, ApiResponse
from engine.apiserver.routing import Target
from engine.apiserver.status import ApiError, ErrorType, FieldError, bad_request, invalid, not_found

if TYPE_CHECKING:
    from engine.apiserver.api import Api

TEXT = {"Content-Type": "text/plain"}
LOG_OPTIONS = ("tailLines", "limitBytes", "sinceSeconds")
FRACTION = re.compile(r"^([^.]*?)(?:\.(\d+))?([+-]\d\d:\d\d)?$")
RFC3339 = "2006-01-02T15:04:05Z07:00"  # Go's layout, named in its parse errors
ADDRESS_TYPES = ("InternalIP", "ExternalIP", "Hostname")  # kube-apiserver --kubelet-preferred-address-types
KUBELET_PORT = 10250  # when a node reports none
IDLE_SECONDS = 0.5  # how often a followed log with no output lets the server check its client is still there
CONNECT_SECONDS = 30.0
READ_SIZE = 65536


@dataclass(frozen=True)
class LogOptions:
    container: str
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_seconds: int | None = None
    since_time: datetime.datetime | None = None

    def query(self) -> str:
        """The kubelet's query, as kube-apiserver builds it (keys sorted)."""
        params: dict[str, str] = {}
        for key, on in (("follow", self.follow), ("previous", self.previous), ("timestamps", self.timestamps)):
            if on:
                params[key] = "true"
        for key, value in (("sinceSeconds", self.since_seconds), ("tailLines", self.tail_lines),
                           ("limitBytes", self.limit_bytes)):
            if value is not None:
                params[key] = str(value)
        if self.since_time is not None:
            params["sinceTime"] = self.since_time.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return urlencode(sorted(params.items()))


def get_log(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    pod = api.store.get(target.rt.key, target.namespace, target.name)
    if pod is None:
        raise not_found(target.rt, target.name)
    opts = log_options(target, req, pod)
    node_name = str((pod.get("spec") or {}).get("nodeName") or "")
    if not node_name:
        return ApiResponse(204, b"", {"Content-Type": ""})  # not scheduled: no node to ask, No Content
    connection, answer = ask_kubelet(api, node_name, (target.namespace, target.name, opts.container), opts.query())
    if not 200 <= answer.status <= 206:
        text = answer.read(50000).decode("utf-8", errors="replace")
        connection.close()
        raise kubelet_refusal(answer.status, text, target.name)
    if not opts.follow:
        body = answer.read()
        connection.close()
        return ApiResponse(200, body, dict(TEXT))
    return ApiResponse(200, None, dict(TEXT), stream=relay(connection, answer))


def ask_kubelet(api: Api, node_name: str, names: tuple[str, str, str],
                query: str) -> tuple[http.client.HTTPSConnection, http.client.HTTPResponse]:
    """GET the container's log from the node's kubelet: the open connection and its answer (500 in Go's words
    when it cannot be reached)."""
    host, port = kubelet_of(api, node_name)
    target = "/".join(quote(p, safe="") for p in ("", "containerLogs", *names)) + (f"?{query}" if query else "")
    connection = http.client.HTTPSConnection(host, port, timeout=CONNECT_SECONDS,
                                             context=api.kubelet_tls or ssl.create_default_context())
    try:
        connection.request("GET", target)
        return connection, connection.getresponse()
    except (OSError, http.client.HTTPException) as e:
        connection.close()
        raise ApiError(500, "", f'Get "https://{host}:{port}{target}": {dial_error(e, host, port)}') from e


def kubelet_of(api: Api, node_name: str) -> tuple[str, int]:
    """Where the node's kubelet listens: its preferred address and the port it reports."""
    node = api.store.get("/nodes", "", node_name)
    if node is None:  # kube-apiserver's words, naming the node as a pod
        rt = api.registry.lookup("", "v1", "pods")
        assert rt is not None
        raise not_found(rt, node_name)
    status = node.get("status") or {}
    addresses = [a for a in status.get("addresses") or [] if isinstance(a, dict)]
    host = next((str(a.get("address")) for kind in ADDRESS_TYPES for a in addresses if a.get("type") == kind), "")
    if not host:
        known = ", ".join(f"{{{a.get('type')} {a.get('address')}}}" for a in addresses)
        raise ApiError(500, "", f"no preferred addresses found; known addresses: [{known}]")
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    return host, int(port) if isinstance(port, int) and port > 0 else KUBELET_PORT


def dial_error(error: BaseException, host: str, port: int) -> str:
    """Go's words for a failed connection to the kubelet."""
    if isinstance(error, ConnectionRefusedError):
        return f"dial tcp {host}:{port}: connect: connection refused"
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"tls: failed to verify certificate: x509: {error.verify_message}"
    return str(error)


def kubelet_refusal(code: int, text: str, name: str) -> ApiError:
    """The kubelet's error answer as kube-apiserver's GenericHttpResponseChecker turns it into a Status."""
    if code == 400:
        return bad_request(text)
    if code == 500:
        return ApiError(500, "InternalError", f"Internal error occurred: {text}", {"causes": [{"message": text}]})
    reasons = {404: ("NotFound", "the server could not find the requested resource"),
               422: ("Invalid", "the server rejected our request due to an error in our request")}
    reason, message = reasons.get(code, ("", f"the server responded with the status code {code} but did not "
                                             "return more information"))
    return ApiError(code, reason, f"{message} ( pods/log {name})", {"name": name, "kind": "pods/log"})


def relay(connection: http.client.HTTPSConnection, answer: http.client.HTTPResponse) -> Iterator[bytes]:
    """The kubelet's followed log, chunk by chunk as it comes; an empty chunk while it is idle, so the server can
    notice a client that hung up (and then this stops, closing the kubelet connection)."""
    chunks: queue.Queue[bytes | None] = queue.Queue()

    def pump() -> None:
        try:
            while data := answer.read1(READ_SIZE):
                chunks.put(data)
        except (OSError, ValueError, http.client.HTTPException):
            pass
        finally:
            chunks.put(None)

    threading.Thread(target=pump, name="pods-log-relay", daemon=True).start()
    try:
        while True:
            try:
                chunk = chunks.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                yield b""
                continue
            if chunk is None:
                return
            yield chunk
    finally:
        connection.close()


def log_options(target: Target, req: ApiRequest, pod: JsonDict) -> LogOptions:
    numbers: dict[str, int | None] = {}
    errors = []
    for key in LOG_OPTIONS:
        text = req.query.get(key)
        try:
            numbers[key] = int(text) if text else None
        except ValueError as e:
            raise bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax') from e
        value = numbers[key]
        if value is not None and (value < 0 or (value == 0 and key != "tailLines")):
            bound = "greater than or equal to 0" if key == "tailLines" else "greater than 0"
            errors.append(FieldError(ErrorType.INVALID, key, value, f"must be {bound}"))
    since_time = parse_time(req.query["sinceTime"]) if req.query.get("sinceTime") else None
    if numbers["sinceSeconds"] is not None and since_time is not None:
        errors.append(FieldError(ErrorType.FORBIDDEN, "[]",
                                 detail="at most one of `sinceTime` or `sinceSeconds` may be specified"))
    if "stream" in req.query:  # a choice of stream needs the PodLogsQuerySplitStreams gate, off in v1.37
        errors.append(FieldError(ErrorType.FORBIDDEN, "stream", detail="may not be specified"))
    if errors:
        raise invalid(target.rt, target.name, errors, kind="PodLogOptions")
    return LogOptions(container=container_of(pod, req.query.get("container", "")), follow=req.flag("follow"),
                      previous=req.flag("previous"), timestamps=req.flag("timestamps"),
                      tail_lines=numbers["tailLines"], limit_bytes=numbers["limitBytes"],
                      since_seconds=numbers["sinceSeconds"], since_time=since_time)


def container_of(pod: JsonDict, asked: str) -> str:
    """The container a log request names; with none named, the pod's only container."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    names = [str(c.get("name")) for c in spec.get("containers") or []]
    init = [str(c.get("name")) for c in spec.get("initContainers") or []]
    ephemeral = [str(c.get("name")) for c in spec.get("ephemeralContainers") or []]
    if not asked:
        if len(names) == 1:
            return names[0]
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        if ephemeral:
            message += f" or one of the ephemeral containers: [{' '.join(ephemeral)}]"
        raise bad_request(message)
    if asked not in (*names, *init, *ephemeral):
        raise bad_request(f"container {asked} is not valid for pod {name}")
    return asked


def parse_time(text: Any) -> datetime.datetime:
    """RFC 3339 with up to nanoseconds (Python keeps microseconds), UTC when no offset is given."""
    m = FRACTION.match(str(text).replace("Z", "+00:00"))
    try:
        if m is None or not m[3]:
            raise ValueError(text)
        moment = datetime.datetime.fromisoformat(m[1] + (f".{m[2][:6].ljust(6, '0')}" if m[2] else "") + m[3])
    except ValueError as e:
        raise bad_request(f'parsing time "{text}" as "{RFC3339}": cannot parse "{text}" as "2006"') from e
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)
