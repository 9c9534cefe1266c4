"""DevCluster: a local in-memory API server on 127.0.0.1, its controllers, and the in-process API.

In-process API (stable; simulators and tests build on it):

    with DevCluster(port=0, simulate=False, nodes=(), token=None, watch_history=10000, faults=None,
                    runtime="simulated", runtime_limits=None) as c:
        c.url, c.port                       # http://127.0.0.1:<port>
        c.write_kubeconfig(path, context="kplan-dev") -> Path
        code, body = c.request("PATCH", "/apis/apps/v1/namespaces/ns/deployments/web/status",
                               query={"fieldManager": "kube-controller-manager", "force": "true"},
                               body={...}, content_type="application/apply-patch+yaml")
        unsubscribe = c.subscribe(lambda event_type, obj: ...)
        c.faults = FaultProfile(error_rate={"list": 0.5}, seed=1)

`runtime="process"` (with `simulate=True`) runs pods' containers as local processes (the host's tools, no
image pulled), and `pods/log` shows what they print; `c.runtime_problem` says what the host lacks for it
("" when nothing: volumes are mounted in a private user and mount namespace). Either way the API server answers
`pods/log` as kube-apiserver does, from the node's kubelet API (the simulated kubelet's, over HTTPS with
certificates of a CA made for this cluster).

`request` runs the same handler stack as HTTP (validation, admission, apply, GC...) without HTTP,
auth or fault injection, and returns the status code and the decoded JSON answer (a Status on
errors). Watches are not served in-process: `subscribe` delivers every committed change of every
resource as (ADDED|MODIFIED|DELETED, object with kind/apiVersion), in commit order, on a thread of
its own, after the store lock is released; each callback gets its own copy of the object.
`subscribe(cb, kinds=[("v1", "Pod")])` delivers the changes of some resources only, and `inline=True` calls
back in the writer's thread as each change is committed (for quick callbacks that never call the cluster).
`shared=True` (of `request` and `subscribe`) hands over the stored object itself instead of a copy, for callers
that never change what they get (the simulators' cache): a stored object is never changed once committed.
"""

from __future__ import annotations

import importlib
import json
import logging
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from engine.apiserver.api import Api
from engine.apiserver.faults import FaultInjector, FaultProfile
from engine.apiserver.gc import Controllers
from engine.apiserver.objects import copy_json
from engine.apiserver.requests import ApiRequest
from engine.apiserver.server import HttpServer
from engine.apiserver.store import Event, Subscription
from engine.devcluster import kubeconfig, kubelettls
from engine.devcluster.remote import encode_body
from engine.errors import PermanentError

log = logging.getLogger(__name__)
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
SIMULATED, PROCESS = "simulated", "process"
RUNTIMES = (SIMULATED, PROCESS)

# The PriorityClasses kube-apiserver makes at start (k8s.io/kubernetes pkg/apis/scheduling SystemPriorityClasses).
SYSTEM_PRIORITY_CLASSES = (
    ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current "
                                         "node."),
    ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be "
                                            "moved to another node if necessary."),
)


class ClusterStartFailed(PermanentError):
    def __init__(self, port: int, reason: str) -> None:
        super().__init__(f"the dev cluster could not listen on 127.0.0.1:{port}: {reason}")


class DevCluster:
    backend = "dev"

    def __init__(self, *, port: int = 0, simulate: bool = False, nodes: Sequence[str] = (),
                 token: str | None = None, watch_history: int = 10000, faults: FaultProfile | None = None,
                 runtime: str = SIMULATED, runtime_limits: Any = None) -> None:
        if runtime not in RUNTIMES:
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
        self.api = Api(token=token, watch_history=watch_history, faults=faults)
        self.runtime = runtime  # "process": the simulated kubelet runs pods' containers as local processes
        self.runtime_limits = runtime_limits  # engine.simulators.Limits of each process (None: the defaults)
        self.runtime_problem = ""  # with the process runtime: what this host lacks for it ("" when nothing)
        self.token = token
        self.simulate = simulate
        self.nodes = tuple(nodes)
        self.port = port
        self.url = ""
        self._http: HttpServer | None = None
        self._serve_thread: threading.Thread | None = None
        self._controllers = Controllers(self.api)
        self._stop_simulators: Callable[[], None] | None = None
        self._subscriptions: list[tuple[Subscription, threading.Thread]] = []
        self._lock = threading.Lock()

    # lifecycle

    def start(self) -> DevCluster:
        self.api.closing.clear()
        try:
            self._http = HttpServer(self.api, self.port)
        except OSError as e:
            raise ClusterStartFailed(self.port, e.strerror or str(e)) from e
        self.port = int(self._http.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.api.server_address = f"127.0.0.1:{self.port}"
        self.api.kubelet_tls, self._kubelet_tls = kubelettls.throwaway()
        self._controllers.start()
        for name in SYSTEM_NAMESPACES:
            self.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}}, user_agent="kube-apiserver")
        for name, value, description in SYSTEM_PRIORITY_CLASSES:
            self.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", user_agent="kube-apiserver",
                         body={"metadata": {"name": name}, "value": value, "description": description})
        self._serve_thread = threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.2},
                                              name="devcluster-http", daemon=True)
        self._serve_thread.start()
        if self.simulate:
            self._start_simulators()
        return self

    def _start_simulators(self) -> None:
        try:
            simulators = importlib.import_module("engine.simulators")
        except ModuleNotFoundError as e:
            if e.name not in ("engine.simulators",):
                raise
            log.warning("simulators are not available; the cluster runs without them")
            return
        runtime = None
        if self.runtime == PROCESS:
            limits = () if self.runtime_limits is None else (self.runtime_limits,)
            runtime = simulators.process_runtime(self, *limits)
            self.runtime_problem = runtime.problem
        self._stop_simulators = simulators.start(self, self.nodes, runtime=runtime, kubelet_tls=self._kubelet_tls)

    def stop(self) -> None:
        self.api.closing.set()
        if self._stop_simulators is not None:
            self._stop_simulators()
            self._stop_simulators = None
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http.close_connections()
        self.api.store.close_all()
        self._controllers.stop()
        for _, thread in self._subscriptions:
            if thread is not threading.current_thread():
                thread.join(timeout=10)
        self._subscriptions.clear()
        self._http = None

    def __enter__(self) -> DevCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # configuration

    @property
    def faults(self) -> FaultProfile:
        return self.api.faults.profile

    @faults.setter
    def faults(self, profile: FaultProfile) -> None:
        self.api.faults = FaultInjector(profile)

    def write_kubeconfig(self, path: str | Path, context: str = "kplan-dev") -> Path:
        return kubeconfig.write(path, self.url, context, self.token)

    # in-process API

    def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None, body: Any = None,
                content_type: str = "application/json", user_agent: str = "devcluster",
                shared: bool = False) -> tuple[int, dict[str, Any]]:
        path, _, raw_query = path.partition("?")
        params = dict(query or {})
        if raw_query:
            from urllib.parse import parse_qsl

            params = {**dict(parse_qsl(raw_query, keep_blank_values=True)), **params}
        headers = {"content-type": content_type, "user-agent": user_agent, "accept": "application/json"}
        req = ApiRequest(method.upper(), path, params, headers, encode_body(body, content_type), in_process=True)
        resp = self.api.handle(req)
        if isinstance(resp.body, bytes):
            try:
                decoded = json.loads(resp.body)
            except ValueError:
                decoded = {"text": resp.body.decode("utf-8", errors="replace")}
            return resp.code, decoded if isinstance(decoded, dict) else {"value": decoded}
        if not isinstance(resp.body, dict):
            return resp.code, {}
        return resp.code, resp.body if shared else copy_json(resp.body)

    def subscribe(self, callback: Callable[[str, dict[str, Any]], None], *,
                  kinds: Collection[tuple[str, str]] | None = None, inline: bool = False,
                  shared: bool = False) -> Callable[[], None]:
        """Deliver committed changes (of the resources of `kinds`, (apiVersion, kind) pairs, or of all); `inline`
        calls back in the writer's thread as each change is committed (the callback must be quick and never call
        the cluster), else on a thread of the subscription's own; `shared` passes the stored object itself, which
        the callback must never change. Returns the function that unsubscribes."""
        keys = (None,) if kinds is None else self._keys_of(kinds)

        def deliver_one(event: Event) -> None:
            try:
                callback(event.type, event.obj if shared else copy_json(event.obj))
            except Exception:
                log.exception("subscriber failed", extra={"event": event.type})

        if inline:
            return self.api.store.observe(keys, deliver_one)
        sub = self.api.store.subscribe_to(keys)

        def deliver() -> None:
            while (event := sub.get(None)) is not None:
                deliver_one(event)

        thread = threading.Thread(target=deliver, name="devcluster-subscriber", daemon=True)
        thread.start()
        with self._lock:
            self._subscriptions.append((sub, thread))

        def unsubscribe() -> None:
            sub.close()
            if thread is not threading.current_thread():
                thread.join(timeout=10)

        return unsubscribe

    def _keys_of(self, kinds: Collection[tuple[str, str]]) -> tuple[str, ...]:
        keys = []
        for api_version, kind in kinds:
            served = self.api.registry.by_kind(api_version, kind)
            if served is None:
                raise ValueError(f"the dev cluster does not serve {kind} in {api_version}")
            keys.append(served.key)
        return tuple(keys)

