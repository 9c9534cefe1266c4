"""`python -m engine.demo` (what `make demo` runs) takes the ML workflow to COMPLETE on each backend; on the real
one its Jobs are completed by the real Job controller, and kubectl shows them Complete."""

from __future__ import annotations

import re
import subprocess
import sys

TIMEOUT = 300


def test_the_demo_runs_the_ml_workflow_to_complete(backend: str) -> None:
    done = subprocess.run([sys.executable, "-m", "engine.demo", "--backend", backend], capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Plan deploy (serial strategy) [COMPLETE]" in done.stdout
    assert re.search(r"instance\.kplan\.dev/ml\s+ml-workflow\s+ml-workflow-0\.2\.0\s+deploy\s+COMPLETE", done.stdout)
    jobs = re.findall(r"job\.batch/ml-(process-data|train-model|evaluate-model)-\S+\s+Complete\s+1/1", done.stdout)
    assert sorted(jobs) == ["evaluate-model", "process-data", "train-model"], done.stdout
