"""`kplan devcluster` as a newcomer starts it: its default nodes, `--manager`, `kplan init` and `kplan test` on it,
a clean stop.

The default nodes are node-1..3, each labelled `node.kplan.dev/name`, so hello-world's two-node workflow and
the shipped packages' tests (which name node-1..3) run on it unchanged; `--manager` runs a manager in the same
process, since the manager Deployment `kplan init` creates cannot run on simulated nodes (init says so).
The shipped packages' tests run against it as they are. Nothing but its own lines reach its log: no traceback,
no warning while test namespaces are deleted, none at the stop.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_harness import KUBECTL, Cli

KPLAN = str(Path(sys.executable).with_name("kplan"))
OPERATORS = Path(__file__).parent.parent.parent / "operators"
WAIT = 30.0


@dataclass
class Started:
    process: subprocess.Popen[str]
    kubeconfig: Path
    lines: list[str]
    log: Path

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(WAIT)


def started(tmp_path: Path, *args: str) -> Iterator[Started]:
    """`kplan devcluster ARGS`, once it printed where it listens (and that its manager runs); killed afterwards if
    the test did not stop it."""
    kubeconfig, log = tmp_path / "kubeconfig", tmp_path / "devcluster.log"
    with log.open("w") as err:
        process = subprocess.Popen([KPLAN, "devcluster", "--port", "0", "--kubeconfig", str(kubeconfig), *args],
                                   stdout=subprocess.PIPE, stderr=err, text=True)
    assert process.stdout is not None
    stdout = process.stdout
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in stdout], daemon=True).start()
    seen: list[str] = []
    expected = 3 if "--manager" in args else 2
    try:
        while len(seen) < expected:
            seen.append(lines.get(timeout=WAIT).strip())
        yield Started(process, kubeconfig, seen, log)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(WAIT)
        stdout.close()


@pytest.fixture
def devcluster_with_manager(backend: str, tmp_path: Path) -> Iterator[Started]:
    yield from started(tmp_path, "--backend", backend, "--manager")


def test_the_default_nodes_are_labelled_and_the_manager_runs_in_process(devcluster_with_manager: Started) -> None:
    dev = devcluster_with_manager
    assert dev.lines[1] == f"export KUBECONFIG={dev.kubeconfig}"
    assert dev.lines[2].startswith("kplan manager running in this process")
    cli = Cli(dev.kubeconfig, "default")
    nodes = cli.run([KUBECTL, "get", "nodes", "-L", "node.kplan.dev/name", "--no-headers"], None).out.splitlines()
    assert [(line.split()[0], line.split()[-1]) for line in nodes] == [
        ("node-1", "node-1"), ("node-2", "node-2"), ("node-3", "node-3")]

    init = cli.ok("init")
    assert "the manager's pod will show Running but no container runs" in init.out
    assert "`kplan manager`" in init.out and "`kplan devcluster --manager`" in init.out

    # hello-world with its defaults: the print step on node-1, the execute step on node-2.
    installed = cli.ok("install", str(OPERATORS / "hello-world"), "--instance", "hello",
                       "-p", "variables={greeting: Hi there}", "--wait", "--timeout", "60s")
    assert "parameters: variables={greeting: Hi there}" in installed.out
    assert "plan deploy: COMPLETE" in installed.out
    pods = cli.kubectl("get", "pods", "-o", "custom-columns=STEP:.metadata.labels.workflow\\.kplan\\.dev/step,"
                       "NODE:.spec.nodeName", "--no-headers").out.split()
    assert dict(zip(pods[::2], pods[1::2], strict=True)) == {"print": "node-1", "environment": "node-1",
                                                             "execute": "node-2"}

    # A shipped package's tests (nodes node-1..3) against it; their namespaces are deleted afterwards.
    tested = cli.run([KPLAN, "test", str(OPERATORS / "redis"), "--kubeconfig", str(dev.kubeconfig)], None)
    assert tested.code == 0, tested.text

    assert dev.stop() == 0
    log = dev.log.read_text()
    assert log == "dev cluster stopped\n", log  # no warning while namespaces went, nor at the stop


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_that_is_not_a_port_number_is_a_usage_error(port: str, tmp_path: Path) -> None:
    cli = Cli(tmp_path / "unused-kubeconfig", "default")

    result = cli("devcluster", "--port", port, "--kubeconfig", str(tmp_path / "dev.yaml"), namespaced=False)

    assert result.code == 2, result.text
    [error] = [line for line in result.err.splitlines() if "error:" in line]
    assert error.endswith(f"argument --port: '{port}' is not a port number from 0 to 65535"), result.err
    assert "OverflowError" not in result.text
    assert not (tmp_path / "dev.yaml").exists()
