"""`kplan test` of a package without `tests/kplan-test.yaml`: its cluster has the dev cluster's default nodes,
so pods are scheduled; an Instance that is not where an assert expects it is explained by the message of the
step its plan waits on."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

KPLAN = str(Path(sys.executable).with_name("kplan"))
SAMPLE = Path(__file__).parent.parent / "fixtures" / "packages" / "kplan-test-sample"
TIMEOUT = 120


def kplan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KPLAN, *args], capture_output=True, text=True, timeout=TIMEOUT, check=False)


def without_suite_file(tmp_path: Path, *, node_selector: bool) -> Path:
    """The sample package without tests/kplan-test.yaml (so no nodes named), its Job pinned to pool=main or not."""
    package = tmp_path / "sample"
    shutil.copytree(SAMPLE, package)
    (package / "tests" / "kplan-test.yaml").unlink()
    if not node_selector:
        job = package / "templates" / "job.yaml"
        job.write_text(job.read_text().replace("      nodeSelector: {pool: main}\n", ""))
    return package


def test_without_a_suite_file_the_cluster_has_the_default_nodes_and_pods_run(backend: str, tmp_path: Path) -> None:
    package = without_suite_file(tmp_path, node_selector=False)

    done = kplan("test", str(package), "--case", "greets", "--backend", backend)

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("1 passed, 0 failed")


def test_an_instance_short_of_an_assert_names_the_step_it_waits_on_and_why(backend: str, tmp_path: Path) -> None:
    package = without_suite_file(tmp_path, node_selector=True)  # no default node is labelled pool=main
    install = package / "tests" / "greets" / "00-install.yaml"
    install.write_text(install.read_text() + "timeout: 5s\n")

    done = kplan("test", str(package), "--case", "greets", "--backend", backend)

    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert 'status.plans.deploy.status: expected "COMPLETE", got "IN_PROGRESS"' in lines
    [note] = [line for line in lines if line.startswith("step deploy/main/job is IN_PROGRESS: ")]
    assert "/sample-job: 0/1 succeeded" in note, note  # with the scheduler's reason, once it has given one
