"""`kplan init`: install kplan's CRDs, the manager's RBAC and Deployment (or print them with --dry-run)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from engine.cli import flags, output
from engine.cli.cluster import CRD, connect_from, install_crds
from engine.cli.flags import add_timeout_flag, positive_int
from engine.cli.manifests import DEFAULT_IMAGE, DEFAULT_NAMESPACE, manifests

__all__ = ["register", "run"]


SIMULATED_OS_IMAGE = "kplan devcluster"  # what the dev cluster's simulated kubelet reports as a node's OS image


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("init", help="install the CRDs, RBAC and manager Deployment", parents=parents)
    parser.add_argument("--dry-run", action="store_true", help="print the objects (-o yaml or json) instead")
    parser.add_argument("--image", default=DEFAULT_IMAGE, help=f"manager image (default: {DEFAULT_IMAGE})")
    parser.add_argument("--manager-namespace", default=DEFAULT_NAMESPACE, metavar="NAMESPACE",
                        help=f"namespace of the manager (default: {DEFAULT_NAMESPACE})")
    parser.add_argument("--shards", type=positive_int, default=1,
                        help="deploy this many manager shards, each reconciling its share of the Instances (default 1)")
    parser.add_argument("--replicas", type=positive_int, default=1,
                        help="managers per shard; all but the Lease holder stand by (default 1)")
    add_timeout_flag(parser, "how long to wait for the CRDs to be established")
    flags.accepts_output(parser, "yaml", "json")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    objects = manifests(args.image, args.manager_namespace, args.shards, args.replicas)
    if args.dry_run:
        if args.output == "json":
            sys.stdout.write(output.dump_json({"apiVersion": "v1", "kind": "List", "items": objects}) + "\n")
        else:
            sys.stdout.write(output.dump_yaml_stream(objects))
        return 0
    kube = connect_from(args)
    for crd in install_crds(kube, args.timeout):
        print(f"customresourcedefinition.apiextensions.k8s.io/{crd['metadata']['name']} established")
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) != CRD:
            kube.apply(obj, field_manager="kplan-init")
            print(f"{resource_name(obj)} applied")
    if simulated(kube.list("v1", "Node", None)):
        print(SIMULATED_NODES)
    return 0


SIMULATED_NODES = (
    "note: this cluster's nodes are simulated (a kplan dev cluster): the manager's pod will show Running but no "
    "container runs, so nothing reconciles Instances. Run a manager yourself: `kplan manager` in another shell, "
    "or start the dev cluster with `kplan devcluster --manager`.")


def simulated(nodes: list[dict[str, Any]]) -> bool:
    """True when every node is one kplan's simulated kubelet plays (there is at least one)."""
    images = [((n.get("status") or {}).get("nodeInfo") or {}).get("osImage") for n in nodes]
    return bool(images) and all(image == SIMULATED_OS_IMAGE for image in images)


def resource_name(obj: dict[str, Any]) -> str:
    group = str(obj["apiVersion"]).rpartition("/")[0]
    kind = str(obj["kind"]).lower() + (f".{group}" if group else "")
    return f"{kind}/{obj['metadata']['name']}"
