"""`kplan devcluster`: run the local API server until SIGINT/SIGTERM, with a kubeconfig pointing at it."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any

from engine.devcluster.cluster import PROCESS, RUNTIMES, SIMULATED, DevCluster

DEFAULT_KUBECONFIG = "~/.kube/kplan-dev.yaml"
CONTEXT = "kplan-dev"


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "devcluster", parents=list(parents), help="run the local dev API server (with simulators)",
        description="Start the local in-memory Kubernetes API server, write a kubeconfig for it (context "
                    f"{CONTEXT}, default {DEFAULT_KUBECONFIG}) and serve until interrupted.",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: pick a free one)")
    parser.add_argument("--nodes", default="node1",
                        help="comma-separated node names for the simulators (default: one node, node1; '' for none)")
    parser.add_argument("--no-simulate", action="store_true", help="run without the controller/kubelet simulators")
    parser.add_argument("--token", help="require this bearer token from clients")
    parser.add_argument("--runtime", choices=RUNTIMES, default=SIMULATED,
                        help="how pods run: simulated (default: their lives are played by the simulated kubelet) or "
                             "process (their containers run as local processes: no image is pulled, the host's "
                             "tools run in place of the image's, with the pod's command, env and volumes; "
                             "`kubectl logs` shows their output)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    nodes = [n.strip() for n in str(args.nodes or "").split(",") if n.strip()]
    if args.runtime == PROCESS and args.no_simulate:
        print("error: --runtime process needs the simulators (the kubelet runs the processes); drop --no-simulate",
              file=sys.stderr)
        return 2
    cluster = DevCluster(port=args.port, simulate=not args.no_simulate, nodes=nodes, token=args.token,
                         runtime=args.runtime)
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with cluster:
            path = cluster.write_kubeconfig(args.kubeconfig or DEFAULT_KUBECONFIG, CONTEXT)
            print(f"dev cluster listening on {cluster.url}", flush=True)
            print(f"export KUBECONFIG={path}", flush=True)
            if cluster.runtime == PROCESS:
                print("pods run as local processes (the host's tools; no image is pulled)", flush=True)
                if cluster.runtime_problem:
                    print(f"warning: {cluster.runtime_problem}", file=sys.stderr, flush=True)
            stop.wait()
        print("dev cluster stopped", file=sys.stderr, flush=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
