"""The Kubernetes protobuf messages, built at import from the descriptors that tools/protobuf/generate.py compiled.

`descriptors.binpb` is protoc's FileDescriptorSet of k8s.io/api, apimachinery, apiextensions-apiserver and
kube-aggregator v0.37.2; `gofields.json` holds what the JSON form takes from the Go structs (see the generator).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

META = "k8s.io.apimachinery.pkg.apis.meta.v1"
UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"


@dataclass(frozen=True)
class Catalog:
    """The descriptor pool, the proto package of each apiVersion, and the Go facts of each message."""

    pool: descriptor_pool.DescriptorPool
    packages: dict[str, str]  # apiVersion → proto package
    lists: frozenset[str]  # messages written in JSON as a plain list of their `items`
    renamed: dict[str, dict[int, str]]  # message → field number → JSON name ("" inlined, "-" never written)
    keep_zero: dict[str, frozenset[int]]  # message → scalar fields whose zero value JSON still writes
    null_empty: dict[str, frozenset[int]]  # message → list/map fields without omitempty (empty reads back null)
    value_structs: dict[str, frozenset[int]]  # message → struct fields that are no pointer (always written)
    zero_scalars: dict[str, frozenset[int]]  # message → scalar fields no pointer, without omitempty (always written)

    def descriptor(self, api_version: str, kind: str) -> Descriptor | None:
        """The message of a kind in an apiVersion; the meta.k8s.io kinds (DeleteOptions, Status...) in any."""
        for package in (self.packages.get(api_version), META):
            if package is None:
                continue
            try:
                return self.pool.FindMessageTypeByName(f"{package}.{kind}")
            except KeyError:
                continue
        return None

    def api_version_of(self, descriptor: Descriptor) -> str | None:
        package = descriptor.file.package
        return next((v for v, p in self.packages.items() if p == package), None)

    def new(self, descriptor: Descriptor) -> Message:
        return message_factory.GetMessageClass(descriptor)()

    def json_name(self, descriptor: Descriptor, number: int, default: str) -> str:
        return self.renamed.get(descriptor.full_name, {}).get(number, default)


@functools.cache
def catalog() -> Catalog:
    folder = resources.files(__package__)
    files = descriptor_pb2.FileDescriptorSet.FromString(folder.joinpath("descriptors.binpb").read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    facts: dict[str, Any] = json.loads(folder.joinpath("gofields.json").read_text())
    return Catalog(
        pool=pool,
        packages={v: p for p, v in facts["groups"].items()},
        lists=frozenset(facts["lists"]),
        renamed={m: {int(n): name for n, name in fields.items()} for m, fields in facts["renamed"].items()},
        keep_zero={m: frozenset(numbers) for m, numbers in facts["keepZero"].items()},
        null_empty={m: frozenset(numbers) for m, numbers in facts["nullEmpty"].items()},
        value_structs={m: frozenset(numbers) for m, numbers in facts["valueStructs"].items()},
        zero_scalars={m: frozenset(numbers) for m, numbers in facts["zeroScalars"].items()},
    )
