"""`kplan devcluster`: run a local cluster until SIGINT/SIGTERM, with a kubeconfig pointing at it.

Two backends: `dev` (the default), kplan's in-memory API server with simulated nodes and controllers; `real`,
the real etcd, kube-apiserver, kube-controller-manager and kube-scheduler (built by `make control-plane`) with
simulated kubelets and volume provisioning only.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from engine.cli.cluster import install_crds
from engine.cli.manager import configure_logging
from engine.controller import Manager, ManagerSettings
from engine.devcluster import backends
from engine.devcluster.cluster import PROCESS, RUNTIMES, SIMULATED
from engine.kube import connect

DEFAULT_KUBECONFIG = "~/.kube/kplan-dev.yaml"
CONTEXT = "kplan-dev"
MAX_PORT = 65535
MANAGER_STOP_TIMEOUT = 30.0


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0..65535 (0 picks a free one); a usage error otherwise."""
    port = int(text) if text.strip().isdigit() else -1
    if not 0 <= port <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number from 0 to {MAX_PORT}")
    return port


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "devcluster", parents=list(parents), help="run a local cluster: the dev API server or a real control plane",
        description="Start a local cluster, write a kubeconfig for it (context "
                    f"{CONTEXT}, default {DEFAULT_KUBECONFIG}) and serve until interrupted. --backend dev (default): "
                    "kplan's in-memory API server with simulated nodes and controllers. --backend real: the real "
                    "etcd, kube-apiserver, kube-controller-manager and kube-scheduler v1.37.2 on free 127.0.0.1 "
                    "ports (build them once with `make control-plane`; needs Go >= 1.26), with only the kubelets "
                    "and volume provisioning simulated.",
    )
    parser.add_argument("--backend", choices=backends.BACKENDS, default="dev",
                        help="dev (in-memory, the default) or real (the real control plane)")
    parser.add_argument("--port", type=port_number, default=0, help="port on 127.0.0.1 (default 0: pick a free one)")
    default_nodes = ",".join(backends.DEFAULT_NODES)
    parser.add_argument("--nodes", default=default_nodes,
                        help=f"comma-separated node names for the simulators (default: {default_nodes}; '' for none); "
                             "each is labelled node.kplan.dev/name=NAME")
    parser.add_argument("--no-simulate", action="store_true", help="run without the controller/kubelet simulators")
    parser.add_argument("--token", help="require this bearer token from clients (dev backend only)")
    parser.add_argument("--runtime", choices=RUNTIMES, default=SIMULATED,
                        help="how pods run: simulated (default: their lives are played by the "
                             "simulated kubelet) or process (their containers run as local processes: no image is "
                             "pulled, the host's tools run in place of the image's, with the pod's command, env and "
                             "volumes; `kubectl logs` shows their output)")
    parser.add_argument("--manager", action="store_true",
                        help="also install kplan's CRDs and run a kplan manager in this process (no container runs "
                             "on the simulated nodes, so a manager `kplan init` deploys would not run)")
    parser.set_defaults(func=run)


@contextlib.contextmanager
def manager_running(kubeconfig: Path, stop: threading.Event) -> Iterator[None]:
    """kplan's CRDs installed and a manager reconciling every namespace on a thread, until `stop` is set."""
    configure_logging(verbose=False, lifecycle=False)  # the manager's warnings, as `kplan manager` writes them
    kube = connect(str(kubeconfig), CONTEXT)
    try:
        install_crds(kube)
        manager = Manager(kube, ManagerSettings(metrics_address=None))
        thread = threading.Thread(target=manager.run, args=(stop,), name="kplan-manager", daemon=True)
        thread.start()
        print("kplan manager running in this process (CRDs installed; no `kplan init` needed)", flush=True)
        try:
            yield
        finally:
            stop.set()
            thread.join(MANAGER_STOP_TIMEOUT)
    finally:
        kube.close()


def run(args: argparse.Namespace) -> int:
    nodes = [n.strip() for n in str(args.nodes or "").split(",") if n.strip()]
    if args.backend == "real" and args.token:
        print("error: --token is for the dev backend; the real backend's kubeconfig holds client certificates",
              file=sys.stderr)
        return 2
    if args.runtime == PROCESS and args.no_simulate:
        print("error: --runtime process needs the simulators (the kubelet runs the processes); drop --no-simulate",
              file=sys.stderr)
        return 2
    cluster = backends.new(args.backend, port=args.port, simulate=not args.no_simulate, nodes=nodes,
                           token=args.token, runtime=args.runtime)
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with cluster:
            path = cluster.write_kubeconfig(args.kubeconfig or DEFAULT_KUBECONFIG, CONTEXT)
            print(f"{'dev cluster' if args.backend == 'dev' else 'real control plane'} listening on {cluster.url}",
                  flush=True)
            print(f"export KUBECONFIG={path}", flush=True)
            if cluster.runtime == PROCESS:
                print("pods run as local processes (the host's tools; no image is pulled)", flush=True)
                if cluster.runtime_problem:
                    print(f"warning: {cluster.runtime_problem}", file=sys.stderr, flush=True)
            with manager_running(path, stop) if args.manager else contextlib.nullcontext():
                stop.wait()
        print("dev cluster stopped", file=sys.stderr, flush=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
