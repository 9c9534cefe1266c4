"""What the faults and partition soaks share (tests/e2e/test_soak_partition.py, test_soak_api_faults.py and
bench/soak.py): `kplan manager` processes started on any kubeconfig (a tap's included), the Lease's holder, the
sentences that judge a manager's stderr and its tapped writes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from engine.devcluster.partition import Sent

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
