"""A dev cluster with two labelled nodes and an in-process manager (`LocalCluster`), as the workflow tests drive it:
namespaces, `kplan` and `kubectl` commands, and waits on an Instance's deploy plan."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.cli.test import run_kplan
from engine.kube import Kube
from engine.testing import LocalCluster, Node

KUBECTL = str(Path(sys.executable).with_name("kubectl"))
INSTANCE = ("kplan.dev/v1alpha1", "Instance")
LABEL = "node.kplan.dev/name"
NODES = (Node("node-1", {LABEL: "node-1"}), Node("node-2", {LABEL: "node-2"}))
WAIT = 30.0


@dataclass
class Workflow:
    local: LocalCluster
    kube: Kube

    @property
    def kubeconfig(self) -> str:
        return str(self.local.kubeconfig)

    def namespace(self) -> str:
        name = f"ml-{uuid.uuid4().hex[:8]}"
        self.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return name

    def kplan(self, *args: str) -> str:
        code, output = run_kplan([*args, "--kubeconfig", self.kubeconfig])
        assert code == 0, output
        return output

    def kubectl(self, *args: str) -> str:
        done = subprocess.run([KUBECTL, *args, "--kubeconfig", self.kubeconfig], capture_output=True, text=True,
                              timeout=WAIT, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def plan(self, namespace: str, predicate: Callable[[dict[str, Any]], Any], instance: str = "ml") -> dict[str, Any]:
        """The deploy plan's record once `predicate(record)` holds (watched, with a deadline)."""
        def holds(obj: dict[str, Any] | None) -> bool:
            return bool(predicate(deploy_record(obj)))

        found = self.kube.wait_for(*INSTANCE, instance, namespace, holds, WAIT, condition="the expected plan state")
        return deploy_record(found)

    def jobs(self, namespace: str) -> dict[str, dict[str, Any]]:
        return {j["metadata"]["labels"]["workflow.kplan.dev/stage"]: j
                for j in self.kube.list("batch/v1", "Job", namespace)}


def deploy_record(instance: dict[str, Any] | None) -> dict[str, Any]:
    return dict((((instance or {}).get("status") or {}).get("plans") or {}).get("deploy") or {})


def steps(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for p in record.get("phases") or [] for s in p.get("steps") or []}
