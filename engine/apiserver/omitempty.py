"""Go's `omitempty` on what is stored: the empty values the real server's Go types never write back.

The real server decodes a built-in object into its Go struct and writes it out again, so `labels: {}`,
`finalizers: []`, `nodeSelector: {}`, `hostNetwork: false` or `hostname: ""` vanish wherever the field is tagged
`omitempty` (scalars behind a pointer keep their zero), and an empty list without the tag reads back as `null`
(`ClusterRole.rules`). A built-in kind's `status` is a Go struct, so it is always written, with the scalars that
have no omitempty (`status: {replicas: 0}` on a new ReplicaSet). Custom resources go through Go only for their
`metadata`; the rest is kept as written. The tags come from the protobuf catalog (`gofields.json`, generated
from the Go structs).
"""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from engine.apiserver.protobuf.convert import EXTENSIONS, TO_JSON
from engine.apiserver.protobuf.messages import META, Catalog, catalog
from engine.apiserver.resources import ResourceType
from engine.apiserver.unchanged import NOTHING, Unchanged

OBJECT_META = f"{META}.ObjectMeta"
SCHEMA_PROPS = f"{EXTENSIONS}.JSONSchemaProps"
SCHEMA_OR = (f"{EXTENSIONS}.JSONSchemaPropsOrArray", f"{EXTENSIONS}.JSONSchemaPropsOrBool")


def prune(rt: ResourceType, obj: dict[str, Any], unchanged: Unchanged = NOTHING) -> None:
    """Drop, in place, the empty values Go would not write for this object's kind (parts `unchanged` from a
    stored object went through Go already)."""
    cat = catalog()
    if rt.is_custom:
        if isinstance(obj.get("metadata"), dict):
            _prune(cat, obj["metadata"], cat.pool.FindMessageTypeByName(OBJECT_META), unchanged)
        return
    descriptor = cat.descriptor(rt.api_version, rt.kind)
    if descriptor is not None:
        _prune(cat, obj, descriptor, unchanged)


def write_status(rt: ResourceType, obj: dict[str, Any]) -> None:
    """Write a built-in kind's status as Go does, in place; after managedFields are tracked (nobody owns it)."""
    cat = catalog()
    descriptor = None if rt.is_custom else cat.descriptor(rt.api_version, rt.kind)
    status = descriptor.fields_by_name.get("status") if descriptor is not None else None
    if descriptor is None or status is None or status.message_type is None or \
            status.number not in cat.value_structs.get(descriptor.full_name, ()):
        return
    if not isinstance(obj.get("status"), dict):
        obj["status"] = {}
    _fill(cat, obj["status"], status.message_type)


ZERO = {FieldDescriptor.CPPTYPE_STRING: "", FieldDescriptor.CPPTYPE_BOOL: False}


def _fill(cat: Catalog, value: dict[str, Any], descriptor: Descriptor) -> None:
    """Write what Go always writes: structs that are no pointer (`{}` at least) and scalars without omitempty."""
    for key, (field, owner) in _fields(descriptor).items():
        if field.number in cat.value_structs.get(owner.full_name, ()) and field.message_type is not None:
            if not isinstance(value.get(key), dict):
                value[key] = {}
            _fill(cat, value[key], field.message_type)
        elif key not in value and field.number in cat.zero_scalars.get(owner.full_name, ()):
            value[key] = ZERO.get(field.cpp_type, 0)


@functools.cache
def _fields(descriptor: Descriptor) -> dict[str, tuple[FieldDescriptor, Descriptor]]:
    """JSON name → (field, the message declaring it), with inlined structs' fields at this level."""
    cat = catalog()
    found: dict[str, tuple[FieldDescriptor, Descriptor]] = {}
    for field in descriptor.fields:
        name = cat.json_name(descriptor, field.number, field.json_name)
        if name == "" and field.message_type is not None:
            found.update(_fields(field.message_type))
        elif name != "-":
            found[name] = (field, descriptor)
    return found


def _prune(cat: Catalog, value: dict[str, Any], descriptor: Descriptor, unchanged: Unchanged) -> None:
    if descriptor.full_name in TO_JSON or descriptor.full_name in cat.lists or value in unchanged:
        return
    for key, (field, owner) in _fields(descriptor).items():
        if key not in value:
            continue
        item = value[key]
        if field.is_repeated:
            if isinstance(item, (list, dict)) and not item:
                if field.number in cat.null_empty.get(owner.full_name, ()):
                    value[key] = None
                else:
                    del value[key]
            elif field.message_type is not None and item not in unchanged:
                _prune_items(cat, item, field.message_type, unchanged)
        elif field.message_type is not None:
            _prune_message(cat, item, field.message_type, unchanged)
        elif _is_zero(item) and field.number not in cat.keep_zero.get(owner.full_name, ()):
            del value[key]


def _prune_items(cat: Catalog, items: Any, message: Descriptor, unchanged: Unchanged) -> None:
    """The values of a list of messages, or of a map (its entry message's `value`)."""
    values: list[Any] = items if isinstance(items, list) else []
    if message.GetOptions().map_entry:
        value_type = message.fields_by_name["value"].message_type
        if value_type is None or not isinstance(items, dict):
            return
        values, message = list(items.values()), value_type
    for value in values:
        _prune_message(cat, value, message, unchanged)


def _prune_message(cat: Catalog, value: Any, message: Descriptor, unchanged: Unchanged) -> None:
    if message.full_name in SCHEMA_OR:  # a schema or a list of them (items), or a schema or a bool
        message = cat.pool.FindMessageTypeByName(SCHEMA_PROPS)
        for schema in value if isinstance(value, list) else [value]:
            if isinstance(schema, dict):
                _prune(cat, schema, message, unchanged)
    elif isinstance(value, dict):
        _prune(cat, value, message, unchanged)


def _is_zero(value: Any) -> bool:
    return value is False or value == "" or (type(value) in (int, float) and value == 0)
