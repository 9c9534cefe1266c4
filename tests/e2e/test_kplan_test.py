"""`kplan test` end to end, as a user runs it: a package whose tests pass but one case that fails on purpose
(field-level differences, exit 1, JUnit that parses), a chosen case, JUnit on stdout, tests run against a
cluster where a manager already runs, and clear errors for unusable tests."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from engine.kube import connect
from engine.testing import LocalCluster, Node

KPLAN = str(Path(sys.executable).with_name("kplan"))
SAMPLE = Path(__file__).parent.parent / "fixtures" / "packages" / "kplan-test-sample"
TIMEOUT = 120


def kplan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KPLAN, *args], capture_output=True, text=True, timeout=TIMEOUT, check=False)


def test_a_failing_case_shows_the_field_level_difference_and_exits_1(backend: str, tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"

    done = kplan("test", str(SAMPLE), "--junit-file", str(junit), "--backend", backend)

    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert [line.rsplit(" (", 1)[0] for line in lines if line.startswith("--- ")] == [
        "--- PASS: applies-objects", "--- PASS: greets", "--- PASS: refuses-immutable", "--- FAIL: wrong-greeting",
    ]
    assert "        tests/wrong-greeting/00-assert.yaml#1: ConfigMap sample-config in namespace wrong-greeting-" \
           in done.stdout
    assert '          data.greeting: expected "goodbye", got "hello"' in lines
    assert not any("size" in line for line in lines)  # fields that match are not listed
    assert lines[-1].startswith("3 passed, 1 failed (sample, ")

    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("4", "1")
    failures = {case.get("name"): case.find("failure") for case in suite.findall("testcase")}
    assert [name for name, failure in failures.items() if failure is not None] == ["wrong-greeting"]
    text = failures["wrong-greeting"].text or ""  # type: ignore[union-attr]
    assert 'data.greeting: expected "goodbye", got "hello"' in text


def test_only_the_chosen_case_runs(backend: str) -> None:
    done = kplan("test", str(SAMPLE), "--case", "greets", "--backend", backend)

    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split(" (")[0] for line in done.stdout.splitlines() if line.startswith(("=== RUN", "    "))] == [
        "=== RUN   greets", "    00-install: ok", "    01-update: ok"]
    assert done.stdout.splitlines()[-1].startswith("1 passed, 0 failed")


def test_junit_on_stdout_keeps_the_progress_on_stderr(backend: str) -> None:
    done = kplan("test", str(SAMPLE), "--case", "applies-objects", "-o", "junit", "--backend", backend)

    assert done.returncode == 0, done.stderr
    root = ET.fromstring(done.stdout)
    assert [c.get("name") for c in root.iter("testcase")] == ["applies-objects"]
    assert "--- PASS: applies-objects" in done.stderr


def test_against_a_cluster_where_a_manager_runs_the_case_namespace_is_removed(backend: str, tmp_path: Path) -> None:
    with LocalCluster([Node("worker", {"pool": "main"})], tmp_path, backend=backend) as local:
        done = kplan("test", str(SAMPLE), "--case", "greets", "--kubeconfig", str(local.kubeconfig))

        assert done.returncode == 0, done.stdout + done.stderr
        namespace = re.search(r"=== RUN   greets \(namespace (greets-[0-9a-f]{6})\)", done.stdout)
        assert namespace is not None, done.stdout
        with connect(str(local.kubeconfig)) as kube:
            left = kube.get("v1", "Namespace", namespace.group(1))
        assert left is None or left["metadata"].get("deletionTimestamp")


def test_a_command_that_fails_fails_its_step_with_the_commands_output(backend: str, tmp_path: Path) -> None:
    package = tmp_path / "sample"
    shutil.copytree(SAMPLE, package)
    shutil.rmtree(package / "tests" / "wrong-greeting")
    (package / "tests" / "greets" / "02-upgrade.yaml").write_text(
        "apiVersion: kplan.dev/v1alpha1\nkind: TestStep\ncommands:\n  - upgrade: {package: ../nowhere}\n")

    done = kplan("test", str(package), "--case", "greets", "--backend", backend)

    assert done.returncode == 1
    assert "    02-upgrade: FAIL" in done.stdout
    assert "tests/greets/02-upgrade.yaml#1: commands[0]: upgrade failed (exit 1):" in done.stdout
    assert "error: no package at" in done.stdout


def test_unusable_tests_and_formats_are_refused_in_one_sentence(backend: str, tmp_path: Path) -> None:
    package = tmp_path / "sample"
    shutil.copytree(SAMPLE, package)
    (package / "tests" / "greets" / "02-bad.yaml").write_text("kind: TestStep\ncommands: [{instal: {}}]\n")

    refused = kplan("test", str(package), "--backend", backend)
    wrong_format = kplan("test", str(SAMPLE), "-o", "yaml", "--backend", backend)

    assert refused.returncode == 1
    assert refused.stderr.startswith("error: the package tests are not valid: tests/greets/02-bad.yaml#1: "
                                     "commands[0]: must be one of install")
    assert "Traceback" not in refused.stderr
    assert wrong_format.returncode == 2
    assert wrong_format.stderr == "error: test does not take -o yaml (it prints text, junit)\n"


def test_a_new_package_comes_with_an_install_test_that_passes(backend: str, tmp_path: Path) -> None:
    assert kplan("package", "new", "my-app", "-d", str(tmp_path)).returncode == 0

    done = kplan("test", str(tmp_path / "my-app"), "--backend", backend)

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("1 passed, 0 failed (my-app, ")


def test_a_cluster_without_the_nodes_the_tests_need_is_told_how_to_get_them(backend: str, tmp_path: Path) -> None:
    with LocalCluster([Node("elsewhere")], tmp_path, backend=backend) as local:
        done = kplan("test", str(SAMPLE), "--case", "greets", "--kubeconfig", str(local.kubeconfig))

    assert done.returncode == 1
    assert ("the case could not start: the tests need the nodes 'worker', which the cluster does not have; run them "
            "without --kubeconfig (on a dev cluster of their own), or start one that has every node they need: "
            "kplan devcluster --nodes worker") in done.stdout
