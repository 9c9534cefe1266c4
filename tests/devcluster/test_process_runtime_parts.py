"""The process runtime's pure parts: the environment and command line (envFrom, env, valueFrom, $(VAR)), the phase
a pod's container states make, the log store, and the sandbox run as an unprivileged user.

Dev backend only: pure parts of the dev cluster's process runtime."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from engine.simulators.kubelet.containerlogs import LogStore, container_id
from engine.simulators.kubelet.environment import ConfigError, command_line, environment, expand
from engine.simulators.kubelet.podruns import ContainerState
from engine.simulators.kubelet.podstatus import phase_of
from engine.simulators.kubelet.processes import SANDBOX, UNSHARE, Exit

pytestmark = pytest.mark.dev_only("see the module docstring")

POD: dict[str, Any] = {"metadata": {"name": "web-0", "namespace": "shop", "uid": "u-1", "labels": {"app": "web"}},
                       "spec": {"nodeName": "node1"}, "status": {"podIP": "10.244.0.9"}}
OBJECTS = {("ConfigMap", "shop", "settings"): {"data": {"level": "debug", "mode": "fast"}},
           ("Secret", "shop", "creds"): {"data": {"password": "czNjcmV0"}}}


def lookup(kind: str, namespace: str, name: str) -> dict[str, Any] | None:
    return OBJECTS.get((kind, namespace, name))


def test_env_from_then_env_in_order_with_references_expanded() -> None:
    container = {
        "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "CFG_"}],
        "env": [{"name": "LEVEL", "value": "$(CFG_level)!"},
                {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
                {"name": "LABEL", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "MEMORY", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
                {"name": "KEPT", "value": "$(UNDEFINED) $$(LEVEL)"}],
        "resources": {"limits": {"memory": "64Mi"}}, "command": ["echo", "$(LEVEL)"], "args": ["$(IP)"]}

    env = environment(POD, container, lookup, {"PATH": "/bin"})

    assert env == {"PATH": "/bin", "CFG_level": "debug", "CFG_mode": "fast", "LEVEL": "debug!", "PASSWORD": "s3cret",
                   "LABEL": "web", "IP": "10.244.0.9", "MEMORY": "64", "KEPT": "$(UNDEFINED) $(LEVEL)"}
    assert command_line(container, env) == ["echo", "debug!", "10.244.0.9"]


@pytest.mark.parametrize(("source", "message"), [
    ({"configMapKeyRef": {"name": "absent", "key": "k"}}, 'configmap "absent" not found'),
    ({"configMapKeyRef": {"name": "settings", "key": "absent"}}, "couldn't find key absent in ConfigMap shop/settings"),
    ({"fieldRef": {"fieldPath": "spec.containers"}}, "unsupported fieldRef 'spec.containers'"),
])
def test_a_reference_that_does_not_resolve_says_what_the_kubelet_says(source: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        environment(POD, {"env": [{"name": "X", "valueFrom": source}]}, lookup, {})


def test_optional_references_that_do_not_resolve_leave_the_variable_out() -> None:
    container = {"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "k",
                                                                        "optional": True}}}],
                 "envFrom": [{"secretRef": {"name": "absent", "optional": True}}]}
    assert environment(POD, container, lookup, {}) == {}


def test_dollar_references_follow_kubernetes_rules() -> None:
    assert expand("$(A)-$(B)-$$(A)-$A", {"A": "1"}) == "1-$(B)-$(A)-$A"


def ended(code: int) -> Exit:
    return Exit(code, "Completed" if code == 0 else "Error", "", "t0", "t1")


@pytest.mark.parametrize(("policy", "inits", "mains", "phase"), [
    ("Never", [], [ContainerState("a", ("ContainerCreating", ""))], "Pending"),
    ("Never", [], [ContainerState("a", running_since="t0")], "Running"),
    ("Never", [], [ContainerState("a", terminated=ended(0)), ContainerState("b", running_since="t0")], "Running"),
    ("Never", [], [ContainerState("a", terminated=ended(0)), ContainerState("b", terminated=ended(2))], "Failed"),
    ("OnFailure", [], [ContainerState("a", terminated=ended(0))], "Succeeded"),
    ("OnFailure", [], [ContainerState("a", ("CrashLoopBackOff", ""), last=ended(1), restarts=1)], "Running"),
    ("Never", [ContainerState("i", terminated=ended(1))], [ContainerState("a", ("PodInitializing", ""))], "Failed"),
    ("Always", [ContainerState("i", running_since="t0")], [ContainerState("a", ("PodInitializing", ""))], "Pending"),
])
def test_the_phase_follows_the_containers(policy: str, inits: list[ContainerState], mains: list[ContainerState],
                                          phase: str) -> None:
    assert phase_of(policy, inits, mains) == phase


def test_the_log_store_keeps_each_run_by_container_id_and_bounds_it() -> None:
    store = LogStore(limit=20)
    first = store.open("u-1", container_id("u-1", "main", 0))
    first.write("stdout", b"one\ntw")
    first.write("stderr", b"err\n")
    first.write("stdout", b"o\n")
    first.close()
    second = store.open("u-1", container_id("u-1", "main", 1))
    second.write("stdout", b"0123456789\n0123456789\nlost\n")

    assert first.text() == "one\nerr\ntwo\n"
    assert store.get(container_id("u-1", "main", 0)) is first
    assert store.get(container_id("u-1", "main", 1)) is second
    assert second.text() == "0123456789\n[kplan process runtime: output beyond 20 bytes was dropped]\n"
    assert second.lines() == (second.lines()[0], False)
    store.forget("u-1")
    assert store.get(container_id("u-1", "main", 1)) is None
    assert second.lines()[1]  # closed with its pod: a follower stops


def test_the_sandbox_runs_for_an_unprivileged_user() -> None:
    """CI runs as root; an ordinary user must get the same private root (as root: run as nobody to prove it)."""
    root = os.geteuid() == 0
    as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if root else []
    python = "/usr/bin/python3" if root and Path("/usr/bin/python3").exists() else sys.executable  # nobody can run it
    folder = Path(tempfile.mkdtemp(prefix="kplan-sandbox-test-"))
    status, report = os.pipe()
    try:
        (folder / "root").mkdir()
        (folder / "volume").mkdir()
        (folder / "volume" / "input").write_text("from the volume\n")
        spec = {"isolate": True, "root": str(folder / "root"), "statusFd": report, "workingDir": "/kplan-test/work",
                "env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                "argv": ["sh", "-c", "cat /data/input; pwd; id -u"],
                "mounts": [{"source": str(folder / "volume"), "target": "/data", "readOnly": True}]}
        (folder / "spec.json").write_text(json.dumps(spec))
        shutil.copy(SANDBOX, folder / "sandbox.py")  # standalone; the checkout may not be readable by nobody
        for path in folder.rglob("*"):
            path.chmod(0o777)
        folder.chmod(0o777)
        done = subprocess.run([*as_user, *UNSHARE, python, "-I", "-S", str(folder / "sandbox.py"),
                               str(folder / "spec.json")],
                              capture_output=True, text=True, timeout=30, check=False, pass_fds=(report,),
                              stdin=subprocess.DEVNULL)
        os.close(report)
        with os.fdopen(status) as failure:
            start_error = failure.read()
    finally:
        subprocess.run(["rm", "-rf", str(folder)], check=False)

    assert (done.returncode, start_error) == (0, ""), done.stderr
    assert done.stdout == "from the volume\n/kplan-test/work\n0\n"
    assert not Path("/kplan-test").exists()
