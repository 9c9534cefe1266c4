"""A manager process taking over many Instances, some with work waiting; prints one JSON object.

The two-step package of bench/instances.py: a manager (on a thread of this process) converges N Instances
(default 1000, `--instances N`) and stops; then M more (default 20, `--waiting M`) are created with no manager
running, named after the settled ones (so they come last in name order), and a `kplan manager` process starts
(no leader election, so no Lease to wait for). Figures: seconds from its start until it is ready (/readyz: its
Instances and OperatorVersions listed), until the first waiting Instance was seen COMPLETE and until all of
them were; its reconcile passes by then (/metrics). This is what a restarted manager must get through before
any plan advances: a manager SIGKILLed every few seconds makes progress only if it is shorter than that. The
process's start-up (imports) is in the figures; `ready → first` is the manager's own share.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from _common import (
    add_backend_flag,
    chosen_backends,
    cluster_process,
    install_crds,
    machine,
    manager_for,
    wait_until,
)
from instances import APP, CONFIG, NAMESPACE, OPERATOR, PACKAGE, PARAMS, PODS_PER_NODE, VERSION, Completions, instance

from engine.kube import Kube, connect

KPLAN = str(Path(sys.executable).with_name("kplan"))
FILES = {"operator.yaml": OPERATOR, "params.yaml": PARAMS, "templates/config.yaml": CONFIG, "templates/app.yaml": APP}


def install_package(kube: Kube) -> None:
    files = FILES
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    kube.create({"apiVersion": "kplan.dev/v1alpha1", "kind": "OperatorVersion",
                 "metadata": {"name": VERSION, "namespace": NAMESPACE},
                 "spec": {"operator": {"name": PACKAGE}, "version": "0.1.0", "files": files}})


def measure(args: argparse.Namespace, backend: str) -> dict[str, Any]:
    settled, waiting = args.instances, args.waiting
    nodes = tuple(f"node-{n}" for n in range(1, max(2, -(-(settled + waiting) // PODS_PER_NODE)) + 1))
    figures: dict[str, Any] = {"instances": settled, "waiting": waiting}
    with cluster_process(nodes, backend) as served, connect(str(served.kubeconfig)) as obs:
        install_crds(obs)
        install_package(obs)
        completions = Completions(obs, NAMESPACE, args.budget * 2 + 60)
        with manager_for(served.kubeconfig, NAMESPACE, args.workers):
            for i in range(settled):
                obs.create(instance(i, True))
            if not completions.wait(settled, time.perf_counter() + args.budget):
                raise SystemExit(f"only {len(completions.at)} of {settled} Instances converged")
        names = [obs.create(instance(settled + i, True))["metadata"]["name"] for i in range(waiting)]
        port = free_port()
        start = time.perf_counter()
        process = subprocess.Popen([KPLAN, "manager", "--kubeconfig", str(served.kubeconfig), "--metrics-addr",
                                    f"127.0.0.1:{port}", "--watch-namespace", NAMESPACE, "--no-leader-elect"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: answers(port, "/readyz"), args.budget, "the manager to be ready")
            ready = time.perf_counter() - start
            deadline = start + args.budget
            completions.wait(settled + 1, deadline)
            first = min((completions.at[n] for n in names if n in completions.at), default=None)
            completions.wait(settled + waiting, deadline)
            done = [completions.at[n] for n in names if n in completions.at]
            passes = reconciles(port)
        finally:
            process.terminate()
            process.wait(60)
        completions.stop()
        figures["cluster_process"] = served.stop()
    figures.update({
        "seconds_until_ready": round(ready, 2),
        "seconds_until_first_waiting_complete": round(first - start, 2) if first is not None else None,
        "seconds_until_all_waiting_complete": round(max(done) - start, 2) if len(done) == waiting else None,
        "waiting_converged": len(done),
        "passes_until_then": passes,
    })
    return figures


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers(port: int, path: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def reconciles(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("kplan_reconcile_total "):
                return int(float(line.split()[1]))
    return -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=1000, help="settled Instances (default 1000)")
    parser.add_argument("--waiting", type=int, default=20, help="Instances created while no manager ran (default 20)")
    parser.add_argument("--workers", type=int, default=2, help="the manager's worker threads (default 2)")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds for each phase (default 600)")
    add_backend_flag(parser)
    args = parser.parse_args()
    facts = machine()
    figures = {backend: measure(args, backend) for backend in chosen_backends(args.backend)}
    print(json.dumps({"bench": "restart", **facts, **figures}, indent=2))


if __name__ == "__main__":
    main()
