"""`kplan manager` as a process: probes and metrics answer, SIGTERM exits 0, a manager killed in the middle of a
plan is replaced and the plan finishes with nothing duplicated or lost, and of two managers only the lease
holder reconciles, the other taking over when the holder is killed; against a dead server it logs one plain line
per retry (no urllib3 noise, no hint to install CRDs)."""

from __future__ import annotations

import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from conftest import Changes, Kplan, ManagerProcess

    Start = Callable[..., ManagerProcess]

KPLAN = str(Path(sys.executable).with_name("kplan"))
WAIT = 30.0
SHORT_LEASE = ("--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.25")
SAMPLE = re.compile(r"^(\w+)(\{[^}]*\})? (\S+)$")


def metrics(process: ManagerProcess) -> dict[str, float]:
    """The samples of /metrics by name with labels, e.g. `kplan_api_requests_total{verb="apply"}`."""
    code, text = process.get("/metrics")
    assert code == 200
    found = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match:
            found[match[1] + (match[2] or "")] = float(match[3])
    return found


def holder(kplan: Kplan) -> str | None:
    lease = kplan.kube.get("coordination.k8s.io/v1", "Lease", "kplan-manager", kplan.namespace)
    return ((lease or {}).get("spec") or {}).get("holderIdentity") or None


def test_probes_and_metrics_answer_and_sigterm_exits_cleanly(kplan: Kplan, manager_process: Start) -> None:
    process = manager_process("solo", *SHORT_LEASE)
    assert process.get("/healthz") == (200, "ok\n")
    kplan.wait(lambda: process.get("/readyz")[0] == 200)

    kplan.install("serial", "web")
    kplan.wait_plan("web", "deploy")

    figures = kplan.wait(lambda: (m := metrics(process)).get(
        'kplan_plan_duration_seconds_count{plan="deploy",status="COMPLETE"}') == 1 and m)
    assert figures["kplan_reconcile_total"] > 0
    assert figures["kplan_reconcile_errors_total"] == 0
    assert figures["kplan_leader"] == 1
    assert figures["kplan_workqueue_depth"] >= 0
    assert figures['kplan_api_requests_total{verb="apply"}'] >= 2
    assert process.get("/nothing")[0] == 404
    assert process.terminate() == 0
    assert holder(kplan) is None  # handed back on the way out


def test_a_manager_killed_mid_plan_is_replaced_and_the_plan_finishes_once(
    kplan: Kplan, manager_process: Start, changes: Changes
) -> None:
    first = manager_process("first", *SHORT_LEASE)
    kplan.install("chain", "line")
    kplan.wait(lambda: kplan.steps("line", "deploy").get("s2", {}).get("status") == "IN_PROGRESS")
    uid = kplan.plan("line", "deploy")["uid"]

    first.kill()
    manager_process("second", *SHORT_LEASE)

    record = kplan.wait_plan("line", "deploy")
    assert record["uid"] == uid  # continued, not started over
    assert [s["status"] for s in kplan.steps("line", "deploy").values()] == ["COMPLETE"] * 4
    names = [f"line-s{i}" for i in range(1, 5)]
    for kind in ("Job", "ConfigMap"):
        for name in names:
            history = changes.of(kind, name)
            assert [c.type for c in history].count("ADDED") == 1, (kind, name)
            assert "DELETED" not in [c.type for c in history], (kind, name)
            assert kplan.kube.get("batch/v1" if kind == "Job" else "v1", kind, name, kplan.namespace) is not None
    applied = {(r["kind"], r["name"]) for r in kplan.instance("line")["status"]["appliedResources"]}
    assert applied == {(kind, name) for kind in ("Job", "ConfigMap") for name in names}
    assert holder(kplan) == "second"


def test_only_the_lease_holder_reconciles_and_a_killed_holder_is_replaced(kplan: Kplan, manager_process: Start) -> None:
    managers = {name: manager_process(name, *SHORT_LEASE) for name in ("one", "two")}
    # Probes answer from the start; ready means caches synced and leading or campaigning.
    kplan.wait(lambda: all(m.get("/readyz")[0] == 200 for m in managers.values()))
    leader = managers[kplan.wait(lambda: holder(kplan))]
    standby = next(m for m in managers.values() if m is not leader)

    kplan.install("params", "svc")
    kplan.wait_plan("svc", "deploy")

    assert metrics(leader)["kplan_leader"] == 1
    assert metrics(leader)["kplan_reconcile_total"] > 0
    assert metrics(standby)["kplan_leader"] == 0
    assert metrics(standby)["kplan_reconcile_total"] == 0
    assert metrics(standby)['kplan_api_requests_total{verb="apply"}'] == 0
    assert standby.get("/readyz")[0] == 200  # a standby is ready: it campaigns

    leader.kill()

    kplan.wait(lambda: holder(kplan) == standby.identity)
    kplan.set_parameters("svc", size=4)
    kplan.wait_plan("svc", "update")
    # A pass is counted once it returns, after the status it wrote: the plan may be seen COMPLETE first.
    kplan.wait(lambda: metrics(standby)["kplan_reconcile_total"] > 0)
    assert kplan.kube.get("v1", "ConfigMap", "svc-config", kplan.namespace)["data"]["size"] == "4"


def test_a_manager_against_a_dead_server_logs_one_plain_line_per_retry(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "dead",
        "clusters": [{"name": "dead", "cluster": {"server": url}}],
        "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": "u"}}],
        "users": [{"name": "u", "user": {}}]}))
    command = [KPLAN, "manager", "--kubeconfig", str(kubeconfig), "--metrics-addr", "127.0.0.1:0"]
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        stderr = process.stderr
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in stderr], daemon=True).start()
        seen = [lines.get(timeout=WAIT) for _ in range(2)]  # two failed attempts
        process.send_signal(signal.SIGTERM)
        assert process.wait(WAIT) == 0

    assert not [line for line in seen if "urllib3" in line or "hint=" in line], seen
    failed = [line for line in seen if "cannot list kplan objects yet" in line]
    assert len(failed) == 2, seen
    assert f'the API server at {url} is unavailable (connection refused)' in failed[0]
