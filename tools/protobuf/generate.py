"""Regenerate the dev cluster's protobuf descriptors from the Kubernetes modules' own `.proto` and Go sources.

    python tools/protobuf/generate.py      (or `make protobuf`)

Needs Go (to find or download the pinned modules) and grpcio-tools (its bundled protoc); the dev cluster itself
needs neither: it loads the two files this writes into engine/apiserver/protobuf/:

- `descriptors.binpb`: a FileDescriptorSet compiled by protoc from the modules' generated.proto files;
- `gofields.json`: what the .proto files do not say about the JSON form, read from the Go structs the .proto
  files were generated from (k8s.io/code-generator's go-to-protobuf): JSON names that differ from the proto
  field names (inlined structs, `$ref`, `x-kubernetes-*`), scalar fields whose zero value is still written
  (pointers and fields without `omitempty`), list and map fields without `omitempty` (Go writes an empty one
  read back from storage as `null`), struct fields that are no pointer and the scalar fields written even when
  zero (Go writes both always), named slices (`Verbs`) that JSON writes as plain lists, and the
  API group of each proto package (`GroupName`).

The inputs are pinned below (module versions) and recorded with their go.sum hashes in `SOURCES`.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

MODULES = {
    "k8s.io/api": "v0.37.2",
    "k8s.io/apimachinery": "v0.37.2",
    "k8s.io/apiextensions-apiserver": "v0.37.2",
    "k8s.io/kube-aggregator": "v0.37.2",
}
# The groups the dev cluster serves, plus what their messages refer to.
PROTOS = [
    "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
    "k8s.io/apimachinery/pkg/runtime/generated.proto",
    "k8s.io/apimachinery/pkg/runtime/schema/generated.proto",
    "k8s.io/apimachinery/pkg/util/intstr/generated.proto",
    "k8s.io/apimachinery/pkg/api/resource/generated.proto",
    "k8s.io/api/core/v1/generated.proto",
    "k8s.io/api/apps/v1/generated.proto",
    "k8s.io/api/batch/v1/generated.proto",
    "k8s.io/api/autoscaling/v1/generated.proto",
    "k8s.io/api/coordination/v1/generated.proto",
    "k8s.io/api/rbac/v1/generated.proto",
    "k8s.io/api/policy/v1/generated.proto",
    "k8s.io/api/events/v1/generated.proto",
    "k8s.io/api/networking/v1/generated.proto",
    "k8s.io/api/scheduling/v1/generated.proto",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/generated.proto",
    "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/generated.proto",
    "k8s.io/api/apidiscovery/v2/generated.proto",
]
OUT = Path(__file__).resolve().parents[2] / "engine" / "apiserver" / "protobuf"
FIELD = re.compile(r"^\t(?:(\w+)\s+)?(\*?[\w.\[\]*]+)\s+`(.*)`")
TAG = re.compile(r'(\w+):"([^"]*)"')
# Messages with a JSON form of their own (Go's MarshalJSON), never written as an empty struct.
SPECIAL = (".Time", ".MicroTime", ".Duration", ".Quantity", ".IntOrString", ".RawExtension", ".FieldsV1", ".JSON",
           ".JSONSchemaPropsOrArray", ".JSONSchemaPropsOrBool", ".JSONSchemaPropsOrStringArray", ".Verbs")
SCALAR_TYPES = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 18}  # every FieldDescriptorProto type but group/message


def download() -> dict[str, dict[str, str]]:
    """Dir and go.sum hash of each pinned module (downloaded into the Go module cache when missing)."""
    with tempfile.TemporaryDirectory() as scratch:
        found = {}
        for module, version in MODULES.items():
            done = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"], cwd=scratch,
                                  capture_output=True, text=True, check=True)
            info = json.loads(done.stdout)
            found[module] = {"dir": info["Dir"], "sum": info["Sum"]}
        return found


def compile_descriptors(modules: dict[str, dict[str, str]], out: Path) -> None:
    with tempfile.TemporaryDirectory() as stage:
        root = Path(stage)
        for module, info in modules.items():
            link = root / module
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(info["dir"])
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", f"--descriptor_set_out={out}",
                        "--include_imports", *PROTOS], check=True)


def go_sources(modules: dict[str, dict[str, str]], proto: str) -> list[Path]:
    module = next(m for m in modules if proto.startswith(m + "/"))
    folder = Path(modules[module]["dir"]) / Path(proto).parent.relative_to(module)
    return sorted(p for p in folder.glob("*.go") if not p.name.endswith("_test.go"))


def read_structs(sources: list[Path]) -> tuple[dict[str, list[tuple[str, str, str, dict[str, str]]]], set[str], str]:
    """Struct fields (name, Go type, json tag, protobuf tag parts), named slice types and the GroupName."""
    structs: dict[str, list[tuple[str, str, str, dict[str, str]]]] = {}
    slices: set[str] = set()
    group = ""
    for source in sources:
        current: str | None = None
        for line in source.read_text().splitlines():
            if m := re.match(r'^const GroupName = "(.*)"', line):
                group = m[1]
            if m := re.match(r"^type (\w+) \[\]", line):
                slices.add(m[1])
            if m := re.match(r"^type (\w+) struct \{", line):
                current = m[1]
                structs[current] = []
                continue
            if current is not None and line.startswith("}"):
                current = None
            if current is None or not (m := FIELD.match(line)):
                continue
            tags = dict(TAG.findall(m[3]))
            if "protobuf" not in tags:
                continue
            parts = tags["protobuf"].split(",")
            if len(parts) < 3:
                continue
            options = dict(p.split("=", 1) for p in parts[3:] if "=" in p)
            options["number"] = parts[1]
            structs[current].append((m[1] or "", m[2], tags.get("json", ""), options))
    return structs, slices, group


def field_facts(modules: dict[str, dict[str, str]], descriptors: Path) -> dict[str, object]:
    from google.protobuf import descriptor_pb2

    files = descriptor_pb2.FileDescriptorSet.FromString(descriptors.read_bytes()).file
    by_name = {f.name: f for f in files}
    renamed: dict[str, dict[str, str]] = {}
    keep_zero: dict[str, list[int]] = {}
    null_empty: dict[str, list[int]] = {}
    value_structs: dict[str, list[int]] = {}
    zero_scalars: dict[str, list[int]] = {}
    lists: list[str] = []
    groups: dict[str, str] = {}
    for proto in PROTOS:
        file = by_name[proto]
        structs, slices, group = read_structs(go_sources(modules, proto))
        version = Path(proto).parent.name
        if file.package.startswith("k8s.io.api.") or "/apis/" in proto:
            groups[file.package] = f"{group}/{version}" if group else version
        for message in file.message_type:
            full = f"{file.package}.{message.name}"
            if message.name in slices:
                lists.append(full)
            fields = {int(f.number): f for f in message.field}
            for go_name, go_type, json_tag, options in structs.get(message.name, []):
                field = fields.get(int(options["number"]))
                if field is None:
                    continue
                json_name, _, flags = json_tag.partition(",")
                if not go_name and not json_name:
                    renamed.setdefault(full, {})[str(field.number)] = ""
                elif json_name and json_name != field.json_name:
                    renamed.setdefault(full, {})[str(field.number)] = json_name
                scalar = field.type in SCALAR_TYPES and field.label != field.LABEL_REPEATED
                if scalar and (go_type.startswith("*") or "omitempty" not in flags.split(",")):
                    keep_zero.setdefault(full, []).append(field.number)
                if scalar and not go_type.startswith("*") and "omitempty" not in flags.split(",") and json_name:
                    zero_scalars.setdefault(full, []).append(field.number)
                if field.type == field.TYPE_MESSAGE and field.label != field.LABEL_REPEATED and json_name and \
                        not go_type.startswith(("*", "[]", "map[")) and not field.type_name.endswith(SPECIAL):
                    value_structs.setdefault(full, []).append(field.number)
                elif field.label == field.LABEL_REPEATED and "omitempty" not in flags.split(",") and json_name:
                    null_empty.setdefault(full, []).append(field.number)
    return {"groups": dict(sorted(groups.items())), "lists": sorted(lists),
            "renamed": dict(sorted(renamed.items())),
            "keepZero": {k: sorted(v) for k, v in sorted(keep_zero.items())},
            "nullEmpty": {k: sorted(v) for k, v in sorted(null_empty.items())},
            "valueStructs": {k: sorted(v) for k, v in sorted(value_structs.items())},
            "zeroScalars": {k: sorted(v) for k, v in sorted(zero_scalars.items())}}


def main() -> None:
    modules = download()
    OUT.mkdir(parents=True, exist_ok=True)
    descriptors = OUT / "descriptors.binpb"
    compile_descriptors(modules, descriptors)
    facts = field_facts(modules, descriptors)
    (OUT / "gofields.json").write_text(json.dumps(facts, indent=1, sort_keys=False) + "\n")
    from grpc_tools import protoc

    lines = ["# Inputs of tools/protobuf/generate.py (module, version, go.sum hash), and the compiler.",
             f"protoc {protoc.__name__} grpcio-tools {_version('grpcio-tools')}"]
    lines += [f"{m} {MODULES[m]} {info['sum']}" for m, info in sorted(modules.items())]
    lines += [f"sha256 {hashlib.sha256(descriptors.read_bytes()).hexdigest()} descriptors.binpb"]
    (OUT / "SOURCES").write_text("\n".join(lines) + "\n")


def _version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


if __name__ == "__main__":
    main()
