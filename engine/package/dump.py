"""Writing a Package built in code back out as operator.yaml, params.yaml and templates/."""

from __future__ import annotations

from typing import Any

import yaml

from engine.model import Expectation, HealthRule, Package, Parameter, Phase, Plan, Step, Task, TaskKind

__all__ = [
    "operator_document",
    "package_files",
    "parameter_document",
    "params_document",
    "plan_document",
    "task_document",
]

API_VERSION = "kplan.dev/v1alpha1"


def package_files(pkg: Package) -> dict[str, str]:
    files = {"operator.yaml": _yaml(operator_document(pkg)), "params.yaml": _yaml(params_document(pkg))}
    files.update({f"templates/{name}": text for name, text in pkg.templates.items()})
    return dict(sorted(files.items()))


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    """Leave out fields that are unset (None, empty) so the YAML reads like a hand-written one."""
    return {k: v for k, v in data.items() if v not in (None, "", (), [], {})}


def operator_document(pkg: Package) -> dict[str, Any]:
    return _compact({
        "apiVersion": API_VERSION,
        "name": pkg.name,
        "operatorVersion": pkg.operator_version,
        "appVersion": pkg.app_version,
        "kplanVersion": pkg.kplan_version,
        "description": pkg.description,
        "maintainers": [_compact({"name": m.name, "email": m.email}) for m in pkg.maintainers],
        "url": pkg.url,
        "upgradableFrom": list(pkg.upgradable_from),
        "tasks": [task_document(t) for t in pkg.tasks],
        "health": [_health(h) for h in pkg.health],
        "plans": {name: plan_document(plan) for name, plan in pkg.plans.items()},
    })


def task_document(task: Task) -> dict[str, Any]:
    return {"name": task.name, "kind": task.kind.value, "spec": _task_spec(task)}


def _task_spec(task: Task) -> dict[str, Any]:
    match task.kind:
        case TaskKind.APPLY:
            return {"resources": list(task.resources), "force": task.force, "retries": task.retries}
        case TaskKind.DELETE:
            return {"resources": list(task.resources)}
        case TaskKind.TOGGLE:
            return {"parameter": task.parameter, "resources": list(task.resources), "force": task.force,
                    "retries": task.retries}
        case TaskKind.PIPE:
            return {"pod": task.pod, "pipe": [{"file": p.file, "kind": p.kind, "key": p.key} for p in task.pipe]}
        case TaskKind.OPERATOR:
            return _compact({"package": task.package, "version": task.version, "instanceName": task.instance_name,
                             "parameters": dict(task.parameters)})
        case TaskKind.WAIT:
            return _compact({"for": [{"resource": w.resource, "condition": w.condition} for w in task.wait_for],
                             "timeout": task.timeout})
    return {"wantErr": task.want_err, "fatal": task.fatal, "done": task.done}


def _health(rule: HealthRule) -> dict[str, Any]:
    if rule.exprs is not None:
        return _compact({"group": rule.group, "kind": rule.kind, "current": rule.exprs.current,
                         "inProgress": rule.exprs.in_progress, "failed": rule.exprs.failed})
    return _compact({
        "group": rule.group,
        "kind": rule.kind,
        "healthy": _expectation(rule.healthy),
        "failed": _expectation(rule.failed),
    })


def _expectation(e: Expectation | None) -> dict[str, Any] | None:
    if e is None:
        return None
    if e.json_path is not None:
        return {"jsonPath": e.json_path, "equals": e.equals}
    return {"condition": e.condition, "status": e.status}


def plan_document(plan: Plan) -> dict[str, Any]:
    return {
        "strategy": plan.strategy.value,
        "phases": [_phase(ph) for ph in plan.phases],
    }


def _phase(phase: Phase) -> dict[str, Any]:
    return {"name": phase.name, "strategy": phase.strategy.value, "steps": [_step(s) for s in phase.steps]}


def _step(step: Step) -> dict[str, Any]:
    return _compact({
        "name": step.name,
        "tasks": list(step.tasks),
        "dependsOn": list(step.depends_on),
        "timeout": step.timeout,
    })


def params_document(pkg: Package) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "parameters": [parameter_document(p) for p in pkg.parameters]}


def parameter_document(p: Parameter) -> dict[str, Any]:
    doc = {"name": p.name, "description": p.description, "type": p.type.value}
    if p.has_default:
        doc["default"] = p.default
    return doc | _compact({
        "required": p.required if p.required != (not (p.has_default or p.generate)) else None,
        "enum": list(p.enum) if p.enum is not None else None,
        "minimum": p.minimum,
        "maximum": p.maximum,
        "pattern": p.pattern,
        "minLength": p.min_length,
        "maxLength": p.max_length,
        "immutable": p.immutable or None,
        "trigger": p.trigger,
        "secret": p.secret or None,
        "generate": _generate_document(p),
    })


def _generate_document(p: Parameter) -> dict[str, Any] | None:
    if p.generate is None:
        return None
    length = {"length": p.generate.length} if p.generate.length is not None else {}
    return {"kind": p.generate.kind.value, **length}
