"""The benchmarks `make bench` runs (and bench/profile.py), each at a tiny size: every script ends with exit 0 and
prints one JSON object holding the figures bench/README.md reports from it, on each backend it runs on. The
figures' values are not judged (speed lives in bench/, not in tests; an overhead net of overlapping times may be
negative), only that each is measured and is a number."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 280.0  # seconds a tiny run may take on a loaded machine

# script and its tiny options -> the figures (paths of keys into the printed object) it must print
RUNS: dict[str, tuple[list[str], list[str]]] = {
    "plan": (["--backend", "both", "--steps", "2"], [
        f"{backend}.{scenario}_2.{figure}" for backend in ("dev", "real") for scenario in ("chain_of", "parallel")
        for figure in ("wall_seconds", "api_round_trips", "simulator_latency_ms_per_step",
                       "engine_overhead_per_step_excluding_simulator_ms", "until_first_job_ms",
                       "engine_overhead_per_step_excluding_simulator_after_first_job_ms",
                       "api_requests_per_applied_object.apply", "cluster_process_cpu_ms_per_step",
                       "manager_workers_cpu_ms_per_step", "manager_workers_cpu_outside_requests_ms_per_step")]),
    "plan-thread": (["--backend", "dev", "--steps", "2", "--cluster", "thread"], [
        f"dev.{scenario}_2.{figure}" for scenario in ("chain_of", "parallel")
        for figure in ("wall_seconds", "simulator_latency_ms_per_step",
                       "engine_overhead_per_step_excluding_simulator_ms")]),
    "render": (["--budget", "0.02", "--repeats", "1"], [
        f"render_template.{size}.renders_per_second_cached" for size in ("small", "large")] + [
        "render_plan.ml-workflow.deploy.renders_per_second_cached", "kplan_version_command_seconds_median",
        "package_verify.ml-workflow.command_seconds_median"]),
    "kube_client": (["--count", "10", "--pods", "20"], [
        *(f"requests.{verb}.cpu_ms" for verb in ("get", "create", "apply", "merge_patch", "list_10", "status_update")),
        "job_pods.cpu_ms", "watch.informer_cpu_ms_per_event", "watch.queued_to_worker_ms.p90"]),
    "instances": (["--instances", "6", "--backend", "dev"], [
        f"dev.{figure}" for figure in ("instances_per_second", "time_to_complete_seconds.p99",
                                       "api_writes_per_instance", "manager_threads_cpu_ms_per_instance",
                                       "manager_side_max_rss_mib.after", "cluster_process.cpu_seconds",
                                       "cluster_serving_cpu_ms_per_instance",
                                       "until_idle.manager_threads_cpu_ms_per_instance",
                                       "until_idle.api_writes_per_instance")]),
    "instances-real": (["--instances", "2", "--backend", "real"], [
        f"real.{figure}" for figure in ("instances_per_second", "api_writes_per_instance",
                                        "manager_threads_cpu_ms_per_instance", "cluster_process.cpu_seconds",
                                        "until_idle.api_writes_per_instance")]),
    "restart": (["--instances", "6", "--waiting", "2"], [
        "dev.seconds_until_ready", "dev.seconds_until_all_waiting_complete", "dev.passes_until_then"]),
    "run_vs_kubectl": (["--steps", "1", "--repeats", "1"], [
        "kplan_run.wall_seconds_median", "kubectl_script.wall_seconds_median", "kplan_run_over_kubectl_script"]),
    "run_vs_kubectl-real": (["--steps", "1", "--repeats", "1", "--backend", "real"], [
        "kplan_run_over_kubectl_script"]),
    "vs_helm": (["--repeats", "1"], [
        f"{side}.{figure}" for side in ("helm_install_wait", "kplan_install_wait", "kplan_run")
        for figure in ("wall_seconds_median", "api_requests_total", "cpu_seconds_median")] + [
        "kplan_install_wait_over_helm", "kplan_run_over_helm", "start_up_seconds_median.kplan_run_help",
        "after_start_up_seconds_median.kplan_run"]),
    "vs_helm-real": (["--repeats", "1", "--backend", "real"], ["kplan_install_wait_over_helm", "kplan_run_over_helm"]),
    "process_runtime": (["--pods", "2"], ["without_volume.one_at_a_time.p50_ms", "ml_workflow_deploy_s"]),
    "devcluster": ([], ["ssa_apply_configmap_create_rps", "watch_latency_ms_p99", "list_1000_ms_p50",
                        "job_status_write_cpu_ms", "instance_status_write_cpu_ms_50_steps"]),
    "cel_rules": ([], ["rule_evaluations_per_s", "cr_creates_per_s_with_rules"]),
    "profile": (["--gil", "plan.py", "--backend", "dev", "--steps", "2"], ["samples", "roles.main.share"]),
    "profile-subprocesses": (["--gil", "--subprocesses", "instances.py", "--instances", "6", "--backend", "dev"],
                             ["roles.main.share", "roles.child process: main.share"]),
    "yaml_loaders": ([], [f"documents_per_second.large.yaml.{side}" for side in ("kplan parse_objects", "yaml_rs")]),
}


def figure(printed: dict[str, Any], path: str) -> Any:
    """The value at a dotted path; keys may hold dots themselves (`large.yaml`), so the longest key wins."""
    value: Any = printed
    rest = path
    while rest:
        key = next((k for k in sorted(value, key=len, reverse=True) if rest == k or rest.startswith(k + ".")),
                   None) if isinstance(value, dict) else None
        if key is None:
            raise AssertionError(f"{path}: no {rest!r} in {sorted(value) if isinstance(value, dict) else value!r}")
        value, rest = value[key], rest[len(key) + 1:]
    return value


@pytest.mark.parametrize("run", sorted(RUNS))
def test_bench_script_prints_its_figures(run: str) -> None:
    options, figures = RUNS[run]
    script = ROOT / "bench" / f"{run.split('-')[0]}.py"
    done = subprocess.run([sys.executable, str(script), *options], capture_output=True, text=True, cwd=ROOT,
                          timeout=TIMEOUT, check=False, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, f"{script.name} {' '.join(options)} failed:\n{done.stderr[-4000:]}"
    printed = json.loads(done.stdout)
    for path in figures:
        value = figure(printed, path)
        assert isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value), \
            f"{path} is {value!r}"
