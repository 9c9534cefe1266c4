"""meta.k8s.io/v1 Table answers (`Accept: ...;as=Table`): kubectl's columns for common kinds, CRD printer columns."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from engine.apiserver import jsonpath
from engine.apiserver.objects import JsonDict, get_path, is_terminating, parse_time
from engine.apiserver.requests import ApiRequest
from engine.apiserver.resources import ResourceType
from engine.apiserver.selectors import format_label_selector

if TYPE_CHECKING:
    from engine.apiserver.api import Api

Cell = Callable[[JsonDict, datetime.datetime], Any]


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    cell: Cell
    priority: int = 0
    format: str = ""
    description: str = ""

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format, "description": self.description,
                "priority": self.priority}


def human_duration(seconds: float) -> str:
    """kubectl's duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def since(value: Any, now: datetime.datetime) -> str:
    moment = parse_time(str(value)) if value else None
    return human_duration((now - moment).total_seconds()) if moment else "<unknown>"


def _name(obj: JsonDict, _now: datetime.datetime) -> Any:
    return get_path(obj, ["metadata", "name"])


def _age(obj: JsonDict, now: datetime.datetime) -> Any:
    return since(get_path(obj, ["metadata", "creationTimestamp"]), now)


def _path(*keys: str, default: Any = None) -> Cell:
    return lambda obj, _now: _or(get_path(obj, list(keys)), default)


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


NAME = Column("Name", "string", _name, format="name",
              description="Name must be unique within a namespace. Is required when creating resources, although "
                          "some resources may allow a client to request the generation of an appropriate name "
                          "automatically. Name is primarily intended for creation idempotence and configuration "
                          "definition. Cannot be updated. More info: "
                          "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
AGE = Column("Age", "string", _age, description="CreationTimestamp is a timestamp representing the server time when "
                                                "this object was created.")


def _containers(obj: JsonDict, template: Sequence[str]) -> list[dict[str, Any]]:
    return [c for c in get_path(obj, [*template, "containers"]) or [] if isinstance(c, dict)]


def _workload_extras(template: Sequence[str]) -> list[Column]:
    return [
        Column("Containers", "string", lambda o, _n: ",".join(str(c.get("name")) for c in _containers(o, template)),
               priority=1, description="Names of each container in the template."),
        Column("Images", "string", lambda o, _n: ",".join(str(c.get("image")) for c in _containers(o, template)),
               priority=1, description="Images referenced by each container in the template."),
        Column("Selector", "string", lambda o, _n: format_label_selector(get_path(o, ["spec", "selector"])),
               priority=1, description="Label selector for pods."),
    ]


POD_TEMPLATE = ("spec", "template", "spec")


def _rc_selector(obj: JsonDict, _now: datetime.datetime) -> str:
    labels = get_path(obj, ["spec", "selector"])
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) if isinstance(labels, dict) else ""


def _quota(*, limits: bool) -> Cell:
    """`resource: used/hard` of status.hard, sorted; `limits.*` ones in the Limit column (printResourceQuota)."""
    def cell(obj: JsonDict, _now: datetime.datetime) -> str:
        hard = get_path(obj, ["status", "hard"]) or {}
        used = get_path(obj, ["status", "used"]) or {}
        names = [n for n in sorted(hard) if (n.split(".")[0] == "limits" and "." in n) == limits]
        return ", ".join(f"{n}: {used.get(n, '0')}/{hard[n]}" for n in names)
    return cell


def _ingress_hosts(obj: JsonDict, _now: datetime.datetime) -> str:
    rules = get_path(obj, ["spec", "rules"]) or []
    hosts = [str(r.get("host")) for r in rules if isinstance(r, dict) and r.get("host")]
    if not hosts:
        return "*"
    shown = ",".join(hosts[:3])
    return f"{shown} + {len(hosts) - 3} more..." if len(hosts) > 3 else shown


def _ingress_address(obj: JsonDict, _now: datetime.datetime) -> str:
    ingress = get_path(obj, ["status", "loadBalancer", "ingress"]) or []
    return ",".join(str(i.get("ip") or i.get("hostname")) for i in ingress if isinstance(i, dict))


def _ingress_class_parameters(obj: JsonDict, _now: datetime.datetime) -> str:
    params = get_path(obj, ["spec", "parameters"])
    if not isinstance(params, dict):
        return "<none>"
    kind = f"{params.get('kind')}.{params['apiGroup']}" if params.get("apiGroup") else str(params.get("kind"))
    return f"{kind}/{params.get('name')}"


def _apiservice_service(obj: JsonDict, _now: datetime.datetime) -> str:
    service = get_path(obj, ["spec", "service"])
    return f"{service.get('namespace')}/{service.get('name')}" if isinstance(service, dict) else "Local"


def _apiservice_available(obj: JsonDict, _now: datetime.datetime) -> str:
    for condition in get_path(obj, ["status", "conditions"]) or []:
        if isinstance(condition, dict) and condition.get("type") == "Available":
            status = str(condition.get("status"))
            return status if status == "True" else f"{status} ({condition.get('reason')})"
    return "Unknown"


def _pod_ready(obj: JsonDict, _now: datetime.datetime) -> str:
    statuses = get_path(obj, ["status", "containerStatuses"]) or []
    ready = sum(1 for s in statuses if isinstance(s, dict) and s.get("ready"))
    return f"{ready}/{len(get_path(obj, ['spec', 'containers']) or [])}"


def _pod_status(obj: JsonDict, _now: datetime.datetime) -> str:
    if is_terminating(obj):
        return "Terminating"
    reason = get_path(obj, ["status", "reason"]) or get_path(obj, ["status", "phase"]) or "Pending"
    for status in get_path(obj, ["status", "containerStatuses"]) or []:
        state = status.get("state") or {} if isinstance(status, dict) else {}
        waiting = (state.get("waiting") or {}).get("reason")
        terminated = (state.get("terminated") or {}).get("reason")
        if waiting or terminated:
            reason = waiting or terminated
    return str(reason)


def _pod_restarts(obj: JsonDict, _now: datetime.datetime) -> str:
    statuses = get_path(obj, ["status", "containerStatuses"]) or []
    return str(sum(int(s.get("restartCount") or 0) for s in statuses if isinstance(s, dict)))


def _ratio(ready: Sequence[str], total: Sequence[str]) -> Cell:
    return lambda o, _n: f"{get_path(o, list(ready)) or 0}/{get_path(o, list(total)) or 0}"


def _service_ports(obj: JsonDict, _now: datetime.datetime) -> str:
    ports = []
    for p in get_path(obj, ["spec", "ports"]) or []:
        node = f":{p['nodePort']}" if p.get("nodePort") else ""
        ports.append(f"{p.get('port')}{node}/{p.get('protocol', 'TCP')}")
    return ",".join(ports) or "<none>"


def _external_ip(obj: JsonDict, _now: datetime.datetime) -> str:
    ingress = get_path(obj, ["status", "loadBalancer", "ingress"]) or []
    ips = [str(i.get("ip") or i.get("hostname")) for i in ingress if isinstance(i, dict)]
    ips += [str(ip) for ip in get_path(obj, ["spec", "externalIPs"]) or []]
    if ips:
        return ",".join(ips)
    kind = get_path(obj, ["spec", "type"])
    if kind == "LoadBalancer":
        return "<pending>"
    if kind == "ExternalName":
        return str(get_path(obj, ["spec", "externalName"]))
    return "<none>"


def _count(*keys: str) -> Cell:
    return lambda o, _n: len(get_path(o, list(keys)) or {})


def _job_status(obj: JsonDict, _now: datetime.datetime) -> str:
    for condition in get_path(obj, ["status", "conditions"]) or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed", "Suspended"):
            return str(condition["type"]) if condition["type"] != "Failed" else "Failed"
    return "Terminating" if is_terminating(obj) else "Running"


def _job_completions(obj: JsonDict, _now: datetime.datetime) -> str:
    completions = get_path(obj, ["spec", "completions"])
    succeeded = get_path(obj, ["status", "succeeded"]) or 0
    if completions is not None:
        return f"{succeeded}/{completions}"
    return f"{succeeded}/1 of {get_path(obj, ['spec', 'parallelism']) or 1}"


def _job_duration(obj: JsonDict, now: datetime.datetime) -> str:
    start = parse_time(str(get_path(obj, ["status", "startTime"]) or ""))
    if start is None:
        return ""
    end = parse_time(str(get_path(obj, ["status", "completionTime"]) or "")) or now
    return human_duration((end - start).total_seconds())


def _namespace_status(obj: JsonDict, _now: datetime.datetime) -> Any:
    return get_path(obj, ["status", "phase"])


def _node_status(obj: JsonDict, _now: datetime.datetime) -> str:
    ready = next((c for c in get_path(obj, ["status", "conditions"]) or [] if c.get("type") == "Ready"), None)
    status = "Ready" if ready and ready.get("status") == "True" else "NotReady" if ready else "Unknown"
    return status + (",SchedulingDisabled" if get_path(obj, ["spec", "unschedulable"]) else "")


def _node_roles(obj: JsonDict, _now: datetime.datetime) -> str:
    labels = get_path(obj, ["metadata", "labels"]) or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))
    return ",".join(roles) or "<none>"


def core_event(obj: JsonDict) -> JsonDict:
    """An events.k8s.io/v1 Event under the core/v1 names the printer reads (the real server converts it alike)."""
    if obj.get("apiVersion") != "events.k8s.io/v1" and "regarding" not in obj and "note" not in obj:
        return obj
    return {**obj, "involvedObject": obj.get("regarding") or {}, "message": obj.get("note") or "",
            "source": obj.get("deprecatedSource") or {}, "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
            "lastTimestamp": obj.get("deprecatedLastTimestamp"), "count": obj.get("deprecatedCount"),
            "reportingComponent": obj.get("reportingController") or ""}


def _event_object(obj: JsonDict, _now: datetime.datetime) -> str:
    involved = obj.get("involvedObject") or {}
    kind = str(involved.get("kind") or "").lower()
    return f"{kind}/{involved['name']}" if involved.get("name") else kind


def _first_seen(obj: JsonDict, now: datetime.datetime) -> str:
    return since(obj.get("firstTimestamp") or obj.get("eventTime"), now)


def _last_seen(obj: JsonDict, now: datetime.datetime) -> str:
    series = obj.get("series") or {}
    if series:
        return since(series.get("lastObservedTime"), now)
    return since(obj["lastTimestamp"], now) if obj.get("lastTimestamp") else _first_seen(obj, now)


def _event_count(obj: JsonDict, _now: datetime.datetime) -> int:
    series = obj.get("series") or {}
    return int(series.get("count") or 0) if series else int(obj.get("count") or 1)


def _event_source(obj: JsonDict, _now: datetime.datetime) -> str:
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return f"{component}, {instance}" if component and instance else str(component)


def _as_core_event(column: Column) -> Column:
    cell = column.cell
    return replace(column, cell=lambda obj, now: cell(core_event(obj), now))


# The event printer of kubernetes/pkg/printers/internalversion (the server fills every column; kubectl shows
# those of priority 1 with -o wide).
EVENT_COLUMNS = [
    Column("Last Seen", "string", _last_seen), Column("Type", "string", _path("type", default="")),
    Column("Reason", "string", _path("reason", default="")), Column("Object", "string", _event_object),
    Column("Subobject", "string", _path("involvedObject", "fieldPath", default=""), priority=1),
    Column("Source", "string", _event_source, priority=1),
    Column("Message", "string", lambda o, _n: str(o.get("message") or "").strip()),
    Column("First Seen", "string", _first_seen, priority=1), Column("Count", "string", _event_count, priority=1),
    Column("Name", "string", _path("metadata", "name", default=""), priority=1),
]


def _lease_holder(obj: JsonDict, _now: datetime.datetime) -> Any:
    return get_path(obj, ["spec", "holderIdentity"]) or ""


def _binding_role(obj: JsonDict, _now: datetime.datetime) -> str:
    ref = obj.get("roleRef") or {}
    return f"{ref.get('kind')}/{ref.get('name')}"


def _created_at(obj: JsonDict, _now: datetime.datetime) -> Any:
    return get_path(obj, ["metadata", "creationTimestamp"])


def _pdb_value(key: str) -> Cell:
    return lambda o, _n: "N/A" if get_path(o, ["spec", key]) is None else get_path(o, ["spec", key])


COLUMNS: dict[str, list[Column]] = {
    "/pods": [NAME, Column("Ready", "string", _pod_ready), Column("Status", "string", _pod_status),
              Column("Restarts", "string", _pod_restarts), AGE,
              Column("IP", "string", _path("status", "podIP", default="<none>"), priority=1),
              Column("Node", "string", _path("spec", "nodeName", default="<none>"), priority=1),
              Column("Nominated Node", "string", _path("status", "nominatedNodeName", default="<none>"), priority=1),
              Column("Readiness Gates", "string", lambda o, _n: "<none>", priority=1)],
    "apps/deployments": [NAME, Column("Ready", "string", _ratio(["status", "readyReplicas"], ["spec", "replicas"])),
                         Column("Up-to-date", "integer", _path("status", "updatedReplicas", default=0)),
                         Column("Available", "integer", _path("status", "availableReplicas", default=0)), AGE,
                         *_workload_extras(POD_TEMPLATE)],
    "apps/replicasets": [NAME, Column("Desired", "integer", _path("spec", "replicas", default=0)),
                         Column("Current", "integer", _path("status", "replicas", default=0)),
                         Column("Ready", "integer", _path("status", "readyReplicas", default=0)), AGE,
                         *_workload_extras(POD_TEMPLATE)],
    "/replicationcontrollers": [NAME, Column("Desired", "integer", _path("spec", "replicas", default=0)),
                                Column("Current", "integer", _path("status", "replicas", default=0)),
                                Column("Ready", "integer", _path("status", "readyReplicas", default=0)), AGE,
                                *_workload_extras(POD_TEMPLATE)[:2],
                                Column("Selector", "string", _rc_selector, priority=1,
                                       description="Label selector for pods.")],
    "/resourcequotas": [NAME, Column("Request", "string", _quota(limits=False)),
                        Column("Limit", "string", _quota(limits=True)), AGE],
    "networking.k8s.io/ingresses": [NAME, Column("Class", "string",
                                                 _path("spec", "ingressClassName", default="<none>")),
                                    Column("Hosts", "string", _ingress_hosts),
                                    Column("Address", "string", _ingress_address),
                                    Column("Ports", "string", lambda o, _n: "80, 443" if get_path(o, ["spec", "tls"])
                                           else "80"), AGE],
    "networking.k8s.io/ingressclasses": [NAME, Column("Controller", "string", _path("spec", "controller", default="")),
                                         Column("Parameters", "string", _ingress_class_parameters), AGE],
    "networking.k8s.io/networkpolicies": [NAME, Column("Pod-Selector", "string", lambda o, _n: format_label_selector(
        get_path(o, ["spec", "podSelector"])) or "<none>"), AGE],
    "scheduling.k8s.io/priorityclasses": [NAME, Column("Value", "integer", _path("value", default=0)),
                                          Column("Global-Default", "boolean", _path("globalDefault", default=False)),
                                          AGE, Column("PreemptionPolicy", "string",
                                                      _path("preemptionPolicy", default=""))],
    "apiregistration.k8s.io/apiservices": [NAME, Column("Service", "string", _apiservice_service),
                                           Column("Available", "string", _apiservice_available), AGE],
    "apps/statefulsets": [NAME, Column("Ready", "string", _ratio(["status", "readyReplicas"], ["spec", "replicas"])),
                          AGE, *_workload_extras(POD_TEMPLATE)[:2]],
    "apps/daemonsets": [NAME, Column("Desired", "integer", _path("status", "desiredNumberScheduled", default=0)),
                        Column("Current", "integer", _path("status", "currentNumberScheduled", default=0)),
                        Column("Ready", "integer", _path("status", "numberReady", default=0)),
                        Column("Up-to-date", "integer", _path("status", "updatedNumberScheduled", default=0)),
                        Column("Available", "integer", _path("status", "numberAvailable", default=0)),
                        Column("Node Selector", "string", lambda o, _n: ",".join(
                            f"{k}={v}" for k, v in sorted((get_path(o, [*POD_TEMPLATE, "nodeSelector"]) or {})
                                                          .items())) or "<none>"),
                        AGE, *_workload_extras(POD_TEMPLATE)],
    "apps/controllerrevisions": [NAME, Column("Controller", "string", lambda o, _n: next(
        (f"{str(r.get('kind', '')).lower()}.{str(r.get('apiVersion', '')).split('/')[0]}/{r.get('name')}"
         for r in get_path(o, ["metadata", "ownerReferences"]) or [] if r.get("controller")), "<none>")),
                                 Column("Revision", "integer", _path("revision", default=0)), AGE],
    "batch/jobs": [NAME, Column("Status", "string", _job_status), Column("Completions", "string", _job_completions),
                   Column("Duration", "string", _job_duration), AGE, *_workload_extras(POD_TEMPLATE)],
    "batch/cronjobs": [NAME, Column("Schedule", "string", _path("spec", "schedule", default="")),
                       Column("Timezone", "string", _path("spec", "timeZone", default="<none>")),
                       Column("Suspend", "boolean", _path("spec", "suspend", default=False)),
                       Column("Active", "integer", _count("status", "active")),
                       Column("Last Schedule", "string", lambda o, n: since(
                           get_path(o, ["status", "lastScheduleTime"]), n)
                              if get_path(o, ["status", "lastScheduleTime"]) else "<none>"), AGE],
    "/services": [NAME, Column("Type", "string", _path("spec", "type", default="ClusterIP")),
                  Column("Cluster-IP", "string", _path("spec", "clusterIP", default="<none>")),
                  Column("External-IP", "string", _external_ip), Column("Port(s)", "string", _service_ports), AGE,
                  Column("Selector", "string", lambda o, _n: ",".join(
                      f"{k}={v}" for k, v in sorted((get_path(o, ["spec", "selector"]) or {}).items())) or "<none>",
                         priority=1)],
    "/configmaps": [NAME, Column("Data", "integer", lambda o, _n: len(o.get("data") or {}) + len(
        o.get("binaryData") or {})), AGE],
    "/secrets": [NAME, Column("Type", "string", _path("type", default="Opaque")),
                 Column("Data", "integer", _count("data")), AGE],
    "/serviceaccounts": [NAME, Column("Secrets", "integer", _count("secrets")), AGE],
    "/namespaces": [NAME, Column("Status", "string", _namespace_status), AGE],
    "/nodes": [NAME, Column("Status", "string", _node_status), Column("Roles", "string", _node_roles), AGE,
               Column("Version", "string", _path("status", "nodeInfo", "kubeletVersion", default=""))],
    "/events": EVENT_COLUMNS,
    "events.k8s.io/events": [_as_core_event(c) for c in EVENT_COLUMNS],
    "/persistentvolumeclaims": [NAME, Column("Status", "string", _path("status", "phase", default="")),
                                Column("Volume", "string", _path("spec", "volumeName", default="")),
                                Column("Capacity", "string", _path("status", "capacity", "storage", default="")),
                                Column("Access Modes", "string", lambda o, _n: ",".join(
                                    _short_mode(m) for m in get_path(o, ["status", "accessModes"]) or [])),
                                Column("StorageClass", "string", _path("spec", "storageClassName", default="<unset>")),
                                Column("VolumeAttributesClass", "string",
                                       _path("spec", "volumeAttributesClassName", default="<unset>")), AGE],
    "/persistentvolumes": [NAME, Column("Capacity", "string", _path("spec", "capacity", "storage", default="")),
                           Column("Access Modes", "string", lambda o, _n: ",".join(
                               _short_mode(m) for m in get_path(o, ["spec", "accessModes"]) or [])),
                           Column("Reclaim Policy", "string", _path("spec", "persistentVolumeReclaimPolicy",
                                                                    default="")),
                           Column("Status", "string", _path("status", "phase", default="")),
                           Column("Claim", "string", lambda o, _n: "/".join(
                               str(get_path(o, ["spec", "claimRef", k])) for k in ("namespace", "name"))
                                  if get_path(o, ["spec", "claimRef"]) else ""),
                           Column("StorageClass", "string", _path("spec", "storageClassName", default="")), AGE],
    "/endpoints": [NAME, Column("Endpoints", "string", lambda o, _n: ",".join(
        f"{a.get('ip')}:{p.get('port')}" for s in o.get("subsets") or [] for a in s.get("addresses") or []
        for p in s.get("ports") or []) or "<none>"), AGE],
    "coordination.k8s.io/leases": [NAME, Column("Holder", "string", _lease_holder), AGE],
    "rbac.authorization.k8s.io/roles": [NAME, Column("Created At", "string", _created_at)],
    "rbac.authorization.k8s.io/clusterroles": [NAME, Column("Created At", "string", _created_at)],
    "rbac.authorization.k8s.io/rolebindings": [NAME, Column("Role", "string", _binding_role), AGE],
    "rbac.authorization.k8s.io/clusterrolebindings": [NAME, Column("Role", "string", _binding_role), AGE],
    "policy/poddisruptionbudgets": [NAME, Column("Min Available", "string", _pdb_value("minAvailable")),
                                    Column("Max Unavailable", "string", _pdb_value("maxUnavailable")),
                                    Column("Allowed Disruptions", "integer",
                                           _path("status", "disruptionsAllowed", default=0)), AGE],
    "apiextensions.k8s.io/customresourcedefinitions": [NAME, Column("Created At", "date", _created_at)],
}

_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}


def _short_mode(mode: Any) -> str:
    return _MODES.get(str(mode), str(mode))


def custom_columns(rt: ResourceType) -> list[Column]:
    """Name plus the CRD's printer columns (Age only when it declares none)."""
    if rt.custom is None or not rt.custom.printer_columns:
        return [NAME, AGE]
    columns = [NAME]
    for spec in rt.custom.printer_columns:
        columns.append(Column(str(spec.get("name")), str(spec.get("type", "string")),
                              _json_path_cell(str(spec.get("jsonPath", "")), str(spec.get("type", "string"))),
                              priority=int(spec.get("priority", 0) or 0), format=str(spec.get("format", "")),
                              description=str(spec.get("description", ""))))
    return columns


def _json_path_cell(path: str, kind: str) -> Cell:
    def cell(obj: JsonDict, now: datetime.datetime) -> Any:
        values = jsonpath.find(obj, path)
        if not values:
            return None
        value = values[0] if len(values) == 1 else ",".join(str(v) for v in values)
        if kind == "date":
            return since(value, now)
        return value
    return cell


def columns_for(rt: ResourceType) -> list[Column]:
    if rt.is_custom:
        return custom_columns(rt)
    return COLUMNS.get(rt.own_key, [NAME, Column("Created At", "date", _created_at)])


def row_object(obj: JsonDict, include: str) -> JsonDict | None:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def table(api: Api, rt: ResourceType, objects: Sequence[JsonDict], req: ApiRequest, rv: int) -> JsonDict:
    del api
    columns = columns_for(rt)
    include = req.query.get("includeObject", "Metadata")
    now = datetime.datetime.now(datetime.UTC)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": [c.cell(obj, now) for c in columns]}
        shown = row_object(obj, include)
        if shown is not None:
            row["object"] = shown
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": str(rv)},
            "columnDefinitions": [c.definition() for c in columns], "rows": rows}
