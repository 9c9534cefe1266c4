"""The process runtime (`backends.new(..., runtime="process")`, `kplan devcluster --runtime process`): pods' containers
run as local processes with their command, environment, working directory and volumes; the exit becomes the
container's state and the pod's phase, the termination message file the termination message, the output
`kubectl logs` (and `-f`); restartPolicy is honoured, a deleted pod's process group is killed, every process
is bounded in time and output, and none outlives the cluster. On both backends: the real API server reads the
logs from the simulated kubelet's HTTPS API, as it would from a real kubelet's."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.devcluster import backends
from engine.devcluster.backends import Cluster
from engine.devcluster.cluster import DevCluster
from engine.simulators import Limits

from .helpers import connection, served_by_the_cli, wait_for

KUBECTL = str(Path(sys.executable).with_name("kubectl"))
WAIT = 30.0
JsonDict = dict[str, Any]


@pytest.fixture(scope="module")
def cluster(backend: str) -> Iterator[Cluster]:
    with backends.new(backend, simulate=True, nodes=["node1"], runtime="process") as running:
        assert running.runtime_problem == ""  # CI's host offers user and mount namespaces
        yield running


@pytest.fixture(scope="module")
def kubeconfig(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(cluster.write_kubeconfig(tmp_path_factory.mktemp("runtime") / "config"))


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    name = f"rt-{uuid.uuid4().hex[:8]}"
    code, body = cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
    assert code == 201, body
    wait_for(cluster, lambda: cluster.request("GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0] == 200,
             WAIT)  # pods are admitted once its ServiceAccount is there (the real controller makes it)
    yield name
    cluster.request("DELETE", f"/api/v1/namespaces/{name}")


def create(cluster: Cluster, namespace: str, plural: str, obj: JsonDict) -> JsonDict:
    code, body = cluster.request("POST", f"/api/v1/namespaces/{namespace}/{plural}", body=obj)
    assert code == 201, body
    return body


def pod(name: str, script: str, **spec: Any) -> JsonDict:
    container = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", script], **spec.pop("container", {})}
    return {"metadata": {"name": name}, "spec": {"restartPolicy": "Never", "containers": [container], **spec}}


def read_pod(cluster: Cluster, namespace: str, name: str) -> JsonDict:
    code, body = cluster.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    return body if code == 200 else {}


def phase_reached(cluster: Cluster, namespace: str, name: str, *phases: str) -> JsonDict:
    def reached() -> JsonDict | None:
        found = read_pod(cluster, namespace, name)
        return found if (found.get("status") or {}).get("phase") in phases else None

    return wait_for(cluster, reached, WAIT)


def state_of(obj: JsonDict) -> JsonDict:
    return dict(obj["status"]["containerStatuses"][0]["state"])


def kubectl(kubeconfig: str, *args: str) -> str:
    done = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, *args], capture_output=True, text=True,
                          timeout=WAIT, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def following(cluster: Cluster, namespace: str, name: str) -> Any:
    """The pod's log, followed as it is printed (`kubectl logs -f`): a stream of lines that ends with the run."""
    phase_reached(cluster, namespace, name, "Running")
    conn = connection(cluster, timeout=WAIT)
    conn.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}/log?follow=true")
    answer = conn.getresponse()
    assert answer.status == 200, answer.read()
    return answer


def read_until(stream: Any, text: str) -> list[str]:
    """Lines of a followed log up to the first holding `text`."""
    lines: list[str] = []
    for raw in stream:
        lines.append(raw.decode())
        if text in lines[-1]:
            return lines
    raise AssertionError(f"the log ended without {text!r}: {lines}")


def followed_until(cluster: Cluster, namespace: str, name: str, text: str) -> list[str]:
    """The pod's log lines, followed as they are printed, up to the first holding `text`."""
    with following(cluster, namespace, name) as stream:
        return read_until(stream, text)


def processes_with(marker: str) -> list[int]:
    """Pids of the processes whose environment holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_command_env_working_dir_and_volumes_reach_the_process(cluster: Cluster, kubeconfig: str,
                                                               namespace: str) -> None:
    create(cluster, namespace, "configmaps", {"metadata": {"name": "settings"},
                                              "data": {"greeting": "hello", "app.conf": "level=debug\n"}})
    create(cluster, namespace, "secrets", {"metadata": {"name": "creds"}, "stringData": {"password": "s3cret"}})
    script = ("echo \"$(GREETING) from $POD_NAME in $(pwd) as $SECRET_password\"; cat /etc/app/app.conf; "
              "cat /var/run/creds/password; echo; cat /info/labels; echo scratch > /scratch/file; cat /scratch/file")
    spec = pod("web", script, container={
        "workingDir": "/srv/work",
        "env": [{"name": "GREETING", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "greeting"}}},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "envFrom": [{"secretRef": {"name": "creds"}, "prefix": "SECRET_"}],
        "volumeMounts": [{"name": "settings", "mountPath": "/etc/app"},
                         {"name": "creds", "mountPath": "/var/run/creds"},
                         {"name": "info", "mountPath": "/info"}, {"name": "scratch", "mountPath": "/scratch"}]},
        volumes=[{"name": "settings", "configMap": {"name": "settings"}},
                 {"name": "creds", "secret": {"secretName": "creds"}},
                 {"name": "info", "downwardAPI": {"items": [{"path": "labels",
                                                             "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                 {"name": "scratch", "emptyDir": {}}])
    spec["metadata"]["labels"] = {"app": "web"}
    create(cluster, namespace, "pods", spec)

    done = phase_reached(cluster, namespace, "web", "Succeeded", "Failed")

    assert done["status"]["phase"] == "Succeeded", state_of(done)
    assert state_of(done)["terminated"]["exitCode"] == 0
    assert state_of(done)["terminated"]["reason"] == "Completed"
    assert kubectl(kubeconfig, "logs", "web", "-n", namespace) == (
        "hello from web in /srv/work as s3cret\nlevel=debug\ns3cret\napp=\"web\"\nscratch\n")
    assert not Path("/srv/work").exists()  # made in the container's own root, not on the host


def test_the_host_is_read_only_to_a_container_but_through_its_volumes(cluster: Cluster, kubeconfig: str,
                                                                      namespace: str, tmp_path: Path) -> None:
    host_file = Path(sys.executable).parent / f"kplan-test-{uuid.uuid4().hex}"  # outside /tmp: the venv's own
    host_file.write_text("untouched\n")
    script = (f"{{ echo changed > {host_file}; }} 2>/dev/null || echo refused; echo mine > /tmp/own; cat /tmp/own; "
              "echo through the volume > /host/written; ls /tmp")
    create(cluster, namespace, "pods", pod("writer", script, volumes=[{"name": "host", "hostPath": {
        "path": str(tmp_path)}}], container={"volumeMounts": [{"name": "host", "mountPath": "/host"}]}))
    try:
        phase_reached(cluster, namespace, "writer", "Succeeded")
        kept = host_file.read_text()
    finally:
        host_file.unlink()

    assert kubectl(kubeconfig, "logs", "writer", "-n", namespace) == "refused\nmine\nown\n"
    assert kept == "untouched\n"
    assert (tmp_path / "written").read_text() == "through the volume\n"
    assert not Path("/tmp/own").exists()


def test_the_termination_message_is_what_the_container_wrote(cluster: Cluster, namespace: str) -> None:
    create(cluster, namespace, "pods", pod("writer", "python3 -c 'print(6 * 7)' > /dev/termination-log"))
    create(cluster, namespace, "pods", pod("elsewhere", "echo done > /tmp/kplan-result/message", container={
        "terminationMessagePath": "/tmp/kplan-result/message"}))
    create(cluster, namespace, "pods", pod("fallback", "echo first; echo last words; exit 3", container={
        "terminationMessagePolicy": "FallbackToLogsOnError"}))

    writer = phase_reached(cluster, namespace, "writer", "Succeeded", "Failed")
    elsewhere = phase_reached(cluster, namespace, "elsewhere", "Succeeded", "Failed")
    fallback = phase_reached(cluster, namespace, "fallback", "Succeeded", "Failed")

    assert state_of(writer)["terminated"]["message"] == "42\n"
    assert state_of(elsewhere)["terminated"]["message"] == "done\n"
    assert fallback["status"]["phase"] == "Failed"
    ended = state_of(fallback)["terminated"]
    assert (ended["exitCode"], ended["reason"], ended["message"]) == (3, "Error", "first\nlast words")


def test_a_missing_command_fails_the_pod_with_the_kubelets_reason(cluster: Cluster, namespace: str) -> None:
    create(cluster, namespace, "pods", pod("missing", "", container={"command": ["kplan-no-such-tool", "--version"]}))

    failed = phase_reached(cluster, namespace, "missing", "Succeeded", "Failed")

    assert failed["status"]["phase"] == "Failed"
    ended = state_of(failed)["terminated"]
    assert (ended["exitCode"], ended["reason"], ended["startedAt"]) == (128, "StartError", "1970-01-01T00:00:00Z")
    assert 'exec: "kplan-no-such-tool": executable file not found in $PATH' in ended["message"]


def test_a_container_whose_config_does_not_resolve_waits_until_it_does(cluster: Cluster, kubeconfig: str,
                                                                      namespace: str) -> None:
    create(cluster, namespace, "pods", pod("early", "echo $LEVEL", container={"env": [
        {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "later", "key": "level"}}}]}))

    def waiting() -> JsonDict | None:
        state = (read_pod(cluster, namespace, "early").get("status") or {}).get("containerStatuses") or [{}]
        return (state[0].get("state") or {}).get("waiting")

    assert wait_for(cluster, waiting, WAIT) == {"reason": "CreateContainerConfigError",
                                                "message": 'configmap "later" not found'}
    refused = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "logs", "early", "-n", namespace],
                             capture_output=True, text=True, timeout=WAIT, check=False)
    assert refused.returncode == 1
    assert 'container "main" in pod "early" is waiting to start: CreateContainerConfigError' in refused.stderr

    create(cluster, namespace, "configmaps", {"metadata": {"name": "later"}, "data": {"level": "debug"}})

    phase_reached(cluster, namespace, "early", "Succeeded")
    assert kubectl(kubeconfig, "logs", "early", "-n", namespace) == "debug\n"


def test_a_claim_is_one_directory_shared_by_the_pods_that_mount_it(cluster: Cluster, kubeconfig: str,
                                                                   namespace: str) -> None:
    create(cluster, namespace, "persistentvolumeclaims", {"metadata": {"name": "shared"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    claim = {"name": "data", "persistentVolumeClaim": {"claimName": "shared"}}
    mount = {"volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    create(cluster, namespace, "pods", pod("producer", "echo produced > /data/result", container=mount,
                                           volumes=[claim]))
    phase_reached(cluster, namespace, "producer", "Succeeded")
    create(cluster, namespace, "pods", pod("consumer", "cat /data/result", container=mount, volumes=[claim]))

    phase_reached(cluster, namespace, "consumer", "Succeeded")
    assert kubectl(kubeconfig, "logs", "consumer", "-n", namespace) == "produced\n"


def test_restart_policy_on_failure_runs_the_container_again(cluster: Cluster, kubeconfig: str,
                                                            namespace: str) -> None:
    script = "if [ -e /state/tried ]; then echo second; else touch /state/tried; echo first; exit 1; fi"
    create(cluster, namespace, "pods", pod("flaky", script, restartPolicy="OnFailure", volumes=[
        {"name": "state", "emptyDir": {}}], container={"volumeMounts": [{"name": "state", "mountPath": "/state"}]}))

    done = phase_reached(cluster, namespace, "flaky", "Succeeded", "Failed")

    assert done["status"]["phase"] == "Succeeded"
    status = done["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert kubectl(kubeconfig, "logs", "flaky", "-n", namespace) == "second\n"
    assert kubectl(kubeconfig, "logs", "flaky", "-n", namespace, "--previous") == "first\n"


def test_kubectl_logs_follow_streams_until_the_container_ends(cluster: Cluster, kubeconfig: str,
                                                              namespace: str, tmp_path: Path) -> None:
    create(cluster, namespace, "pods", pod("talker", "echo before; while [ ! -e /gate/open ]; do sleep 0.1; done; "
                                                     "echo after", volumes=[{"name": "gate", "hostPath": {
                                                         "path": str(tmp_path)}}],
                                           container={"volumeMounts": [{"name": "gate", "mountPath": "/gate"}]}))
    phase_reached(cluster, namespace, "talker", "Running")
    follower = subprocess.Popen([KUBECTL, "--kubeconfig", kubeconfig, "logs", "-f", "talker", "-n", namespace],
                                stdout=subprocess.PIPE, text=True)
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline() == "before\n"
        (tmp_path / "open").touch()
        assert follower.stdout.readline() == "after\n"
        assert follower.wait(WAIT) == 0
    finally:
        follower.kill()
        follower.wait()


def test_deleting_a_pod_kills_its_process_group(cluster: Cluster, kubeconfig: str, namespace: str) -> None:
    marker = f"KPLAN_TEST_MARKER_{uuid.uuid4().hex}"
    create(cluster, namespace, "pods", pod("sleeper", "sleep 300 & sleep 300 & echo forked; wait", container={
        "env": [{"name": marker, "value": "1"}]}))
    followed_until(cluster, namespace, "sleeper", "forked")
    wait_for(cluster, lambda: len(processes_with(marker)) == 3, WAIT)  # sh and its two sleeps (once exec'd)

    kubectl(kubeconfig, "delete", "pod", "sleeper", "-n", namespace, "--timeout=30s")

    assert read_pod(cluster, namespace, "sleeper") == {}
    assert processes_with(marker) == []


def test_deleting_a_job_kills_its_pods_processes(cluster: Cluster, kubeconfig: str, namespace: str) -> None:
    marker = f"KPLAN_TEST_MARKER_{uuid.uuid4().hex}"
    template = pod("", "echo started; sleep 300", container={"env": [{"name": marker, "value": "1"}]})
    code, body = cluster.request("POST", f"/apis/batch/v1/namespaces/{namespace}/jobs", body={
        "metadata": {"name": "long"}, "spec": {"backoffLimit": 0, "template": {"spec": template["spec"]}}})
    assert code == 201, body

    def job_pod() -> str:
        code, pods = cluster.request("GET", f"/api/v1/namespaces/{namespace}/pods",
                                     query={"labelSelector": "batch.kubernetes.io/job-name=long"})
        return str(pods["items"][0]["metadata"]["name"]) if code == 200 and pods.get("items") else ""

    with following(cluster, namespace, wait_for(cluster, job_pod, WAIT)) as stream:
        read_until(stream, "started")
        assert processes_with(marker)

        kubectl(kubeconfig, "delete", "job", "long", "-n", namespace, "--cascade=foreground", "--timeout=30s")

        assert job_pod() == ""
        assert stream.read() == b""  # the run ended: its processes are gone (a pod deleted at once, without a
        # grace period, loses its processes just after, as with a real kubelet)
    assert processes_with(marker) == []


def test_restart_policy_always_starts_a_container_again_when_it_ends(cluster: Cluster, namespace: str) -> None:
    create(cluster, namespace, "pods", pod("looping", "echo round", restartPolicy="Always"))

    def restarted() -> JsonDict | None:
        statuses = (read_pod(cluster, namespace, "looping").get("status") or {}).get("containerStatuses") or [{}]
        return statuses[0] if statuses[0].get("restartCount", 0) >= 1 else None

    status = wait_for(cluster, restarted, WAIT)
    assert status["lastState"]["terminated"]["exitCode"] == 0
    assert read_pod(cluster, namespace, "looping")["status"]["phase"] == "Running"


def test_a_deleted_pod_gets_sigterm_before_it_is_killed(cluster: Cluster, kubeconfig: str,
                                                        namespace: str) -> None:
    script = "trap 'echo terminating; exit 0' TERM; echo ready; while true; do sleep 0.1; done"
    create(cluster, namespace, "pods", pod("graceful", script))
    with following(cluster, namespace, "graceful") as stream:
        assert stream.readline() == b"ready\n"
        kubectl(kubeconfig, "delete", "pod", "graceful", "-n", namespace, "--wait=false")
        assert stream.readline() == b"terminating\n"
        assert stream.readline() == b""  # the run ended: the stream too


def test_a_pod_past_its_active_deadline_is_killed_and_fails(cluster: Cluster, namespace: str) -> None:
    create(cluster, namespace, "pods", pod("slow", "sleep 300", activeDeadlineSeconds=1))

    failed = phase_reached(cluster, namespace, "slow", "Succeeded", "Failed")

    assert failed["status"]["phase"] == "Failed"
    assert failed["status"]["reason"] == "DeadlineExceeded"
    assert state_of(failed)["terminated"]["reason"] == "DeadlineExceeded"


def test_output_is_bounded_and_no_process_outlives_the_cluster(tmp_path: Path) -> None:
    marker = f"KPLAN_TEST_MARKER_{uuid.uuid4().hex}"
    cluster = DevCluster(simulate=True, nodes=["node1"], runtime="process",
                         runtime_limits=Limits(max_log_bytes=1000)).start()
    try:
        create(cluster, "default", "pods", pod("chatty", "yes kplan | head -c 100000; sleep 300", container={
            "env": [{"name": marker, "value": "1"}]}))
        followed = followed_until(cluster, "default", "chatty", "dropped")
        log = str(cluster.request("GET", "/api/v1/namespaces/default/pods/chatty/log")[1].get("text"))
        assert processes_with(marker)  # sh, or sh and its sleep
    finally:
        cluster.stop()

    assert "".join(followed) == log
    assert log.startswith("kplan\nkplan\n")
    assert log.endswith("[kplan process runtime: output beyond 1000 bytes was dropped]\n")
    assert len(log) < 1100
    assert processes_with(marker) == []


def test_kplan_devcluster_runtime_process_runs_pods_until_it_is_stopped(tmp_path: Path) -> None:
    marker = f"KPLAN_TEST_MARKER_{uuid.uuid4().hex}"
    kubeconfig = str(tmp_path / "kc.yaml")
    manifest = tmp_path / "pods.yaml"
    manifest.write_text("\n---\n".join(json.dumps({"apiVersion": "v1", "kind": "Pod", **p}) for p in [
        pod("hello", "echo hello from $HOSTNAME"),
        pod("server", "echo serving; sleep 300", container={"env": [{"name": marker, "value": "1"}]})]))
    with served_by_the_cli(tmp_path, "--runtime", "process"):
        kubectl(kubeconfig, "apply", "-f", str(manifest))
        kubectl(kubeconfig, "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/hello", "--timeout=30s")
        kubectl(kubeconfig, "wait", "--for=condition=Ready", "pod/server", "--timeout=30s")
        assert kubectl(kubeconfig, "logs", "hello") == "hello from hello\n"
        assert processes_with(marker)

    assert processes_with(marker) == []


def test_devcluster_help_says_no_image_is_pulled() -> None:
    done = subprocess.run([sys.executable, "-m", "engine.cli.main", "devcluster", "--help"], capture_output=True,
                          text=True, timeout=WAIT, check=False)
    assert done.returncode == 0
    assert "no image is pulled, the host's tools run" in " ".join(done.stdout.split())


def test_the_process_runtime_needs_the_simulators(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "engine.cli.main", "devcluster", "--runtime", "process",
                           "--no-simulate", "--kubeconfig", str(tmp_path / "kc")], capture_output=True, text=True,
                          timeout=WAIT, check=False)
    assert done.returncode == 2
    assert done.stderr == ("error: --runtime process needs the simulators (the kubelet runs the processes); "
                           "drop --no-simulate\n")


def test_a_host_without_unshare_runs_what_needs_no_mount_and_says_what_is_missing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # a host without util-linux's unshare
    with DevCluster(simulate=True, nodes=["node1"], runtime="process") as bare:
        assert bare.runtime_problem == (
            "util-linux `unshare` is not on PATH, so containers that mount volumes cannot start (they wait with "
            "CreateContainerError) and no container gets a termination message file")
        create(bare, "default", "pods", pod("plain", "echo plain", container={"command": ["/bin/sh", "-c"],
                                                                               "args": ["echo plain"]}))
        create(bare, "default", "pods", pod("mounting", "true", volumes=[{"name": "v", "emptyDir": {}}],
                                            container={"volumeMounts": [{"name": "v", "mountPath": "/v"}]}))

        phase_reached(bare, "default", "plain", "Succeeded")
        assert bare.request("GET", "/api/v1/namespaces/default/pods/plain/log")[1] == {"text": "plain\n"}

        def waiting() -> JsonDict | None:
            statuses = (read_pod(bare, "default", "mounting").get("status") or {}).get("containerStatuses") or [{}]
            return (statuses[0].get("state") or {}).get("waiting")

        assert wait_for(bare, waiting, WAIT) == {"reason": "CreateContainerError", "message": bare.runtime_problem}
