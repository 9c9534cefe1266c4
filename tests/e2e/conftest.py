"""Fixtures of the manager's e2e tests against the simulating dev cluster (`simcluster`).

- `sim_kubeconfig`, `sim_kube`: a kubeconfig for `simcluster` and a Kube on it, with kplan's CRDs installed.
- `sim_namespace`: a fresh namespace of `simcluster` for one test.
- `kplan`: what a user does — packages from tests/e2e/packages installed as OperatorVersions, Instances
  created and edited — and waits on plan statuses (re-checked on every change the cluster commits).
- `changes`: every change the cluster commits in the test's namespace (and to cluster-scoped objects), in
  commit order, to assert on the order in which things happened.
- `manager`: a Manager run in-process for the test's namespace (no leader election, short backoffs).
- `manager_process`: starts `kplan manager` processes (killed at the end of the test if still running).
"""

from __future__ import annotations

import contextlib
import queue
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
from devcluster.helpers import delete_namespace, wait_for

from engine import crds
from engine.controller import Manager, ManagerSettings
from engine.devcluster.backends import Cluster
from engine.kube import Kube, connect
from engine.package import loader
from engine.planner import Settings

T = TypeVar("T")

PACKAGES = Path(__file__).parent / "packages"
WAIT = 30.0  # seconds any single condition of these tests may take before the test fails
INSTANCE = ("kplan.dev/v1alpha1", "Instance")
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
FAST = Settings(backoff_base=0.25, backoff_max=1.0)  # step retries in tests: 0.25 s, 0.5 s, 1 s, ...
KPLAN = str(Path(sys.executable).with_name("kplan"))


# --- the cluster ---------------------------------------------------------------------------


def established(crd: Mapping[str, Any] | None) -> bool:
    conditions = ((crd or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


@pytest.fixture(scope="session")
def sim_kubeconfig(simcluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simcluster.write_kubeconfig(tmp_path_factory.mktemp("simkube") / "config")


@pytest.fixture(scope="session")
def sim_kube(sim_kubeconfig: Path) -> Iterator[Kube]:
    """A Kube on `simcluster` with kplan's CRDs installed and established."""
    with connect(str(sim_kubeconfig)) as kube:
        for definition in crds.load():
            kube.apply(definition)
            kube.wait_for(*CRD, definition["metadata"]["name"], None, established, WAIT, condition="Established")
        yield kube


@pytest.fixture
def sim_namespace(simcluster: Cluster) -> Iterator[str]:
    name = f"m-{uuid.uuid4().hex[:10]}"
    code, body = simcluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
    assert code == 201, body
    yield name
    delete_namespace(simcluster, name)


# --- what happened, in order ---------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    type: str
    kind: str
    name: str
    obj: dict[str, Any]

    @property
    def uid(self) -> str:
        return str(self.obj["metadata"].get("uid"))

    def condition(self, kind: str) -> bool:
        conditions = (self.obj.get("status") or {}).get("conditions") or []
        return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


# What a real control plane puts in every new namespace by itself: not kplan's doing, so not recorded.
CLUSTER_OWN = {("ConfigMap", "kube-root-ca.crt"), ("ServiceAccount", "default")}


def revision(cluster: Cluster) -> int:
    """The resourceVersion of the cluster's latest commit."""
    code, body = cluster.request("GET", "/api/v1/namespaces", query={"limit": "1"})
    assert code == 200, body
    return int(body["metadata"]["resourceVersion"])


class Changes:
    """Changes committed in one namespace and to cluster-scoped objects, in commit order.

    The cluster delivers changes to the recorder on a thread of its own, so `all` first waits until the
    recorder has seen every change committed before the call: what a test read from the cluster is there.
    On the dev backend one feed carries every commit in order, so "seen the latest resourceVersion" is exact.
    A real API server has one watch per resource, so there `all` waits until the recorder has seen the current
    version of every object of the recorded kinds in the namespace, and orders the changes by resourceVersion
    (etcd's revision: one order across resources).
    """

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self._cluster, self._namespace = cluster, namespace
        self._items: list[Change] = []
        self._recorded = threading.Condition()
        self._seen = 0  # the resourceVersion of the latest change delivered to the recorder
        self._unsubscribe = cluster.subscribe(self._record)
        seen = self._start = revision(cluster)  # every later change is delivered
        with self._recorded:
            self._seen = max(self._seen, seen)

    def _record(self, change: str, obj: dict[str, Any]) -> None:
        metadata = obj.get("metadata") or {}
        with self._recorded:
            if metadata.get("namespace") in (None, "", self._namespace) and obj.get("kind") not in ("Event", "Lease") \
                    and (obj.get("kind"), metadata.get("name")) not in CLUSTER_OWN:
                self._items.append(Change(change, str(obj.get("kind")), str(metadata.get("name")), obj))
            self._seen = max(self._seen, int(metadata["resourceVersion"]))
            self._recorded.notify_all()

    @property
    def all(self) -> list[Change]:
        """Every recorded change, up to (at least) the latest commit before the call."""
        if self._cluster.backend != "dev":
            return self._caught_up()
        committed = revision(self._cluster)
        with self._recorded:
            if not self._recorded.wait_for(lambda: self._seen >= committed, WAIT):
                raise AssertionError(f"changes up to resourceVersion {committed} not delivered within {WAIT}s")
            return list(self._items)

    def _caught_up(self) -> list[Change]:
        current = self._current_versions()

        def seen_all() -> bool:
            versions = {(c.kind, c.name): int(c.obj["metadata"]["resourceVersion"]) for c in self._items}
            return all(versions.get(key, 0) >= version for key, version in current.items())

        with self._recorded:
            if not self._recorded.wait_for(seen_all, WAIT):
                raise AssertionError(f"the current versions of {sorted(current)} not delivered within {WAIT}s")
            return sorted(self._items, key=lambda c: int(c.obj["metadata"]["resourceVersion"]))

    def _current_versions(self) -> dict[tuple[str, str], int]:
        with self._recorded:
            kinds = {(c.obj.get("apiVersion"), c.kind) for c in self._items if c.obj["metadata"].get("namespace")}
        current: dict[tuple[str, str], int] = {}
        for api_version, kind in sorted(kinds, key=str):
            plural = f"{str(kind).lower()}s"
            base = f"/apis/{api_version}" if "/" in str(api_version) else f"/api/{api_version}"
            code, body = self._cluster.request("GET", f"{base}/namespaces/{self._namespace}/{plural}")
            if code == 200:
                for item in body.get("items") or []:
                    version = int(item["metadata"]["resourceVersion"])
                    key = (str(kind), str(item["metadata"]["name"]))
                    if version > self._start and key not in CLUSTER_OWN:  # changed since it started: seen
                        current[key] = version
        return current

    def first(self, predicate: Callable[[Change], bool]) -> int:
        """The position of the first change that matches; AssertionError (after waiting) when none does."""
        wait_for(self._cluster, lambda: any(predicate(c) for c in self.all), WAIT)
        return next(i for i, c in enumerate(self.all) if predicate(c))

    def of(self, kind: str, name: str) -> list[Change]:
        return [c for c in self.all if c.kind == kind and c.name == name]

    def added(self, kind: str, name: str) -> int:
        return self.first(lambda c: c.type == "ADDED" and c.kind == kind and c.name == name)

    def completed(self, job: str) -> int:
        return self.first(lambda c: c.kind == "Job" and c.name == job and c.condition("Complete"))

    def close(self) -> None:
        self._unsubscribe()


@pytest.fixture
def changes(simcluster: Cluster, sim_namespace: str) -> Iterator[Changes]:
    recorder = Changes(simcluster, sim_namespace)
    yield recorder
    recorder.close()


# --- what a user does ----------------------------------------------------------------------


class Kplan:
    """Packages as OperatorVersions and Instances in one namespace, created and watched with Kube directly."""

    def __init__(self, cluster: Cluster, kube: Kube, namespace: str) -> None:
        self.cluster, self.kube, self.namespace = cluster, kube, namespace

    def operator_version(self, package: str) -> str:
        """Create the OperatorVersion of tests/e2e/packages/`package` (once); its name."""
        files = loader.read_files(str(PACKAGES / package))
        pkg = loader.from_files(files, package)
        if self.kube.get("kplan.dev/v1alpha1", "OperatorVersion", pkg.version_name, self.namespace) is None:
            self.kube.create({
                "apiVersion": "kplan.dev/v1alpha1", "kind": "OperatorVersion",
                "metadata": {"name": pkg.version_name, "namespace": self.namespace},
                "spec": {"operator": {"name": pkg.name}, "version": pkg.operator_version, "files": files},
            })
        return pkg.version_name

    def install(self, package: str, name: str, parameters: Mapping[str, Any] | None = None,
                annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": name, "namespace": self.namespace}
        if annotations:
            metadata["annotations"] = dict(annotations)
        return self.kube.create({
            "apiVersion": INSTANCE[0], "kind": INSTANCE[1], "metadata": metadata,
            "spec": {"operatorVersion": {"name": self.operator_version(package)},
                     "parameters": dict(parameters or {})},
        })

    def instance(self, name: str) -> dict[str, Any] | None:
        return self.kube.get(*INSTANCE, name, self.namespace)

    def set_parameters(self, name: str, **parameters: Any) -> None:
        self.kube.patch(*INSTANCE, name, self.namespace, {"spec": {"parameters": parameters}})

    def delete(self, name: str) -> None:
        self.kube.delete(*INSTANCE, name, self.namespace)

    def plan(self, name: str, plan: str) -> dict[str, Any]:
        """`status.plans[plan]` of the Instance as it is now ({} when it never ran)."""
        return dict((((self.instance(name) or {}).get("status") or {}).get("plans") or {}).get(plan) or {})

    def wait_plan(self, name: str, plan: str, *statuses: str, timeout: float = WAIT) -> dict[str, Any]:
        """The plan's record once its status is one of `statuses` (default COMPLETE)."""
        wanted = statuses or ("COMPLETE",)
        return self.wait(lambda: (record := self.plan(name, plan)).get("status") in wanted and record, timeout)

    def wait(self, predicate: Callable[[], T], timeout: float = WAIT) -> T:
        """`predicate()` once it is truthy, re-checked on every change the cluster commits."""
        return wait_for(self.cluster, predicate, timeout)

    def steps(self, name: str, plan: str) -> dict[str, dict[str, Any]]:
        record = self.plan(name, plan)
        return {s["name"]: s for phase in record.get("phases") or [] for s in phase.get("steps") or []}

    def events(self, name: str, reason: str) -> list[dict[str, Any]]:
        """Events with `reason` about objects of this namespace (or cluster-scoped ones) named after `name`."""
        found = self.kube.list("v1", "Event", None)
        return [e for e in found if e.get("reason") == reason
                and str(e["involvedObject"].get("name", "")).startswith(name)
                and e["involvedObject"].get("namespace") in (None, self.namespace)]


@pytest.fixture
def kplan(simcluster: Cluster, sim_kube: Kube, sim_namespace: str) -> Kplan:
    return Kplan(simcluster, sim_kube, sim_namespace)


# --- managers ------------------------------------------------------------------------------


def manager_settings(namespace: str, **overrides: Any) -> ManagerSettings:
    """A manager of one namespace, with probes on a free port, short backoffs and no leader election."""
    settings = ManagerSettings(workers=2, metrics_address=("127.0.0.1", 0), leader_elect=False, planner=FAST,
                               watch_namespace=namespace, error_backoff_base=0.05, error_backoff_max=1.0)
    return replace(settings, **overrides)


@contextlib.contextmanager
def running_manager(kubeconfig: Path, namespace: str, **overrides: Any) -> Iterator[Manager]:
    """A Manager on its own connection, running in a thread until the block ends."""
    with connect(str(kubeconfig)) as kube:
        manager = Manager(kube, manager_settings(namespace, **overrides))
        stop = threading.Event()
        thread = threading.Thread(target=manager.run, args=(stop,), name="test-manager", daemon=True)
        thread.start()
        try:
            yield manager
        finally:
            stop.set()
            thread.join(WAIT)
            assert not thread.is_alive(), "the manager did not stop"


@pytest.fixture
def manager(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Iterator[Manager]:
    with running_manager(sim_kubeconfig, sim_namespace) as running:
        yield running


def http_get(address: tuple[str, int], path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://{address[0]}:{address[1]}{path}", timeout=WAIT) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


class ManagerProcess:
    """`kplan manager` in a child process, for the namespace of the test; `address` is where it serves probes."""

    def __init__(self, kubeconfig: Path, namespace: str, identity: str, log: Path, *args: str) -> None:
        self.identity = identity
        command = [
            KPLAN, "manager", "--kubeconfig", str(kubeconfig), "--metrics-addr", "127.0.0.1:0",
            "--watch-namespace", namespace, "--lease-namespace", namespace, "--identity", identity,
            "--backoff-base", str(FAST.backoff_base), "--backoff-max", str(FAST.backoff_max), "-v", *args,
        ]
        self.log = log.open("w")
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.address = self._bound_address()

    def _bound_address(self) -> tuple[str, int]:
        lines: queue.Queue[str] = queue.Queue()
        assert self.process.stdout is not None
        stdout = self.process.stdout
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError("kplan manager did not print its address") from None
        assert line.startswith("listening on http://"), line
        host, _, port = line.strip().removeprefix("listening on http://").rpartition(":")
        return host, int(port)

    def get(self, path: str) -> tuple[int, str]:
        return http_get(self.address, path)

    def kill(self) -> None:
        """SIGKILL: no chance to finish a pass or hand the lease back."""
        self.process.kill()
        self.process.wait(WAIT)

    def terminate(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(WAIT)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()


@pytest.fixture
def manager_process(
    sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube, tmp_path: Path
) -> Iterator[Callable[..., ManagerProcess]]:
    """`start(identity, *extra_args)` runs a `kplan manager` for the test's namespace (its log in tmp_path)."""
    started: list[ManagerProcess] = []

    def start(identity: str, *args: str) -> ManagerProcess:
        process = ManagerProcess(sim_kubeconfig, sim_namespace, identity, tmp_path / f"{identity}.log", *args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()
