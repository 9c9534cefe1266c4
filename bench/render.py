"""Template rendering speed and package verification time; prints one JSON object.

Figures: `engine.render.render_template` renders per second of a small template (a ConfigMap of a few values) and a
large one (a Deployment and ConfigMap built by loops over 40 settings); `engine.render.render_plan` renders per
second, and templates per second, of every plan of every package under operators/ with its default parameters
(a required parameter without a default takes the value the package's own install test gives it) —
each without a cache (every template compiled again on each render) and with one `CompiledTemplates` cache
reused across renders; for the two templates also with a `RenderedTemplates` memo (what the planner does: a
render with the same values is a lookup and a copy), each also per second of the process's CPU time. Then
`kplan package verify` per shipped package: the median time of `engine.package.verify.verify` in this process,
and of the command in a new process (which includes starting Python and importing kplan: `kplan version`
measures that alone). Each figure is bounded by a count and a time budget.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from _common import machine

from engine import params, render
from engine.cli.template import placeholder_pipes
from engine.errors import KplanError
from engine.model import Package
from engine.package import loader, verify

ROOT = Path(__file__).resolve().parent.parent
OPERATORS = ROOT / "operators"
KPLAN = Path(sys.executable).with_name("kplan")
MAX_RENDERS = 20000
SETTINGS = 40  # entries the large template loops over

SMALL = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ Name }}-config
data:
  greeting: {{ Params.greeting | quote }}
  replicas: "{{ Params.replicas }}"
"""

LARGE = """{%- set app = Name ~ "-web" %}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ app }}-settings
  labels:
    app.kubernetes.io/name: {{ app }}
    app.kubernetes.io/version: {{ AppVersion | quote }}
data:
{%- for key, value in Params.settings | dictsort %}
  {{ key }}: {{ value | string | quote }}
{%- endfor %}
  settings.json: {{ Params.settings | tojson | quote }}
  checksum: {{ Params.settings | tojson | sha256 }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ app }}
  labels:
    app.kubernetes.io/name: {{ app }}
spec:
  replicas: {{ Params.replicas }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ app }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ app }}
      annotations:
        {%- for key in Params.settings | list | sort %}
        settings.example.org/{{ key }}: {{ loop.index | string | quote }}
        {%- endfor %}
    spec:
      {%- if Params.replicas > 1 %}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    app.kubernetes.io/name: {{ app }}
      {%- endif %}
      containers:
        {%- for role in ["web", "sidecar", "metrics"] %}
        - name: {{ role }}
          image: {{ Params.image }}
          args: {{ Params.settings | list | sort | tojson }}
          env:
            {%- for key, value in Params.settings | dictsort %}
            - name: {{ key | upper | replace("-", "_") }}
              valueFrom:
                configMapKeyRef:
                  name: {{ app }}-settings
                  key: {{ key }}
            {%- endfor %}
          ports:
            - containerPort: {{ 8080 + loop.index0 }}
              name: {{ role[:4] }}
          resources:
            requests: {cpu: 100m, memory: {{ (64 * loop.index) ~ "Mi" }}}
        {%- endfor %}
"""


def synthetic_package() -> Package:
    operator = """apiVersion: kplan.dev/v1alpha1
name: render-bench
operatorVersion: 0.1.0
appVersion: "1.0"
tasks:
  - {name: small, kind: Apply, spec: {resources: [small.yaml]}}
  - {name: large, kind: Apply, spec: {resources: [large.yaml]}}
plans:
  deploy:
    phases:
      - name: main
        steps:
          - {name: small, tasks: [small]}
          - {name: large, tasks: [large]}
"""
    parameters = """apiVersion: kplan.dev/v1alpha1
parameters:
  - {name: greeting, default: hello}
  - {name: replicas, type: integer, default: 3}
  - {name: image, default: "nginx:1.27"}
  - {name: settings, type: map}
"""
    files = {"operator.yaml": operator, "params.yaml": parameters, "templates/small.yaml": SMALL,
             "templates/large.yaml": LARGE}
    return loader.from_files(files, "render-bench")


@dataclass(frozen=True)
class Limits:
    budget: float = 1.0  # seconds each rate is measured for
    cli_repeats: int = 3  # runs of each command, for a median
    verify_repeats: int = 20  # in-process verifications of each package, for a median


def per_second(work: Callable[[], object], limits: Limits) -> float:
    """Calls of `work` per second over the budget (at most MAX_RENDERS calls)."""
    return rates(work, limits)[0]


def rates(work: Callable[[], object], limits: Limits) -> tuple[float, float]:
    """Calls of `work` per second of wall time and per second of this process's CPU time, over the budget
    (at most MAX_RENDERS calls). On a loaded machine the wall-time rate follows the CPU share the process gets;
    the CPU-time rate much less."""
    work()  # a first call outside the clock: imports, and the cache's first compile
    start, cpu = time.perf_counter(), time.process_time()
    done = 0
    while done < MAX_RENDERS and time.perf_counter() - start < limits.budget:
        work()
        done += 1
    wall, used = time.perf_counter() - start, time.process_time() - cpu
    return round(done / wall, 1), round(done / max(used, 1e-9), 1)


def template_rates(pkg: Package, file: str, ctx: render.RenderContext, limits: Limits) -> dict[str, Any]:
    objects = render.render_template(pkg, file, ctx)
    cache = render.CompiledTemplates()
    uncached, uncached_cpu = rates(lambda: render.render_template(pkg, file, ctx), limits)
    cached, cached_cpu = rates(lambda: render.render_template(pkg, file, ctx, cache=cache), limits)
    memo = render.RenderedTemplates()
    memoised, memoised_cpu = rates(lambda: render.render_template(pkg, file, ctx, cache=cache, memo=memo), limits)
    output = sum(len(json.dumps(obj)) for obj in objects)
    return {"source_lines": pkg.templates[file].count("\n"), "objects": len(objects), "output_json_bytes": output,
            "renders_per_second_uncached": uncached, "renders_per_second_cached": cached,
            "renders_per_second_memoised": memoised, "renders_per_cpu_second_uncached": uncached_cpu,
            "renders_per_cpu_second_cached": cached_cpu, "renders_per_cpu_second_memoised": memoised_cpu}


def templates_of(pkg: Package, plan: str) -> int:
    """Template files one render of `plan` renders."""
    count = 0
    for phase in pkg.plan(plan).phases:
        for step in phase.steps:
            for task in (pkg.task(name) for name in step.tasks):
                count += len(task.resources) + (1 if task.pod else 0)
    return count


def plan_rate(pkg: Package, plan: str, ctx: render.RenderContext, cache: render.CompiledTemplates | None,
              limits: Limits) -> float:
    return per_second(lambda: render.render_plan(pkg, plan, ctx, cache=cache), limits)


def test_values(folder: Path) -> dict[str, Any]:
    """The parameters the first `install` command of the package's own tests gives (tests/*/NN-*.yaml)."""
    for path in sorted(folder.glob("tests/*/*.yaml")):
        try:
            documents = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError:  # asserts use tags of their own (!regex); install steps do not
            continue
        for document in documents:
            commands = document.get("commands") if isinstance(document, dict) else None
            for command in commands if isinstance(commands, list) else []:
                install = command.get("install") if isinstance(command, dict) else None
                given = install.get("parameters") if isinstance(install, dict) else None
                if isinstance(given, dict):
                    return given
    return {}


def plan_values(pkg: Package, folder: Path) -> dict[str, Any]:
    """Defaults; a required parameter without one takes the value the package's install test gives it."""
    needed = {p.name for p in pkg.parameters if p.required and not p.has_default}
    return params.resolve(pkg, {k: v for k, v in test_values(folder).items() if k in needed} if needed else {})


def plan_rates(folder: Path, limits: Limits) -> dict[str, Any]:
    try:
        pkg = loader.load(str(folder))
        values = plan_values(pkg, folder)
    except KplanError as err:
        return {"skipped": str(err)}
    ctx = render.RenderContext(instance="bench", namespace="default", params=values, pipes=placeholder_pipes(pkg))
    figures: dict[str, Any] = {}
    for plan in sorted(pkg.plans):
        rendered = render.render_plan(pkg, plan, ctx)
        templates = templates_of(pkg, plan)
        uncached = plan_rate(pkg, plan, ctx, None, limits)
        cached = plan_rate(pkg, plan, ctx, render.CompiledTemplates(), limits)
        figures[plan] = {
            "templates": templates,
            "objects": sum(len(objects) for objects in rendered.values()),
            "renders_per_second_uncached": uncached,
            "renders_per_second_cached": cached,
            "templates_per_second_uncached": round(uncached * templates, 1),
            "templates_per_second_cached": round(cached * templates, 1),
        }
    return figures


def median_seconds(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_cli(*args: str) -> None:
    done = subprocess.run([str(KPLAN), *args], capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"kplan {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}")


def verify_times(folder: Path, limits: Limits) -> dict[str, Any]:
    files = loader.read_files(str(folder))
    pkg, problems = verify.verify(files, str(folder))
    in_process = median_seconds(lambda: verify.verify(loader.read_files(str(folder)), str(folder)),
                                limits.verify_repeats)
    command = median_seconds(lambda: run_cli("package", "verify", str(folder)), limits.cli_repeats)
    return {"valid": pkg is not None, "problems": len(problems), "in_process_ms_median": round(in_process * 1000, 2),
            "command_seconds_median": round(command, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=Limits.budget, help="seconds each rate is measured for")
    parser.add_argument("--repeats", type=int, default=Limits.cli_repeats,
                        help=f"runs of each command (default {Limits.cli_repeats}; in-process verifications: "
                             f"{Limits.verify_repeats // Limits.cli_repeats} times as many)")
    args = parser.parse_args()
    limits = Limits(args.budget, args.repeats, args.repeats * (Limits.verify_repeats // Limits.cli_repeats))
    started = time.perf_counter()
    figures: dict[str, Any] = {"bench": "render", **machine()}
    pkg = synthetic_package()
    ctx = render.RenderContext(instance="bench", namespace="default",
                               params=params.resolve(pkg, {"settings": {f"key-{i}": f"value {i}"
                                                                        for i in range(SETTINGS)}}))
    figures["render_template"] = {"small": template_rates(pkg, "small.yaml", ctx, limits),
                                  "large": template_rates(pkg, "large.yaml", ctx, limits)}
    packages = sorted(p for p in OPERATORS.iterdir() if (p / "operator.yaml").is_file())
    figures["render_plan"] = {folder.name: plan_rates(folder, limits) for folder in packages}
    figures["kplan_version_command_seconds_median"] = round(median_seconds(lambda: run_cli("version"),
                                                                           limits.cli_repeats), 3)
    figures["package_verify"] = {folder.name: verify_times(folder, limits) for folder in packages}
    figures["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
