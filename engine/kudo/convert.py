"""A KUDO package (kudo.dev/v1beta1 operator.yaml, params.yaml, Go templates) as a kplan package: files in, files out.

What maps how (docs/migrating-from-kudo.md says it for users):

- operator.yaml: name, versions, maintainers, url; tasks Apply, Delete, Dummy as they are;
  Toggle becomes an Apply whose templates render only while `strconv.ParseBool` of the
  parameter is true (switched off, the objects are pruned when the plan completes); Pipe keeps
  its pod (given the containers that hand kplan the files) and gains a step that stores each
  file under KUDO's key (the file's base name) in the object `.Pipes.KEY` names;
  KudoOperator becomes Operator (its parameterFile becomes the task's parameters); plans,
  phases, steps and strategies as they are.
- params.yaml: see `engine.kudo.parameters` (strings unless `array` or `map`, as KUDO rendered them).
- templates: translated by `engine.kudo.translate`, then passed through `kudo.finish`, which
  adds KUDO's labels.

Everything that does not carry over is a Note; a Note with `gap=True` is a construct left
untranslated (the template fails at render with the same message rather than render wrongly).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from engine.errors import PackageInvalid, Problem
from engine.jsoncopy import copy_plain
from engine.kudo.detect import is_kudo_package
from engine.kudo.lexer import TemplateSyntaxError
from engine.kudo.parameters import convert_parameters
from engine.kudo.translate import Translation, jinja_string, translate
from engine.package import source
from engine.render.gofmt import value_text

__all__ = ["Conversion", "Note", "convert", "is_kudo_package"]

KUDO_API = "kudo.dev/v1beta1"
KPLAN_API = "kplan.dev/v1alpha1"
_DROPPED_OPERATOR_FIELDS = ("kudoVersion", "kubernetesVersion")
# API versions Kubernetes no longer serves (removed by 1.22 and 1.25) whose objects read the same in the served one
_RETIRED_APIS = {"policy/v1beta1": "policy/v1", "rbac.authorization.k8s.io/v1beta1": "rbac.authorization.k8s.io/v1"}
_API_LINE = re.compile(r"^(\s*apiVersion:\s*[\"']?)(policy/v1beta1|rbac\.authorization\.k8s\.io/v1beta1)([\"']?\s*)$",
                       re.MULTILINE)
_HEADER = "# Converted from a KUDO package by `kplan package convert --from kudo`.\n"


@dataclass(frozen=True)
class Note:
    """Something the conversion reports: `file:line: message`; `gap` marks an untranslated construct."""

    file: str
    line: int | None
    message: str
    gap: bool = False

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {'gap: ' if self.gap else ''}{self.message}"


@dataclass(frozen=True)
class Conversion:
    files: dict[str, str]
    notes: tuple[Note, ...]

    @property
    def gaps(self) -> tuple[Note, ...]:
        return tuple(n for n in self.notes if n.gap)


def convert(files: Mapping[str, str], children: Mapping[str, str] | None = None) -> Conversion:
    """The kplan package of a KUDO package's files. `children` maps the package a KudoOperator task
    names to the version available for it (a task asking for another version is then pointed at it)."""
    return _Converter(files, dict(children or {})).run()


def _load(file: str, text: str | None) -> Any:
    if text is None:
        raise PackageInvalid([Problem(file, None, "", "is missing: a KUDO package has operator.yaml and params.yaml")])
    data, problems = source.parse(file, text)
    if problems:
        raise PackageInvalid(problems)
    return data


class _Converter:
    def __init__(self, files: Mapping[str, str], children: dict[str, str]) -> None:
        self.files = files
        self.children = children
        self.notes: list[Note] = []
        self.out: dict[str, str] = {}
        self.templates = {k.removeprefix("templates/"): v for k, v in files.items() if k.startswith("templates/")}
        self.guards: dict[str, str] = {}  # template file -> Toggle parameter it renders under
        self.pipes: dict[str, str] = {}  # KUDO pipe key -> suffix of the object's name
        self.pipe_pods: dict[str, list[str]] = {}  # pod template -> its pipe files
        self.extra_steps: dict[str, str] = {}  # Pipe task -> its artifacts task

    def note(self, file: str, line: int | None, message: str, gap: bool = False) -> None:
        self.notes.append(Note(file, line, message, gap))

    def run(self) -> Conversion:
        operator = _load("operator.yaml", self.files.get("operator.yaml"))
        params = _load("params.yaml", self.files.get("params.yaml", "apiVersion: kudo.dev/v1beta1\nparameters: []\n"))
        if not isinstance(operator, dict):
            raise PackageInvalid([Problem("operator.yaml", None, "", "is not a mapping")])
        parameters, remarks = convert_parameters(params if isinstance(params, dict) else {})
        for line, message in remarks:
            self.note("params.yaml", line, message)
        tasks = self.tasks(operator)
        document = self.operator(operator, tasks)
        self.out["operator.yaml"] = _HEADER + _dump(document)
        self.out["params.yaml"] = _HEADER + _dump({"apiVersion": KPLAN_API, "parameters": parameters})
        strings = frozenset(p["name"] for p in parameters if p.get("type", "string") == "string")
        structured = frozenset(p["name"] for p in parameters if p.get("type", "string") != "string")
        self.translate_templates(strings, structured)
        if "README.md" in self.files:
            self.out["README.md"] = self.files["README.md"]
        return Conversion(dict(sorted(self.out.items())), tuple(self.notes))

    # -- operator.yaml

    def operator(self, kudo: Mapping[str, Any], tasks: list[dict[str, Any]]) -> dict[str, Any]:
        for key in _DROPPED_OPERATOR_FIELDS:
            if key in kudo:
                self.note("operator.yaml", source.line_of(kudo, key), f"{key} has no kplan equivalent and is dropped")
        document: dict[str, Any] = {"apiVersion": KPLAN_API, "name": str(kudo.get("name", ""))}
        document["operatorVersion"] = str(kudo.get("operatorVersion", ""))
        for key in ("appVersion", "description", "url"):
            if kudo.get(key) not in (None, ""):
                document[key] = str(kudo[key])
        maintainers = [{k: str(v) for k, v in m.items() if k in ("name", "email")}
                       for m in kudo.get("maintainers") or [] if isinstance(m, dict)]
        if maintainers:
            document["maintainers"] = maintainers
        document["tasks"] = tasks
        document["plans"] = self.plans(kudo.get("plans") or {})
        return document

    def tasks(self, kudo: Mapping[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for index, task in enumerate(kudo.get("tasks") or []):
            line = source.line_of(kudo.get("tasks"), index)
            if not isinstance(task, dict):
                raise PackageInvalid([Problem("operator.yaml", line, f"tasks[{index}]", "is not a mapping")])
            out += self.task(task, line)
        return out

    def task(self, task: Mapping[str, Any], line: int | None) -> list[dict[str, Any]]:
        name, kind = str(task.get("name", "")), str(task.get("kind", ""))
        spec = task.get("spec") or {}
        if kind in ("Apply", "Delete"):
            return [{"name": name, "kind": kind, "spec": {"resources": list(spec.get("resources") or [])}}]
        if kind == "Dummy":
            dummy = {k: bool(spec[k]) for k in ("wantErr", "fatal", "done") if k in spec}
            return [{"name": name, "kind": "Dummy", "spec": dummy}]
        if kind == "Toggle":
            return [self.toggle(name, spec, line)]
        if kind == "Pipe":
            return self.pipe(name, spec, line)
        if kind == "KudoOperator":
            return [self.kudo_operator(name, spec, line)]
        raise PackageInvalid([Problem("operator.yaml", line, f"task {name}", f"has kind {kind!r}, which KUDO "
                                      "does not know (Apply, Delete, Toggle, Pipe, Dummy, KudoOperator)")])

    def toggle(self, name: str, spec: Mapping[str, Any], line: int | None) -> dict[str, Any]:
        parameter = str(spec.get("parameter", ""))
        resources = []
        for file in spec.get("resources") or []:
            guarded = file if self.guards.get(file, parameter) == parameter else f"toggle-{parameter}-{file}"
            self.guards[guarded] = parameter
            if guarded != file:
                self.templates[guarded] = self.templates.get(file, "")
            resources.append(guarded)
        self.note("operator.yaml", line, f"Toggle task {name} becomes an Apply task whose templates render only "
                  f"while {parameter} is true; switched off, its objects are pruned when the plan completes")
        return {"name": name, "kind": "Apply", "spec": {"resources": resources}}

    def pipe(self, name: str, spec: Mapping[str, Any], line: int | None) -> list[dict[str, Any]]:
        pod = str(spec.get("pod", ""))
        pipes, artifacts = [], []
        for entry in spec.get("pipe") or []:
            key, file, kind = str(entry.get("key", "")), str(entry.get("file", "")), str(entry.get("kind", ""))
            if entry.get("envFile"):
                self.note("operator.yaml", line, f"pipe {key}: envFile has no kplan translation", gap=True)
            suffix = re.sub(r"[^a-z0-9]+", "", key.lower()) or "pipe"
            self.pipes[key] = "." + suffix
            pipes.append({"file": file, "kind": kind, "key": suffix})
            self.pipe_pods.setdefault(pod, []).append(file)
            artifacts.append(_artifact(kind, suffix, file))
        artifacts_file = f"kudo-pipe-{name}.yaml"
        self.out[f"templates/{artifacts_file}"] = "---\n".join(artifacts)
        self.extra_steps[name] = f"{name}-artifacts"
        self.note("operator.yaml", line, f"Pipe task {name}: each file is also stored under its base name in the "
                  f"object .Pipes.KEY names, by the added task {name}-artifacts")
        return [{"name": name, "kind": "Pipe", "spec": {"pod": pod, "pipe": pipes}},
                {"name": f"{name}-artifacts", "kind": "Apply", "spec": {"resources": [artifacts_file]}}]

    def kudo_operator(self, name: str, spec: Mapping[str, Any], line: int | None) -> dict[str, Any]:
        package = str(spec.get("package", ""))
        version = str(spec.get("operatorVersion", ""))
        available = self.children.get(package)
        if available is not None and version and available != version:
            self.note("operator.yaml", line, f"task {name} asks for {package} {version}; the KUDO repository holds "
                      f"{available}, which it installs instead")
            version = available
        task: dict[str, Any] = {"name": name, "kind": "Operator", "spec": {"package": package, "version": version}}
        if spec.get("instanceName"):
            task["spec"]["instanceName"] = str(spec["instanceName"])
        if spec.get("parameterFile"):
            task["spec"]["parameters"] = self.parameter_file(str(spec["parameterFile"]), line)
        return task

    def parameter_file(self, file: str, line: int | None) -> dict[str, Any]:
        text = self.templates.pop(file, None)
        if text is None:
            self.note("operator.yaml", line, f"parameterFile {file} is not in templates/", gap=True)
            return {}
        values: dict[str, Any] = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            match = re.fullmatch(r"([A-Za-z0-9_.-]+):\s*(.*?)\s*", raw)
            if match is None:
                self.note(f"templates/{file}", number, "only one `NAME: value` per line converts", gap=True)
                continue
            values[match.group(1)] = self.parameter_value(file, number, match.group(2))
        return values

    def parameter_value(self, file: str, line: int, raw: str) -> str:
        if "{{" not in raw:
            loaded = yaml.safe_load(raw) if raw else ""
            return loaded if isinstance(loaded, str) else value_text(loaded, False)
        quoted = re.fullmatch(r'"(.*)"', raw)
        try:
            translation = translate(quoted.group(1) if quoted else raw)
        except TemplateSyntaxError as err:
            self.note(f"templates/{file}", line, f"does not parse: {err.message}", gap=True)
            return ""
        self.report(f"templates/{file}", translation, line - 1)
        return f"{{% set _p %}}{translation.text}{{% endset %}}{{{{ _p | tojson }}}}"

    def plans(self, kudo: Mapping[str, Any]) -> dict[str, Any]:
        plans: dict[str, Any] = {}
        for plan_name, plan in kudo.items():
            phases = []
            for phase in (plan or {}).get("phases") or []:
                strategy = str(phase.get("strategy") or "serial")
                steps: list[dict[str, Any]] = []
                for step in phase.get("steps") or []:
                    tasks = [str(t) for t in step.get("tasks") or []]
                    steps.append({"name": str(step.get("name", "")), "tasks": tasks})
                    extra = [self.extra_steps[t] for t in tasks if t in self.extra_steps]
                    if extra:
                        added: dict[str, Any] = {"name": f"{step.get('name')}-artifacts", "tasks": extra}
                        if strategy == "parallel":
                            added["dependsOn"] = [str(step.get("name", ""))]
                        steps.append(added)
                phases.append({"name": str(phase.get("name", "")), "strategy": strategy, "steps": steps})
            plans[str(plan_name)] = {"strategy": str((plan or {}).get("strategy") or "serial"), "phases": phases}
        return plans

    # -- templates

    def translate_templates(self, strings: frozenset[str], structured: frozenset[str]) -> None:
        for file, text in sorted(self.templates.items()):
            path = f"templates/{file}"
            text = self.served_apis(path, text)
            try:
                translation = translate(text, strings, self.pipes, structured)
            except TemplateSyntaxError as err:
                self.note(path, err.line, f"does not parse as a Go template: {err.message}", gap=True)
                self.out[path] = f"{{{{ go.fail({jinja_string(f'{file}: does not parse: {err.message}')}) }}}}\n"
                continue
            self.report(path, translation)
            self.out[path] = self.finished(file, translation.text)

    def served_apis(self, path: str, text: str) -> str:
        """`text` with retired API versions replaced by the served ones (each replacement noted)."""
        def replace(match: re.Match[str]) -> str:
            line = text.count("\n", 0, match.start()) + 1
            new = _RETIRED_APIS[match.group(2)]
            self.note(path, line, f"apiVersion {match.group(2)} is no longer served by Kubernetes; it becomes {new}")
            return match.group(1) + new + match.group(3)
        return _API_LINE.sub(replace, text)

    def report(self, path: str, translation: Translation, offset: int = 0) -> None:
        for gap in translation.gaps:
            self.note(path, gap.line + offset, f"{gap.construct}: {gap.reason}", gap=True)

    def finished(self, file: str, text: str) -> str:
        files = self.pipe_pods.get(file)
        extra = f", [{', '.join(jinja_string(f) for f in files)}]" if files else ""
        body = f"{{% set _out %}}{text}{{% endset %}}{{{{ kudo.finish(_out, Name, OperatorName{extra}) }}}}\n"
        parameter = self.guards.get(file)
        if parameter is not None:
            body = f"{{% if go.parse_bool(Params[{jinja_string(parameter)}]) %}}{body}{{% endif %}}"
        return body


def _artifact(kind: str, suffix: str, file: str) -> str:
    base = file.rsplit("/", 1)[-1]
    if kind == "Secret":
        return (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{{{ Name }}}}.{suffix}\ntype: Opaque\n"
                f"data:\n  {base}: {{{{ Pipes.{suffix} | b64encode }}}}\n")
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ Name }}}}.{suffix}\n"
            f"data:\n  {base}: {{{{ Pipes.{suffix} | tojson }}}}\n")


def _dump(document: Any) -> str:
    return yaml.safe_dump(copy_plain(document), default_flow_style=False, sort_keys=False, allow_unicode=True,
                          width=1000)
