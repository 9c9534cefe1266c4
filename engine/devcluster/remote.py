"""RemoteApi: the in-process API surface of a dev cluster (`request`, `subscribe`) over HTTP, for any API server.

The real backend's simulators, tests and benchmarks use it the way they use DevCluster's in-process calls:

    api = RemoteApi(url, ca=..., cert=..., key=...)
    code, body = api.request("GET", "/api/v1/nodes")
    unsubscribe = api.subscribe(lambda event_type, obj: ...)

`subscribe` shares one set of watches (started on first use, one per watched resource, each resumed from its
last resourceVersion and relisted after 410 Gone) among all subscribers; each subscriber gets every change
from then on, with kind/apiVersion set, on one delivery thread, in the order the watches report them. A
resource that is not served yet (a CRD not installed) is looked for again until it is.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import urllib3
import yaml

from engine.apiserver.objects import json_bytes

log = logging.getLogger(__name__)

JsonDict = dict[str, Any]
Callback = Callable[[str, JsonDict], None]
Kinds = frozenset[tuple[str, str]] | None  # the (apiVersion, kind) pairs a subscriber gets (None: every one)
RETRY = 0.5  # seconds before a watch that failed (or a resource not served yet) is tried again
WATCH_SECONDS = 300  # server-side timeout of one watch request; it is resumed from its last resourceVersion


@dataclass(frozen=True)
class Watched:
    api_version: str
    kind: str
    plural: str

    @property
    def path(self) -> str:
        base = f"/apis/{self.api_version}" if "/" in self.api_version else f"/api/{self.api_version}"
        return f"{base}/{self.plural}"


# What tests, simulators and benchmarks look at; Events and Leases are watched too (some tests assert on them).
WATCHED = tuple(Watched(*spec) for spec in (
    ("v1", "Namespace", "namespaces"), ("v1", "Node", "nodes"), ("v1", "Pod", "pods"),
    ("v1", "ConfigMap", "configmaps"), ("v1", "Secret", "secrets"), ("v1", "Service", "services"),
    ("v1", "ServiceAccount", "serviceaccounts"), ("v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
    ("v1", "PersistentVolume", "persistentvolumes"), ("v1", "Event", "events"),
    ("apps/v1", "Deployment", "deployments"), ("apps/v1", "ReplicaSet", "replicasets"),
    ("apps/v1", "StatefulSet", "statefulsets"), ("apps/v1", "DaemonSet", "daemonsets"),
    ("batch/v1", "Job", "jobs"), ("coordination.k8s.io/v1", "Lease", "leases"),
    ("storage.k8s.io/v1", "StorageClass", "storageclasses"),
    ("rbac.authorization.k8s.io/v1", "Role", "roles"), ("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions"),
    ("kplan.dev/v1alpha1", "Instance", "instances"), ("kplan.dev/v1alpha1", "OperatorVersion", "operatorversions"),
    ("kplan.dev/v1alpha1", "Operator", "operators"),
))


def encode_body(body: Any, content_type: str) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    if "yaml" in content_type and not isinstance(body, dict | list):
        return yaml.safe_dump(body).encode()
    return json_bytes(body)


@dataclass(frozen=True)
class Inbox:
    """One subscriber's queue of changes (None closes it) and the kinds it gets."""

    queue: queue.SimpleQueue[tuple[str, JsonDict] | None]
    kinds: Kinds

    def offer(self, event: str, obj: JsonDict) -> None:
        if self.kinds is None or (obj.get("apiVersion"), obj.get("kind")) in self.kinds:
            self.queue.put((event, obj))


class RemoteApi:
    def __init__(self, url: str, *, ca: str | None = None, cert: str | None = None, key: str | None = None,
                 token: str | None = None, watched: Sequence[Watched] = WATCHED) -> None:
        self.url = url.rstrip("/")
        tls: dict[str, Any] = {"ca_certs": ca, "cert_file": cert, "key_file": key} if url.startswith("https") else {}
        # Only a connection that could not be made is tried again: a request the server may have carried out never is.
        # Answers are always handed back as they came (a 429 while a new CRD is being served included).
        retries = urllib3.Retry(total=2, connect=2, read=0, status=0, other=0, redirect=0, allowed_methods=None,
                                status_forcelist=(), respect_retry_after_header=False)
        self._pool = urllib3.PoolManager(maxsize=64, block=False, retries=retries, **tls)
        self._headers = {"authorization": f"Bearer {token}"} if token else {}
        self._watched = tuple(watched)
        self._lock = threading.Lock()
        self._subscribers: dict[int, Inbox] = {}
        self._next = 0
        self._streams: list[threading.Thread] = []
        self._responses: set[Any] = set()
        self._closed = threading.Event()

    # requests

    def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None, body: Any = None,
                content_type: str = "application/json", user_agent: str = "devcluster",
                timeout: float = 60.0, shared: bool = False) -> tuple[int, JsonDict]:
        """One request; the status code and the decoded JSON answer (a Status on errors). ConnectionError when the
        server did not answer at all. `shared` is the dev cluster's (no copy of a stored object): every answer here
        is decoded afresh."""
        target = self.url + path + (("&" if "?" in path else "?") + urlencode(query) if query else "")
        headers = {**self._headers, "content-type": content_type, "accept": "application/json",
                   "user-agent": user_agent}
        try:
            answer = self._pool.request(method.upper(), target, body=encode_body(body, content_type) or None,
                                        headers=headers, timeout=urllib3.Timeout(connect=5.0, read=timeout),
                                        preload_content=True)
        except urllib3.exceptions.HTTPError as err:  # refused, reset, timed out: a server restarting, say
            raise ConnectionError(f"{method.upper()} {path}: the API server did not answer ({err})") from err
        try:
            decoded = json.loads(answer.data) if answer.data else {}
        except ValueError:
            decoded = {"text": answer.data.decode("utf-8", errors="replace")}
        return answer.status, decoded if isinstance(decoded, dict) else {"value": decoded}

    # watches

    def subscribe(self, callback: Callback, *, kinds: Collection[tuple[str, str]] | None = None,
                  inline: bool = False, shared: bool = False) -> Callable[[], None]:
        """Changes (of the (apiVersion, kind) pairs of `kinds`, or all) on a delivery thread of the subscriber's
        own; `inline` and `shared` are the dev cluster's (in-process) and change nothing here."""
        inbox = Inbox(queue.SimpleQueue(), None if kinds is None else frozenset(kinds))
        with self._lock:
            ident, self._next = self._next, self._next + 1
            self._subscribers[ident] = inbox
            if not self._streams:
                self._start_streams()

        def deliver() -> None:
            while (item := inbox.queue.get()) is not None:
                try:
                    callback(*item)
                except Exception:
                    log.exception("subscriber failed", extra={"event": item[0]})

        thread = threading.Thread(target=deliver, name="remote-subscriber", daemon=True)
        thread.start()

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers.pop(ident, None)
            inbox.queue.put(None)
            if thread is not threading.current_thread():
                thread.join(10)

        return unsubscribe

    def _start_streams(self) -> None:
        ready = [threading.Event() for _ in self._watched]
        for watched, started in zip(self._watched, ready, strict=True):
            thread = threading.Thread(target=self._stream, args=(watched, started), name=f"watch-{watched.plural}",
                                      daemon=True)
            thread.start()
            self._streams.append(thread)
        for started in ready:  # changes after subscribe() returns are delivered
            started.wait(10)

    def _publish(self, event: str, obj: JsonDict) -> None:
        with self._lock:
            inboxes = list(self._subscribers.values())
        for inbox in inboxes:
            inbox.offer(event, obj)

    def _stream(self, watched: Watched, started: threading.Event) -> None:
        version = ""
        while not self._closed.is_set():
            try:
                if not version:
                    version = self._list_version(watched)
                    if not version:
                        started.set()  # not served (yet): nothing to miss
                        self._closed.wait(RETRY)
                        continue
                started.set()
                version = self._watch(watched, version)
            except Exception as err:  # a broken connection, a server restart: resume after a pause
                if self._closed.is_set():
                    return
                log.debug("watch interrupted", extra={"resource": watched.plural, "error": str(err)})
                self._closed.wait(RETRY)

    def _list_version(self, watched: Watched) -> str:
        code, body = self.request("GET", watched.path, query={"limit": "1"}, user_agent="devcluster-watch")
        return str((body.get("metadata") or {}).get("resourceVersion") or "") if code == 200 else ""

    def _watch(self, watched: Watched, version: str) -> str:
        """Follow one watch request to its end; the resourceVersion to resume from ("" to relist)."""
        query = urlencode({"watch": "1", "resourceVersion": version, "allowWatchBookmarks": "true",
                           "timeoutSeconds": str(WATCH_SECONDS)})
        answer = self._pool.request("GET", f"{self.url}{watched.path}?{query}", headers=self._headers,
                                    preload_content=False, timeout=urllib3.Timeout(connect=5.0, read=None))
        with self._lock:
            self._responses.add(answer)
        try:
            if answer.status == 410:
                return ""
            if answer.status != 200:
                raise OSError(f"watch {watched.plural}: HTTP {answer.status}")
            buffer = b""
            for chunk in answer.stream(65536, decode_content=True):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        version = self._on_line(watched, line, version)
            return version
        finally:
            with self._lock:
                self._responses.discard(answer)
            answer.close()  # a watch ends mid-stream: its connection must not go back to the pool half read
            answer.release_conn()

    def _on_line(self, watched: Watched, line: bytes, version: str) -> str:
        event = json.loads(line)
        kind, obj = str(event.get("type")), event.get("object") or {}
        if kind == "ERROR":
            return "" if obj.get("code") == 410 else version
        next_version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
        if kind != "BOOKMARK":
            self._publish(kind, {**obj, "apiVersion": watched.api_version, "kind": watched.kind})
        return next_version

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            responses, self._responses = list(self._responses), set()
            inboxes = list(self._subscribers.values())
            self._subscribers.clear()
        for answer in responses:
            try:
                answer.shutdown()
            except Exception:  # already finished
                log.debug("watch response already closed")
        for inbox in inboxes:
            inbox.queue.put(None)
        for thread in self._streams:
            thread.join(10)
        self._streams.clear()
        self._pool.clear()
