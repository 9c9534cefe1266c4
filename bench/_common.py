"""What the benchmarks share: machine facts, percentiles, kplan's CRDs, step packages, a manager on a thread,
a dev cluster in a process of its own, and a count of the requests a dev cluster answered over HTTP.

Not a benchmark itself: running it prints nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from engine import crds
from engine.apiserver.requests import ApiRequest, ApiResponse
from engine.controller import Manager, ManagerSettings
from engine.devcluster import backends
from engine.devcluster.backends import Cluster
from engine.devcluster.cluster import DevCluster
from engine.kube import Kube, connect
from engine.kube.metrics import verb_of
from engine.kube.transport import Transport

INSTANCE = ("kplan.dev/v1alpha1", "Instance")
OPERATOR_VERSION = ("kplan.dev/v1alpha1", "OperatorVersion")
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
READY_WAIT = 60.0  # seconds CRDs, managers and dev clusters may take to become ready
BACKENDS = ("dev", "real")
WRITES = ("apply", "create", "update", "patch", "delete")


def add_backend_flag(parser: argparse.ArgumentParser, *, both: bool = False) -> None:
    """--backend dev|real (and, where `both`, `both`: the figures of each side by side, dev first)."""
    choices = (*BACKENDS, "both") if both else BACKENDS
    parser.add_argument("--backend", choices=choices, default="both" if both else "dev",
                        help="the cluster to measure against: dev (kplan's own API server), real (the real control "
                             "plane `make control-plane` builds)" + (", or both side by side (default)" if both else
                                                                       " (default dev)"))


def chosen_backends(choice: str) -> tuple[str, ...]:
    return BACKENDS if choice == "both" else (choice,)


def cluster(backend: str = "dev", **options: Any) -> Cluster:
    """The simulating cluster a benchmark runs against: the one place that picks the backend (the dev-only
    options, such as `runtime`, apply to the dev backend)."""
    if backend == "dev":
        return DevCluster(**{"simulate": True, "nodes": ("node-1",), **options})
    return backends.new(backend, simulate=True, nodes=tuple(options.get("nodes") or ("node-1",)))


def runs_summary(times: Sequence[float], requests: Sequence[Counter[str]]) -> dict[str, Any]:
    """Median, min and max wall time of some runs, and their mean API requests by verb."""
    verbs = sorted({verb for counts in requests for verb in counts})
    mean = {verb: round(sum(c[verb] for c in requests) / len(requests), 1) for verb in verbs}
    return {"wall_seconds_median": round(statistics.median(times), 3), "wall_seconds_min": round(min(times), 3),
            "wall_seconds_max": round(max(times), 3), "api_requests": mean,
            "api_requests_total": round(sum(mean.values()), 1)}


def writes(counts: Mapping[str, float]) -> float:
    """The writes among requests counted by verb."""
    return round(sum(counts.get(verb, 0) for verb in WRITES), 3)

STEP_TEMPLATE = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ Name }}-s%(i)d
data:
  step: "%(i)d"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ Name }}-s%(i)d
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        devcluster.kplan.dev/duration: "0s"
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox:1.36
          command: ["true"]
"""


def machine() -> dict[str, Any]:
    """Python, cores and the load averages (1, 5, 15 min) when the benchmark started."""
    return {"python": platform.python_version(), "cpus": os.cpu_count(),
            "load_average": [round(load, 2) for load in os.getloadavg()]}


def rate(count: int, work: Callable[[int], object], budget: float = 30.0) -> float:
    """Operations per second of `work(i)` for i < count, stopping early after `budget` seconds."""
    start = time.perf_counter()
    done = 0
    for i in range(count):
        work(i)
        done += 1
        if time.perf_counter() - start > budget:
            break
    return round(done / (time.perf_counter() - start), 1)


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def max_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident memory of this process (or its waited-for children), MiB."""
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)


def cpu_seconds() -> float:
    """User + system CPU time of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def threads_cpu_seconds(leave_out: Sequence[threading.Thread] = ()) -> float:
    """User + system CPU time of this process's live threads so far, the threads in `leave_out` left out (threads
    that ended are not counted)."""
    total = 0.0
    for thread in threading.enumerate():
        if thread in leave_out or thread.ident is None:
            continue
        try:
            total += time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except (OSError, ProcessLookupError):  # the thread ended meanwhile
            continue
    return total


WORKER = "worker-"  # engine.controller.workers names its threads so


def per_unit(counts: Mapping[str, int], units: int, always: Sequence[str] = ()) -> dict[str, float]:
    """Counts by verb divided by `units`; verbs never used are left out, unless named in `always`."""
    return {verb: round(counts.get(verb, 0) / units, 3) for verb in sorted({*counts, *always})
            if counts.get(verb, 0) > 0 or verb in always}


def step_package(name: str, steps: int, strategy: str = "serial") -> dict[str, str]:
    """The files of a package with one phase of `steps` steps, each a ConfigMap and a Job that ends at once."""
    tasks = "".join(f"\n  - {{name: s{i}, kind: Apply, spec: {{resources: [s{i}.yaml]}}}}" for i in range(steps))
    step_lines = "".join(f"\n          - {{name: s{i}, tasks: [s{i}]}}" for i in range(steps))
    operator = (f"apiVersion: kplan.dev/v1alpha1\nname: {name}\noperatorVersion: 0.1.0\ntasks:{tasks}\n"
                f"plans:\n  deploy:\n    phases:\n      - name: main\n        strategy: {strategy}\n"
                f"        steps:{step_lines}\n")
    files = {"operator.yaml": operator, "params.yaml": "apiVersion: kplan.dev/v1alpha1\nparameters: []\n"}
    files.update({f"templates/s{i}.yaml": STEP_TEMPLATE % {"i": i} for i in range(steps)})
    return files


def write_package(files: Mapping[str, str], folder: Path) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def install_crds(kube: Kube) -> None:
    """Apply kplan's CRDs and wait until the server serves them."""
    for definition in crds.load():
        kube.apply(definition)
        kube.wait_for(*CRD, definition["metadata"]["name"], None,
                      lambda crd: crd is not None and bool((crd.get("status") or {}).get("conditions")), READY_WAIT)


def deploy_complete(instance: Mapping[str, Any] | None) -> bool:
    plans = ((instance or {}).get("status") or {}).get("plans") or {}
    return (plans.get("deploy") or {}).get("status") == "COMPLETE"


class TimedTransport(Transport):
    """A Transport that keeps when each of its request/answer round trips began and ended (perf_counter seconds;
    watch streams excluded) in `spans`, and the CPU time the sending thread spent in them, by thread name, in
    `cpu_in_requests`."""

    def __init__(self, transport: Transport) -> None:
        super().__init__(transport.api_client)
        self.spans: list[tuple[float, float]] = []
        self.cpu_in_requests: Counter[str] = Counter()
        self._lock = threading.Lock()

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return super().request(method, path, **kwargs)
        finally:
            end, cpu = time.perf_counter(), time.thread_time() - cpu
            with self._lock:
                self.spans.append((start, end))
                self.cpu_in_requests[threading.current_thread().name] += cpu


def workers_cpu_seconds() -> float:
    """CPU time so far of this process's live threads named as the manager's workers (`worker-N`)."""
    return threads_cpu_seconds(leave_out=[t for t in threading.enumerate() if not t.name.startswith(WORKER)])


def covered(spans: Sequence[tuple[float, float]], start: float, end: float) -> float:
    """Seconds of [start, end] that at least one of `spans` covers (overlaps counted once)."""
    total, reached = 0.0, start
    for begin, finish in sorted(spans):
        begin, finish = max(begin, reached), min(finish, end)
        if finish > begin:
            total += finish - begin
            reached = finish
    return total


@contextmanager
def manager_for(
    kubeconfig: Path, namespace: str | None, workers: int = 2
) -> Iterator[tuple[Manager, Kube, TimedTransport]]:
    """A manager (no election, no HTTP endpoints) on a thread, ready to reconcile, stopped on exit."""
    with connect(str(kubeconfig)) as kube:
        timed = TimedTransport(kube.transport)
        kube.transport = timed
        manager = Manager(kube, ManagerSettings(workers=workers, metrics_address=None, leader_elect=False,
                                                watch_namespace=namespace))
        stop = threading.Event()
        thread = threading.Thread(target=manager.run, args=(stop,), daemon=True)
        thread.start()
        try:
            wait_until(manager.ready, READY_WAIT, "the manager to be ready")
            yield manager, kube, timed
        finally:
            stop.set()
            thread.join()


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {timeout:g}s")
        pause.wait(0.01)


class RequestCount:
    """Counts the requests a dev cluster answers over HTTP (in-process ones, the simulators', are left out),
    by verb as engine.kube names them (apply is a PATCH with an apply patch; discovery is any non-resource path)."""

    def __init__(self, cluster: DevCluster) -> None:
        self.verbs: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._handle = cluster.api.handle
        cluster.api.handle = self._counted  # type: ignore[method-assign]

    def _counted(self, req: ApiRequest) -> ApiResponse:
        if not req.in_process:
            verb = verb_of(req.method, req.path, urlencode(req.query), req.content_type)
            with self._lock:
                self.verbs[verb] += 1
        return self._handle(req)

    def take(self) -> Counter[str]:
        """The counts since the last take, and start again from zero."""
        with self._lock:
            found, self.verbs = self.verbs, Counter()
        return found


class JobClock:
    """When each Job was created and completed, by (namespace, name), on the machine's monotonic clock
    (`time.perf_counter`, which every process of the machine shares on Linux)."""

    def __init__(self, cluster: Cluster) -> None:
        self.created: dict[tuple[str, str], float] = {}
        self.completed: dict[tuple[str, str], float] = {}
        self.stop = cluster.subscribe(self._record, kinds=[("batch/v1", "Job")], inline=True)  # at the commit

    def _record(self, change: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        if obj.get("kind") != "Job":
            return
        now = time.perf_counter()
        key = (meta.get("namespace") or "", meta["name"])
        self.created.setdefault(key, now)
        conditions = (obj.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Complete" and c.get("status") == "True" for c in conditions):
            self.completed.setdefault(key, now)

    def spans(self, namespace: str) -> list[tuple[float, float]]:
        """(created, completed) of each completed Job of `namespace`."""
        return [(at, self.completed[key]) for key, at in self.created.items()
                if key[0] == namespace and key in self.completed]


def _serve_cluster(conn: Connection, nodes: Sequence[str], kubeconfig: str, backend: str) -> None:
    imported = cpu_seconds()  # the spawned process imported the benchmark's modules (the manager side's too)
    with cluster(backend, nodes=nodes) as served:
        served.write_kubeconfig(kubeconfig)
        jobs = JobClock(served)
        started = cpu_seconds()
        conn.send(served.url)
        while (asked := conn.recv()) != "stop":  # ("jobs", namespace): the spans of its Jobs; ("cpu",): its CPU
            conn.send(jobs.spans(asked[1]) if asked[0] == "jobs" else cpu_seconds())
        serving = cpu_seconds() - started
        jobs.stop()
    # the real backend's etcd and control-plane binaries are this process's children (waited for by now)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    conn.send({"max_rss_mib": max_rss_mib(), "cpu_seconds": round(cpu_seconds(), 1),
               "import_cpu_seconds": round(imported, 1), "start_cpu_seconds": round(started - imported, 1),
               "serving_cpu_seconds": round(serving, 1),
               "children_max_rss_mib": max_rss_mib(resource.RUSAGE_CHILDREN),
               "children_cpu_seconds": round(children.ru_utime + children.ru_stime, 1)})


class ClusterProcess:
    """A simulating cluster in a process of its own (`cluster_process`): its kubeconfig, the spans of its Jobs, and
    `stop`, which returns its peak memory and CPU time."""

    def __init__(self, kubeconfig: Path, conn: Connection, process: Any) -> None:
        self.kubeconfig = kubeconfig
        self._conn, self._process = conn, process
        self._figures: dict[str, Any] = {}

    def job_spans(self, namespace: str) -> list[tuple[float, float]]:
        """(created, completed) on this machine's `time.perf_counter` clock of each completed Job of `namespace`."""
        self._conn.send(("jobs", namespace))
        return [tuple(span) for span in self._conn.recv()]

    def cpu_seconds(self) -> float:
        """User + system CPU time of the cluster's process so far."""
        self._conn.send(("cpu",))
        return float(self._conn.recv())

    def stop(self) -> dict[str, Any]:
        if not self._figures and self._process.is_alive():
            self._conn.send("stop")
            if self._conn.poll(READY_WAIT):
                self._figures.update(self._conn.recv())
        return self._figures


@contextmanager
def cluster_process(nodes: Sequence[str] = ("node-1",), backend: str = "dev") -> Iterator[ClusterProcess]:
    """A simulating cluster in a process of its own, so its memory and CPU are not the caller's, and it does not
    share the caller's interpreter lock.

    `stop()` returns its peak memory and CPU time: all of it (`cpu_seconds`), and apart the imports of the spawned
    process (the benchmark's modules, the manager side's included), the cluster's start, and its serving until
    stopped (`serving_cpu_seconds`, the figure to divide).
    """
    context = multiprocessing.get_context("spawn")
    mine, theirs = context.Pipe()
    with tempfile.TemporaryDirectory() as folder:
        kubeconfig = Path(folder) / "config"
        process = context.Process(target=_serve_cluster, args=(theirs, tuple(nodes), str(kubeconfig), backend),
                                  daemon=True)
        process.start()
        served = ClusterProcess(kubeconfig, mine, process)
        try:
            if not mine.poll(READY_WAIT):
                raise TimeoutError("the dev cluster process did not start")
            mine.recv()
            yield served
        finally:
            served.stop()
            process.join(READY_WAIT)
            if process.is_alive():
                process.kill()
