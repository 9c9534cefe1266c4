"""`python -m engine.demo --backend real` takes the ML workflow to COMPLETE on the real control plane, its Jobs
completed by the real Job controller, and kubectl shows them Complete.

Real backend only: `make demo` on the dev backend is test_make_demo_runs_the_workflow_to_complete (in
test_operators_ml_workflow.py), which also checks what the dev backend's process runtime prints.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

TIMEOUT = 300

pytestmark = pytest.mark.real_only("the dev backend's demo has its own test (see the module docstring)")


def test_the_demo_runs_the_ml_workflow_to_complete(backend: str) -> None:
    done = subprocess.run([sys.executable, "-m", "engine.demo", "--backend", backend], capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Plan deploy (serial strategy) [COMPLETE]" in done.stdout
    assert re.search(r"instance\.kplan\.dev/ml\s+ml-workflow\s+ml-workflow-0\.2\.0\s+deploy\s+COMPLETE", done.stdout)
    jobs = re.findall(r"job\.batch/ml-(process-data|train-model|evaluate-model)-\S+\s+Complete\s+1/1", done.stdout)
    assert sorted(jobs) == ["evaluate-model", "process-data", "train-model"], done.stdout
