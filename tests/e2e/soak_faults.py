"""What the faults and partition soaks share (tests/e2e/test_soak_partition.py, test_soak_api_faults.py and
bench/soak.py): `kplan manager` processes started on any kubeconfig (a tap's included), Instances installed
with `kplan install`, a feed of the changes, the Lease's holder, and the sentences that judge a manager's
stderr and its tapped writes (tests/soak/invariants.py judges the objects)."""

from __future__ import annotations

import contextlib
import io
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from soak.invariants import PACKAGES, Change, problems

from engine.apiserver.faults import FaultProfile
from engine.cli.main import main
from engine.devcluster.partition import Sent, Tap
from engine.kube.transport import REQUEST_TIMEOUT

KPLAN = str(Path(sys.executable).with_name("kplan"))
SHORT_LEASE = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
RENEW_DEADLINE = 1.5
LEASE = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/kplan-manager"


def start_manager(kubeconfig: Path, namespace: str, identity: str, log: Path, *args: str) -> subprocess.Popen[bytes]:
    """`kplan manager` for `namespace` as `identity`, short lease and backoffs, its stderr appended to `log`."""
    return subprocess.Popen(
        [KPLAN, "manager", "--kubeconfig", str(kubeconfig), "--metrics-addr", "127.0.0.1:0",
         "--watch-namespace", namespace, "--lease-namespace", namespace, "--identity", identity,
         "--backoff-base", "0.25", "--backoff-max", "1", *SHORT_LEASE, *args],
        stdout=subprocess.DEVNULL, stderr=log.open("ab"),
    )


def holder(request: Any, namespace: str) -> str:
    """The Lease's holder now ("" when none), through a cluster's `request`."""
    code, body = request("GET", LEASE.format(namespace=namespace))
    return str(((body or {}).get("spec") or {}).get("holderIdentity") or "") if code == 200 else ""


def manager_problems(logs: Mapping[str, Path], processes: Mapping[str, subprocess.Popen[bytes]]) -> list[str]:
    """Managers that printed a traceback or exited (a transient error must never end one)."""
    found = [f"manager {name} printed a traceback: {tail(log)}" for name, log in sorted(logs.items())
             if "Traceback (most recent call last)" in log.read_text(errors="replace")]
    found += [f"manager {name} exited with {process.poll()}" for name, process in sorted(processes.items())
              if process.poll() is not None]
    return found


def tail(log: Path, lines: int = 5) -> str:
    return " | ".join(log.read_text(errors="replace").splitlines()[-lines:])


def writes(sent: Iterable[Sent]) -> list[Sent]:
    """The requests that changed something (or asked to), in the order they were sent."""
    return sorted((s for s in sent if s.write), key=lambda s: s.sent)


def overlaps(old: Iterable[Sent], new: Iterable[Sent]) -> list[str]:
    """Writes of the old leader still in flight (sent, not yet answered) when the new leader sent its first."""
    new_writes = writes(new)
    if not new_writes:
        return []
    first = new_writes[0].sent
    return [f"{s.method} {s.path.split('?')[0]} answered {s.answered - first:.3f}s after the new leader's first write"
            for s in writes(old) if s.answered >= first]


class Feed:
    """Every change a cluster commits in one namespace (Events and Leases aside), in order, as tests/soak/invariants.py
    takes them; `wait` re-checks a condition on each change (and every second: taps and processes notify nobody)."""

    def __init__(self, cluster: Any, namespace: str) -> None:
        self.namespace = namespace
        self.changes: list[Change] = []
        self._cond = threading.Condition()
        self._stop = cluster.subscribe(self._record)

    def _record(self, change: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        with self._cond:
            if meta.get("namespace") == self.namespace and obj.get("kind") not in ("Event", "Lease"):
                self.changes.append((change, str(obj.get("kind")), str(meta.get("name")), obj))
            self._cond.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 1.0))
            return True

    def close(self) -> None:
        self._stop()


def install(kubeconfig: Path, namespace: str, instances: Mapping[str, str]) -> list[str]:
    """`kplan install` of each Instance (name -> package of tests/e2e/packages); the installs that failed."""
    failed = []
    for name, package in instances.items():
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(["install", str(PACKAGES / package), "--kubeconfig", str(kubeconfig), "-n", namespace,
                         "--instance", name])
        if code != 0:
            failed.append(f"kplan install {name} exited {code}: {err.getvalue().strip()[-300:]}")
    return failed


def deploy_status(request: Any, namespace: str, name: str) -> str:
    code, body = request("GET", f"/apis/kplan.dev/v1alpha1/namespaces/{namespace}/instances/{name}")
    plans = ((body or {}).get("status") or {}).get("plans") or {} if code == 200 else {}
    return str((plans.get("deploy") or {}).get("status") or "")


# --- one round of each soak: the short form runs one, bench/soak.py many -----------------------------------

PROFILE = FaultProfile(error_rate={"*": 0.1}, latency_seconds=0.01, latency_jitter_seconds=0.04,
                       watch_max_events=5, seed=12)  # the dev backend's faults: 10 % errors, cuts every 5 events
EXPIRIES = 4  # watches answered 410 Gone in a dev round, one after each few commits
PAUSE = REQUEST_TIMEOUT + 5  # seconds etcd stays stopped: every request in flight times out meanwhile


@dataclass
class Round:
    """What one round saw: its Instances, whether they all converged, and every problem, as sentences."""

    instances: dict[str, str] = field(default_factory=dict)
    converged: bool = False
    problems: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


def fault_round(cluster: Any, kubeconfig: Path, feed: Feed, work: Path, prefix: str, seed: int = 12) -> Round:
    """Six Instances converging under one `kplan manager` while the API server misbehaves: the fault profile
    (dev), or kube-apiserver restarted mid-plan and then etcd paused past the request timeout (real)."""
    namespace = feed.namespace
    first = {f"{prefix}c1": "chain", f"{prefix}c2": "chain", f"{prefix}p1": "parallel"}
    second = {f"{prefix}c3": "chain", f"{prefix}c4": "chain", f"{prefix}p2": "parallel"}
    outcome = Round(instances={**first})
    log = work / f"{prefix}manager.log"
    outcome.problems += install(kubeconfig, namespace, first)
    manager = start_manager(kubeconfig, namespace, f"{prefix}m", log)

    def after(commits: int) -> None:
        target = len(feed.changes) + commits
        feed.wait(lambda: len(feed.changes) >= target, 60)

    try:
        if cluster.backend == "dev":
            profile = replace(PROFILE, seed=seed)
            cluster.faults = profile
            for _ in range(EXPIRIES):
                after(6)
                cluster.faults = replace(profile, expire_next_watch=True)
            outcome.problems += install(kubeconfig, namespace, second)  # the CLI through the same faults
            outcome.figures = {"error_rate": 0.1, "watch_cut_every_events": 5, "watch_expiries": EXPIRIES}
        else:
            after(6)
            cluster.plane.restart_apiserver()
            outcome.problems += install(kubeconfig, namespace, second)
            after(4)
            cluster.plane.components["etcd"].signal(signal.SIGSTOP)
            threading.Event().wait(PAUSE)  # the fault's length, not a synchronisation
            cluster.plane.components["etcd"].signal(signal.SIGCONT)
            outcome.figures = {"apiserver_restarts": 1, "etcd_paused_seconds": PAUSE}
        outcome.instances.update(second)
        outcome.converged = feed.wait(lambda: all(deploy_status(cluster.request, namespace, name) == "COMPLETE"
                                                  for name in outcome.instances), 240)
        outcome.problems += manager_problems({"manager": log}, {"manager": manager})
    finally:
        manager.kill()
        manager.wait()
        if cluster.backend == "dev":
            cluster.faults = FaultProfile()
    if not outcome.converged:
        outcome.problems.append("not all COMPLETE: " + ", ".join(
            f"{name} {deploy_status(cluster.request, namespace, name) or 'not started'}"
            for name in sorted(outcome.instances)))
    outcome.problems += problems(outcome.instances, namespace, feed.changes)
    return outcome


def partition_round(cluster: Any, kubeconfig: Path, feed: Feed, work: Path, prefix: str) -> Round:
    """The leader, on a tap, cut off mid-pass (its next write held) while a standby on a tap never cut takes
    the Lease over; healed once the standby writes. Problems: writes of the two in flight at once, writes of
    the old leader sent past its renew deadline, a held write delivered, and the kills soak's invariants."""
    namespace = feed.namespace
    outcome = Round(instances={f"{prefix}c1": "chain", f"{prefix}p1": "parallel"})
    names = {"old": f"{prefix}old", "new": f"{prefix}new"}
    logs = {role: work / f"{name}.log" for role, name in names.items()}
    processes: dict[str, subprocess.Popen[bytes]] = {}
    with Tap.for_kubeconfig(kubeconfig) as old, Tap.for_kubeconfig(kubeconfig) as new:
        try:
            processes["old"] = start_manager(old.write_kubeconfig(work / f"{prefix}old.kubeconfig"), namespace,
                                             names["old"], logs["old"])
            feed.wait(lambda: holder(cluster.request, namespace) == names["old"], 60)
            processes["new"] = start_manager(new.write_kubeconfig(work / f"{prefix}new.kubeconfig"), namespace,
                                             names["new"], logs["new"])
            feed.wait(lambda: any("/leases/" in s.path for s in new.sent), 60)  # the standby campaigns
            outcome.problems += install(kubeconfig, namespace, outcome.instances)
            feed.wait(lambda: len([s for s in writes(old.sent) if "/leases/" not in s.path]) >= 4, 60)
            old.cut_at_next_write()  # mid-plan: the leader is in a pass, about to write
            feed.wait(lambda: old.is_cut and holder(cluster.request, namespace) == names["new"]
                      and len(writes(new.sent)) >= 3, 60)
            old.heal()
            healed = time.time()
            outcome.converged = feed.wait(lambda: all(deploy_status(cluster.request, namespace, name) == "COMPLETE"
                                                      for name in outcome.instances), 120)
            feed.wait(lambda: any(s.sent > healed + 1 for s in old.sent), 30)  # the old leader talks again
            outcome.problems += manager_problems(logs, processes)
        finally:
            for process in processes.values():
                process.kill()
                process.wait()
    old_writes, new_writes = writes(old.sent), writes(new.sent)
    if not (old.cut_at and old_writes and new_writes and old.is_cut is False):
        outcome.problems.append("the round did not get as far as a cut and a takeover")
        return outcome
    outcome.problems += overlaps(old.sent, new.sent)
    outcome.problems += [f"old leader sent {s.method} {s.path.split('?')[0]} {s.sent - old.cut_at:.2f}s after the cut"
                         for s in old_writes if s.sent > old.cut_at + RENEW_DEADLINE]
    if old.dropped < 1:
        outcome.problems.append("the old leader's held write was delivered when the partition healed")
    if not outcome.converged:
        outcome.problems.append("not all COMPLETE after the partition")
    outcome.problems += problems(outcome.instances, namespace, feed.changes)
    outcome.figures = {"failover_gap_seconds": round(new_writes[0].sent - old_writes[-1].answered, 2),
                       "takeover_after_cut_seconds": round(new_writes[0].sent - old.cut_at, 2),
                       "old_leader_writes": len(old_writes), "new_leader_writes": len(new_writes),
                       "held_requests_dropped": old.dropped}
    return outcome
