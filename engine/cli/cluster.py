"""The CLI's way into a cluster: connecting from the global flags, kplan's kinds, Instances and their packages."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from engine import crds
from engine.errors import KplanError, PackageInvalid, PermanentError
from engine.kube import Kube, NotKubernetes, connect
from engine.model import Package
from engine.package import loader

__all__ = [
    "CRD",
    "INSTANCE",
    "OPERATOR",
    "OPERATOR_VERSION",
    "connect_from",
    "crds_installed",
    "install_crds",
    "instance_of",
    "package_of",
    "version_name_of",
]

GROUP_VERSION = "kplan.dev/v1alpha1"
INSTANCE = (GROUP_VERSION, "Instance")
OPERATOR = (GROUP_VERSION, "Operator")
OPERATOR_VERSION = (GROUP_VERSION, "OperatorVersion")
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
DEFAULT_CRD_TIMEOUT = 60.0
DEFAULT_RETRY_WINDOW = 30.0  # seconds a command without --timeout retries transient API failures

Json = dict[str, Any]


def connect_from(args: argparse.Namespace) -> Kube:
    """A Kube for --kubeconfig/--context; its namespace is -n, else the context's, else "default". Transient API
    failures are retried, as kubectl does, within the command's --timeout (DEFAULT_RETRY_WINDOW without one)."""
    window = getattr(args, "timeout", None) or DEFAULT_RETRY_WINDOW
    return connect(args.kubeconfig, args.context, namespace=args.namespace, retry_for=window)


def crds_installed(kube: Kube) -> bool:
    """True when the server serves Instances (kplan's CRDs are installed and established)."""
    try:
        kube.resource(*INSTANCE)
    except NotKubernetes:
        raise
    except PermanentError:  # discovery's answer when the kind is not served
        return False
    return True


def install_crds(kube: Kube, timeout: float = DEFAULT_CRD_TIMEOUT) -> list[Json]:
    """Server-side apply kplan's CRDs and wait until each is Established; the applied objects."""
    applied = [kube.apply(definition) for definition in crds.load()]
    for definition in applied:
        name = str(definition["metadata"]["name"])
        kube.wait_for(*CRD, name, None, established, timeout, condition="Established")
    return applied


def established(obj: Mapping[str, Any] | None) -> bool:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def require_crds(kube: Kube) -> None:
    if not crds_installed(kube):
        raise PermanentError("the kplan CRDs are not installed in this cluster; run `kubectl kplan init` first")


def instance_of(kube: Kube, name: str) -> Json:
    """The Instance `name` in the Kube's namespace; a clear error when it (or the kind) is missing."""
    require_crds(kube)
    found = kube.get(*INSTANCE, name, kube.namespace)
    if found is None:
        raise PermanentError(f"instance {name!r} not found in namespace {kube.namespace!r}")
    return found


def version_name_of(instance: Mapping[str, Any]) -> str:
    return str(((instance.get("spec") or {}).get("operatorVersion") or {}).get("name") or "")


def package_of(kube: Kube, instance: Mapping[str, Any], version: str | None = None) -> Package:
    """The package of OperatorVersion `version` (default: the one the Instance runs), in its namespace."""
    version = version or version_name_of(instance)
    namespace = str((instance.get("metadata") or {}).get("namespace") or kube.namespace)
    found = kube.get(*OPERATOR_VERSION, version, namespace) if version else None
    if found is None:
        raise PermanentError(f"OperatorVersion {version!r} of the instance is not found in namespace {namespace!r}")
    files = (found.get("spec") or {}).get("files") or {}
    try:
        return loader.from_files({str(k): str(v) for k, v in files.items()}, f"OperatorVersion {version}")
    except PackageInvalid as err:
        raise PermanentError(f"OperatorVersion {version!r} does not hold a valid package: {err}") from None


def try_package_of(kube: Kube, instance: Mapping[str, Any]) -> Package | None:
    """The Instance's package, or None when it cannot be read (listings still print what they can)."""
    try:
        return package_of(kube, instance)
    except KplanError:
        return None
